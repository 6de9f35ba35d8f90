/* Unit tests of the revert check: the revert commit klab makes in its own
 * worktree's object store (real repositories made with git in a temp
 * dir: a clean revert, a conflict, a merge, the user's repository left
 * without new objects or refs), and the outcome the measured values
 * give (revert.c, hand-made samples). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab/db.h"
#include "lab/gitrepo.h"
#include "kernel/kbuild.h"
#include "lab/lab.h"
#include "engine/bisect-run.h"
#include "engine/perfbisect.h"
#include "engine/revert.h"
#include "core/verdict.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "helpers.h"

static char dir[] = "/tmp/klab-test-revert.XXXXXX";

/* Run a shell command in the user's repository (git with a fixed
 * identity and dates, no user or system config). */
static void in_user(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void in_user(const char *fmt, ...)
{
	va_list ap;
	struct strbuf sb = STRBUF_INIT, cmd = STRBUF_INIT;
	char *body;

	va_start(ap, fmt);
	strbuf_vaddf(&cmd, fmt, ap);
	va_end(ap);
	body = strbuf_detach(&cmd, NULL);
	strbuf_addf(&sb, "cd '%s/user' && export GIT_CONFIG_NOSYSTEM=1 HOME='%s' "
		    "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t "
		    "GIT_AUTHOR_DATE='2020-01-01 00:00:00 +0000' GIT_COMMITTER_DATE='2020-01-01 00:00:00 +0000' && %s",
		    dir, dir, body);
	if (system(sb.buf) != 0)
		fail_msg("command failed: %s", body);
	free(body);
	strbuf_release(&sb);
}

/* Output of a shell command in the user's repository, trailing newline
 * dropped (caller frees). */
static char *out(const char *cmd)
{
	char *full = xstrfmt("cd '%s/user' && %s", dir, cmd);
	FILE *f = popen(full, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;

	assert_non_null(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	pclose(f);
	free(full);
	while (sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = '\0';
	return strbuf_detach(&sb, NULL);
}

static char *rev(const char *r)
{
	char *cmd = xstrfmt("git rev-parse %s", r), *hex = out(cmd);

	free(cmd);
	return hex;
}

/* What the user's repository holds: every file under .git with its size,
 * mtime and mode (objects, packs, refs, HEAD, index), as
 * t-user-tree-untouched.sh compares them. */
static char *user_state(void)
{
	return out("find .git -printf '%p %s %T@ %m\\n' | sort; cat .git/packed-refs 2>/dev/null; "
		   "cat .git/HEAD; git for-each-ref; sha1sum .git/index");
}

/* c1: a = 1..5; c2 (the culprit): line 2 changed; c3 (bad): b added;
 * c4: line 2 changed again (a revert of c2 on it conflicts);
 * side branch from c1 adds m, merged into c3 as M. */
static int setup(void **state)
{
	char *user;

	(void)state;
	assert_non_null(mkdtemp(dir));
	user = xstrfmt("%s/user", dir);
	assert_int_equal(mkdir_p(user, 0755), 0);
	free(user);
	gitrepo_global_init();
	in_user("git init -q -b main . && printf '1\\n2\\n3\\n4\\n5\\n' > a && git add a && git commit -qm c1 && "
	   "git tag c1");
	in_user("sed -i 's/^2$/two/' a && git commit -qam c2 && git tag c2");
	in_user("echo b > b && git add b && git commit -qm c3 && git tag c3");
	in_user("git checkout -q -b side c1 && echo m > m && git add m && git commit -qm side && "
	   "git checkout -q main && git merge -q --no-ff -m M side && git tag M");
	in_user("git checkout -q -b later c3 && sed -i 's/^two$/TWO/' a && git commit -qam c4 && git tag c4 && "
	   "git checkout -q main");
	/* c5 changes line 5 on c3, so the revert of c2 on it is a real
	 * merge of a; the merged text is a blob the user has already (tag
	 * same), which libgit2 would "freshen" in the user's pack */
	in_user("git checkout -q -b five c3 && sed -i 's/^5$/FIVE/' a && git commit -qam c5 && git tag c5 && "
	   "git checkout -q -b same c1 && sed -i 's/^5$/FIVE/' a && git commit -qam same && git tag same && "
	   "git checkout -q main");
	/* twelve files changed by `many`, each changed again on top: its
	 * revert conflicts in all of them */
	in_user("git checkout -q -b wide c1 && for i in 01 02 03 04 05 06 07 08 09 10 11 12; do echo x > f$i; done && "
	   "git add . && git commit -qm mk && sed -i 's/x/y/' f* && git commit -qam many && git tag many && "
	   "sed -i 's/y/z/' f* && git commit -qam again && git tag again && git checkout -q main");
	/* packed, as a kernel tree is: the alternates lend packs too */
	in_user("git gc -q --prune=now");
	/* old, as a kernel tree's are: libgit2 leaves a pack used in the last
	 * seconds alone when it "freshens" an object */
	in_user("find .git -exec touch -h -d '2020-01-01 00:00:00' {} +");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_test_dir(dir);
	return 0;
}

static struct worktree *open_wt(struct gitrepo **repo, const char *name)
{
	char *user = xstrfmt("%s/user", dir), *wtdir = xstrfmt("%s/%s", dir, name);
	struct worktree *wt;

	assert_int_equal(gitrepo_open(repo, user), 0);
	assert_int_equal(worktree_open(&wt, *repo, wtdir), 0);
	free(user);
	free(wtdir);
	return wt;
}

/* `git show` of a path in klab's worktree repository (it reads the
 * user's objects through the alternates, klab's own directly). */
static char *wt_show(const char *name, const char *hex, const char *path)
{
	char *cmd = xstrfmt("git --git-dir='%s/%s/.git' show %s:%s 2>/dev/null", dir, name, hex, path);
	char *s = out(cmd);

	free(cmd);
	return s;
}

/* worktree_revert of the user's culprit on top of bad (tags), in klab's
 * new worktree name, returns want; rr holds what it did. */
static void revert_in(const char *name, const char *culprit, const char *bad, int want, struct revert_result *rr)
{
	struct gitrepo *repo;
	struct worktree *wt = open_wt(&repo, name);
	char *c = rev(culprit), *b = rev(bad);

	assert_int_equal(worktree_revert(wt, c, b, rr), want);
	free(c);
	free(b);
	worktree_free(wt);
	gitrepo_free(repo);
}

static void test_revert__clean_revert_undoes_the_culprit_on_top_of_bad(void **state)
{
	struct gitrepo *repo;
	struct worktree *wt = open_wt(&repo, "wt-clean");
	struct revert_result rr, again;
	char *c2 = rev("c2"), *c3 = rev("c3"), *a, *b, *parent, tree[41];

	(void)state;
	assert_int_equal(worktree_revert(wt, c2, c3, &rr), 0);
	assert_true(rr.applies);
	assert_int_equal(strlen(rr.hex), 40);
	a = wt_show("wt-clean", rr.hex, "a");
	b = wt_show("wt-clean", rr.hex, "b");
	assert_string_equal(a, "1\n2\n3\n4\n5");
	assert_string_equal(b, "b");
	{
		char *cmd = xstrfmt("git --git-dir='%s/wt-clean/.git' rev-parse %s^", dir, rr.hex);
		parent = out(cmd);
		free(cmd);
	}
	assert_string_equal(parent, c3);
	assert_int_equal(worktree_commit_tree(wt, rr.hex, tree), 0);
	{
		struct commit_info ci;

		assert_int_equal(worktree_commit_info(wt, rr.hex, &ci), 0);
		assert_string_equal(ci.subject, "Revert \"c2\"");
		assert_string_equal(ci.author, "klab <klab@localhost>");
		assert_string_equal(ci.tree, tree);
		assert_int_equal(ci.nr_parents, 1);
		commit_info_release(&ci);
	}
	/* fixed identity and date: the same revert has the same id */
	assert_int_equal(worktree_revert(wt, c2, c3, &again), 0);
	assert_string_equal(again.hex, rr.hex);
	/* and it can be checked out where klab builds */
	assert_int_equal(worktree_checkout(wt, rr.hex), 0);
	revert_result_release(&again);
	revert_result_release(&rr);
	free(a);
	free(b);
	free(parent);
	free(c2);
	free(c3);
	worktree_free(wt);
	gitrepo_free(repo);
}

static void test_revert__conflict_names_the_paths_and_makes_nothing(void **state)
{
	struct revert_result rr;

	(void)state;
	revert_in("wt-conflict", "c2", "c4", 1, &rr);
	assert_false(rr.applies);
	assert_string_equal(rr.hex, "");
	assert_int_equal(rr.nr_conflicts, 1);
	assert_int_equal(rr.nr_paths, 1);
	assert_string_equal(rr.paths[0], "a");
	assert_string_equal(rr.reason, "conflicts in 1 file: a");
	revert_result_release(&rr);
}

static void test_revert__many_conflicts_are_counted_and_ten_named(void **state)
{
	struct revert_result rr;

	(void)state;
	revert_in("wt-many", "many", "again", 1, &rr);
	assert_int_equal(rr.nr_conflicts, 12);
	assert_int_equal(rr.nr_paths, REVERT_MAX_CONFLICTS);
	assert_string_equal(rr.paths[0], "f01");
	assert_string_equal(rr.reason, "conflicts in 12 files: f01, f02, f03, f04, f05, f06, f07, f08, f09, f10 "
				       "and 2 more");
	revert_result_release(&rr);
}

static void test_revert__merge_is_reverted_against_its_first_parent(void **state)
{
	struct revert_result rr;
	char *a, *mfile;

	(void)state;
	revert_in("wt-merge", "M", "M", 0, &rr);
	/* the side branch's file goes, the first parent's line stays */
	mfile = wt_show("wt-merge", rr.hex, "m");
	a = wt_show("wt-merge", rr.hex, "a");
	assert_string_equal(mfile, "");
	assert_string_equal(a, "1\ntwo\n3\n4\n5");
	revert_result_release(&rr);
	free(a);
	free(mfile);
}

static void test_revert__user_repository_gains_no_objects_or_refs(void **state)
{
	char *before, *after;
	struct gitrepo *repo;
	struct worktree *wt = open_wt(&repo, "wt-untouched");
	struct revert_result rr;
	char *c2 = rev("c2"), *c3 = rev("c3"), *m = rev("M"), *c4 = rev("c4"), *cmd, *where;

	(void)state;
	/* aged again: earlier tests' reverts must not hide a touch here
	 * (libgit2 freshens a pack at most once in a while) */
	in_user("find .git -exec touch -h -d '2020-01-01 00:00:00' {} +");
	before = user_state();
	assert_int_equal(worktree_revert(wt, c2, c3, &rr), 0);
	/* the commit is klab's: the user's repository cannot read it */
	cmd = xstrfmt("git cat-file -e %s 2>/dev/null && echo user || echo klab", rr.hex);
	where = out(cmd);
	assert_string_equal(where, "klab");
	revert_result_release(&rr);
	assert_int_equal(worktree_revert(wt, m, m, &rr), 0);
	revert_result_release(&rr);
	assert_int_equal(worktree_revert(wt, c2, c4, &rr), 1);
	revert_result_release(&rr);
	{
		char *c5 = rev("c5"), *a;

		assert_int_equal(worktree_revert(wt, c2, c5, &rr), 0);
		a = wt_show("wt-untouched", rr.hex, "a");
		assert_string_equal(a, "1\n2\n3\n4\nFIVE");
		revert_result_release(&rr);
		free(a);
		free(c5);
	}
	after = user_state();
	assert_string_equal(before, after);
	free(cmd);
	free(where);
	free(before);
	free(after);
	free(c2);
	free(c3);
	free(c4);
	free(m);
	worktree_free(wt);
	gitrepo_free(repo);
}

/* ---- the whole check, where it ends before any guest ---- */

struct check_env {
	struct lab lab;
	struct gitrepo *repo;
	struct worktree *wt;
	struct bisection b;
	struct bisect_run br;
	struct perf perf;
	struct revert_engine engine;	/* the job tester's (perf_revert_engine) */
	struct kbuild_recipe recipe;
	struct revert_env env;
	char *bad, *culprit;
};

/* A lab with a job bisection of the user's repository, bad end `bad`,
 * and the job tester on it as the revert check's engine. */
static void check_env_open(struct check_env *c, const char *name, const char *bad, const char *culprit)
{
	char *labdir = xstrfmt("%s/lab-%s", dir, name), *user = xstrfmt("%s/user", dir);
	struct bisection b;
	int created;

	memset(c, 0, sizeof(*c));
	c->wt = open_wt(&c->repo, name);
	assert_int_equal(lab_init(labdir, &created), 0);
	assert_int_equal(lab_open(&c->lab, labdir), 0);
	memset(&b, 0, sizeof(b));
	assert_int_equal(db_repo_id(c->lab.db, user, &b.repo_id), 0);
	c->bad = rev(bad);
	c->culprit = rev(culprit);
	memcpy(b.bad, c->bad, 41);
	b.job_path = "job.yaml";
	b.job_text = "suite: stress-ng\ntestcase: mmapaddr\n";
	b.kpi = "stress-ng.mmapaddr.ops_per_sec";
	b.build = 1;
	assert_int_equal(db_bisection_create(c->lab.db, &b), 0);
	assert_int_equal(db_bisection_load(c->lab.db, b.id, &c->b), 0);
	assert_int_equal(perf_init(&c->perf, &c->lab, c->b.job_path, c->b.job_text, c->b.kpi), 0);
	assert_int_equal(bisect_run_init(&c->br, &c->lab, &c->b, NULL, NULL), 0);
	c->br.tester = &perf_tester;
	c->br.tester_data = &c->perf;
	perf_revert_engine(&c->br, &c->engine);
	c->recipe.base = "tinyconfig";
	c->env = (struct revert_env){ .lab = &c->lab, .repo = c->repo, .wt = c->wt, .repo_id = b.repo_id,
				      .bisection_id = b.id, .recipe = &c->recipe, .bad = c->bad,
				      .culprit = c->culprit, .engine = &c->engine };
	free(labdir);
	free(user);
}

static void check_env_close(struct check_env *c)
{
	perf_release(&c->perf);
	bisect_run_release(&c->br);
	bisection_release(&c->b);
	lab_close(&c->lab);
	worktree_free(c->wt);
	gitrepo_free(c->repo);
	free(c->bad);
	free(c->culprit);
}

static void test_revert__check_that_conflicts_is_stored_and_not_redone(void **state)
{
	struct check_env c;
	struct revert_check rc, got;

	(void)state;
	check_env_open(&c, "check-conflict", "c4", "c2");
	assert_int_equal(revert_check_run(&c.env, &rc), 0);
	assert_int_equal(rc.outcome, REVERT_NO_APPLY);
	assert_string_equal(rc.detail, "conflicts in 1 file: a");
	assert_int_equal(db_bisection_revert(c.lab.db, c.env.bisection_id, &got), 1);
	assert_int_equal(got.outcome, REVERT_NO_APPLY);
	revert_check_release(&got);
	revert_check_release(&rc);
	/* resumed: the stored check is the answer (the worktree is not even
	 * read: a freed one would crash) */
	worktree_free(c.wt);
	c.wt = c.env.wt = NULL;
	assert_int_equal(revert_check_run(&c.env, &rc), 0);
	assert_int_equal(rc.outcome, REVERT_NO_APPLY);
	revert_check_release(&rc);
	check_env_close(&c);
}

static void test_revert__check_of_a_tree_known_broken_does_not_build(void **state)
{
	struct check_env c;
	struct revert_check rc;
	struct revert_result rr;
	char tree[41], recipe_id[41];
	int64_t build_id;

	(void)state;
	check_env_open(&c, "check-broken", "c3", "c2");
	/* the reverted tree failed to build before: the store says so and
	 * nothing is checked out or compiled */
	assert_int_equal(worktree_revert(c.wt, c.culprit, c.bad, &rr), 0);
	assert_int_equal(worktree_commit_tree(c.wt, rr.hex, tree), 0);
	assert_int_equal(kbuild_recipe_id(&c.recipe, recipe_id), 0);
	assert_int_equal(db_build_begin(c.lab.db, c.env.repo_id, rr.hex, tree, recipe_id, "tinyconfig", &build_id), 0);
	assert_int_equal(db_build_finish(c.lab.db, build_id, "build-failed", NULL, NULL, NULL,
					 "mm/mmap.c:12:3: error: 'x' undeclared", NULL, 1000, 1), 0);
	assert_int_equal(revert_check_run(&c.env, &rc), 0);
	assert_int_equal(rc.outcome, REVERT_NO_BUILD);
	assert_string_equal(rc.commit, rr.hex);
	assert_string_equal(rc.detail, "build failed: mm/mmap.c:12:3: error: 'x' undeclared");
	revert_check_release(&rc);
	/* the commit klab made is stored with its subject, like a tested one */
	{
		char *subj = db_commit_subject(c.lab.db, c.env.repo_id, rr.hex);
		assert_string_equal(subj, "Revert \"c2\"");
		free(subj);
	}
	revert_result_release(&rr);
	check_env_close(&c);
}

static void test_revert__check_turned_off_stores_nothing(void **state)
{
	struct check_env c;
	struct revert_check got;

	(void)state;
	check_env_open(&c, "check-off", "c3", "c2");
	assert_int_equal(db_bisection_set_revert_check(c.lab.db, c.env.bisection_id, 0), 0);
	assert_int_equal(revert_check_bisection(&c.env), 0);
	assert_int_equal(db_bisection_revert(c.lab.db, c.env.bisection_id, &got), 0);
	/* and a test-command bisection has none */
	c.env.engine = NULL;
	assert_int_equal(db_bisection_set_revert_check(c.lab.db, c.env.bisection_id, 1), 0);
	assert_int_equal(revert_check_bisection(&c.env), 0);
	assert_int_equal(db_bisection_revert(c.lab.db, c.env.bisection_id, &got), 0);
	check_env_close(&c);
}

/* ---- the outcome from measured values ---- */

static const double good[] = { 12400, 12350, 12450, 12380, 12420 };
static const double bad[] = { 9000, 9050, 8950, 9020, 8980 };

/* revert_decide on the reverted kernel's runs rev[0..n), held to good and
 * bad, comes out want, asking for more runs or not. */
static void assert_decides(const double *rev, size_t n, enum revert_outcome want, int more)
{
	struct verdict_policy pol;
	struct verdict v;
	enum revert_outcome o;

	verdict_policy_init(&pol);
	assert_int_equal(revert_decide(&v, &o, &pol, good, ARRAY_SIZE(good), bad, ARRAY_SIZE(bad), rev, n, 1), more);
	assert_int_equal(o, want);
}

static void test_revert__like_good_restores_good(void **state)
{
	static const double rev[] = { 12345, 12400, 12300, 12420, 12380 };

	(void)state;
	assert_decides(rev, ARRAY_SIZE(rev), REVERT_RESTORES_GOOD, 0);
}

static void test_revert__like_bad_does_not_restore(void **state)
{
	static const double rev[] = { 9010, 8990, 9040, 8970, 9000 };

	(void)state;
	assert_decides(rev, ARRAY_SIZE(rev), REVERT_NO_RESTORE, 0);
}

static void test_revert__half_way_does_not_restore_at_the_cap(void **state)
{
	double rev[12];

	(void)state;
	/* two regressions in the range: the revert of one gives half back */
	for (size_t i = 0; i < ARRAY_SIZE(rev); i++)
		rev[i] = 10700 + (i % 3) * 20.0;
	assert_decides(rev, ARRAY_SIZE(rev), REVERT_NO_RESTORE, 0);
}

/* A host that drifts (-1.5% a run): the ends measured first, the revert
 * last, at the good end's level.  Against the pooled runs it looks short
 * of good and does not restore; against the ends' latest runs brought to
 * its time by the trend they share (verdict_local, as measure() does
 * under drift) it restores good. */
static void test_revert__under_drift_judged_against_the_local_runs(void **state)
{
	static const double wobble[] = { 0.004, -0.003, 0.002, -0.005, 0.001, 0.003, -0.002 };
	double gv[5], gt[5], bv[5], bt[5], rv[5], rt[5];
	struct verdict_runs G = { gv, gt, 5 }, B = { bv, bt, 5 }, C = { rv, rt, 5 };
	struct verdict_policy pol;
	struct verdict_local loc;
	struct verdict v;
	enum revert_outcome o;

	(void)state;
	/* good and bad interleaved at times 0-7, a fresh run of each at 20
	 * and 21, the revert at 22-26 */
	for (int i = 0; i < 5; i++) {
		gt[i] = i < 4 ? 2 * i : 20;
		bt[i] = i < 4 ? 2 * i + 1 : 21;
		rt[i] = 22 + i;
		gv[i] = 12400 * exp(-0.015 * gt[i]) * (1 + wobble[i]);
		bv[i] = 9000 * exp(-0.015 * bt[i]) * (1 + wobble[i + 1]);
		rv[i] = 12400 * exp(-0.015 * rt[i]) * (1 + wobble[i + 2]);
	}
	verdict_policy_init(&pol);
	assert_int_equal(revert_decide(&v, &o, &pol, gv, 5, bv, 5, rv, 5, 1), 0);
	assert_int_equal(o, REVERT_NO_RESTORE);

	assert_int_equal(verdict_local(&loc, &pol, &G, &B, &C), 0);
	assert_true(loc.trend.drift);
	assert_true(loc.trend.percent < -1.2 && loc.trend.percent > -1.8);
	assert_int_equal(loc.nc, 5);
	assert_int_equal(revert_decide(&v, &o, &pol, loc.good, loc.ng, loc.bad, loc.nb, loc.cand, loc.nc, 1), 0);
	assert_int_equal(o, REVERT_RESTORES_GOOD);
	verdict_local_release(&loc);
}

/* "Does not restore" outside drift waits for REVERT_FRESH_END_RUNS runs of
 * each end beside the revert's; "restores good", and anything under
 * drift (judged against the ends' latest runs already), does not. */
static void test_revert__does_not_restore_waits_for_fresh_ends(void **state)
{
	(void)state;
	assert_int_equal(revert_fresh_ends(REVERT_NO_RESTORE, 0, 0, 0), 3);
	assert_int_equal(revert_fresh_ends(REVERT_NO_RESTORE, 0, 1, 2), 3);
	assert_int_equal(revert_fresh_ends(REVERT_NO_RESTORE, 0, REVERT_FRESH_END_RUNS, 2), 2);
	assert_int_equal(revert_fresh_ends(REVERT_NO_RESTORE, 0, 1, REVERT_FRESH_END_RUNS), 1);
	assert_int_equal(revert_fresh_ends(REVERT_NO_RESTORE, 0, REVERT_FRESH_END_RUNS, REVERT_FRESH_END_RUNS), 0);
	assert_int_equal(revert_fresh_ends(REVERT_NO_RESTORE, 1, 0, 0), 0);
	assert_int_equal(revert_fresh_ends(REVERT_RESTORES_GOOD, 0, 0, 0), 0);
}

/* A drift the check itself saw: "does not restore" waits for
 * REVERT_DRIFT_RUNS revert runs taken the drift way, within the cap; a
 * drift the bisection saw, or "restores good", does not wait. */
static void test_revert__drift_seen_in_the_check_waits_for_runs_taken_its_way(void **state)
{
	(void)state;
	assert_true(revert_drift_wait(REVERT_NO_RESTORE, 1, 0, 1));
	assert_true(revert_drift_wait(REVERT_NO_RESTORE, 1, REVERT_DRIFT_RUNS - 1, 1));
	assert_false(revert_drift_wait(REVERT_NO_RESTORE, 1, REVERT_DRIFT_RUNS, 1));
	assert_false(revert_drift_wait(REVERT_NO_RESTORE, 1, 0, 0));
	assert_false(revert_drift_wait(REVERT_NO_RESTORE, 0, 0, 1));
	assert_false(revert_drift_wait(REVERT_RESTORES_GOOD, 1, 0, 1));
}

/* A host that starts to slow down after the ends' first runs (1% a run
 * from run 6 on: the ends' first runs show no trend), a full revert
 * measured at runs 20-24: against those runs it looks apart from good
 * and does not restore.  Three runs of each end beside it (runs 25-30)
 * let the trend test see the drift, and against the ends' latest runs,
 * brought to its time, it restores good: what measure() does before
 * saying "does not restore". */
static void test_revert__fresh_ends_reveal_a_drift_the_first_runs_hid(void **state)
{
	static const double wobble[] = { 0.004, -0.003, 0.002, -0.005, 0.001, 0.003, -0.002, 0.0 };
	double gv[6], gt[6], bv[6], bt[6], rv[5], rt[5];
	struct verdict_runs G = { gv, gt, 6 }, B = { bv, bt, 6 }, C = { rv, rt, 5 };
	struct verdict_runs ends[2] = { G, B }, first[2] = { { gv, gt, 3 }, { bv, bt, 3 } };
	struct verdict_policy pol;
	struct verdict_trend tr;
	struct verdict_local loc;
	struct verdict v;
	enum revert_outcome o;

	(void)state;
	for (int i = 0; i < 6; i++) {
		gt[i] = i < 3 ? 2 * i : 25 + 2 * (i - 3);
		bt[i] = gt[i] + 1;
		gv[i] = 12400 * exp(-0.01 * fmax(0, gt[i] - 6)) * (1 + wobble[i]);
		bv[i] = 9000 * exp(-0.01 * fmax(0, bt[i] - 6)) * (1 + wobble[i + 1]);
	}
	for (int i = 0; i < 5; i++) {
		rt[i] = 20 + i;
		rv[i] = 12400 * exp(-0.01 * (rt[i] - 6)) * (1 + wobble[i + 2]);
	}
	verdict_policy_init(&pol);
	assert_int_equal(verdict_trend(&tr, &pol, first, 2), 0);
	assert_false(tr.drift);
	assert_int_equal(revert_decide(&v, &o, &pol, gv, 3, bv, 3, rv, 5, 1), 0);
	assert_int_equal(o, REVERT_NO_RESTORE);
	assert_int_equal(revert_fresh_ends(o, 0, 0, 0), 3);

	assert_int_equal(verdict_trend(&tr, &pol, ends, 2), 0);
	assert_true(tr.drift);
	assert_int_equal(verdict_local(&loc, &pol, &G, &B, &C), 0);
	assert_int_equal(revert_decide(&v, &o, &pol, loc.good, loc.ng, loc.bad, loc.nb, loc.cand, loc.nc, 1), 0);
	assert_int_equal(o, REVERT_RESTORES_GOOD);
	verdict_local_release(&loc);
}

/* One of two changes reverted alone lands between the ends: clearly
 * apart from good by a real part of the gap, which 5 runs show, so it
 * does not restore without waiting for the cap; 3 runs are not enough. */
static void test_revert__half_way_does_not_restore_from_five_runs(void **state)
{
	static const double rev[] = { 10700, 10720, 10740, 10710, 10730 };
	struct verdict_policy pol;
	struct verdict v;
	enum revert_outcome o;

	(void)state;
	assert_decides(rev, 3, REVERT_NONE, 1);
	verdict_policy_init(&pol);
	assert_int_equal(revert_decide(&v, &o, &pol, good, ARRAY_SIZE(good), bad, ARRAY_SIZE(bad), rev, 5, 1), 0);
	assert_int_equal(o, REVERT_NO_RESTORE);
	assert_string_equal(v.rule, "apart-from-good");
	assert_non_null(strstr(v.text, "of the way to bad"));
}

/* Most of the way back (a tenth of the gap short of good): not decided
 * early as "does not restore", whatever the standard errors say. */
static void test_revert__nearly_good_is_not_decided_early(void **state)
{
	static const double rev[] = { 12050, 12060, 12070, 12040, 12055 };
	struct verdict_policy pol;
	struct verdict v;
	enum revert_outcome o;

	(void)state;
	verdict_policy_init(&pol);
	assert_true(revert_decide(&v, &o, &pol, good, ARRAY_SIZE(good), bad, ARRAY_SIZE(bad), rev, 5, 1) >= 0);
	assert_int_not_equal(o, REVERT_NO_RESTORE);
}

/* t-trust's half 2 under build load (2026-12-02): good 7,000 +-25%, the
 * revert 4,809 +-6% (42% of the way to bad, 27% on the log scale) was
 * "like good" from 3 runs and restored good.  Now it is short of good:
 * more runs, and at the cap it does not restore. */
static void test_revert__short_of_good_behind_a_noisy_good_end(void **state)
{
	static const double noisy_good[] = { 5400, 7000, 9100 };
	static const double low_bad[] = { 1750, 1800, 1850 };
	static const double rev[] = { 4650, 4809, 4950 };
	struct verdict_policy pol;
	struct verdict v;
	enum revert_outcome o;

	(void)state;
	verdict_policy_init(&pol);
	pol.revert_band = 1;	/* the rule before: restores good */
	assert_int_equal(revert_decide(&v, &o, &pol, noisy_good, 3, low_bad, 3, rev, 3, 1), 0);
	assert_int_equal(o, REVERT_RESTORES_GOOD);
	verdict_policy_init(&pol);
	assert_int_equal(revert_decide(&v, &o, &pol, noisy_good, 3, low_bad, 3, rev, 3, 1), 1);
	assert_int_equal(o, REVERT_NONE);
	assert_string_equal(v.rule, "short-of-good");
	assert_true(v.next_runs > 3);
	assert_non_null(strstr(v.text, "42% of the way to bad"));
	/* at the cap (3 runs: the ladder ends there) it does not restore */
	assert_int_equal(verdict_policy_set_cap(&pol, 3), 0);
	assert_int_equal(revert_decide(&v, &o, &pol, noisy_good, 3, low_bad, 3, rev, 3, 1), 0);
	assert_int_equal(o, REVERT_NO_RESTORE);
}

static void test_revert__too_few_runs_ask_for_more(void **state)
{
	static const double rev[] = { 12345, 12400 };

	(void)state;
	assert_decides(rev, ARRAY_SIZE(rev), REVERT_NONE, 1);
}

static void test_revert__outcome_names_round_trip(void **state)
{
	static const enum revert_outcome all[] = { REVERT_RESTORES_GOOD, REVERT_NO_RESTORE, REVERT_NO_APPLY,
						   REVERT_NO_BUILD, REVERT_NOT_MEASURED };
	enum revert_outcome o;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(all); i++) {
		assert_int_equal(revert_outcome_from_name(revert_outcome_name(all[i]), &o), 0);
		assert_int_equal(o, all[i]);
	}
	assert_int_equal(revert_outcome_from_name("restores", &o), -1);
	assert_int_equal(revert_outcome_from_name(NULL, &o), -1);
	assert_string_equal(revert_outcome_text(REVERT_NO_BUILD), "reverted kernel does not build");
}

/* revert_check_line of rc says want. */
static void assert_check_line(const struct revert_check *rc, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	revert_check_line(&sb, rc);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void test_revert__summary_line_says_outcome_and_numbers(void **state)
{
	/* a revert that was not measured: its detail, first line only */
	static const struct {
		enum revert_outcome outcome;
		char *detail;	/* as struct revert_check holds it */
		const char *line;
	} unmeasured[] = {
		{ REVERT_NO_APPLY, "conflicts in 2 files: mm/mmap.c, mm/vma.c",
		  "revert check: revert does not apply (conflicts in 2 files: mm/mmap.c, mm/vma.c)" },
		{ REVERT_NO_BUILD, "build failed: mm/mmap.c:12: error: x\nmore",
		  "revert check: reverted kernel does not build (build failed: mm/mmap.c:12: error: x)" },
	};
	struct revert_check rc = { 0 };

	(void)state;
	revert_restored(&rc, "", 12345, 0.6, 12400, 9000, NULL);
	assert_check_line(&rc, "revert check: revert restores good (12345 ±1% vs good 12400, bad 9000; 5 runs)");
	rc.outcome = REVERT_NO_RESTORE;
	rc.median = 10700;
	assert_check_line(&rc, "revert check: revert does not restore (10700 ±1% vs good 12400, bad 9000; 5 runs; "
			       "it recovers 50% of the gap)");
	for (size_t i = 0; i < ARRAY_SIZE(unmeasured); i++) {
		rc.outcome = unmeasured[i].outcome;
		rc.detail = unmeasured[i].detail;
		assert_check_line(&rc, unmeasured[i].line);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_revert__clean_revert_undoes_the_culprit_on_top_of_bad),
		cmocka_unit_test(test_revert__conflict_names_the_paths_and_makes_nothing),
		cmocka_unit_test(test_revert__many_conflicts_are_counted_and_ten_named),
		cmocka_unit_test(test_revert__merge_is_reverted_against_its_first_parent),
		cmocka_unit_test(test_revert__user_repository_gains_no_objects_or_refs),
		cmocka_unit_test(test_revert__check_that_conflicts_is_stored_and_not_redone),
		cmocka_unit_test(test_revert__check_of_a_tree_known_broken_does_not_build),
		cmocka_unit_test(test_revert__check_turned_off_stores_nothing),
		cmocka_unit_test(test_revert__like_good_restores_good),
		cmocka_unit_test(test_revert__like_bad_does_not_restore),
		cmocka_unit_test(test_revert__half_way_does_not_restore_at_the_cap),
		cmocka_unit_test(test_revert__under_drift_judged_against_the_local_runs),
		cmocka_unit_test(test_revert__half_way_does_not_restore_from_five_runs),
		cmocka_unit_test(test_revert__does_not_restore_waits_for_fresh_ends),
		cmocka_unit_test(test_revert__drift_seen_in_the_check_waits_for_runs_taken_its_way),
		cmocka_unit_test(test_revert__fresh_ends_reveal_a_drift_the_first_runs_hid),
		cmocka_unit_test(test_revert__nearly_good_is_not_decided_early),
		cmocka_unit_test(test_revert__short_of_good_behind_a_noisy_good_end),
		cmocka_unit_test(test_revert__too_few_runs_ask_for_more),
		cmocka_unit_test(test_revert__outcome_names_round_trip),
		cmocka_unit_test(test_revert__summary_line_says_outcome_and_numbers),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
