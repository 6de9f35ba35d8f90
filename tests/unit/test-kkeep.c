/* Unit tests of the checkout that keeps a comment-only file's build
 * (kernel/kkeep.h) on real git commits in a klab worktree: which files
 * get their old mtime back and every doubt that keeps the new one; and
 * what explains a build (dependents from .cmd files, ccache's log). */
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

#include "kernel/kbuild.h"
#include "kernel/kkeep.h"
#include "kernel/ksources.h"
#include "lab/gitrepo.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "helpers.h"

/* An mtime older than anything a checkout writes. */
#define OLD 1000000000

static char *src, *wtdir;
static char base[41];
static struct gitrepo *repo;
static struct worktree *wt;

static void make_repo(void)
{
	src = xstrfmt("%s/src", scratch_dir);
	wtdir = xstrfmt("%s/wt", scratch_dir);
	sh("git init -q '%s' && cd '%s' && git config user.email t@t && git config user.name t && "
	   "mkdir -p include/linux kernel && "
	   "printf '/* SPDX-License-Identifier: GPL-2.0 */\\n#ifndef MM_H\\n#define MM_H\\n/* the page "
	   "allocator */\\nint mm;\\n#endif\\n' > include/linux/mm.h && "
	   "printf '#define OTHER 1\\n' > include/linux/other.h && "
	   "printf '// SPDX-License-Identifier: GPL-2.0\\nint f; /* forks */\\n' > kernel/fork.c && "
	   "printf 'obj-y += fork.o\\n' > kernel/Makefile && printf 'config MMU\\n' > Kconfig && "
	   "git add -A && git commit -qm base && git rev-parse HEAD > ../base.txt",
	   src, src);
	{
		char *p = xstrfmt("%s/base.txt", scratch_dir), *text = NULL;

		assert_int_equal(read_file(p, 100, &text, NULL), 0);
		memcpy(base, text, 40);
		base[40] = '\0';
		free(text);
		free(p);
	}
	assert_int_equal(gitrepo_open(&repo, src), 0);
	assert_int_equal(worktree_open(&wt, repo, wtdir), 0);
}

/* The commit `change` makes on top of the base. */
static void commit_change(const char *change, char hex[41])
{
	char *p = xstrfmt("%s/head.txt", scratch_dir), *text = NULL;

	sh("cd '%s' && git checkout -q -B work %s && %s && git add -A && git commit -qm change && "
	   "git rev-parse HEAD > ../head.txt", src, base, change);
	assert_int_equal(read_file(p, 100, &text, NULL), 0);
	memcpy(hex, text, 40);
	hex[40] = '\0';
	free(text);
	free(p);
}

/* The worktree at the base, built (a build directory with `config`,
 * NULL: none), every file older than its objects would be. */
static void at_base(const char *config)
{
	assert_int_equal(worktree_checkout(wt, base), 0);
	sh("rm -rf '%s'/.klab-build-*", wtdir);
	if (config) {
		char *cfg = xstrfmt("%s/.klab-build-0123456789ab/.config", wtdir);
		char *d = xstrfmt("%s/.klab-build-0123456789ab", wtdir);

		assert_int_equal(mkdir_p(d, 0755), 0);
		assert_int_equal(write_file_atomic(cfg, config, strlen(config)), 0);
		free(cfg);
		free(d);
	}
	sh("cd '%s' && find include kernel Kconfig -type f -exec touch -d @%d {} +", wtdir, OLD);
}

static int kept_old_mtime(const char *path)
{
	char *p = xstrfmt("%s/%s", wtdir, path);
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	free(p);
	return st.st_mtim.tv_sec == OLD;
}

/* Check out the commit `change` makes over the built base (build
 * directory config `config`; before: run in the worktree first);
 * k filled. */
static void step(const char *change, const char *config, const char *before, int keep, struct kkeep *k)
{
	char hex[41];

	commit_change(change, hex);
	at_base(config);
	if (before)
		sh("cd '%s' && %s", wtdir, before);
	kkeep_prepare(k, wt, wtdir, hex, keep);
	assert_int_equal(worktree_checkout(wt, hex), 0);
	kkeep_restore(k, wtdir);
}

