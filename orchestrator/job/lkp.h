/* LKP in, klab out: the kernel test robot's regression reports and
 * lkp-tests job files parsed into plain structs, and their parameters
 * mapped onto klab job files (docs/klab-job.5).  Pure: bytes in, structs
 * and text out; the input is hostile (bounded, never a shell). */
#ifndef KLAB_LKP_H
#define KLAB_LKP_H

#include <stddef.h>

/* Reports and job files larger than this are refused. */
#define LKP_MAX_REPORT (1 << 20)
#define LKP_MAX_JOBFILE (256 << 10)
/* At most this many combinations from one job file. */
#define LKP_MAX_COMBINATIONS 512

struct lkp_param {
	char *key;
	char *value;
};

struct lkp_params {
	struct lkp_param *v;
	size_t nr, alloc;
};

/* One row of the comparison table: base and head as printed. */
struct lkp_row {
	char *metric;
	char *base, *head;	/* "1.135e+08", "4965911" */
	char *change;		/* "-95.6%" (or "+0.1" for percent metrics) */
};

struct lkp_report {
	char *commit;		/* hex as written, 7 to 40 digits */
	char *subject;		/* the commit's subject from the report, or NULL */
	char *parent;		/* hex, 7 to 40 digits */
	char *suite;		/* LKP's testcase: will-it-scale, stress-ng, ... */
	struct lkp_params params;	/* axis keys and values, in the report's order */
	char *kpi;		/* the subject's metric, else the table's first row's */
	char *change;		/* "-95.5%" as reported */
	const struct lkp_row *row;	/* the KPI's row, or NULL (subject form only) */
	struct lkp_row *rows;	/* the first comparison table */
	size_t nr_rows, alloc_rows;
};

/* Parse a report: plain text or a mail (headers, quoted-printable body),
 * quoted with '> ' at any depth, CRLF or LF, with wrapped lines.  name is
 * used in messages.  -1 after error() naming what is missing; *r is
 * then empty. */
int lkp_report_parse(struct lkp_report *r, const char *name, const char *buf, size_t len);
void lkp_report_release(struct lkp_report *r);

/* An lkp-tests job file: its suite and each combination of its parameter
 * axes (a list is an axis; later YAML documents are variants of the
 * first), every parameter as key and value text. */
struct lkp_jobfile {
	char *suite;
	struct lkp_params *combos;
	size_t nr_combos, alloc_combos;
	/* keys read but never part of a klab job (maps such as perf-profile:) */
	struct lkp_params ignored;
};

int lkp_jobfile_parse(struct lkp_jobfile *jf, const char *name, const char *buf, size_t len);
void lkp_jobfile_release(struct lkp_jobfile *jf);

enum lkp_accel { LKP_ACCEL_KVM, LKP_ACCEL_TCG };

/* A klab job made from LKP parameters: its text and what became of each
 * parameter. */
struct lkp_klab_job {
	char *name;		/* after the combination: will-it-scale-malloc1-process-100pct */
	char *testcase;		/* klab's testcase */
	char *yaml;		/* the job file */
	char **mapped;		/* "runtime 300s → 30s: ..." */
	size_t nr_mapped, alloc_mapped;
	char **unmapped;	/* "tbox_group lkp-csl-2sp5: the test machine; ..." */
	size_t nr_unmapped, alloc_unmapped;
};

/* Map suite + params (+ the report's KPI, may be NULL; origin and commit
 * for the job's comment, may be NULL) onto a klab job for accelerator
 * accel, and check the result with klab's own job parser (name: the
 * file it will be written to).  -1 after error(): a suite klab does not
 * run names the ones it does; a testcase klab cannot run is job.c's
 * message. */
int lkp_map(struct lkp_klab_job *out, const char *suite, const struct lkp_params *params, const char *kpi,
	    enum lkp_accel accel, const char *origin, const char *name);
void lkp_klab_job_release(struct lkp_klab_job *j);

/* The runtime klab uses for an LKP runtime under accel (seconds). */
unsigned lkp_scaled_runtime(unsigned lkp_s, enum lkp_accel accel);

/* The value of key in params, or NULL. */
const char *lkp_param(const struct lkp_params *p, const char *key);

#endif
