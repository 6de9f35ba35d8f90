/* Unit tests of the bisection choice on hand-made DAGs: linear, merges,
 * criss-cross, skips, first-parent, path-limited (TREESAME). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/bisect.h"

/* Build a DAG from a parent table: parents[i] lists indices (older
 * commits have smaller indices), -1 = outside (a good commit). */
static void make_dag(struct bisect_dag *dag, int n, const int parents[][4], const int *nparents,
		     const int64_t *dates)
{
	bisect_dag_init(dag);
	for (int i = 0; i < n; i++) {
		unsigned char oid[20] = { 0 };
		int idx;
		/* oids in reverse so oid order differs from index order */
		oid[0] = (unsigned char)(255 - i);
		oid[1] = (unsigned char)i;
		idx = bisect_dag_add(dag, oid, dates ? dates[i] : 1000 + i);
		dag->commits[idx].nr_parents = nparents[i];
		dag->commits[idx].parents = malloc(4 * sizeof(int));
		for (int p = 0; p < nparents[i]; p++)
			dag->commits[idx].parents[p] = parents[i][p];
	}
}

static int reaches(const struct bisect_dag *dag, int from, int target, int first_parent)
{
	if (from == target)
		return 1;
	for (int p = 0; p < dag->commits[from].nr_parents; p++) {
		int q = dag->commits[from].parents[p];
		if (q >= 0 && reaches(dag, q, target, first_parent))
			return 1;
		if (first_parent)
			break;
	}
	return 0;
}

/* Run a whole bisection against an oracle: a commit is bad when it
 * reaches `culprit`.  Returns the outcome; *found and *steps filled. */
static enum bisect_outcome simulate(const struct bisect_dag *dag, int bad, int culprit,
				    const int *skips, int nskips, int *found, int *steps,
				    struct bisect_choice *last)
{
	struct bisect_state st;
	enum bisect_outcome out;

	bisect_state_init(&st, dag, bad);
	*steps = 0;
	for (;;) {
		struct bisect_choice ch;
		int skip = 0;

		bisect_choose(dag, &st, &ch);
		assert_true(*steps < 200);
		if (ch.outcome != BISECT_TEST) {
			out = ch.outcome;
			*found = ch.commit;
			if (last)
				*last = ch;
			else
				bisect_choice_release(&ch);
			break;
		}
		/* never offers a commit already decided */
		assert_int_equal(st.marks[ch.commit], BISECT_UNMARKED);
		(*steps)++;
		for (int i = 0; i < nskips; i++)
			if (skips[i] == ch.commit)
				skip = 1;
		if (skip)
			bisect_mark(&st, ch.commit, BISECT_SKIP);
		else
			bisect_mark(&st, ch.commit,
				    reaches(dag, ch.commit, culprit, dag->first_parent) ? BISECT_BAD : BISECT_GOOD);
		bisect_choice_release(&ch);
	}
	bisect_state_release(&st);
	return out;
}

static void linear(struct bisect_dag *dag, int n)
{
	int (*parents)[4] = calloc(n, sizeof(*parents));
	int *np = calloc(n, sizeof(int));

	for (int i = 0; i < n; i++) {
		parents[i][0] = i - 1;	/* commit 0's parent is the good one */
		np[i] = 1;
	}
	make_dag(dag, n, (const int (*)[4])parents, np, NULL);
	free(parents);
	free(np);
}

static void test_bisect__linear_first_choice_is_halfway(void **state)
{
	struct bisect_dag dag;
	struct bisect_state st;
	struct bisect_choice ch;

	linear(&dag, 10);
	bisect_state_init(&st, &dag, 9);
	bisect_choose(&dag, &st, &ch);
	assert_int_equal(ch.outcome, BISECT_TEST);
	assert_int_equal(ch.all, 10);
	assert_int_equal(ch.commit, 4);		/* weight 5 of 10 */
	assert_int_equal(ch.remaining, 4);
	assert_int_equal(ch.steps, 2);
	bisect_choice_release(&ch);
	bisect_state_release(&st);
	bisect_dag_release(&dag);
}

