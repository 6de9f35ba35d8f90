/* Unit tests of the initramfs: cpio newc layout (not compressed), the content-
 * addressed base image (rebuilt only when an input changes) and the job
 * part.  Uses the guest programs of this build and the host's busybox and
 * stress-ng, and busybox's own cpio to read the result back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/guestimg.h"
#include "job/monitor.h"
#include "util/run-command.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "helpers.h"

static char dir[] = "/tmp/klab-test-guestimg.XXXXXX";

static int setup(void **state)
{
	char *bindir;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* A private copy of the guest programs, so one can be changed. */
	bindir = xstrfmt("%s/bin", dir);
	sh("mkdir -p %s && cp %s/guests/agent/klab-agent %s/guests/bench/usemem %s/guests/bench/will-it-scale "
	   "%s/guests/bench/kbuild-run %s/guests/bench/repeat %s/guests/bench/klab-netperf "
	   "%s/guests/bench/vm-scalability %s/",
	   bindir, KLAB_ABS_BUILDDIR, KLAB_ABS_BUILDDIR, KLAB_ABS_BUILDDIR, KLAB_ABS_BUILDDIR, KLAB_ABS_BUILDDIR,
	   KLAB_ABS_BUILDDIR, KLAB_ABS_BUILDDIR, bindir);
	setenv("KLAB_GUEST_BINDIR", bindir, 1);
	free(bindir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(dir);
	return 0;
}

static void test_cpio__newc_header_and_padding(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	cpio_add(&sb, "klab/job.conf", 0100644, 0, 0, "abc", 3);
	/* 110-byte header + "klab/job.conf\0" (14) → 124, 4-aligned; data 3 → 128 */
	assert_int_equal(sb.len, 128);
	assert_memory_equal(sb.buf, "070701", 6);
	/* mode field is the second */
	assert_memory_equal(sb.buf + 14, "000081A4", 8);
	/* filesize is the seventh field */
	assert_memory_equal(sb.buf + 6 + 6 * 8, "00000003", 8);
	assert_memory_equal(sb.buf + 110, "klab/job.conf", 14);
	assert_memory_equal(sb.buf + 124, "abc", 3);
	cpio_trailer(&sb);
	assert_int_equal(sb.len % 4, 0);
	strbuf_release(&sb);
}

static char *list_image(const char *path)
{
	char *list = xstrfmt("%s/list.txt", dir), *text = NULL;

	sh("busybox cpio -t < %s > %s 2>/dev/null", path, list);
	assert_int_equal(read_file(list, 1 << 20, &text, NULL), 0);
	free(list);
	return text;
}

/* A new directory for images, name under the scratch directory; caller
 * frees. */
static char *image_dir(const char *name)
{
	char *img_dir = xstrfmt("%s/%s", dir, name);

	assert_int_equal(mkdir_p(img_dir, 0755), 0);
	return img_dir;
}

/* The initrd of a job whose job.conf is conf: base, part (may be NULL)
 * and the job's own; caller frees the path. */
static char *job_initrd(const char *img_dir, const char *base, const char *part, const char *conf)
{
	char *path = NULL;

	assert_int_equal(guestimg_initrd(img_dir, base, part, conf, strlen(conf), &path), 0);
	return path;
}

static void test_guestimg__base_has_the_agent_and_klabs_own_benchmarks_only(void **state)
{
	static const char *const files[] = {
		"\ninit\n", "dev/console\n", "bin/busybox\n", "usr/lib/klab/usemem\n", "usr/lib/klab/will-it-scale\n",
		"usr/lib/klab/kbuild-run\n", "usr/lib/klab/repeat\n", "usr/lib/klab/klab-netperf\n",
		"usr/lib/klab/vm-scalability\n",
	};
	/* the host programs and their libraries are a job's programs part */
	static const char *const not_there[] = { "usr/bin/stress-ng\n", "usr/bin/fio\n", "libc.so.6\n" };
	char *img_dir = image_dir("images"), *path = NULL, *list;
	size_t len = 0;
	int hit = -1;

	(void)state;
	assert_int_equal(guestimg_base(img_dir, &path, &hit), 0);
	assert_int_equal(hit, 0);
	list = list_image(path);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		assert_contains(list, files[i]);
	for (size_t i = 0; i < ARRAY_SIZE(not_there); i++)
		assert_null(strstr(list, not_there[i]));
	free(list);
	/* not compressed: the kernel unpacks it without inflating (TCG) */
	assert_int_equal(read_file(path, 1 << 30, &list, &len), 0);
	assert_true(len > 110 && len % 4 == 0);
	assert_memory_equal(list, "070701", 6);
	assert_non_null(memmem(list + len - 128, 128, "TRAILER!!!", 10));
	free(list);
	free(path);
	free(img_dir);
}

