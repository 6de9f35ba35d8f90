/* Unit tests of the pure parts of kernel builds: fragments and drift,
 * recipe ids and text, build-log scanning, make's output lines, the
 * tarball's .gitignore; which process group an interrupted build's marker
 * lets klab kill; what the config step reads, on small git repositories;
 * and kbuild_build whole against a fake make (log modes, the config step
 * skipped, the build directory inside the checkout). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/kbuild.h"
#include "kernel/kimage.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "kernel/tree.h"
#include "lab/gitrepo.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "util/run-command.h"
#include "helpers.h"

static char *write_tmp(const char *name, const char *text)
{
	char *p = xstrfmt("%s/%s", scratch_dir, name);
	assert_int_equal(write_file_atomic(p, text, strlen(text)), 0);
	return p;
}

static void test_kbuild__fragments_later_settings_win(void **state)
{
	struct kbuild_recipe r = { 0 };
	struct kconfig_setting *s;
	size_t nr;

	r.base = "tinyconfig";
	r.fragments = (char *[]){ write_tmp("a.config", "# comment\nCONFIG_A=y\nCONFIG_B=m\n\n# CONFIG_C is not set\n"),
				  write_tmp("b.config", "CONFIG_A=n\nCONFIG_D=\"str ing\"\n") };
	r.nr_fragments = 2;
	r.options = (char *[]){ "CONFIG_B=y" };
	r.nr_options = 1;
	assert_int_equal(kbuild_recipe_settings(&r, &s, &nr), 0);
	assert_int_equal(nr, 4);
	assert_string_equal(s[0].name, "CONFIG_A");
	assert_null(s[0].value);		/* =n: not set */
	assert_string_equal(s[1].name, "CONFIG_B");
	assert_string_equal(s[1].value, "y");	/* --config-option wins */
	assert_string_equal(s[1].origin, "--config-option");
	assert_string_equal(s[2].name, "CONFIG_C");
	assert_null(s[2].value);
	assert_string_equal(s[3].value, "\"str ing\"");
	assert_non_null(strstr(s[3].origin, "b.config:2"));
	kconfig_settings_release(s, nr);
	free(r.fragments[0]);
	free(r.fragments[1]);
}

static void test_kbuild__malformed_fragment_names_file_and_line(void **state)
{
	struct kbuild_recipe r = { 0 };
	struct kconfig_setting *s;
	size_t nr;

	r.base = "tinyconfig";
	r.fragments = (char *[]){ write_tmp("bad.config", "CONFIG_A=y\n\nFOO=bar\n") };
	r.nr_fragments = 1;
	assert_int_equal(kbuild_recipe_settings(&r, &s, &nr), -1);
	free(r.fragments[0]);
	r.nr_fragments = 0;
	r.options = (char *[]){ "KASAN=y" };
	r.nr_options = 1;
	assert_int_equal(kbuild_recipe_settings(&r, &s, &nr), -1);
}

static void test_kbuild__not_a_fragment_is_named_by_line_number_only(void **state)
{
	struct kbuild_recipe r = { 0 };
	struct kconfig_setting *s;
	size_t nr;
	char *want;

	(void)state;
	r.base = "tinyconfig";
	r.fragments = (char *[]){ write_tmp("secret.txt", "# ok\n\nroot:SECRET:0:0\n") };
	r.nr_fragments = 1;
	assert_int_equal(kbuild_recipe_settings(&r, &s, &nr), -1);
	want = xstrfmt("%s:3: expected", r.fragments[0]);
	assert_non_null(strstr(error_last(), want));
	assert_null(strstr(error_last(), "SECRET"));
	free(want);
	free(r.fragments[0]);
	/* a value that is not one Kconfig writes is no fragment line either */
	r.fragments = (char *[]){ write_tmp("semi.config", "CONFIG_A=y;rm -rf /\n") };
	assert_int_equal(kbuild_recipe_settings(&r, &s, &nr), -1);
	assert_null(strstr(error_last(), "rm -rf"));
	free(r.fragments[0]);
}

static void test_kbuild__config_option_values_are_strict(void **state)
{
	static const char *const good[] = {
		"CONFIG_X=y", "CONFIG_X=m", "CONFIG_X=n", "CONFIG_NR_CPUS=64", "CONFIG_X=-1", "CONFIG_X=0x1F",
		"CONFIG_CMDLINE=\"console=ttyS0 a;b\"", "CONFIG_S=\"q\\\"x\"", "# CONFIG_X is not set",
	};
	static const char *const bad[] = {
		"CONFIG_X=y;rm", "CONFIG_X=y m", "CONFIG_x=y", "CONFIG_=y", "CONFIG_X=", "CONFIG_X=\"open",
		"CONFIG_X=\"a\"b", "CONFIG_X=0x", "CONFIG_X=0xg", "CONFIG_X=-", "CONFIG_X=yes", "CONFIG_X=\"a\tb\"",
		"# CONFIG_x is not set", "X=y",
	};
	struct kbuild_recipe r = { 0 };
	struct kconfig_setting *s;
	size_t nr;

	(void)state;
	r.base = "tinyconfig";
	r.nr_options = 1;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		r.options = (char **)&good[i];
		if (kbuild_recipe_settings(&r, &s, &nr) < 0)
			fail_msg("refused: %s", good[i]);
		kconfig_settings_release(s, nr);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r.options = (char **)&bad[i];
		if (kbuild_recipe_settings(&r, &s, &nr) == 0)
			fail_msg("accepted: %s", bad[i]);
	}
}

static void test_kbuild__drift_reports_each_symbol_by_name(void **state)
{
	struct kconfig_setting s[] = {
		{ "CONFIG_SMP", "y", "f:1" },
		{ "CONFIG_KVM_INTEL", "y", "f:2" },
		{ "CONFIG_NR_CPUS", "64", "f:3" },
		{ "CONFIG_DEBUG", NULL, "f:4" },
	};
	const char *cfg = "CONFIG_SMP=y\nCONFIG_NR_CPUS=8\n# CONFIG_DEBUG is not set\n";
	struct strbuf r = STRBUF_INIT;

	assert_int_equal(kbuild_check_drift(cfg, s, 4, &r), 2);
	assert_non_null(strstr(r.buf, "CONFIG_KVM_INTEL: asked y (f:2), Kconfig dropped it"));
	assert_non_null(strstr(r.buf, "CONFIG_NR_CPUS: asked 64 (f:3), got 8"));
	assert_null(strstr(r.buf, "CONFIG_SMP"));
	assert_null(strstr(r.buf, "CONFIG_DEBUG"));
	strbuf_release(&r);
}

static void test_kbuild__recipe_id_depends_on_content_not_path(void **state)
{
	struct kbuild_recipe a = { 0 }, b = { 0 };
	char ia[41], ib[41];

	a.base = b.base = "tinyconfig";
	a.fragments = (char *[]){ write_tmp("x.config", "CONFIG_A=y\n") };
	b.fragments = (char *[]){ write_tmp("y.config", "CONFIG_A=y\n") };
	a.nr_fragments = b.nr_fragments = 1;
	assert_int_equal(kbuild_recipe_id(&a, ia), 0);
	assert_int_equal(kbuild_recipe_id(&b, ib), 0);
	assert_string_equal(ia, ib);
	free(b.fragments[0]);
	b.fragments[0] = write_tmp("y.config", "CONFIG_A=m\n");
	assert_int_equal(kbuild_recipe_id(&b, ib), 0);
	assert_string_not_equal(ia, ib);
	b.base = "defconfig";
	free(a.fragments[0]);
	free(b.fragments[0]);
}

static void test_kbuild__recipe_text_roundtrip(void **state)
{
	struct kbuild_recipe r = { 0 }, back;
	struct strbuf t = STRBUF_INIT, t2 = STRBUF_INIT;

	r.base = "defconfig";
	r.fragments = (char *[]){ "/x/a.config", "/y/b.config" };
	r.nr_fragments = 2;
	r.options = (char *[]){ "CONFIG_X=y" };
	r.nr_options = 1;
	r.allow_drift = 1;
	kbuild_recipe_to_text(&r, &t);
	assert_int_equal(kbuild_recipe_from_text(&back, t.buf), 0);
	kbuild_recipe_to_text(&back, &t2);
	assert_string_equal(t.buf, t2.buf);
	assert_int_equal(back.allow_drift, 1);
	kbuild_recipe_release(&back);
	assert_int_equal(kbuild_recipe_from_text(&back, "base tinyconfig\nbogus\n"), -1);
	strbuf_release(&t);
	strbuf_release(&t2);
}

