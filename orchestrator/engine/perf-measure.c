/* Measuring for the job tester: runs of a kernel under a step, asked of
 * the measurer one at a time (measurer.h: the guests', or a test's), the
 * ends' extra runs and the sides' references, pairs of commits measured
 * interleaved, a commit's kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "core/stats.h"
#include "core/verdict.h"
#include "kernel/kernel.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

int perf_use(struct perf *p, const char *kernel, int64_t step_id, char **why)
{
	int rc = p->mops->use(p->mdata, kernel, step_id);

	if (rc > 0)
		*why = xstrdup("environment failure: no registered host answers");
	return rc ? -1 : 0;
}

int perf_measure_timed(struct perf *p, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		       size_t want, double **vals, double **times, size_t *n, char **reason)
{
	double *t = NULL;
	int ret = -1;

	*reason = NULL;
	if (db_step_metric_runs(p->lab->db, step_id, p->job.kpi, vals, &t, n) < 0)
		return -1;
	for (size_t i = 0; i < *n; i++)
		if (t[i] > p->last_run)
			p->last_run = t[i];
	if (*n < want && perf_use(p, kernel, step_id, reason) < 0)
		goto out;
	while (*n < want) {
		/* the runs asked for in one go boot this kernel, the run after
		 * them the caller's next_kernel */
		struct measurer_run run = { kernel, build_id, step_id, (unsigned)*n + 1, label,
					    *n + 1 < want ? kernel : p->next_kernel };
		double v, when;
		int rc = p->mops->run(p->mdata, &run, &v, &when, reason);

		if (rc) {
			ret = rc;
			goto out;
		}
		*vals = xrealloc(*vals, (*n + 1) * sizeof(double));
		t = xrealloc(t, (*n + 1) * sizeof(double));
		t[*n] = when;
		if (when > p->last_run)
			p->last_run = when;
		(*vals)[(*n)++] = v;
		perf_spec_first_run(p, step_id, v);
	}
	ret = 0;
out:
	if (times)
		*times = t;
	else
		free(t);
	return ret;
}

int perf_measure_to(struct perf *p, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		    size_t want, double **vals, size_t *n, char **reason)
{
	return perf_measure_timed(p, kernel, build_id, step_id, label, want, vals, NULL, n, reason);
}

struct verdict_runs perf_good_runs(const struct perf *p)
{
	return (struct verdict_runs){ p->good, p->good_t, p->ng };
}

struct verdict_runs perf_bad_runs(const struct perf *p)
{
	return (struct verdict_runs){ p->bad, p->bad_t, p->nb };
}

void perf_side_add(struct perf *p, int bad_side, const double *v, const double *t, size_t n)
{
	struct runs_buf *b = &p->side[bad_side != 0];

	b->v = xrealloc(b->v, (b->n + n + 1) * sizeof(double));
	b->t = xrealloc(b->t, (b->n + n + 1) * sizeof(double));
	for (size_t i = 0; i < n; i++) {
		/* in time order, whatever order the commits were decided in */
		size_t k = b->n++;
		for (; k && b->t[k - 1] > t[i]; k--) {
			b->v[k] = b->v[k - 1];
			b->t[k] = b->t[k - 1];
		}
		b->v[k] = v[i];
		b->t[k] = t[i];
	}
}

void perf_side_refs(const struct perf *p, int bad_side, struct runs_buf *out)
{
	const struct runs_buf *b = &p->side[bad_side != 0];
	struct verdict_runs sets[2] = { bad_side ? perf_bad_runs(p) : perf_good_runs(p), { b->v, b->t, b->n } };
	size_t cap = sets[0].n + sets[1].n;

	out->v = xrealloc(out->v, (cap + 1) * sizeof(double));
	out->t = xrealloc(out->t, (cap + 1) * sizeof(double));
	out->n = verdict_runs_merge(sets, 2, out->v, out->t, cap);
}

int perf_side_stale(const struct perf *p, int bad_side, int decided, unsigned age)
{
	const struct runs_buf *b = &p->side[bad_side != 0];
	struct verdict_runs e = bad_side ? perf_bad_runs(p) : perf_good_runs(p);
	double latest = -1;

	if (e.n)
		latest = e.t[e.n - 1];
	if (decided && b->n && b->t[b->n - 1] > latest)
		latest = b->t[b->n - 1];
	return latest < 0 || p->last_run - latest >= (double)age;
}

