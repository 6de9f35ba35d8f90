/* Unit tests of lkp.c: LKP reports in both forms (comparison table,
 * subject line), as mails, quoted, with CRLF and wrapped lines; missing
 * fields and garbage; lkp-tests job files and their axes; and every job
 * made from them accepted by klab's own job parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "job/job.h"
#include "job/lkp.h"
#include "util/strbuf.h"
#include "util/util.h"

static char *read_data(const char *rel, size_t *len)
{
	char *path = data_path(rel), *buf;

	assert_int_equal(read_file(path, LKP_MAX_REPORT, &buf, len), 0);
	free(path);
	return buf;
}

static void parse_data(struct lkp_report *r, const char *rel)
{
	size_t len;
	char *buf = read_data(rel, &len);

	assert_int_equal(lkp_report_parse(r, rel, buf, len), 0);
	free(buf);
}

/* text must be refused with want in the one message */
static void assert_report_error(const char *text, size_t len, const char *want)
{
	struct lkp_report r;
	char *msg;
	int rc;

	capture_stderr();
	rc = lkp_report_parse(&r, "r.txt", text, len);
	msg = captured_stderr();
	assert_int_equal(rc, -1);
	assert_contains(msg, want);
	assert_null(strchr(msg, '\n'));
	assert_null(r.commit);
	free(msg);
}

static void assert_param(const struct lkp_params *p, const char *key, const char *value)
{
	const char *v = lkp_param(p, key);

	if (!v || strcmp(v, value))
		fail_msg("param %s: expected '%s', got '%s'", key, value, v ? v : "(none)");
}

/* The lkp_map input for a report's chosen result. */
static struct lkp_map_in report_in(const struct lkp_report *r, enum lkp_accel accel)
{
	struct lkp_map_in in = { .suite = r->suite, .params = &r->params, .kpi = r->kpi, .change = r->change,
				 .improvement = r->improvement, .direction = r->direction, .accel = accel,
				 .origin = "report", .name = "out.yaml" };
	return in;
}

/* lkp_map, then job.c reads the text back */
static void map_and_parse(const struct lkp_report *r, enum lkp_accel accel, struct lkp_klab_job *j, struct job *job)
{
	struct lkp_map_in in = report_in(r, accel);

	assert_int_equal(lkp_map(j, &in), 0);
	for (const char *c = j->yaml; *c; c++)
		assert_true(*c == '\n' || (*c >= 0x20 && *c != 0x7f) || (unsigned char)*c >= 0x80);
	assert_int_equal(job_parse_buffer(job, "out.yaml", j->yaml, strlen(j->yaml)), 0);
}

/* lkp_map of a job file's combination (no KPI); -1 with the message in
 * *msg (the caller frees it) */
static int map_combo(struct lkp_klab_job *j, const char *suite, const struct lkp_params *p, enum lkp_accel accel,
		     char **msg)
{
	struct lkp_map_in in = { .suite = suite, .params = p, .accel = accel, .origin = "jf" };
	int rc;

	capture_stderr();
	rc = lkp_map(j, &in);
	*msg = captured_stderr();
	return rc;
}

/* A row of the mapping table: param (value) → key, or not mapped
 * (key NULL), its why holding why_part (NULL: any). */
static int has_row(const struct lkp_klab_job *j, const char *param, const char *value, const char *key,
		   const char *why_part)
{
	for (size_t i = 0; i < j->nr_rows; i++) {
		const struct lkp_map_row *r = &j->rows[i];

		if (strcmp(r->param, param) || (value && strcmp(r->value, value)))
			continue;
		if ((key == NULL) != (r->key == NULL) || (key && strcmp(key, r->key)))
			continue;
		if (why_part && (!r->why || !strstr(r->why, why_part)))
			continue;
		return 1;
	}
	return 0;
}

/* ---- reports ------------------------------------------------------------------ */

static void test_lkp__stress_ng_report_table_form(void **state)
{
	struct lkp_report r;
	struct lkp_klab_job j;
	struct job job;

	(void)state;
	parse_data(&r, "lkp/stress-ng-vm-splice.txt");
	assert_string_equal(r.commit, "a308c71bf1e6e19cc2e4ced31853ee0fc7cb439a");
	assert_string_equal(r.subject, "mm/gup: Remove enfornced COW mechanism");
	assert_string_equal(r.parent, "1a0cf26323c80e2f");
	assert_string_equal(r.suite, "stress-ng");
	assert_int_equal(r.params.nr, 11);
	assert_param(&r.params, "class", "pipe");
	assert_param(&r.params, "testtime", "30s");
	assert_param(&r.params, "ucode", "0x5002f01");
	/* "noticed a -95.6% regression of ..." names the KPI, not the first row */
	assert_string_equal(r.kpi, "stress-ng.vm-splice.ops_per_sec");
	assert_string_equal(r.change, "-95.6%");
	assert_non_null(r.row);
	assert_string_equal(r.row->base, "3783006");
	assert_string_equal(r.row->head, "165530");
	assert_int_equal(r.nr_rows, 4);
	assert_string_equal(r.rows[3].metric, "meminfo.Active");
	assert_string_equal(r.rows[3].change, "+41.3%");

	map_and_parse(&r, LKP_ACCEL_TCG, &j, &job);
	assert_string_equal(job.suite, "stress-ng");
	assert_string_equal(job.testcase, "vm-splice");
	assert_int_equal(job.runtime_s, 5);
	assert_true(job.nr_task.is_percent);
	assert_int_equal(job.nr_task.value, 100);
	assert_string_equal(job.kpi, "stress-ng.vm-splice.ops_per_sec");
	assert_true(has_row(&j, "testtime", "30s", "runtime", "TCG guests"));
	assert_true(has_row(&j, "class", "pipe", NULL, "klab runs the one stressor vm-splice"));
	assert_true(has_row(&j, "tbox_group", "lkp-csl-2sp5", NULL, "the LKP test machine"));
	assert_true(has_row(&j, "ucode", "0x5002f01", NULL, NULL));
	assert_true(has_row(&j, "cpufreq_governor", "performance", NULL, "a host setting"));
	job_release(&job);
	lkp_klab_job_release(&j);

	map_and_parse(&r, LKP_ACCEL_KVM, &j, &job);
	assert_int_equal(job.runtime_s, 30);
	job_release(&job);
	lkp_klab_job_release(&j);
	lkp_report_release(&r);
}

static void check_malloc1(const struct lkp_report *r)
{
	assert_string_equal(r->commit, "f35b5d7d676e59e401690b678cd3cfec5e785c23");
	assert_string_equal(r->subject, "mm: align larger anonymous mappings on THP boundaries");
	assert_string_equal(r->parent, "c7f7475ba4b5f8b5");
	assert_string_equal(r->suite, "will-it-scale");
	assert_param(&r->params, "mode", "process");
	assert_param(&r->params, "nr_task", "100%");
	assert_param(&r->params, "test", "malloc1");
	assert_param(&r->params, "rootfs", "debian-11.1-x86_64-20220510.cgz");
	assert_string_equal(r->kpi, "will-it-scale.per_process_ops");
	assert_string_equal(r->change, "-95.5%");
	assert_non_null(r->row);
	assert_string_equal(r->row->base, "293049");
	assert_string_equal(r->row->head, "13142");
}

