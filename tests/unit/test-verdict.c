/* Unit tests of orchestrator/verdict.c: reproduce-or-refuse, good/bad/
 * ambiguous classification, robustness to slow runs of a shared host,
 * the evidence text, and simulated bisections (tests/sim/bisect-sim.c,
 * fixed seed) that must rarely blame the wrong commit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "verdict.h"
#include "util/strbuf.h"
#include "../sim/bisect-sim.h"

static struct verdict_policy policy;

static int setup(void **state)
{
	verdict_policy_init(&policy);
	return 0;
}

/* Reference ends of a throughput KPI: good about 1000, bad about 800
 * (-20%), 0.5% noise. */
static const double good5[] = { 1000, 1005, 995, 1002, 998 };
static const double bad5[] = { 800, 804, 796, 801, 799 };

static void test_verdict__ladder_steps_up_to_the_cap(void **state)
{
	assert_int_equal(verdict_policy_cap(&policy), 12);
	assert_int_equal(verdict_next_runs(&policy, 2, 3), 3);
	assert_int_equal(verdict_next_runs(&policy, 3, 4), 5);
	assert_int_equal(verdict_next_runs(&policy, 3, 7), 8);
	assert_int_equal(verdict_next_runs(&policy, 8, 30), 12);
	assert_int_equal(verdict_next_runs(&policy, 12, 13), 0);
}

static void test_verdict__clear_regression_reproduces(void **state)
{
	/* the demo regression (docs: about 9,300/s against 265/s) */
	static const double good[] = { 9300, 9288, 9310 }, bad[] = { 265, 270, 262 };
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, good, 3, bad, 3, +1), 0);
	assert_int_equal(v.kind, VERDICT_REPRODUCED);
	assert_string_equal(v.rule, "regression");
	assert_true(fabs(v.change_percent - 100.0 * (265 - 9300) / 9300) < 1e-9);
	assert_true(v.z_gap > v.threshold);
	assert_non_null(strstr(v.text, "regression reproduced"));
}

static void test_verdict__noise_is_not_reproduced(void **state)
{
	static const double good[] = { 1000, 1010, 990 }, bad[] = { 1005, 995, 1002 };
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, good, 3, bad, 3, +1), 0);
	assert_int_equal(v.kind, VERDICT_NOT_REPRODUCED);
	assert_string_equal(v.rule, "not-significant");
	assert_non_null(strstr(v.text, "regression not reproduced"));
	/* the numbers are in the refusal */
	assert_non_null(strstr(v.text, "1000"));
	assert_non_null(strstr(v.text, "1002"));
}

static void test_verdict__improvement_is_refused_as_reversed(void **state)
{
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, bad5, 5, good5, 5, +1), 0);
	assert_int_equal(v.kind, VERDICT_NOT_REPRODUCED);
	assert_string_equal(v.rule, "reversed");
}

static void test_verdict__lower_is_better_reads_a_rise_as_the_regression(void **state)
{
	static const double good[] = { 10.0, 10.1, 9.9, 10.05, 9.95 }, bad[] = { 12.0, 12.1, 11.9, 12.05, 11.95 };
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, good, 5, bad, 5, -1), 0);
	assert_int_equal(v.kind, VERDICT_REPRODUCED);
	assert_int_equal(verdict_reproduce(&v, &policy, good, 5, bad, 5, +1), 0);
	assert_int_equal(v.kind, VERDICT_NOT_REPRODUCED);
	assert_string_equal(v.rule, "reversed");

	/* and a commit at 10.02 is good under -1 */
	static const double cand[] = { 10.02, 9.98 };
	assert_int_equal(verdict_classify(&v, &policy, good, 5, bad, 5, cand, 2, -1), 0);
	assert_int_equal(v.kind, VERDICT_GOOD);
}

