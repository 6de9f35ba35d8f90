/* Unit tests of the bisection loop (bisect-run.c) on real lab databases
 * and a real small git history, driven by a FAKE step tester: the fake
 * stands in for a kernel build and guest test (as syzkaller's pkg/bisect
 * tests do with a test environment), so the loop's choose -> test ->
 * record -> mark, skips, resume after a kill at every recorded point,
 * multisection rounds and contradictory rounds run in a second, with no
 * kernel, guest or test command.  Each bisection runs in a child
 * process, which a "kill" ends with _exit or SIGKILL. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/bisect-run.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "cmd/klab.h"
#include "lab/lab.h"
#include "util/util.h"

#define NR_COMMITS 16	/* c0 (good) .. c15 (bad) */
#define KILLED 9	/* the exit code of a bisection the fake killed */

static char tmpdir[256];
static char repo_dir[300];
static char hashes[NR_COMMITS][41];
static int lab_nr;

/* ---- the FAKE tester ------------------------------------------------------ */

/* Commit ci of the linear history is bad from `culprit` on, unless told
 * otherwise; kill points end the bisection's process as a crash would. */
struct fake {
	int culprit;
	int culprit2;		/* two changes: a second culprit after `culprit`, 0 none
				 * (a commit between them is `between` the ends) */
	int exit_at_half2;	/* the n-th test of half 2 dies before its verdict */
	int skip[NR_COMMITS];	/* 1: the fake's "test" cannot tell (a skip) */
	int skip_first;		/* the first commit tested is a skip */
	int lie_good;		/* this bad commit tests good (noise), -1 none: in pass 1 only */
	int lie_always;		/* ... in pass 2 too */
	int judge;		/* confirm the culprit found (right only when it is `culprit`)
				 * and reopen the range once, as the job tester does */
	int exit_at_test;	/* the n-th test dies before its verdict (the step row begun) */
	int exit_at_test2;	/* ... the n-th test of pass 2 */
	int exit_after_done;	/* the process dies after the n-th stored verdict */
	int kill_round, kill_slot;	/* multisection: that slot kills the bisection after its verdict */
	int abort_at_test;	/* the n-th test gives no verdict (the machine failed) */
	int abort_round, abort_slot;	/* multisection: that slot gives no verdict */
	int refuse_pass2;	/* pass 2's references do not show the regression */
	int exit_at_halves_end;	/* the process dies in halves_end, before it says anything */
	/* counters of the process they run in */
	int tests, tests2, tests_half2, dones, rounds, slot;
};

/* With two culprits a commit's level: 0 before the first, 1 between, 2
 * from the second on; against the ends of the half being bisected
 * (0..2, 0..1, 1..2) it is good, bad, or (the whole range) between. */
static int fake_level(const struct fake *f, int ci)
{
	return (ci >= f->culprit) + (ci >= f->culprit2);
}

static int commit_index(const char *hex)
{
	for (int i = 0; i < NR_COMMITS; i++)
		if (!strcmp(hashes[i], hex))
			return i;
	return -1;
}

static void fake_test(struct bisect_run *br, const struct step *s, struct step_outcome *out)
{
	struct fake *f = br->tester_data;
	int ci = commit_index(s->hash);

	if (++f->tests == f->exit_at_test || (br->pass == 2 && ++f->tests2 == f->exit_at_test2) ||
	    (br->half == 2 && ++f->tests_half2 == f->exit_at_half2))
		_exit(KILLED);
	if (f->tests == f->abort_at_test ||
	    (f->abort_round && f->rounds == f->abort_round && f->slot == f->abort_slot)) {
		strbuf_addstr(&out->reason, "fake: no verdict");
		out->why = xstrdup("the fake machine failed");
		return;
	}
	if (ci < 0) {
		strbuf_addstr(&out->reason, "fake: not a commit of the history");
		return;
	}
	if (f->skip[ci] || (f->skip_first && f->tests == 1)) {
		out->result = BISECT_SKIP;
		strbuf_addstr(&out->reason, "fake: cannot tell");
	} else if (f->culprit2) {
		int level = fake_level(f, ci);
		int good = br->half == 0 ? level == 0 : br->half == 1 ? level < 1 : level < 2;
		int bad;

		/* noise in a half: that commit tests good */
		if (ci == f->lie_good && br->half)
			good = 1;
		bad = br->half == 0 ? level == 2 : !good;

		out->result = good ? BISECT_GOOD : BISECT_SKIP;
		if (bad)
			out->result = BISECT_BAD;
		out->between = !good && !bad;
		strbuf_addstr(&out->reason, good ? "fake: fast" : bad ? "fake: slow" : "fake: half-way");
	} else if ((ci == f->lie_good && (br->pass == 1 || f->lie_always)) || ci < f->culprit) {
		out->result = BISECT_GOOD;
		strbuf_addstr(&out->reason, "fake: fast");
	} else {
		out->result = BISECT_BAD;
		strbuf_addstr(&out->reason, "fake: slow");
	}
	out->test_ms = 1;
}

static int fake_round_prepare(struct bisect_run *br, char (*hex)[41], int n, int *fork_slot)
{
	struct fake *f = br->tester_data;

	f->rounds++;
	return 0;
}

