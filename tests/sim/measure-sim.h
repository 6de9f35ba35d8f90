/* A simulated measurer (engine/measurer.h) for the real engine: no build
 * and no guest.  A commit's kernel is named after its level, the number
 * in the file `level` of its tree (0: the good side's KPI, 1: the bad
 * side's, in between: part of the regression; a revert commit klab makes
 * gets the level its tree says).  A run draws the KPI from a noise model
 * with a clock (seeded, so the same draws every time) and stores it under
 * its step as a guest's run is stored: boot, run and sample rows of the
 * lab's database, the run id the engine's clock.  Used by
 * tests/unit/test-engine-sim.c. */
#ifndef KLAB_MEASURE_SIM_H
#define KLAB_MEASURE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/measurer.h"
#include "bisect-sim.h"

struct sim_model {
	/* in */
	double base;		/* the KPI at level 0 */
	double effect_percent;	/* how much worse at level 1 (the KPI drops when direction > 0) */
	double cv_percent;	/* run-to-run noise, normal */
	double drift_percent;	/* the host's speed trends by this much per run */
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
	struct sim_rng rng;
	/* the simulated host's fingerprint text (guest/hostcheck.h's
	 * "key=value" lines); NULL: runs carry none */
	const char *host;
	/* the machine fails (a klab error) at run number fail_at of the
	 * model's clock; 0: never */
	size_t fail_at;
	/* out */
	size_t runs;		/* the model's clock: runs drawn */
	size_t kernels;		/* kernels asked for */
	size_t klab_kernels;	/* ... of them, commits klab made (the revert) */
};

/* Seed the model and set its defaults (no drift, no slow spell). */
void sim_model_init(struct sim_model *m, uint64_t seed);

/* The measurer; perf_set_measurer's arg is the struct sim_model. */
extern const struct measurer_ops sim_measurer;

#endif
