/* The measuring loop of klab: one or more sides measured interleaved
 * (A B C A B C ...), each side a kernel and a job (a variant of it), its
 * boots one run set: a slow spell of the host hits every side instead of
 * one.  klab run and klab track boot one side (run_job_on_kernel), klab
 * compare and klab reproduce several (runcompare.h compares the run
 * sets); a bisection's guest measurer boots one run at a time with
 * measure_boot, the one place a boot becomes a KPI value. */
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
	int64_t track_tip_id;		/* 0: none */
	/* out */
	int64_t run_set_id;
	double *kpi;			/* the KPI of each ok run, in order */
	size_t nr_kpi;
	unsigned nr_boots, nr_ok;	/* boots run; ok */
};

struct measure {
	/* options, set before measure_begin (0: compare's way).
	 * every_boot: measure_to boots each side `runs` times, a failed boot
	 * or one without the KPI counted and the boots going on (unless
	 * stop_on_failure), as klab run's N boots do; 0: until `runs` KPI
	 * values, stopping at the first failure.  own_lines: the caller
	 * prints the lines (booted), measure none. */
	int every_boot, stop_on_failure, own_lines;
	/* Called after each boot (NULL: none). */
	void (*booted)(const struct measure *m, size_t side, unsigned iteration, const struct guest_result *gr,
		       void *data);
	void *data;

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
 * measure_begin is fine: a verdict asking for more), or with every_boot
 * `runs` boots.  0 ok; 1 a guest failed or gave no KPI (*why, caller
 * frees: "A: panic: ..."; with every_boot only under stop_on_failure);
 * -1 klab or libvirt failed. */
int measure_to(struct measure *m, unsigned runs, char **why);

/* One boot of ge's kernel. */
struct measure_boot {
	int64_t run_set_id, build_id, step_id;	/* where it is stored (0: none) */
	unsigned iteration;
	const char *label;		/* before guest_run_once's progress lines */
	const char *next_kernel;	/* the boot after it boots this (NULL: not known): its guest made ahead */
	const char *kpi;
};
/* guest_run_once and the run's KPI (guest_result_kpi): 0 the boot ran
 * (gr->outcome says how; *kpi NAN when an ok run has none), -1 klab or
 * libvirt failed.  gr is the caller's to release either way.  A boot the
 * host ended (VM_INFRA) is tried again, MEASURE_INFRA_TRIES in all, a
 * warning saying why; when every try is, -1: an environment failure,
 * never the kernel's outcome. */
#define MEASURE_INFRA_TRIES 3
int measure_boot(struct guest_env *ge, const struct measure_boot *b, struct guest_result *gr, double *kpi);
/* Finish the run sets (done, or failed) and free the guests; the sides'
 * KPI values stay until measure_sides_release(). */
void measure_end(struct measure *m);
void measure_sides_release(struct measure_side *sides, size_t n);

/* One job on one kernel, `boots` times, recorded as a run set: `klab
 * run` and `klab track run`, a measure of one side (every boot counted). */
struct job_run {
	/* in */
	const struct job *job;
	const struct guest_env_opts *geo;	/* geo->kernel: the bzImage */
	int64_t build_id;		/* 0: none */
	const char *commit_hash;	/* NULL: none */
	int64_t track_tip_id;		/* 0: none */
	unsigned boots;
	int stop_on_failure;		/* no more boots after one that is not ok */
	/* Called once the run set is recorded, and after each boot. */
	void (*started)(const struct job_run *jr, void *data);
	void (*booted)(const struct job_run *jr, unsigned iteration, const struct guest_result *gr, void *data);
	void *data;
	/* out */
	struct guest_env *ge;		/* valid in the callbacks */
	int64_t run_set_id;
	unsigned nr_done, nr_ok, nr_kpi;	/* boots run; ok; ok with the KPI */
	enum vm_outcome failure;	/* of the first boot that was not ok */
	char *failure_reason;		/* NULL: every boot was ok */
};

/* Prepare the guests, record the run set and boot.  0 when every boot
 * ran (each outcome is in the counts and the failure fields), -1 when
 * klab or libvirt failed (stored runs are kept; the run set is marked
 * failed).  Release with job_run_release(). */
int run_job_on_kernel(struct lab *lab, struct job_run *jr);
void job_run_release(struct job_run *jr);

#endif
