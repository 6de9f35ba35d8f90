/* Simulated performance bisections over synthetic run distributions;
 * see bisect-sim.h and tests/sim/README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect-sim.h"
#include "util/util.h"

#define SIM_MAX_RUNS 64
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
	}
	return "?";
}

/* The host of one bisection: its slow spells span consecutive runs. */
struct host {
	const struct sim_cell *cell;
	struct sim_rng *rng;
	int slow_left;
	size_t runs;
};

static double run_once(struct host *h, int bad)
{
	const struct sim_cell *c = h->cell;
	double mu = 1000 * (bad ? 1 - c->effect_percent / 100 : 1), cv = c->cv_percent / 100, x;
	int slow = c->dist == SIM_NORMAL_SLOW || c->dist == SIM_LOGNORMAL_SLOW;

	h->runs++;
	if (c->dist == SIM_NORMAL || c->dist == SIM_NORMAL_SLOW) {
		x = mu * (1 + cv * sim_rng_normal(h->rng));
		if (x < mu * 0.01)
			x = mu * 0.01;
	} else {
		double s = sqrt(log1p(cv * cv));

		x = mu * exp(s * sim_rng_normal(h->rng) - s * s / 2);
	}
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

static void measure_ends(struct host *h, double *g, size_t *ng, double *b, size_t *nb, size_t target)
{
	/* interleaved, as klab runs them */
	while (*ng < target || *nb < target) {
		if (*ng < target)
			g[(*ng)++] = run_once(h, 0);
		if (*nb < target)
			b[(*nb)++] = run_once(h, 1);
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

static void bisect_adaptive(struct sim_result *res, const struct verdict_policy *p,
			    struct host *h, int culprit)
{
	double g[SIM_MAX_RUNS], b[SIM_MAX_RUNS], c[SIM_MAX_RUNS];
	size_t ng = 0, nb = 0, target = 3;
	unsigned char skipped[SIM_MAX_COMMITS] = { 0 };
	int lo = 0, hi = (int)h->cell->commits - 1, dir = h->cell->direction;
	struct verdict v;

	for (;;) {
		measure_ends(h, g, &ng, b, &nb, target);
		if (verdict_reproduce(&v, p, g, ng, b, nb, dir) < 0)
			abort();
		if (v.kind != VERDICT_NEED_MORE)
			break;
		target = v.next_runs;
	}
	res->ref_runs += ng + nb;
	if (v.kind != VERDICT_REPRODUCED) {
		if (h->cell->verbose)
			trace_refusal(&v, g, ng, b, nb);
		res->refused++;
		return;
	}
	while (hi - lo > 1) {
		int m = pick(lo, hi, skipped);
		size_t nc = 0;

		if (m < 0) {
			res->inconclusive++;
			return;
		}
		target = p->ladder[0];
		for (;;) {
			while (nc < target)
				c[nc++] = run_once(h, m >= culprit);
			if (verdict_classify(&v, p, g, ng, b, nb, c, nc, dir) < 0)
				abort();
			if (v.kind != VERDICT_NEED_MORE)
				break;
			target = v.next_runs;
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
	if (hi == culprit)
		res->correct++;
	else
		res->wrong++;
}

static double median_of(const double *v, size_t n)
{
	return stats_median(v, n);
}

/* The baseline: 5 runs of everything, the nearer median wins. */
static void bisect_fixed(struct sim_result *res, struct host *h, int culprit)
{
	double g[5], b[5], c[5], mg, mb;
	size_t ng = 0, nb = 0;
	int lo = 0, hi = (int)h->cell->commits - 1;

	measure_ends(h, g, &ng, b, &nb, 5);
	res->fixed_ref_runs += 10;
	mg = median_of(g, 5);
	mb = median_of(b, 5);
	while (hi - lo > 1) {
		int m = (lo + hi) / 2;
		double mc;

		for (size_t i = 0; i < 5; i++)
			c[i] = run_once(h, m >= culprit);
		mc = median_of(c, 5);
		res->fixed_steps++;
		res->fixed_step_runs += 5;
		if (fabs(mc - mg) < fabs(mc - mb))
			lo = m;
		else
			hi = m;
	}
	if (hi == culprit)
		res->fixed_correct++;
	else
		res->fixed_wrong++;
}

void sim_run_cell(struct sim_result *res, const struct verdict_policy *p,
		  const struct sim_cell *cell, struct sim_rng *rng)
{
	if (cell->commits < 3 || cell->commits > SIM_MAX_COMMITS || verdict_policy_cap(p) > SIM_MAX_RUNS)
		abort();
	for (size_t i = 0; i < cell->bisections; i++) {
		/* the first bad commit, never the good end */
		int culprit = 1 + (int)(sim_rng_uniform(rng) * (double)(cell->commits - 1));
		struct host h = { cell, rng, 0, 0 };

		res->bisections++;
		bisect_adaptive(res, p, &h, culprit);
		h.slow_left = 0;
		bisect_fixed(res, &h, culprit);
	}
}
