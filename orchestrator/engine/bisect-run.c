/* The bisection loop: choose -> test (a step tester) -> record -> mark,
 * the merge-base phase, multisection rounds in forked slots, and the
 * replay of finished steps on resume.  See bisect-run.h. */
#include "engine/bisect-run.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "core/bisect.h"
#include "kernel/kernel.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void step_outcome_init(struct step_outcome *o)
{
	memset(o, 0, sizeof(*o));
	o->result = BISECT_UNMARKED;
	strbuf_init(&o->reason, 0);
	o->exit_code = -1;
}

void step_outcome_release(struct step_outcome *o)
{
	strbuf_release(&o->reason);
	free(o->why);
	free(o->error);
	o->why = o->error = NULL;
}

static void add_hash(char (**arr)[41], size_t *nr, size_t *alloc, const char *hex)
{
	for (size_t i = 0; i < *nr; i++)
		if (!strcmp((*arr)[i], hex))
			return;
	ALLOC_GROW(*arr, *nr + 1, *alloc);
	memcpy((*arr)[(*nr)++], hex, 41);
}

int hash_listed(char (*arr)[41], size_t nr, const char *hex)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(arr[i], hex))
			return 1;
	return 0;
}

static int is_bisect_phase(const struct step *s)
{
	return s->phase_id == STEP_PHASE_BISECT || s->phase_id == STEP_PHASE_MERGE_BASE;
}

static int is_done(const struct step *s)
{
	return s->status_id == STEP_DONE;
}

static void print_commit_line(struct bisect_run *r, const char *hex)
{
	struct commit_info ci;

	if (gitrepo_commit_info(r->repo, hex, &ci) == 0) {
		print_line("[%s] %s", hex, ci.subject);
		commit_info_release(&ci);
	} else {
		printf("[%s]\n", hex);
	}
}

static void apply_result(struct bisect_run *r, const char *hex, enum bisect_mark res)
{
	if (res == BISECT_GOOD)
		add_hash(&r->goods, &r->nr_goods, &r->alloc_goods, hex);
	else if (res == BISECT_SKIP)
		add_hash(&r->skips, &r->nr_skips, &r->alloc_skips, hex);
	else if (res == BISECT_BAD)
		memcpy(r->bad, hex, 41);
}

int bisect_run_stop(struct bisect_run *r, const char *msg)
{
	db_bisection_enter(r->lab->db, r->b->id, BISECTION_STOPPED, BISECTION_NO_RESULT, NULL, msg);
	fprintf(stderr, "klab: bisection %lld stopped: %s\n"
			"klab: continue it with 'klab bisect resume %lld'\n",
		(long long)r->b->id, msg, (long long)r->b->id);
	return EXIT_FAIL;
}

int bisect_run_fail(struct bisect_run *r, const char *msg)
{
	db_bisection_enter(r->lab->db, r->b->id, BISECTION_FAILED, BISECTION_ERROR, NULL, msg);
	error("bisection %lld failed: %s", (long long)r->b->id, msg);
	return EXIT_FAIL;
}

/* ---- one step ------------------------------------------------------------ */

struct kernel_request bisect_run_kernel_request(struct bisect_run *r, const char *hex)
{
	struct kernel_request rq = { 0 };

	rq.lab = r->lab;
	rq.repo = r->repo;
	rq.repo_id = r->b->repo_id;
	rq.wt = r->wt;
	rq.hex = hex;
	rq.recipe = &r->recipe;
	rq.jobs = r->jobs;
	rq.progress = PROGRESS_AUTO;
	rq.indent = "  ";
	return rq;
}

int bisect_run_step_kernel(struct bisect_run *r, const struct step *s, int checked_out, struct step_outcome *out,
			   struct kernel_result *kr)
{
	struct kernel_request rq = bisect_run_kernel_request(r, s->hash);

	rq.checked_out = checked_out;
	return bisect_run_kernel_outcome(r, s, kernel_for_commit(&rq, kr), out, kr);
}

int bisect_run_kernel_outcome(struct bisect_run *r, const struct step *s, int rc, struct step_outcome *out,
			      struct kernel_result *kr)
{
	const char *hex = s->hash;

	out->checkout_ms += kr->checkout_ms;
	if (rc < 0 && !kr->message) {
		strbuf_addstr(&out->reason, kr->checkout_failed ? "checkout failed" : "klab could not run the build");
		out->why = kr->checkout_failed ? xstrfmt("klab could not check out %.12s", hex)
					       : xstrfmt("klab could not run the build of %.12s", hex);
		out->result = BISECT_UNMARKED;
	} else if (rc == 0) {
		printf("  built: %s\n", kr->message);
	} else {
		kernel_print_build(&kr->build, "  ");
		strbuf_addstr(&out->reason, kr->message);
		if (rc < 0) {
			out->result = BISECT_UNMARKED;
			out->why = xstrdup(kr->message);
			out->error = xstrfmt("%s on %.12s: fix the machine, then 'klab bisect resume %lld'", kr->message,
					     hex, (long long)r->b->id);
		} else {
			out->result = BISECT_SKIP;
			out->untested = 1;
		}
	}
	return rc;
}

/* Store what the tester found for step sp and print the step's line. */
static enum bisect_mark record_outcome(struct bisect_run *r, const struct step *sp, int64_t choose_ms,
				       struct step_outcome *o)
{
	struct step s = *sp;
	char dur[32];

