/* The revert check: the bad end without the culprit, made by klab in its
 * own worktree (gitrepo.c's worktree_revert), built (kernel.c) and
 * measured like a bisection step (perfbisect.c, verdict.c). */
#include "engine/revert.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "kernel/kernel.h"
#include "lab/lab.h"
#include "engine/perfbisect.h"
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

/* One more run of a reference end, good and bad in turn, between the
 * revert's extra runs, as a bisection step's extra runs get (cmd-bisect.c's
 * reference_run, which this mirrors: an ambiguous result is as often a
 * drifting host as a kernel between the ends).  A failure is a warning:
 * the references measured so far still hold. */
static void fresh_reference_run_of(const struct revert_env *env, int bad_end)
{
	struct perf *p = env->perf;
	const char *hex = bad_end ? env->bad : env->good;
	char **kernel = bad_end ? &p->bad_kernel : &p->good_kernel;
	int64_t *build = bad_end ? &p->bad_build : &p->good_build;
	int64_t step = bad_end ? p->bad_step : p->good_step;

	if (!hex || !step)
		return;
	if (!*kernel) {
		/* a resumed bisection: the end's kernel is in the store */
		struct kernel_request rq = { 0 };
		struct kernel_result kr;

		rq.lab = env->lab;
		rq.repo = env->repo;
		rq.repo_id = env->repo_id;
		rq.wt = env->wt;
		rq.hex = hex;
		rq.recipe = env->recipe;
		rq.jobs = env->jobs;
		rq.progress = PROGRESS_AUTO;
		rq.indent = "  ";
		if (kernel_for_commit(&rq, &kr) == 0) {
			*kernel = xstrdup(kr.kernel);
			*build = kr.build_id;
		}
		kernel_result_release(&kr);
		if (!*kernel) {
			warning("no kernel for a fresh %s reference run: deciding with the earlier ones",
				bad_end ? "bad" : "good");
			return;
		}
	}
	perf_reference_run(p, bad_end, hex);
}

static void fresh_reference_run(const struct revert_env *env)
{
	fresh_reference_run_of(env, env->perf->ref_turn++ & 1);
}

/* The ends' runs trend (the fresh reference runs between the revert's
 * runs show the host drifting that the bisection had not seen): from
 * here on as under drift, stored as the bisection's (a failure to store
 * is a warning).  -1 after error(). */
