/* Unit tests of the report: pages of a fixed lab (tests/data/report/lab.sql)
 * against golden files (KLAB_REGENERATE=1 rewrites them; they hold a page's
 * title and body, its skeleton is checked against web/), escaping of
 * hostile text, the chart's one point group per step, --since. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab/db.h"
#include "util/html.h"
#include "report/report.h"
#include "report/svg.h"
#include "helpers.h"

static char tmpdir[256];
static sqlite3 *db;

static int setup(void **state)
{
	char *sql_path = data_path("report/lab.sql"), *sql, *path, *msg = NULL;

	make_test_dir(tmpdir, sizeof(tmpdir), "report");
	path = xstrfmt("%s/klab.db", tmpdir);
	assert_int_equal(db_open(&db, path, 1), 0);
	assert_int_equal(read_file(sql_path, 1 << 20, &sql, NULL), 0);
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("lab.sql: %s", msg);
	free(sql);
	free(sql_path);
	free(path);
	return 0;
}

static int teardown(void **state)
{
	db_close(db);
	remove_test_dir(tmpdir);
	return 0;
}

static struct report_bisection *bisection(struct report *r, int64_t id)
{
	for (size_t i = 0; i < r->nr_bisections; i++)
		if (r->bisections[i].id == id)
			return &r->bisections[i];
	fail_msg("no bisection %lld in the report", (long long)id);
	abort();	/* fail_msg does not return */
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The fixed lab as cmd-report.c would see it: one log copy present. */
static void load(struct report *r, int64_t since)
{
	assert_int_equal(db_report_load(db, since, r), 0);
	report_set_log_names(r);
	for (size_t i = 0; i < r->nr_bisections; i++)
		if (r->bisections[i].id == 1)
			r->bisections[i].steps[2].log.present = 1;
}

/* web/<name> of the source tree; caller frees. */
static char *web_file(const char *name)
{
	char *path = xstrfmt("%s/web/%s", KLAB_ABS_SRCDIR, name), *text;

	assert_int_equal(read_file(path, 1 << 20, &text, NULL), 0);
	free(path);
	return text;
}

/* A page is web/page.html with web/style.css inlined around its title and
 * body.  The golden file holds only the page's own part, its <title> line
 * and its body; the rest is checked here, against the two source files, to
 * the letter (the stylesheet would otherwise stand again in every golden). */
static void check_page_golden(const char *rel, const char *page)
{
	char *skeleton_html = web_file("page.html"), *css = web_file("style.css"), *style;
	const char *title = strstr(page, "<title>"), *title_end = NULL, *body = strstr(page, "<main>\n");
	const char *body_end = NULL;
	struct strbuf own = STRBUF_INIT, skeleton = STRBUF_INIT, want = STRBUF_INIT;

	if (title)
		title_end = strstr(title, "</title>\n");
	if (body)
		for (const char *p = strstr(body, "</main>\n"); p; p = strstr(p + 1, "</main>\n"))
			body_end = p;
	if (!title_end || !body_end)
		fail_msg("%s: no <title> or no <main> in the page:\n%s", rel, page);
	title += strlen("<title>");
	body += strlen("<main>\n");

	strbuf_add(&skeleton, page, (size_t)(title - page));
	strbuf_addstr(&skeleton, "{{title}}");
	strbuf_add(&skeleton, title_end, (size_t)(body - title_end));
	strbuf_addstr(&skeleton, "{{body}}");
	strbuf_addstr(&skeleton, body_end);
	style = strstr(skeleton_html, "{{style}}");
	assert_non_null(style);
	strbuf_add(&want, skeleton_html, (size_t)(style - skeleton_html));
	strbuf_addstr(&want, css);
	strbuf_addstr(&want, style + strlen("{{style}}"));
	if (strcmp(skeleton.buf, want.buf))
		fail_msg("%s: around its title and body the page is not web/page.html with web/style.css:\n%s", rel,
			 skeleton.buf);

	strbuf_addf(&own, "<title>%.*s</title>\n%.*s", (int)(title_end - title), title, (int)(body_end - body), body);
	check_golden(rel, own.buf);
	strbuf_release(&want);
	strbuf_release(&skeleton);
	strbuf_release(&own);
	free(css);
	free(skeleton_html);
}

