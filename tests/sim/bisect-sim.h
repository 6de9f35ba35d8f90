/* A simulated performance bisection: synthetic runs with their times, no
 * VMs, the real (timed) verdict rules, in the run order the job tester
 * should take (tests/sim/README.md: interleaved references, a fresh
 * reference run before every extra run of a commit; under drift each
 * side's latest runs, the end's and the decided commits', an end running
 * again when its side has none recent (side_age), both halves of a commit between the ends, the
 * confirmation of parent and culprit from their step runs).  Used by
 * tests/unit/test-verdict.c (a few cells, fixed seed, asserts) and
 * tests/sim/verdict-sim.c (the full table). */
#ifndef KLAB_BISECT_SIM_H
#define KLAB_BISECT_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "core/verdict.h"

enum sim_dist {
	SIM_NORMAL,
	SIM_LOGNORMAL,
	SIM_NORMAL_SLOW,	/* normal, and the host slows down now and then */
	SIM_LOGNORMAL_SLOW,
	SIM_T3,			/* heavy tails: Student t with 3 degrees of freedom */
	SIM_BIMODAL,		/* two modes at +-cv, a little jitter around each */
	SIM_UNEVEN,		/* normal; the good side at a fifth of the bad side's cv */
};

/* Where the regression comes from. */
enum sim_shape {
	SIM_ONE,		/* one culprit carries the whole effect */
	SIM_TWO_HALVES,		/* two culprits, each half of it */
	SIM_IMPROVE_THEN_REGRESS, /* an improvement of half the effect, then a
				   * regression of 1.5 times it (the one to name) */
};

struct sim_cell {
	enum sim_dist dist;
	enum sim_shape shape;
	double effect_percent;	/* how much worse the bad side is (0: no regression) */
	double cv_percent;	/* run-to-run noise */
	double drift_percent;	/* the host's speed trends by this much per run */
	double walk_percent;	/* ... or wanders: a random walk with steps of this sigma */
	int direction;		/* +1: throughput (drops), -1: time (rises) */
	size_t bisections;
	size_t commits;		/* length of the history, ends included */
	double slow_rate;	/* chance a run starts a slow spell (1-2 runs, -30..-60%) */
	unsigned repeat;	/* the job's repeat: first runs of the ends and of the confirmation */
	int revert_check;	/* after a confirmed culprit, measure the bad end without it (revert.c) */
	int verbose;		/* trace refusals and wrong culprits on stderr */
	int reuse;		/* the confirmation counts the step runs of parent and culprit */
	unsigned fresh;		/* ... and then adds this many fresh runs of each (0: repeat) */
};

struct sim_result {
	size_t bisections;
	/* what a bisection reports: a culprit (right or wrong), "only
	 * skipped commits left", "not reproduced", "unconfirmed" */
	size_t correct, wrong, inconclusive, refused, unconfirmed;
	/* two changes: one culprit confirmed, the other not (or not found) */
	size_t partial;
	/* bisections that saw drift; commits found between (two changes) */
	size_t drift_seen, splits;
	/* the bisect phase's answer, and how often the confirmation passed it */
	size_t found_right, found_wrong, confirmed_right, confirmed_wrong;
	size_t steps, step_runs, skips;
	size_t ref_runs;	/* the ends before bisecting */
	size_t fresh_ref_runs;	/* reference runs between a commit's extra runs */
	/* ... of which under drift (a side with no recent run), and for
	 * stale references */
	size_t fresh_ref_drift, fresh_ref_stale;
	/* commits decided from their first ladder[0] runs */
	size_t steps_first;
	size_t confirm_runs;
	/* the revert check: its runs, and how often the revert of a right
	 * (wrong) confirmed culprit was checked and said "restores good";
	 * revert_ref_runs: the ends' runs during the checks (also in
	 * fresh_ref_runs) */
	size_t revert_runs, revert_ref_runs, revert_checked_right, revert_restored_right, revert_checked_wrong,
		revert_restored_wrong;
	/* the same histories, fixed 5 runs per commit, nearest median, and a
	 * 5 + 5 confirmation of parent and culprit (and 5 runs of the revert
	 * when the cell has the revert check) */
	size_t fixed_correct, fixed_wrong, fixed_steps, fixed_runs;
};

struct sim_rng {
	uint64_t s[4];
};

void sim_rng_seed(struct sim_rng *r, uint64_t seed);
uint64_t sim_rng_next(struct sim_rng *r);
/* Uniform in [0, 1), and standard normal. */
double sim_rng_uniform(struct sim_rng *r);
double sim_rng_normal(struct sim_rng *r);

const char *sim_dist_name(enum sim_dist d);

/* All runs of the adaptive policy of a result. */
size_t sim_runs(const struct sim_result *r);
/* Add b to a. */
void sim_result_add(struct sim_result *a, const struct sim_result *b);

/* Run the cell's bisections with policy p; adds to *res. */
void sim_run_cell(struct sim_result *res, const struct verdict_policy *p,
		  const struct sim_cell *cell, struct sim_rng *rng);

#endif
