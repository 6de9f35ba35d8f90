/* The confirmation of a culprit against its parent (fresh runs of both,
 * interleaved, beside their step runs) and the report printed after it:
 * the KPI rows, the monitors that moved, the profile, the skipped
 * commits, how to reproduce. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "engine/runcompare.h"
#include "core/compare.h"
#include "core/stats.h"
#include "core/verdict.h"
#include "job/monitor.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

static void print_kpi_row(const char *label, const char *hex, const double *v, size_t n, double good_median)
{
	struct strbuf sb = STRBUF_INIT;

	perf_describe(&sb, v, n);
	printf("  %-8s %.12s  %-16s %+7.1f%%  (%zu runs)\n", label, hex, sb.buf,
	       n ? stats_change_percent(good_median, stats_median(v, n)) : 0.0, n);
	strbuf_release(&sb);
}

/* The monitors that moved between parent and culprit, by compare.c's rule
 * (LKP's: the runs' ranges apart), most significant first: the top rows
 * of each family, then the table.  The steps are paired as bisect show
 * and klab compare pair them (runcompare.c: a profile row one side lacks
 * counts as 0). */
static void print_mon_table(struct bisect_run *r, int64_t parent_step, int64_t culprit_step, int confirmed,
			    const char *only)
{
	struct runcmp c = { 0 };
	struct compare_row *rows = NULL;
	struct strbuf sb = STRBUF_INIT;
	size_t ns = 0, nr = 0;

	c.kpi = xstrdup(r->b->kpi ? r->b->kpi : "");
	if (runcmp_add_step(&c, r->lab->db, "parent", parent_step, 0) < 0 ||
	    runcmp_add_step(&c, r->lab->db, "culprit", culprit_step, 0) < 0)
		goto out;
	runcmp_compute(&c);
	rows = xcalloc(c.pairs[0].nr_rows + 1, sizeof(*rows));
	for (size_t i = 0; i < c.pairs[0].nr_stats; i++)
		ns += !only || !strncmp(c.pairs[0].stats[i].name, only, strlen(only));
	for (size_t i = 0; i < c.pairs[0].nr_rows; i++)
		if (!only || !strncmp(c.pairs[0].rows[i].name, only, strlen(only)))
			rows[nr++] = c.pairs[0].rows[i];
	printf("  %s per run (parent -> %s; ranges apart, most significant first): %zu of %zu changed\n",
	       only ? only : "monitors", confirmed ? "culprit" : "suspect", nr, ns);
	if (nr) {
		compare_summary(&sb, rows, nr, 3, "    ");
		strbuf_addch(&sb, '\n');
		compare_format(&sb, rows, nr, "parent", confirmed ? "culprit" : "suspect", 25, "    ");
		fputs(sb.buf, stdout);
	}
out:
	strbuf_release(&sb);
	free(rows);
	runcmp_release(&c);
}

/* Commits the bisection had to skip, with why: a panic or a build
 * failure met on the way is news for the report, not a detail. */
static void print_skipped(struct bisect_run *r)
{
	struct step *steps = NULL;
	size_t nr = 0;
	int shown = 0;

	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr) < 0)
		return;
	for (size_t i = 0; i < nr; i++) {
		struct commit_info ci;
		if (steps[i].phase_id != STEP_PHASE_BISECT || steps[i].mark != BISECT_SKIP || !steps[i].verdict)
			continue;
		if (!shown++)
			printf("  skipped on the way:\n");
		if (gitrepo_commit_info(r->repo, steps[i].hash, &ci) == 0) {
			print_line("    %.12s %s", steps[i].hash, ci.subject);
			commit_info_release(&ci);
		} else {
			printf("    %.12s\n", steps[i].hash);
		}
		fputs("      ", stdout);
		print_clean(stdout, steps[i].reason ? steps[i].reason : "no reason recorded");
		fputc('\n', stdout);
	}
	steps_release(steps, nr);
}

/* A confirmed culprit's profile (issue 18): the job's profile_runs boots
 * of parent and culprit each, interleaved, with the perf-profile monitor,
 * in steps of their own ('profile': evidence, no verdict), then the
 * profile rows that moved.  The runs that decided stay unprofiled, so the
 * profiler never perturbs a verdict.  Failures here are said, not fatal. */
