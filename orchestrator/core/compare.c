/* LKP's comparison of two run sets (compare.h): which stats changed for
 * real, ranked by significance rather than by the size of the change, so
 * a noisy counter that happens to move a lot (stat.cpu.softirq ±173%
 * +850%) sits below a clean one (thp_fault_alloc 0 -> 1183). */
#include "core/compare.h"
#include "core/stats.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void range(const double *v, size_t n, double *lo, double *hi)
{
	*lo = *hi = v[0];
	for (size_t i = 1; i < n; i++) {
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

static int all_integral(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] != floor(v[i]))
			return 0;
	return 1;
}

/* The spread the gap is measured in: the pooled standard deviation, but
 * never below what the values can resolve (counters are whole numbers,
 * known to ±0.5), so two constant sets 0 vs 3 do not outrank everything. */
static double spread(const struct compare_stat *s, double sd_a, double sd_b, double scale)
{
	double pooled = 0, floor_ = 1e-9 * scale;
	size_t df = s->na + s->nb - 2;

	if (s->na + s->nb > 2)
		pooled = sqrt(((double)(s->na - 1) * sd_a * sd_a + (double)(s->nb - 1) * sd_b * sd_b) / (double)df);
	if (all_integral(s->a, s->na) && all_integral(s->b, s->nb))
		floor_ = 0.5;
	if (floor_ <= 0)
		floor_ = 1e-300;
	return pooled > floor_ ? pooled : floor_;
}

static const char *const profile_sections[] = { "perf-profile.self.", "perf-profile.children.",
						  "perf-profile.calltrace.", "perf-profile." };

int compare_profile_section(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(profile_sections); i++)
		if (!strncmp(name, profile_sections[i], strlen(profile_sections[i])))
			return (int)i + 1;
	return 0;
}

const char *compare_profile_section_name(int section)
{
	static const char *const names[] = { "perf-profile.self", "perf-profile.children", "perf-profile.calltrace",
					     "perf-profile" };

	return section >= 1 && section <= (int)ARRAY_SIZE(names) ? names[section - 1] : NULL;
}

int compare_stat_changed(const struct compare_stat *s, struct compare_row *row)
{
	struct compare_row r;
	double lo_a, hi_a, lo_b, hi_b, sd_a, sd_b, min_change;

	memset(&r, 0, sizeof(r));
	r.name = s->name;
	r.na = s->na;
	r.nb = s->nb;
	r.change = NAN;
	/* a side's figures even when the other has no runs (a table row) */
	if (s->na) {
		r.mean_a = stats_mean(s->a, s->na);
		r.cv_a = stats_cv_percent(s->a, s->na);
	}
	if (s->nb) {
		r.mean_b = stats_mean(s->b, s->nb);
		r.cv_b = stats_cv_percent(s->b, s->nb);
	}
	if (row)
		*row = r;
	if (!s->na || !s->nb)
		return 0;
	sd_a = stats_stddev(s->a, s->na);
	sd_b = stats_stddev(s->b, s->nb);
	if (r.mean_a != 0)
		r.change = 100 * (r.mean_b - r.mean_a) / fabs(r.mean_a);
	else
		r.change = r.mean_b > 0 ? INFINITY : r.mean_b < 0 ? -INFINITY : 0;
	r.delta = r.mean_b - r.mean_a;
	range(s->a, s->na, &lo_a, &hi_a);
	range(s->b, s->nb, &lo_b, &hi_b);
	/* > 0 only when the ranges do not overlap */
	r.gap = fmax(lo_b - hi_a, lo_a - hi_b);
	r.score = r.gap / spread(s, sd_a, sd_b, fmax(fabs(r.mean_a), fabs(r.mean_b)));
	if (row)
		*row = r;
	if (!(r.gap > 0) || !isfinite(r.mean_a) || !isfinite(r.mean_b))
		return 0;
	/* LKP (lib/changed_stat.rb): whole counts apart by one are noise */
	if (r.gap == 1 && all_integral(s->a, s->na) && all_integral(s->b, s->nb))
		return 0;
	/* LKP's gap rule: with enough runs to see a spread, the ranges must
	 * be apart by more than half the change, else they only just miss */
	if (s->na >= COMPARE_GAP_MIN_RUNS && s->nb >= COMPARE_GAP_MIN_RUNS &&
	    r.gap <= fabs(r.mean_b - r.mean_a) / COMPARE_GAP_DISTANCE)
		return 0;
	if (compare_profile_section(s->name))
		return fmax(r.mean_a, r.mean_b) >= COMPARE_PROFILE_MIN_SHARE &&
		       fabs(r.delta) >= COMPARE_PROFILE_MIN_POINTS;
	min_change = s->perf ? COMPARE_MIN_CHANGE_PERF : COMPARE_MIN_CHANGE;
	return fabs(r.change) >= min_change;
}

