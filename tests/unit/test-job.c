/* Unit tests of job files: the shipped jobs, defaults, every error with
 * its file:line, the agent's job.conf per suite, and hostile input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "job/job.h"
#include "job/suite.h"
#include "job/monitor.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "helpers.h"

#ifndef KLAB_ABS_SRCDIR
#define KLAB_ABS_SRCDIR "."
#endif

static char dir[] = "/tmp/klab-test-job.XXXXXX";

static const char *srcdir(void)
{
	const char *s = getenv("KLAB_SRCDIR");

	return s && *s ? s : KLAB_ABS_SRCDIR;
}

static char *write_tmp(const char *name, const char *text, size_t len)
{
	char *p = xstrfmt("%s/%s", dir, name);
	assert_int_equal(write_file_atomic(p, text, len), 0);
	return p;
}

/* ---- error() output, captured ----------------------------------------------- */

static int saved_fd = -1;
static char *capture_file;

static void capture_begin(void)
{
	int fd;

	fflush(stderr);
	saved_fd = dup(2);
	assert_true(saved_fd >= 0);
	fd = open(capture_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	close(fd);
}

static char *capture_end(void)
{
	char *text;

	fflush(stderr);
	assert_int_equal(dup2(saved_fd, 2), 2);
	close(saved_fd);
	saved_fd = -1;
	assert_int_equal(read_file(capture_file, 1 << 20, &text, NULL), 0);
	return text;
}

/* `text` parsed as `name` must fail with `want` in the message. */
static void assert_buffer_error(const char *name, const char *text, size_t len, const char *want)
{
	struct job job;
	char *msg;
	int rc;

	capture_begin();
	rc = job_parse_buffer(&job, name, text, len);
	msg = capture_end();
	if (rc != -1)
		fail_msg("'%s' parsed, expected an error with '%s'", name, want);
	assert_contains(msg, want);
	/* one message, one line */
	assert_int_equal(strchr(msg, '\n') - msg + 1, (long)strlen(msg));
	assert_null(job.suite);
	assert_null(job.path);
	free(msg);
}

static void assert_text_error(const char *text, const char *want)
{
	assert_buffer_error("t.yaml", text, strlen(text), want);
}

/* tests/data/jobs/<file> must fail with "<file>:<want>". */
static void assert_file_error(const char *file, const char *want)
{
	char *path = xstrfmt("%s/tests/data/jobs/%s", srcdir(), file);
	char *full = xstrfmt("%s:%s", path, want);
	struct job job;
	char *msg;
	int rc;

	capture_begin();
	rc = job_parse_file(&job, path);
	msg = capture_end();
	assert_int_equal(rc, -1);
	assert_contains(msg, full);
	free(msg);
	free(full);
	free(path);
}

/* A directory that looks like a kernel tree (Makefile, Kconfig), in the
 * test's directory (0755, as QEMU's user needs); caller frees. */
static char *fake_tree(const char *name)
{
	char *tree = xstrfmt("%s/%s", dir, name), *f;

	assert_int_equal(mkdir_p(tree, 0755), 0);
	f = xstrfmt("%s/Makefile", tree);
	assert_int_equal(write_file_atomic(f, "all:\n", 5), 0);
	free(f);
	f = xstrfmt("%s/Kconfig", tree);
	assert_int_equal(write_file_atomic(f, "\n", 1), 0);
	free(f);
	return tree;
}

static void assert_conf(const char *name, const char *text, unsigned vcpus, const char *want)
{
	struct job job;
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(job_parse_buffer(&job, name, text, strlen(text)), 0);
	assert_int_equal(job_agent_conf(&job, vcpus, &sb), 0);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
	job_release(&job);
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	/* a kbuild job's shares must be reachable by QEMU's user */
	assert_int_equal(chmod(dir, 0755), 0);
	capture_file = xstrfmt("%s/stderr", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_test_dir(dir);
	free(capture_file);
	return 0;
}

/* ---- shipped jobs ------------------------------------------------------------ */

static void test_job__every_shipped_job_parses_and_makes_a_conf(void **state)
{
	static const char *const expected[] = {
		"stress-ng-mmapaddr.yaml", "stress-ng-vm-splice.yaml", "usemem-anon-w-seq.yaml",
		"will-it-scale-malloc1.yaml", "will-it-scale-page_fault1.yaml", "kbuild.yaml",
		"will-it-scale-page_fault2-thread.yaml", "hackbench-pipe.yaml", "perf-bench-futex-hash.yaml",
		"perf-bench-sched-pipe.yaml", "fio-basic-randwrite-xfs.yaml", "netperf-tcp-rr.yaml",
		"vm-scalability-lru-file-mmap-read.yaml",
	};
	/* a kbuild job names a kernel tree of the machine it runs on: here
	 * its source line names a stand-in tree */
	char *tree = fake_tree("shipped-tree");
	char *jobs = xstrfmt("%s/jobs", srcdir());
	DIR *d = opendir(jobs);
	struct dirent *de;
	size_t found = 0;

	(void)state;
	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		struct job job;
		struct strbuf sb = STRBUF_INIT;
		const char *prefix;
		char *path;

		if (n < 6 || strcmp(de->d_name + n - 5, ".yaml"))
			continue;
		path = xstrfmt("%s/%s", jobs, de->d_name);
		if (!strncmp(de->d_name, "kbuild", 6)) {
			struct strbuf text = STRBUF_INIT;
			char *buf, *src;
			size_t len;

			assert_int_equal(read_file(path, 1 << 16, &buf, &len), 0);
			src = strstr(buf, "source: ");
			assert_non_null(src);
			strbuf_add(&text, buf, (size_t)(src - buf));
			strbuf_addf(&text, "source: %s", tree);
			strbuf_addstr(&text, src + strcspn(src, "\n"));
			if (job_parse_buffer(&job, path, text.buf, text.len) < 0)
				fail_msg("shipped job %s does not parse with a kernel tree", path);
			strbuf_release(&text);
			free(buf);
		} else if (job_parse_file(&job, path) < 0) {
			fail_msg("shipped job %s does not parse", path);
		}
		for (size_t i = 0; i < ARRAY_SIZE(expected); i++)
			if (!strcmp(de->d_name, expected[i]))
				found++;
		prefix = suite_prefix(suite_find(job.suite));
		assert_int_equal(strncmp(job.kpi, prefix, strlen(prefix)), 0);
		assert_int_equal(job.repeat, 3);
	assert_true(job.confirm_share == 0.5);
		assert_int_equal(job.guest.vcpus, 2);
		assert_int_equal(job.guest.numa_nodes, 2);
		/* short enough for a TCG guest */
		assert_true(job.runtime_s >= 5 && job.runtime_s <= 10);
		assert_int_equal(job_agent_conf(&job, job.guest.vcpus, &sb), 0);
		assert_int_equal(strncmp(sb.buf, "version 1\n", 10), 0);
		strbuf_release(&sb);
		job_release(&job);
		free(path);
	}
	closedir(d);
	free(jobs);
	free(tree);
	assert_int_equal(found, ARRAY_SIZE(expected));
}

static void test_job__demo_malloc1_job_conf_is_exact(void **state)
{
	char *path = xstrfmt("%s/jobs/will-it-scale-malloc1.yaml", srcdir());
	struct job job;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(job_parse_file(&job, path), 0);
	assert_string_equal(job.kpi, "will-it-scale.per_process_ops");
	assert_int_equal(job.nr_sysctl, 1);
	assert_string_equal(job.sysctl[0].key, "kernel/mm/transparent_hugepage/enabled");
	assert_string_equal(job.sysctl[0].value, "always");
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	assert_string_equal(sb.buf,
			    "version 1\n"
			    "name will-it-scale-malloc1\n"
			    "sysfs /sys/kernel/mm/transparent_hugepage/enabled always\n"
			    "timeout 72\n"
			    "monitor_interval 0\n"
			    "argv /usr/lib/klab/will-it-scale\n"
			    "argv --test\nargv malloc1\n"
			    "argv --mode\nargv process\n"
			    "argv --tasks\nargv 2\n"
			    "argv --runtime\nargv 10\n"
			    "argv --warmup\nargv 2\n");
	strbuf_release(&sb);
	job_release(&job);
	free(path);
}

static void test_job__monitors_choose_what_the_agent_reads(void **state)
{
	static const struct {
		const char *text, *conf_line;	/* NULL: no monitors line (all) */
	} cases[] = {
		{ "monitors: all\n", NULL },
		{ "", NULL },
		{ "monitors: none\n", "monitors none\n" },
		{ "monitors: [ meminfo, vmstat ]\n", "monitors vmstat meminfo\n" },
		{ "monitors: [ interrupts ]\n", "monitors interrupts\n" },
		{ "monitors: []\n", "monitors none\n" },
		{ "monitors: meminfo,vmstat\n", "monitors vmstat meminfo\n" },
		{ "monitors: meminfo+vmstat\n", "monitors vmstat meminfo\n" },
		{ "monitors: all+perf-profile\n",
		  "monitors vmstat meminfo stat numa-meminfo interrupts softirqs numa-vmstat perf-profile\n" },
		/* the default set said as a list is the default: the same file */
		{ "monitors: [ vmstat, meminfo, stat, numa-meminfo, interrupts, softirqs, numa-vmstat ]\n", NULL },
		/* perf-profile only by name, all is not it */
		{ "monitors: [ vmstat, meminfo, stat, numa-meminfo, interrupts, softirqs, numa-vmstat, perf-profile ]\n",
		  "monitors vmstat meminfo stat numa-meminfo interrupts softirqs numa-vmstat perf-profile\n" },
		{ "monitors: [ perf-profile ]\n", "monitors perf-profile\n" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct strbuf text = STRBUF_INIT, sb = STRBUF_INIT;
		struct job job;

		strbuf_addf(&text, "suite: stress-ng\ntestcase: mmapaddr\n%s", cases[i].text);
		parse_job(&job, text.buf);
		assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
		if (cases[i].conf_line)
			assert_non_null(strstr(sb.buf, cases[i].conf_line));
		else
			assert_null(strstr(sb.buf, "monitors"));
		assert_int_equal(!!(job.monitors & (1u << monitor_index("perf-profile"))),
				 strstr(cases[i].text, "perf-profile") != NULL);
		strbuf_release(&sb);
		strbuf_release(&text);
		job_release(&job);
	}
}

static void test_job__monitors_unknown_name_is_refused(void **state)
{
	(void)state;
	assert_text_error("suite: stress-ng\ntestcase: mmapaddr\nmonitors: [ vmstat, perf ]\n",
			  "t.yaml:3: monitors: 'perf' is not a monitor (klab has vmstat, meminfo, stat, numa-meminfo, interrupts, softirqs, "
			  "numa-vmstat, perf-profile)");
	assert_text_error("suite: stress-ng\ntestcase: mmapaddr\nmonitors: some\n",
			  "t.yaml:3: monitors: 'some' is not a monitor (klab has");
	assert_text_error("suite: stress-ng\ntestcase: mmapaddr\nmonitors: { a: b }\n",
			  "t.yaml:3: monitors: expected all, none or a list of vmstat, meminfo, stat, numa-meminfo, "
			  "interrupts, softirqs, numa-vmstat, perf-profile (all is every one but perf-profile)");
}

/* A kbuild job: the toolchain and the tree as read-only shares, the
 * agent's mount9p lines by tag (no host path in job.conf), the runner's
 * argv and a timeout for the warm-up and the last build. */
static void test_job__kbuild_job_shares_its_tree_and_toolchain(void **state)
{
	char *tree = fake_tree("linux"), *text, *want, *real_tree;
	struct strbuf sb = STRBUF_INIT;
	struct job job;
	int alt;

	(void)state;
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nnr_task: 200%%\nruntime: 30s\n"
		       "params: { source: %s, target: mm/, build-timeout: 5m }\n", tree);
	parse_job(&job, text);
	real_tree = real_path(tree);
	assert_string_equal(job.kpi, "kbuild.buildtime_per_iteration");
	alt = access("/etc/alternatives", F_OK) == 0;
	assert_int_equal(job.nr_shares, 2 + alt);
	assert_string_equal(job.shares[0].tag, "usr");
	assert_string_equal(job.shares[0].guest_dir, "/klab/root/usr");
	assert_string_equal(job.shares[1].host, real_tree);
	assert_string_equal(job.shares[1].tag, "src");
	assert_string_equal(job.shares[1].guest_dir, "/klab/root/src");
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	if (alt) {
		assert_string_equal(job.shares[2].host, "/etc/alternatives");
		assert_string_equal(job.shares[2].guest_dir, "/klab/root/etc/alternatives");
	}
	want = xstrfmt("version 1\nname t\ntimeout %u\nmount9p usr /klab/root/usr\nmount9p src /klab/root/src\n%s"
		       "monitor_interval 0\nargv /usr/lib/klab/kbuild-run\nargv --root\nargv /klab/root\n"
		       "argv --config\nargv tinyconfig\nargv --target\nargv mm/\nargv --jobs\nargv 4\n"
		       "argv --runtime\nargv 30\nargv --build-timeout\nargv 300\n", 30 + 4 * 300 + 60,
		       alt ? "mount9p alternatives /klab/root/etc/alternatives\n" : "");
	assert_string_equal(sb.buf, want);
	assert_null(strstr(sb.buf, real_tree));
	free(want);
	strbuf_release(&sb);
	job_release(&job);
	free(text);

	/* the defaults: vmlinux, 10 minutes a build (10 s + 4 builds + 60 s),
	 * a warm-up build */
	text = xstrfmt("suite: kbuild\ntestcase: defconfig\nparams: { source: %s }\n", tree);
	parse_job(&job, text);
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	assert_contains_all(sb.buf,
			    "timeout 2470\n",
			    "argv --target\nargv vmlinux\n",
			    "argv --jobs\nargv 2\n");
	assert_null(strstr(sb.buf, "--no-warmup"));
	strbuf_release(&sb);
	job_release(&job);
	free(text);

	/* warmup: no, LKP's way: the runner is told */
	text = xstrfmt("suite: kbuild\ntestcase: defconfig\nparams: { source: %s, warmup: no }\n", tree);
	parse_job(&job, text);
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	assert_contains_all(sb.buf, "argv --build-timeout\nargv 600\nargv --no-warmup\n");
	strbuf_release(&sb);
	job_release(&job);
	free(text);

	/* false as revert_check takes it */
	text = xstrfmt("suite: kbuild\ntestcase: defconfig\nparams: { source: %s, warmup: false }\n", tree);
	parse_job(&job, text);
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	assert_contains_all(sb.buf, "argv --no-warmup\n");
	strbuf_release(&sb);
	job_release(&job);
	free(text);
	free(real_tree);
	free(tree);
}

static void test_job__kbuild_bad_paths_and_params_are_job_errors(void **state)
{
	char *tree = fake_tree("linux2"), *closed = fake_tree("closed/linux"), *text, *p;

	(void)state;
	assert_text_error("suite: kbuild\ntestcase: tinyconfig\n",
			  "t.yaml:1: params.source: missing (the kernel tree the guest builds, shared read-only)");
	assert_text_error("suite: kbuild\ntestcase: tinyconfig\nparams: { source: /nonexistent/linux }\n",
			  "t.yaml:3: params.source: '/nonexistent/linux' does not exist");
	assert_text_error("suite: kbuild\ntestcase: tinyconfig\nparams: { source: linux }\n",
			  "t.yaml:3: params.source: expected an absolute path, got 'linux'");
	assert_text_error("suite: kbuild\ntestcase: tinyconfig\nparams: { source: / }\n",
			  "t.yaml:3: params.source: '/' is the host's root directory, which is never shared");
	assert_text_error("suite: kbuild\ntestcase: tinyconfig\nparams: { source: /etc/hostname }\n",
			  "t.yaml:3: params.source: '/etc/hostname' is not a directory");
	assert_text_error("suite: kbuild\ntestcase: tinyconfig\nparams: { source: /usr }\n",
			  "t.yaml:3: params.source: '/usr' is not a kernel source tree (no Makefile and Kconfig)");
	assert_text_error("suite: kbuild\ntestcase: lmbench\nparams: { source: /usr }\n",
			  "t.yaml:2: testcase: kbuild supports kbuild, tinyconfig, allnoconfig or defconfig, got 'lmbench'");

	/* QEMU's user must reach the tree */
	p = xstrfmt("%s/closed", dir);
	assert_int_equal(chmod(p, 0700), 0);
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nparams: { source: %s }\n", closed);
	assert_text_error(text, "cannot be entered by other users (QEMU runs as its own user");
	free(text);
	assert_int_equal(chmod(p, 0755), 0);
	assert_int_equal(chmod(closed, 0750), 0);
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nparams: { source: %s }\n", closed);
	assert_text_error(text, "is not readable by other users (QEMU runs as its own user");
	free(text);
	free(p);

	/* a toolchain is a /usr with make and gcc */
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nparams: { source: %s, toolchain: %s }\n", tree, tree);
	assert_text_error(text, "params.toolchain: '");
	assert_text_error(text, "has no bin/make and bin/gcc (the toolchain is a /usr the guest runs)");
	free(text);

	static const char *const bad_targets[] = { "-j", "/vmlinux", "../x", "mm/../..", "a b", "$(shell x)", "..", "x//y" };
	for (size_t i = 0; i < ARRAY_SIZE(bad_targets); i++) {
		text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nparams: { source: %s, target: \"%s\" }\n", tree,
			       bad_targets[i]);
		assert_text_error(text, "t.yaml:3: params.target: expected a make target like vmlinux, kernel/ or mm/memory.o");
		free(text);
	}
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nparams: { source: %s, build-timeout: 1s }\n", tree);
	assert_text_error(text, "t.yaml:3: params.build-timeout: expected a duration like 10m (10s to 24h), got '1s'");
	free(text);
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nparams: { source: %s, jobs: 4 }\n", tree);
	assert_text_error(text, "params: kbuild has no option 'jobs' (known: build_kconfig, target, source, toolchain, warmup, "
				"build-timeout)");
	free(text);
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nparams: { source: %s, warmup: 0 }\n", tree);
	assert_text_error(text, "t.yaml:3: params.warmup: expected yes or no, got '0'");
	free(text);
	text = xstrfmt("suite: kbuild\ntestcase: tinyconfig\nmode: thread\nparams: { source: %s }\n", tree);
	assert_text_error(text, "t.yaml:3: mode: only will-it-scale, hackbench, perf-bench-sched-pipe and "
				"perf-bench-sched-messaging have a mode");
	free(text);
	free(closed);
	free(tree);
}

/* Jobs that share nothing say nothing of shares. */
static void test_job__other_jobs_have_no_shares(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct job job;

	(void)state;
	parse_job(&job, "suite: will-it-scale\ntestcase: malloc1\n");
	assert_int_equal(job.nr_shares, 0);
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	assert_null(strstr(sb.buf, "mount9p"));
	strbuf_release(&sb);
	job_release(&job);
}

/* The swap job: a 1G disk, usemem over 3/4 of memory plus swap. */
static void test_job__swap_job_gets_a_disk_and_a_share_of_memory_plus_swap(void **state)
{
	char *path = xstrfmt("%s/jobs/usemem-swap-defrag.yaml", srcdir());
	struct strbuf sb = STRBUF_INIT;
	struct job job;

	(void)state;
	assert_int_equal(job_parse_file(&job, path), 0);
	assert_int_equal(job.guest.swap_mb, 1024);
	assert_int_equal(job.guest.memory_mb, 1024);
	assert_int_equal(job.nr_fragments, 1);
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	assert_contains_all(sb.buf,
			    "swap /dev/vda\n",
			    /* (1G + 1G) * 75% / 2 tasks = 768M each */
			    "argv --tasks\nargv 2\n",
			    "argv --task-size=805306368\n",
			    "sysfs /sys/kernel/mm/transparent_hugepage/defrag always\n");
	strbuf_release(&sb);
	job_release(&job);
	free(path);
	/* without swap no swap line, and the share is of memory alone */
	parse_job(&job, "suite: vm-scalability\ntestcase: anon-w-seq\nnr_task: 1\nsize: 50%\n"
			 "guest: { vcpus: 1, memory: 1G }\n");
	assert_int_equal(job_agent_conf(&job, 1, &sb), 0);
	assert_null(strstr(sb.buf, "swap"));
	assert_non_null(strstr(sb.buf, "argv --task-size=536870912\n"));
	strbuf_release(&sb);
	job_release(&job);
	assert_text_error("suite: stress-ng\ntestcase: mmapaddr\nguest: { swap: 16M }\n",
			  "t.yaml:3: guest.swap: expected none or a size like 1G");
	assert_text_error("suite: stress-ng\ntestcase: mmapaddr\nguest: { swap: 128G }\n",
			  "t.yaml:3: guest.swap: expected none or a size");
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nsize: 101%\n", "t.yaml:3: size: expected");
}

/* ---- values and defaults ------------------------------------------------------ */

static void test_job__minimal_job_gets_documented_defaults(void **state)
{
	struct job job;

	(void)state;
	parse_job(&job, "suite: stress-ng\ntestcase: mmapaddr\n");
	assert_string_equal(job.path, "t.yaml");
	/* git hash-object of the same bytes */
	assert_string_equal(job.hash, "4ea1a2922cc43a897a3fc2c7cd7f718dbf884fd5");
	assert_string_equal(job.suite, "stress-ng");
	assert_string_equal(job.testcase, "mmapaddr");
	assert_string_equal(job.mode, "process");
	assert_int_equal(job.nr_task.is_percent, 1);
	assert_int_equal(job.nr_task.value, 100);
	assert_int_equal(job.nr_threads.is_percent, 0);
	assert_int_equal(job.nr_threads.value, 1);
	assert_int_equal(job.runtime_s, 10);
	assert_null(job.size);
	assert_string_equal(job.kpi, "stress-ng.mmapaddr.ops_per_sec");
	assert_string_equal(job_default_kpi(&job), "stress-ng.mmapaddr.ops_per_sec");
	assert_int_equal(job.direction, 1);
	assert_int_equal(job.repeat, 3);
	assert_int_equal(job.nr_sysctl, 0);
	assert_int_equal(job.nr_params, 0);
	assert_int_equal(job.nr_fragments, 0);
	assert_int_equal(job.guest.vcpus, 2);
	assert_int_equal(job.guest.numa_nodes, 1);
	assert_int_equal(job.guest.memory_mb, 2048);
	assert_int_equal(job.guest.hugepages, JOB_HUGEPAGES_NONE);
	assert_int_equal(job.aslr, -1);
	assert_int_equal(job.drop_caches, -1);
	assert_int_equal(job.monitor_interval_s, 0);
	job_release(&job);
}

static void test_job__design_example_parses(void **state)
{
	struct job job;

	(void)state;
	parse_job(&job,
		   "suite: will-it-scale\n"
		   "testcase: malloc1\n"
		   "mode: process          # process | thread\n"
		   "nr_task: 100%          # of guest vCPUs\n"
		   "runtime: 20s\n"
		   "kpi: will-it-scale.per_process_ops   # higher is better unless direction: -1\n"
		   "sysctl:\n"
		   "  kernel/mm/transparent_hugepage/enabled: always\n"
		   "guest: { vcpus: 2, numa_nodes: 2, memory: 2G, hugepages: none }\n"
		   "repeat: 3\n"
		   "confirm_share: 0.8\n"
		   "max_runs: 40\n"
		   "revert_check: no\n");
	assert_true(job.confirm_share == 0.8);
	assert_int_equal(job.revert_check, 0);
	assert_int_equal(job.max_runs, 40);
	assert_int_equal(job.runtime_s, 20);
	assert_int_equal(job.guest.numa_nodes, 2);
	assert_int_equal(job.guest.memory_mb, 2048);
	assert_int_equal(job.nr_sysctl, 1);
	assert_int_equal(job_sysctl_is_sysfs(job.sysctl[0].key), 1);
	job_release(&job);
}

static void test_job__default_kpi_per_suite_and_mode(void **state)
{
	struct job job;

	(void)state;
	parse_job(&job, "suite: will-it-scale\ntestcase: page_fault1\nmode: thread\n");
	assert_string_equal(job.kpi, "will-it-scale.per_thread_ops");
	assert_string_equal(job_default_kpi(&job), "will-it-scale.per_thread_ops");
	job_release(&job);
	parse_job(&job, "suite: will-it-scale\ntestcase: mmap1\n");
	assert_string_equal(job.kpi, "will-it-scale.per_process_ops");
	job_release(&job);
	parse_job(&job, "suite: vm-scalability\ntestcase: anon-w-seq\nkpi: vm-scalability.task_usecs\ndirection: lower\n");
	assert_string_equal(job.kpi, "vm-scalability.task_usecs");
	assert_string_equal(job_default_kpi(&job), "vm-scalability.throughput");
	assert_int_equal(job.direction, -1);
	job_release(&job);
}

static void test_job__percent_nr_task_resolves_against_vcpus(void **state)
{
	struct job job;
	struct job_count c;

	(void)state;
	parse_job(&job, "suite: stress-ng\ntestcase: vm-splice\nnr_task: 50%\n");
	assert_int_equal(job.nr_task.is_percent, 1);
	assert_int_equal(job.nr_task.value, 50);
	assert_int_equal(job_count_resolve(&job.nr_task, 8), 4);
	assert_int_equal(job_count_resolve(&job.nr_task, 3), 1);
	/* at least one task, however small the share */
	assert_int_equal(job_count_resolve(&job.nr_task, 1), 1);
	job_release(&job);

	c = (struct job_count){ .is_percent = 1, .value = 150 };
	assert_int_equal(job_count_resolve(&c, 4), 6);
	c = (struct job_count){ .is_percent = 1, .value = 1 };
	assert_int_equal(job_count_resolve(&c, 256), 2);
	c = (struct job_count){ .is_percent = 0, .value = 7 };
	assert_int_equal(job_count_resolve(&c, 2), 7);
}

static void test_job__durations_and_sizes_in_their_units(void **state)
{
	static const struct {
		const char *text;
		unsigned runtime;
		unsigned mon;
		uint64_t memory_mb;
	} cases[] = {
		{ "runtime: 20s\nmonitor_interval: 0\nguest: { memory: 2G }\n", 20, 0, 2048 },
		{ "runtime: 5m\nmonitor_interval: 1s\nguest: { memory: 512M }\n", 300, 1, 512 },
		{ "runtime: 30\nmonitor_interval: 2\nguest: { memory: 4096 }\n", 30, 2, 4096 },
		{ "runtime: 1h\nmonitor_interval: 1m\nguest: { memory: 1g }\n", 3600, 60, 1024 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *text = xstrfmt("suite: stress-ng\ntestcase: mmapaddr\n%s", cases[i].text);
		struct job job;

		parse_job(&job, text);
		assert_int_equal(job.runtime_s, cases[i].runtime);
		assert_int_equal(job.monitor_interval_s, cases[i].mon);
		assert_int_equal(job.guest.memory_mb, cases[i].memory_mb);
		job_release(&job);
		free(text);
	}
}

static void test_job__guest_hugepages_and_direction_words(void **state)
{
	struct job job;

	(void)state;
	parse_job(&job, "suite: stress-ng\ntestcase: mmapaddr\ndirection: higher\n"
			 "guest: { vcpus: 4, numa_nodes: 2, memory: 1G, hugepages: 2M }\n");
	assert_int_equal(job.guest.hugepages, JOB_HUGEPAGES_2M);
	assert_int_equal(job.direction, 1);
	job_release(&job);
	parse_job(&job, "suite: stress-ng\ntestcase: mmapaddr\ndirection: -1\n"
			 "guest: { vcpus: 4, numa_nodes: 2, memory: 2G, hugepages: 1G }\n");
	assert_int_equal(job.guest.hugepages, JOB_HUGEPAGES_1G);
	assert_int_equal(job.direction, -1);
	job_release(&job);
}

static void test_job__sysctl_thp_and_params_kept_in_file_order(void **state)
{
	struct job job;

	(void)state;
	parse_job(&job, "suite: stress-ng\ntestcase: vm-splice\n"
			 "sysctl:\n  vm.swappiness: 10\n  vm/overcommit_memory: 1\n"
			 "  net.ipv4.tcp_rmem: 4096 87380 6291456\n"
			 "thp: { defrag: defer+madvise, enabled: madvise }\n"
			 "params:\n  vm-splice-bytes: 4k\n  vm-keep:\n");
	assert_int_equal(job.nr_sysctl, 5);
	assert_string_equal(job.sysctl[1].key, "vm/overcommit_memory");
	assert_string_equal(job.sysctl[2].value, "4096 87380 6291456");
	assert_string_equal(job.sysctl[3].key, "kernel/mm/transparent_hugepage/defrag");
	assert_string_equal(job.sysctl[3].value, "defer+madvise");
	assert_string_equal(job.sysctl[4].key, "kernel/mm/transparent_hugepage/enabled");
	assert_int_equal(job.nr_params, 2);
	assert_string_equal(job.params[0].key, "vm-splice-bytes");
	assert_string_equal(job.params[0].value, "4k");
	assert_null(job.params[1].value);
	job_release(&job);
}

static void test_job__kconfig_fragments_resolve_next_to_the_job(void **state)
{
	static const char with[] = "suite: stress-ng\ntestcase: mmapaddr\nkconfig:\n  - debug.config\n  - ../jobs/./debug.config\n";
	static const char missing[] = "suite: stress-ng\ntestcase: mmapaddr\nkconfig: [ debug.config, nope.config ]\n";
	char *jobs = xstrfmt("%s/jobs", dir);
	char *frag, *jobfile, *real_frag, *msg, *want;
	struct job job;

	(void)state;
	assert_int_equal(mkdir_p(jobs, 0755), 0);
	frag = write_tmp("jobs/debug.config", "CONFIG_DEBUG_VM=y\n", 18);
	real_frag = realpath(frag, NULL);
	jobfile = write_tmp("jobs/with-kconfig.yaml", with, strlen(with));
	assert_int_equal(job_parse_file(&job, jobfile), 0);
	assert_int_equal(job.nr_fragments, 2);
	assert_string_equal(job.fragments[0], real_frag);
	assert_string_equal(job.fragments[1], real_frag);
	job_release(&job);
	free(jobfile);

	/* a missing fragment names the job's line and where it looked */
	jobfile = write_tmp("jobs/missing.yaml", missing, strlen(missing));
	capture_begin();
	assert_int_equal(job_parse_file(&job, jobfile), -1);
	msg = capture_end();
	want = xstrfmt("%s:3: kconfig: fragment 'nope.config' not found (looked for %s/nope.config)", jobfile, jobs);
	assert_contains(msg, want);
	free(want);
	free(msg);
	free(jobfile);
	free(real_frag);
	free(frag);
	free(jobs);
}

/* ---- errors with file:line ------------------------------------------------------ */

static void test_job__bad_values_name_file_and_line(void **state)
{
	(void)state;
	assert_file_error("bad-runtime.yaml", "4: runtime: expected a duration like 20s, 5m or 30 (1s to 24h), got 'abc'");
	assert_file_error("map-for-scalar.yaml", "5: runtime: expected a duration like 20s, 5m or 30 (1s to 24h), got a map");
	assert_file_error("numa-over-vcpus.yaml", "5: guest.numa_nodes: 4 NUMA nodes need at least as many vCPUs");
	assert_file_error("sysctl-traversal.yaml", "5: sysctl: expected a key like vm.swappiness");
	assert_file_error("kconfig-missing.yaml", "4: kconfig: fragment 'no-such-fragment.config' not found");
}

static void test_job__unknown_key_is_named_with_the_known_ones(void **state)
{
	(void)state;
	assert_file_error("unknown-key.yaml",
			  "3: unknown key 'testtime' (known keys: suite, testcase, mode, nr_task, nr_threads, runtime, "
			  "size, fs, kpi, direction, repeat, confirm_share, profile_runs, max_runs, revert_check, sysctl, thp, aslr, drop_caches, monitor_interval, monitors, guest, "
			  "kconfig, params)");
	assert_text_error("suite: stress-ng\ntestcase: x\nguest:\n  cpus: 2\n",
			  "t.yaml:4: guest: unknown key 'cpus' (known: vcpus, numa_nodes, memory, hugepages, swap, disk)");
	assert_text_error("suite: stress-ng\ntestcase: x\nthp: { enable: always }\n",
			  "t.yaml:3: thp: unknown key 'enable' (known: enabled, defrag)");
}

static void test_job__duplicate_key_names_both_lines(void **state)
{
	(void)state;
	assert_file_error("duplicate-key.yaml", "5: duplicate key 'runtime' (first at line 3)");
	assert_text_error("suite: stress-ng\ntestcase: x\nguest: { vcpus: 2, vcpus: 4 }\n",
			  "t.yaml:3: duplicate key 'vcpus' (first at line 3)");
	/* the same file written twice, whatever the spelling */
	assert_text_error("suite: stress-ng\ntestcase: x\nsysctl:\n  vm.swappiness: 1\n  vm/swappiness: 2\n",
			  "t.yaml:5: sysctl vm/swappiness: this sysctl is already set at line 4");
	assert_text_error("suite: stress-ng\ntestcase: x\nsysctl:\n  kernel/mm/transparent_hugepage/enabled: never\n"
			  "thp:\n  enabled: always\n",
			  "t.yaml:6: thp.enabled: this sysfs file is already set at line 4");
}

static void test_job__yaml_syntax_error_gives_problem_and_line(void **state)
{
	(void)state;
	assert_file_error("syntax-error.yaml",
			  "4: YAML syntax error: did not find expected ',' or '}' (while parsing a flow mapping at line 3)");
	assert_text_error("suite: stress-ng\ntestcase: x\n\truntime: 5\n", "t.yaml:3: YAML syntax error: ");
	assert_text_error("suite: stress-ng\ntestcase: x\nnr_task: 2\n  runtime: 5\n",
			  "t.yaml:4: YAML syntax error: mapping values are not allowed in this context");
	/* invalid UTF-8 is the reader's error, still with a line */
	assert_text_error("suite: stress-ng\ntestcase: x\nkpi: \xff\n", "t.yaml:3: not a valid job file: ");
}

static void test_job__missing_suite_or_testcase_is_an_error(void **state)
{
	(void)state;
	assert_file_error("missing-testcase.yaml", "3: missing key 'testcase' (the stress-ng test to run)");
	assert_text_error("testcase: mmapaddr\n",
			  "t.yaml:1: missing key 'suite' (stress-ng, will-it-scale, vm-scalability, hackbench, perf-bench-futex, "
			  "perf-bench-sched-pipe, perf-bench-sched-messaging, perf-bench-mem, perf-bench-syscall, fio-basic, "
			  "netperf or kbuild)");
	assert_text_error("", "t.yaml:1: empty job file");
	assert_text_error("# only a comment\n", "t.yaml:1: empty job file");
	assert_text_error("- suite\n- stress-ng\n", "t.yaml:1: expected a map of job keys (suite: ..., testcase: ...), got a list");
	assert_text_error("stress-ng\n", "t.yaml:1: expected a map of job keys (suite: ..., testcase: ...), got 'stress-ng'");
	assert_text_error("suite: stress-ng\ntestcase: x\n---\nsuite: stress-ng\n",
			  "t.yaml:3: a job file holds one YAML document");
}

static void test_job__unknown_suite_and_testcase_list_the_supported(void **state)
{
	(void)state;
	assert_file_error("unknown-suite.yaml",
			  "1: suite: expected one of stress-ng, will-it-scale, vm-scalability, hackbench, perf-bench-futex, "
			  "perf-bench-sched-pipe, perf-bench-sched-messaging, perf-bench-mem, perf-bench-syscall, fio-basic, "
			  "netperf or kbuild, got 'lmbench'");
	assert_text_error("suite: will-it-scale\ntestcase: malloc9\n",
			  "t.yaml:2: testcase: will-it-scale supports brk1, brk2, context_switch1, dup1, ");
	assert_text_error("suite: vm-scalability\ntestcase: anon-r-sequential\n",
			  "t.yaml:2: testcase: vm-scalability supports anon-w-seq, anon-w-seq-mt, ");
	assert_text_error("suite: unixbench\ntestcase: x\n",
			  "t.yaml:1: suite: klab does not run unixbench: UnixBench is not packaged in Debian");
	assert_text_error("suite: stress-ng\ntestcase: Mmap_Addr\n",
			  "t.yaml:2: testcase: expected a stress-ng stressor name");
	assert_text_error("testcase: x y\nsuite: stress-ng\n", "t.yaml:1: testcase: expected a test name");
}

static void test_job__bad_counts_are_refused(void **state)
{
	static const char *const bad[] = { "0", "150x", "0%", "6401%", "-1", "+2", "4097", "2.5", "50 %", "''", "[1]" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *text = xstrfmt("suite: stress-ng\ntestcase: mmapaddr\nnr_task: %s\n", bad[i]);
		assert_text_error(text, "t.yaml:3: nr_task: expected a count from 1 to 4096 or a share of the vCPUs like 50%");
		free(text);
	}
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nnr_threads: 0\n",
			  "t.yaml:3: nr_threads: expected a count");
	assert_text_error("suite: stress-ng\ntestcase: mmapaddr\nnr_task: 0\n",
			  "nr_task: expected a count from 1 to 4096 or a share of the vCPUs like 50% (1% to 6400%), got '0'");
	assert_text_error("suite: stress-ng\ntestcase: mmapaddr\nnr_task: 150x\n", "got '150x'");
}

/* One line more in a stress-ng job, and the error it gets. */
struct bad_line {
	const char *line;
	const char *want;
};

static void assert_bad_lines(const struct bad_line *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *text = xstrfmt("suite: stress-ng\ntestcase: mmapaddr\n%s\n", cases[i].line);

		assert_text_error(text, cases[i].want);
		free(text);
	}
}

