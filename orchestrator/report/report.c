/* The report's pages: index, one per bisection, one per tracked branch.
 * Everything that came from outside klab goes through html_esc. */
#include "report/report.h"
#include "util/html.h"
#include "report/svg.h"
#include "core/stats.h"
#include "core/compare.h"
#include "engine/runcompare.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- small pieces ------------------------------------------------------ */

static void add_time(struct strbuf *sb, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[32];

	if (t <= 0 || !gmtime_r(&tt, &tm)) {
		strbuf_addstr(sb, "-");
		return;
	}
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", &tm);
	strbuf_addstr(sb, buf);
}

/* The 12-character abbreviation git users know. */
static void add_short(struct strbuf *sb, const char *hash)
{
	html_escn(sb, hash, strnlen(hash, 12));
}

static void add_hash(struct strbuf *sb, const char *hash)
{
	strbuf_addstr(sb, "<code class=\"hash\" title=\"");
	html_esc(sb, hash);
	strbuf_addstr(sb, "\">");
	add_short(sb, hash);
	strbuf_addstr(sb, "</code>");
}

/* A measured number: whole above 10^5 (no "1e+06"), else 6 digits. */
static void add_num(struct strbuf *sb, double v)
{
	if (isfinite(v) && fabs(v) >= 1e5 && fabs(v) < 1e15)
		strbuf_addf(sb, "%.0f", v);
	else
		strbuf_addf(sb, "%.6g", v);
}

/* "9300 ±2%": median and relative standard deviation */
static void add_median(struct strbuf *sb, const double *v, size_t n)
{
	if (!n) {
		strbuf_addstr(sb, "-");
		return;
	}
	add_num(sb, stats_median(v, n));
	strbuf_addf(sb, " ±%.0f%%", stats_cv_percent(v, n));
}

/* A step's verdict as a CSS class: its mark's name, "none" unmarked. */
static const char *verdict_class(int mark)
{
	if (mark == BISECT_GOOD || mark == BISECT_BAD || mark == BISECT_SKIP)
		return bisect_mark_to_string(mark);
	return "none";
}

static void add_log(struct strbuf *sb, const struct report_log *l, const char *label)
{
	if (!l->src)
		return;
	if (l->present && l->name) {
		strbuf_addstr(sb, "<a href=\"");
		html_esc(sb, l->name);
		strbuf_addstr(sb, "\">");
		html_esc(sb, label);
		strbuf_addstr(sb, "</a><br>");
	} else {
		strbuf_addstr(sb, "<span class=\"gone\" title=\"");
		html_esc(sb, l->src);
		strbuf_addstr(sb, "\">");
		html_esc(sb, label);
		strbuf_addstr(sb, ": log gone</span><br>");
	}
}

static void add_pre(struct strbuf *sb, const char *text)
{
	strbuf_addstr(sb, "<pre>");
	html_esc(sb, text);
	strbuf_addstr(sb, "</pre>\n");
}

static void add_fact(struct strbuf *sb, const char *name, const char *text)
{
	strbuf_addf(sb, "<dt>%s</dt><dd>", name);
	html_esc(sb, text);
	strbuf_addstr(sb, "</dd>\n");
}

/* A word for the shell, as the terminal shows it (the copy-paste of the
 * "reproduce" lines must work as shown). */
static void add_shell_word(struct strbuf *out, const char *w)
{
	struct strbuf q = STRBUF_INIT;

	strbuf_add_shell_word(&q, w);
	html_esc(out, q.buf);
	strbuf_release(&q);
}

static void add_argv(struct strbuf *sb, char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		add_shell_word(sb, argv[i]);
	}
}

static void add_range(struct strbuf *sb, const struct report_bisection *b)
{
	for (size_t i = 0; i < b->nr_goods; i++) {
		if (i)
			strbuf_addstr(sb, ", ");
		add_hash(sb, b->goods[i]);
	}
	strbuf_addstr(sb, " .. ");
	add_hash(sb, b->bad);
}

static const char *outcome_text(const struct report_bisection *b)
{
	switch (b->result_id) {
	case BISECTION_NO_RESULT:
		return b->state;
	case BISECTION_CULPRIT:
		return "culprit found";
	case BISECTION_SKIPPED_ONLY:
		return "only skipped commits left";
	case BISECTION_NOT_REPRODUCED:
		return "regression not reproduced";
	case BISECTION_UNCONFIRMED:
		return "culprit not confirmed";
	default:	/* error, or a name the table lacks: as stored */
		return b->result;
	}
}

static const char *outcome_class(const struct report_bisection *b)
{
	if (b->result_id == BISECTION_CULPRIT || b->result_id == BISECTION_ERROR)
		return "bad";
	return "muted";
}

/* The last done step of a phase, optionally of one commit. */
static const struct report_step *find_step(const struct report_bisection *b, enum step_phase phase,
					   const char *hash, int other_than)
{
	const struct report_step *found = NULL;

	for (size_t i = 0; i < b->nr_steps; i++) {
		const struct report_step *s = &b->steps[i];
		if (s->phase_id != (int)phase || s->status_id != STEP_DONE)
			continue;
		if (hash && !other_than && strcmp(s->hash, hash))
			continue;
		if (hash && other_than && !strcmp(s->hash, hash))
			continue;
		found = s;
	}
	return found;
}

static const struct report_step *good_reference(const struct report_bisection *b)
{
	return b->nr_goods ? find_step(b, STEP_PHASE_REFERENCE, b->goods[0], 0) : NULL;
}

static const struct report_step *bad_reference(const struct report_bisection *b)
{
	return find_step(b, STEP_PHASE_REFERENCE, b->bad, 0);
}

/* "1234 → 567 (-54.1%)" from the reference runs. */
static void add_kpi_change(struct strbuf *sb, const struct report_bisection *b)
{
	const struct report_step *g = good_reference(b), *x = bad_reference(b);
	double gm, bm;

	if (!g || !x || !g->nr_kpi || !x->nr_kpi) {
		strbuf_addstr(sb, "-");
		return;
	}
	gm = stats_median(g->kpi, g->nr_kpi);
	bm = stats_median(x->kpi, x->nr_kpi);
	add_num(sb, gm);
	strbuf_addstr(sb, " &#8594; ");
	add_num(sb, bm);
	strbuf_addf(sb, " <b>%+.1f%%</b>", stats_change_percent(gm, bm));
}

static void add_subject_cell(struct strbuf *sb, const char *subject)
{
	strbuf_addstr(sb, "<td class=\"subject\">");
	if (subject)
		html_esc(sb, subject);
	else
		strbuf_addstr(sb, "<span class=\"muted\">(not stored)</span>");
	strbuf_addstr(sb, "</td>");
}

/* ---- index --------------------------------------------------------------- */

