/* perf-bench-*: Debian's perf (linux-perf) `perf bench` suites as lkp-tests
 * names them: perf-bench-futex (hash, lock-pi, requeue, wake,
 * wake-parallel, the testcase), perf-bench-sched-pipe,
 * perf-bench-sched-messaging, perf-bench-mem and perf-bench-syscall, with
 * LKP's parameters and its parsers' metric names.  The futex tests run
 * once (hash and lock-pi for the runtime, the others their ten rounds);
 * the others again and again until the runtime has passed (klab's
 * repeat), their figures averaged over the runs. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROGRAM "/usr/bin/perf"
#define REPEAT "/usr/lib/klab/repeat"
#define MAX_COUNT 1000000000u

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

/* A plain decimal number from 1 to MAX_COUNT, with an optional suffix
 * (LKP writes sched-pipe's loops as 10000000ops). */
static int count(const char *v, const char *suffix, unsigned *out)
{
	size_t n = v ? strspn(v, "0123456789") : 0;
	uint64_t x = 0;

	if (!n || n > 10 || (v[n] && (!suffix || strcmp(v + n, suffix))))
		return -1;
	for (size_t i = 0; i < n; i++)
		x = x * 10 + (uint64_t)(v[i] - '0');
	if (x < 1 || x > MAX_COUNT)
		return -1;
	*out = (unsigned)x;
	return 0;
}

/* LKP's parse_bool: the parameter's own name, yes, true or 1 */
static int flag_on(const char *key, const char *v)
{
	return v && (!strcmp(v, key) || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true"));
}

static int flag_ok(const char *key, const char *v)
{
	return !v || flag_on(key, v) || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "false");
}

static int bad_value(const struct job_kv *kv, const char *path, int line, const char *expect)
{
	return error("%s:%d: params.%s: expected %s, got '%s'", path, line, kv->key, expect, kv->value ? kv->value : "");
}

static int only_suite_testcase(const struct job *job, const char *path, int line)
{
	if (strcmp(job->testcase, job->suite))
		return error("%s:%d: testcase: %s has one, %s (LKP's), got '%s'", path, line, job->suite, job->suite,
			     job->testcase);
	return 0;
}

/* The repeat runner around `perf bench ...` for the runtime. */
static int repeat_perf(const struct job *job, struct strbuf *sb)
{
	return JOB_CONF_ARGV(sb, REPEAT) < 0 || job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0 ||
			       JOB_CONF_ARGV(sb, "--", PROGRAM, "bench") < 0
		       ? -1
		       : 0;
}

/* A run may start just before the runtime ends: allow one more. */
static int one_more_run(const struct job *job, unsigned *out)
{
	*out = job->runtime_s;
	return 0;
}

/* Means over the runs: per metric name, sum and count. */
struct means {
	char *name[32];
	double sum[32];
	unsigned n[32];
	size_t nr;
};

static void means_add(struct means *m, const char *name, double v)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->name[i], name))
			break;
	if (i == m->nr) {
		if (m->nr == ARRAY_SIZE(m->name))
			return;
		m->name[m->nr++] = xstrdup(name);
	}
	m->sum[i] += v;
	m->n[i]++;
}

static void means_emit(struct result_metrics *ml, struct means *m)
{
	for (size_t i = 0; i < m->nr; i++) {
		result_add_metric(ml, m->name[i], 0, m->sum[i] / m->n[i]);
		m->name[i] = NULL;
	}
	m->nr = 0;
}

/* ---- perf-bench-futex -------------------------------------------------------------- */

static const char *const futex_tests[] = { "hash", "lock-pi", "requeue", "wake", "wake-parallel" };
static const char *const futex_params[] = { "shared", "futexes", "nwakes", "nwakers", "nrequeue", "multi", NULL };

#define FUTEX_OPS 0x1
#define FUTEX_WOKEUP 0x2
#define FUTEX_REQUEUED 0x4
#define FUTEX_LATENCY 0x8

static const struct suite_kpi futex_kpis[] = {
	{ "perf-bench-futex.ops/s", 1 },
	{ "perf-bench-futex.wokeup_time_ms", -1 },
	{ "perf-bench-futex.requeued_time_ms", -1 },
	{ "perf-bench-futex.avg_per_thread_latency_ms", -1 },
	{ NULL, 0 },
};

