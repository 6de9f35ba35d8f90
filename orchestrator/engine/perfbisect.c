/* Boots and KPI values for job bisections: one guest environment for the
 * whole bisection (libvirt connection, accelerator, initramfs), the kernel
 * swapped per commit, every run stored under its step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect.h"
#include "kernel/kimage.h"
#include "engine/runcompare.h"
#include "engine/revert.h"
#include "engine/bisect-run.h"
#include "core/compare.h"
#include "lab/gitrepo.h"
#include "kernel/kbuild.h"
#include "kernel/kernel.h"
#include "kernel/ksources.h"
#include "core/verdict.h"
#include "lab/db.h"
#include "guest/guestimg.h"
#include "lab/lab.h"
#include "job/monitor.h"
#include "core/stats.h"
#include "util/strbuf.h"
#include "util/util.h"

/* speculative builds, at the end of the file */
static void spec_first_run(struct perf *p, int64_t step_id, double v);
static void spec_drop(struct perf *p);

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
	return 0;
}

/* The ends' runs and their times, gone. */
static void forget_runs(struct perf *p)
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
	forget_runs(p);
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

static void perf_end_release(struct perf_end *e)
{
	free(e->v);
	free(e->t);
	free(e->kernel);
	memset(e, 0, sizeof(*e));
}

void perf_release(struct perf *p)
{
	speculate_settle(&p->spec, NULL, NULL);
	spec_drop(p);
	guest_env_free(p->ge);
	job_release(&p->job);
	forget_references(p);
	perf_end_release(&p->outer);
	free(p->decided);
	memset(p, 0, sizeof(*p));
}

