/* The suite registry: the one table of the benchmark suites klab runs,
 * lookup by name, and the few checks several suites share. */
#include "job/suite.h"
#include "job/job.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

extern const struct suite suite_stress_ng, suite_will_it_scale, suite_vm_scalability, suite_kbuild;

/* The order is the one messages list them in. */
static const struct suite *const suites[] = {
	&suite_stress_ng,
	&suite_will_it_scale,
	&suite_vm_scalability,
	&suite_kbuild,
};

const struct suite *suite_find(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(suites); i++)
		if (!strcmp(suites[i]->name, name))
			return suites[i];
	return NULL;
}

const struct suite *suite_get(const char *name)
{
	const struct suite *s = suite_find(name);
	struct strbuf sb = STRBUF_INIT;

	if (s)
		return s;
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
		/* the names are this program's own formats */
		char *name = xstrfmt(k->name, testcase);
		int same = !strcmp(name, metric);

		free(name);
		if (same)
			return k->direction;
	}
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