	if (o->result == BISECT_UNMARKED) {
		db_step_abort(r->lab->db, s.id, o->reason.buf);
		if (o->error)
			error("%s", o->error);
		if (o->why) {
			free(r->why);
			r->why = o->why;
			o->why = NULL;
		}
		return BISECT_UNMARKED;
	}
	s.choose_ms = choose_ms;
	s.checkout_ms = o->checkout_ms;
	s.test_ms = o->test_ms;
	s.exit_code = o->exit_code;
	s.verdict = (char *)bisect_mark_to_string(o->result);
	s.reason = o->reason.buf;
	if (db_step_finish(r->lab->db, &s) < 0)
		return BISECT_UNMARKED;
	/* two changes: the loop splits the range at this commit (one level;
	 * in a round's slot too: the loop reads it back from the database) */
	if (o->between && r->tester->half && r->half == 0 &&
	    db_bisection_set_split(r->lab->db, r->b->id, s.hash) < 0)
		warning("the split at %.12s is not stored: it stays a skip", s.hash);
	r->steps_done++;
	if (o->untested)
		print_line("step %d: %.12s is %s (%s)", s.seq, s.hash, s.verdict, s.reason);
	else
		print_line("step %d: %.12s is %s (%s, %s%s)", s.seq, s.hash, s.verdict, s.reason,
			   r->tester->test_label, fmt_duration(s.test_ms, dur, sizeof(dur)));
	if (r->tester->step_done)
		r->tester->step_done(r, &s);
	return o->result;
}

/* The test of a step that is a running row, its verdict stored. */
static enum bisect_mark step_exec(struct bisect_run *r, const struct step *s, int64_t choose_ms)
{
	struct step_outcome o;
	enum bisect_mark res;

	step_outcome_init(&o);
	r->tester->test(r, s, &o);
	res = record_outcome(r, s, choose_ms, &o);
	step_outcome_release(&o);
	return res;
}

/* Test one commit; the step is a database row before the test starts
 * and carries its verdict before this returns. */
static enum bisect_mark run_step(struct bisect_run *r, const char *hex, enum step_phase phase, int remaining,
				 int64_t choose_ms)
{
	struct step s;
	struct commit_info ci;
	char *log_path;
	enum bisect_mark res = BISECT_UNMARKED;

	memset(&s, 0, sizeof(s));
	memcpy(s.hash, hex, 41);
	s.phase = (char *)step_phase_to_string(phase);
	s.remaining = remaining;
	s.exit_code = -1;
	log_path = xstrfmt("%s/%.12s-%s.log", r->log_dir, hex, s.phase);
	s.log_path = log_path;

	if (gitrepo_commit_info(r->repo, hex, &ci) < 0)
		goto out;
	if (db_commit_store(r->lab->db, r->b->repo_id, &ci) < 0 || db_step_begin(r->lab->db, r->b->id, &s) < 0) {
		commit_info_release(&ci);
		goto out;
	}
	commit_info_release(&ci);
	res = step_exec(r, &s, choose_ms);
out:
	free(log_path);
	return res;
}

/* ---- merge bases --------------------------------------------------------- */

/* Whether a good revision is not an ancestor of bad: 1 yes, 0 no, -1 error. */
static int need_merge_bases(struct bisect_run *r)
{
	int need = 0;

	for (size_t i = 0; i < r->b->nr_goods; i++) {
		int a;
		/* a good that is the parent of a candidate is an ancestor of
		 * bad: no history walk needed */
		if (r->info && r->info->good_below[i])
			continue;
		a = gitrepo_is_ancestor(r->repo, r->b->goods[i], r->b->bad);
		if (a < 0)
			return -1;
		if (!a)
			need = 1;
	}
	return need;
}

/* git tests merge bases first when a good commit is not an ancestor of
 * bad.  Returns 0 when done, or an exit code. */
static int merge_base_phase(struct bisect_run *r)
{
	char (*mbs)[41] = NULL;
	size_t nr_mbs = 0;
	int need = need_merge_bases(r), ret = -1;

	if (need < 0)
		return bisect_run_fail(r, "cannot compare good and bad revisions");
	if (!need)
		return 0;
	if (gitrepo_merge_bases(r->repo, r->b->bad, r->b->goods, r->b->nr_goods, &mbs, &nr_mbs) < 0)
		return bisect_run_fail(r, "cannot compute merge bases");
	for (;;) {
		const char *todo = NULL;
		enum bisect_mark res;

		for (size_t i = 0; i < nr_mbs; i++) {
			if (!strcmp(mbs[i], r->bad)) {
				char *msg = xstrfmt("the merge base %s is bad: the regression was fixed "
						    "between it and the good revisions", mbs[i]);
				ret = bisect_run_fail(r, msg);
				free(msg);
				goto out;
			}
			/* given good or tested good: nothing to test (git's
			 * check_merge_bases looks in all good revisions) */
			if (hash_listed(r->goods, r->nr_goods, mbs[i]) || hash_listed(r->b->goods, r->b->nr_goods, mbs[i]))
				continue;
			if (hash_listed(r->skips, r->nr_skips, mbs[i])) {
				warning("the merge base %.12s must be skipped: the first bad commit may "
					"not be between it and %.12s; continuing anyway", mbs[i], r->bad);
				continue;
			}
			todo = mbs[i];
			break;
		}
		if (!todo)
			break;
		printf("Bisecting: a merge base must be tested\n");
		print_commit_line(r, todo);
		res = run_step(r, todo, STEP_PHASE_MERGE_BASE, -1, 0);
		if (res == BISECT_UNMARKED) {
			ret = bisect_run_stop(r, r->why ? r->why : "the step on a merge base could not finish");
			goto out;
		}
		apply_result(r, todo, res);
	}
	ret = 0;
out:
	free(mbs);
	return ret;
}

/* ---- lines of the bisection ------------------------------------------------ */

static void print_first_bad(struct bisect_run *r, const char *hex)
{
	struct commit_info ci;
	char date[64] = "";
	char dur[32];

	printf("%s is the first bad commit\n", hex);
	if (gitrepo_commit_info(r->repo, hex, &ci) == 0) {
		time_t t = (time_t)ci.author_time + ci.author_tz * 60;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y", &tm);
		printf("commit %s\n", hex);
		print_line("Author: %s", ci.author);
		printf("Date:   %s %+03d%02d\n\n", date, ci.author_tz / 60, abs(ci.author_tz) % 60);
		print_line("    %s", ci.subject);
		printf("\n");
		commit_info_release(&ci);
	}
	printf("bisection %lld: first bad commit found after %d step%s in this run (%s)\n",
	       (long long)r->b->id, r->steps_done, r->steps_done == 1 ? "" : "s",
	       fmt_duration(now_ms() - r->start_ms, dur, sizeof(dur)));
}

