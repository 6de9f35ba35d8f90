/* The revert check of a job bisection (issue 17): the bad end with the
 * culprit reverted, a commit klab makes in its own worktree's object
 * store, built and measured against the references: does the regression
 * go away without that commit?  The decision and the one-line summary
 * are pure; revert_check_run does the whole check. */
#ifndef KLAB_REVERT_H
#define KLAB_REVERT_H

#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"
#include "core/verdict.h"
#include "core/revert-rule.h"

struct lab;
struct gitrepo;
struct worktree;
struct kbuild_recipe;
struct kernel_request;
struct kernel_result;

/* What the check asks of the bisection that found the culprit, through
 * these calls only (the job tester answers them: perf-revert.c).  data
 * is the engine's. */
struct revert_engine_ops {
	/* The kernel of klab's commit rq->hex (the revert):
	 * kernel_for_klab_commit's 0 / 1 / -1 and kr. */
	int (*kernel)(void *data, const struct kernel_request *rq, struct kernel_result *kr);
	/* Runs of kernel under step_id until there are want (those stored
	 * count): all of them in *vals, their times in *times (caller
	 * frees).  0; 1 the kernel failed (*why); -1 klab failed. */
	int (*measure)(void *data, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		       size_t want, double **vals, double **times, size_t *n, char **why);
	/* The runs of the good end (bad_end 0) or the bad end (1), in time
	 * order: valid until the next call. */
	struct verdict_runs (*end_runs)(void *data, int bad_end);
	/* One more run of an end (-1: the good and the bad end in turn);
	 * next_kernel boots after it.  A failure is a warning: the runs so
	 * far still hold. */
	void (*end_run)(void *data, int bad_end, const char *next_kernel);
	/* 1 when end bad_end has no run among the last age runs taken. */
	int (*end_stale)(void *data, int bad_end, unsigned age);
	/* The time (run id) of the latest run taken. */
	double (*last_run)(void *data);
	/* 1 once the host was seen drifting. */
	int (*drift)(void *data);
	/* The host drifts (percent per run, z standard errors): said, with
	 * `then` (what the check does from here on), and stored. */
	void (*drift_seen)(void *data, double percent, double z, const char *then);
};

struct revert_engine {
	const struct revert_engine_ops *ops;
	void *data;
	const struct verdict_policy *pol;
	int direction;			/* +1 higher is better, -1 lower */
	unsigned repeat;		/* the job's: the revert's first runs */
	int wanted;			/* the job's revert_check */
};

/* What the whole check needs of a bisection. */
struct revert_env {
	struct lab *lab;
	struct gitrepo *repo;
	struct worktree *wt;		/* the bisection's worktree: the revert is made and built there */
	int64_t repo_id, bisection_id;
	const struct kbuild_recipe *recipe;
	int jobs;
	const char *good, *bad, *culprit;	/* the first good end, the bad end, the culprit */
	const struct revert_engine *engine;	/* references, policy, runs; NULL: a test-command bisection */
	int half;			/* 0 the bisection's culprit; 1 or 2: that half's (two changes) */
};

/* Make the revert of env->culprit on env->bad, build it, measure it
 * (runs under a 'revert' step, job.repeat first and more while the
 * rules ask, up to the cap, each extra run after a fresh run of the good
 * or the bad end as a bisection step's) and decide; print one line per stage and the
 * summary; store the result with the bisection.  A check stored already
 * (a resumed bisection) is loaded, not redone.  0 with *out filled; -1
 * klab failed (reported; nothing stored). */
int revert_check_run(const struct revert_env *env, struct revert_check *out);

/* The check as a job bisection's end runs it, after a confirmed
 * culprit (or, env->half set, each confirmed culprit of two changes
 * once both halves ended, stored with its half): nothing for a
 * test-command bisection (env->engine NULL), one line when the bisection
 * has it off, else revert_check_run.  Its result never changes the
 * bisection's: -1 (klab failed) is a warning. */
int revert_check_bisection(const struct revert_env *env);

/* `klab bisect show`'s line ("revert check: ..."; the revert commit on a
 * second line when one was made; "revert check: off" when it was turned
 * off), nothing when the check has not run. */
void revert_check_print(struct lab *lab, int64_t bisection_id);
/* The same for half `half`'s culprit, indented under its "half N:" line. */
void revert_check_print_half(struct lab *lab, int64_t bisection_id, int half);

#endif
