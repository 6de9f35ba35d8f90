/* The lab database.  Every SQL statement klab runs lives in db.c (open,
 * migrations, transactions) and db-<family>.c, one file per table family,
 * as the sections below say.  SQLite in WAL mode, foreign keys on, schema
 * migrated by user_version. */
#ifndef KLAB_DB_H
#define KLAB_DB_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "core/bisect.h"
#include "util/enum.h"

struct commit_info;
struct report;

/* ---- the database (db.c) --------------------------------------------------- */

/* The newest schema version this klab knows. */
int db_schema_version(void);

/* Open and migrate.  With `create` (klab init), a file that does not
 * exist is created; an existing file must be a klab database of a schema
 * version this klab knows: an empty or unreadable one is an error, never
 * a new database, and a refused file is not written to.  Returns 0 or
 * error(). */
int db_open(sqlite3 **out, const char *path, int create);
/* Open an existing database read-only (a lab on a read-only or full file
 * system): no migration, so its schema must be the current one; -1 after
 * error(). */
int db_open_ro(sqlite3 **out, const char *path);
void db_close(sqlite3 *db);

int db_begin(sqlite3 *db);
int db_commit(sqlite3 *db);
void db_rollback(sqlite3 *db);

/* ---- repositories and commits (db-repo.c) ---------------------------------- */

int db_repo_id(sqlite3 *db, const char *path, int64_t *id);
int db_commit_store(sqlite3 *db, int64_t repo_id, const struct commit_info *ci);

/* Subject of a stored commit (caller frees) or NULL. */
char *db_commit_subject(sqlite3 *db, int64_t repo_id, const char *hash);

/* Subject, author ("Name <email>") and author time of a stored commit:
 * 1 found (strings for the caller to free), 0 not stored, -1 error. */
int db_commit_facts(sqlite3 *db, int64_t repo_id, const char *hash, char **subject, char **author,
		    int64_t *author_time);

/* ---- bisections, steps, verdicts (db-bisect.c) ----------------------------- */

/* The bisections' and steps' vocabulary: one enum each, the column's
 * names in one table each (db-bisect.c; a step's verdict is bisect.h's
 * enum bisect_mark), parsed once when a row is loaded (util/enum.h:
 * x_to_string the stored name; x_from_string the enum, or -1 for a name
 * not in the table). */
enum bisection_kind { BISECTION_COMMAND, BISECTION_JOB, BISECTION_KIND_LAST };
enum bisection_state {
	BISECTION_CREATED, BISECTION_RUNNING, BISECTION_STOPPED, BISECTION_DONE, BISECTION_FAILED,
	BISECTION_STATE_LAST
};
/* BISECTION_NO_RESULT: NULL in the column (not finished, or stopped) */
enum bisection_result {
	BISECTION_NO_RESULT, BISECTION_CULPRIT, BISECTION_SKIPPED_ONLY, BISECTION_NOT_REPRODUCED,
	BISECTION_UNCONFIRMED, BISECTION_ERROR, BISECTION_RESULT_LAST
};
enum step_phase {
	STEP_PHASE_BISECT, STEP_PHASE_MERGE_BASE, STEP_PHASE_REFERENCE, STEP_PHASE_CONFIRM,
	STEP_PHASE_REVERT,	/* the revert check's runs (revert.c): never a bisection mark */
	STEP_PHASE_PROFILE,	/* profiled runs of parent and culprit: evidence, no verdict */
	STEP_PHASE_LAST
};
enum step_status { STEP_RUNNING, STEP_DONE, STEP_ABORTED, STEP_STATUS_LAST };

KLAB_ENUM_DECL(bisection_kind);
KLAB_ENUM_DECL(bisection_state);
KLAB_ENUM_DECL(bisection_result);	/* no result: NULL, and NULL gives it */
KLAB_ENUM_DECL(step_phase);
KLAB_ENUM_DECL(step_status);

