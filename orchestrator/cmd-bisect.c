/* klab bisect: start / resume / list / show / log.  A bisection with a
 * test command, like `git bisect start` + `git bisect run`, but with
 * libgit2, in klab's own worktree, every step stored before the next. */
#include "klab.h"
#include "lab.h"
#include "db.h"
#include "gitrepo.h"
#include "bisect.h"
#include "kbuild.h"
#include "guest.h"
#include "kernel.h"
#include "notify.h"
#include "perfbisect.h"
#include "revert.h"
#include "stats.h"
#include "verdict.h"
#include "compare.h"
#include "job.h"
#include <math.h>
#include "util/util.h"
#include "util/strbuf.h"
#include "util/run-command.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const bisect_usage[] = {
	"usage: klab bisect start --repo PATH --good REV [--good REV...] --bad REV",
	"                         [--first-parent] [--paths P...] [--timeout SEC]",
	"                         [--build [--config BASE] [--fragment F...]",
	"                          [--no-default-fragments] [--config-option O...]",
	"                          [--allow-config-drift]]",
	"                         [--slots K] [--no-run] -- CMD [ARGS...]",
	"   or: klab bisect start --repo PATH --good REV --bad REV --job FILE",
	"                         [--kpi METRIC] [--slots K] [--no-revert-check]",
	"                         [config options] [--no-run]",
	"   or: klab bisect resume ID",
	"   or: klab bisect list",
	"   or: klab bisect show ID",
	"   or: klab bisect log ID",
	"",
	"start   create a bisection and run it to the end (--no-run: only create).",
	"        CMD runs with argv (no shell) in klab's own checkout of each",
	"        commit, never in your working tree; its exit code decides:",
	"        0 good, 125 skip, 1-127 bad, 128 or more (or a signal) stops",
	"        the bisection.  CMD sees KLAB_COMMIT, KLAB_BISECT_ID, KLAB_STEP",
	"        and KLAB_WORKTREE.  Its output goes to a log per step.",
	"  --repo PATH       the git repository (read only for klab)",
	"  --good REV        a good revision (repeatable)",
	"  --bad REV         the bad revision",
	"  --first-parent    follow only first parents (like git bisect --first-parent)",
	"  --paths P         only commits touching P count (repeatable; or list them",
	"                    after --paths until the next option)",
	"  --timeout SEC     a test running longer is killed and the commit skipped",
	"  --build           build each commit's kernel first (as 'klab build'; same",
	"                    config options); CMD then gets KLAB_KERNEL, KLAB_CONFIG,",
	"                    KLAB_SYSTEM_MAP and KLAB_BUILD_LOG.  A commit that does",
	"                    not build (or whose config drifts) is skipped with the",
	"                    compiler error as the reason; a failure of the machine",
	"                    (disk full, missing tool) stops the bisection.",
	"  --job FILE        a performance bisection: build each commit, boot it in",
	"                    guests running the job (klab-job(5)) and decide good or",
	"                    bad by statistics on the KPI: the good and bad ends are",
	"                    measured first (interleaved) and the bisection refused",
	"                    unless the regression reproduces; each commit gets runs",
	"                    until the rules decide (3, 5, 8, 12); boot failures,",
	"                    panics and timeouts are skips with their reason; the",
	"                    culprit and its parent are re-measured at the end,",
	"                    interleaved, and compared directly: the culprit must be",
	"                    clearly worse and carry the job's confirm_share (default",
	"                    half) of the ends' gap, else the bisection ends",
	"                    'unconfirmed' (exit 4) without naming a culprit.",
	"                    A confirmed culprit gets a revert check: the bad end",
	"                    with the culprit reverted (a commit klab makes in its",
	"                    own worktree, never in your repository) is built and",
	"                    measured against the ends: 'revert restores good',",
	"                    'revert does not restore', 'revert does not apply'",
	"                    (conflicts), 'reverted kernel does not build' (or",
	"                    'could not be measured' when its guests fail).  It",
	"                    never changes the result or the exit status.",
	"  --no-revert-check  skip the revert check (kept by resume)",
	"  --kpi METRIC      the metric that decides (default: the job's kpi)",
	"  --slots K         multisection: test K commits at once (1 to 4, default 1),",
	"                    splitting the range into K+1 parts, so about",
	"                    log_(K+1)(N) rounds instead of log2(N) steps; verdicts",
	"                    as with one slot.  A test command runs in K worktree",
	"                    copies at once; a job's kernels are built one after",
	"                    another, then K guests run their first runs at once",
	"                    (extra runs and fresh reference runs stay one by one).",
	"                    In a round where a good commit descends from a bad",
	"                    one, the first bad in topological order wins and that",
	"                    good verdict is not used.  Kept by resume.",
	"resume  continue a bisection that stopped (crash, kill, aborted test)",
	"list    one line per bisection: id, state, result, culprit, steps, repository",
	"show    state, command, steps and culprit of one bisection",
	"log     the bisection as a replayable 'git bisect' log",
	"",
	"Exit status: 0 first bad commit found (a job's: and confirmed), 3 only",
	"skipped commits left, 4 a job's culprit not confirmed (result",
	"'unconfirmed': parent and culprit re-measured, interleaved, do not differ",
	"clearly, or the culprit carries less than the job's confirm_share of the",
	"ends' gap; no culprit is named), 1 error or stopped, 2 usage.",
	NULL
};

static int usage_error(const char *msg)
{
	if (msg)
		error("%s (see 'klab bisect --help')", msg);
	else
		fprintf(stderr, "see 'klab bisect --help'\n");
	return EXIT_USAGE;
}

static int parse_id(const char *s, int64_t *id)
{
	unsigned long v;

	if (parse_uint(s, 1UL << 53, &v) < 0 || v == 0)
		return error("'%s' is not a bisection id (see 'klab bisect list')", s);
	*id = (int64_t)v;
	return 0;
}

/* ---- running a bisection ---------------------------------------------- */

struct runner {
	struct lab *lab;
	struct bisection *b;
	struct gitrepo *repo;
	struct worktree *wt;
	char *log_dir;
	int64_t start_ms;
	int steps_done;
	/* marks from finished steps */
	char (*goods)[41];
	size_t nr_goods, alloc_goods;
	char (*skips)[41];
	size_t nr_skips, alloc_skips;
	char bad[41];
	struct kbuild_recipe recipe;
	int jobs;
	char *why;		/* why the last step could not finish */
	struct bisect_dag *dag;		/* loaded by start, or NULL */
	struct range_info *info;	/* what that load learnt, or NULL */
	struct perf *perf;		/* a job bisection, or NULL */
	/* for the remaining-time estimate: bisect steps timed in this run */
	int64_t step_ms_sum, ref_ms;
	int steps_timed;
	int slots;		/* commits tested at once (multisection) */
	pid_t parent;		/* the bisection's process, for a round's children */
};

static void add_hash(char (**arr)[41], size_t *nr, size_t *alloc, const char *hex)
{
	for (size_t i = 0; i < *nr; i++)
		if (!strcmp((*arr)[i], hex))
			return;
	ALLOC_GROW(*arr, *nr + 1, *alloc);
	memcpy((*arr)[(*nr)++], hex, 41);
}

static int has_hash(char (*arr)[41], size_t nr, const char *hex)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(arr[i], hex))
			return 1;
	return 0;
}

static void print_commit_line(struct runner *r, const char *hex)
{
	struct commit_info ci;

	if (gitrepo_commit_info(r->repo, hex, &ci) == 0) {
		print_line("[%s] %s", hex, ci.subject);
		commit_info_release(&ci);
	} else {
		printf("[%s]\n", hex);
	}
}

enum step_result { STEP_GOOD, STEP_BAD, STEP_SKIP, STEP_ABORT };

static enum step_result perf_step(struct runner *r, const struct step *s, const char *hex, const char *kernel,
				  int64_t build_id, struct strbuf *reason);
static int fail(struct runner *r, const char *msg);

/* What kernel_for_commit gets for a commit of this bisection: klab's
 * worktree, the bisection's recipe, progress lines under the step. */
static struct kernel_request kernel_request_for(struct runner *r, const char *hex)
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

/* The kernel of a step's commit, when the bisection builds: 0 got it
 * (*kernel, *build_id, and the build variables of a test command in
 * env[4..7]); 1 the commit does not build, and the step is finished as a
 * skip; -1 the step could not finish (aborted, r->why says why). */
static int step_kernel(struct runner *r, struct step *s, char **env, char **kernel, int64_t *build_id)
{
	const char *hex = s->hash;
	struct kernel_request rq = kernel_request_for(r, hex);
	struct kernel_result kr;
	int rc;

	/* a test command's worktree is checked out already */
	rq.checked_out = !r->perf;
	rc = kernel_for_commit(&rq, &kr);
	s->checkout_ms += kr.checkout_ms;
	if (rc < 0 && !kr.message) {
		db_step_abort(r->lab->db, s->id,
			      kr.checkout_failed ? "checkout failed" : "klab could not run the build");
		free(r->why);
		r->why = kr.checkout_failed ? xstrfmt("klab could not check out %.12s", hex)
					    : xstrfmt("klab could not run the build of %.12s", hex);
	} else if (rc == 0) {
		printf("  built: %s\n", kr.message);
		env[4] = xstrfmt("KLAB_KERNEL=%s", kr.build.bzimage);
		env[5] = xstrfmt("KLAB_CONFIG=%s", kr.build.config);
		env[6] = xstrfmt("KLAB_SYSTEM_MAP=%s", kr.build.system_map);
		env[7] = xstrfmt("KLAB_BUILD_LOG=%s", kr.build.log);
		*kernel = xstrdup(kr.kernel);
		*build_id = kr.build_id;
	} else {
		kernel_print_build(&kr.build, "  ");
		if (rc < 0) {
			db_step_abort(r->lab->db, s->id, kr.message);
			free(r->why);
			r->why = xstrdup(kr.message);
			error("%s on %.12s: fix the machine, then 'klab bisect resume %lld'", kr.message, hex,
			      (long long)r->b->id);
		} else {
			s->verdict = "skip";
			s->reason = kr.message;
			if (db_step_finish(r->lab->db, s) < 0) {
				rc = -1;
			} else {
				r->steps_done++;
				print_line("step %d: %.12s is skip (%s)", s->seq, hex, kr.message);
			}
			s->reason = NULL;
		}
	}
	kernel_result_release(&kr);
	return rc;
}

/* The test of a step that is a running row: check out, build if asked,
 * test (or measure), store the verdict. */
static enum step_result step_exec(struct runner *r, const struct step *sp, int64_t choose_ms)
{
	struct step s = *sp;
	const char *hex = sp->hash, *log_path = sp->log_path;
	struct run_opts ro = { 0 };
	struct run_result rr;
	struct strbuf reason = STRBUF_INIT;
	char *env[9];
	char *kernel = NULL;
	int64_t build_id = 0;
	char dur[32];
	int64_t t0;
	enum step_result res = STEP_ABORT;