static int fake_slot_test(struct bisect_run *br, int i, const struct step *s, struct step_outcome *out)
{
	struct fake *f = br->tester_data;

	f->slot = i;
	fake_test(br, s, out);
	return 0;
}

static void fake_step_done(struct bisect_run *br, const struct step *s)
{
	struct fake *f = br->tester_data;

	if (++f->dones == f->exit_after_done)
		_exit(KILLED);
	if (f->kill_round && f->rounds == f->kill_round && f->slot == f->kill_slot) {
		/* the bisection dies mid-round; its slots follow (PDEATHSIG) */
		kill(getppid(), SIGKILL);
		_exit(0);
	}
}

static const struct step_tester_ops fake_tester = {
	.test_label = "test ",
	.test = fake_test,
	.round_prepare = fake_round_prepare,
	.slot_test = fake_slot_test,
	.step_done = fake_step_done,
};

/* The job tester's confirmation, faked: a first bad commit that is not
 * the real culprit is not confirmed. */
static char *fake_confirm(struct bisect_run *br, const char *culprit, int *confirmed)
{
	struct fake *f = br->tester_data;
	int ci = commit_index(culprit);

	*confirmed = ci == f->culprit || (f->culprit2 && ci == f->culprit2);
	/* a share the test can recognise: 10 times the commit's index */
	if (f->culprit2)
		br->share = 10.0 * ci;
	return xstrfmt("culprit %.12s %s (fake)", culprit, *confirmed ? "confirmed" : "NOT confirmed");
}

static void fake_reopen(struct bisect_run *br)
{
	(void)br;
}

static int fake_half(struct bisect_run *br, int half, const char *split)
{
	(void)br;
	(void)half;
	return commit_index(split) < 0 ? -1 : 0;
}

/* The job tester's reference phase, faked: pass 2's fresh references
 * may refuse (the host that made pass 1's regression has gone). */
static int fake_begin(struct bisect_run *br, char **message)
{
	struct fake *f = br->tester_data;

	if (br->pass == 2 && f->refuse_pass2) {
		*message = xstrdup("regression not reproduced: fake references alike");
		return 1;
	}
	return 0;
}

/* Both halves ended: what the job tester checks of each culprit (its
 * revert), faked as one line naming the confirmed culprits. */
static void fake_halves_end(struct bisect_run *br)
{
	struct fake *f = br->tester_data;
	struct half_culprit *c = NULL;
	size_t nr = 0;

	if (f->exit_at_halves_end)
		_exit(KILLED);
	assert_int_equal(db_half_culprits_load(br->lab->db, br->b->id, &c, &nr), 0);
	printf("fake: halves end:");
	for (size_t i = 0; i < nr; i++)
		if (c[i].has_culprit && c[i].confirmed)
			printf(" c%d", commit_index(c[i].culprit));
	printf("\n");
	half_culprits_release(c, nr);
}

static const struct step_tester_ops fake_judging_tester = {
	.test_label = "test ",
	.begin = fake_begin,
	.test = fake_test,
	.confirm = fake_confirm,
	.reopen = fake_reopen,
	.half = fake_half,
	.halves_end = fake_halves_end,
	.step_done = fake_step_done,
};

static struct fake fake_for(int culprit)
{
	struct fake f;

	memset(&f, 0, sizeof(f));
	f.culprit = culprit;
	f.lie_good = -1;
	return f;
}

/* ---- fixtures ------------------------------------------------------------- */

