/* Nightly tracking of a branch: the decisions, pure.  cmd-track.c
 * fetches, builds, measures and records; these say what a tip is called
 * and which earlier tip it is compared with. */
#ifndef KLAB_TRACK_H
#define KLAB_TRACK_H

#include <stddef.h>

#include "core/verdict.h"
#include "util/enum.h"

/* A track's name is used in a git ref (refs/klab/track/NAME), a lock
 * and a file name: 1 to 64 of [A-Za-z0-9._-], starting with a letter
 * or digit, not ending in '.' or ".lock", no "..".  1 valid, 0 not. */
int track_name_valid(const char *name);

/* A --notify target: an e-mail address ("mail") or an http(s) URL
 * ("webhook"); NULL when it is neither. */
const char *track_notify_kind(const char *target);

/* Tip statuses whose KPI was measured: a later tip may be compared with
 * them (first, no-change, regression, improvement). */
int track_status_measured(const char *status);

enum track_change {
	TRACK_NO_CHANGE,	/* not significant, or below the threshold */
	TRACK_REGRESSION,	/* significantly worse by at least the threshold */
	TRACK_IMPROVEMENT,	/* significantly better by at least the threshold */
	TRACK_INCONCLUSIVE,	/* more runs of the new tip would decide */
};

struct track_cmp {
	enum track_change change;
	double median_prev, median_cur;
	double change_percent;	/* current against previous, percent */
	unsigned next_runs;	/* INCONCLUSIVE: runs the new tip should have */
	const char *rule;	/* the verdict rule that decided */
	char text[400];		/* one line for humans */
};

/* Compare one KPI of the previous tested tip (prev, np runs) with the new
 * tip (cur, nc runs), with the verdict statistics of a bisection's "does
 * the regression reproduce" (verdict_reproduce), the threshold as its
 * minimum change: a regression is significant, in the bad direction and
 * at least threshold_pct; an improvement is the same the other way.
 * direction +1: higher is better.  -1 after error() on bad input. */
int track_compare(struct track_cmp *out, const double *prev, size_t np, const double *cur, size_t nc,
		  int direction, double threshold_pct);

#define TRACK_CHANGE_LAST (TRACK_INCONCLUSIVE + 1)
KLAB_ENUM_DECL(track_change);
/* The change's name for a line: never NULL ("no-change" outside the table). */
static inline const char *track_change_name(enum track_change c)
{
	const char *name = track_change_to_string(c);

	return name ? name : "no-change";
}

/* The status of a tip from its jobs' changes: "first" without a tip to
 * compare with, else "regression" if any job regressed, "improvement" if
 * any improved, else "no-change". */
const char *track_tip_status(const enum track_change *changes, size_t n, int have_base);

/* A tested tip, newest first, as the base choice sees it. */
struct track_tip_ref {
	const char *hash;
	const char *status;
};

/* The tip a new tip is compared with: the newest tested tip whose KPI
 * was measured and that is an ancestor of the new tip (is_ancestor(hash,
 * data): 1 yes, 0 no, -1 unknown, e.g. the commit is gone: counted as
 * no).  After a force-push the newest tested tips are not ancestors any
 * more; *rewritten counts the measured tips passed over that way.
 * Returns the index in tips[], or -1 when none is an ancestor (the new
 * tip is then a new baseline). */
int track_choose_base(const struct track_tip_ref *tips, size_t n, int (*is_ancestor)(const char *hash, void *data),
		      void *data, size_t *rewritten);

#endif
