/* Unit tests of tracking's decisions: track names, --notify targets,
 * regression / improvement / no change between two tips in both KPI
 * directions and against the threshold, the status of a tip, the base
 * a tip is compared with after a force-push, and the notice of a
 * tracked regression. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/notify.h"
#include "core/track.h"
#include "util/util.h"
#include "helpers.h"

/* ---- names and targets --------------------------------------------------- */

static void test_track__names_safe_in_refs_and_files(void **state)
{
	static const char *const good[] = { "mainline", "linux-next", "v6.1.y", "a", "mm_unstable-2" };
	static const char *const bad[] = { "", "-x", ".hidden", "a/b", "a..b", "name.", "x.lock", "a b",
					   "tab\there", "semi;colon", "$(rm)", "ünicode",
					   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++)
		assert_true(track_name_valid(good[i]));
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_false(track_name_valid(bad[i]));
}

static void test_track__notify_targets_mail_or_webhook(void **state)
{
	(void)state;
	assert_string_equal(track_notify_kind("lkp@example.org"), "mail");
	assert_string_equal(track_notify_kind("https://hooks.example.org/T0/abc"), "webhook");
	assert_string_equal(track_notify_kind("http://127.0.0.1:8080/"), "webhook");
	assert_null(track_notify_kind("https://"));
	assert_null(track_notify_kind("nobody"));
	assert_null(track_notify_kind("a@b"));
	assert_null(track_notify_kind("a@b.org\nBcc: x@y.org"));
	assert_null(track_notify_kind("a@b.org, c@d.org"));
	assert_null(track_notify_kind("ftp://x.org/"));
}

/* ---- comparing two tips ------------------------------------------------------ */

static const double base_runs[] = { 9300, 9150, 9480 };
static const double same_runs[] = { 9260, 9390, 9210 };
static const double slow_runs[] = { 265, 259, 270 };	/* the demo's -97% */
static const double fast_runs[] = { 12100, 11950, 12230 };
static const double slightly_slow[] = { 9020, 9010, 9030 };	/* -3%: below 5% */

static void test_track__regression_when_worse_beyond_threshold(void **state)
{
	struct track_cmp c;

	(void)state;
	assert_int_equal(track_compare(&c, base_runs, 3, slow_runs, 3, 1, 5.0), 0);
	assert_int_equal(c.change, TRACK_REGRESSION);
	assert_true(c.change_percent < -90);
	assert_non_null(strstr(c.text, "regression"));
}

static void test_track__improvement_when_better_beyond_threshold(void **state)
{
	struct track_cmp c;

	(void)state;
	assert_int_equal(track_compare(&c, base_runs, 3, fast_runs, 3, 1, 5.0), 0);
	assert_int_equal(c.change, TRACK_IMPROVEMENT);
	assert_true(c.change_percent > 20);
}

static void test_track__no_change_within_noise(void **state)
{
	struct track_cmp c;

	(void)state;
	assert_int_equal(track_compare(&c, base_runs, 3, same_runs, 3, 1, 5.0), 0);
	assert_true(c.change == TRACK_NO_CHANGE || c.change == TRACK_INCONCLUSIVE);
	assert_int_not_equal(c.change, TRACK_REGRESSION);
}

static void test_track__small_real_change_below_threshold_is_no_change(void **state)
{
	static const double tight[] = { 9300, 9301, 9299, 9300, 9302 };
	static const double tight_slow[] = { 9020, 9021, 9019, 9020, 9022 };
	struct track_cmp c;

	(void)state;
	assert_int_equal(track_compare(&c, tight, 5, tight_slow, 5, 1, 5.0), 0);
	assert_int_equal(c.change, TRACK_NO_CHANGE);
	/* the same change with a 1% threshold is a regression */
	assert_int_equal(track_compare(&c, tight, 5, tight_slow, 5, 1, 1.0), 0);
	assert_int_equal(c.change, TRACK_REGRESSION);
	(void)slightly_slow;
}

