/* vm-scalability: the cases lkp-tests' vm-scalability jobs run (anon and
 * file, seq and rand, cow, hugetlb, lru-file, mmap-pread/xread, msync,
 * shm, truncate, small-allocs, swap), by klab's driver
 * (guests/bench/vm-scalability.c) over klab's usemem, sized against the
 * guest's memory as LKP's hw_vars does; LKP's parser's metrics
 * (vm-scalability.throughput, median, workload, ...).  The cases that
 * read sparse files do it on the job's fs: (LKP's default, xfs, when the
 * job names none).  params.also names more cases for the same boot. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "/usr/lib/klab/vm-scalability"
#define USEMEM "/usr/lib/klab/usemem"
#define MAX_SAMPLE_TASKS 4096
/* the driver's own limit on --case */
#define MAX_ALSO 63

/* the driver's cases, lkp-tests' vm-scalability jobs' tests */
static const char *const testcases[] = {
	"anon-w-seq", "anon-w-seq-mt", "anon-w-rand", "anon-w-rand-mt", "anon-wx-seq-mt", "anon-wx-rand-mt",
	"anon-r-seq", "anon-r-seq-mt", "anon-r-rand", "anon-r-rand-mt", "anon-rx-seq-mt", "anon-rx-rand-mt",
	"anon-cow-seq", "anon-cow-seq-mt", "anon-cow-rand", "anon-cow-rand-mt", "anon-w-seq-hugetlb",
	"anon-w-rand-hugetlb", "anon-cow-seq-hugetlb", "anon-cow-rand-hugetlb", "lru-file-mmap-read",
	"lru-file-mmap-read-rand", "lru-file-readonce", "lru-file-readtwice", "mmap-pread-seq", "mmap-pread-seq-mt",
	"mmap-pread-rand", "mmap-pread-rand-mt", "mmap-xread-seq-mt", "mmap-xread-rand-mt", "mremap-xread-rand-mt",
	"small-allocs", "small-allocs-mt", "msync", "msync-mt", "shm-pread-seq", "shm-pread-seq-mt", "shm-pread-rand",
	"shm-pread-rand-mt", "shm-xread-seq", "shm-xread-seq-mt", "shm-xread-rand", "shm-xread-rand-mt", "lru-shm",
	"lru-shm-rand", "truncate", "truncate-seq", "swap-w-seq", "swap-w-seq-mt", "swap-w-rand", "swap-w-rand-mt",
};

/* the cases on sparse files (LKP's SPARSE_ROOT): a file system of their own */
static const char *const sparse_cases[] = {
	"lru-file-mmap-read", "lru-file-mmap-read-rand", "lru-file-readonce", "lru-file-readtwice", "mmap-pread-seq",
	"mmap-pread-seq-mt", "mmap-pread-rand", "mmap-pread-rand-mt", "mmap-xread-seq-mt", "mmap-xread-rand-mt",
	"mremap-xread-rand-mt", "msync", "msync-mt", "truncate", "truncate-seq",
};

static const char *const params[] = { "unit_size", "also", NULL };

#define WHEN_FAULT 0x1
#define WHEN_ALSO 0x2

static const struct suite_kpi kpis[] = {
	{ "vm-scalability.throughput", 1 },
	{ "vm-scalability.median", 1 },
	{ "vm-scalability.throughput_fault", 1 },
	{ "vm-scalability.workload", 1 },
	{ NULL, 0 },
};

static const struct suite_metric metrics[] = {
	{ "vm-scalability.throughput", 0 },
	{ "vm-scalability.median", 0 },
	{ "vm-scalability.workload", 0 },
	{ "vm-scalability.task_throughput", 0 },
	{ "vm-scalability.task_usecs", 0 },
	{ "vm-scalability.task_bytes", 0 },
	{ "vm-scalability.throughput_fault", WHEN_FAULT },
	{ "vm-scalability.median_fault", WHEN_FAULT },
	{ "vm-scalability.*.throughput", WHEN_ALSO },
	{ NULL, 0 },
};

