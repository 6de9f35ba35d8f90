/* Simulated performance bisections over synthetic run distributions;
 * see bisect-sim.h and tests/sim/README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect-sim.h"
#include "revert.h"
#include "util/util.h"

#define SIM_MAX_RUNS 64
#define SIM_MAX_REFS 1000
#define SIM_MAX_COMMITS 1024

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna) */
uint64_t sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sim_rng_uniform(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

double sim_rng_normal(struct sim_rng *r)
{
	double u = sim_rng_uniform(r), v = sim_rng_uniform(r);

	/* Box-Muller; 1 - u keeps the logarithm finite */
	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

const char *sim_dist_name(enum sim_dist d)
{
	switch (d) {
	case SIM_NORMAL:
		return "normal";
	case SIM_LOGNORMAL:
		return "lognormal";
	case SIM_NORMAL_SLOW:
		return "normal+slow";
	case SIM_LOGNORMAL_SLOW:
		return "lognormal+slow";
	case SIM_T3:
		return "t3";
	case SIM_BIMODAL:
		return "bimodal";
	case SIM_UNEVEN:
		return "uneven";
	}
	return "?";
}

size_t sim_runs(const struct sim_result *r)
{
	return r->ref_runs + r->fresh_ref_runs + r->step_runs + r->confirm_runs + r->revert_runs;
}

void sim_result_add(struct sim_result *a, const struct sim_result *b)
{
	a->bisections += b->bisections;
	a->correct += b->correct;
	a->wrong += b->wrong;
	a->inconclusive += b->inconclusive;
	a->refused += b->refused;
	a->unconfirmed += b->unconfirmed;
	a->found_right += b->found_right;
	a->found_wrong += b->found_wrong;
	a->confirmed_right += b->confirmed_right;
	a->confirmed_wrong += b->confirmed_wrong;
	a->steps += b->steps;
	a->step_runs += b->step_runs;
	a->skips += b->skips;
	a->ref_runs += b->ref_runs;
	a->fresh_ref_runs += b->fresh_ref_runs;
	a->confirm_runs += b->confirm_runs;
	a->revert_runs += b->revert_runs;
	a->revert_checked_right += b->revert_checked_right;
	a->revert_restored_right += b->revert_restored_right;
	a->revert_checked_wrong += b->revert_checked_wrong;
	a->revert_restored_wrong += b->revert_restored_wrong;
	a->fixed_correct += b->fixed_correct;
	a->fixed_wrong += b->fixed_wrong;
	a->fixed_steps += b->fixed_steps;
	a->fixed_runs += b->fixed_runs;
}

/* The host of one bisection: its slow spells span consecutive runs, its
 * drift follows the count of runs. */
struct host {
	const struct sim_cell *cell;
	struct sim_rng *rng;
	int slow_left;
	int drift_sign;
	size_t runs;
	double walk;		/* log of the random walk's factor */
};

/* Student t, 3 degrees of freedom */
static double t3(struct sim_rng *r)
{
	double z = sim_rng_normal(r), c = 0;

	for (int i = 0; i < 3; i++) {
		double y = sim_rng_normal(r);
		c += y * y;
	}
	return z / sqrt(c / 3);
}

static double run_once(struct host *h, int bad)
{
	const struct sim_cell *c = h->cell;
	double mu = 1000 * (bad ? 1 - c->effect_percent / 100 : 1), cv = c->cv_percent / 100, x;
	int slow = c->dist == SIM_NORMAL_SLOW || c->dist == SIM_LOGNORMAL_SLOW;

	switch (c->dist) {
	case SIM_LOGNORMAL:
	case SIM_LOGNORMAL_SLOW: {
		double s = sqrt(log1p(cv * cv));

		x = mu * exp(s * sim_rng_normal(h->rng) - s * s / 2);
		break;
	}
	case SIM_T3:
		/* t3's standard deviation is sqrt(3) */
		x = mu * exp(cv / sqrt(3) * t3(h->rng));
		break;
	case SIM_BIMODAL:
		x = mu * (1 + cv * (sim_rng_uniform(h->rng) < 0.5 ? -1 : 1) + cv / 4 * sim_rng_normal(h->rng));
		break;
	case SIM_UNEVEN:
		x = mu * (1 + (bad ? cv : cv / 5) * sim_rng_normal(h->rng));
		break;
	default:
		x = mu * (1 + cv * sim_rng_normal(h->rng));
		break;
	}
	if (x < mu * 0.01)
		x = mu * 0.01;
	if (slow) {
		if (h->slow_left > 0) {
			h->slow_left--;
			x *= 0.4 + 0.3 * sim_rng_uniform(h->rng);
		} else if (sim_rng_uniform(h->rng) < c->slow_rate) {
			/* one or two slow runs in a row */
			h->slow_left = sim_rng_uniform(h->rng) < 0.5 ? 0 : 1;
			x *= 0.4 + 0.3 * sim_rng_uniform(h->rng);
		}
	}
	/* a host getting slower or faster over the bisection */
	x *= exp(h->drift_sign * c->drift_percent / 100 * (double)h->runs);
	if (c->walk_percent > 0) {
		h->walk += c->walk_percent / 100 * sim_rng_normal(h->rng);
		x *= exp(h->walk);
	}
	h->runs++;
	/* direction -1: the KPI is the time per operation */
	return c->direction > 0 ? x : 1e6 / x;
}

/* The untested commit nearest the middle of (lo, hi), like git bisect
 * does around skipped commits; -1 when only skipped ones are left. */
static int pick(int lo, int hi, const unsigned char *skipped)
{
	int mid = (lo + hi) / 2;

	for (int d = 0; d < hi - lo; d++) {
		if (mid + d < hi && !skipped[mid + d])
			return mid + d;
		if (mid - d > lo && !skipped[mid - d])
			return mid - d;
	}
	return -1;
}

/* Runs of two kernels alternate, as pair_measure does (a first). */
static void measure_pair(struct host *h, double *a, size_t *na, int a_bad, double *b, size_t *nb, int b_bad,
			 size_t target)
{
	while (*na < target || *nb < target) {
		if (*na < target)
			a[(*na)++] = run_once(h, a_bad);
		if (*nb < target)
			b[(*nb)++] = run_once(h, b_bad);
	}
}

static void print_runs(const char *name, const double *v, size_t n)
{
	fprintf(stderr, "  %s:", name);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %.1f", v[i]);
	fprintf(stderr, "\n");
}

static void trace_refusal(const struct verdict *v, const double *g, size_t ng, const double *b, size_t nb)
{
	fprintf(stderr, "refused: %s (%s)\n", v->text, v->rule);
	print_runs("good", g, ng);
	print_runs("bad", b, nb);
}

static void trace_step(const struct verdict *v, int m, int culprit, const double *c, size_t nc)
{
	struct strbuf sb = STRBUF_INIT;

	verdict_format(&sb, v);
	fprintf(stderr, "commit %d (culprit %d) misjudged:\n%s", m, culprit, sb.buf);
	print_runs("commit", c, nc);
	strbuf_release(&sb);
}

/* The references of one adaptive bisection, growing with fresh runs. */
struct refs {
	double g[SIM_MAX_REFS], b[SIM_MAX_REFS];
	size_t ng, nb;
	unsigned turn;
};

/* reference_run(): one more run of the good or the bad end, in turn */
static void fresh_reference_run(struct sim_result *res, struct host *h, struct refs *r)
{
	int bad_end = r->turn++ & 1;

	if (bad_end && r->nb < SIM_MAX_REFS)
		r->b[r->nb++] = run_once(h, 1);
	else if (!bad_end && r->ng < SIM_MAX_REFS)
		r->g[r->ng++] = run_once(h, 0);
	else
		return;
	res->fresh_ref_runs++;
}

/* confirm_and_report(): parent and culprit interleaved, `repeat` runs
 * each and more while verdict_confirm asks.  1 when confirmed. */
static int confirm(struct sim_result *res, const struct verdict_policy *p, struct host *h, const struct refs *r,
		   int parent_bad, int culprit_bad)
{
	double a[SIM_MAX_RUNS], c[SIM_MAX_RUNS];
	size_t na = 0, nc = 0, want = h->cell->repeat;
	struct verdict v;

	for (;;) {
		measure_pair(h, a, &na, parent_bad, c, &nc, culprit_bad, want);
		if (verdict_confirm(&v, p, r->g, r->ng, r->b, r->nb, a, na, c, nc, h->cell->direction) < 0)
			abort();
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= want)
			break;
		want = v.next_runs;
	}
	res->confirm_runs += na + nc;
	if (h->cell->verbose && (v.kind == VERDICT_CONFIRMED) != (!parent_bad && culprit_bad)) {
		struct strbuf sb = STRBUF_INIT;

		verdict_format(&sb, &v);
		fprintf(stderr, "confirmation misjudged (parent %s, culprit %s):\n%s", parent_bad ? "bad" : "good",
			culprit_bad ? "bad" : "good", sb.buf);
		strbuf_release(&sb);
	}
	return v.kind == VERDICT_CONFIRMED;
}

/* revert_check_run(): the bad end with the culprit reverted, `repeat`
 * runs and more while revert_decide asks, each extra one after a fresh
 * reference run, against the references.  With one change point the
 * reverted kernel is good exactly when the culprit is the real one.  1
 * when it "restores good". */
static int revert_check(struct sim_result *res, const struct verdict_policy *p, struct host *h, struct refs *r,
			int reverted_bad)
{
	double v[SIM_MAX_RUNS];
	size_t n = 0, want = h->cell->repeat;
	enum revert_outcome o;
	struct verdict vd;
	int rc;

	for (;;) {
		size_t next = n ? n + 1 : want;

		if (n)
			fresh_reference_run(res, h, r);
		while (n < next)
			v[n++] = run_once(h, reverted_bad);
		if (n < want)
			continue;
		rc = revert_decide(&vd, &o, p, r->g, r->ng, r->b, r->nb, v, n, h->cell->direction);
		if (rc < 0)
			abort();
		if (rc == 0)
			break;
		want = vd.next_runs;
	}
	res->revert_runs += n;
	return o == REVERT_RESTORES_GOOD;
}

/* A failed confirmation ends the bisection without a culprit. */
static const int confirmation_decides = 1;

static void bisect_adaptive(struct sim_result *res, const struct verdict_policy *p,
			    struct host *h, int culprit)
{
	static struct refs r;
	double c[SIM_MAX_RUNS];
	size_t target = h->cell->repeat;
	unsigned char skipped[SIM_MAX_COMMITS] = { 0 };
	int lo = 0, hi = (int)h->cell->commits - 1, dir = h->cell->direction, right, confirmed;
	struct verdict v;

	r.ng = r.nb = 0;
	r.turn = 0;
	for (;;) {
		measure_pair(h, r.g, &r.ng, 0, r.b, &r.nb, 1, target);
		if (verdict_reproduce(&v, p, r.g, r.ng, r.b, r.nb, dir) < 0)
			abort();
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= target)
			break;
		target = v.next_runs;
	}
	res->ref_runs += r.ng + r.nb;
	if (v.kind != VERDICT_REPRODUCED) {
		if (h->cell->verbose)
			trace_refusal(&v, r.g, r.ng, r.b, r.nb);
		res->refused++;
		return;
	}
	while (hi - lo > 1) {
		int m = pick(lo, hi, skipped);
		size_t nc = 0, want = p->ladder[0];

		if (m < 0) {
			res->inconclusive++;
			return;
		}
		/* perf_step(): the first runs in one go, extra runs one by
		 * one, each after a fresh reference run */
		for (;;) {
			size_t next = nc ? nc + 1 : want;

			if (nc)
				fresh_reference_run(res, h, &r);
			while (nc < next)
				c[nc++] = run_once(h, m >= culprit);
			if (nc < want)
				continue;
			if (verdict_classify(&v, p, r.g, r.ng, r.b, r.nb, c, nc, dir) < 0)
				abort();
			if (v.kind != VERDICT_NEED_MORE || v.next_runs <= nc)
				break;
			want = v.next_runs;
		}
		if (h->cell->verbose && (v.kind == VERDICT_GOOD) != (m < culprit))
			trace_step(&v, m, culprit, c, nc);
		res->steps++;
		res->step_runs += nc;
		if (v.kind == VERDICT_GOOD) {
			lo = m;
		} else if (v.kind == VERDICT_BAD) {
			hi = m;
		} else {
			skipped[m] = 1;
			res->skips++;
		}
	}
	right = hi == culprit && h->cell->effect_percent > 0;
	confirmed = confirm(res, p, h, &r, hi - 1 >= culprit, hi >= culprit);
	if (right) {
		res->found_right++;
		res->confirmed_right += confirmed;
	} else {
		res->found_wrong++;
		res->confirmed_wrong += confirmed;
	}
	if (h->cell->revert_check && confirmed) {
		int restored = revert_check(res, p, h, &r, hi != culprit);

		if (right) {
			res->revert_checked_right++;
			res->revert_restored_right += restored;
		} else {
			res->revert_checked_wrong++;
			res->revert_restored_wrong += restored;
		}
	}
	if (confirmation_decides && !confirmed)
		res->unconfirmed++;
	else if (right)
		res->correct++;
	else
		res->wrong++;
}

