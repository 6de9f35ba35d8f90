/* Unit tests of orchestrator/core/compare.c on hand-made run sets: LKP's rule
 * for a real change (ranges apart, the gap rule from 3 runs, the 1% / 5%
 * floors) and the rank by significance, not by %change. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compare.h"
#include "util/util.h"

#define STAT(n, x, y, p) { n, x, y, ARRAY_SIZE(x), ARRAY_SIZE(y), p }

/* compare_sets(s), which must keep nr rows; caller frees them. */
static struct compare_row *compared(const struct compare_stat *s, size_t nr_s, size_t nr)
{
	struct compare_row *rows;
	size_t got;

	compare_sets(s, nr_s, &rows, &got);
	assert_int_equal(got, nr);
	return rows;
}

/* issue 18: noise (±173%, +850%) over a clean counter that appears */
static const double softirq_a[] = { 0, 0, 30 }, softirq_b[] = { 90, 95, 100 };
static const double thp_a[] = { 0, 0, 0 }, thp_b[] = { 1180, 1183, 1186 };
static const double kpi_a[] = { 164000, 165000, 166000 }, kpi_b[] = { 7400, 7433, 7466 };

static void test_compare__noise_ranks_below_a_clean_new_counter(void **state)
{
	const struct compare_stat s[] = {
		STAT("stat.cpu.softirq", softirq_a, softirq_b, 0),
		STAT("vmstat.thp_fault_alloc", thp_a, thp_b, 0),
		STAT("will-it-scale.per_process_ops", kpi_a, kpi_b, 1),
	};
	const size_t nr = 3;
	struct compare_row *rows = compared(s, ARRAY_SIZE(s), nr);
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* by %change softirq (+850%) would beat the KPI (-95.5%) */
	assert_string_equal(rows[0].name, "vmstat.thp_fault_alloc");
	assert_string_equal(rows[1].name, "will-it-scale.per_process_ops");
	assert_string_equal(rows[2].name, "stat.cpu.softirq");
	assert_true(isinf(rows[0].change));
	assert_true(fabs(rows[2].change - 850) < 1e-9);
	assert_true(fabs(rows[2].cv_a - 173.2) < 0.1);
	compare_format(&sb, rows, nr, "parent", "culprit", 0, "  ");
	printf("%s", sb.buf);
	assert_non_null(strstr(sb.buf, "new"));
	assert_non_null(strstr(sb.buf, "±173%"));
	assert_true(strstr(sb.buf, "thp_fault_alloc") < strstr(sb.buf, "stat.cpu.softirq"));
	strbuf_setlen(&sb, 0);
	compare_summary(&sb, rows, nr, 3, "  ");
	printf("%s", sb.buf);
	assert_non_null(strstr(sb.buf, "vmstat     vmstat.thp_fault_alloc 0 -> 1183\n"));
	assert_null(strstr(sb.buf, "per_process_ops"));	/* no monitor family */
	strbuf_release(&sb);
	free(rows);
}

/* The demo's bisect show ranked vmstat.thp_fault_alloc (0 -> 2502 ±4%)
 * ninth, below busier counters whose ranges were as far apart for their
 * spread: a counter the parent never had comes first. */
static void test_compare__a_counter_from_zero_outranks_busier_ones(void **state)
{
	static const double local_a[] = { 118600, 122203, 125800 }, local_b[] = { 12440, 12565, 12690 };
	static const double thp2_a[] = { 0, 0, 0, 0 }, thp2_b[] = { 2400, 2502, 2604, 2450 };
	const struct compare_stat s[] = {
		STAT("numa-vmstat.node0.numa_local", local_a, local_b, 0),
		STAT("vmstat.thp_fault_alloc", thp2_a, thp2_b, 0),
	};
	struct compare_row *rows = compared(s, ARRAY_SIZE(s), 2);

	(void)state;
	assert_true(rows[0].score > 0 && rows[1].score > 0);
	assert_string_equal(rows[0].name, "vmstat.thp_fault_alloc");
	free(rows);
}

static void test_compare__overlapping_ranges_are_dropped(void **state)
{
	static const double a[] = { 100, 150, 200 }, b[] = { 190, 250, 300 };
	const struct compare_stat s = STAT("vmstat.pgfault", a, b, 0);
	struct compare_row r;

	(void)state;
	/* +52% of the mean, but 190 < 200 */
	assert_false(compare_stat_changed(&s, &r));
	assert_true(r.change > 50);
	assert_true(r.gap < 0);
}

static void test_compare__changes_under_the_floor_are_dropped(void **state)
{
	static const double a[] = { 1000, 1000, 1000 }, b[] = { 1005, 1005, 1005 };	/* +0.5% */
	static const double c[] = { 1030, 1030, 1030 };					/* +3% */
	const struct compare_stat half = STAT("will-it-scale.per_process_ops", a, b, 1);
	const struct compare_stat three_perf = STAT("will-it-scale.per_process_ops", a, c, 1);
	const struct compare_stat three_mon = STAT("meminfo.AnonPages", a, c, 0);

	(void)state;
	assert_false(compare_stat_changed(&half, NULL));
	assert_true(compare_stat_changed(&three_perf, NULL));	/* >= 1% for a perf stat */
	assert_false(compare_stat_changed(&three_mon, NULL));	/* < 5% for a monitor */
}