static void sh(const char *cmd)
{
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* One linear history of NR_COMMITS commits, one a second. */
static int group_setup(void **state)
{
	char *cmd, *list, *p;

	gitrepo_global_init();
	/* tmpfs unless TMPDIR says otherwise: a hundred small labs' fsyncs
	 * on a loaded disk take seconds */
	snprintf(tmpdir, sizeof(tmpdir), "%s/klab-test-bisect-run.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(repo_dir, sizeof(repo_dir), "%s/repo", tmpdir);
	cmd = xstrfmt("set -e; git init -q '%s'; cd '%s'; git config user.name T; git config user.email t@example.org; "
		      "for i in $(seq 0 %d); do echo $i > f; git add f; "
		      "GIT_AUTHOR_DATE=\"$((1700000000 + i)) +0000\" GIT_COMMITTER_DATE=\"$((1700000000 + i)) +0000\" "
		      "git commit -q -m c$i; done; git rev-list --reverse HEAD > ../hashes",
		      repo_dir, repo_dir, NR_COMMITS - 1);
	sh(cmd);
	free(cmd);
	cmd = xstrfmt("%s/hashes", tmpdir);
	if (read_file(cmd, 1 << 16, &list, NULL) < 0)
		return -1;
	free(cmd);
	p = list;
	for (int i = 0; i < NR_COMMITS; i++) {
		memcpy(hashes[i], p, 40);
		hashes[i][40] = 0;
		p += 41;
	}
	free(list);
	return 0;
}

static int group_teardown(void **state)
{
	char *cmd = xstrfmt("rm -rf '%s'", tmpdir);
	int rc = system(cmd);

	free(cmd);
	return rc;
}

struct labfix {
	char *state;
	int64_t id;
	int slots;
};

/* A new lab with one bisection good c0, bad c15 over the history. */
static struct labfix new_bisection(int slots)
{
	static char *argv[] = { "fake", NULL };
	struct labfix lf;
	struct lab lab;
	struct bisection b;
	int created;

	lf.state = xstrfmt("%s/lab%d", tmpdir, ++lab_nr);
	lf.slots = slots;
	assert_int_equal(lab_init(lf.state, &created), 0);
	assert_int_equal(lab_open(&lab, lf.state), 0);
	memset(&b, 0, sizeof(b));
	assert_int_equal(db_repo_id(lab.db, repo_dir, &b.repo_id), 0);
	b.goods = calloc(1, 41);
	memcpy(b.goods[0], hashes[0], 41);
	b.nr_goods = 1;
	memcpy(b.bad, hashes[NR_COMMITS - 1], 41);
	b.argv = argv;
	b.argc = 1;
	assert_int_equal(db_bisection_create(lab.db, &b), 0);
	if (slots > 1)
		assert_int_equal(db_bisection_set_slots(lab.db, b.id, slots), 0);
	lf.id = b.id;
	free(b.goods);
	lab_close(&lab);
	return lf;
}

static void labfix_release(struct labfix *lf)
{
	free(lf->state);
}

/* Run (or resume) the bisection to its end in a child, as `klab bisect
 * resume` would: its exit code, or KILLED when the fake ended it. */
static int run_child(const struct labfix *lf, struct fake *f)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *out = xstrfmt("%s/out-%lld.log", lf->state, (long long)lf->id);
		char *err = xstrfmt("%s/err-%lld.log", lf->state, (long long)lf->id);
		struct bisect_run br;
		struct bisection b;
		struct lab lab;
		int rc = EXIT_FAIL;

		if (!freopen(out, "a", stdout) || !freopen(err, "a", stderr))
			_exit(100);
		if (lab_open(&lab, lf->state) < 0 || db_bisection_load(lab.db, lf->id, &b) < 0)
			_exit(101);
		if (bisect_run_init(&br, &lab, &b, NULL, NULL) < 0 || gitrepo_open(&br.repo, repo_dir) < 0)
			_exit(102);
		br.log_dir = xstrfmt("%s/logs", lf->state);
		if (bisect_run_open(&br) == 0) {
			br.tester = f->judge ? &fake_judging_tester : &fake_tester;
			br.tester_data = f;
			rc = bisect_run(&br);
		}
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return KILLED;
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

struct outcome {
	char state[32], result[32], message[256];
	int culprit;		/* commit index, -1 none */
	int done;		/* bisect steps done */
	int rows;		/* bisect step rows, whatever their status */
	int skips;
	int rounds;		/* the last round, 0 without */
	int round_size[NR_COMMITS + 1];	/* steps of round r */
	int twice;		/* commits with more than one finished bisect step */
	int candidates[NR_COMMITS];
	size_t nr_candidates;
};

static struct outcome outcome_of(const struct labfix *lf)
{
	struct outcome o;
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0, nr_rounds = 0;
	int64_t *ids = NULL;
	int *rounds = NULL, seen[NR_COMMITS] = { 0 };

	memset(&o, 0, sizeof(o));
	assert_int_equal(lab_open(&lab, lf->state), 0);
	assert_int_equal(db_bisection_load(lab.db, lf->id, &b), 0);
	snprintf(o.state, sizeof(o.state), "%s", b.state);
	snprintf(o.result, sizeof(o.result), "%s", b.result ? b.result : "-");
	snprintf(o.message, sizeof(o.message), "%s", b.message ? b.message : "");
	o.culprit = b.culprit ? commit_index(b.culprit) : -1;
	for (size_t i = 0; i < b.nr_candidates; i++)
		o.candidates[o.nr_candidates++] = commit_index(b.candidates[i]);
	assert_int_equal(db_steps_load(lab.db, lf->id, &steps, &nr), 0);
	for (size_t i = 0; i < nr; i++) {
		int ci = commit_index(steps[i].hash);
		o.rows += !strcmp(steps[i].phase, "bisect");
		if (strcmp(steps[i].phase, "bisect") || strcmp(steps[i].status, "done"))
			continue;
		o.done++;
		o.skips += !strcmp(steps[i].verdict, "skip");
		assert_true(ci >= 0);
		if (seen[ci]++)
			o.twice++;
	}
	assert_int_equal(db_step_rounds(lab.db, lf->id, &ids, &rounds, &nr_rounds), 0);
	for (size_t i = 0; i < nr_rounds; i++) {
		if (rounds[i] > o.rounds)
			o.rounds = rounds[i];
		if (rounds[i] <= NR_COMMITS)
			o.round_size[rounds[i]]++;
	}
	free(ids);
	free(rounds);
	steps_release(steps, nr);
	bisection_release(&b);
	lab_close(&lab);
	return o;
}

static int file_has(const struct labfix *lf, const char *which, const char *needle)
{
	char *path = xstrfmt("%s/%s-%lld.log", lf->state, which, (long long)lf->id), *text = NULL;
	int found;

	assert_int_equal(read_file(path, 1 << 20, &text, NULL), 0);
	found = strstr(text, needle) != NULL;
	free(text);
	free(path);
	return found;
}

/* A clean run's outcome (culprit c`culprit`). */
static struct outcome clean_run(int slots, int culprit)
{
	struct labfix lf = new_bisection(slots);
	struct fake f = fake_for(culprit);
	struct outcome o;

	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	o = outcome_of(&lf);
	labfix_release(&lf);
	return o;
}

/* ---- tests ---------------------------------------------------------------- */

/* A culprit that is not confirmed (noise made the real one test good):
 * the range once more in pass 2, with its own steps, finds the real one;
 * pass 1's steps stay for show, the log and replay see pass 2's. */
static void test_bisect_run__unconfirmed_culprit_reopens_the_range_once(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_for(8);
	struct outcome o;
	struct lab lab;
	struct step *all = NULL;
	size_t nr_all = 0;
	int pass = 0;

	f.judge = 1;
	f.lie_good = 8;
	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	o = outcome_of(&lf);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 8);
	assert_int_equal(o.twice, 0);
	assert_true(file_has(&lf, "out", "culprit " ));
	assert_true(file_has(&lf, "out", "NOT confirmed (fake)"));
	assert_true(file_has(&lf, "out", "pass 2: the range once more, with fresh references"));
	assert_int_equal(lab_open(&lab, lf.state), 0);
	assert_int_equal(db_bisection_pass(lab.db, lf.id, &pass), 0);
	assert_int_equal(pass, 2);
	assert_int_equal(db_steps_load_all(lab.db, lf.id, &all, &nr_all), 0);
	/* pass 1's steps kept beside pass 2's */
	assert_true(nr_all > (size_t)o.rows);
	assert_int_equal(all[0].pass, 1);
	assert_int_equal(all[nr_all - 1].pass, 2);
	steps_release(all, nr_all);
	lab_close(&lab);
	labfix_release(&lf);
}

/* Pass 2 misled as well: unconfirmed, its exit code, the suspect kept. */
static void test_bisect_run__second_unconfirmed_culprit_ends_unconfirmed(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_for(8);
	struct outcome o;

	f.judge = 1;
	f.lie_good = 8;
	f.lie_always = 1;
	assert_int_equal(run_child(&lf, &f), EXIT_UNCONFIRMED);
	o = outcome_of(&lf);
	assert_string_equal(o.state, "done");
	assert_string_equal(o.result, "unconfirmed");
	assert_int_equal(o.culprit, 9);
	assert_true(file_has(&lf, "out", "unconfirmed, no culprit named"));
	labfix_release(&lf);
}

/* Pass 1's culprit not confirmed, and pass 2's fresh references do not
 * reproduce the regression (the host, not a commit, made it): the
 * bisection ends unconfirmed with pass 1's suspect, exit 4, never
 * not-reproduced nor a culprit. */
static void test_bisect_run__pass_two_not_reproduced_ends_unconfirmed(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_for(8);
	struct outcome o;

	f.judge = 1;
	f.lie_good = 8;
	f.refuse_pass2 = 1;
	assert_int_equal(run_child(&lf, &f), EXIT_UNCONFIRMED);
	o = outcome_of(&lf);
	assert_string_equal(o.state, "done");
	assert_string_equal(o.result, "unconfirmed");
	/* pass 1's suspect (the noise made c8 look good) is kept as such */
	assert_int_equal(o.culprit, 9);
	assert_true(file_has(&lf, "out", "pass 2: the range once more"));
	assert_true(file_has(&lf, "out", "pass 2's fresh references do not show the regression"));
	assert_true(file_has(&lf, "out", "unconfirmed, no culprit named"));
	assert_non_null(strstr(o.message, "fake references alike"));
	labfix_release(&lf);
}

/* Killed in pass 2: the resume goes on in pass 2 with pass 2's steps. */
static void test_bisect_run__resume_in_pass_two(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_for(8);
	struct outcome o;

	f.judge = 1;
	f.lie_good = 8;
	f.exit_at_test2 = 2;
	assert_int_equal(run_child(&lf, &f), KILLED);
	assert_true(file_has(&lf, "out", "pass 2: the range once more"));
	f.exit_at_test2 = 0;
	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	o = outcome_of(&lf);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 8);
	assert_int_equal(o.twice, 0);
	assert_true(file_has(&lf, "out", "resuming after"));
	labfix_release(&lf);
}