/* "step 3 of about 6, 4m10s so far, about 5m left": testers with long
 * steps only (a job's; a test command's are too short to need it).  A
 * step costs what the steps of this run cost on average (before the
 * first one: half the tester's begin, for a job the reference phase,
 * which built and measured two kernels); the confirmation about two
 * steps. */
static void print_progress(struct bisect_run *r, int done, int steps_after)
{
	int64_t per_step = 0;
	char el[32], left[32];

	if (!r->tester->progress)
		return;
	if (r->steps_timed)
		per_step = r->step_ms_sum / r->steps_timed;
	else if (r->ref_ms)
		per_step = r->ref_ms / 2;
	fmt_duration(now_ms() - r->start_ms, el, sizeof(el));
	/* a multisection counts rounds: done and steps_after are rounds */
	if (per_step)
		printf("progress: %s %d of about %d, %s so far, about %s left\n", r->slots > 1 ? "round" : "step",
		       done + 1, done + 1 + steps_after, el,
		       fmt_duration(per_step * (steps_after + 1 + 2), left, sizeof(left)));
	else
		printf("progress: %s %d of about %d, %s so far\n", r->slots > 1 ? "round" : "step", done + 1,
		       done + 1 + steps_after, el);
}

/* ---- multisection: the steps of one round at the same time -------------- */

/* One slot of a round, in a child process: its own database connection;
 * the tester's slot_test does the rest (its own worktree copy, or guest
 * environment).  The result is stored under the step; the exit code only
 * says whether klab itself failed. */
static int round_child(struct bisect_run *r, int slot, const struct step *s, int64_t choose_ms)
{
	struct step_outcome o;
	enum bisect_mark res;
	sqlite3 *db;
	int rc = 0;

	/* a killed bisection takes its slots with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != r->parent)
		return 1;
	/* the parent's connections stay the parent's: never used here */
	if (db_open(&db, r->lab->db_path, 0) < 0)
		return 1;
	r->lab->db = db;
	step_outcome_init(&o);
	if (r->tester->slot_test)
		rc = r->tester->slot_test(r, slot, s, &o);
	else
		r->tester->test(r, s, &o);
	if (rc == 0) {
		res = record_outcome(r, s, choose_ms, &o);
		rc = res == BISECT_UNMARKED;
	} else {
		/* 1: the first runs are stored, the parent decides */
		rc = rc < 0;
	}
	step_outcome_release(&o);
	db_close(db);
	return rc;
}

/* The step rows of a round, begun in one transaction. */
static int round_begin(struct bisect_run *r, struct step *s, char (*hex)[41], int n, int round, int all)
{
	for (int i = 0; i < n; i++) {
		struct commit_info ci;

		memcpy(s[i].hash, hex[i], 41);
		s[i].phase = (char *)step_phase_to_string(STEP_PHASE_BISECT);
		s[i].remaining = all;
		s[i].exit_code = -1;
		s[i].log_path = xstrfmt("%s/%.12s-bisect.log", r->log_dir, hex[i]);
		if (gitrepo_commit_info(r->repo, hex[i], &ci) < 0)
			return -1;
		if (db_commit_store(r->lab->db, r->b->repo_id, &ci) < 0) {
			commit_info_release(&ci);
			return -1;
		}
		commit_info_release(&ci);
	}
	return db_round_begin(r->lab->db, r->b->id, s, (size_t)n, round);
}

/* Fork one child per slot to fork, wait for all; child_ok[i]: slot i's
 * child exited 0. */
static void round_fork_wait(struct bisect_run *r, struct step *s, char (*hex)[41], int n, const int *fork_slot,
			    int64_t choose_ms, int *child_ok)
{
	pid_t *pid = xmalloc(n * sizeof(pid_t));

	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < n; i++)
		pid[i] = -1;
	for (int i = 0; i < n; i++) {
		if (!fork_slot[i])
			continue;
		pid[i] = fork();
		if (pid[i] < 0) {
			error("cannot start slot %d: %s", i + 1, strerror(errno));
			break;
		}
		if (pid[i] == 0) {
			int code = round_child(r, i, &s[i], choose_ms);
			fflush(stdout);
			fflush(stderr);
			_exit(code);
		}
	}
	for (int i = 0; i < n; i++) {
		int status;
		pid_t w;

		if (pid[i] <= 0)
			continue;
		do
			w = waitpid(pid[i], &status, 0);
		while (w < 0 && errno == EINTR);
		child_ok[i] = w == pid[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (w == pid[i] && WIFSIGNALED(status))
			warning("slot %d (%.12s) was killed by signal %d", i + 1, hex[i], WTERMSIG(status));
	}
	free(pid);
}

/* The round's verdicts from the database: decided in a slot, or decided
 * here when the tester leaves a slot's rest to the parent. */
static int round_collect(struct bisect_run *r, struct step *s, int n, const int *child_ok, int64_t choose_ms,
			 enum bisect_mark *res)
{
	struct step *steps = NULL;
	size_t nr_steps = 0;

	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		const struct step *got = NULL;

		for (size_t j = 0; j < nr_steps; j++)
			if (steps[j].id == s[i].id)
				got = &steps[j];
		if (got && is_done(got)) {
			res[i] = got->mark;
			r->steps_done++;
		} else if (got && got->status_id == STEP_RUNNING && r->tester->round_rest &&
			   r->tester->round_rest(r, i, child_ok[i])) {
			res[i] = step_exec(r, &s[i], choose_ms);
		}
	}
	steps_release(steps, nr_steps);
	return 0;
}

/* Test n commits at once: all step rows first (one transaction), then
 * the tester readies the slots, one child per slot, then the verdicts
 * read back from the database.  res[i] gets each verdict, BISECT_UNMARKED for
 * a slot that could not finish (its row aborted). */
