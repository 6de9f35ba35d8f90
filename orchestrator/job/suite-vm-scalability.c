/* vm-scalability: LKP's name for usemem-based tests; klab runs its own
 * usemem (guests/bench/usemem.c) for anon-w-seq, sized against the
 * guest's memory; one line per task becomes the metrics. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "/usr/lib/klab/usemem"

static const char *const testcases[] = { "anon-w-seq" };

static const struct suite_kpi kpis[] = {
	{ "vm-scalability.throughput", 1 },
	{ "vm-scalability.workload", 1 },
	{ NULL, 0 },
};

static int check_testcase(const struct job *job, const char *path, int line)
{
	return suite_check_listed(job, testcases, ARRAY_SIZE(testcases), path, line);
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	(void)kv;
	return error("%s:%d: params: %s takes no options (use nr_task, nr_threads, size)", path, line, job->suite);
}

static char *default_kpi(const struct job *job)
{
	(void)job;
	return xstrdup("vm-scalability.throughput");
}

/* Each task's bytes: the job's size when it fits in the guest's memory
 * and swap, or its share of them (LKP's usemem over memory plus swap). */
static int task_bytes(const struct job *job, unsigned nr_task, uint64_t *out)
{
	uint64_t mem_bytes = job->guest.memory_mb << 20, swap_bytes = job->guest.swap_mb << 20;
	unsigned pct;

	if (!job->size) {
		/* half the memory leaves the kernel and page cache room */
		*out = mem_bytes / 2 / nr_task;
		return 0;
	}
	if (job_parse_share(job->size, &pct) == 0) {
		*out = (mem_bytes + swap_bytes) * pct / 100 / nr_task;
		return 0;
	}
	if (job_parse_bytes(job->size, out) < 0)
		return error("job '%s': size '%s' is not a size", job->path, job->size);
	if (*out > (mem_bytes + swap_bytes) / nr_task)
		return error("job '%s': %u tasks of %s do not fit in the guest's %lluM%s", job->path, nr_task,
			     job->size, (unsigned long long)job->guest.memory_mb, swap_bytes ? " and its swap" : "");
	return 0;
}

static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	unsigned nr_task = job_count_resolve(&job->nr_task, vcpus);
	unsigned nr_threads = job_count_resolve(&job->nr_threads, vcpus);
	uint64_t bytes;

	if (!suite_listed(job->testcase, testcases, ARRAY_SIZE(testcases)))
		return error("job '%s': vm-scalability has no test '%s' (supported: anon-w-seq)", job->path,
			     job->testcase);
	if (task_bytes(job, nr_task, &bytes) < 0)
		return -1;
	if (job_conf_line(sb, "argv", PROGRAM) < 0 || job_conf_argv_uint(sb, "-n", nr_task) < 0 ||
	    (nr_threads > 1 && job_conf_argv_uint(sb, "-t", nr_threads) < 0) ||
	    job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0)
		return -1;
	if (job->size && !strchr(job->size, '%'))
		return job_conf_line(sb, "argv", job->size);
	return job_conf_argvf(sb, "%lluk", (unsigned long long)(bytes >> 10));
}

/* klab's usemem, one line per task: "N bytes / N usecs = N KB/s". */
static void parse_vm_scalability(struct result_metrics *ml, char *const *lines, size_t nr)
{
	double throughput = 0, workload = 0;
	int64_t task = 0;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		double bytes, usecs, kbs;
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (n == 8 && !strcmp(tok[1], "bytes") && !strcmp(tok[2], "/") && !strcmp(tok[4], "usecs") &&
		    !strcmp(tok[5], "=") && !strcmp(tok[7], "KB/s") && !result_parse_number(tok[0], &bytes) &&
		    !result_parse_number(tok[3], &usecs) && !result_parse_number(tok[6], &kbs)) {
			result_add_metric(ml, xstrdup("vm-scalability.task_throughput"), task, kbs);
			result_add_metric(ml, xstrdup("vm-scalability.task_usecs"), task, usecs);
			result_add_metric(ml, xstrdup("vm-scalability.task_bytes"), task, bytes);
			throughput += kbs;
			workload += bytes;
			task++;
		}
		free(copy);
	}
	if (task) {
		result_add_metric(ml, xstrdup("vm-scalability.throughput"), 0, throughput);
		result_add_metric(ml, xstrdup("vm-scalability.workload"), 0, workload);
	}
}


const struct suite suite_vm_scalability = {
	.name = "vm-scalability",
	.keys = SUITE_KEY_NR_THREADS | SUITE_KEY_SIZE,
	.kpis = kpis,
	.program = { "usemem", PROGRAM, NULL },
	.check_testcase = check_testcase,
	.check_param = check_param,
	.default_kpi = default_kpi,
	.agent_argv = agent_argv,
	.parse = parse_vm_scalability,
};