static void index_bisections(struct strbuf *sb, const struct report *r)
{
	strbuf_addstr(sb, "<h2 id=\"bisections\">Bisections</h2>\n");
	if (!r->nr_bisections) {
		strbuf_addstr(sb, "<p class=\"muted\">No bisections yet.</p>\n");
		return;
	}
	strbuf_addstr(sb, "<div class=\"scroll\"><table>\n<thead><tr><th class=\"num\">id</th><th>outcome</th>"
			  "<th>range</th><th>job or command</th><th>culprit</th><th>KPI change (good &#8594; bad)</th>"
			  "<th>finished</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nr_bisections; i++) {
		const struct report_bisection *b = &r->bisections[i];
		char *file = report_bisection_file(b);

		strbuf_addf(sb, "<tr><td class=\"num\"><a href=\"%s\">%lld</a></td>", file, (long long)b->id);
		strbuf_addf(sb, "<td class=\"%s\">", outcome_class(b));
		html_esc(sb, outcome_text(b));
		strbuf_addstr(sb, "</td><td>");
		add_range(sb, b);
		strbuf_addstr(sb, "</td><td>");
		if (b->kind_id == BISECTION_JOB) {
			strbuf_addstr(sb, "job <code>");
			html_esc(sb, b->job_path);
			strbuf_addstr(sb, "</code>");
		} else {
			strbuf_addstr(sb, "<code>");
			add_argv(sb, b->argv, b->argc);
			strbuf_addstr(sb, "</code>");
		}
		strbuf_addstr(sb, "</td><td class=\"subject\">");
		if (b->culprit) {
			add_hash(sb, b->culprit);
			strbuf_addch(sb, ' ');
			html_esc(sb, b->culprit_subject);
			if (find_step(b, STEP_PHASE_CONFIRM, b->culprit, 0) && find_step(b, STEP_PHASE_CONFIRM, b->culprit, 1))
				strbuf_addf(sb, " <a href=\"%s#compare\">what changed%s</a>", file,
					    find_step(b, STEP_PHASE_PROFILE, b->culprit, 0) && find_step(b, STEP_PHASE_PROFILE, b->culprit, 1)
						    ? ", profile" : "");
		} else if (b->nr_candidates) {
			strbuf_addf(sb, "one of %zu", b->nr_candidates);
		} else {
			strbuf_addstr(sb, "-");
		}
		strbuf_addstr(sb, "</td><td class=\"num\">");
		add_kpi_change(sb, b);
		strbuf_addstr(sb, "</td><td>");
		add_time(sb, b->finished_at);
		strbuf_addstr(sb, "</td></tr>\n");
		free(file);
	}
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
}

static const char *tip_class(const char *status)
{
	if (!strcmp(status, "regression"))
		return "bad";
	if (!strcmp(status, "improvement"))
		return "good";
	if (strstr(status, "failed"))
		return "skip";
	return "muted";
}

static void index_tracks(struct strbuf *sb, const struct report *r)
{
	strbuf_addstr(sb, "<h2 id=\"tracks\">Tracked branches</h2>\n");
	if (!r->nr_tracks) {
		strbuf_addstr(sb, "<p class=\"muted\">No tracked branches.</p>\n");
		return;
	}
	strbuf_addstr(sb, "<div class=\"scroll\"><table>\n<thead><tr><th>name</th><th>repository</th><th>branch</th>"
			  "<th>latest tip</th><th>status</th><th>tested</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nr_tracks; i++) {
		const struct report_track *t = &r->tracks[i];
		const struct report_tip *tip = t->nr_tips ? &t->tips[t->nr_tips - 1] : NULL;
		char *file = report_track_file(t);

		strbuf_addf(sb, "<tr><td><a href=\"%s\">", file);
		html_esc(sb, t->name);
		strbuf_addstr(sb, "</a></td><td><code>");
		html_esc(sb, t->repo);
		strbuf_addstr(sb, "</code></td><td><code>");
		{
			struct strbuf u = STRBUF_INIT;
			strbuf_add_url_redacted(&u, t->remote, 1);
			html_esc(sb, u.buf);
			strbuf_release(&u);
		}
		strbuf_addch(sb, ' ');
		html_esc(sb, t->branch);
		strbuf_addstr(sb, "</code></td>");
		if (tip) {
			strbuf_addstr(sb, "<td class=\"subject\">");
			add_hash(sb, tip->hash);
			strbuf_addch(sb, ' ');
			html_esc(sb, tip->subject);
			strbuf_addf(sb, "</td><td class=\"%s\">", tip_class(tip->status));
			html_esc(sb, tip->status);
			strbuf_addstr(sb, "</td><td>");
			add_time(sb, tip->created_at);
			strbuf_addstr(sb, "</td>");
		} else {
			strbuf_addstr(sb, "<td class=\"muted\">no tip tested yet</td><td>-</td><td>-</td>");
		}
		strbuf_addstr(sb, "</tr>\n");
		free(file);
	}
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
}

static void index_hosts(struct strbuf *sb, const struct report *r)
{
	strbuf_addstr(sb, "<h2 id=\"hosts\">Hosts</h2>\n");
	if (!r->nr_hosts) {
		strbuf_addstr(sb, "<p class=\"muted\">No hosts registered: guests run on the local libvirt "
				  "(<code>libvirt_uri</code> in klab.conf).</p>\n");
		return;
	}
	strbuf_addstr(sb, "<div class=\"scroll\"><table>\n<thead><tr><th>name</th><th>libvirt URI</th><th>CPUs</th>"
			  "<th class=\"num\">max guests</th><th>accelerator</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct report_host *h = &r->hosts[i];
		strbuf_addstr(sb, "<tr><td>");
		html_esc(sb, h->name);
		strbuf_addstr(sb, "</td><td><code>");
		html_esc(sb, h->uri);
		strbuf_addstr(sb, "</code></td><td>");
		html_esc(sb, h->cpus ? h->cpus : "all");
		strbuf_addf(sb, "</td><td class=\"num\">%d</td><td>", h->max_guests);
		html_esc(sb, h->accel);
		strbuf_addstr(sb, "</td></tr>\n");
	}
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
}

static int comparable(const struct report_run_set *a, const struct report_run_set *b)
{
	return a->kpi && b->kpi && a->accel && b->accel && !strcmp(a->kpi, b->kpi) && !strcmp(a->accel, b->accel);
}

/* The stored run sets klab compare can put side by side: which they are
 * and the command that compares them (klab compare keeps no record of
 * which sets one comparison had, so the page cannot pair them itself). */
