/* Simulated performance bisections over synthetic run distributions;
 * see bisect-sim.h and tests/sim/README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect-sim.h"
#include "engine/revert.h"
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

static const char *const sim_dist_names[] = {
	"normal", "lognormal", "normal+slow", "lognormal+slow", "t3", "bimodal", "uneven",
};
_Static_assert(ARRAY_SIZE(sim_dist_names) == SIM_UNEVEN + 1, "one name per distribution");

const char *sim_dist_name(enum sim_dist d)
{
	return (unsigned)d < ARRAY_SIZE(sim_dist_names) ? sim_dist_names[d] : "?";
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
	a->partial += b->partial;
	a->drift_seen += b->drift_seen;
	a->splits += b->splits;
	a->found_right += b->found_right;
	a->found_wrong += b->found_wrong;
	a->confirmed_right += b->confirmed_right;
	a->confirmed_wrong += b->confirmed_wrong;
	a->steps += b->steps;
	a->step_runs += b->step_runs;
	a->skips += b->skips;
	a->ref_runs += b->ref_runs;
	a->fresh_ref_runs += b->fresh_ref_runs;
	a->fresh_ref_drift += b->fresh_ref_drift;
	a->fresh_ref_stale += b->fresh_ref_stale;
	a->steps_first += b->steps_first;
	a->confirm_runs += b->confirm_runs;
	a->revert_runs += b->revert_runs;
	a->revert_ref_runs += b->revert_ref_runs;
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

/* One run of a kernel whose KPI sits `level` of the effect below good
 * (0 good, 1 bad, 0.5 half-way; negative: better than good). */
