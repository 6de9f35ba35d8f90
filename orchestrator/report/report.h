/* The static HTML report: what the lab knows (filled by db_report_load)
 * turned into pages.  Rendering is pure: data in, HTML text out; reading
 * logs and writing files is cmd-report.c's job. */
#ifndef KLAB_REPORT_H
#define KLAB_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "util/strbuf.h"
#include "core/bisect.h"
#include "lab/db.h"
#include "engine/revert.h"

/* A copied log: the page links `name` (relative to the report) when the
 * copy exists, else says "log gone". */
struct report_log {
	char *src;		/* path in the lab, from the database; NULL: none */
	char *name;		/* logs/... in the report */
	int present;		/* set by the caller after copying */
};

/* One monitored counter on one step: its value in every ok run. */
struct report_stat {
	char *name;		/* "vmstat.thp_fault_alloc" */
	double *v;
	size_t n, alloc;
};

struct report_step {
	int64_t id;
	int seq;
	char hash[41];
	char *phase, *status, *verdict, *reason, *subject;
	/* phase, status and verdict parsed when loaded (enum step_phase,
	 * enum step_status, enum bisect_mark); -1: a name klab's tables
	 * lack, shown as stored */
	int phase_id, status_id, mark;
	int exit_code;		/* -1: none */
	int64_t test_ms;
	double *kpi;		/* KPI of every ok run, in run order */
	size_t nr_kpi, alloc_kpi;
	int runs, runs_ok;
	char *rule, *evidence;	/* the last verdict's rule and text */
	char *build_status, *build_excerpt;
	int boots, boots_ok;
	char *boot_outcome, *boot_reason, *console_excerpt;	/* the first boot that failed, else the last */
	struct report_log log, build_log, console, raw;
	struct report_stat *stats;	/* confirm and profile steps only, sorted by name */
	size_t nr_stats, alloc_stats;
};

struct report_bisection {
	int64_t id;
	char *repo, *kind, *state, *result, *message;
	int kind_id, state_id, result_id;	/* parsed when loaded, as a step's; -1 unknown */
	char bad[41];
	char (*goods)[41];
	size_t nr_goods, alloc_goods;
	char **argv;
	size_t argc, alloc_argv;
	char **candidates;
	size_t nr_candidates, alloc_candidates;
	char *job_path, *job_text, *kpi, *config;
	int build;
	char *culprit;
	/* the culprit as the commits table knows it (NULL: not stored) */
	char *culprit_subject, *culprit_author, *culprit_message, *culprit_files;
	int64_t culprit_time;
	int64_t created_at, finished_at;
	struct report_step *steps;
	size_t nr_steps, alloc_steps;
	struct revert_check revert;	/* outcome REVERT_NONE: not checked */
	int drift;			/* the host drifted while measuring */
	double drift_percent;		/* ... by this much per run */
	/* two change points (migration 11): the split commit ("" none) and
	 * what each half found */
	char split[41];
	struct report_half {
		int half;
		int has_culprit, confirmed;
		char culprit[41];
		double share;		/* % of the regression, NAN unknown */
		char *subject, *message;
		struct revert_check revert;	/* its culprit reverted alone (migration 12) */
	} *halves;
	size_t nr_halves, alloc_halves;
};

struct report_tip {
	int64_t id;
	char hash[41];
	char *status, *message, *subject, *compared_to;
	int64_t bisection_id;	/* 0: none */
	int64_t created_at;
};

/* The KPI of one tracked job over the tips: values[i] (nr_values[i] runs)
 * for tips[i]. */
struct report_series {
	char *job_path, *kpi;
	double **values;
	size_t *nr_values;
};

struct report_track {
	int64_t id;
	char *name, *repo, *remote, *branch;
	double threshold_pct;
	struct report_tip *tips;	/* oldest first */
	size_t nr_tips, alloc_tips;
	struct report_series *series;
	size_t nr_series, alloc_series;
};

struct report_host {
	char *name, *uri, *cpus, *accel;
	int max_guests;
};

/* A stored run set of klab run, klab compare or klab reproduce (a
 * tracked tip's belong to its track): what `klab compare --runset`
 * takes. */
struct report_run_set {
	int64_t id;
	char *job_path, *suite, *testcase, *kpi, *commit, *accel, *state;
	int repeat;
	int64_t created_at;
	double *kpi_values;	/* the KPI of each ok run */
	size_t nr_kpi, alloc_kpi;
};

struct report {
	struct report_bisection *bisections;	/* newest first */
	size_t nr_bisections, alloc_bisections;
	struct report_track *tracks;
	size_t nr_tracks, alloc_tracks;
	struct report_host *hosts;
	size_t nr_hosts, alloc_hosts;
	struct report_run_set *run_sets;	/* newest first */
	size_t nr_run_sets, alloc_run_sets;
};

void report_release(struct report *r);

/* Name each step's log copy (logs/bisect-ID/SEQ-WHAT.txt) where the
 * database has a source path. */
void report_set_log_names(struct report *r);

/* Log copies are bounded to their last REPORT_LOG_MAX bytes. */
#define REPORT_LOG_MAX (64 * 1024)

/* Whole pages, appended to out. */
void report_render_index(struct strbuf *out, const struct report *r);
void report_render_bisection(struct strbuf *out, const struct report_bisection *b);
void report_render_track(struct strbuf *out, const struct report_track *t);

/* File names of the pages (caller frees): bisect-ID.html and
 * track-NAME-ID.html with NAME reduced to [A-Za-z0-9._-]. */
char *report_bisection_file(const struct report_bisection *b);
char *report_track_file(const struct report_track *t);

#endif