static int use_kernel(struct perf *p, const char *kernel, int64_t step_id)
{
	struct guest_env_opts o = { 0 };

	if (!p->ge) {
		o.kernel = kernel;
		o.quiet = 1;
		/* like-for-like: a resumed bisection boots where it booted before */
		if (db_bisection_host(p->lab->db, step_id, &o.prefer_host_id) < 0 ||
		    guest_env_prepare(&p->ge, p->lab, &p->job, &o) < 0)
			return -1;
		printf("  guests: %u vCPUs, %u NUMA nodes, %llu MiB, accelerator %s (%s)%s%s\n", p->job.guest.vcpus,
		       p->job.guest.numa_nodes, (unsigned long long)p->job.guest.memory_mb,
		       accel_name(guest_env_accel(p->ge)), guest_env_accel_why(p->ge), guest_env_host_name(p->ge) ? ", host " : "",
		       guest_env_host_name(p->ge) ? guest_env_host_name(p->ge) : "");
		return 0;
	}
	return guest_env_set_kernel(p->ge, kernel);
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
	if (*n < want && use_kernel(p, kernel, step_id) < 0)
		goto out;
	while (*n < want) {
		struct guest_result gr;
		double v = NAN;
		char buf[32];

		/* each next guest is made while this one boots: the runs
		 * asked for in one go boot this kernel, the run after them
		 * the caller's next_kernel */
		guest_env_expect_next(p->ge, *n + 1 < want ? kernel : p->next_kernel);
		if (guest_run_once(p->ge, 0, build_id, step_id, (unsigned)*n + 1, label, &gr) < 0) {
			guest_result_release(&gr);
			goto out;
		}
		if (gr.outcome != VM_OK) {
			*reason = xstrfmt("%s: %s", vm_outcome_name(gr.outcome), gr.reason);
			print_line("%srun %zu: %s (console: %s)", label, *n + 1, *reason, gr.console_path);
			if (gr.outcome == VM_PANIC && gr.excerpt)
				print_lines("", gr.excerpt);
			guest_result_release(&gr);
			ret = 1;
			goto out;
		}
		for (size_t i = 0; i < gr.nr_metrics; i++)
			if (!strcmp(gr.metrics[i].name, p->job.kpi) && gr.metrics[i].seq == 0)
				v = gr.metrics[i].value;
		if (isnan(v)) {
			error("the KPI '%s' is not among the metrics of run %zu (see %s)", p->job.kpi, *n + 1,
			      gr.raw_path);
			guest_result_release(&gr);
			goto out;
		}
		*vals = xrealloc(*vals, (*n + 1) * sizeof(double));
		t = xrealloc(t, (*n + 1) * sizeof(double));
		t[*n] = (double)gr.run_id;
		if (t[*n] > p->last_run)
			p->last_run = t[*n];
		(*vals)[(*n)++] = v;
		printf("%srun %zu: %s = %g (agent after %s)\n", label, *n, p->job.kpi, v,
		       fmt_duration(gr.hello_ms, buf, sizeof(buf)));
		fflush(stdout);
		guest_result_release(&gr);
		spec_first_run(p, step_id, v);
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

void perf_reference_run(struct perf *p, int bad_end, const char *hex)
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

void perf_describe(struct strbuf *sb, const double *v, size_t n)
{
	if (!n) {
		strbuf_addstr(sb, "-");
		return;
	}
	strbuf_addf(sb, "%.6g ±%.0f%%", stats_median(v, n), stats_cv_percent(v, n));
}

/* ---- the job tester of a bisection ------------------------------------- */

static struct perf *perf_of(struct bisect_run *r)
{
	return r->tester_data;
}

/* The commit of a reference end: the range's, or in a half the split
 * commit for the end it stands for. */
static const char *end_hex(struct bisect_run *r, int bad_end)
{
	struct perf *p = perf_of(r);

	if (p->half == (bad_end ? 1 : 2))
		return p->split;
	return bad_end ? r->b->bad : r->b->goods[0];
}

static void store_verdict(struct bisect_run *r, int64_t step_id, const struct verdict *v)
{
	struct strbuf sb = STRBUF_INIT;
	char *stat = xstrfmt("position=%.3f z_good=%.2f z_bad=%.2f threshold=%.2f noise=%.2f%% n=%zu/%zu/%zu",
			     v->position, v->z_good, v->z_bad, v->threshold, v->noise, v->n_good, v->n_bad, v->n_cand);

	verdict_format(&sb, v);
	db_verdict_store(r->lab->db, step_id, v->rule, v->mwu_good.p_value, v->mwu_bad.p_value, stat, sb.buf);
	free(stat);
	strbuf_release(&sb);
}

static int build_for(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id);
static void speculate_next(struct bisect_run *r, const struct step *s, const char *kernel);
static void spec_go(struct bisect_run *r, char (*hex)[41], const char *const *as, int n, const unsigned char *cpus,
		    size_t nr_cpus, const char *why_order);

/* One more run of a reference end, taken between a commit's extra runs:
 * a commit is ambiguous when the host drifts as often as when the commit
 * sits between the ends, and reference runs from the same minutes keep
 * the comparison fair.  A failure is a warning: the reference runs
 * measured so far still hold. */
static void reference_run_of(struct bisect_run *r, int bad_end)
{
	struct perf *p = perf_of(r);
	const char *hex = end_hex(r, bad_end);

	if (!(bad_end ? p->bad_kernel : p->good_kernel) &&
	    build_for(r, hex, bad_end ? &p->bad_kernel : &p->good_kernel, bad_end ? &p->bad_build : &p->good_build) < 0) {
		warning("no kernel for a fresh %s reference run: deciding with the earlier ones",
			bad_end ? "bad" : "good");
		return;
	}
	perf_reference_run(p, bad_end, hex);
}

/* ... of the good and the bad end in turn. */
static void reference_run(struct bisect_run *r)
{
	reference_run_of(r, perf_of(r)->ref_turn++ & 1);
}

/* Drift seen by a verdict: from now on time-local references (each
 * side's latest runs, pol.side_age) and a commit's runs one by one;
 * stored so that a resumed
 * bisection goes on the same way (a failure to store is a warning). */
static void note_drift(struct bisect_run *r, const struct verdict *v)
{
	struct perf *p = perf_of(r);

	if (!v->drift || p->drift)
		return;
	p->drift = 1;
	if (p->pol.side_age)
		printf("  drift: the host trended by %+.2f%% per run (%.1f standard errors); from here on each commit "
		       "is judged against the latest runs of each side (its end and the commits decided like it), "
		       "an end running again when its side has no run among the last %u\n",
		       v->drift_percent, v->drift_z, p->pol.side_age);
	else
		printf("  drift: the host trended by %+.2f%% per run (%.1f standard errors); from here on each commit "
		       "is judged against the latest runs of the ends, with a reference run before each of its runs\n",
		       v->drift_percent, v->drift_z);
	if (db_bisection_set_drift(r->lab->db, r->b->id, v->drift_percent) < 0)
		warning("the drift is not stored: a resumed bisection will test for it again");
}

/* A commit's runs up to `next` (all of them in vals/t/n, in time order):
 * the first ladder[0] in one go, then one by one, each after a fresh
 * reference run (good and bad in turn); under drift (side_age) one by
 * one, an end running first when its side has none among the last
 * side_age runs.  0; 1 when the guest failed (boot failure, panic,
 * timeout: not a performance verdict; why in reason); -1 on error. */
static int step_runs_to(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
			size_t next, double **vals, double **t, size_t *n, struct strbuf *reason)
{
	struct perf *p = perf_of(r);
	int rc, sides = p->drift && p->pol.side_age;
	char *why = NULL;

	do {
		size_t upto = next;
		/* a reference run's next boot is this commit's: its guest is
		 * made ahead */
		p->next_kernel = kernel;
		if (sides) {
			for (int k = 0; k < 2; k++)
				if (perf_side_stale(p, k, 1, p->pol.side_age))
					reference_run_of(r, k);
			upto = *n + 1;
		} else if (p->drift || *n >= p->pol.ladder[0]) {
			reference_run(r);
			upto = *n + 1;
		}
		p->next_kernel = NULL;
		free(*vals);
		free(*t);
		*vals = *t = NULL;
		free(why);
		rc = perf_measure_timed(p, kernel, build_id, s->id, "  ", upto, vals, t, n, &why);
	} while (!rc && *n < next);
	if (rc > 0)
		strbuf_addstr(reason, why);
	free(why);
	return rc;
}

/* The references a commit is judged against: the ends' runs, under
 * drift (side_age) each side's, its end's and the decided commits'
 * (side[] holds them). */
static void step_refs(struct perf *p, struct runs_buf side[2], struct verdict_runs *G, struct verdict_runs *B)
{
	*G = perf_good_runs(p);
	*B = perf_bad_runs(p);
	if (p->drift && p->pol.side_age) {
		perf_side_refs(p, 0, &side[0]);
		perf_side_refs(p, 1, &side[1]);
		*G = (struct verdict_runs){ side[0].v, side[0].t, side[0].n };
		*B = (struct verdict_runs){ side[1].v, side[1].t, side[1].n };
	}
}

/* A commit's runs until the rules decide (verdict_classify_timed): the
 * first runs in one go and extra runs one by one, each after a fresh
 * reference run (good and bad in turn).  Under drift the runs go one by
 * one, judged against each side's latest runs (its end's and those of
 * the commits decided like it), an end running again first when its side
 * has none among the last pol.side_age runs (with side_age 0: a
 * reference run before every run).  References that look stale (the
 * commit clearly outside both ends) get one fresh run of each end, once.
 * A skip when the guest fails (with its reason) or the cap is reached,
 * and when the commit is between the ends (*between: two changes, the
 * loop splits). */
static enum bisect_mark perf_step(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
				  struct strbuf *reason, int *between)
{
	struct perf *p = perf_of(r);
	struct verdict v;
	struct runs_buf side[2] = { { 0 } };
	double *vals = NULL, *t = NULL;
	size_t n = 0, want = p->pol.ladder[0];
	int refreshed = 0;
	enum bisect_mark res = BISECT_UNMARKED;

	if (!kernel) {
		strbuf_addstr(reason, "no kernel to boot");
		return BISECT_UNMARKED;
	}
	for (;;) {
		/* a step resumed after a crash has its runs: `next` from them */
		size_t next = n >= want ? n + 1 : want;
		struct verdict_runs G, B, C;
		int rc;

		rc = step_runs_to(r, s, kernel, build_id, next, &vals, &t, &n, reason);
		if (rc) {
			if (rc > 0)
				res = BISECT_SKIP;
			goto out;
		}
		step_refs(p, side, &G, &B);
		C = (struct verdict_runs){ vals, t, n };
		if (verdict_classify_timed(&v, &p->pol, &G, &B, &C, p->drift, p->job.direction) < 0)
			goto out;
		if (v.stale && !v.drift && !refreshed) {
			refreshed = 1;
			printf("  %s: the ends may have moved since they were measured; a fresh run of each\n", v.text);
			reference_run(r);
			reference_run(r);
			continue;
		}
		note_drift(r, &v);
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= n)
			break;
		if (p->drift && p->pol.side_age)
			printf("  %s: %u runs needed, an end's run first when its side has none recent\n", v.text,
			       v.next_runs);
		else
			printf("  %s: %u runs needed, each after a fresh reference run\n", v.text, v.next_runs);
		want = v.next_runs;
	}
	if (v.kind == VERDICT_BETWEEN && !p->half && p->pol.between_fresh) {
		/* two changes are a strong claim: fresh runs of the commit
		 * must say "between" on their own before the range splits */
		size_t n0 = n, fresh = p->pol.between_fresh;
		struct verdict_runs G, B, F;
		int rc;

		printf("  %s: %zu fresh runs must say so too before the range splits\n", v.text, fresh);
		for (;;) {
			rc = step_runs_to(r, s, kernel, build_id, n0 + fresh, &vals, &t, &n, reason);
			if (rc) {
				if (rc > 0)
					res = BISECT_SKIP;
				goto out;
			}
			step_refs(p, side, &G, &B);
			F = (struct verdict_runs){ vals + n0, t + n0, n - n0 };
			if (verdict_between_fresh(&v, &p->pol, &G, &B, &F, p->drift, p->job.direction) < 0)
				goto out;
			note_drift(r, &v);
			/* it asks only for more runs than it has, up to the cap */
			if (v.kind != VERDICT_NEED_MORE)
				break;
			printf("  %s: %u fresh runs\n", v.text, v.next_runs);
			fresh = v.next_runs;
		}
	}
	store_verdict(r, s->id, &v);
	strbuf_addf(reason, "%s: %s", v.rule, v.text);
	res = verdict_mark(v.kind);
	/* its runs join its side's references (used under drift) */
	if (res == BISECT_GOOD || res == BISECT_BAD)
		perf_side_add(p, res == BISECT_BAD, vals, t, n);
	/* a skip; the loop splits the range there (the whole range only) */
	*between = v.kind == VERDICT_BETWEEN;
out:
	runs_buf_release(&side[0]);
	runs_buf_release(&side[1]);
	free(vals);
	free(t);
	return res;
}

/* kernel_for_commit for one of the bisection's commits: its result (kr
 * for the caller to print and release), *kernel and *build_id on 0. */
static int kernel_of(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id,
		     struct kernel_result *kr)
{
	struct kernel_request rq = bisect_run_kernel_request(r, hex);
	int rc = kernel_for_commit(&rq, kr);

	if (rc == 0) {
		*kernel = xstrdup(kr->kernel);
		*build_id = kr->build_id;
	}
	return rc;
}

/* The kernel of one commit for a reference or confirmation step: the
 * one a step of this run took unbuilt from another commit (treesame-
 * build: the same kernel by its sources), else its own. */
static int build_for(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id)
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
	rc = kernel_of(r, hex, kernel, build_id, &kr);

	if (rc != 0 && (rc > 0 || kr.message)) {
		kernel_print_build(&kr.build, "  ");
		error("%.12s does not build (%s): a job bisection needs both ends built", hex,
		      kr.build.message ? kr.build.message : "");
	}
	kernel_result_release(&kr);
	return rc == 0 ? 0 : -1;
}