static double run_once(struct host *h, double level)
{
	const struct sim_cell *c = h->cell;
	double mu = 1000 * (1 - level * c->effect_percent / 100), cv = c->cv_percent / 100, x;
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
		x = mu * (1 + (level >= 0.5 ? cv : cv / 5) * sim_rng_normal(h->rng));
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

/* The history of one bisection: where the KPI of each commit sits. */
struct history {
	enum sim_shape shape;
	int c1, c2;		/* the culprits: c1 alone, or c1 < c2 */
};

static double level_of(const struct history *hs, int m)
{
	switch (hs->shape) {
	case SIM_TWO_HALVES:
		return 0.5 * (m >= hs->c1) + 0.5 * (m >= hs->c2);
	case SIM_IMPROVE_THEN_REGRESS:
		return -0.5 * (m >= hs->c1) + 1.5 * (m >= hs->c2);
	default:
		return m >= hs->c1;
	}
}

/* A commit that starts a regression the bisection should name. */
static int is_culprit(const struct history *hs, int m, double effect)
{
	if (effect <= 0)
		return 0;
	switch (hs->shape) {
	case SIM_TWO_HALVES:
		return m == hs->c1 || m == hs->c2;
	case SIM_IMPROVE_THEN_REGRESS:
		return m == hs->c2;
	default:
		return m == hs->c1;
	}
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

/* The runs of one commit in time order, as the _timed verdicts take them. */
struct series {
	int commit;
	size_t stamp;		/* the bisection that measured it (the pool's entries) */
	double v[SIM_MAX_REFS], t[SIM_MAX_REFS];
	size_t n;
};

static struct verdict_runs runs_of(const struct series *s)
{
	return (struct verdict_runs){ s->v, s->t, s->n };
}

static void run_into(struct host *h, const struct history *hs, struct series *s)
{
	if (s->n >= SIM_MAX_REFS)
		return;
	s->t[s->n] = (double)h->runs;
	s->v[s->n++] = run_once(h, level_of(hs, s->commit));
}

/* Runs of two kernels alternate, as pair_measure does (a first). */
static void measure_pair(struct host *h, const struct history *hs, struct series *a, struct series *b,
			 size_t target)
{
	while (a->n < target || b->n < target) {
		if (a->n < target)
			run_into(h, hs, a);
		if (b->n < target)
			run_into(h, hs, b);
	}
}

/* The baseline's plain arrays of runs. */
static void measure_plain(struct host *h, double *a, int a_bad, double *b, int b_bad, size_t target)
{
	for (size_t i = 0; i < target; i++) {
		a[i] = run_once(h, a_bad);
		b[i] = run_once(h, b_bad);
	}
}

static void print_runs(const char *name, const double *v, size_t n)
{
	fprintf(stderr, "  %s:", name);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %.1f", v[i]);
	fprintf(stderr, "\n");
}

static void trace_refusal(const struct verdict *v, const struct series *g, const struct series *b)
{
	fprintf(stderr, "refused: %s (%s)\n", v->text, v->rule);
	print_runs("good", g->v, g->n);
	print_runs("bad", b->v, b->n);
}

static void trace_step(const struct verdict *v, int m, const struct history *hs, const struct series *c)
{
	struct strbuf sb = STRBUF_INIT;

	verdict_format(&sb, v);
	fprintf(stderr, "commit %d (culprits %d %d) misjudged:\n%s", m, hs->c1, hs->c2, sb.buf);
	print_runs("commit", c->v, c->n);
	strbuf_release(&sb);
}

/* The commits' step runs, for the confirmation to reuse. */
static struct series pool[SIM_MAX_COMMITS];
static size_t stamp;

/* One adaptive bisection: the host, the history, drift once seen. */
struct bisection {
	struct sim_result *res;
	const struct verdict_policy *p;
	struct host *h;
	const struct history *hs;
	int drift;
	unsigned turn;
	int reuse;		/* the confirmation starts from the runs already taken */
	unsigned fresh;		/* ... and adds this many fresh runs of each (0: repeat) */
};

/* The references of one side of a range: its end and the commits decided
 * like it, their runs merged in time order into m. */
struct side {
	const struct series *of[SIM_MAX_COMMITS];
	size_t n;
	struct series m;
};

static void side_merge(struct side *sd)
{
	struct verdict_runs sets[SIM_MAX_COMMITS];

	for (size_t i = 0; i < sd->n; i++)
		sets[i] = runs_of(sd->of[i]);
	sd->m.n = verdict_runs_merge(sets, sd->n, sd->m.v, sd->m.t, SIM_MAX_REFS);
}

static double side_latest(const struct side *sd)
{
	double t = -1;
	for (size_t i = 0; i < sd->n; i++)
		if (sd->of[i]->n && sd->of[i]->t[sd->of[i]->n - 1] > t)
			t = sd->of[i]->t[sd->of[i]->n - 1];
	return t;
}

/* perf_reference_run_turn(): one more run of the good or the bad end, in turn */
static void fresh_reference_run(struct bisection *B, struct series *g, struct series *b)
{
	struct series *s = B->turn++ & 1 ? b : g;

	if (s->n >= SIM_MAX_REFS)
		return;
	run_into(B->h, B->hs, s);
	B->res->fresh_ref_runs++;
}

/* The runs a commit already has in this bisection: its step's, or the
 * recent runs of an end (as many as the confirmation starts with). */
static void reuse(const struct bisection *B, struct series *s, const struct series *g, const struct series *b)
{
	const struct series *from = NULL;
	size_t k;

	if (!B->reuse)
		return;
	if (s->commit == g->commit)
		from = g;
	else if (s->commit == b->commit)
		from = b;
	else if (pool[s->commit].stamp == stamp && pool[s->commit].commit == s->commit)
		from = &pool[s->commit];
	if (!from)
		return;
	k = from->n < B->h->cell->repeat || from == &pool[s->commit] ? from->n : B->h->cell->repeat;
	memcpy(s->v, from->v + from->n - k, k * sizeof(double));
	memcpy(s->t, from->t + from->n - k, k * sizeof(double));
	s->n = k;
}

/* perf_confirm_and_report(): parent and culprit interleaved, `repeat` runs
 * each and more while verdict_confirm asks.  1 when confirmed. */
static int confirm(struct bisection *B, const struct series *g, const struct series *b, int culprit)
{
	static struct series a, c;
	size_t want = B->h->cell->repeat;
	struct verdict_runs G = runs_of(g), Bd = runs_of(b), A, C;
	struct verdict v;
	size_t reused, ra, rc;
	int right_pair;

	a.commit = culprit - 1;
	c.commit = culprit;
	a.n = c.n = 0;
	/* the step runs of parent and culprit count, and at least `repeat`
	 * fresh runs of each are added, interleaved */
	reuse(B, &a, g, b);
	reuse(B, &c, g, b);
	ra = a.n;
	rc = c.n;
	reused = a.n + c.n;
	/* with `repeat` runs of both taken already, fewer fresh ones */
	if (B->fresh && a.n >= want && c.n >= want)
		want = B->fresh;
	want += a.n > c.n ? a.n : c.n;
	for (;;) {
		measure_pair(B->h, B->hs, &a, &c, want);
		A = runs_of(&a);
		C = runs_of(&c);
		if (verdict_confirm_reusing(&v, B->p, &G, &Bd, &A, a.n - ra, &C, c.n - rc, B->drift,
					    B->h->cell->direction) < 0)
			abort();
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= want)
			break;
		want = v.next_runs;
	}
	B->res->confirm_runs += a.n + c.n - reused;
	right_pair = level_of(B->hs, culprit) > level_of(B->hs, culprit - 1);
	if (B->h->cell->verbose && (v.kind == VERDICT_CONFIRMED) != right_pair) {
		struct strbuf sb = STRBUF_INIT;

		verdict_format(&sb, &v);
		fprintf(stderr, "confirmation of %d misjudged (culprits %d %d):\n%s", culprit, B->hs->c1, B->hs->c2,
			sb.buf);
		strbuf_release(&sb);
	}
	return v.kind == VERDICT_CONFIRMED;
}

/* One run of a commit: after its first `ladder[0]` runs a fresh
 * reference run first; under drift one by one, an end's run first when
 * its side has none among the last side_age runs (perf_step's loop). */
static void step_run(struct bisection *B, struct series *g, struct series *b, struct series *c, struct side *sides)
{
	const struct verdict_policy *p = B->p;

	if (B->drift && p->side_age) {
		/* an end runs again only when its side has no recent run */
		for (int k = 0; k < 2; k++)
			if ((double)B->h->runs - side_latest(&sides[k]) > (double)p->side_age) {
				run_into(B->h, B->hs, k ? b : g);
				B->res->fresh_ref_runs++;
				B->res->fresh_ref_drift++;
			}
	} else if (B->drift || c->n >= p->ladder[0]) {
		fresh_reference_run(B, g, b);
		B->res->fresh_ref_drift += B->drift;
	}
	run_into(B->h, B->hs, c);
}

/* The references a commit is judged against: the ends' runs, under
 * drift (side_age) each side's merged runs. */
static void side_refs(struct bisection *B, struct series *g, struct series *b, struct side *sides,
		      struct verdict_runs *G, struct verdict_runs *Bd)
{
	*G = runs_of(g);
	*Bd = runs_of(b);
	if (B->drift && B->p->side_age) {
		side_merge(&sides[0]);
		side_merge(&sides[1]);
		*G = runs_of(&sides[0].m);
		*Bd = runs_of(&sides[1].m);
	}
}

/* perf_step(): a commit's runs until verdict_classify_timed decides.
 * Without drift the first runs in one go, extra runs one by one, each
 * after a fresh reference run; with drift a fresh reference run before
 * every run (side_age: sides' runs as references, an end's run
 * only when its side has none recent). */
static enum verdict_kind step(struct bisection *B, struct series *g, struct series *b, struct series *c,
			      struct side *sides)
{
	const struct verdict_policy *p = B->p;
	size_t want = p->ladder[0];
	struct verdict_runs G, Bd, C;
	struct verdict v;
	int refreshed = 0;

	for (;;) {
		size_t next = c->n >= want ? c->n + 1 : want;

		while (c->n < next)
			step_run(B, g, b, c, sides);
		if (c->n < want)
			continue;
		side_refs(B, g, b, sides, &G, &Bd);
		C = runs_of(c);
		if (verdict_classify_timed(&v, p, &G, &Bd, &C, B->drift, B->h->cell->direction) < 0)
			abort();
		if (v.stale && !refreshed) {
			/* stale references: one fresh run of each end, again */
			refreshed = 1;
			fresh_reference_run(B, g, b);
			fresh_reference_run(B, g, b);
			B->res->fresh_ref_stale += 2;
			continue;
		}
		B->drift |= v.drift;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= c->n)
			break;
		want = v.next_runs;
	}
	if (B->h->cell->verbose && v.kind != VERDICT_BETWEEN &&
	    (v.kind == VERDICT_GOOD) != (level_of(B->hs, c->commit) < 0.5 * (level_of(B->hs, g->commit) +
									     level_of(B->hs, b->commit))))
		trace_step(&v, c->commit, B->hs, c);
	B->res->steps++;
	B->res->steps_first += c->n <= p->ladder[0];
	B->res->step_runs += c->n;
	return v.kind;
}

