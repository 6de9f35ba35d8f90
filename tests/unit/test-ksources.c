/* Unit tests of a kernel's source set: the .cmd parser on kbuild's own
 * line formats, the walk of a build directory, sources.txt, and whether a
 * commit can change the kernel, on real git repositories, and the job
 * tester's step that inherits a mark without a build. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/bisect-run.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "kernel/kbuild.h"
#include "kernel/ksources.h"
#include "lab/lab.h"
#include "engine/perfbisect.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "helpers.h"

static void write_at(const char *path, const char *text)
{
	const char *slash = strrchr(path, '/');
	char *d = xstrndup(path, slash - path);

	assert_int_equal(mkdir_p(d, 0755), 0);
	assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
	free(d);
}

/* The set as one line per path, to compare whole. */
static char *joined(const struct ksources *s)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < s->nr; i++)
		strbuf_addf(&sb, "%s\n", s->paths[i]);
	return sb.buf ? strbuf_detach(&sb, NULL) : xstrdup("");
}

/* Lines in the format of a 6.1 build directory's kernel/.fork.o.cmd (a
 * build in <tree>/.klab-build-X, so srctree is ".."), shortened. */
static const char fork_cmd[] =
	"cmd_kernel/fork.o := ccache gcc -Wp,-MMD,kernel/.fork.o.d -nostdinc -I../arch/x86/include "
	"-I./arch/x86/include/generated -I../include -I./include -include ../include/linux/compiler-version.h "
	"-include ../include/linux/kconfig.h -fmacro-prefix-map=../= -DKBUILD_BASENAME='\"fork\"' "
	"-c -o kernel/fork.o ../kernel/fork.c  \n"
	"\n"
	"source_kernel/fork.o := ../kernel/fork.c\n"
	"\n"
	"deps_kernel/fork.o := \\\n"
	"  ../include/linux/compiler-version.h \\\n"
	"    $(wildcard include/config/CC_VERSION_TEXT) \\\n"
	"  ../include/linux/kconfig.h \\\n"
	"  arch/x86/include/generated/uapi/asm/types.h \\\n"
	"  ../include/uapi/asm-generic/types.h \\\n"
	"  /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h \\\n"
	"  $(srctree)/mm/internal.h \\\n"
	"  ../../outside/tree.h \\\n"
	"  ../include/./linux//sched.h \\\n"
	"\n"
	"kernel/fork.o: $(deps_kernel/fork.o)\n"
	"\n"
	"$(deps_kernel/fork.o):\n"
	"\n"
	"kernel/fork.o: $(wildcard ./tools/objtool/objtool)\n";

static void test_ksources__cmd_file_gives_the_tree_paths_only(void **state)
{
	struct ksources s = KSOURCES_INIT;
	char *got;

	assert_int_equal(ksources_parse_cmd(&s, fork_cmd, strlen(fork_cmd), "/work/linux"), 0);
	/* the generator's inputs, named only on its cmd_ line, count too */
	static const char unistd[] =
		"cmd_arch/x86/include/generated/uapi/asm/unistd_64.h := sh ../scripts/syscallhdr.sh --abis common,64 "
		"--emit-nr   ../arch/x86/entry/syscalls/syscall_64.tbl arch/x86/include/generated/uapi/asm/unistd_64.h\n";
	assert_int_equal(ksources_parse_cmd(&s, unistd, strlen(unistd), "/work/linux"), 0);
	/* an older layout: srctree absolute */
	static const char abs[] = "source_mm/mmap.o := /work/linux/mm/mmap.c\n"
				  "deps_mm/mmap.o := \\\n  /work/linux/include/linux/mman.h \\\n"
				  "  /work/linuxother/x.h \\\n  /work/linux/../etc/passwd \\\n";
	assert_int_equal(ksources_parse_cmd(&s, abs, strlen(abs), "/work/linux"), 0);
	ksources_finish(&s);
	got = joined(&s);
	assert_string_equal(got,
			    "arch/x86/entry/syscalls/syscall_64.tbl\n"
			    "arch/x86/include\n"
			    "include\n"
			    "include/linux/compiler-version.h\n"
			    "include/linux/kconfig.h\n"
			    "include/linux/mman.h\n"
			    "include/linux/sched.h\n"
			    "include/uapi/asm-generic/types.h\n"
			    "kernel/fork.c\n"
			    "mm/internal.h\n"
			    "mm/mmap.c\n"
			    "scripts/syscallhdr.sh\n");
	assert_true(ksources_has(&s, "kernel/fork.c"));
	assert_false(ksources_has(&s, "kernel/fork.o"));
	assert_false(ksources_has(&s, "usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h"));
	free(got);
	ksources_release(&s);
}