static void test_job__guest_shape_limits(void **state)
{
	static const struct bad_line cases[] = {
		{ "guest: { vcpus: 0 }", "t.yaml:3: guest.vcpus: expected a number of vCPUs from 1 to 256, got '0'" },
		{ "guest: { vcpus: 257 }", "guest.vcpus: expected a number of vCPUs from 1 to 256, got '257'" },
		{ "guest: { numa_nodes: 0 }", "guest.numa_nodes: expected a number of NUMA nodes" },
		{ "guest: { vcpus: 2, numa_nodes: 3 }", "t.yaml:3: guest.numa_nodes: 3 NUMA nodes need at least as many vCPUs (guest.vcpus is 2)" },
		{ "guest: { memory: 2X }", "guest.memory: expected a size like 2G, 512M or 4096 (MiB), from 128M to 1T, got '2X'" },
		{ "guest: { memory: 64M }", "guest.memory: expected a size like 2G" },
		{ "guest: { memory: 2T }", "guest.memory: expected a size like 2G" },
		{ "guest: { memory: 99999999999999999999G }", "guest.memory: expected a size like 2G" },
		{ "guest: { hugepages: 4M }", "guest.hugepages: expected none, 2M or 1G, got '4M'" },
		{ "guest: { vcpus: 2, numa_nodes: 2, memory: 1G, hugepages: 1G }",
		  "guest.memory: 1024M cannot be split into 2 NUMA nodes of whole 1G pages" },
		{ "guest: 2", "t.yaml:3: guest: expected a map like { vcpus: 2, numa_nodes: 2, memory: 2G, hugepages: none }, got '2'" },
	};

	(void)state;
	assert_bad_lines(cases, ARRAY_SIZE(cases));
}