	/* A test command runs in the checkout, so it is checked out even when
	 * the store has the kernel; a job only boots the kernel: checked out
	 * by kernel_for_commit, and only on a store miss. */
	t0 = now_ms();
	if (!r->perf && worktree_checkout(r->wt, hex) < 0) {
		db_step_abort(r->lab->db, s.id, "checkout failed");
		free(r->why);
		r->why = xstrfmt("klab could not check out %.12s", hex);
		goto out;
	}
	s.checkout_ms = r->perf ? 0 : now_ms() - t0;
	s.choose_ms = choose_ms;

	memset(env, 0, sizeof(env));
	if (r->b->build) {
		int rc = step_kernel(r, &s, env, &kernel, &build_id);
		if (rc) {
			res = rc > 0 ? STEP_SKIP : STEP_ABORT;
			goto out;
		}
	}
	if (r->perf) {
		for (int i = 4; i < 8; i++) {
			free(env[i]);
			env[i] = NULL;
		}
		t0 = now_ms();
		res = perf_step(r, &s, hex, kernel, build_id, &reason);
		s.test_ms = now_ms() - t0;
		if (res == STEP_ABORT) {
			db_step_abort(r->lab->db, s.id, reason.len ? reason.buf : "klab could not run the guests");
			free(r->why);
			r->why = xstrfmt("klab could not measure %.12s%s%s", hex, reason.len ? ": " : "", reason.buf);
			goto free_env;
		}
		s.verdict = res == STEP_GOOD ? "good" : res == STEP_BAD ? "bad" : "skip";
		s.reason = reason.buf;
		if (db_step_finish(r->lab->db, &s) < 0) {
			res = STEP_ABORT;
			goto free_env;
		}
		r->steps_done++;
		print_line("step %d: %.12s is %s (%s, %s)", s.seq, hex, s.verdict, reason.buf,
			   fmt_duration(s.test_ms, dur, sizeof(dur)));
		goto free_env;
	}
	env[0] = xstrfmt("KLAB_COMMIT=%s", hex);
	env[1] = xstrfmt("KLAB_BISECT_ID=%lld", (long long)r->b->id);
	env[2] = xstrfmt("KLAB_STEP=%d", s.seq);
	env[3] = xstrfmt("KLAB_WORKTREE=%s", worktree_path(r->wt));
	if (!env[4]) {
		/* no build: the list ends here */
	}
	{
		/* compact: the build variables follow the first four */
		int n = 4;
		for (int i = 4; i < 8; i++)
			if (env[i])
				env[n++] = env[i];
		env[n] = NULL;
	}
	ro.argv = (const char *const *)r->b->argv;
	ro.dir = worktree_path(r->wt);
	ro.env = (const char *const *)env;
	ro.output_path = log_path;
	ro.timeout_ms = r->b->timeout_ms;
	if (run_command(&ro, &rr) < 0) {
		db_step_abort(r->lab->db, s.id, "could not start the test command");
		goto free_env;
	}
	s.test_ms = rr.elapsed_ms;

	switch (rr.status) {
	case RUN_EXEC_FAILED:
		strbuf_addf(&reason, "cannot run '%s': %s", r->b->argv[0], strerror(rr.errno_value));
		break;
	case RUN_CANCELLED:
		strbuf_addstr(&reason, "cancelled");
		break;
	case RUN_SIGNALED:
		strbuf_addf(&reason, "test command killed by signal %d (%s)", rr.signal, strsignal(rr.signal));
		break;
	case RUN_TIMEOUT:
		strbuf_addf(&reason, "timeout after %s", fmt_duration(r->b->timeout_ms, dur, sizeof(dur)));
		res = STEP_SKIP;
		break;
	case RUN_EXITED:
		s.exit_code = rr.exit_code;
		strbuf_addf(&reason, "exit %d", rr.exit_code);
		if (rr.exit_code == 0)
			res = STEP_GOOD;
		else if (rr.exit_code == 125)
			res = STEP_SKIP;
		else if (rr.exit_code < 128)
			res = STEP_BAD;
		else
			strbuf_addstr(&reason, ": 128 or more stops the bisection");
		break;
	}
	if (res == STEP_ABORT) {
		db_step_abort(r->lab->db, s.id, reason.buf);
		error("%s on %.12s (log: %s)", reason.buf, hex, log_path);
		free(r->why);
		r->why = xstrfmt("the test command did not give a verdict (%s)", reason.buf);
		goto free_env;
	}
	s.verdict = res == STEP_GOOD ? "good" : res == STEP_BAD ? "bad" : "skip";
	s.reason = reason.buf;
	if (db_step_finish(r->lab->db, &s) < 0) {
		res = STEP_ABORT;
		goto free_env;
	}
	r->steps_done++;
	print_line("step %d: %.12s is %s (%s, test %s)", s.seq, hex, s.verdict, reason.buf,
		   fmt_duration(s.test_ms, dur, sizeof(dur)));
free_env:
	for (int i = 0; i < 9 && env[i]; i++)
		free(env[i]);
out:
	strbuf_release(&reason);
	free(kernel);
	return res;
}


/* Check out and test one commit; the step is a database row before the
 * test starts and carries its verdict before this returns. */
static enum step_result run_step(struct runner *r, const char *hex, const char *phase,
				 int remaining, int64_t choose_ms)
{
	struct step s;
	struct commit_info ci;
	char *log_path;
	enum step_result res = STEP_ABORT;

	memset(&s, 0, sizeof(s));
	memcpy(s.hash, hex, 41);
	s.phase = (char *)phase;
	s.remaining = remaining;
	s.exit_code = -1;
	log_path = xstrfmt("%s/%.12s-%s.log", r->log_dir, hex, phase);
	s.log_path = log_path;

	if (gitrepo_commit_info(r->repo, hex, &ci) < 0)
		goto out;
	if (db_commit_store(r->lab->db, r->b->repo_id, &ci) < 0 ||
	    db_step_begin(r->lab->db, r->b->id, &s) < 0) {
		commit_info_release(&ci);
		goto out;
	}
	commit_info_release(&ci);
	res = step_exec(r, &s, choose_ms);
out:
	free(log_path);
	return res;
}

/* ---- job bisections: measure, decide, confirm, report ----------------- */

static void store_verdict(struct runner *r, int64_t step_id, const struct verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	char *stat = xstrfmt("position=%.3f z_good=%.2f z_bad=%.2f threshold=%.2f noise=%.2f%% n=%zu/%zu/%zu",
			     v->position, v->z_good, v->z_bad, v->threshold, v->noise, v->n_good, v->n_bad, v->n_cand);

	verdict_format(&sb, v);
	db_verdict_store(r->lab->db, step_id, v->rule, v->mwu_good.p_value, v->mwu_bad.p_value, stat, sb.buf);
	free(stat);
	strbuf_release(&sb);
}

static int build_for(struct runner *r, const char *hex, char **kernel, int64_t *build_id);

/* One more run of a reference end, taken between a commit's extra runs:
 * a commit is ambiguous when the host drifts as often as when the commit
 * sits between the ends, and reference runs from the same minutes keep
 * the comparison fair.  A failure is a warning: the reference runs
 * measured so far still hold. */
static void reference_run(struct runner *r)
{
	struct perf *p = r->perf;
	int bad_end = p->ref_turn++ & 1;
	const char *hex = bad_end ? r->b->bad : r->b->goods[0];
	char **kernel = bad_end ? &p->bad_kernel : &p->good_kernel;
	int64_t *build = bad_end ? &p->bad_build : &p->good_build;
	double **vals = bad_end ? &p->bad : &p->good;
	size_t *n = bad_end ? &p->nb : &p->ng;
	double *nv = NULL;
	size_t nn = 0;
	char *why = NULL, label[64];
	int rc;

	if (!*kernel && build_for(r, hex, kernel, build) < 0) {
		warning("no kernel for a fresh %s reference run: deciding with the earlier ones",
			bad_end ? "bad" : "good");
		return;
	}
	snprintf(label, sizeof(label), "  reference %s %.12s ", bad_end ? "bad" : "good", hex);
	rc = perf_measure_to(p, *kernel, *build, bad_end ? p->bad_step : p->good_step, label, *n + 1, &nv, &nn,
			     &why);
	if (rc || nn <= *n) {
		warning("a fresh %s reference run failed (%s): deciding with the earlier ones",
			bad_end ? "bad" : "good", why ? why : "klab error");
		free(nv);
	} else {
		free(*vals);
		*vals = nv;
		*n = nn;
	}
	free(why);
}

/* A commit's runs until the rules decide: more runs while they ask, each
 * extra one after a fresh reference run (good and bad in turn); a skip
 * when the guest fails (with its reason) or the cap is reached. */
static enum step_result perf_step(struct runner *r, const struct step *s, const char *hex, const char *kernel,
				  int64_t build_id, struct strbuf *reason)
{
	struct perf *p = r->perf;
	struct verdict v;
	double *vals = NULL;
	size_t n = 0, want = p->pol.ladder[0];
	char *why = NULL;
	enum step_result res = STEP_ABORT;

	(void)hex;
	if (!kernel) {
		strbuf_addstr(reason, "no kernel to boot");
		return STEP_ABORT;
	}
	for (;;) {
		/* the first runs in one go, extra runs one by one */
		size_t next = n ? n + 1 : want;
		int rc;

		if (n)
			reference_run(r);
		rc = perf_measure_to(p, kernel, build_id, s->id, "  ", next, &vals, &n, &why);
		if (rc < 0)
			goto out;
		if (rc > 0) {
			/* boot failure, panic, timeout: not a performance verdict */
			strbuf_addstr(reason, why);
			res = STEP_SKIP;
			goto out;
		}
		if (n < want)
			continue;
		if (verdict_classify(&v, &p->pol, p->good, p->ng, p->bad, p->nb, vals, n, p->job.direction) < 0)
			goto out;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= n)
			break;
		printf("  %s: %u runs needed, each after a fresh reference run\n", v.text, v.next_runs);
		want = v.next_runs;
	}
	store_verdict(r, s->id, &v);
	strbuf_addf(reason, "%s: %s", v.rule, v.text);
	res = v.kind == VERDICT_GOOD ? STEP_GOOD : v.kind == VERDICT_BAD ? STEP_BAD : STEP_SKIP;
out:
	free(why);
	free(vals);
	return res;
}

/* The kernel of one commit for a reference or confirmation step. */
static int build_for(struct runner *r, const char *hex, char **kernel, int64_t *build_id)
{
	struct kernel_request rq = kernel_request_for(r, hex);
	struct kernel_result kr;
	int rc = kernel_for_commit(&rq, &kr), ret = -1;

	if (rc == 0) {
		*kernel = xstrdup(kr.kernel);
		*build_id = kr.build_id;
		ret = 0;
	} else if (rc > 0 || kr.message) {
		kernel_print_build(&kr.build, "  ");
		error("%.12s does not build (%s): a job bisection needs both ends built", hex,
		      kr.build.message ? kr.build.message : "");
	}
	kernel_result_release(&kr);
	return ret;
}

struct pair_side {
	const char *hex;
	struct step s;
	char *kernel;
	int64_t build_id;
	double *vals;
	size_t n;
};

