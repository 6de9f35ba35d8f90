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
	assert_string_equal(msg, "error: unknown suite 'netperf' (klab runs: stress-ng, will-it-scale, vm-scalability, kbuild)");
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
	/* brk1 is not a klab will-it-scale test */
	assert_int_equal(runnable(&jf, LKP_ACCEL_TCG), 4);
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
	assert_int_equal(runnable(&jf, LKP_ACCEL_KVM), 4);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
