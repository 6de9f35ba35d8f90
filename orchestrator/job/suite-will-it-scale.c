/* will-it-scale: klab's runner (guests/bench/will-it-scale.c) of every
 * testcase lkp-tests' will-it-scale jobs run, in processes, threads or
 * both in turn (LKP's modes), with a warm-up; per-second totals and the
 * per-task average become LKP's metrics.  params.also names more
 * testcases for the same boot, measured after the job's own. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

#define PROGRAM "/usr/lib/klab/will-it-scale"
#define MAX_WARMUP_S 600
#define DEFAULT_WARMUP_S 2
/* the runner's own limit on --test */
#define MAX_ALSO 127

/* lkp-tests' will-it-scale jobs (will-it-scale.yaml, part1-4, largemem). */
static const char *const testcases[] = {
	"brk1", "brk2", "context_switch1", "dup1", "eventfd1", "fallocate1", "fallocate2", "futex1", "futex2",
	"futex3", "futex4", "getppid1", "lock1", "lock2", "lseek1", "lseek2", "malloc1", "malloc2", "mmap1", "mmap2",
	"open1", "open2", "open3", "page_fault1", "page_fault2", "page_fault3", "pipe1", "poll1", "poll2",
	"posix_semaphore1", "pread1", "pread2", "pread3", "pthread_mutex1", "pthread_mutex2", "pthread_mutex3",
	"pthread_mutex4", "pthread_mutex5", "pwrite1", "pwrite2", "pwrite3", "read1", "read2", "read3", "read4",
	"readseek1", "readseek2", "readseek3", "sched_yield", "signal1", "tlb_flush1", "tlb_flush2", "tlb_flush3",
	"unix1", "unlink1", "unlink2", "write1", "writeseek1", "writeseek2", "writeseek3",
};

/* LKP's: both runs processes, then threads */
static const char *const modes[] = { "process", "thread", "both", NULL };
static const char *const params[] = { "warmup", "also", NULL };

static const struct suite_kpi kpis[] = {
	{ "will-it-scale.per_process_ops", 1 },
	{ "will-it-scale.per_thread_ops", 1 },
	{ "will-it-scale.workload", 1 },
	{ NULL, 0 },
};

#define WHEN_PROCESS 0x1
#define WHEN_THREAD 0x2
#define WHEN_ALSO 0x4

static const struct suite_metric metrics[] = {
	{ "will-it-scale.per_process_ops", WHEN_PROCESS },
	{ "will-it-scale.per_thread_ops", WHEN_THREAD },
	{ "will-it-scale.workload", 0 },
	{ "will-it-scale.average", 0 },
	{ "will-it-scale.ops_per_sec", 0 },
	{ "will-it-scale.min_task_ops", 0 },
	{ "will-it-scale.max_task_ops", 0 },
	{ "will-it-scale.*.per_process_ops", WHEN_ALSO },
	{ "will-it-scale.*.per_thread_ops", WHEN_ALSO },
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
	unsigned bits = param(job, "also") ? WHEN_ALSO : 0;

	if (!strcmp(job->mode, "process") || !strcmp(job->mode, "both"))
		bits |= WHEN_PROCESS;
	if (!strcmp(job->mode, "thread") || !strcmp(job->mode, "both"))
		bits |= WHEN_THREAD;
	return bits;
}

static int check_testcase(const struct job *job, const char *path, int line)
{
	return suite_check_listed(job, testcases, ARRAY_SIZE(testcases), path, line);
}

/* params.warmup, in seconds. */
static int parse_warmup(const char *s, unsigned *out)
{
	return job_parse_duration(s, 0, MAX_WARMUP_S, out);
}

static int each_also(const struct job *job, const char *what, const char *v,
		     int (*fn)(const char *test, void *data), void *data)
{
	return suite_each_also(job, what, v, testcases, ARRAY_SIZE(testcases), MAX_ALSO, fn, data);
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	unsigned w;
	char *what;
	int ret;

	if (!strcmp(kv->key, "also")) {
		what = xstrfmt("%s:%d: params.also", path, line);
		ret = each_also(job, what, kv->value, NULL, NULL);
		free(what);
		return ret;
	}
	if (!kv->value || parse_warmup(kv->value, &w) < 0)
		return error("%s:%d: params.warmup: expected a duration like 2s or 0 (at most 10m), got '%s'", path,
			     line, kv->value ? kv->value : "");
	return 0;
}

static char *default_kpi(const struct job *job)
{
	return xstrdup(!strcmp(job->mode, "thread") ? "will-it-scale.per_thread_ops" : "will-it-scale.per_process_ops");
}

static int count_test(const char *test, void *n)
{
	(void)test;
	(*(unsigned *)n)++;
	return 0;
}

/* Each testcase and mode warms up and runs, and starts (its tasks and
 * their files; two seconds under TCG at most): all but the first
 * runtime come before the last one ends. */
static int warmup_s(const struct job *job, unsigned *out)
{
	const char *w = param(job, "warmup"), *also = param(job, "also");
	unsigned tests = 1, runs, warmup = DEFAULT_WARMUP_S;

	if (w && parse_warmup(w, &warmup) < 0)
		return error("job '%s': params.warmup is not a duration", job->path);
	if (also && each_also(job, "params.also", also, count_test, &tests) < 0)
		return -1;
	runs = tests * (!strcmp(job->mode, "both") ? 2 : 1);
	*out = runs * warmup + (runs - 1) * (job->runtime_s + 2);
	return 0;
}