static void test_lkp__mail_with_folded_subject_and_quoted_printable(void **state)
{
	struct lkp_report r;
	struct lkp_klab_job j;
	struct job job;

	(void)state;
	parse_data(&r, "lkp/will-it-scale-malloc1.mbox");
	check_malloc1(&r);
	assert_int_equal(r.nr_rows, 3);
	assert_string_equal(r.rows[0].metric, "perf-stat.i.MPKI");

	map_and_parse(&r, LKP_ACCEL_TCG, &j, &job);
	assert_string_equal(job.testcase, "malloc1");
	assert_string_equal(job.mode, "process");
	assert_int_equal(job.runtime_s, 10);	/* the report gives none */
	assert_string_equal(job.kpi, "will-it-scale.per_process_ops");
	/* x86_64-rhel-8.3 makes THP always the default */
	assert_non_null(sysctl_of(&job, "kernel/mm/transparent_hugepage/enabled"));
	assert_string_equal(sysctl_of(&job, "kernel/mm/transparent_hugepage/enabled"), "always");
	assert_true(has_row(&j, "rootfs", "debian-11.1-x86_64-20220510.cgz", NULL, NULL));
	assert_string_equal(j.testcase, "malloc1");
	job_release(&job);
	lkp_klab_job_release(&j);
	lkp_report_release(&r);
}

static void test_lkp__quoted_reply_with_crlf_and_a_wrapped_row(void **state)
{
	struct lkp_report r;

	(void)state;
	parse_data(&r, "lkp/will-it-scale-malloc1-quoted-crlf.txt");
	check_malloc1(&r);
	assert_int_equal(r.nr_rows, 1);
	lkp_report_release(&r);
}

static void test_lkp__subject_form_with_parent_line_and_wrapped_axis(void **state)
{
	struct lkp_report r;
	struct lkp_klab_job j;
	struct job job;

	(void)state;
	parse_data(&r, "lkp/vm-scalability-anon-w-seq.txt");
	assert_string_equal(r.commit, "5d0b8c2f3a91e7d6c4b2a1f0e9d8c7b6a5f4e3d2");
	assert_string_equal(r.subject, "mm/page_alloc: batch the zeroing of huge pages");
	assert_string_equal(r.parent, "77e1c0ffee5d0b8c2f3a91e7d6c4b2a1f0e9d8c7");
	assert_string_equal(r.suite, "vm-scalability");
	assert_int_equal(r.params.nr, 11);
	assert_param(&r.params, "thp_defrag", "never");
	assert_param(&r.params, "cpufreq_governor", "performance");
	assert_string_equal(r.kpi, "vm-scalability.throughput");
	assert_string_equal(r.change, "-23.1%");
	assert_null(r.row);

	map_and_parse(&r, LKP_ACCEL_TCG, &j, &job);
	assert_string_equal(job.testcase, "anon-w-seq");
	assert_int_equal(job.runtime_s, 30);
	assert_string_equal(sysctl_of(&job, "kernel/mm/transparent_hugepage/enabled"), "always");
	assert_string_equal(sysctl_of(&job, "kernel/mm/transparent_hugepage/defrag"), "never");
	assert_true(has_row(&j, "size", "8T", NULL, "klab sizes usemem per task"));
	job_release(&job);
	lkp_klab_job_release(&j);
	lkp_report_release(&r);
}

static void test_lkp__the_first_row_is_the_kpi_without_a_subject(void **state)
{
	static const char text[] =
		"commit: 0123456789abcdef0123456789abcdef01234567\n"
		"testcase: will-it-scale\n"
		"mode/nr_task/test/testcase:\n"
		"  thread/16/page_fault1/will-it-scale\n"
		"\n"
		"fedcba9876543210 0123456789abcdef0123456789a\n"
		"---------------- ---------------------------\n"
		"    100000 +-  2%     -10.0%      90000 +-  1%  will-it-scale.per_thread_ops\n"
		"      1000            +5.0%       1050        will-it-scale.workload\n";
	struct lkp_report r;
	struct lkp_klab_job j;
	struct job job;

	(void)state;
	assert_int_equal(lkp_report_parse(&r, "t", text, sizeof(text) - 1), 0);
	assert_string_equal(r.parent, "fedcba9876543210");
	assert_string_equal(r.kpi, "will-it-scale.per_thread_ops");
	assert_string_equal(r.change, "-10.0%");
	assert_int_equal(r.nr_rows, 2);
	map_and_parse(&r, LKP_ACCEL_KVM, &j, &job);
	assert_string_equal(job.mode, "thread");
	assert_false(job.nr_task.is_percent);
	assert_int_equal(job.nr_task.value, 16);
	assert_string_equal(job.testcase, "page_fault1");
	assert_null(sysctl_of(&job, "kernel/mm/transparent_hugepage/enabled"));
	job_release(&job);
	lkp_klab_job_release(&j);
	lkp_report_release(&r);
}

static void test_lkp__missing_fields_are_one_line_errors(void **state)
{
	static const char no_commit[] = "testcase: stress-ng\nparent: 0123456789abcdef\n";
	static const char no_testcase[] = "[x] 0123456789: stress-ng.brk.ops_per_sec -5.0% regression\n"
					  "commit: 0123456789abcdef\nparent: 1123456789abcdef\n";
	static const char no_kpi[] = "commit: 0123456789abcdef\nparent: 1123456789abcdef\ntestcase: stress-ng\n";
	static const char same[] = "commit: 0123456789abcdef\nparent: 0123456789ab\ntestcase: stress-ng\n";
	static const char other[] = "[x] 9999999999: stress-ng.brk.ops_per_sec -5.0% regression\n"
				    "commit: 0123456789abcdef\nparent: 1123456789abcdef\ntestcase: stress-ng\n";
	static const char axis[] = "commit: 0123456789abcdef\nparent: 1123456789abcdef\n"
				   "a/b/testcase:\n  x/stress-ng\n";
	static const char heads[] = "commit: 0123456789abcdef\ntestcase: stress-ng\n"
				    "1111111111 2222222222\n---------- ----------\n";

	(void)state;
	assert_report_error(no_commit, sizeof(no_commit) - 1, "no commit: expected a line like 'commit: <sha>");
	assert_report_error(no_testcase, sizeof(no_testcase) - 1, "no testcase");
	assert_report_error(no_kpi, sizeof(no_kpi) - 1, "no KPI");
	assert_report_error(same, sizeof(same) - 1, "the parent and the commit are the same");
	assert_report_error(other, sizeof(other) - 1, "the subject names commit 9999999999");
	assert_report_error(axis, sizeof(axis) - 1, "names 3 parameters but its values line has 2");
	assert_report_error(heads, sizeof(heads) - 1, "compares 1111111111 with 2222222222, not with commit");
}

