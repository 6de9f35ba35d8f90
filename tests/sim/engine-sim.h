/* Bisections by klab's real engine over simulated runs: a real git
 * history whose commits carry a `level` file (what the simulated kernel's
 * KPI is: measure-sim.h), a real lab database in a temporary directory,
 * and the bisection loop (bisect-run.c), the job tester (perf-*.c:
 * references, the step ladder, the split, the confirmation) and the
 * revert check (revert.c) as `klab bisect` runs them, measuring through
 * the simulated measurer.  Each bisection runs in a child process (the
 * engine's state and output stay there), its lab removed after it.  Used
 * by tests/sim/verdict-sim.c and tests/unit/test-engine-sim.c. */
#ifndef KLAB_ENGINE_SIM_H
#define KLAB_ENGINE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/revert.h"
#include "measure-sim.h"

/* A linear history: commit i sets `level` to levels[i]. */
struct engine_history {
	char *dir;
	size_t n;
	double *levels;
	char (*hashes)[41];
};

struct engine_sim {
	char dir[256];		/* the temporary directory */
	char *job_path, *job_text;
	unsigned labs;		/* labs made so far */
	int keep;		/* keep each lab (its database and out.log) */
	int revert_check;	/* the revert check after a confirmed culprit (klab's default) */
	int direction;		/* the job's: +1 higher is better (its own), -1 lower */
	struct engine_history **hist;
	size_t nr_hist;
};

/* What one bisection reported. */
struct engine_outcome {
	char result[32];	/* culprit, not-reproduced, unconfirmed, skipped-only, error */
	int culprit;		/* commit index, -1 none */
	int culprits[2];	/* two changes: each half's confirmed culprit, -1 none */
	int confirmed;		/* confirm steps that called the culprit bad */
	int drift;		/* the engine said the host drifted */
	enum revert_outcome revert;
	size_t runs;		/* KPI runs stored */
	size_t steps;		/* steps stored */
	/* bisect steps marked against their level: good at the bad end's
	 * level or above, bad at the good end's or below */
	size_t misjudged;
	int exit_code;		/* the bisection's (cmd/klab.h's EXIT_*) */
	char lab[300];		/* its lab (removed unless keep) */
	int64_t id;		/* its bisection there */
};

/* A temporary directory under TMPDIR (else /dev/shm, else /tmp) and the
 * will-it-scale job; revert check on.  -1 after error(). */
int engine_sim_open(struct engine_sim *es);
/* Remove the directory (unless keep) and free. */
void engine_sim_close(struct engine_sim *es);

/* The history with levels[0..n-1], made on first use.  -1 after error(). */
int engine_sim_history(struct engine_sim *es, const double *levels, size_t n, const struct engine_history **out);

/* One bisection of h (good its first commit, bad its last) to its end,
 * the runs drawn from m (its counters updated).  -1 after error() when
 * the bisection could not be set up or its process failed. */
int engine_sim_bisect(struct engine_sim *es, const struct engine_history *h, struct sim_model *m,
		      struct engine_outcome *o);

/* The same, the lab kept whatever es->keep says (engine_sim_remove
 * removes it): for a bisection stopped part way, which
 * engine_sim_resume runs again to its end as `klab bisect resume` does,
 * the outcome read afresh.  out.log in o->lab holds what it printed. */
int engine_sim_start(struct engine_sim *es, const struct engine_history *h, struct sim_model *m,
		     struct engine_outcome *o);
int engine_sim_resume(const struct engine_history *h, struct sim_model *m, struct engine_outcome *o);
int engine_sim_remove(const struct engine_outcome *o);
/* The commit index of hex in h, -1 none. */
int engine_history_index(const struct engine_history *h, const char *hex);

#endif
