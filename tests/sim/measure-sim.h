/* A simulated measurer (engine/measurer.h) for the real engine: no build
 * and no guest.  A commit's kernel is named after its level, the number
 * in the file `level` of its tree (0: the good side's KPI, 1: the bad
 * side's, in between: part of the regression, below 0: better than good;
 * a revert commit klab makes gets the level its tree says).  A run draws
 * the KPI from a noise model with a clock (seeded, so the same draws
 * every time) and stores it under its step as a guest's run is stored:
 * boot, run and sample rows of the lab's database, the run id the
 * engine's clock.  Used by tests/sim/engine-sim.c (the verdict table's
 * bisections) and tests/unit/test-engine-sim.c. */
#ifndef KLAB_MEASURE_SIM_H
#define KLAB_MEASURE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/measurer.h"

/* xoshiro256** (Blackman and Vigna), seeded through splitmix64 */
struct sim_rng {
	uint64_t s[4];
};

void sim_rng_seed(struct sim_rng *r, uint64_t seed);
uint64_t sim_rng_next(struct sim_rng *r);
/* Uniform in [0, 1), and standard normal. */
double sim_rng_uniform(struct sim_rng *r);
double sim_rng_normal(struct sim_rng *r);

/* The shape of one run's noise. */
enum sim_noise {
	SIM_NOISE_NORMAL,
	SIM_NOISE_LOGNORMAL,	/* skewed, the same mean and cv */
	SIM_NOISE_T3,		/* heavy tails: Student t, 3 degrees of freedom, on the log scale */
	SIM_NOISE_BIMODAL,	/* two modes at +-cv, a cv/4 jitter around each */
	SIM_NOISE_UNEVEN,	/* normal; levels below 0.5 at a fifth of the cv */
	SIM_NOISE_REPLAY,	/* a real series resampled (replay, below) */
};

struct sim_model {
	/* in */
	double base;		/* the KPI at level 0 */
	double effect_percent;	/* how much worse at level 1 (the KPI drops when direction > 0) */
	double cv_percent;	/* run-to-run noise */
	enum sim_noise noise;
	double drift_percent;	/* the host's speed trends by this much per run */
	double walk_percent;	/* ... or wanders: a random walk with steps of this sigma */
	double slow_rate;	/* chance a run starts a slow spell of 1-2 runs at 40-70% speed */
	int direction;		/* +1: higher is better (throughput), -1: lower (time) */
	/* a slow spell: runs slow_from .. slow_to - 1 (by the model's clock,
	 * from 0) run at slow_factor of their speed; slow_to 0: none */
	size_t slow_from, slow_to;
	double slow_factor;
	/* the host fails run env_fail_at (by the model's clock, from 1) as
	 * measure_boot reports a fault that outlived its tries: the boot and
	 * run stored as 'infrastructure', the run -1 with the reason (a
	 * simulated fault; t-infra kills a real QEMU); 0: none */
	size_t env_fail_at;
	/* the simulated host's fingerprint text (guest/hostcheck.h's
	 * "key=value" lines); NULL: runs carry none */
	const char *host;
	/* the machine fails (a klab error) at run number fail_at of the
	 * model's clock; 0: never */
	size_t fail_at;
	/* readying the measurer finds no host answering (as a guest
	 * measurer's placement does when every registered host is gone: a
	 * simulated fault, t-hosts-bisect makes it with a real sshd) */
	int no_host;
	int slow_ramp;		/* the spell deepens run by run to slow_factor, then ends */
	/* SIM_NOISE_REPLAY: a real lab's runs of one kernel in their order,
	 * as ratios to their median; a run takes the next ratio of a block
	 * of replay_block consecutive ones starting at a random place (the
	 * series' order and its slow spells kept) */
	const double *replay;
	size_t nr_replay, replay_block;
	struct sim_rng rng;
	/* state */
	int slow_left;
	double walk;
	size_t replay_at, replay_left;
	/* out */
	size_t runs;		/* the model's clock: runs drawn */
	size_t kernels;		/* kernels asked for */
	size_t klab_kernels;	/* ... of them, commits klab made (the revert) */
};

/* Seed the model and set its defaults (normal noise, no drift, no slow
 * spell). */
void sim_model_init(struct sim_model *m, uint64_t seed);

/* One run's KPI at level (the model's clock advances). */
double sim_model_draw(struct sim_model *m, double level);

/* The measurer; perf_set_measurer's arg is the struct sim_model. */
extern const struct measurer_ops sim_measurer;

#endif