/* kbuild_scan_log's excerpt of log (caller frees), its environment
 * failure flag checked against want_env. */
static char *scan_log(const char *log, int want_env)
{
	struct strbuf ex = STRBUF_INIT;
	int env;

	kbuild_scan_log(log, &ex, &env);
	assert_int_equal(env, want_env);
	return strbuf_detach(&ex, NULL);
}

/* scan_log(log, want_env)'s excerpt holds want. */
static void assert_excerpt(const char *log, int want_env, const char *want)
{
	char *ex = scan_log(log, want_env);

	assert_contains(ex, want);
	free(ex);
}

static void test_kbuild__scan_log_finds_compiler_errors(void **state)
{
	const char *log =
		"  CC      mm/mmap.o\n"
		"mm/mmap.c: In function 'foo':\n"
		"mm/mmap.c:123:5: error: expected ';' before '}' token\n"
		"mm/mmap.c:130:1: warning: unused\n"
		"make[2]: *** [scripts/Makefile.build:250: mm/mmap.o] Error 1\n";
	char *ex = scan_log(log, 0);

	assert_string_equal(ex, "mm/mmap.c:123:5: error: expected ';' before '}' token");
	free(ex);
}

static void test_kbuild__scan_log_finds_linker_errors(void **state)
{
	assert_excerpt("  LD      vmlinux\nld: mm/mmap.o: in function `x':\n"
		       "mmap.c:(.text+0x1): undefined reference to `nosuch'\n", 0, "undefined reference to `nosuch'");
}

static void test_kbuild__scan_log_tells_environment_failures(void **state)
{
	assert_excerpt("  CC      mm/mmap.o\n"
		       "mm/mmap.c:1:1: fatal error: error writing to /tmp/cc.s: No space left on device\n", 1,
		       "No space left on device");
	free(scan_log("/bin/sh: 1: ccache: not found\nmake: *** [x] Error 127\n", 1));
}

static void test_tree__strips_debian_ignore_everything_trailer(void **state)
{
	char text[] = "*.o\n/rust-project.json\n\n#\n# Debian packaging: ignore everything at the top level, since it isn't\n"
		      "# included in our repository\n#\n/*\n!/debian/\n";
	char plain[] = "*.o\n";

	assert_int_equal(tree_strip_debian_gitignore(text), 1);
	assert_string_equal(text, "*.o\n/rust-project.json\n\n");
	assert_int_equal(tree_strip_debian_gitignore(plain), 0);
}

/* A process in a group of its own that sleeps until killed. */
static pid_t spawn_group_leader(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	return pid;
}