struct bisection {
	int64_t id;
	int64_t repo_id;
	char *repo_path;
	char *kind;
	char *state;
	char *result;		/* NULL while running */
	char bad[41];
	int first_parent;
	int64_t timeout_ms;
	int build;		/* build each commit before the test */
	char *config;		/* build recipe text (kbuild_recipe_to_text) */
	char *job_path;		/* kind 'job': the job file, its text, the KPI */
	char *job_text;
	char *kpi;
	char *culprit;
	char *message;
	int64_t created_at, started_at, finished_at;
	char (*goods)[41];
	size_t nr_goods;
	char **paths;
	size_t nr_paths;
	char **argv;		/* NULL-terminated */
	size_t argc;
	char (*candidates)[41];
	size_t nr_candidates;
	/* kind, state and result parsed */
	enum bisection_kind kind_id;
	enum bisection_state state_id;
	enum bisection_result result_id;
};

struct step {
	int64_t id;
	int seq;
	char hash[41];
	char *phase;
	char *status;
	char *verdict;		/* NULL while running */
	char *reason;
	int exit_code;		/* -1 if none */
	int attempts;
	int remaining;
	char *log_path;
	int64_t choose_ms, checkout_ms, test_ms;
	int64_t started_at, finished_at;
	char *subject;		/* from commits, may be NULL */
	int pass;		/* the bisection's pass it ran in (1, or 2 after an unconfirmed culprit) */
	int half;		/* the part of the range it ran in: 0 all, 1 or 2 a half (migration 11) */
	/* phase, status and verdict parsed (by db_steps_load) */
	enum step_phase phase_id;
	enum step_status status_id;
	enum bisect_mark mark;
};

int db_bisection_create(sqlite3 *db, struct bisection *b);
int db_bisection_load(sqlite3 *db, int64_t id, struct bisection *b);
void bisection_release(struct bisection *b);
/* Ids of all bisections, oldest first. */
int db_bisection_ids(sqlite3 *db, int64_t **ids, size_t *nr);
int db_bisection_set_state(sqlite3 *db, int64_t id, const char *state, const char *result,
			   const char *culprit, const char *message);
/* db_bisection_set_state with the vocabulary's enums. */
int db_bisection_enter(sqlite3 *db, int64_t id, enum bisection_state state, enum bisection_result result,
		       const char *culprit, const char *message);
int db_bisection_set_candidates(sqlite3 *db, int64_t id, char (*hashes)[41], size_t nr);

/* The steps of the bisection's current pass, in order (what a resume
 * replays, the log, the evidence); _all: every pass (bisect show). */
int db_steps_load(sqlite3 *db, int64_t bisection_id, struct step **steps, size_t *nr);
int db_steps_load_all(sqlite3 *db, int64_t bisection_id, struct step **steps, size_t *nr);
void steps_release(struct step *steps, size_t nr);
/* Start a step: reuses the unfinished row left by a crash for the same
 * commit, else inserts the next seq.  Fills s->id, s->seq, s->attempts. */
int db_step_begin(sqlite3 *db, int64_t bisection_id, struct step *s);
int db_step_finish(sqlite3 *db, const struct step *s);
/* A done step running again (its runs kept): more runs of the ends after
 * `bisect resume --max-runs`. */
int db_step_reopen(sqlite3 *db, int64_t step_id);
/* A step that could not finish (the test aborted). */
int db_step_abort(sqlite3 *db, int64_t step_id, const char *reason);
/* A step not done closed as skipped (reason: why), so that no later step
 * of its commit and phase takes it up again with its runs. */
int db_step_retire(sqlite3 *db, int64_t step_id, const char *reason);

int db_verdict_store(sqlite3 *db, int64_t step_id, const char *rule, double p_good, double p_bad,
		     const char *statistic, const char *detail);

/* The evidence texts stored for a step. */
int db_step_verdicts(sqlite3 *db, int64_t step_id, char ***details, size_t *n);