static void test_bisect_run__linear_history_finds_the_culprit(void **state)
{
	for (int culprit = 1; culprit < NR_COMMITS; culprit++) {
		struct labfix lf = new_bisection(1);
		struct fake f = fake_for(culprit);
		struct outcome o;
		char line[64];

		assert_int_equal(run_child(&lf, &f), EXIT_OK);
		o = outcome_of(&lf);
		assert_string_equal(o.result, "culprit");
		assert_int_equal(o.culprit, culprit);
		/* git's bisection: about log2(15) steps, never a commit twice */
		assert_in_range(o.done, 3, 5);
		assert_int_equal(o.twice, 0);
		snprintf(line, sizeof(line), "%s is the first bad commit", hashes[culprit]);
		assert_true(file_has(&lf, "out", line));
		assert_true(file_has(&lf, "out", "step 1: "));
		labfix_release(&lf);
	}
}

static void test_bisect_run__skipped_commit_is_passed_over(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_for(9);
	struct outcome o;

	f.skip_first = 1;
	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	o = outcome_of(&lf);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 9);
	assert_int_equal(o.skips, 1);
	assert_int_equal(o.twice, 0);
	labfix_release(&lf);
}

static void test_bisect_run__skipped_culprit_neighbourhood_leaves_only_skipped(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_for(9);
	struct outcome o;

	f.skip[8] = f.skip[9] = 1;
	assert_int_equal(run_child(&lf, &f), EXIT_UNDECIDED);
	o = outcome_of(&lf);
	assert_string_equal(o.result, "skipped-only");
	assert_int_equal(o.culprit, -1);
	/* c7 good, c8 and c9 skipped, c10 bad: any of the three */
	assert_int_equal(o.nr_candidates, 3);
	for (size_t i = 0; i < o.nr_candidates; i++)
		assert_in_range(o.candidates[i], 8, 10);
	assert_true(file_has(&lf, "out", "There are only 'skip'ped commits left to test."));
	labfix_release(&lf);
}