static int pair_begin(struct runner *r, struct pair_side *side, const char *hex, const char *phase)
{
	struct commit_info ci;

	memset(side, 0, sizeof(*side));
	side->hex = hex;
	memcpy(side->s.hash, hex, 41);
	side->s.phase = (char *)phase;
	side->s.exit_code = -1;
	if (gitrepo_commit_info(r->repo, hex, &ci) < 0)
		return -1;
	if (db_commit_store(r->lab->db, r->b->repo_id, &ci) < 0 || db_step_begin(r->lab->db, r->b->id, &side->s) < 0) {
		commit_info_release(&ci);
		return -1;
	}
	print_line("%s %.12s %s", phase, hex, ci.subject);
	commit_info_release(&ci);
	return build_for(r, hex, &side->kernel, &side->build_id);
}

static void pair_release(struct pair_side *side)
{
	free(side->kernel);
	free(side->vals);
}

/* Runs of two kernels alternate (a, b, a, b, ...), so a slow spell of the
 * host hits both sides instead of one. */
static int pair_measure(struct runner *r, struct pair_side *a, struct pair_side *b, size_t want, char **why)
{
	for (size_t k = 1; k <= want; k++) {
		struct pair_side *sides[2] = { a, b };
		for (int i = 0; i < 2; i++) {
			char label[64];
			int rc;
			free(sides[i]->vals);
			sides[i]->vals = NULL;
			snprintf(label, sizeof(label), "  %s %.12s ", sides[i]->s.phase, sides[i]->hex);
			rc = perf_measure_to(r->perf, sides[i]->kernel, sides[i]->build_id, sides[i]->s.id, label, k,
					     &sides[i]->vals, &sides[i]->n, why);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int pair_finish(struct runner *r, struct pair_side *side, const char *verdict, const char *reason)
{
	side->s.verdict = (char *)verdict;
	side->s.reason = (char *)reason;
	return db_step_finish(r->lab->db, &side->s);
}

/* Measure the good and the bad end (interleaved) and refuse to bisect
 * unless the regression reproduces.  0 go on, 1 refused (state set),
 * -1 error. */
static int reference_phase(struct runner *r)
{
	struct perf *p = r->perf;
	struct pair_side good, bad;
	struct verdict v;
	char *why = NULL;
	size_t want = p->job.repeat;
	int ret = -1, rc;
	struct step *steps = NULL;
	size_t nr_steps = 0;

	/* Resumed: the ends were measured and the regression reproduced. */
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		return -1;
	for (size_t i = 0; i < nr_steps; i++) {
		if (strcmp(steps[i].phase, "reference") || strcmp(steps[i].status, "done"))
			continue;
		/* the latest pair decided; each end with its own verdict */
		if (!strcmp(steps[i].hash, r->b->goods[0]) && steps[i].verdict && !strcmp(steps[i].verdict, "good"))
			p->good_step = steps[i].id;
		else if (!strcmp(steps[i].hash, r->b->bad) && steps[i].verdict && !strcmp(steps[i].verdict, "bad"))
			p->bad_step = steps[i].id;
	}
	steps_release(steps, nr_steps);
	if (p->good_step && p->bad_step) {
		if (db_step_metric_values(r->lab->db, p->good_step, p->job.kpi, &p->good, &p->ng) < 0 ||
		    db_step_metric_values(r->lab->db, p->bad_step, p->job.kpi, &p->bad, &p->nb) < 0)
			return -1;
		printf("references from earlier runs: %zu good and %zu bad runs\n", p->ng, p->nb);
		return 0;
	}
	p->good_step = p->bad_step = 0;
	memset(&good, 0, sizeof(good));
	memset(&bad, 0, sizeof(bad));

	if (pair_begin(r, &good, r->b->goods[0], "reference") < 0 || pair_begin(r, &bad, r->b->bad, "reference") < 0) {
		fail(r, "cannot build the ends of the range");
		goto out;
	}
	for (;;) {
		rc = pair_measure(r, &good, &bad, want, &why);
		if (rc) {
			char *msg = xstrfmt("the ends of the range cannot be measured (%s)", why ? why : "klab error");
			if (rc > 0) {
				free(msg);
				msg = xstrfmt("an end of the range cannot be measured: %s", why);
			}
			fail(r, msg);
			free(msg);
			goto out;
		}
		if (verdict_reproduce(&v, &p->pol, good.vals, good.n, bad.vals, bad.n, p->job.direction) < 0)
			goto out;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= want)
			break;
		printf("  %s: %u runs each\n", v.text, v.next_runs);
		want = v.next_runs;
	}
	store_verdict(r, good.s.id, &v);
	store_verdict(r, bad.s.id, &v);
	if (pair_finish(r, &good, "good", v.text) < 0 || pair_finish(r, &bad, "bad", v.text) < 0)
		goto out;
	p->good = good.vals;
	p->ng = good.n;
	p->bad = bad.vals;
	p->nb = bad.n;
	good.vals = bad.vals = NULL;
	p->good_step = good.s.id;
	p->bad_step = bad.s.id;
	p->good_kernel = good.kernel;
	p->good_build = good.build_id;
	p->bad_kernel = bad.kernel;
	p->bad_build = bad.build_id;
	good.kernel = bad.kernel = NULL;
	{
		struct strbuf gs = STRBUF_INIT, bs = STRBUF_INIT;
		perf_describe(&gs, p->good, p->ng);
		perf_describe(&bs, p->bad, p->nb);
		printf("%s: good %s, bad %s (%zu and %zu runs)\n", p->job.kpi, gs.buf, bs.buf, p->ng, p->nb);
		strbuf_release(&gs);
		strbuf_release(&bs);
	}
	if (v.kind != VERDICT_REPRODUCED) {
		char *msg = strstr(v.text, "not reproduced") ? xstrdup(v.text)
							      : xstrfmt("regression not reproduced: %s", v.text);
		printf("%s\n", msg);
		db_bisection_set_state(r->lab->db, r->b->id, "done", "not-reproduced", NULL, msg);
		free(msg);
		ret = 1;
		goto out;
	}
	printf("%s\n", v.text);
	ret = 0;
out:
	free(why);
	pair_release(&good);
	pair_release(&bad);
	return ret;
}

static void print_kpi_row(const char *label, const char *hex, const double *v, size_t n, double good_median)
{
	struct strbuf sb = STRBUF_INIT;

	perf_describe(&sb, v, n);
	printf("  %-8s %.12s  %-16s %+7.1f%%  (%zu runs)\n", label, hex, sb.buf,
	       n ? stats_change_percent(good_median, stats_median(v, n)) : 0.0, n);
	strbuf_release(&sb);
}

/* The monitors that moved between parent and culprit, by compare.c's rule
 * (LKP's: the runs' ranges apart), most significant first: the top rows
 * of each family, then the table. */
static void print_mon_table(struct runner *r, int64_t parent_step, int64_t culprit_step, int confirmed)
{
	struct db_mon_values *a = NULL, *b = NULL;
	struct compare_stat *st = NULL;
	struct compare_row *rows = NULL;
	struct strbuf sb = STRBUF_INIT;
	size_t na = 0, nb = 0, ns = 0, nr = 0, i = 0, j = 0;

	if (db_step_mon_values(r->lab->db, parent_step, &a, &na) < 0 ||
	    db_step_mon_values(r->lab->db, culprit_step, &b, &nb) < 0)
		goto out;
	st = xcalloc(na + 1, sizeof(*st));
	/* both sorted by name: only the stats both sides have */
	while (i < na && j < nb) {
		int d = strcmp(a[i].name, b[j].name);
		if (!d)
			st[ns++] = (struct compare_stat){ a[i].name, a[i].v, b[j].v, a[i].n, b[j].n, 0 };
		i += d <= 0;
		j += d >= 0;
	}
	compare_sets(st, ns, &rows, &nr);
	printf("  monitors per run (parent -> %s; ranges apart, most significant first): %zu of %zu changed\n",
	       confirmed ? "culprit" : "suspect", nr, ns);
	if (nr) {
		compare_summary(&sb, rows, nr, 3, "    ");
		strbuf_addch(&sb, '\n');
		compare_format(&sb, rows, nr, "parent", confirmed ? "culprit" : "suspect", 25, "    ");
		fputs(sb.buf, stdout);
	}
out:
	strbuf_release(&sb);
	free(rows);
	free(st);
	db_mon_values_free(a, na);
	db_mon_values_free(b, nb);
}

/* Commits the bisection had to skip, with why: a panic or a build
 * failure met on the way is news for the report, not a detail. */
static void print_skipped(struct runner *r)
{
	struct step *steps = NULL;
	size_t nr = 0;
	int shown = 0;

	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr) < 0)
		return;
	for (size_t i = 0; i < nr; i++) {
		struct commit_info ci;
		if (strcmp(steps[i].phase, "bisect") || !steps[i].verdict || strcmp(steps[i].verdict, "skip"))
			continue;
		if (!shown++)
			printf("  skipped on the way:\n");
		if (gitrepo_commit_info(r->repo, steps[i].hash, &ci) == 0) {
			print_line("    %.12s %s", steps[i].hash, ci.subject);
			commit_info_release(&ci);
		} else {
			printf("    %.12s\n", steps[i].hash);
		}
		fputs("      ", stdout);
		print_clean(stdout, steps[i].reason ? steps[i].reason : "no reason recorded");
		fputc('\n', stdout);
	}
	steps_release(steps, nr);
}

/* Re-measure the culprit and its parent (interleaved) until
 * verdict_confirm decides, then the report.  Returns the one-line outcome
 * (caller frees); *confirmed is 0 only when the measurements say the
 * culprit is not the cause (a confirmation that could not run leaves the
 * culprit standing, and says so). */
