/* The reference phase of a job bisection: the good and the bad end
 * measured interleaved until the rules say whether the regression
 * reproduces; a resumed bisection decides again from its stored runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "core/verdict.h"
#include "guest/hostcheck.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

static int pair_measure(struct bisect_run *r, struct pair_side *a, struct pair_side *b, size_t want, char **why)
{
	return perf_pair_measure_with(perf_of(r), a, b, want, why);
}

/* The reference steps of an earlier run (the latest pair decided, each
 * end with its own verdict), their runs in p.  1 found, 0 none, -1 error. */
static int stored_references(struct bisect_run *r)
{
	struct perf *p = perf_of(r);
	struct step *steps = NULL;
	size_t nr_steps = 0;
	double pct;

	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		return -1;
	for (size_t i = 0; i < nr_steps; i++) {
		if (steps[i].phase_id != STEP_PHASE_REFERENCE || steps[i].status_id != STEP_DONE)
			continue;
		if (!strcmp(steps[i].hash, r->b->goods[0]) && steps[i].mark == BISECT_GOOD)
			p->good_step = steps[i].id;
		else if (!strcmp(steps[i].hash, r->b->bad) && steps[i].mark == BISECT_BAD)
			p->bad_step = steps[i].id;
	}
	steps_release(steps, nr_steps);
	if (!p->good_step || !p->bad_step) {
		p->good_step = p->bad_step = 0;
		return 0;
	}
	if (db_step_metric_runs(r->lab->db, p->good_step, p->job.kpi, &p->good, &p->good_t, &p->ng) < 0 ||
	    db_step_metric_runs(r->lab->db, p->bad_step, p->job.kpi, &p->bad, &p->bad_t, &p->nb) < 0 ||
	    db_bisection_drift(r->lab->db, r->b->id, &p->drift, &pct) < 0)
		return -1;
	return 1;
}

/* The reference steps a stopped reference phase left unfinished (an
 * environment failure stopped it, or klab was killed): perf_pair_begin
 * takes each up again with its runs (db_step_begin claims a step of the
 * same commit and phase that is not done).  Their ids in *good_id and
 * *bad_id (0: none); 1 when there is one, 0 none, -1 error. */
static int unfinished_references(struct bisect_run *r, int64_t *good_id, int64_t *bad_id)
{
	struct step *steps = NULL;
	size_t nr_steps = 0;

	*good_id = *bad_id = 0;
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		return -1;
	for (size_t i = 0; i < nr_steps; i++) {
		if (steps[i].phase_id != STEP_PHASE_REFERENCE || steps[i].status_id == STEP_DONE)
			continue;
		if (!strcmp(steps[i].hash, r->b->goods[0]))
			*good_id = steps[i].id;
		else if (!strcmp(steps[i].hash, r->b->bad))
			*bad_id = steps[i].id;
	}
	steps_release(steps, nr_steps);
	return *good_id || *bad_id;
}

/* An end's stored reference step, open again for more runs. */
static int reopen_side(struct bisect_run *r, struct pair_side *side, const char *hex, int64_t step_id)
{
	memset(side, 0, sizeof(*side));
	side->hex = hex;
	memcpy(side->s.hash, hex, 41);
	side->s.id = step_id;
	side->s.phase = (char *)step_phase_to_string(STEP_PHASE_REFERENCE);
	side->s.exit_code = -1;
	if (db_step_reopen(r->lab->db, step_id) < 0)
		return -1;
	return perf_build_for(r, hex, &side->kernel, &side->build_id);
}

/* Whether the host the runs go to now is the host the stored reference
 * step step_id ran on (its boots' fingerprint against the measurer's,
 * after readying it with the good end's kernel): 1 the same or not known,
 * 0 changed (said, with what changed), -1 error (*why set: no host
 * answers, the environment's failure).  Runs from hosts of
 * different fingerprints are never compared as alike, as runs of
 * different accelerators. */
static int same_host_as_references(struct bisect_run *r, int64_t step_id, char **why)
{
	struct perf *p = perf_of(r);
	struct strbuf what = STRBUF_INIT;
	const char *now = NULL, *now_text = NULL;
	char *then = NULL, *then_text = NULL, *kernel = NULL;
	int64_t build_id = 0;
	int ret = -1;

	if (!p->mops->fingerprint)
		return 1;
	if (db_step_fingerprint(r->lab->db, step_id, &then) < 0)
		return -1;
	if (!then)
		return 1;	/* runs from before fingerprints: nothing to compare */
	if (perf_build_for(r, r->b->goods[0], &kernel, &build_id) < 0 || perf_use(p, kernel, step_id, why) < 0)
		goto out;
	p->mops->fingerprint(p->mdata, &now, &now_text);
	if (!now || !strcmp(now, then)) {
		ret = 1;
		goto out;
	}
	if (db_fingerprint_get(r->lab->db, then, &then_text) < 0)
		goto out;
	host_fingerprint_diff(&what, then_text, now_text);
	printf("the host changed since the earlier runs (fingerprint %.12s, was %.12s: %s differ%s): "
	       "fresh references\n", now, then, what.len ? what.buf : "the texts",
	       strchr(what.buf, ',') || !what.len ? "" : "s");
	ret = 0;
out:
	free(then);
	free(then_text);
	free(kernel);
	strbuf_release(&what);
	return ret;
}

/* Unfinished reference steps and the host: their runs go on where the
 * host is the one they ran on; else the steps are closed (skip, the
 * reason said) so that fresh ones begin.  0, or -1 error (*why set: the
 * environment's). */