static void run_round(struct bisect_run *r, char (*hex)[41], int n, int round, int all, int64_t choose_ms,
		      enum bisect_mark *res)
{
	struct step *s = xcalloc(n, sizeof(*s));
	int *fork_slot = xmalloc(n * sizeof(int)), *child_ok = xcalloc(n, sizeof(int));
	int prepared = 0;

	for (int i = 0; i < n; i++) {
		res[i] = BISECT_UNMARKED;
		fork_slot[i] = 1;
	}
	if (round_begin(r, s, hex, n, round, all) < 0)
		goto out;
	prepared = 1;
	if (r->tester->round_prepare && r->tester->round_prepare(r, hex, n, fork_slot) < 0)
		goto abort_rows;
	round_fork_wait(r, s, hex, n, fork_slot, choose_ms, child_ok);
	round_collect(r, s, n, child_ok, choose_ms, res);
abort_rows:
	for (int i = 0; i < n; i++) {
		if (res[i] != BISECT_UNMARKED || !s[i].id)
			continue;
		if (!r->why)
			r->why = xstrfmt("the test of %.12s in slot %d did not finish", hex[i], i + 1);
		db_step_abort(r->lab->db, s[i].id, "the slot did not finish");
	}
out:
	if (prepared && r->tester->round_release)
		r->tester->round_release(r, n);
	for (int i = 0; i < n; i++)
		free(s[i].log_path);
	free(s);
	free(fork_slot);
	free(child_ok);
}

/* ---- resume ------------------------------------------------------------ */

static int round_of(const int64_t *ids, const int *rounds, size_t nr_rounds, int64_t step_id)
{
	int round = 0;

	for (size_t k = 0; k < nr_rounds; k++)
		if (ids[k] == step_id)
			round = rounds[k];
	return round;
}

/* Replay the bisect steps an earlier run finished: the steps of one
 * round together (bisect_mark_round), a step without a round alone. */
static int replay_marks(struct bisect_run *r, const struct bisect_dag *dag, struct bisect_state *st,
			const struct step *steps, size_t nr_steps, int *nr_tested, int *last_round)
{
	int64_t *ids = NULL;
	int *rounds = NULL, *commits = xmalloc((nr_steps + 1) * sizeof(int));
	int *ignored = xmalloc((nr_steps + 1) * sizeof(int));
	enum bisect_mark *marks = xmalloc((nr_steps + 1) * sizeof(*marks));
	unsigned char *applied = xcalloc(nr_steps + 1, 1);
	size_t nr_rounds = 0;
	int ret = -1;

	*last_round = 0;
	if (db_step_rounds(r->lab->db, r->b->id, &ids, &rounds, &nr_rounds) < 0)
		goto out;
	for (size_t i = 0; i < nr_rounds; i++)
		if (rounds[i] > *last_round)
			*last_round = rounds[i];
	for (size_t i = 0; i < nr_steps; i++) {
		int round, n = 0;

		/* reference and confirmation runs are not bisection marks, nor
		 * are the marks of another half (each has its own ends) */
		if (applied[i] || !is_done(&steps[i]) || !is_bisect_phase(&steps[i]) || steps[i].half != r->half)
			continue;
		round = round_of(ids, rounds, nr_rounds, steps[i].id);
		for (size_t j = i; j < nr_steps; j++) {
			unsigned char oid[20];
			enum bisect_mark v;

			if (applied[j] || !is_done(&steps[j]) || !is_bisect_phase(&steps[j]) ||
			    steps[j].half != r->half)
				continue;
			if (j != i && (!round || round_of(ids, rounds, nr_rounds, steps[j].id) != round))
				continue;
			applied[j] = 1;
			v = steps[j].mark;
			hex_to_oid(steps[j].hash, oid);
			commits[n] = bisect_dag_find(dag, oid);
			*nr_tested += steps[j].phase_id == STEP_PHASE_BISECT;
			if (v == BISECT_SKIP)
				marks[n++] = BISECT_SKIP;
			else if (commits[n] >= 0 && steps[j].phase_id == STEP_PHASE_BISECT)
				marks[n++] = v == BISECT_UNMARKED ? BISECT_SKIP : v;
		}
		bisect_mark_round(dag, st, commits, marks, n, ignored);
	}
	ret = 0;
out:
	free(ids);
	free(rounds);
	free(commits);
	free(ignored);
	free(marks);
	free(applied);
	return ret;
}

/* ---- the loop ------------------------------------------------------------ */

struct loop {
	struct bisect_dag dag;
	struct bisect_state st;
	int nr_tested;		/* bisect steps done, earlier runs included */
	int round;		/* multisection: the last round */
	int *picks;		/* its commits */
	enum bisect_mark *res;
	char (*hexes)[41];
};

/* The range (without the merge bases tested good) and the marks of
 * earlier runs.  0, or an exit code (the loop's dag loaded: 1 in *dag_ok). */