static void profile_pair(struct bisect_run *r, const struct pair_side *parent, const struct pair_side *cul)
{
	struct perf *p = perf_of(r), prof;
	struct pair_side sides[2];
	int idx = monitor_index("perf-profile"), rc;
	char *why = NULL;

	if (!p->job.profile_runs || idx < 0)
		return;
	if (perf_init(&prof, r->lab, r->b->job_path, r->b->job_text, r->b->kpi) < 0)
		return;
	prof.job.monitors |= 1u << idx;
	/* measured as the bisection measures */
	if (perf_set_measurer(&prof, p->mops, p->marg) < 0) {
		perf_release(&prof);
		return;
	}
	printf("\nprofile: %u run%s each of parent and culprit with perf-profile (not used for the verdict)\n",
	       p->job.profile_runs, p->job.profile_runs == 1 ? "" : "s");
	for (int i = 0; i < 2; i++) {
		const struct pair_side *from = i ? cul : parent;
		if (perf_pair_begin(r, &sides[i], from->hex, STEP_PHASE_PROFILE) < 0) {
			printf("  profile: not run (%.12s could not be set up)\n", from->hex);
			if (i)
				perf_pair_release(&sides[0]);
			perf_release(&prof);
			return;
		}
	}
	rc = perf_pair_measure_with(&prof, &sides[0], &sides[1], p->job.profile_runs, &why);
	for (int i = 0; i < 2; i++)
		perf_pair_finish(r, &sides[i], BISECT_UNMARKED, rc ? "profile runs failed" : "profile runs (perf-profile), no verdict");
	if (rc)
		printf("  profile: not complete (%s)\n", why ? why : "klab error");
	else
		print_mon_table(r, sides[0].s.id, sides[1].s.id, 1, "perf-profile.");
	for (int i = 0; i < 2; i++)
		perf_pair_release(&sides[i]);
	free(why);
	perf_release(&prof);
}

/* The runs a commit already has for its confirmation: an end's latest
 * `repeat` runs (the end's commit, or a kernel byte for byte the end's),
 * or the runs of its bisection step (the latest decided one).  None is
 * not an error. */
static int step_runs_of(struct bisect_run *r, const char *hex, const char *kernel, struct runs_buf *out)
{
	struct perf *p = perf_of(r);
	struct step *steps = NULL;
	size_t nr = 0, k;
	int64_t id = 0;
	int good_end = !strcmp(hex, perf_end_hex(r, 0)) || (kernel && p->good_kernel && perf_same_kernel(kernel, p->good_kernel));
	int bad_end = !strcmp(hex, perf_end_hex(r, 1)) || (kernel && p->bad_kernel && perf_same_kernel(kernel, p->bad_kernel));

	memset(out, 0, sizeof(*out));
	if (good_end || bad_end) {
		size_t n = bad_end ? p->nb : p->ng;
		k = n < p->job.repeat ? n : p->job.repeat;
		runs_buf_add(out, (bad_end ? p->bad : p->good) + n - k, (bad_end ? p->bad_t : p->good_t) + n - k, k);
		return 0;
	}
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr) < 0)
		return -1;
	for (size_t i = 0; i < nr; i++)
		if (steps[i].phase_id == STEP_PHASE_BISECT && steps[i].status_id == STEP_DONE &&
		    !strcmp(steps[i].hash, hex))
			id = steps[i].id;
	steps_release(steps, nr);
	if (!id)
		return 0;
	return db_step_metric_runs(r->lab->db, id, p->job.kpi, &out->v, &out->t, &out->n);
}

/* Fresh runs each of parent and culprit that the confirmation starts
 * with when both have their step runs (issue 17: the step runs count,
 * and the fresh ones must show the step too). */
#define CONFIRM_FRESH_RUNS 2

/* The confirmation's measurements: the step runs of parent and culprit,
 * then fresh runs of both (interleaved, in steps of the confirm phase)
 * until verdict_confirm_reusing decides.  0 decided (*vc), 1 a guest
 * failed, -1 klab failed (*why: the reason where there is one).  *pa
 * and *ca: all runs of each, step runs first. */