static void test_ksources__hostile_cmd_text_is_bounded(void **state)
{
	struct ksources s = KSOURCES_INIT;
	struct strbuf sb = STRBUF_INIT;
	int hold;

	/* binary junk and a path far too long: nothing, no error */
	static const char junk[] = "\x01\xff../\x7f\x80\x00../a\x00";
	assert_int_equal(ksources_parse_cmd(&s, junk, sizeof(junk) - 1, NULL), 0);
	assert_int_equal(s.nr, 1);	/* "a", the NUL is a separator */
	ksources_release(&s);
	strbuf_addstr(&sb, "../");
	for (int i = 0; i < KSOURCES_MAX_PATH_LEN + 10; i++)
		strbuf_addch(&sb, 'x');
	assert_int_equal(ksources_parse_cmd(&s, sb.buf, sb.len, NULL), 0);
	assert_int_equal(s.nr, 0);
	strbuf_release(&sb);
	/* more paths than the bound: an unknown set */
	for (unsigned i = 0; i <= KSOURCES_MAX_PATHS; i++)
		strbuf_addstr(&sb, "../a ");
	hold = error_hold(1);
	assert_int_equal(ksources_parse_cmd(&s, sb.buf, sb.len, NULL), -1);
	error_hold(hold);
	ksources_release(&s);
	strbuf_release(&sb);
}

static void test_ksources__build_dir_walk_skips_links_and_needs_a_c_file(void **state)
{
	struct ksources s = KSOURCES_INIT;
	char *src = xstrfmt("%s/walk", scratch_dir), *bd = xstrfmt("%s/.klab-build-abc", src);
	char *p = xstrfmt("%s/kernel/.fork.o.cmd", bd), *q = xstrfmt("%s/.vmlinux.cmd", bd);
	char *r = xstrfmt("%s/kernel/fork.o.d", bd), *list = xstrfmt("%s/sources.txt", scratch_dir), *got;
	struct ksources back = KSOURCES_INIT;
	int hold;

	write_at(p, fork_cmd);
	/* an absolute path into the build directory itself (objtool's) */
	write_at(q, "cmd_vmlinux := ld -o vmlinux ../init/main.c XSRC/.klab-build-abc/tools/objtool/check.o\n");
	sh("sed -i 's|XSRC|%s|' '%s'", src, q);
	write_at(r, "../not/a/cmd/file.c\n");	/* not a .cmd file */
	sh("ln -s .. '%s/source'", bd);		/* kbuild's link to the tree */
	assert_int_equal(ksources_collect(&s, bd, src), 0);
	assert_true(ksources_has(&s, "kernel/fork.c"));
	assert_true(ksources_has(&s, "init/main.c"));
	assert_false(ksources_has(&s, "not/a/cmd/file.c"));
	for (size_t i = 0; i < s.nr; i++)
		assert_null(strstr(s.paths[i], ".klab-build"));
	/* sources.txt: written, read back the same; missing; corrupt */
	assert_int_equal(ksources_write(&s, list), 0);
	assert_int_equal(ksources_read(&back, list), 1);
	got = joined(&back);
	{
		char *want = joined(&s);
		assert_string_equal(got, want);
		free(want);
	}
	free(got);
	ksources_release(&back);
	unlink(list);
	assert_int_equal(ksources_read(&back, list), 0);
	hold = error_hold(1);
	write_at(list, "kernel/fork.c\n../etc/passwd\n");
	assert_int_equal(ksources_read(&back, list), -1);
	assert_int_equal(back.nr, 0);
	write_at(list, "kernel/fork.c\n/etc/passwd\n");
	assert_int_equal(ksources_read(&back, list), -1);
	write_at(list, "kernel/fork.c\n\n");
	assert_int_equal(ksources_read(&back, list), -1);
	/* no C source named: kbuild wrote something this parser does not know */
	sh("rm -rf '%s' && mkdir -p '%s/x'", bd, bd);
	write_at(q, "cmd_vmlinux := ld -o vmlinux vmlinux.o\n");
	ksources_release(&s);
	assert_int_equal(ksources_collect(&s, bd, src), -1);
	assert_int_equal(s.nr, 0);
	error_hold(hold);
	ksources_release(&s);
	free(p);
	free(q);
	free(r);
	free(list);
	free(bd);
	free(src);
}

/* The objects that depend on each changed path, from the same walk:
 * .o.cmd files only (not .vmlinux.cmd), never through the "source"
 * link, and the top of them as the build's "compiled:" line prints it. */