static void test_bisect__linear_finds_every_culprit_in_log2_steps(void **state)
{
	struct bisect_dag dag;

	linear(&dag, 100);
	for (int culprit = 0; culprit < 100; culprit++) {
		int found = -1, steps;
		assert_int_equal(simulate(&dag, 99, culprit, NULL, 0, &found, &steps, NULL), BISECT_FOUND);
		assert_int_equal(found, culprit);
		assert_true(steps <= 7);	/* ceil(log2(100)) */
	}
	bisect_dag_release(&dag);
}

/* Speculative builds ask for both possible next commits: each is what
 * bisect_choose picks once the commit is marked so, and the state is left
 * untouched (the real mark still moves the search). */
static void test_bisect__next_both_is_the_choice_after_either_mark(void **state)
{
	struct bisect_dag dag;
	struct bisect_state st;
	struct bisect_choice ch;
	int next[2];

	linear(&dag, 10);
	bisect_state_init(&st, &dag, 9);
	bisect_choose(&dag, &st, &ch);
	assert_int_equal(ch.commit, 4);
	bisect_next_both(&dag, &st, 4, next);
	assert_int_equal(st.bad, 9);
	assert_int_equal(st.marks[4], BISECT_UNMARKED);
	for (int i = 0; i < 2; i++) {
		struct bisect_state real;
		struct bisect_choice after;

		bisect_state_init(&real, &dag, 9);
		bisect_mark(&real, 4, i ? BISECT_BAD : BISECT_GOOD);
		bisect_choose(&dag, &real, &after);
		assert_int_equal(after.outcome, BISECT_TEST);
		assert_int_equal(next[i], after.commit);
		bisect_choice_release(&after);
		bisect_state_release(&real);
	}
	assert_true(next[0] > 4 && next[1] < 4);
	bisect_choice_release(&ch);
	/* two commits left: the next mark ends the search either way */
	bisect_mark(&st, 4, BISECT_GOOD);
	bisect_mark(&st, 6, BISECT_GOOD);
	bisect_mark(&st, 8, BISECT_BAD);
	bisect_choose(&dag, &st, &ch);
	assert_int_equal(ch.outcome, BISECT_TEST);
	bisect_next_both(&dag, &st, ch.commit, next);
	assert_int_equal(next[0], -1);
	assert_int_equal(next[1], -1);
	assert_int_equal(st.bad, 8);
	bisect_choice_release(&ch);
	bisect_state_release(&st);
	bisect_dag_release(&dag);
}

static void test_bisect__single_candidate_is_the_culprit(void **state)
{
	struct bisect_dag dag;
	struct bisect_state st;
	struct bisect_choice ch;

	linear(&dag, 1);
	bisect_state_init(&st, &dag, 0);
	bisect_choose(&dag, &st, &ch);
	assert_int_equal(ch.outcome, BISECT_FOUND);
	assert_int_equal(ch.commit, 0);
	bisect_state_release(&st);
	bisect_dag_release(&dag);
}

/*   0 - 1 - 2 ------ 6 - 7
 *        \          /
 *         3 - 4 - 5          (6 merges 2 and 5) */
static const int merge_parents[][4] = { { -1 }, { 0 }, { 1 }, { 1 }, { 3 }, { 4 }, { 2, 5 }, { 6 } };
static const int merge_np[] = { 1, 1, 1, 1, 1, 1, 2, 1 };

static void test_bisect__merges_find_every_culprit(void **state)
{
	struct bisect_dag dag;

	make_dag(&dag, 8, merge_parents, merge_np, NULL);
	for (int culprit = 0; culprit < 8; culprit++) {
		int found = -1, steps;
		assert_int_equal(simulate(&dag, 7, culprit, NULL, 0, &found, &steps, NULL), BISECT_FOUND);
		assert_int_equal(found, culprit);
		assert_true(steps <= 4);
	}
	bisect_dag_release(&dag);
}

static void test_bisect__merge_weight_counts_shared_ancestors_once(void **state)
{
	struct bisect_dag dag;
	struct bisect_state st;
	struct bisect_choice ch;

	make_dag(&dag, 8, merge_parents, merge_np, NULL);
	bisect_state_init(&st, &dag, 7);
	bisect_choose(&dag, &st, &ch);
	/* 8 candidates: the best split reaches 4 of them (e.g. 0,1,3,4). */
	assert_int_equal(ch.outcome, BISECT_TEST);
	assert_int_equal(ch.all, 8);
	assert_int_equal(ch.remaining, 8 - 4 - 1);
	bisect_choice_release(&ch);
	bisect_state_release(&st);
	bisect_dag_release(&dag);
}