static const struct suite_program tools[] = {
	{ "usemem", USEMEM, NULL },
	{ NULL, NULL, NULL },
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
	return (!strcmp(job->testcase, "truncate-seq") ? WHEN_FAULT : 0) | (param(job, "also") ? WHEN_ALSO : 0);
}

/* params.also: more cases for the same boot, after the job's own. */
static int each_also(const struct job *job, const char *what, int (*fn)(const char *c, void *data), void *data)
{
	return suite_each_also(job, what, param(job, "also"), testcases, ARRAY_SIZE(testcases), MAX_ALSO, fn, data);
}

/* What the cases need: a sparse root (1), swap (2). */
static int case_needs(const char *c, void *data)
{
	unsigned *needs = data;

	*needs |= suite_listed(c, sparse_cases, ARRAY_SIZE(sparse_cases)) ? 1 : 0;
	*needs |= !strncmp(c, "swap-", 5) ? 2 : 0;
	return 0;
}

static int check_testcase(const struct job *job, const char *path, int line)
{
	if (!strcmp(job->testcase, "migrate"))
		return error("%s:%d: testcase: klab does not run vm-scalability's migrate (it needs numactl's "
			     "migratepages, which klab's guests do not carry)",
			     path, line);
	return suite_check_listed(job, testcases, ARRAY_SIZE(testcases), path, line);
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	uint64_t bytes;
	char *what;
	int ret;

	if (!strcmp(kv->key, "also")) {
		what = xstrfmt("%s:%d: params.also", path, line);
		ret = suite_each_also(job, what, kv->value, testcases, ARRAY_SIZE(testcases), MAX_ALSO, NULL, NULL);
		free(what);
		return ret;
	}
	if (!kv->value || job_parse_bytes(kv->value, &bytes) < 0)
		return error("%s:%d: params.unit_size: expected a size like 1G or 512m, got '%s'", path, line,
			     kv->value ? kv->value : "");
	return 0;
}

/* LKP's sparse root is xfs unless the job says; the swap cases need swap. */
static int check(struct job *job, const char *path, int line)
{
	unsigned needs = 0;

	case_needs(job->testcase, &needs);
	if (param(job, "also"))
		each_also(job, "params.also", case_needs, &needs);
	if ((needs & 1) && !job->fs)
		job->fs = xstrdup("xfs");
	if ((needs & 2) && !job->guest.swap_mb)
		return error("%s:%d: the swap-w cases write beyond memory into swap: give the guest a swap disk "
			     "(guest: { swap: 1G })",
			     path, line);
	return 0;
}

/* The sparse files may be written (msync), up to the guest's memory. */
static uint64_t disk_mb(const struct job *job)
{
	uint64_t mb = 2 * job->guest.memory_mb + 1024;

	return mb < JOB_DEFAULT_DISK_MB ? JOB_DEFAULT_DISK_MB : mb;
}

static char *default_kpi(const struct job *job)
{
	(void)job;
	return xstrdup("vm-scalability.throughput");
}

static int count_case(const char *c, void *n)
{
	(void)c;
	(*(unsigned *)n)++;
	return 0;
}

/* Each case runs for the runtime after its setup (sparse files, a tmpfs;
 * three seconds under TCG at most), and its last run may start just
 * before the runtime ends. */
static int warmup_s(const struct job *job, unsigned *out)
{
	unsigned cases = 1;

	if (param(job, "also") && each_also(job, "params.also", count_case, &cases) < 0)
		return -1;
	*out = cases * (job->runtime_s + 3) - 3;
	return 0;
}

static int add_case(const char *c, void *sb)
{
	return JOB_CONF_ARGV(sb, "--case", c);
}

/* Each usemem's bytes for klab's size: the job's size when it fits in the
 * guest's memory and swap, or its share of them (LKP's usemem over memory
 * plus swap).  0: the case's own sizing. */