static void index_run_sets(struct strbuf *sb, const struct report *r)
{
	if (!r->nr_run_sets)
		return;
	strbuf_addstr(sb, "<h2 id=\"run-sets\">Run sets</h2>\n<p>Runs of <code>klab run</code>, "
			  "<code>klab compare</code> and <code>klab reproduce</code>, newest first. "
			  "<code>klab compare --runset A B</code> puts stored sets side by side (LKP's table; "
			  "<code>--html FILE</code> writes it as a page); sets of one accelerator only.</p>\n");
	strbuf_addstr(sb, "<div class=\"scroll\"><table>\n<thead><tr><th class=\"num\">id</th><th>job</th>"
			  "<th>test</th><th>commit</th><th>accelerator</th><th class=\"num\">ok runs</th>"
			  "<th class=\"num\">KPI median ± %stddev</th><th>KPI</th><th>created</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < r->nr_run_sets; i++) {
		const struct report_run_set *rs = &r->run_sets[i];

		strbuf_addf(sb, "<tr id=\"run-set-%lld\"><td class=\"num\">%lld</td><td><code>", (long long)rs->id,
			    (long long)rs->id);
		html_esc(sb, rs->job_path);
		strbuf_addstr(sb, "</code></td><td>");
		html_esc(sb, rs->suite);
		strbuf_addch(sb, ' ');
		html_esc(sb, rs->testcase);
		strbuf_addstr(sb, "</td><td>");
		if (rs->commit)
			add_hash(sb, rs->commit);
		else
			strbuf_addstr(sb, "-");
		strbuf_addstr(sb, "</td><td>");
		html_esc(sb, rs->accel);
		strbuf_addf(sb, "</td><td class=\"num\">%zu/%d</td><td class=\"num\">", rs->nr_kpi, rs->repeat);
		add_median(sb, rs->kpi_values, rs->nr_kpi);
		strbuf_addstr(sb, "</td><td><code>");
		html_esc(sb, rs->kpi);
		strbuf_addstr(sb, "</code></td><td>");
		add_time(sb, rs->created_at);
		strbuf_addstr(sb, "</td></tr>\n");
	}
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
	/* the newest two of one KPI and accelerator: the likeliest pair */
	for (size_t i = 1; i < r->nr_run_sets; i++) {
		const struct report_run_set *a = &r->run_sets[i], *b = NULL;

		for (size_t j = 0; j < i && !b; j++)
			if (comparable(a, &r->run_sets[j]))
				b = &r->run_sets[j];
		if (b) {
			strbuf_addf(sb, "<p>For example: <code>klab compare --runset %lld %lld --html "
					"compare-%lld-%lld.html</code></p>\n",
				    (long long)a->id, (long long)b->id, (long long)a->id, (long long)b->id);
			break;
		}
	}
}

void report_render_index(struct strbuf *out, const struct report *r)
{
	struct strbuf body = STRBUF_INIT;

	strbuf_addstr(&body, "<h1>klab report</h1>\n");
	strbuf_addf(&body, "<p>%zu bisection%s, %zu tracked branch%s, %zu host%s", r->nr_bisections,
		    r->nr_bisections == 1 ? "" : "s", r->nr_tracks, r->nr_tracks == 1 ? "" : "es", r->nr_hosts,
		    r->nr_hosts == 1 ? "" : "s");
	if (r->nr_run_sets)
		strbuf_addf(&body, ", %zu run set%s", r->nr_run_sets, r->nr_run_sets == 1 ? "" : "s");
	strbuf_addstr(&body, ".</p>\n");
	index_bisections(&body, r);
	index_tracks(&body, r);
	index_run_sets(&body, r);
	index_hosts(&body, r);
	html_page(out, "klab report", body.buf);
	strbuf_release(&body);
}

/* ---- a bisection --------------------------------------------------------- */

static void step_title(struct strbuf *t, const struct report_bisection *b, const struct report_step *s)
{
	strbuf_addf(t, "step %d (%s) %.12s", s->seq, s->phase, s->hash);
	if (s->subject)
		strbuf_addf(t, " %s", s->subject);
	strbuf_addf(t, "\n%s", s->verdict ? s->verdict : s->status);
	if (b->kind_id == BISECTION_JOB) {
		strbuf_addstr(t, ": ");
		if (s->nr_kpi)
			strbuf_addf(t, "median %.6g ±%.0f%%, %zu runs, min %.6g, max %.6g", stats_median(s->kpi, s->nr_kpi),
				    stats_cv_percent(s->kpi, s->nr_kpi), s->nr_kpi,
				    stats_quantile(s->kpi, s->nr_kpi, 0), stats_quantile(s->kpi, s->nr_kpi, 1));
		else
			strbuf_addstr(t, "no KPI value");
	}
	if (s->reason)
		strbuf_addf(t, "\n%s", s->reason);
}

static void add_band(struct svg_band *band, size_t *n, const struct report_step *s, const char *cls,
		     const char *label)
{
	if (!s || !s->nr_kpi)
		return;
	band[*n].lo = stats_quantile(s->kpi, s->nr_kpi, 0);
	band[*n].hi = stats_quantile(s->kpi, s->nr_kpi, 1);
	band[*n].mid = stats_median(s->kpi, s->nr_kpi);
	band[*n].cls = cls;
	band[*n].label = label;
	(*n)++;
}

static void bisection_chart(struct strbuf *sb, const struct report_bisection *b)
{
	struct svg_point *pts = xcalloc(b->nr_steps, sizeof(*pts));
	struct strbuf *titles = xcalloc(b->nr_steps, sizeof(*titles));
	char (*labels)[16] = xcalloc(b->nr_steps, sizeof(*labels));
	struct svg_band bands[2];
	size_t nb = 0;
	struct svg_chart c = { 0 };
	char *title = xstrfmt("%s for every tested commit of bisection %lld", b->kpi ? b->kpi : "KPI",
			      (long long)b->id);

	for (size_t i = 0; i < b->nr_steps; i++) {
		const struct report_step *s = &b->steps[i];
		strbuf_init(&titles[i], 0);
		step_title(&titles[i], b, s);
		snprintf(labels[i], sizeof(labels[i]), "%d", s->seq);
		pts[i].v = s->kpi;
		pts[i].n = s->nr_kpi;
		pts[i].cls = verdict_class(s->mark);
		pts[i].label = labels[i];
		pts[i].title = titles[i].buf;
		pts[i].mark = b->culprit && !strcmp(s->hash, b->culprit) && s->phase_id == STEP_PHASE_CONFIRM ? "culprit" : NULL;
	}
	add_band(bands, &nb, good_reference(b), "good", "good reference");
	add_band(bands, &nb, bad_reference(b), "bad", "bad reference");
	c.title = title;
	c.ylabel = b->kpi;
	c.points = pts;
	c.nr_points = b->nr_steps;
	c.bands = bands;
	c.nr_bands = nb;
	strbuf_addstr(sb, "<h2 id=\"chart\">KPI of every tested commit</h2>\n<div class=\"chart\">\n");
	svg_chart(sb, &c);
	strbuf_addstr(sb, "</div>\n<p class=\"legend\"><span><span class=\"sw good\">&#9679;</span>good</span>"
			  "<span><span class=\"sw bad\">&#9679;</span>bad</span><span><span class=\"sw skip\">&#9679;"
			  "</span>skip or undecided</span><span><span class=\"sw ref-good\">&#9632;</span>good reference "
			  "runs (min&#8211;max, median dashed)</span><span><span class=\"sw ref-bad\">&#9632;</span>bad "
			  "reference runs</span></p>\n"
			  "<p class=\"muted\">x: steps in the order tested (references first, confirmation last); "
			  "each dot is one run, the bar spans min to max, the tick is the median; a cross marks a "
			  "step without a value (build or boot failure).</p>\n");
	for (size_t i = 0; i < b->nr_steps; i++)
		strbuf_release(&titles[i]);
	free(titles);
	free(labels);
	free(pts);
	free(title);
}

