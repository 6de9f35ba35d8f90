/* LKP in, klab out: the kernel test robot's regression reports and
 * lkp-tests job files parsed into plain structs, and their parameters
 * mapped onto klab job files (docs/klab-job.5).  Pure: bytes in, structs
 * and text out; the input is hostile (bounded, never a shell). */
#ifndef KLAB_LKP_H
#define KLAB_LKP_H

#include <stddef.h>

struct strbuf;

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

/* A test result the report names: its own (the headline and the table
 * below it) or one of the "In addition to that, the commit also has
 * significant impact on the following tests" entries. */
struct lkp_result {
	char *suite;		/* LKP's testcase: will-it-scale, stress-ng, ... */
	struct lkp_params params;	/* axis keys and values, in the report's order */
	char *kpi;		/* the headline's metric */
	char *change;		/* signed, as the metric moved: "-95.6%", "+50.3%" */
	int improvement;	/* 1: the report calls it an improvement */
	char *machine;		/* "test machine: ..." of an "in addition" entry, or NULL */
};

struct lkp_report {
	char *commit;		/* hex as written, 7 to 40 digits */
	char *subject;		/* the commit's subject from the report, or NULL */
	char *parent;		/* hex, 7 to 40 digits; NULL when the text names none */
	char *suite;		/* the chosen result's (lkp_report_select) */
	struct lkp_params params;
	char *kpi;		/* the headline's metric, else the table's first row's */
	char *change;		/* signed: "-95.5%", "+50.3%" (the table row's when there is one) */
	int improvement;	/* 1: an improvement, 0: a regression */
	/* The job direction that bisects the change the report names: -1
	 * when the KPI rose (klab's "bad" is then a rise), +1 when it fell. */
	int direction;
	const struct lkp_row *row;	/* the KPI's row, or NULL */
	struct lkp_row *rows;	/* the first comparison table, the commit's column */
	size_t nr_rows, alloc_rows;
	/* The "in addition" results (lkp_report_select picks one); the
	 * report's own is results[0]. */
	struct lkp_result *results;
	size_t nr_results, alloc_results;
	size_t selected;	/* which of results[] the fields above are */
	/* A patch under review: the blamed commit is the kernel test robot's
	 * build of it (intel-lab-lkp), not a commit of the base tree. */
	int patch;
	char *patch_url;	/* "url:" the robot's branch, or NULL */
	char *patch_base;	/* "base:" the tree and branch it applies to, or NULL */
	char *patch_link;	/* "patch link:" the posting, or NULL */
};

/* Parse a report: plain text or a mail (headers, quoted-printable body),
 * quoted with '> ' at any depth, CRLF or LF, with wrapped lines.  name is
 * used in messages.  -1 after error() naming the line that was expected;
 * *r is then empty.  A report without a parent parses (parent NULL): the
 * caller takes the commit's first parent from the repository. */
int lkp_report_parse(struct lkp_report *r, const char *name, const char *buf, size_t len);
void lkp_report_release(struct lkp_report *r);

/* Make result n (0: the report's own, 1..: the "in addition" ones, in
 * the report's order) the report's suite, params, KPI and change.  -1
 * after error() when there is no such result. */
int lkp_report_select(struct lkp_report *r, size_t n);

/* The robot's branch of a patch report's "url:" as a repository and a
 * branch to fetch ("https://github.com/intel-lab-lkp/linux",
 * "Waiman-Long/cgroup-.../20220425-101126"), each allocated; -1 when the
 * url is not of that form. */
int lkp_patch_fetch(const struct lkp_report *r, char **repo, char **branch);

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
/* The name of a top-level "suite: NAME" line, read without parsing (a
 * job file klab cannot parse, such as lkp-tests' templated ones, may
 * still say which suite it is), or NULL; allocated. */
char *lkp_jobfile_suite(const char *buf, size_t len);
void lkp_jobfile_release(struct lkp_jobfile *jf);

enum lkp_accel { LKP_ACCEL_KVM, LKP_ACCEL_TCG };

/* What became of one LKP parameter (or of the report's KPI and change):
 * the klab job key it set, or why none. */
struct lkp_map_row {
	char *param;		/* LKP's name: "nr_threads", or "KPI", "change" */
	char *value;		/* LKP's value */
	char *key;		/* the job key: "nr_task", "params.qsort-method"; NULL: not mapped */
	char *job_value;	/* what the job says, or NULL */
	char *why;		/* the reason, either way (NULL: none needed) */
};

/* A klab job made from LKP parameters: its text and the mapping table. */
struct lkp_klab_job {
	char *name;		/* after the combination: will-it-scale-malloc1-process-100pct */
	char *suite;		/* klab's suite */
	char *testcase;		/* klab's testcase */
	char *yaml;		/* the job file */
	struct lkp_map_row *rows;
	size_t nr_rows, alloc_rows;
};

/* What lkp_map maps. */
struct lkp_map_in {
	const char *suite;	/* LKP's */
	const struct lkp_params *params;
	const char *kpi;	/* the report's KPI, or NULL (a job file) */
	const char *change;	/* the report's change, or NULL */
	int improvement;	/* the report's word */
	int direction;		/* the report's (lkp_report.direction); 0: the KPI's own */
	enum lkp_accel accel;
	const char *origin;	/* for the job's comment, may be NULL */
	const char *name;	/* the file the job will be written to (messages), may be NULL */
	/* kbuild: the kernel tree the guest builds (params.source) and
	 * klab's kbuild.config fragment (9p in the guest kernel), or NULL */
	const char *kbuild_source, *kbuild_config;
};

/* Map LKP's suite and parameters onto a klab job for in->accel, and
 * check the result with klab's own job parser.  -1 after error(): a
 * suite klab cannot run says why (lkp_suite_refused), one it does not
 * know names the ones it does, a KPI the job cannot produce says what it
 * produces, a testcase klab cannot run is job.c's message. */
int lkp_map(struct lkp_klab_job *out, const struct lkp_map_in *in);
void lkp_klab_job_release(struct lkp_klab_job *j);

/* Why klab cannot run an LKP suite (aim7, unixbench, ...), or NULL. */
const char *lkp_suite_refused(const char *suite);

/* The mapping table as lines for a terminal (each row "  PARAM VALUE →
 * key: value  why" or "  PARAM VALUE   not mapped: why"), and as a JSON
 * array of objects {"parameter","value","key","job_value","why"}. */
void lkp_table_text(struct strbuf *sb, const struct lkp_klab_job *j, const char *indent);
void lkp_table_json(struct strbuf *sb, const struct lkp_klab_job *j);
/* A report as a JSON object: commit, parent, subject, suite, params,
 * KPI, change, improvement, direction, the patch, the results. */
void lkp_report_json(struct strbuf *sb, const struct lkp_report *r);
/* Parameters as a JSON object (in order; a repeated key kept once). */
void lkp_params_json(struct strbuf *sb, const struct lkp_params *p);

/* The runtime klab uses for an LKP runtime under accel (seconds). */
unsigned lkp_scaled_runtime(unsigned lkp_s, enum lkp_accel accel);

/* The value of key in params, or NULL. */
const char *lkp_param(const struct lkp_params *p, const char *key);

#endif
