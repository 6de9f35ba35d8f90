/* Pinpoint's and LKP's rules as bisection policies: see anchors.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anchors.h"
#include "core/stats.h"
#include "util/util.h"

void pinpoint_rule_init(struct pinpoint_rule *r)
{
	*r = (struct pinpoint_rule){ .low_p = 0.01, .same_p = 0.05, .same_p_late = 0.01, .attempts = 10,
				     .more = 10, .cap = 40 };
}

void lkp_rule_init(struct lkp_rule *r)
{
	*r = (struct lkp_rule){ .runs = 3, .min_change = 5 };
}

/* The runs of each commit drawn so far. */
struct samples {
	double **v;
	size_t *n;
	size_t commits, runs;
};

static void samples_init(struct samples *s, size_t commits)
{
	s->v = xcalloc(commits, sizeof(*s->v));
	s->n = xcalloc(commits, sizeof(*s->n));
	s->commits = commits;
	s->runs = 0;
}

static void samples_release(struct samples *s)
{
	for (size_t i = 0; i < s->commits; i++)
		free(s->v[i]);
	FREE_MANY(s->v, s->n);
}

/* Up to `total` runs of commit c. */
static void draw_to(struct samples *s, struct sim_model *m, const double *levels, size_t c, size_t total)
{
	if (s->n[c] >= total)
		return;
	s->v[c] = xrealloc(s->v[c], total * sizeof(double));
	while (s->n[c] < total) {
		s->v[c][s->n[c]++] = sim_model_draw(m, levels[c]);
		s->runs++;
	}
}

enum pp_cmp { PP_SAME, PP_UNKNOWN, PP_DIFFERENT };

static enum pp_cmp pp_compare(const struct pinpoint_rule *r, const struct samples *s, size_t a, size_t b,
			      double *p)
{
	struct stats_test ks, mw;
	size_t n = s->n[a] < s->n[b] ? s->n[a] : s->n[b];

	if (stats_ks_2samp(s->v[a], s->n[a], s->v[b], s->n[b], &ks) < 0 ||
	    stats_mann_whitney(s->v[a], s->n[a], s->v[b], s->n[b], &mw) < 0)
		return PP_UNKNOWN;
	*p = fmin(ks.p_value, mw.p_value);
	if (*p < r->low_p)
		return PP_DIFFERENT;
	if (*p >= (n >= 2 * r->attempts ? r->same_p_late : r->same_p))
		return PP_SAME;
	return PP_UNKNOWN;
}

/* Compare a and b, adding attempts to both while unknown and below the
 * cap; at the cap unknown counts as the same. */
static enum pp_cmp pp_resolve(const struct pinpoint_rule *r, struct samples *s, struct sim_model *m,
			      const double *levels, size_t a, size_t b)
{
	for (;;) {
		double p = 1;
		enum pp_cmp c;

		draw_to(s, m, levels, a, r->attempts);
		draw_to(s, m, levels, b, r->attempts);
		c = pp_compare(r, s, a, b, &p);
		if (c != PP_UNKNOWN)
			return c;
		if (s->n[a] >= r->cap && s->n[b] >= r->cap)
			return PP_SAME;
		if (s->n[a] < r->cap)
			draw_to(s, m, levels, a, s->n[a] + r->more);
		if (s->n[b] < r->cap)
			draw_to(s, m, levels, b, s->n[b] + r->more);
	}
}

int anchor_pinpoint(const struct pinpoint_rule *r, struct sim_model *m, const double *levels, size_t n,
		    struct anchor_outcome *o)
{
	struct samples s;
	size_t lo = 0, hi = n - 1;

	if (n < 2)
		return error("a range needs two commits");
	samples_init(&s, n);
	o->culprit = -1;
	if (pp_resolve(r, &s, m, levels, lo, hi) == PP_DIFFERENT) {
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (pp_resolve(r, &s, m, levels, lo, mid) == PP_DIFFERENT)
				hi = mid;
			else if (pp_resolve(r, &s, m, levels, mid, hi) == PP_DIFFERENT)
				lo = mid;
			else
				break;	/* the same as both ends: no culprit */
		}
		if (hi - lo == 1)
			o->culprit = (int)hi;
	}
	o->runs = s.runs;
	samples_release(&s);
	return 0;
}

/* LKP's change: the ranges apart and the means min_change % apart, the
 * KPI worse from a to b in the model's direction. */
static int lkp_change(const struct lkp_rule *r, const struct samples *s, size_t a, size_t b, int direction)
{
	double amin = s->v[a][0], amax = amin, bmin = s->v[b][0], bmax = bmin, am, bm, change;

	for (size_t i = 1; i < s->n[a]; i++) {
		amin = fmin(amin, s->v[a][i]);
		amax = fmax(amax, s->v[a][i]);
	}
	for (size_t i = 1; i < s->n[b]; i++) {
		bmin = fmin(bmin, s->v[b][i]);
		bmax = fmax(bmax, s->v[b][i]);
	}
	if (!(amax < bmin || bmax < amin))
		return 0;
	am = stats_mean(s->v[a], s->n[a]);
	bm = stats_mean(s->v[b], s->n[b]);
	change = (bm - am) / am * 100 * (direction > 0 ? -1 : 1);
	return change >= r->min_change;
}

int anchor_lkp(const struct lkp_rule *r, struct sim_model *m, const double *levels, size_t n,
	       struct anchor_outcome *o)
{
	struct samples s;
	size_t lo = 0, hi = n - 1;

	if (n < 2)
		return error("a range needs two commits");
	samples_init(&s, n);
	o->culprit = -1;
	for (unsigned i = 1; i <= r->runs; i++) {
		draw_to(&s, m, levels, lo, i);
		draw_to(&s, m, levels, hi, i);
	}
	if (lkp_change(r, &s, lo, hi, m->direction)) {
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			draw_to(&s, m, levels, mid, r->runs);
			if (lkp_change(r, &s, 0, mid, m->direction))
				hi = mid;
			else
				lo = mid;
		}
		o->culprit = (int)hi;
	}
	o->runs = s.runs;
	samples_release(&s);
	return 0;
}