/* How many commits a bisection tests at once (1 unless set). */
int db_bisection_set_slots(sqlite3 *db, int64_t id, int slots);
int db_bisection_slots(sqlite3 *db, int64_t id, int *slots);
/* The steps that belong to a round, with their round, in seq order. */
int db_step_rounds(sqlite3 *db, int64_t bisection_id, int64_t **step_ids, int **rounds, size_t *nr);
/* db_step_begin for the n steps of one round, in one transaction: each
 * reuses its commit's unfinished row or gets the next seq, all get
 * `round`; other unfinished bisect rows are dropped as db_step_begin
 * does.  Fills each step's id, seq and attempts. */
int db_round_begin(sqlite3 *db, int64_t bisection_id, struct step *steps, size_t n, int round);

/* The revert check (migration 7): whether it is on for the bisection
 * (`--no-revert-check` stores 0; 1 unless set), and its result.
 * db_bisection_revert: 1 a check is stored (rc filled, release it with
 * revert_check_release), 0 none, -1 error. */
/* Drift seen by a job bisection (migration 10): set once seen, with the
 * trend in percent per run (the first one stays); read on resume and by
 * `bisect show`. */
int db_bisection_set_drift(sqlite3 *db, int64_t id, double percent);
int db_bisection_drift(sqlite3 *db, int64_t id, int *drift, double *percent);
/* The pass of a bisection (migration 10): 2 once klab bisects the range
 * again after an unconfirmed culprit. */
int db_bisection_pass(sqlite3 *db, int64_t id, int *pass);
int db_bisection_set_pass(sqlite3 *db, int64_t id, int pass);
/* Two change points (migration 11).  The commit that split the range
 * (*has 0: none yet); set_split keeps the first one.  The half being
 * bisected: 0 the whole range, 1 (good, split], 2 (split, bad]. */
int db_bisection_split(sqlite3 *db, int64_t id, char hex[41], int *has);
int db_bisection_set_split(sqlite3 *db, int64_t id, const char *hex);
int db_bisection_half(sqlite3 *db, int64_t id, int *half);
int db_bisection_set_half(sqlite3 *db, int64_t id, int half);
/* What a half found (a row of bisection_culprits). */
struct half_culprit {
	int half;
	int has_culprit;	/* 0: only skipped commits were left in the half */
	char culprit[41];
	int confirmed;
	double share;		/* % of the ends' gap, NAN unknown */
	char *message;
};
/* Store (or replace) what half c->half found. */
int db_half_culprit_store(sqlite3 *db, int64_t id, const struct half_culprit *c);
/* Both halves' rows, half 1 first (*nr 0: none). */
int db_half_culprits_load(sqlite3 *db, int64_t id, struct half_culprit **out, size_t *nr);
void half_culprits_release(struct half_culprit *c, size_t nr);
/* The run cap `--max-runs` set (migration 10); *max_runs 0: none set. */
int db_bisection_set_max_runs(sqlite3 *db, int64_t id, unsigned max_runs);
/* Remove bisection id and all it stored (steps, boots, runs, samples,
 * verdicts, notifications; queue jobs and tracked tips that started it
 * lose the link), in one transaction. */
int db_bisection_delete(sqlite3 *db, int64_t id);
int db_bisection_max_runs(sqlite3 *db, int64_t id, unsigned *max_runs);
struct revert_check;
int db_bisection_set_revert_check(sqlite3 *db, int64_t id, int on);
int db_bisection_revert_check(sqlite3 *db, int64_t id, int *on);
int db_bisection_set_revert(sqlite3 *db, int64_t id, const struct revert_check *rc);
int db_bisection_revert(sqlite3 *db, int64_t id, struct revert_check *rc);
/* The revert check of half `half`'s culprit (migration 12), stored in its
 * bisection_culprits row (which must exist); read: 1 found, 0 none. */
int db_half_set_revert(sqlite3 *db, int64_t id, int half, const struct revert_check *rc);
int db_half_revert(sqlite3 *db, int64_t id, int half, struct revert_check *rc);

/* ---- kernel builds (db-build.c) -------------------------------------------- */

