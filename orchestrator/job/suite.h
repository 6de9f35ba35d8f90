/* Benchmark suites: everything klab knows about one suite (the job keys it
 * reads, its checks and defaults, its KPIs, the program the guest runs and
 * its argv, how its output becomes metrics) as one ops table per suite in
 * suite-<name>.c, listed in one registry in suite.c.  Adding a suite is a
 * file plus a row there. */
#ifndef KLAB_SUITE_H
#define KLAB_SUITE_H

#include <stddef.h>
#include <stdint.h>

struct job;
struct job_kv;
struct strbuf;
struct result_metrics;

/* Job keys only some suites read; a job that sets one its suite does not
 * read is refused (it would silently measure something else). */
#define SUITE_KEY_MODE 0x1		/* mode: one of the suite's modes */
#define SUITE_KEY_NR_THREADS 0x2	/* threads per task (hackbench: groups, netperf: clients) */
#define SUITE_KEY_SIZE 0x4		/* memory per task */
#define SUITE_KEY_FS 0x8		/* fs: a file system made fresh on a scratch disk each boot */

/* A headline metric; "%s" in the name stands for the job's testcase. */
struct suite_kpi {
	const char *name;
	int direction;		/* +1 higher is better, -1 lower */
};

/* A metric a job of the suite produces: a pattern ("%s" the job's
 * testcase, then fnmatch(3): '*' any text) and when (0: every job; else
 * a job whose suite conditions() share a bit with it). */
struct suite_metric {
	const char *pattern;
	unsigned when;
};

/* The program the agent runs, put into the guest image. */
struct suite_program {
	const char *name;	/* klab's guests/bench/<name>, or a host program on PATH */
	const char *dest;	/* its path in the guest */
	const char *package;	/* NULL: klab builds it; else a host program (with the
				 * libraries ldd names) from this Debian package */
};

struct suite {
	const char *name;	/* the job's suite: and the metrics' prefix */
	/* the metrics' prefix when it is not the name (fio-basic's are
	 * LKP's fio.*), else NULL; suite_prefix() says which */
	const char *prefix;
	unsigned keys;		/* SUITE_KEY_* it reads */
	/* the values of mode: (LKP's), the default first; NULL-terminated
	 * (NULL without SUITE_KEY_MODE: the job's mode is "process") */
	const char *const *modes;
	/* the keys params: takes (LKP's parameter names where LKP has
	 * them), NULL-terminated; check_param judges their values */
	const char *const *params;
	/* No test axis (LKP's jobs have no test: for it): the testcase is
	 * the suite's name, as LKP's testcase: is, and may be left out. */
	int testcase_is_suite;
	const struct suite_kpi *kpis;	/* ends with a NULL name */
	/* every metric its jobs produce; ends with a NULL pattern */
	const struct suite_metric *metrics;
	/* the job's bits for suite_metric.when (NULL: none) */
	unsigned (*conditions)(const struct job *job);
	/* what a run says of it before it starts (NULL: nothing) */
	const char *note;
	struct suite_program program;
	/* more host programs the guest needs beside it (fio-basic's mkfs
	 * tools); NULL, or ends with a NULL name */
	const struct suite_program *tools;

	/* Parse-time checks of the testcase and of one params entry;
	 * errors are "path:line: ..." */
	int (*check_testcase)(const struct job *job, const char *path, int line);
	int (*check_param)(const struct job *job, const struct job_kv *kv, const char *path, int line);
	/* The KPI of a job that names none (allocated). */
	char *(*default_kpi)(const struct job *job);
	/* A job with fs: and no guest.disk: its scratch disk in MiB (NULL:
	 * JOB_DEFAULT_DISK_MB). */
	uint64_t (*disk_mb)(const struct job *job);
	/* Seconds it runs before the measured runtime (NULL: none); the
	 * agent's timeout allows for them. */
	int (*warmup_s)(const struct job *job, unsigned *out);
	/* After the params are checked, the checks across keys (NULL:
	 * none); errors at path:line as check_param's. */
	int (*check)(struct job *job, const char *path, int line);
	/* After the params are checked: the read-only host directories the
	 * guest needs (job_add_share), or an error at path:line for what is
	 * missing (NULL: none, the guest sees no host file). */
	int (*shares)(struct job *job, const char *path, int line);
	/* The "argv" lines of the agent's job.conf for a guest of `vcpus`. */
	int (*agent_argv)(const struct job *job, unsigned vcpus, struct strbuf *conf);
	/* The benchmark's output lines (NULL entries skipped) into metrics,
	 * every name "<suite>.<...>"; then, once duplicates are dropped,
	 * metrics made from the others (NULL: none). */
	void (*parse)(struct result_metrics *ml, char *const *lines, size_t nr);
	void (*derive)(struct result_metrics *ml);
	/* Why a benchmark that exited non-zero failed, one line from its
	 * output (kbuild: the compiler's first error), allocated; NULL when
	 * its output does not say (NULL op: never). */
	char *(*failure)(char *const *lines, size_t nr);
};

/* The suite of that name, or NULL. */
const struct suite *suite_find(const char *name);
/* Why klab does not run a suite LKP reports name (aim7, unixbench, ...),
 * or NULL. */
const char *suite_not_run(const char *name);
/* The same, with error("unknown suite 'x' (klab runs: a, b, c)") for NULL,
 * or error("klab does not run x: <why>") for one suite_not_run() knows. */
const struct suite *suite_get(const char *name);
/* Every suite, in the registry's order; *nr is set to their number. */
const struct suite *const *suite_all(size_t *nr);
/* The names of the suites whose keys include all of `keys` (0: every
 * suite), separated by ", " and `last_sep` before the last. */
void suite_names(struct strbuf *sb, unsigned keys, const char *last_sep);

/* 1 when the job (parsed: suite, testcase, mode, params) produces the
 * metric; else 0, with the names it does produce added to `produces`
 * (may be NULL), ", "-separated. */
int suite_produces(const struct suite *s, const struct job *job, const char *metric, struct strbuf *produces);

/* Its metrics' names start with this and a '.': the prefix or the name. */
const char *suite_prefix(const struct suite *s);

/* 1 when the suite takes `key` under params:. */
int suite_takes_param(const struct suite *s, const char *key);

/* The direction of a suite's headline metric for a job of `testcase`
 * (+1 higher is better, -1 lower), 0 when `metric` is not one of them. */
int suite_kpi_direction(const struct suite *s, const char *testcase, const char *metric);

/* For suite-*.c: a testcase that must be one of a list ("path:line:
 * testcase: <suite> supports a, b or c, got 'x'"). */
int suite_check_listed(const struct job *job, const char *const *list, size_t n, const char *path, int line);
/* For a suite's params.also: more testcases of the list for the same
 * boot, separated by blanks or commas, each once and not the job's own,
 * at most max; each is called back in order (fn NULL: checked only).  -1
 * after error("<what>: ...") or fn's -1. */
int suite_each_also(const struct job *job, const char *what, const char *value, const char *const *list, size_t n,
		    size_t max, int (*fn)(const char *testcase, void *data), void *data);

/* 1 when s is in the list. */
int suite_listed(const char *s, const char *const *list, size_t n);

#endif