/* perf_step's check before a split: a commit found between the ends gets
 * between_fresh more runs (as a step's extra runs), which alone must say
 * between too before the range splits there.  The verdict's kind: BETWEEN
 * or SKIP. */
static enum verdict_kind between_check(struct bisection *B, struct series *g, struct series *b, struct series *c,
				       struct side *sides)
{
	size_t n0 = c->n, k = B->p->between_fresh;
	struct verdict_runs G, Bd, F;
	struct verdict v;

	if (!k)
		return VERDICT_BETWEEN;
	for (;;) {
		while (c->n < n0 + k && c->n < SIM_MAX_REFS)
			step_run(B, g, b, c, sides);
		side_refs(B, g, b, sides, &G, &Bd);
		F = (struct verdict_runs){ c->v + n0, c->t + n0, c->n - n0 };
		if (verdict_between_fresh(&v, B->p, &G, &Bd, &F, B->drift, B->h->cell->direction) < 0)
			abort();
		B->drift |= v.drift;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= k || n0 + v.next_runs > SIM_MAX_REFS)
			break;
		k = v.next_runs;
	}
	B->res->step_runs += c->n - n0;
	return v.kind == VERDICT_BETWEEN ? VERDICT_BETWEEN : VERDICT_SKIP;
}

#define SIM_MAX_FOUND 2

