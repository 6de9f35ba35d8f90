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
	static const char *const names[] = {
		"stress-ng", "will-it-scale", "vm-scalability", "hackbench", "perf-bench-futex", "perf-bench-sched-pipe",
		"perf-bench-sched-messaging", "perf-bench-mem", "perf-bench-syscall", "fio-basic", "netperf", "kbuild",
	};
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
		     "error: unknown suite 'lmbench' (klab runs: stress-ng, will-it-scale, vm-scalability, hackbench, "
		     "perf-bench-futex, perf-bench-sched-pipe, perf-bench-sched-messaging, perf-bench-mem, "
		     "perf-bench-syscall, fio-basic, netperf, kbuild)");
}

/* LKP suites klab does not run are refused with the reason, once. */
static void test_suite__suites_klab_does_not_run_say_why(void **state)
{
	(void)state;
	capture_stderr();
	assert_error(suite_get("aim9") ? 0 : -1,
		     "error: klab does not run aim9: AIM9 is not packaged in Debian and klab ships no stand-in for it");
	capture_stderr();
	assert_error(suite_get("phoronix-test-suite") ? 0 : -1,
		     "error: klab does not run phoronix-test-suite: the Phoronix Test Suite downloads its tests at run "
		     "time and klab's guests have no network");
	assert_non_null(suite_not_run("unixbench"));
	assert_null(suite_not_run("hackbench"));
	assert_null(suite_find("aim7"));
}

