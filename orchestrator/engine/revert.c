/* The revert check: the bad end without the culprit, made by klab in its
 * own worktree (gitrepo.c's worktree_revert), its kernel and runs asked of
 * the bisection's engine (revert_engine: the job tester's kernels and
 * references) and decided by the revert rule (revert-rule.c). */
#include "engine/revert.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "kernel/kernel.h"
#include "lab/lab.h"
#include "core/stats.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(const struct revert_env *env, const struct revert_check *rc)
{
	struct strbuf sb = STRBUF_INIT;

	revert_check_line(&sb, rc);
	if (env->half)
		print_line("revert check, half %d: %s", env->half, sb.buf + strlen("revert check: "));
	else
		print_line("%s", sb.buf);
	strbuf_release(&sb);
}

/* The ends' runs trend (the fresh reference runs between the revert's
 * runs show the host drifting that the bisection had not seen): from
 * here on as under drift, said and stored as the bisection's.  -1 after
 * error(). */
static int test_drift(const struct revert_engine *e)
{
	struct verdict_runs ends[2] = { e->ops->end_runs(e->data, 0), e->ops->end_runs(e->data, 1) };
	struct verdict_trend tr;

	if (verdict_trend(&tr, e->pol, ends, 2) < 0)
		return -1;
	if (tr.drift)
		e->ops->drift_seen(e->data, tr.percent, tr.z,
				   "the revert from here on one run at a time, each after a run of the good end, "
				   "judged against the ends' latest runs");
	return 0;
}

/* How many of an end's runs came after time t0. */
static size_t runs_after(const double *t, size_t n, double t0)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += t[i] > t0;
	return k;
}

/* The revert's measurement under its 'revert' step (measure()). */
struct revert_runs {
	const struct revert_env *env;
	const struct revert_engine *e;
	const char *kernel;
	int64_t build_id;
	struct step s;
	char label[64];
	double *vals, *t;
	size_t n, want;
	unsigned ends;		/* ends to run again before deciding again (revert_fresh_ends) */
	int stuck;		/* those runs failed: decide without them */
	int told, told_drift;
	double t0;		/* the check begins after the ends' runs so far */
	double t_drift;		/* the revert's last run when the check saw the drift (revert_drift_wait) */
	struct verdict_local loc;
	struct verdict_runs g, b;	/* the ends' runs it was judged against, as measured */
	struct verdict v;
};

/* The ends' runs before the revert's next ones, and how many of the
 * revert's it then needs: the ends beside the revert after an undecided
 * "does not restore" (its runs as they are), under drift the good end
 * before each run and the bad end when it has none among the last
 * side_age, else a fresh reference run (good and bad in turn) before
 * each extra run. */
static size_t ends_before(struct revert_runs *m)
{
	const struct revert_engine *e = m->e;
	size_t next = m->n ? m->n + 1 : m->want;

	if (m->ends) {
		size_t before = e->ops->end_runs(e->data, 0).n + e->ops->end_runs(e->data, 1).n;

		for (int k = 0; k < 2; k++)
			if (m->ends & (1u << k))
				e->ops->end_run(e->data, k, NULL);
		m->stuck = e->ops->end_runs(e->data, 0).n + e->ops->end_runs(e->data, 1).n == before;
		m->ends = 0;
		return m->n;
	}
	if (e->ops->drift(e->data)) {
		/* the good end right before each run (whether the revert is
		 * like good is the question: the trend estimated from a few
		 * runs, carried over several, made a full revert look short
		 * of good); its guest made ahead */
		if (e->ops->end_stale(e->data, 0, 1))
			e->ops->end_run(e->data, 0, m->kernel);
		if (e->ops->end_stale(e->data, 1, e->pol->side_age))
			e->ops->end_run(e->data, 1, m->kernel);
		return m->n + 1;
	}
	if (m->n)
		e->ops->end_run(e->data, -1, m->kernel);
	return next;
}

/* The rule on the runs so far: the pooled runs as they are, or under
 * drift the local ones (the revert is measured last, after the fresh
 * reference runs of its own extra runs, so the ends' trend is tested
 * again first).  revert_decide's 1 more runs, 0 decided, -1 error. */