/* The baseline: 5 runs of everything, the nearer median wins; then 5 runs
 * each of parent and culprit (counted, not deciding). */
static void bisect_fixed(struct sim_result *res, struct host *h, int culprit)
{
	double g[5], b[5], c[5], mg, mb;
	size_t ng = 0, nb = 0;
	int lo = 0, hi = (int)h->cell->commits - 1;

	measure_pair(h, g, &ng, 0, b, &nb, 1, 5);
	res->fixed_runs += 10;
	mg = stats_median(g, 5);
	mb = stats_median(b, 5);
	while (hi - lo > 1) {
		int m = (lo + hi) / 2;
		double mc;

		for (size_t i = 0; i < 5; i++)
			c[i] = run_once(h, m >= culprit);
		mc = stats_median(c, 5);
		res->fixed_steps++;
		res->fixed_runs += 5;
		if (fabs(mc - mg) < fabs(mc - mb))
			lo = m;
		else
			hi = m;
	}
	res->fixed_runs += 10;
	if (h->cell->revert_check)
		res->fixed_runs += 5;
	if (hi == culprit && h->cell->effect_percent > 0)
		res->fixed_correct++;
	else
		res->fixed_wrong++;
}

void sim_run_cell(struct sim_result *res, const struct verdict_policy *p,
		  const struct sim_cell *cell, struct sim_rng *rng)
{
	if (cell->commits < 3 || cell->commits > SIM_MAX_COMMITS || verdict_policy_cap(p) > SIM_MAX_RUNS ||
	    !cell->repeat || cell->repeat > SIM_MAX_RUNS)
		abort();
	for (size_t i = 0; i < cell->bisections; i++) {
		/* the first bad commit, never the good end */
		int culprit = 1 + (int)(sim_rng_uniform(rng) * (double)(cell->commits - 1));
		int sign = sim_rng_uniform(rng) < 0.5 ? -1 : 1;
		struct host h = { cell, rng, 0, sign, 0, 0 };

		res->bisections++;
		bisect_adaptive(res, p, &h, culprit);
		h.slow_left = 0;
		h.runs = 0;
		h.walk = 0;
		bisect_fixed(res, &h, culprit);
	}
}