static int confirm_measure(struct bisect_run *r, struct pair_side *parent, struct pair_side *cul, struct verdict *vc,
			   struct runs_buf *pa, struct runs_buf *ca, char **why)
{
	struct perf *p = perf_of(r);
	struct verdict_runs G = perf_good_runs(p), B = perf_bad_runs(p), A, C;
	struct runs_buf ps, cs;
	size_t fresh, want;
	int rc = -1;

	if (step_runs_of(r, parent->hex, parent->kernel, &ps) < 0)
		return -1;
	if (step_runs_of(r, cul->hex, cul->kernel, &cs) < 0) {
		runs_buf_release(&ps);
		return -1;
	}
	fresh = ps.n >= p->job.repeat && cs.n >= p->job.repeat ? CONFIRM_FRESH_RUNS : p->job.repeat;
	want = fresh + (ps.n > cs.n ? ps.n : cs.n);
	printf("  confirmation: %zu runs of the parent and %zu of the culprit count; fresh runs of both, interleaved\n",
	       ps.n, cs.n);
	for (;;) {
		rc = perf_pair_measure_each(p, parent, want - ps.n, cul, want - cs.n, why);
		if (rc)
			break;
		runs_buf_release(pa);
		runs_buf_release(ca);
		runs_buf_add(pa, ps.v, ps.t, ps.n);
		runs_buf_add(pa, parent->vals, parent->t, parent->n);
		runs_buf_add(ca, cs.v, cs.t, cs.n);
		runs_buf_add(ca, cul->vals, cul->t, cul->n);
		A = (struct verdict_runs){ pa->v, pa->t, pa->n };
		C = (struct verdict_runs){ ca->v, ca->t, ca->n };
		rc = verdict_confirm_reusing(vc, &p->pol, &G, &B, &A, parent->n, &C, cul->n, p->drift, p->job.direction);
		if (rc < 0 || vc->kind != VERDICT_NEED_MORE || vc->next_runs <= want)
			break;
		printf("  %s\n", vc->text);
		want = vc->next_runs;
	}
	runs_buf_release(&ps);
	runs_buf_release(&cs);
	return rc;
}

/* The culprit's share of the regression, in a half (issue 17): its
 * parent -> culprit change of the KPI's median as a percentage of the
 * range's good -> bad change (the range's ends, not the half's), in
 * r->share for the loop to store. */
static void print_share(struct bisect_run *r, const struct runs_buf *pa, const struct runs_buf *ca)
{
	struct perf *p = perf_of(r);
	const double *gv = p->half == 2 ? p->outer.v : p->good, *bv = p->half == 1 ? p->outer.v : p->bad;
	size_t ng = p->half == 2 ? p->outer.n : p->ng, nb = p->half == 1 ? p->outer.n : p->nb;
	double gap;

	if (!ng || !nb)
		return;
	gap = stats_median(bv, nb) - stats_median(gv, ng);
	if (gap == 0)
		return;
	r->share = 100.0 * (stats_median(ca->v, ca->n) - stats_median(pa->v, pa->n)) / gap;
	printf("  share: parent -> culprit is %.0f%% of the range's change (good %.6g, bad %.6g)\n", r->share,
	       stats_median(gv, ng), stats_median(bv, nb));
}

/* Re-measure the culprit and its parent (interleaved) until
 * verdict_confirm decides, then the report.  Returns the one-line outcome
 * (caller frees); *confirmed is 0 only when the measurements say the
 * culprit is not the cause (a confirmation that could not run leaves the
 * culprit standing, and says so). */