static void test_ksources__dependents_count_objects_per_path(void **state)
{
	char *src = xstrfmt("%s/deps", scratch_dir), *bd = xstrfmt("%s/.klab-build-d", src);
	char *fork = xstrfmt("%s/kernel/.fork.o.cmd", bd), *exit_ = xstrfmt("%s/kernel/.exit.o.cmd", bd);
	char *vml = xstrfmt("%s/.vmlinux.cmd", bd);
	char *paths[] = { "include/linux/sched.h", "kernel/exit.c", "mm/internal.h", "include/linux/fs.h" };
	size_t counts[ARRAY_SIZE(paths)];
	struct strbuf top = STRBUF_INIT;

	write_at(fork, fork_cmd);
	write_at(exit_, "cmd_kernel/exit.o := gcc -c -o kernel/exit.o ../kernel/exit.c\n"
			"source_kernel/exit.o := ../kernel/exit.c\n"
			"deps_kernel/exit.o := \\\n  ../include/linux/sched.h \\\n\n");
	write_at(vml, "cmd_vmlinux := ld -o vmlinux ../include/linux/fs.h\n");
	sh("ln -s .. '%s/source'", bd);
	assert_int_equal(ksources_dependents(bd, src, paths, ARRAY_SIZE(paths), counts), 0);
	assert_int_equal(counts[0], 2);	/* both objects include sched.h */
	assert_int_equal(counts[1], 1);
	assert_int_equal(counts[2], 1);
	assert_int_equal(counts[3], 0);	/* named by a link command only */
	assert_int_equal(ksources_top(paths, counts, ARRAY_SIZE(paths), 3, &top), 3);
	assert_string_equal(top.buf, "include/linux/sched.h (2), kernel/exit.c (1), mm/internal.h (1)");
	strbuf_release(&top);
	free(fork);
	free(exit_);
	free(vml);
	free(bd);
	free(src);
}

/* A big config's objects name the same headers over and over: more
 * names in all than the bound on paths, few distinct ones. */
static void test_ksources__walk_bounds_distinct_paths_not_repeats(void **state)
{
	struct ksources s = KSOURCES_INIT;
	struct strbuf sb = STRBUF_INIT;
	char *src = xstrfmt("%s/walk-big", scratch_dir), *bd = xstrfmt("%s/.klab-build-big", src);

	strbuf_addstr(&sb, "source_x.o := ../kernel/x.c\ndeps_x.o := \\\n");
	for (unsigned i = 0; i < KSOURCES_MAX_PATHS / 16; i++)
		strbuf_addf(&sb, "  ../include/linux/h%u.h \\\n", i % 1000);
	for (int f = 0; f < 20; f++) {
		char *p = xstrfmt("%s/d%d/.x%d.o.cmd", bd, f, f);
		write_at(p, sb.buf);
		free(p);
	}
	assert_int_equal(ksources_collect(&s, bd, src), 0);
	assert_int_equal(s.nr, 1001);
	ksources_release(&s);
	strbuf_release(&sb);
	free(bd);
	free(src);
}

static void test_ksources__names_that_matter_to_any_build(void **state)
{
	static const char *const matter[] = {
		"Makefile", "mm/Makefile", "drivers/net/Kconfig", "fs/Kbuild", "scripts/Makefile.lib", "scripts/foo.c",
		"tools/objtool/check.c", "usr/gen_initramfs.sh", "arch/x86/configs/tiny.config", "kernel/configs/tiny.config",
		"arch/x86/Makefile_32.cpu", "lib/raid6/Makefile.mk", "arch/x86/tools/relocs.c",
		"arch/x86/entry/syscalls/syscall_64.tbl", "arch/x86/kernel/vmlinux.lds.S", "firmware/blob.bin",
		"kernel/gen_kheaders.sh", "lib/x86-opcode-map.txt", "certs/signing_key.pem",
	};
	static const char *const plain[] = {
		"Documentation/admin-guide/mm/transhuge.rst", "MAINTAINERS",
		"drivers/net/e1000.c", "include/linux/sched.h", "arch/x86/boot/header.S", "LICENSES/GPL-2.0",
		"drivers/.gitignore", "arch/arm64/boot/dts/foo.dts",
	};

	for (size_t i = 0; i < ARRAY_SIZE(matter); i++)
		if (!ksources_path_matters(matter[i]))
			fail_msg("%s should matter by its name", matter[i]);
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		if (ksources_path_matters(plain[i]))
			fail_msg("%s should not matter by its name", plain[i]);
}

/* ---- can a commit change the kernel? on a real repository -------------- */

static void head_hex(const char *repo, char hex[41])
{
	char *out = xstrfmt("%s/head.txt", scratch_dir), *text = NULL;

	sh("git -C '%s' rev-parse HEAD > '%s'", repo, out);
	assert_int_equal(read_file(out, 100, &text, NULL), 0);
	memcpy(hex, text, 40);
	hex[40] = '\0';
	free(text);
	free(out);
}

static char *tree_repo;
static struct ksources tree_set = KSOURCES_INIT;