/* A culprit the search found, and the references of its range. */
struct found {
	int culprit;
	struct series *g, *b;
};

/* Binary search of (g, b]: the first commit judged bad, the culprits of
 * both halves when a commit is between (`split`), appended to found[];
 * returns how many, 0 when only skipped commits were left. */
static int search(struct bisection *B, struct series *g, struct series *b, int split, struct found *found)
{
	unsigned char skipped[SIM_MAX_COMMITS] = { 0 };
	int lo = g->commit, hi = b->commit;
	struct series *glo = g, *bhi = b;
	static struct side sides_at[2][2];	/* per depth: the whole range, a half */
	struct side *sides = sides_at[split ? 0 : 1];

	sides[0].n = sides[1].n = 0;
	sides[0].of[sides[0].n++] = g;
	sides[1].of[sides[1].n++] = b;
	while (hi - lo > 1) {
		int m = pick(lo, hi, skipped);
		struct series *c;
		enum verdict_kind k;

		if (m < 0)
			return 0;
		c = &pool[m];
		c->commit = m;
		c->stamp = stamp;
		c->n = 0;
		k = step(B, glo, bhi, c, sides);
		if (k == VERDICT_GOOD) {
			lo = m;
			sides[0].of[sides[0].n++] = c;
		} else if (k == VERDICT_BAD) {
			hi = m;
			sides[1].of[sides[1].n++] = c;
		} else if (k == VERDICT_BETWEEN && split && between_check(B, glo, bhi, c, sides) == VERDICT_BETWEEN) {
			/* two changes: one in (lo, m], one in (m, hi]; m is the
			 * bad end of the first half and the good end of the second */
			int n1 = search(B, glo, c, 0, found), n2;

			B->res->splits++;
			n2 = search(B, c, bhi, 0, found + n1);
			return n1 + n2;
		} else {
			skipped[m] = 1;
			B->res->skips++;
		}
	}
	found[0] = (struct found){ hi, glo, bhi };
	return 1;
}

/* How many of n runs at times t came after t0 (revert.c's runs_after). */
static size_t runs_after(const double *t, size_t n, double t0)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += t[i] > t0;
	return k;
}

/* revert_check_run(): the bad end with the culprit's change taken out,
 * `repeat` runs and more while revert_decide asks, each extra one after a
 * fresh reference run, against the references.  With one change point the
 * reverted kernel is good exactly when the culprit is the real one.  1
 * when it "restores good". */