/* The others by significance; then the profile's sections, each by the
 * change in points (a share that moves 13.5 -> 90.4 is the news, however
 * clean a 0.6 -> 1.2 beside it is). */
/* A counter that one side never had and the other always has (from 0:
 * "new", to 0: -100%): the plainest evidence there is, as the demo's
 * vmstat.thp_fault_alloc 0 -> 2502, which the spread of busier counters
 * would otherwise rank below them. */
static int appears_or_vanishes(const struct compare_row *r)
{
	return isinf(r->change) || r->change == -100;
}

static int by_significance(const void *x, const void *y)
{
	const struct compare_row *a = x, *b = y;
	double ca = fabs(a->change), cb = fabs(b->change);
	int sa = compare_profile_section(a->name), sb = compare_profile_section(b->name);

	if (sa != sb)
		return sa < sb ? -1 : 1;
	if (sa && fabs(a->delta) != fabs(b->delta))
		return fabs(a->delta) < fabs(b->delta) ? 1 : -1;
	if (!sa && appears_or_vanishes(a) != appears_or_vanishes(b))
		return appears_or_vanishes(a) ? -1 : 1;
	if (a->score != b->score)
		return a->score < b->score ? 1 : -1;
	if (ca != cb)
		return ca < cb ? 1 : -1;
	return strcmp(a->name, b->name);
}

void compare_sets(const struct compare_stat *stats, size_t n, struct compare_row **rows, size_t *nr)
{
	*rows = NULL;
	*nr = 0;
	for (size_t i = 0; i < n; i++) {
		struct compare_row r;

		if (!compare_stat_changed(&stats[i], &r))
			continue;
		if (!*rows)
			*rows = xcalloc(n, sizeof(**rows));
		(*rows)[(*nr)++] = r;
	}
	if (*nr > 1)
		qsort(*rows, *nr, sizeof(**rows), by_significance);
}

static const struct {
	const char *family, *prefix;
} families[] = {
	{ "profile", "perf-profile." },
	{ "memory", "meminfo." },
	{ "memory", "numa-meminfo." },
	{ "interrupts", "interrupts." },
	{ "interrupts", "softirqs." },
	{ "vmstat", "vmstat." },
	{ "vmstat", "numa-vmstat." },
	{ "stat", "stat." },
};
static const char *const family_order[] = { "profile", "memory", "interrupts", "vmstat", "stat" };

const char *compare_family(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		if (!strncmp(name, families[i].prefix, strlen(families[i].prefix)))
			return families[i].family;
	return NULL;
}

/* A mean as LKP prints it: whole numbers from 1000 up. */
static void add_value(struct strbuf *sb, int width, double v)
{
	if (fabs(v) >= 1000 && fabs(v) < 1e15)
		strbuf_addf(sb, "%*.0f", width, v);
	else
		strbuf_addf(sb, "%*.4g", width, v);
}

static void add_stddev(struct strbuf *sb, size_t n, double cv)
{
	if (n > 1 && cv >= 0.5)
		strbuf_addf(sb, " ±%3.0f%%", fmin(cv, 999));
	else
		strbuf_addstr(sb, "      ");
}

