/* fio-basic: Debian's fio on a file system made fresh each boot (fs:
 * xfs, ext4 or btrfs on the job's scratch virtio disk), with lkp-tests'
 * fio-setup-basic parameters (rw, bs, ioengine, iodepth, direct,
 * test_size, ...) and the metric names LKP's fio parser gives
 * (fio.write_bw_MBps, fio.read_iops, ...), read from fio's terse output
 * (version 3) of the group of nr_task jobs. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "/usr/bin/fio"
#define DEFAULT_TEST_SIZE "1g"
#define MAX_IODEPTH 65536
#define MAX_FIELD 64
/* fields of terse version 3 (fio's HOWTO: "Terse output") */
#define TERSE_FIELDS 87
#define TERSE_READ 5		/* read_kb: the read block's first field, 0-based */
#define TERSE_WRITE 46

static const char *const params[] = {
	"rw", "bs", "ioengine", "iodepth", "direct", "test_size", "time_based", "fallocate", "invalidate",
	"nr_files", "rwmixread", "ramp_time", NULL,
};
static const char *const rws[] = { "read", "write", "randread", "randwrite", "rw", "readwrite", "randrw" };

#define WHEN_READ 0x1
#define WHEN_WRITE 0x2

static const struct suite_kpi kpis[] = {
	{ "fio.write_bw_MBps", 1 },
	{ "fio.write_iops", 1 },
	{ "fio.read_bw_MBps", 1 },
	{ "fio.read_iops", 1 },
	{ "fio.write_clat_mean_ns", -1 },
	{ "fio.read_clat_mean_ns", -1 },
	{ "fio.workload", 1 },
	{ NULL, 0 },
};

static const struct suite_metric metrics[] = {
	{ "fio.read_*", WHEN_READ },
	{ "fio.write_*", WHEN_WRITE },
	{ "fio.workload", 0 },
	{ "fio.cpu_usr_pct", 0 },
	{ "fio.cpu_sys_pct", 0 },
	{ NULL, 0 },
};

static const char *param(const struct job *job, const char *key)
{
	for (size_t i = 0; i < job->nr_params; i++)
		if (!strcmp(job->params[i].key, key))
			return job->params[i].value;
	return NULL;
}

static const char *rw(const struct job *job)
{
	const char *v = param(job, "rw");

	return v ? v : "write";
}

static unsigned conditions(const struct job *job)
{
	const char *v = rw(job);

	if (!strcmp(v, "rw") || !strcmp(v, "readwrite") || !strcmp(v, "randrw"))
		return WHEN_READ | WHEN_WRITE;
	return strstr(v, "read") ? WHEN_READ : WHEN_WRITE;
}

static int check_testcase(const struct job *job, const char *path, int line)
{
	if (strcmp(job->testcase, "fio-basic"))
		return error("%s:%d: testcase: fio-basic has one, fio-basic (LKP's; rw: says what it does), got '%s'",
			     path, line, job->testcase);
	return 0;
}

/* fio's sizes: 4k, 2M, 1g, 4096 */
static int fio_size(const char *v, uint64_t *out)
{
	return job_parse_bytes(v, out);
}

static int number(const char *v, unsigned max, unsigned *out)
{
	size_t n = v ? strspn(v, "0123456789") : 0;
	uint64_t x = 0;

	if (!n || n > 9 || v[n])
		return -1;
	for (size_t i = 0; i < n; i++)
		x = x * 10 + (uint64_t)(v[i] - '0');
	if (x > max)
		return -1;
	*out = (unsigned)x;
	return 0;
}

/* LKP's parse_bool: the name itself, yes, true, 1; or no, false, 0 */
/* LKP's parse_bool: empty, or starting with 0, n (no), or false, is
 * false; any other word is true (LKP's jobs say "time_based: tb",
 * "direct: direct"). */