static void test_job__scalar_limits(void **state)
{
	static const struct bad_line cases[] = {
		{ "repeat: 0", "t.yaml:3: repeat: expected a number of runs from 1 to 100, got '0'" },
		{ "repeat: 101", "repeat: expected a number of runs from 1 to 100, got '101'" },
		{ "repeat: 4294967297", "repeat: expected a number of runs" },
		{ "max_runs: 2", "max_runs: expected the most runs of one commit, from 3 to 1000 (default 12), got '2'" },
		{ "max_runs: 1001", "max_runs: expected the most runs of one commit, from 3 to 1000" },
		{ "max_runs: many", "max_runs: expected the most runs of one commit" },
		{ "revert_check: maybe", "revert_check: expected yes or no (default yes), got 'maybe'" },
		{ "confirm_share: 0", "confirm_share: expected a share of the regression above 0 and at most 1, like 0.5, got '0'" },
		{ "confirm_share: 1.5", "confirm_share: expected a share of the regression above 0 and at most 1" },
		{ "confirm_share: half", "confirm_share: expected a share of the regression above 0 and at most 1" },
		{ "direction: 2", "direction: expected 1 (higher is better), -1 (lower is better), higher or lower, got '2'" },
		{ "direction:", "direction: expected 1 (higher is better), -1 (lower is better), higher or lower, got nothing" },
		{ "runtime: 0", "runtime: expected a duration" },
		{ "runtime: 25h", "runtime: expected a duration" },
		{ "runtime: 18446744073709551616s", "runtime: expected a duration" },
		{ "runtime: 10ms", "runtime: expected a duration" },
		{ "runtime: [10s]", "runtime: expected a duration like 20s, 5m or 30 (1s to 24h), got a list" },
		{ "aslr: 3", "aslr: expected 0, 1 or 2 (kernel.randomize_va_space), got '3'" },
		{ "drop_caches: 4", "drop_caches: expected 0, 1, 2 or 3" },
		{ "monitor_interval: 2h", "monitor_interval: expected a duration" },
		{ "mode: thread", "t.yaml:3: mode: only will-it-scale, hackbench, perf-bench-sched-pipe and perf-bench-sched-messaging have a mode" },
		{ "size: 1g", "t.yaml:3: size: only vm-scalability take a size" },
		{ "nr_threads: 2", "t.yaml:3: nr_threads: only hackbench and netperf take nr_threads" },
		{ "fs: xfs", "t.yaml:3: fs: only will-it-scale, vm-scalability and fio-basic run on a file system of their own" },
		{ "kpi: will-it-scale.per_process_ops",
		  "t.yaml:3: kpi: a stress-ng job's metrics are named stress-ng.<metric> (default stress-ng.mmapaddr.ops_per_sec), got 'will-it-scale.per_process_ops'" },
		{ "kpi: stress-ng.", "kpi: a stress-ng job's metrics are named" },
		{ "kpi: ops per sec", "kpi: expected a metric name" },
		{ "kpi: stress-ng.mmapaddr.ops;rm", "kpi: expected a metric name" },
		{ "thp: { enabled: defer }", "t.yaml:3: thp.enabled: expected one of always, madvise or never, got 'defer'" },
		{ "thp: { defrag: sometimes }", "thp.defrag: expected one of always, defer, defer+madvise, madvise or never" },
		{ "sysctl: vm.swappiness=10", "t.yaml:3: sysctl: expected a map like { vm.swappiness: 10 }, got 'vm.swappiness=10'" },
		{ "sysctl: { swappiness: 1 }", "sysctl: expected a key like vm.swappiness or kernel/mm/transparent_hugepage/enabled, got 'swappiness': a single name" },
		{ "sysctl: { vm.swappiness: '' }", "sysctl vm.swappiness: expected a value (printable text on one line), got ''" },
		{ "sysctl: { /proc/sys/vm/swappiness: 1 }", "got '/proc/sys/vm/swappiness'" },
		{ "sysctl: { vm.swap*: 1 }", "characters other than" },
		{ "sysctl: { vm.swappiness: }", "sysctl vm.swappiness: expected a value (printable text on one line), got nothing" },
		{ "sysctl: { vm.swappiness: [1] }", "sysctl vm.swappiness: expected a value (printable text on one line), got a list" },
		{ "kconfig: debug.config", "kconfig: expected a list of config fragment files" },
		{ "params: { Vm_Bytes: 1 }", "t.yaml:3: params: expected an option name of a-z, 0-9, '_' and '-', got 'Vm_Bytes'" },
		{ "params: { --vm: 1 }", "params: expected an option name" },
		{ "params: { vm-bytes: { a: 1 } }", "params.vm-bytes: expected a value (printable text on one line, at most 1024 characters) or nothing for a bare option, got a map" },
		{ "params: { vm-bytes: \"\" }", "params.vm-bytes: expected a value" },
		{ "params: { timeout: 1 }", "t.yaml:3: params: 'timeout' is an option klab sets itself" },
		{ "params: { mmapaddr: 4 }", "params: 'mmapaddr' is an option klab sets itself" },
	};

	(void)state;
	assert_bad_lines(cases, ARRAY_SIZE(cases));
	assert_text_error("suite: will-it-scale\ntestcase: malloc1\nparams: { tasks: 4 }\n",
			  "t.yaml:3: params: will-it-scale has no option 'tasks' (known: warmup, also)");
	assert_text_error("suite: will-it-scale\ntestcase: malloc1\nparams: { warmup: forever }\n",
			  "t.yaml:3: params.warmup: expected a duration like 2s or 0");
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nparams: { x: 1 }\n",
			  "t.yaml:3: params: vm-scalability has no option 'x' (known: unit_size, also)");
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nsize: 0\n", "t.yaml:3: size: expected a size per task");
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nsize: 2p\n", "size: expected a size per task");
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nsize: 2t\n", "size: expected a size per task");
}