static void test_lkp__garbage_nul_and_size_are_refused(void **state)
{
	size_t len, big = LKP_MAX_REPORT + 1;
	char *buf = read_data("lkp/garbage.txt", &len), *huge;

	(void)state;
	assert_report_error(buf, len, "no commit");
	free(buf);
	assert_report_error("commit: 0123456789abcdef\0", 25, "holds a NUL byte");
	huge = xmalloc(big);
	memset(huge, 'a', big);
	assert_report_error(huge, big, "a report is at most");
	free(huge);
	assert_report_error("", 0, "no commit");
}

static void test_lkp__hostile_values_never_reach_a_job(void **state)
{
	/* a test name with quotes and a subject with escape sequences */
	static const char text[] =
		"commit: 0123456789abcdef (\"evil \033[31m\r subject\")\n"
		"parent: 1123456789abcdef\n"
		"[x] 0123456789: will-it-scale.per_process_ops -5.0% regression\n"
		"test/nr_task/testcase:\n"
		"  mal'loc1/1;rm/will-it-scale\n";
	struct lkp_report r;
	struct lkp_klab_job j;
	char *msg;
	int rc;

	(void)state;
	assert_int_equal(lkp_report_parse(&r, "t", text, sizeof(text) - 1), 0);
	capture_stderr();
	{
		struct lkp_map_in in = report_in(&r, LKP_ACCEL_TCG);
		in.origin = "t\033]0;x\007";
		rc = lkp_map(&j, &in);
	}
	msg = captured_stderr();
	assert_int_equal(rc, -1);
	assert_non_null(strstr(msg, "name no test klab could run"));
	free(msg);
	lkp_report_release(&r);
}

static void test_lkp__unknown_suite_names_the_suites_klab_runs(void **state)
{
	struct lkp_report r;
	struct lkp_klab_job j;
	char *msg;
	int rc;

	(void)state;
	parse_data(&r, "lkp/unknown-suite.txt");
	capture_stderr();
	{
		struct lkp_map_in in = report_in(&r, LKP_ACCEL_TCG);
		rc = lkp_map(&j, &in);
	}
	msg = captured_stderr();
	assert_int_equal(rc, -1);
	/* klab runs netperf's loopback tests now; this report names none */
	assert_string_equal(msg, "error: LKP netperf parameters name no test klab could run (expected 'test: NAME')");
	free(msg);
	lkp_report_release(&r);
}

static void test_lkp__runtime_is_a_tenth_under_tcg(void **state)
{
	(void)state;
	assert_int_equal(lkp_scaled_runtime(30, LKP_ACCEL_TCG), 5);
	assert_int_equal(lkp_scaled_runtime(300, LKP_ACCEL_TCG), 30);
	assert_int_equal(lkp_scaled_runtime(61, LKP_ACCEL_TCG), 7);
	assert_int_equal(lkp_scaled_runtime(3, LKP_ACCEL_TCG), 3);
	assert_int_equal(lkp_scaled_runtime(1, LKP_ACCEL_TCG), 1);
	assert_int_equal(lkp_scaled_runtime(30, LKP_ACCEL_KVM), 30);
}

/* ---- job files ------------------------------------------------------------------- */

static void parse_jobfile(struct lkp_jobfile *jf, const char *rel)
{
	size_t len;
	char *buf = read_data(rel, &len);

	assert_int_equal(lkp_jobfile_parse(jf, rel, buf, len), 0);
	free(buf);
}

/* How many combinations make a job; each one job.c accepts. */
static size_t runnable(const struct lkp_jobfile *jf, enum lkp_accel accel)
{
	size_t n = 0;

	for (size_t i = 0; i < jf->nr_combos; i++) {
		struct lkp_klab_job j;
		struct job job;
		char *msg;
		int rc = map_combo(&j, jf->suite, &jf->combos[i], accel, &msg);

		free(msg);
		if (rc < 0)
			continue;
		assert_int_equal(job_parse_buffer(&job, j.name, j.yaml, strlen(j.yaml)), 0);
		job_release(&job);
		lkp_klab_job_release(&j);
		n++;
	}
	return n;
}

static void test_lkp__jobfile_axes_make_one_job_per_combination(void **state)
{
	struct lkp_jobfile jf;
	struct lkp_klab_job j;
	char *msg;

	(void)state;
	parse_jobfile(&jf, "lkp/lkp-will-it-scale.yaml");
	assert_string_equal(jf.suite, "will-it-scale");
	/* nr_task × mode × test = 2 × 2 × 2, the last axis fastest */
	assert_int_equal(jf.nr_combos, 8);
	assert_param(&jf.combos[0], "nr_task", "100%");
	assert_param(&jf.combos[0], "mode", "process");
	assert_param(&jf.combos[0], "test", "malloc1");
	assert_param(&jf.combos[1], "test", "brk1");
	assert_param(&jf.combos[2], "mode", "thread");
	assert_param(&jf.combos[7], "nr_task", "50%");
	/* malloc1 and brk1 are both klab will-it-scale tests */
	assert_int_equal(runnable(&jf, LKP_ACCEL_TCG), 8);
	assert_int_equal(map_combo(&j, jf.suite, &jf.combos[2], LKP_ACCEL_TCG, &msg), 0);
	free(msg);
	assert_string_equal(j.name, "will-it-scale-malloc1-thread-100pct");
	lkp_klab_job_release(&j);
	lkp_jobfile_release(&jf);

	parse_jobfile(&jf, "lkp/lkp-stress-ng.yaml");
	assert_int_equal(jf.nr_combos, 2);
	assert_param(&jf.combos[1], "test", "mmapaddr");
	assert_param(&jf.combos[1], "class", "pipe");
	assert_param(&jf.ignored, "perf-profile", "no value (a placeholder or a monitor switched on)");
	assert_int_equal(runnable(&jf, LKP_ACCEL_TCG), 2);
	assert_int_equal(map_combo(&j, jf.suite, &jf.combos[0], LKP_ACCEL_TCG, &msg), 0);
	free(msg);
	assert_string_equal(j.name, "stress-ng-vm-splice-100pct-60s");
	assert_non_null(strstr(j.yaml, "runtime: 6s\n"));
	lkp_klab_job_release(&j);
	lkp_jobfile_release(&jf);
}

static void test_lkp__jobfile_documents_are_variants_of_the_first(void **state)
{
	struct lkp_jobfile jf;

	(void)state;
	parse_jobfile(&jf, "lkp/lkp-vm-scalability.yaml");
	assert_string_equal(jf.suite, "vm-scalability");
	/* the first: thp × 1 test; the second: thp × 2 tests, size and nr_task */
	assert_int_equal(jf.nr_combos, 6);
	assert_null(lkp_param(&jf.combos[0], "size"));
	assert_param(&jf.combos[0], "thp_enabled", "always");
	assert_param(&jf.combos[1], "thp_enabled", "never");
	assert_param(&jf.combos[2], "size", "16G");
	assert_param(&jf.combos[2], "unit_size", "1G");
	assert_param(&jf.combos[3], "test", "anon-r-seq");
	assert_int_equal(runnable(&jf, LKP_ACCEL_KVM), 6);
	lkp_jobfile_release(&jf);
}