/* criss-cross: 0 -> 1, 2; 3 = merge(1,2); 4 = merge(2,1); 5 = merge(3,4) */
static void test_bisect__criss_cross_finds_every_culprit(void **state)
{
	static const int parents[][4] = { { -1 }, { 0 }, { 0 }, { 1, 2 }, { 2, 1 }, { 3, 4 }, { 5 } };
	static const int np[] = { 1, 1, 1, 2, 2, 2, 1 };
	struct bisect_dag dag;

	make_dag(&dag, 7, parents, np, NULL);
	for (int culprit = 0; culprit < 7; culprit++) {
		int found = -1, steps;
		assert_int_equal(simulate(&dag, 6, culprit, NULL, 0, &found, &steps, NULL), BISECT_FOUND);
		assert_int_equal(found, culprit);
	}
	bisect_dag_release(&dag);
}

static void test_bisect__equal_dates_break_ties_like_git(void **state)
{
	/* Same timestamp everywhere: the walk is FIFO among equals, so the
	 * result must not depend on anything but the DAG. */
	static const int64_t dates[] = { 5, 5, 5, 5, 5, 5, 5, 5 };
	struct bisect_dag a, b;
	struct bisect_state sa, sb;
	struct bisect_choice ca, cb;

	make_dag(&a, 8, merge_parents, merge_np, dates);
	make_dag(&b, 8, merge_parents, merge_np, dates);
	bisect_state_init(&sa, &a, 7);
	bisect_state_init(&sb, &b, 7);
	bisect_choose(&a, &sa, &ca);
	bisect_choose(&b, &sb, &cb);
	assert_int_equal(ca.commit, cb.commit);
	bisect_state_release(&sa);
	bisect_state_release(&sb);
	bisect_dag_release(&a);
	bisect_dag_release(&b);
}

static void test_bisect__skips_unbuildable_commit_and_never_offers_it_again(void **state)
{
	struct bisect_dag dag;

	linear(&dag, 32);
	for (int culprit = 0; culprit < 32; culprit++) {
		/* skip two commits away from the culprit: still found */
		int skips[2], nsk = 0, found = -1, steps;
		for (int s = 0; s < 32 && nsk < 2; s++)
			if (s != culprit && s != culprit - 1 && s != 31 && (s * 7) % 5 == 0)
				skips[nsk++] = s;
		assert_int_equal(simulate(&dag, 31, culprit, skips, nsk, &found, &steps, NULL), BISECT_FOUND);
		assert_int_equal(found, culprit);
	}
	bisect_dag_release(&dag);
}

static void test_bisect__skipped_culprit_leaves_only_skipped_candidates(void **state)
{
	struct bisect_dag dag;
	struct bisect_choice last;
	int skips[] = { 5 }, found, steps;

	linear(&dag, 10);
	assert_int_equal(simulate(&dag, 9, 5, skips, 1, &found, &steps, &last), BISECT_SKIPPED_ONLY);
	/* "could be any of": the skipped 5 and the first bad 6 */
	assert_int_equal(last.nr_candidates, 2);
	assert_true((last.candidates[0] == 5 && last.candidates[1] == 6) ||
		    (last.candidates[0] == 6 && last.candidates[1] == 5));
	bisect_choice_release(&last);
	bisect_dag_release(&dag);
}

