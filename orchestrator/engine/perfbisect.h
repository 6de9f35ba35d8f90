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
#include "job/job.h"
#include "engine/measurer.h"
#include "engine/speculate.h"
#include "core/verdict.h"

struct lab;
struct kernel_request;
struct kernel_result;
struct bisect_run;
struct revert_engine;

/* Runs and their times (run ids), owned. */
struct runs_buf {
	double *v, *t;
	size_t n;
};

struct perf {
	struct lab *lab;
	struct job job;
	struct verdict_policy pol;
	/* how kernels are got and measured (measurer.h): the guests', or a
	 * test's; mdata is its state for this job */
	const struct measurer_ops *mops;
	void *marg, *mdata;
	double *good, *bad;	/* KPI runs of the reference ends */
	double *good_t, *bad_t;	/* ... and when each was taken (run ids) */
	size_t ng, nb;
	/* the host drifted (a verdict saw the ends' runs trend): time-local
	 * references (the sides' latest runs, pol.side_age), a commit's runs
	 * one by one */
	int drift;
	int64_t good_step, bad_step;
	/* the ends' kernels, once known: fresh reference runs boot them */
	char *good_kernel, *bad_kernel;
	int64_t good_build, bad_build;
	unsigned ref_turn;	/* which end the next fresh run measures */
	/* the runs of the commits this pass (or half) decided good [0] and
	 * bad [1], in time order: under drift they join their end's as the
	 * side's references (pol.side_age) */
	struct runs_buf side[2];
	double last_run;	/* the time (run id) of the latest run taken */
	/* the kernel the run after perf_measure_timed's last boots (the
	 * guest measurer makes its guest ahead: interleaved runs), NULL: not
	 * known */
	const char *next_kernel;
	/* kernels this run decided, for steps whose image is byte for byte
	 * one of them (perf_test inherits the mark, booting nothing) */
	struct perf_decided {
		char *kernel;
		int64_t build_id;	/* the build that made kernel */
		char hex[41];
		char of[41];	/* "": its own kernel; else the commit it inherited it from unbuilt */
		enum bisect_mark mark;
	} *decided;
	size_t nr_decided, alloc_decided;
	/* multisection: the kernels of the round's slots */
	char **slot_kernel;
	int64_t *slot_build;
	/* two change points: the half being bisected (0 none) and the
	 * commit the range split at, one end of the half (its step's runs
	 * are that end's references); `outer` holds the range's end it
	 * replaces while the half runs */
	int half;
	char split[41];
	/* the kernel of the last commit measured clearly between the ends
	 * (the split, if the range splits there): the half's new end */
	char between_hex[41];
	char *between_kernel;
	int64_t between_build;
	struct perf_end {
		double *v, *t;
		size_t n;
		int64_t step, build;
		char *kernel;
	} outer;
	/* the next step's possible commits, built beside a step's guests */
	struct speculation spec;
	int spec_off;		/* off for this bisection (said once): no CPU for them */
	/* a step's two possible successors, waiting for the step's first
	 * run to say which to build first */
	struct spec_pending {
		void *r;		/* the bisection (struct bisect_run); NULL: none */
		int64_t step;
		char hex[2][41];	/* after a good verdict, after a bad one */
		unsigned char *cpus;
		size_t nr_cpus;
	} spec_wait;
};

struct step_tester_ops;
/* The job tester: tester_data is the bisection's struct perf. */
extern const struct step_tester_ops perf_tester;

/* What the revert check asks of bisection r under the job tester (its
 * references, runs and kernels, revert.h), in *out. */
void perf_revert_engine(struct bisect_run *r, struct revert_engine *out);

/* Parse the job text stored with the bisection; kpi overrides the job's.
 * Kernels and runs come from the guest measurer. */
int perf_init(struct perf *p, struct lab *lab, const char *job_path, const char *job_text, const char *kpi);
void perf_release(struct perf *p);
/* Get kernels and runs from ops (opened with arg) from now on.  -1
 * after error(). */
int perf_set_measurer(struct perf *p, const struct measurer_ops *ops, void *arg);
/* The kernel of commit rq->hex through p's measurer (klab_commit: a
 * commit klab made, the revert's): kernel_for_commit's 0 / 1 / -1. */
int perf_kernel(struct perf *p, const struct kernel_request *rq, int klab_commit, struct kernel_result *kr);

/* Runs of `kernel` (the measurer's: guests boot it) until step `step_id`
 * has `want` KPI values (runs stored earlier, e.g. before a crash,
 * count).  vals and n: all of them (caller frees).  0 ok; 1 the kernel
 * failed (reason: outcome and why, e.g. "panic: Kernel panic - not
 * syncing: ..."); -1 klab failed. */
int perf_measure_to(struct perf *p, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		    size_t want, double **vals, size_t *n, char **reason);

/* perf_measure_to with each run's time (its run id, the drift test's
 * clock) in *times (caller frees), in the order of *vals. */
int perf_measure_timed(struct perf *p, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		       size_t want, double **vals, double **times, size_t *n, char **reason);

/* The runs of the good end, the bad end, as the _timed verdicts take them. */
struct verdict_runs perf_good_runs(const struct perf *p);
struct verdict_runs perf_bad_runs(const struct perf *p);

/* The runs of a commit decided good (bad_side 0) or bad (1), kept
 * beside that side's end, in time order. */
void perf_side_add(struct perf *p, int bad_side, const double *v, const double *t, size_t n);

/* A side's references under drift: its end's runs and those of the
 * commits decided like it, merged in time order into *out (released
 * first by the caller's runs_buf_release when reused). */
void perf_side_refs(const struct perf *p, int bad_side, struct runs_buf *out);

/* 1 when a side has no run among the last age runs taken (pol.side_age:
 * its end must run again before a commit's next run under drift; 1: the
 * latest run is not its): the end's runs and, with decided, those of the
 * commits decided like it (the revert check, judged against the ends
 * only, counts the end's alone). */
int perf_side_stale(const struct perf *p, int bad_side, int decided, unsigned age);

void runs_buf_release(struct runs_buf *b);
/* Append n runs (values v at times t) to b. */
void runs_buf_add(struct runs_buf *b, const double *v, const double *t, size_t n);

/* "9300 ±2%" style: median and %stddev of values. */
void perf_describe(struct strbuf *sb, const double *v, size_t n);

#endif
