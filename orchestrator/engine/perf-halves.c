/* The halves after a split (two change points): each half judged
 * against its own ends, the split commit's runs one of them, and each
 * half's culprit reverted alone once both have ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "engine/revert.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

void perf_end_release(struct perf_end *e)
{
	free(e->v);
	free(e->t);
	free(e->kernel);
	memset(e, 0, sizeof(*e));
}

/* Swap end bad_end of p's references with e. */
static void end_swap(struct perf *p, int bad_end, struct perf_end *e)
{
	struct perf_end t = *e;
	double **v = bad_end ? &p->bad : &p->good, **times = bad_end ? &p->bad_t : &p->good_t;
	size_t *n = bad_end ? &p->nb : &p->ng;
	int64_t *step = bad_end ? &p->bad_step : &p->good_step, *build = bad_end ? &p->bad_build : &p->good_build;
	char **kernel = bad_end ? &p->bad_kernel : &p->good_kernel;

	*e = (struct perf_end){ *v, *times, *n, *step, *build, *kernel };
	*v = t.v;
	*times = t.t;
	*n = t.n;
	*step = t.step;
	*build = t.build;
	*kernel = t.kernel;
}

/* The whole range's ends again after a half (its other end is back from
 * p->outer). */
static void perf_whole(struct perf *p)
{
	if (!p->half)
		return;
	end_swap(p, p->half == 1, &p->outer);
	perf_end_release(&p->outer);
	p->half = 0;
}

/* A half after a split: the split commit's runs (its bisect step, where
 * fresh runs of that end go too) become the half's bad end (half 1) or
 * good end (half 2), as the simulation's search does, so that each
 * culprit is judged and confirmed against its own half.  The marks
 * inherited by identical kernels start again: a kernel decided in one
 * half says nothing against the other's ends. */
int perf_half(struct bisect_run *r, int half, const char *split)
{
	struct perf *p = perf_of(r);
	struct perf_end e;
	struct step *steps = NULL;
	size_t nr = 0;
	int64_t id = 0;

	perf_whole(p);
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr) < 0)
		return -1;
	for (size_t i = 0; i < nr; i++)
		if (steps[i].phase_id == STEP_PHASE_BISECT && steps[i].status_id == STEP_DONE && !steps[i].half &&
		    !strcmp(steps[i].hash, split))
			id = steps[i].id;
	steps_release(steps, nr);
	if (!id)
		return error("the commit %.12s that split the range has no step", split);
	memset(&e, 0, sizeof(e));
	e.step = id;
	if (db_step_metric_runs(r->lab->db, id, p->job.kpi, &e.v, &e.t, &e.n) < 0)
		return -1;
	end_swap(p, half == 1, &e);
	p->outer = e;
	p->half = half;
	memcpy(p->split, split, 41);
	p->ref_turn = 0;
	/* The split commit's kernel, when this process measured it (not
	 * after a resume), so that a step whose image is byte for byte the
	 * half's new end inherits that end's mark as it would the range's
	 * ends' (the trust history's comment commits after the split booted
	 * 5 times, 78 s, for a verdict their image already had).  Without
	 * it, fresh reference runs of that end find its kernel when they
	 * need it. */
	if (p->between_kernel && !strcmp(p->between_hex, split)) {
		*(half == 1 ? &p->bad_kernel : &p->good_kernel) = xstrdup(p->between_kernel);
		*(half == 1 ? &p->bad_build : &p->good_build) = p->between_build;
	}
	for (size_t i = 0; i < p->nr_decided; i++)
		free(p->decided[i].kernel);
	p->nr_decided = 0;
	/* the commits decided against the other half's ends, too */
	runs_buf_release(&p->side[0]);
	runs_buf_release(&p->side[1]);
	{
		struct strbuf gs = STRBUF_INIT, bs = STRBUF_INIT;
		perf_describe(&gs, p->good, p->ng);
		perf_describe(&bs, p->bad, p->nb);
		printf("%s: half %d: good %.12s %s, bad %.12s %s (%zu and %zu runs)\n", p->job.kpi, half, perf_end_hex(r, 0),
		       gs.buf, perf_end_hex(r, 1), bs.buf, p->ng, p->nb);
		strbuf_release(&gs);
		strbuf_release(&bs);
	}
	return 0;
}

/* Both halves ended: each confirmed culprit reverted alone on the
 * range's bad end and measured against the range's ends (issue 17: with
 * two changes neither revert alone restores good, and klab says so).
 * Each revert step is a step of its culprit's half. */
void perf_halves_end(struct bisect_run *r)
{
	struct perf *p = perf_of(r);
	struct half_culprit *c = NULL;
	size_t nr = 0;

	perf_whole(p);
	if (db_half_culprits_load(r->lab->db, r->b->id, &c, &nr) < 0)
		return;
	for (size_t i = 0; i < nr; i++) {
		if (!c[i].has_culprit || !c[i].confirmed)
			continue;
		if (r->half != c[i].half && db_bisection_set_half(r->lab->db, r->b->id, c[i].half) < 0)
			break;
		r->half = c[i].half;
		perf_revert_check(r, c[i].culprit, c[i].half);
	}
	half_culprits_release(c, nr);
}