static void test_bisect__first_parent_names_the_merge(void **state)
{
	struct bisect_dag dag;

	make_dag(&dag, 8, merge_parents, merge_np, NULL);
	dag.first_parent = 1;
	/* culprit 4 is on the side branch: along first parents 0-1-2-6-7
	 * the first bad commit is the merge 6.  (With first-parent the
	 * side commits are not in a real DAG load; here they are present
	 * but unreachable through first parents.) */
	{
		int found = -1, steps;
		struct bisect_state st;
		bisect_state_init(&st, &dag, 7);
		for (;;) {
			struct bisect_choice ch;
			bisect_choose(&dag, &st, &ch);
			if (ch.outcome != BISECT_TEST) {
				assert_int_equal(ch.outcome, BISECT_FOUND);
				found = ch.commit;
				bisect_choice_release(&ch);
				break;
			}
			assert_true(ch.commit != 3 && ch.commit != 4 && ch.commit != 5);
			/* full reachability decides: 6 and 7 contain 4 */
			bisect_mark(&st, ch.commit, reaches(&dag, ch.commit, 4, 0) ? BISECT_BAD : BISECT_GOOD);
			bisect_choice_release(&ch);
		}
		(void)steps;
		assert_int_equal(found, 6);
		bisect_state_release(&st);
	}
	bisect_dag_release(&dag);
}

static void test_bisect__all_treesame_means_nothing_testable(void **state)
{
	struct bisect_dag dag;
	struct bisect_state st;
	struct bisect_choice ch;

	linear(&dag, 5);
	for (int i = 0; i < 5; i++)
		dag.commits[i].flags |= BISECT_TREESAME;
	bisect_state_init(&st, &dag, 4);
	bisect_choose(&dag, &st, &ch);
	assert_int_equal(ch.outcome, BISECT_NO_TESTABLE);
	bisect_state_release(&st);
	bisect_dag_release(&dag);
}

static void test_bisect__treesame_commits_are_never_offered(void **state)
{
	struct bisect_dag dag;

	linear(&dag, 20);
	for (int i = 0; i < 20; i += 2)
		dag.commits[i].flags |= BISECT_TREESAME;
	/* culprits can only be commits that touch the paths */
	for (int culprit = 1; culprit < 20; culprit += 2) {
		struct bisect_state st;
		int found = -1;
		bisect_state_init(&st, &dag, 19);
		for (;;) {
			struct bisect_choice ch;
			bisect_choose(&dag, &st, &ch);
			if (ch.outcome != BISECT_TEST) {
				found = ch.commit;
				bisect_choice_release(&ch);
				break;
			}
			assert_int_equal(ch.commit % 2, 1);
			bisect_mark(&st, ch.commit, ch.commit >= culprit ? BISECT_BAD : BISECT_GOOD);
			bisect_choice_release(&ch);
		}
		assert_int_equal(found, culprit);
		bisect_state_release(&st);
	}
	bisect_dag_release(&dag);
}

static void test_bisect__estimate_steps_matches_git(void **state)
{
	/* values git prints for these candidate counts */
	assert_int_equal(bisect_estimate_steps(1), 0);
	assert_int_equal(bisect_estimate_steps(2), 0);
	assert_int_equal(bisect_estimate_steps(3), 1);
	assert_int_equal(bisect_estimate_steps(8), 2);
	assert_int_equal(bisect_estimate_steps(11), 3);
	assert_int_equal(bisect_estimate_steps(1024), 9);
	assert_int_equal(bisect_estimate_steps(1500), 10);
}

static void test_bisect__dag_find(void **state)
{
	struct bisect_dag dag;
	unsigned char oid[20] = { 0 };

	linear(&dag, 4);
	oid[0] = 255 - 2;
	oid[1] = 2;
	assert_int_equal(bisect_dag_find(&dag, oid), 2);
	oid[1] = 77;
	assert_int_equal(bisect_dag_find(&dag, oid), -1);
	bisect_dag_release(&dag);
}


/* ---- multisection ------------------------------------------------------- */

/* A whole multisection against the culprit oracle: each round tests
 * bisect_choose_k's commits and records them with bisect_mark_round.
 * flip: a commit whose verdict is inverted (a flaky test), -1 none. */