/* ---- the agent's job.conf ---------------------------------------------------------- */

static void test_job__stress_ng_conf_is_exact(void **state)
{
	(void)state;
	assert_conf("some/dir/my-job.yaml",
		    "suite: stress-ng\n"
		    "testcase: vm-splice\n"
		    "nr_task: 50%\n"
		    "runtime: 7s\n"
		    "sysctl:\n"
		    "  vm.swappiness: 10\n"
		    "  kernel/mm/transparent_hugepage/defrag: never\n"
		    "  kernel/mm/ksm/run: 0\n"
		    "  net/ipv4/conf/eth0.100/forwarding: 1\n"
		    "aslr: 0\n"
		    "drop_caches: 3\n"
		    "monitor_interval: 2s\n"
		    "params:\n"
		    "  vm-splice-bytes: 4k\n"
		    "  page-in:\n"
		    "guest: { vcpus: 4 }\n",
		    4,
		    "version 1\n"
		    "name my-job\n"
		    "sysctl vm.swappiness 10\n"
		    "sysfs /sys/kernel/mm/transparent_hugepage/defrag never\n"
		    "sysfs /sys/kernel/mm/ksm/run 0\n"
		    "sysctl net/ipv4/conf/eth0.100/forwarding 1\n"
		    "aslr 0\n"
		    "drop_caches 3\n"
		    "timeout 67\n"
		    "monitor_interval 2\n"
		    "argv /usr/bin/stress-ng\n"
		    "argv --vm-splice\n"
		    "argv 2\n"
		    "argv --timeout\n"
		    "argv 7s\n"
		    "argv --metrics\n"
		    "argv --vm-splice-bytes\n"
		    "argv 4k\n"
		    "argv --page-in\n");
}

