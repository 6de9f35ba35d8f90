/* Unit tests of the suite and monitor registries: lookup, the message for
 * an unknown suite, each suite's ops (checks, defaults, KPIs, program,
 * parser) called directly, and what each monitor is on the host. */
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
#include "job/monitor.h"
#include "job/resultproto.h"
#include "job/suite.h"

static void assert_error(int rc, const char *want)
{
	char *msg = captured_stderr();

	assert_int_equal(rc, -1);
	assert_string_equal(msg, want);
	free(msg);
}

/* ---- the registry ---------------------------------------------------------------- */

static void test_suite__lookup_finds_each_registered_suite(void **state)
{
	static const char *const names[] = { "stress-ng", "will-it-scale", "vm-scalability", "kbuild" };
	const struct suite *const *all;
	size_t nr;

	(void)state;
	all = suite_all(&nr);
	assert_int_equal(nr, ARRAY_SIZE(names));
	for (size_t i = 0; i < nr; i++) {
		assert_string_equal(all[i]->name, names[i]);
		assert_ptr_equal(suite_find(names[i]), all[i]);
		assert_ptr_equal(suite_get(names[i]), all[i]);
	}
	assert_null(suite_find("lmbench"));
	assert_null(suite_find("Stress-ng"));
	assert_null(suite_find(""));
	assert_null(suite_find(NULL));
}

static void test_suite__unknown_suite_names_the_ones_klab_runs(void **state)
{
	(void)state;
	capture_stderr();
	assert_error(suite_get("lmbench") ? 0 : -1,
		     "error: unknown suite 'lmbench' (klab runs: stress-ng, will-it-scale, vm-scalability, kbuild)");
}

static void test_suite__names_list_the_suites_that_read_a_key(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	suite_names(&sb, 0, " or ");
	assert_string_equal(sb.buf, "stress-ng, will-it-scale, vm-scalability or kbuild");
	strbuf_reset(&sb);
	suite_names(&sb, SUITE_KEY_MODE, " or ");
	assert_string_equal(sb.buf, "will-it-scale");
	strbuf_reset(&sb);
	suite_names(&sb, SUITE_KEY_NR_THREADS | SUITE_KEY_SIZE, " or ");
	assert_string_equal(sb.buf, "vm-scalability");
	strbuf_release(&sb);
}

/* Every row is complete: a suite without a parser or argv cannot run. */
static void test_suite__every_suite_has_all_its_ops(void **state)
{
	const struct suite *const *all;
	size_t nr;

	(void)state;
	all = suite_all(&nr);
	for (size_t i = 0; i < nr; i++) {
		const struct suite *s = all[i];

		assert_non_null(s->check_testcase);
		assert_non_null(s->check_param);
		assert_non_null(s->default_kpi);
		assert_non_null(s->agent_argv);
		assert_non_null(s->parse);
		assert_non_null(s->kpis);
		assert_non_null(s->kpis[0].name);
		assert_non_null(s->program.name);
		assert_int_equal(s->program.dest[0], '/');
	}
}

/* ---- each suite's defaults ------------------------------------------------------- */

static void test_suite__default_kpi_is_a_headline_metric_higher_is_better(void **state)
{
	struct job jobs[] = {
		{ .suite = "stress-ng", .testcase = "mmapaddr", .mode = "process" },
		{ .suite = "will-it-scale", .testcase = "malloc1", .mode = "process" },
		{ .suite = "will-it-scale", .testcase = "malloc1", .mode = "thread" },
		{ .suite = "vm-scalability", .testcase = "anon-w-seq", .mode = "process" },
	};
	static const char *const want[] = { "stress-ng.mmapaddr.ops_per_sec", "will-it-scale.per_process_ops",
					    "will-it-scale.per_thread_ops", "vm-scalability.throughput" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(jobs); i++) {
		const struct suite *s = suite_find(jobs[i].suite);
		char *kpi = s->default_kpi(&jobs[i]);

		assert_string_equal(kpi, want[i]);
		assert_int_equal(suite_kpi_direction(s, jobs[i].testcase, kpi), 1);
		free(kpi);
	}
	assert_int_equal(suite_kpi_direction(suite_find("stress-ng"), "mmapaddr", "stress-ng.pipe.ops_per_sec"), 0);
	assert_int_equal(suite_kpi_direction(suite_find("stress-ng"), "mmapaddr", "stress-ng.mmapaddr.real_time"), 0);
	assert_int_equal(suite_kpi_direction(suite_find("vm-scalability"), "anon-w-seq", "vm-scalability.workload"), 1);
	/* build times: lower is better */
	assert_int_equal(suite_kpi_direction(suite_find("kbuild"), "tinyconfig", "kbuild.buildtime_per_iteration"), -1);
	assert_int_equal(suite_kpi_direction(suite_find("kbuild"), "tinyconfig", "kbuild.sys_time"), -1);
}