/* Kill a one-slot bisection (culprit c`culprit`) at the k-th of each
 * point in turn, in the test (its row begun, no verdict) or right after
 * a stored verdict, then resume: the same culprit in as many steps, the
 * begun row reused (no row left over), nothing finished twice. */
static void resume_after_each_kill(int culprit, int in_test)
{
	struct outcome clean = clean_run(1, culprit);

	for (int k = 1; k <= clean.done; k++) {
		struct labfix lf = new_bisection(1);
		struct fake f = fake_for(culprit), again = fake_for(culprit);
		struct outcome o;

		if (in_test)
			f.exit_at_test = k;
		else
			f.exit_after_done = k;
		assert_int_equal(run_child(&lf, &f), KILLED);
		assert_int_equal(outcome_of(&lf).done, in_test ? k - 1 : k);
		assert_int_equal(run_child(&lf, &again), EXIT_OK);
		o = outcome_of(&lf);
		assert_int_equal(o.culprit, culprit);
		assert_int_equal(o.done, clean.done);
		assert_int_equal(o.rows, clean.done);
		assert_int_equal(o.twice, 0);
		assert_true(file_has(&lf, "out", "resuming after"));
		labfix_release(&lf);
	}
}

static void test_bisect_run__resume_after_kill_in_each_step(void **state)
{
	resume_after_each_kill(11, 1);
}

static void test_bisect_run__resume_after_kill_after_each_verdict(void **state)
{
	resume_after_each_kill(4, 0);
}

static void test_bisect_run__multisection_takes_fewer_rounds_same_culprit(void **state)
{
	for (int culprit = 2; culprit < NR_COMMITS; culprit += 3) {
		struct outcome one = clean_run(1, culprit);

		for (int slots = 2; slots <= 3; slots++) {
			struct outcome o = clean_run(slots, culprit);

			assert_string_equal(o.result, "culprit");
			assert_int_equal(o.culprit, one.culprit);
			assert_true(o.rounds >= 1);
			assert_true(o.rounds < one.done);
			assert_int_equal(o.twice, 0);
		}
	}
}

/* The bisection killed while a round runs (one slot kills it after its
 * verdict, the other slots die with it), in each round and slot:
 * resume finds the same culprit and finishes no commit twice. */
static void test_bisect_run__resume_after_kill_mid_round(void **state)
{
	struct outcome clean = clean_run(3, 6);

	for (int round = 1; round <= clean.rounds; round++) {
		for (int slot = 0; slot < clean.round_size[round]; slot++) {
			struct labfix lf = new_bisection(3);
			struct fake f = fake_for(6), again = fake_for(6);
			struct outcome o;

			f.kill_round = round;
			f.kill_slot = slot;
			assert_int_equal(run_child(&lf, &f), KILLED);
			assert_int_equal(run_child(&lf, &again), EXIT_OK);
			o = outcome_of(&lf);
			assert_string_equal(o.result, "culprit");
			assert_int_equal(o.culprit, 6);
			assert_int_equal(o.twice, 0);
			labfix_release(&lf);
		}
	}
}

/* A round where a good commit descends from a bad one (a flaky test):
 * the first bad in topological order wins, that good is not used. */
static void test_bisect_run__contradictory_round_first_bad_wins(void **state)
{
	struct labfix probe = new_bisection(2);
	struct fake f = fake_for(3);
	struct outcome o;
	struct bisect_dag dag;
	struct bisect_state st;
	struct bisect_choice ch;
	struct gitrepo *repo;
	unsigned char oid[20];
	char newer[41];
	int picks[2], n;

	/* the commits the first round tests: both after c3, so both bad */
	assert_int_equal(gitrepo_open(&repo, repo_dir), 0);
	assert_int_equal(gitrepo_load_dag(repo, hashes[NR_COMMITS - 1], &hashes[0], 1, 0, NULL, 0, &dag), 0);
	hex_to_oid(hashes[NR_COMMITS - 1], oid);
	bisect_state_init(&st, &dag, bisect_dag_find(&dag, oid));
	n = bisect_choose_k(&dag, &st, 2, &ch, picks);
	assert_int_equal(n, 2);
	for (int i = 0; i < 2; i++) {
		char hex[41];
		oid_to_hex41(dag.commits[picks[i]].oid, hex);
		if (!i || commit_index(hex) > commit_index(newer))
			memcpy(newer, hex, 41);
	}
	assert_true(commit_index(newer) > 3);
	bisect_choice_release(&ch);
	bisect_state_release(&st);
	bisect_dag_release(&dag);
	gitrepo_free(repo);

	/* the newer of the two lies: good although it descends from the older bad one */
	f.lie_good = commit_index(newer);
	assert_int_equal(run_child(&probe, &f), EXIT_OK);
	o = outcome_of(&probe);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 3);
	assert_int_equal(o.twice, 0);
	assert_true(file_has(&probe, "err", "the first bad wins"));
	labfix_release(&probe);
}