static void add_change(struct strbuf *sb, const struct compare_row *r)
{
	double change = r->change;

	if (compare_profile_section(r->name) && isfinite(r->delta))
		strbuf_addf(sb, "%+9.1f ", r->delta);	/* points: LKP prints no % */
	else if (isinf(change))
		strbuf_addf(sb, "%10s", change > 0 ? "new" : "-inf");
	else if (isnan(change))
		strbuf_addf(sb, "%10s", "-");
	else
		strbuf_addf(sb, "%+9.1f%%", change);
}

static void add_row(struct strbuf *sb, const struct compare_row *r, const char *indent, int width)
{
	strbuf_addstr(sb, indent);
	add_value(sb, width, r->mean_a);
	add_stddev(sb, r->na, r->cv_a);
	strbuf_addstr(sb, " ");
	add_change(sb, r);
	strbuf_addstr(sb, "  ");
	add_value(sb, width, r->mean_b);
	add_stddev(sb, r->nb, r->cv_b);
	strbuf_addstr(sb, "   ");
	strbuf_add_clean(sb, r->name);
	strbuf_addch(sb, '\n');
}

void compare_format(struct strbuf *sb, const struct compare_row *rows, size_t nr, const char *label_a,
		    const char *label_b, size_t max, const char *indent)
{
	size_t la = strlen(label_a), lb = strlen(label_b);
	int width = (int)(la > lb ? la : lb);

	/* a variant's whole name over its column, not 12 bytes of it */
	if (width < 12)
		width = 12;
	if (width > COMPARE_LABEL_MAX)
		width = COMPARE_LABEL_MAX;
	/* "±" is one column of two bytes: the header lines up by hand */
	strbuf_addf(sb, "%s%*.*s %-7s%9s  %*.*s %-7s %s\n", indent, width, width, label_a, "%stddev", "%change",
		    width, width, label_b, "%stddev", "name");
	/* the rows come by section (compare_sets): each capped on its own,
	 * so a long list of counters never hides the profile */
	for (size_t i = 0; i < nr;) {
		int sec = compare_profile_section(rows[i].name);
		size_t end = i, shown;

		while (end < nr && compare_profile_section(rows[end].name) == sec)
			end++;
		shown = max && end - i > max ? max : end - i;
		if (sec)
			strbuf_addf(sb, "\n%s%s: %% of the samples, change in points, largest first\n", indent,
				    compare_profile_section_name(sec));
		for (size_t k = 0; k < shown; k++)
			add_row(sb, &rows[i + k], indent, width);
		if (end - i > shown)
			strbuf_addf(sb, "%s... %zu more\n", indent, end - i - shown);
		i = end;
	}
}

static void add_short(struct strbuf *sb, const struct compare_row *r)
{
	strbuf_add_clean(sb, r->name);
	strbuf_addch(sb, ' ');
	add_value(sb, 0, r->mean_a);
	strbuf_addstr(sb, " -> ");
	add_value(sb, 0, r->mean_b);
	if (compare_profile_section(r->name))
		strbuf_addf(sb, " (%+.1f points)", r->delta);
	else if (isfinite(r->change))
		strbuf_addf(sb, " (%+.1f%%)", r->change);
}

void compare_summary(struct strbuf *sb, const struct compare_row *rows, size_t nr, size_t per_family,
		     const char *indent)
{
	for (size_t f = 0; f < ARRAY_SIZE(family_order); f++) {
		size_t shown = 0;

		for (size_t i = 0; i < nr && shown < per_family; i++) {
			const char *fam = compare_family(rows[i].name);

			if (!fam || strcmp(fam, family_order[f]))
				continue;
			if (!shown++)
				strbuf_addf(sb, "%s%-11s", indent, family_order[f]);
			else
				strbuf_addf(sb, "%s%-11s", indent, "");
			add_short(sb, &rows[i]);
			strbuf_addch(sb, '\n');
		}
	}
}
