/* SVG charts for the report; see svg.h. */
#include "report/svg.h"
#include "util/html.h"
#include "core/stats.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The drawing: a fixed viewBox that the stylesheet scales to the page. */
enum { W = 720, H = 300, LEFT = 72, RIGHT = 12, TOP = 22, BOTTOM = 44 };

struct scale {
	double lo, hi;		/* values at the bottom and top of the plot */
	double x0, dx;		/* x of point 0, distance between points */
};

static double ypos(const struct scale *s, double v)
{
	return TOP + (H - TOP - BOTTOM) * (s->hi - v) / (s->hi - s->lo);
}

static double xpos(const struct scale *s, size_t i)
{
	return s->x0 + s->dx * (double)i;
}

double svg_tick_step(double lo, double hi, int want)
{
	double raw = (hi - lo) / (want > 0 ? want : 1), mag, f;

	if (!(raw > 0) || !isfinite(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void minmax(const double *v, size_t n, double *lo, double *hi)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		if (v[i] < *lo)
			*lo = v[i];
		if (v[i] > *hi)
			*hi = v[i];
	}
}

static void make_scale(struct scale *s, const struct svg_chart *c)
{
	double lo = INFINITY, hi = -INFINITY, pad, step;

	for (size_t i = 0; i < c->nr_points; i++)
		minmax(c->points[i].v, c->points[i].n, &lo, &hi);
	for (size_t i = 0; i < c->nr_bands; i++) {
		double b[2] = { c->bands[i].lo, c->bands[i].hi };
		minmax(b, 2, &lo, &hi);
	}
	if (lo > hi) {
		lo = 0;
		hi = 1;
	}
	if (lo == hi) {
		pad = fabs(lo) > 0 ? fabs(lo) * 0.1 : 1;
		lo -= pad;
		hi += pad;
	}
	pad = (hi - lo) * 0.06;
	/* a chart of non-negative values starts near zero only if it is near */
	lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
	hi += pad;
	step = svg_tick_step(lo, hi, 5);
	s->lo = floor(lo / step) * step;
	s->hi = ceil(hi / step) * step;
	if (s->hi <= s->lo)
		s->hi = s->lo + step;
	s->dx = (double)(W - LEFT - RIGHT) / (double)(c->nr_points ? c->nr_points : 1);
	s->x0 = LEFT + s->dx / 2;
}

static void axis_label(struct strbuf *sb, double v, double step)
{
	/* as many decimals as the tick step needs */
	int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);

	if (fabs(v) >= 1e7)
		strbuf_addf(sb, "%.3g", v);
	else
		strbuf_addf(sb, "%.*f", dec > 6 ? 6 : dec, v);
}