/* 1 when pid is still running (not a zombie either). */
static int still_runs(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

static char *marker_for(pid_t pgid, long long start)
{
	char *text = xstrfmt("commit 0123\npid 1\npgid %d\nstart %lld\n", (int)pgid, start);
	char *p = write_tmp(".klab-building", text);

	free(text);
	return p;
}

static void test_kbuild__reap_spares_a_group_that_is_no_longer_make(void **state)
{
	pid_t pid = spawn_group_leader();
	long long start;
	char *m;

	usleep(20000);
	start = process_start_time(pid, NULL);
	assert_true(start > 0);
	/* the marker of a build whose group leader started at another time:
	 * the number now belongs to another process */
	m = marker_for(pid, start - 1);
	assert_int_equal(kbuild_reap_interrupted(m, "", scratch_dir), 0);
	assert_true(still_runs(pid));
	free(m);
	/* a marker of an older klab, without the start time: never acted on */
	{
		char *text = xstrfmt("commit 0123\npid 1\npgid %d\n", (int)pid);
		m = write_tmp(".klab-building", text);
		free(text);
	}
	assert_int_equal(kbuild_reap_interrupted(m, "", scratch_dir), 0);
	assert_true(still_runs(pid));
	free(m);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_kbuild__reap_kills_the_build_group_it_recorded(void **state)
{
	pid_t pid = spawn_group_leader();
	char *m;
	int status;

	usleep(20000);
	m = marker_for(pid, process_start_time(pid, NULL));
	assert_int_equal(kbuild_reap_interrupted(m, "", scratch_dir), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	free(m);
}

/* The state letter of a process (R, S, Z, ...), or 0 when it is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void test_kbuild__reap_kills_what_is_left_of_a_group_whose_leader_died(void **state)
{
	int fds[2];
	pid_t leader, left = 0;
	long long start;
	char *m;

	assert_int_equal(pipe(fds), 0);
	leader = fork();
	assert_true(leader >= 0);
	if (leader == 0) {
		pid_t c;
		setpgid(0, 0);
		c = fork();
		if (c == 0)
			for (;;)
				pause();
		if (write(fds[1], &c, sizeof(c)) != sizeof(c))
			_exit(1);
		for (;;)
			pause();
	}
	setpgid(leader, leader);
	assert_int_equal(read(fds[0], &left, sizeof(left)), sizeof(left));
	close(fds[0]);
	close(fds[1]);
	start = process_start_time(leader, NULL);
	assert_true(start > 0);
	/* the leader dies (as make's supervisor would with klab); a
	 * "compiler" stays in its group */
	kill(leader, SIGKILL);
	waitpid(leader, NULL, 0);
	assert_true(proc_state(left) != 0 && proc_state(left) != 'Z');
	m = marker_for(leader, start);
	assert_int_equal(kbuild_reap_interrupted(m, "", scratch_dir), 1);
	for (int i = 0; i < 50 && proc_state(left) && proc_state(left) != 'Z'; i++)
		usleep(20000);
	assert_true(proc_state(left) == 0 || proc_state(left) == 'Z');
	free(m);
}

/* A kernel another lab put in a shared store is this lab's build: found,
 * recorded (the next lookup is the lab's own row), never without the key. */
/* An identity for a stored kernel made by hand (its bzImage's hash). */
static void write_identity(const char *entry)
{
	struct kimage_identity id = { .payload = "arch/x86/boot/compressed/vmlinux.bin.gz", .payload_len = 6 };
	char *bz = xstrfmt("%s/bzImage", entry);

	assert_int_equal(sha256_file(bz, id.image_sha256), 0);
	memset(id.vmlinux_sha256, 'a', 64);
	assert_int_equal(kimage_identity_write(entry, &id), 0);
	free(bz);
}

static void add_artifact_store(const char *labdir, const char *store)
{
	char *conf = xstrfmt("%s/klab.conf", labdir), *text = NULL, *more;

	assert_int_equal(read_file(conf, 1 << 20, &text, NULL), 0);
	more = xstrfmt("%sartifact_store = %s\n", text, store);
	assert_int_equal(write_file_atomic(conf, more, strlen(more)), 0);
	free(text);
	free(more);
	free(conf);
}

static void test_kbuild__shared_store_entry_is_adopted_once_recorded(void **state)
{
	struct kbuild_recipe r = { 0 };
	struct kbuild_result res;
	struct lab lab;
	char id[41], *labdir = xstrfmt("%s/lab", scratch_dir), *store = xstrfmt("%s/store", scratch_dir), *entry, *conf;
	const char *tree = "0123456789abcdef0123456789abcdef01234567";
	int created;
	int64_t repo_id;

	r.base = "tinyconfig";
	assert_int_equal(kbuild_recipe_id(&r, id), 0);
	entry = xstrfmt("%s/%s-%s", store, tree, id);
	assert_int_equal(mkdir_p(entry, 0755), 0);
	{
		char *bz = xstrfmt("%s/bzImage", entry), *cfg = xstrfmt("%s/config", entry);
		assert_int_equal(write_file_atomic(bz, "kernel", 6), 0);
		assert_int_equal(write_file_atomic(cfg, "CONFIG_64BIT=y\n", 15), 0);
		free(bz);
		free(cfg);
	}
	/* an entry stored before klab verified images is not taken */
	assert_int_equal(lab_init(labdir, &created), 0);
	add_artifact_store(labdir, store);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	assert_int_equal(kbuild_find(&lab, repo_id, tree, tree, &r, id, &res), 0);
	kbuild_result_release(&res);
	lab_close(&lab);
	remove_tree(labdir);
	write_identity(entry);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	/* without artifact_store the entry is not this lab's */
	assert_int_equal(kbuild_find(&lab, repo_id, tree, tree, &r, id, &res), 0);
	kbuild_result_release(&res);
	lab_close(&lab);

	conf = xstrfmt("%s/klab.conf", labdir);
	add_artifact_store(labdir, store);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(kbuild_lookup(&lab, tree, id, &res), 0);
	kbuild_result_release(&res);
	assert_int_equal(kbuild_find(&lab, repo_id, tree, tree, &r, id, &res), 1);
	assert_int_equal(res.status, KBUILD_OK);
	assert_string_equal(res.artifact_dir, entry);
	assert_true(res.build_id > 0);
	kbuild_result_release(&res);
	/* recorded: the lab's own row answers now */
	assert_int_equal(kbuild_lookup(&lab, tree, id, &res), 1);
	assert_string_equal(res.artifact_dir, entry);
	kbuild_result_release(&res);
	lab_close(&lab);
	free(conf);
	free(entry);
	free(store);
	free(labdir);
}

static void test_kbuild__objects_counted_from_captured_make_output(void **state)
{
	char *path = data_path("kbuild/make-bzimage.txt"), *text;

	assert_int_equal(read_file(path, 1 << 20, &text, NULL), 0);
	/* 8 CC (with .s and [M]) and 3 AS lines; HOSTCC, AR, LD are not */
	assert_int_equal(kbuild_count_objects(text), 11);
	assert_int_equal(kbuild_line_kind("  HOSTCC  scripts/kconfig/conf.o"), KBUILD_LINE_OTHER);
	assert_int_equal(kbuild_line_kind("  CC [M]  fs/fuse/dev.o"), KBUILD_LINE_OBJECT);
	assert_int_equal(kbuild_line_kind("  LD      vmlinux.o"), KBUILD_LINE_LINK);
	assert_int_equal(kbuild_line_kind("  BUILD   arch/x86/boot/bzImage"), KBUILD_LINE_IMAGE);
	/* what a build run under `make -s` logged: kbuild silent, nothing
	 * to count (the "0 objects compiled" builds) */
	assert_int_equal(kbuild_count_objects("make[4]: warning: -j2 forced in submake: resetting jobserver mode.\n"), 0);
	free(text);
	free(path);
}

/* Run a Makefile that decides on silence as Linux 6.1's top Makefile
 * does, with klab's environment for make or without it; objects seen. */
static int objects_under_parent_silence(int with_fixed_env)
{
	static const char mk[] =
		"silence:=$(findstring s,$(firstword -$(MAKEFLAGS)))\n"
		"ifeq ($(silence),s)\nquiet=silent_\nelse ifeq ($(KBUILD_VERBOSE),1)\nquiet=\nelse\nquiet=quiet_\nendif\n"
		"all:\n"
		"\t@$(if $(filter quiet_,$(quiet)),echo '  CC      init/main.o',:)\n"
		"\t@$(if $(filter quiet_,$(quiet)),echo '  AS      arch/x86/entry/entry_64.o',:)\n";
	char *mkpath = write_tmp("Makefile.silence", mk), *out = xstrfmt("%s/make.out", scratch_dir), *text = NULL;
	const char *argv[] = { "make", "-f", mkpath, NULL };
	struct run_opts o = { .argv = argv, .output_path = out,
			      .env = with_fixed_env ? kbuild_make_env_fixed : NULL };
	struct run_result rr;
	int n;

	unlink(out);
	assert_int_equal(run_command(&o, &rr), 0);
	assert_int_equal(rr.status, RUN_EXITED);
	assert_int_equal(rr.exit_code, 0);
	assert_int_equal(read_file(out, 1 << 16, &text, NULL), 0);
	n = kbuild_count_objects(text);
	free(text);
	free(out);
	free(mkpath);
	return n;
}

static void test_kbuild__make_env_undoes_a_parent_makes_silence(void **state)
{
	char *saved = getenv("MAKEFLAGS") ? xstrdup(getenv("MAKEFLAGS")) : NULL;

	/* klab under `make -s check`: MAKEFLAGS=s reaches the kernel's make */
	setenv("MAKEFLAGS", "s", 1);
	assert_int_equal(objects_under_parent_silence(0), 0);
	assert_int_equal(objects_under_parent_silence(1), 2);
	setenv("MAKEFLAGS", "", 1);
	setenv("KBUILD_VERBOSE", "1", 1);
	assert_int_equal(objects_under_parent_silence(0), 0);
	assert_int_equal(objects_under_parent_silence(1), 2);
	unsetenv("KBUILD_VERBOSE");
	if (saved)
		setenv("MAKEFLAGS", saved, 1);
	else
		unsetenv("MAKEFLAGS");
	free(saved);
}

/* ---- kbuild_build against a fake make --------------------------------- */

/* The fake make's bzImage, as kbuild lays one out: a compressed kernel
 * (vmlinux.bin.gz, 256 bytes of $FAKE_KERNEL), the piggy.S that pulls it
 * in with .incbin, a vmlinux, and an image whose setup header points at
 * the payload (boot protocol 2.15).  With FAKE_MAKE_CC set the payload
 * is what "$CC -c piggy.S" put into piggy.o, as kbuild compiles it
 * (-Wp,-MMD: the line on which ccache's depend mode works; real ccache and gcc: the
 * case a cache got wrong); with FAKE_MAKE_STALE another kernel's. */
static const char fake_mkimage[] =
	"import os, subprocess, sys\n"
	"O, cc = sys.argv[1], sys.argv[2]\n"
	"k = os.environ.get('FAKE_KERNEL', 'kernel')\n"
	"c = O + '/arch/x86/boot/compressed'\n"
	"os.makedirs(c, exist_ok=True)\n"
	"blob = (k * 256).encode()[:256]\n"
	"open(c + '/vmlinux.bin.gz', 'wb').write(blob)\n"
	"open(O + '/vmlinux', 'wb').write(b'vmlinux of ' + k.encode())\n"
	"open(c + '/piggy.S', 'w').write('.section .rodata\\nz_input_len = %d\\ninput_data:\\n'\n"
	"    '.incbin \"arch/x86/boot/compressed/vmlinux.bin.gz\"\\n' % len(blob))\n"
	"payload = blob\n"
	"if os.environ.get('FAKE_MAKE_CC'):\n"
	"    subprocess.check_call(cc.split() + ['-Wp,-MMD,arch/x86/boot/compressed/.piggy.o.d',\n"
	"        '-c', 'arch/x86/boot/compressed/piggy.S', '-o',\n"
	"        'arch/x86/boot/compressed/piggy.o'], cwd=O)\n"
	"    subprocess.check_call(['objcopy', '-O', 'binary', '-j', '.rodata',\n"
	"        c + '/piggy.o', c + '/payload'])\n"
	"    payload = open(c + '/payload', 'rb').read()\n"
	"if os.environ.get('FAKE_MAKE_STALE'):\n"
	"    payload = b'x' * len(blob)\n"
	"img = bytearray(1024 + 16)\n"
	"img[0x1f1] = 1\n"
	"img[0x202:0x206] = b'HdrS'\n"
	"img[0x206:0x208] = (0x020f).to_bytes(2, 'little')\n"
	"img[0x248:0x24c] = (16).to_bytes(4, 'little')\n"
	"img[0x24c:0x250] = len(payload).to_bytes(4, 'little')\n"
	"open(O + '/arch/x86/boot/bzImage', 'wb').write(bytes(img) + payload)\n";

/* A `make` first on PATH that does what klab asks of kbuild, in a few
 * files: a .config for the base, CONFIG_64BIT forced on by olddefconfig
 * (a compiler's error instead for the target FAKE_MAKE_FAIL names, with
 * the path a build directory in the checkout gives), an image and two
 * "  CC" lines for bzImage, and one object's .cmd file.  Each call's targets go to FAKE_MAKE_LOG. */
static char *saved_path;

static void fake_make_install(void)
{
	static const char script[] =
		"#!/bin/sh\n"
		"for a; do case $a in O=*) O=${a#O=};; CC=*) CC=${a#CC=};; esac; done\n"
		"echo \"$*\" >> \"$FAKE_MAKE_LOG\"\n"
		"for a; do\n"
		"  [ \"$a\" = bzImage ] && [ -n \"$FAKE_MAKE_SPAM\" ] && yes '../mm/x.c:1:1: warning: spam' | head -n \"$FAKE_MAKE_SPAM\"\n"
		"  [ \"$a\" = \"$FAKE_MAKE_FAIL\" ] && { echo \"../kernel/fork.c:12:5: error: $a failed\"; exit 2; }\n"
		"  case $a in\n"
		"  tinyconfig) echo 'CONFIG_64BIT=y' > \"$O/.config\";;\n"
		"  olddefconfig) sed -i 's/^# CONFIG_64BIT is not set$/CONFIG_64BIT=y/' \"$O/.config\";;\n"
		"  bzImage) mkdir -p \"$O/arch/x86/boot\"; echo '  CC      init/main.o'; echo '  CC      mm/mmap.o';\n"
		"    python3 \"$FAKE_MAKE_DIR/mkimage.py\" \"$O\" \"$CC\" || exit 2; echo map > \"$O/System.map\";\n"
		"    mkdir -p \"$O/init\"; printf 'source_init/main.o := ../init/main.c\\n\\ndeps_init/main.o := "
		"\\\\\\n  ../include/linux/init.h \\\\\\n' > \"$O/init/.main.o.cmd\";;\n"
		"  esac\n"
		"done\n";
	char *bin = xstrfmt("%s/bin", scratch_dir), *make = xstrfmt("%s/make", bin), *path;
	char *log = xstrfmt("%s/make.log", scratch_dir), *mkimage = xstrfmt("%s/mkimage.py", bin);

	assert_int_equal(mkdir_p(bin, 0755), 0);
	assert_int_equal(write_file_atomic(make, script, strlen(script)), 0);
	assert_int_equal(write_file_atomic(mkimage, fake_mkimage, strlen(fake_mkimage)), 0);
	setenv("FAKE_MAKE_DIR", bin, 1);
	free(mkimage);
	assert_int_equal(chmod(make, 0755), 0);
	saved_path = xstrdup(getenv("PATH"));
	path = xstrfmt("%s:%s", bin, saved_path);
	setenv("PATH", path, 1);
	setenv("FAKE_MAKE_LOG", log, 1);
	unlink(log);
	free(path);
	free(make);
	free(bin);
	free(log);
}

static void fake_make_remove(void)
{
	setenv("PATH", saved_path, 1);
	free(saved_path);
	unsetenv("FAKE_MAKE_LOG");
	unsetenv("FAKE_MAKE_FAIL");
	unsetenv("FAKE_MAKE_DIR");
	unsetenv("FAKE_MAKE_CC");
	unsetenv("FAKE_MAKE_STALE");
	unsetenv("FAKE_KERNEL");
}

/* How many of the fake make's calls named target. */
static int fake_make_calls(const char *target)
{
	char *log = xstrfmt("%s/make.log", scratch_dir), *text = NULL;
	int n = 0;

	if (read_file(log, 1 << 20, &text, NULL) == 0)
		for (const char *p = text; (p = strstr(p, target)); p += strlen(target))
			n++;
	free(text);
	free(log);
	return n;
}

/* A request to build src of repo_id in lab with recipe r (id: its id), on
 * one CPU, quietly; no commit yet. */
static void quiet_request(struct kbuild_request *req, struct lab *lab, int64_t repo_id, const char *src,
			  const struct kbuild_recipe *r, char id[41])
{
	assert_int_equal(kbuild_recipe_id(r, id), 0);
	*req = (struct kbuild_request){ .lab = lab, .repo_id = repo_id, .src_dir = src, .recipe = r, .recipe_id = id,
					.jobs = 1, .progress = PROGRESS_QUIET };
}

static void fake_build(struct lab *lab, int64_t repo_id, const char *src, const char *tree,
		       struct kbuild_result *res)
{
	struct kbuild_recipe r = { .base = "tinyconfig" };
	struct kbuild_request req;
	char id[41];

	quiet_request(&req, lab, repo_id, src, &r, id);
	req.commit = tree;
	req.tree = tree;
	assert_int_equal(kbuild_build(&req, res), 0);
}

static int is_dir_for_test(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static mode_t file_mode(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_mode & 07777;
}

static void test_kbuild__build_logs_are_private(void **state)
{
	struct kbuild_result res;
	struct lab lab;
	char *labdir = xstrfmt("%s/lab-modes", scratch_dir), *src = xstrfmt("%s/src-modes", scratch_dir);
	int created;
	int64_t repo_id;
	mode_t old = umask(022);

	fake_make_install();
	assert_int_equal(mkdir_p(src, 0755), 0);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	fake_build(&lab, repo_id, src, "1111111111111111111111111111111111111111", &res);
	assert_int_equal(res.status, KBUILD_OK);
	assert_int_equal(res.objects, 2);
	assert_int_equal(fake_make_calls("bzImage"), 1);
	assert_int_equal(file_mode(res.log), 0600);		/* the store's copy */
	{
		/* the kernel's source set, from its .cmd files, beside its image */
		char *list = xstrfmt("%s/sources.txt", res.artifact_dir), *text = NULL;

		assert_int_equal(read_file(list, 1 << 20, &text, NULL), 0);
		assert_string_equal(text, "include/linux/init.h\ninit/main.c\n");
		free(text);
		free(list);
	}
	kbuild_result_release(&res);
	/* a config step that fails leaves its log in the build directory */
	setenv("FAKE_MAKE_FAIL", "olddefconfig", 1);
	fake_build(&lab, repo_id, src, "2222222222222222222222222222222222222222", &res);
	assert_int_equal(res.status, KBUILD_FAILED);
	assert_non_null(res.log);
	assert_int_equal(file_mode(res.log), 0600);
	/* named by its path in the repository, not the build dir's "../" */
	assert_string_equal(res.excerpt, "kernel/fork.c:12:5: error: olddefconfig failed");
	kbuild_result_release(&res);
	lab_close(&lab);
	fake_make_remove();
	umask(old);
	free(src);
	free(labdir);
}

/* 1 when the file holds the bytes of needle. */
static int file_holds(const char *path, const char *needle)
{
	char *text = NULL;
	size_t len = 0;
	int found;

	assert_int_equal(read_file(path, 1 << 20, &text, &len), 0);
	found = memmem(text, len, needle, strlen(needle)) != NULL;
	free(text);
	return found;
}

/* A build whose output is over log_limit keeps its log's head and tail
 * (the store's copy too), and its error excerpt is read before the cut. */
static void test_kbuild__build_log_is_kept_under_log_limit(void **state)
{
	struct kbuild_result res;
	struct lab lab;
	char *labdir = xstrfmt("%s/lab-loglimit", scratch_dir), *src = xstrfmt("%s/src-loglimit", scratch_dir);
	int created, hold;
	int64_t repo_id;
	struct stat st;

	fake_make_install();
	assert_int_equal(mkdir_p(src, 0755), 0);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	lab.log_limit = 64 << 10;
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	setenv("FAKE_MAKE_SPAM", "20000", 1);	/* 20000 warnings: about 680 KB */
	hold = error_hold(1);
	fake_build(&lab, repo_id, src, "3333333333333333333333333333333333333333", &res);
	assert_int_equal(res.status, KBUILD_OK);
	assert_int_equal(stat(res.log, &st), 0);
	assert_true(st.st_size <= 64 << 10);
	assert_true(file_holds(res.log, "bytes of this log cut here"));
	assert_true(file_holds(res.log, "CC      mm/mmap.o"));	/* the tail */
	kbuild_result_release(&res);
	setenv("FAKE_MAKE_FAIL", "bzImage", 1);
	fake_build(&lab, repo_id, src, "4444444444444444444444444444444444444444", &res);
	assert_int_equal(res.status, KBUILD_FAILED);
	assert_string_equal(res.excerpt, "kernel/fork.c:12:5: error: bzImage failed");
	assert_int_equal(stat(res.log, &st), 0);
	assert_true(st.st_size <= 64 << 10);
	kbuild_result_release(&res);
	error_hold(hold);
	unsetenv("FAKE_MAKE_FAIL");
	unsetenv("FAKE_MAKE_SPAM");
	lab_close(&lab);
	fake_make_remove();
	free(src);
	free(labdir);
}

static void test_kbuild__image_payload_is_checked_after_every_build(void **state)
{
	struct kbuild_result res;
	struct kimage_identity id;
	struct lab lab;
	char *labdir = xstrfmt("%s/lab-payload", scratch_dir), *src = xstrfmt("%s/src-payload", scratch_dir);
	char *entry, rid[41];
	struct kbuild_recipe r = { .base = "tinyconfig" };
	int created;
	int64_t repo_id;

	fake_make_install();
	assert_int_equal(mkdir_p(src, 0755), 0);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	setenv("FAKE_KERNEL", "kernel-A", 1);
	fake_build(&lab, repo_id, src, "5555555555555555555555555555555555555555", &res);
	assert_int_equal(res.status, KBUILD_OK);
	/* the identity beside the artifact: the image's and vmlinux's hashes */
	assert_int_equal(kimage_identity_read(res.artifact_dir, &id), 0);
	assert_string_equal(id.payload, "arch/x86/boot/compressed/vmlinux.bin.gz");
	assert_int_equal(id.payload_len, 256);
	assert_string_equal(res.vmlinux_sha256, id.vmlinux_sha256);
	kbuild_result_release(&res);

	/* an image whose payload is not the build's kernel is no artifact */
	setenv("FAKE_KERNEL", "kernel-B", 1);
	setenv("FAKE_MAKE_STALE", "1", 1);
	fake_build(&lab, repo_id, src, "6666666666666666666666666666666666666666", &res);
	assert_int_equal(res.status, KBUILD_ENV_FAILED);
	assert_string_equal(res.message, "the image does not carry this build's kernel");
	assert_non_null(strstr(res.excerpt, "piggy.o holds another kernel"));
	assert_null(res.artifact_dir);
	assert_int_equal(kbuild_recipe_id(&r, rid), 0);
	entry = xstrfmt("%s/artifacts/6666666666666666666666666666666666666666-%s", labdir, rid);
	assert_false(is_dir_for_test(entry));
	kbuild_result_release(&res);
	/* and its row says env-failed: the next ask builds again */
	assert_int_equal(kbuild_lookup(&lab, "6666666666666666666666666666666666666666", rid, &res), 0);
	kbuild_result_release(&res);
	lab_close(&lab);
	fake_make_remove();
	free(entry);
	free(src);
	free(labdir);
}

static void test_kbuild__stored_kernel_is_checked_before_use(void **state)
{
	struct kbuild_result res;
	struct lab lab;
	char *labdir = xstrfmt("%s/lab-damaged", scratch_dir), *src = xstrfmt("%s/src-damaged", scratch_dir);
	char *dir, *bz, *ident, rid[41], *why = NULL;
	const char *tree = "7777777777777777777777777777777777777777";
	struct kbuild_recipe r = { .base = "tinyconfig" };
	int created;
	int64_t repo_id;

	fake_make_install();
	assert_int_equal(mkdir_p(src, 0755), 0);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	fake_build(&lab, repo_id, src, tree, &res);
	assert_int_equal(res.status, KBUILD_OK);
	dir = xstrdup(res.artifact_dir);
	bz = xstrdup(res.bzimage);
	kbuild_result_release(&res);
	assert_int_equal(kbuild_recipe_id(&r, rid), 0);
	assert_int_equal(kbuild_lookup(&lab, tree, rid, &res), 1);
	kbuild_result_release(&res);
	assert_int_equal(kimage_check_artifact(dir, &why), 0);

	/* one byte of the stored image changed: damaged, built again */
	sh("printf 'Z' | dd of='%s' bs=1 seek=1100 conv=notrunc 2>/dev/null", bz);
	assert_int_equal(kimage_check_artifact(dir, &why), 2);
	assert_non_null(strstr(why, "sha256"));
	free(why);
	assert_int_equal(kbuild_lookup(&lab, tree, rid, &res), 0);
	kbuild_result_release(&res);

	/* no identity: stored before klab verified images, built again */
	ident = xstrfmt("%s/" KIMAGE_IDENTITY_FILE, dir);
	assert_int_equal(unlink(ident), 0);
	assert_int_equal(kimage_check_artifact(dir, &why), 1);
	assert_int_equal(kbuild_lookup(&lab, tree, rid, &res), 0);
	kbuild_result_release(&res);
	/* the rebuild replaces the entry with a verified one */
	fake_build(&lab, repo_id, src, tree, &res);
	assert_int_equal(res.status, KBUILD_OK);
	assert_int_equal(kimage_check_artifact(res.artifact_dir, &why), 0);
	kbuild_result_release(&res);
	lab_close(&lab);
	fake_make_remove();
	FREE_MANY(dir, bz, ident, src, labdir);
}

/* Two builds in one build directory whose compressed kernels differ in
 * their bytes, not their size, compiled with klab's environment, real
 * ccache and gcc: piggy.o must hold each build's own kernel. */
static void incbin_builds(const char *name, const char *shim_dir, struct kbuild_result res[2])
{
	struct lab lab;
	char *labdir = xstrfmt("%s/lab-%s", scratch_dir, name), *src = xstrfmt("%s/src-%s", scratch_dir, name);
	int created;
	int64_t repo_id;

	setenv("KLAB_SHIM_DIR", shim_dir, 1);
	setenv("FAKE_MAKE_CC", "1", 1);
	assert_int_equal(mkdir_p(src, 0755), 0);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	setenv("FAKE_KERNEL", "kernel-A", 1);
	fake_build(&lab, repo_id, src, "8888888888888888888888888888888888888888", &res[0]);
	setenv("FAKE_KERNEL", "kernel-B", 1);
	fake_build(&lab, repo_id, src, "9999999999999999999999999999999999999999", &res[1]);
	lab_close(&lab);
	unsetenv("KLAB_SHIM_DIR");
	free(src);
	free(labdir);
}

static void test_kbuild__incbin_objects_never_come_from_ccache(void **state)
{
	struct kbuild_result res[2];
	char *shim = xstrfmt("%s/orchestrator/shim", KLAB_ABS_BUILDDIR);
	char *plain = xstrfmt("%s/plain-ccache", scratch_dir), *real = NULL;

	fake_make_install();
	/* klab's environment: depend mode, its shim first in make's PATH */
	incbin_builds("shim", shim, res);
	assert_int_equal(res[0].status, KBUILD_OK);
	assert_int_equal(res[1].status, KBUILD_OK);
	assert_true(file_holds(res[0].bzimage, "kernel-Akernel-A"));
	assert_true(file_holds(res[1].bzimage, "kernel-Bkernel-B"));
	assert_false(file_holds(res[1].bzimage, "kernel-A"));
	kbuild_result_release(&res[0]);
	kbuild_result_release(&res[1]);

	/* klab without its shim: ccache in preprocessor mode only, still right */
	incbin_builds("noshim", "/nonexistent", res);
	assert_int_equal(res[1].status, KBUILD_OK);
	assert_true(file_holds(res[1].bzimage, "kernel-Bkernel-B"));
	kbuild_result_release(&res[0]);
	kbuild_result_release(&res[1]);

	/* Fault injected, named: a "shim" that is plain ccache, i.e. klab's
	 * builds before the fix.  ccache 4.7's depend mode hands back the
	 * first piggy.o, and the check after the build refuses the image. */
	assert_int_equal(find_executable("ccache", &real), 1);
	assert_int_equal(mkdir_p(plain, 0755), 0);
	sh("ln -sf '%s' '%s/ccache'", real, plain);
	incbin_builds("plain", plain, res);
	assert_int_equal(res[0].status, KBUILD_OK);
	assert_int_equal(res[1].status, KBUILD_ENV_FAILED);
	assert_non_null(strstr(res[1].excerpt, "piggy.o holds another kernel"));
	kbuild_result_release(&res[0]);
	kbuild_result_release(&res[1]);
	fake_make_remove();
	FREE_MANY(shim, plain, real);
}

/* ---- what the config step reads, on real repositories ----------------- */

/* A repository with a few files of a kernel tree, one commit. */
static char *small_repo(const char *name)
{
	char *repo = xstrfmt("%s/%s", scratch_dir, name);

	sh("git init -q '%s' && cd '%s' && git config user.email t@t && git config user.name t && "
	   "mkdir -p mm arch/x86/configs arch/x86/kernel kernel/configs scripts/kconfig drivers/net Documentation && "
	   "echo 'config MMU' > mm/Kconfig && echo 'int x;' > mm/mmap.c && echo 'obj-y += mmap.o' > mm/Makefile && "
	   "echo 'CONFIG_64BIT=y' > arch/x86/configs/tiny.config && echo 'int y;' > arch/x86/kernel/setup.c && "
	   "echo 'CONFIG_NOHIGHMEM=y' > kernel/configs/tiny.config && echo 'int c;' > scripts/kconfig/conf.c && "
	   "echo 'obj-y += net/' > drivers/Kbuild && echo 'int n;' > drivers/net/e1000.c && "
	   "echo 'text' > Documentation/mm.rst && echo 'VERSION = 6' > Makefile && "
	   "git add -A && git commit -qm import", repo, repo);
	return repo;
}

static void head_hex(const char *repo, char hex[41])
{
	char *out = xstrfmt("%s/head.txt", scratch_dir), *text = NULL;

	sh("git -C '%s' rev-parse HEAD > '%s'", repo, out);
	assert_int_equal(read_file(out, 100, &text, NULL), 0);
	assert_true(strlen(text) >= 40);
	memcpy(hex, text, 40);
	hex[40] = '\0';
	free(text);
	free(out);
}

/* 1 when the commit made by `change` (shell, in the repository) touches
 * what the config step reads. */
static int change_feeds_config(const char *repo_dir, const char *change)
{
	struct gitrepo *repo;
	char a[41], b[41];
	int rc;

	head_hex(repo_dir, a);
	sh("cd '%s' && %s && git add -A && git commit -qm change", repo_dir, change);
	head_hex(repo_dir, b);
	assert_int_equal(gitrepo_open(&repo, repo_dir), 0);
	rc = kbuild_config_inputs_changed(repo, a, b);
	assert_int_equal(kbuild_config_inputs_changed(repo, b, a), rc);	/* either way */
	assert_int_equal(kbuild_config_inputs_changed(repo, b, b), 0);
	gitrepo_free(repo);
	return rc;
}

static void test_kbuild__config_inputs_are_kconfig_makefiles_scripts_and_configs(void **state)
{
	char *repo = small_repo("repo-config-inputs");

	/* what a tinyconfig + olddefconfig never reads */
	assert_int_equal(change_feeds_config(repo, "echo 'int x, z;' > mm/mmap.c"), 0);
	assert_int_equal(change_feeds_config(repo, "echo 'int y2;' >> arch/x86/kernel/setup.c && "
					     "echo 'int n2;' >> drivers/net/e1000.c"), 0);
	assert_int_equal(change_feeds_config(repo, "echo more >> Documentation/mm.rst && mkdir -p configs && "
					     "echo x > configs/notes"), 0);
	/* what it reads, changed, added, removed or renamed */
	assert_int_equal(change_feeds_config(repo, "echo 'config THP' >> mm/Kconfig"), 1);
	assert_int_equal(change_feeds_config(repo, "echo 'config X' > mm/Kconfig.debug"), 1);
	assert_int_equal(change_feeds_config(repo, "echo 'obj-y += x.o' >> mm/Makefile"), 1);
	assert_int_equal(change_feeds_config(repo, "echo 'PATCHLEVEL = 1' >> Makefile"), 1);
	assert_int_equal(change_feeds_config(repo, "git rm -q drivers/Kbuild"), 1);
	assert_int_equal(change_feeds_config(repo, "echo 'int d;' >> scripts/kconfig/conf.c"), 1);
	assert_int_equal(change_feeds_config(repo, "echo 'CONFIG_SMP=y' >> arch/x86/configs/tiny.config"), 1);
	assert_int_equal(change_feeds_config(repo, "git mv kernel/configs/tiny.config kernel/configs/small.config"), 1);
	assert_int_equal(change_feeds_config(repo, "git mv mm/Kconfig mm/Kconfig.mm"), 1);
	/* a commit the repository does not have: an error, never "unchanged" */
	{
		struct gitrepo *r;
		char h[41];
		int hold;

		head_hex(repo, h);
		assert_int_equal(gitrepo_open(&r, repo), 0);
		hold = error_hold(1);
		assert_int_equal(kbuild_config_inputs_changed(r, "0123456789abcdef0123456789abcdef01234567", h), -1);
		error_hold(hold);
		gitrepo_free(r);
	}
	assert_true(kbuild_path_feeds_config("arch/arm64/configs/defconfig"));
	assert_false(kbuild_path_feeds_config("arch/x86/configs"));	/* a file named so */
	assert_false(kbuild_path_feeds_config("tools/perf/util/config.c"));
	assert_true(kbuild_path_feeds_config("tools/perf/Makefile.perf"));
	free(repo);
}

/* Commit `change` (shell, in src; none: build HEAD as it is), then build
 * that commit (hex) with req. */
static void build_change(struct kbuild_request *req, const char *src, const char *change, char hex[41],
			 struct kbuild_result *res)
{
	if (change)
		sh("cd '%s' && %s && git commit -qam change", src, change);
	head_hex(src, hex);
	req->commit = req->tree = hex;
	assert_int_equal(kbuild_build(req, res), 0);
}

/* build_change, which must come out status with the .config of the build
 * of config_from ("": configured afresh); the config step has then run
 * olddefconfig times in all.  res is the caller's to look at and release. */
static void rebuild(struct kbuild_request *req, const char *src, const char *change, char hex[41],
		    enum kbuild_status status, const char *config_from, int olddefconfig, struct kbuild_result *res)
{
	build_change(req, src, change, hex, res);
	assert_int_equal(res->status, status);
	assert_string_equal(res->config_from, config_from);
	assert_int_equal(fake_make_calls("olddefconfig"), olddefconfig);
}

/* Consecutive builds in one build directory: the config step runs for the
 * first commit and for one that changes a Kconfig file, not for one that
 * changes only a .c file; the reused .config is still drift-checked. */
static void test_kbuild__config_step_skipped_when_nothing_it_reads_changed(void **state)
{
	struct kbuild_result res;
	struct lab lab;
	struct gitrepo *repo;
	char *labdir = xstrfmt("%s/lab-reuse", scratch_dir), *src = small_repo("repo-reuse"), c1[41], c2[41], c3[41];
	struct kbuild_recipe r = { .base = "tinyconfig" };
	struct kbuild_request req;
	char id[41];
	int created;
	int64_t repo_id;

	fake_make_install();
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	assert_int_equal(db_repo_id(lab.db, src, &repo_id), 0);
	assert_int_equal(gitrepo_open(&repo, src), 0);
	quiet_request(&req, &lab, repo_id, src, &r, id);
	req.repo = repo;

	rebuild(&req, src, NULL, c1, KBUILD_OK, "", 1, &res);
	kbuild_result_release(&res);

	rebuild(&req, src, "echo 'int x2;' >> mm/mmap.c", c2, KBUILD_OK, c1, 1, &res);
	assert_contains(res.message, "reused");
	kbuild_result_release(&res);
	assert_int_equal(fake_make_calls("tinyconfig"), 1);
	assert_int_equal(fake_make_calls("bzImage"), 2);

	rebuild(&req, src, "echo 'config THP' >> mm/Kconfig", c3, KBUILD_OK, "", 2, &res);
	kbuild_result_release(&res);

	/* a .config rewritten behind klab's back is not taken for the one
	 * klab made */
	{
		char *bd = kbuild_build_dir(src, id), *cfg = xstrfmt("%s/.config", bd);

		sh("echo '# edited' >> '%s'", cfg);
		rebuild(&req, src, "echo 'int x4;' >> mm/mmap.c", c2, KBUILD_OK, "", 3, &res);
		kbuild_result_release(&res);
		free(cfg);
		free(bd);
	}

	/* the drift check holds for a reused .config: asked CONFIG_64BIT=n,
	 * the fake config has y */
	r.options = (char *[]){ "CONFIG_64BIT=n" };
	r.nr_options = 1;
	{
		char id2[41];

		assert_int_equal(kbuild_recipe_id(&r, id2), 0);
		req.recipe_id = id2;
		/* a new recipe: its own directory, configured */
		assert_int_equal(kbuild_build(&req, &res), 0);
		assert_int_equal(res.status, KBUILD_DRIFT);
		kbuild_result_release(&res);
		assert_int_equal(fake_make_calls("olddefconfig"), 4);
		rebuild(&req, src, "echo 'int x5;' >> mm/mmap.c", c3, KBUILD_DRIFT, c2, 4, &res);
		assert_contains(res.excerpt, "CONFIG_64BIT");
		kbuild_result_release(&res);
	}
	gitrepo_free(repo);
	lab_close(&lab);
	fake_make_remove();
	free(src);
	free(labdir);
}

/* The build directory is a direct subdirectory of the checkout (kbuild's
 * srctree is then ".."), and the make command lines of two checkouts
 * differ in nothing but -C and O=: what ccache sees is the same. */
static void test_kbuild__build_dir_in_checkout_makes_compile_lines_repository_free(void **state)
{
	struct kbuild_result res;
	struct lab lab;
	char *labdir = xstrfmt("%s/lab-layout", scratch_dir), *src[2], *text = NULL, *line[2] = { NULL, NULL };
	char *log = xstrfmt("%s/make.log", scratch_dir);
	int created;
	int64_t repo_id[2];

	fake_make_install();
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	for (int i = 0; i < 2; i++) {
		char *repo = xstrfmt("/nonexistent/repo-%d", i), *bd, id[41];
		struct kbuild_recipe r = { .base = "tinyconfig" };

		src[i] = xstrfmt("%s/worktrees/repo-%d", labdir, i + 1);
		assert_int_equal(mkdir_p(src[i], 0700), 0);
		assert_int_equal(db_repo_id(lab.db, repo, &repo_id[i]), 0);
		unlink(log);
		fake_build(&lab, repo_id[i], src[i], i ? "4444444444444444444444444444444444444444"
							: "3333333333333333333333333333333333333333", &res);
		assert_int_equal(res.status, KBUILD_OK);
		assert_int_equal(kbuild_recipe_id(&r, id), 0);
		bd = kbuild_build_dir(src[i], id);
		assert_int_equal(strncmp(bd, src[i], strlen(src[i])), 0);
		assert_null(strchr(bd + strlen(src[i]) + 1, '/'));
		assert_true(is_dir_for_test(bd));
		assert_int_equal(read_file(log, 1 << 16, &text, NULL), 0);
		/* every make call, the checkout's path written as SRC */
		{
			struct strbuf sb = STRBUF_INIT;
			const char *p = text, *hit;
			char *o = xstrfmt("O=%s/" KBUILD_DIR_PREFIX, src[i]);

			assert_non_null(strstr(text, o));	/* directly in the checkout */
			while ((hit = strstr(p, src[i]))) {
				strbuf_add(&sb, p, (size_t)(hit - p));
				strbuf_addstr(&sb, "SRC");
				p = hit + strlen(src[i]);
			}
			strbuf_addstr(&sb, p);
			line[i] = strbuf_detach(&sb, NULL);
			free(o);
		}
		kbuild_result_release(&res);
		free(text);
		free(bd);
		free(repo);
	}
	assert_string_equal(line[0], line[1]);
	{
		/* ccache leaves the directory it runs in out of its hash */
		char *cmd = xstrfmt("grep -q 'CCACHE_NOHASHDIR=1' %s/artifacts/*/build.log", labdir);

		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
	lab_close(&lab);
	fake_make_remove();
	for (int i = 0; i < 2; i++) {
		free(src[i]);
		free(line[i]);
	}
	free(log);
	free(labdir);
}

/* A build directory in klab's worktree is no stray file: a checkout of
 * the next commit keeps it (a tree without the kernel's ".*" ignore). */
static void test_kbuild__build_dir_survives_checkouts_of_the_worktree(void **state)
{
	struct gitrepo *repo;
	struct worktree *wt;
	char *src = small_repo("repo-wt"), *wtdir = xstrfmt("%s/wt-1", scratch_dir), *cfg, c1[41], c2[41];

	head_hex(src, c1);
	sh("cd '%s' && echo 'int w;' >> mm/mmap.c && git commit -qam w", src);
	head_hex(src, c2);
	assert_int_equal(gitrepo_open(&repo, src), 0);
	assert_int_equal(worktree_open(&wt, repo, wtdir), 0);
	assert_int_equal(worktree_checkout(wt, c1), 0);
	cfg = xstrfmt("%s/" KBUILD_DIR_PREFIX "0123456789ab/.config", wtdir);
	sh("mkdir -p \"$(dirname '%s')\" && echo CONFIG_64BIT=y > '%s'", cfg, cfg);
	assert_int_equal(worktree_checkout(wt, c2), 0);
	assert_int_equal(access(cfg, F_OK), 0);
	worktree_free(wt);
	/* opened again: the exclude line is not added twice */
	assert_int_equal(worktree_open(&wt, repo, wtdir), 0);
	sh("test \"$(grep -c klab-build '%s/.git/info/exclude')\" = 1", wtdir);
	assert_int_equal(worktree_checkout(wt, c1), 0);
	assert_int_equal(access(cfg, F_OK), 0);
	worktree_free(wt);
	gitrepo_free(repo);
	free(cfg);
	free(wtdir);
	free(src);
}

/* ccache 4.7's stats log as it writes it (the lines of a local hit, a
 * remote hit with the local miss it follows, and a compile), a call cut
 * short by the end of the file, and junk. */
static void test_kbuild__compiles_counted_from_ccache_stats_log(void **state)
{
	struct kbuild_compiles c;
	const char *log =
		"# a.c\ndirect_cache_hit\nlocal_storage_hit\nlocal_storage_read_hit\n"
		"# b.c\ndirect_cache_hit\nlocal_storage_miss\nlocal_storage_read_miss\nremote_storage_hit\n"
		"remote_storage_read_hit\nlocal_storage_write\n"
		"# c.c\ncache_miss\ndirect_cache_miss\nlocal_storage_miss\nremote_storage_miss\nremote_storage_write\n"
		"# link\ncalled_for_link\n"
		"junk without a file\n"
		"# d.c\nremote_storage_hit";

	(void)state;
	kbuild_compiles_parse(&c, log);
	assert_int_equal(c.calls, 4);
	assert_int_equal(c.local_hits, 1);
	assert_int_equal(c.remote_hits, 2);
	assert_int_equal(c.compiled, 1);
	kbuild_compiles_parse(&c, "");
	assert_int_equal(c.calls, 0);
}

/* icecc 1.4's client log (ICECC_DEBUG=debug), its records as a ccache
 * and kbuild build writes them: a compile sent out, one whose record of
 * the node lands inside another's long "invoked as" line (icecc writes
 * a long line and its newline apart), a -E call built here, one that
 * fell back after the node failed, a pid that comes again, the node
 * itself named 127.0.0.1, and junk. */
static void test_kbuild__icecc_log_counts_remote_and_local_compiles(void **state)
{
	static const char log[] =
		"ICECC[10] 2026-12-06 20:36:13: invoked as: /usr/bin/icecc /usr/bin/gcc -c ../mm/mmap.c -o mm/mmap.o\n"
		"ICECC[10] 2026-12-06 20:36:13: asking for host to use\n"
		"ICECC[10] 2026-12-06 20:39:06: Have to use host 10.213.1.2:10245 - Job ID: 4 - env: x86_64 - has env: true - match j: 0\n"
		"ICECC[10] 2026-12-06 20:39:06: got 437 bytes (32%)\n"
		"ICECC[11] 2026-12-06 20:36:13: invoked as: /usr/bin/icecc /usr/bin/gcc -c ../kernel/fork.c"
		"ICECC[12] 2026-12-06 20:36:13: invoked as: /usr/bin/icecc /usr/bin/gcc -E -x c /dev/null -o /dev/null\n\n"
		"ICECC[12] 2026-12-06 20:36:13: <building_local>\n"
		"ICECC[11] 2026-12-06 20:39:06: Have to use host 10.213.1.3:10245 - Job ID: 5 - env: x86_64\n"
		"ICECC[13] 2026-12-06 20:36:14: invoked as: /usr/bin/icecc /usr/bin/gcc -c ../init/main.c\n"
		"ICECC[13] 2026-12-06 20:36:15: Have to use host 10.213.1.2:10245 - Job ID: 6\n"
		"ICECC[13] 2026-12-06 20:36:16: local build forced by remote exception: Error 101\n"
		"ICECC[13] 2026-12-06 20:36:16: <building_local>\n"
		"ICECC[10] 2026-12-06 20:40:00: invoked as: /usr/bin/icecc /usr/bin/gcc -c ../lib/sort.c\n"
		"ICECC[10] 2026-12-06 20:40:01: building myself, but telling localhost\n"
		"ICECC[14] 2026-12-06 20:40:02: invoked as: /usr/bin/icecc /usr/bin/gcc -c ../lib/bsearch.c\n"
		"ICECC[14] 2026-12-06 20:40:03: Have to use host 127.0.0.1:10245 - Job ID: 7\n"
		"ICECC[x] junk ICECC[99999999999] 2026: Have to use host 1.2.3.4:1\n"
		"ICECC[15] no date Have to use host 1.2.3.4:1\n";
	struct icecc_counts c;

	(void)state;
	icecc_log_parse(&c, log, sizeof(log) - 1);
	assert_int_equal(c.calls, 6);
	assert_int_equal(c.remote, 2);	/* mmap.c, fork.c */
	assert_int_equal(c.local, 4);
	assert_int_equal(c.fallbacks, 1);
	assert_int_equal(c.hosts, 2);
	assert_true(c.consistent);
	icecc_log_parse(&c, "", 0);
	assert_int_equal(c.calls, 0);
	assert_true(c.consistent);
	/* a node named but no icecc call: contradicts itself */
	icecc_log_parse(&c, "ICECC[1] d: Have to use host h:1\n", 33);
	assert_int_equal(c.remote, 1);
	assert_false(c.consistent);
}

/* compiler_wrapper = icecc: klab has the real icecc log (ICECC_LOGFILE)
 * and counts it (the one compile, piggy.S through real ccache and icecc,
 * here: ICECC=disable asks no daemon, never the machine's own), then
 * removes the log; with the user's ICECC_LOGFILE it says it cannot count.
 * The real farm is t-icecream's. */
static void test_kbuild__icecc_wrapper_compiles_counted_from_its_log(void **state)
{
	struct kbuild_result res;
	struct lab lab;
	char *labdir = xstrfmt("%s/lab-icecc", scratch_dir), *src = xstrfmt("%s/src-icecc", scratch_dir);
	char *shim = xstrfmt("%s/orchestrator/shim", KLAB_ABS_BUILDDIR);
	char *log = NULL;
	int created;
	int64_t repo_id;

	(void)state;
	fake_make_install();
	setenv("KLAB_SHIM_DIR", shim, 1);
	setenv("FAKE_MAKE_CC", "1", 1);
	setenv("ICECC", "disable", 1);
	unsetenv("ICECC_LOGFILE");
	unsetenv("ICECC_DEBUG");
	assert_int_equal(mkdir_p(src, 0755), 0);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	free(lab.compiler_wrapper);
	lab.compiler_wrapper = xstrdup("icecc");
	assert_int_equal(db_repo_id(lab.db, "/nonexistent/repo", &repo_id), 0);
	setenv("FAKE_KERNEL", "kernel-icecc", 1);
	fake_build(&lab, repo_id, src, "7777777777777777777777777777777777777777", &res);
	assert_int_equal(res.status, KBUILD_OK);
	assert_true(res.icecc.used);
	assert_null(res.icecc.unknown);
	assert_int_equal(res.icecc.counts.calls, 1);
	assert_int_equal(res.icecc.counts.remote, 0);
	assert_int_equal(res.icecc.counts.local, 1);
	log = xstrfmt("%s/.klab-icecc-log", res.artifact_dir);
	kbuild_result_release(&res);

	/* the user logs icecc's way: klab leaves it alone and says so */
	setenv("ICECC_LOGFILE", log, 1);
	setenv("FAKE_KERNEL", "kernel-icecc2", 1);
	fake_build(&lab, repo_id, src, "6666666666666666666666666666666666666666", &res);
	assert_int_equal(res.status, KBUILD_OK);
	assert_non_null(res.icecc.unknown);
	assert_non_null(strstr(res.icecc.unknown, "ICECC_LOGFILE"));
	kbuild_result_release(&res);
	unsetenv("ICECC_LOGFILE");
	unsetenv("ICECC");
	unsetenv("KLAB_SHIM_DIR");
	lab_close(&lab);
	fake_make_remove();
	FREE_MANY(labdir, src, shim, log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kbuild__fragments_later_settings_win),
		cmocka_unit_test(test_kbuild__malformed_fragment_names_file_and_line),
		cmocka_unit_test(test_kbuild__drift_reports_each_symbol_by_name),
		cmocka_unit_test(test_kbuild__recipe_id_depends_on_content_not_path),
		cmocka_unit_test(test_kbuild__recipe_text_roundtrip),
		cmocka_unit_test(test_kbuild__scan_log_finds_compiler_errors),
		cmocka_unit_test(test_kbuild__scan_log_finds_linker_errors),
		cmocka_unit_test(test_kbuild__not_a_fragment_is_named_by_line_number_only),
		cmocka_unit_test(test_kbuild__config_option_values_are_strict),
		cmocka_unit_test(test_kbuild__scan_log_tells_environment_failures),
		cmocka_unit_test(test_tree__strips_debian_ignore_everything_trailer),
		cmocka_unit_test(test_kbuild__reap_spares_a_group_that_is_no_longer_make),
		cmocka_unit_test(test_kbuild__reap_kills_the_build_group_it_recorded),
		cmocka_unit_test(test_kbuild__reap_kills_what_is_left_of_a_group_whose_leader_died),
		cmocka_unit_test(test_kbuild__shared_store_entry_is_adopted_once_recorded),
		cmocka_unit_test(test_kbuild__objects_counted_from_captured_make_output),
		cmocka_unit_test(test_kbuild__make_env_undoes_a_parent_makes_silence),
		cmocka_unit_test(test_kbuild__build_logs_are_private),
		cmocka_unit_test(test_kbuild__build_log_is_kept_under_log_limit),
		cmocka_unit_test(test_kbuild__image_payload_is_checked_after_every_build),
		cmocka_unit_test(test_kbuild__stored_kernel_is_checked_before_use),
		cmocka_unit_test(test_kbuild__incbin_objects_never_come_from_ccache),
		cmocka_unit_test(test_kbuild__config_inputs_are_kconfig_makefiles_scripts_and_configs),
		cmocka_unit_test(test_kbuild__config_step_skipped_when_nothing_it_reads_changed),
		cmocka_unit_test(test_kbuild__build_dir_in_checkout_makes_compile_lines_repository_free),
		cmocka_unit_test(test_kbuild__build_dir_survives_checkouts_of_the_worktree),
		cmocka_unit_test(test_kbuild__compiles_counted_from_ccache_stats_log),
		cmocka_unit_test(test_kbuild__icecc_log_counts_remote_and_local_compiles),
		cmocka_unit_test(test_kbuild__icecc_wrapper_compiles_counted_from_its_log),
	};
	return cmocka_run_group_tests(tests, git_scratch_setup, scratch_teardown);
}
