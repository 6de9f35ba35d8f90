/* Verdicts of a performance bisection: does the regression reproduce
 * between the good and the bad end, and is a commit good, bad or still
 * ambiguous?  Pure: samples in, a verdict with its evidence out. */
#ifndef KLAB_VERDICT_H
#define KLAB_VERDICT_H

#include <stddef.h>

#include "core/bisect.h"
#include "core/stats.h"
#include "util/enum.h"
#include "util/strbuf.h"

enum verdict_kind {
	VERDICT_NEED_MORE,	/* more runs would help: see next_runs */
	VERDICT_REPRODUCED,	/* the ends differ clearly, in the bad direction */
	VERDICT_NOT_REPRODUCED,	/* refuse to bisect: noise, too small or reversed */
	VERDICT_GOOD,
	VERDICT_BAD,
	VERDICT_SKIP,		/* still ambiguous with the most runs allowed */
	VERDICT_CONFIRMED,	/* the culprit is clearly worse than its parent */
	VERDICT_UNCONFIRMED,	/* ... it is not, or carries too little of the gap */
	VERDICT_BETWEEN,	/* clearly apart from both ends, about half-way:
				 * two changes (a partial regression each side) */
};

/* How much evidence a verdict needs and how runs are added. */
#define VERDICT_MAX_LADDER 24
/* The fewest runs a cap may allow (the ladder's first step). */
#define VERDICT_MIN_CAP 3
struct verdict_policy {
	/* False-decision rate of one look at the data, one-sided (a
	 * Student t threshold on the robust separation; see verdict.c). */
	double alpha;
	/* The same for "the regression reproduces". */
	double alpha_reproduce;
	/* Smallest regression worth bisecting, percent of the good median. */
	double min_change_percent;
	/* The ends must be this many standard errors apart before
	 * bisecting (below it, with runs left, ask for more): commits are
	 * measured against these two medians, so they must be precise. */
	double min_gap_z;
	/* ... and this many when the host drifts (verdict_reproduce_timed) */
	double min_gap_z_drift;
	/* A run further than this many noise sigmas from the median of its
	 * set is an outlier: listed in the evidence, and a set with
	 * outliers needs 2 * outliers + 3 runs before it decides. */
	double outlier_sigmas;
	/* ... and further than this from it, percent: the slow runs of a
	 * shared host lose 30-60%, while one quiet set (the good end of the
	 * demo varies by 0.1%, its bad end by 1-2%) must not make the
	 * ordinary spread of a noisier set look like outliers. */
	double outlier_min_percent;
	/* "Indistinguishable" from an end: not significantly apart from
	 * it, or within this share of the gap (0.2: a fifth of the way to
	 * the other end), which matters when the gap is huge and the
	 * noise of the two ends differs. */
	double near_band;
	/* Noise is never assumed below this, percent (identical runs). */
	double noise_floor_percent;
	/* Runs per commit, step by step: ladder[0] first, the last is the
	 * cap.  The references start at the job's `repeat`. */
	unsigned ladder[VERDICT_MAX_LADDER];
	size_t n_ladder;
	/* No verdict on a commit from fewer runs than this (two runs of a
	 * noisy KPI placed the real culprit of issue 17 at 0.37, "good"). */
	unsigned min_runs;
	/* A slow host makes runs look bad, never good: a bad verdict needs
	 * at least this many runs. */
	unsigned min_runs_bad;
	/* Good only below this position between the ends (0 good, 1 bad),
	 * bad only above 1 minus it: a commit a third of the way is not
	 * "like good", whatever the separations say. */
	double decide_band;
	/* A commit whose runs differ in shape from the end its median
	 * resembles (two-sample Kolmogorov-Smirnov p below this, and a
	 * spread more than twice or less than half that end's) is not like
	 * that end: medians can agree while the runs do not. */
	double alpha_shape;
	/* The confirmation: the culprit must be worse than its parent by
	 * at least this share of the ends' gap (the job's confirm_share). */
	double confirm_share;
	/* Compare ratios (logarithms) when every sample is positive. */
	int log_scale;
	/* The host drifts when the runs of the sets, in time order, share
	 * a trend this significant (two-sided false-alarm rate). */
	double alpha_drift;
	/* Under drift, the time-local references: this many most recent
	 * runs of each end. */
	unsigned local_refs;
	/* Under drift, the runs of the commits decided good (bad) join the
	 * good (bad) end's as that side's references (verdict_runs_merge),
	 * and an end runs again before a commit's run only when its side has
	 * no run among the last side_age runs: the simulation's drift cells
	 * took 79% of the runs of a reference run before every run, right
	 * culprits within 1-4 points (tests/sim/README.md).  0: a reference
	 * run before every run of a commit, the ends' own runs only. */
	unsigned side_age;
	/* Under drift, a reference run more than this many runs older than
	 * the latest run compared is left out of its time-local references
	 * (the latest two of each side stay), and the tester runs an end
	 * again until its side has two runs that recent: a slow spell the
	 * references were taken in is not a trend to extrapolate once the
	 * host has left it (issue 45's range).  0: local_refs alone. */
	unsigned local_span;
	/* A commit is "between" (VERDICT_BETWEEN) only from this many runs. */
	unsigned min_runs_between;
	/* ... and, before the range splits there, this many fresh runs of
	 * it must say "between" on their own (verdict_between_fresh); 0:
	 * the first verdict splits. */
	unsigned between_fresh;
	/* A commit clearly this share of the gap beyond an end (position
	 * below -x or above 1 + x) marks the references stale (see
	 * verdict_classify_timed). */
	double stale_outside;
	/* A confirmation that counts step runs: its fresh runs alone must
	 * show the step at this one-sided rate (verdict_confirm_reusing). */
	double alpha_fresh;
	/* A confirmation also needs parent and culprit apart by ranks
	 * (Mann-Whitney, two-sided) at this rate: a bimodal KPI's noise
	 * estimates can be small while parent and culprit sit in different
	 * modes, and ranks do not care (5 + 5 runs, fully apart: p 0.008). */
	double alpha_rank;
	/* The revert check: "restores good" only within this share of the
	 * gap from good, on the compared scale and on the plain medians
	 * (revert.c's short_of_good), whatever the standard errors say: a noisy good end let a revert 42% of the way to bad
	 * (27% on the log scale) pass as "like good" from 3 runs. */
	double revert_band;
};