static int unconfirmed(const struct report_bisection *b)
{
	return b->result_id == BISECTION_UNCONFIRMED;
}

static void culprit_box(struct strbuf *sb, const struct report_bisection *b)
{
	if (b->culprit) {
		if (unconfirmed(b))
			strbuf_addstr(sb, "<section class=\"culprit\">\n<h2 id=\"culprit\">Suspect, NOT confirmed</h2>\n"
					  "<p>The bisection ended on this commit, but re-measured against its parent "
					  "(interleaved runs) it does not carry the regression: no culprit is named. "
					  "The outcome above and the confirm steps' evidence below say why.</p>\n"
					  "<dl class=\"facts\">\n<dt>commit</dt><dd><code>");
		else
			strbuf_addstr(sb, "<section class=\"culprit\">\n<h2 id=\"culprit\">First bad commit</h2>\n"
					  "<dl class=\"facts\">\n<dt>commit</dt><dd><code>");
		html_esc(sb, b->culprit);
		strbuf_addstr(sb, "</code></dd>\n");
		if (b->culprit_subject) {
			add_fact(sb, "subject", b->culprit_subject);
			add_fact(sb, "author", b->culprit_author);
			strbuf_addstr(sb, "<dt>date</dt><dd>");
			add_time(sb, b->culprit_time);
			strbuf_addstr(sb, "</dd>\n");
		}
		strbuf_addstr(sb, "</dl>\n");
		if (b->culprit_message) {
			strbuf_addstr(sb, "<h3>message</h3>\n");
			add_pre(sb, b->culprit_message);
		}
		if (b->culprit_files) {
			strbuf_addstr(sb, "<h3>files changed</h3>\n");
			add_pre(sb, b->culprit_files);
		}
		strbuf_addstr(sb, "</section>\n");
	} else if (b->nr_candidates) {
		strbuf_addstr(sb, "<section class=\"culprit\">\n<h2 id=\"culprit\">Only skipped commits left</h2>\n"
				  "<p>The first bad commit could be any of:</p>\n<ul>\n");
		for (size_t i = 0; i < b->nr_candidates; i++) {
			strbuf_addstr(sb, "<li><code>");
			html_esc(sb, b->candidates[i]);
			strbuf_addstr(sb, "</code></li>\n");
		}
		strbuf_addstr(sb, "</ul>\n</section>\n");
	}
}

static void kpi_row(struct strbuf *sb, const char *label, const struct report_step *s, double good_median)
{
	if (!s)
		return;
	strbuf_addf(sb, "<tr><td>%s</td><td>", label);
	add_hash(sb, s->hash);
	strbuf_addstr(sb, "</td><td class=\"num\">");
	add_median(sb, s->kpi, s->nr_kpi);
	strbuf_addstr(sb, "</td><td class=\"num\">");
	if (s->nr_kpi && isfinite(good_median))
		strbuf_addf(sb, "%+.1f%%", stats_change_percent(good_median, stats_median(s->kpi, s->nr_kpi)));
	else
		strbuf_addstr(sb, "-");
	strbuf_addf(sb, "</td><td class=\"num\">%zu</td><td class=\"%s\">", s->nr_kpi, verdict_class(s->mark));
	html_esc(sb, s->verdict ? s->verdict : s->status);
	strbuf_addstr(sb, "</td></tr>\n");
}

static void kpi_table(struct strbuf *sb, const struct report_bisection *b, const struct report_step *parent,
		      const struct report_step *cul)
{
	const struct report_step *g = good_reference(b), *x = bad_reference(b);
	double gm = g && g->nr_kpi ? stats_median(g->kpi, g->nr_kpi) : NAN;

	if (!g && !x && !parent && !cul)
		return;
	strbuf_addstr(sb, "<h2 id=\"kpi\">");
	html_esc(sb, b->kpi);
	strbuf_addstr(sb, "</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th></th><th>commit</th>"
			  "<th class=\"num\">median ± %stddev</th><th class=\"num\">%change vs good</th>"
			  "<th class=\"num\">runs</th><th>verdict</th></tr></thead>\n<tbody>\n");
	kpi_row(sb, "good", g, gm);
	kpi_row(sb, "parent", parent, gm);
	kpi_row(sb, unconfirmed(b) ? "suspect" : "culprit", cul, gm);
	kpi_row(sb, "bad", x, gm);
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
}

/* Two change points: the split commit and each half's commit, with its
 * share of the regression and what its confirmation said. */
static void halves_section(struct strbuf *sb, const struct report_bisection *b)
{
	if (!b->split[0])
		return;
	strbuf_addstr(sb, "<h2 id=\"halves\">Two changes</h2>\n<p>The range split at <code>");
	html_esc(sb, b->split);
	strbuf_addstr(sb, "</code>, a commit clearly apart from both ends; each half was bisected and confirmed "
			  "with its own ends.</p>\n<div class=\"scroll\"><table>\n<thead><tr><th>half</th><th>commit</th>"
			  "<th>subject</th><th class=\"num\">share of the regression</th><th>confirmation</th>"
			  "<th>this culprit alone reverted</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < b->nr_halves; i++) {
		const struct report_half *h = &b->halves[i];

		strbuf_addf(sb, "<tr><td>%d</td><td>", h->half);
		if (h->has_culprit) {
			strbuf_addf(sb, "<code class=\"%s\">", h->confirmed ? "bad" : "skip");
			html_esc(sb, h->culprit);
			strbuf_addstr(sb, "</code>");
		} else {
			strbuf_addstr(sb, "none (only skipped commits left)");
		}
		strbuf_addstr(sb, "</td><td>");
		html_esc(sb, h->subject ? h->subject : "");
		strbuf_addstr(sb, "</td><td class=\"num\">");
		if (isnan(h->share))
			strbuf_addstr(sb, "-");
		else
			strbuf_addf(sb, "%.0f%%", h->share);
		strbuf_addstr(sb, "</td><td>");
		html_esc(sb, h->message ? h->message : "");
		strbuf_addstr(sb, "</td><td>");
		if (h->revert.outcome != REVERT_NONE) {
			struct strbuf line = STRBUF_INIT;

			revert_check_line(&line, &h->revert);
			html_esc(sb, line.buf + strlen("revert check: "));
			strbuf_release(&line);
		} else {
			strbuf_addstr(sb, "-");
		}
		strbuf_addstr(sb, "</td></tr>\n");
	}
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
}

/* Does the regression go away without the culprit?  The bad end with
 * it reverted (klab's own commit), measured against the references. */
