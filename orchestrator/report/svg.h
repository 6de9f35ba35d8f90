/* Inline SVG charts for the report, drawn by klab: values per x position
 * (every sample a dot, the median, the min-max spread), horizontal
 * reference bands, optionally a line through the medians.  Pure. */
#ifndef KLAB_SVG_H
#define KLAB_SVG_H

#include <stddef.h>
#include "util/strbuf.h"

struct svg_point {
	const double *v;	/* the samples; n 0 draws a cross on the axis ("no value") */
	size_t n;
	const char *cls;	/* CSS class: good, bad, skip, none */
	const char *label;	/* under the x axis (escaped) */
	const char *title;	/* tooltip, <title> (escaped) */
	const char *mark;	/* drawn above the point, e.g. "regression" (escaped); NULL: none */
};

struct svg_band {
	double lo, hi, mid;	/* the reference runs: min, max, median */
	const char *cls;	/* good | bad */
	const char *label;	/* escaped */
};

struct svg_chart {
	const char *title;	/* the chart's accessible name (escaped) */
	const char *ylabel;	/* e.g. the KPI (escaped) */
	const struct svg_point *points;
	size_t nr_points;
	const struct svg_band *bands;
	size_t nr_bands;
	int trend;		/* a line through the medians and a spread area */
};

/* Append <svg>…</svg>; each point is one <g class="step CLS">. */
void svg_chart(struct strbuf *sb, const struct svg_chart *c);

/* Round numbers for axis ticks: a step of 1, 2 or 5 times a power of ten
 * giving about `want` ticks between lo and hi. */
double svg_tick_step(double lo, double hi, int want);

#endif
