/* Stored run sets side by side: klab compare's and klab reproduce's view.
 * The first set is the base; each other set is compared with it by
 * compare.c's rule (LKP's), the KPI row always shown, then the "what
 * changed" block and LKP's table, or the same as JSON.  Loading reads
 * the lab database; everything after it is pure. */
#ifndef KLAB_RUNCOMPARE_H
#define KLAB_RUNCOMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "core/compare.h"
#include "lab/db.h"
#include "core/verdict.h"
#include "util/strbuf.h"

struct runcmp_set {
	char *label;		/* "demo-good", "thp.enabled=never", "run set 12" */
	struct db_run_set_info info;
	struct db_mon_values *vals;	/* every sample metric and monitor stat, by name */
	size_t nr_vals;
	double *kpi;		/* the KPI of each ok run (seq 0) */
	size_t nr_kpi;
	/* what of its host fingerprint differs from the base set's ("kernel,
	 * qemu"); NULL when alike or not known (runcmp_load) */
	char *fp_differs;
};

/* One set against the base: every stat both have, the KPI's figures
 * whether it changed or not, and the rows that changed (ranked). */
struct runcmp_pair {
	size_t other;		/* index of the set compared with sets[0] */
	struct compare_stat *stats;
	size_t nr_stats;
	struct compare_row kpi;
	int kpi_changed;	/* by compare.c's rule */
	struct compare_row *rows;	/* changed, most significant first (the KPI included when changed) */
	size_t nr_rows;
	double **pads;		/* profile rows a side lacks, as its zeros (owned) */
	size_t nr_pads;
};

struct runcmp {
	char *kpi;
	int direction;		/* of the KPI: +1 higher is better */
	struct runcmp_set *sets;
	size_t nr_sets;
	struct runcmp_pair *pairs;	/* nr_sets - 1 of them, after runcmp_compute */
	int by_label;		/* sets called by their labels ("culprit against parent"), not A, B, ... */
};

/* Read run sets ids[] (labels[i] may be NULL: "run set ID") into *c:
 * each must exist and have ok runs with the KPI (kpi, else the first
 * set's), all of one accelerator (runs under KVM and TCG are never
 * compared).  -1 after one error line. */
int runcmp_load(struct runcmp *c, sqlite3 *db, const int64_t *ids, const char *const *labels, size_t n,
		const char *kpi);
/* Add a set by hand (tests, or a caller that has the values): label,
 * KPI values and named values are copied. */
struct runcmp_set *runcmp_add_set(struct runcmp *c, const char *label);
/* Add a bisection step's runs as a set ("parent", "culprit"; bisect show
 * and the end of a bisection): the KPI c->kpi of its ok runs and every
 * monitor stat, its perf-profile rows taken from profile_step instead
 * when that is not 0 (the profiled runs of the same commit).  -1 after
 * one error line. */
int runcmp_add_step(struct runcmp *c, sqlite3 *db, const char *label, int64_t step_id, int64_t profile_step);
/* The pairs, from the loaded sets (pure).  A perf-profile row one side
 * lacks (or has for fewer runs) was under the agent's 0.5% floor: it
 * counts as 0 in that side's profiled runs, so a symbol that appears is
 * compared, not dropped. */
void runcmp_compute(struct runcmp *c);
/* The sets, then per pair the KPI line, "what changed" and LKP's table
 * (at most max rows per section, 0: all).  Guest-given names are cleaned. */
void runcmp_format(struct strbuf *sb, const struct runcmp *c, size_t max);
/* Pair k's part of runcmp_format: "B against A: <KPI line>" (by_label:
 * "culprit against parent: ..."), "what changed" and LKP's table. */
void runcmp_format_pair(struct strbuf *sb, const struct runcmp *c, size_t k, size_t max);
/* The same as one JSON document (strings escaped, NaN and infinities
 * null), ending in a newline. */
void runcmp_json(struct strbuf *sb, const struct runcmp *c);
/* The comparison's page: runcmp_format's text, escaped, in the report's
 * page skeleton and stylesheet (self-contained). */
void runcmp_html(struct strbuf *out, const struct runcmp *c);
void runcmp_release(struct runcmp *c);

/* klab reproduce's verdict on the parent's and the commit's KPI runs:
 * the bisection's reference rule (verdict_reproduce).  *v as it says;
 * line: "reproduced: -95.1% (report said -95.6%)" or "not reproduced:
 * +0.3% (report said -95.6%): <why>", or for NEED_MORE the text asking
 * for runs.  reported may be NULL.  -1 after error() on bad input. */
int runcmp_reproduce(struct verdict *v, struct strbuf *line, const struct verdict_policy *pol,
		     const double *parent, size_t np, const double *commit, size_t nc, int direction,
		     const char *reported);

#endif