static void revert_section(struct strbuf *sb, const struct report_bisection *b)
{
	const struct revert_check *rc = &b->revert;
	struct strbuf line = STRBUF_INIT;

	if (rc->outcome == REVERT_NONE)
		return;
	revert_check_line(&line, rc);
	strbuf_addf(sb, "<h2 id=\"revert\">Revert check</h2>\n<p class=\"%s\">",
		    rc->outcome == REVERT_RESTORES_GOOD ? "good" : rc->outcome == REVERT_NO_RESTORE ? "bad" : "skip");
	html_esc(sb, line.buf + strlen("revert check: "));
	strbuf_addstr(sb, "</p>\n<p class=\"muted\">The bad end with the culprit reverted, a commit klab made in "
			  "its own worktree (never in your repository)");
	if (rc->commit[0]) {
		strbuf_addstr(sb, ": <code>");
		html_esc(sb, rc->commit);
		strbuf_addstr(sb, "</code>");
	}
	strbuf_addstr(sb, ", built and measured against the good and bad ends by the rules of every step.</p>\n");
	if (rc->detail && (rc->outcome == REVERT_RESTORES_GOOD || rc->outcome == REVERT_NO_RESTORE))
		add_pre(sb, rc->detail);
	strbuf_release(&line);
}

static void lkp_cell(struct strbuf *sb, double mean, size_t n, double cv)
{
	if (!n) {
		strbuf_addstr(sb, "<td class=\"num\">-</td><td class=\"num\"></td>");
		return;
	}
	strbuf_addstr(sb, "<td class=\"num\">");
	add_num(sb, mean);
	strbuf_addstr(sb, "</td><td class=\"num\">");
	if (n > 1)
		strbuf_addf(sb, "± %.0f%%", cv);
	strbuf_addstr(sb, "</td>");
}

static void lkp_row(struct strbuf *sb, const struct compare_row *r)
{
	strbuf_addstr(sb, "<tr>");
	lkp_cell(sb, r->mean_a, r->na, r->cv_a);
	if (compare_profile_section(r->name) && isfinite(r->delta))
		strbuf_addf(sb, "<td class=\"num\">%+.1f</td>", r->delta);	/* points, as LKP */
	else if (isinf(r->change))
		strbuf_addstr(sb, "<td class=\"num\">new</td>");
	else if (isnan(r->change))
		strbuf_addstr(sb, "<td class=\"num\">-</td>");
	else
		strbuf_addf(sb, "<td class=\"num\">%+.1f%%</td>", r->change);
	lkp_cell(sb, r->mean_b, r->nb, r->cv_b);
	strbuf_addstr(sb, "<td><code>");
	html_esc(sb, r->name);
	strbuf_addstr(sb, "</code></td></tr>\n");
}

/* compare.c's "what changed": the top rows of each monitor family. */
static void what_changed(struct strbuf *sb, const struct compare_row *rows, size_t n)
{
	struct strbuf text = STRBUF_INIT;
	int profile = 0;

	compare_summary(&text, rows, n, 3, "");
	if (!text.len)
		return;
	for (size_t i = 0; i < n && !profile; i++)
		profile = compare_profile_section(rows[i].name) != 0;
	strbuf_addf(sb, "<p>What changed, most significant first in each family%s:</p>\n<pre>",
		    profile ? " (the profile: the largest change in points first)" : "");
	html_esc(sb, text.buf);
	strbuf_addstr(sb, "</pre>\n");
	strbuf_release(&text);
}

/* A step's KPI and monitor stats as a set of runcompare.c's (copied:
 * the set owns them); with prof, its perf-profile rows from prof. */
static void add_step_set(struct runcmp *c, const char *label, const struct report_step *s,
			 const struct report_step *prof)
{
	struct runcmp_set *set = runcmp_add_set(c, label);
	size_t n = s->nr_stats + (prof ? prof->nr_stats : 0);

	set->kpi = xcalloc(s->nr_kpi + 1, sizeof(*set->kpi));
	if (s->nr_kpi)
		memcpy(set->kpi, s->kpi, s->nr_kpi * sizeof(*s->kpi));
	set->nr_kpi = s->nr_kpi;
	set->vals = xcalloc(n + 1, sizeof(*set->vals));
	for (int from_prof = 0; from_prof < 2; from_prof++) {
		const struct report_step *src = from_prof ? prof : s;

		for (size_t i = 0; src && i < src->nr_stats; i++) {
			const struct report_stat *m = &src->stats[i];
			struct db_mon_values *v;

			/* the profile from the profiled runs, the rest from s */
			if (prof && !compare_profile_section(m->name) != !from_prof)
				continue;
			v = &set->vals[set->nr_vals++];
			v->name = xstrdup(m->name);
			v->v = xcalloc(m->n + 1, sizeof(*v->v));
			if (m->n)
				memcpy(v->v, m->v, m->n * sizeof(*m->v));
			v->n = m->n;
		}
	}
}

/* LKP's comparison: parent and culprit, the KPI and every monitor stat
 * whose change is real by compare.c's rule, most significant first, the
 * profile (from the profile steps pp and pc, when both ran) in sections
 * of its own: paired by runcompare.c, as bisect show and klab compare. */
static void comparison_table(struct strbuf *sb, const struct report_bisection *b, const struct report_step *p,
			     const struct report_step *c, const struct report_step *pp, const struct report_step *pc)
{
	struct runcmp rc = { 0 };
	const struct runcmp_pair *pair;
	int section = 0;

	if (!pp || !pc)
		pp = pc = NULL;
	rc.kpi = xstrdup(b->kpi ? b->kpi : "KPI");
	rc.direction = 1;
	add_step_set(&rc, "parent", p, pp);
	add_step_set(&rc, "culprit", c, pc);
	runcmp_compute(&rc);
	pair = &rc.pairs[0];
	strbuf_addstr(sb, "<h2 id=\"compare\">Parent and culprit compared</h2>\n");
	strbuf_addstr(sb, "<p>The confirmation runs, LKP style: mean per run, relative standard deviation, "
			  "change of the mean; monitor counters are per-run deltas (vmstat, interrupts) or values "
			  "after the run (meminfo). A monitor row is shown when the change is real by LKP's rule "
			  "(the runs' ranges apart, by more than half the change from 3 runs each, at least 5%), "
			  "most significant first (gap over the pooled spread), not largest first.");
	if (pp)
		strbuf_addf(sb, " The perf-profile rows come from the profile runs (steps %d and %d) and follow in "
				"sections of their own: shares of the samples, a row shown from a 1%% share when it "
				"moves by 0.5 points or more, its change in points, largest first.", pp->seq, pc->seq);
	strbuf_addstr(sb, "</p>\n");
	what_changed(sb, pair->rows, pair->nr_rows);
	strbuf_addstr(sb, "<div class=\"scroll\"><table>\n<thead><tr><th class=\"num\">parent mean</th>"
			  "<th class=\"num\">%stddev</th><th class=\"num\">%change</th><th class=\"num\">culprit mean</th>"
			  "<th class=\"num\">%stddev</th><th>name</th></tr></thead>\n<tbody>\n");
	lkp_row(sb, &pair->kpi);	/* shown whether it changed or not */
	for (size_t k = 0; k < pair->nr_rows; k++) {
		const struct compare_row *r = &pair->rows[k];
		int sec = compare_profile_section(r->name);

		if (sec && sec != section) {
			strbuf_addstr(sb, "<tr><th colspan=\"6\">");
			html_esc(sb, compare_profile_section_name(sec));
			strbuf_addstr(sb, ": % of the samples, change in points, largest first</th></tr>\n");
		}
		section = sec;
		lkp_row(sb, r);
	}
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
	if (pair->nr_stats > pair->nr_rows)
		strbuf_addf(sb, "<p class=\"muted\">%zu monitor stat%s without a real change not shown.</p>\n",
			    pair->nr_stats - pair->nr_rows, pair->nr_stats - pair->nr_rows == 1 ? "" : "s");
	if (!pair->nr_stats)
		strbuf_addstr(sb, "<p class=\"muted\">No monitor counters were stored for these runs.</p>\n");
	runcmp_release(&rc);
}

