/* A simulated performance bisection: synthetic runs, no VMs, the real
 * verdict rules.  Used by tests/unit/test-verdict.c (a few cells, fixed
 * seed, asserts) and tests/sim/verdict-sim.c (the full table). */
#ifndef KLAB_BISECT_SIM_H
#define KLAB_BISECT_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "verdict.h"

enum sim_dist {
	SIM_NORMAL,
	SIM_LOGNORMAL,
	SIM_NORMAL_SLOW,	/* normal, and the host slows down now and then */
	SIM_LOGNORMAL_SLOW,
};

struct sim_cell {
	enum sim_dist dist;
	double effect_percent;	/* how much worse the bad side is */
	double cv_percent;	/* run-to-run noise */
	int direction;		/* +1: throughput (drops), -1: time (rises) */
	size_t bisections;
	size_t commits;		/* length of the history, ends included */
	double slow_rate;	/* chance a run starts a slow spell (1-2 runs, -30..-60%) */
	int verbose;		/* trace refusals and wrong culprits on stderr */
};

struct sim_result {
	size_t bisections;
	size_t correct, wrong, inconclusive, refused;
	size_t steps, step_runs, ref_runs, skips;
	/* the same histories, fixed 5 runs per commit, nearest median */
	size_t fixed_correct, fixed_wrong, fixed_steps, fixed_step_runs, fixed_ref_runs;
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

/* Run the cell's bisections with policy p; adds to *res. */
void sim_run_cell(struct sim_result *res, const struct verdict_policy *p,
		  const struct sim_cell *cell, struct sim_rng *rng);

#endif