static char *confirm_and_report(struct runner *r, const char *culprit, int *confirmed)
{
	struct perf *p = r->perf;
	struct pair_side parent, cul;
	struct verdict vc;
	char parent_hex[41], *spec = xstrfmt("%s^", culprit), *why = NULL, *msg = NULL;
	size_t want = p->job.repeat;
	int ok = 0;

	*confirmed = 1;
	memset(&parent, 0, sizeof(parent));
	memset(&cul, 0, sizeof(cul));
	if (gitrepo_resolve(r->repo, spec, parent_hex) < 0) {
		msg = xstrdup("culprit found; its parent could not be resolved for the confirmation");
		goto report;
	}
	if (pair_begin(r, &parent, parent_hex, "confirm") < 0 || pair_begin(r, &cul, culprit, "confirm") < 0) {
		msg = xstrdup("culprit found; the confirmation could not build both commits");
		goto report;
	}
	if (parent.kernel && cul.kernel && files_identical(parent.kernel, cul.kernel) == 1) {
		/* syzbot's no-op check: klab's builds are reproducible, so the
		 * commit does not change what runs */
		*confirmed = 0;
		msg = xstrfmt("culprit %.12s NOT confirmed: its kernel is byte for byte its parent's, "
			      "so the commit cannot cause the change", culprit);
		pair_finish(r, &parent, "skip", msg);
		pair_finish(r, &cul, "skip", msg);
		goto report;
	}
	for (;;) {
		int rc = pair_measure(r, &parent, &cul, want, &why);
		if (rc) {
			msg = xstrfmt("culprit found; the confirmation could not measure (%s)", why ? why : "klab error");
			goto report;
		}
		if (verdict_confirm(&vc, &p->pol, p->good, p->ng, p->bad, p->nb, parent.vals, parent.n, cul.vals, cul.n,
				    p->job.direction) < 0) {
			msg = xstrdup("culprit found; the confirmation could not decide (klab error)");
			goto report;
		}
		if (vc.kind != VERDICT_NEED_MORE || vc.next_runs <= want)
			break;
		printf("  %s\n", vc.text);
		want = vc.next_runs;
	}
	store_verdict(r, parent.s.id, &vc);
	store_verdict(r, cul.s.id, &vc);
	ok = vc.kind == VERDICT_CONFIRMED;
	pair_finish(r, &parent, ok ? "good" : "skip", vc.text);
	pair_finish(r, &cul, ok ? "bad" : "skip", vc.text);
	*confirmed = ok;
	/* vc.text starts "culprit confirmed: ..." or "culprit NOT confirmed: ..." */
	msg = xstrfmt("culprit %.12s %s", culprit,
		      ok || vc.kind != VERDICT_NEED_MORE ? vc.text + strlen("culprit ")
							 : "NOT confirmed: still unclear at the cap");
report:
	printf("\n%s %s: %s\n", p->job.suite, p->job.testcase, msg);
	{
		double gm = stats_median(p->good, p->ng);
		printf("  %s (%s is better):\n", p->job.kpi, p->job.direction > 0 ? "higher" : "lower");
		print_kpi_row("good", r->b->goods[0], p->good, p->ng, gm);
		if (parent.n)
			print_kpi_row("parent", parent.hex, parent.vals, parent.n, gm);
		if (cul.n)
			print_kpi_row(*confirmed ? "culprit" : "suspect", cul.hex, cul.vals, cul.n, gm);
		print_kpi_row("bad", r->b->bad, p->bad, p->nb, gm);
	}
	if (parent.n && cul.n)
		print_mon_table(r, parent.s.id, cul.s.id, *confirmed);
	print_skipped(r);
	{
		struct strbuf rep = STRBUF_INIT;
		strbuf_addstr(&rep, "  reproduce: klab run --job ");
		strbuf_add_shell_word(&rep, r->b->job_path ? r->b->job_path : "JOB");
		strbuf_addstr(&rep, " --repo ");
		strbuf_add_shell_word(&rep, r->b->repo_path);
		strbuf_addf(&rep, " --rev %.12s\n", culprit);
		fputs(rep.buf, stdout);
		strbuf_release(&rep);
	}
	pair_release(&parent);
	pair_release(&cul);
	free(spec);
	free(why);
	return msg;
}

static void apply_result(struct runner *r, const char *hex, enum step_result res)
{
	if (res == STEP_GOOD)
		add_hash(&r->goods, &r->nr_goods, &r->alloc_goods, hex);
	else if (res == STEP_SKIP)
		add_hash(&r->skips, &r->nr_skips, &r->alloc_skips, hex);
	else if (res == STEP_BAD)
		memcpy(r->bad, hex, 41);
}

static enum step_result verdict_of(const struct step *s)
{
	if (!s->verdict)
		return STEP_ABORT;
	if (!strcmp(s->verdict, "good"))
		return STEP_GOOD;
	if (!strcmp(s->verdict, "bad"))
		return STEP_BAD;
	return STEP_SKIP;
}

static int stop(struct runner *r, const char *msg)
{
	db_bisection_set_state(r->lab->db, r->b->id, "stopped", NULL, NULL, msg);
	fprintf(stderr, "klab: bisection %lld stopped: %s\n"
			"klab: continue it with 'klab bisect resume %lld'\n",
		(long long)r->b->id, msg, (long long)r->b->id);
	return EXIT_FAIL;
}

static int fail(struct runner *r, const char *msg)
{
	db_bisection_set_state(r->lab->db, r->b->id, "failed", "error", NULL, msg);
	error("bisection %lld failed: %s", (long long)r->b->id, msg);
	return EXIT_FAIL;
}

/* git tests merge bases first when a good commit is not an ancestor of
 * bad.  Returns 0 when done, or an exit code. */