static const struct suite_metric futex_metrics[] = {
	{ "perf-bench-futex.ops/s", FUTEX_OPS },
	{ "perf-bench-futex.wokeup_time_ms", FUTEX_WOKEUP },
	{ "perf-bench-futex.requeued_time_ms", FUTEX_REQUEUED },
	{ "perf-bench-futex.avg_per_thread_latency_ms", FUTEX_LATENCY },
	{ NULL, 0 },
};

static unsigned futex_conditions(const struct job *job)
{
	if (!strcmp(job->testcase, "hash") || !strcmp(job->testcase, "lock-pi"))
		return FUTEX_OPS;
	if (!strcmp(job->testcase, "wake"))
		return FUTEX_WOKEUP;
	if (!strcmp(job->testcase, "requeue"))
		return FUTEX_REQUEUED;
	return FUTEX_LATENCY;
}

static int futex_check_testcase(const struct job *job, const char *path, int line)
{
	return suite_check_listed(job, futex_tests, ARRAY_SIZE(futex_tests), path, line);
}

/* Each option belongs to one test, as LKP's run script passes it. */
static const char *futex_param_test(const char *key)
{
	return !strcmp(key, "futexes") ? "hash" : !strcmp(key, "nwakes") ? "wake" : !strcmp(key, "nwakers") ? "wake-parallel"
	     : !strcmp(key, "nrequeue") ? "requeue" : !strcmp(key, "multi") ? "lock-pi" : NULL;
}

static int futex_check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	const char *test = futex_param_test(kv->key);
	unsigned n;

	if (!strcmp(kv->key, "shared") || !strcmp(kv->key, "multi")) {
		if (!flag_ok(kv->key, kv->value))
			return bad_value(kv, path, line, "yes or no");
	} else if (count(kv->value, NULL, &n) < 0) {
		return bad_value(kv, path, line, "a number");
	}
	if (test && strcmp(test, job->testcase))
		return error("%s:%d: params.%s: only perf bench futex %s takes it, not %s", path, line, kv->key, test,
			     job->testcase);
	return 0;
}

static char *futex_default_kpi(const struct job *job)
{
	unsigned c = futex_conditions(job);

	return xstrdup(c == FUTEX_OPS ? "perf-bench-futex.ops/s" : c == FUTEX_WOKEUP ? "perf-bench-futex.wokeup_time_ms"
		       : c == FUTEX_REQUEUED ? "perf-bench-futex.requeued_time_ms"
					     : "perf-bench-futex.avg_per_thread_latency_ms");
}

static int futex_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	static const char *const opts[][2] = {
		{ "futexes", "--futexes" }, { "nwakes", "--nwakes" }, { "nwakers", "--nwakers" }, { "nrequeue", "--nrequeue" },
	};
	unsigned n;

	if (!suite_listed(job->testcase, futex_tests, ARRAY_SIZE(futex_tests)))
		return error("job '%s': perf bench futex has no test '%s'", job->path, job->testcase);
	if (JOB_CONF_ARGV(sb, PROGRAM, "bench", "futex", job->testcase) < 0 ||
	    job_conf_argv_uint(sb, "--threads", job_count_resolve(&job->nr_task, vcpus)) < 0)
		return -1;
	if (futex_conditions(job) == FUTEX_OPS && job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0)
		return -1;
	if (flag_on("shared", param(job, "shared")) && JOB_CONF_ARGV(sb, "--shared") < 0)
		return -1;
	if (flag_on("multi", param(job, "multi")) && JOB_CONF_ARGV(sb, "--multi") < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (param(job, opts[i][0]) && (count(param(job, opts[i][0]), NULL, &n) < 0 ||
					       job_conf_argv_uint(sb, opts[i][1], n) < 0))
			return error("job '%s': params.%s is not a number", job->path, opts[i][0]);
	return 0;
}

/*
 * perf bench futex's summary lines, as LKP's parser reads them:
 *
 *   Averaged 1315840 operations/sec (+- 0.47%), total secs = 1
 *   Wokeup 2 of 2 threads in 0.0603 ms (+-22.69%)
 *   Requeued 2 of 2 threads in 0.0045 ms (+-4.97%)
 *   Avg per-thread latency (waking 1/2 threads) in 0.0061 ms (+-24.10%)
 *
 * ("[Run N]: ..." lines are single rounds.)
 */
