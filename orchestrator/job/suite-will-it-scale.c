/* will-it-scale: klab's runner (guests/bench/will-it-scale.c) of a few
 * of its tests, in processes or threads, with a warm-up; per-second
 * totals and the per-task average become metrics. */
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

static const char *const testcases[] = { "malloc1", "page_fault1", "mmap1" };

static const struct suite_kpi kpis[] = {
	{ "will-it-scale.per_process_ops", 1 },
	{ "will-it-scale.per_thread_ops", 1 },
	{ "will-it-scale.workload", 1 },
	{ NULL, 0 },
};

static int check_testcase(const struct job *job, const char *path, int line)
{
	return suite_check_listed(job, testcases, ARRAY_SIZE(testcases), path, line);
}

/* params.warmup, in seconds. */
static int parse_warmup(const char *s, unsigned *out)
{
	return job_parse_duration(s, 0, MAX_WARMUP_S, out);
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	unsigned w;

	(void)job;
	if (strcmp(kv->key, "warmup"))
		return error("%s:%d: params: will-it-scale has no option '%s' (known: warmup)", path, line, kv->key);
	if (!kv->value || parse_warmup(kv->value, &w) < 0)
		return error("%s:%d: params.warmup: expected a duration like 2s or 0 (at most 10m), got '%s'", path,
			     line, kv->value ? kv->value : "");
	return 0;
}

static char *default_kpi(const struct job *job)
{
	return xstrdup(!strcmp(job->mode, "thread") ? "will-it-scale.per_thread_ops" : "will-it-scale.per_process_ops");
}

static int warmup_s(const struct job *job, unsigned *out)
{
	*out = DEFAULT_WARMUP_S;
	for (size_t i = 0; i < job->nr_params; i++) {
		const struct job_kv *kv = &job->params[i];
		if (!strcmp(kv->key, "warmup") && (!kv->value || parse_warmup(kv->value, out) < 0))
			return error("job '%s': params.warmup is not a duration", job->path);
	}
	return 0;
}

static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	unsigned warmup;

	if (!suite_listed(job->testcase, testcases, ARRAY_SIZE(testcases)))
		return error("job '%s': will-it-scale has no test '%s'", job->path, job->testcase);
	if (warmup_s(job, &warmup) < 0)
		return -1;
	if (JOB_CONF_ARGV(sb, PROGRAM, "--test", job->testcase, "--mode", job->mode) < 0 ||
	    job_conf_argv_uint(sb, "--tasks", job_count_resolve(&job->nr_task, vcpus)) < 0 ||
	    job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0)
		return -1;
	return job_conf_argv_uint(sb, "--warmup", warmup);
}

/*
 * klab's will-it-scale runner:
 *
 *   will-it-scale: testcase=malloc1 mode=process tasks=2 warmup=2 runtime=5
 *   warmup:1 total:123
 *   second:1 min:10 max:12 total:22
 *   average:22
 *   per_task_average:11
 */
static void parse_will_it_scale(struct result_metrics *ml, char *const *lines, size_t nr)
{
	const char *task_metric = NULL;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		const char *s, *mn, *mx, *total, *val;
		size_t n;
		int64_t sec;
		double v[3];

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (!task_metric) {
			/* nothing counts before the header */
			if (n >= 2 && n <= RESULT_MAX_TOKENS && !strcmp(tok[0], "will-it-scale:")) {
				for (size_t k = 1; k < n; k++) {
					const char *mode = result_key_value(tok[k], "mode", '=');

					if (mode && !strcmp(mode, "process"))
						task_metric = "will-it-scale.per_process_ops";
					else if (mode && !strcmp(mode, "thread"))
						task_metric = "will-it-scale.per_thread_ops";
				}
			}
		} else if (n == 4 && (s = result_key_value(tok[0], "second", ':')) && (mn = result_key_value(tok[1], "min", ':')) &&
			   (mx = result_key_value(tok[2], "max", ':')) && (total = result_key_value(tok[3], "total", ':'))) {
			if (!result_parse_int64(s, &sec) && sec >= 0 && !result_parse_number(mn, &v[0]) &&
			    !result_parse_number(mx, &v[1]) && !result_parse_number(total, &v[2])) {
				result_add_metric(ml, xstrdup("will-it-scale.ops_per_sec"), sec, v[2]);
				result_add_metric(ml, xstrdup("will-it-scale.min_task_ops"), sec, v[0]);
				result_add_metric(ml, xstrdup("will-it-scale.max_task_ops"), sec, v[1]);
			}
		} else if (n == 1 && (val = result_key_value(tok[0], "average", ':'))) {
			if (!result_parse_number(val, &v[0]))
				result_add_metric(ml, xstrdup("will-it-scale.average"), 0, v[0]);
		} else if (n == 1 && (val = result_key_value(tok[0], "per_task_average", ':'))) {
			if (!result_parse_number(val, &v[0]))
				result_add_metric(ml, xstrdup(task_metric), 0, v[0]);
		}
		free(copy);
	}
}

/* After duplicates are gone: the workload is what the measured seconds did. */
static void will_it_scale_workload(struct result_metrics *ml)
{
	size_t n;
	double sum = result_metric_sum(ml, "will-it-scale.ops_per_sec", &n);

	if (n)
		result_add_metric(ml, xstrdup("will-it-scale.workload"), 0, sum);
}


const struct suite suite_will_it_scale = {
	.name = "will-it-scale",
	.keys = SUITE_KEY_MODE,
	.kpis = kpis,
	.program = { "will-it-scale", PROGRAM, NULL },
	.check_testcase = check_testcase,
	.check_param = check_param,
	.default_kpi = default_kpi,
	.warmup_s = warmup_s,
	.agent_argv = agent_argv,
	.parse = parse_will_it_scale,
	.derive = will_it_scale_workload,
};