static int boolean(const char *key, const char *v, int *out)
{
	size_t n = v ? strlen(v) : 0;

	(void)key;
	if (!n || n > 32 || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_") != n)
		return -1;
	*out = !(v[0] == '0' || v[0] == 'n' || !strncmp(v, "false", 5));
	return 0;
}

/* a word of [a-z0-9_+]: an ioengine or fallocate mode fio knows or not */
static int word_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	return n && n <= 32 && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789_+") == n;
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	const char *v = kv->value;
	uint64_t bytes;
	unsigned n;
	int b;

	(void)job;
	if (!strcmp(kv->key, "rw")) {
		if (!v || !suite_listed(v, rws, ARRAY_SIZE(rws)))
			return error("%s:%d: params.rw: expected read, write, randread, randwrite, rw, readwrite or randrw, got '%s'",
				     path, line, v ? v : "");
	} else if (!strcmp(kv->key, "bs") || !strcmp(kv->key, "test_size")) {
		if (!v || fio_size(v, &bytes) < 0 || (!strcmp(kv->key, "bs") && bytes > (256u << 20)))
			return error("%s:%d: params.%s: expected a size like 4k, 2M or 1G, got '%s'", path, line, kv->key,
				     v ? v : "");
	} else if (!strcmp(kv->key, "ioengine") || !strcmp(kv->key, "fallocate")) {
		if (!word_ok(v))
			return error("%s:%d: params.%s: expected a fio %s like sync, libaio or io_uring, got '%s'", path,
				     line, kv->key, kv->key, v ? v : "");
	} else if (!strcmp(kv->key, "direct") || !strcmp(kv->key, "time_based") || !strcmp(kv->key, "invalidate")) {
		if (boolean(kv->key, v, &b) < 0)
			return error("%s:%d: params.%s: expected yes or no (a word, as LKP's parse_bool reads it), got '%s'", path, line, kv->key, v ? v : "");
	} else if (!strcmp(kv->key, "rwmixread")) {
		if (number(v, 100, &n) < 0)
			return error("%s:%d: params.rwmixread: expected a percentage from 0 to 100, got '%s'", path, line,
				     v ? v : "");
	} else if (!strcmp(kv->key, "ramp_time")) {
		if (!v || job_parse_duration(v, 0, 3600, &n) < 0)
			return error("%s:%d: params.ramp_time: expected a duration like 5s, got '%s'", path, line, v ? v : "");
	} else if (number(v, MAX_IODEPTH, &n) < 0 || !n) {
		return error("%s:%d: params.%s: expected a number from 1 to %d, got '%s'", path, line, kv->key,
			     MAX_IODEPTH, v ? v : "");
	}
	return 0;
}

static uint64_t test_size(const struct job *job)
{
	uint64_t bytes = 0;

	if (fio_size(param(job, "test_size") ? param(job, "test_size") : DEFAULT_TEST_SIZE, &bytes) < 0)
		fio_size(DEFAULT_TEST_SIZE, &bytes);
	return bytes;
}

/* The files, a quarter more for the file system, and a gigabyte. */
static uint64_t disk_mb(const struct job *job)
{
	return (test_size(job) >> 20) * 5 / 4 + 1024;
}

static int check(struct job *job, const char *path, int line)
{
	if (!job->fs)
		return error("%s:%d: fio-basic runs on a file system of its own: add fs: xfs, ext4 or btrfs", path, line);
	return 0;
}

static char *default_kpi(const struct job *job)
{
	return xstrdup(conditions(job) & WHEN_WRITE ? "fio.write_bw_MBps" : "fio.read_bw_MBps");
}

/* The options LKP's fio-setup-basic writes into its job, on fio's
 * command line. */
static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	static const char *const passed[] = { "bs", "ioengine", "iodepth", "fallocate", "nr_files", "rwmixread", "ramp_time" };
	unsigned nr_task = job_count_resolve(&job->nr_task, vcpus);
	uint64_t per_task = test_size(job) / nr_task;
	const char *v;
	int b;

	if (!job->fs)
		return error("job '%s': fio-basic needs fs:", job->path);
	if (JOB_CONF_ARGV(sb, PROGRAM, "--name=fio-basic", "--directory=" JOB_DISK_DIR, "--group_reporting",
			  "--output-format=terse", "--terse-version=3") < 0 ||
	    job_conf_argvf(sb, "--rw=%s", rw(job)) < 0 || job_conf_argvf(sb, "--numjobs=%u", nr_task) < 0 ||
	    job_conf_argvf(sb, "--size=%llu", (unsigned long long)(per_task ? per_task : 4096)) < 0 ||
	    job_conf_argvf(sb, "--runtime=%u", job->runtime_s) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(passed); i++)
		if ((v = param(job, passed[i])) && job_conf_argvf(sb, "--%s=%s", passed[i], v) < 0)
			return -1;
	if ((v = param(job, "direct")) && !boolean("direct", v, &b) && job_conf_argvf(sb, "--direct=%d", b) < 0)
		return -1;
	if ((v = param(job, "invalidate")) && !boolean("invalidate", v, &b) && job_conf_argvf(sb, "--invalidate=%d", b) < 0)
		return -1;
	if ((v = param(job, "time_based")) && !boolean("time_based", v, &b) && b && JOB_CONF_ARGV(sb, "--time_based") < 0)
		return -1;
	return 0;
}