static enum bisect_outcome simulate_k(const struct bisect_dag *dag, int bad, int culprit, int k,
				      const int *skips, int nskips, int flip, int *found, int *rounds)
{
	struct bisect_state st;
	enum bisect_outcome out;
	int *commits = malloc((size_t)k * sizeof(int)), *ignored = malloc((size_t)k * sizeof(int));
	enum bisect_mark *marks = malloc((size_t)k * sizeof(*marks));

	bisect_state_init(&st, dag, bad);
	*rounds = 0;
	for (;;) {
		struct bisect_choice ch;
		int n = bisect_choose_k(dag, &st, k, &ch, commits);

		assert_true(*rounds < 200);
		if (ch.outcome != BISECT_TEST) {
			assert_int_equal(n, 0);
			out = ch.outcome;
			*found = ch.commit;
			bisect_choice_release(&ch);
			break;
		}
		assert_true(n >= 1 && n <= k);
		(*rounds)++;
		for (int i = 0; i < n; i++) {
			int skip = 0;
			/* distinct, undecided, never the bad one */
			assert_int_equal(st.marks[commits[i]], BISECT_UNMARKED);
			assert_int_not_equal(commits[i], st.bad);
			for (int j = 0; j < i; j++)
				assert_int_not_equal(commits[i], commits[j]);
			for (int j = 0; j < nskips; j++)
				skip |= skips[j] == commits[i];
			if (skip)
				marks[i] = BISECT_SKIP;
			else
				marks[i] = reaches(dag, commits[i], culprit, dag->first_parent) ^ (commits[i] == flip)
						   ? BISECT_BAD : BISECT_GOOD;
		}
		bisect_mark_round(dag, &st, commits, marks, n, ignored);
		bisect_choice_release(&ch);
	}
	bisect_state_release(&st);
	free(commits);
	free(ignored);
	free(marks);
	return out;
}

static int ceil_log(int n, int base)
{
	int r = 0;
	for (long p = 1; p < n; p *= base)
		r++;
	return r;
}

static void test_multisect__k1_is_exactly_bisect_choose(void **state)
{
	static const int sizes[] = { 2, 3, 10, 37, 100 };
	struct bisect_dag dag;

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct bisect_state st;
		struct bisect_choice a, b;
		int c = -1;

		linear(&dag, sizes[s]);
		bisect_state_init(&st, &dag, sizes[s] - 1);
		bisect_choose(&dag, &st, &a);
		assert_int_equal(bisect_choose_k(&dag, &st, 1, &b, &c), a.outcome == BISECT_TEST);
		assert_int_equal(a.outcome, b.outcome);
		assert_int_equal(a.commit, b.commit);
		assert_int_equal(a.remaining, b.remaining);
		assert_int_equal(a.steps, b.steps);
		if (a.outcome == BISECT_TEST)
			assert_int_equal(c, a.commit);
		bisect_choice_release(&a);
		bisect_choice_release(&b);
		bisect_state_release(&st);
		bisect_dag_release(&dag);
	}
	/* and with merges */
	make_dag(&dag, 8, merge_parents, merge_np, NULL);
	{
		struct bisect_state st;
		struct bisect_choice a, b;
		int c = -1;
		bisect_state_init(&st, &dag, 7);
		bisect_choose(&dag, &st, &a);
		assert_int_equal(bisect_choose_k(&dag, &st, 1, &b, &c), 1);
		assert_int_equal(c, a.commit);
		bisect_choice_release(&a);
		bisect_choice_release(&b);
		bisect_state_release(&st);
	}
	bisect_dag_release(&dag);
}

/* Linear history of 40 (weights 1..40, commit i has weight i+1): k
 * commits at about i*40/(k+1). */
static void test_multisect__linear_picks_split_evenly(void **state)
{
	static const struct {
		int n, k, want[3];
	} cases[] = {
		{ 40, 2, { 12, 26 } },		/* weights 13.3, 26.7 -> 13, 27 */
		{ 40, 3, { 9, 19, 29 } },	/* weights 10, 20, 30 */
		{ 9, 2, { 2, 5 } },		/* weights 3, 6 */
		{ 3, 2, { 0, 1 } },		/* two testable commits */
		{ 3, 3, { 0, 1 } },		/* fewer left than slots */
	};
	for (size_t t = 0; t < sizeof(cases) / sizeof(cases[0]); t++) {
		struct bisect_dag dag;
		struct bisect_state st;
		struct bisect_choice ch;
		int commits[3], n, expect_n = cases[t].n - 1 < cases[t].k ? cases[t].n - 1 : cases[t].k;

		linear(&dag, cases[t].n);
		bisect_state_init(&st, &dag, cases[t].n - 1);
		n = bisect_choose_k(&dag, &st, cases[t].k, &ch, commits);
		assert_int_equal(n, expect_n);
		assert_int_equal(ch.outcome, BISECT_TEST);
		for (int i = 0; i < n; i++)
			assert_int_equal(commits[i], cases[t].want[i]);
		/* the same again: deterministic */
		bisect_choice_release(&ch);
		{
			int again[3];
			assert_int_equal(bisect_choose_k(&dag, &st, cases[t].k, &ch, again), n);
			assert_memory_equal(again, commits, (size_t)n * sizeof(int));
			bisect_choice_release(&ch);
		}
		bisect_state_release(&st);
		bisect_dag_release(&dag);
	}
}

