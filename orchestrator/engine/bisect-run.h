/* The bisection loop behind one seam: choose -> test -> record -> mark,
 * the merge-base phase, multisection rounds (one forked slot per commit)
 * and the replay of stored steps on resume.  What a commit is worth is
 * asked of a step tester; the loop stores every step and prints the
 * bisection's lines.  Used by cmd-bisect.c (and the unit tests, with a
 * fake tester). */
#ifndef KLAB_BISECT_RUN_H
#define KLAB_BISECT_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/bisect.h"
#include "lab/db.h"
#include "kernel/kbuild.h"
#include "kernel/kernel.h"
#include "util/strbuf.h"

struct lab;
struct gitrepo;
struct worktree;
struct range_info;
struct bisect_run;

/* What a tester found for one step (step_outcome_init first). */
struct step_outcome {
	enum bisect_mark result;	/* BISECT_UNMARKED: the step could not finish (klab
					 * or the machine failed, no verdict): the bisection stops */
	struct strbuf reason;	/* stored with the verdict; BISECT_UNMARKED: the aborted row's reason */
	int exit_code;		/* the test command's, -1 none */
	int64_t checkout_ms, test_ms;
	int untested;		/* skipped before any test ran (no build): no test time printed */
	char *why;		/* BISECT_UNMARKED: why the bisection stops, or NULL (a default) */
	char *error;		/* BISECT_UNMARKED: a line to report with error(), or NULL */
	int between;		/* a skip because the commit is clearly apart from both ends:
				 * two changes, the range splits there (a tester with `half`) */
};

void step_outcome_init(struct step_outcome *o);
void step_outcome_release(struct step_outcome *o);

/* A step tester: how one commit is judged.  It reports in a step_outcome
 * and never exits, stores a verdict or prints the bisection's lines (its
 * own progress under the step, e.g. build and run lines, is its own).
 * Optional members may be NULL. */
struct step_tester_ops {
	const char *test_label;	/* before the test time in the step line: "test " or "" */
	int progress;		/* steps are long: print "progress:" lines */
	/* Before the first step (a job's reference phase).  0 go on; 1 the
	 * bisection is over before it began (*message printed, the bisection
	 * done/not-reproduced); -1 error (*message: the bisection failed so;
	 * NULL: it was reported); -2 the environment failed (*message: the
	 * bisection stops so, resumable).  Optional. */
	int (*begin)(struct bisect_run *br, char **message);
	/* Judge step s (a running row) into out. */
	void (*test)(struct bisect_run *br, const struct step *s, struct step_outcome *out);
	/* The first bad commit found: the one-line outcome (caller frees);
	 * *confirmed 0 when measurements say it is not the cause.  Optional:
	 * a test command's first bad commit stands as found. */
	char *(*confirm)(struct bisect_run *br, const char *culprit, int *confirmed);
	/* A culprit of pass 1 was not confirmed: forget what the tester holds
	 * of that pass (references, kernels), for the range once more from
	 * begin, in steps of pass 2.  Optional: no second pass. */
	void (*reopen)(struct bisect_run *br);
	/* Two change points: a step said `between`, so the range splits at
	 * that commit and each half is bisected with its own ends, half 1
	 * (good, split] then half 2 (split, bad].  Before a half's steps
	 * (also on resume): take the half's references.  0, or -1 the half
	 * cannot be set up.  Optional: a commit between the ends stays a skip. */
	int (*half)(struct bisect_run *br, int half, const char *split);
	/* Both halves ended (also on resume): the whole range's ends again,
	 * and what the tester checks of each half's culprit (a job's revert
	 * of each alone).  Its result never changes the bisection's.
	 * Optional. */
	void (*halves_end)(struct bisect_run *br);

	/* Multisection.  Before a round's n children fork: ready the slots
	 * (fork_slot[i] = 0 leaves slot i without a child); -1 the round
	 * cannot run (br->why set).  Optional: every slot forks. */
	int (*round_prepare)(struct bisect_run *br, char (*hex)[41], int n, int *fork_slot);
	/* In slot i's child (br->lab->db is the child's own connection):
	 * 0 out holds the verdict, recorded there; 1 the row stays running
	 * for the parent (round_rest); -1 klab failed.  Optional: test. */
	int (*slot_test)(struct bisect_run *br, int i, const struct step *s, struct step_outcome *out);
	/* After the children: 1 the row slot i left running is tested by the
	 * parent with test (a job's extra runs).  Optional: never. */
	int (*round_rest)(struct bisect_run *br, int i, int child_ok);
	void (*round_release)(struct bisect_run *br, int n);
	/* Told after a step's verdict is stored.  Optional (tests stop there). */
	void (*step_done)(struct bisect_run *br, const struct step *s);
	/* Work a tester started ahead of the loop (a job's speculative
	 * builds of br->next): the loop is about to test `hex`, or (NULL)
	 * leaves its steps.  Settle it before anything else uses klab's
	 * worktree.  Optional. */
	void (*settle)(struct bisect_run *br, const char *hex);
};