static void test_verdict__real_but_tiny_change_is_below_the_minimum(void **state)
{
	static const double good[] = { 1000, 1000.1, 999.9, 1000.05, 999.95 },
			    bad[] = { 995, 995.1, 994.9, 995.05, 994.95 };
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, good, 5, bad, 5, +1), 0);
	assert_int_equal(v.kind, VERDICT_NOT_REPRODUCED);
	assert_string_equal(v.rule, "below-minimum");
	policy.min_change_percent = 0.2;
	assert_int_equal(verdict_reproduce(&v, &policy, good, 5, bad, 5, +1), 0);
	assert_int_equal(v.kind, VERDICT_REPRODUCED);
}

static void test_verdict__unclear_ends_ask_for_more_runs(void **state)
{
	/* -4% with about 3% noise: suggestive, not yet clear */
	static const double good[] = { 1000, 1030, 975 }, bad[] = { 960, 990, 935 };
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, good, 3, bad, 3, +1), 0);
	assert_int_equal(v.kind, VERDICT_NEED_MORE);
	assert_int_equal(v.next_runs, 5);
}

static void test_verdict__slow_run_of_an_end_is_listed_and_earns_runs(void **state)
{
	/* ENVIRONMENT.md: 5,506/s in one boot, 9,288/s in the next */
	static const double good[] = { 9300, 9288, 5506 }, bad[] = { 265, 270, 262 };
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, good, 3, bad, 3, +1), 0);
	assert_int_equal(v.kind, VERDICT_NEED_MORE);
	assert_string_equal(v.rule, "outliers");
	assert_int_equal(v.next_runs, 5);
	assert_int_equal(v.n_outliers, 1);
	assert_int_equal(v.outliers[0].set, VERDICT_SET_GOOD);
	assert_int_equal(v.outliers[0].index, 2);
	assert_true(v.outliers[0].sigmas < -4);
}

static void test_verdict__clear_commits_need_only_two_or_three_runs(void **state)
{
	static const double g[] = { 1001, 999 }, b[] = { 801, 799, 800 };
	struct verdict v;

	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, g, 2, +1), 0);
	assert_int_equal(v.kind, VERDICT_GOOD);
	assert_string_equal(v.rule, "like-good");
	assert_true(v.position < 0.1);
	/* a slow host only ever makes runs look bad: two are not enough */
	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, b, 2, +1), 0);
	assert_int_equal(v.kind, VERDICT_NEED_MORE);
	assert_string_equal(v.rule, "bad-needs-runs");
	assert_int_equal(v.next_runs, 3);
	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, b, 3, +1), 0);
	assert_int_equal(v.kind, VERDICT_BAD);
	assert_string_equal(v.rule, "like-bad");
	assert_true(v.position > 0.9);
}

static void test_verdict__one_slow_run_does_not_flip_a_good_commit(void **state)
{
	double c[] = { 1001, 600, 998, 1003, 997 };
	struct verdict v;

	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, c, 3, +1), 0);
	assert_int_not_equal(v.kind, VERDICT_BAD);
	assert_int_equal(v.n_outliers, 1);
	assert_int_equal(v.outliers[0].set, VERDICT_SET_CANDIDATE);
	assert_int_equal(v.outliers[0].index, 1);
	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, c, 5, +1), 0);
	assert_int_equal(v.kind, VERDICT_GOOD);
	assert_int_equal(v.n_outliers, 1);	/* shown, not hidden */
}

static void test_verdict__two_slow_runs_do_not_flip_a_good_commit(void **state)
{
	/* two slow runs in a row (-45%, -40%) then ordinary ones */
	double c[] = { 550, 600, 1001, 999, 1003, 998, 1002, 1000 };
	struct verdict v;
	size_t n = 2;

	for (;;) {
		assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, c, n, +1), 0);
		assert_int_not_equal(v.kind, VERDICT_BAD);
		if (v.kind != VERDICT_NEED_MORE)
			break;
		assert_true(v.next_runs <= ARRAY_SIZE(c));
		n = v.next_runs;
	}
	assert_int_equal(v.kind, VERDICT_GOOD);
	assert_int_equal(v.n_outliers, 2);
}