/* The defaults: alpha 0.005, ladder 3 4 5 ... 12, ... (see verdict.c). */
void verdict_policy_init(struct verdict_policy *p);
/* A cap other than the ladder's (`--max-runs`, the job's max_runs): the
 * default steps below it, then steps half as many again (12, 18, 27, ...)
 * up to it.  -1 after error() outside VERDICT_MIN_CAP..1000. */
int verdict_policy_set_cap(struct verdict_policy *p, unsigned cap);
/* Most runs a set may get (the last step of the ladder). */
unsigned verdict_policy_cap(const struct verdict_policy *p);
/* First step of the ladder above `have` runs and at least `want`;
 * 0 when `have` is already at the cap. */
unsigned verdict_next_runs(const struct verdict_policy *p, size_t have, size_t want);

/* Runs in time order: their values and when each was taken (t[i], any
 * increasing measure: the run's number in the bisection, its boot's
 * start in seconds); t[] increasing.  What the _timed verdicts take. */
struct verdict_runs {
	const double *v;
	const double *t;
	size_t n;
};

/* A trend shared by sets of runs (verdict_trend). */
struct verdict_trend {
	int drift;		/* significant: the host drifted while measuring */
	double slope;		/* per time unit, on the compared scale */
	double percent;		/* the same in percent per time unit (log scale) */
	double z;		/* slope over its standard error */
	double threshold;	/* the |z| that counts as drift */
	int log_scale;
};

/* Which set a sample belongs to. */
enum verdict_set {
	VERDICT_SET_GOOD,
	VERDICT_SET_BAD,
	VERDICT_SET_CANDIDATE,
};

struct verdict_outlier {
	enum verdict_set set;
	size_t index;		/* in the array passed in */
	double value;
	double sigmas;		/* signed distance from its set's median */
};

#define VERDICT_MAX_OUTLIERS 16

