/* Two run sets side by side, LKP's way: per named stat (a KPI, a monitor's
 * per-run delta or level), keep a row only when the change is real by
 * LKP's rule, rank the rows by how clearly the sets are apart, and print
 * them in LKP's layout.  Pure: values in, rows and text out. */
#ifndef KLAB_COMPARE_H
#define KLAB_COMPARE_H

#include <stddef.h>
#include "util/strbuf.h"

/* One named stat's per-run values in set a (e.g. the parent) and set b
 * (e.g. the culprit).  The arrays are the caller's. */
struct compare_stat {
	const char *name;	/* "vmstat.thp_fault_alloc", "will-it-scale.per_process_ops" */
	const double *a, *b;
	size_t na, nb;
	int perf;		/* a benchmark or perf stat: changes from 1% count, else from 5% */
};

struct compare_row {
	const char *name;	/* the stat's (not copied) */
	size_t na, nb;
	double mean_a, mean_b;
	double cv_a, cv_b;	/* %stddev */
	double change;		/* %change of the mean; INFINITY when mean_a is 0 */
	double delta;		/* mean_b - mean_a: a profile row's change, in percentage points */
	double gap;		/* between the two ranges (> 0: they do not overlap) */
	double score;		/* gap / pooled spread: the rank */
};

#define COMPARE_MIN_CHANGE_PERF 1.0	/* % */
#define COMPARE_MIN_CHANGE 5.0		/* % */
/* With at least this many runs on both sides the gap between the ranges
 * must also exceed |mean_b - mean_a| / COMPARE_GAP_DISTANCE (LKP's
 * gap_distance; LKP takes the median, klab the mean it prints). */
#define COMPARE_GAP_MIN_RUNS 3
#define COMPARE_GAP_DISTANCE 2.0
/* A perf-profile row is a share of the samples (%): its change counts in
 * percentage points, not relative to its size (0.1% -> 0.5% is +400% and
 * says nothing), and only when one side's share reaches the minimum. */
#define COMPARE_PROFILE_MIN_SHARE 1.0	/* % of the samples, either side */
#define COMPARE_PROFILE_MIN_POINTS 0.5	/* |mean_b - mean_a| */

/* The rows of stats[] whose change is real, most significant first: by
 * the gap between the ranges over the pooled standard deviation (never
 * below 0.5 for whole counts), ties by larger |%change|, then name.
 * Real (LKP's lib/changed_stat.rb and stats.rb): the ranges do not
 * overlap, whole counts are not apart by just 1, the gap rule above, and
 * |%change| >= 1% (perf) or 5%.  perf-profile rows instead need a share
 * of COMPARE_PROFILE_MIN_SHARE on one side and a change of
 * COMPARE_PROFILE_MIN_POINTS; they come after all the others, in the
 * sections of compare_profile_section (self, children, calltrace), each
 * by the largest |change in points| first, as LKP ranks them.  *rows is
 * NULL when none; free() it. */
void compare_sets(const struct compare_stat *stats, size_t n, struct compare_row **rows, size_t *nr);

/* 1 when the stat's values in the two sets differ by LKP's rule; *row
 * (may be NULL) gets its figures either way. */
int compare_stat_changed(const struct compare_stat *s, struct compare_row *row);

/* The monitor family of a stat name: "profile", "memory", "interrupts",
 * "vmstat", "stat", or NULL for others (the KPI). */
const char *compare_family(const char *name);

/* A perf-profile row's section: 1 self, 2 children, 3 calltrace, 4 any
 * other perf-profile row; 0 for a stat that is not a profile row. */
int compare_profile_section(const char *name);
/* A section's heading name: "perf-profile.self", ... "perf-profile". */
const char *compare_profile_section_name(int section);

/* The widest a column heading of compare_format grows (labels are cut to
 * it: runcompare.c keeps a variant's end). */
#define COMPARE_LABEL_MAX 32

/* LKP's table: a heading with the sets' labels (the two value columns as
 * wide as the longer one, 12 to COMPARE_LABEL_MAX), then one line per row
 * ("parent ±%stddev %change culprit ±%stddev name"), then each profile
 * section under a line naming it, its change column in points (LKP's
 * "+76.9" without a %); at most max rows per section (0: all) and a
 * "... N more" line.  Names are guest text: cleaned. */
void compare_format(struct strbuf *sb, const struct compare_row *rows, size_t nr, const char *label_a,
		    const char *label_b, size_t max, const char *indent);

/* "What changed": the top `per_family` rows of each monitor family, in
 * the order of compare_family's list, the rows already ranked (so the
 * profile's are its largest self shares' changes, in points). */
void compare_summary(struct strbuf *sb, const struct compare_row *rows, size_t nr, size_t per_family,
		     const char *indent);

#endif