static void assert_jobfile_error(const char *text, const char *want)
{
	struct lkp_jobfile jf;
	char *msg;
	int rc;

	capture_stderr();
	rc = lkp_jobfile_parse(&jf, "j.yaml", text, strlen(text));
	msg = captured_stderr();
	assert_int_equal(rc, -1);
	assert_contains(msg, want);
	assert_null(jf.suite);
	free(msg);
}

static void test_lkp__hostile_jobfiles_are_refused(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_jobfile_error("", "empty job file");
	assert_jobfile_error("testcase: x\n", "missing key 'suite'");
	assert_jobfile_error("<<: cgroup2.yaml\n<<: will-it-scale.yaml\n", "'<<:' includes of other lkp-tests files are not read");
	assert_jobfile_error("- a\n- b\n", "expected a map of lkp-tests job keys");
	assert_jobfile_error("suite: x\nt: [a, b\n", "YAML syntax error");
	assert_jobfile_error("suite: x\na: &a [1, 2]\nb: *a\n", "YAML aliases are not allowed");
	assert_jobfile_error("suite: x\nt: [[a]]\n", "expected a list of values");
	assert_jobfile_error("suite: [a, b]\n", "suite: expected one name");
	assert_jobfile_error("suite: 'a b'\n", "suite: not a suite name");
	/* 10 axes of 2 values: 1024 combinations */
	strbuf_addstr(&sb, "suite: will-it-scale\n");
	for (int i = 0; i < 10; i++)
		strbuf_addf(&sb, "k%d: [a, b]\n", i);
	assert_jobfile_error(sb.buf, "more than 512 combinations");
	strbuf_release(&sb);
}

/* ---- what LKP posts: the shared reports and fixtures after them ---------------- */

/* A kernel tree for kbuild jobs (Makefile and Kconfig, readable by
 * QEMU's user); removed by the caller. */
static char *fake_tree(void)
{
	char *dir = xstrdup("/tmp/klab-test-lkp-XXXXXX"), *f;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	f = xstrfmt("%s/Makefile", dir);
	assert_int_equal(write_file_atomic(f, "all:\n", 5), 0);
	free(f);
	f = xstrfmt("%s/Kconfig", dir);
	assert_int_equal(write_file_atomic(f, "\n", 1), 0);
	free(f);
	return dir;
}

static void remove_tree(char *dir)
{
	char *f = xstrfmt("%s/Makefile", dir), *g = xstrfmt("%s/Kconfig", dir);

	unlink(f);
	unlink(g);
	rmdir(dir);
	FREE_MANY(f, g, dir);
}

/* What a report says, written down from reading it. */
struct report_facts {
	const char *file;
	const char *commit, *parent, *subject;	/* parent NULL: the report names none */
	const char *suite;
	const char *params;		/* "k=v k=v": some of its parameters */
	const char *kpi, *change;
	int improvement, direction;
	size_t results;			/* with the "in addition" ones */
	int patch;
	/* what lkp_map makes of it: the job's testcase, or NULL and the
	 * refusal's words */
	const char *testcase, *refused;
};

/* The shared reports (../shared/lkp-reports, README.md there): every one
 * of a suite klab runs maps onto a job klab's parser accepts, with the
 * report's testcase and KPI; hackbench and fio-basic have no test axis
 * (their testcase is the suite), their ipc: and rw: pass on as params. */
static const struct report_facts shared_reports[] = {
	{ "00-stress-ng-vm-splice-thread.txt", "a308c71bf1e6e19cc2e4ced31853ee0fc7cb439a", "1a0cf26323c80e2f", NULL,
	  "stress-ng", "class=pipe testtime=30s nr_threads=100% ucode=0x5002f01",
	  "stress-ng.vm-splice.ops_per_sec", "-95.6%", 0, 1, 1, 0, "vm-splice", NULL },
	{ "01-aim9-disk_src.txt", "a2e459555c5f9da3e619b7e47a63f98574dc75f1", "23a31d87645c6527",
	  "shmem: stable directory offsets", "aim9", "test=disk_src testtime=300s",
	  "aim9.disk_src.ops_per_sec", "-19.0%", 0, 1, 2, 0, NULL, "klab cannot run LKP's aim9: AIM9 is not packaged in Debian" },
	{ "03-stress-ng-schedpolicy.txt", "436f3eed5c69c1048a5754df6e3dbb291e5cccbd", "fd03c5b8585562d6",
	  "sched: Combine the last put_prev_task() and the first set_next_task()", "stress-ng",
	  "test=schedpolicy nr_threads=100% testtime=60s", "stress-ng.schedpolicy.ops_per_sec", "+50.3%", 1, -1, 2, 0,
	  "schedpolicy", NULL },
	{ "04-hackbench-pipe-threads-2020.txt", "3c29e651e16dd3b3179cfb2d055ee9538e37515c", "43e9f7f231e40e45",
	  "sched/fair: Fall back to sched-idle CPU if idle CPU isn't found", "hackbench",
	  "ipc=pipe mode=threads nr_threads=100%", "hackbench.throughput", "-15.2%", 0, 1, 4, 0, "hackbench", NULL },
	{ "06-netperf-udp_stream.txt", "6471658dc66c670580a7616e75f51b52917e7883", "3cd04c8f4afed71a",
	  "udp: use skb_attempt_defer_free()", "netperf", "test=UDP_STREAM ip=ipv4 nr_threads=50% runtime=300s",
	  "netperf.Throughput_Mbps", "+200.0%", 1, -1, 1, 0, "UDP_STREAM", NULL },
	{ "08-fio-basic-xfs-write.txt", "4edee232ed5d0abb9f24af7af55e3a9aa271f993", "61651220e0b91087",
	  "xfs: switch to multigrain timestamps", "fio-basic",
	  "rw=write bs=4k ioengine=falloc fs=xfs nr_task=1 test_size=128G runtime=300s", "fio.write_iops", "-34.9%", 0, 1,
	  1, 0, "fio-basic", NULL },
	{ "09-vm-scalability-anon-cow-rand-hugetlb.txt", "d2136d749d76af980b3accd72704eea4eab625bd", "6b0ed7b3c77547d2",
	  "mm: support multi-size THP numa balancing", "vm-scalability", "test=anon-cow-rand-hugetlb size=512G runtime=300s",
	  "vm-scalability.throughput", "-7.1%", 0, 1, 1, 0, "anon-cow-rand-hugetlb", NULL },
	{ "11-will-it-scale-futex4.txt", "cb8c4312afca1b2dc64107e7e7cea81911055612", "43adf844951084c2",
	  "futex: Add sys_futex_wait()", "will-it-scale", "test=futex4 mode=process nr_task=16",
	  "will-it-scale.per_process_ops", "-3.2%", 0, 1, 1, 0, "futex4", NULL },
	{ "14-aim7-creat-clo-xfs.txt", "10c62724d2b5e7025b9b086e401fea6686b191ed", "b4988e3bd1f05bd8",
	  "fs: try an opportunistic lookup for O_CREAT opens too", "aim7", "test=creat-clo load=1500 fs=xfs",
	  "aim7.jobs-per-min", "+117.1%", 1, -1, 1, 0, NULL, "klab cannot run LKP's aim7: AIM7 (reaim) is not packaged" },
	{ "15-kbuild-quoted-cpuset.txt", "7aaa45f8374887d98cd479a6bdd3b4c74e6a981a", "4ab93063c83a2478",
	  "[PATCH] cgroup/cpuset: Remove redundant cpu/node masks setup in cpuset_init_smp()", "kbuild",
	  "nr_task=50% runtime=300s target=autoksyms_recursive memory.high=90%", "kbuild.buildtime_per_iteration",
	  "+2583.0%", 0, -1, 1, 1, "defconfig", NULL },
	{ "19-will-it-scale-page_fault3-thread.txt", "4ed4379881aa62588aba6442a9f362a8cf7624e6", "164b06f238b98631",
	  "mm: handle shared faults under the VMA lock", "will-it-scale", "test=page_fault3 mode=thread nr_task=16",
	  "will-it-scale.per_thread_ops", "+122.2%", 1, -1, 2, 0, "page_fault3", NULL },
	{ "21-lmbench3-tcp.txt", "8ee602c635206ed012f979370094015857c02359", "d5b38a71d3334bc8",
	  "tcp: try to send bigger TSO packets", "lmbench3", "test=TCP mode=development",
	  "lmbench3.TCP.socket.bandwidth.10MB.MB/sec", "-21.8%", 0, 1, 1, 0, NULL,
	  "klab cannot run LKP's lmbench3: lmbench is not packaged" },
	/* its headline prints the fall unsigned ("3.9% regression"), its table "-3.9%" */
	{ "23-perf-bench-futex-hash.txt", "b04b8f3032aae6121303bfa324c768faba032242", "fe00e88d217a7bf7",
	  "futex: Introduce futex_q_lockptr_lock()", "perf-bench-futex", "test=hash shared=shared nr_task=100% runtime=300s",
	  "perf-bench-futex.ops/s", "-3.9%", 0, 1, 1, 0, "hash", NULL },
};