static void test_guestimg__base_is_rebuilt_only_when_an_input_changes(void **state)
{
	char *img_dir = image_dir("images2"), *p1 = NULL, *p2 = NULL, *p3 = NULL;
	int hit = -1;

	(void)state;
	assert_int_equal(guestimg_base(img_dir, &p1, &hit), 0);
	assert_int_equal(hit, 0);
	assert_int_equal(guestimg_base(img_dir, &p2, &hit), 0);
	assert_int_equal(hit, 1);
	assert_string_equal(p1, p2);
	/* a changed benchmark binary is a new image */
	sh("printf x >> %s/usemem", getenv("KLAB_GUEST_BINDIR"));
	assert_int_equal(guestimg_base(img_dir, &p3, &hit), 0);
	assert_int_equal(hit, 0);
	assert_string_not_equal(p1, p3);
	free(p1);
	free(p2);
	free(p3);
	free(img_dir);
}

static void test_guestimg__initrd_appends_the_job_part(void **state)
{
	char *img_dir = image_dir("images3"), *base = NULL, *i1, *i2, *i3;
	char *out = xstrfmt("%s/x", dir), *text = NULL;
	int hit;
	struct stat sb, si;

	(void)state;
	assert_int_equal(guestimg_base(img_dir, &base, &hit), 0);
	i1 = job_initrd(img_dir, base, NULL, "version 1\nargv /bin/true\n");
	i2 = job_initrd(img_dir, base, NULL, "version 1\nargv /bin/true\n");
	assert_string_equal(i1, i2);
	i3 = job_initrd(img_dir, base, NULL, "version 1\nargv /bin/false\n");
	assert_string_not_equal(i1, i3);
	assert_int_equal(stat(base, &sb), 0);
	assert_int_equal(stat(i1, &si), 0);
	assert_true(si.st_size > sb.st_size);
	assert_int_equal(si.st_mode & 0777, 0644);
	/* the second archive holds /klab/job.conf */
	sh("tail -c %lld %s | (cd %s && busybox cpio -id 2>/dev/null) && cat %s/klab/job.conf > %s",
	   (long long)(si.st_size - sb.st_size), i1, dir, dir, out);
	assert_int_equal(read_file(out, 4096, &text, NULL), 0);
	assert_string_equal(text, "version 1\nargv /bin/true\n");
	free(text);
	free(out);
	free(base);
	free(i1);
	free(i2);
	free(i3);
	free(img_dir);
}