static void draw_axes(struct strbuf *sb, const struct svg_chart *c, const struct scale *s)
{
	double step = svg_tick_step(s->lo, s->hi, 5);
	size_t every = c->nr_points > 30 ? (c->nr_points + 29) / 30 : 1;

	for (double t = s->lo; t <= s->hi + step / 2; t += step) {
		double y = ypos(s, t);
		strbuf_addf(sb, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", LEFT, y, W - RIGHT, y);
		strbuf_addf(sb, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", LEFT - 6, y + 4);
		axis_label(sb, t, step);
		strbuf_addstr(sb, "</text>\n");
	}
	for (size_t i = 0; i < c->nr_points; i += every) {
		strbuf_addf(sb, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", xpos(s, i), H - BOTTOM + 16);
		html_esc(sb, c->points[i].label);
		strbuf_addstr(sb, "</text>");
	}
	strbuf_addstr(sb, "\n");
	if (c->ylabel) {
		strbuf_addf(sb, "<text x=\"%d\" y=\"%d\">", LEFT, TOP - 8);
		html_esc(sb, c->ylabel);
		strbuf_addstr(sb, "</text>\n");
	}
}

static void draw_band(struct strbuf *sb, const struct svg_band *b, const struct scale *s)
{
	double y1 = ypos(s, b->hi), y2 = ypos(s, b->lo), ym = ypos(s, b->mid);

	strbuf_addf(sb, "<g class=\"ref\"><title>");
	html_esc(sb, b->label);
	strbuf_addstr(sb, "</title><rect class=\"band-");
	html_esc(sb, b->cls);
	strbuf_addf(sb, "\" x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\"/>", LEFT, y1, W - LEFT - RIGHT,
		    y2 - y1 < 1 ? 1 : y2 - y1);
	strbuf_addstr(sb, "<line class=\"mid-");
	html_esc(sb, b->cls);
	strbuf_addf(sb, "\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", LEFT, ym, W - RIGHT, ym);
	strbuf_addf(sb, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", W - RIGHT - 4, ym - 4);
	html_esc(sb, b->label);
	strbuf_addstr(sb, "</text></g>\n");
}

static void draw_point(struct strbuf *sb, const struct svg_point *p, size_t i, const struct scale *s)
{
	double x = xpos(s, i), lo = INFINITY, hi = -INFINITY;
	double half = s->dx / 4 < 6 ? s->dx / 4 : 6;

	strbuf_addstr(sb, "<g class=\"step ");
	html_esc(sb, p->cls);
	strbuf_addstr(sb, "\"><title>");
	html_esc(sb, p->title);
	strbuf_addstr(sb, "</title>");
	minmax(p->v, p->n, &lo, &hi);
	if (lo > hi) {
		/* no value: a cross on the x axis */
		double y = H - BOTTOM;
		strbuf_addf(sb, "<path class=\"bar\" d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\"/>", x - 4, y - 8, x + 4,
			    y, x - 4, y, x + 4, y - 8);
	} else {
		double med = stats_median(p->v, p->n);
		strbuf_addf(sb, "<line class=\"bar\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, ypos(s, lo), x,
			    ypos(s, hi));
		strbuf_addf(sb, "<line class=\"med\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x - half,
			    ypos(s, med), x + half, ypos(s, med));
		for (size_t k = 0; k < p->n; k++) {
			/* the dots of one commit spread a little sideways */
			double jit = p->n > 1 ? ((double)(k % 5) - 2) * (half / 3) : 0;
			if (isfinite(p->v[k]))
				strbuf_addf(sb, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>", x + jit, ypos(s, p->v[k]));
		}
	}
	if (p->mark) {
		strbuf_addf(sb, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x, TOP + 10);
		html_esc(sb, p->mark);
		strbuf_addstr(sb, "</text>");
	}
	strbuf_addstr(sb, "</g>\n");
}

/* A line through the medians over the area from min to max (the upper
 * edge left to right, the lower edge back). */
static void draw_trend(struct strbuf *sb, const struct svg_chart *c, const struct scale *s)
{
	double *x = xcalloc(c->nr_points, sizeof(*x)), *lo = xcalloc(c->nr_points, sizeof(*lo));
	double *hi = xcalloc(c->nr_points, sizeof(*hi)), *med = xcalloc(c->nr_points, sizeof(*med));
	size_t n = 0;

	for (size_t i = 0; i < c->nr_points; i++) {
		const struct svg_point *p = &c->points[i];
		lo[n] = INFINITY;
		hi[n] = -INFINITY;
		minmax(p->v, p->n, &lo[n], &hi[n]);
		if (lo[n] > hi[n])
			continue;
		x[n] = xpos(s, i);
		med[n] = stats_median(p->v, p->n);
		n++;
	}
	if (n > 1) {
		strbuf_addstr(sb, "<polygon class=\"spread\" points=\"");
		for (size_t i = 0; i < n; i++)
			strbuf_addf(sb, "%.1f,%.1f ", x[i], ypos(s, hi[i]));
		for (size_t i = n; i-- > 0;)
			strbuf_addf(sb, "%.1f,%.1f%s", x[i], ypos(s, lo[i]), i ? " " : "");
		strbuf_addstr(sb, "\"/>\n<polyline class=\"trend\" points=\"");
		for (size_t i = 0; i < n; i++)
			strbuf_addf(sb, "%s%.1f,%.1f", i ? " " : "", x[i], ypos(s, med[i]));
		strbuf_addstr(sb, "\"/>\n");
	}
	free(x);
	free(lo);
	free(hi);
	free(med);
}

void svg_chart(struct strbuf *sb, const struct svg_chart *c)
{
	struct scale s;

	make_scale(&s, c);
	strbuf_addf(sb, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
		    W, H);
	html_esc(sb, c->title);
	strbuf_addstr(sb, "\"><title>");
	html_esc(sb, c->title);
	strbuf_addstr(sb, "</title>\n");
	for (size_t i = 0; i < c->nr_bands; i++)
		draw_band(sb, &c->bands[i], &s);
	draw_axes(sb, c, &s);
	if (c->trend)
		draw_trend(sb, c, &s);
	for (size_t i = 0; i < c->nr_points; i++)
		draw_point(sb, &c->points[i], i, &s);
	strbuf_addstr(sb, "</svg>\n");
}