/* A step without a verdict stops the bisection, resumable: its row
 * aborted, the next run tests that commit again and goes on. */
static void test_bisect_run__step_without_verdict_stops_and_resumes(void **state)
{
	struct outcome clean = clean_run(1, 7);

	for (int k = 1; k <= clean.done; k++) {
		struct labfix lf = new_bisection(1);
		struct fake f = fake_for(7), again = fake_for(7);
		struct outcome o;

		f.abort_at_test = k;
		assert_int_equal(run_child(&lf, &f), EXIT_FAIL);
		o = outcome_of(&lf);
		assert_string_equal(o.state, "stopped");
		assert_string_equal(o.message, "the fake machine failed");
		assert_int_equal(o.done, k - 1);
		assert_true(file_has(&lf, "err", "klab: continue it with 'klab bisect resume"));
		assert_int_equal(run_child(&lf, &again), EXIT_OK);
		o = outcome_of(&lf);
		assert_int_equal(o.culprit, 7);
		assert_int_equal(o.done, clean.done);
		assert_int_equal(o.twice, 0);
		labfix_release(&lf);
	}
}

/* A slot without a verdict: the round's other verdicts count, the
 * bisection stops, and resume finds the culprit. */
static void test_bisect_run__slot_without_verdict_stops_the_round(void **state)
{
	for (int slot = 0; slot < 3; slot++) {
		struct labfix lf = new_bisection(3);
		struct fake f = fake_for(10), again = fake_for(10);
		struct outcome o;

		f.abort_round = 1;
		f.abort_slot = slot;
		assert_int_equal(run_child(&lf, &f), EXIT_FAIL);
		o = outcome_of(&lf);
		assert_string_equal(o.state, "stopped");
		assert_non_null(strstr(o.message, "did not finish"));
		assert_int_equal(o.done, 2);
		assert_int_equal(run_child(&lf, &again), EXIT_OK);
		o = outcome_of(&lf);
		assert_int_equal(o.culprit, 10);
		assert_int_equal(o.twice, 0);
		labfix_release(&lf);
	}
}

/* ---- two change points --------------------------------------------------- */

/* What the halves of bisection lf found, from the database. */
struct halves {
	int split;		/* commit index, -1 none */
	int half;
	size_t nr;
	int culprit[2], confirmed[2];
	double share[2];
	int steps_in[3];	/* bisect steps done in the whole range, half 1, half 2 */
	int misplaced;		/* a half's step outside its half of the range */
	int twice_in_half;	/* commits with more than one finished step in one half */
};

static struct halves halves_of(const struct labfix *lf)
{
	struct halves h;
	struct lab lab;
	struct half_culprit *c = NULL;
	struct step *steps = NULL;
	size_t nr = 0;
	char split[41];
	int has, seen[3][NR_COMMITS] = { { 0 } };

	memset(&h, 0, sizeof(h));
	assert_int_equal(lab_open(&lab, lf->state), 0);
	assert_int_equal(db_bisection_split(lab.db, lf->id, split, &has), 0);
	h.split = has ? commit_index(split) : -1;
	assert_int_equal(db_bisection_half(lab.db, lf->id, &h.half), 0);
	assert_int_equal(db_half_culprits_load(lab.db, lf->id, &c, &h.nr), 0);
	for (size_t i = 0; i < h.nr && i < 2; i++) {
		assert_int_equal(c[i].half, (int)i + 1);
		h.culprit[i] = c[i].has_culprit ? commit_index(c[i].culprit) : -1;
		h.confirmed[i] = c[i].confirmed;
		h.share[i] = c[i].share;
	}
	half_culprits_release(c, h.nr);
	assert_int_equal(db_steps_load(lab.db, lf->id, &steps, &nr), 0);
	for (size_t i = 0; i < nr; i++) {
		int ci = commit_index(steps[i].hash);

		if (strcmp(steps[i].phase, "bisect") || strcmp(steps[i].status, "done"))
			continue;
		assert_in_range(steps[i].half, 0, 2);
		h.steps_in[steps[i].half]++;
		assert_true(ci >= 0);
		h.twice_in_half += seen[steps[i].half][ci]++ > 0;
		if ((steps[i].half == 1 && (ci <= 0 || ci >= h.split)) ||
		    (steps[i].half == 2 && (ci <= h.split || ci >= NR_COMMITS - 1)))
			h.misplaced++;
	}
	steps_release(steps, nr);
	lab_close(&lab);
	return h;
}

/* How often needle is in the bisection's stdout, over all its runs. */
static int file_count(const struct labfix *lf, const char *needle)
{
	char *path = xstrfmt("%s/out-%lld.log", lf->state, (long long)lf->id), *text = NULL;
	int n = 0;

	assert_int_equal(read_file(path, 1 << 20, &text, NULL), 0);
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(text);
	free(path);
	return n;
}

