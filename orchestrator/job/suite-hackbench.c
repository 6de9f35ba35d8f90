/* hackbench: Debian's (rt-tests) scheduler benchmark, run as lkp-tests
 * runs it: nr_threads groups of 20 senders and 20 receivers (processes or
 * threads) passing messages through pipes or socket pairs, again and
 * again until the runtime has passed (klab's repeat) or for params
 * iterations; LKP's hackbench.throughput is the bytes of one run over
 * its best time. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "/usr/bin/hackbench"
#define REPEAT "/usr/lib/klab/repeat"
#define MAX_LOOPS 100000000u
#define MAX_ITERATIONS 100000u
#define MAX_DATASIZE (1u << 20)
#define MAX_FDS 1000u

/* LKP's jobs write threads, its meta.yaml thread: hackbench takes both */
static const char *const modes[] = { "process", "threads", "thread", NULL };
static const char *const params[] = { "ipc", "loops", "iterations", "datasize", "fds", NULL };

static const struct suite_kpi kpis[] = {
	{ "hackbench.throughput", 1 },
	{ "hackbench.throughput_avg", 1 },
	{ "hackbench.throughput_worst", 1 },
	{ NULL, 0 },
};

static const struct suite_metric metrics[] = {
	{ "hackbench.throughput", 0 },
	{ "hackbench.throughput_best", 0 },
	{ "hackbench.throughput_avg", 0 },
	{ "hackbench.throughput_worst", 0 },
	{ "hackbench.time", 0 },
	{ NULL, 0 },
};

static const struct suite_program tools[] = {
	{ "repeat", REPEAT, NULL },
	{ NULL, NULL, NULL },
};

static const char *param(const struct job *job, const char *key)
{
	for (size_t i = 0; i < job->nr_params; i++)
		if (!strcmp(job->params[i].key, key))
			return job->params[i].value;
	return NULL;
}

static int check_testcase(const struct job *job, const char *path, int line)
{
	if (strcmp(job->testcase, "hackbench"))
		return error("%s:%d: testcase: hackbench has one, hackbench (LKP's), got '%s'", path, line,
			     job->testcase);
	return 0;
}

/* A plain decimal number from min to max. */
static int number(const char *v, unsigned min, unsigned max, unsigned *out)
{
	uint64_t n = 0;

	if (!v || !*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 10)
		return -1;
	for (; *v; v++)
		n = n * 10 + (uint64_t)(*v - '0');
	if (n < min || n > max)
		return -1;
	*out = (unsigned)n;
	return 0;
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	static const struct {
		const char *key;
		unsigned min, max;
	} numbers[] = {
		{ "loops", 1, MAX_LOOPS },
		{ "iterations", 1, MAX_ITERATIONS },
		{ "datasize", 1, MAX_DATASIZE },
		{ "fds", 1, MAX_FDS },
	};
	unsigned n;

	(void)job;
	if (!strcmp(kv->key, "ipc")) {
		if (!kv->value || (strcmp(kv->value, "pipe") && strcmp(kv->value, "socket")))
			return error("%s:%d: params.ipc: expected pipe or socket, got '%s'", path, line,
				     kv->value ? kv->value : "");
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(numbers); i++)
		if (!strcmp(kv->key, numbers[i].key) && number(kv->value, numbers[i].min, numbers[i].max, &n) < 0)
			return error("%s:%d: params.%s: expected a number from %u to %u, got '%s'", path, line, kv->key,
				     numbers[i].min, numbers[i].max, kv->value ? kv->value : "");
	return 0;
}

static char *default_kpi(const struct job *job)
{
	(void)job;
	return xstrdup("hackbench.throughput");
}

/* A run may start just before the runtime ends: allow one more. */
static int warmup_s(const struct job *job, unsigned *out)
{
	*out = job->runtime_s;
	return 0;
}

