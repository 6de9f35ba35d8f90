/* The revert check's rule (pure): what a reverted kernel's runs say
 * against the references, what a finished check records, and its one
 * line.  engine/revert.c measures; this decides. */
#ifndef KLAB_REVERT_RULE_H
#define KLAB_REVERT_RULE_H

#include <stddef.h>

#include "util/strbuf.h"
#include "core/verdict.h"
#include "util/enum.h"

enum revert_outcome {
	REVERT_NONE,		/* not checked (off, not a job, no culprit yet) */
	REVERT_RESTORES_GOOD,	/* the reverted kernel classifies as good */
	REVERT_NO_RESTORE,	/* ... as bad, or between the ends */
	REVERT_NO_APPLY,	/* the revert conflicts on the bad end */
	REVERT_NO_BUILD,	/* the reverted kernel does not build */
	REVERT_NOT_MEASURED,	/* its guests failed (boot, panic, timeout) */
};

/* Stored names: "none" (REVERT_NONE), "restores-good",
 * "does-not-restore", "does-not-apply", "does-not-build", "not-measured". */
#define REVERT_OUTCOME_LAST (REVERT_NOT_MEASURED + 1)
KLAB_ENUM_DECL(revert_outcome);
/* The name for a line or a column: never NULL ("none" outside the table). */
static inline const char *revert_outcome_name(enum revert_outcome o)
{
	const char *name = revert_outcome_to_string(o);

	return name ? name : "none";
}
/* A stored name into *o: 0, or -1 for a name klab does not know (or
 * NULL), *o REVERT_NONE then. */
int revert_outcome_from_name(const char *name, enum revert_outcome *o);
/* What people read: "revert restores good", "revert does not restore",
 * "revert does not apply", "reverted kernel does not build", "reverted
 * kernel could not be measured". */
const char *revert_outcome_text(enum revert_outcome o);

/* A finished check, as stored with the bisection. */
struct revert_check {
	enum revert_outcome outcome;
	char commit[41];	/* the revert commit ("" when it does not apply) */
	size_t runs;		/* KPI runs of the reverted kernel */
	double median, cv_percent;	/* of those runs */
	double good_median, bad_median;	/* the references it was held to */
	char *detail;		/* conflicts, build error, guest failure or verdict text */
};
void revert_check_release(struct revert_check *rc);

/* The decision from measured values: the reverted kernel's runs rev[]
 * classified against the references with verdict_classify (the rules of
 * every bisection step).  GOOD within the policy's revert_band of good
 * is "revert restores good" (GOOD further along asks for more runs, rule
 * "short-of-good", and at the cap does not restore); BAD, BETWEEN,
 * clearly apart from good by at least decide_band of the gap from 5
 * runs (rule "apart-from-good": one of two changes reverted
 * alone lands between the ends, and waiting for the cap would prove
 * nothing more), or still ambiguous at the cap "does not restore".  0
 * decided (*out), 1 more runs wanted (v->next_runs), -1 after error(). */
int revert_decide(struct verdict *v, enum revert_outcome *out, const struct verdict_policy *p,
		  const double *good, size_t ng, const double *bad, size_t nb, const double *rev, size_t nr,
		  int direction);

/* Runs of each end taken during the check that "does not restore" needs
 * when the bisection saw no drift. */
#define REVERT_FRESH_END_RUNS 3

/* Which ends run again before outcome o stands, from the runs of each
 * end taken since the check began: bit 0 the good end, bit 1 the bad; 0
 * when it stands.  "Does not restore" contradicts a culprit just
 * confirmed, so outside drift (drift != 0: the revert is judged against
 * the ends' latest runs already) it is said only with
 * REVERT_FRESH_END_RUNS runs of each end beside the revert's: a host
 * drifting too slowly for the ends' first runs to show it makes a revert
 * measured last look short of the good end's early runs, and the fresh
 * runs both move the references and let the trend test see the drift. */
unsigned revert_fresh_ends(enum revert_outcome o, int drift, size_t fresh_good, size_t fresh_bad);

/* Revert runs taken the drift way (each right after a run of the good
 * end) that "does not restore" needs when the drift was first seen during
 * the check: the revert's earlier runs came in one go or after alternating
 * reference runs, so a load that came and went around them reads as a
 * trend that puts them far from the ends' latest runs (CI, a cold test
 * cache: a kernel build beside the check, the good end's fresh run at
 * 9,500 against 15,000 before, a full revert "does not restore" from 5
 * runs the moment the trend was seen). */
#define REVERT_DRIFT_RUNS 3

/* 1 when outcome o waits for one more revert run taken the drift way:
 * "does not restore" with the drift first seen during the check
 * (seen_in_check), fewer than REVERT_DRIFT_RUNS revert runs since, and
 * room under the cap (room). */
int revert_drift_wait(enum revert_outcome o, int seen_in_check, size_t runs_since, int room);

/* "revert check: revert restores good (12345 ±1% vs good 12400, bad
 * 9000; 3 runs)", "revert check: revert does not restore (10000 ±2% vs
 * good 12400, bad 9000; 5 runs; it recovers 29% of the gap)", "revert
 * check: revert does not apply (conflicts in 1 file: mm/mmap.c)", ...;
 * no newline.  Untrusted parts (paths, build errors) are the caller's to
 * clean when printing. */
void revert_check_line(struct strbuf *sb, const struct revert_check *rc);

#endif
