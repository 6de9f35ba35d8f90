/* The job tester's side of the revert check (revert.h's revert_engine):
 * revert.c asks for the ends' runs, one more run of an end, runs of the
 * reverted kernel and its kernel through these calls, answered from the
 * bisection's references and its measurer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "engine/revert.h"
#include "kernel/kernel.h"

static int rv_kernel(void *data, const struct kernel_request *rq, struct kernel_result *kr)
{
	return perf_kernel(perf_of(data), rq, 1, kr);
}

static int rv_measure(void *data, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		      size_t want, double **vals, double **times, size_t *n, char **why)
{
	return perf_measure_timed(perf_of(data), kernel, build_id, step_id, label, want, vals, times, n, why);
}

static struct verdict_runs rv_end_runs(void *data, int bad_end)
{
	return bad_end ? perf_bad_runs(perf_of(data)) : perf_good_runs(perf_of(data));
}

static void rv_end_run(void *data, int bad_end, const char *next_kernel)
{
	struct perf *p = perf_of(data);

	p->next_kernel = next_kernel;
	if (bad_end < 0)
		perf_reference_run_turn(data);
	else
		perf_reference_run_of(data, bad_end);
	p->next_kernel = NULL;
}

static int rv_end_stale(void *data, int bad_end, unsigned age)
{
	/* the ends' own runs: the check is judged against the ends only */
	return perf_side_stale(perf_of(data), bad_end, 0, age);
}

static double rv_last_run(void *data)
{
	return perf_of(data)->last_run;
}

static int rv_drift(void *data)
{
	return perf_of(data)->drift;
}

static void rv_drift_seen(void *data, double percent, double z, const char *then)
{
	perf_drift_seen(data, percent, z, then);
}

static const struct revert_engine_ops perf_revert_ops = {
	.kernel = rv_kernel,
	.measure = rv_measure,
	.end_runs = rv_end_runs,
	.end_run = rv_end_run,
	.end_stale = rv_end_stale,
	.last_run = rv_last_run,
	.drift = rv_drift,
	.drift_seen = rv_drift_seen,
};

void perf_revert_engine(struct bisect_run *r, struct revert_engine *out)
{
	struct perf *p = perf_of(r);

	out->ops = &perf_revert_ops;
	out->data = r;
	out->pol = &p->pol;
	out->direction = p->job.direction;
	out->repeat = p->job.repeat;
	out->wanted = p->job.revert_check;
}

void perf_revert_check(struct bisect_run *r, const char *culprit, int half)
{
	struct revert_engine e;

	perf_revert_engine(r, &e);
	revert_check_bisection(&(struct revert_env){ .lab = r->lab, .repo = r->repo, .wt = r->wt,
		.repo_id = r->b->repo_id, .bisection_id = r->b->id, .recipe = &r->recipe, .jobs = r->jobs,
		.good = r->b->goods[0], .bad = r->b->bad, .culprit = culprit, .engine = &e, .half = half });
}