/* The shared reports' directory: $KLAB_LKP_REPORTS, else shared/ beside
 * the source tree. */
static char *reports_dir(void)
{
	const char *env = getenv("KLAB_LKP_REPORTS");

	return env && *env ? xstrdup(env) : xstrfmt("%s/../shared/lkp-reports", KLAB_ABS_SRCDIR);
}

static void check_params(const struct lkp_params *p, const char *want)
{
	char *copy = xstrdup(want), *save = NULL;

	for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');
		assert_non_null(eq);
		*eq = '\0';
		assert_param(p, kv, eq + 1);
	}
	free(copy);
}

/* A report's facts as parsed, and what lkp_map makes of it. */
static void check_report(const char *path, const struct report_facts *f, const char *tree)
{
	struct lkp_report r;
	struct lkp_klab_job j;
	struct lkp_map_in in;
	size_t len;
	char *buf, *msg;
	int rc;

	if (read_file(path, LKP_MAX_REPORT, &buf, &len) < 0)
		fail_msg("cannot read %s", path);
	if (lkp_report_parse(&r, f->file, buf, len) < 0)
		fail_msg("%s does not parse", f->file);
	free(buf);
	assert_string_equal(r.commit, f->commit);
	if (f->parent)
		assert_string_equal(r.parent, f->parent);
	else
		assert_null(r.parent);
	if (f->subject)
		assert_string_equal(r.subject, f->subject);
	assert_string_equal(r.suite, f->suite);
	check_params(&r.params, f->params);
	assert_string_equal(r.kpi, f->kpi);
	assert_string_equal(r.change, f->change);
	assert_int_equal(r.improvement, f->improvement);
	assert_int_equal(r.direction, f->direction);
	assert_int_equal(r.nr_results, f->results);
	assert_int_equal(r.patch, f->patch);

	in = report_in(&r, LKP_ACCEL_TCG);
	in.kbuild_source = tree;
	in.kbuild_config = KLAB_ABS_SRCDIR "/jobs/kbuild.config";
	capture_stderr();
	rc = lkp_map(&j, &in);
	msg = captured_stderr();
	if (f->testcase) {
		struct job job;
		char *want = xstrfmt("%d", f->direction);

		if (rc < 0)
			fail_msg("%s: %s", f->file, msg);
		assert_string_equal(j.testcase, f->testcase);
		assert_int_equal(job_parse_buffer(&job, "out.yaml", j.yaml, strlen(j.yaml)), 0);
		assert_string_equal(job.testcase, f->testcase);
		assert_string_equal(job.kpi, f->kpi);
		assert_int_equal(job.direction, f->direction);
		assert_true(has_row(&j, "change", NULL, "direction", NULL));
		free(want);
		job_release(&job);
		lkp_klab_job_release(&j);
	} else {
		assert_int_equal(rc, -1);
		assert_contains(msg, f->refused);
		assert_null(strchr(msg, '\n'));
	}
	free(msg);
	lkp_report_release(&r);
}

static void test_lkp__every_shared_report_gives_its_facts(void **state)
{
	char *dir = reports_dir(), *tree = fake_tree();
	struct stat st;

	(void)state;
	if (stat(dir, &st) < 0)
		fail_msg("the shared LKP reports are not at %s (set KLAB_LKP_REPORTS to their directory)", dir);
	for (size_t i = 0; i < ARRAY_SIZE(shared_reports); i++) {
		char *path = xstrfmt("%s/%s", dir, shared_reports[i].file);
		check_report(path, &shared_reports[i], tree);
		free(path);
	}
	/* every report there is one of the above */
	{
		DIR *d = opendir(dir);
		struct dirent *de;
		size_t n = 0;

		assert_non_null(d);
		while ((de = readdir(d))) {
			int known = 0;
			if (!strstr(de->d_name, ".txt"))
				continue;
			for (size_t i = 0; i < ARRAY_SIZE(shared_reports); i++)
				known |= !strcmp(de->d_name, shared_reports[i].file);
			if (!known)
				fail_msg("%s/%s has no facts written down in test-lkp.c", dir, de->d_name);
			n++;
		}
		closedir(d);
		assert_int_equal(n, ARRAY_SIZE(shared_reports));
	}
	remove_tree(tree);
	free(dir);
}

