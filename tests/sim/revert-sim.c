/* The revert check's rule in simulation (tests/sim/README.md): how often
 * revert_decide (revert.c) says "restores good" for a reverted kernel that
 * recovers a given share of the gap, with klab's order of runs (the
 * revert's first 3 runs, then each further run after a fresh run of each
 * end), lognormal noise of its own on the good end and on the others.
 * Two rules side by side in one run: revert_band 1 (any "like good" of
 * the bisection's rule restores good: the rule before abaed6e) and the
 * policy's revert_band.
 *
 *   revert-sim [-n trials-per-cell] [-s seed]
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "measure-sim.h"
#include "engine/revert.h"
#include "core/verdict.h"
#include "util/util.h"

#define MAX_RUNS 64

struct cell {
	double effect;		/* bad below good, percent */
	double cv_good, cv;	/* noise, percent: the good end's, the others' */
	double recovers;	/* the revert's level: this share of the gap back */
	unsigned refs;		/* runs of each end before the revert check */
};

static double run(struct sim_rng *r, double level, double cv)
{
	return level * exp(sim_rng_normal(r) * cv / 100.0);
}

/* One revert check; 1 when it says "restores good", runs added to *runs. */
static int check(const struct cell *c, const struct verdict_policy *p, struct sim_rng *r, size_t *runs)
{
	double good[MAX_RUNS * 2], bad[MAX_RUNS * 2], rev[MAX_RUNS];
	double lbad = 1.0 - c->effect / 100.0, lrev = lbad + c->recovers * (1.0 - lbad);
	size_t ng = 0, nb = 0, n = 0, want = 3;
	enum revert_outcome o = REVERT_NONE;
	struct verdict v;

	for (unsigned i = 0; i < c->refs; i++) {
		good[ng++] = run(r, 1.0, c->cv_good);
		bad[nb++] = run(r, lbad, c->cv);
	}
	for (;;) {
		while (n < want && n < MAX_RUNS) {
			if (n >= 3) {
				good[ng++] = run(r, 1.0, c->cv_good);
				bad[nb++] = run(r, lbad, c->cv);
			}
			rev[n++] = run(r, lrev, c->cv);
		}
		int rc = revert_decide(&v, &o, p, good, ng, bad, nb, rev, n, 1);
		if (rc < 0)
			abort();
		if (rc == 0 && ng < MAX_RUNS * 2 && nb < MAX_RUNS * 2) {
			/* "does not restore" waits for fresh runs of the ends
			 * (revert_fresh_ends) */
			unsigned again = revert_fresh_ends(o, 0, ng - c->refs, nb - c->refs);

			if (again & 1)
				good[ng++] = run(r, 1.0, c->cv_good);
			if (again & 2)
				bad[nb++] = run(r, lbad, c->cv);
			if (again)
				continue;
		}
		if (rc == 0 || n >= MAX_RUNS)
			break;
		want = v.next_runs;
	}
	*runs += n;
	return o == REVERT_RESTORES_GOOD;
}

int main(int argc, char **argv)
{
	static const double effects[] = { 20, 40, 80 };
	static const double noises[][2] = { { 3, 3 }, { 10, 10 }, { 25, 6 } };
	static const double recover[] = { 1.0, 0.8, 0.7, 0.5, 0.3 };
	static const unsigned refs[] = { 3, 12 };
	size_t trials = 2000;
	unsigned long long seed = 12;
	struct verdict_policy old, now;
	struct sim_rng rng;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:h")) != -1) {
		switch (opt) {
		case 'n': trials = strtoul(optarg, NULL, 10); break;
		case 's': seed = strtoull(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: revert-sim [-n trials-per-cell] [-s seed]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	verdict_policy_init(&old);
	verdict_policy_init(&now);
	old.revert_band = 1.0;
	sim_rng_seed(&rng, seed);
	printf("revert check, %zu trials a cell: %% said \"restores good\" (revert runs a check), "
	       "revert_band 1 | %.2f\n", trials, now.revert_band);
	printf("%7s %8s %5s %5s %9s  %16s  %16s\n", "effect", "cv good", "cv", "refs", "recovers", "band 1",
	       "band now");
	for (size_t e = 0; e < ARRAY_SIZE(effects); e++)
		for (size_t k = 0; k < ARRAY_SIZE(noises); k++)
			for (size_t f = 0; f < ARRAY_SIZE(refs); f++)
				for (size_t q = 0; q < ARRAY_SIZE(recover); q++) {
					struct cell c = { effects[e], noises[k][0], noises[k][1], recover[q], refs[f] };
					size_t yes_old = 0, yes_now = 0, runs_old = 0, runs_now = 0;

					for (size_t t = 0; t < trials; t++) {
						yes_old += (size_t)check(&c, &old, &rng, &runs_old);
						yes_now += (size_t)check(&c, &now, &rng, &runs_now);
					}
					printf("%6.0f%% %7.0f%% %4.0f%% %5u %8.0f%%  %6.1f%% (%5.1f)  %6.1f%% (%5.1f)\n",
					       c.effect, c.cv_good, c.cv, c.refs, 100 * c.recovers,
					       100.0 * (double)yes_old / (double)trials, (double)runs_old / (double)trials,
					       100.0 * (double)yes_now / (double)trials, (double)runs_now / (double)trials);
				}
	return 0;
}