static void test_verdict__two_slow_runs_do_not_flip_a_bad_commit_either(void **state)
{
	/* slow runs make a bad commit look worse, never good */
	static const double c[] = { 450, 800, 480, 802, 798, 801, 799, 800 };
	struct verdict v;
	size_t n = 2;

	for (;;) {
		assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, c, n, +1), 0);
		assert_int_not_equal(v.kind, VERDICT_GOOD);
		if (v.kind != VERDICT_NEED_MORE)
			break;
		assert_true(v.next_runs <= ARRAY_SIZE(c));
		n = v.next_runs;
	}
	assert_int_equal(v.kind, VERDICT_BAD);
	/* two outliers need 2 * 2 + 3 runs: the ladder gives 8 */
	assert_int_equal(n, 8);
}

static void test_verdict__halfway_commit_is_skipped_as_ambiguous_at_the_cap(void **state)
{
	/* a commit at 900 (half the regression) is apart from both ends */
	double c[12];
	struct verdict v;

	for (size_t i = 0; i < 12; i++)
		c[i] = 900 + (i % 3) - 1.0;
	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, c, 3, +1), 0);
	assert_int_equal(v.kind, VERDICT_NEED_MORE);
	assert_string_equal(v.rule, "ambiguous");
	assert_int_equal(v.next_runs, 5);
	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, c, 12, +1), 0);
	assert_int_equal(v.kind, VERDICT_SKIP);
	assert_string_equal(v.rule, "ambiguous");
	assert_non_null(strstr(v.text, "apart from both ends"));
	assert_true(fabs(v.position - 0.5) < 0.05);
}

static void test_verdict__evidence_is_formatted_for_bisect_show(void **state)
{
	static const double c[] = { 1001, 600, 998, 1003, 997 };
	struct strbuf sb = STRBUF_INIT;
	struct verdict v;

	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, c, 5, +1), 0);
	verdict_format(&sb, &v);
	assert_non_null(strstr(sb.buf, "verdict: good (rule like-good)\n"));
	assert_non_null(strstr(sb.buf, "commit: median 998 of 5 runs"));
	assert_non_null(strstr(sb.buf, "position"));
	assert_non_null(strstr(sb.buf, "Mann-Whitney: U"));
	assert_non_null(strstr(sb.buf, "Kolmogorov-Smirnov: D"));
	assert_non_null(strstr(sb.buf, "outlier: commit run 2 = 600"));
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	strbuf_reset(&sb);

	assert_int_equal(verdict_reproduce(&v, &policy, good5, 5, bad5, 5, +1), 0);
	verdict_format(&sb, &v);
	assert_non_null(strstr(sb.buf, "verdict: reproduced (rule regression)\n"));
	assert_non_null(strstr(sb.buf, "bad end against good end"));
	strbuf_release(&sb);
}

static void test_verdict__rejects_bad_input(void **state)
{
	double nan_run[] = { 1000, NAN };
	struct verdict v;

	assert_int_equal(verdict_reproduce(&v, &policy, good5, 5, bad5, 5, 0), -1);
	assert_int_equal(verdict_reproduce(&v, &policy, good5, 0, bad5, 5, 1), -1);
	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, nan_run, 2, 1), -1);
	assert_int_equal(verdict_classify(&v, &policy, good5, 5, bad5, 5, nan_run, 0, 1), -1);
}

static void test_verdict__zero_and_negative_kpis_compare_linearly(void **state)
{
	static const double good[] = { 0, 1, -1, 0.5, -0.5 }, bad[] = { -20, -19, -21, -20.5, -19.5 };
	static const double c[] = { -20.2, -19.9, -20.1 };
	struct verdict v;

	assert_int_equal(verdict_classify(&v, &policy, good, 5, bad, 5, c, 3, +1), 0);
	assert_false(v.log_scale);
	assert_int_equal(v.kind, VERDICT_BAD);
}

/* The simulated bisections: every cell has effect >= 4 x CV; over all
 * of them at most 1% may end on the wrong commit, almost all must end
 * on the right one, and the adaptive policy must spend at most 60% of
 * the runs per step of a fixed 5. */