static int merge_base_phase(struct runner *r)
{
	char (*mbs)[41] = NULL;
	size_t nr_mbs = 0;
	int need = 0, ret = -1;

	for (size_t i = 0; i < r->b->nr_goods; i++) {
		int a;
		/* a good that is the parent of a candidate is an ancestor of
		 * bad: no history walk needed */
		if (r->info && r->info->good_below[i])
			continue;
		a = gitrepo_is_ancestor(r->repo, r->b->goods[i], r->b->bad);
		if (a < 0)
			return fail(r, "cannot compare good and bad revisions");
		if (!a)
			need = 1;
	}
	if (!need)
		return 0;
	if (gitrepo_merge_bases(r->repo, r->b->bad, r->b->goods, r->b->nr_goods, &mbs, &nr_mbs) < 0)
		return fail(r, "cannot compute merge bases");
	for (;;) {
		const char *todo = NULL;
		enum step_result res;

		for (size_t i = 0; i < nr_mbs; i++) {
			if (!strcmp(mbs[i], r->bad)) {
				char *msg = xstrfmt("the merge base %s is bad: the regression was fixed "
						    "between it and the good revisions", mbs[i]);
				ret = fail(r, msg);
				free(msg);
				goto out;
			}
			/* given good or tested good: nothing to test (git's
			 * check_merge_bases looks in all good revisions) */
			if (has_hash(r->goods, r->nr_goods, mbs[i]) || has_hash(r->b->goods, r->b->nr_goods, mbs[i]))
				continue;
			if (has_hash(r->skips, r->nr_skips, mbs[i])) {
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
		res = run_step(r, todo, "merge-base", -1, 0);
		if (res == STEP_ABORT) {
			ret = stop(r, r->why ? r->why : "the step on a merge base could not finish");
			goto out;
		}
		apply_result(r, todo, res);
	}
	ret = 0;
out:
	free(mbs);
	return ret;
}

static void print_first_bad(struct runner *r, const char *hex)
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

/* "step 3 of about 6, 4m10s so far, about 5m left": job bisections only
 * (a test command's steps are too short to need it).  A step costs what
 * the steps of this run cost on average (before the first one: half the
 * reference phase, which built and measured two kernels); the
 * confirmation about two steps. */
static void print_progress(struct runner *r, int done, int steps_after)
{
	int64_t per_step = 0;
	char el[32], left[32];

	if (!r->perf)
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

/* One slot of a round, in a child process: its own database connection,
 * and its own repository and worktree copy (a test command) or guest
 * environment (a job: the kernel was built by the parent; the child
 * boots the first runs, the parent decides).  The result is stored under
 * the step; the exit code only says whether klab itself failed. */
static int round_child(struct runner *r, const struct step *s, const char *wt_dir, const char *kernel,
		       int64_t build_id, int64_t choose_ms)
{
	sqlite3 *db;
	struct gitrepo *repo = NULL;
	struct worktree *wt = NULL;
	enum step_result res;

	/* a killed bisection takes its slots with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != r->parent)
		return 1;
	/* the parent's connections stay the parent's: never used here */
	if (db_open(&db, r->lab->db_path, 0) < 0)
		return 1;
	r->lab->db = db;
	if (r->perf) {
		struct perf *p = r->perf;
		double *vals = NULL;
		size_t n = 0;
		char *why = NULL, label[64];
		int64_t t0 = now_ms();
		int rc;

		/* the parent closed its guests' connection before forking */
		guest_env_detach(&p->ge);
		snprintf(label, sizeof(label), "  %.12s ", s->hash);
		rc = perf_measure_to(p, kernel, build_id, s->id, label, p->pol.ladder[0], &vals, &n, &why);
		if (rc > 0) {
			/* boot failure, panic, timeout: a skip, as perf_step does */
			struct step done = *s;
			char dur[32];
			done.verdict = "skip";
			done.reason = why;
			done.choose_ms = choose_ms;
			done.test_ms = now_ms() - t0;
			if (db_step_finish(db, &done) < 0)
				rc = -1;
			else
				print_line("step %d: %.12s is skip (%s, %s)", s->seq, s->hash, why,
					   fmt_duration(done.test_ms, dur, sizeof(dur)));
		}
		guest_env_free(p->ge);
		p->ge = NULL;
		free(vals);
		free(why);
		db_close(db);
		return rc < 0 ? 1 : 0;
	}
	if (gitrepo_open(&repo, r->b->repo_path) < 0 || worktree_open(&wt, repo, wt_dir) < 0) {
		db_step_abort(db, s->id, "klab could not open the slot's worktree");
		return 1;
	}
	r->repo = repo;
	r->wt = wt;
	res = step_exec(r, s, choose_ms);
	worktree_free(wt);
	gitrepo_free(repo);
	db_close(db);
	return res == STEP_ABORT ? 1 : 0;
}

/* Build a round's commit before its guests start (job bisections): the
 * children only boot.  No kernel is not an error here: step_exec meets
 * the failure again (from the build records) and handles it as always. */
static void round_prebuild(struct runner *r, const char *hex, char **kernel, int64_t *build_id)
{
	struct kernel_request rq = kernel_request_for(r, hex);
	struct kernel_result kr;

	*kernel = NULL;
	if (kernel_for_commit(&rq, &kr) == 0) {
		printf("  %.12s built: %s\n", hex, kr.message);
		*kernel = xstrdup(kr.kernel);
		*build_id = kr.build_id;
	}
	kernel_result_release(&kr);
}

/* Test n commits at once: all step rows first (one transaction), then
 * one child per commit, then the verdicts read back from the database.
 * A job's commits are built here first, one after another (builds use
 * every CPU), and the parent decides each commit with the unchanged
 * rules after its children's first runs, doing any extra runs.  res[i]
 * gets each verdict, STEP_ABORT for a slot that could not finish. */
static void run_round(struct runner *r, char (*hex)[41], int n, int round, int all, int64_t choose_ms,
		      enum step_result *res)
{
	struct step *s = xcalloc(n, sizeof(*s));
	char **wt_dir = xcalloc(n, sizeof(char *)), **kernel = xcalloc(n, sizeof(char *));
	int *wt_fd = xmalloc(n * sizeof(int)), *child_ok = xcalloc(n, sizeof(int));
	int64_t *build_id = xcalloc(n, sizeof(int64_t));
	pid_t *pid = xmalloc(n * sizeof(pid_t));
	struct step *steps = NULL;
	size_t nr_steps = 0;

	for (int i = 0; i < n; i++) {
		struct commit_info ci;

		wt_fd[i] = -1;
		pid[i] = -1;
		res[i] = STEP_ABORT;
		memcpy(s[i].hash, hex[i], 41);
		s[i].phase = "bisect";
		s[i].remaining = all;
		s[i].exit_code = -1;
		s[i].log_path = xstrfmt("%s/%.12s-bisect.log", r->log_dir, hex[i]);
		if (gitrepo_commit_info(r->repo, hex[i], &ci) < 0)
			goto out;
		if (db_commit_store(r->lab->db, r->b->repo_id, &ci) < 0) {
			commit_info_release(&ci);
			goto out;
		}
		commit_info_release(&ci);
	}
	if (db_round_begin(r->lab->db, r->b->id, s, (size_t)n, round) < 0)
		goto out;
	if (r->perf) {
		for (int i = 0; i < n; i++)
			round_prebuild(r, hex[i], &kernel[i], &build_id[i]);
		/* A libvirt connection must not be shared with children (their
		 * event loops would read its socket): closed here, opened again
		 * when the parent boots the next guest. */
		guest_env_free(r->perf->ge);
		r->perf->ge = NULL;
	} else {
		/* the bisection's own worktree serves the first slot */
		wt_dir[0] = xstrdup(worktree_path(r->wt));
		for (int i = 1; i < n; i++) {
			wt_fd[i] = kernel_worktree_lock(r->lab, r->b->repo_id, &wt_dir[i]);
			if (wt_fd[i] < 0) {
				free(r->why);
				r->why = xstrfmt("klab could not lock a worktree copy for slot %d", i + 1);
				goto abort_rows;
			}
		}
	}
	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < n; i++) {
		if (r->perf && !kernel[i])
			continue;
		pid[i] = fork();
		if (pid[i] < 0) {
			error("cannot start slot %d: %s", i + 1, strerror(errno));
			break;
		}
		if (pid[i] == 0) {
			int code = round_child(r, &s[i], wt_dir[i], kernel[i], build_id[i], choose_ms);
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
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		goto abort_rows;
	for (int i = 0; i < n; i++) {
		const struct step *got = NULL;

		for (size_t j = 0; j < nr_steps; j++)
			if (steps[j].id == s[i].id)
				got = &steps[j];
		if (got && !strcmp(got->status, "done")) {
			/* decided in its slot */
			res[i] = verdict_of(got);
			r->steps_done++;
		} else if (got && !strcmp(got->status, "running") && r->perf && (child_ok[i] || !kernel[i])) {
			/* the first runs are stored: decide as one slot would */
			res[i] = step_exec(r, &s[i], choose_ms);
		}
	}
abort_rows:
	for (int i = 0; i < n; i++) {
		if (res[i] != STEP_ABORT || !s[i].id)
			continue;
		if (!r->why)
			r->why = xstrfmt("the test of %.12s in slot %d did not finish", hex[i], i + 1);
		db_step_abort(r->lab->db, s[i].id, "the slot did not finish");
	}
out:
	for (int i = 0; i < n; i++) {
		if (wt_fd[i] >= 0)
			close(wt_fd[i]);
		free(wt_dir[i]);
		free(kernel[i]);
		free(s[i].log_path);
	}
	steps_release(steps, nr_steps);
	free(s);
	free(wt_dir);
	free(kernel);
	free(wt_fd);
	free(child_ok);
	free(build_id);
	free(pid);
}

/* Replay the bisect steps an earlier run finished: the steps of one
 * round together (bisect_mark_round), a step without a round alone. */
static int replay_marks(struct runner *r, const struct bisect_dag *dag, struct bisect_state *st,
			const struct step *steps, size_t nr_steps, int *nr_tested, int *last_round)
{
	int64_t *ids = NULL;
	int *rounds = NULL, *commits = xmalloc((nr_steps + 1) * sizeof(int));
	int *ignored = xmalloc((nr_steps + 1) * sizeof(int));
	enum bisect_mark *marks = xmalloc((nr_steps + 1) * sizeof(*marks));
	unsigned char *applied = xcalloc(nr_steps + 1, 1);
	size_t nr_rounds = 0;

	*last_round = 0;
	if (db_step_rounds(r->lab->db, r->b->id, &ids, &rounds, &nr_rounds) < 0) {
		free(commits);
		free(ignored);
		free(marks);
		free(applied);
		return -1;
	}
	for (size_t i = 0; i < nr_rounds; i++)
		if (rounds[i] > *last_round)
			*last_round = rounds[i];
	for (size_t i = 0; i < nr_steps; i++) {
		int round = 0, n = 0;

		if (applied[i] || strcmp(steps[i].status, "done"))
			continue;
		/* reference and confirmation runs are not bisection marks */
		if (strcmp(steps[i].phase, "bisect") && strcmp(steps[i].phase, "merge-base"))
			continue;
		for (size_t k = 0; k < nr_rounds; k++)
			if (ids[k] == steps[i].id)
				round = rounds[k];
		for (size_t j = i; j < nr_steps; j++) {
			int rj = 0;
			unsigned char oid[20];
			enum step_result v;

			if (applied[j] || strcmp(steps[j].status, "done") ||
			    (strcmp(steps[j].phase, "bisect") && strcmp(steps[j].phase, "merge-base")))
				continue;
			for (size_t k = 0; k < nr_rounds; k++)
				if (ids[k] == steps[j].id)
					rj = rounds[k];
			if (j != i && (!round || rj != round))
				continue;
			applied[j] = 1;
			v = verdict_of(&steps[j]);
			hex_to_oid(steps[j].hash, oid);
			commits[n] = bisect_dag_find(dag, oid);
			*nr_tested += !strcmp(steps[j].phase, "bisect");
			if (v == STEP_SKIP)
				marks[n++] = BISECT_SKIP;
			else if (commits[n] >= 0 && !strcmp(steps[j].phase, "bisect"))
				marks[n++] = v == STEP_GOOD ? BISECT_GOOD : BISECT_BAD;
		}
		bisect_mark_round(dag, st, commits, marks, n, ignored);
	}
	free(ids);
	free(rounds);
	free(commits);
	free(ignored);
	free(marks);
	free(applied);
	return 0;
}

static int bisect_loop(struct runner *r)
{
	struct bisect_dag dag;
	struct bisect_state st;
	struct step *steps = NULL;
	size_t nr_steps = 0;
	int ret = EXIT_FAIL;
	char (*all_goods)[41] = NULL;
	size_t nr_all = 0, alloc_all = 0;
	int nr_tested = 0;	/* bisect steps done, earlier runs included */
	int round = 0, *picks = NULL;	/* multisection: the last round, its commits */
	enum step_result *res = NULL;
	char (*hexes)[41] = NULL;

	/* Goods known before the bisect phase: the given ones and merge
	 * bases tested good. */
	for (size_t i = 0; i < r->b->nr_goods; i++)
		add_hash(&all_goods, &nr_all, &alloc_all, r->b->goods[i]);
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		goto out_nodag;
	for (size_t i = 0; i < nr_steps; i++)
		if (!strcmp(steps[i].phase, "merge-base") && steps[i].verdict &&
		    !strcmp(steps[i].verdict, "good"))
			add_hash(&all_goods, &nr_all, &alloc_all, steps[i].hash);

	if (r->dag && nr_all == r->b->nr_goods) {
		dag = *r->dag;	/* the range start loaded: take it over */
		bisect_dag_init(r->dag);
	} else if (gitrepo_load_dag(r->repo, r->b->bad, all_goods, nr_all, r->b->first_parent,
				    (const char *const *)r->b->paths, r->b->nr_paths, &dag) < 0) {
		ret = fail(r, "cannot load the commit range");
		goto out_nodag;
	}
	{
		unsigned char oid[20];
		int bad_idx;
		hex_to_oid(r->b->bad, oid);
		bad_idx = bisect_dag_find(&dag, oid);
		if (bad_idx < 0) {
			ret = fail(r, "the bad commit is not in the range (is it an ancestor of a good one?)");
			goto out;
		}
		bisect_state_init(&st, &dag, bad_idx);
	}
	/* Replay what earlier runs decided. */
	if (replay_marks(r, &dag, &st, steps, nr_steps, &nr_tested, &round) < 0) {
		bisect_state_release(&st);
		goto out;
	}
	picks = xmalloc((size_t)(r->slots > 1 ? r->slots : 1) * sizeof(int));
	res = xmalloc((size_t)(r->slots > 1 ? r->slots : 1) * sizeof(*res));
	hexes = xcalloc((size_t)(r->slots > 1 ? r->slots : 1), 41);

	for (;;) {
		struct bisect_choice ch;
		char hex[41];
		int64_t t0 = now_ms(), choose_ms;
		int npicks;

		/* with one slot exactly bisect_choose */
		npicks = bisect_choose_k(&dag, &st, r->slots, &ch, picks);
		choose_ms = now_ms() - t0;
		if (ch.outcome == BISECT_NO_TESTABLE) {
			bisect_choice_release(&ch);
			ret = fail(r, "no testable commit found: do the paths exist in the range?");
			break;
		}
		if (ch.outcome == BISECT_SKIPPED_ONLY) {
			char (*cands)[41] = xcalloc(ch.nr_candidates, 41);
			char *msg;

			printf("There are only 'skip'ped commits left to test.\n"
			       "The first bad commit could be any of:\n");
			for (int i = 0; i < ch.nr_candidates; i++) {
				oid_to_hex41(dag.commits[ch.candidates[i]].oid, cands[i]);
				printf("%s\n", cands[i]);
			}
			printf("We cannot bisect more!\n");
			msg = xstrfmt("only skipped commits left: %d possible first bad commits", ch.nr_candidates);
			if (db_bisection_set_candidates(r->lab->db, r->b->id, cands, (size_t)ch.nr_candidates) == 0 &&
			    db_bisection_set_state(r->lab->db, r->b->id, "done", "skipped-only", NULL, msg) == 0)
				ret = EXIT_UNDECIDED;
			free(msg);
			free(cands);
			bisect_choice_release(&ch);
			break;
		}
		oid_to_hex41(dag.commits[ch.commit].oid, hex);
		if (ch.outcome == BISECT_FOUND) {
			char *msg = r->perf ? NULL : xstrfmt("first bad commit %.12s", hex);
			int confirmed = 1;
			bisect_choice_release(&ch);
			if (r->perf) {
				print_first_bad(r, hex);
				msg = confirm_and_report(r, hex, &confirmed);
				if (confirmed)	/* issue 17: does the regression go away without it? */
					revert_check_bisection(&(struct revert_env){ .lab = r->lab, .repo = r->repo,
						.wt = r->wt, .repo_id = r->b->repo_id, .bisection_id = r->b->id,
						.recipe = &r->recipe, .jobs = r->jobs, .good = r->b->goods[0],
						.bad = r->b->bad, .culprit = hex,
						.perf = r->perf });
			}
			if (!confirmed) {
				/* the commit stays recorded as the suspect, never as the culprit */
				if (db_bisection_set_state(r->lab->db, r->b->id, "done", "unconfirmed", hex, msg) == 0) {
					printf("bisection %lld: unconfirmed, no culprit named: %s\n", (long long)r->b->id,
					       msg);
					ret = EXIT_UNCONFIRMED;
				}
			} else if (db_bisection_set_state(r->lab->db, r->b->id, "done", "culprit", hex, msg) == 0) {
				if (!r->perf)
					print_first_bad(r, hex);
				ret = EXIT_OK;
			}
			free(msg);
			break;
		}
		if (r->slots > 1) {
			struct strbuf line = STRBUF_INIT;
			int ignored_any = 0, *ignored = xmalloc((size_t)npicks * sizeof(int));
			enum bisect_mark *marks = xmalloc((size_t)npicks * sizeof(*marks));

			bisect_choice_release(&ch);
			round++;
			printf("Bisecting: %d revision%s left to test after this round (roughly %d round%s)\n",
			       ch.remaining, ch.remaining == 1 ? "" : "s", ch.steps, ch.steps == 1 ? "" : "s");
			print_progress(r, round - 1, ch.steps);
			for (int i = 0; i < npicks; i++) {
				oid_to_hex41(dag.commits[picks[i]].oid, hexes[i]);
				strbuf_addf(&line, "%s%.12s", i ? ", " : "", hexes[i]);
			}
			printf("round %d: testing %s%s\n", round, line.buf, npicks > 1 ? " at once" : "");
			strbuf_release(&line);
			for (int i = 0; i < npicks; i++)
				print_commit_line(r, hexes[i]);
			t0 = now_ms();
			run_round(r, hexes, npicks, round, ch.all, choose_ms, res);
			r->step_ms_sum += now_ms() - t0;
			r->steps_timed++;
			nr_tested += npicks;
			for (int i = 0; i < npicks; i++)
				marks[i] = res[i] == STEP_GOOD ? BISECT_GOOD : res[i] == STEP_BAD ? BISECT_BAD : BISECT_SKIP;
			/* a slot that could not finish: the others count, that one is
			 * tested again on resume */
			{
				int n = 0, abort_any = 0;
				for (int i = 0; i < npicks; i++) {
					if (res[i] == STEP_ABORT) {
						abort_any = 1;
						continue;
					}
					picks[n] = picks[i];
					marks[n] = marks[i];
					memcpy(hexes[n], hexes[i], 41);
					n++;
				}
				if (bisect_mark_round(&dag, &st, picks, marks, n, ignored) > 0)
					ignored_any = 1;
				for (int i = 0; ignored_any && i < n; i++)
					if (ignored[i])
						warning("round %d: %.12s tested good but descends from a commit of the "
							"same round that tested bad; the first bad wins", round, hexes[i]);
				free(ignored);
				free(marks);
				if (abort_any) {
					ret = stop(r, r->why ? r->why : "a slot of the round could not finish");
					break;
				}
			}
			continue;
		}
		printf("Bisecting: %d revision%s left to test after this (roughly %d step%s)\n",
		       ch.remaining, ch.remaining == 1 ? "" : "s", ch.steps, ch.steps == 1 ? "" : "s");
		print_progress(r, nr_tested, ch.steps);
		print_commit_line(r, hex);
		t0 = now_ms();
		res[0] = run_step(r, hex, "bisect", ch.all, choose_ms);
		r->step_ms_sum += now_ms() - t0;
		r->steps_timed++;
		nr_tested++;
		bisect_choice_release(&ch);
		if (res[0] == STEP_ABORT) {
			ret = stop(r, r->why ? r->why : "the step could not finish");
			break;
		}
		{
			unsigned char oid[20];
			hex_to_oid(hex, oid);
			bisect_mark(&st, bisect_dag_find(&dag, oid),
				    res[0] == STEP_GOOD ? BISECT_GOOD : res[0] == STEP_BAD ? BISECT_BAD : BISECT_SKIP);
		}
	}
	bisect_state_release(&st);
out:
	bisect_dag_release(&dag);
out_nodag:
	steps_release(steps, nr_steps);
	free(all_goods);
	free(picks);
	free(res);
	free(hexes);
	return ret;
}

/* Run (or continue) bisection b to its end.  dag/info: the range as
 * start loaded it (taken over), or NULL. */
static int run_bisection(struct lab *lab, struct bisection *b, struct bisect_dag *dag, struct range_info *info)
{
	struct runner r = { .lab = lab, .b = b, .dag = dag, .info = info };
	struct step *steps = NULL;
	size_t nr_steps = 0;
	char *lock_name, *wt_dir;
	int lock_fd, ret = EXIT_FAIL;

	r.start_ms = now_ms();
	r.parent = getpid();
	if (db_bisection_slots(lab->db, b->id, &r.slots) < 0)
		return EXIT_FAIL;
	if (b->build && kbuild_recipe_from_text(&r.recipe, b->config ? b->config : "") < 0)
		return EXIT_FAIL;
	lock_name = xstrfmt("bisect-%lld", (long long)b->id);
	lock_fd = lab_lock(lab, lock_name);
	free(lock_name);
	if (lock_fd < 0) {
		kbuild_recipe_release(&r.recipe);
		return EXIT_FAIL;
	}
	/* A worktree of the repository no other klab process uses. */
	{
		int wfd = kernel_worktree_lock(lab, b->repo_id, &wt_dir);
		if (wfd < 0) {
			close(lock_fd);
			return EXIT_FAIL;
		}
		/* keep wfd open for the process lifetime of this run */
		r.log_dir = xstrfmt("%s/logs/bisect-%lld", lab->state_dir, (long long)b->id);
		if (mkdir_p(r.log_dir, 0700) < 0 || gitrepo_open(&r.repo, b->repo_path) < 0 ||
		    worktree_open(&r.wt, r.repo, wt_dir) < 0) {
			free(wt_dir);
			close(wfd);
			goto out;
		}
		free(wt_dir);
		memcpy(r.bad, b->bad, 41);
		if (db_bisection_set_state(lab->db, b->id, "running", NULL, NULL, NULL) < 0 ||
		    db_steps_load(lab->db, b->id, &steps, &nr_steps) < 0) {
			close(wfd);
			goto out;
		}
		{
			size_t done = 0;
			for (size_t i = 0; i < nr_steps; i++) {
				if (strcmp(steps[i].status, "done"))
					continue;
				done++;
				if (!strcmp(steps[i].phase, "merge-base"))
					apply_result(&r, steps[i].hash, verdict_of(&steps[i]));
			}
			if (nr_steps)
				printf("bisection %lld: resuming after %zu recorded step%s\n", (long long)b->id,
				       done, done == 1 ? "" : "s");
		}
		if (!strcmp(b->kind, "job")) {
			static struct perf perf;
			int rc;
			if (perf_init(&perf, lab, b->job_path, b->job_text, b->kpi) < 0) {
				close(wfd);
				goto out;
			}
			r.perf = &perf;
			print_line("job %s: %s %s, KPI %s (%s is better)", b->job_path, perf.job.suite, perf.job.testcase,
				   perf.job.kpi, perf.job.direction > 0 ? "higher" : "lower");
			{
				int64_t t0 = now_ms();
				rc = reference_phase(&r);
				r.ref_ms = now_ms() - t0;
			}
			if (rc) {
				ret = EXIT_FAIL;
				perf_release(&perf);
				r.perf = NULL;
				close(wfd);
				goto out;
			}
		}
		ret = merge_base_phase(&r);
		if (ret == 0)
			ret = bisect_loop(&r);
		if (r.perf)
			perf_release(r.perf);
		close(wfd);
	}
out:
	steps_release(steps, nr_steps);
	worktree_free(r.wt);
	gitrepo_free(r.repo);
	free(r.log_dir);
	free(r.goods);
	free(r.skips);
	kbuild_recipe_release(&r.recipe);
	free(r.why);
	close(lock_fd);
	return ret;
}

/* Mail and webhook notices of a bisection that ended (culprit, skipped
 * only, not reproduced, failed); a stopped one goes on later.  Delivery
 * problems are recorded and retried, never this command's failure. */
static void notify_if_finished(struct lab *lab, int64_t id)
{
	struct bisection fin;

	if (db_bisection_load(lab->db, id, &fin) < 0)
		return;
	if (!strcmp(fin.state, "done") || !strcmp(fin.state, "failed"))
		notify_bisection(lab, id);
	bisection_release(&fin);
}

/* ---- start ------------------------------------------------------------ */

/* Create bisection b with its slots and its queue row. */
static int queue_bisection(struct lab *lab, struct bisection *b, int slots, int revert_check, int64_t *queue_id)
{
	char *cwd = getcwd(NULL, 0);
	int ret = -1;

	if (!cwd)
		cwd = xstrdup("/");
	/* one transaction: never a bisection without its queue row */
	if (db_begin(lab->db) < 0)
		goto out;
	if (db_bisection_create(lab->db, b) < 0 || (slots > 1 && db_bisection_set_slots(lab->db, b->id, slots) < 0) ||
	    (!revert_check && db_bisection_set_revert_check(lab->db, b->id, 0) < 0) ||
	    db_queue_add(lab->db, "bisect", &cwd, 1, b->id, user_name(), queue_id) < 0) {
		db_rollback(lab->db);
		goto out;
	}
	ret = db_commit(lab->db);
out:
	free(cwd);
	return ret;
}

int bisect_queue(struct lab *lab, struct bisection *b, int64_t *queue_id)
{
	return queue_bisection(lab, b, 1, 1, queue_id);
}

/* submit: create the bisection (everything checked as for start) and
 * queue it for a worker instead of running it. */
static int start(int argc, char **argv, const struct global_opts *g, int submit)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "good", required_argument, NULL, 'g' },
		{ "bad", required_argument, NULL, 'b' },
		{ "first-parent", no_argument, NULL, 'f' },
		{ "paths", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "no-run", no_argument, NULL, 'n' },
		{ "build", no_argument, NULL, 'B' },
		{ "job", required_argument, NULL, 'J' },
		{ "kpi", required_argument, NULL, 'K' },
		{ "slots", required_argument, NULL, 'S' },
		{ "no-revert-check", no_argument, NULL, 'R' },
		{ "config", required_argument, NULL, RECIPE_OPT_CONFIG },
		{ "fragment", required_argument, NULL, RECIPE_OPT_FRAGMENT },
		{ "config-option", required_argument, NULL, RECIPE_OPT_OPTION },
		{ "no-default-fragments", no_argument, NULL, RECIPE_OPT_NO_DEFAULTS },
		{ "allow-config-drift", no_argument, NULL, RECIPE_OPT_DRIFT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct recipe_opts ro = { 0 };
	struct kbuild_recipe recipe = { 0 };
	struct strbuf recipe_text = STRBUF_INIT;
	struct bisect_dag dag;
	struct range_info info = { 0 };
	int build = 0, recipe_given = 0, dag_loaded = 0;
	const char *repo_arg = NULL, *bad_arg = NULL, *job_arg = NULL, *kpi_arg = NULL;
	struct job job = { 0 };
	int job_parsed = 0;
	char *job_text = NULL, *job_abs = NULL;
	const char **good_args = NULL, **path_args = NULL;
	size_t nr_good = 0, alloc_good = 0, nr_paths = 0, alloc_paths = 0;
	int no_run = 0, first_parent = 0, c, ret = EXIT_FAIL;
	int revert_check = 1;	/* --no-revert-check */
	unsigned long timeout = 0, slots = 1;
	struct gitrepo *repo = NULL;
	struct bisection b;
	struct lab lab;
	char *cmd_path = NULL, *abs_repo = NULL;
	int lab_opened = 0;

	memset(&b, 0, sizeof(b));
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			repo_arg = optarg;
			break;
		case 'g':
			ALLOC_GROW(good_args, nr_good + 1, alloc_good);
			good_args[nr_good++] = optarg;
			break;
		case 'b':
			if (bad_arg) {
				ret = usage_error("only one --bad revision");
				goto out;
			}
			bad_arg = optarg;
			break;
		case 'f':
			first_parent = 1;
			break;
		case 'p':
			ALLOC_GROW(path_args, nr_paths + 1, alloc_paths);
			path_args[nr_paths++] = optarg;
			/* --paths a b c: take following words up to an option */
			while (optind < argc && argv[optind][0] != '-') {
				ALLOC_GROW(path_args, nr_paths + 1, alloc_paths);
				path_args[nr_paths++] = argv[optind++];
			}
			break;
		case 't':
			if (parse_uint(optarg, 30 * 86400, &timeout) < 0 || !timeout) {
				ret = usage_error("--timeout takes a number of seconds (1 to 2592000)");
				goto out;
			}
			break;
		case 'n':
			no_run = 1;
			break;
		case 'R':
			revert_check = 0;
			break;
		case 'B':
			build = 1;
			break;
		case 'J':
			job_arg = optarg;
			break;
		case 'K':
			kpi_arg = optarg;
			break;
		case 'S':
			/* each slot needs a worktree copy (or a guest) of its own */
			if (parse_uint(optarg, BISECT_MAX_SLOTS, &slots) < 0 || !slots) {
				char msg[96];
				snprintf(msg, sizeof(msg), "--slots takes 1 to %d (commits tested at once)", BISECT_MAX_SLOTS);
				ret = usage_error(msg);
				goto out;
			}
			break;
		case RECIPE_OPT_CONFIG:
		case RECIPE_OPT_FRAGMENT:
		case RECIPE_OPT_OPTION:
		case RECIPE_OPT_NO_DEFAULTS:
		case RECIPE_OPT_DRIFT:
			recipe_opts_add(&ro, c, optarg);
			recipe_given = 1;
			break;
		case 'h':
			print_usage(bisect_usage, 0);
			ret = EXIT_OK;
			goto out;
		default:
			ret = usage_error(NULL);
			goto out;
		}
	}
	if (!repo_arg || !bad_arg || !nr_good) {
		ret = usage_error("start needs --repo, --bad and at least one --good");
		goto out;
	}
	/* what is stored as a name or path (or a KPI) is one line of text */
	if (check_no_controls("--repo", repo_arg) < 0 || check_no_controls("--job", job_arg) < 0 ||
	    check_no_controls("--kpi", kpi_arg) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	for (size_t i = 0; i < nr_paths; i++)
		if (check_no_controls("--paths", path_args[i]) < 0) {
			ret = EXIT_USAGE;
			goto out;
		}
	if (job_arg) {
		/* A job bisection builds every commit and decides by itself. */
		if (optind < argc) {
			ret = usage_error("start takes either --job or a test command, not both");
			goto out;
		}
		if (job_parse_file(&job, job_arg) < 0)
			goto out;
		job_parsed = 1;
		if (kpi_arg) {
			struct strbuf why = STRBUF_INIT;
			if (check_kpi(&job, kpi_arg, &why) < 0) {
				error("--kpi '%s': expected %s", kpi_arg, why.buf);
				strbuf_release(&why);
				ret = EXIT_USAGE;
				goto out;
			}
		}
		if (read_file(job_arg, 64 << 10, &job_text, NULL) < 0 || !(job_abs = real_path(job_arg)))
			goto out;
		build = 1;
		for (size_t i = 0; i < job.nr_fragments; i++)
			recipe_opts_add(&ro, RECIPE_OPT_FRAGMENT, job.fragments[i]);
	} else if (kpi_arg) {
		ret = usage_error("--kpi needs --job");
		goto out;
	} else if (optind >= argc) {
		ret = usage_error("start needs a test command after '--' (or --job FILE)");
		goto out;
	}
	if (job_parsed && slots > 1) {
		/* the slots' guests run at once, each pinned to CPUs of its own */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (cpus > 0 && (long)slots * (long)job.guest.vcpus > cpus)
			warning("--slots %lu runs %lu guests of %u vCPU%s at once; this host has %ld CPU%s, so a slot "
				"whose guest does not fit stops the bisection (use a job with fewer vCPUs, or fewer slots)",
				slots, slots, job.guest.vcpus, job.guest.vcpus == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s");
	}
	if (recipe_given && !build) {
		ret = usage_error("config options (--config, --fragment, ...) need --build");
		goto out;
	}
	if (build) {
		if (recipe_from_opts(&ro, &recipe) < 0)
			goto out;
		kbuild_recipe_to_text(&recipe, &recipe_text);
	}
	if (!job_arg && !find_executable(argv[optind], &cmd_path)) {
		error("test command '%s' not found%s", argv[optind],
		      strchr(argv[optind], '/') ? " or not executable" : " in $PATH");
		goto out;
	}
	for (size_t i = 0; i < nr_paths; i++) {
		const char *p = path_args[i];
		if (!*p || p[0] == '/' || strstr(p, "..")) {
			error("--paths '%s': give a path relative to the repository top", p);
			goto out;
		}
	}

	/* Everything is checked before the database sees anything. */
	if (open_lab(g, &lab) < 0)
		goto out;
	lab_opened = 1;
	if (job_parsed) {
		/* the guests' side, as klab run checks it (the kernels come later) */
		struct guest_env_opts geo = { 0 };
		if (guest_env_check(&lab, &job, &geo) < 0)
			goto out;
	}
	if (gitrepo_open(&repo, repo_arg) < 0)
		goto out;
	abs_repo = real_path(gitrepo_path(repo));
	if (!abs_repo)
		goto out;
	if (gitrepo_resolve(repo, bad_arg, b.bad) < 0)
		goto out;
	b.goods = xcalloc(nr_good, 41);
	for (size_t i = 0; i < nr_good; i++) {
		if (gitrepo_resolve(repo, good_args[i], b.goods[b.nr_goods]) < 0)
			goto out;
		if (!strcmp(b.goods[b.nr_goods], b.bad)) {
			error("good revision '%s' and bad revision '%s' are the same commit %.12s",
			      good_args[i], bad_arg, b.bad);
			goto out;
		}
		if (!has_hash(b.goods, b.nr_goods, b.goods[b.nr_goods]))
			b.nr_goods++;
	}
	/* One walk gives the range, and tells whether bad is in it. */
	if (gitrepo_load_dag_info(repo, b.bad, b.goods, b.nr_goods, first_parent, path_args, nr_paths,
				  &dag, &info) < 0)
		goto out;
	dag_loaded = 1;
	if (!info.bad_is_candidate) {
		for (size_t i = 0; i < b.nr_goods; i++) {
			if (gitrepo_is_ancestor(repo, b.bad, b.goods[i]) == 1) {
				error("bad revision '%s' is an ancestor of good revision %.12s: "
				      "did you swap --good and --bad?", bad_arg, b.goods[i]);
				goto out;
			}
		}
		error("no candidate commits between the good and bad revisions");
		goto out;
	}
	if (nr_paths) {
		size_t touching = 0;
		for (size_t i = 0; i < dag.nr; i++)
			if (!(dag.commits[i].flags & BISECT_TREESAME))
				touching++;
		if (!touching) {
			error("no commit between the good and bad revisions touches the given paths");
			goto out;
		}
	}

	b.first_parent = first_parent;
	b.build = build;
	b.config = build ? recipe_text.buf : NULL;
	b.timeout_ms = (int64_t)timeout * 1000;
	b.paths = (char **)path_args;
	b.nr_paths = nr_paths;
	b.argv = argv + optind;
	b.argc = (size_t)(argc - optind);
	b.job_path = job_abs;
	b.job_text = job_text;
	b.kpi = job_parsed ? (char *)(kpi_arg ? kpi_arg : job.kpi) : NULL;
	if (submit) {
		int64_t qid;
		if (db_repo_id(lab.db, abs_repo, &b.repo_id) < 0 || queue_bisection(&lab, &b, (int)slots, revert_check, &qid) < 0)
			goto out;
		printf("job %lld queued: bisection %lld of %s, bad %.12s, %zu good", (long long)qid,
		       (long long)b.id, abs_repo, b.bad, b.nr_goods);
		if (slots > 1)
			printf(", %lu slots", slots);
		printf("\n");
		ret = EXIT_OK;
		goto out;
	}
	if (db_repo_id(lab.db, abs_repo, &b.repo_id) < 0)
		goto out;
	if (slots > 1) {
		/* the row and its slots together: a resume never sees one slot */
		if (db_begin(lab.db) < 0)
			goto out;
		if (db_bisection_create(lab.db, &b) < 0 || db_bisection_set_slots(lab.db, b.id, (int)slots) < 0) {
			db_rollback(lab.db);
			goto out;
		}
		if (db_commit(lab.db) < 0)
			goto out;
	} else if (db_bisection_create(lab.db, &b) < 0) {
		goto out;
	}
	if (!revert_check && db_bisection_set_revert_check(lab.db, b.id, 0) < 0)
		goto out;
	printf("bisection %lld: %s, bad %.12s, %zu good", (long long)b.id, abs_repo, b.bad, b.nr_goods);
	if (slots > 1)
		printf(", %lu slots", slots);
	printf("\n");
	if (no_run) {
		printf("created; run it with 'klab bisect resume %lld'\n", (long long)b.id);
		ret = EXIT_OK;
		goto out;
	}
	{
		struct bisection loaded;
		int64_t id = b.id;
		if (db_bisection_load(lab.db, id, &loaded) < 0)
			goto out;
		ret = run_bisection(&lab, &loaded, &dag, &info);
		bisection_release(&loaded);
		notify_if_finished(&lab, id);
	}
out:
	if (dag_loaded)
		bisect_dag_release(&dag);
	free(info.good_below);
	recipe_opts_release(&ro);
	kbuild_recipe_release(&recipe);
	strbuf_release(&recipe_text);
	free(b.goods);
	free(good_args);
	free(path_args);
	free(cmd_path);
	free(abs_repo);
	free(job_text);
	free(job_abs);
	if (job_parsed)
		job_release(&job);
	gitrepo_free(repo);
	if (lab_opened)
		lab_close(&lab);
	return ret;
}

/* ---- resume, list, show, log --------------------------------------------- */

static int with_bisection(int argc, char **argv, const struct global_opts *g, const char *what,
			  struct lab *lab, struct bisection *b)
{
	int64_t id = 0;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_usage(bisect_usage, 0);
		return 1;
	}
	if (argc != 2) {
		error("usage: klab bisect %s ID", what);
		return -1;
	}
	if (parse_id(argv[1], &id) < 0 || open_lab(g, lab) < 0)
		return -1;
	if (db_bisection_load(lab->db, id, b) < 0) {
		lab_close(lab);
		return -1;
	}
	return 0;
}

/* "running" in the database but nobody holds the lock: the process died. */
static const char *live_state(struct lab *lab, const struct bisection *b)
{
	if (!strcmp(b->state, "running")) {
		char *name = xstrfmt("bisect-%lld", (long long)b->id);
		int fd = lab_try_lock(lab, name);

		free(name);
		if (fd >= 0) {
			close(fd);
			return "interrupted";
		}
	}
	return b->state;
}

static int count_done(struct lab *lab, int64_t id, int *done)
{
	struct step *steps;
	size_t nr;

	*done = 0;
	if (db_steps_load(lab->db, id, &steps, &nr) < 0)
		return -1;
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(steps[i].status, "done"))
			(*done)++;
	steps_release(steps, nr);
	return 0;
}

static int cmd_resume(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	int rc = with_bisection(argc, argv, g, "resume", &lab, &b), ret;

	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_FAIL;
	if (!strcmp(b.state, "done")) {
		print_line("bisection %lld is already done: %s", (long long)b.id, b.message ? b.message : "");
		ret = !strcmp(b.result, "culprit") ? EXIT_OK : EXIT_UNDECIDED;
		if (!strcmp(b.result, "unconfirmed"))
			ret = EXIT_UNCONFIRMED;
	} else if (!strcmp(b.state, "failed")) {
		ret = error("bisection %lld failed: %s", (long long)b.id, b.message ? b.message : "");
		ret = EXIT_FAIL;
	} else {
		ret = run_bisection(&lab, &b, NULL, NULL);
		notify_if_finished(&lab, b.id);
	}
	bisection_release(&b);
	lab_close(&lab);
	return ret;
}

static int cmd_list(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	int64_t *ids;
	size_t nr;

	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			print_usage(bisect_usage, 0);
			return EXIT_OK;
		}
		return usage_error("list takes no arguments");
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (db_bisection_ids(lab.db, &ids, &nr) < 0) {
		lab_close(&lab);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < nr; i++) {
		struct bisection b;
		int done;

		if (db_bisection_load(lab.db, ids[i], &b) < 0 || count_done(&lab, ids[i], &done) < 0)
			continue;
		printf("%lld\t%s\t%s\t%.12s\t%d steps\t%s\n", (long long)b.id, live_state(&lab, &b),
		       b.result ? b.result : "-", b.culprit ? b.culprit : "-", done, b.repo_path);
		bisection_release(&b);
	}
	free(ids);
	lab_close(&lab);
	return EXIT_OK;
}