static void test_multisect__linear_rounds_fall_to_log_k_plus_1(void **state)
{
	static const int sizes[] = { 8, 27, 40, 64, 100, 243 };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct bisect_dag dag;
		int n = sizes[s];

		linear(&dag, n);
		for (int k = 1; k <= 3; k++) {
			int worst = 0, total = 0;
			for (int culprit = 0; culprit < n; culprit++) {
				int found = -1, rounds;
				assert_int_equal(simulate_k(&dag, n - 1, culprit, k, NULL, 0, -1, &found, &rounds),
						 BISECT_FOUND);
				assert_int_equal(found, culprit);
				total += rounds;
				if (rounds > worst)
					worst = rounds;
			}
			/* an even split needs ceil(log_(k+1) n) rounds */
			assert_true(worst <= ceil_log(n, k + 1));
			assert_true(total <= n * ceil_log(n, k + 1));
			if (k > 1)
				print_message("linear %3d, k=%d: worst %d rounds, mean %.2f (ceil log%d: %d)\n", n, k,
					      worst, (double)total / n, k + 1, ceil_log(n, k + 1));
		}
		bisect_dag_release(&dag);
	}
}

static void test_multisect__merges_find_every_culprit(void **state)
{
	struct bisect_dag dag;
	static const int parents[][4] = { { -1 }, { 0 }, { 0 }, { 1, 2 }, { 2, 1 }, { 3, 4 }, { 5 } };
	static const int np[] = { 1, 1, 1, 2, 2, 2, 1 };

	make_dag(&dag, 8, merge_parents, merge_np, NULL);
	for (int k = 2; k <= 3; k++)
		for (int culprit = 0; culprit < 8; culprit++) {
			int found = -1, rounds;
			assert_int_equal(simulate_k(&dag, 7, culprit, k, NULL, 0, -1, &found, &rounds), BISECT_FOUND);
			assert_int_equal(found, culprit);
			assert_true(rounds <= 3);
		}
	bisect_dag_release(&dag);
	make_dag(&dag, 7, parents, np, NULL);
	for (int k = 2; k <= 3; k++)
		for (int culprit = 0; culprit < 7; culprit++) {
			int found = -1, rounds;
			assert_int_equal(simulate_k(&dag, 6, culprit, k, NULL, 0, -1, &found, &rounds), BISECT_FOUND);
			assert_int_equal(found, culprit);
		}
	bisect_dag_release(&dag);
}

static void test_multisect__skipped_commits_are_never_offered(void **state)
{
	struct bisect_dag dag;

	linear(&dag, 32);
	for (int k = 2; k <= 3; k++)
		for (int culprit = 0; culprit < 32; culprit++) {
			int skips[3], nsk = 0, found = -1, rounds;
			for (int s = 0; s < 31 && nsk < 3; s++)
				if (s != culprit && s != culprit - 1 && (s * 7) % 5 == 0)
					skips[nsk++] = s;
			assert_int_equal(simulate_k(&dag, 31, culprit, k, skips, nsk, -1, &found, &rounds),
					 BISECT_FOUND);
			assert_int_equal(found, culprit);
		}
	/* a skipped culprit: only skipped commits left, as with k = 1 */
	{
		int skips[] = { 5 }, found, rounds;
		assert_int_equal(simulate_k(&dag, 31, 5, 2, skips, 1, -1, &found, &rounds), BISECT_SKIPPED_ONLY);
	}
	bisect_dag_release(&dag);
}