static int note_drift(const struct revert_env *env)
{
	struct perf *p = env->perf;
	struct verdict_runs ends[2] = { perf_good_runs(p), perf_bad_runs(p) };
	struct verdict_trend tr;

	if (verdict_trend(&tr, &p->pol, ends, 2) < 0)
		return -1;
	if (!tr.drift)
		return 0;
	p->drift = 1;
	printf("  drift: the ends' runs trended by %+.2f%% per run (%.1f standard errors); the revert from here "
	       "on one run at a time, each after a run of the good end, judged against the ends' latest runs\n",
	       tr.percent, tr.z);
	if (db_bisection_set_drift(env->lab->db, env->bisection_id, tr.percent) < 0)
		warning("the drift is not stored");
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

/* Runs of the reverted kernel under a 'revert' step until the rules
 * decide.  Under drift (the bisection saw the host trend, or the ends'
 * runs during the check show it: note_drift) the revert runs one at a
 * time, each right after a run of the good end, the bad end running
 * first when it has no run among the last side_age, and is compared with
 * the ends' latest runs, every run brought to the latest time by the
 * trend (verdict_local): it is measured last, and a drifting host would
 * make it look short of the good end's early runs, or, with a trend
 * extrapolated over several runs, far from both.  Outside drift,
 * "does not restore" waits for REVERT_FRESH_END_RUNS runs of each end
 * beside the revert's (revert_fresh_ends); a drift first seen during
 * the check, for REVERT_DRIFT_RUNS revert runs taken the drift way
 * (revert_drift_wait).  0 decided or the guests
 * failed (rc filled), -1 klab failed. */
static int measure(const struct revert_env *env, const char *kernel, int64_t build_id, struct revert_check *rc)
{
	struct perf *p = env->perf;
	struct verdict_local loc = { 0 };
	struct step s;
	struct verdict v;
	double *vals = NULL, *t = NULL;
	const double *g = NULL, *b = NULL, *c = NULL;
	size_t n = 0, ng = 0, nb = 0, nc = 0, want = p->job.repeat ? p->job.repeat : 3;
	char *why = NULL, label[64];
	int ret = -1, d, told = 0, told_drift = 0, stuck = 0;
	unsigned ends = 0;	/* ends to run again before deciding again (revert_fresh_ends) */
	double t_drift = -1;	/* the revert's last run when the check saw the drift (revert_drift_wait) */
	/* the check begins after the ends' runs so far */
	double t0 = p->last_run;

	if (p->ng && p->good_t[p->ng - 1] > t0)
		t0 = p->good_t[p->ng - 1];
	if (p->nb && p->bad_t[p->nb - 1] > t0)
		t0 = p->bad_t[p->nb - 1];
	memset(&s, 0, sizeof(s));
	memcpy(s.hash, rc->commit, 41);
	s.phase = "revert";
	s.exit_code = -1;
	if (db_step_begin(env->lab->db, env->bisection_id, &s) < 0)
		return -1;
	snprintf(label, sizeof(label), "  revert %.12s ", rc->commit);
	if (p->drift)
		printf("  (drift: the revert runs one at a time, each after a run of the good end, the bad end's when it "
		       "has none among the last %u, and is judged against the ends' latest runs, adjusted by the "
		       "trend)\n", p->pol.side_age);
	for (;;) {
		/* the first runs in one go, extra runs one by one */
		size_t next = n ? n + 1 : want;
		int m;

		if (ends) {
			/* the ends beside the revert, the revert's runs as they are */
			size_t before = p->ng + p->nb;

			for (int k = 0; k < 2; k++)
				if (ends & (1u << k))
					fresh_reference_run_of(env, k);
			stuck = p->ng + p->nb == before;
			ends = 0;
			next = n;
		} else if (p->drift) {
			p->next_kernel = kernel;	/* the revert's guest made ahead */
			/* the good end right before each run (whether the
			 * revert is like good is the question: the trend
			 * estimated from a few runs, carried over several,
			 * made a full revert look short of good), the bad end
			 * when it has no run among the last side_age */
			if (perf_side_stale(p, 0, 0, 1))
				fresh_reference_run_of(env, 0);
			if (perf_side_stale(p, 1, 0, p->pol.side_age))
				fresh_reference_run_of(env, 1);
			next = n + 1;
		} else if (n) {
			p->next_kernel = kernel;
			fresh_reference_run(env);
		}
		p->next_kernel = NULL;
		free(vals);
		free(t);
		vals = t = NULL;
		m = perf_measure_timed(p, kernel, build_id, s.id, label, next, &vals, &t, &n, &why);

		if (m < 0)
			goto out;
		if (m > 0) {
			rc->outcome = REVERT_NOT_MEASURED;
			rc->detail = xstrdup(why ? why : "guest failed");
			s.verdict = "skip";
			s.reason = rc->detail;
			ret = db_step_finish(env->lab->db, &s);
			goto out;
		}
		if (n < want)
			continue;
		/* the pooled runs as they are, or under drift the local ones;
		 * the revert is measured last, after the fresh reference runs
		 * of its own extra runs, so the ends' trend is tested again */
		g = p->good, b = p->bad, c = vals;
		ng = p->ng, nb = p->nb, nc = n;
		verdict_local_release(&loc);
		if (!p->drift) {
			if (note_drift(env) < 0)
				goto out;
			if (p->drift)
				t_drift = t[n - 1];
		}
		if (p->drift) {
			struct verdict_runs G = perf_good_runs(p), B = perf_bad_runs(p), C = { vals, t, n };
			if (verdict_local(&loc, &p->pol, &G, &B, &C) < 0)
				goto out;
			g = loc.good, b = loc.bad, c = loc.cand;
			ng = loc.ng, nb = loc.nb, nc = loc.nc;
		}
		d = revert_decide(&v, &rc->outcome, &p->pol, g, ng, b, nb, c, nc, p->job.direction);
		if (d < 0)
			goto out;
		if (d == 0) {
			if (revert_drift_wait(rc->outcome, t_drift >= 0, runs_after(t, n, t_drift),
					      verdict_next_runs(&p->pol, n, n + 1) != 0)) {
				if (!told_drift++)
					printf("  %s: before \"does not restore\", %d runs of the revert taken the drift "
					       "way\n", v.text, REVERT_DRIFT_RUNS);
				rc->outcome = REVERT_NONE;
				continue;
			}
			ends = stuck ? 0 : revert_fresh_ends(rc->outcome, p->drift, runs_after(p->good_t, p->ng, t0),
							      runs_after(p->bad_t, p->nb, t0));
			if (!ends)
				break;
			if (!told++)
				printf("  %s: before \"does not restore\", %d runs of each end beside the revert's\n",
				       v.text, REVERT_FRESH_END_RUNS);
			rc->outcome = REVERT_NONE;
			continue;
		}
		printf("  %s: %u runs needed, %s\n", v.text, v.next_runs,
		       p->drift ? "each after a run of the good end" : "each after a fresh reference run");
		want = v.next_runs;
	}
	/* as measured (under drift the ends' runs the revert was judged
	 * against, before the trend's adjustment: the values a developer
	 * sees in the runs) */
	rc->runs = n;
	rc->median = stats_median(vals, n);
	rc->cv_percent = stats_cv_percent(vals, n);
	rc->good_median = stats_median(p->good + (p->ng - ng), ng);
	rc->bad_median = stats_median(p->bad + (p->nb - nb), nb);
	rc->detail = xstrfmt("%s: %s", v.rule, v.text);
	{
		struct strbuf sb = STRBUF_INIT;
		verdict_format(&sb, &v);
		db_verdict_store(env->lab->db, s.id, v.rule, v.mwu_good.p_value, v.mwu_bad.p_value, NULL, sb.buf);
		strbuf_release(&sb);
	}
	s.verdict = v.kind == VERDICT_GOOD ? "good" : v.kind == VERDICT_BAD ? "bad" : "skip";
	s.reason = rc->detail;
	ret = db_step_finish(env->lab->db, &s);
out:
	verdict_local_release(&loc);
	free(why);
	free(vals);
	free(t);
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
	rc = kernel_for_klab_commit(&rq, &kr);
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

	if (!env->perf)
		return 0;
	if (db_bisection_revert_check(env->lab->db, env->bisection_id, &on) < 0)
		return -1;
	if (!on) {
		printf("revert check: off (--no-revert-check)\n");
		return 0;
	}
	if (!env->perf->job.revert_check) {
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