struct pair_side {
	const char *hex;
	struct step s;
	char *kernel;
	int64_t build_id;
	double *vals, *t;	/* the step's runs and their times */
	size_t n;
};

static int pair_begin(struct bisect_run *r, struct pair_side *side, const char *hex, enum step_phase phase)
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
	return build_for(r, hex, &side->kernel, &side->build_id);
}

static void pair_release(struct pair_side *side)
{
	free(side->kernel);
	free(side->vals);
	free(side->t);
}

/* Runs of two kernels alternate (a, b, a, b, ...), so a slow spell of the
 * host hits both sides instead of one: up to want_a runs of a and want_b
 * of b in their steps. */
static int pair_measure_each(struct perf *p, struct pair_side *a, size_t want_a, struct pair_side *b, size_t want_b,
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

static int pair_measure_with(struct perf *p, struct pair_side *a, struct pair_side *b, size_t want, char **why)
{
	return pair_measure_each(p, a, want, b, want, why);
}

static int pair_measure(struct bisect_run *r, struct pair_side *a, struct pair_side *b, size_t want, char **why)
{
	return pair_measure_with(perf_of(r), a, b, want, why);
}

static int pair_finish(struct bisect_run *r, struct pair_side *side, enum bisect_mark verdict, const char *reason)
{
	side->s.verdict = (char *)bisect_mark_to_string(verdict);
	side->s.reason = (char *)reason;
	return db_step_finish(r->lab->db, &side->s);
}

/* The reference steps of an earlier run (the latest pair decided, each
 * end with its own verdict), their runs in p.  1 found, 0 none, -1 error. */
static int stored_references(struct bisect_run *r)
{
	struct perf *p = perf_of(r);
	struct step *steps = NULL;
	size_t nr_steps = 0;
	double pct;

	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr_steps) < 0)
		return -1;
	for (size_t i = 0; i < nr_steps; i++) {
		if (steps[i].phase_id != STEP_PHASE_REFERENCE || steps[i].status_id != STEP_DONE)
			continue;
		if (!strcmp(steps[i].hash, r->b->goods[0]) && steps[i].mark == BISECT_GOOD)
			p->good_step = steps[i].id;
		else if (!strcmp(steps[i].hash, r->b->bad) && steps[i].mark == BISECT_BAD)
			p->bad_step = steps[i].id;
	}
	steps_release(steps, nr_steps);
	if (!p->good_step || !p->bad_step) {
		p->good_step = p->bad_step = 0;
		return 0;
	}
	if (db_step_metric_runs(r->lab->db, p->good_step, p->job.kpi, &p->good, &p->good_t, &p->ng) < 0 ||
	    db_step_metric_runs(r->lab->db, p->bad_step, p->job.kpi, &p->bad, &p->bad_t, &p->nb) < 0 ||
	    db_bisection_drift(r->lab->db, r->b->id, &p->drift, &pct) < 0)
		return -1;
	return 1;
}

/* An end's stored reference step, open again for more runs. */
static int reopen_side(struct bisect_run *r, struct pair_side *side, const char *hex, int64_t step_id)
{
	memset(side, 0, sizeof(*side));
	side->hex = hex;
	memcpy(side->s.hash, hex, 41);
	side->s.id = step_id;
	side->s.phase = (char *)step_phase_to_string(STEP_PHASE_REFERENCE);
	side->s.exit_code = -1;
	if (db_step_reopen(r->lab->db, step_id) < 0)
		return -1;
	return build_for(r, hex, &side->kernel, &side->build_id);
}

/* The ends' steps for the reference phase: a resumed bisection's stored
 * ones, decided again from their runs, or new ones.  1 the stored runs
 * reproduce (go on bisecting), 0 good and bad ready to measure from
 * *want runs each, -1 error (*message: why, or NULL). */