static void test_job__will_it_scale_thread_conf_is_exact(void **state)
{
	(void)state;
	assert_conf("wis.yml",
		    "suite: will-it-scale\n"
		    "testcase: page_fault1\n"
		    "mode: thread\n"
		    "nr_task: 3\n"
		    "runtime: 1m\n"
		    "params: { warmup: 5 }\n",
		    2,
		    "version 1\n"
		    "name wis\n"
		    "timeout 125\n"
		    "monitor_interval 0\n"
		    "argv /usr/lib/klab/will-it-scale\n"
		    "argv --test\nargv page_fault1\n"
		    "argv --mode\nargv thread\n"
		    "argv --tasks\nargv 3\n"
		    "argv --runtime\nargv 60\n"
		    "argv --warmup\nargv 5\n");
}

static void test_job__usemem_conf_splits_half_the_memory_over_tasks(void **state)
{
	(void)state;
	/* the case sizes itself against the guest (LKP's hw_vars) */
	assert_conf("usemem.yaml",
		    "suite: vm-scalability\n"
		    "testcase: anon-w-seq\n"
		    "runtime: 5\n"
		    "guest: { vcpus: 3, memory: 1G }\n",
		    3,
		    "version 1\n"
		    "name usemem\n"
		    "timeout 70\n"
		    "monitor_interval 0\n"
		    "argv /usr/lib/klab/vm-scalability\n"
		    "argv --case\nargv anon-w-seq\n"
		    "argv --tasks\nargv 3\n"
		    "argv --runtime\nargv 5\n");
	/* a file case: LKP's sparse root, xfs, on the scratch disk */
	assert_conf("usemem.yaml",
		    "suite: vm-scalability\n"
		    "testcase: lru-file-mmap-read\n"
		    "nr_task: 1\n"
		    "size: 256m\n",
		    4,
		    "version 1\n"
		    "name usemem\n"
		    "timeout 80\n"
		    "fs klab-disk xfs /klab/disk\n"
		    "monitor_interval 0\n"
		    "argv /usr/lib/klab/vm-scalability\n"
		    "argv --case\nargv lru-file-mmap-read\n"
		    "argv --tasks\nargv 1\n"
		    "argv --runtime\nargv 10\n"
		    "argv --task-size=268435456\n"
		    "argv --sparse-dir\nargv /klab/disk\n");
}