static void test_suite__will_it_scale_warms_up_two_seconds_unless_told(void **state)
{
	const struct suite *wis = suite_find("will-it-scale");
	struct job job;
	unsigned w = 99;

	(void)state;
	assert_null(suite_find("stress-ng")->warmup_s);
	assert_null(suite_find("vm-scalability")->warmup_s);
	parse_job(&job, "suite: will-it-scale\ntestcase: malloc1\n");
	assert_int_equal(wis->warmup_s(&job, &w), 0);
	assert_int_equal(w, 2);
	job_release(&job);
	parse_job(&job, "suite: will-it-scale\ntestcase: malloc1\nparams: { warmup: 1m }\n");
	assert_int_equal(wis->warmup_s(&job, &w), 0);
	assert_int_equal(w, 60);
	job_release(&job);
}

static void test_suite__programs_klab_builds_and_the_host_one(void **state)
{
	(void)state;
	assert_string_equal(suite_find("stress-ng")->program.dest, "/usr/bin/stress-ng");
	assert_string_equal(suite_find("stress-ng")->program.package, "stress-ng");
	assert_string_equal(suite_find("will-it-scale")->program.dest, "/usr/lib/klab/will-it-scale");
	assert_null(suite_find("will-it-scale")->program.package);
	assert_string_equal(suite_find("vm-scalability")->program.name, "usemem");
	assert_string_equal(suite_find("vm-scalability")->program.dest, "/usr/lib/klab/usemem");
	assert_null(suite_find("vm-scalability")->program.package);
	assert_string_equal(suite_find("kbuild")->program.name, "kbuild-run");
	assert_string_equal(suite_find("kbuild")->program.dest, "/usr/lib/klab/kbuild-run");
	assert_null(suite_find("kbuild")->program.package);
	/* only kbuild shares host directories with its guest */
	assert_non_null(suite_find("kbuild")->shares);
	assert_null(suite_find("stress-ng")->shares);
	assert_null(suite_find("will-it-scale")->shares);
	assert_null(suite_find("vm-scalability")->shares);
}

/* ---- each suite's checks, called directly ------------------------------------------ */

/* Call check_testcase (key NULL) or check_param: want "" for success. */
static void assert_check(const char *suite, const char *testcase, const char *key, const char *value,
			 const char *want)
{
	const struct suite *s = suite_find(suite);
	struct job job = { .suite = (char *)suite, .testcase = (char *)testcase };
	struct job_kv kv = { (char *)key, (char *)value };
	int rc;

	capture_stderr();
	rc = key ? s->check_param(&job, &kv, "p.yaml", 4) : s->check_testcase(&job, "p.yaml", 4);
	if (*want) {
		assert_error(rc, want);
	} else {
		free(captured_stderr());
		assert_int_equal(rc, 0);
	}
}

static void test_suite__testcase_checks_name_file_and_line(void **state)
{
	(void)state;
	assert_check("will-it-scale", "malloc2", NULL, NULL,
		     "error: p.yaml:4: testcase: will-it-scale supports malloc1, page_fault1 or mmap1, got 'malloc2'");
	assert_check("will-it-scale", "mmap1", NULL, NULL, "");
	assert_check("vm-scalability", "anon-r-seq", NULL, NULL,
		     "error: p.yaml:4: testcase: vm-scalability supports anon-w-seq, got 'anon-r-seq'");
	assert_check("vm-scalability", "anon-w-seq", NULL, NULL, "");
	assert_check("stress-ng", "-mmap", NULL, NULL,
		     "error: p.yaml:4: testcase: expected a stress-ng stressor name (a-z, 0-9, '-') like mmapaddr, got '-mmap'");
	assert_check("stress-ng", "vm-splice", NULL, NULL, "");
}