static void test_verdict__simulated_bisections_rarely_blame_the_wrong_commit(void **state)
{
	static const struct { double effect, cv; } cells[] = {
		{ 5, 1 }, { 10, 2 }, { 20, 5 }, { 50, 10 },
	};
	static const enum sim_dist dists[] = { SIM_NORMAL, SIM_LOGNORMAL, SIM_NORMAL_SLOW, SIM_LOGNORMAL_SLOW };
	struct sim_result all = { 0 };
	struct sim_rng rng;

	sim_rng_seed(&rng, 20261130);
	for (size_t d = 0; d < ARRAY_SIZE(dists); d++) {
		for (size_t i = 0; i < ARRAY_SIZE(cells); i++) {
			struct sim_cell cell = {
				.dist = dists[d], .effect_percent = cells[i].effect, .cv_percent = cells[i].cv,
				.direction = i % 2 ? -1 : +1, .bisections = 70, .commits = 30,
				.slow_rate = 0.03, .repeat = 3,
			};
			struct sim_result r = { 0 };

			sim_run_cell(&r, &policy, &cell, &rng);
			printf("# %-15s effect %2.0f%% cv %2.0f%% dir %+d: wrong %zu right %zu inconclusive %zu "
			       "refused %zu of %zu; %.2f runs per step (fixed 5: wrong %zu)\n",
			       sim_dist_name(dists[d]), cell.effect_percent, cell.cv_percent, cell.direction,
			       r.wrong, r.correct, r.inconclusive, r.refused, r.bisections,
			       (double)r.step_runs / (double)r.steps, r.fixed_wrong);
			all.bisections += r.bisections;
			all.wrong += r.wrong;
			all.correct += r.correct;
			all.steps += r.steps;
			all.step_runs += r.step_runs;
			all.fixed_wrong += r.fixed_wrong;
		}
	}
	printf("# %zu bisections: %zu wrong, %zu right; %.2f runs per step (fixed 5: %zu wrong)\n",
	       all.bisections, all.wrong, all.correct, (double)all.step_runs / (double)all.steps,
	       all.fixed_wrong);
	assert_true(all.bisections >= 1000);
	assert_true(all.wrong * 100 <= all.bisections);
	assert_true(all.correct * 100 >= all.bisections * 95);
	assert_true((double)all.step_runs / (double)all.steps <= 0.6 * 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_verdict__ladder_steps_up_to_the_cap, setup),
		cmocka_unit_test_setup(test_verdict__clear_regression_reproduces, setup),
		cmocka_unit_test_setup(test_verdict__noise_is_not_reproduced, setup),
		cmocka_unit_test_setup(test_verdict__improvement_is_refused_as_reversed, setup),
		cmocka_unit_test_setup(test_verdict__lower_is_better_reads_a_rise_as_the_regression, setup),
		cmocka_unit_test_setup(test_verdict__real_but_tiny_change_is_below_the_minimum, setup),
		cmocka_unit_test_setup(test_verdict__unclear_ends_ask_for_more_runs, setup),
		cmocka_unit_test_setup(test_verdict__slow_run_of_an_end_is_listed_and_earns_runs, setup),
		cmocka_unit_test_setup(test_verdict__clear_commits_need_only_two_or_three_runs, setup),
		cmocka_unit_test_setup(test_verdict__one_slow_run_does_not_flip_a_good_commit, setup),
		cmocka_unit_test_setup(test_verdict__two_slow_runs_do_not_flip_a_good_commit, setup),
		cmocka_unit_test_setup(test_verdict__two_slow_runs_do_not_flip_a_bad_commit_either, setup),
		cmocka_unit_test_setup(test_verdict__halfway_commit_is_skipped_as_ambiguous_at_the_cap, setup),
		cmocka_unit_test_setup(test_verdict__evidence_is_formatted_for_bisect_show, setup),
		cmocka_unit_test_setup(test_verdict__rejects_bad_input, setup),
		cmocka_unit_test_setup(test_verdict__zero_and_negative_kpis_compare_linearly, setup),
		cmocka_unit_test_setup(test_verdict__simulated_bisections_rarely_blame_the_wrong_commit, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