static void parse_futex(struct result_metrics *ml, char *const *lines, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		double v;
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		if (n >= 3 && !strcmp(tok[0], "Averaged") && !strcmp(tok[2], "operations/sec") &&
		    !result_parse_number(tok[1], &v))
			result_add_metric(ml, xstrdup("perf-bench-futex.ops/s"), 0, v);
		else if (n >= 8 && (!strcmp(tok[0], "Wokeup") || !strcmp(tok[0], "Requeued")) && !strcmp(tok[5], "in") &&
			 !strcmp(tok[7], "ms") && !result_parse_number(tok[6], &v))
			result_add_metric(ml, xstrdup(tok[0][0] == 'W' ? "perf-bench-futex.wokeup_time_ms"
								 : "perf-bench-futex.requeued_time_ms"),
					  0, v);
		else if (n >= 9 && !strcmp(tok[0], "Avg") && !strcmp(tok[1], "per-thread") && !strcmp(tok[2], "latency") &&
			 !strcmp(tok[n - 2], "ms") && !result_parse_number(tok[n - 3], &v))
			result_add_metric(ml, xstrdup("perf-bench-futex.avg_per_thread_latency_ms"), 0, v);
		free(copy);
	}
}

const struct suite suite_perf_bench_futex = {
	.name = "perf-bench-futex",
	.params = futex_params,
	.kpis = futex_kpis,
	.metrics = futex_metrics,
	.conditions = futex_conditions,
	.program = { "perf", PROGRAM, "linux-perf" },
	.check_testcase = futex_check_testcase,
	.check_param = futex_check_param,
	.default_kpi = futex_default_kpi,
	.agent_argv = futex_argv,
	.parse = parse_futex,
};

/* ---- perf-bench-sched-pipe --------------------------------------------------------- */

/* LKP's run script: threads gives -T */
static const char *const pipe_modes[] = { "process", "threads", "thread", NULL };
static const char *const pipe_params[] = { "loops", NULL };

static const struct suite_kpi pipe_kpis[] = {
	{ "perf-bench-sched-pipe.ops_per_sec", 1 },
	{ "perf-bench-sched-pipe.usecs_per_op", -1 },
	{ NULL, 0 },
};

static const struct suite_metric pipe_metrics[] = {
	{ "perf-bench-sched-pipe.ops_per_sec", 0 },
	{ "perf-bench-sched-pipe.usecs_per_op", 0 },
	{ "perf-bench-sched-pipe.total_time_sec", 0 },
	{ NULL, 0 },
};

static int pipe_check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	unsigned n;

	(void)job;
	if (count(kv->value, "ops", &n) < 0)
		return bad_value(kv, path, line, "a number of pipe operations like 1000000 (or LKP's 1000000ops)");
	return 0;
}

static char *pipe_default_kpi(const struct job *job)
{
	(void)job;
	return xstrdup("perf-bench-sched-pipe.ops_per_sec");
}

static int pipe_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *loops = param(job, "loops");
	unsigned n = 1000000;

	(void)vcpus;
	if (loops && count(loops, "ops", &n) < 0)
		return error("job '%s': params.loops is not a number", job->path);
	if (repeat_perf(job, sb) < 0 || JOB_CONF_ARGV(sb, "sched", "pipe") < 0 || job_conf_argv_uint(sb, "-l", n) < 0)
		return -1;
	return strcmp(job->mode, "process") ? JOB_CONF_ARGV(sb, "-T") : 0;
}

/*
 *   # Running 'sched/pipe' benchmark:
 *   # Executed 2000 pipe operations between two processes
 *
 *        Total time: 0.006 [sec]
 *
 *          3.419000 usecs/op
 *            292483 ops/sec
 */
static void parse_sched_pipe(struct result_metrics *ml, char *const *lines, size_t nr)
{
	struct means m = { 0 };

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		double v;
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		if (n == 2 && !strcmp(tok[1], "ops/sec") && !result_parse_number(tok[0], &v))
			means_add(&m, "perf-bench-sched-pipe.ops_per_sec", v);
		else if (n == 2 && !strcmp(tok[1], "usecs/op") && !result_parse_number(tok[0], &v))
			means_add(&m, "perf-bench-sched-pipe.usecs_per_op", v);
		else if (n == 4 && !strcmp(tok[0], "Total") && !strcmp(tok[1], "time:") && !strcmp(tok[3], "[sec]") &&
			 !result_parse_number(tok[2], &v))
			means_add(&m, "perf-bench-sched-pipe.total_time_sec", v);
		free(copy);
	}
	means_emit(ml, &m);
}