static int judge(struct revert_runs *m, enum revert_outcome *o)
{
	const struct revert_engine *e = m->e;

	verdict_local_release(&m->loc);
	if (!e->ops->drift(e->data)) {
		if (test_drift(e) < 0)
			return -1;
		if (e->ops->drift(e->data))
			m->t_drift = m->t[m->n - 1];
	}
	m->g = e->ops->end_runs(e->data, 0);
	m->b = e->ops->end_runs(e->data, 1);
	if (e->ops->drift(e->data)) {
		struct verdict_runs C = { m->vals, m->t, m->n };

		if (verdict_local(&m->loc, e->pol, &m->g, &m->b, &C) < 0)
			return -1;
		/* the ends' latest runs, before the trend's adjustment */
		m->g.v += m->g.n - m->loc.ng;
		m->g.t += m->g.n - m->loc.ng;
		m->g.n = m->loc.ng;
		m->b.v += m->b.n - m->loc.nb;
		m->b.t += m->b.n - m->loc.nb;
		m->b.n = m->loc.nb;
		return revert_decide(&m->v, o, e->pol, m->loc.good, m->loc.ng, m->loc.bad, m->loc.nb, m->loc.cand,
				     m->loc.nc, e->direction);
	}
	return revert_decide(&m->v, o, e->pol, m->g.v, m->g.n, m->b.v, m->b.n, m->vals, m->n, e->direction);
}

/* Decided "does not restore" (or anything) from runs that may not say
 * it yet: 1 when more runs come first (a drift first seen during the
 * check: REVERT_DRIFT_RUNS revert runs taken the drift way; outside
 * drift: REVERT_FRESH_END_RUNS runs of each end beside the revert's), 0
 * when the outcome stands. */
static int wait_more(struct revert_runs *m, enum revert_outcome *o)
{
	const struct revert_engine *e = m->e;
	int drift = e->ops->drift(e->data);
	struct verdict_runs g = e->ops->end_runs(e->data, 0), b = e->ops->end_runs(e->data, 1);

	if (revert_drift_wait(*o, m->t_drift >= 0, runs_after(m->t, m->n, m->t_drift),
			      verdict_next_runs(e->pol, m->n, m->n + 1) != 0)) {
		if (!m->told_drift++)
			printf("  %s: before \"does not restore\", %d runs of the revert taken the drift way\n",
			       m->v.text, REVERT_DRIFT_RUNS);
		*o = REVERT_NONE;
		return 1;
	}
	m->ends = m->stuck ? 0 : revert_fresh_ends(*o, drift, runs_after(g.t, g.n, m->t0), runs_after(b.t, b.n, m->t0));
	if (!m->ends)
		return 0;
	if (!m->told++)
		printf("  %s: before \"does not restore\", %d runs of each end beside the revert's\n", m->v.text,
		       REVERT_FRESH_END_RUNS);
	*o = REVERT_NONE;
	return 1;
}

/* The outcome as measured into rc, the verdict stored, the step done. */
static int finish(struct revert_runs *m, struct revert_check *rc)
{
	struct strbuf sb = STRBUF_INIT;

	/* as measured (under drift the ends' runs the revert was judged
	 * against, before the trend's adjustment: the values a developer
	 * sees in the runs) */
	rc->runs = m->n;
	rc->median = stats_median(m->vals, m->n);
	rc->cv_percent = stats_cv_percent(m->vals, m->n);
	rc->good_median = stats_median(m->g.v, m->g.n);
	rc->bad_median = stats_median(m->b.v, m->b.n);
	rc->detail = xstrfmt("%s: %s", m->v.rule, m->v.text);
	verdict_format(&sb, &m->v);
	db_verdict_store(m->env->lab->db, m->s.id, m->v.rule, m->v.mwu_good.p_value, m->v.mwu_bad.p_value, NULL,
			 sb.buf);
	strbuf_release(&sb);
	m->s.verdict = m->v.kind == VERDICT_GOOD ? "good" : m->v.kind == VERDICT_BAD ? "bad" : "skip";
	m->s.reason = rc->detail;
	return db_step_finish(m->env->lab->db, &m->s);
}