/* A KPI the suite, testcase and mode cannot produce is refused: it would
 * never arrive, and every run would fail. */
static void test_job__kpi_the_job_cannot_produce_is_refused(void **state)
{
	struct job job;

	(void)state;
	assert_text_error("suite: will-it-scale\ntestcase: page_fault2\nkpi: will-it-scale.per_thread_ops\n",
			  "t.yaml:3: kpi: this will-it-scale job (testcase page_fault2, mode process) never produces it; "
			  "it produces will-it-scale.per_process_ops, will-it-scale.workload, ");
	parse_job(&job, "suite: will-it-scale\ntestcase: page_fault2\nmode: thread\nkpi: will-it-scale.per_thread_ops\n");
	job_release(&job);
	parse_job(&job, "suite: will-it-scale\ntestcase: page_fault2\nmode: both\nkpi: will-it-scale.per_thread_ops\n");
	job_release(&job);
	/* another testcase's name, only with params.also */
	assert_text_error("suite: will-it-scale\ntestcase: page_fault2\nkpi: will-it-scale.pipe1.per_process_ops\n",
			  "kpi: this will-it-scale job (testcase page_fault2, mode process) never produces it");
	parse_job(&job, "suite: will-it-scale\ntestcase: page_fault2\nparams: { also: pipe1 }\n"
			"kpi: will-it-scale.pipe1.per_process_ops\n");
	job_release(&job);
	assert_text_error("suite: fio-basic\nfs: xfs\nparams: { rw: randread }\nkpi: fio.write_bw_MBps\n",
			  "t.yaml:4: kpi: this fio-basic job (testcase fio-basic) never produces it; it produces fio.read_*");
	assert_text_error("suite: netperf\ntestcase: TCP_RR\nkpi: netperf.Throughput_Mbps\n",
			  "kpi: this netperf job (testcase TCP_RR) never produces it; it produces netperf.Throughput_tps");
	assert_text_error("suite: perf-bench-futex\ntestcase: wake\nkpi: perf-bench-futex.ops/s\n",
			  "never produces it; it produces perf-bench-futex.wokeup_time_ms");
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nkpi: vm-scalability.throughput_fault\n",
			  "never produces it");
	/* stress-ng's own metrics are any under its stressor */
	parse_job(&job, "suite: stress-ng\ntestcase: vm-splice\nkpi: stress-ng.vm-splice.MB_per_sec\n");
	job_release(&job);
	assert_text_error("suite: stress-ng\ntestcase: vm-splice\nkpi: stress-ng.pipe.ops_per_sec\n",
			  "it produces stress-ng.vm-splice.*");
	/* --kpi is checked the same way */
	parse_job(&job, "suite: will-it-scale\ntestcase: malloc1\n");
	assert_int_equal(check_kpi(&job, "will-it-scale.per_process_ops", NULL), 0);
	assert_int_equal(check_kpi(&job, "will-it-scale.per_thread_ops", NULL), -1);
	job_release(&job);
}