static void test_track__lower_is_better_kpi(void **state)
{
	struct track_cmp c;

	(void)state;
	/* latency-like: the numbers going up is the regression */
	assert_int_equal(track_compare(&c, slow_runs, 3, base_runs, 3, -1, 5.0), 0);
	assert_int_equal(c.change, TRACK_REGRESSION);
	assert_int_equal(track_compare(&c, base_runs, 3, slow_runs, 3, -1, 5.0), 0);
	assert_int_equal(c.change, TRACK_IMPROVEMENT);
}

static void test_track__one_slow_run_is_not_a_regression(void **state)
{
	static const double cur[] = { 9290, 5100, 9350 };	/* a shared host's hiccup */
	struct track_cmp c;

	(void)state;
	assert_int_equal(track_compare(&c, base_runs, 3, cur, 3, 1, 5.0), 0);
	assert_int_not_equal(c.change, TRACK_REGRESSION);
}

static void test_track__bad_threshold_refused(void **state)
{
	struct track_cmp c;

	(void)state;
	assert_int_equal(track_compare(&c, base_runs, 3, slow_runs, 3, 1, -1), -1);
	assert_int_equal(track_compare(&c, base_runs, 3, slow_runs, 3, 1, NAN), -1);
}

static void test_track__tip_status_from_jobs(void **state)
{
	enum track_change none[] = { TRACK_NO_CHANGE, TRACK_INCONCLUSIVE };
	enum track_change mixed[] = { TRACK_IMPROVEMENT, TRACK_REGRESSION };
	enum track_change better[] = { TRACK_NO_CHANGE, TRACK_IMPROVEMENT };

	(void)state;
	assert_string_equal(track_tip_status(mixed, 2, 0), "first");
	assert_string_equal(track_tip_status(none, 2, 1), "no-change");
	assert_string_equal(track_tip_status(mixed, 2, 1), "regression");
	assert_string_equal(track_tip_status(better, 2, 1), "improvement");
}

/* ---- the base after a force-push --------------------------------------------- */

struct fake_history {
	const char *const *ancestors;	/* hashes that are ancestors of the new tip */
	size_t n;
	const char *gone;		/* a commit that is not in the repository any more */
};

static int fake_is_ancestor(const char *hash, void *data)
{
	const struct fake_history *h = data;

	if (h->gone && !strcmp(hash, h->gone))
		return -1;
	for (size_t i = 0; i < h->n; i++)
		if (!strcmp(h->ancestors[i], hash))
			return 1;
	return 0;
}

static void test_track__base_is_newest_measured_ancestor(void **state)
{
	static const struct track_tip_ref tips[] = {
		{ "d", "build-failed" }, { "c", "no-change" }, { "b", "regression" }, { "a", "first" },
	};
	static const char *const anc[] = { "a", "b", "c", "d" };
	struct fake_history h = { anc, 4, NULL };
	size_t rewritten;

	(void)state;
	/* a tip that did not build is passed over: tracking goes on from c */
	assert_int_equal(track_choose_base(tips, 4, fake_is_ancestor, &h, &rewritten), 1);
	assert_int_equal(rewritten, 0);
}

static void test_track__force_push_compares_with_older_ancestor(void **state)
{
	static const struct track_tip_ref tips[] = {
		{ "c2", "no-change" }, { "b2", "improvement" }, { "a", "first" },
	};
	static const char *const anc[] = { "a" };	/* b2 and c2 were rewritten away */
	struct fake_history h = { anc, 1, "c2" };
	size_t rewritten;

	(void)state;
	assert_int_equal(track_choose_base(tips, 3, fake_is_ancestor, &h, &rewritten), 2);
	assert_int_equal(rewritten, 2);
}

