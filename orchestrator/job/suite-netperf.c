/* netperf: lkp-tests' loopback netperf tests (TCP_RR, TCP_CRR, TCP_STREAM,
 * UDP_RR, UDP_STREAM, the testcase) with LKP's parameters (nr_threads
 * clients, runtime, send_size) and metric names.  netperf is not in
 * Debian: the guest runs klab's own stand-in, klab-netperf
 * (guests/bench/klab-netperf.c), whose figures compare with its own only,
 * not with netperf's; its output says so. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "/usr/lib/klab/klab-netperf"
#define MAX_SEND 65507

static const char *const testcases[] = { "TCP_RR", "TCP_CRR", "TCP_STREAM", "UDP_RR", "UDP_STREAM" };
static const char *const params[] = { "send_size", "ip", NULL };

#define WHEN_RR 0x1
#define WHEN_STREAM 0x2

static const struct suite_kpi kpis[] = {
	{ "netperf.Throughput_tps", 1 },
	{ "netperf.Throughput_Mbps", 1 },
	{ "netperf.Throughput_total_tps", 1 },
	{ "netperf.Throughput_total_Mbps", 1 },
	{ NULL, 0 },
};

static const struct suite_metric metrics[] = {
	{ "netperf.Throughput_tps", WHEN_RR },
	{ "netperf.Throughput_total_tps", WHEN_RR },
	{ "netperf.Throughput_Mbps", WHEN_STREAM },
	{ "netperf.ThroughputRecv_Mbps", WHEN_STREAM },
	{ "netperf.Throughput_total_Mbps", WHEN_STREAM },
	{ "netperf.ThroughputRecv_total_Mbps", WHEN_STREAM },
	{ "netperf.workload", 0 },
	{ NULL, 0 },
};

static unsigned conditions(const struct job *job)
{
	return strstr(job->testcase, "STREAM") ? WHEN_STREAM : WHEN_RR;
}

static const char *param(const struct job *job, const char *key)
{
	for (size_t i = 0; i < job->nr_params; i++)
		if (!strcmp(job->params[i].key, key))
			return job->params[i].value;
	return NULL;
}

static int check_testcase(const struct job *job, const char *path, int line)
{
	return suite_check_listed(job, testcases, ARRAY_SIZE(testcases), path, line);
}

/* LKP's send_size: bytes, or with k (10K) */
static int send_size(const char *v, unsigned *out)
{
	uint64_t n;

	if (job_parse_bytes(v, &n) < 0 || n > MAX_SEND)
		return -1;
	*out = (unsigned)n;
	return 0;
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	unsigned n;

	if (!strcmp(kv->key, "ip")) {
		if (!kv->value || strcmp(kv->value, "ipv4"))
			return error("%s:%d: params.ip: klab-netperf runs over IPv4's loopback only (ipv4), got '%s'", path,
				     line, kv->value ? kv->value : "");
		return 0;
	}
	if (!kv->value || send_size(kv->value, &n) < 0)
		return error("%s:%d: params.send_size: expected a size like 1024 or 10K (at most 65507), got '%s'", path,
			     line, kv->value ? kv->value : "");
	if (!strstr(job->testcase, "STREAM"))
		return error("%s:%d: params.send_size: only the STREAM tests send more than a byte", path, line);
	return 0;
}

static char *default_kpi(const struct job *job)
{
	return xstrdup(conditions(job) == WHEN_STREAM ? "netperf.Throughput_Mbps" : "netperf.Throughput_tps");
}

static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *s = param(job, "send_size");
	unsigned n;

	if (!suite_listed(job->testcase, testcases, ARRAY_SIZE(testcases)))
		return error("job '%s': klab-netperf has no test '%s'", job->path, job->testcase);
	if (JOB_CONF_ARGV(sb, PROGRAM, "--test", job->testcase) < 0 ||
	    job_conf_argv_uint(sb, "--clients", job_count_resolve(&job->nr_threads, vcpus)) < 0 ||
	    job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0)
		return -1;
	if (s && (send_size(s, &n) < 0 || job_conf_argv_uint(sb, "--send-size", n) < 0))
		return error("job '%s': params.send_size is not a size", job->path);
	return 0;
}

/*
 * klab-netperf, a line a client:
 *
 *   klab-netperf: test=TCP_RR clients=2 runtime=10 send_size=1 (klab's loopback stand-in, not netperf)
 *   client:0 elapsed:10.000 tps:12345.67 transactions:123456
 *   client:0 elapsed:10.000 send_Mbps:9000.00 recv_Mbps:8999.00 bytes:11250000000
 *
 * As LKP's parser: Throughput_<unit> the mean over the clients,
 * Throughput_total_<unit> their sum, workload the transactions (RR) or
 * the packets of the send size (STREAM).
 */
static void parse_netperf(struct result_metrics *ml, char *const *lines, size_t nr)
{
	double tps = 0, send = 0, recv = 0, workload = 0, size = 0;
	unsigned rr = 0, stream = 0;
	int header = 0;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		const char *a, *b, *c;
		double v[3];
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n >= 5 && !strcmp(tok[0], "klab-netperf:") && (a = result_key_value(tok[4], "send_size", '=')) &&
		    !result_parse_number(a, &v[0]) && v[0] > 0) {
			header = 1;
			size = v[0];
		} else if (!header || !result_key_value(tok[0], "client", ':')) {
			;
		} else if (n == 4 && (a = result_key_value(tok[2], "tps", ':')) &&
			   (b = result_key_value(tok[3], "transactions", ':')) && !result_parse_number(a, &v[0]) &&
			   !result_parse_number(b, &v[1])) {
			tps += v[0];
			workload += v[1];
			rr++;
		} else if (n == 5 && (a = result_key_value(tok[2], "send_Mbps", ':')) &&
			   (b = result_key_value(tok[3], "recv_Mbps", ':')) && (c = result_key_value(tok[4], "bytes", ':')) &&
			   !result_parse_number(a, &v[0]) && !result_parse_number(b, &v[1]) && !result_parse_number(c, &v[2])) {
			send += v[0];
			recv += v[1];
			workload += v[2] / size;
			stream++;
		}
		free(copy);
	}
	if (rr && !stream) {
		result_add_metric(ml, xstrdup("netperf.Throughput_tps"), 0, tps / rr);
		result_add_metric(ml, xstrdup("netperf.Throughput_total_tps"), 0, tps);
		result_add_metric(ml, xstrdup("netperf.workload"), 0, workload);
	} else if (stream && !rr) {
		result_add_metric(ml, xstrdup("netperf.Throughput_Mbps"), 0, send / stream);
		result_add_metric(ml, xstrdup("netperf.ThroughputRecv_Mbps"), 0, recv / stream);
		result_add_metric(ml, xstrdup("netperf.Throughput_total_Mbps"), 0, send);
		result_add_metric(ml, xstrdup("netperf.ThroughputRecv_total_Mbps"), 0, recv);
		result_add_metric(ml, xstrdup("netperf.workload"), 0, workload);
	}
}

const struct suite suite_netperf = {
	.name = "netperf",
	.keys = SUITE_KEY_NR_THREADS,
	.params = params,
	.kpis = kpis,
	.metrics = metrics,
	.conditions = conditions,
	.note = "klab-netperf, klab's own loopback stand-in for netperf (not in Debian): not netperf, its figures "
		"compare with its own only",
	.program = { "klab-netperf", PROGRAM, NULL },
	.check_testcase = check_testcase,
	.check_param = check_param,
	.default_kpi = default_kpi,
	.agent_argv = agent_argv,
	.parse = parse_netperf,
};