/* A few files of a kernel tree; the set a build of its first commit read. */
static void make_tree_repo(void)
{
	static const char cmd[] = "source_kernel/fork.o := ../kernel/fork.c\n"
				  "deps_kernel/fork.o := \\\n  ../include/linux/sched.h \\\n"
				  "  ../include/asm-generic/rwonce.h \\\n\n"
				  "cmd_arch/x86/include/generated/asm/syscalls_64.h := sh ../scripts/syscalltbl.sh "
				  "../arch/x86/entry/syscalls/syscall_64.tbl arch/x86/include/generated/asm/syscalls_64.h\n";

	tree_repo = xstrfmt("%s/linux", scratch_dir);
	sh("git init -q '%s' && cd '%s' && git config user.email t@t && git config user.name t && "
	   "mkdir -p kernel include/linux include/asm-generic arch/x86/entry/syscalls arch/x86/include/asm "
	   "drivers/net Documentation mm scripts && "
	   "echo 'int f;' > kernel/fork.c && echo 'obj-y += fork.o' > kernel/Makefile && "
	   "echo '#define S' > include/linux/sched.h && echo '#define R' > include/asm-generic/rwonce.h && "
	   "echo '0 common read' > arch/x86/entry/syscalls/syscall_64.tbl && echo 'int n;' > drivers/net/e1000.c && "
	   "echo 'text' > Documentation/mm.rst && echo 'int m;' > mm/unused.c && echo 'x' > scripts/syscalltbl.sh && "
	   "echo 'config MMU' > mm/Kconfig && git add -A && git commit -qm import", tree_repo, tree_repo);
	assert_int_equal(ksources_parse_cmd(&tree_set, cmd, strlen(cmd), NULL), 0);
	ksources_finish(&tree_set);
}

/* Whether change_keeps_kernel lets comment-only changes of sources keep
 * the kernel (klab.conf's comment_only_commits). */
static int comment_rule = 1;

/* ksources_same_kernel(first commit, the commit `change` makes on top of
 * the last one); touched and why into the caller's buffers when given. */
static int change_keeps_kernel(const char *change, struct strbuf *touched)
{
	struct gitrepo *repo;
	struct strbuf t = STRBUF_INIT, why = STRBUF_INIT;
	char a[41], b[41];
	int rc;

	if (!tree_repo)
		make_tree_repo();
	sh("cd '%s' && git checkout -q -B work $(git rev-list --max-parents=0 HEAD) && %s && git add -A && "
	   "git commit -qm change", tree_repo, change);
	head_hex(tree_repo, b);
	sh("cd '%s' && git rev-list --max-parents=0 HEAD > ../root.txt", tree_repo);
	{
		char *p = xstrfmt("%s/root.txt", scratch_dir), *text = NULL;
		assert_int_equal(read_file(p, 100, &text, NULL), 0);
		memcpy(a, text, 40);
		a[40] = '\0';
		free(text);
		free(p);
	}
	assert_int_equal(gitrepo_open(&repo, tree_repo), 0);
	rc = ksources_same_kernel(repo, a, b, &tree_set, comment_rule, 3, &t, &why);
	assert_true(rc == 1 ? why.len == 0 : why.len > 0);
	if (touched)
		strbuf_addstr(touched, rc == 1 ? (t.len ? t.buf : "") : why.buf);
	gitrepo_free(repo);
	strbuf_release(&t);
	strbuf_release(&why);
	return rc;
}

/* change_keeps_kernel(change) is keeps, and says touched (NULL: not
 * looked at). */
static void assert_change(const char *change, int keeps, const char *touched)
{
	struct strbuf t = STRBUF_INIT;

	assert_int_equal(change_keeps_kernel(change, &t), keeps);
	if (touched)
		assert_string_equal(t.buf, touched);
	strbuf_release(&t);
}

static void test_ksources__documentation_only_commit_keeps_the_kernel(void **state)
{
	assert_change("echo more >> Documentation/mm.rst", 1, "Documentation/mm.rst");
	/* a driver and an mm file the build never compiled, a new doc */
	assert_change("echo 'int n2;' >> drivers/net/e1000.c && echo 'int m2;' >> mm/unused.c && "
		      "echo new > Documentation/new.rst && echo x > Documentation/b.rst", 1,
		      "Documentation/b.rst, Documentation/new.rst, drivers/net/e1000.c, 1 more");
}

/* The comment blanking that lets a comment-only change keep the kernel:
 * equal only when every token keeps its line and column; unsure is -1. */
static int blanked_equal(const char *a, const char *b, int line_comments)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	int rc = ksources_blank_comments(a, strlen(a), line_comments, &x);

	if (rc == 0)
		rc = ksources_blank_comments(b, strlen(b), line_comments, &y);
	if (rc == 0)
		rc = !strcmp(x.buf ? x.buf : "", y.buf ? y.buf : "");
	strbuf_release(&x);
	strbuf_release(&y);
	return rc;
}