static void test_compare__gap_rule_needs_three_runs_each(void **state)
{
	/* apart by 2 for a change of 22: noise that happened not to overlap */
	static const double a[] = { 80, 90, 100 }, b[] = { 102, 112, 122 };
	static const double a2[] = { 90, 100 }, b2[] = { 102, 112 };
	static const double b3[] = { 125, 135, 145 };	/* apart by 25 > 45 / 2 */
	static const double b4[] = { 120, 130, 140 };	/* apart by 20 = 40 / 2: not more */
	const struct compare_stat three = STAT("vmstat.pgalloc_normal", a, b, 0);
	const struct compare_stat two = STAT("vmstat.pgalloc_normal", a2, b2, 0);
	const struct compare_stat wide = STAT("vmstat.pgalloc_normal", a, b3, 0);
	const struct compare_stat edge = STAT("vmstat.pgalloc_normal", a, b4, 0);

	(void)state;
	assert_false(compare_stat_changed(&three, NULL));
	assert_true(compare_stat_changed(&two, NULL));	/* 2 runs: the ranges alone */
	assert_true(compare_stat_changed(&wide, NULL));
	assert_false(compare_stat_changed(&edge, NULL));
}

static void test_compare__constant_small_counters_do_not_outrank_real_ones(void **state)
{
	static const double z[] = { 0, 0, 0 }, one[] = { 1, 1, 1 }, three[] = { 3, 3, 3 };
	const struct compare_stat by_one = STAT("vmstat.compact_fail", z, one, 0);
	const struct compare_stat s[] = {
		STAT("vmstat.compact_stall", z, three, 0),
		STAT("vmstat.thp_fault_alloc", thp_a, thp_b, 0),
	};
	struct compare_row *rows;

	(void)state;
	assert_false(compare_stat_changed(&by_one, NULL));	/* whole counts apart by 1 */
	rows = compared(s, ARRAY_SIZE(s), 2);
	assert_string_equal(rows[0].name, "vmstat.thp_fault_alloc");
	assert_true(isfinite(rows[1].score));
	free(rows);
}

static void test_compare__nothing_changed_gives_no_rows(void **state)
{
	static const double a[] = { 5, 6, 7 };
	const struct compare_stat s[] = { STAT("vmstat.nr_free_pages", a, a, 0), { "empty", NULL, a, 0, 3, 0 } };
	struct compare_row *rows = compared(s, ARRAY_SIZE(s), 0);

	(void)state;
	assert_null(rows);
}

static void test_compare__summary_groups_by_family(void **state)
{
	static const double a[] = { 10, 11, 12 }, b[] = { 100, 101, 102 };
	const struct compare_stat s[] = {
		STAT("interrupts.CPU0.CAL:Function_call_interrupts", a, b, 0),
		STAT("numa-meminfo.node0.AnonHugePages", a, b, 0),
		STAT("softirqs.CPU1.RCU", a, b, 0),
	};
	struct compare_row *rows;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_string_equal(compare_family("perf-profile.self.cycles-pp.clear_page_erms"), "profile");
	assert_null(compare_family("will-it-scale.per_process_ops"));
	rows = compared(s, ARRAY_SIZE(s), 3);
	compare_summary(&sb, rows, 3, 1, "");
	/* memory before interrupts, one row per family */
	assert_non_null(strstr(sb.buf, "memory     numa-meminfo.node0.AnonHugePages"));
	assert_true(strstr(sb.buf, "memory") < strstr(sb.buf, "interrupts"));
	assert_int_equal(strchr(strchr(sb.buf, '\n') + 1, '\n')[1], '\0');	/* two lines */
	strbuf_release(&sb);
	free(rows);
}

/* issue 18, the demo range's profile: clear_page_erms' self share goes
 * 13.5% -> 90.4%.  By significance a constant 0.6 -> 1.2 row beside it
 * (zero spread) outranked it and it was the 14th row; LKP ranks profile
 * rows by the change in points, in a section of their own. */