static void steps_table(struct strbuf *sb, const struct report_bisection *b)
{
	int job = b->kind_id == BISECTION_JOB;

	strbuf_addstr(sb, "<h2 id=\"steps\">Steps</h2>\n");
	if (!b->nr_steps) {
		strbuf_addstr(sb, "<p class=\"muted\">No step tested yet.</p>\n");
		return;
	}
	strbuf_addstr(sb, "<div class=\"scroll\"><table>\n<thead><tr><th class=\"num\">step</th><th>phase</th>"
			  "<th>commit</th><th>subject</th><th>verdict</th><th>reason</th>");
	if (job)
		strbuf_addstr(sb, "<th class=\"num\">runs</th><th class=\"num\">median ± %stddev</th><th>rule</th>"
				  "<th>build</th><th>boots</th>");
	else
		strbuf_addstr(sb, "<th class=\"num\">exit code</th><th class=\"num\">test time</th><th>build</th>");
	strbuf_addstr(sb, "<th>logs</th></tr></thead>\n<tbody>\n");
	for (size_t i = 0; i < b->nr_steps; i++) {
		const struct report_step *s = &b->steps[i];
		strbuf_addf(sb, "<tr id=\"step-%d\"><td class=\"num\">%d</td><td>", s->seq, s->seq);
		html_esc(sb, s->phase);
		strbuf_addstr(sb, "</td><td>");
		add_hash(sb, s->hash);
		strbuf_addstr(sb, "</td>");
		add_subject_cell(sb, s->subject);
		strbuf_addf(sb, "<td class=\"%s\">", verdict_class(s->mark));
		html_esc(sb, s->verdict ? s->verdict : s->status);
		strbuf_addstr(sb, "</td><td class=\"reason\">");
		html_esc(sb, s->reason);
		strbuf_addstr(sb, "</td>");
		if (job) {
			strbuf_addf(sb, "<td class=\"num\">%d/%d</td><td class=\"num\">", s->runs_ok, s->runs);
			add_median(sb, s->kpi, s->nr_kpi);
			strbuf_addstr(sb, "</td><td>");
			html_esc(sb, s->rule);
			strbuf_addstr(sb, "</td>");
		} else {
			if (s->exit_code >= 0)
				strbuf_addf(sb, "<td class=\"num\">%d</td>", s->exit_code);
			else
				strbuf_addstr(sb, "<td class=\"num\">-</td>");
			char dur[32];
			strbuf_addf(sb, "<td class=\"num\">%s</td>", fmt_duration(s->test_ms, dur, sizeof(dur)));
		}
		strbuf_addstr(sb, "<td>");
		html_esc(sb, s->build_status ? s->build_status : "-");
		if (s->build_excerpt) {
			strbuf_addstr(sb, "<details><summary>errors</summary>");
			add_pre(sb, s->build_excerpt);
			strbuf_addstr(sb, "</details>");
		}
		strbuf_addstr(sb, "</td>");
		if (job) {
			strbuf_addf(sb, "<td>%d/%d ok", s->boots_ok, s->boots);
			if (s->boot_outcome && strcmp(s->boot_outcome, "ok")) {
				strbuf_addstr(sb, "; <span class=\"bad\">");
				html_esc(sb, s->boot_outcome);
				strbuf_addstr(sb, "</span> ");
				html_esc(sb, s->boot_reason);
			}
			if (s->console_excerpt) {
				strbuf_addstr(sb, "<details><summary>console</summary>");
				add_pre(sb, s->console_excerpt);
				strbuf_addstr(sb, "</details>");
			}
			strbuf_addstr(sb, "</td>");
		}
		strbuf_addstr(sb, "<td class=\"logs\">");
		add_log(sb, &s->log, "test");
		add_log(sb, &s->build_log, "build");
		add_log(sb, &s->console, "console");
		add_log(sb, &s->raw, "output");
		strbuf_addstr(sb, "</td></tr>\n");
	}
	strbuf_addstr(sb, "</tbody>\n</table></div>\n");
}

static void evidence(struct strbuf *sb, const struct report_bisection *b)
{
	int any = 0;

	for (size_t i = 0; i < b->nr_steps; i++) {
		const struct report_step *s = &b->steps[i];
		if (!s->evidence)
			continue;
		if (!any++)
			strbuf_addstr(sb, "<h2 id=\"evidence\">How each verdict was decided</h2>\n");
		strbuf_addf(sb, "<details><summary>step %d (", s->seq);
		html_esc(sb, s->phase);
		strbuf_addstr(sb, ") ");
		add_short(sb, s->hash);
		strbuf_addstr(sb, ": ");
		html_esc(sb, s->rule);
		strbuf_addstr(sb, "</summary>\n");
		if (s->nr_kpi) {
			strbuf_addstr(sb, "<p>runs:");
			for (size_t k = 0; k < s->nr_kpi; k++) {
				strbuf_addch(sb, ' ');
				add_num(sb, s->kpi[k]);
			}
			strbuf_addstr(sb, "</p>\n");
		}
		add_pre(sb, s->evidence);
		strbuf_addstr(sb, "</details>\n");
	}
}

static void reproduce(struct strbuf *sb, const struct report_bisection *b, const struct report_step *parent)
{
	strbuf_addstr(sb, "<h2 id=\"reproduce\">How to reproduce</h2>\n<pre>");
	if (b->kind_id == BISECTION_JOB && b->culprit) {
		strbuf_addstr(sb, "klab run --job ");
		add_shell_word(sb, b->job_path ? b->job_path : "JOB");
		strbuf_addstr(sb, " --repo ");
		add_shell_word(sb, b->repo);
		strbuf_addstr(sb, " --rev ");
		add_short(sb, b->culprit);
		strbuf_addstr(sb, "   # culprit\n");
		if (parent) {
			strbuf_addstr(sb, "klab run --job ");
			add_shell_word(sb, b->job_path ? b->job_path : "JOB");
			strbuf_addstr(sb, " --repo ");
			add_shell_word(sb, b->repo);
			strbuf_addstr(sb, " --rev ");
			add_short(sb, parent->hash);
			strbuf_addstr(sb, "   # parent\n");
		}
	} else {
		strbuf_addstr(sb, "klab bisect start --repo ");
		add_shell_word(sb, b->repo);
		for (size_t i = 0; i < b->nr_goods; i++) {
			strbuf_addstr(sb, " --good ");
			html_esc(sb, b->goods[i]);
		}
		strbuf_addstr(sb, " --bad ");
		html_esc(sb, b->bad);
		if (b->kind_id == BISECTION_JOB) {
			strbuf_addstr(sb, " --job ");
			add_shell_word(sb, b->job_path ? b->job_path : "JOB");
		} else {
			strbuf_addstr(sb, " -- ");
			add_argv(sb, b->argv, b->argc);
		}
		strbuf_addch(sb, '\n');
	}
	strbuf_addstr(sb, "</pre>\n");
}