static void test_track__force_push_without_ancestor_is_new_baseline(void **state)
{
	static const struct track_tip_ref tips[] = { { "b", "no-change" }, { "a", "first" } };
	struct fake_history h = { NULL, 0, NULL };
	size_t rewritten;

	(void)state;
	assert_int_equal(track_choose_base(tips, 2, fake_is_ancestor, &h, &rewritten), -1);
	assert_int_equal(rewritten, 2);
	assert_int_equal(track_choose_base(NULL, 0, fake_is_ancestor, &h, &rewritten), -1);
	assert_int_equal(rewritten, 0);
}

static void test_track__running_and_failed_tips_are_no_base(void **state)
{
	static const struct track_tip_ref tips[] = {
		{ "c", "running" }, { "b", "boot-failed" }, { "a", "fetch-failed" },
	};
	static const char *const anc[] = { "a", "b", "c" };
	struct fake_history h = { anc, 3, NULL };
	size_t rewritten;

	(void)state;
	assert_int_equal(track_choose_base(tips, 3, fake_is_ancestor, &h, &rewritten), -1);
	assert_int_equal(rewritten, 0);
}

/* ---- the notice ------------------------------------------------------------ */

static void test_track__regression_notice(void **state)
{
	struct notify_track_job job = { "/jobs/will-it-scale-malloc1.yaml", "will-it-scale.per_process_ops", 1,
					base_runs, 3, slow_runs, 3, "regression", "regression: 9300 -> 265 (-97.15%)" };
	struct notify_track_facts f = { 0 };
	struct notify_message m = { 0 };

	(void)state;
	f.host = "lab1";
	f.track = "mainline";
	f.repo_path = "/srv/linux";
	f.remote = "file:///srv/upstream";
	f.branch = "master";
	f.threshold_pct = 5;
	f.status = "regression";
	f.tip = "0123456789abcdef0123456789abcdef01234567";
	f.tip_subject = "mm: something\r\nBcc: evil@example.org";
	f.compared_to = "89abcdef0123456789abcdef0123456789abcdef";
	f.bisection_id = 7;
	f.queue_job_id = 9;
	f.jobs = &job;
	f.nr_jobs = 1;
	notify_compose_track(&f, &m);
	assert_contains(m.subject, "[klab] track mainline: will-it-scale.per_process_ops -97.2% regression at 0123456789ab");
	assert_contains_none(m.subject, "\n", "\r");
	assert_contains(m.text, "Bisection 7 (queue job 9) between 89abcdef0123 (good) and 0123456789ab (bad)");
	assert_contains_all(m.json, "\"event\": \"track\"", "\"bisection\": 7");
	notify_message_release(&m);

	f.status = "build-failed";
	f.bisection_id = 0;
	job.change = "not measured";
	notify_compose_track(&f, &m);
	assert_contains(m.subject, ": does not build");
	assert_contains_none(m.text, "Bisection");
	notify_message_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_track__names_safe_in_refs_and_files),
		cmocka_unit_test(test_track__notify_targets_mail_or_webhook),
		cmocka_unit_test(test_track__regression_when_worse_beyond_threshold),
		cmocka_unit_test(test_track__improvement_when_better_beyond_threshold),
		cmocka_unit_test(test_track__no_change_within_noise),
		cmocka_unit_test(test_track__small_real_change_below_threshold_is_no_change),
		cmocka_unit_test(test_track__lower_is_better_kpi),
		cmocka_unit_test(test_track__one_slow_run_is_not_a_regression),
		cmocka_unit_test(test_track__bad_threshold_refused),
		cmocka_unit_test(test_track__tip_status_from_jobs),
		cmocka_unit_test(test_track__base_is_newest_measured_ancestor),
		cmocka_unit_test(test_track__force_push_compares_with_older_ancestor),
		cmocka_unit_test(test_track__force_push_without_ancestor_is_new_baseline),
		cmocka_unit_test(test_track__running_and_failed_tips_are_no_base),
		cmocka_unit_test(test_track__regression_notice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