static void test_suite__params_each_suite_takes(void **state)
{
	(void)state;
	assert_check("stress-ng", "mmapaddr", "vm-bytes", "64m", "");
	assert_check("stress-ng", "mmapaddr", "timeout", "5", "error: p.yaml:4: params: 'timeout' is an option klab sets itself");
	assert_check("stress-ng", "mmapaddr", "mmapaddr", "2", "error: p.yaml:4: params: 'mmapaddr' is an option klab sets itself");
	assert_check("will-it-scale", "malloc1", "warmup", "5s", "");
	assert_check("will-it-scale", "malloc1", "warmup", "forever",
		     "error: p.yaml:4: params.warmup: expected a duration like 2s or 0 (at most 10m), got 'forever'");
	assert_check("will-it-scale", "malloc1", "warmup", NULL,
		     "error: p.yaml:4: params.warmup: expected a duration like 2s or 0 (at most 10m), got ''");
	assert_check("will-it-scale", "malloc1", "tasks", "4",
		     "error: p.yaml:4: params: will-it-scale has no option 'tasks' (known: warmup)");
	assert_check("vm-scalability", "anon-w-seq", "vm-bytes", "64m",
		     "error: p.yaml:4: params: vm-scalability takes no options (use nr_task, nr_threads, size)");
}

static void test_suite__usemem_size_is_checked_against_guest_memory(void **state)
{
	const struct suite *vms = suite_find("vm-scalability");
	struct strbuf sb = STRBUF_INIT;
	struct job job;

	(void)state;
	parse_job(&job, "suite: vm-scalability\ntestcase: anon-w-seq\nnr_task: 4\nsize: 512m\nguest: { memory: 2G }\n");
	assert_int_equal(vms->agent_argv(&job, 2, &sb), 0);
	assert_string_equal(sb.buf, "argv /usr/lib/klab/usemem\nargv -n\nargv 4\nargv --runtime\nargv 10\nargv 512m\n");
	job_release(&job);
	parse_job(&job, "suite: vm-scalability\ntestcase: anon-w-seq\nnr_task: 5\nsize: 512m\nguest: { memory: 2G }\n");
	strbuf_reset(&sb);
	capture_stderr();
	assert_error(vms->agent_argv(&job, 2, &sb), "error: job 't.yaml': 5 tasks of 512m do not fit in the guest's 2048M");
	assert_int_equal(sb.len, 0);
	job_release(&job);
	strbuf_release(&sb);
}

/* ---- each suite's parser, through the registry ---------------------------------------- */

/* A failed kbuild run says why in one line: the compiler's first error,
 * else the runner's first error; other suites do not say. */
static void test_suite__kbuild_failure_is_the_first_error(void **state)
{
	const struct suite *kb = suite_find("kbuild");
	char *with[] = { "kbuild: share /src is read-only (create: EROFS, write: EROFS)",
			 "| /src/broken.c:3:21: error: expected ';' before '}' token", NULL,
			 "kbuild: error: make broken/ exited 2",
			 "kbuild: first error: /src/broken.c:3:21: error: expected ';' before '}' token" };
	char *without[] = { "kbuild: config=tinyconfig target=init/ jobs=2 runtime=1",
			    "kbuild: error: make init/ still running after 10 s, killed",
			    "kbuild: error: make did not go after SIGKILL" };
	char *none[] = { "| error: a line of make's, never the runner's" };
	char *why;

	(void)state;
	assert_non_null(kb->failure);
	why = kb->failure(with, 5);
	assert_string_equal(why, "/src/broken.c:3:21: error: expected ';' before '}' token");
	free(why);
	why = kb->failure(without, 3);
	assert_string_equal(why, "make init/ still running after 10 s, killed");
	free(why);
	assert_null(kb->failure(none, 1));
	assert_null(suite_find("stress-ng")->failure);
}