static int loop_load(struct bisect_run *r, struct loop *l, int *dag_ok, int *st_ok)
{
	struct step *steps = NULL;
	size_t nr_steps = 0, nr_all = 0, alloc_all = 0;
	char (*all_goods)[41] = NULL;
	unsigned char oid[20];
	/* a half's ends: (good, split] or (split, bad] */
	const char *bad = r->half == 1 ? r->split : r->b->bad;
	int bad_idx, ret = EXIT_FAIL;

	/* Goods known before the bisect phase: the given ones and merge
	 * bases tested good. */
	for (size_t i = 0; i < r->b->nr_goods; i++)
		add_hash(&all_goods, &nr_all, &alloc_all, r->b->goods[i]);
	if (r->half == 2)
		add_hash(&all_goods, &nr_all, &alloc_all, r->split);
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		goto out;
	for (size_t i = 0; i < nr_steps; i++)
		if (steps[i].phase_id == STEP_PHASE_MERGE_BASE && steps[i].mark == BISECT_GOOD)
			add_hash(&all_goods, &nr_all, &alloc_all, steps[i].hash);

	if (r->dag && nr_all == r->b->nr_goods && !r->half) {
		l->dag = *r->dag;	/* the range start loaded: take it over, once */
		bisect_dag_init(r->dag);
		r->dag = NULL;
	} else if (gitrepo_load_dag(r->repo, bad, all_goods, nr_all, r->b->first_parent,
				    (const char *const *)r->b->paths, r->b->nr_paths, &l->dag) < 0) {
		ret = bisect_run_fail(r, "cannot load the commit range");
		goto out;
	}
	*dag_ok = 1;
	hex_to_oid(bad, oid);
	bad_idx = bisect_dag_find(&l->dag, oid);
	if (bad_idx < 0) {
		ret = bisect_run_fail(r, "the bad commit is not in the range (is it an ancestor of a good one?)");
		goto out;
	}
	bisect_state_init(&l->st, &l->dag, bad_idx);
	*st_ok = 1;
	/* Replay what earlier runs decided. */
	if (replay_marks(r, &l->dag, &l->st, steps, nr_steps, &l->nr_tested, &l->round) < 0)
		goto out;
	ret = 0;
out:
	steps_release(steps, nr_steps);
	free(all_goods);
	return ret;
}

/* bisect_loop's answers besides exit codes: the range is bisected once
 * more (pass 2), it splits at a commit between the ends (two changes),
 * or a half found what it could (stored in bisection_culprits). */
#define LOOP_REOPEN (-2)
#define LOOP_SPLIT (-3)
#define LOOP_HALF_DONE (-4)

/* What half r->half found, stored: the next run goes on with the next
 * half.  LOOP_HALF_DONE, or EXIT_FAIL. */
static int half_store(struct bisect_run *r, const char *culprit, int confirmed, char *msg)
{
	struct half_culprit c;

	memset(&c, 0, sizeof(c));
	c.half = r->half;
	c.has_culprit = culprit != NULL;
	if (culprit)
		memcpy(c.culprit, culprit, 41);
	c.confirmed = culprit && confirmed;
	c.share = culprit ? r->share : NAN;
	c.message = msg;
	print_line("bisection %lld: half %d: %s", (long long)r->b->id, r->half, msg);
	fflush(stdout);
	return db_half_culprit_store(r->lab->db, r->b->id, &c) < 0 ? EXIT_FAIL : LOOP_HALF_DONE;
}

/* git's "only skipped commits left": the candidates stored. */
static int loop_skipped_only(struct bisect_run *r, struct loop *l, const struct bisect_choice *ch)
{
	char (*cands)[41] = xcalloc(ch->nr_candidates, 41);
	char *msg;
	int ret = EXIT_FAIL;

	printf("There are only 'skip'ped commits left to test.\n"
	       "The first bad commit could be any of:\n");
	for (int i = 0; i < ch->nr_candidates; i++) {
		oid_to_hex41(l->dag.commits[ch->candidates[i]].oid, cands[i]);
		printf("%s\n", cands[i]);
	}
	printf("We cannot bisect more!\n");
	msg = xstrfmt("only skipped commits left: %d possible first bad commits", ch->nr_candidates);
	if (r->half) {
		/* a half without its culprit: the other half still counts
		 * (the candidates kept are the last such half's) */
		db_bisection_set_candidates(r->lab->db, r->b->id, cands, (size_t)ch->nr_candidates);
		ret = half_store(r, NULL, 0, msg);
	} else if (db_bisection_set_candidates(r->lab->db, r->b->id, cands, (size_t)ch->nr_candidates) == 0 &&
	    db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_SKIPPED_ONLY, NULL, msg) == 0)
		ret = EXIT_UNDECIDED;
	free(msg);
	free(cands);
	return ret;
}

/* The first bad commit: confirmed by the tester (if it confirms), stored.
 * A culprit of pass 1 that is not confirmed opens pass 2 (LOOP_REOPEN)
 * where the tester can: the range again with fresh references, since
 * steps judged against references the host has left may have narrowed
 * it wrongly; one that pass 2 does not confirm either ends unconfirmed. */
static int loop_found(struct bisect_run *r, const char *hex)
{
	char *msg = NULL;
	int confirmed = 1, ret = EXIT_FAIL;

	r->share = NAN;
	if (r->half) {
		/* a half's culprit, confirmed against the half's own ends; no
		 * second pass for a half (one level, as the simulation does) */
		print_first_bad(r, hex);
		msg = r->tester->confirm ? r->tester->confirm(r, hex, &confirmed) : xstrfmt("first bad commit %.12s", hex);
		ret = half_store(r, hex, confirmed, msg);
		free(msg);
		return ret;
	}
	if (r->tester->confirm) {
		print_first_bad(r, hex);
		msg = r->tester->confirm(r, hex, &confirmed);
	} else {
		msg = xstrfmt("first bad commit %.12s", hex);
	}
	if (!confirmed && r->tester->reopen && r->pass == 1) {
		print_line("bisection %lld: %s", (long long)r->b->id, msg);
		printf("bisection %lld: pass 2: the range once more, with fresh references\n", (long long)r->b->id);
		fflush(stdout);
		free(msg);
		if (db_bisection_set_pass(r->lab->db, r->b->id, 2) < 0)
			return EXIT_FAIL;
		r->pass = 2;
		return LOOP_REOPEN;
	}
	if (!confirmed) {
		/* the commit stays recorded as the suspect, never as the culprit */
		if (db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_UNCONFIRMED, hex, msg) == 0) {
			printf("bisection %lld: unconfirmed, no culprit named: %s\n", (long long)r->b->id, msg);
			ret = EXIT_UNCONFIRMED;
		}
	} else if (db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_CULPRIT, hex, msg) == 0) {
		if (!r->tester->confirm)
			print_first_bad(r, hex);
		ret = EXIT_OK;
	}
	free(msg);
	return ret;
}