/* Runs of the reverted kernel under a 'revert' step until the rules
 * decide.  Under drift (the bisection saw the host trend, or the ends'
 * runs during the check show it: test_drift) the revert runs one at a
 * time, each right after a run of the good end, the bad end running
 * first when it has no run among the last side_age, and is compared with
 * the ends' latest runs, every run brought to the latest time by the
 * trend (verdict_local): it is measured last, and a drifting host would
 * make it look short of the good end's early runs, or, with a trend
 * extrapolated over several runs, far from both.  Outside drift,
 * "does not restore" waits for REVERT_FRESH_END_RUNS runs of each end
 * beside the revert's (revert_fresh_ends); a drift first seen during
 * the check, for REVERT_DRIFT_RUNS revert runs taken the drift way
 * (revert_drift_wait).  0 decided or the guests failed (rc filled), -1
 * klab failed. */
static int measure(const struct revert_env *env, const char *kernel, int64_t build_id, struct revert_check *rc)
{
	const struct revert_engine *e = env->engine;
	struct revert_runs m = { .env = env, .e = e, .kernel = kernel, .build_id = build_id, .t_drift = -1 };
	struct verdict_runs g = e->ops->end_runs(e->data, 0), b = e->ops->end_runs(e->data, 1);
	char *why = NULL;
	int ret = -1;

	m.want = e->repeat ? e->repeat : 3;
	m.t0 = e->ops->last_run(e->data);
	if (g.n && g.t[g.n - 1] > m.t0)
		m.t0 = g.t[g.n - 1];
	if (b.n && b.t[b.n - 1] > m.t0)
		m.t0 = b.t[b.n - 1];
	memcpy(m.s.hash, rc->commit, 41);
	m.s.phase = "revert";
	m.s.exit_code = -1;
	if (db_step_begin(env->lab->db, env->bisection_id, &m.s) < 0)
		return -1;
	snprintf(m.label, sizeof(m.label), "  revert %.12s ", rc->commit);
	if (e->ops->drift(e->data))
		printf("  (drift: the revert runs one at a time, each after a run of the good end, the bad end's when it "
		       "has none among the last %u, and is judged against the ends' latest runs, adjusted by the "
		       "trend)\n", e->pol->side_age);
	for (;;) {
		size_t next = ends_before(&m);
		int d;

		free(m.vals);
		free(m.t);
		m.vals = m.t = NULL;
		free(why);
		why = NULL;
		d = e->ops->measure(e->data, kernel, build_id, m.s.id, m.label, next, &m.vals, &m.t, &m.n, &why);
		if (d < 0)
			goto out;
		if (d > 0) {
			rc->outcome = REVERT_NOT_MEASURED;
			rc->detail = xstrdup(why ? why : "guest failed");
			m.s.verdict = "skip";
			m.s.reason = rc->detail;
			ret = db_step_finish(env->lab->db, &m.s);
			goto out;
		}
		if (m.n < m.want)
			continue;
		d = judge(&m, &rc->outcome);
		if (d < 0)
			goto out;
		if (d == 0) {
			if (wait_more(&m, &rc->outcome))
				continue;
			break;
		}
		printf("  %s: %u runs needed, %s\n", m.v.text, m.v.next_runs,
		       e->ops->drift(e->data) ? "each after a run of the good end"
					      : "each after a fresh reference run");
		m.want = m.v.next_runs;
	}
	ret = finish(&m, rc);
out:
	verdict_local_release(&m.loc);
	free(why);
	free(m.vals);
	free(m.t);
	return ret;
}