void report_render_bisection(struct strbuf *out, const struct report_bisection *b)
{
	struct strbuf body = STRBUF_INIT;
	int job = b->kind_id == BISECTION_JOB;
	const struct report_step *parent = NULL, *cul = NULL, *prof_parent = NULL, *prof_cul = NULL;
	char *title = xstrfmt("klab bisection %lld: %s", (long long)b->id, outcome_text(b));

	if (b->culprit) {
		cul = find_step(b, STEP_PHASE_CONFIRM, b->culprit, 0);
		parent = find_step(b, STEP_PHASE_CONFIRM, b->culprit, 1);
		prof_cul = find_step(b, STEP_PHASE_PROFILE, b->culprit, 0);
		prof_parent = find_step(b, STEP_PHASE_PROFILE, b->culprit, 1);
	}
	strbuf_addf(&body, "<h1>Bisection %lld: <span class=\"%s\">", (long long)b->id, outcome_class(b));
	html_esc(&body, outcome_text(b));
	strbuf_addstr(&body, "</span></h1>\n<dl class=\"facts\">\n");
	add_fact(&body, "repository", b->repo);
	strbuf_addstr(&body, "<dt>range</dt><dd>");
	add_range(&body, b);
	strbuf_addstr(&body, "</dd>\n");
	if (job) {
		add_fact(&body, "job", b->job_path);
		add_fact(&body, "KPI", b->kpi);
	} else {
		strbuf_addstr(&body, "<dt>test command</dt><dd><code>");
		add_argv(&body, b->argv, b->argc);
		strbuf_addstr(&body, "</code></dd>\n");
	}
	add_fact(&body, "state", b->state);
	if (b->message)
		add_fact(&body, "outcome", b->message);
	strbuf_addstr(&body, "<dt>started</dt><dd>");
	add_time(&body, b->created_at);
	strbuf_addstr(&body, "</dd>\n<dt>finished</dt><dd>");
	add_time(&body, b->finished_at);
	strbuf_addstr(&body, "</dd>\n");
	if (job) {
		strbuf_addstr(&body, "<dt>KPI change</dt><dd>");
		add_kpi_change(&body, b);
		strbuf_addstr(&body, "</dd>\n");
	}
	strbuf_addstr(&body, "</dl>\n");
	culprit_box(&body, b);
	halves_section(&body, b);
	if (job) {
		bisection_chart(&body, b);
		kpi_table(&body, b, parent, cul);
		if (b->drift)
			strbuf_addf(&body, "<p class=\"muted\" id=\"drift\">Drift: the host trended by %+.2f%% per run "
				    "while measuring; each commit was judged against the latest runs of its side (the end and "
				    "the commits decided like it), an end running again when its side had none recent."
				    "</p>\n", b->drift_percent);
		revert_section(&body, b);
		if (parent && cul)
			comparison_table(&body, b, parent, cul, prof_parent, prof_cul);
	}
	steps_table(&body, b);
	evidence(&body, b);
	reproduce(&body, b, parent);
	if (b->job_text) {
		strbuf_addstr(&body, "<details><summary>the job file as bisected</summary>\n");
		add_pre(&body, b->job_text);
		strbuf_addstr(&body, "</details>\n");
	}
	if (b->config) {
		strbuf_addstr(&body, "<details><summary>kernel config recipe</summary>\n");
		add_pre(&body, b->config);
		strbuf_addstr(&body, "</details>\n");
	}
	html_page(out, title, body.buf);
	free(title);
	strbuf_release(&body);
}

/* ---- a tracked branch ---------------------------------------------------- */

static void track_chart(struct strbuf *sb, const struct report_track *t, const struct report_series *se)
{
	struct svg_point *pts = xcalloc(t->nr_tips, sizeof(*pts));
	struct strbuf *titles = xcalloc(t->nr_tips, sizeof(*titles));
	char (*labels)[16] = xcalloc(t->nr_tips, sizeof(*labels));
	struct svg_chart c = { 0 };
	char *title = xstrfmt("%s over the tips of %s", se->kpi, t->name);

	for (size_t i = 0; i < t->nr_tips; i++) {
		const struct report_tip *tip = &t->tips[i];
		strbuf_init(&titles[i], 0);
		strbuf_addf(&titles[i], "%.12s %s\n%s", tip->hash, tip->subject ? tip->subject : "", tip->status);
		if (se->nr_values[i])
			strbuf_addf(&titles[i], ": median %.6g ±%.0f%%, %zu runs", stats_median(se->values[i], se->nr_values[i]),
				    stats_cv_percent(se->values[i], se->nr_values[i]), se->nr_values[i]);
		if (tip->bisection_id)
			strbuf_addf(&titles[i], "\nbisection %lld", (long long)tip->bisection_id);
		snprintf(labels[i], sizeof(labels[i]), "%.7s", tip->hash);
		pts[i].v = se->values[i];
		pts[i].n = se->nr_values[i];
		pts[i].cls = !strcmp(tip->status, "regression") ? "bad" : !strcmp(tip->status, "improvement") ? "good"
			     : strstr(tip->status, "failed") ? "skip" : "none";
		pts[i].label = labels[i];
		pts[i].title = titles[i].buf;
		pts[i].mark = !strcmp(tip->status, "regression") ? "regression"
			      : !strcmp(tip->status, "improvement") ? "improvement" : NULL;
	}
	c.title = title;
	c.ylabel = se->kpi;
	c.points = pts;
	c.nr_points = t->nr_tips;
	c.trend = 1;
	strbuf_addstr(sb, "<h2>");
	html_esc(sb, se->kpi);
	strbuf_addstr(sb, "</h2>\n<p class=\"muted\">job <code>");
	html_esc(sb, se->job_path);
	strbuf_addstr(sb, "</code>; tips oldest first; the line joins the medians, the grey area spans min to max "
			  "of the runs of each tip.</p>\n<div class=\"chart\">\n");
	svg_chart(sb, &c);
	strbuf_addstr(sb, "</div>\n");
	for (size_t i = 0; i < t->nr_tips; i++)
		strbuf_release(&titles[i]);
	free(titles);
	free(labels);
	free(pts);
	free(title);
}

