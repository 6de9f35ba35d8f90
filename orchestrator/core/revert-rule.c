/* The revert check's rule: see revert-rule.h. */
#include "core/revert-rule.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

KLAB_ENUM_IMPL(revert_outcome, REVERT_OUTCOME_LAST, "none", "restores-good", "does-not-restore", "does-not-apply",
	       "does-not-build", "not-measured")

int revert_outcome_from_name(const char *name, enum revert_outcome *o)
{
	int v = name ? revert_outcome_from_string(name) : -1;

	*o = v < 0 ? REVERT_NONE : (enum revert_outcome)v;
	return v < 0 ? -1 : 0;
}

/* What people read, beside the stored names: one per outcome. */
static const char *const outcome_texts[] = {
	"not checked", "revert restores good", "revert does not restore", "revert does not apply",
	"reverted kernel does not build", "reverted kernel could not be measured",
};
_Static_assert(ARRAY_SIZE(outcome_texts) == REVERT_OUTCOME_LAST, "one text per revert outcome");

const char *revert_outcome_text(enum revert_outcome o)
{
	return (unsigned)o < REVERT_OUTCOME_LAST ? outcome_texts[o] : "not checked";
}

void revert_check_release(struct revert_check *rc)
{
	free(rc->detail);
	memset(rc, 0, sizeof(*rc));
}

/* How far the revert is from good, as a share of the ends' gap: the
 * larger of the compared scale's position and the plain medians' (on the
 * log scale a throughput 76% of good against a bad end at 20% sits at
 * 0.17, yet a quarter of the loss is still there). */
static double short_of_good(const struct verdict *v)
{
	double gap = v->median_bad - v->median_good;
	double linear = gap != 0 ? (v->median_cand - v->median_good) / gap : 0;

	return linear > v->position ? linear : v->position;
}

/* "Does not restore" before the cap from this many runs, never fewer (a
 * slow spell of the host makes two runs look bad). */
#define REVERT_EARLY_RUNS 5

int revert_decide(struct verdict *v, enum revert_outcome *out, const struct verdict_policy *p,
		  const double *good, size_t ng, const double *bad, size_t nb, const double *rev, size_t nr,
		  int direction)
{
	double far;

	*out = REVERT_NONE;
	if (verdict_classify(v, p, good, ng, bad, nb, rev, nr, direction) < 0)
		return -1;
	far = short_of_good(v);
	if ((v->kind == VERDICT_NEED_MORE || v->kind == VERDICT_GOOD) && nr >= REVERT_EARLY_RUNS &&
	    v->z_good >= v->threshold && far >= p->decide_band) {
		/* clearly worse than good by a real part of the gap: whether it
		 * is bad or between, the revert does not restore good */
		v->rule = "apart-from-good";
		snprintf(v->text, sizeof(v->text),
			 "apart from good: %.1f standard errors worse than good, %.0f%% of the way to bad",
			 v->z_good, 100.0 * far);
		*out = REVERT_NO_RESTORE;
		return 0;
	}
	if (v->kind == VERDICT_GOOD && far > p->revert_band) {
		/* like good by the bisection's rule, but short of good by more
		 * than revert_band of the gap: a noisy good end hides a partial
		 * recovery (each further run comes after fresh reference runs,
		 * which settle the good end) */
		unsigned next = verdict_next_runs(p, nr, nr + 1);

		v->rule = "short-of-good";
		v->kind = next ? VERDICT_NEED_MORE : VERDICT_SKIP;
		v->next_runs = next;
		if (next)
			snprintf(v->text, sizeof(v->text),
				 "short of good: %.0f%% of the way to bad, %.0f%% at most restores good: "
				 "measure the revert %u times", 100.0 * far, 100.0 * p->revert_band, next);
		else
			snprintf(v->text, sizeof(v->text), "short of good: %.0f%% of the way to bad after %zu runs, "
				 "%.0f%% at most restores good", 100.0 * far, nr, 100.0 * p->revert_band);
	}
	if (v->kind == VERDICT_NEED_MORE && v->next_runs > nr)
		return 1;
	/* at the cap, still unclear: not restored, whatever it resembles */
	*out = v->kind == VERDICT_GOOD ? REVERT_RESTORES_GOOD : REVERT_NO_RESTORE;
	return 0;
}

unsigned revert_fresh_ends(enum revert_outcome o, int drift, size_t fresh_good, size_t fresh_bad)
{
	if (o != REVERT_NO_RESTORE || drift)
		return 0;
	return (fresh_good < REVERT_FRESH_END_RUNS ? 1u : 0u) | (fresh_bad < REVERT_FRESH_END_RUNS ? 2u : 0u);
}

int revert_drift_wait(enum revert_outcome o, int seen_in_check, size_t runs_since, int room)
{
	return o == REVERT_NO_RESTORE && seen_in_check && runs_since < REVERT_DRIFT_RUNS && room;
}

void revert_check_line(struct strbuf *sb, const struct revert_check *rc)
{
	strbuf_addf(sb, "revert check: %s", revert_outcome_text(rc->outcome));
	if (rc->outcome == REVERT_RESTORES_GOOD || rc->outcome == REVERT_NO_RESTORE) {
		strbuf_addf(sb, " (%.6g ±%.0f%% vs good %.6g, bad %.6g; %zu runs", rc->median, rc->cv_percent,
			    rc->good_median, rc->bad_median, rc->runs);
		if (rc->outcome == REVERT_NO_RESTORE && rc->bad_median != rc->good_median)
			strbuf_addf(sb, "; it recovers %.0f%% of the gap",
				    100.0 * (rc->median - rc->bad_median) / (rc->good_median - rc->bad_median));
		strbuf_addch(sb, ')');
	} else if (rc->outcome != REVERT_NONE && rc->detail && *rc->detail) {
		size_t n = strcspn(rc->detail, "\n");
		strbuf_addf(sb, " (%.*s)", (int)(n > 300 ? 300 : n), rc->detail);
	}
}

/* ---- the whole check ------------------------------------------------------- */

