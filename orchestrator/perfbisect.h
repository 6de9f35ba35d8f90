/* The job tester of a bisection (bisect-run.h's step tester): the
 * reference phase (the good and bad ends measured, interleaved), boots of
 * a commit's kernel until the verdict rules decide (the run ladder, each
 * extra run after a fresh reference run), the confirmation of the
 * culprit against its parent and the final report.  Used by
 * cmd-bisect.c. */
#ifndef KLAB_PERFBISECT_H
#define KLAB_PERFBISECT_H

#include <stddef.h>
#include <stdint.h>
#include "job.h"
#include "guest.h"
#include "verdict.h"

struct lab;

struct perf {
	struct lab *lab;
	struct job job;
	struct verdict_policy pol;
	struct guest_env *ge;	/* NULL until the first boot */
	double *good, *bad;	/* KPI runs of the reference ends */
	size_t ng, nb;
	int64_t good_step, bad_step;
	/* the ends' kernels, once known: fresh reference runs boot them */
	char *good_kernel, *bad_kernel;
	int64_t good_build, bad_build;
	unsigned ref_turn;	/* which end the next fresh run measures */
	/* multisection: the kernels of the round's slots */
	char **slot_kernel;
	int64_t *slot_build;
};

struct step_tester_ops;
/* The job tester: tester_data is the bisection's struct perf. */
extern const struct step_tester_ops perf_tester;

/* Parse the job text stored with the bisection; kpi overrides the job's. */
int perf_init(struct perf *p, struct lab *lab, const char *job_path, const char *job_text, const char *kpi);
void perf_release(struct perf *p);

/* Boot `kernel` until step `step_id` has `want` KPI values (runs stored
 * earlier, e.g. before a crash, count).  vals and n: all of them (caller
 * frees).  0 ok; 1 the guest failed (reason: outcome and why, e.g.
 * "panic: Kernel panic - not syncing: ..."); -1 klab failed. */
int perf_measure_to(struct perf *p, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		    size_t want, double **vals, size_t *n, char **reason);

/* "9300 ±2%" style: median and %stddev of values. */
void perf_describe(struct strbuf *sb, const double *v, size_t n);

#endif