static int revert_check(struct bisection *B, struct series *g, struct series *b, int culprit)
{
	const struct history *hs = B->hs;
	double v[SIM_MAX_RUNS], t[SIM_MAX_RUNS];
	double level = level_of(hs, (int)B->h->cell->commits - 1) - (level_of(hs, culprit) - level_of(hs, culprit - 1));
	size_t n = 0, want = B->h->cell->repeat;
	enum revert_outcome o;
	struct verdict vd;
	int rc, stuck = 0;
	unsigned again = 0;
	double t0 = (double)B->h->runs - 0.5;	/* runs from here on are the check's */
	double t_drift = -1;			/* the revert's last run when the check saw the drift */
	size_t f0 = B->res->fresh_ref_runs;

	for (;;) {
		size_t next = n ? n + 1 : want;

		if (again) {
			/* as measure() in revert.c: the ends beside the revert
			 * before "does not restore" (revert_fresh_ends) */
			size_t before = g->n + b->n;

			for (int k = 0; k < 2; k++)
				if (again & (1u << k)) {
					run_into(B->h, B->hs, k ? b : g);
					B->res->fresh_ref_runs++;
				}
			stuck = g->n + b->n == before;
			again = 0;
			next = n;
		} else if (B->drift) {
			/* as measure() in revert.c: one run at a time, the good
			 * end right before each, the bad end first when it has
			 * no run among the last side_age */
			struct series *e[2] = { g, b };
			double age[2] = { 1, (double)B->p->side_age };

			for (int k = 0; k < 2; k++)
				if (!e[k]->n || (double)B->h->runs - e[k]->t[e[k]->n - 1] > age[k]) {
					run_into(B->h, B->hs, e[k]);
					B->res->fresh_ref_runs++;
				}
			next = n + 1;
		} else if (n) {
			fresh_reference_run(B, g, b);
		}
		while (n < next && n < SIM_MAX_RUNS) {
			t[n] = (double)B->h->runs;
			v[n++] = run_once(B->h, level);
		}
		if (n < want)
			continue;
		if (!B->drift) {
			/* note_drift() in revert.c: the ends' trend tested again */
			struct verdict_runs ends[2] = { runs_of(g), runs_of(b) };
			struct verdict_trend tr;

			if (verdict_trend(&tr, B->p, ends, 2) < 0)
				abort();
			B->drift = tr.drift;
			if (B->drift)
				t_drift = t[n - 1];
		}
		if (B->drift) {
			/* as measure() in revert.c: the ends' latest runs, detrended */
			struct verdict_runs G = runs_of(g), Bd = runs_of(b), C = { v, t, n };
			struct verdict_local loc;

			if (verdict_local(&loc, B->p, &G, &Bd, &C) < 0)
				abort();
			rc = revert_decide(&vd, &o, B->p, loc.good, loc.ng, loc.bad, loc.nb, loc.cand, loc.nc,
					   B->h->cell->direction);
			verdict_local_release(&loc);
		} else {
			rc = revert_decide(&vd, &o, B->p, g->v, g->n, b->v, b->n, v, n, B->h->cell->direction);
		}
		if (rc < 0)
			abort();
		if (rc == 0) {
			/* as measure() in revert.c: a drift seen during the
			 * check, revert runs taken the drift way first */
			if (n < SIM_MAX_RUNS && revert_drift_wait(o, t_drift >= 0, runs_after(t, n, t_drift),
								  verdict_next_runs(B->p, n, n + 1) != 0))
				continue;
			again = stuck ? 0 : revert_fresh_ends(o, B->drift, runs_after(g->t, g->n, t0),
							      runs_after(b->t, b->n, t0));
			if (!again)
				break;
			continue;
		}
		if (n >= SIM_MAX_RUNS)
			break;
		want = vd.next_runs;
	}
	if (B->h->cell->verbose && o != REVERT_RESTORES_GOOD)
		printf("revert: %s (%s) after %zu runs, ends %zu + %zu runs, drift %d\n", vd.rule, vd.text, n, g->n,
		       b->n, B->drift);
	B->res->revert_runs += n;
	B->res->revert_ref_runs += B->res->fresh_ref_runs - f0;
	return o == REVERT_RESTORES_GOOD;
}