/* ksources_blank_comments of a literal, its NULs included */
#define BLANK(text, line_comments, sb) ksources_blank_comments(text, sizeof(text) - 1, line_comments, sb)

static void test_ksources__blank_comments(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_int_equal(BLANK("a /* b\n c */ d // e\n", 1, &sb), 0);
	assert_string_equal(sb.buf, "a\n      d");
	/* a comment's text, a comment added at the end, blanks at line ends */
	assert_int_equal(blanked_equal("int a; /* x */\n", "int a; /* longer */\n", 0), 1);
	assert_int_equal(blanked_equal("int a;\n", "int a;   \n\n/* note */\n", 0), 1);
	assert_int_equal(blanked_equal("int a;\t// x\nint b;\n", "int a;\t// other\nint b;\n", 1), 1);
	/* a token that moves: a line inserted before it, a column after a
	 * comment of another length, a comment that becomes code */
	assert_int_equal(blanked_equal("int a;\n", "/* note */\nint a;\n", 0), 0);
	assert_int_equal(blanked_equal("/* x */ int a;\n", "/* xy */ int a;\n", 0), 0);
	assert_int_equal(blanked_equal("/* int b; */\n", "   int b;   \n", 0), 0);
	assert_int_equal(blanked_equal("int a; /* a\nb */ int c;\n", "int a; /* a\n\nb */ int c;\n", 0), 0);
	/* a tab or a UTF-8 character in the comment: the column may count otherwise */
	assert_int_equal(blanked_equal("/*\t*/ int a;\n", "/* */ int a;\n", 0), 0);
	assert_int_equal(blanked_equal("/* \xc3\xa9 */ int a;\n", "/* ab */ int a;\n", 0), 0);
	/* comment marks inside literals are text */
	assert_int_equal(blanked_equal("s = \"/* x */\";\n", "s = \"/* y */\";\n", 0), 0);
	assert_int_equal(blanked_equal("s = \"\\\"/* x\";\n", "s = \"\\\"/* y\";\n", 0), 0);
	assert_int_equal(blanked_equal("c = '/'*2; /* x */\n", "c = '/'*2; /* y */\n", 0), 1);
	/* unsure: what the preprocessor makes of it may differ */
	assert_int_equal(BLANK("a // b\n", 0, &sb), -1);
	assert_int_equal(BLANK("a // b \\\nint c;\n", 1, &sb), -1);
	assert_int_equal(BLANK("a /\\\n* b */\n", 1, &sb), -1);
	assert_int_equal(BLANK("a /* b *\\\n/ c\n", 1, &sb), -1);
	assert_int_equal(BLANK("a /* b\n", 1, &sb), -1);
	assert_int_equal(BLANK("#if 0\ndon't\n#endif\n", 1, &sb), -1);
	assert_int_equal(BLANK("s = \"a\n", 1, &sb), -1);
	assert_int_equal(BLANK("a\0b", 1, &sb), -1);
	/* a comment opener inside an #include's <...> is part of the name */
	assert_int_equal(BLANK("#include <a//b.h>\n", 1, &sb), -1);
	assert_int_equal(BLANK(" # include_next <a/*b.h>\n", 1, &sb), -1);
	assert_int_equal(BLANK("#include <a.h> /* for b */\n#include \"c.h\" // d\n", 1, &sb), 0);
	assert_string_equal(sb.buf, "#include <a.h>\n#include \"c.h\"");
	assert_int_equal(BLANK("#define X (a < b) /* c */\n", 1, &sb), 0);
	strbuf_release(&sb);
}

static void test_ksources__comment_only_commit_keeps_the_kernel(void **state)
{
	assert_change("echo '/* a note */' >> kernel/fork.c", 1, "kernel/fork.c: comments only");
	assert_change("sed -i 's|^int f;|int f; /* the f */|' kernel/fork.c && echo more >> Documentation/mm.rst", 1,
		      "Documentation/mm.rst, kernel/fork.c: comments only");
	/* code beside the comment, a line moved, a header's "//" */
	assert_change("echo 'int g; /* g */' >> kernel/fork.c", 0, "kernel/fork.c is one of its sources");
	assert_change("sed -i '1i /* top */' include/linux/sched.h", 0, "include/linux/sched.h is one of its sources");
	assert_change("echo '// note' >> include/linux/sched.h", 0, NULL);
	/* a comment in a file that matters by its name is still doubt */
	assert_change("echo '# note' >> kernel/Makefile", 0, NULL);
	/* a kernel with Rust: bindgen reads the headers' comments */
	{
		struct ksources saved = tree_set;
		static const char rs[] = "source_kernel/fork.o := ../kernel/fork.c\n"
					 "source_rust/kernel.o := ../rust/kernel/lib.rs\n";

		memset(&tree_set, 0, sizeof(tree_set));
		assert_int_equal(ksources_parse_cmd(&tree_set, rs, strlen(rs), NULL), 0);
		ksources_finish(&tree_set);
		assert_change("echo '/* a note */' >> kernel/fork.c", 0, "kernel/fork.c is one of its sources");
		ksources_release(&tree_set);
		tree_set = saved;
	}
	/* klab.conf's comment_only_commits = build */
	comment_rule = 0;
	assert_change("echo '/* a note */' >> kernel/fork.c", 0, "kernel/fork.c is one of its sources");
	comment_rule = 1;
}