/* The same kinds of text, from klab's own fixtures (no shared/ needed). */
static const struct report_facts fixtures[] = {
	{ "schedpolicy-improvement.mbox", "436f3eed5c69c1048a5754df6e3dbb291e5cccbd", "fd03c5b8585562d6", NULL,
	  "stress-ng", "test=schedpolicy nr_threads=100% testtime=60s", "stress-ng.schedpolicy.ops_per_sec", "+50.3%", 1,
	  -1, 3, 0, "schedpolicy", NULL },
	{ "debug-columns.txt", "a308c71bf1e6e19cc2e4ced31853ee0fc7cb439a", "1a0cf26323c80e2f", NULL, "stress-ng",
	  "class=pipe", "stress-ng.vm-splice.ops_per_sec", "-95.6%", 0, 1, 1, 0, "vm-splice", NULL },
	{ "kbuild-patch-quoted.txt", "7aaa45f8374887d98cd479a6bdd3b4c74e6a981a", "4ab93063c83a2478", NULL, "kbuild",
	  "nr_task=50% target=autoksyms_recursive", "kbuild.buildtime_per_iteration", "+2583.0%", 0, -1, 1, 1, "defconfig",
	  NULL },
	{ "hackbench-old-style.txt", "3c29e651e16dd3b3179cfb2d055ee9538e37515c", "43e9f7f231e40e45", NULL, "hackbench",
	  "ipc=pipe mode=threads", "hackbench.throughput", "-15.2%", 0, 1, 1, 0, "hackbench", NULL },
	{ "missing-parent.txt", "5d0b8c2f3a91e7d6c4b2a1f0e9d8c7b6a5f4e3d2", NULL, "mm: something", "will-it-scale",
	  "", "will-it-scale.per_process_ops", "-12.0%", 0, 1, 1, 0, NULL, "name no test klab could run" },
};

static void test_lkp__fixtures_give_their_facts(void **state)
{
	char *tree = fake_tree();

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(fixtures); i++) {
		char *rel = xstrfmt("lkp/%s", fixtures[i].file), *path = data_path(rel);
		check_report(path, &fixtures[i], tree);
		FREE_MANY(rel, path);
	}
	remove_tree(tree);
}

static void test_lkp__in_addition_results_are_listed_and_picked(void **state)
{
	struct lkp_report r;
	struct lkp_klab_job j;
	struct job job;
	char *msg;

	(void)state;
	parse_data(&r, "lkp/schedpolicy-improvement.mbox");
	assert_int_equal(r.nr_results, 3);
	assert_string_equal(r.results[1].suite, "stress-ng");
	assert_string_equal(r.results[1].kpi, "stress-ng.schedmix.ops_per_sec");
	assert_string_equal(r.results[1].change, "+194.5%");
	assert_int_equal(r.results[1].improvement, 1);
	assert_string_equal(r.results[1].machine, "64 threads 2 sockets with 256G memory");
	assert_param(&r.results[1].params, "test", "schedmix");
	assert_int_equal(r.results[1].params.nr, 4);
	assert_string_equal(r.results[2].kpi, "will-it-scale.per_thread_ops");
	assert_string_equal(r.results[2].change, "-4.1%");

	/* 2: the first "in addition" one, mapped as the headline's would be */
	assert_int_equal(lkp_report_select(&r, 2), 0);
	assert_string_equal(r.kpi, "stress-ng.schedmix.ops_per_sec");
	assert_null(r.row);
	assert_int_equal(r.direction, -1);
	map_and_parse(&r, LKP_ACCEL_TCG, &j, &job);
	assert_string_equal(job.testcase, "schedmix");
	assert_int_equal(job.direction, -1);
	job_release(&job);
	lkp_klab_job_release(&j);

	/* 3: will-it-scale per_thread_ops without mode: the KPI implies it */
	assert_int_equal(lkp_report_select(&r, 3), 0);
	map_and_parse(&r, LKP_ACCEL_TCG, &j, &job);
	assert_string_equal(job.mode, "thread");
	assert_int_equal(job.direction, 1);
	assert_true(has_row(&j, "mode", "(not given)", "mode", "a thread-mode metric"));
	job_release(&job);
	lkp_klab_job_release(&j);

	/* back to the headline's, its row found again */
	assert_int_equal(lkp_report_select(&r, 1), 0);
	assert_non_null(r.row);
	assert_string_equal(r.row->head, "10657401");
	capture_stderr();
	assert_int_equal(lkp_report_select(&r, 4), -1);
	msg = captured_stderr();
	assert_contains(msg, "the report has 3 results: --result takes 1 (the headline's) to 3");
	free(msg);
	lkp_report_release(&r);
}

static void test_lkp__patch_under_review_names_base_link_and_branch(void **state)
{
	struct lkp_report r;
	char *repo, *branch;

	(void)state;
	parse_data(&r, "lkp/kbuild-patch-quoted.txt");
	assert_true(r.patch);
	assert_string_equal(r.patch_base, "https://git.kernel.org/cgit/linux/kernel/git/tj/cgroup.git for-next");
	assert_string_equal(r.patch_link, "https://lore.kernel.org/linux-mm/20220425020926.1264611-1-longman@redhat.com");
	assert_int_equal(lkp_patch_fetch(&r, &repo, &branch), 0);
	assert_string_equal(repo, "https://github.com/intel-lab-lkp/linux");
	assert_string_equal(branch, "Waiman-Long/cgroup-cpuset-Remove-redundant-cpu-node-masks-setup-in-cpuset_init_smp/20220425-101126");
	FREE_MANY(repo, branch);
	lkp_report_release(&r);

	/* a report of a merged commit is no patch */
	parse_data(&r, "lkp/schedpolicy-improvement.mbox");
	assert_false(r.patch);
	assert_int_equal(lkp_patch_fetch(&r, &repo, &branch), -1);
	lkp_report_release(&r);
}

/* lkp_map of a one-off set of parameters: -1 with its message */
static int map_params(struct lkp_klab_job *j, const char *suite, const char *kv, const char *kpi, char **msg)
{
	struct lkp_params p = { 0 };
	char *copy = xstrdup(kv), *save = NULL;
	int rc;

	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(t, '=');
		*eq = '\0';
		ALLOC_GROW(p.v, p.nr + 1, p.alloc);
		p.v[p.nr].key = xstrdup(t);
		p.v[p.nr].value = xstrdup(eq + 1);
		p.nr++;
	}
	{
		struct lkp_map_in in = { .suite = suite, .params = &p, .kpi = kpi, .accel = LKP_ACCEL_KVM };
		capture_stderr();
		rc = lkp_map(j, &in);
		*msg = captured_stderr();
	}
	for (size_t i = 0; i < p.nr; i++)
		FREE_MANY(p.v[i].key, p.v[i].value);
	free(p.v);
	free(copy);
	return rc;
}