/* Mark a round's verdicts; a slot that could not finish: the others
 * count, that one is tested again on resume.  0, or 1 when one aborted. */
static int loop_mark_round(struct bisect_run *r, struct loop *l, int npicks)
{
	int *ignored = xmalloc((size_t)npicks * sizeof(int));
	enum bisect_mark *marks = xmalloc((size_t)npicks * sizeof(*marks));
	int n = 0, abort_any = 0;

	for (int i = 0; i < npicks; i++) {
		if (l->res[i] == BISECT_UNMARKED) {
			abort_any = 1;
			continue;
		}
		l->picks[n] = l->picks[i];
		marks[n] = l->res[i];
		memcpy(l->hexes[n], l->hexes[i], 41);
		n++;
	}
	if (bisect_mark_round(&l->dag, &l->st, l->picks, marks, n, ignored) > 0)
		for (int i = 0; i < n; i++)
			if (ignored[i])
				warning("round %d: %.12s tested good but descends from a commit of the "
					"same round that tested bad; the first bad wins", l->round, l->hexes[i]);
	free(ignored);
	free(marks);
	return abort_any;
}

/* One multisection round.  0 go on, or an exit code. */
static int loop_round(struct bisect_run *r, struct loop *l, const struct bisect_choice *ch, int npicks,
		      int64_t choose_ms)
{
	struct strbuf line = STRBUF_INIT;
	int64_t t0;

	l->round++;
	printf("Bisecting: %d revision%s left to test after this round (roughly %d round%s)\n", ch->remaining,
	       ch->remaining == 1 ? "" : "s", ch->steps, ch->steps == 1 ? "" : "s");
	print_progress(r, l->round - 1, ch->steps);
	for (int i = 0; i < npicks; i++) {
		oid_to_hex41(l->dag.commits[l->picks[i]].oid, l->hexes[i]);
		strbuf_addf(&line, "%s%.12s", i ? ", " : "", l->hexes[i]);
	}
	printf("round %d: testing %s%s\n", l->round, line.buf, npicks > 1 ? " at once" : "");
	strbuf_release(&line);
	for (int i = 0; i < npicks; i++)
		print_commit_line(r, l->hexes[i]);
	t0 = now_ms();
	run_round(r, l->hexes, npicks, l->round, ch->all, choose_ms, l->res);
	r->step_ms_sum += now_ms() - t0;
	r->steps_timed++;
	l->nr_tested += npicks;
	if (loop_mark_round(r, l, npicks))
		return bisect_run_stop(r, r->why ? r->why : "a slot of the round could not finish");
	return 0;
}

/* The commits the search tests after hex, good or bad, for a tester that
 * works ahead (br->next). */
static void loop_next(struct bisect_run *r, struct loop *l, const char *hex)
{
	unsigned char oid[20];
	int next[2], at;

	memset(r->next, 0, sizeof(r->next));
	if (!r->tester->settle || hex_to_oid(hex, oid) < 0 || (at = bisect_dag_find(&l->dag, oid)) < 0)
		return;
	bisect_next_both(&l->dag, &l->st, at, next);
	for (int i = 0; i < 2; i++)
		if (next[i] >= 0)
			oid_to_hex41(l->dag.commits[next[i]].oid, r->next[i]);
}

/* Before the loop tests hex (NULL: it leaves its steps): the tester's
 * work ahead settled. */
static void loop_settle(struct bisect_run *r, const char *hex)
{
	if (r->tester->settle)
		r->tester->settle(r, hex);
}

/* One step (one slot).  0 go on, or an exit code. */
static int loop_step(struct bisect_run *r, struct loop *l, const struct bisect_choice *ch, const char *hex,
		     int64_t choose_ms)
{
	unsigned char oid[20];
	int64_t t0;

	printf("Bisecting: %d revision%s left to test after this (roughly %d step%s)\n", ch->remaining,
	       ch->remaining == 1 ? "" : "s", ch->steps, ch->steps == 1 ? "" : "s");
	print_progress(r, l->nr_tested, ch->steps);
	print_commit_line(r, hex);
	loop_next(r, l, hex);
	t0 = now_ms();
	l->res[0] = run_step(r, hex, STEP_PHASE_BISECT, ch->all, choose_ms);
	memset(r->next, 0, sizeof(r->next));
	r->step_ms_sum += now_ms() - t0;
	r->steps_timed++;
	l->nr_tested++;
	if (l->res[0] == BISECT_UNMARKED)
		return bisect_run_stop(r, r->why ? r->why : "the step could not finish");
	hex_to_oid(hex, oid);
	bisect_mark(&l->st, bisect_dag_find(&l->dag, oid), l->res[0]);
	return 0;
}

static void print_split(struct bisect_run *r)
{
	printf("bisection %lld: %.12s is clearly apart from both ends: two changes; each half is bisected "
	       "with its own ends\n", (long long)r->b->id, r->split);
}

/* Whether a step of the whole range split it (record_outcome stored the
 * commit, in this process or a slot's): 1 yes (r->split), 0 no, -1 error. */
static int loop_split(struct bisect_run *r)
{
	int has = 0;

	if (r->half || !r->tester->half)
		return 0;
	if (db_bisection_split(r->lab->db, r->b->id, r->split, &has) < 0) {
		r->split[0] = 0;
		return -1;
	}
	if (!has)
		return 0;
	print_split(r);
	return 1;
}

