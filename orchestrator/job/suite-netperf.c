/* netperf: lkp-tests' loopback netperf tests (TCP_RR, TCP_CRR, TCP_STREAM,
 * UDP_RR, UDP_STREAM, the testcase) with LKP's parameters (nr_threads
 * clients, runtime, send_size) and metric names.  netperf is not in
 * Debian: the guest runs klab's own stand-in, klab-netperf
 * (guests/bench/klab-netperf.c), whose figures compare with its own only,
 * not with netperf's; its output says so.  params.also names more tests
 * for the same boot. */
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
static const char *const params[] = { "send_size", "ip", "also", NULL };

#define WHEN_RR 0x1
#define WHEN_STREAM 0x2
#define WHEN_ALSO 0x4
/* klab-netperf's own limit on --test */
#define MAX_ALSO 15

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
	{ "netperf.*.Throughput_*", WHEN_ALSO },
	{ NULL, 0 },
};

static const char *param(const struct job *job, const char *key)
{
	for (size_t i = 0; i < job->nr_params; i++)
		if (!strcmp(job->params[i].key, key))
			return job->params[i].value;
	return NULL;
}

static unsigned conditions(const struct job *job)
{
	return (strstr(job->testcase, "STREAM") ? WHEN_STREAM : WHEN_RR) | (param(job, "also") ? WHEN_ALSO : 0);
}

static int each_also(const struct job *job, const char *what, int (*fn)(const char *t, void *data), void *data)
{
	return suite_each_also(job, what, param(job, "also"), testcases, ARRAY_SIZE(testcases), MAX_ALSO, fn, data);
}

static int add_test(const char *t, void *sb)
{
	return JOB_CONF_ARGV(sb, "--test", t);
}

static int count_test(const char *t, void *n)
{
	(void)t;
	(*(unsigned *)n)++;
	return 0;
}

/* Each more test runs for the runtime before the job's ends. */
static int warmup_s(const struct job *job, unsigned *out)
{
	unsigned tests = 1;

	if (param(job, "also") && each_also(job, "params.also", count_test, &tests) < 0)
		return -1;
	*out = (tests - 1) * (job->runtime_s + 1);
	return 0;
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
	char *what;
	int ret;

	if (!strcmp(kv->key, "also")) {
		what = xstrfmt("%s:%d: params.also", path, line);
		ret = suite_each_also(job, what, kv->value, testcases, ARRAY_SIZE(testcases), MAX_ALSO, NULL, NULL);
		free(what);
		return ret;
	}
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
	    (param(job, "also") && each_also(job, "params.also", add_test, sb) < 0) ||
	    job_conf_argv_uint(sb, "--clients", job_count_resolve(&job->nr_threads, vcpus)) < 0 ||
	    job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0)
		return -1;
	if (s && (send_size(s, &n) < 0 || job_conf_argv_uint(sb, "--send-size", n) < 0))
		return error("job '%s': params.send_size is not a size", job->path);
	return 0;
}

/* One test's figures, as LKP's parser makes them. */
struct figures {
	double tps, send, recv, workload;
	unsigned rr, stream;
};

static void emit(struct result_metrics *ml, const char *test, const struct figures *f)
{
	/* the job's test: LKP's names; a later one's under its own */
	char *pre = test ? xstrfmt("netperf.%s.", test) : xstrdup("netperf.");

	if (f->rr && !f->stream) {
		result_add_metric(ml, xstrfmt("%sThroughput_tps", pre), 0, f->tps / f->rr);
		result_add_metric(ml, xstrfmt("%sThroughput_total_tps", pre), 0, f->tps);
	} else if (f->stream && !f->rr) {
		result_add_metric(ml, xstrfmt("%sThroughput_Mbps", pre), 0, f->send / f->stream);
		result_add_metric(ml, xstrfmt("%sThroughput_total_Mbps", pre), 0, f->send);
		if (!test) {
			result_add_metric(ml, xstrfmt("%sThroughputRecv_Mbps", pre), 0, f->recv / f->stream);
			result_add_metric(ml, xstrfmt("%sThroughputRecv_total_Mbps", pre), 0, f->recv);
		}
	}
	if (!test && (f->rr || f->stream) && !(f->rr && f->stream))
		result_add_metric(ml, xstrdup("netperf.workload"), 0, f->workload);
	free(pre);
}

static int test_name_ok(const char *s)
{
	return suite_listed(s, testcases, ARRAY_SIZE(testcases));
}

/*
 * klab-netperf, a section a test, a line a client:
 *
 *   klab-netperf: test=TCP_RR clients=2 runtime=10 send_size=1 (klab's loopback stand-in, not netperf)
 *   client:0 elapsed:10.000 tps:12345.67 transactions:123456
 *   client:0 elapsed:10.000 send_Mbps:9000.00 recv_Mbps:8999.00 bytes:11250000000
 *
 * As LKP's parser: Throughput_<unit> the mean over the clients,
 * Throughput_total_<unit> their sum, workload the transactions (RR) or
 * the packets of the send size (STREAM).  The first section is the
 * job's test; later ones (params.also) give netperf.<test>.Throughput_*.
 */
static void parse_netperf(struct result_metrics *ml, char *const *lines, size_t nr)
{
	struct figures f = { 0 };
	char test[16] = "";
	double size = 0;
	int sections = 0, lost = 0;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		const char *a, *b, *c;
		double v[3];
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		if (n >= 1 && n <= RESULT_MAX_TOKENS && !strcmp(tok[0], "klab-netperf:")) {
			/* a header ends the section before it; one that is not
			 * whole keeps what follows out */
			if (sections && !lost)
				emit(ml, sections > 1 ? test : NULL, &f);
			memset(&f, 0, sizeof(f));
			lost = !(n >= 5 && (a = result_key_value(tok[1], "test", '=')) && test_name_ok(a) &&
				 (b = result_key_value(tok[4], "send_size", '=')) && !result_parse_number(b, &v[0]) &&
				 v[0] > 0);
			if (!lost) {
				snprintf(test, sizeof(test), "%s", a);
				size = v[0];
				sections++;
			}
		} else if (n == 0 || !sections || lost || !result_key_value(tok[0], "client", ':')) {
			;	/* (a blank line has no first word: tok[0] is unset) */
		} else if (n == 4 && (a = result_key_value(tok[2], "tps", ':')) &&
			   (b = result_key_value(tok[3], "transactions", ':')) && !result_parse_number(a, &v[0]) &&
			   !result_parse_number(b, &v[1])) {
			f.tps += v[0];
			f.workload += v[1];
			f.rr++;
		} else if (n == 5 && (a = result_key_value(tok[2], "send_Mbps", ':')) &&
			   (b = result_key_value(tok[3], "recv_Mbps", ':')) && (c = result_key_value(tok[4], "bytes", ':')) &&
			   !result_parse_number(a, &v[0]) && !result_parse_number(b, &v[1]) && !result_parse_number(c, &v[2])) {
			f.send += v[0];
			f.recv += v[1];
			f.workload += v[2] / size;
			f.stream++;
		}
		free(copy);
	}
	if (sections && !lost)
		emit(ml, sections > 1 ? test : NULL, &f);
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
	.warmup_s = warmup_s,
	.agent_argv = agent_argv,
	.parse = parse_netperf,
};
