/* The measuring seam of a job bisection: how the engine gets a commit's
 * kernel and one more run of it.  The guest measurer (measure-guest.c)
 * builds kernels and boots them in guests; a test's measurer draws runs
 * from a model (tests/sim/measure-sim.c).  The job tester's files
 * (perf-*.c), the confirmation, the split and the revert check run the
 * same under either: they ask only through these calls. */
#ifndef KLAB_MEASURER_H
#define KLAB_MEASURER_H

#include <stddef.h>
#include <stdint.h>

struct lab;
struct job;
struct kernel_request;
struct kernel_result;

/* One run asked for. */
struct measurer_run {
	const char *kernel;		/* what the measurer's kernel call gave */
	int64_t build_id;
	int64_t step_id;		/* the run is stored under this step */
	unsigned iteration;		/* its number under the step, from 1 */
	const char *label;		/* before its progress line */
	const char *next_kernel;	/* the kernel of the run after it (NULL: not known) */
};

struct measurer_ops {
	const char *name;
	/* A measurer for one job (a bisection's; the profile's, with its
	 * monitors) in *data; arg: what the caller gave perf_set_measurer.
	 * -1 after error(). */
	int (*open)(void **data, void *arg, struct lab *lab, const struct job *job);
	void (*close)(void *data);
	/* The kernel of commit rq->hex (klab_commit: one klab made in its
	 * worktree, the revert check's): kernel_for_commit's 0 ok, 1 it does
	 * not build (kr->message), -1 the machine or klab failed. */
	int (*kernel)(void *data, const struct kernel_request *rq, int klab_commit, struct kernel_result *kr);
	/* Runs of `kernel` under step_id follow (the first call readies
	 * whatever the runs need).  0; 1 after error() when no host can be
	 * reached (the environment's failure: the bisection stops,
	 * resumable); -1 after error(). */
	int (*use)(void *data, const char *kernel, int64_t step_id);
	/* One run, stored under run->step_id with its samples and its
	 * progress line printed: 0 with the KPI in *value and the run's time
	 * (its run id: the clock of the drift tests) in *time; 1 the kernel
	 * failed (boot failure, panic, timeout: *reason, caller frees); -1
	 * klab failed (reported). */
	int (*run)(void *data, const struct measurer_run *run, double *value, double *time, char **reason);
	/* Optional.  Before a multisection round forks: close what children
	 * must not share (reopened when next used). */
	void (*disconnect)(void *data);
	/* Optional.  In a round's child: forget what the parent had open,
	 * without closing it. */
	void (*detach)(void *data);
	/* Optional (NULL: no speculative builds).  After use: the host CPUs
	 * the next run would take, alone (now 0) or beside what runs now
	 * (1): guest_env_vcpu_cpus's 0 / 1 / 2 with *why / -1. */
	int (*vcpu_cpus)(void *data, int now, unsigned char **cpus, size_t *nr, const char **why);
	/* Optional (NULL: runs carry no fingerprint).  After use: the hash
	 * and text of the host fingerprint the runs are stored under
	 * (guest/hostcheck.h); NULLs when not known. */
	void (*fingerprint)(void *data, const char **hash, const char **text);
};

/* Kernels built by klab and booted in guests: what `klab bisect` uses. */
extern const struct measurer_ops guest_measurer;

#endif