struct db_build {
	int64_t id;
	char *status;
	char *artifact_dir;
	char *config_hash;
	char *error_excerpt;
	char *log_path;
	int64_t duration_ms;
	int objects;
	int64_t finished_at;
};

/* The build row for (tree, recipe): 1 found, 0 none, -1 error. */
int db_build_find(sqlite3 *db, const char *tree, const char *recipe_id, struct db_build *out);
void db_build_release(struct db_build *b);
/* Insert or restart the row as 'running'. */
int db_build_begin(sqlite3 *db, int64_t repo_id, const char *commit, const char *tree,
		   const char *recipe_id, const char *recipe, int64_t *id);
int db_build_finish(sqlite3 *db, int64_t id, const char *status, const char *artifact_dir,
		    const char *config_hash, const char *config_text, const char *excerpt,
		    const char *log_path, int64_t duration_ms, int objects);
/* Forget artifact directories that gc removed. */
int db_build_forget_artifact(sqlite3 *db, const char *artifact_dir);

/* ---- guest runs: run sets, boots, runs, samples, monitors (db-run.c) ------- */

struct db_run_set {
	const char *job_path, *job_hash, *suite, *testcase, *kpi;
	const char *kernel;
	int64_t build_id;	/* 0: none */
	const char *commit_hash;	/* NULL: none */
	const char *uri, *host, *accel;
	unsigned repeat;
	int64_t track_tip_id;	/* 0: none (klab track links its runs to the tip) */
	const char *fingerprint;	/* the host's (db_fingerprint_put first); NULL: unknown */
};
int db_run_set_create(sqlite3 *db, const struct db_run_set *rs, int64_t *id);
/* Store a host fingerprint (hostcheck.h) under its hash, once. */
int db_fingerprint_put(sqlite3 *db, const char *hash, const char *text);
/* The text of fingerprint hash (caller frees): 1 found, 0 none, -1. */
int db_fingerprint_get(sqlite3 *db, const char *hash, char **text);
/* The fingerprint of the newest boot of step step_id that has one
 * (caller frees; NULL when none): what a resumed bisection compares its
 * host with. */
int db_step_fingerprint(sqlite3 *db, int64_t step_id, char **hash);
int db_run_set_finish(sqlite3 *db, int64_t id, const char *state);

struct db_boot {
	int64_t run_set_id;	/* 0: none */
	int64_t build_id;	/* 0: none */
	int64_t step_id;	/* 0: none */
	int64_t host_id;	/* 0: none (no hosts registered, or --uri) */
	const char *domain_name, *accel, *pinning, *console_path;
	unsigned vcpus, numa_nodes;
	uint64_t memory_mb;
	const char *fingerprint;	/* the host's; NULL: unknown.  The boot's runs carry it too. */
};
/* A boot row in state 'running', before the guest is created. */
int db_boot_begin(sqlite3 *db, const struct db_boot *b, int64_t *id);

struct db_boot_end {
	const char *outcome;	/* ok | boot-failed | panic | timeout | run-failed | infrastructure; NULL: klab failed */
	const char *reason, *excerpt, *kernel_release, *guest_env, *pinning;
	int64_t boot_ms, create_ms, first_output_ms;	/* -1: unknown */
};
int db_boot_finish(sqlite3 *db, int64_t id, const struct db_boot_end *e);
/* A boot's console and its run's raw output moved (run_id 0: no run):
 * a boot tried again keeps the files of the try before. */
int db_boot_move_files(sqlite3 *db, int64_t boot_id, int64_t run_id, const char *console, const char *raw);

struct db_sample {
	const char *metric;
	int64_t seq;
	double value;
};
struct db_mon {
	const char *source, *name, *phase;	/* phase: before | after | delta */
	double value;
};
struct db_run {
	int64_t boot_id, step_id;	/* step 0: none */
	const char *job_path, *job_hash;
	unsigned iteration;
	const char *status;	/* ok | failed | timeout */
	const char *fault;	/* a failed run's: kernel | infrastructure; NULL: ok */
	int exit_code;		/* -1: none */
	const char *raw_path;
	int64_t started_at, finished_at;
	const struct db_sample *samples;
	size_t nr_samples;
	const struct db_mon *mons;
	size_t nr_mons;
};
/* The run, its samples and monitor values in one transaction. */
int db_run_store(sqlite3 *db, const struct db_run *r, int64_t *id);