static int resume_references(struct bisect_run *r, char **why)
{
	int64_t ids[2];
	int rc = unfinished_references(r, &ids[0], &ids[1]), same;

	if (rc <= 0)
		return rc;
	same = same_host_as_references(r, ids[0] ? ids[0] : ids[1], why);
	if (same < 0)
		return -1;
	if (same) {
		printf("references: going on with the runs of the stopped reference steps\n");
		return 0;
	}
	for (int k = 0; k < 2; k++)
		if (ids[k] && db_step_retire(r->lab->db, ids[k], "the host changed: fresh references") < 0)
			return -1;
	return 0;
}

/* The ends' steps for the reference phase: a resumed bisection's stored
 * ones, decided again from their runs, or new ones.  1 the stored runs
 * reproduce (go on bisecting), 0 good and bad ready to measure from
 * *want runs each, -1 error (*message: why, or NULL), -2 no host answers
 * (*message: why). */
static int reference_sides(struct bisect_run *r, struct pair_side *good, struct pair_side *bad, size_t *want,
			   char **message)
{
	struct perf *p = perf_of(r);
	struct verdict_runs G, B;
	struct verdict v;
	int rc = stored_references(r);

	if (rc > 0) {
		int same = same_host_as_references(r, p->good_step, message);

		if (same < 0)
			return *message ? -2 : -1;
		if (!same) {
			perf_forget_runs(p);
			p->good_step = p->bad_step = 0;
			rc = 0;
		}
	}
	if (rc < 0)
		return -1;
	if (!rc) {
		if (resume_references(r, message) < 0)
			return *message ? -2 : -1;
		if (perf_pair_begin(r, good, r->b->goods[0], STEP_PHASE_REFERENCE) < 0 ||
		    perf_pair_begin(r, bad, r->b->bad, STEP_PHASE_REFERENCE) < 0) {
			*message = xstrdup("cannot build the ends of the range");
			return -1;
		}
		return 0;
	}
	G = perf_good_runs(p);
	B = perf_bad_runs(p);
	if (verdict_reproduce_timed(&v, &p->pol, &G, &B, p->job.direction) < 0)
		return -1;
	printf("references from earlier runs: %zu good and %zu bad runs%s\n", p->ng, p->nb,
	       p->drift ? "; the host drifted (time-local references)" : "");
	if (v.kind == VERDICT_REPRODUCED)
		return 1;
	/* not reproduced at the old cap: the same steps, more runs */
	*want = p->ng > p->nb ? p->ng : p->nb;
	perf_forget_runs(p);
	if (reopen_side(r, good, r->b->goods[0], p->good_step) < 0 || reopen_side(r, bad, r->b->bad, p->bad_step) < 0) {
		*message = xstrdup("cannot open the ends of the range again");
		return -1;
	}
	return 0;
}

/* Measure the good and the bad end (interleaved) and refuse to bisect
 * unless the regression reproduces (reference_sides: a resumed
 * bisection's ends).  0 go on, 1 refused (*message: why), -1 error
 * (*message: the bisection fails so, or NULL), -2 the environment failed
 * (*message: why; the bisection stops, resumable, its steps running). */
int perf_reference_phase(struct bisect_run *r, char **message)
{
	struct perf *p = perf_of(r);
	struct pair_side good, bad;
	struct verdict v;
	char *why = NULL;
	size_t want = p->job.repeat;
	int ret = -1, rc;

	memset(&good, 0, sizeof(good));
	memset(&bad, 0, sizeof(bad));
	rc = reference_sides(r, &good, &bad, &want, message);
	if (rc) {
		ret = rc > 0 ? 0 : rc;
		goto out;
	}
	if (good.kernel)
		perf_speculate_next(r, &good.s, good.kernel);
	for (;;) {
		struct verdict_runs G, B;

		rc = pair_measure(r, &good, &bad, want, &why);
		if (rc < 0 && why) {
			/* the host, not a kernel: as a step's, resumable */
			*message = xstrfmt("the ends of the range cannot be measured: %s", why);
			ret = -2;
			goto out;
		}
		if (rc) {
			*message = rc > 0 ? xstrfmt("an end of the range cannot be measured: %s", why)
					  : xstrdup("the ends of the range cannot be measured (klab error)");
			goto out;
		}
		G = (struct verdict_runs){ good.vals, good.t, good.n };
		B = (struct verdict_runs){ bad.vals, bad.t, bad.n };
		if (verdict_reproduce_timed(&v, &p->pol, &G, &B, p->job.direction) < 0)
			goto out;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= want)
			break;
		printf("  %s: %u runs each\n", v.text, v.next_runs);
		want = v.next_runs;
	}
	perf_store_verdict(r, good.s.id, &v);
	perf_store_verdict(r, bad.s.id, &v);
	if (perf_pair_finish(r, &good, BISECT_GOOD, v.text) < 0 || perf_pair_finish(r, &bad, BISECT_BAD, v.text) < 0)
		goto out;
	p->good = good.vals;
	p->good_t = good.t;
	p->ng = good.n;
	p->bad = bad.vals;
	p->bad_t = bad.t;
	p->nb = bad.n;
	good.vals = bad.vals = good.t = bad.t = NULL;
	perf_note_drift(r, &v);
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
		if (v.runs_needed > p->nb && v.runs_needed <= 1000) {
			/* the power estimate, and how to go on with these runs */
			char *more = xstrfmt("%s; to go on with these runs: klab bisect resume --max-runs %u %lld", msg,
					     v.runs_needed < VERDICT_MIN_CAP ? VERDICT_MIN_CAP : v.runs_needed,
					     (long long)r->b->id);
			free(msg);
			msg = more;
		}
		/* bisect_run prints it and ends the bisection not-reproduced */
		*message = msg;
		ret = 1;
		goto out;
	}
	printf("%s\n", v.text);
	ret = 0;
out:
	free(why);
	perf_pair_release(&good);
	perf_pair_release(&bad);
	return ret;
}