static void test_multisect__good_above_bad_in_one_round_first_bad_wins(void **state)
{
	struct bisect_dag dag;
	struct bisect_state st;
	int commits[3] = { 3, 6, 8 }, ignored[3];
	enum bisect_mark marks[3] = { BISECT_BAD, BISECT_GOOD, BISECT_BAD };

	linear(&dag, 10);
	bisect_state_init(&st, &dag, 9);
	/* 6 good above 3 bad: git would refuse; 3 wins, 6 is not recorded */
	assert_int_equal(bisect_mark_round(&dag, &st, commits, marks, 3, ignored), 1);
	assert_int_equal(st.bad, 3);
	assert_int_equal(ignored[1], 1);
	assert_int_not_equal(st.marks[6], BISECT_GOOD);
	bisect_state_release(&st);

	/* the bad ones in any order: the earliest wins */
	{
		int c2[2] = { 8, 3 }, ig2[2];
		enum bisect_mark m2[2] = { BISECT_BAD, BISECT_BAD };
		bisect_state_init(&st, &dag, 9);
		assert_int_equal(bisect_mark_round(&dag, &st, c2, m2, 2, ig2), 0);
		assert_int_equal(st.bad, 3);
		bisect_state_release(&st);
	}
	/* a flaky verdict in a simulation still ends on a commit */
	for (int culprit = 0; culprit < 10; culprit++) {
		int found = -1, rounds;
		enum bisect_outcome o = simulate_k(&dag, 9, culprit, 2, NULL, 0, 6, &found, &rounds);
		/* a wrong verdict gives a wrong culprit, but an end */
		assert_int_equal(o, BISECT_FOUND);
		assert_true(found >= 0 && found < 10);
	}
	bisect_dag_release(&dag);
}

static void test_multisect__estimate_rounds(void **state)
{
	assert_int_equal(bisect_estimate_rounds(1024, 1), bisect_estimate_steps(1024));
	assert_int_equal(bisect_estimate_rounds(1, 2), 0);
	assert_int_equal(bisect_estimate_rounds(3, 2), 0);	/* one round ends it */
	assert_int_equal(bisect_estimate_rounds(9, 2), 1);
	assert_int_equal(bisect_estimate_rounds(40, 2), 3);	/* 40 -> 14 -> 5 -> 2 -> 1 */
	assert_int_equal(bisect_estimate_rounds(64, 3), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bisect__linear_first_choice_is_halfway),
		cmocka_unit_test(test_bisect__linear_finds_every_culprit_in_log2_steps),
		cmocka_unit_test(test_bisect__single_candidate_is_the_culprit),
		cmocka_unit_test(test_bisect__next_both_is_the_choice_after_either_mark),
		cmocka_unit_test(test_bisect__merges_find_every_culprit),
		cmocka_unit_test(test_bisect__merge_weight_counts_shared_ancestors_once),
		cmocka_unit_test(test_bisect__criss_cross_finds_every_culprit),
		cmocka_unit_test(test_bisect__equal_dates_break_ties_like_git),
		cmocka_unit_test(test_bisect__skips_unbuildable_commit_and_never_offers_it_again),
		cmocka_unit_test(test_bisect__skipped_culprit_leaves_only_skipped_candidates),
		cmocka_unit_test(test_bisect__first_parent_names_the_merge),
		cmocka_unit_test(test_bisect__all_treesame_means_nothing_testable),
		cmocka_unit_test(test_bisect__treesame_commits_are_never_offered),
		cmocka_unit_test(test_bisect__estimate_steps_matches_git),
		cmocka_unit_test(test_bisect__dag_find),
		cmocka_unit_test(test_multisect__k1_is_exactly_bisect_choose),
		cmocka_unit_test(test_multisect__linear_picks_split_evenly),
		cmocka_unit_test(test_multisect__linear_rounds_fall_to_log_k_plus_1),
		cmocka_unit_test(test_multisect__merges_find_every_culprit),
		cmocka_unit_test(test_multisect__skipped_commits_are_never_offered),
		cmocka_unit_test(test_multisect__good_above_bad_in_one_round_first_bad_wins),
		cmocka_unit_test(test_multisect__estimate_rounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