static int task_bytes(const struct job *job, unsigned nr_task, uint64_t *out)
{
	uint64_t mem_bytes = job->guest.memory_mb << 20, swap_bytes = job->guest.swap_mb << 20;
	unsigned pct;

	*out = 0;
	if (!job->size)
		return 0;
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
	const char *unit = param(job, "unit_size");
	uint64_t bytes, unit_bytes;

	if (!suite_listed(job->testcase, testcases, ARRAY_SIZE(testcases)))
		return error("job '%s': vm-scalability has no case '%s'", job->path, job->testcase);
	if (task_bytes(job, nr_task, &bytes) < 0)
		return -1;
	if (JOB_CONF_ARGV(sb, PROGRAM, "--case", job->testcase) < 0 ||
	    (param(job, "also") && each_also(job, "params.also", add_case, sb) < 0) ||
	    job_conf_argv_uint(sb, "--tasks", nr_task) < 0 ||
	    job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0)
		return -1;
	if (unit && (job_parse_bytes(unit, &unit_bytes) < 0 ||
		     job_conf_argvf(sb, "--unit-size=%llu", (unsigned long long)unit_bytes) < 0))
		return error("job '%s': params.unit_size is not a size", job->path);
	if (bytes && job_conf_argvf(sb, "--task-size=%llu", (unsigned long long)bytes) < 0)
		return -1;
	return job->fs ? JOB_CONF_ARGV(sb, "--sparse-dir", JOB_DISK_DIR) : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One kind of sample (the runs' throughput, or truncate-seq's faulting):
 * LKP's add_one_sample, a run's tasks summed and their median. */
struct samples {
	double *kbps;
	size_t nr;
	double sum_throughput, sum_median;
	unsigned runs;
};

static void sample_end(struct samples *s)
{
	double sum = 0;

	if (!s->nr)
		return;
	for (size_t i = 0; i < s->nr; i++)
		sum += s->kbps[i];
	qsort(s->kbps, s->nr, sizeof(*s->kbps), cmp_double);
	s->sum_throughput += sum;
	s->sum_median += s->kbps[s->nr / 2];
	s->runs++;
	s->nr = 0;
}

static void sample_add(struct samples *s, double kbps)
{
	if (s->nr < MAX_SAMPLE_TASKS)
		s->kbps[s->nr++] = kbps;
}

/* "N bytes / N usecs = N KB/s" at tok[k]; its three numbers. */
static int usemem_line(char **tok, size_t n, size_t k, double v[3])
{
	return n == k + 8 && !strcmp(tok[k + 1], "bytes") && !strcmp(tok[k + 2], "/") && !strcmp(tok[k + 4], "usecs") &&
	       !strcmp(tok[k + 5], "=") && !strcmp(tok[k + 7], "KB/s") && !result_parse_number(tok[k], &v[0]) &&
	       !result_parse_number(tok[k + 3], &v[1]) && !result_parse_number(tok[k + 6], &v[2]) && v[0] >= 0 &&
	       v[1] >= 0 && v[2] >= 0;
}

/* A case name from the driver's header, as it may go into a metric. */
static int case_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 40 && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

/*
 * klab's driver, a section a case, a run after each "./case-NAME" line:
 *
 *   vm-scalability: case=anon-w-seq tasks=2 runtime=10 mem=2058776576 shm=2058776576
 *   ./case-anon-w-seq
 *   37748736 bytes / 89364 usecs = 412515 KB/s
 *   faulted: 3160866816 bytes / 2004925 usecs = 1539600 KB/s
 *   truncated: 3160866816 bytes / 17020 usecs = 181362162 KB/s
 *
 * As LKP's parser: throughput is the runs' mean of their tasks' summed
 * KB/s, median the mean of their medians, workload the kilobytes done;
 * faulted lines make throughput_fault and median_fault.  The first
 * section is the job's case (usemem's own lines alone are one run of
 * it); later ones (params.also) give vm-scalability.<case>.throughput.
 */
static void parse_vm_scalability(struct result_metrics *ml, char *const *lines, size_t nr)
{
	struct samples main = { xcalloc(MAX_SAMPLE_TASKS, sizeof(double)), 0, 0, 0, 0 };
	struct samples fault = { xcalloc(MAX_SAMPLE_TASKS, sizeof(double)), 0, 0, 0, 0 };
	struct samples extra = { xcalloc(MAX_SAMPLE_TASKS, sizeof(double)), 0, 0, 0, 0 };
	char section[41] = "";
	double bytes = 0;
	int64_t task = 0;
	int sections = 0, header, lost = 0;

	for (size_t i = 0; i <= nr; i++) {
		char *copy = NULL, *tok[RESULT_MAX_TOKENS];
		const char *c = NULL;
		double v[3];
		size_t n = 0;

		if (i < nr && !lines[i])
			continue;
		if (i < nr)
			n = result_tokenize(lines[i], &copy, tok);
		if (n > RESULT_MAX_TOKENS)
			n = 0;	/* too many words for any line it reads */
		header = n >= 2 && n <= RESULT_MAX_TOKENS && !strcmp(tok[0], "vm-scalability:");
		if (header)
			c = result_key_value(tok[1], "case", '=');
		/* a section ends at the next header or the end; a header that
		 * names no case keeps what follows out */
		if (i == nr || header) {
			if (sections > 1) {
				sample_end(&extra);
				if (extra.runs)
					result_add_metric(ml, xstrfmt("vm-scalability.%s.throughput", section), 0,
							  extra.sum_throughput / extra.runs);
				extra.runs = 0;
				extra.sum_throughput = extra.sum_median = 0;
			}
			lost = i < nr && !(c && case_name_ok(c));
			if (i < nr && !lost) {
				snprintf(section, sizeof(section), "%s", c);
				sections++;
			}
		} else if (lost) {
			;
		} else if (n == 1 && !strncmp(tok[0], "./case-", 7)) {
			sample_end(sections > 1 ? &extra : &main);
			sample_end(&fault);
		} else if (usemem_line(tok, n, 0, v) || (n == 9 && !strcmp(tok[0], "truncated:") && usemem_line(tok, n, 1, v))) {
			if (sections > 1) {
				sample_add(&extra, v[2]);
			} else {
				result_add_metric(ml, xstrdup("vm-scalability.task_throughput"), task, v[2]);
				result_add_metric(ml, xstrdup("vm-scalability.task_usecs"), task, v[1]);
				result_add_metric(ml, xstrdup("vm-scalability.task_bytes"), task, v[0]);
				task++;
				sample_add(&main, v[2]);
				bytes += v[0];
			}
		} else if (n == 9 && !strcmp(tok[0], "faulted:") && usemem_line(tok, n, 1, v) && sections <= 1) {
			sample_add(&fault, v[2]);
		}
		free(copy);
	}
	sample_end(&main);
	sample_end(&fault);
	if (main.runs) {
		result_add_metric(ml, xstrdup("vm-scalability.throughput"), 0, main.sum_throughput / main.runs);
		result_add_metric(ml, xstrdup("vm-scalability.median"), 0, main.sum_median / main.runs);
		result_add_metric(ml, xstrdup("vm-scalability.workload"), 0, bytes / 1024);
	}
	if (fault.runs) {
		result_add_metric(ml, xstrdup("vm-scalability.throughput_fault"), 0, fault.sum_throughput / fault.runs);
		result_add_metric(ml, xstrdup("vm-scalability.median_fault"), 0, fault.sum_median / fault.runs);
	}
	free(main.kbps);
	free(fault.kbps);
	free(extra.kbps);
}

const struct suite suite_vm_scalability = {
	.name = "vm-scalability",
	.keys = SUITE_KEY_SIZE | SUITE_KEY_FS,
	.params = params,
	.kpis = kpis,
	.metrics = metrics,
	.conditions = conditions,
	.program = { "vm-scalability", PROGRAM, NULL },
	.tools = tools,
	.check_testcase = check_testcase,
	.check_param = check_param,
	.check = check,
	.default_kpi = default_kpi,
	.disk_mb = disk_mb,
	.warmup_s = warmup_s,
	.agent_argv = agent_argv,
	.parse = parse_vm_scalability,
};