static void test_ksources__commit_touching_a_source_builds(void **state)
{
	assert_change("echo 'int g;' >> kernel/fork.c && echo more >> Documentation/mm.rst", 0,
		      "kernel/fork.c is one of its sources");
	assert_change("echo '#define T' >> include/linux/sched.h", 0, NULL);
	/* a generator's input, known from its cmd_ line only */
	assert_change("echo '1 common write' >> arch/x86/entry/syscalls/syscall_64.tbl", 0, NULL);
	/* a source deleted, or renamed away */
	assert_change("git rm -q include/asm-generic/rwonce.h", 0, NULL);
	assert_change("git mv kernel/fork.c kernel/fork2.c", 0, NULL);
}

static void test_ksources__build_system_change_builds(void **state)
{
	assert_change("echo 'obj-y += exit.o' >> kernel/Makefile", 0, "kernel/Makefile matters to the build by its name");
	assert_change("echo 'config THP' >> mm/Kconfig", 0, NULL);
	assert_change("echo y >> scripts/syscalltbl.sh", 0, NULL);
	assert_change("mkdir -p firmware && echo blob > firmware/x.bin", 0, NULL);
}

static void test_ksources__new_file_that_may_be_read_builds(void **state)
{
	/* an arch header that now shadows asm-generic's */
	assert_change("echo '#define R2' > arch/x86/include/asm/rwonce.h", 0,
		      "arch/x86/include/asm/rwonce.h is new beside or named like one of its sources");
	/* beside a compiled file (a Makefile wildcard would take it) */
	assert_change("echo 'int e;' > kernel/exit.c", 0, NULL);
	/* a driver moved next to the kernel's sources */
	assert_change("git mv drivers/net/e1000.c kernel/e1000.c", 0, NULL);
	/* a new file far from anything built keeps it */
	assert_change("echo 'int w;' > drivers/net/wifi.c", 1, NULL);
}

static void test_ksources__unknown_set_or_commit_builds(void **state)
{
	struct gitrepo *repo;
	struct ksources empty = KSOURCES_INIT;
	struct strbuf t = STRBUF_INIT, why = STRBUF_INIT;
	char h[41];
	int hold;

	if (!tree_repo)
		make_tree_repo();
	head_hex(tree_repo, h);
	assert_int_equal(gitrepo_open(&repo, tree_repo), 0);
	/* a missing sources.txt is no set at all: perfbisect reads 0 and builds */
	{
		struct ksources none = KSOURCES_INIT;
		char *p = xstrfmt("%s/no-such/sources.txt", scratch_dir);
		assert_int_equal(ksources_read(&none, p), 0);
		free(p);
	}
	assert_int_equal(ksources_same_kernel(repo, h, h, &empty, 1, 3, &t, &why), 0);
	assert_string_equal(why.buf, "its source set is empty");
	/* a kernel that embeds its headers: any commit may change it */
	{
		struct ksources ikh = KSOURCES_INIT;
		static const char cmd[] = "source_kernel/fork.o := ../kernel/fork.c\n"
					  "cmd_kernel/kheaders_data.tar.xz := sh ../kernel/gen_kheaders.sh "
					  "kernel/kheaders_data.tar.xz\n";

		assert_int_equal(ksources_parse_cmd(&ikh, cmd, strlen(cmd), NULL), 0);
		ksources_finish(&ikh);
		strbuf_reset(&why);
		assert_int_equal(ksources_same_kernel(repo, h, h, &ikh, 1, 3, &t, &why), 0);
		assert_string_equal(why.buf, "it embeds the tree's headers (kernel/gen_kheaders.sh)");
		ksources_release(&ikh);
	}
	hold = error_hold(1);
	assert_int_equal(ksources_same_kernel(repo, "0123456789abcdef0123456789abcdef01234567", h, &tree_set, 1, 3, &t, &why),
			 -1);
	error_hold(hold);
	gitrepo_free(repo);
	strbuf_release(&t);
	strbuf_release(&why);
}

/* What perfbisect asks of an artifact: its set beside its image, its
 * recipe in its directory's name. */