/* The single-valued metric of every ok run of a step, in run order. */
int db_step_metric_values(sqlite3 *db, int64_t step_id, const char *metric, double **vals, size_t *n);
/* The same with each run's time: its run id, which grows run by run
 * across the lab (the drift test's clock: verdict_runs.t). */
int db_step_metric_runs(sqlite3 *db, int64_t step_id, const char *metric, double **vals, double **times, size_t *n);
struct db_mon_values {
	char *name;		/* "source.name": "vmstat.thp_fault_alloc" */
	double *v;		/* one per ok run that has it, in run order */
	size_t n;
};
/* Every monitor stat of a step's ok runs, per run: a counter's delta, a
 * level's value after the run; sorted by name. */
int db_step_mon_values(sqlite3 *db, int64_t step_id, struct db_mon_values **out, size_t *n);
void db_mon_values_free(struct db_mon_values *m, size_t n);

/* A run set as klab compare shows it (strings owned: release). */
struct db_run_set_info {
	int64_t id;
	char *job_path, *job_hash, *suite, *testcase, *kpi, *kernel, *commit_hash, *accel, *state;
	unsigned repeat, nr_ok;	/* boots asked for; ok runs stored */
	int64_t created_at;
	char *fingerprint, *fingerprint_text;	/* the host's (hash, text); NULL: from before fingerprints */
};
/* 1 found, 0 no such run set, -1 error. */
int db_run_set_get(sqlite3 *db, int64_t id, struct db_run_set_info *out);
void db_run_set_info_release(struct db_run_set_info *rs);
/* The single-valued metric of every ok run of a run set, in run order. */
int db_run_set_metric_values(sqlite3 *db, int64_t run_set_id, const char *metric, double **vals, size_t *n);
/* Every sample metric (a series as its mean per run) and monitor stat
 * (as db_step_mon_values) of a run set's ok runs, sorted by name. */
int db_run_set_values(sqlite3 *db, int64_t run_set_id, struct db_mon_values **out, size_t *n);

/* Boots left 'running' by a klab that died (the owner PID in the domain
 * name no longer runs): outcome NULL, reason "interrupted: ...", finished
 * now.  *marked: how many. */
int db_boots_interrupted(sqlite3 *db, int *marked);

/* A run set moved to another host before its first boot. */
int db_run_set_set_host(sqlite3 *db, int64_t run_set_id, const char *uri, const char *host, const char *accel,
			const char *fingerprint);

/* ---- the queue: klab submit, worker (db-queue.c) --------------------------- */

/* The queue's vocabulary, as the bisections' above: the column's names
 * in one table each (db-queue.c), parsed when a row is loaded. */
enum queue_kind { QUEUE_BISECT, QUEUE_RUN, QUEUE_TRACK, QUEUE_REPRODUCE, QUEUE_KIND_LAST };
enum queue_state { QUEUE_QUEUED, QUEUE_RUNNING, QUEUE_DONE, QUEUE_FAILED, QUEUE_CANCELLED, QUEUE_STATE_LAST };
KLAB_ENUM_DECL(queue_kind);
KLAB_ENUM_DECL(queue_state);

/* The queue (klab submit / worker): one row per submitted job. */
struct queue_job {
	int64_t id;
	char *kind;		/* bisect, run, reproduce */
	char *state;		/* queued, running, done, failed, cancelled */
	char **args;		/* args[0]: the submitter's working directory; NULL-terminated */
	size_t nr_args;
	int64_t bisection_id;	/* kind bisect; kind reproduce: the one its --bisect started */
	char *worker;		/* "host:pid" while running */
	int64_t lease_until;
	int attempts;
	char *message;
	char *submitted_by;
	int64_t created_at, started_at, finished_at;
	/* kind and state parsed */
	enum queue_kind kind_id;
	enum queue_state state_id;
};
int db_queue_add(sqlite3 *db, enum queue_kind kind, char *const *args, size_t nr, int64_t bisection_id,
		 const char *submitted_by, int64_t *id);