static int reference_sides(struct bisect_run *r, struct pair_side *good, struct pair_side *bad, size_t *want,
			   char **message)
{
	struct perf *p = perf_of(r);
	struct verdict_runs G, B;
	struct verdict v;
	int rc = stored_references(r);

	if (rc < 0)
		return -1;
	if (!rc) {
		if (pair_begin(r, good, r->b->goods[0], STEP_PHASE_REFERENCE) < 0 ||
		    pair_begin(r, bad, r->b->bad, STEP_PHASE_REFERENCE) < 0) {
			*message = xstrdup("cannot build the ends of the range");
			return -1;
		}
		return 0;
	}
	G = perf_good_runs(p);
	B = perf_bad_runs(p);
	if (verdict_reproduce_timed(&v, &p->pol, &G, &B, p->job.direction) < 0)
		return -1;
	printf("references from earlier runs: %zu good and %zu bad runs%s\n", p->ng, p->nb,
	       p->drift ? "; the host drifted (time-local references)" : "");
	if (v.kind == VERDICT_REPRODUCED)
		return 1;
	/* not reproduced at the old cap: the same steps, more runs */
	*want = p->ng > p->nb ? p->ng : p->nb;
	forget_runs(p);
	if (reopen_side(r, good, r->b->goods[0], p->good_step) < 0 || reopen_side(r, bad, r->b->bad, p->bad_step) < 0) {
		*message = xstrdup("cannot open the ends of the range again");
		return -1;
	}
	return 0;
}

/* Measure the good and the bad end (interleaved) and refuse to bisect
 * unless the regression reproduces (reference_sides: a resumed
 * bisection's ends).  0 go on, 1 refused (*message: why), -1 error
 * (*message: the bisection fails so, or NULL). */
static int reference_phase(struct bisect_run *r, char **message)
{
	struct perf *p = perf_of(r);
	struct pair_side good, bad;
	struct verdict v;
	char *why = NULL;
	size_t want = p->job.repeat;
	int ret = -1, rc;

	memset(&good, 0, sizeof(good));
	memset(&bad, 0, sizeof(bad));
	rc = reference_sides(r, &good, &bad, &want, message);
	if (rc) {
		ret = rc > 0 ? 0 : -1;
		goto out;
	}
	if (good.kernel)
		speculate_next(r, &good.s, good.kernel);
	for (;;) {
		struct verdict_runs G, B;

		rc = pair_measure(r, &good, &bad, want, &why);
		if (rc) {
			char *msg = xstrfmt("the ends of the range cannot be measured (%s)", why ? why : "klab error");
			if (rc > 0) {
				free(msg);
				msg = xstrfmt("an end of the range cannot be measured: %s", why);
			}
			*message = msg;
			goto out;
		}
		G = (struct verdict_runs){ good.vals, good.t, good.n };
		B = (struct verdict_runs){ bad.vals, bad.t, bad.n };
		if (verdict_reproduce_timed(&v, &p->pol, &G, &B, p->job.direction) < 0)
			goto out;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= want)
			break;
		printf("  %s: %u runs each\n", v.text, v.next_runs);
		want = v.next_runs;
	}
	store_verdict(r, good.s.id, &v);
	store_verdict(r, bad.s.id, &v);
	if (pair_finish(r, &good, BISECT_GOOD, v.text) < 0 || pair_finish(r, &bad, BISECT_BAD, v.text) < 0)
		goto out;
	p->good = good.vals;
	p->good_t = good.t;
	p->ng = good.n;
	p->bad = bad.vals;
	p->bad_t = bad.t;
	p->nb = bad.n;
	good.vals = bad.vals = good.t = bad.t = NULL;
	note_drift(r, &v);
	p->good_step = good.s.id;
	p->bad_step = bad.s.id;
	p->good_kernel = good.kernel;
	p->good_build = good.build_id;
	p->bad_kernel = bad.kernel;
	p->bad_build = bad.build_id;
	good.kernel = bad.kernel = NULL;
	{
		struct strbuf gs = STRBUF_INIT, bs = STRBUF_INIT;
		perf_describe(&gs, p->good, p->ng);
		perf_describe(&bs, p->bad, p->nb);
		printf("%s: good %s, bad %s (%zu and %zu runs)\n", p->job.kpi, gs.buf, bs.buf, p->ng, p->nb);
		strbuf_release(&gs);
		strbuf_release(&bs);
	}
	if (v.kind != VERDICT_REPRODUCED) {
		char *msg = strstr(v.text, "not reproduced") ? xstrdup(v.text)
							      : xstrfmt("regression not reproduced: %s", v.text);
		if (v.runs_needed > p->nb && v.runs_needed <= 1000) {
			/* the power estimate, and how to go on with these runs */
			char *more = xstrfmt("%s; to go on with these runs: klab bisect resume --max-runs %u %lld", msg,
					     v.runs_needed < VERDICT_MIN_CAP ? VERDICT_MIN_CAP : v.runs_needed,
					     (long long)r->b->id);
			free(msg);
			msg = more;
		}
		/* bisect_run prints it and ends the bisection not-reproduced */
		*message = msg;
		ret = 1;
		goto out;
	}
	printf("%s\n", v.text);
	ret = 0;
out:
	free(why);
	pair_release(&good);
	pair_release(&bad);
	return ret;
}

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
	printf("\nprofile: %u run%s each of parent and culprit with perf-profile (not used for the verdict)\n",
	       p->job.profile_runs, p->job.profile_runs == 1 ? "" : "s");
	for (int i = 0; i < 2; i++) {
		const struct pair_side *from = i ? cul : parent;
		if (pair_begin(r, &sides[i], from->hex, STEP_PHASE_PROFILE) < 0) {
			printf("  profile: not run (%.12s could not be set up)\n", from->hex);
			if (i)
				pair_release(&sides[0]);
			perf_release(&prof);
			return;
		}
	}
	rc = pair_measure_with(&prof, &sides[0], &sides[1], p->job.profile_runs, &why);
	for (int i = 0; i < 2; i++)
		pair_finish(r, &sides[i], BISECT_UNMARKED, rc ? "profile runs failed" : "profile runs (perf-profile), no verdict");
	if (rc)
		printf("  profile: not complete (%s)\n", why ? why : "klab error");
	else
		print_mon_table(r, sides[0].s.id, sides[1].s.id, 1, "perf-profile.");
	for (int i = 0; i < 2; i++)
		pair_release(&sides[i]);
	free(why);
	perf_release(&prof);
}

/* One kernel: the same artifact (one tree), or two whose verified
 * identities name the same vmlinux and image (kimage.h): equal bytes of
 * two bzImages alone proved nothing when a cache gave one of them another
 * commit's payload. */
static int same_kernel(const char *a, const char *b)
{
	return !strcmp(a, b) || kimage_same_image(a, b);
}

void runs_buf_release(struct runs_buf *b)
{
	free(b->v);
	free(b->t);
	memset(b, 0, sizeof(*b));
}