static void test_ksources__stored_kernel_serves_only_with_its_set_and_recipe(void **state)
{
	static const char rid[] = "abcdefabcdefabcdefabcdefabcdefabcdefabcd";
	struct gitrepo *repo;
	struct strbuf t = STRBUF_INIT;
	char root[41], doc[41], src[41];
	char *adir = xstrfmt("%s/artifacts/1111111111111111111111111111111111111111-%s", scratch_dir, rid);
	char *bz = xstrfmt("%s/bzImage", adir), *list = xstrfmt("%s/sources.txt", adir);
	int hold;

	if (!tree_repo)
		make_tree_repo();
	sh("cd '%s' && git checkout -q -B serve $(git rev-list --max-parents=0 HEAD)", tree_repo);
	head_hex(tree_repo, root);
	sh("cd '%s' && echo more >> Documentation/mm.rst && git commit -qam doc", tree_repo);
	head_hex(tree_repo, doc);
	sh("cd '%s' && echo 'int h;' >> kernel/fork.c && git commit -qam fork", tree_repo);
	head_hex(tree_repo, src);
	write_at(bz, "kernel");
	assert_int_equal(gitrepo_open(&repo, tree_repo), 0);
	/* no sources.txt (an artifact of an older klab): build */
	assert_int_equal(ksources_kernel_serves(repo, bz, rid, root, doc, 1, &t), 0);
	assert_int_equal(ksources_write(&tree_set, list), 0);
	assert_int_equal(ksources_kernel_serves(repo, bz, rid, root, doc, 1, &t), 1);
	assert_string_equal(t.buf, "Documentation/mm.rst");
	/* either way: the documentation commit's kernel serves the root too */
	assert_int_equal(ksources_kernel_serves(repo, bz, rid, doc, root, 1, &t), 1);
	assert_int_equal(ksources_kernel_serves(repo, bz, rid, root, src, 1, &t), 0);
	assert_int_equal(t.len, 0);
	/* another recipe, or an image outside the store's layout */
	assert_int_equal(ksources_kernel_serves(repo, bz, "0000000000000000000000000000000000000000", root, doc, 1, &t), 0);
	assert_int_equal(ksources_kernel_serves(repo, "bzImage", rid, root, doc, 1, &t), 0);
	/* a set that does not read: build */
	hold = error_hold(1);
	write_at(list, "kernel/fork.c\n/etc/passwd\n");
	assert_int_equal(ksources_kernel_serves(repo, bz, rid, root, doc, 1, &t), 0);
	error_hold(hold);
	gitrepo_free(repo);
	strbuf_release(&t);
	free(list);
	free(bz);
	free(adir);
}

/* A bisect step of r on commit hash, which the job tester must call good;
 * out (the caller releases it) says why. */
static void step_is_good(struct bisect_run *r, struct step *s, const char *hash, struct step_outcome *out)
{
	memset(s, 0, sizeof(*s));
	memcpy(s->hash, hash, 41);
	s->phase = "bisect";
	s->exit_code = -1;
	assert_int_equal(db_step_begin(r->lab->db, r->b->id, s), 0);
	step_outcome_init(out);
	perf_tester.test(r, s, out);
	assert_int_equal(out->result, BISECT_GOOD);
}

/* The job tester's step whole: a commit that touches only documentation
 * takes the good end's mark with no build (a build here would fail: no
 * worktree, no make), stores treesame-build, and counts as decided for
 * the next step, which then names it. */
