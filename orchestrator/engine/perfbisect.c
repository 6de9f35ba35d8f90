/* The job tester of a bisection (perfbisect.h): its entry points, which
 * the bisection loop calls, and the state of a pass (perfbisect-int.h
 * lists the files that do each job). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "engine/revert.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "kernel/kernel.h"
#include "util/strbuf.h"
#include "util/util.h"

int perf_init(struct perf *p, struct lab *lab, const char *job_path, const char *job_text, const char *kpi)
{
	memset(p, 0, sizeof(*p));
	p->lab = lab;
	if (!job_text)
		return error("bisection has no job text");
	if (job_parse_buffer(&p->job, job_path ? job_path : "job", job_text, strlen(job_text)) < 0)
		return -1;
	if (kpi && *kpi) {
		free(p->job.kpi);
		p->job.kpi = xstrdup(kpi);
	}
	verdict_policy_init(&p->pol);
	p->pol.confirm_share = p->job.confirm_share;
	if (p->job.max_runs && verdict_policy_set_cap(&p->pol, p->job.max_runs) < 0)
		return -1;
	return perf_set_measurer(p, &guest_measurer, NULL);
}

int perf_set_measurer(struct perf *p, const struct measurer_ops *ops, void *arg)
{
	if (p->mops)
		p->mops->close(p->mdata);
	p->mops = ops;
	p->marg = arg;
	p->mdata = NULL;
	if (ops->open(&p->mdata, arg, p->lab, &p->job) < 0) {
		p->mops = NULL;
		return -1;
	}
	return 0;
}

int perf_kernel(struct perf *p, const struct kernel_request *rq, int klab_commit, struct kernel_result *kr)
{
	return p->mops->kernel(p->mdata, rq, klab_commit, kr);
}

/* The ends' runs and their times, gone. */
void perf_forget_runs(struct perf *p)
{
	free(p->good);
	free(p->good_t);
	free(p->bad);
	free(p->bad_t);
	p->good = p->good_t = p->bad = p->bad_t = NULL;
	p->ng = p->nb = 0;
}

/* Everything a bisection's pass learnt of its ends and decided kernels. */
static void forget_references(struct perf *p)
{
	perf_forget_runs(p);
	free(p->good_kernel);
	free(p->bad_kernel);
	p->good_kernel = p->bad_kernel = NULL;
	p->good_step = p->bad_step = 0;
	p->good_build = p->bad_build = 0;
	p->ref_turn = 0;
	runs_buf_release(&p->side[0]);
	runs_buf_release(&p->side[1]);
	for (size_t i = 0; i < p->nr_decided; i++)
		free(p->decided[i].kernel);
	p->nr_decided = 0;
	free(p->between_kernel);
	p->between_kernel = NULL;
}

void perf_release(struct perf *p)
{
	speculate_settle(&p->spec, NULL, NULL);
	perf_spec_drop(p);
	if (p->mops)
		p->mops->close(p->mdata);
	job_release(&p->job);
	forget_references(p);
	perf_end_release(&p->outer);
	free(p->decided);
	memset(p, 0, sizeof(*p));
}

/* The commit of a reference end: the range's, or in a half the split
 * commit for the end it stands for. */
const char *perf_end_hex(struct bisect_run *r, int bad_end)
{
	struct perf *p = perf_of(r);

	if (p->half == (bad_end ? 1 : 2))
		return p->split;
	return bad_end ? r->b->bad : r->b->goods[0];
}

void perf_store_verdict(struct bisect_run *r, int64_t step_id, const struct verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	char *stat = xstrfmt("position=%.3f z_good=%.2f z_bad=%.2f threshold=%.2f noise=%.2f%% n=%zu/%zu/%zu",
			     v->position, v->z_good, v->z_bad, v->threshold, v->noise, v->n_good, v->n_bad, v->n_cand);

	verdict_format(&sb, v);
	db_verdict_store(r->lab->db, step_id, v->rule, v->mwu_good.p_value, v->mwu_bad.p_value, stat, sb.buf);
	free(stat);
	strbuf_release(&sb);
}

/* A step of a job bisection: the commit's kernel (checked out only on a
 * store miss), then, unless its image is one already decided, runs until
 * the rules decide. */
static void perf_test(struct bisect_run *r, const struct step *s, struct step_outcome *out)
{
	struct kernel_result kr;
	char *kernel = NULL;
	int64_t build_id = 0, t0;

	memset(&kr, 0, sizeof(kr));
	if (perf_inherit_treesame(r, s, out))
		return;
	if (r->b->build) {
		struct kernel_request rq = bisect_run_kernel_request(r, s->hash);
		int rc = bisect_run_kernel_outcome(r, s, perf_kernel(perf_of(r), &rq, 0, &kr), out, &kr);
		if (rc) {
			kernel_result_release(&kr);
			return;
		}
		kernel = xstrdup(kr.kernel);
		build_id = kr.build_id;
	}
	kernel_result_release(&kr);
	if (kernel && perf_inherit_identical(r, s, kernel, build_id, out)) {
		free(kernel);
		return;
	}
	if (kernel)
		perf_speculate_next(r, s, kernel);
	t0 = now_ms();
	out->result = perf_step(r, s, kernel, build_id, &out->reason, &out->between);
	out->test_ms = now_ms() - t0;
	if (kernel)
		perf_remember_decided(perf_of(r), s->hash, kernel, build_id, NULL, out->result);
	if (kernel && out->between) {
		struct perf *p = perf_of(r);

		free(p->between_kernel);
		p->between_kernel = xstrdup(kernel);
		p->between_build = build_id;
		memcpy(p->between_hex, s->hash, 41);
	}
	if (out->result == BISECT_UNMARKED) {
		out->why = xstrfmt("klab could not measure %.12s%s%s", s->hash, out->reason.len ? ": " : "",
				   out->reason.buf);
		if (!out->reason.len)
			strbuf_addstr(&out->reason, "klab could not run the guests");
	}
	free(kernel);
}

/* The job tester's confirm: the confirmation and report, then for a
 * confirmed culprit the revert check (issue 17: does the regression go
 * away without it?), whose result never changes the bisection's. */
static char *perf_confirm(struct bisect_run *r, const char *culprit, int *confirmed)
{
	char *msg = perf_confirm_and_report(r, culprit, confirmed);

	/* a half's culprit: its revert once both halves have ended
	 * (perf_halves_end), against the whole range's ends */
	if (*confirmed && !perf_of(r)->half)
		perf_revert_check(r, culprit, 0);
	return msg;
}

/* Pass 2 (an unconfirmed culprit): pass 1's runs stay in its steps; the
 * references, the ends' kernels and the kernels pass 1 decided (whose
 * marks came from its references) are forgotten, so the reference phase
 * measures the ends afresh and no step inherits a pass-1 mark. */
static void perf_reopen(struct bisect_run *r)
{
	forget_references(perf_of(r));
}

static int perf_begin(struct bisect_run *r, char **message)
{
	return perf_reference_phase(r, message);
}

const struct step_tester_ops perf_tester = {
	.test_label = "",
	.progress = 1,
	.begin = perf_begin,
	.test = perf_test,
	.confirm = perf_confirm,
	.reopen = perf_reopen,
	.half = perf_half,
	.halves_end = perf_halves_end,
	.round_prepare = perf_round_prepare,
	.slot_test = perf_slot_test,
	.round_rest = perf_round_rest,
	.round_release = perf_round_release,
	.settle = perf_settle,
};