void perf_describe(struct strbuf *sb, const double *v, size_t n)
{
	if (!n) {
		strbuf_addstr(sb, "-");
		return;
	}
	strbuf_addf(sb, "%.6g ±%.0f%%", stats_median(v, n), stats_cv_percent(v, n));
}

/* One more run of a reference end (bad_end 0 or 1, `hex` the end's
 * commit) whose kernel is known, appended with its time to the end's
 * runs. */
static void end_run(struct perf *p, int bad_end, const char *hex)
{
	char *kernel = bad_end ? p->bad_kernel : p->good_kernel;
	int64_t build = bad_end ? p->bad_build : p->good_build;
	double **vals = bad_end ? &p->bad : &p->good, **times = bad_end ? &p->bad_t : &p->good_t;
	size_t *n = bad_end ? &p->nb : &p->ng;
	double *nv = NULL, *nt = NULL;
	size_t nn = 0;
	char *why = NULL, label[64];
	int rc;

	snprintf(label, sizeof(label), "  reference %s %.12s ", bad_end ? "bad" : "good", hex);
	rc = perf_measure_timed(p, kernel, build, bad_end ? p->bad_step : p->good_step, label, *n + 1, &nv, &nt, &nn,
				&why);
	if (rc || nn <= *n) {
		warning("a fresh %s reference run failed (%s): deciding with the earlier ones",
			bad_end ? "bad" : "good", why ? why : "klab error");
		free(nv);
		free(nt);
	} else {
		free(*vals);
		free(*times);
		*vals = nv;
		*times = nt;
		*n = nn;
	}
	free(why);
}

/* One more run of a reference end, taken between a commit's extra runs:
 * a commit is ambiguous when the host drifts as often as when the commit
 * sits between the ends, and reference runs from the same minutes keep
 * the comparison fair.  A failure is a warning: the reference runs
 * measured so far still hold. */
void perf_reference_run_of(struct bisect_run *r, int bad_end)
{
	struct perf *p = perf_of(r);
	const char *hex = perf_end_hex(r, bad_end);
	char **kernel = bad_end ? &p->bad_kernel : &p->good_kernel;

	if (!*kernel && perf_build_for(r, hex, kernel, bad_end ? &p->bad_build : &p->good_build) < 0) {
		warning("no kernel for a fresh %s reference run: deciding with the earlier ones",
			bad_end ? "bad" : "good");
		return;
	}
	end_run(p, bad_end, hex);
}

/* ... of the good and the bad end in turn. */
void perf_reference_run_turn(struct bisect_run *r)
{
	perf_reference_run_of(r, perf_of(r)->ref_turn++ & 1);
}

/* Drift seen by a verdict: from now on time-local references (each
 * side's latest runs, pol.side_age) and a commit's runs one by one;
 * stored so that a resumed
 * bisection goes on the same way (a failure to store is a warning). */
void perf_note_drift(struct bisect_run *r, const struct verdict *v)
{
	struct perf *p = perf_of(r);

	char *then;

	if (!v->drift || p->drift)
		return;
	if (p->pol.side_age)
		then = xstrfmt("from here on each commit is judged against the latest runs of each side (its end and "
			       "the commits decided like it), an end running again when its side has no run among the "
			       "last %u", p->pol.side_age);
	else
		then = xstrdup("from here on each commit is judged against the latest runs of the ends, with a "
			       "reference run before each of its runs");
	perf_drift_seen(r, v->drift_percent, v->drift_z, then);
	free(then);
}

void perf_drift_seen(struct bisect_run *r, double percent, double z, const char *then)
{
	perf_of(r)->drift = 1;
	printf("  drift: the host trended by %+.2f%% per run (%.1f standard errors); %s\n", percent, z, then);
	if (db_bisection_set_drift(r->lab->db, r->b->id, percent) < 0)
		warning("the drift is not stored: a resumed bisection will test for it again");
}

/* kernel_for_commit for one of the bisection's commits: its result (kr
 * for the caller to print and release), *kernel and *build_id on 0. */
int perf_kernel_of(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id,
		   struct kernel_result *kr)
{
	struct kernel_request rq = bisect_run_kernel_request(r, hex);
	int rc = perf_kernel(perf_of(r), &rq, 0, kr);

	if (rc == 0) {
		*kernel = xstrdup(kr->kernel);
		*build_id = kr->build_id;
	}
	return rc;
}

/* The kernel of one commit for a reference or confirmation step: the
 * one a step of this run took unbuilt from another commit (treesame-
 * build: the same kernel by its sources), else its own. */