static void test_suite__names_list_the_suites_that_read_a_key(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	suite_names(&sb, SUITE_KEY_MODE, " or ");
	assert_string_equal(sb.buf, "will-it-scale, hackbench, perf-bench-sched-pipe or perf-bench-sched-messaging");
	strbuf_reset(&sb);
	suite_names(&sb, SUITE_KEY_NR_THREADS, " or ");
	assert_string_equal(sb.buf, "hackbench or netperf");
	strbuf_reset(&sb);
	suite_names(&sb, SUITE_KEY_FS, " or ");
	assert_string_equal(sb.buf, "will-it-scale, vm-scalability or fio-basic");
	strbuf_reset(&sb);
	suite_names(&sb, SUITE_KEY_SIZE | SUITE_KEY_FS, " or ");
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
		assert_non_null(s->metrics);
		assert_non_null(s->metrics[0].pattern);
		assert_non_null(s->program.name);
		assert_int_equal(s->program.dest[0], '/');
		/* a suite with modes says them, its default first */
		assert_true(!!(s->keys & SUITE_KEY_MODE) == !!s->modes);
		for (const struct suite_program *t = s->tools; t && t->name; t++)
			assert_int_equal(t->dest[0], '/');
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
	parse_job(&job, "suite: will-it-scale\ntestcase: malloc1\n");
	assert_int_equal(wis->warmup_s(&job, &w), 0);
	assert_int_equal(w, 2);
	job_release(&job);
	/* three testcases in both modes: six warm-ups, five runs of 10 s
	 * (and two seconds to start each) before the last one's */
	parse_job(&job, "suite: will-it-scale\ntestcase: malloc1\nmode: both\nparams: { also: 'mmap1, brk1' }\n");
	assert_int_equal(wis->warmup_s(&job, &w), 0);
	assert_int_equal(w, 6 * 2 + 5 * 12);
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
	assert_string_equal(suite_find("vm-scalability")->program.name, "vm-scalability");
	assert_string_equal(suite_find("vm-scalability")->tools[0].dest, "/usr/lib/klab/usemem");
	assert_null(suite_find("vm-scalability")->program.package);
	assert_string_equal(suite_find("hackbench")->program.package, "rt-tests");
	assert_string_equal(suite_find("hackbench")->tools[0].dest, "/usr/lib/klab/repeat");
	assert_string_equal(suite_find("perf-bench-futex")->program.package, "linux-perf");
	assert_string_equal(suite_find("fio-basic")->program.package, "fio");
	/* netperf is not in Debian: klab's own, and a run says so */
	assert_string_equal(suite_find("netperf")->program.dest, "/usr/lib/klab/klab-netperf");
	assert_null(suite_find("netperf")->program.package);
	assert_non_null(strstr(suite_find("netperf")->note, "not netperf"));
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

/* The same, for a message of which only its start is said. */
static void assert_check_prefix(const char *suite, const char *testcase, const char *want)
{
	const struct suite *s = suite_find(suite);
	struct job job = { .suite = (char *)suite, .testcase = (char *)testcase };
	char *msg;

	capture_stderr();
	assert_int_equal(s->check_testcase(&job, "p.yaml", 4), -1);
	msg = captured_stderr();
	assert_true(!strncmp(msg, want, strlen(want)));
	free(msg);
}

static void test_suite__testcase_checks_name_file_and_line(void **state)
{
	(void)state;
	static const char *const wis[] = {
		"brk1", "brk2", "context_switch1", "dup1", "eventfd1", "fallocate1", "fallocate2", "futex1", "futex2",
		"futex3", "futex4", "getppid1", "lock1", "lock2", "lseek1", "lseek2", "malloc1", "malloc2", "mmap1",
		"mmap2", "open1", "open2", "open3", "page_fault1", "page_fault2", "page_fault3", "pipe1", "poll1", "poll2",
		"posix_semaphore1", "pread1", "pread2", "pread3", "pthread_mutex1", "pthread_mutex2", "pthread_mutex3",
		"pthread_mutex4", "pthread_mutex5", "pwrite1", "pwrite2", "pwrite3", "read1", "read2", "read3", "read4",
		"readseek1", "readseek2", "readseek3", "sched_yield", "signal1", "tlb_flush1", "tlb_flush2",
		"tlb_flush3", "unix1", "unlink1", "unlink2", "write1", "writeseek1", "writeseek2", "writeseek3",
	};

	/* every testcase of lkp-tests' will-it-scale jobs */
	for (size_t i = 0; i < ARRAY_SIZE(wis); i++)
		assert_check("will-it-scale", wis[i], NULL, NULL, "");
	assert_check_prefix("will-it-scale", "malloc3", "error: p.yaml:4: testcase: will-it-scale supports brk1, brk2, ");
	assert_check("vm-scalability", "anon-r-seq", NULL, NULL, "");
	assert_check("vm-scalability", "lru-file-readtwice", NULL, NULL, "");
	assert_check("vm-scalability", "migrate", NULL, NULL,
		     "error: p.yaml:4: testcase: klab does not run vm-scalability's migrate (it needs numactl's "
		     "migratepages, which klab's guests do not carry)");
	assert_check("hackbench", "hackbench", NULL, NULL, "");
	assert_check("hackbench", "pipe", NULL, NULL,
		     "error: p.yaml:4: testcase: hackbench has one, hackbench (LKP's), got 'pipe'");
	assert_check("perf-bench-futex", "wake-parallel", NULL, NULL, "");
	assert_check("perf-bench-futex", "lock", NULL, NULL,
		     "error: p.yaml:4: testcase: perf-bench-futex supports hash, lock-pi, requeue, wake or wake-parallel, "
		     "got 'lock'");
	assert_check("netperf", "TCP_CRR", NULL, NULL, "");
	assert_check("netperf", "SCTP_RR", NULL, NULL,
		     "error: p.yaml:4: testcase: netperf supports TCP_RR, TCP_CRR, TCP_STREAM, UDP_RR or UDP_STREAM, "
		     "got 'SCTP_RR'");
	assert_check("kbuild", "kbuild", NULL, NULL, "");
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
	assert_check("will-it-scale", "malloc1", "also", "mmap1 brk1,pipe1", "");
	assert_check("will-it-scale", "malloc1", "also", "mmap1 malloc1",
		     "error: p.yaml:4: params.also: malloc1 is named twice (the job's testcase runs first anyway)");
	assert_check("will-it-scale", "malloc1", "also", "mmap9",
		     "error: p.yaml:4: params.also: 'mmap9' is not a will-it-scale testcase");
	assert_check("vm-scalability", "anon-w-seq", "unit_size", "1g", "");
	assert_check("vm-scalability", "anon-w-seq", "unit_size", "lots",
		     "error: p.yaml:4: params.unit_size: expected a size like 1G or 512m, got 'lots'");
	assert_check("hackbench", "hackbench", "ipc", "pipe", "");
	assert_check("hackbench", "hackbench", "ipc", "tcp", "error: p.yaml:4: params.ipc: expected pipe or socket, got 'tcp'");
	assert_check("hackbench", "hackbench", "loops", "0",
		     "error: p.yaml:4: params.loops: expected a number from 1 to 100000000, got '0'");
	assert_check("perf-bench-futex", "wake", "nwakes", "2", "");
	assert_check("perf-bench-futex", "hash", "nwakes", "2",
		     "error: p.yaml:4: params.nwakes: only perf bench futex wake takes it, not hash");
	assert_check("perf-bench-futex", "hash", "shared", "shared", "");
	assert_check("perf-bench-sched-pipe", "perf-bench-sched-pipe", "loops", "10000000ops", "");
	assert_check("perf-bench-mem", "perf-bench-mem", "size", "1MB", "");
	assert_check("perf-bench-mem", "perf-bench-mem", "op", "memmove",
		     "error: p.yaml:4: params.op: expected memcpy or memset, got 'memmove'");
	assert_check("perf-bench-syscall", "perf-bench-syscall", "op", "fork",
		     "error: p.yaml:4: params.op: expected basic (Debian's perf 6.1 has no other), got 'fork'");
	assert_check("fio-basic", "fio-basic", "rw", "randwrite", "");
	assert_check("fio-basic", "fio-basic", "rw", "trim",
		     "error: p.yaml:4: params.rw: expected read, write, randread, randwrite, rw, readwrite or randrw, got 'trim'");
	assert_check("fio-basic", "fio-basic", "bs", "4M", "");
	assert_check("fio-basic", "fio-basic", "direct", "direct", "");
	assert_check("fio-basic", "fio-basic", "iodepth", "0",
		     "error: p.yaml:4: params.iodepth: expected a number from 1 to 65536, got '0'");
	assert_check("netperf", "TCP_STREAM", "send_size", "10K", "");
	assert_check("netperf", "TCP_RR", "send_size", "10K",
		     "error: p.yaml:4: params.send_size: only the STREAM tests send more than a byte");
	assert_check("netperf", "TCP_RR", "ip", "ipv6",
		     "error: p.yaml:4: params.ip: klab-netperf runs over IPv4's loopback only (ipv4), got 'ipv6'");
	assert_check("kbuild", "kbuild", "build_kconfig", "allyesconfig", "");
	assert_check("kbuild", "kbuild", "build_kconfig", "yes",
		     "error: p.yaml:4: params.build_kconfig: expected a config target like defconfig, allyesconfig or "
		     "tinyconfig, got 'yes'");
	assert_check("kbuild", "tinyconfig", "build_kconfig", "defconfig",
		     "error: p.yaml:4: params.build_kconfig: the testcase names the config target tinyconfig already");
}

static void test_suite__usemem_size_is_checked_against_guest_memory(void **state)
{
	const struct suite *vms = suite_find("vm-scalability");
	struct strbuf sb = STRBUF_INIT;
	struct job job;

	(void)state;
	parse_job(&job, "suite: vm-scalability\ntestcase: anon-w-seq\nnr_task: 4\nsize: 512m\nguest: { memory: 2G }\n");
	assert_int_equal(vms->agent_argv(&job, 2, &sb), 0);
	assert_string_equal(sb.buf, "argv /usr/lib/klab/vm-scalability\nargv --case\nargv anon-w-seq\nargv --tasks\n"
				    "argv 4\nargv --runtime\nargv 10\nargv --task-size=536870912\n");
	job_release(&job);
	parse_job(&job, "suite: vm-scalability\ntestcase: anon-w-seq\nnr_task: 5\nsize: 512m\nguest: { memory: 2G }\n");
	strbuf_reset(&sb);
	capture_stderr();
	assert_error(vms->agent_argv(&job, 2, &sb), "error: job 't.yaml': 5 tasks of 512m do not fit in the guest's 2048M");
	assert_int_equal(sb.len, 0);
	job_release(&job);
	strbuf_release(&sb);
}

/* What each suite runs in the guest for LKP's parameters: the argv lines
 * of job.conf, joined by spaces. */
static void test_suite__argv_of_lkps_parameters(void **state)
{
	static const struct {
		const char *job, *argv;
	} cases[] = {
		{ "suite: will-it-scale\ntestcase: page_fault2\nmode: both\nnr_task: 100%\nruntime: 3s\n"
		  "params: { warmup: 0, also: 'pipe1 read3' }\nfs: ext4\n",
		  "/usr/lib/klab/will-it-scale --test page_fault2 --test pipe1 --test read3 --mode both --tasks 4 "
		  "--runtime 3 --warmup 0 --dir /klab/disk" },
		{ "suite: vm-scalability\ntestcase: lru-file-readtwice\nnr_task: 2\nparams: { unit_size: 1g }\n",
		  "/usr/lib/klab/vm-scalability --case lru-file-readtwice --tasks 2 --runtime 10 --unit-size=1073741824 "
		  "--sparse-dir /klab/disk" },
		{ "suite: hackbench\nnr_threads: 1600%\nmode: threads\nparams: { ipc: pipe }\n",
		  "/usr/lib/klab/repeat --runtime 10 -- /usr/bin/hackbench -g 64 -f 20 --threads --pipe -l 1875 -s 100" },
		{ "suite: hackbench\nnr_threads: 2\nparams: { iterations: 8, loops: 100, datasize: 512 }\n",
		  "/usr/lib/klab/repeat --iterations 8 -- /usr/bin/hackbench -g 2 -f 20 --process -l 100 -s 512" },
		{ "suite: perf-bench-futex\ntestcase: hash\nnr_task: 100%\nruntime: 5s\nparams: { shared: shared }\n",
		  "/usr/bin/perf bench futex hash --threads 4 --runtime 5 --shared" },
		{ "suite: perf-bench-futex\ntestcase: wake\nnr_task: 2\nparams: { nwakes: 2 }\n",
		  "/usr/bin/perf bench futex wake --threads 2 --nwakes 2" },
		{ "suite: perf-bench-sched-pipe\nmode: threads\nparams: { loops: 10000000ops }\n",
		  "/usr/lib/klab/repeat --runtime 10 -- /usr/bin/perf bench sched pipe -l 10000000 -T" },
		{ "suite: perf-bench-sched-messaging\nmode: thread\nparams: { loops: 100, groups: 10, ipc: pipe }\n",
		  "/usr/lib/klab/repeat --runtime 10 -- /usr/bin/perf bench sched messaging --nr_loops 100 --group 10 "
		  "--pipe --thread" },
		{ "suite: perf-bench-mem\nparams: { op: memset, function: all }\n",
		  "/usr/lib/klab/repeat --runtime 10 -- /usr/bin/perf bench mem memset --function all" },
		{ "suite: fio-basic\nfs: btrfs\nnr_task: 2\nruntime: 5s\n"
		  "params: { rw: randwrite, bs: 4k, ioengine: io_uring, test_size: 1g, direct: direct }\n",
		  "/usr/bin/fio --name=fio-basic --directory=/klab/disk --group_reporting --output-format=terse "
		  "--terse-version=3 --rw=randwrite --numjobs=2 --size=536870912 --runtime=5 --bs=4k --ioengine=io_uring "
		  "--direct=1" },
		{ "suite: netperf\ntestcase: TCP_STREAM\nnr_threads: 200%\nparams: { send_size: 10K }\n",
		  "/usr/lib/klab/klab-netperf --test TCP_STREAM --clients 8 --runtime 10 --send-size 10240" },
		{ "suite: netperf\ntestcase: TCP_RR\nparams: { also: 'UDP_RR TCP_CRR' }\n",
		  "/usr/lib/klab/klab-netperf --test TCP_RR --test UDP_RR --test TCP_CRR --clients 1 --runtime 10" },
		{ "suite: vm-scalability\ntestcase: anon-w-seq\nnr_task: 1\nruntime: 2s\nparams: { also: 'msync, lru-shm' }\n",
		  "/usr/lib/klab/vm-scalability --case anon-w-seq --case msync --case lru-shm --tasks 1 --runtime 2 "
		  "--sparse-dir /klab/disk" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf sb = STRBUF_INIT, got = STRBUF_INIT;
		struct job job;

		parse_job(&job, cases[i].job);
		assert_int_equal(suite_find(job.suite)->agent_argv(&job, 4, &sb), 0);
		for (char *p = sb.buf; (p = strstr(p, "argv ")); p += 5) {
			size_t n = strcspn(p + 5, "\n");

			strbuf_addf(&got, "%s%.*s", got.len ? " " : "", (int)n, p + 5);
		}
		if (strcmp(got.buf, cases[i].argv))
			fail_msg("job:\n%s\nargv: %s\nwant: %s", cases[i].job, got.buf, cases[i].argv);
		strbuf_release(&sb);
		strbuf_release(&got);
		job_release(&job);
	}
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
			       "second:1 min:5 max:5 total:5", "average:5", "per_task_average:5" };
	struct result_metrics ml = { 0 };
	const struct suite *s = suite_find("vm-scalability");

	(void)state;
	s->parse(&ml, usemem, ARRAY_SIZE(usemem));
	assert_int_equal(ml.nr, 6);
	assert_string_equal(ml.m[0].name, "vm-scalability.task_throughput");
	assert_true(ml.m[0].value == 1024);
	assert_string_equal(ml.m[3].name, "vm-scalability.throughput");
	assert_null(s->derive);
	result_metrics_free(ml.m, ml.nr);

	memset(&ml, 0, sizeof(ml));
	s = suite_find("will-it-scale");
	s->parse(&ml, wis, ARRAY_SIZE(wis));
	assert_int_equal(ml.nr, 6);
	assert_string_equal(ml.m[5].name, "will-it-scale.workload");
	assert_true(ml.m[5].value == 5);
	result_metrics_free(ml.m, ml.nr);
}

/* Every metric a parser makes of real output is one the job produces
 * (suite_produces, which the job parser's KPI check asks), and the
 * job's default KPI is among them. */
static void test_suite__parsed_metrics_are_the_ones_the_job_produces(void **state)
{
	static const struct {
		const char *file, *job;
	} cases[] = {
		{ "will-it-scale-both-also", "suite: will-it-scale\ntestcase: page_fault2\nmode: both\nparams: { also: pipe1 }\n" },
		{ "will-it-scale-process", "suite: will-it-scale\ntestcase: malloc1\n" },
		{ "vm-scalability-anon-w-seq", "suite: vm-scalability\ntestcase: anon-w-seq\n" },
		{ "vm-scalability-truncate-seq", "suite: vm-scalability\ntestcase: truncate-seq\n" },
		{ "hackbench", "suite: hackbench\nmode: threads\nparams: { ipc: pipe }\n" },
		{ "perf-bench-futex-hash", "suite: perf-bench-futex\ntestcase: hash\n" },
		{ "perf-bench-futex-lock-pi", "suite: perf-bench-futex\ntestcase: lock-pi\n" },
		{ "perf-bench-futex-wake", "suite: perf-bench-futex\ntestcase: wake\n" },
		{ "perf-bench-futex-requeue", "suite: perf-bench-futex\ntestcase: requeue\n" },
		{ "perf-bench-futex-wake-parallel", "suite: perf-bench-futex\ntestcase: wake-parallel\n" },
		{ "perf-bench-sched-pipe", "suite: perf-bench-sched-pipe\n" },
		{ "perf-bench-sched-messaging", "suite: perf-bench-sched-messaging\nmode: thread\n" },
		{ "perf-bench-mem", "suite: perf-bench-mem\nparams: { op: memcpy, function: all }\n" },
		{ "perf-bench-syscall", "suite: perf-bench-syscall\n" },
		{ "fio-randrw", "suite: fio-basic\nfs: ext4\nparams: { rw: randrw }\n" },
		{ "fio-write", "suite: fio-basic\nfs: xfs\n" },
		{ "netperf-tcp-rr", "suite: netperf\ntestcase: TCP_RR\n" },
		{ "netperf-udp-stream", "suite: netperf\ntestcase: UDP_STREAM\n" },
		{ "kbuild-tinyconfig", NULL },
	};

	(void)state;
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		char *rel = xstrfmt("results/%s.out", cases[c].file), *path = data_path(rel), *buf = NULL;
		struct result_metric *m = NULL;
		char **lines = NULL;
		size_t len, nr = 0, n;
		int have_kpi = 0;
		struct job job;

		if (!cases[c].job) {
			free(rel);
			free(path);
			continue;
		}
		assert_int_equal(read_file(path, 1 << 20, &buf, &len), 0);
		for (char *p = buf, *nl; *p; p = nl + 1) {
			lines = xrealloc(lines, (nr + 1) * sizeof(*lines));
			lines[nr++] = p;
			if (!(nl = strchr(p, '\n')))
				break;
			*nl = '\0';
		}
		parse_job(&job, cases[c].job);
		n = result_parse_metrics(job.suite, job.testcase, lines, nr, &m);
		assert_true(n > 0);
		for (size_t i = 0; i < n; i++) {
			if (!suite_produces(suite_find(job.suite), &job, m[i].name, NULL))
				fail_msg("%s: %s parsed, but a job '%s' never produces it", cases[c].file, m[i].name,
					 job.testcase);
			have_kpi |= !strcmp(m[i].name, job.kpi);
		}
		if (!have_kpi)
			fail_msg("%s: no %s, the job's default KPI", cases[c].file, job.kpi);
		job_release(&job);
		result_metrics_free(m, n);
		free(lines);
		free(buf);
		free(rel);
		free(path);
	}
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
		cmocka_unit_test(test_suite__suites_klab_does_not_run_say_why),
		cmocka_unit_test(test_suite__names_list_the_suites_that_read_a_key),
		cmocka_unit_test(test_suite__every_suite_has_all_its_ops),
		cmocka_unit_test(test_suite__default_kpi_is_a_headline_metric_higher_is_better),
		cmocka_unit_test(test_suite__will_it_scale_warms_up_two_seconds_unless_told),
		cmocka_unit_test(test_suite__programs_klab_builds_and_the_host_one),
		cmocka_unit_test(test_suite__testcase_checks_name_file_and_line),
		cmocka_unit_test(test_suite__params_each_suite_takes),
		cmocka_unit_test(test_suite__usemem_size_is_checked_against_guest_memory),
		cmocka_unit_test(test_suite__argv_of_lkps_parameters),
		cmocka_unit_test(test_suite__parsers_name_metrics_under_their_suite),
		cmocka_unit_test(test_suite__parsed_metrics_are_the_ones_the_job_produces),
		cmocka_unit_test(test_suite__kbuild_failure_is_the_first_error),
		cmocka_unit_test(test_monitor__registry_knows_vmstat_meminfo_and_stat),
		cmocka_unit_test(test_monitor__records_of_an_unknown_source_are_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