static void test_lkp__kpis_a_job_cannot_produce_are_refused(void **state)
{
	struct lkp_klab_job j;
	char *msg;

	(void)state;
	/* the KPI names the mode the parameters do not */
	assert_int_equal(map_params(&j, "will-it-scale", "test=malloc1 mode=process", "will-it-scale.per_thread_ops", &msg),
			 -1);
	assert_contains(msg, "the KPI will-it-scale.per_thread_ops is measured in thread mode, but LKP's parameters say mode process");
	free(msg);
	/* a table's monitor row is no will-it-scale KPI */
	assert_int_equal(map_params(&j, "will-it-scale", "test=malloc1", "vmstat.system.in", &msg), -1);
	assert_contains(msg, "the KPI vmstat.system.in is not one klab's will-it-scale measures for malloc1");
	free(msg);
	/* nor another stressor's */
	assert_int_equal(map_params(&j, "stress-ng", "test=brk", "stress-ng.mmap.ops_per_sec", &msg), -1);
	assert_contains(msg, "(its KPIs: stress-ng.brk.ops_per_sec, stress-ng.brk.ops_per_sec_usr_sys)");
	free(msg);
	/* the KPI and the mode agree: the job says the mode, and no direction (higher is better, the default) */
	assert_int_equal(map_params(&j, "will-it-scale", "test=mmap1 mode=thread", "will-it-scale.per_thread_ops", &msg), 0);
	free(msg);
	assert_non_null(strstr(j.yaml, "mode: thread\n"));
	assert_null(strstr(j.yaml, "direction:"));
	lkp_klab_job_release(&j);
}

static void test_lkp__suites_klab_cannot_run_are_refused_once_with_why(void **state)
{
	static const char *const suites[] = { "aim7", "aim9", "unixbench", "lmbench3", "fsmark", "phoronix-test-suite" };
	struct lkp_klab_job j;
	char *msg;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		char *want = xstrfmt("error: klab cannot run LKP's %s: ", suites[i]);

		assert_non_null(lkp_suite_refused(suites[i]));
		assert_int_equal(map_params(&j, suites[i], "test=x", NULL, &msg), -1);
		assert_contains(msg, want);
		assert_null(strchr(msg, '\n'));
		FREE_MANY(msg, want);
	}
	assert_null(lkp_suite_refused("stress-ng"));
	assert_null(lkp_suite_refused(NULL));
}

/* A suite with no test axis takes LKP's parameters as its params, the fs
 * setup's map gives the file system, LKP's boolean words are booleans,
 * and a swap case gets the swap disk it writes into. */
static void test_lkp__suites_without_a_test_axis_and_their_setups_map(void **state)
{
	struct lkp_jobfile jf;
	struct lkp_klab_job j;
	struct job job;
	struct lkp_map_in in = { .accel = LKP_ACCEL_TCG, .origin = "jf" };

	(void)state;
	parse_jobfile(&jf, "lkp/lkp-fio-basic-fs.yaml");
	assert_int_equal(jf.nr_combos, 2);
	in.suite = jf.suite;
	in.params = &jf.combos[0];
	assert_int_equal(lkp_map(&j, &in), 0);
	assert_int_equal(job_parse_buffer(&job, "f.yaml", j.yaml, strlen(j.yaml)), 0);
	assert_string_equal(job.testcase, "fio-basic");
	assert_string_equal(job.fs, "ext4");
	assert_true(has_row(&j, "fs", "ext4", "fs", "scratch disk"));
	assert_true(has_row(&j, "rw", "randwrite", "params.rw", NULL));
	assert_true(has_row(&j, "time_based", "tb", "params.time_based", NULL));
	assert_true(has_row(&j, "format", "n", NULL, "fresh"));
	job_release(&job);
	lkp_klab_job_release(&j);
	lkp_jobfile_release(&jf);

	parse_jobfile(&jf, "lkp/lkp-vm-scalability-swap.yaml");
	in.suite = jf.suite;
	in.params = &jf.combos[0];
	assert_int_equal(lkp_map(&j, &in), 0);
	assert_int_equal(job_parse_buffer(&job, "s.yaml", j.yaml, strlen(j.yaml)), 0);
	assert_string_equal(job.testcase, "swap-w-seq");
	assert_int_equal(job.guest.swap_mb, 1024);
	job_release(&job);
	lkp_klab_job_release(&j);
	lkp_jobfile_release(&jf);
}

static void test_lkp__kbuild_parameters_map_without_a_test_key(void **state)
{
	struct lkp_jobfile jf;
	struct lkp_klab_job j;
	struct job job;
	char *tree = fake_tree(), *msg;
	struct lkp_map_in in = { .accel = LKP_ACCEL_TCG, .origin = "jf",
				 .kbuild_config = KLAB_ABS_SRCDIR "/jobs/kbuild.config" };

	(void)state;
	parse_jobfile(&jf, "lkp/lkp-kbuild.yaml");
	assert_int_equal(jf.nr_combos, 4);
	in.suite = jf.suite;
	in.params = &jf.combos[1];
	in.kbuild_source = tree;
	assert_int_equal(lkp_map(&j, &in), 0);
	assert_int_equal(job_parse_buffer(&job, "k.yaml", j.yaml, strlen(j.yaml)), 0);
	assert_string_equal(job.testcase, "defconfig");
	assert_int_equal(job.runtime_s, 30);
	assert_int_equal(job.nr_task.value, 50);
	assert_int_equal(job.direction, -1);	/* build time: lower is better */
	assert_string_equal(job.kpi, "kbuild.buildtime_per_iteration");
	assert_int_equal(job.nr_fragments, 1);
	assert_true(has_row(&j, "build_kconfig", "defconfig", "testcase", NULL));
	assert_true(has_row(&j, "target", "vmlinux", "params.target", NULL));
	assert_true(has_row(&j, "(kernel tree)", NULL, "params.source", "KLAB_KBUILD_SOURCE"));
	assert_string_equal(j.name, "kbuild-defconfig-50pct-300s-vmlinux");
	job_release(&job);
	lkp_klab_job_release(&j);

	/* no tree named: said so */
	in.kbuild_source = NULL;
	capture_stderr();
	assert_int_equal(lkp_map(&j, &in), -1);
	msg = captured_stderr();
	assert_contains(msg, "a kbuild job needs the kernel tree its guest builds (KLAB_KBUILD_SOURCE)");
	free(msg);
	lkp_jobfile_release(&jf);
	remove_tree(tree);
}

static void test_lkp__stress_ng_methods_become_its_options(void **state)
{
	struct lkp_jobfile jf;
	struct lkp_klab_job j;
	char *msg;

	(void)state;
	parse_jobfile(&jf, "lkp/lkp-stress-ng-methods.yaml");
	/* the first document is a job of its own, as in lkp-tests; the
	 * others are variants of it */
	assert_int_equal(jf.nr_combos, 7);
	assert_int_equal(runnable(&jf, LKP_ACCEL_TCG), 7);
	assert_null(lkp_param(&jf.combos[1], "type"));
	assert_int_equal(map_combo(&j, jf.suite, &jf.combos[1], LKP_ACCEL_TCG, &msg), 0);
	free(msg);
	assert_non_null(strstr(j.yaml, "params:\n  qsort-method: 'qsort-bm'\n"));
	assert_true(has_row(&j, "method", "qsort-bm", "params.qsort-method", "stress-ng --qsort-method qsort-bm"));
	assert_string_equal(j.name, "stress-ng-qsort-100pct-60s-qsort-bm");
	lkp_klab_job_release(&j);
	assert_int_equal(map_combo(&j, jf.suite, &jf.combos[3], LKP_ACCEL_TCG, &msg), 0);
	free(msg);
	assert_non_null(strstr(j.yaml, "  sockpair-type: 'dgram'\n"));
	lkp_klab_job_release(&j);
	assert_int_equal(map_combo(&j, jf.suite, &jf.combos[5], LKP_ACCEL_TCG, &msg), 0);
	free(msg);
	assert_non_null(strstr(j.yaml, "  sched: 'batch'\n"));
	lkp_klab_job_release(&j);
	assert_param(&jf.ignored, "oom-killer", "a map: a setup or monitor of lkp-tests");
	lkp_jobfile_release(&jf);
}

