/* The suite registry: the one table of the benchmark suites klab runs,
 * lookup by name, and the few checks several suites share. */
#include "job/suite.h"
#include "job/job.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

extern const struct suite suite_stress_ng, suite_will_it_scale, suite_vm_scalability, suite_hackbench,
	suite_perf_bench_futex, suite_perf_bench_sched_pipe, suite_perf_bench_sched_messaging, suite_perf_bench_mem,
	suite_perf_bench_syscall, suite_fio_basic, suite_netperf, suite_kbuild;

/* The order is the one messages list them in. */
static const struct suite *const suites[] = {
	&suite_stress_ng,
	&suite_will_it_scale,
	&suite_vm_scalability,
	&suite_hackbench,
	&suite_perf_bench_futex,
	&suite_perf_bench_sched_pipe,
	&suite_perf_bench_sched_messaging,
	&suite_perf_bench_mem,
	&suite_perf_bench_syscall,
	&suite_fio_basic,
	&suite_netperf,
	&suite_kbuild,
};

/* LKP suites kernel reports name that klab does not run, and why. */
static const struct {
	const char *name, *why;
} not_run[] = {
	{ "aim7", "AIM7 is not packaged in Debian and klab ships no stand-in for it" },
	{ "aim9", "AIM9 is not packaged in Debian and klab ships no stand-in for it" },
	{ "reaim", "re-aim is not packaged in Debian and klab ships no stand-in for it" },
	{ "unixbench", "UnixBench is not packaged in Debian and klab ships no stand-in for it" },
	{ "lmbench3", "lmbench is not packaged in Debian and klab ships no stand-in for it" },
	{ "fsmark", "klab has no fsmark suite (Debian's fsmark package is not wired into klab's guests)" },
	{ "phoronix-test-suite", "the Phoronix Test Suite downloads its tests at run time and klab's guests have no network" },
};

const struct suite *suite_find(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(suites); i++)
		if (!strcmp(suites[i]->name, name))
			return suites[i];
	return NULL;
}

const char *suite_not_run(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(not_run); i++)
		if (!strcmp(not_run[i].name, name))
			return not_run[i].why;
	return NULL;
}

const struct suite *suite_get(const char *name)
{
	const struct suite *s = suite_find(name);
	struct strbuf sb = STRBUF_INIT;
	const char *why;

	if (s)
		return s;
	if ((why = suite_not_run(name))) {
		error("klab does not run %s: %s", name, why);
		return NULL;
	}
	suite_names(&sb, 0, ", ");
	error("unknown suite '%s' (klab runs: %s)", name ? name : "", sb.buf);
	strbuf_release(&sb);
	return NULL;
}

const struct suite *const *suite_all(size_t *nr)
{
	*nr = ARRAY_SIZE(suites);
	return suites;
}

void suite_names(struct strbuf *sb, unsigned keys, const char *last_sep)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < ARRAY_SIZE(suites); i++)
		n += (suites[i]->keys & keys) == keys;
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		if ((suites[i]->keys & keys) != keys)
			continue;
		if (k)
			strbuf_addstr(sb, k + 1 == n ? last_sep : ", ");
		strbuf_addstr(sb, suites[i]->name);
		k++;
	}
}

int suite_kpi_direction(const struct suite *s, const char *testcase, const char *metric)
{
	for (const struct suite_kpi *k = s->kpis; k->name; k++) {
		/* the names are this program's own formats, then patterns
		 * (perf-bench-mem's units) */
		char *name = xstrfmt(k->name, testcase);
		int same = !fnmatch(name, metric, 0);

		free(name);
		if (same)
			return k->direction;
	}
	return 0;
}

int suite_produces(const struct suite *s, const struct job *job, const char *metric, struct strbuf *produces)
{
	unsigned bits = s->conditions ? s->conditions(job) : 0;
	size_t shown = 0;
	int found = 0;

	for (const struct suite_metric *m = s->metrics; m && m->pattern && !found; m++) {
		char *pattern;

		if (m->when && !(m->when & bits))
			continue;
		/* the patterns are this program's own formats */
		pattern = xstrfmt(m->pattern, job->testcase ? job->testcase : "");
		found = !fnmatch(pattern, metric, 0);
		if (!found && produces)
			strbuf_addf(produces, "%s%s", shown++ ? ", " : "", pattern);
		free(pattern);
	}
	return found;
}

const char *suite_prefix(const struct suite *s)
{
	return s->prefix ? s->prefix : s->name;
}

int suite_takes_param(const struct suite *s, const char *key)
{
	for (const char *const *p = s->params; p && *p; p++)
		if (!strcmp(*p, key))
			return 1;
	return 0;
}

int suite_listed(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return 1;
	return 0;
}

int suite_check_listed(const struct job *job, const char *const *list, size_t n, const char *path, int line)
{
	struct strbuf sb = STRBUF_INIT;

	if (suite_listed(job->testcase, list, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%s", !i ? "" : i + 1 == n ? " or " : ", ", list[i]);
	error("%s:%d: testcase: %s supports %s, got '%s'", path, line, job->suite, sb.buf, job->testcase);
	strbuf_release(&sb);
	return -1;
}

int suite_each_also(const struct job *job, const char *what, const char *value, const char *const *list, size_t n,
		    size_t max, int (*fn)(const char *testcase, void *data), void *data)
{
	char *copy = xstrdup(value ? value : ""), *save = NULL;
	const char **seen = xcalloc(max + 1, sizeof(*seen));
	size_t nr = 0;
	int ret = 0;

	for (char *t = strtok_r(copy, " ,", &save); t && !ret; t = strtok_r(NULL, " ,", &save)) {
		if (!suite_listed(t, list, n))
			ret = error("%s: '%.64s' is not a %s testcase", what, t, job->suite);
		else if (!strcmp(t, job->testcase) || suite_listed(t, seen, nr))
			ret = error("%s: %s is named twice (the job's testcase runs first anyway)", what, t);
		else if (nr == max)
			ret = error("%s: at most %zu more testcases", what, max);
		else if (fn)
			ret = fn(t, data);
		if (!ret)
			seen[nr++] = t;
	}
	if (!ret && !nr)
		ret = error("%s: expected testcases separated by blanks or commas", what);
	free(seen);
	free(copy);
	return ret;
}