static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *ipc = param(job, "ipc"), *v;
	unsigned groups = job_count_resolve(&job->nr_threads, vcpus), loops, iterations = 0, datasize = 100, fds = 20;

	/* LKP's: 30000 messages a CPU, shared by the groups */
	loops = 30000u * vcpus / groups;
	if (!loops)
		loops = 1;
	if (((v = param(job, "loops")) && number(v, 1, MAX_LOOPS, &loops) < 0) ||
	    ((v = param(job, "iterations")) && number(v, 1, MAX_ITERATIONS, &iterations) < 0) ||
	    ((v = param(job, "datasize")) && number(v, 1, MAX_DATASIZE, &datasize) < 0) ||
	    ((v = param(job, "fds")) && number(v, 1, MAX_FDS, &fds) < 0))
		return error("job '%s': a hackbench parameter is not a number", job->path);
	if (JOB_CONF_ARGV(sb, REPEAT) < 0 ||
	    (iterations ? job_conf_argv_uint(sb, "--iterations", iterations)
			: job_conf_argv_uint(sb, "--runtime", job->runtime_s)) < 0 ||
	    JOB_CONF_ARGV(sb, "--", PROGRAM) < 0 || job_conf_argv_uint(sb, "-g", groups) < 0 ||
	    job_conf_argv_uint(sb, "-f", fds) < 0 ||
	    JOB_CONF_ARGV(sb, !strcmp(job->mode, "process") ? "--process" : "--threads") < 0 ||
	    (ipc && !strcmp(ipc, "pipe") && JOB_CONF_ARGV(sb, "--pipe") < 0) ||
	    job_conf_argv_uint(sb, "-l", loops) < 0 || job_conf_argv_uint(sb, "-s", datasize) < 0)
		return -1;
	return 0;
}

/*
 * rt-tests' hackbench, once a run:
 *
 *   Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)
 *   Each sender will pass 100 messages of 100 bytes
 *   Time: 0.123
 *
 * As LKP's parser: a run's kilobytes are tasks * messages * bytes / 1024
 * (the last run's figures), throughput those over the best, mean and
 * worst time.
 */
static void parse_hackbench(struct result_metrics *ml, char *const *lines, size_t nr)
{
	double tasks = 0, messages = 0, bytes = 0, best = 0, worst = 0, sum = 0;
	int64_t runs = 0;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		double v, w;
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		if (n >= 3 && !strcmp(tok[0], "Running") && !strcmp(tok[n - 1], "tasks)") &&
		    !result_parse_number(tok[n - 2], &v) && v > 0 && v <= 1e7) {
			tasks = v;
		} else if (n == 9 && !strcmp(tok[0], "Each") && !strcmp(tok[1], "sender") &&
			   (!strcmp(tok[2], "will") || !strcmp(tok[2], "passed")) && !strcmp(tok[8], "bytes") &&
			   !result_parse_number(tok[4], &v) && !result_parse_number(tok[7], &w) && v > 0 && w > 0) {
			messages = v;
			bytes = w;
		} else if (n == 2 && !strcmp(tok[0], "Time:") && !result_parse_number(tok[1], &v) && v > 0) {
			result_add_metric(ml, xstrdup("hackbench.time"), runs, v);
			best = !runs || v < best ? v : best;
			worst = !runs || v > worst ? v : worst;
			sum += v;
			runs++;
		}
		free(copy);
	}
	if (runs && tasks && messages && bytes) {
		double kb = (double)((uint64_t)(tasks * messages * bytes) >> 10);

		result_add_metric(ml, xstrdup("hackbench.throughput"), 0, kb / best);
		result_add_metric(ml, xstrdup("hackbench.throughput_best"), 0, kb / best);
		result_add_metric(ml, xstrdup("hackbench.throughput_avg"), 0, kb / (sum / (double)runs));
		result_add_metric(ml, xstrdup("hackbench.throughput_worst"), 0, kb / worst);
	}
}

const struct suite suite_hackbench = {
	.name = "hackbench",
	.keys = SUITE_KEY_MODE | SUITE_KEY_NR_THREADS,
	.modes = modes,
	.params = params,
	.testcase_is_suite = 1,
	.kpis = kpis,
	.metrics = metrics,
	.program = { "hackbench", PROGRAM, "rt-tests" },
	.tools = tools,
	.check_testcase = check_testcase,
	.check_param = check_param,
	.default_kpi = default_kpi,
	.warmup_s = warmup_s,
	.agent_argv = agent_argv,
	.parse = parse_hackbench,
};