char *perf_confirm_and_report(struct bisect_run *r, const char *culprit, int *confirmed)
{
	struct perf *p = perf_of(r);
	struct pair_side parent, cul;
	struct runs_buf pa = { 0 }, ca = { 0 };
	struct verdict vc;
	char parent_hex[41], *spec = xstrfmt("%s^", culprit), *why = NULL, *msg = NULL;
	int ok = 0;

	*confirmed = 1;
	memset(&parent, 0, sizeof(parent));
	memset(&cul, 0, sizeof(cul));
	if (gitrepo_resolve(r->repo, spec, parent_hex) < 0) {
		msg = xstrdup("culprit found; its parent could not be resolved for the confirmation");
		goto report;
	}
	if (perf_pair_begin(r, &parent, parent_hex, STEP_PHASE_CONFIRM) < 0 || perf_pair_begin(r, &cul, culprit, STEP_PHASE_CONFIRM) < 0) {
		msg = xstrdup("culprit found; the confirmation could not build both commits");
		goto report;
	}
	if (parent.kernel && cul.kernel && perf_same_kernel(parent.kernel, cul.kernel)) {
		/* syzbot's no-op check: klab's builds are reproducible, so the
		 * commit does not change what runs */
		*confirmed = 0;
		msg = xstrfmt("culprit %.12s NOT confirmed: its kernel (vmlinux and image, both verified) is byte "
			      "for byte its parent's, so the commit cannot cause the change", culprit);
		perf_pair_finish(r, &parent, BISECT_SKIP, msg);
		perf_pair_finish(r, &cul, BISECT_SKIP, msg);
		goto report;
	}
	switch (confirm_measure(r, &parent, &cul, &vc, &pa, &ca, &why)) {
	case 0:
		break;
	case 1:
		msg = xstrfmt("culprit found; the confirmation could not measure (%s)", why ? why : "klab error");
		goto report;
	default:
		msg = why ? xstrfmt("culprit found; the confirmation could not measure (%s)", why)
			  : xstrdup("culprit found; the confirmation could not decide (klab error)");
		goto report;
	}
	perf_store_verdict(r, parent.s.id, &vc);
	perf_store_verdict(r, cul.s.id, &vc);
	ok = vc.kind == VERDICT_CONFIRMED;
	perf_pair_finish(r, &parent, ok ? BISECT_GOOD : BISECT_SKIP, vc.text);
	perf_pair_finish(r, &cul, ok ? BISECT_BAD : BISECT_SKIP, vc.text);
	*confirmed = ok;
	/* vc.text starts "culprit confirmed: ..." or "culprit NOT confirmed: ..." */
	msg = xstrfmt("culprit %.12s %s", culprit,
		      ok || vc.kind != VERDICT_NEED_MORE ? vc.text + strlen("culprit ")
							 : "NOT confirmed: still unclear at the cap");
report:
	printf("\n%s %s: %s\n", p->job.suite, p->job.testcase, msg);
	{
		double gm = stats_median(p->good, p->ng);
		printf("  %s (%s is better):\n", p->job.kpi, p->job.direction > 0 ? "higher" : "lower");
		print_kpi_row("good", perf_end_hex(r, 0), p->good, p->ng, gm);
		if (pa.n)
			print_kpi_row("parent", parent.hex, pa.v, pa.n, gm);
		if (ca.n)
			print_kpi_row(*confirmed ? "culprit" : "suspect", cul.hex, ca.v, ca.n, gm);
		print_kpi_row("bad", perf_end_hex(r, 1), p->bad, p->nb, gm);
	}
	if (p->half && pa.n && ca.n)
		print_share(r, &pa, &ca);
	if (parent.n && cul.n)
		print_mon_table(r, parent.s.id, cul.s.id, *confirmed, NULL);
	if (ok)
		profile_pair(r, &parent, &cul);
	print_skipped(r);
	{
		struct strbuf rep = STRBUF_INIT;
		strbuf_addstr(&rep, "  reproduce: klab run --job ");
		strbuf_add_shell_word(&rep, r->b->job_path ? r->b->job_path : "JOB");
		strbuf_addstr(&rep, " --repo ");
		strbuf_add_shell_word(&rep, r->b->repo_path);
		strbuf_addf(&rep, " --rev %.12s\n", culprit);
		fputs(rep.buf, stdout);
		strbuf_release(&rep);
	}
	perf_pair_release(&parent);
	perf_pair_release(&cul);
	runs_buf_release(&pa);
	runs_buf_release(&ca);
	free(spec);
	free(why);
	return msg;
}