static void test_ksources__job_step_inherits_without_a_build(void **state)
{
	struct lab lab;
	struct bisection b;
	struct bisect_run r;
	struct perf perf;
	struct step s;
	struct step_outcome out;
	struct gitrepo *repo;
	char root[41], bad[41], doc1[41], doc2[41], doc3[41], tree[41], rid[41];
	char *labdir = xstrfmt("%s/lab-job", scratch_dir), *adir, *bz, *list, *never_read;
	char **details = NULL;
	size_t nd = 0;
	int created;

	if (!tree_repo)
		make_tree_repo();
	sh("cd '%s' && git checkout -q -B job $(git rev-list --max-parents=0 HEAD)", tree_repo);
	head_hex(tree_repo, root);
	sh("cd '%s' && echo a >> Documentation/mm.rst && git commit -qam doc1", tree_repo);
	head_hex(tree_repo, doc1);
	sh("cd '%s' && echo b >> Documentation/mm.rst && git commit -qam doc2", tree_repo);
	head_hex(tree_repo, doc2);
	sh("cd '%s' && echo 'int z;' >> kernel/fork.c && git commit -qam bad", tree_repo);
	head_hex(tree_repo, bad);
	assert_int_equal(gitrepo_open(&repo, tree_repo), 0);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&lab, labdir), 0);
	memset(&b, 0, sizeof(b));
	assert_int_equal(db_repo_id(lab.db, tree_repo, &b.repo_id), 0);
	memcpy(b.bad, bad, 41);
	b.goods = xmalloc(sizeof(*b.goods));
	memcpy(b.goods[0], root, 41);
	b.nr_goods = 1;
	b.job_path = "job.yaml";
	b.job_text = "suite: stress-ng\ntestcase: mmapaddr\nruntime: 10s\nkpi: stress-ng.mmapaddr.ops_per_sec\n";
	b.kpi = "stress-ng.mmapaddr.ops_per_sec";
	b.build = 1;
	assert_int_equal(db_bisection_create(lab.db, &b), 0);
	memset(&r, 0, sizeof(r));
	r.lab = &lab;
	r.b = &b;
	r.repo = repo;
	r.recipe.base = "tinyconfig";
	assert_int_equal(perf_init(&perf, &lab, b.job_path, b.job_text, b.kpi), 0);
	r.tester_data = &perf;
	/* the good end's kernel in the store, with its set */
	assert_int_equal(kbuild_recipe_id(&r.recipe, rid), 0);
	memcpy(tree, "1111111111111111111111111111111111111111", 41);
	adir = xstrfmt("%s/lab-job/artifacts/%s-%s", scratch_dir, tree, rid);
	bz = xstrfmt("%s/bzImage", adir);
	list = xstrfmt("%s/sources.txt", adir);
	write_at(bz, "kernel");
	assert_int_equal(ksources_write(&tree_set, list), 0);
	perf.good_kernel = xstrdup(bz);

	step_is_good(&r, &s, doc1, &out);
	assert_true(!strncmp(out.reason.buf, "treesame-build: good: touches only files the kernel of ", 55));
	assert_non_null(strstr(out.reason.buf, "(Documentation/mm.rst)"));
	assert_int_equal(db_step_verdicts(lab.db, s.id, &details, &nd), 0);
	assert_int_equal(nd, 1);
	assert_non_null(strstr(details[0], "never read (Documentation/mm.rst)"));
	for (size_t i = 0; i < nd; i++)
		free(details[i]);
	free(details);
	step_outcome_release(&out);
	assert_int_equal(perf.nr_decided, 1);
	/* the next commit compares with the nearest: doc1, just decided */
	never_read = xstrfmt("the kernel of %.12s never read", doc1);
	step_is_good(&r, &s, doc2, &out);
	assert_contains(out.reason.buf, never_read);
	step_outcome_release(&out);
	/* in half 2 after a split at doc1, the good end is doc1: its kernel
	 * (here the same image) is compared from doc1, not from the range's
	 * good end; nothing decided in the other half counts */
	for (size_t i = 0; i < perf.nr_decided; i++)
		free(perf.decided[i].kernel);
	perf.nr_decided = 0;
	perf.half = 2;
	memcpy(perf.split, doc1, 41);
	sh("cd '%s' && git checkout -q -B half %s && echo c >> Documentation/mm.rst && git commit -qam doc3", tree_repo,
	   doc2);
	head_hex(tree_repo, doc3);
	step_is_good(&r, &s, doc3, &out);
	assert_contains(out.reason.buf, never_read);
	step_outcome_release(&out);
	perf_release(&perf);
	lab_close(&lab);
	gitrepo_free(repo);
	free(b.goods);
	free(never_read);
	free(list);
	free(bz);
	free(adir);
	free(labdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ksources__cmd_file_gives_the_tree_paths_only),
		cmocka_unit_test(test_ksources__hostile_cmd_text_is_bounded),
		cmocka_unit_test(test_ksources__build_dir_walk_skips_links_and_needs_a_c_file),
		cmocka_unit_test(test_ksources__dependents_count_objects_per_path),
		cmocka_unit_test(test_ksources__walk_bounds_distinct_paths_not_repeats),
		cmocka_unit_test(test_ksources__names_that_matter_to_any_build),
		cmocka_unit_test(test_ksources__documentation_only_commit_keeps_the_kernel),
		cmocka_unit_test(test_ksources__commit_touching_a_source_builds),
		cmocka_unit_test(test_ksources__build_system_change_builds),
		cmocka_unit_test(test_ksources__blank_comments),
		cmocka_unit_test(test_ksources__comment_only_commit_keeps_the_kernel),
		cmocka_unit_test(test_ksources__new_file_that_may_be_read_builds),
		cmocka_unit_test(test_ksources__unknown_set_or_commit_builds),
		cmocka_unit_test(test_ksources__stored_kernel_serves_only_with_its_set_and_recipe),
		cmocka_unit_test(test_ksources__job_step_inherits_without_a_build),
	};
	int rc = cmocka_run_group_tests(tests, git_scratch_setup, scratch_teardown);

	ksources_release(&tree_set);
	free(tree_repo);
	return rc;
}