struct bisect_run {
	struct lab *lab;
	struct bisection *b;
	struct gitrepo *repo;		/* set by the caller */
	struct worktree *wt;		/* klab's worktree (testers), or NULL */
	char *log_dir;			/* the steps' logs (caller owns) */
	struct kbuild_recipe recipe;	/* b->build: the bisection's recipe */
	int jobs;
	int slots;			/* commits tested at once (multisection) */
	const struct step_tester_ops *tester;
	void *tester_data;
	char *why;			/* why the last step could not finish */
	int steps_done;
	int pass;			/* 1, or 2 after an unconfirmed culprit (migration 10) */
	int half;			/* 0 the whole range; 1 or 2 a half after a split (migration 11) */
	char split[41];			/* the commit the range split at, "" none */
	double share;			/* set by confirm: the culprit's parent -> culprit change in %
					 * of the ends' gap (NAN: not known) */
	/* the rest is the loop's */
	int64_t start_ms;
	char (*goods)[41];
	size_t nr_goods, alloc_goods;
	char (*skips)[41];
	size_t nr_skips, alloc_skips;
	char bad[41];
	struct bisect_dag *dag;		/* loaded by start (taken over), or NULL */
	struct range_info *info;	/* what that load learnt, or NULL */
	int64_t step_ms_sum, ref_ms;	/* the remaining-time estimate */
	int steps_timed;
	pid_t parent;			/* the bisection's process, for a round's children */
	/* one slot: what the loop tests after the current step if it is good
	 * (next[0]) or bad (next[1]); "" when the search would end then */
	char next[2][41];
};

/* Set up br for bisection b (slots and recipe from the database).
 * dag/info: the range as start loaded it, or NULL.  -1 on error. */
int bisect_run_init(struct bisect_run *br, struct lab *lab, struct bisection *b, struct bisect_dag *dag,
		    struct range_info *info);
/* Mark b running, take over the merge-base verdicts stored, and say so
 * when resuming.  br->repo must be set.  -1 on error. */
int bisect_run_open(struct bisect_run *br);
/* The tester's begin, the merge-base phase, the loop to its end (state
 * stored); after a split both halves, each with its culprit.  An exit code: EXIT_OK, EXIT_FAIL, EXIT_UNDECIDED,
 * EXIT_UNCONFIRMED. */
int bisect_run(struct bisect_run *br);
void bisect_run_release(struct bisect_run *br);

/* For testers: the kernel request of one of br's commits (klab's worktree,
 * the recipe, progress under the step). */
struct kernel_request bisect_run_kernel_request(struct bisect_run *br, const char *hex);
/* The kernel of step s's commit: 0 got it (*kr; "built:" printed); 1 it
 * does not build (out: the skip); -1 out: the abort.  checked_out: the
 * caller checked the commit out.  kr is released by the caller always. */
int bisect_run_step_kernel(struct bisect_run *br, const struct step *s, int checked_out, struct step_outcome *out,
			   struct kernel_result *kr);
/* The same for a kernel got another way (the job tester's measurer): rc
 * and kr are kernel_for_commit's. */
int bisect_run_kernel_outcome(struct bisect_run *br, const struct step *s, int rc, struct step_outcome *out,
			      struct kernel_result *kr);
/* Stop with the bisection resumable / fail it: stored, reported; EXIT_FAIL. */
int bisect_run_stop(struct bisect_run *br, const char *msg);
int bisect_run_fail(struct bisect_run *br, const char *msg);

/* Whether hex is one of arr[0..nr). */
int hash_listed(char (*arr)[41], size_t nr, const char *hex);

/* The test command tester: CMD runs with argv in klab's worktree (a copy
 * per slot), its exit code decides (0 good, 125 skip, 1-127 bad, 128 or
 * more or a signal stops); a timeout skips. */
extern const struct step_tester_ops command_tester;

#endif