int revert_check_run(const struct revert_env *env, struct revert_check *out)
{
	struct revert_result rr;
	struct kernel_request rq = { 0 };
	struct kernel_result kr;
	int rc, stored;

	memset(out, 0, sizeof(*out));
	stored = env->half ? db_half_revert(env->lab->db, env->bisection_id, env->half, out)
			   : db_bisection_revert(env->lab->db, env->bisection_id, out);
	if (stored < 0)
		return -1;
	if (stored > 0 && out->outcome != REVERT_NONE) {
		say(env, out);
		return 0;
	}
	revert_check_release(out);
	if (env->half)
		printf("\nrevert check, half %d: the bad end %.12s with %.12s alone reverted (klab's own commit)\n",
		       env->half, env->bad, env->culprit);
	else
		printf("\nrevert check: the bad end %.12s with %.12s reverted (klab's own commit)\n", env->bad,
		       env->culprit);
	rc = worktree_revert(env->wt, env->culprit, env->bad, &rr);
	if (rc < 0)
		return -1;
	if (rc > 0) {
		out->outcome = REVERT_NO_APPLY;
		out->detail = xstrdup(rr.reason);
		revert_result_release(&rr);
		goto done;
	}
	memcpy(out->commit, rr.hex, 41);
	revert_result_release(&rr);
	{
		/* its subject for show and the report ('Revert "..."'), as
		 * for every commit klab tests */
		struct commit_info ci;

		if (worktree_commit_info(env->wt, out->commit, &ci) < 0)
			return -1;
		rc = db_commit_store(env->lab->db, env->repo_id, &ci);
		commit_info_release(&ci);
		if (rc < 0)
			return -1;
	}
	rq.lab = env->lab;
	rq.repo = env->repo;
	rq.repo_id = env->repo_id;
	rq.wt = env->wt;
	rq.hex = out->commit;
	rq.recipe = env->recipe;
	rq.jobs = env->jobs;
	rq.progress = PROGRESS_AUTO;
	rq.indent = "  ";
	rc = env->engine->ops->kernel(env->engine->data, &rq, &kr);
	if (rc != 0) {
		if (rc < 0 && !kr.message) {
			kernel_result_release(&kr);
			return -1;
		}
		kernel_print_build(&kr.build, "  ");
		/* a machine that failed the build did not answer the question */
		out->outcome = rc > 0 ? REVERT_NO_BUILD : REVERT_NOT_MEASURED;
		out->detail = xstrdup(kr.message);
		kernel_result_release(&kr);
		goto done;
	}
	printf("  built: %s\n", kr.message);
	rc = measure(env, kr.kernel, kr.build_id, out);
	kernel_result_release(&kr);
	if (rc < 0)
		return -1;
done:
	say(env, out);
	return env->half ? db_half_set_revert(env->lab->db, env->bisection_id, env->half, out)
			 : db_bisection_set_revert(env->lab->db, env->bisection_id, out);
}

int revert_check_bisection(const struct revert_env *env)
{
	struct revert_check rc;
	int on;

	if (!env->engine)
		return 0;
	if (db_bisection_revert_check(env->lab->db, env->bisection_id, &on) < 0)
		return -1;
	if (!on) {
		printf("revert check: off (--no-revert-check)\n");
		return 0;
	}
	if (!env->engine->wanted) {
		/* stored as --no-revert-check's, for bisect show */
		printf("revert check: off (the job's revert_check: no)\n");
		return db_bisection_set_revert_check(env->lab->db, env->bisection_id, 0);
	}
	if (revert_check_run(env, &rc) < 0) {
		revert_check_release(&rc);
		warning("the revert check could not run: the culprit stands without it");
		return -1;
	}
	revert_check_release(&rc);
	return 0;
}

static void print_check(struct lab *lab, int64_t bisection_id, int half)
{
	struct revert_check rc;
	struct strbuf sb = STRBUF_INIT;
	const char *indent = half ? "            " : "";
	int on = 1, found = half ? db_half_revert(lab->db, bisection_id, half, &rc)
				 : db_bisection_revert(lab->db, bisection_id, &rc);

	if (found > 0) {
		revert_check_line(&sb, &rc);
		print_line("%s%s", indent, sb.buf);
		if (rc.commit[0])
			printf("%s%s %s (klab's own commit, in its worktree)\n", indent, half ? "revert:" : "revert:    ",
			       rc.commit);
	} else if (found == 0 && db_bisection_revert_check(lab->db, bisection_id, &on) == 0 && !on) {
		printf("%srevert check: off (--no-revert-check, or the job's revert_check: no)\n", indent);
	}
	revert_check_release(&rc);
	strbuf_release(&sb);
}

void revert_check_print(struct lab *lab, int64_t bisection_id)
{
	print_check(lab, bisection_id, 0);
}

void revert_check_print_half(struct lab *lab, int64_t bisection_id, int half)
{
	print_check(lab, bisection_id, half);
}