static void print_argv(FILE *f, char **argv, size_t argc)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < argc; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		strbuf_add_shell_word(&sb, argv[i]);
	}
	fputs(sb.buf, f);
	strbuf_release(&sb);
}

/* A multisection's slots and rounds: which steps ran at the same time. */
static void print_rounds(struct lab *lab, const struct bisection *b, const struct step *steps, size_t nr)
{
	int64_t *ids = NULL;
	int *rounds = NULL, slots = 1, last = 0;
	size_t nr_rounds = 0;

	if (db_bisection_slots(lab->db, b->id, &slots) < 0 ||
	    db_step_rounds(lab->db, b->id, &ids, &rounds, &nr_rounds) < 0)
		return;
	if (slots > 1)
		printf("slots:      %d\n", slots);
	for (size_t i = 0; i < nr_rounds; i++)
		if (rounds[i] > last)
			last = rounds[i];
	if (nr_rounds)
		printf("rounds:     %d\n", last);
	/* "  round 2: step 4 good, step 5 bad" */
	for (int r = 1; r <= last; r++) {
		int any = 0;
		for (size_t i = 0; i < nr_rounds; i++) {
			if (rounds[i] != r)
				continue;
			for (size_t j = 0; j < nr; j++) {
				if (steps[j].id != ids[i])
					continue;
				if (!any)
					printf("  round %d:", r);
				printf("%s step %d %s", any ? "," : "", steps[j].seq,
				       steps[j].verdict ? steps[j].verdict : steps[j].status);
				any = 1;
			}
		}
		if (any)
			printf("\n");
	}
	free(ids);
	free(rounds);
}