/* Each suite's modes are LKP's, its first the default. */
static void test_job__modes_are_the_suites(void **state)
{
	struct job job;

	(void)state;
	parse_job(&job, "suite: hackbench\n");
	assert_string_equal(job.mode, "process");
	assert_string_equal(job.testcase, "hackbench");
	job_release(&job);
	parse_job(&job, "mode: threads\nsuite: hackbench\n");
	assert_string_equal(job.mode, "threads");
	job_release(&job);
	parse_job(&job, "suite: will-it-scale\ntestcase: brk1\nmode: both\n");
	assert_string_equal(job.default_kpi, "will-it-scale.per_process_ops");
	job_release(&job);
	assert_text_error("suite: will-it-scale\ntestcase: brk1\nmode: threads\n",
			  "t.yaml:3: mode: expected one of process, thread or both (will-it-scale's modes), got 'threads'");
	assert_text_error("suite: hackbench\nmode: both\n",
			  "t.yaml:2: mode: expected one of process, threads or thread (hackbench's modes), got 'both'");
	/* a suite without a test axis has LKP's testcase only */
	assert_text_error("suite: perf-bench-sched-pipe\ntestcase: pipe\n",
			  "t.yaml:2: testcase: perf-bench-sched-pipe has one, perf-bench-sched-pipe (LKP's), got 'pipe'");
	assert_text_error("suite: will-it-scale\nmode: thread\n", "t.yaml:1: missing key 'testcase'");
	assert_text_error("suite: hackbench\nparams: { groups: 4 }\n",
			  "t.yaml:2: params: hackbench has no option 'groups' (known: ipc, loops, iterations, datasize, fds)");
	assert_text_error("suite: perf-bench-syscall\nparams: { mode: x }\n",
			  "t.yaml:2: params: perf-bench-syscall has no option 'mode' (known: op, loop)");
}

/* fs: a fresh file system on a scratch disk, sized by the suite. */
static void test_job__fs_gets_a_scratch_disk(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct job job;

	(void)state;
	parse_job(&job, "suite: fio-basic\nfs: btrfs\nparams: { test_size: 8g }\n");
	/* 8G and a quarter, and a gigabyte */
	assert_int_equal(job.guest.disk_mb, 8192 * 5 / 4 + 1024);
	assert_int_equal(job_agent_conf(&job, 2, &sb), 0);
	assert_contains(sb.buf, "fs klab-disk btrfs /klab/disk\n");
	strbuf_release(&sb);
	job_release(&job);
	parse_job(&job, "suite: will-it-scale\ntestcase: read3\nfs: ext4\nguest: { disk: 2G }\n");
	assert_int_equal(job.guest.disk_mb, 2048);
	job_release(&job);
	parse_job(&job, "suite: will-it-scale\ntestcase: read3\n");
	assert_null(job.fs);
	assert_int_equal(job.guest.disk_mb, 0);
	job_release(&job);
	assert_text_error("suite: fio-basic\n", "fio-basic runs on a file system of its own: add fs: xfs, ext4 or btrfs");
	assert_text_error("suite: fio-basic\nfs: zfs\n", "t.yaml:2: fs: expected one of xfs, ext4 or btrfs, got 'zfs'");
	assert_text_error("suite: will-it-scale\ntestcase: read3\nguest: { disk: 2G }\n",
			  "t.yaml:3: guest.disk: the scratch disk is for a file system: add fs: (xfs, ext4 or btrfs)");
	assert_text_error("suite: fio-basic\nfs: xfs\nguest: { disk: 256M }\n",
			  "t.yaml:3: guest.disk: 256M is too small for a file system (at least 512M)");
	assert_text_error("suite: vm-scalability\ntestcase: swap-w-seq\n",
			  "the swap-w cases write beyond memory into swap: give the guest a swap disk");
}

static void test_job__usemem_size_larger_than_the_guest_is_refused(void **state)
{
	struct job job;
	struct strbuf sb = STRBUF_INIT;
	char *msg;

	(void)state;
	parse_job(&job, "suite: vm-scalability\ntestcase: anon-w-seq\nsize: 2g\nguest: { memory: 2G }\n");
	capture_begin();
	assert_int_equal(job_agent_conf(&job, 2, &sb), -1);
	msg = capture_end();
	assert_contains(msg, "2 tasks of 2g do not fit in the guest's 2048M");
	assert_int_equal(sb.len, 0);
	free(msg);
	job_release(&job);
}

static void test_job__conf_refuses_hand_made_hostile_job(void **state)
{
	struct job job;
	struct strbuf sb = STRBUF_INIT;
	char *msg;

	(void)state;
	parse_job(&job, "suite: stress-ng\ntestcase: mmapaddr\nsysctl: { vm.swappiness: 1 }\n");
	/* a caller that edits the struct cannot smuggle a directive through */
	free(job.sysctl[0].value);
	job.sysctl[0].value = xstrdup("1\nargv /bin/sh");
	capture_begin();
	assert_int_equal(job_agent_conf(&job, 2, &sb), -1);
	msg = capture_end();
	assert_contains(msg, "is not one line of printable text");
	assert_int_equal(sb.len, 0);
	free(msg);
	free(job.sysctl[0].key);
	job.sysctl[0].key = xstrdup("../../etc/passwd");
	capture_begin();
	assert_int_equal(job_agent_conf(&job, 2, &sb), -1);
	msg = capture_end();
	assert_contains(msg, "bad sysctl key");
	free(msg);
	job_release(&job);
}

/* ---- hostile input ------------------------------------------------------------------- */

static void test_job__control_characters_in_values_are_refused(void **state)
{
	static const char nul_text[] = "suite: stress-ng\ntestcase: \"mmap\\0addr\"\n";

	(void)state;
	assert_file_error("newline-in-string.yaml",
			  "4: params.vm-bytes: control character (newline, tab, NUL, ...) in text; job values are one line");
	assert_text_error("suite: stress-ng\ntestcase: \"a\\x01b\"\n", "t.yaml:2: testcase: control character");
	assert_text_error(nul_text, "t.yaml:2: testcase: control character");
	assert_text_error("suite: stress-ng\ntestcase: \"mmap\\taddr\"\n", "t.yaml:2: testcase: control character");
	assert_text_error("suite: stress-ng\ntestcase: x\nsysctl:\n  vm.swappiness: |\n    10\n    20\n",
			  "t.yaml:4: sysctl.vm.swappiness: control character");
	assert_text_error("suite: stress-ng\ntestcase: x\nkpi: \"stress-ng.\\e[31m\"\n", "t.yaml:3: kpi: control character");
	assert_text_error("suite: stress-ng\ntestcase: x\n\"bad\\nkey\": 1\n", "t.yaml:3: key: control character");
	assert_text_error("suite: stress-ng\ntestcase: x\nsysctl: { \"vm.\\rx\": 1 }\n", "t.yaml:3: sysctl key: control character");
	/* not ASCII: refused where the value reaches the guest */
	assert_text_error("suite: stress-ng\ntestcase: x\nparams: { vm-bytes: \"\\u00e9\" }\n",
			  "t.yaml:3: params.vm-bytes: expected a value (printable text on one line, at most 1024 characters) or nothing for a bare option, got '?" "?'");
	/* a raw NUL byte in the file is the reader's business */
	assert_buffer_error("t.yaml", "suite: stress-ng\ntestcase: a\0b\n", 30, "t.yaml:2: not a valid job file: ");
}

static void test_job__path_traversal_in_keys_is_refused(void **state)
{
	static const char *const keys[] = {
		"a/../../etc", "../etc/passwd", "kernel/mm/../../../etc/x", "vm/./swappiness", "vm//swappiness",
		".vm.swappiness", "vm.swappiness/", "vm.swappi ness",
	};

	(void)state;
	assert_file_error("sysctl-traversal.yaml", "5: sysctl: expected a key");
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char *text = xstrfmt("suite: stress-ng\ntestcase: x\nsysctl:\n  \"%s\": 1\n", keys[i]);
		assert_text_error(text, "t.yaml:4: sysctl: expected a key like vm.swappiness");
		free(text);
	}
	assert_text_error("suite: stress-ng\ntestcase: x\nparams: { ../x: 1 }\n", "params: expected an option name");
}