static int add_test(const char *test, void *sb)
{
	return JOB_CONF_ARGV(sb, "--test", test);
}

static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *also = param(job, "also"), *w = param(job, "warmup");
	unsigned warmup = DEFAULT_WARMUP_S;

	if (!suite_listed(job->testcase, testcases, ARRAY_SIZE(testcases)))
		return error("job '%s': will-it-scale has no test '%s'", job->path, job->testcase);
	if (w && parse_warmup(w, &warmup) < 0)
		return error("job '%s': params.warmup is not a duration", job->path);
	if (JOB_CONF_ARGV(sb, PROGRAM, "--test", job->testcase) < 0 ||
	    (also && each_also(job, "params.also", also, add_test, sb) < 0) ||
	    JOB_CONF_ARGV(sb, "--mode", job->mode) < 0 ||
	    job_conf_argv_uint(sb, "--tasks", job_count_resolve(&job->nr_task, vcpus)) < 0 ||
	    job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0 ||
	    job_conf_argv_uint(sb, "--warmup", warmup) < 0)
		return -1;
	/* the scratch disk's file system: read3 and read4 need O_DIRECT,
	 * which tmpfs lacks before Linux 6.6 */
	return job->fs ? JOB_CONF_ARGV(sb, "--dir", JOB_DISK_DIR) : 0;
}

/* A testcase name from the runner's header, as it may go into a metric. */
static int test_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 32 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/*
 * klab's will-it-scale runner, one section a testcase and mode:
 *
 *   will-it-scale: testcase=malloc1 mode=process tasks=2 warmup=2 runtime=5
 *   warmup:1 total:123
 *   second:1 min:10 max:12 total:22
 *   average:22
 *   per_task_average:11
 *
 * The first section's testcase is the job's: its sections give LKP's
 * per_process_ops / per_thread_ops, and workload (as LKP's parser: the
 * sum of the sections' average totals a second); the first section the
 * per-second series.  Later testcases (params.also) give
 * will-it-scale.<testcase>.per_<mode>_ops.
 */
static void parse_will_it_scale(struct result_metrics *ml, char *const *lines, size_t nr)
{
	char main_test[33] = "", test[33] = "";
	const char *mode = NULL;
	double workload = 0;
	int sections = 0, have_workload = 0;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		const char *s, *mn, *mx, *total, *val;
		int is_main = test[0] && !strcmp(test, main_test);
		size_t n;
		int64_t sec;
		double v[3];

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n >= 2 && n <= RESULT_MAX_TOKENS && !strcmp(tok[0], "will-it-scale:")) {
			/* a new section: nothing counts until its header is whole */
			const char *t = NULL, *m = NULL;

			mode = NULL;
			test[0] = '\0';
			for (size_t k = 1; k < n; k++) {
				t = t ? t : result_key_value(tok[k], "testcase", '=');
				m = m ? m : result_key_value(tok[k], "mode", '=');
			}
			if (t && m && test_name_ok(t) && (!strcmp(m, "process") || !strcmp(m, "thread"))) {
				mode = !strcmp(m, "process") ? "process" : "thread";
				snprintf(test, sizeof(test), "%s", t);
				if (!main_test[0])
					snprintf(main_test, sizeof(main_test), "%s", t);
				sections++;
			}
		} else if (!mode) {
			;	/* nothing counts outside a section */
		} else if (n == 4 && (s = result_key_value(tok[0], "second", ':')) && (mn = result_key_value(tok[1], "min", ':')) &&
			   (mx = result_key_value(tok[2], "max", ':')) && (total = result_key_value(tok[3], "total", ':'))) {
			if (is_main && sections == 1 && !result_parse_int64(s, &sec) && sec >= 0 &&
			    !result_parse_number(mn, &v[0]) && !result_parse_number(mx, &v[1]) &&
			    !result_parse_number(total, &v[2])) {
				result_add_metric(ml, xstrdup("will-it-scale.ops_per_sec"), sec, v[2]);
				result_add_metric(ml, xstrdup("will-it-scale.min_task_ops"), sec, v[0]);
				result_add_metric(ml, xstrdup("will-it-scale.max_task_ops"), sec, v[1]);
			}
		} else if (n == 1 && (val = result_key_value(tok[0], "average", ':'))) {
			if (is_main && !result_parse_number(val, &v[0])) {
				if (sections == 1)
					result_add_metric(ml, xstrdup("will-it-scale.average"), 0, v[0]);
				workload += v[0];
				have_workload = 1;
			}
		} else if (n == 1 && (val = result_key_value(tok[0], "per_task_average", ':'))) {
			if (!result_parse_number(val, &v[0]))
				result_add_metric(ml, is_main ? xstrfmt("will-it-scale.per_%s_ops", mode)
							      : xstrfmt("will-it-scale.%s.per_%s_ops", test, mode),
						  0, v[0]);
		}
		free(copy);
	}
	if (have_workload)
		result_add_metric(ml, xstrdup("will-it-scale.workload"), 0, workload);
}

const struct suite suite_will_it_scale = {
	.name = "will-it-scale",
	.keys = SUITE_KEY_MODE | SUITE_KEY_FS,
	.modes = modes,
	.params = params,
	.kpis = kpis,
	.metrics = metrics,
	.conditions = conditions,
	.program = { "will-it-scale", PROGRAM, NULL },
	.check_testcase = check_testcase,
	.check_param = check_param,
	.default_kpi = default_kpi,
	.warmup_s = warmup_s,
	.agent_argv = agent_argv,
	.parse = parse_will_it_scale,
};