int perf_build_for(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id)
{
	struct perf *p = perf_of(r);
	struct kernel_result kr;
	int rc;

	for (size_t i = 0; i < p->nr_decided; i++) {
		const struct perf_decided *d = &p->decided[i];

		if (d->of[0] && !strcmp(d->hex, hex) && d->build_id > 0) {
			printf("  %.12s: the kernel of %.12s (the same sources; not built)\n", hex, d->of);
			*kernel = xstrdup(d->kernel);
			*build_id = d->build_id;
			return 0;
		}
	}
	rc = perf_kernel_of(r, hex, kernel, build_id, &kr);

	if (rc != 0 && (rc > 0 || kr.message)) {
		kernel_print_build(&kr.build, "  ");
		error("%.12s does not build (%s): a job bisection needs both ends built", hex,
		      kr.build.message ? kr.build.message : "");
	}
	kernel_result_release(&kr);
	return rc == 0 ? 0 : -1;
}

int perf_pair_begin(struct bisect_run *r, struct pair_side *side, const char *hex, enum step_phase phase)
{
	struct commit_info ci;

	memset(side, 0, sizeof(*side));
	side->hex = hex;
	memcpy(side->s.hash, hex, 41);
	side->s.phase = (char *)step_phase_to_string(phase);
	side->s.exit_code = -1;
	if (gitrepo_commit_info(r->repo, hex, &ci) < 0)
		return -1;
	if (db_commit_store(r->lab->db, r->b->repo_id, &ci) < 0 || db_step_begin(r->lab->db, r->b->id, &side->s) < 0) {
		commit_info_release(&ci);
		return -1;
	}
	print_line("%s %.12s %s", side->s.phase, hex, ci.subject);
	commit_info_release(&ci);
	return perf_build_for(r, hex, &side->kernel, &side->build_id);
}

void perf_pair_release(struct pair_side *side)
{
	free(side->kernel);
	free(side->vals);
	free(side->t);
}

/* Runs of two kernels alternate (a, b, a, b, ...), so a slow spell of the
 * host hits both sides instead of one: up to want_a runs of a and want_b
 * of b in their steps. */
int perf_pair_measure_each(struct perf *p, struct pair_side *a, size_t want_a, struct pair_side *b, size_t want_b,
			   char **why)
{
	size_t most = want_a > want_b ? want_a : want_b;
	struct pair_side *sides[2] = { a, b };
	size_t wants[2] = { want_a, want_b };

	for (size_t k = 1; k <= most; k++) {
		for (int i = 0; i < 2; i++) {
			char label[64];
			int rc;
			if (k > wants[i])
				continue;
			free(sides[i]->vals);
			free(sides[i]->t);
			sides[i]->vals = sides[i]->t = NULL;
			snprintf(label, sizeof(label), "  %s %.12s ", sides[i]->s.phase, sides[i]->hex);
			/* the run after this one: the other side's, or this
			 * side's next round when the other has all its runs */
			p->next_kernel = k + (i == 1) <= wants[!i] ? sides[!i]->kernel
				       : k + 1 <= wants[i] ? sides[i]->kernel : NULL;
			rc = perf_measure_timed(p, sides[i]->kernel, sides[i]->build_id, sides[i]->s.id, label, k,
						&sides[i]->vals, &sides[i]->t, &sides[i]->n, why);
			p->next_kernel = NULL;
			if (rc)
				return rc;
		}
	}
	return 0;
}

int perf_pair_measure_with(struct perf *p, struct pair_side *a, struct pair_side *b, size_t want, char **why)
{
	return perf_pair_measure_each(p, a, want, b, want, why);
}

int perf_pair_finish(struct bisect_run *r, struct pair_side *side, enum bisect_mark verdict, const char *reason)
{
	side->s.verdict = (char *)bisect_mark_to_string(verdict);
	side->s.reason = (char *)reason;
	return db_step_finish(r->lab->db, &side->s);
}

void runs_buf_release(struct runs_buf *b)
{
	free(b->v);
	free(b->t);
	memset(b, 0, sizeof(*b));
}

void runs_buf_add(struct runs_buf *b, const double *v, const double *t, size_t n)
{
	b->v = xrealloc(b->v, (b->n + n + 1) * sizeof(double));
	b->t = xrealloc(b->t, (b->n + n + 1) * sizeof(double));
	if (n) {
		memcpy(b->v + b->n, v, n * sizeof(double));
		memcpy(b->t + b->n, t, n * sizeof(double));
	}
	b->n += n;
}
