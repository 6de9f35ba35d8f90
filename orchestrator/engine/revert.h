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
struct perf;
struct kbuild_recipe;

/* What the whole check needs of a bisection. */
struct revert_env {
	struct lab *lab;
	struct gitrepo *repo;
	struct worktree *wt;		/* the bisection's worktree: the revert is made and built there */
	int64_t repo_id, bisection_id;
	const struct kbuild_recipe *recipe;
	int jobs;
	const char *good, *bad, *culprit;	/* the first good end, the bad end, the culprit */
	struct perf *perf;		/* references, job, policy, guests */
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
 * test-command bisection (env->perf NULL), one line when the bisection
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
