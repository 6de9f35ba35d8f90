/* What the files of the job tester share (perfbisect.h is what others
 * see): each file owns one job of the tester, named by its file.
 *   perfbisect.c      the tester's entry points (the step_tester_ops)
 *   perf-measure.c    runs of a kernel under a step, the ends' extra runs,
 *                     the sides' references, pairs measured interleaved,
 *                     a commit's kernel
 *   perf-step.c       a step's verdict ladder
 *   perf-reference.c  the reference phase
 *   perf-confirm.c    the confirmation of a culprit and its report
 *   perf-inherit.c    marks inherited by an identical kernel or by sources
 *   perf-speculate.c  speculative builds of the next step's commits
 *   perf-halves.c     the halves after a split
 *   perf-rounds.c     multisection rounds */
#ifndef KLAB_PERFBISECT_INT_H
#define KLAB_PERFBISECT_INT_H

#include "engine/perfbisect.h"
#include "engine/bisect-run.h"
#include "engine/revert.h"

static inline struct perf *perf_of(struct bisect_run *r)
{
	return r->tester_data;
}

/* perfbisect.c */
const char *perf_end_hex(struct bisect_run *r, int bad_end);
void perf_store_verdict(struct bisect_run *r, int64_t step_id, const struct verdict *v);
void perf_forget_runs(struct perf *p);

/* perf-measure.c */
void perf_reference_run_of(struct bisect_run *r, int bad_end);
void perf_reference_run_turn(struct bisect_run *r);
void perf_note_drift(struct bisect_run *r, const struct verdict *v);
/* The host drifts (percent per run, z standard errors): time-local
 * references from here on (`then` says how), said and stored so that a
 * resumed bisection goes on the same way. */
void perf_drift_seen(struct bisect_run *r, double percent, double z, const char *then);
int perf_kernel_of(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id, struct kernel_result *kr);
int perf_build_for(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id);
/* The measurer readied for runs of kernel under step_id: 0, or -1 with
 * *why set when no host could be reached (the environment's failure: a
 * step stops resumable) or NULL (klab's). */
int perf_use(struct perf *p, const char *kernel, int64_t step_id, char **why);

/* One commit of a pair measured interleaved (the reference phase, the
 * confirmation, the profile), in a step of its own. */
struct pair_side {
	const char *hex;
	struct step s;
	char *kernel;
	int64_t build_id;
	double *vals, *t;	/* the step's runs and their times */
	size_t n;
};

int perf_pair_begin(struct bisect_run *r, struct pair_side *side, const char *hex, enum step_phase phase);
void perf_pair_release(struct pair_side *side);
int perf_pair_measure_each(struct perf *p, struct pair_side *a, size_t want_a, struct pair_side *b, size_t want_b,
			   char **why);
int perf_pair_measure_with(struct perf *p, struct pair_side *a, struct pair_side *b, size_t want, char **why);
int perf_pair_finish(struct bisect_run *r, struct pair_side *side, enum bisect_mark verdict, const char *reason);

/* perf-step.c */
enum bisect_mark perf_step(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
			   struct strbuf *reason, int *between);

/* perf-reference.c */
int perf_reference_phase(struct bisect_run *r, char **message);

/* perf-confirm.c */
char *perf_confirm_and_report(struct bisect_run *r, const char *culprit, int *confirmed);

/* perf-inherit.c */
int perf_same_kernel(const char *a, const char *b);
void perf_remember_decided(struct perf *p, const char *hex, const char *kernel, int64_t build_id, const char *of,
			   enum bisect_mark mark);
int perf_inherit_identical(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
			   struct step_outcome *out);
int perf_inherits_by_sources(struct bisect_run *r, const char *hex);
int perf_inherit_treesame(struct bisect_run *r, const struct step *s, struct step_outcome *out);

/* perf-speculate.c */
void perf_speculate_next(struct bisect_run *r, const struct step *s, const char *kernel);
void perf_spec_drop(struct perf *p);
void perf_spec_first_run(struct perf *p, int64_t step_id, double v);
void perf_settle(struct bisect_run *r, const char *hex);

/* perf-revert.c: the revert check of a confirmed culprit (half 0: the
 * bisection's; 1 or 2: that half's), against the range's ends */
void perf_revert_check(struct bisect_run *r, const char *culprit, int half);

/* perf-halves.c */
void perf_end_release(struct perf_end *e);
int perf_half(struct bisect_run *r, int half, const char *split);
void perf_halves_end(struct bisect_run *r);

/* perf-rounds.c */
int perf_round_prepare(struct bisect_run *r, char (*hex)[41], int n, int *fork_slot);
int perf_slot_test(struct bisect_run *r, int i, const struct step *s, struct step_outcome *out);
int perf_round_rest(struct bisect_run *r, int i, int child_ok);
void perf_round_release(struct bisect_run *r, int n);

#endif
