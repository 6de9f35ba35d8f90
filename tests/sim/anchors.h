/* Two other projects' rules as bisection policies over the same
 * simulated runs as klab's engine (verdict-sim.c's anchor columns): the
 * same history's levels, the same noise model and seed, each run drawn
 * by sim_model_draw in the order the policy asks for it.
 *
 * Pinpoint (Chromium): two changes differ when the smaller of the
 * Kolmogorov-Smirnov and Mann-Whitney p-values is below 0.01; they are
 * the same when it is above a high threshold that falls as the samples
 * grow (here `same_p` from 10 attempts, `same_p_late` from 20); in
 * between, 10 more attempts of each while below the cap.  Each change
 * starts with 10 attempts.  The range's ends must differ; a commit
 * different from the lower end moves the upper one, different from the
 * upper moves the lower one.
 *
 * LKP (0-day): 3 runs of each end and of each commit; a change only when
 * the runs' ranges do not overlap and the means differ by 5% or more.
 * The ends must show one; a commit showing one from the good end is bad,
 * else good. */
#ifndef KLAB_ANCHORS_H
#define KLAB_ANCHORS_H

#include <stddef.h>

#include "measure-sim.h"

struct pinpoint_rule {
	double low_p;		/* 0.01 */
	double same_p, same_p_late;	/* 0.05 from 10 attempts, 0.01 from 20 */
	unsigned attempts, more, cap;	/* 10, 10, 40 */
};

struct lkp_rule {
	unsigned runs;		/* 3 */
	double min_change;	/* 5 (%) */
};

struct anchor_outcome {
	int culprit;		/* commit index, -1 none named */
	size_t runs;
};

void pinpoint_rule_init(struct pinpoint_rule *r);
void lkp_rule_init(struct lkp_rule *r);

/* Bisect commits 0 (good) .. n - 1 (bad) whose KPI levels are levels[],
 * drawing from m.  -1 after error(). */
int anchor_pinpoint(const struct pinpoint_rule *r, struct sim_model *m, const double *levels, size_t n,
		    struct anchor_outcome *o);
int anchor_lkp(const struct lkp_rule *r, struct sim_model *m, const double *levels, size_t n,
	       struct anchor_outcome *o);

#endif