/* Split a terse line at ';' into at most max fields (copied into *copy). */
static size_t split_terse(const char *line, char **copy, char **f, size_t max)
{
	size_t n = 0;
	char *p;

	p = *copy = xstrdup(line);
	while (n < max) {
		f[n++] = p;
		p = strchr(p, ';');
		if (!p)
			break;
		*p++ = '\0';
	}
	return p ? max + 1 : n;
}

/* One direction's block: kb, bw (KiB/s), iops, runtime (ms), slat
 * min/max/mean/dev, clat min/max/mean/dev (microseconds). */
static void terse_block(struct result_metrics *ml, char **f, const char *dir, double *ios)
{
	double kb, bw, iops, runtime, slat_mean, slat_dev, clat_mean, clat_dev;

	if (result_parse_number(f[0], &kb) || result_parse_number(f[1], &bw) || result_parse_number(f[2], &iops) ||
	    result_parse_number(f[3], &runtime) || result_parse_number(f[6], &slat_mean) ||
	    result_parse_number(f[7], &slat_dev) || result_parse_number(f[10], &clat_mean) ||
	    result_parse_number(f[11], &clat_dev) || kb < 0 || bw < 0 || iops < 0 || runtime < 0)
		return;
	if (!kb)
		return;		/* this direction did nothing */
	result_add_metric(ml, xstrfmt("fio.%s_bw_MBps", dir), 0, bw / 1024);
	result_add_metric(ml, xstrfmt("fio.%s_iops", dir), 0, iops);
	/* LKP's parser takes fio's nanosecond figures (its slat name says us) */
	result_add_metric(ml, xstrfmt("fio.%s_clat_mean_ns", dir), 0, clat_mean * 1000);
	result_add_metric(ml, xstrfmt("fio.%s_clat_stddev", dir), 0, clat_dev * 1000);
	result_add_metric(ml, xstrfmt("fio.%s_slat_mean_us", dir), 0, slat_mean * 1000);
	result_add_metric(ml, xstrfmt("fio.%s_slat_stddev", dir), 0, slat_dev * 1000);
	*ios += iops * runtime / 1000;
}

/* The percentage fields end with '%' (23.529412%). */
static int percent(const char *s, double *v)
{
	size_t n = strlen(s);
	char buf[MAX_FIELD];

	if (!n || n >= sizeof(buf) || s[n - 1] != '%')
		return -1;
	memcpy(buf, s, n - 1);
	buf[n - 1] = '\0';
	return result_parse_number(buf, v);
}

/*
 * fio --output-format=terse --terse-version=3 with --group_reporting:
 * one line "3;fio-3.33;fio-basic;0;0;<read block>;<write block>;<cpu>;..."
 * (read at fields 6-46, write at 47-87, usr% and sys% at 88-89).
 */
static void parse_fio(struct result_metrics *ml, char *const *lines, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		char *copy, *f[TERSE_FIELDS + 8];
		double ios = 0, usr, sys;
		size_t n;

		if (!lines[i] || strncmp(lines[i], "3;fio-", 6))
			continue;
		n = split_terse(lines[i], &copy, f, ARRAY_SIZE(f) - 1);
		/* the group's line has its error field (5) at 0 */
		if (n >= TERSE_FIELDS + 2 && !strcmp(f[4], "0")) {
			terse_block(ml, f + TERSE_READ, "read", &ios);
			terse_block(ml, f + TERSE_WRITE, "write", &ios);
			result_add_metric(ml, xstrdup("fio.workload"), 0, (double)(uint64_t)(ios + 0.5));
			if (!percent(f[TERSE_FIELDS], &usr) && !percent(f[TERSE_FIELDS + 1], &sys)) {
				result_add_metric(ml, xstrdup("fio.cpu_usr_pct"), 0, usr);
				result_add_metric(ml, xstrdup("fio.cpu_sys_pct"), 0, sys);
			}
		}
		free(copy);
	}
}

const struct suite suite_fio_basic = {
	.name = "fio-basic",
	/* LKP's fio parser's names */
	.prefix = "fio",
	.keys = SUITE_KEY_FS,
	.params = params,
	.testcase_is_suite = 1,
	.kpis = kpis,
	.metrics = metrics,
	.conditions = conditions,
	.program = { "fio", PROGRAM, "fio" },
	.check_testcase = check_testcase,
	.check_param = check_param,
	.check = check,
	.default_kpi = default_kpi,
	.disk_mb = disk_mb,
	.agent_argv = agent_argv,
	.parse = parse_fio,
};