static const char cfg[] = "CONFIG_64BIT=y\nCONFIG_MMU=y\n";

static void test_kkeep__comment_only_files_keep_their_mtime(void **state)
{
	struct kkeep k = KKEEP_INIT;

	make_repo();
	/* a word of a header's comment, a .c file's "//" comment */
	step("sed -i 's/page allocator/page allocater/' include/linux/mm.h && "
	     "sed -i 's|// SPDX-License-Identifier: GPL-2.0|// SPDX-License-Identifier: GPL-2.0+|' kernel/fork.c",
	     cfg, NULL, 1, &k);
	assert_null(k.doubt);
	assert_int_equal(k.kept, 2);
	assert_int_equal(k.rebuilt.nr, 0);
	assert_true(kept_old_mtime("include/linux/mm.h"));
	assert_true(kept_old_mtime("kernel/fork.c"));
	kkeep_release(&k);
	/* beside a real change, which alone is rebuilt */
	step("sed -i 's/page allocator/buddy allocator/' include/linux/mm.h && echo '#define MORE 2' >> "
	     "include/linux/other.h",
	     cfg, NULL, 1, &k);
	assert_int_equal(k.kept, 1);
	assert_true(kept_old_mtime("include/linux/mm.h"));
	assert_false(kept_old_mtime("include/linux/other.h"));
	assert_int_equal(k.rebuilt.nr, 1);
	assert_string_equal(k.rebuilt.paths[0], "include/linux/other.h");
	kkeep_release(&k);
}