void report_render_track(struct strbuf *out, const struct report_track *t)
{
	struct strbuf body = STRBUF_INIT;
	char *title = xstrfmt("klab tracked branch %s", t->name);

	strbuf_addstr(&body, "<h1>Tracked branch ");
	html_esc(&body, t->name);
	strbuf_addstr(&body, "</h1>\n<dl class=\"facts\">\n");
	add_fact(&body, "repository", t->repo);
	{
		struct strbuf u = STRBUF_INIT;
		strbuf_add_url_redacted(&u, t->remote, 1);
		add_fact(&body, "remote", u.buf);
		strbuf_release(&u);
	}
	add_fact(&body, "branch", t->branch);
	strbuf_addf(&body, "<dt>threshold</dt><dd>%.1f%%</dd>\n</dl>\n", t->threshold_pct);
	if (!t->nr_series)
		strbuf_addstr(&body, "<p class=\"muted\">No KPI measured on these tips yet.</p>\n");
	for (size_t i = 0; i < t->nr_series; i++)
		track_chart(&body, t, &t->series[i]);
	strbuf_addstr(&body, "<h2 id=\"tips\">Tested tips</h2>\n");
	if (!t->nr_tips) {
		strbuf_addstr(&body, "<p class=\"muted\">No tip tested yet.</p>\n");
	} else {
		strbuf_addstr(&body, "<div class=\"scroll\"><table>\n<thead><tr><th>tested</th><th>commit</th>"
				     "<th>subject</th><th>status</th><th>compared to</th><th>bisection</th>"
				     "<th>message</th></tr></thead>\n<tbody>\n");
		for (size_t i = t->nr_tips; i-- > 0;) {
			const struct report_tip *tip = &t->tips[i];
			strbuf_addstr(&body, "<tr><td>");
			add_time(&body, tip->created_at);
			strbuf_addstr(&body, "</td><td>");
			add_hash(&body, tip->hash);
			strbuf_addstr(&body, "</td>");
			add_subject_cell(&body, tip->subject);
			strbuf_addf(&body, "<td class=\"%s\">", tip_class(tip->status));
			html_esc(&body, tip->status);
			strbuf_addstr(&body, "</td><td>");
			if (tip->compared_to)
				add_hash(&body, tip->compared_to);
			strbuf_addstr(&body, "</td><td>");
			if (tip->bisection_id)
				strbuf_addf(&body, "<a href=\"bisect-%lld.html\">bisection %lld</a>",
					    (long long)tip->bisection_id, (long long)tip->bisection_id);
			strbuf_addstr(&body, "</td><td class=\"reason\">");
			html_esc(&body, tip->message);
			strbuf_addstr(&body, "</td></tr>\n");
		}
		strbuf_addstr(&body, "</tbody>\n</table></div>\n");
	}
	html_page(out, title, body.buf);
	free(title);
	strbuf_release(&body);
}

/* ---- names and memory ---------------------------------------------------- */

char *report_bisection_file(const struct report_bisection *b)
{
	return xstrfmt("bisect-%lld.html", (long long)b->id);
}

char *report_track_file(const struct report_track *t)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "track-");
	for (const char *p = t->name; *p && sb.len < 64; p++)
		strbuf_addch(&sb, strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", *p) ? *p
										: '_');
	strbuf_addf(&sb, "-%lld.html", (long long)t->id);
	return strbuf_detach(&sb, NULL);
}

void report_set_log_names(struct report *r)
{
	for (size_t i = 0; i < r->nr_bisections; i++) {
		const struct report_bisection *b = &r->bisections[i];
		for (size_t k = 0; k < b->nr_steps; k++) {
			struct report_step *s = &b->steps[k];
			struct { struct report_log *l; const char *what; } logs[] = {
				{ &s->log, "test" }, { &s->build_log, "build" },
				{ &s->console, "console" }, { &s->raw, "output" },
			};
			for (size_t j = 0; j < ARRAY_SIZE(logs); j++) {
				free(logs[j].l->name);
				logs[j].l->name = logs[j].l->src ? xstrfmt("logs/bisect-%lld/%d-%s.txt", (long long)b->id,
									    s->seq, logs[j].what)
								  : NULL;
			}
		}
	}
}

static void log_release(struct report_log *l)
{
	free(l->src);
	free(l->name);
}

static void step_release(struct report_step *s)
{
	FREE_MANY(s->phase, s->status, s->verdict, s->reason, s->subject, s->kpi, s->rule, s->evidence,
		  s->build_status, s->build_excerpt, s->boot_outcome, s->boot_reason, s->console_excerpt);
	log_release(&s->log);
	log_release(&s->build_log);
	log_release(&s->console);
	log_release(&s->raw);
	for (size_t i = 0; i < s->nr_stats; i++) {
		free(s->stats[i].name);
		free(s->stats[i].v);
	}
	free(s->stats);
}

static void bisection_release_report(struct report_bisection *b)
{
	FREE_MANY(b->repo, b->kind, b->state, b->result, b->message, b->goods, b->job_path, b->job_text, b->kpi,
		  b->config, b->culprit, b->culprit_subject, b->culprit_author, b->culprit_message, b->culprit_files);
	strings_free(b->argv, b->argc);
	strings_free(b->candidates, b->nr_candidates);
	revert_check_release(&b->revert);
	for (size_t i = 0; i < b->nr_steps; i++)
		step_release(&b->steps[i]);
	free(b->steps);
	for (size_t i = 0; i < b->nr_halves; i++) {
		free(b->halves[i].subject);
		free(b->halves[i].message);
		revert_check_release(&b->halves[i].revert);
	}
	free(b->halves);
}

static void track_release(struct report_track *t)
{
	FREE_MANY(t->name, t->repo, t->remote, t->branch);
	for (size_t i = 0; i < t->nr_tips; i++)
		FREE_MANY(t->tips[i].status, t->tips[i].message, t->tips[i].subject, t->tips[i].compared_to);
	free(t->tips);
	for (size_t i = 0; i < t->nr_series; i++) {
		for (size_t k = 0; k < t->nr_tips; k++)
			free(t->series[i].values[k]);
		FREE_MANY(t->series[i].values, t->series[i].nr_values, t->series[i].job_path, t->series[i].kpi);
	}
	free(t->series);
}

void report_release(struct report *r)
{
	for (size_t i = 0; i < r->nr_bisections; i++)
		bisection_release_report(&r->bisections[i]);
	free(r->bisections);
	for (size_t i = 0; i < r->nr_tracks; i++)
		track_release(&r->tracks[i]);
	free(r->tracks);
	for (size_t i = 0; i < r->nr_hosts; i++)
		FREE_MANY(r->hosts[i].name, r->hosts[i].uri, r->hosts[i].cpus, r->hosts[i].accel);
	free(r->hosts);
	for (size_t i = 0; i < r->nr_run_sets; i++) {
		struct report_run_set *rs = &r->run_sets[i];
		FREE_MANY(rs->job_path, rs->suite, rs->testcase, rs->kpi, rs->commit, rs->accel, rs->state,
			  rs->kpi_values);
	}
	free(r->run_sets);
	memset(r, 0, sizeof(*r));
}