const struct suite suite_perf_bench_sched_pipe = {
	.name = "perf-bench-sched-pipe",
	.keys = SUITE_KEY_MODE,
	.modes = pipe_modes,
	.params = pipe_params,
	.testcase_is_suite = 1,
	.kpis = pipe_kpis,
	.metrics = pipe_metrics,
	.program = { "perf", PROGRAM, "linux-perf" },
	.tools = tools,
	.check_testcase = only_suite_testcase,
	.check_param = pipe_check_param,
	.default_kpi = pipe_default_kpi,
	.warmup_s = one_more_run,
	.agent_argv = pipe_argv,
	.parse = parse_sched_pipe,
};

/* ---- perf-bench-sched-messaging ---------------------------------------------------- */

static const char *const msg_modes[] = { "process", "thread", "threads", NULL };
static const char *const msg_params[] = { "loops", "groups", "ipc", NULL };

static const struct suite_kpi msg_kpis[] = {
	{ "perf-bench-sched-messaging.total_time_sec", -1 },
	{ NULL, 0 },
};

static const struct suite_metric msg_metrics[] = {
	{ "perf-bench-sched-messaging.total_time_sec", 0 },
	{ NULL, 0 },
};

static int msg_check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	unsigned n;

	(void)job;
	if (!strcmp(kv->key, "ipc")) {
		if (!kv->value || (strcmp(kv->value, "pipe") && strcmp(kv->value, "socket")))
			return bad_value(kv, path, line, "pipe or socket");
	} else if (count(kv->value, NULL, &n) < 0) {
		return bad_value(kv, path, line, "a number");
	}
	return 0;
}

static char *msg_default_kpi(const struct job *job)
{
	(void)job;
	return xstrdup("perf-bench-sched-messaging.total_time_sec");
}

static int msg_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *loops = param(job, "loops"), *groups = param(job, "groups"), *ipc = param(job, "ipc");
	unsigned l = 100, g = 10;

	(void)vcpus;
	if ((loops && count(loops, NULL, &l) < 0) || (groups && count(groups, NULL, &g) < 0))
		return error("job '%s': params.loops or params.groups is not a number", job->path);
	if (repeat_perf(job, sb) < 0 || JOB_CONF_ARGV(sb, "sched", "messaging") < 0 ||
	    job_conf_argv_uint(sb, "--nr_loops", l) < 0 || job_conf_argv_uint(sb, "--group", g) < 0 ||
	    (ipc && !strcmp(ipc, "pipe") && JOB_CONF_ARGV(sb, "--pipe") < 0))
		return -1;
	return strcmp(job->mode, "process") ? JOB_CONF_ARGV(sb, "--thread") : 0;
}

static void parse_sched_messaging(struct result_metrics *ml, char *const *lines, size_t nr)
{
	struct means m = { 0 };

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		double v;
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		if (n == 4 && !strcmp(tok[0], "Total") && !strcmp(tok[1], "time:") && !strcmp(tok[3], "[sec]") &&
		    !result_parse_number(tok[2], &v))
			means_add(&m, "perf-bench-sched-messaging.total_time_sec", v);
		free(copy);
	}
	means_emit(ml, &m);
}

const struct suite suite_perf_bench_sched_messaging = {
	.name = "perf-bench-sched-messaging",
	.keys = SUITE_KEY_MODE,
	.modes = msg_modes,
	.params = msg_params,
	.testcase_is_suite = 1,
	.kpis = msg_kpis,
	.metrics = msg_metrics,
	.program = { "perf", PROGRAM, "linux-perf" },
	.tools = tools,
	.check_testcase = only_suite_testcase,
	.check_param = msg_check_param,
	.default_kpi = msg_default_kpi,
	.warmup_s = one_more_run,
	.agent_argv = msg_argv,
	.parse = parse_sched_messaging,
};

/* ---- perf-bench-mem ---------------------------------------------------------------- */

static const char *const mem_ops[] = { "memcpy", "memset" };
static const char *const mem_params[] = { "op", "function", "size", "nr_loops", NULL };

static const struct suite_kpi mem_kpis[] = {
	{ "perf-bench-mem.*_per_sec", 1 },
	{ NULL, 0 },
};

static const struct suite_metric mem_metrics[] = {
	{ "perf-bench-mem.*_per_sec", 0 },
	{ NULL, 0 },
};

/* perf's function names: default, x86-64-unrolled, ... or all */
static int function_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	return n && n <= 48 && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-_") == n;
}