static void test_compare__profile_rows_rank_by_points_in_their_own_section(void **state)
{
	static const double cp_a[] = { 13.2, 13.8 }, cp_b[] = { 90.1, 90.7 };
	static const double lock_a[] = { 60.1, 61.3 }, lock_b[] = { 1.1, 1.3 };
	static const double small_a[] = { 0.6, 0.6 }, small_b[] = { 1.2, 1.2 };
	static const double tiny_a[] = { 0.1, 0.1 }, tiny_b[] = { 0.5, 0.5 };	/* +400%, under 1% */
	static const double huge_a[] = { 14.0, 14.2 }, huge_b[] = { 92.0, 92.4 };
	static const double thp2_a[] = { 0, 0 }, thp2_b[] = { 1180, 1186 };
	static const double kpi2_a[] = { 165000, 166000 }, kpi2_b[] = { 7400, 7466 };
	const struct compare_stat s[] = {
		STAT("perf-profile.calltrace.cycles-pp.clear_page_erms.clear_huge_page", huge_a, huge_b, 1),
		STAT("perf-profile.children.cycles-pp.clear_huge_page", huge_a, huge_b, 1),
		STAT("perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath", lock_a, lock_b, 1),
		STAT("perf-profile.self.cycles-pp.rcu_core", small_a, small_b, 1),
		STAT("perf-profile.self.cycles-pp.clear_page_erms", cp_a, cp_b, 1),
		STAT("perf-profile.self.cycles-pp.page_counter_cancel", tiny_a, tiny_b, 1),
		STAT("vmstat.thp_fault_alloc", thp2_a, thp2_b, 0),
		STAT("will-it-scale.per_process_ops", kpi2_a, kpi2_b, 1),
	};
	const size_t nr = 7;	/* not the 0.1 -> 0.5 share */
	struct compare_row *rows;
	struct strbuf sb = STRBUF_INIT;
	const char *self, *cp, *children, *calltrace;

	(void)state;
	assert_int_equal(compare_profile_section("perf-profile.self.cycles-pp.x"), 1);
	assert_int_equal(compare_profile_section("perf-profile.calltrace.cycles-pp.x.y"), 3);
	assert_int_equal(compare_profile_section("vmstat.perf-profile.x"), 0);
	rows = compared(s, ARRAY_SIZE(s), nr);
	/* the others first, by significance */
	assert_null(strstr(rows[0].name, "perf-profile"));
	assert_null(strstr(rows[1].name, "perf-profile"));
	/* then self, by the change in points: +76.9 before -59.9 before +0.6 */
	assert_string_equal(rows[2].name, "perf-profile.self.cycles-pp.clear_page_erms");
	assert_true(fabs(rows[2].delta - 76.9) < 1e-9);
	assert_string_equal(rows[3].name, "perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath");
	assert_string_equal(rows[4].name, "perf-profile.self.cycles-pp.rcu_core");
	assert_string_equal(rows[5].name, "perf-profile.children.cycles-pp.clear_huge_page");
	assert_string_equal(rows[6].name, "perf-profile.calltrace.cycles-pp.clear_page_erms.clear_huge_page");

	compare_format(&sb, rows, nr, "parent", "culprit", 1, "  ");
	printf("%s", sb.buf);
	self = strstr(sb.buf, "\n  perf-profile.self: % of the samples, change in points, largest first\n");
	cp = strstr(sb.buf, "perf-profile.self.cycles-pp.clear_page_erms\n");
	children = strstr(sb.buf, "\n  perf-profile.children: ");
	calltrace = strstr(sb.buf, "\n  perf-profile.calltrace: ");
	assert_non_null(self);
	assert_non_null(cp);
	assert_true(self < cp && cp < children && children < calltrace);
	/* the first row under the heading, its change in points (no %) */
	assert_non_null(strstr(self, "largest first\n          13.5 ±  3%     +76.9           90.4         "
				     "perf-profile.self.cycles-pp.clear_page_erms\n"));
	/* max is per section: one self row and "... 2 more", and the profile
	 * still shown after the counters' own "... 1 more" */
	assert_non_null(strstr(sb.buf, "clear_page_erms\n  ... 2 more\n"));
	assert_true(strstr(sb.buf, "  ... 1 more\n") < self);
	assert_null(strstr(sb.buf, "native_queued_spin_lock_slowpath"));

	strbuf_setlen(&sb, 0);
	compare_summary(&sb, rows, nr, 1, "");
	printf("%s", sb.buf);
	assert_non_null(strstr(sb.buf, "profile    perf-profile.self.cycles-pp.clear_page_erms 13.5 -> 90.4 "
				       "(+76.9 points)\n"));
	strbuf_release(&sb);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare__noise_ranks_below_a_clean_new_counter),
		cmocka_unit_test(test_compare__overlapping_ranges_are_dropped),
		cmocka_unit_test(test_compare__changes_under_the_floor_are_dropped),
		cmocka_unit_test(test_compare__gap_rule_needs_three_runs_each),
		cmocka_unit_test(test_compare__constant_small_counters_do_not_outrank_real_ones),
		cmocka_unit_test(test_compare__nothing_changed_gives_no_rows),
		cmocka_unit_test(test_compare__summary_groups_by_family),
		cmocka_unit_test(test_compare__a_counter_from_zero_outranks_busier_ones),
		cmocka_unit_test(test_compare__profile_rows_rank_by_points_in_their_own_section),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