static void runs_buf_add(struct runs_buf *b, const double *v, const double *t, size_t n)
{
	b->v = xrealloc(b->v, (b->n + n + 1) * sizeof(double));
	b->t = xrealloc(b->t, (b->n + n + 1) * sizeof(double));
	if (n) {
		memcpy(b->v + b->n, v, n * sizeof(double));
		memcpy(b->t + b->n, t, n * sizeof(double));
	}
	b->n += n;
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
	int good_end = !strcmp(hex, end_hex(r, 0)) || (kernel && p->good_kernel && same_kernel(kernel, p->good_kernel));
	int bad_end = !strcmp(hex, end_hex(r, 1)) || (kernel && p->bad_kernel && same_kernel(kernel, p->bad_kernel));

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
		rc = pair_measure_each(p, parent, want - ps.n, cul, want - cs.n, why);
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
static char *confirm_and_report(struct bisect_run *r, const char *culprit, int *confirmed)
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
	if (pair_begin(r, &parent, parent_hex, STEP_PHASE_CONFIRM) < 0 || pair_begin(r, &cul, culprit, STEP_PHASE_CONFIRM) < 0) {
		msg = xstrdup("culprit found; the confirmation could not build both commits");
		goto report;
	}
	if (parent.kernel && cul.kernel && same_kernel(parent.kernel, cul.kernel)) {
		/* syzbot's no-op check: klab's builds are reproducible, so the
		 * commit does not change what runs */
		*confirmed = 0;
		msg = xstrfmt("culprit %.12s NOT confirmed: its kernel (vmlinux and image, both verified) is byte "
			      "for byte its parent's, so the commit cannot cause the change", culprit);
		pair_finish(r, &parent, BISECT_SKIP, msg);
		pair_finish(r, &cul, BISECT_SKIP, msg);
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
	store_verdict(r, parent.s.id, &vc);
	store_verdict(r, cul.s.id, &vc);
	ok = vc.kind == VERDICT_CONFIRMED;
	pair_finish(r, &parent, ok ? BISECT_GOOD : BISECT_SKIP, vc.text);
	pair_finish(r, &cul, ok ? BISECT_BAD : BISECT_SKIP, vc.text);
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
		print_kpi_row("good", end_hex(r, 0), p->good, p->ng, gm);
		if (pa.n)
			print_kpi_row("parent", parent.hex, pa.v, pa.n, gm);
		if (ca.n)
			print_kpi_row(*confirmed ? "culprit" : "suspect", cul.hex, ca.v, ca.n, gm);
		print_kpi_row("bad", end_hex(r, 1), p->bad, p->nb, gm);
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
	pair_release(&parent);
	pair_release(&cul);
	runs_buf_release(&pa);
	runs_buf_release(&ca);
	free(spec);
	free(why);
	return msg;
}

/* Build a round's commit before its guests start: the children only
 * boot.  No kernel is not an error here: the parent's perf_test meets
 * the failure again (from the build records) and handles it as always. */
static void round_prebuild(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id)
{
	struct kernel_result kr;

	*kernel = NULL;
	if (kernel_of(r, hex, kernel, build_id, &kr) == 0)
		printf("  %.12s built: %s\n", hex, kr.message);
	kernel_result_release(&kr);
}

/* A commit decided good or bad with kernel (made by build_id): of is
 * NULL when the kernel is its own build, else the commit whose kernel it
 * took unbuilt (treesame-build). */
static void remember_decided(struct perf *p, const char *hex, const char *kernel, int64_t build_id, const char *of,
			     enum bisect_mark mark)
{
	struct perf_decided *d;

	if (mark != BISECT_GOOD && mark != BISECT_BAD)
		return;
	ALLOC_GROW(p->decided, p->nr_decided + 1, p->alloc_decided);
	d = &p->decided[p->nr_decided++];
	d->kernel = xstrdup(kernel);
	d->build_id = build_id;
	memcpy(d->hex, hex, 41);
	memcpy(d->of, of ? of : "", of ? 41 : 1);
	d->mark = mark;
}

/* A step whose kernel image is byte for byte that of an end or of a
 * commit this run decided: the same kernel under the same job, so its
 * mark is inherited and nothing boots (klab's builds are reproducible:
 * fixed timestamp, user, host and build number; commits that touch no
 * file the config builds, as comments, documentation or drivers the
 * guest does not have, give the same image).  Only before the commit has
 * runs of its own (a multisection slot's runs decide as measured).
 * 1 inherited (out filled), 0 not. */
static int inherit_identical(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
			     struct step_outcome *out)
{
	struct perf *p = perf_of(r);
	double *vals = NULL;
	size_t n = 0, nc = p->nr_decided + 2;
	int64_t t0 = now_ms();

	if (db_step_metric_values(r->lab->db, s->id, p->job.kpi, &vals, &n) < 0 || n) {
		free(vals);
		return 0;
	}
	for (size_t i = 0; i < nc; i++) {
		const char *other = i == 0 ? p->good_kernel : i == 1 ? p->bad_kernel : p->decided[i - 2].kernel;
		const char *hex = i < 2 ? end_hex(r, i) : p->decided[i - 2].hex;
		enum bisect_mark mark = i == 0 ? BISECT_GOOD : i == 1 ? BISECT_BAD : p->decided[i - 2].mark;
		char *text;

		if (!other || !same_kernel(kernel, other))
			continue;
		text = xstrfmt("%s: the kernel is byte for byte %.12s's (vmlinux and image, both verified), so it behaves as that one did (not booted)",
			       bisect_mark_to_string(mark), hex);
		db_verdict_store(r->lab->db, s->id, "identical-kernel", NAN, NAN, NULL, text);
		strbuf_addf(&out->reason, "identical-kernel: %s", text);
		out->result = mark;
		out->test_ms = now_ms() - t0;
		free(text);
		/* decided too, as inherit_treesame's steps are: its own source
		 * set serves the commits near it (without it, treesame-build
		 * could only look as far as the ends, and on a range of comment
		 * and driver changes every step was built:
		 * tests/bench/treesame-range.sh) */
		remember_decided(p, s->hash, kernel, build_id, NULL, mark);
		return 1;
	}
	return 0;
}

/* The end or decided commit whose kernel commit hex cannot differ from
 * (issue 19, ksources_kernel_serves): the trees differ in no file that
 * kernel's build read (its source set, stored beside its image) and in
 * nothing that matters to a build by name, and that kernel was made with
 * the bisection's recipe as it is now.  Decided commits are tried latest
 * first (the nearest), then the ends (a half's, after a split: end_hex).  Its index (decided, then good 0
 * and bad 1 after them) with touched filled, or -1: any doubt (no set,
 * another recipe, a commit the repository lacks) is -1, build as always. */
static int treesame_with(struct bisect_run *r, const char *hex, struct strbuf *touched)
{
	struct perf *p = perf_of(r);
	size_t nc = p->nr_decided + 2;
	char rid[41];
	int hold, found = -1;

	if (!r->b->build || !r->repo)
		return -1;
	hold = error_hold(1);
	if (kbuild_recipe_id(&r->recipe, rid) < 0)
		nc = 0;
	for (size_t k = 0; k < nc && found < 0; k++) {
		size_t i = k < p->nr_decided ? p->nr_decided - 1 - k : k;
		const char *kernel = i < p->nr_decided ? p->decided[i].kernel
				     : i == p->nr_decided ? p->good_kernel : p->bad_kernel;
		const char *from = i < p->nr_decided ? p->decided[i].hex : end_hex(r, i > p->nr_decided);

		if (kernel && ksources_kernel_serves(r->repo, kernel, rid, from, hex, r->lab->comment_only_skip,
						     touched) == 1)
			found = (int)i;
	}
	error_hold(hold);
	return found;
}

/* Whether commit hex would take a known kernel's mark by its sources
 * (treesame_with), for callers that need no more than that: no build. */
static int inherits_by_sources(struct bisect_run *r, const char *hex)
{
	struct strbuf touched = STRBUF_INIT;
	int found = treesame_with(r, hex, &touched) >= 0;

	strbuf_release(&touched);
	return found;
}

/* A step whose commit cannot change an end's or a decided commit's
 * kernel (treesame_with) inherits that commit's mark, with no build and
 * no boot, and says so.  Only before the commit has runs of its own.  1
 * inherited (out filled), 0 not. */
static int inherit_treesame(struct bisect_run *r, const struct step *s, struct step_outcome *out)
{
	struct perf *p = perf_of(r);
	struct strbuf touched = STRBUF_INIT;
	double *vals = NULL;
	size_t n = 0;
	int64_t t0 = now_ms();
	int i;
	char from[41], *kernel, *text, *why;
	int64_t build_id;
	enum bisect_mark mark;

	if (!r->b->build || db_step_metric_values(r->lab->db, s->id, p->job.kpi, &vals, &n) < 0 || n ||
	    (i = treesame_with(r, s->hash, &touched)) < 0) {
		free(vals);
		strbuf_release(&touched);
		return 0;
	}
	if ((size_t)i < p->nr_decided) {
		memcpy(from, p->decided[i].hex, 41);
		kernel = xstrdup(p->decided[i].kernel);
		build_id = p->decided[i].build_id;
		mark = p->decided[i].mark;
	} else {
		memcpy(from, end_hex(r, (size_t)i > p->nr_decided), 41);
		kernel = xstrdup((size_t)i == p->nr_decided ? p->good_kernel : p->bad_kernel);
		build_id = (size_t)i == p->nr_decided ? p->good_build : p->bad_build;
		mark = (size_t)i == p->nr_decided ? BISECT_GOOD : BISECT_BAD;
	}
	if (!touched.len)
		strbuf_addstr(&touched, "no file");
	/* ksources_same_kernel marks the sources it let pass for their comments */
	if (strstr(touched.buf, "comments only"))
		why = xstrfmt("changes only comments in the files the kernel of %.12s was made from, or files it "
			      "never read (%s)", from, touched.buf);
	else
		why = xstrfmt("touches only files the kernel of %.12s never read (%s)", from, touched.buf);
	printf("klab: %.12s %s: %s without a build\n", s->hash, why, bisect_mark_to_string(mark));
	text = xstrfmt("%s: %s, so its kernel is that one (not built, not booted)", bisect_mark_to_string(mark), why);
	db_verdict_store(r->lab->db, s->id, "treesame-build", NAN, NAN, NULL, text);
	strbuf_addf(&out->reason, "treesame-build: %s", text);
	out->result = mark;
	out->test_ms = now_ms() - t0;
	/* its kernel is that one: a later step may compare with it */
	remember_decided(p, s->hash, kernel, build_id, from, mark);
	free(why);
	free(text);
	free(kernel);
	strbuf_release(&touched);
	return 1;
}

/* ---- speculative builds (speculate.h) ---------------------------------- */

/* what r->next[i] is, in the lines */
static const char *const spec_if[2] = { "if good", "if bad" };

/* In the builder: its own database connection (the parent's stays the
 * parent's, as a round's children do). */
static int spec_setup(void *data)
{
	struct bisect_run *r = data;
	sqlite3 *db;

	if (db_open(&db, r->lab->db_path, 0) < 0)
		return -1;
	r->lab->db = db;
	return 0;
}

static void spec_build(void *data, const char *hex, int jobs)
{
	struct bisect_run *r = data;
	struct kernel_request rq = bisect_run_kernel_request(r, hex);
	struct kernel_result kr;

	rq.jobs = jobs;
	rq.progress = PROGRESS_LINES;
	rq.indent = "";
	kernel_for_commit(&rq, &kr);
	printf("klab: %.12s: %s\n", hex, kr.message ? kr.message : "klab could not build it");
	kernel_result_release(&kr);
}

/* While step s's guests run on `kernel`: the commits the next step may
 * test (r->next) built on the CPUs that hold no vCPU of them. */
static void speculate_next(struct bisect_run *r, const struct step *s, const char *kernel)
{
	struct perf *p = perf_of(r);
	char hex[2][41];
	const char *why = NULL, *as[2];
	unsigned char *vcpus = NULL, *spare = NULL;
	size_t nr_vcpus = 0, nr_spare = 0, n_spare = 0;
	int n = 0, rc;

	/* (spec_off: the job's shape leaves no CPU on this host) */
	if (!r->b->build || r->slots > 1 || !p->lab->speculative_builds || p->spec.pid || p->spec_off)
		return;
	for (int i = 0; i < 2; i++) {
		/* the reference phase: the first step's commit, either way */
		if (i == 1 && !strcmp(r->next[0], r->next[1]))
			as[0] = "the first step";

		/* a commit the next step would inherit by its sources needs
		 * no build */
		if (r->next[i][0] && (n == 0 || strcmp(hex[0], r->next[i])) && !inherits_by_sources(r, r->next[i])) {
			memcpy(hex[n], r->next[i], 41);
			as[n++] = spec_if[i];
		}
	}
	if (!n || use_kernel(p, kernel, s->id) < 0)
		return;
	/* the job's shape on this host first: off for good, said once */
	rc = guest_env_vcpu_cpus(p->ge, 0, &vcpus, &nr_vcpus, &why);
	if (rc == 0 && !(n_spare = speculate_spare_cpus(vcpus, nr_vcpus, &spare, &nr_spare)))
		why = "no CPU outside the guests' vCPUs";
	if (rc != 0 || !n_spare) {
		printf("  speculative builds: off (%s)\n", why ? why : "the guests' CPUs are not known");
		p->spec_off = 1;
		goto out;
	}
	/* then beside the other klab guests running now: never on theirs */
	FREE_MANY(vcpus, spare);
	vcpus = spare = NULL;
	rc = guest_env_vcpu_cpus(p->ge, 1, &vcpus, &nr_vcpus, &why);
	if (rc == 0 && !(n_spare = speculate_spare_cpus(vcpus, nr_vcpus, &spare, &nr_spare)))
		why = "other klab guests use the spare CPUs now";
	if (rc != 0 || !n_spare) {
		printf("  speculative builds: none for this step (%s)\n", why ? why : "the guests' CPUs are not known");
		goto out;
	}
	if (n == 2) {
		/* a step: its first run says which successor is likelier */
		spec_drop(p);
		p->spec_wait.r = r;
		p->spec_wait.step = s->id;
		memcpy(p->spec_wait.hex, hex, sizeof(hex));
		p->spec_wait.cpus = spare;
		p->spec_wait.nr_cpus = nr_spare;
		spare = NULL;
		goto out;
	}
	spec_go(r, hex, as, n, spare, nr_spare, NULL);
out:
	free(vcpus);
	free(spare);
}

/* Start the builder for hex[0..n) (as: what each is) and say so. */
static void spec_go(struct bisect_run *r, char (*hex)[41], const char *const *as, int n, const unsigned char *cpus,
		    size_t nr_cpus, const char *why_order)
{
	struct perf *p = perf_of(r);
	const struct speculate_ops ops = { spec_setup, spec_build, r };
	char *log = xstrfmt("%s/speculative-builds.log", r->log_dir);

	if (speculate_start(&p->spec, (const char (*)[41])hex, n, cpus, nr_cpus, log, &ops) == 0) {
		printf("  speculative build%s while the guests run: %.12s (%s)", n > 1 ? "s" : "", hex[0], as[0]);
		if (n > 1)
			printf(", %.12s (%s)", hex[1], as[1]);
		printf(" on CPU %s at idle priority%s%s (%s)\n", p->spec.cpus, why_order ? "; " : "",
		       why_order ? why_order : "", log);
	}
	free(log);
}

static void spec_drop(struct perf *p)
{
	free(p->spec_wait.cpus);
	memset(&p->spec_wait, 0, sizeof(p->spec_wait));
}

/* A run of step_id stored: if it is the step whose successors wait, build
 * them, the likelier first (speculate_bad_first against the ends). */
static void spec_first_run(struct perf *p, int64_t step_id, double v)
{
	struct spec_pending *w = &p->spec_wait;
	char hex[2][41];
	const char *as[2];
	int bad;

	if (!w->r || w->step != step_id)
		return;
	bad = speculate_bad_first(v, stats_median(p->good, p->ng), stats_median(p->bad, p->nb));
	memcpy(hex[0], w->hex[bad], 41);
	memcpy(hex[1], w->hex[!bad], 41);
	as[0] = spec_if[bad];
	as[1] = spec_if[!bad];
	spec_go(w->r, hex, as, 2, w->cpus, w->nr_cpus, bad ? "run 1 is nearer bad" : "run 1 is nearer good");
	spec_drop(p);
}

/* The job tester's settle: the builder waited for or stopped. */
static void perf_settle(struct bisect_run *r, const char *hex)
{
	struct perf *p = perf_of(r);
	struct strbuf line = STRBUF_INIT;

	/* successors still waiting for their step's first run: not needed */
	spec_drop(p);
	if (!p->spec.pid)
		return;
	/* a commit the step inherits by its sources is never built: no wait */
	if (hex && inherits_by_sources(r, hex))
		hex = NULL;
	speculate_settle(&p->spec, hex, &line);
	if (line.len)
		printf("  %s\n", line.buf);
	strbuf_release(&line);
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
	if (inherit_treesame(r, s, out))
		return;
	if (r->b->build) {
		int rc = bisect_run_step_kernel(r, s, 0, out, &kr);
		if (rc) {
			kernel_result_release(&kr);
			return;
		}
		kernel = xstrdup(kr.kernel);
		build_id = kr.build_id;
	}
	kernel_result_release(&kr);
	if (kernel && inherit_identical(r, s, kernel, build_id, out)) {
		free(kernel);
		return;
	}
	if (kernel)
		speculate_next(r, s, kernel);
	t0 = now_ms();
	out->result = perf_step(r, s, kernel, build_id, &out->reason, &out->between);
	out->test_ms = now_ms() - t0;
	if (kernel)
		remember_decided(perf_of(r), s->hash, kernel, build_id, NULL, out->result);
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
	char *msg = confirm_and_report(r, culprit, confirmed);

	/* a half's culprit: its revert once both halves have ended
	 * (perf_halves_end), against the whole range's ends */
	if (*confirmed && !perf_of(r)->half)
		revert_check_bisection(&(struct revert_env){ .lab = r->lab, .repo = r->repo, .wt = r->wt,
			.repo_id = r->b->repo_id, .bisection_id = r->b->id, .recipe = &r->recipe, .jobs = r->jobs,
			.good = r->b->goods[0], .bad = r->b->bad, .culprit = culprit, .perf = perf_of(r) });
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

/* Swap end bad_end of p's references with e. */
static void end_swap(struct perf *p, int bad_end, struct perf_end *e)
{
	struct perf_end t = *e;
	double **v = bad_end ? &p->bad : &p->good, **times = bad_end ? &p->bad_t : &p->good_t;
	size_t *n = bad_end ? &p->nb : &p->ng;
	int64_t *step = bad_end ? &p->bad_step : &p->good_step, *build = bad_end ? &p->bad_build : &p->good_build;
	char **kernel = bad_end ? &p->bad_kernel : &p->good_kernel;

	*e = (struct perf_end){ *v, *times, *n, *step, *build, *kernel };
	*v = t.v;
	*times = t.t;
	*n = t.n;
	*step = t.step;
	*build = t.build;
	*kernel = t.kernel;
}

/* The whole range's ends again after a half (its other end is back from
 * p->outer). */
static void perf_whole(struct perf *p)
{
	if (!p->half)
		return;
	end_swap(p, p->half == 1, &p->outer);
	perf_end_release(&p->outer);
	p->half = 0;
}

/* A half after a split: the split commit's runs (its bisect step, where
 * fresh runs of that end go too) become the half's bad end (half 1) or
 * good end (half 2), as the simulation's search does, so that each
 * culprit is judged and confirmed against its own half.  The marks
 * inherited by identical kernels start again: a kernel decided in one
 * half says nothing against the other's ends. */
static int perf_half(struct bisect_run *r, int half, const char *split)
{
	struct perf *p = perf_of(r);
	struct perf_end e;
	struct step *steps = NULL;
	size_t nr = 0;
	int64_t id = 0;

	perf_whole(p);
	if (db_steps_load(r->lab->db, r->b->id, &steps, &nr) < 0)
		return -1;
	for (size_t i = 0; i < nr; i++)
		if (steps[i].phase_id == STEP_PHASE_BISECT && steps[i].status_id == STEP_DONE && !steps[i].half &&
		    !strcmp(steps[i].hash, split))
			id = steps[i].id;
	steps_release(steps, nr);
	if (!id)
		return error("the commit %.12s that split the range has no step", split);
	memset(&e, 0, sizeof(e));
	e.step = id;
	if (db_step_metric_runs(r->lab->db, id, p->job.kpi, &e.v, &e.t, &e.n) < 0)
		return -1;
	end_swap(p, half == 1, &e);
	p->outer = e;
	p->half = half;
	memcpy(p->split, split, 41);
	p->ref_turn = 0;
	/* The split commit's kernel, when this process measured it (not
	 * after a resume), so that a step whose image is byte for byte the
	 * half's new end inherits that end's mark as it would the range's
	 * ends' (the trust history's comment commits after the split booted
	 * 5 times, 78 s, for a verdict their image already had).  Without
	 * it, fresh reference runs of that end find its kernel when they
	 * need it. */
	if (p->between_kernel && !strcmp(p->between_hex, split)) {
		*(half == 1 ? &p->bad_kernel : &p->good_kernel) = xstrdup(p->between_kernel);
		*(half == 1 ? &p->bad_build : &p->good_build) = p->between_build;
	}
	for (size_t i = 0; i < p->nr_decided; i++)
		free(p->decided[i].kernel);
	p->nr_decided = 0;
	/* the commits decided against the other half's ends, too */
	runs_buf_release(&p->side[0]);
	runs_buf_release(&p->side[1]);
	{
		struct strbuf gs = STRBUF_INIT, bs = STRBUF_INIT;
		perf_describe(&gs, p->good, p->ng);
		perf_describe(&bs, p->bad, p->nb);
		printf("%s: half %d: good %.12s %s, bad %.12s %s (%zu and %zu runs)\n", p->job.kpi, half, end_hex(r, 0),
		       gs.buf, end_hex(r, 1), bs.buf, p->ng, p->nb);
		strbuf_release(&gs);
		strbuf_release(&bs);
	}
	return 0;
}

/* Both halves ended: each confirmed culprit reverted alone on the
 * range's bad end and measured against the range's ends (issue 17: with
 * two changes neither revert alone restores good, and klab says so).
 * Each revert step is a step of its culprit's half. */
static void perf_halves_end(struct bisect_run *r)
{
	struct perf *p = perf_of(r);
	struct half_culprit *c = NULL;
	size_t nr = 0;

	perf_whole(p);
	if (db_half_culprits_load(r->lab->db, r->b->id, &c, &nr) < 0)
		return;
	for (size_t i = 0; i < nr; i++) {
		if (!c[i].has_culprit || !c[i].confirmed)
			continue;
		if (r->half != c[i].half && db_bisection_set_half(r->lab->db, r->b->id, c[i].half) < 0)
			break;
		r->half = c[i].half;
		revert_check_bisection(&(struct revert_env){ .lab = r->lab, .repo = r->repo, .wt = r->wt,
			.repo_id = r->b->repo_id, .bisection_id = r->b->id, .recipe = &r->recipe, .jobs = r->jobs,
			.good = r->b->goods[0], .bad = r->b->bad, .culprit = c[i].culprit, .perf = p,
			.half = c[i].half });
	}
	half_culprits_release(c, nr);
}

static int perf_begin(struct bisect_run *r, char **message)
{
	return reference_phase(r, message);
}

/* A round's kernels, built here one after another (builds already use
 * every CPU); a commit without one gets no child, its step meets the
 * failure again in the parent. */
static int perf_round_prepare(struct bisect_run *r, char (*hex)[41], int n, int *fork_slot)
{
	struct perf *p = perf_of(r);

	p->slot_kernel = xcalloc(n, sizeof(char *));
	p->slot_build = xcalloc(n, sizeof(int64_t));
	for (int i = 0; i < n; i++) {
		/* a commit that cannot change a known kernel gets no build and
		 * no child: the parent's perf_test inherits its mark */
		if (!inherits_by_sources(r, hex[i]))
			round_prebuild(r, hex[i], &p->slot_kernel[i], &p->slot_build[i]);
		fork_slot[i] = p->slot_kernel[i] != NULL;
	}
	/* A libvirt connection must not be shared with children (their
	 * event loops would read its socket): closed here, opened again
	 * when the parent boots the next guest. */
	guest_env_free(p->ge);
	p->ge = NULL;
	return 0;
}

/* In slot i's child: the first runs of the ladder under the step; the
 * parent decides.  A guest failure is the step's skip here. */
static int perf_slot_test(struct bisect_run *r, int i, const struct step *s, struct step_outcome *out)
{
	struct perf *p = perf_of(r);
	double *vals = NULL;
	size_t n = 0;
	char *why = NULL, label[64];
	int64_t t0 = now_ms();
	int rc;

	/* the parent closed its guests' connection before forking */
	guest_env_detach(&p->ge);
	snprintf(label, sizeof(label), "  %.12s ", s->hash);
	rc = perf_measure_to(p, p->slot_kernel[i], p->slot_build[i], s->id, label, p->pol.ladder[0], &vals, &n,
			     &why);
	if (rc > 0) {
		/* boot failure, panic, timeout: a skip, as perf_step does */
		out->result = BISECT_SKIP;
		strbuf_addstr(&out->reason, why);
		out->test_ms = now_ms() - t0;
	}
	guest_env_free(p->ge);
	p->ge = NULL;
	free(vals);
	free(why);
	return rc > 0 ? 0 : rc == 0 ? 1 : -1;
}

/* The first runs are stored (or the commit did not build): the parent
 * decides as one slot would, with any extra runs. */
static int perf_round_rest(struct bisect_run *r, int i, int child_ok)
{
	return child_ok || !perf_of(r)->slot_kernel[i];
}

static void perf_round_release(struct bisect_run *r, int n)
{
	struct perf *p = perf_of(r);

	for (int i = 0; p->slot_kernel && i < n; i++)
		free(p->slot_kernel[i]);
	free(p->slot_kernel);
	free(p->slot_build);
	p->slot_kernel = NULL;
	p->slot_build = NULL;
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