/* The page of bisection id (0: the index) as the lab has it now; caller
 * frees. */
static char *page_of(int64_t id)
{
	struct report r;
	struct strbuf sb = STRBUF_INIT;

	load(&r, 0);
	if (id)
		report_render_bisection(&sb, bisection(&r, id));
	else
		report_render_index(&sb, &r);
	report_release(&r);
	return strbuf_detach(&sb, NULL);
}

/* A change to the lab a test makes, or takes back. */
static void lab_sql(const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

static void test_report__index_matches_golden_file(void **state)
{
	char *page = page_of(0);

	check_page_golden("report/index.html", page);
	free(page);
}

static void test_report__job_bisection_page_matches_golden_file(void **state)
{
	char *page = page_of(1);

	check_page_golden("report/bisect-1.html", page);
	free(page);
}

/* A stored revert check reaches the page (read by db_report_load): its
 * outcome and numbers, the commit klab made; none stored, no section. */
static void test_report__job_page_shows_the_revert_check(void **state)
{
	struct revert_check rc = { 0 };
	char *page = page_of(1);

	(void)state;
	assert_contains_none(page, "id=\"revert\"");
	free(page);

	revert_restored(&rc, "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291817", 12345, 1, 12400, 9000, "like-good: <tag> & more");
	assert_int_equal(db_bisection_set_revert(db, 1, &rc), 0);
	page = page_of(1);
	assert_contains_all(page,
			    "<h2 id=\"revert\">Revert check</h2>\n<p class=\"good\">revert restores good "
			    "(12345 ±1% vs good 12400, bad 9000; 5 runs)</p>",
			    "<code>9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291817</code>",
			    "like-good: &lt;tag&gt; &amp; more");
	free(page);
	/* the other tests read the lab as lab.sql made it */
	lab_sql("UPDATE bisections SET revert_outcome = NULL, revert_commit = NULL, revert_detail = NULL WHERE id = 1");
}

/* Drift stored with a bisection (migration 10) is said on its page. */
static void test_report__job_page_says_the_host_drifted(void **state)
{
	char *page = page_of(1);

	(void)state;
	assert_contains_none(page, "id=\"drift\"");
	free(page);
	assert_int_equal(db_bisection_set_drift(db, 1, -0.4), 0);
	page = page_of(1);
	assert_contains(page, "id=\"drift\">Drift: the host trended by -0.40% per run");
	free(page);
	lab_sql("UPDATE bisections SET drift = 0, drift_percent = NULL WHERE id = 1");
}

/* Two change points (migration 11): the page's "Two changes" section
 * names the split and each half's commit with its share and what its
 * confirmation said; a bisection without a split has no such section. */
static void test_report__job_page_names_both_culprits_of_two_changes(void **state)
{
	char *page = page_of(1);

	(void)state;
	assert_contains_none(page, "id=\"halves\"");
	free(page);
	lab_sql("UPDATE bisections SET split_commit = '3333333333333333333333333333333333333333' WHERE id = 1; "
		"INSERT INTO bisection_culprits (bisection_id, half, culprit, confirmed, share, message) "
		"VALUES (1, 1, '2222222222222222222222222222222222222222', 1, 44.6, 'culprit 222222222222 confirmed <ok>'), "
		"(1, 2, NULL, 0, NULL, 'only skipped commits left')");
	page = page_of(1);
	assert_contains_all(page,
			    "<h2 id=\"halves\">Two changes</h2>\n<p>The range split at "
			    "<code>3333333333333333333333333333333333333333</code>",
			    "<tr><td>1</td><td><code class=\"bad\">2222222222222222222222222222222222222222"
			    "</code></td>",
			    "<td class=\"num\">45%</td><td>culprit 222222222222 confirmed &lt;ok&gt;</td>",
			    "<tr><td>2</td><td>none (only skipped commits left)</td><td></td>"
			    "<td class=\"num\">-</td>");
	free(page);
	/* migration 12: half 1's culprit reverted alone, on the page */
	lab_sql("UPDATE bisection_culprits SET revert_outcome = 'does-not-restore', "
		"revert_commit = '4444444444444444444444444444444444444444', revert_runs = 5, revert_median = 5500, "
		"revert_cv = 2, revert_good_median = 10000, revert_bad_median = 1000 WHERE half = 1");
	page = page_of(1);
	assert_contains_all(page, "<th>this culprit alone reverted</th>",
			    "<td>revert does not restore (5500 ±2% vs good 10000, bad 1000; 5 runs; it "
			    "recovers 50% of the gap)</td></tr>");
	free(page);
	/* the other tests read the lab as lab.sql made it */
	lab_sql("UPDATE bisections SET split_commit = NULL WHERE id = 1; DELETE FROM bisection_culprits");
}

static void test_report__command_bisection_page_matches_golden_file(void **state)
{
	char *page = page_of(2);

	check_page_golden("report/bisect-2.html", page);
	/* no KPI, no chart; exit codes instead */
	assert_contains_none(page, "<svg");
	assert_contains(page, "exit code");
	free(page);
}

static void test_report__track_page_matches_golden_file(void **state)
{
	struct report r;
	struct strbuf sb = STRBUF_INIT;
	char *name;

	load(&r, 0);
	assert_int_equal(r.nr_tracks, 1);
	name = report_track_file(&r.tracks[0]);
	assert_string_equal(name, "track-mm-unstable__nightly_-1.html");
	report_render_track(&sb, &r.tracks[0]);
	check_page_golden("report/track-1.html", sb.buf);
	assert_int_equal(count(sb.buf, "<g class=\"step "), 3);
	assert_non_null(strstr(sb.buf, "<a href=\"bisect-1.html\">bisection 1</a>"));
	free(name);
	strbuf_release(&sb);
	report_release(&r);
}

static void test_report__hostile_text_is_escaped_everywhere(void **state)
{
	struct report r;
	struct strbuf sb = STRBUF_INIT;

	load(&r, 0);
	report_render_index(&sb, &r);
	report_render_bisection(&sb, bisection(&r, 1));
	report_render_bisection(&sb, bisection(&r, 2));
	report_render_track(&sb, &r.tracks[0]);
	assert_contains_none(sb.buf,
			     "<script",
			     "<img",
			     "<b>not bold",
			     "<oops>",
			     "<evil>");
	assert_contains_all(sb.buf,
			    "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;",
			    "Mallory &quot;O&#39;Hara&quot; &amp; Co",
			    /* inside the SVG's tooltips too */
			    "<title>step 5 (bisect) 555555555555 &lt;script&gt;");
	strbuf_release(&sb);
	report_release(&r);
}

/* Even what klab wrote itself (hashes, phases, verdicts) is escaped: the
 * database may have been edited by anyone. */
static void test_report__hostile_database_fields_are_escaped(void **state)
{
	struct report r;
	struct strbuf sb = STRBUF_INIT;
	struct report_bisection *b;

	load(&r, 0);
	b = bisection(&r, 1);
	snprintf(b->bad, sizeof(b->bad), "<i>bad</i>");
	snprintf(b->goods[0], sizeof(b->goods[0]), "<i>good</i>");
	for (size_t i = 0; i < b->nr_steps; i++) {
		snprintf(b->steps[i].hash, sizeof(b->steps[i].hash), "<i>%zu</i>", i);
		free(b->steps[i].phase);
		b->steps[i].phase = xstrdup("<i>phase</i>");
		free(b->steps[i].verdict);
		b->steps[i].verdict = xstrdup("<i>verdict</i>");
	}
	free(b->culprit);
	b->culprit = xstrdup("<i>culprit</i>");
	report_render_bisection(&sb, b);
	report_render_index(&sb, &r);
	b = bisection(&r, 2);
	snprintf(b->goods[1], sizeof(b->goods[1]), "<i>good</i>");
	report_render_bisection(&sb, b);
	assert_null(strstr(sb.buf, "<i>"));
	strbuf_release(&sb);
	report_release(&r);
}

/* A failed confirmation (issue 17): the page says so in its title, names
 * a suspect and no first bad commit. */
static void test_report__unconfirmed_bisection_names_a_suspect(void **state)
{
	struct report r;
	struct strbuf sb = STRBUF_INIT;
	struct report_bisection *b;

	load(&r, 0);
	b = bisection(&r, 1);
	assert_non_null(b->culprit);
	free(b->result);
	b->result = xstrdup("unconfirmed");
	b->result_id = BISECTION_UNCONFIRMED;	/* as db_report_load parses it */
	report_render_bisection(&sb, b);
	assert_contains_all(sb.buf,
			    "<title>klab bisection 1: culprit not confirmed</title>",
			    "Suspect, NOT confirmed",
			    "<tr><td>suspect</td>");
	assert_contains_none(sb.buf, "First bad commit", "<tr><td>culprit</td>");
	strbuf_release(&sb);
	report_release(&r);
}

/* issue 18: the profiled pair's rows on the bisection page, in their own
 * section after the counters, the largest change in points first. */
static void test_report__profile_rows_follow_in_their_own_section(void **state)
{
	char *page = page_of(1);
	const char *counters, *self, *first;

	counters = strstr(page, "<code>vmstat.pgfault</code>");
	self = strstr(page, "<tr><th colspan=\"6\">perf-profile.self: % of the samples, change in points, "
			      "largest first</th></tr>\n");
	assert_non_null(counters);
	assert_non_null(self);
	assert_true(counters < self);
	first = strchr(self, '\n') + 1;
	{
		static const char want[] = "<tr><td class=\"num\">13.5</td><td class=\"num\">± 3%</td>"
					   "<td class=\"num\">+76.9</td><td class=\"num\">90.4</td>";
		if (strncmp(first, want, sizeof(want) - 1))
			fail_msg("first self row: %.200s", first);
	}
	assert_contains(first, "<code>perf-profile.self.cycles-pp.clear_page_erms</code></td></tr>\n");
	assert_true(strstr(page, "perf-profile.self.cycles-pp.clear_page_erms") <
		    strstr(page, "perf-profile.self.cycles-pp.rcu_core"));
	assert_contains_all(page,
			    /* what changed leads with it too */
			    "<pre>profile    perf-profile.self.cycles-pp.clear_page_erms 13.5 -&gt; 90.4 "
			    "(+76.9 points)\n",
			    "perf-profile.self.cycles-pp.&lt;evil&gt;");
	/* the profile steps' own counters are not the confirmation's */
	assert_contains_none(page, "77777", "88888");
	free(page);
}

/* klab compare's stored run sets on the index, with the command that
 * compares them; the bisection's row links to its comparison. */
static void test_report__index_lists_run_sets_and_links_comparisons(void **state)
{
	struct report r;
	struct strbuf sb = STRBUF_INIT;

	load(&r, 0);
	assert_int_equal(r.nr_run_sets, 2);	/* the track's three are its own */
	assert_int_equal(r.run_sets[0].id, 5);
	assert_int_equal(r.run_sets[0].nr_kpi, 2);	/* the panicked boot has no run */
	report_render_index(&sb, &r);
	assert_contains_all(sb.buf,
			    "1 host, 2 run sets.</p>",
			    "<tr id=\"run-set-5\"><td class=\"num\">5</td><td><code>jobs/thp "
			    "&lt;b&gt;always&lt;/b&gt;.yaml</code></td>",
			    "<td class=\"num\">2/3</td><td class=\"num\">97750 ±0%</td>",
			    "<code>klab compare --runset 4 5 --html compare-4-5.html</code>");
	assert_null(strstr(sb.buf, "<b>always"));
	assert_non_null(strstr(sb.buf, "<a href=\"bisect-1.html#compare\">what changed, profile</a>"));
	strbuf_release(&sb);
	report_release(&r);
	load(&r, 1700300000);	/* --since after them: none */
	assert_int_equal(r.nr_run_sets, 0);
	report_release(&r);
}

static void test_report__chart_has_one_point_group_per_step(void **state)
{
	struct report r;
	struct strbuf sb = STRBUF_INIT;
	struct report_bisection *b;

	load(&r, 0);
	b = bisection(&r, 1);
	report_render_bisection(&sb, b);
	assert_int_equal(count(sb.buf, "<svg"), 1);
	assert_int_equal(count(sb.buf, "<g class=\"step "), b->nr_steps);
	/* a dot per KPI run: 5 + 5 + 2 + 0 + 3 + 3 + 3, and the profiled 2 + 2 */
	assert_int_equal(count(sb.buf, "<circle "), 25);
	assert_int_equal(count(sb.buf, "class=\"band-good\""), 1);
	assert_int_equal(count(sb.buf, "class=\"band-bad\""), 1);
	/* the skipped step (no value) is drawn as a cross */
	assert_int_equal(count(sb.buf, "<g class=\"step skip\">"), 1);
	strbuf_release(&sb);
	report_release(&r);
}

static void test_report__loads_what_each_step_needs(void **state)
{
	struct report r;
	struct report_bisection *b;

	load(&r, 0);
	b = bisection(&r, 1);
	assert_int_equal(b->nr_steps, 9);
	assert_int_equal(b->steps[0].nr_kpi, 5);
	assert_string_equal(b->steps[2].rule, "like-good");	/* the last verdict decides */
	assert_string_equal(b->steps[3].build_status, "build-failed");
	assert_string_equal(b->steps[4].boot_outcome, "panic");
	assert_int_equal(b->steps[4].boots, 4);
	assert_int_equal(b->steps[4].boots_ok, 3);
	assert_int_equal(b->steps[6].nr_stats, 4);	/* meminfo after, three vmstat deltas (before/after left out) */
	assert_int_equal(b->steps[7].nr_stats, 6);	/* the profile step's: five perf-profile levels, a vmstat delta */
	assert_int_equal(bisection(&r, 2)->argc, 3);
	assert_int_equal(bisection(&r, 2)->nr_goods, 2);
	report_release(&r);
}

static void test_report__since_leaves_older_bisections_out(void **state)
{
	struct report r;

	load(&r, 0);
	assert_int_equal(r.nr_bisections, 3);
	assert_int_equal(r.bisections[0].id, 3);	/* newest id first */
	report_release(&r);
	load(&r, 1650000000);
	assert_int_equal(r.nr_bisections, 2);
	assert_int_equal(r.bisections[0].id, 2);
	report_release(&r);
}

static void test_html__escapes_markup_controls_and_broken_utf8(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	html_esc(&sb, "<a href=\"x\" onclick='y'>&amp;</a>");
	assert_string_equal(sb.buf, "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
	strbuf_reset(&sb);
	html_esc(&sb, "tab\tnl\nbell\a esc\x1b del\x7f");
	assert_string_equal(sb.buf, "tab\tnl\nbell\xef\xbf\xbd esc\xef\xbf\xbd del\xef\xbf\xbd");
	strbuf_reset(&sb);
	/* valid UTF-8 stays; a lone continuation byte, an overlong '<' and a
	 * surrogate do not */
	html_esc(&sb, "caf\xc3\xa9 \x80 \xc0\xbc \xed\xa0\x80 \xe2\x82");
	assert_string_equal(sb.buf, "caf\xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
				    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd");
	strbuf_release(&sb);
}

static void test_svg__tick_steps_are_round(void **state)
{
	assert_true(svg_tick_step(0, 100, 5) == 20);
	assert_true(svg_tick_step(47000, 102000, 5) == 10000);
	assert_true(fabs(svg_tick_step(0, 0.7, 5) - 0.1) < 1e-12);
	assert_true(svg_tick_step(5, 5, 5) == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report__index_matches_golden_file),
		cmocka_unit_test(test_report__job_page_shows_the_revert_check),
		cmocka_unit_test(test_report__job_page_says_the_host_drifted),
		cmocka_unit_test(test_report__job_page_names_both_culprits_of_two_changes),
		cmocka_unit_test(test_report__job_bisection_page_matches_golden_file),
		cmocka_unit_test(test_report__command_bisection_page_matches_golden_file),
		cmocka_unit_test(test_report__track_page_matches_golden_file),
		cmocka_unit_test(test_report__hostile_text_is_escaped_everywhere),
		cmocka_unit_test(test_report__hostile_database_fields_are_escaped),
		cmocka_unit_test(test_report__unconfirmed_bisection_names_a_suspect),
		cmocka_unit_test(test_report__chart_has_one_point_group_per_step),
		cmocka_unit_test(test_report__profile_rows_follow_in_their_own_section),
		cmocka_unit_test(test_report__index_lists_run_sets_and_links_comparisons),
		cmocka_unit_test(test_report__loads_what_each_step_needs),
		cmocka_unit_test(test_report__since_leaves_older_bisections_out),
		cmocka_unit_test(test_html__escapes_markup_controls_and_broken_utf8),
		cmocka_unit_test(test_svg__tick_steps_are_round),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