/* A verdict and the evidence behind it. */
struct verdict {
	enum verdict_kind kind;
	const char *rule;	/* short and stable, e.g. "like-good" */
	char text[256];		/* one line for humans */
	int direction;		/* +1 higher is better, -1 lower is better */
	int log_scale;		/* the comparison was on logarithms */
	size_t n_good, n_bad, n_cand;
	double median_good, median_bad, median_cand;
	/* Bad end against good end (reproduce), or candidate against good,
	 * percent of the good median. */
	double change_percent;
	/* Candidate against bad, percent of the bad median. */
	double change_vs_bad_percent;
	/* Candidate median between the good (0) and bad (1) medians. */
	double position;
	/* Confirmation: the culprit's step from its parent as a share of
	 * the ends' gap (on the compared scale), the share required, and
	 * the ends' medians it was measured against. */
	double share, share_needed, ref_good, ref_bad;
	int confirm;		/* a confirmation: the sets are parent and culprit */
	/* Robust pooled noise (one sigma, percent on log scale), and each
	 * set's (good, bad, candidate; parent, culprit): its own where
	 * credibly larger, else the pooled one.  Standard errors use each
	 * set's. */
	double noise;
	double set_noise[3];
	/* Separations in standard errors: the bad end from the good end
	 * (reproduce), or the candidate from good (positive: worse than
	 * good) and from bad (positive: better than bad); and the
	 * threshold they were held to. */
	double z_gap, z_good, z_bad, threshold;
	/* Rank tests, for the record: candidate (or bad end) against the
	 * good end, candidate against the bad end; KS of the same pair. */
	struct stats_test mwu_good, mwu_bad, ks_good, ks_bad;
	/* NEED_MORE: runs each set (reproduce) or the candidate should have. */
	unsigned next_runs;
	/* NOT_REPRODUCED, not significant: about how many runs per end would
	 * separate a change of the size seen with 80% power at this noise
	 * (0: not estimated). */
	unsigned runs_needed;
	/* Drift (the _timed verdicts): the sets shared a significant trend
	 * (drift_percent per time unit, drift_z standard errors), so every
	 * run was adjusted to the time of the latest by that trend and, for
	 * a commit, only the time-local references were used (local: the
	 * last local_refs runs of each end).  The tester stores drift and
	 * from then on judges a commit against each side's latest runs
	 * (side_age). */
	int drift, local;
	double drift_percent, drift_z;
	/* verdict_classify_timed without drift: the commit is clearly
	 * outside both ends (stale_outside), as when the host moved since
	 * the ends were measured; the tester takes one fresh run of each end
	 * and classifies again (once per commit), so that the trend test
	 * sees the host's present. */
	int stale;
	/* verdict_confirm_reusing: the fresh runs' step alone, in standard
	 * errors and as a share of the ends' gap. */
	double z_fresh, share_fresh;
	size_t n_outliers;	/* may exceed VERDICT_MAX_OUTLIERS; only that many kept */
	struct verdict_outlier outliers[VERDICT_MAX_OUTLIERS];
};

/* Does the regression reproduce?  good[] and bad[] are the runs of the
 * good and the bad end, direction +1 or -1.  REPRODUCED,
 * NOT_REPRODUCED or NEED_MORE (more runs of both ends).  -1 after
 * error() on bad input. */
int verdict_reproduce(struct verdict *out, const struct verdict_policy *p,
		      const double *good, size_t ng, const double *bad, size_t nb, int direction);

/* Classify a commit's runs cand[] against both references: GOOD, BAD,
 * NEED_MORE (up to the cap), BETWEEN (clearly apart from both ends and
 * within decide_band of neither, from min_runs_between runs: two change
 * points, one on each side; position is the share of the gap the commit
 * carries) or SKIP ("ambiguous").  -1 after error() on bad input. */
int verdict_classify(struct verdict *out, const struct verdict_policy *p,
		     const double *good, size_t ng, const double *bad, size_t nb,
		     const double *cand, size_t nc, int direction);

/* Confirm a culprit: parent[] and culprit[] (interleaved runs) against
 * each other with the reproduce rule, the culprit's step from its parent
 * a share of the ends' gap (good[], bad[]) of at least
 * p->confirm_share, and the two sets apart by the rank test at
 * p->alpha_rank (rule "rank-test" when only that fails: 3 + 3 runs never
 * pass it, 5 + 5 fully apart do).  CONFIRMED, UNCONFIRMED, or NEED_MORE
 * (both sides to next_runs).  median_good/median_bad are the parent's and the
 * culprit's, change_percent the culprit against its parent.  -1 after
 * error() on bad input. */
int verdict_confirm(struct verdict *out, const struct verdict_policy *p,
		    const double *good, size_t ng, const double *bad, size_t nb,
		    const double *parent, size_t np, const double *culprit, size_t nc, int direction);

/* The trend the sets share: the median of the slopes of every pair of
 * runs within a set (Theil-Sen, pooled over the sets, so that the sets'
 * levels do not count and a slow run spoils only its own pairs), held to
 * its standard error (the sets' robust noise over the spread of their
 * times).  drift when |z| reaches the t quantile of alpha_drift / 2.
 * -1 after error() on bad input. */
int verdict_trend(struct verdict_trend *out, const struct verdict_policy *p,
		  const struct verdict_runs *sets, size_t nsets);

/* Under drift, what a commit is compared with: the last local_refs runs
 * of each end and the commit's runs, every run brought to the time of
 * the latest by the trend the three share (verdict_classify_timed's
 * drift branch; the revert check's under drift). */
struct verdict_local {
	double *good, *bad, *cand;
	size_t ng, nb, nc;
	struct verdict_trend trend;
};
int verdict_local(struct verdict_local *out, const struct verdict_policy *p, const struct verdict_runs *good,
		  const struct verdict_runs *bad, const struct verdict_runs *cand);