int db_queue_load(sqlite3 *db, int64_t id, struct queue_job *j);
int db_queue_list(sqlite3 *db, struct queue_job **jobs, size_t *nr);
void queue_job_release(struct queue_job *j);
int db_queue_claim(sqlite3 *db, const char *worker, int64_t lease_s, struct queue_job *j);
int db_queue_renew(sqlite3 *db, int64_t id, const char *worker, int64_t lease_s);
int db_queue_finish(sqlite3 *db, int64_t id, const char *worker, enum queue_state state, const char *message);
/* What a running job's own process says about it (kind reproduce: the
 * verdict line; NULL clears it), and the bisection it started (0: none).
 * Only while the job is running: a cancel stays.  1 recorded, 0 not
 * running. */
int db_queue_note(sqlite3 *db, int64_t id, const char *message);
int db_queue_set_bisection(sqlite3 *db, int64_t id, int64_t bisection_id);
int db_queue_cancel(sqlite3 *db, int64_t id);
int db_queue_retry(sqlite3 *db, int64_t id);

/* ---- tracked branches: klab track (db-track.c) ----------------------------- */

struct db_track {
	int64_t id;
	char *name;
	int64_t repo_id;
	char *repo_path;
	char *remote;		/* a remote's name, a URL or an absolute path */
	char *branch;
	char *config;		/* build recipe text (kbuild_recipe_to_text), without the jobs' fragments */
	double threshold_pct;
	char *notify;		/* targets, one per line; NULL: the lab's */
	char **jobs;		/* absolute job file paths */
	size_t nr_jobs;
	int64_t created_at;
};
/* The track and its jobs in one transaction; a taken name is an error. */
int db_track_add(sqlite3 *db, const struct db_track *t, int64_t *id);
/* 1 found, 0 no such track, -1 error. */
int db_track_load(sqlite3 *db, const char *name, struct db_track *t);
void db_track_release(struct db_track *t);
/* Every track's name, sorted. */
int db_track_names(sqlite3 *db, char ***names, size_t *nr);
/* The track, its jobs, tips and fetch records (run sets keep their
 * samples, bisections stay).  1 removed, 0 no such track, -1 error. */
int db_track_remove(sqlite3 *db, const char *name);

struct db_track_tip {
	int64_t id;
	char hash[41];
	char *status;
	char *compared_to;	/* NULL: none (first tip, new baseline) */
	int64_t bisection_id, queue_job_id;	/* 0: none */
	char *message, *kpi_text;
	char *subject;		/* from commits, may be NULL */
	int64_t created_at, finished_at;
};
/* A track's tested tips, newest first. */
int db_track_tips(sqlite3 *db, int64_t track_id, struct db_track_tip **tips, size_t *nr);
void db_track_tips_free(struct db_track_tip *tips, size_t nr);
/* A new tip row in state 'running'. */
int db_track_tip_begin(sqlite3 *db, int64_t track_id, const char *hash, const char *compared_to,
		       const char *message, int64_t *id);
/* The tip's outcome; a NULL message keeps the one it began with (why it
 * is compared with what it is). */
int db_track_tip_finish(sqlite3 *db, int64_t id, const char *status, const char *message, const char *kpi_text,
			int64_t bisection_id, int64_t queue_job_id);
/* The KPI `kpi` (seq 0) of every ok run measured for a tip with this job
 * file and content hash, under accelerator `accel` (NULL: any), in run
 * order. */
int db_track_tip_values(sqlite3 *db, int64_t tip_id, const char *job_path, const char *job_hash, const char *kpi,
			const char *accel, double **vals, size_t *n);
/* The accelerator of the newest run set of a tip with this job into
 * accel[8]; "" when there is none. */
int db_track_tip_accel(sqlite3 *db, int64_t tip_id, const char *job_path, char accel[8]);

