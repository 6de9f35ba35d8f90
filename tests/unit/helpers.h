/* Helpers shared by the unit tests: test data paths, golden files
 * (KLAB_REGENERATE=1 rewrites them), libvirt capabilities from
 * tests/data/caps, capturing what error() prints, and a test's scratch
 * directory.  Included by test programs only (static functions). */
#ifndef KLAB_UNIT_HELPERS_H
#define KLAB_UNIT_HELPERS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lab/gitrepo.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "engine/revert.h"
#include "guest/topology.h"
#include "util/strbuf.h"
#include "util/util.h"

#ifndef KLAB_ABS_SRCDIR
#define KLAB_ABS_SRCDIR "."
#endif

/* A shell command (test set-up: git, files), which must succeed. */
__attribute__((unused)) static void sh(const char *fmt, ...) KLAB_PRINTF(1, 2);
__attribute__((unused)) static void sh(const char *fmt, ...)
{
	va_list ap;
	char *cmd, *full;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) >= 0);
	va_end(ap);
	full = xstrfmt("set -e; %s", cmd);
	assert_int_equal(system(full), 0);
	free(full);
	free(cmd);
}

/* "$TMPDIR/klab-test-NAME.XXXXXX" (TMPDIR unset: /tmp) made into dir. */
__attribute__((unused)) static void make_test_dir(char *dir, size_t size, const char *name)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, size, "%s/klab-test-%s.XXXXXX", tmp ? tmp : "/tmp", name);
	assert_non_null(mkdtemp(dir));
}

/* A revert check that restored good, as the stored row has it: 5 runs
 * of the reverted kernel (median, spread) held to the ends' medians. */
__attribute__((unused)) static void revert_restored(struct revert_check *rc, const char *commit, double median,
						    double cv_percent, double good_median, double bad_median,
						    const char *detail)
{
	rc->outcome = REVERT_RESTORES_GOOD;
	snprintf(rc->commit, sizeof(rc->commit), "%s", commit);
	rc->runs = 5;
	rc->median = median;
	rc->cv_percent = cv_percent;
	rc->good_median = good_median;
	rc->bad_median = bad_median;
	rc->detail = (char *)detail;
}

/* in[0..len) read as the whole of a run's output into r (result_init'd). */
__attribute__((unused)) static void parse_records(struct result *r, const char *in, size_t len)
{
	result_init(r);
	result_feed(r, in, len);
	result_finish(r);
}

/* A teardown's rm -rf of a test's directory. */
__attribute__((unused)) static void remove_test_dir(const char *dir)
{
	char *cmd = xstrfmt("rm -rf '%s'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* The scratch directory of a test program whose tests share one and open
 * git repositories: git_scratch_setup, a group setup, makes it (named
 * after the program) and starts libgit2; scratch_teardown removes it. */
__attribute__((unused)) static char scratch_dir[256];

__attribute__((unused)) static int git_scratch_setup(void **state)
{
	const char *name = program_invocation_short_name;

	(void)state;
	if (!strncmp(name, "test-", 5))
		name += 5;
	make_test_dir(scratch_dir, sizeof(scratch_dir), name);
	gitrepo_global_init();
	return 0;
}

__attribute__((unused)) static int scratch_teardown(void **state)
{
	(void)state;
	remove_test_dir(scratch_dir);
	return 0;
}

/* text holds want, or the test fails showing both. */
__attribute__((unused)) static void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("expected '%s' in:\n%s", want, text);
}

/* text holds each of the strings after it, or the test fails showing the
 * first missing and text. */
#define assert_contains_all(text, ...) assert_contains_each((text), (const char *const[]){ __VA_ARGS__, NULL })

__attribute__((unused)) static void assert_contains_each(const char *text, const char *const *wants)
{
	for (; *wants; wants++)
		assert_contains(text, *wants);
}

/* text holds none of the strings after it, or the test fails showing the
 * first it holds and text. */
#define assert_contains_none(text, ...) assert_contains_no((text), (const char *const[]){ __VA_ARGS__, NULL })

__attribute__((unused)) static void assert_contains_no(const char *text, const char *const *unwanted)
{
	for (; *unwanted; unwanted++)
		if (strstr(text, *unwanted))
			fail_msg("did not expect '%s' in:\n%s", *unwanted, text);
}

/* A job file's text that must parse (as t.yaml). */
__attribute__((unused)) static void parse_job(struct job *job, const char *text)
{
	if (job_parse_buffer(job, "t.yaml", text, strlen(text)) < 0)
		fail_msg("did not parse:\n%s", text);
}

/* The value a job sets sysctl key to, NULL when it sets none. */
__attribute__((unused)) static const char *sysctl_of(const struct job *job, const char *key)
{
	for (size_t i = 0; i < job->nr_sysctl; i++)
		if (!strcmp(job->sysctl[i].key, key))
			return job->sysctl[i].value;
	return NULL;
}

__attribute__((unused)) static char *data_path(const char *rel)
{
	return xstrfmt("%s/tests/data/%s", KLAB_ABS_SRCDIR, rel);
}

__attribute__((unused)) static void load_host(struct host_topology *t, const char *name)
{
	char *rel = xstrfmt("caps/%s.xml", name), *path = data_path(rel), *xml;
	size_t len;

	assert_int_equal(read_file(path, TOPOLOGY_MAX_CAPS_XML, &xml, &len), 0);
	assert_int_equal(topology_parse(t, xml, len), 0);
	free(xml);
	free(path);
	free(rel);
}

/* Compare with tests/data/<rel>, or rewrite it under KLAB_REGENERATE=1. */
__attribute__((unused)) static void check_golden(const char *rel, const char *actual)
{
	char *path = data_path(rel), *expected;
	const char *regen = getenv("KLAB_REGENERATE");

	if (regen && !strcmp(regen, "1")) {
		assert_int_equal(write_file_atomic(path, actual, strlen(actual)), 0);
		fprintf(stderr, "regenerated %s\n", path);
		free(path);
		return;
	}
	if (read_file(path, 1 << 20, &expected, NULL) < 0)
		fail_msg("golden file %s missing (KLAB_REGENERATE=1 writes it)", path);
	if (strcmp(expected, actual)) {
		fprintf(stderr, "--- expected %s\n%s+++ actual\n%s", path, expected, actual);
		fail_msg("output differs from %s (KLAB_REGENERATE=1 rewrites it after review)", path);
	}
	free(expected);
	free(path);
}

static int saved_stderr = -1;
static FILE *captured;

__attribute__((unused)) static void capture_stderr(void)
{
	fflush(stderr);
	captured = tmpfile();
	assert_non_null(captured);
	saved_stderr = dup(2);
	assert_true(saved_stderr >= 0);
	assert_int_equal(dup2(fileno(captured), 2), 2);
}

/* What was written to stderr since capture_stderr(), without the
 * "klab: " prefix and the final newline; caller frees. */
__attribute__((unused)) static char *captured_stderr(void)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[512];
	size_t n;

	fflush(stderr);
	assert_int_equal(dup2(saved_stderr, 2), 2);
	close(saved_stderr);
	rewind(captured);
	while ((n = fread(buf, 1, sizeof(buf), captured)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(captured);
	strbuf_rtrim(&sb);
	if (!strncmp(sb.buf, "klab: ", 6)) {
		char *s = xstrdup(sb.buf + 6);
		strbuf_release(&sb);
		return s;
	}
	return strbuf_detach(&sb, NULL);
}

#endif
