/* Two or more sides measured interleaved (A B C A B C ...), each side a
 * kernel and a job (a variant of it), its boots one run set: a slow
 * spell of the host hits every side instead of one.  klab compare and
 * klab reproduce measure with it; runcompare.h compares the run sets. */
#ifndef KLAB_MEASURE_H
#define KLAB_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "guest/guest.h"

struct lab;
struct job;

struct measure_side {
	/* in */
	const char *label;		/* for the progress lines: "demo-good", "thp.enabled=never" */
	const struct job *job;		/* sides with the same job share one guest environment */
	const char *kernel;		/* bzImage */
	int64_t build_id;		/* 0: none */
	const char *commit_hash;	/* NULL: none */
	/* out */
	int64_t run_set_id;
	double *kpi;			/* the KPI of each ok run, in order */
	size_t nr_kpi;
};

struct measure {
	struct lab *lab;
	struct measure_side *sides;
	size_t nr_sides;
	struct guest_env **envs;	/* per side; owned by the first side of its job */
	const char **staged;		/* the kernel each env boots now */
	int quiet;
	int failed;			/* a guest failed: the run sets end 'failed' */
};

/* Prepare the guests (one environment per distinct job, all on one
 * host) and record a run set per side, `runs` boots each.  geo->kernel
 * is ignored (each side has its own).  -1 after error(); measure_end()
 * is still called. */
int measure_begin(struct measure *m, struct lab *lab, struct measure_side *sides, size_t n,
		  const struct guest_env_opts *geo, unsigned runs);
/* Boot the sides in turn until each has `runs` KPI values (more than at
 * measure_begin is fine: a verdict asking for more).  0 ok; 1 a guest
 * failed or gave no KPI (*why, caller frees: "A: panic: ..."); -1 klab
 * or libvirt failed. */
int measure_to(struct measure *m, unsigned runs, char **why);
/* Finish the run sets (done, or failed) and free the guests; the sides'
 * KPI values stay until measure_sides_release(). */
void measure_end(struct measure *m);
void measure_sides_release(struct measure_side *sides, size_t n);

#endif
