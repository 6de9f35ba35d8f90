/* Unit tests of the bisection choice on hand-made DAGs: linear, merges,
 * criss-cross, skips, first-parent, path-limited (TREESAME). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bisect__linear_first_choice_is_halfway),
		cmocka_unit_test(test_bisect__linear_finds_every_culprit_in_log2_steps),
		cmocka_unit_test(test_bisect__single_candidate_is_the_culprit),
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