static void bisect_adaptive(struct bisection *B)
{
	static struct series g, b;
	struct sim_result *res = B->res;
	const struct verdict_policy *p = B->p;
	struct host *h = B->h;
	const struct history *hs = B->hs;
	size_t target = h->cell->repeat;
	struct found found[SIM_MAX_FOUND];
	int nfound, named = 0, wrong = 0, right = 0;
	struct verdict_runs G, Bd;
	struct verdict v;

	g.commit = 0;
	b.commit = (int)h->cell->commits - 1;
	g.n = b.n = 0;
	for (;;) {
		measure_pair(h, hs, &g, &b, target);
		G = runs_of(&g);
		Bd = runs_of(&b);
		if (verdict_reproduce_timed(&v, p, &G, &Bd, h->cell->direction) < 0)
			abort();
		B->drift = v.drift;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= target)
			break;
		target = v.next_runs;
	}
	res->ref_runs += g.n + b.n;
	if (v.kind != VERDICT_REPRODUCED) {
		if (h->cell->verbose)
			trace_refusal(&v, &g, &b);
		res->refused++;
		return;
	}
	nfound = search(B, &g, &b, 1, found);
	if (!nfound) {
		res->inconclusive++;
		return;
	}
	/* each culprit confirmed against the references of its own range
	 * (the ends, or an end and the commit between), so that a partial
	 * regression's share is of its own gap */
	for (int i = 0; i < nfound; i++) {
		int ok = confirm(B, found[i].g, found[i].b, found[i].culprit);
		int is_right = is_culprit(hs, found[i].culprit, h->cell->effect_percent);

		if (is_right) {
			res->found_right++;
			res->confirmed_right += ok;
		} else {
			res->found_wrong++;
			res->confirmed_wrong += ok;
		}
		named += ok;
		right += ok && is_right;
		wrong += ok && !is_right;
		if (h->cell->revert_check && ok) {
			int restored = revert_check(B, &g, &b, found[i].culprit);

			if (is_right) {
				res->revert_checked_right++;
				res->revert_restored_right += restored;
			} else {
				res->revert_checked_wrong++;
				res->revert_restored_wrong += restored;
			}
		}
	}
	if (!named)
		res->unconfirmed++;
	else if (wrong)
		res->wrong++;
	else if (right == (hs->shape == SIM_TWO_HALVES ? 2 : 1))
		res->correct++;
	else
		res->partial++;
}

/* The baseline: 5 runs of everything, the nearer median wins; then 5 runs
 * each of parent and culprit (counted, not deciding). */
static void bisect_fixed(struct sim_result *res, struct host *h, const struct history *hs)
{
	double g[5], b[5], c[5], mg, mb;
	int lo = 0, hi = (int)h->cell->commits - 1;

	measure_plain(h, g, 0, b, 1, 5);
	res->fixed_runs += 10;
	mg = stats_median(g, 5);
	mb = stats_median(b, 5);
	while (hi - lo > 1) {
		int m = (lo + hi) / 2;
		double mc;

		for (size_t i = 0; i < 5; i++)
			c[i] = run_once(h, level_of(hs, m));
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
	if (is_culprit(hs, hi, h->cell->effect_percent))
		res->fixed_correct++;
	else
		res->fixed_wrong++;
}

void sim_run_cell(struct sim_result *res, const struct verdict_policy *p,
		  const struct sim_cell *cell, struct sim_rng *rng)
{
	int n = (int)cell->commits;

	if (cell->commits < 4 || cell->commits > SIM_MAX_COMMITS || verdict_policy_cap(p) > SIM_MAX_RUNS ||
	    !cell->repeat || cell->repeat > SIM_MAX_RUNS)
		abort();
	for (size_t i = 0; i < cell->bisections; i++) {
		/* the first bad commit, never the good end; two changes: two
		 * distinct commits, the earlier first */
		struct history hs = { cell->shape, 1 + (int)(sim_rng_uniform(rng) * (double)(n - 1)), 0 };
		int sign = sim_rng_uniform(rng) < 0.5 ? -1 : 1;
		struct host h = { cell, rng, 0, sign, 0, 0 };
		struct bisection B = { res, p, &h, &hs, 0, 0, cell->reuse, cell->fresh };

		if (cell->shape != SIM_ONE) {
			do
				hs.c2 = 1 + (int)(sim_rng_uniform(rng) * (double)(n - 1));
			while (hs.c2 == hs.c1);
			if (hs.c2 < hs.c1) {
				int t = hs.c1;

				hs.c1 = hs.c2;
				hs.c2 = t;
			}
		}
		res->bisections++;
		stamp++;
		bisect_adaptive(&B);
		res->drift_seen += B.drift;
		h.slow_left = 0;
		h.runs = 0;
		h.walk = 0;
		bisect_fixed(res, &h, &hs);
	}
}