/* perf's sizes: 1MB, 4KB, 1024B, 2GB (units B, KB, MB, GB, TB) */
static int size_ok(const char *v)
{
	size_t n = v ? strspn(v, "0123456789") : 0;

	if (!n || n > 12)
		return 0;
	v += n;
	return !strcasecmp(v, "B") || !strcasecmp(v, "KB") || !strcasecmp(v, "MB") || !strcasecmp(v, "GB") ||
	       !strcasecmp(v, "TB");
}

static int mem_check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	unsigned n;

	(void)job;
	if (!strcmp(kv->key, "op") && (!kv->value || !suite_listed(kv->value, mem_ops, ARRAY_SIZE(mem_ops))))
		return bad_value(kv, path, line, "memcpy or memset");
	if (!strcmp(kv->key, "function") && !function_ok(kv->value))
		return bad_value(kv, path, line, "a perf bench mem function like default, x86-64-movsb or all");
	if (!strcmp(kv->key, "size") && !size_ok(kv->value))
		return bad_value(kv, path, line, "a size like 1MB (units B, KB, MB, GB, TB)");
	if (!strcmp(kv->key, "nr_loops") && count(kv->value, NULL, &n) < 0)
		return bad_value(kv, path, line, "a number");
	return 0;
}

static char *mem_default_kpi(const struct job *job)
{
	const char *op = param(job, "op"), *fn = param(job, "function");

	return xstrfmt("perf-bench-mem.%s.%s.MB_per_sec", op ? op : "memcpy", fn && strcmp(fn, "all") ? fn : "default");
}

static int mem_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *op = param(job, "op"), *fn = param(job, "function"), *size = param(job, "size");
	const char *loops = param(job, "nr_loops");

	(void)vcpus;
	if (repeat_perf(job, sb) < 0 || JOB_CONF_ARGV(sb, "mem", op ? op : "memcpy") < 0 ||
	    (fn && JOB_CONF_ARGV(sb, "--function", fn) < 0) || (size && JOB_CONF_ARGV(sb, "--size", size) < 0) ||
	    (loops && JOB_CONF_ARGV(sb, "--nr_loops", loops) < 0))
		return -1;
	return 0;
}

/*
 *   # Running 'mem/memcpy' benchmark:
 *   # function 'default' (Default memcpy() provided by glibc)
 *   # Copying 1MB bytes ...
 *
 *         18.287687 GB/sec
 *
 * LKP's names, perf-bench-mem.<op>.<function>.<unit>_per_sec, follow
 * perf's unit, which follows the speed: the same figure in MB (1024-based,
 * as perf's) is always there too.
 */
static void parse_mem(struct result_metrics *ml, char *const *lines, size_t nr)
{
	static const char *const units[] = { "bytes/sec", "KB/sec", "MB/sec", "GB/sec" };
	char op[16] = "", fn[49] = "default";
	struct means m = { 0 };

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS], *name;
		double v;
		size_t n, q;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		if (n == 4 && !strcmp(tok[0], "#") && !strcmp(tok[1], "Running") && !strncmp(tok[2], "'mem/", 5)) {
			char o[16];

			q = strcspn(tok[2] + 5, "'");
			snprintf(o, sizeof(o), "%.*s", (int)(q < sizeof(o) ? q : 0), tok[2] + 5);
			if (suite_listed(o, mem_ops, ARRAY_SIZE(mem_ops)))
				snprintf(op, sizeof(op), "%s", o);
		} else if (n >= 3 && !strcmp(tok[0], "#") && !strcmp(tok[1], "function") && tok[2][0] == '\'') {
			q = strcspn(tok[2] + 1, "'");
			if (q && q < sizeof(fn) && tok[2][1 + q] == '\'') {
				char f[49];

				snprintf(f, sizeof(f), "%.*s", (int)q, tok[2] + 1);
				if (function_ok(f))
					snprintf(fn, sizeof(fn), "%s", f);
			}
		} else if (n == 2 && op[0] && !result_parse_number(tok[0], &v)) {
			for (size_t u = 0; u < ARRAY_SIZE(units); u++) {
				if (strcmp(tok[1], units[u]))
					continue;
				name = xstrfmt("perf-bench-mem.%s.%s.%.*s_per_sec", op, fn,
					       (int)strcspn(units[u], "/"), units[u]);
				means_add(&m, name, v);
				free(name);
				if (u != 2) {
					name = xstrfmt("perf-bench-mem.%s.%s.MB_per_sec", op, fn);
					means_add(&m, name, u < 2 ? v / (u ? 1024.0 : 1048576.0) : v * 1024.0);
					free(name);
				}
			}
		}
		free(copy);
		if (m.nr == ARRAY_SIZE(m.name))
			break;
	}
	means_emit(ml, &m);
}