static void test_suite__parsers_name_metrics_under_their_suite(void **state)
{
	static char *usemem[] = { "1048576 bytes / 1000 usecs = 1024 KB/s", "junk", NULL };
	static char *wis[] = { "will-it-scale: testcase=malloc1 mode=process tasks=1 warmup=0 runtime=1",
			       "second:1 min:5 max:5 total:5", "per_task_average:5" };
	struct result_metrics ml = { 0 };
	const struct suite *s = suite_find("vm-scalability");

	(void)state;
	s->parse(&ml, usemem, ARRAY_SIZE(usemem));
	assert_int_equal(ml.nr, 5);
	assert_string_equal(ml.m[0].name, "vm-scalability.task_throughput");
	assert_true(ml.m[0].value == 1024);
	assert_string_equal(ml.m[3].name, "vm-scalability.throughput");
	assert_null(s->derive);
	result_metrics_free(ml.m, ml.nr);

	memset(&ml, 0, sizeof(ml));
	s = suite_find("will-it-scale");
	s->parse(&ml, wis, ARRAY_SIZE(wis));
	assert_int_equal(ml.nr, 4);
	s->derive(&ml);
	assert_int_equal(ml.nr, 5);
	assert_string_equal(ml.m[4].name, "will-it-scale.workload");
	assert_true(ml.m[4].value == 5);
	result_metrics_free(ml.m, ml.nr);
}

/* ---- monitors --------------------------------------------------------------------------- */

static void test_monitor__registry_knows_vmstat_meminfo_and_stat(void **state)
{
	(void)state;
	assert_string_equal(monitor_find("vmstat")->reads, "/proc/vmstat");
	assert_string_equal(monitor_find("meminfo")->reads, "/proc/meminfo");
	assert_string_equal(monitor_find("stat")->reads, "/proc/stat");
	assert_null(monitor_find("numa-zoneinfo"));
	assert_true(!monitor_find("numa-vmstat")->counters && monitor_find("numa-vmstat")->sampled);
	assert_null(monitor_find(NULL));
	/* issue 18's: per-CPU tables are counters read before/after only */
	assert_true(!monitor_find("numa-meminfo")->counters && monitor_find("numa-meminfo")->sampled);
	assert_true(monitor_find("interrupts")->counters && !monitor_find("interrupts")->sampled);
	assert_true(monitor_find("softirqs")->counters && !monitor_find("softirqs")->sampled);
	/* counters get a delta row, levels do not; stat only before/after */
	assert_true(monitor_find("vmstat")->counters && monitor_find("vmstat")->sampled);
	assert_true(!monitor_find("meminfo")->counters && monitor_find("meminfo")->sampled);
	assert_true(monitor_find("stat")->counters && !monitor_find("stat")->sampled);
}

static void test_monitor__records_of_an_unknown_source_are_bad(void **state)
{
	static const char input[] = "KLAB1 hello t\n"
				    "KLAB1 mon before vmstat nr_free_pages 5\n"
				    "KLAB1 mon before numa-zoneinfo node0.nr_free_pages 5\n"
				    "KLAB1 mon before meminfo bad;name 5\n"
				    "KLAB1 mon t2 stat cpu.user 7\n";
	struct result r;

	(void)state;
	assert_true(monitor_field_valid(monitor_find("meminfo"), "MemFree"));
	assert_false(monitor_field_valid(monitor_find("meminfo"), ""));
	assert_false(monitor_field_valid(monitor_find("meminfo"), "a b"));
	parse_records(&r, input, sizeof(input) - 1);
	assert_int_equal(r.nr_mon, 2);
	assert_string_equal(r.mon[0].source, "vmstat");
	assert_string_equal(r.mon[1].source, "stat");
	assert_int_equal(r.bad_records, 2);
	result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_suite__lookup_finds_each_registered_suite),
		cmocka_unit_test(test_suite__unknown_suite_names_the_ones_klab_runs),
		cmocka_unit_test(test_suite__names_list_the_suites_that_read_a_key),
		cmocka_unit_test(test_suite__every_suite_has_all_its_ops),
		cmocka_unit_test(test_suite__default_kpi_is_a_headline_metric_higher_is_better),
		cmocka_unit_test(test_suite__will_it_scale_warms_up_two_seconds_unless_told),
		cmocka_unit_test(test_suite__programs_klab_builds_and_the_host_one),
		cmocka_unit_test(test_suite__testcase_checks_name_file_and_line),
		cmocka_unit_test(test_suite__params_each_suite_takes),
		cmocka_unit_test(test_suite__usemem_size_is_checked_against_guest_memory),
		cmocka_unit_test(test_suite__parsers_name_metrics_under_their_suite),
		cmocka_unit_test(test_suite__kbuild_failure_is_the_first_error),
		cmocka_unit_test(test_monitor__registry_knows_vmstat_meminfo_and_stat),
		cmocka_unit_test(test_monitor__records_of_an_unknown_source_are_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