static void test_kkeep__any_doubt_rebuilds(void **state)
{
	static const struct {
		const char *change, *config, *before, *why;
		int keep;
	} cases[] = {
		/* tokens that move, code, a header's "//", a splice */
		{ "sed -i '4i /* a new line */' include/linux/mm.h", cfg, NULL, NULL, 1 },
		{ "sed -i 's/int mm;/int mm; int mm2;/' include/linux/mm.h", cfg, NULL, NULL, 1 },
		{ "echo '// note' >> include/linux/mm.h", cfg, NULL, NULL, 1 },
		{ "sed -i 's|/\\* the page|/\\\\\\n* the page|' include/linux/mm.h", cfg, NULL, NULL, 1 },
		/* the file on disk was not the base's (a test command wrote it) */
		{ "sed -i 's/page allocator/page allocater/' include/linux/mm.h", cfg,
		  "sed -i 's/int mm;/long mm;/' include/linux/mm.h && touch -d @1000000000 include/linux/mm.h", NULL, 1 },
		/* the whole checkout: the config step's input, Rust, embedded
		 * headers, a build directory not configured, klab.conf */
		{ "sed -i 's/page allocator/page allocater/' include/linux/mm.h && echo 'config X' >> Kconfig", cfg, NULL,
		  "Kconfig feeds the config step", 1 },
		{ "sed -i 's/page allocator/page allocater/' include/linux/mm.h", "CONFIG_RUST=y\n", NULL,
		  ".klab-build-0123456789ab builds Rust", 1 },
		{ "sed -i 's/page allocator/page allocater/' include/linux/mm.h", "CONFIG_IKHEADERS=m\n", NULL,
		  ".klab-build-0123456789ab embeds the headers (CONFIG_IKHEADERS)", 1 },
		{ "sed -i 's/page allocator/page allocater/' include/linux/mm.h", cfg, "rm .klab-build-*/.config",
		  ".klab-build-0123456789ab has no .config", 1 },
		{ "sed -i 's/page allocator/page allocater/' include/linux/mm.h", cfg, NULL,
		  "klab.conf says comment_only_files = rebuild", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kkeep k = KKEEP_INIT;

		step(cases[i].change, cases[i].config, cases[i].before, cases[i].keep, &k);
		if (cases[i].why) {
			assert_non_null(k.doubt);
			assert_string_equal(k.doubt, cases[i].why);
		}
		assert_int_equal(k.kept, 0);
		assert_false(kept_old_mtime("include/linux/mm.h"));
		assert_true(ksources_has(&k.rebuilt, "include/linux/mm.h"));
		kkeep_release(&k);
	}
}

/* The first checkout of a worktree has nothing built to keep. */
static void test_kkeep__nothing_checked_out_keeps_nothing(void **state)
{
	struct worktree *fresh;
	struct kkeep k = KKEEP_INIT;
	char *dir = xstrfmt("%s/wt-fresh", scratch_dir);

	assert_int_equal(worktree_open(&fresh, repo, dir), 0);
	kkeep_prepare(&k, fresh, dir, base, 1);
	assert_int_equal(k.nr + k.rebuilt.nr, 0);
	assert_int_equal(worktree_checkout(fresh, base), 0);
	kkeep_restore(&k, dir);
	assert_int_equal(k.kept, 0);
	kkeep_release(&k);
	worktree_free(fresh);
	free(dir);
}

static void write_at(const char *path, const char *text)
{
	const char *slash = strrchr(path, '/');
	char *d = xstrndup(path, slash - path);

	assert_int_equal(mkdir_p(d, 0755), 0);
	assert_int_equal(write_file_atomic(path, text, strlen(text)), 0);
	free(d);
}

static void test_kkeep__build_explained_by_dependents_and_ccache(void **state)
{
	char *bd = xstrfmt("%s/tree/.klab-build-x", scratch_dir), *p;
	char *paths[] = { "include/linux/mm.h", "include/linux/other.h", "kernel/fork.c", "mm/none.c" };
	size_t counts[4];
	struct strbuf sb = STRBUF_INIT;
	static const char *const objs[] = { "kernel/.fork.o.cmd", "mm/.a.o.cmd", "mm/.b.o.cmd" };

	for (size_t i = 0; i < ARRAY_SIZE(objs); i++) {
		const char *obj = objs[i];
		char *text = xstrfmt("source_%s := ../%s\ndeps_x := \\\n  ../include/linux/mm.h \\\n%s\n", obj,
				     i ? "mm/a.c" : "kernel/fork.c", i == 2 ? "  ../include/linux/other.h \\\n" : "");

		p = xstrfmt("%s/%s", bd, obj);
		write_at(p, text);
		free(p);
		free(text);
	}
	/* not an object's: not counted */
	p = xstrfmt("%s/.vmlinux.cmd", bd);
	write_at(p, "cmd_vmlinux := ../include/linux/mm.h\n");
	free(p);
	p = xstrfmt("%s/tree", scratch_dir);
	assert_int_equal(ksources_dependents(bd, p, paths, 4, counts), 0);
	free(p);
	assert_int_equal(counts[0], 3);
	assert_int_equal(counts[1], 1);
	assert_int_equal(counts[2], 1);
	assert_int_equal(counts[3], 0);
	assert_int_equal(ksources_top(paths, counts, 4, 3, &sb), 3);
	assert_string_equal(sb.buf, "include/linux/mm.h (3), include/linux/other.h (1), kernel/fork.c (1)");
	strbuf_reset(&sb);
	assert_int_equal(ksources_top(paths, counts, 4, 1, &sb), 1);
	assert_string_equal(sb.buf, "include/linux/mm.h (3)");
	strbuf_release(&sb);
	/* ccache's stats log: one block a compile */
	assert_int_equal(kbuild_count_ccache_hits("# a.c\ncache_miss\ndirect_cache_miss\n# b.c\ndirect_cache_hit\n"
						  "local_storage_hit\n# c.S\npreprocessed_cache_hit\n# d.c\n"
						  "direct_cache_hit\n# /dev/null\ndirect_cache_hit\n# \nno_input_file\n"),
			 3);
	assert_int_equal(kbuild_count_ccache_hits(""), 0);
	free(bd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kkeep__comment_only_files_keep_their_mtime),
		cmocka_unit_test(test_kkeep__any_doubt_rebuilds),
		cmocka_unit_test(test_kkeep__nothing_checked_out_keeps_nothing),
		cmocka_unit_test(test_kkeep__build_explained_by_dependents_and_ccache),
	};
	int rc = cmocka_run_group_tests(tests, git_scratch_setup, scratch_teardown);

	worktree_free(wt);
	gitrepo_free(repo);
	free(src);
	free(wtdir);
	return rc;
}