static void test_job__huge_numbers_are_refused_not_wrapped(void **state)
{
	static const char *const lines[] = {
		"nr_task: 99999999999999999999999999",
		"nr_task: 4294967297",
		"nr_task: 18446744073709551617%",
		"runtime: 4294967296",
		"repeat: 18446744073709551615",
		"guest: { vcpus: 4294967298 }",
		"guest: { memory: 18014398509481984T }",
		"monitor_interval: 99999999999999999999m",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		char *text = xstrfmt("suite: stress-ng\ntestcase: x\n%s\n", lines[i]);
		assert_text_error(text, "t.yaml:3: ");
		free(text);
	}
	assert_text_error("suite: vm-scalability\ntestcase: anon-w-seq\nsize: 18446744073709551616k\n",
			  "t.yaml:3: size: expected a size per task");
}

static void test_job__file_over_64k_is_refused(void **state)
{
	size_t len = 100 << 10;
	char *big = xmalloc(len);
	char *path, *msg, *want;
	struct job job;

	(void)state;
	/* a valid job padded with comments: the size alone is the problem */
	memset(big, '#', len);
	memcpy(big, "suite: stress-ng\ntestcase: x\n", 29);
	for (size_t i = 100; i < len; i += 100)
		big[i] = '\n';
	assert_buffer_error("big.yaml", big, len, "big.yaml: 102400 bytes: a job file is at most 65536 bytes (64 KiB)");
	path = write_tmp("big.yaml", big, len);
	capture_begin();
	assert_int_equal(job_parse_file(&job, path), -1);
	msg = capture_end();
	want = xstrfmt("%s: 102400 bytes: a job file is at most 65536 bytes", path);
	assert_contains(msg, want);
	free(want);
	free(msg);
	free(path);
	/* exactly 64 KiB is still a job file */
	assert_int_equal(job_parse_buffer(&job, "edge.yaml", big, 64 << 10), 0);
	job_release(&job);
	free(big);
}

static void test_job__alias_bomb_is_refused_at_the_first_alias(void **state)
{
	(void)state;
	assert_file_error("alias-bomb.yaml", "4: b: YAML aliases (*a) are not allowed in job files");
	assert_text_error("suite: &s stress-ng\ntestcase: x\nkpi: *s\n",
			  "t.yaml:3: kpi: YAML aliases (*s) are not allowed in job files");
	/* an alias as a key is refused the same way */
	assert_text_error("suite: &s stress-ng\n*s : x\n", "t.yaml:2: key: YAML aliases (*s) are not allowed");
}

static void test_job__deep_nesting_and_many_nodes_are_refused(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_addstr(&sb, "suite: stress-ng\ntestcase: x\nparams: ");
	for (int i = 0; i < 20000; i++)
		strbuf_addch(&sb, '[');
	for (int i = 0; i < 20000; i++)
		strbuf_addch(&sb, ']');
	strbuf_addch(&sb, '\n');
	assert_buffer_error("t.yaml", sb.buf, sb.len, "t.yaml:3: params: nested deeper than a job file can be");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "suite: stress-ng\ntestcase: x\nparams:\n");
	for (int i = 0; i < 3000; i++)
		strbuf_addf(&sb, "  o%d: 1\n", i);
	assert_buffer_error("t.yaml", sb.buf, sb.len, "nodes; not a job file");
	strbuf_reset(&sb);
	/* a long value stays a long value, cut in the message */
	strbuf_addstr(&sb, "suite: stress-ng\ntestcase: ");
	for (int i = 0; i < 2000; i++)
		strbuf_addch(&sb, 'a');
	strbuf_addch(&sb, '\n');
	assert_buffer_error("t.yaml", sb.buf, sb.len, "t.yaml:2: testcase: text longer than 1024 characters");
	strbuf_release(&sb);
}

static void test_job__non_text_keys_are_refused(void **state)
{
	(void)state;
	assert_text_error("suite: stress-ng\ntestcase: x\n[a, b]: 1\n", "t.yaml:3: keys must be text, got a list");
	assert_text_error("suite: stress-ng\ntestcase: x\nguest:\n  ? { a: 1 }\n  : 2\n",
			  "t.yaml:4: keys must be text, got a map");
}

static void test_job__check_kpi_is_one_rule_for_files_and_options(void **state)
{
	struct strbuf why = STRBUF_INIT;
	struct job job;

	(void)state;
	/* the name alone */
	assert_int_equal(check_kpi(NULL, "will-it-scale.per_process_ops", NULL), 0);
	assert_int_equal(check_kpi(NULL, "stress-ng.x;rm", &why), -1);
	assert_string_equal(why.buf, "a metric name like will-it-scale.per_process_ops");
	assert_int_equal(check_kpi(NULL, "ops per sec", NULL), -1);
	assert_int_equal(check_kpi(NULL, "stress-ng.x\n", NULL), -1);
	assert_int_equal(check_kpi(NULL, "nodot", NULL), -1);
	assert_int_equal(check_kpi(NULL, NULL, NULL), -1);
	/* with a job: its suite's */
	parse_job(&job, "suite: stress-ng\ntestcase: mmapaddr\n");
	assert_int_equal(check_kpi(&job, "stress-ng.mmapaddr.bogo_ops", NULL), 0);
	strbuf_reset(&why);
	assert_int_equal(check_kpi(&job, "will-it-scale.per_process_ops", &why), -1);
	assert_string_equal(why.buf, "a stress-ng job's metrics are named stress-ng.<metric> (default "
				     "stress-ng.mmapaddr.ops_per_sec)");
	assert_int_equal(check_kpi(&job, "stress-ng.", NULL), -1);
	/* what the file refuses, the option refuses, and the other way round */
	assert_int_equal(check_kpi(&job, "stress-ng.mmapaddr.ops;rm", NULL), -1);
	job_release(&job);
	strbuf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job__every_shipped_job_parses_and_makes_a_conf),
		cmocka_unit_test(test_job__kbuild_job_shares_its_tree_and_toolchain),
		cmocka_unit_test(test_job__kbuild_bad_paths_and_params_are_job_errors),
		cmocka_unit_test(test_job__other_jobs_have_no_shares),
		cmocka_unit_test(test_job__demo_malloc1_job_conf_is_exact),
		cmocka_unit_test(test_job__minimal_job_gets_documented_defaults),
		cmocka_unit_test(test_job__monitors_choose_what_the_agent_reads),
		cmocka_unit_test(test_job__monitors_unknown_name_is_refused),
		cmocka_unit_test(test_job__swap_job_gets_a_disk_and_a_share_of_memory_plus_swap),
		cmocka_unit_test(test_job__design_example_parses),
		cmocka_unit_test(test_job__default_kpi_per_suite_and_mode),
		cmocka_unit_test(test_job__percent_nr_task_resolves_against_vcpus),
		cmocka_unit_test(test_job__durations_and_sizes_in_their_units),
		cmocka_unit_test(test_job__guest_hugepages_and_direction_words),
		cmocka_unit_test(test_job__sysctl_thp_and_params_kept_in_file_order),
		cmocka_unit_test(test_job__kconfig_fragments_resolve_next_to_the_job),
		cmocka_unit_test(test_job__bad_values_name_file_and_line),
		cmocka_unit_test(test_job__unknown_key_is_named_with_the_known_ones),
		cmocka_unit_test(test_job__duplicate_key_names_both_lines),
		cmocka_unit_test(test_job__yaml_syntax_error_gives_problem_and_line),
		cmocka_unit_test(test_job__missing_suite_or_testcase_is_an_error),
		cmocka_unit_test(test_job__unknown_suite_and_testcase_list_the_supported),
		cmocka_unit_test(test_job__bad_counts_are_refused),
		cmocka_unit_test(test_job__guest_shape_limits),
		cmocka_unit_test(test_job__scalar_limits),
		cmocka_unit_test(test_job__stress_ng_conf_is_exact),
		cmocka_unit_test(test_job__will_it_scale_thread_conf_is_exact),
		cmocka_unit_test(test_job__usemem_conf_splits_half_the_memory_over_tasks),
		cmocka_unit_test(test_job__kpi_the_job_cannot_produce_is_refused),
		cmocka_unit_test(test_job__modes_are_the_suites),
		cmocka_unit_test(test_job__fs_gets_a_scratch_disk),
		cmocka_unit_test(test_job__usemem_size_larger_than_the_guest_is_refused),
		cmocka_unit_test(test_job__conf_refuses_hand_made_hostile_job),
		cmocka_unit_test(test_job__control_characters_in_values_are_refused),
		cmocka_unit_test(test_job__path_traversal_in_keys_is_refused),
		cmocka_unit_test(test_job__huge_numbers_are_refused_not_wrapped),
		cmocka_unit_test(test_job__file_over_64k_is_refused),
		cmocka_unit_test(test_job__alias_bomb_is_refused_at_the_first_alias),
		cmocka_unit_test(test_job__deep_nesting_and_many_nodes_are_refused),
		cmocka_unit_test(test_job__non_text_keys_are_refused),
		cmocka_unit_test(test_job__check_kpi_is_one_rule_for_files_and_options),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