void verdict_local_release(struct verdict_local *l);

/* The runs of sets (each in time order) merged in time order into v and
 * t, at most cap of them, the earliest first; returns how many.  A side's
 * references under drift: its end's runs and those of the commits decided
 * like it (verdict_policy.side_age). */
size_t verdict_runs_merge(const struct verdict_runs *sets, size_t nsets, double *v, double *t, size_t cap);

/* The same verdicts for runs in time order, robust to a host that drifts
 * while a bisection measures (a trend of a few percent over the ends'
 * runs refuses a real regression, and a commit measured later than the
 * references looks like the end the host drifted to).
 *
 * verdict_reproduce_timed: the trend of the two ends' runs (old against
 * fresh); with drift, every run adjusted by it to the time of the latest
 * run, then verdict_reproduce.  Runs of the two ends taken in turn make
 * the trend and the regression separable.
 *
 * verdict_classify_timed: drift is the tester's stored flag (drift seen
 * by an earlier verdict); without it the trend of the ends' runs is
 * tested again here.  With drift, the references are the last
 * p->local_refs runs of each end (time-local), the trend is that of those
 * and the commit's runs, every run adjusted to the commit's latest, then
 * verdict_classify.  The tester then passes as an end's runs those of
 * its side (the end's and the commits decided like it, merged in time
 * order: verdict_runs_merge) and runs an end again before a commit's run
 * when its side has none among the last side_age runs, so that each
 * commit has references from its own time.
 *
 * verdict_confirm_timed: the trend of parent and culprit (interleaved)
 * and, with drift, both adjusted by it; the ends' gap likewise, then
 * verdict_confirm.
 *
 * Each sets out->drift, drift_percent and drift_z; -1 after error(). */
int verdict_reproduce_timed(struct verdict *out, const struct verdict_policy *p,
			    const struct verdict_runs *good, const struct verdict_runs *bad, int direction);
int verdict_classify_timed(struct verdict *out, const struct verdict_policy *p,
			   const struct verdict_runs *good, const struct verdict_runs *bad,
			   const struct verdict_runs *cand, int drift, int direction);
int verdict_confirm_timed(struct verdict *out, const struct verdict_policy *p,
			  const struct verdict_runs *good, const struct verdict_runs *bad,
			  const struct verdict_runs *parent, const struct verdict_runs *culprit, int drift,
			  int direction);

/* Two changes are a strong claim: a bimodal KPI puts 10 of a good
 * commit's 12 runs in its lower mode about once in 25, and such a commit
 * looks half-way and unlike both ends.  fresh[] are the runs taken after
 * verdict_classify_timed said BETWEEN (p->between_fresh of them, or
 * more); alone, they must say BETWEEN too (verdict_classify_timed, from
 * their own number of runs).  out->kind is then BETWEEN; NEED_MORE (rule
 * "outliers", next_runs fresh runs in all) while slow runs among them ask
 * for more, as in any set; else SKIP (rule "between-fresh": the commit
 * is skipped, the range not split).  -1 after error(). */
int verdict_between_fresh(struct verdict *out, const struct verdict_policy *p,
			  const struct verdict_runs *good, const struct verdict_runs *bad,
			  const struct verdict_runs *fresh, int drift, int direction);

/* A confirmation that counts runs already taken: parent[] and culprit[]
 * are each the commit's step runs (or an end's recent runs) followed by
 * its last parent_fresh / culprit_fresh fresh runs, in time order.
 * verdict_confirm_timed on all of them; when that confirms, the fresh
 * runs alone must show the step too (their medians apart by a one-sided
 * alpha_fresh in the noise of all runs, and at least half of
 * confirm_share of the gap), since step runs that misjudged a commit
 * would confirm their own mistake; while they do not, NEED_MORE (more
 * fresh runs of both, rule "fresh-runs") up to the cap, then
 * UNCONFIRMED.  -1 after error(). */
int verdict_confirm_reusing(struct verdict *out, const struct verdict_policy *p,
			    const struct verdict_runs *good, const struct verdict_runs *bad,
			    const struct verdict_runs *parent, size_t parent_fresh,
			    const struct verdict_runs *culprit, size_t culprit_fresh, int drift, int direction);

/* "good", "bad", "skip", "reproduced", ... */
#define VERDICT_KIND_LAST (VERDICT_BETWEEN + 1)
KLAB_ENUM_DECL(verdict_kind);
/* A step's verdict from a commit's: good and bad as they are, anything
 * else (ambiguous at the cap) a skip. */
enum bisect_mark verdict_mark(enum verdict_kind kind);

/* The evidence as text lines (each ending in '\n'), for `klab bisect show`. */
void verdict_format(struct strbuf *sb, const struct verdict *v);

#endif
