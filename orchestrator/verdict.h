/* Verdicts of a performance bisection: does the regression reproduce
 * between the good and the bad end, and is a commit good, bad or still
 * ambiguous?  Pure: samples in, a verdict with its evidence out. */
#ifndef KLAB_VERDICT_H
#define KLAB_VERDICT_H

#include <stddef.h>

#include "bisect.h"
#include "stats.h"
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
};

/* How much evidence a verdict needs and how runs are added. */
#define VERDICT_MAX_LADDER 8
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
};

/* The defaults: alpha 0.005, ladder 2 3 5 8 12, ... (see verdict.c). */
void verdict_policy_init(struct verdict_policy *p);
/* Most runs a set may get (the last step of the ladder). */
unsigned verdict_policy_cap(const struct verdict_policy *p);
/* First step of the ladder above `have` runs and at least `want`;
 * 0 when `have` is already at the cap. */
unsigned verdict_next_runs(const struct verdict_policy *p, size_t have, size_t want);

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
 * NEED_MORE (up to the cap) or SKIP ("ambiguous").  -1 after error()
 * on bad input. */
int verdict_classify(struct verdict *out, const struct verdict_policy *p,
		     const double *good, size_t ng, const double *bad, size_t nb,
		     const double *cand, size_t nc, int direction);

/* Confirm a culprit: parent[] and culprit[] (interleaved runs) against
 * each other with the reproduce rule, the culprit's step from its parent
 * a share of the ends' gap (good[], bad[]) of at least
 * p->confirm_share.  CONFIRMED, UNCONFIRMED, or NEED_MORE (both sides
 * to next_runs).  median_good/median_bad are the parent's and the
 * culprit's, change_percent the culprit against its parent.  -1 after
 * error() on bad input. */
int verdict_confirm(struct verdict *out, const struct verdict_policy *p,
		    const double *good, size_t ng, const double *bad, size_t nb,
		    const double *parent, size_t np, const double *culprit, size_t nc, int direction);

/* "good", "bad", "skip", "reproduced", ... */
const char *verdict_kind_name(enum verdict_kind kind);
/* A step's verdict from a commit's: good and bad as they are, anything
 * else (ambiguous at the cap) a skip. */
enum bisect_mark verdict_mark(enum verdict_kind kind);

/* The evidence as text lines (each ending in '\n'), for `klab bisect show`. */
void verdict_format(struct strbuf *sb, const struct verdict *v);

#endif