static int bisect_loop(struct bisect_run *r)
{
	struct loop l;
	int dag_ok = 0, st_ok = 0, ret;
	size_t width = (size_t)(r->slots > 1 ? r->slots : 1);

	memset(&l, 0, sizeof(l));
	ret = loop_load(r, &l, &dag_ok, &st_ok);
	if (ret)
		goto out;
	l.picks = xmalloc(width * sizeof(int));
	l.res = xmalloc(width * sizeof(*l.res));
	l.hexes = xcalloc(width, 41);
	for (;;) {
		struct bisect_choice ch;
		char hex[41];
		int64_t t0 = now_ms(), choose_ms;
		int npicks, go_on = 0;

		/* with one slot exactly bisect_choose */
		npicks = bisect_choose_k(&l.dag, &l.st, r->slots, &ch, l.picks);
		choose_ms = now_ms() - t0;
		if (ch.outcome == BISECT_TEST || ch.outcome == BISECT_FOUND)
			oid_to_hex41(l.dag.commits[ch.commit].oid, hex);
		loop_settle(r, ch.outcome == BISECT_TEST && r->slots <= 1 ? hex : NULL);
		if (ch.outcome == BISECT_NO_TESTABLE) {
			ret = bisect_run_fail(r, "no testable commit found: do the paths exist in the range?");
		} else if (ch.outcome == BISECT_SKIPPED_ONLY) {
			ret = loop_skipped_only(r, &l, &ch);
		} else if (ch.outcome == BISECT_FOUND) {
			ret = loop_found(r, hex);
		} else {
			ret = r->slots > 1 ? loop_round(r, &l, &ch, npicks, choose_ms)
					   : loop_step(r, &l, &ch, hex, choose_ms);
			go_on = !ret;
			if (go_on && loop_split(r) != 0) {
				ret = r->split[0] ? LOOP_SPLIT
						  : bisect_run_stop(r, "cannot read the commit that split the range");
				go_on = 0;
			}
		}
		bisect_choice_release(&ch);
		if (!go_on)
			break;
	}
	loop_settle(r, NULL);
out:
	if (st_ok)
		bisect_state_release(&l.st);
	if (dag_ok)
		bisect_dag_release(&l.dag);
	free(l.picks);
	free(l.res);
	free(l.hexes);
	return ret;
}

/* ---- two change points ---------------------------------------------------- */

/* Both halves found what they could: the bisection's result.  A
 * confirmed culprit in either is a culprit (the first one is the row's);
 * suspects only: unconfirmed; neither half named a commit: skipped-only. */
static int halves_found(struct bisect_run *r)
{
	struct half_culprit *c = NULL;
	struct strbuf msg = STRBUF_INIT;
	const char *culprit = NULL, *suspect = NULL;
	size_t nr = 0;
	int ret = EXIT_FAIL;

	if (db_half_culprits_load(r->lab->db, r->b->id, &c, &nr) < 0)
		return EXIT_FAIL;
	strbuf_addf(&msg, "two changes, split at %.12s:", r->split);
	for (size_t i = 0; i < nr; i++) {
		strbuf_addf(&msg, "%s half %d ", i ? ";" : "", c[i].half);
		if (!c[i].has_culprit) {
			strbuf_addstr(&msg, "without a culprit (only skipped commits left)");
			continue;
		}
		strbuf_addf(&msg, "%s %.12s", c[i].confirmed ? "culprit" : "suspect, NOT confirmed,", c[i].culprit);
		if (!isnan(c[i].share))
			strbuf_addf(&msg, " (%.0f%% of the regression)", c[i].share);
		if (c[i].confirmed && !culprit)
			culprit = c[i].culprit;
		if (!suspect)
			suspect = c[i].culprit;
	}
	if (culprit) {
		if (db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_CULPRIT, culprit, msg.buf) == 0)
			ret = EXIT_OK;
	} else if (suspect) {
		if (db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_UNCONFIRMED, suspect, msg.buf) == 0)
			ret = EXIT_UNCONFIRMED;
	} else if (db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_SKIPPED_ONLY, NULL, msg.buf) == 0) {
		ret = EXIT_UNDECIDED;
	}
	if (ret != EXIT_FAIL)
		print_line("bisection %lld: %s", (long long)r->b->id, msg.buf);
	strbuf_release(&msg);
	half_culprits_release(c, nr);
	return ret;
}

/* The halves after a split, each to its end: (good, split] with the
 * split as its bad end, then (split, bad] with it as the good end.  A
 * half whose result is stored is not bisected again (resume).  An exit
 * code. */
static int loop_halves(struct bisect_run *r)
{
	for (int h = 1; h <= 2; h++) {
		struct half_culprit *c = NULL;
		size_t nr = 0;
		int done = 0, ret;

		if (db_half_culprits_load(r->lab->db, r->b->id, &c, &nr) < 0)
			return EXIT_FAIL;
		for (size_t i = 0; i < nr; i++)
			done |= c[i].half == h;
		half_culprits_release(c, nr);
		if (done)
			continue;
		if (r->half != h && db_bisection_set_half(r->lab->db, r->b->id, h) < 0)
			return EXIT_FAIL;
		r->half = h;
		printf("bisection %lld: half %d of 2: %.12s..%.12s\n", (long long)r->b->id, h,
		       h == 1 ? r->b->goods[0] : r->split, h == 1 ? r->split : r->b->bad);
		if (r->tester->half(r, h, r->split) < 0)
			return bisect_run_fail(r, "cannot set up the ends of a half");
		ret = bisect_loop(r);
		if (ret != LOOP_HALF_DONE)
			return ret;
	}
	if (r->tester->halves_end)
		r->tester->halves_end(r);
	return halves_found(r);
}

/* ---- the run ------------------------------------------------------------ */

int bisect_run_init(struct bisect_run *r, struct lab *lab, struct bisection *b, struct bisect_dag *dag,
		    struct range_info *info)
{
	memset(r, 0, sizeof(*r));
	r->lab = lab;
	r->b = b;
	r->dag = dag;
	r->info = info;
	r->tester = &command_tester;
	r->start_ms = now_ms();
	r->parent = getpid();
	r->share = NAN;
	memcpy(r->bad, b->bad, 41);
	if (db_bisection_slots(lab->db, b->id, &r->slots) < 0)
		return -1;
	if (b->build && kbuild_recipe_from_text(&r->recipe, b->config ? b->config : "") < 0)
		return -1;
	return 0;
}