/* Subjects come from repositories: print them without control bytes. */
static int cmd_show(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0;
	int done = 0;
	int rc = with_bisection(argc, argv, g, "show", &lab, &b);

	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_FAIL;
	if (db_steps_load(lab.db, b.id, &steps, &nr) < 0) {
		bisection_release(&b);
		lab_close(&lab);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(steps[i].status, "done"))
			done++;
	printf("bisection:  %lld (%s)\n", (long long)b.id, b.kind);
	print_line("repository: %s", b.repo_path);
	printf("state:      %s\n", live_state(&lab, &b));
	printf("result:     %s\n", b.result ? b.result : "-");
	if (b.message) {
		printf("message:    ");
		print_clean(stdout, b.message);
		printf("\n");
	}
	printf("bad:        %s\n", b.bad);
	for (size_t i = 0; i < b.nr_goods; i++)
		printf("good:       %s\n", b.goods[i]);
	if (b.first_parent)
		printf("first-parent: yes\n");
	for (size_t i = 0; i < b.nr_paths; i++)
		print_line("path:       %s", b.paths[i]);
	if (b.job_path) {
		printf("job:        ");
		print_clean(stdout, b.job_path);
		printf("\nkpi:        ");
		print_clean(stdout, b.kpi ? b.kpi : "");
		printf("\n");
	} else {
		printf("command:    ");
		print_argv(stdout, b.argv, b.argc);
		printf("\n");
	}
	if (b.timeout_ms)
		printf("timeout:    %llds\n", (long long)(b.timeout_ms / 1000));
	if (b.build) {
		const char *p = b.config ? b.config : "";
		printf("build:      yes\n");
		while (*p) {
			const char *eol = strchrnul(p, '\n');
			printf("  recipe:   %.*s\n", (int)(eol - p), p);
			p = *eol ? eol + 1 : eol;
		}
	}
	printf("steps:      %d\n", done);
	print_rounds(&lab, &b, steps, nr);
	if (b.culprit) {
		char *subj = db_commit_subject(lab.db, b.repo_id, b.culprit);
		int unconfirmed = b.result && !strcmp(b.result, "unconfirmed");

		/* a failed confirmation names a suspect, never a culprit */
		printf("%s %s ", unconfirmed ? "suspect:   " : "culprit:   ", b.culprit);
		print_clean(stdout, subj ? subj : "");
		printf("%s\n", unconfirmed ? " (NOT confirmed: see the confirm steps below)" : "");
		free(subj);
	}
	for (size_t i = 0; i < b.nr_candidates; i++)
		printf("candidate:  %s\n", b.candidates[i]);
	if (b.job_path)
		revert_check_print(&lab, b.id);
	if (nr) {
		printf("\n%4s  %-12s  %-10s  %-7s  %-28s  %8s  %s\n", "step", "commit", "phase", "verdict",
		       "reason", "test", "subject");
		for (size_t i = 0; i < nr; i++) {
			char dur[32];
			struct step *s = &steps[i];
			printf("%4d  %.12s  %-10s  %-7s  %-28.28s  %8s  ", s->seq, s->hash, s->phase,
			       s->verdict ? s->verdict : s->status, s->reason ? s->reason : "",
			       fmt_duration(s->test_ms, dur, sizeof(dur)));
			print_clean(stdout, s->subject ? s->subject : "");
			printf("\n");
		}
		/* the evidence of each statistical verdict */
		for (size_t i = 0; b.job_path && i < nr; i++) {
			char **ev = NULL;
			size_t nev = 0;
			double *vals = NULL;
			size_t nv = 0;
			if (db_step_verdicts(lab.db, steps[i].id, &ev, &nev) < 0)
				continue;
			db_step_metric_values(lab.db, steps[i].id, b.kpi ? b.kpi : "", &vals, &nv);
			if (nev || nv) {
				printf("\nstep %d (%s %.12s):", steps[i].seq, steps[i].phase, steps[i].hash);
				for (size_t k = 0; k < nv; k++)
					printf(" %g", vals[k]);
				printf("\n");
			}
			for (size_t k = 0; k < nev; k++) {
				printf("  ");
				for (const char *p = ev[k]; *p; p++) {
					putchar(*p == '\n' && p[1] ? '\n' : (unsigned char)*p >= 32 || *p == '\n' ? *p : '?');
					if (*p == '\n' && p[1])
						printf("  ");
				}
				free(ev[k]);
			}
			free(ev);
			free(vals);
		}
		printf("\nlogs: %s/logs/bisect-%lld/\n", lab.state_dir, (long long)b.id);
	}
	steps_release(steps, nr);
	bisection_release(&b);
	lab_close(&lab);
	return EXIT_OK;
}