/* The fake for two changes, c4 and c11: c5..c10 are half-way, so the
 * first commit tested (the middle, c7 or c8) is between the ends. */
static struct fake fake_two(void)
{
	struct fake f = fake_for(4);

	f.culprit2 = 11;
	f.judge = 1;
	return f;
}

/* Both culprits of the clean run, checked. */
static void assert_two_culprits(const struct labfix *lf)
{
	struct outcome o = outcome_of(lf);
	struct halves h = halves_of(lf);
	char line[128];

	assert_string_equal(o.state, "done");
	assert_string_equal(o.result, "culprit");
	/* the row names the first culprit; the halves both */
	assert_int_equal(o.culprit, 4);
	assert_in_range(h.split, 5, 10);
	assert_int_equal(h.half, 2);
	assert_int_equal(h.nr, 2);
	assert_int_equal(h.culprit[0], 4);
	assert_int_equal(h.culprit[1], 11);
	assert_int_equal(h.confirmed[0], 1);
	assert_int_equal(h.confirmed[1], 1);
	/* the share the (fake) confirmation gave each */
	assert_true(h.share[0] == 40.0 && h.share[1] == 110.0);
	/* the split step is the whole range's; every other in its half */
	assert_int_equal(h.steps_in[0], 1);
	assert_true(h.steps_in[1] >= 1 && h.steps_in[2] >= 1);
	assert_int_equal(h.misplaced, 0);
	assert_int_equal(h.twice_in_half, 0);
	assert_int_equal(o.twice, 0);
	snprintf(line, sizeof(line), "half 1 culprit %.12s (40%% of the regression); half 2 culprit %.12s (110%%",
		 hashes[4], hashes[11]);
	assert_non_null(strstr(o.message, line));
	assert_true(file_has(lf, "out", "two changes; each half is bisected with its own ends"));
}

/* A commit between the ends: the range splits there, each half is
 * bisected with it as one end, both culprits are confirmed and stored
 * with their shares; the bisection names both and exits 0. */
static void test_bisect_run__commit_between_the_ends_bisects_both_halves(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_two();

	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	assert_two_culprits(&lf);
	assert_int_equal(file_count(&lf, "half 1 of 2"), 1);
	assert_int_equal(file_count(&lf, "half 2 of 2"), 1);
	/* the tester saw both culprits once both halves had ended */
	assert_int_equal(file_count(&lf, "fake: halves end: c4 c11"), 1);
	labfix_release(&lf);
}

/* Killed after both halves, while the tester checks their culprits
 * (the job tester's reverts): the resume bisects nothing again and asks
 * the tester once more, then ends with both culprits. */
static void test_bisect_run__two_changes_resume_at_halves_end(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_two();
	int tests;

	f.exit_at_halves_end = 1;
	assert_int_equal(run_child(&lf, &f), KILLED);
	assert_int_equal(file_count(&lf, "fake: halves end"), 0);
	tests = file_count(&lf, "Bisecting:");
	f.exit_at_halves_end = 0;
	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	assert_int_equal(file_count(&lf, "Bisecting:"), tests);
	assert_int_equal(file_count(&lf, "fake: halves end: c4 c11"), 1);
	assert_two_culprits(&lf);
	labfix_release(&lf);
}

/* A tester that cannot split (no `half`): a commit between the ends
 * stays the skip it was, nothing is split. */
static void test_bisect_run__commit_between_stays_a_skip_without_halves(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_two();
	struct outcome o;

	f.judge = 0;
	run_child(&lf, &f);
	o = outcome_of(&lf);
	assert_true(o.skips >= 1);
	assert_int_equal(halves_of(&lf).split, -1);
	assert_int_equal(halves_of(&lf).nr, 0);
	labfix_release(&lf);
}

/* Killed in each test of the second half, and right after the split
 * step: the resume goes on where it was (half 1 is not bisected nor
 * confirmed again) and ends with the same two culprits. */
static void test_bisect_run__two_changes_resume_after_kill_in_second_half(void **state)
{
	struct labfix clean = new_bisection(1);
	struct fake f = fake_two();
	int half2;

	assert_int_equal(run_child(&clean, &f), EXIT_OK);
	half2 = halves_of(&clean).steps_in[2];
	labfix_release(&clean);
	assert_true(half2 >= 2);
	for (int k = 1; k <= half2; k++) {
		struct labfix lf = new_bisection(1);
		struct fake kill = fake_two(), again = fake_two();

		kill.exit_at_half2 = k;
		assert_int_equal(run_child(&lf, &kill), KILLED);
		assert_int_equal(halves_of(&lf).nr, 1);
		assert_int_equal(halves_of(&lf).half, 2);
		assert_int_equal(run_child(&lf, &again), EXIT_OK);
		assert_two_culprits(&lf);
		assert_int_equal(halves_of(&lf).steps_in[2], half2);
		assert_int_equal(file_count(&lf, "half 1 of 2"), 1);
		assert_int_equal(file_count(&lf, "confirmed (fake)"), 2);
		assert_true(file_has(&lf, "out", "resuming after"));
		labfix_release(&lf);
	}
	{
		/* the split stored, no half begun */
		struct labfix lf = new_bisection(1);
		struct fake kill = fake_two(), again = fake_two();

		kill.exit_after_done = 1;
		assert_int_equal(run_child(&lf, &kill), KILLED);
		assert_true(halves_of(&lf).split >= 0);
		assert_int_equal(halves_of(&lf).half, 0);
		assert_int_equal(run_child(&lf, &again), EXIT_OK);
		assert_two_culprits(&lf);
		labfix_release(&lf);
	}
}