static void test_guestimg__perf_is_only_in_the_image_of_a_job_that_profiles(void **state)
{
	char *img_dir = image_dir("images5"), *base = NULL, *part = NULL, *again = NULL, *none = NULL;
	char *plain, *profiled, *list;
	unsigned profile = 1u << monitor_index("perf-profile");
	struct stat sb, sp, si;
	int hit = -1;

	(void)state;
	if (access("/usr/bin/perf", X_OK) < 0)
		skip();	/* the Debian package linux-perf */
	assert_int_equal(guestimg_base(img_dir, &base, &hit), 0);
	list = list_image(base);
	assert_null(strstr(list, "usr/bin/perf\n"));
	free(list);
	/* the default set runs no program: no part, the initrd as before */
	assert_int_equal(guestimg_programs(img_dir, NULL, NULL, monitor_default_set(), &none, &hit), 0);
	assert_null(none);
	plain = job_initrd(img_dir, base, NULL, "version 1\nargv /bin/true\n");
	/* perf-profile: perf and the libraries the base lacks, cached */
	assert_int_equal(guestimg_programs(img_dir, NULL, NULL, monitor_default_set() | profile, &part, &hit), 0);
	assert_non_null(part);
	assert_int_equal(hit, 0);
	list = list_image(part);
	assert_non_null(strstr(list, "usr/bin/perf\n"));
	assert_non_null(strstr(list, "libpython"));
	/* the base's files are not carried twice */
	assert_null(strstr(list, "\ninit\n"));
	assert_null(strstr(list, "usr/lib/klab/usemem\n"));
	free(list);
	assert_int_equal(guestimg_programs(img_dir, NULL, NULL, profile, &again, &hit), 0);
	assert_int_equal(hit, 1);
	assert_string_equal(part, again);
	/* base, then the part, then the job */
	profiled = job_initrd(img_dir, base, part, "version 1\nargv /bin/true\n");
	assert_string_not_equal(plain, profiled);
	assert_int_equal(stat(base, &sb), 0);
	assert_int_equal(stat(part, &sp), 0);
	assert_int_equal(stat(profiled, &si), 0);
	assert_true(si.st_size > sb.st_size + sp.st_size);
	print_message("initramfs: base %lld bytes, perf part %lld bytes\n", (long long)sb.st_size,
		      (long long)sp.st_size);
	free(base);
	free(part);
	free(again);
	free(plain);
	free(profiled);
	free(img_dir);
}

/* A job's suite and fs: choose its part: stress-ng with its libraries,
 * fio with mkfs.xfs; klab's own benchmark needs none. */
static void test_guestimg__programs_part_is_the_suites_and_the_file_systems(void **state)
{
	char *img_dir = image_dir("images6"), *part = NULL, *list;
	int hit = -1;

	(void)state;
	assert_int_equal(guestimg_programs(img_dir, "will-it-scale", NULL, monitor_default_set(), &part, &hit), 0);
	assert_null(part);
	assert_int_equal(guestimg_programs(img_dir, "stress-ng", NULL, monitor_default_set(), &part, &hit), 0);
	assert_non_null(part);
	list = list_image(part);
	assert_contains(list, "usr/bin/stress-ng\n");
	assert_contains(list, "libc.so.6\n");
	free(list);
	free(part);
	part = NULL;
	if (access("/usr/bin/fio", X_OK) < 0 || access("/usr/sbin/mkfs.xfs", X_OK) < 0)
		skip();	/* the Debian packages fio and xfsprogs */
	assert_int_equal(guestimg_programs(img_dir, "fio-basic", "xfs", monitor_default_set(), &part, &hit), 0);
	assert_non_null(part);
	list = list_image(part);
	assert_contains(list, "usr/bin/fio\n");
	assert_contains(list, "usr/sbin/mkfs.xfs\n");
	assert_null(strstr(list, "mkfs.ext4"));
	assert_null(strstr(list, "usr/bin/stress-ng\n"));
	free(list);
	free(part);
	/* a file system klab has no tool for */
	capture_stderr();
	assert_int_equal(guestimg_programs(img_dir, "fio-basic", "zfs", 0, &part, &hit), -1);
	free(captured_stderr());
	free(img_dir);
}

static void test_guestimg__kernel_must_be_a_bzimage(void **state)
{
	char *img_dir = image_dir("images4"), *fake = xstrfmt("%s/notakernel", dir), *out = NULL;

	(void)state;
	assert_int_equal(write_file_atomic(fake, "#!/bin/sh\n", 10), 0);
	assert_int_equal(guestimg_stage_kernel(img_dir, fake, &out), -1);
	assert_null(out);
	free(fake);
	free(img_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpio__newc_header_and_padding),
		cmocka_unit_test(test_guestimg__base_has_the_agent_and_klabs_own_benchmarks_only),
		cmocka_unit_test(test_guestimg__base_is_rebuilt_only_when_an_input_changes),
		cmocka_unit_test(test_guestimg__initrd_appends_the_job_part),
		cmocka_unit_test(test_guestimg__perf_is_only_in_the_image_of_a_job_that_profiles),
		cmocka_unit_test(test_guestimg__programs_part_is_the_suites_and_the_file_systems),
		cmocka_unit_test(test_guestimg__kernel_must_be_a_bzimage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