static int cmd_log(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0;
	int rc = with_bisection(argc, argv, g, "log", &lab, &b);

	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_FAIL;
	if (db_steps_load(lab.db, b.id, &steps, &nr) < 0) {
		bisection_release(&b);
		lab_close(&lab);
		return EXIT_FAIL;
	}
	print_line("# klab bisection %lld of %s", (long long)b.id, b.repo_path);
	printf("# test command: ");
	print_argv(stdout, b.argv, b.argc);
	printf("\ngit bisect start%s", b.first_parent ? " --first-parent" : "");
	printf(" %s", b.bad);
	for (size_t i = 0; i < b.nr_goods; i++)
		printf(" %s", b.goods[i]);
	if (b.nr_paths) {
		printf(" --");
		for (size_t i = 0; i < b.nr_paths; i++) {
			printf(" ");
			print_argv(stdout, &b.paths[i], 1);
		}
	}
	printf("\n");
	for (size_t i = 0; i < nr; i++) {
		struct step *s = &steps[i];
		printf("# step %d (%s): [%s] ", s->seq, s->phase, s->hash);
		print_clean(stdout, s->subject ? s->subject : "");
		printf("\n");
		if (!strcmp(s->phase, "revert")) {
			/* klab's own commit: git bisect cannot replay it */
			print_line("# revert check: %s: %s", s->verdict ? s->verdict : s->status, s->reason ? s->reason : "");
		} else if (!strcmp(s->status, "done")) {
			print_line("# %s: %s; log %s", s->verdict, s->reason ? s->reason : "", s->log_path ? s->log_path : "");
			printf("git bisect %s %s\n", s->verdict, s->hash);
		} else {
			print_line("# %s: %s", s->status, s->reason ? s->reason : "not finished");
		}
	}
	if (b.culprit)
		printf("# first bad commit: [%s]\n", b.culprit);
	for (size_t i = 0; i < b.nr_candidates; i++)
		printf("# possible first bad commit: [%s]\n", b.candidates[i]);
	steps_release(steps, nr);
	bisection_release(&b);
	lab_close(&lab);
	return EXIT_OK;
}

static int cmd_start(int argc, char **argv, const struct global_opts *g)
{
	return start(argc, argv, g, 0);
}

int bisect_submit(int argc, char **argv, const struct global_opts *g)
{
	return start(argc, argv, g, 1);
}

int cmd_bisect(int argc, char **argv, const struct global_opts *g)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **, const struct global_opts *);
	} subs[] = {
		{ "start", cmd_start },
		{ "resume", cmd_resume },
		{ "list", cmd_list },
		{ "show", cmd_show },
		{ "log", cmd_log },
	};

	if (argc < 2)
		return usage_error("bisect needs a subcommand");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(bisect_usage, 0);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1, g);
	error("'%s' is not a bisect subcommand", argv[1]);
	return usage_error(NULL);
}
