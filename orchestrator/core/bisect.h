/* The search over the commit DAG, choosing the next commit the way git
 * bisect does (git's weights, merges, skips, first-parent).  Pure: the
 * DAG comes in as data, no git or I/O here. */
#ifndef KLAB_BISECT_H
#define KLAB_BISECT_H

#include <stddef.h>
#include <stdint.h>

#include "util/enum.h"

#define BISECT_TREESAME 0x1	/* does not touch the bisection's paths */

struct bisect_commit {
	unsigned char oid[20];	/* raw id; breaks ties as git does */
	int64_t date;		/* committer time */
	unsigned flags;
	int nr_parents;
	int *parents;		/* indices into the DAG, -1 = outside it */
};

/* The commits reachable from the initial bad commit and not from any
 * initial good one: every later candidate set is a subset. */
struct bisect_dag {
	struct bisect_commit *commits;
	size_t nr, alloc;
	int first_parent;	/* only first parents count */
};

/* A commit's verdict, klab's one verdict vocabulary: marks here, step
 * results in bisect-run.c, the steps' verdict column.  BISECT_UNMARKED:
 * none (untested, or a step that could not finish). */
enum bisect_mark { BISECT_UNMARKED = 0, BISECT_GOOD, BISECT_BAD, BISECT_SKIP, BISECT_MARK_LAST };

/* The stored names, git bisect's: "good", "bad", "skip"; NULL for
 * BISECT_UNMARKED.  from_string: NULL gives BISECT_UNMARKED, a name not
 * in the table -1. */
KLAB_ENUM_DECL(bisect_mark);

/* Marks made so far.  `bad` is the current bad commit (index). */
struct bisect_state {
	int bad;
	unsigned char *marks;	/* one enum bisect_mark per DAG commit */
	int nr_skipped;		/* skips ever made, inside the DAG or not */
};

enum bisect_outcome {
	BISECT_TEST,		/* test `commit` next */
	BISECT_FOUND,		/* `commit` is the first bad commit */
	BISECT_SKIPPED_ONLY,	/* only skipped commits left: see candidates */
	BISECT_NO_TESTABLE	/* nothing touches the paths */
};

struct bisect_choice {
	enum bisect_outcome outcome;
	int commit;
	int all;		/* candidates, bad included */
	int remaining;		/* left to test after this one (as git prints) */
	int steps;		/* git's estimate of steps left after this one */
	int *candidates;	/* BISECT_SKIPPED_ONLY: possible first bad commits */
	int nr_candidates;
};

void bisect_dag_init(struct bisect_dag *dag);
void bisect_dag_release(struct bisect_dag *dag);
/* Append a commit; parents are filled in by the caller. Returns its index. */
int bisect_dag_add(struct bisect_dag *dag, const unsigned char oid[20], int64_t date);

void bisect_state_init(struct bisect_state *st, const struct bisect_dag *dag, int bad);
void bisect_state_release(struct bisect_state *st);
/* Record a verdict; marking bad moves the current bad commit. */
void bisect_mark(struct bisect_state *st, int commit, enum bisect_mark mark);

/* Choose what to do next. */
void bisect_choose(const struct bisect_dag *dag, const struct bisect_state *st,
		   struct bisect_choice *out);
void bisect_choice_release(struct bisect_choice *c);
/* What bisect_choose would test after `commit` is marked: next[0] when it
 * is good, next[1] when it is bad; -1 where the search would not test a
 * commit then (found, skipped only).  st is left as it was. */
void bisect_next_both(const struct bisect_dag *dag, struct bisect_state *st, int commit, int next[2]);

/* git's estimate of the steps left for `all` candidates. */
int bisect_estimate_steps(int all);

/* Multisection: up to k commits to test at once, splitting the
 * candidates into k+1 parts as evenly as git's weights allow (the i-th
 * has the weight closest to i*all/(k+1); distinct; skipped commits and
 * the bad one never).  Into commits[] (room for k), ordered by weight,
 * so the first is the oldest; returns how many (fewer than k when fewer
 * are left), 0 when out->outcome is not BISECT_TEST.  k = 1 gives
 * exactly bisect_choose's commit.  out as bisect_choose's, with steps
 * the rounds left after this one. */
#define BISECT_MAX_SLOTS 4
int bisect_choose_k(const struct bisect_dag *dag, const struct bisect_state *st, int k,
		    struct bisect_choice *out, int *commits);
/* Rounds left after the current one for `all` candidates and k slots
 * (k = 1: bisect_estimate_steps). */
int bisect_estimate_rounds(int all, int k);
/* Whether `to` is `from` or one of its ancestors within the DAG. */
int bisect_dag_reaches(const struct bisect_dag *dag, int from, int to);
/* Record the verdicts of one round.  git bisect refuses a good commit
 * that descends from a bad one; a round can produce that (noise, a flaky
 * test).  Then the first bad in topological order wins: the current bad
 * becomes the bad commit that reaches no other bad of the round, and a
 * good that reaches a bad of the round is not recorded (ignored[i] set).
 * Returns how many goods were ignored.  A commit index of -1 counts only
 * a skip, like bisect_mark. */
int bisect_mark_round(const struct bisect_dag *dag, struct bisect_state *st, const int *commits,
		      const enum bisect_mark *marks, int n, int *ignored);


/* Index of a commit in the DAG, or -1. Linear: used a few times a step. */
int bisect_dag_find(const struct bisect_dag *dag, const unsigned char oid[20]);
#endif