const struct suite suite_perf_bench_mem = {
	.name = "perf-bench-mem",
	.params = mem_params,
	.testcase_is_suite = 1,
	.kpis = mem_kpis,
	.metrics = mem_metrics,
	.program = { "perf", PROGRAM, "linux-perf" },
	.tools = tools,
	.check_testcase = only_suite_testcase,
	.check_param = mem_check_param,
	.default_kpi = mem_default_kpi,
	.warmup_s = one_more_run,
	.agent_argv = mem_argv,
	.parse = parse_mem,
};

/* ---- perf-bench-syscall ------------------------------------------------------------ */

/* Debian's perf 6.1 has only basic (getppid); LKP's execve, fork and
 * getpgid came in later perfs */
static const char *const syscall_ops[] = { "basic" };
static const char *const syscall_params[] = { "op", "loop", NULL };

static const struct suite_kpi syscall_kpis[] = {
	{ "perf-bench-syscall.getppid.ops_per_sec", 1 },
	{ "perf-bench-syscall.getppid.usecs_per_op", -1 },
	{ NULL, 0 },
};

static const struct suite_metric syscall_metrics[] = {
	{ "perf-bench-syscall.getppid.ops_per_sec", 0 },
	{ "perf-bench-syscall.getppid.usecs_per_op", 0 },
	{ "perf-bench-syscall.getppid.total_time_sec", 0 },
	{ NULL, 0 },
};

static int syscall_check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	unsigned n;

	(void)job;
	if (!strcmp(kv->key, "op") && (!kv->value || !suite_listed(kv->value, syscall_ops, ARRAY_SIZE(syscall_ops))))
		return bad_value(kv, path, line, "basic (Debian's perf 6.1 has no other)");
	if (!strcmp(kv->key, "loop") && count(kv->value, NULL, &n) < 0)
		return bad_value(kv, path, line, "a number");
	return 0;
}

static char *syscall_default_kpi(const struct job *job)
{
	(void)job;
	return xstrdup("perf-bench-syscall.getppid.ops_per_sec");
}

static int syscall_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *loop = param(job, "loop");

	(void)vcpus;
	if (repeat_perf(job, sb) < 0 || JOB_CONF_ARGV(sb, "syscall", "basic") < 0 ||
	    (loop && JOB_CONF_ARGV(sb, "--loop", loop) < 0))
		return -1;
	return 0;
}

/*
 *   # Running 'syscall/basic' benchmark:
 *   # Executed 10000000 getppid() calls
 *        Total time: 2.362 [sec]
 *
 *          0.236204 usecs/op
 *           4233621 ops/sec
 */
static void parse_syscall(struct result_metrics *ml, char *const *lines, size_t nr)
{
	struct means m = { 0 };
	int getppid = 0;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		double v;
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		if (n == 5 && !strcmp(tok[1], "Executed") && !strcmp(tok[4], "calls"))
			getppid = !strcmp(tok[3], "getppid()");
		else if (!getppid)
			;
		else if (n == 2 && !strcmp(tok[1], "ops/sec") && !result_parse_number(tok[0], &v))
			means_add(&m, "perf-bench-syscall.getppid.ops_per_sec", v);
		else if (n == 2 && !strcmp(tok[1], "usecs/op") && !result_parse_number(tok[0], &v))
			means_add(&m, "perf-bench-syscall.getppid.usecs_per_op", v);
		else if (n == 4 && !strcmp(tok[0], "Total") && !strcmp(tok[3], "[sec]") && !result_parse_number(tok[2], &v))
			means_add(&m, "perf-bench-syscall.getppid.total_time_sec", v);
		free(copy);
	}
	means_emit(ml, &m);
}

const struct suite suite_perf_bench_syscall = {
	.name = "perf-bench-syscall",
	.params = syscall_params,
	.testcase_is_suite = 1,
	.kpis = syscall_kpis,
	.metrics = syscall_metrics,
	.program = { "perf", PROGRAM, "linux-perf" },
	.tools = tools,
	.check_testcase = only_suite_testcase,
	.check_param = syscall_check_param,
	.default_kpi = syscall_default_kpi,
	.warmup_s = one_more_run,
	.agent_argv = syscall_argv,
	.parse = parse_syscall,
};