/* A split stored by an earlier run (its halves go on); r->half stays 0
 * when the split was stored and no half begun yet. */
static int loop_split_load(struct bisect_run *r)
{
	int has = 0;

	if (db_bisection_split(r->lab->db, r->b->id, r->split, &has) < 0)
		return -1;
	if (!has)
		r->split[0] = 0;
	return 0;
}

int bisect_run_open(struct bisect_run *r)
{
	struct step *steps = NULL;
	size_t nr_steps = 0, done = 0;

	if (db_bisection_enter(r->lab->db, r->b->id, BISECTION_RUNNING, BISECTION_NO_RESULT, NULL, NULL) < 0 ||
	    db_bisection_pass(r->lab->db, r->b->id, &r->pass) < 0 ||
	    db_bisection_half(r->lab->db, r->b->id, &r->half) < 0 || loop_split_load(r) < 0 ||
	    db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		return -1;
	for (size_t i = 0; i < nr_steps; i++) {
		if (!is_done(&steps[i]))
			continue;
		done++;
		if (steps[i].phase_id == STEP_PHASE_MERGE_BASE)
			apply_result(r, steps[i].hash, steps[i].mark);
	}
	if (nr_steps)
		printf("bisection %lld: resuming after %zu recorded step%s\n", (long long)r->b->id, done,
		       done == 1 ? "" : "s");
	steps_release(steps, nr_steps);
	return 0;
}

/* Pass 2's fresh references do not show the regression that pass 1's
 * did: pass 1's suspect (its confirm step, stored before pass 2 began)
 * stays unconfirmed and the bisection ends so, never as not-reproduced
 * (the range did reproduce once) nor with a culprit.  An exit code. */
static int pass2_refused(struct bisect_run *r, const char *why)
{
	struct step *steps = NULL;
	size_t nr = 0;
	const char *suspect = NULL, *bad = NULL;
	char *msg;
	int ret = EXIT_FAIL;

	printf("%s\n", why);
	if (db_steps_load_all(r->lab->db, r->b->id, &steps, &nr) < 0)
		return EXIT_FAIL;
	/* the culprit pass 1 confirmed (the confirmation measures the
	 * parent, then the culprit); without a confirm step, the commit
	 * pass 1 last marked bad, as git's bisect ends on its bad ref */
	for (size_t i = 0; i < nr; i++)
		if (steps[i].pass == 1 && steps[i].phase_id == STEP_PHASE_CONFIRM)
			suspect = steps[i].hash;
	for (size_t i = 0; !suspect && i < nr; i++)
		if (steps[i].pass == 1 && is_bisect_phase(&steps[i]) && steps[i].mark == BISECT_BAD)
			bad = steps[i].hash;
	if (!suspect)
		suspect = bad ? bad : r->b->bad;
	msg = xstrfmt("pass 1's culprit %.12s was NOT confirmed, and pass 2's fresh references do not show the "
		      "regression (%s): no culprit", suspect ? suspect : "(unknown)", why);
	if (db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_UNCONFIRMED, suspect, msg) == 0) {
		print_line("bisection %lld: unconfirmed, no culprit named: %s", (long long)r->b->id, msg);
		ret = EXIT_UNCONFIRMED;
	}
	free(msg);
	steps_release(steps, nr);
	return ret;
}

/* A fresh start of a range without merge bases to test: its first step's
 * commit is known before the tester's begin (both r->next; the same
 * commit whatever the references say), so a job's reference runs can
 * have it built beside them. */
static void first_pick(struct bisect_run *r)
{
	struct bisect_state st;
	struct bisect_choice ch;
	unsigned char oid[20];
	int bad;

	memset(r->next, 0, sizeof(r->next));
	if (!r->tester->settle || !r->dag || r->pass != 1 || r->half || r->split[0] || r->slots > 1 ||
	    need_merge_bases(r) != 0 || hex_to_oid(r->b->bad, oid) < 0 || (bad = bisect_dag_find(r->dag, oid)) < 0)
		return;
	bisect_state_init(&st, r->dag, bad);
	bisect_choose(r->dag, &st, &ch);
	if (ch.outcome == BISECT_TEST) {
		oid_to_hex41(r->dag->commits[ch.commit].oid, r->next[0]);
		memcpy(r->next[1], r->next[0], 41);
	}
	bisect_choice_release(&ch);
	bisect_state_release(&st);
}

int bisect_run(struct bisect_run *r)
{
	int ret;

	do {
		if (r->tester->begin) {
			char *msg = NULL;
			int64_t t0 = now_ms();
			int rc;

			first_pick(r);
			rc = r->tester->begin(r, &msg);
			memset(r->next, 0, sizeof(r->next));
			r->ref_ms = now_ms() - t0;
			if (rc > 0 && r->pass == 2) {
				ret = pass2_refused(r, msg);
				free(msg);
				return ret;
			}
			if (rc > 0) {
				printf("%s\n", msg);
				db_bisection_enter(r->lab->db, r->b->id, BISECTION_DONE, BISECTION_NOT_REPRODUCED, NULL,
						   msg);
			} else if (rc == -2) {
				bisect_run_stop(r, msg);
			} else if (rc < 0 && msg) {
				bisect_run_fail(r, msg);
			}
			free(msg);
			if (rc)
				return EXIT_FAIL;
		}
		if (r->split[0] && r->tester->half) {
			/* resumed after the split */
			print_split(r);
			ret = LOOP_SPLIT;
		} else {
			ret = merge_base_phase(r);
			if (ret == 0)
				ret = bisect_loop(r);
		}
		if (ret == LOOP_SPLIT)
			ret = loop_halves(r);
		if (ret == LOOP_REOPEN)
			r->tester->reopen(r);
	} while (ret == LOOP_REOPEN);
	return ret;
}

void bisect_run_release(struct bisect_run *r)
{
	free(r->goods);
	free(r->skips);
	kbuild_recipe_release(&r->recipe);
	free(r->why);
	r->goods = r->skips = NULL;
	r->why = NULL;
}