static void test_lkp__client_roles_and_fio_setup_maps_are_read(void **state)
{
	struct lkp_jobfile jf;
	struct lkp_klab_job j;
	char *msg;

	(void)state;
	parse_jobfile(&jf, "lkp/lkp-netperf.yaml");
	/* nr_threads × test, then the variant's nr_threads × its one test */
	assert_int_equal(jf.nr_combos, 8);
	assert_param(&jf.combos[1], "test", "UDP_STREAM");
	assert_param(&jf.combos[7], "test", "TCP_SENDFILE");
	assert_param(&jf.combos[7], "send_size", "10K");
	assert_param(&jf.combos[7], "nr_threads", "200%");
	assert_param(&jf.combos[7], "ip", "ipv4");
	assert_param(&jf.ignored, "if role server", "another machine's part of an LKP cluster job");
	/* klab runs netperf's loopback tests (klab-netperf) */
	assert_int_equal(map_combo(&j, jf.suite, &jf.combos[0], LKP_ACCEL_TCG, &msg), 0);
	free(msg);
	assert_string_equal(j.testcase, "TCP_RR");
	lkp_klab_job_release(&j);
	lkp_jobfile_release(&jf);

	parse_jobfile(&jf, "lkp/lkp-fio-basic.yaml");
	assert_int_equal(jf.nr_combos, 4);
	assert_param(&jf.combos[0], "rw", "write");
	assert_param(&jf.combos[1], "bs", "2M");
	assert_param(&jf.combos[0], "ioengine", "sync");
	lkp_jobfile_release(&jf);
}

static void test_lkp__templated_job_files_of_refused_suites_say_the_suite(void **state)
{
	size_t len;
	char *buf = read_data("lkp/lkp-aim7-templated.yaml", &len), *suite = lkp_jobfile_suite(buf, len);

	(void)state;
	assert_string_equal(suite, "aim7");
	assert_non_null(lkp_suite_refused(suite));
	FREE_MANY(buf, suite);
	assert_null(lkp_jobfile_suite("testcase: x\n", 12));
	assert_null(lkp_jobfile_suite("suite: a b\n", 11));
}

static void test_lkp__mapping_table_as_text_and_json(void **state)
{
	struct lkp_report r;
	struct lkp_klab_job j;
	struct job job;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	parse_data(&r, "lkp/schedpolicy-improvement.mbox");
	map_and_parse(&r, LKP_ACCEL_TCG, &j, &job);
	lkp_table_text(&sb, &j, "  ");
	assert_contains(sb.buf, "  test              schedpolicy         \xe2\x86\x92 testcase: schedpolicy\n");
	assert_contains(sb.buf, "  tbox_group        lkp-spr-r02         not mapped: the LKP test machine;");
	assert_contains(sb.buf, "  change            +50.3% improvement  \xe2\x86\x92 direction: -1 (klab bisects the improvement");
	strbuf_reset(&sb);
	lkp_table_json(&sb, &j);
	assert_contains(sb.buf, "{\"parameter\":\"nr_threads\",\"value\":\"100%\",\"key\":\"nr_task\",\"job_value\":\"100%\",\"why\":\"of the guest's vCPUs\"}");
	assert_contains(sb.buf, "{\"parameter\":\"compiler\",\"value\":\"gcc-12\",\"key\":null,\"job_value\":null,");
	strbuf_reset(&sb);
	lkp_report_json(&sb, &r);
	assert_contains(sb.buf, "\"commit\":\"436f3eed5c69c1048a5754df6e3dbb291e5cccbd\"");
	assert_contains(sb.buf, "\"change\":\"+50.3%\",\"verdict\":\"improvement\",\"direction\":-1,\"row\":{\"base\":\"7089967\"");
	assert_contains(sb.buf, "{\"n\":2,\"selected\":false,\"suite\":\"stress-ng\",\"params\":{\"cpufreq_governor\":\"performance\"");
	assert_contains(sb.buf, "\"patch\":null");
	strbuf_release(&sb);
	job_release(&job);
	lkp_klab_job_release(&j);
	lkp_report_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lkp__stress_ng_report_table_form),
		cmocka_unit_test(test_lkp__mail_with_folded_subject_and_quoted_printable),
		cmocka_unit_test(test_lkp__quoted_reply_with_crlf_and_a_wrapped_row),
		cmocka_unit_test(test_lkp__subject_form_with_parent_line_and_wrapped_axis),
		cmocka_unit_test(test_lkp__the_first_row_is_the_kpi_without_a_subject),
		cmocka_unit_test(test_lkp__missing_fields_are_one_line_errors),
		cmocka_unit_test(test_lkp__garbage_nul_and_size_are_refused),
		cmocka_unit_test(test_lkp__hostile_values_never_reach_a_job),
		cmocka_unit_test(test_lkp__unknown_suite_names_the_suites_klab_runs),
		cmocka_unit_test(test_lkp__runtime_is_a_tenth_under_tcg),
		cmocka_unit_test(test_lkp__jobfile_axes_make_one_job_per_combination),
		cmocka_unit_test(test_lkp__jobfile_documents_are_variants_of_the_first),
		cmocka_unit_test(test_lkp__hostile_jobfiles_are_refused),
		cmocka_unit_test(test_lkp__every_shared_report_gives_its_facts),
		cmocka_unit_test(test_lkp__fixtures_give_their_facts),
		cmocka_unit_test(test_lkp__in_addition_results_are_listed_and_picked),
		cmocka_unit_test(test_lkp__patch_under_review_names_base_link_and_branch),
		cmocka_unit_test(test_lkp__kpis_a_job_cannot_produce_are_refused),
		cmocka_unit_test(test_lkp__suites_klab_cannot_run_are_refused_once_with_why),
		cmocka_unit_test(test_lkp__kbuild_parameters_map_without_a_test_key),
		cmocka_unit_test(test_lkp__suites_without_a_test_axis_and_their_setups_map),
		cmocka_unit_test(test_lkp__stress_ng_methods_become_its_options),
		cmocka_unit_test(test_lkp__client_roles_and_fio_setup_maps_are_read),
		cmocka_unit_test(test_lkp__templated_job_files_of_refused_suites_say_the_suite),
		cmocka_unit_test(test_lkp__mapping_table_as_text_and_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
