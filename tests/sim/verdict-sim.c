/* The verdict rules in simulated bisections: wrong-culprit rate for every
 * cell (distribution x effect x CV) and runs per step of the adaptive
 * policy against a fixed 5 runs per commit.  Prints figures; exits 1 only
 * when the 1% rule (wrong culprits with effect >= 4 x CV) is broken.
 *
 *   verdict-sim [-n bisections-per-cell] [-s seed] [-d direction] [-q]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect-sim.h"
#include "util/util.h"

static const char *const usage[] = {
	"usage: verdict-sim [-n bisections-per-cell] [-s seed] [-d 1|-1] [-c commits] [-r slow-rate] [-v]\n\t[-E effect] [-V cv] [-D distribution]   (one cell or a few)",
	NULL,
};

static double pct(size_t a, size_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static double ratio(size_t a, size_t b)
{
	return b ? (double)a / (double)b : 0;
}

int main(int argc, char **argv)
{
	static const double effects[] = { 2, 5, 10, 20, 50, 95 };
	static const double cvs[] = { 1, 2, 5, 10 };
	static const enum sim_dist dists[] = { SIM_NORMAL, SIM_LOGNORMAL, SIM_NORMAL_SLOW, SIM_LOGNORMAL_SLOW };
	const struct option opts[] = {
		{ "bisections", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "direction", required_argument, NULL, 'd' },
		{ "commits", required_argument, NULL, 'c' },
		{ "slow-rate", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "effect", required_argument, NULL, 'E' },
		{ "cv", required_argument, NULL, 'V' },
		{ "dist", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct verdict_policy policy;
	struct sim_result all4 = { 0 }, all = { 0 };
	size_t n = 1000, commits = 30;
	unsigned long long seed = 20261130;
	int direction = 1, c, broken = 0, verbose = 0;
	double only_effect = 0, only_cv = 0;
	const char *only_dist = NULL;
	double slow_rate = 0.03;
	int64_t t0 = now_ms();

	while ((c = getopt_long(argc, argv, "n:s:d:c:r:vE:V:D:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'd':
			direction = atoi(optarg) < 0 ? -1 : 1;
			break;
		case 'c':
			commits = strtoul(optarg, NULL, 10);
			break;
		case 'r':
			slow_rate = strtod(optarg, NULL);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'E':
			only_effect = strtod(optarg, NULL);
			break;
		case 'V':
			only_cv = strtod(optarg, NULL);
			break;
		case 'D':
			only_dist = optarg;
			break;
		default:
			for (size_t i = 0; usage[i]; i++)
				fprintf(stderr, "%s\n", usage[i]);
			return c == 'h' ? 0 : 2;
		}
	}
	verdict_policy_init(&policy);
	printf("verdict simulation: %zu bisections per cell, %zu commits, seed %llu, direction %+d, "
	       "slow spells start at %.0f%% of runs (slow distributions)\n",
	       n, commits, seed, direction, 100 * slow_rate);
	printf("adaptive: ladder");
	for (size_t i = 0; i < policy.n_ladder; i++)
		printf(" %u", policy.ladder[i]);
	printf(", ends from 3 runs; fixed: 5 runs of everything, nearer median\n\n");
	printf("%-15s %6s %5s %4s | %7s %7s %7s %7s %6s %6s | %7s %6s | %s\n",
	       "distribution", "effect", "cv", "e/cv", "wrong%", "right%", "incon%", "refus%",
	       "runs/st", "ref", "fixwr%", "ratio", "");
	for (size_t d = 0; d < ARRAY_SIZE(dists); d++) {
		for (size_t e = 0; e < ARRAY_SIZE(effects); e++) {
			for (size_t v = 0; v < ARRAY_SIZE(cvs); v++) {
				struct sim_cell cell = {
					.dist = dists[d], .effect_percent = effects[e], .cv_percent = cvs[v],
					.direction = direction, .bisections = n, .commits = commits,
					.slow_rate = slow_rate, .verbose = verbose,
				};
				struct sim_result r = { 0 };
				struct sim_rng rng;
				int ruled = effects[e] >= 4 * cvs[v];
				double wrong;

				if ((only_effect && only_effect != effects[e]) || (only_cv && only_cv != cvs[v]) ||
				    (only_dist && strcmp(only_dist, sim_dist_name(dists[d]))))
					continue;

				/* every cell its own stream: cells reproduce alone */
				sim_rng_seed(&rng, seed ^ (d << 16 | e << 8 | v));
				sim_run_cell(&r, &policy, &cell, &rng);
				wrong = pct(r.wrong, r.bisections);
				if (ruled && wrong > 1.0)
					broken = 1;
				printf("%-15s %5.0f%% %4.0f%% %4.1f | %7.2f %7.2f %7.2f %7.2f %6.2f %6.1f | %7.2f %6.2f | %s\n",
				       sim_dist_name(dists[d]), effects[e], cvs[v], effects[e] / cvs[v],
				       wrong, pct(r.correct, r.bisections), pct(r.inconclusive, r.bisections),
				       pct(r.refused, r.bisections), ratio(r.step_runs, r.steps),
				       ratio(r.ref_runs, r.bisections), pct(r.fixed_wrong, r.bisections),
				       ratio(r.step_runs, r.steps) / 5.0,
				       ruled ? (wrong > 1.0 ? "FAIL (>1%, effect >= 4 cv)" : "ok") : "-");
				struct sim_result *sums[] = { &all, ruled ? &all4 : NULL };
				for (size_t i = 0; i < 2; i++) {
					struct sim_result *s = sums[i];

					if (!s)
						continue;
					s->bisections += r.bisections;
					s->correct += r.correct;
					s->wrong += r.wrong;
					s->inconclusive += r.inconclusive;
					s->refused += r.refused;
					s->steps += r.steps;
					s->step_runs += r.step_runs;
					s->ref_runs += r.ref_runs;
					s->fixed_wrong += r.fixed_wrong;
					s->fixed_correct += r.fixed_correct;
					s->fixed_steps += r.fixed_steps;
					s->fixed_step_runs += r.fixed_step_runs;
					s->fixed_ref_runs += r.fixed_ref_runs;
				}
			}
		}
	}
	printf("\ncolumns: wrong/right/incon(clusive: only skipped commits left)/refus(ed: not reproduced) "
	       "in %% of bisections;\nruns/st = runs per bisection step (adaptive); ref = runs of both ends "
	       "per bisection; fixwr%% = wrong culprits of the fixed policy;\nratio = adaptive runs per step / 5\n\n");
	const struct { const char *name; const struct sim_result *r; } sums[] = {
		{ "all cells", &all }, { "cells with effect >= 4 x cv", &all4 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(sums); i++) {
		const struct sim_result *r = sums[i].r;

		printf("%s (%zu bisections):\n", sums[i].name, r->bisections);
		printf("  adaptive: wrong %.2f%%, right %.2f%%, inconclusive %.2f%%, refused %.2f%%; "
		       "%.2f runs per step, %.1f steps and %.1f runs per bisection (ends included)\n",
		       pct(r->wrong, r->bisections), pct(r->correct, r->bisections),
		       pct(r->inconclusive, r->bisections), pct(r->refused, r->bisections),
		       ratio(r->step_runs, r->steps), ratio(r->steps, r->bisections - r->refused),
		       ratio(r->step_runs + r->ref_runs, r->bisections));
		printf("  fixed 5:  wrong %.2f%%, right %.2f%%; 5.00 runs per step, %.1f steps and %.1f runs per bisection\n",
		       pct(r->fixed_wrong, r->bisections), pct(r->fixed_correct, r->bisections),
		       ratio(r->fixed_steps, r->bisections),
		       ratio(r->fixed_step_runs + r->fixed_ref_runs, r->bisections));
		printf("  adaptive / fixed: %.0f%% of the runs per step, %.0f%% of all runs\n",
		       100 * ratio(r->step_runs, r->steps) / 5.0,
		       100 * ratio(r->step_runs + r->ref_runs, r->fixed_step_runs + r->fixed_ref_runs));
	}
	printf("\n%.1f s\n", (double)(now_ms() - t0) / 1000);
	return broken;
}