/* Half 1 ends with only skipped commits (c3 and c4 cannot be told):
 * half 2 still names its culprit, which is the bisection's; half 1's
 * row says it has none. */
static void test_bisect_run__two_changes_half_without_culprit_keeps_the_other(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_two();
	struct outcome o;
	struct halves h;

	f.skip[3] = f.skip[4] = 1;
	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	o = outcome_of(&lf);
	h = halves_of(&lf);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 11);
	assert_int_equal(h.nr, 2);
	assert_int_equal(h.culprit[0], -1);
	assert_int_equal(h.confirmed[0], 0);
	assert_int_equal(h.culprit[1], 11);
	assert_non_null(strstr(o.message, "half 1 without a culprit (only skipped commits left); half 2 culprit"));
	/* c3 and c4 skipped, c5 bad in half 1: any of the three */
	assert_int_equal(o.nr_candidates, 3);
	labfix_release(&lf);
}

/* Multisection: a slot's verdict splits the range (stored in the slot's
 * process, read back by the loop); the halves are bisected in rounds
 * and both culprits found. */
static void test_bisect_run__two_changes_in_a_multisection_round(void **state)
{
	struct labfix lf = new_bisection(3);
	struct fake f = fake_two();
	struct halves h;

	/* the judging fake has no round hooks: each slot's child runs fake_test */
	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	h = halves_of(&lf);
	assert_in_range(h.split, 4, 10);
	assert_int_equal(h.nr, 2);
	assert_int_equal(h.culprit[0], 4);
	assert_int_equal(h.culprit[1], 11);
	assert_int_equal(h.misplaced, 0);
	/* a half does not take over the whole range's marks (as the
	 * simulation's search): a commit of the first round may be tested
	 * again in a half, never twice in one */
	assert_int_equal(h.twice_in_half, 0);
	assert_true(outcome_of(&lf).rounds >= 2);
	labfix_release(&lf);
}

/* The second half's culprit fails its confirmation: the first stands,
 * the second is kept as a suspect and said so. */
static void test_bisect_run__two_changes_one_unconfirmed_keeps_the_other(void **state)
{
	struct labfix lf = new_bisection(1);
	struct fake f = fake_two();
	struct outcome o;
	struct halves h;

	/* c11 tests good in its half: half 2 ends at c12, which is no culprit */
	f.lie_good = 11;
	f.lie_always = 1;
	assert_int_equal(run_child(&lf, &f), EXIT_OK);
	o = outcome_of(&lf);
	h = halves_of(&lf);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 4);
	assert_int_equal(h.nr, 2);
	assert_int_equal(h.confirmed[0], 1);
	assert_int_equal(h.culprit[1], 12);
	assert_int_equal(h.confirmed[1], 0);
	assert_non_null(strstr(o.message, "suspect, NOT confirmed,"));
	labfix_release(&lf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bisect_run__linear_history_finds_the_culprit),
		cmocka_unit_test(test_bisect_run__skipped_commit_is_passed_over),
		cmocka_unit_test(test_bisect_run__skipped_culprit_neighbourhood_leaves_only_skipped),
		cmocka_unit_test(test_bisect_run__resume_after_kill_in_each_step),
		cmocka_unit_test(test_bisect_run__resume_after_kill_after_each_verdict),
		cmocka_unit_test(test_bisect_run__multisection_takes_fewer_rounds_same_culprit),
		cmocka_unit_test(test_bisect_run__resume_after_kill_mid_round),
		cmocka_unit_test(test_bisect_run__contradictory_round_first_bad_wins),
		cmocka_unit_test(test_bisect_run__step_without_verdict_stops_and_resumes),
		cmocka_unit_test(test_bisect_run__slot_without_verdict_stops_the_round),
		cmocka_unit_test(test_bisect_run__unconfirmed_culprit_reopens_the_range_once),
		cmocka_unit_test(test_bisect_run__pass_two_not_reproduced_ends_unconfirmed),
		cmocka_unit_test(test_bisect_run__two_changes_resume_at_halves_end),
		cmocka_unit_test(test_bisect_run__second_unconfirmed_culprit_ends_unconfirmed),
		cmocka_unit_test(test_bisect_run__resume_in_pass_two),
		cmocka_unit_test(test_bisect_run__commit_between_the_ends_bisects_both_halves),
		cmocka_unit_test(test_bisect_run__commit_between_stays_a_skip_without_halves),
		cmocka_unit_test(test_bisect_run__two_changes_resume_after_kill_in_second_half),
		cmocka_unit_test(test_bisect_run__two_changes_one_unconfirmed_keeps_the_other),
		cmocka_unit_test(test_bisect_run__two_changes_in_a_multisection_round),
		cmocka_unit_test(test_bisect_run__two_changes_half_without_culprit_keeps_the_other),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