struct db_track_fetch {
	char *outcome;		/* unchanged | moved | rewritten | first | failed */
	char old_tip[41], new_tip[41];	/* "" when none */
	char *message;
	int64_t created_at;
};
int db_track_fetch_record(sqlite3 *db, int64_t track_id, const char *outcome, const char *old_tip,
			  const char *new_tip, const char *message);
/* The newest fetch record: 1 found, 0 none, -1 error. */
int db_track_last_fetch(sqlite3 *db, int64_t track_id, struct db_track_fetch *f);
void db_track_fetch_release(struct db_track_fetch *f);

/* ---- notifications (db-notify.c) ------------------------------------------- */

struct db_notification {
	int64_t id;
	char *kind;		/* mail | webhook */
	char *target;		/* recipients ("a@x, b@y") or URL */
	char *subject;
	char *body;		/* mail: the text; webhook: the JSON document */
	char *state;		/* pending | sent | failed */
	int attempts;
	int64_t next_try_at;	/* 0: none */
	char *last_error;
	int64_t bisection_id;	/* 0: none */
	int64_t created_at;
};
void db_notification_release(struct db_notification *n);
void db_notifications_free(struct db_notification *n, size_t nr);

/* A pending row, due now.  Inside the caller's transaction, if any. */
int db_notification_add(sqlite3 *db, const char *kind, const char *target, const char *subject,
			const char *body, int64_t bisection_id, int64_t *id);
int db_notification_load(sqlite3 *db, int64_t id, struct db_notification *n);
/* All rows, oldest first. */
int db_notifications_list(sqlite3 *db, struct db_notification **out, size_t *nr);
/* Ids of pending rows due at `now` (every pending row with all), oldest first. */
int db_notifications_due(sqlite3 *db, int64_t now, int all, int64_t **ids, size_t *nr);
/* The outcome of one delivery attempt: state, attempts so far, the next
 * try (0: none) and the error (NULL when sent). */
int db_notification_attempt(sqlite3 *db, int64_t id, const char *state, int attempts, int64_t next_try_at,
			    const char *last_error);

/* ---- hypervisors: klab host (db-host.c) ------------------------------------ */

struct db_host {
	int64_t id;
	char *name, *uri;
	char *cpus;		/* CPU list klab may use there; NULL: all */
	unsigned max_guests;
	char *accel;		/* auto | kvm | tcg */
	int64_t created_at;
};
void db_host_release(struct db_host *h);
void db_hosts_free(struct db_host *h, size_t nr);

/* Register a host.  A removed host of the same name keeps its row (its
 * boots point at it) under the name NAME~ID; an active one is an error. */
int db_host_add(sqlite3 *db, const struct db_host *h, int64_t *id);
/* Hosts not removed, by name. */
int db_hosts_list(sqlite3 *db, struct db_host **out, size_t *nr);
/* An active host by name: 1 found, 0 none, -1 error. */
int db_host_find(sqlite3 *db, const char *name, struct db_host *h);
/* Mark a host removed (its boots keep pointing at it): 1 done, 0 none. */
int db_host_remove(sqlite3 *db, const char *name);
/* Boots recorded on a host. */
int db_host_boots(sqlite3 *db, int64_t host_id, int64_t *n);
/* The host of the latest boot of the bisection step `step_id` belongs
 * to (any of its steps); 0 when none has one. */
int db_bisection_host(sqlite3 *db, int64_t step_id, int64_t *host_id);
/* The fingerprint of that bisection's latest boot on host_id (NULL when
 * none has one; the caller frees). */
int db_bisection_host_fingerprint(sqlite3 *db, int64_t step_id, int64_t host_id, char **fingerprint);

/* ---- the report (db-report.c) ---------------------------------------------- */

/* Everything the report shows, for bisections (and tracked tips)
 * created at or after `since` (seconds; 0: all), in one read
 * transaction.  Release with report_release(). */
int db_report_load(sqlite3 *db, int64_t since, struct report *r);

#endif
