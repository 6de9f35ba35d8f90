/* Guest runs: run sets, boots, runs with their samples and monitor
 * values, and the reads a verdict makes of a step's runs. */
#include "lab/db-int.h"
#include "job/monitor.h"
#include "util/run-command.h"
#include "util/strbuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int db_run_set_create(sqlite3 *db, const struct db_run_set *rs, int64_t *id)
{
	return insert_returning(db, stmt(db, "INSERT INTO run_sets (job_path, job_hash, suite, testcase, kpi, kernel, "
					 "build_id, commit_hash, uri, host, accel, repeat, state, created_at, "
					 "track_tip_id, fingerprint) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
					 "?11, ?12, 'running', ?13, ?14, ?15) RETURNING id",
					 ARGS(arg_text(rs->job_path), arg_text(rs->job_hash), arg_text(rs->suite),
					      arg_text(rs->testcase), arg_text(rs->kpi), arg_text(rs->kernel),
					      arg_id(rs->build_id), arg_text(rs->commit_hash), arg_text(rs->uri),
					      arg_text(rs->host), arg_text(rs->accel), arg_int((int)rs->repeat),
					      arg_int(now_s()), arg_id(rs->track_tip_id), arg_text(rs->fingerprint))),
				id, "cannot record the run");
}

int db_fingerprint_put(sqlite3 *db, const char *hash, const char *text)
{
	return step_done(db, stmt(db, "INSERT OR IGNORE INTO fingerprints (hash, text, created_at) VALUES (?1, ?2, ?3)",
				 ARGS(arg_text(hash), arg_text(text), arg_int(now_s()))),
			 "cannot record the host fingerprint");
}

int db_fingerprint_get(sqlite3 *db, const char *hash, char **text)
{
	*text = NULL;
	return step_row(db, stmt(db, "SELECT text FROM fingerprints WHERE hash = ?1", ARGS(arg_text(hash))), row_text,
			text, "cannot read a host fingerprint");
}

int db_step_fingerprint(sqlite3 *db, int64_t step_id, char **hash)
{
	*hash = NULL;
	return step_row(db, stmt(db, "SELECT fingerprint FROM boots WHERE step_id = ?1 AND fingerprint IS NOT NULL "
				 "ORDER BY id DESC LIMIT 1", ARGS(arg_int(step_id))),
			row_text, hash, "cannot read the step's host fingerprint") < 0 ? -1 : 0;
}

int db_run_set_finish(sqlite3 *db, int64_t id, const char *state)
{
	return step_done(db, stmt(db, "UPDATE run_sets SET state = ?2, finished_at = ?3 WHERE id = ?1",
				 ARGS(arg_int(id), arg_text(state), arg_int(now_s()))),
			 "cannot finish the run");
}

int db_boot_begin(sqlite3 *db, const struct db_boot *b, int64_t *id)
{
	return insert_returning(db, stmt(db, "INSERT INTO boots (run_set_id, build_id, step_id, domain_name, accel, "
					 "vcpus, numa_nodes, memory_mb, pinning, console_path, outcome, started_at, "
					 "host_id, fingerprint) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
					 "'running', ?11, ?12, ?13) RETURNING id",
					 ARGS(arg_id(b->run_set_id), arg_id(b->build_id), arg_id(b->step_id),
					      arg_text(b->domain_name), arg_text(b->accel), arg_int((int)b->vcpus),
					      arg_int((int)b->numa_nodes), arg_int((int64_t)b->memory_mb),
					      arg_text(b->pinning), arg_text(b->console_path), arg_int(now_s()),
					      arg_id(b->host_id), arg_text(b->fingerprint))),
				id, "cannot record the boot");
}

int db_boot_finish(sqlite3 *db, int64_t id, const struct db_boot_end *e)
{
	return step_done(db, stmt(db, "UPDATE boots SET outcome = ?2, reason = ?3, console_excerpt = ?4, "
				 "kernel_release = ?5, guest_env = ?6, pinning = coalesce(?7, pinning), boot_ms = ?8, "
				 "create_ms = ?9, first_output_ms = ?10, finished_at = ?11 WHERE id = ?1",
				 ARGS(arg_int(id), arg_text(e->outcome), arg_text(e->reason), arg_text(e->excerpt),
				      arg_text(e->kernel_release), arg_text(e->guest_env), arg_text(e->pinning),
				      arg_nonneg(e->boot_ms), arg_nonneg(e->create_ms),
				      arg_nonneg(e->first_output_ms), arg_int(now_s()))),
			 "cannot finish the boot");
}

int db_boot_move_files(sqlite3 *db, int64_t boot_id, int64_t run_id, const char *console, const char *raw)
{
	if (step_done(db, stmt(db, "UPDATE boots SET console_path = ?2 WHERE id = ?1",
			       ARGS(arg_int(boot_id), arg_text(console))),
		      "cannot record the boot's console") < 0)
		return -1;
	if (!run_id)
		return 0;
	return step_done(db, stmt(db, "UPDATE runs SET raw_path = ?2 WHERE id = ?1", ARGS(arg_int(run_id), arg_text(raw))),
			 "cannot record the run's output");
}

int db_run_store(sqlite3 *db, const struct db_run *r, int64_t *id)
{
	sqlite3_stmt *st;

	if (db_begin(db) < 0)
		return -1;
	if (insert_returning(db, stmt(db, "INSERT INTO runs (boot_id, step_id, job_path, job_hash, iteration, status, "
				      "exit_code, raw_path, started_at, finished_at, fault, fingerprint) "
				      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
				      "(SELECT fingerprint FROM boots WHERE id = ?1)) RETURNING id",
				      ARGS(arg_id(r->boot_id), arg_id(r->step_id), arg_text(r->job_path),
					   arg_text(r->job_hash), arg_int((int)r->iteration), arg_text(r->status),
					   arg_nonneg(r->exit_code), arg_text(r->raw_path), arg_int(r->started_at),
					   arg_int(r->finished_at), arg_text(r->fault))),
			     id, "cannot record the run") < 0)
		goto fail;

	/* Duplicate (metric, seq) pairs from a hostile guest keep the first. */
	st = stmt(db, "INSERT OR IGNORE INTO samples (run_id, metric, seq, value) VALUES (?1, ?2, ?3, ?4)", NULL);
	if (!st)
		goto fail;
	for (size_t i = 0; i < r->nr_samples; i++)
		if (step_again(db, st, ARGS(arg_int(*id), arg_text(r->samples[i].metric), arg_int(r->samples[i].seq),
					    arg_real(r->samples[i].value)),
			       "cannot store a sample") < 0)
			goto fail;
	sqlite3_finalize(st);
	st = stmt(db, "INSERT OR IGNORE INTO monitor_stats (run_id, source, name, phase, value) "
		      "VALUES (?1, ?2, ?3, ?4, ?5)", NULL);
	if (!st)
		goto fail;
	for (size_t i = 0; i < r->nr_mons; i++)
		if (step_again(db, st, ARGS(arg_int(*id), arg_text(r->mons[i].source), arg_text(r->mons[i].name),
					    arg_text(r->mons[i].phase), arg_real(r->mons[i].value)),
			       "cannot store a monitor value") < 0)
			goto fail;
	sqlite3_finalize(st);
	return db_commit(db);

fail:
	db_rollback(db);
	return -1;
}

/* The KPI samples (seq 0) of `metric`, one per ok run of the boots
 * whose column `col` is ?1. */
#define KPI_VALUES_SQL(col) "SELECT s.value, r.id FROM samples s JOIN runs r ON r.id = s.run_id " \
	"JOIN boots b ON b.id = r.boot_id WHERE b." col " = ?1 AND r.status = 'ok' " \
	"AND s.metric = ?2 AND s.seq = 0 ORDER BY r.id"

/* The monitor values of the ok runs of the boots whose column `col` is
 * ?1 as source, name, phase, value rows ordered by source, name, run: a
 * counter's run is its delta, a level's the value after the run. */
#define MON_VALUES_SQL(col) "SELECT m.source, m.name, m.phase, m.value FROM monitor_stats m " \
	"JOIN runs r ON r.id = m.run_id JOIN boots b ON b.id = r.boot_id " \
	"WHERE b." col " = ?1 AND r.status = 'ok' AND m.phase IN ('delta', 'after') " \
	"ORDER BY m.source, m.name, r.id"

int db_step_metric_values(sqlite3 *db, int64_t step_id, const char *metric, double **vals, size_t *n)
{
	return col_doubles(db, stmt(db, KPI_VALUES_SQL("step_id"), ARGS(arg_int(step_id), arg_text(metric))), vals, n,
			   "cannot read a step's samples");
}

int db_step_metric_runs(sqlite3 *db, int64_t step_id, const char *metric, double **vals, double **times, size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 0, alloc_t = 0;
	int rc;

	*vals = *times = NULL;
	*n = 0;
	st = stmt(db, KPI_VALUES_SQL("step_id"), ARGS(arg_int(step_id), arg_text(metric)));
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*vals, *n + 1, alloc);
		ALLOC_GROW(*times, *n + 1, alloc_t);
		(*vals)[*n] = sqlite3_column_double(st, 0);
		(*times)[(*n)++] = (double)sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*vals);
		free(*times);
		*vals = *times = NULL;
		*n = 0;
		return db_fail(db, "cannot read a step's samples");
	}
	return 0;
}

static void mon_values_drop(struct db_mon_values **out, size_t *n)
{
	db_mon_values_free(*out, *n);
	*out = NULL;
	*n = 0;
}

/* A new series `name` (taken) at the end of *out. */
static struct db_mon_values *series_add(struct db_mon_values **out, size_t *n, size_t *alloc, char *name)
{
	struct db_mon_values *s;

	ALLOC_GROW(*out, *n + 1, *alloc);
	s = &(*out)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->name = name;
	return s;
}

/* The rows of sql for ?1 = id, ordered by series then run: each row's
 * series named by name(st, buf) (0: not a row to keep), its value in
 * column `col`; per series one value per run, appended to *out (dropped
 * on an error, which `what` names). */
static int read_series(sqlite3 *db, const char *sql, int64_t id, int (*name)(sqlite3_stmt *, struct strbuf *),
		       int col, struct db_mon_values **out, size_t *n, size_t *alloc, const char *what)
{
	sqlite3_stmt *st = stmt(db, sql, ARGS(arg_int(id)));
	struct strbuf sb = STRBUF_INIT;
	size_t alloc_v = 0;
	int rc = SQLITE_ERROR;

	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_mon_values *last = *n ? &(*out)[*n - 1] : NULL;

		strbuf_setlen(&sb, 0);
		if (!name(st, &sb))
			continue;
		if (!last || strcmp(last->name, sb.buf)) {
			last = series_add(out, n, alloc, xstrdup(sb.buf));
			alloc_v = 0;
		}
		ALLOC_GROW(last->v, last->n + 1, alloc_v);
		last->v[last->n++] = sqlite3_column_double(st, col);
	}
	strbuf_release(&sb);
	if (st)
		sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		mon_values_drop(out, n);
		return st ? db_fail(db, what) : -1;
	}
	return 0;
}

/* A MON_VALUES_SQL row's series: source.name, the row kept when it is a
 * known monitor's delta (a counter) or after value (a level). */
static int mon_series(sqlite3_stmt *st, struct strbuf *sb)
{
	const char *source = (const char *)sqlite3_column_text(st, 0);
	const char *name = (const char *)sqlite3_column_text(st, 1);
	const char *phase = (const char *)sqlite3_column_text(st, 2);
	const struct monitor *m = monitor_find(source);

	if (!m || !name || strcmp(phase, m->counters ? "delta" : "after"))
		return 0;
	strbuf_addf(sb, "%s.%s", source, name);
	return 1;
}

static int read_mon_values(sqlite3 *db, const char *sql, int64_t id, struct db_mon_values **out, size_t *n,
			   size_t *alloc)
{
	return read_series(db, sql, id, mon_series, 3, out, n, alloc, "cannot read monitor values");
}

int db_step_mon_values(sqlite3 *db, int64_t step_id, struct db_mon_values **out, size_t *n)
{
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	return read_mon_values(db, MON_VALUES_SQL("step_id"), step_id, out, n, &alloc);
}

/* ---- a run set's runs, for klab compare -------------------------------------- */

static void run_set_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_run_set_info *out = arg;

	READ_COLS(st, 0, COL(&out->id), COL(&out->job_path), COL(&out->job_hash), COL(&out->suite),
		  COL(&out->testcase), COL(&out->kpi), COL(&out->kernel), COL(&out->commit_hash), COL(&out->accel),
		  COL(&out->state), COL(&out->repeat), COL(&out->created_at), COL(&out->nr_ok),
		  COL(&out->fingerprint), COL(&out->fingerprint_text));
}

int db_run_set_get(sqlite3 *db, int64_t id, struct db_run_set_info *out)
{
	memset(out, 0, sizeof(*out));
	return step_row(db, stmt(db, "SELECT rs.id, rs.job_path, rs.job_hash, rs.suite, rs.testcase, rs.kpi, "
				 "rs.kernel, rs.commit_hash, rs.accel, rs.state, rs.repeat, rs.created_at, "
				 "(SELECT count(*) FROM boots b JOIN runs r ON r.boot_id = b.id "
				 " WHERE b.run_set_id = rs.id AND r.status = 'ok'), "
				 "rs.fingerprint, (SELECT text FROM fingerprints f WHERE f.hash = rs.fingerprint) "
				 "FROM run_sets rs WHERE rs.id = ?1",
				 ARGS(arg_int(id))),
			run_set_from_row, out, "cannot read the run set");
}

void db_run_set_info_release(struct db_run_set_info *rs)
{
	FREE_MANY(rs->job_path, rs->job_hash, rs->suite, rs->testcase, rs->kpi, rs->kernel, rs->commit_hash,
		  rs->accel, rs->state, rs->fingerprint, rs->fingerprint_text);
	memset(rs, 0, sizeof(*rs));
}

int db_run_set_metric_values(sqlite3 *db, int64_t run_set_id, const char *metric, double **vals, size_t *n)
{
	return col_doubles(db, stmt(db, KPI_VALUES_SQL("run_set_id"), ARGS(arg_int(run_set_id), arg_text(metric))),
			   vals, n, "cannot read a run set's samples");
}

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct db_mon_values *)x)->name, ((const struct db_mon_values *)y)->name);
}

/* A sample row's series: its metric. */
static int metric_series(sqlite3_stmt *st, struct strbuf *sb)
{
	const char *name = (const char *)sqlite3_column_text(st, 0);

	if (!name)
		return 0;
	strbuf_addstr(sb, name);
	return 1;
}

int db_run_set_values(sqlite3 *db, int64_t run_set_id, struct db_mon_values **out, size_t *n)
{
	size_t alloc = 0;

	*out = NULL;
	*n = 0;
	/* a series metric (per second, per task) is its mean in each run */
	if (read_series(db, "SELECT s.metric, avg(s.value) FROM samples s JOIN runs r ON r.id = s.run_id "
			"JOIN boots b ON b.id = r.boot_id WHERE b.run_set_id = ?1 AND r.status = 'ok' "
			"GROUP BY s.metric, r.id ORDER BY s.metric, r.id",
			run_set_id, metric_series, 1, out, n, &alloc, "cannot read a run set's samples") < 0 ||
	    read_mon_values(db, MON_VALUES_SQL("run_set_id"), run_set_id, out, n, &alloc) < 0)
		return -1;
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), by_name);
	return 0;
}

void db_mon_values_free(struct db_mon_values *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].name);
		free(m[i].v);
	}
	free(m);
}

/* The owner's PID from a domain name "klab-PID-MS"; 0 when not of that form. */
static long boot_owner(const char *name)
{
	char *end;
	long pid;

	if (!name || strncmp(name, "klab-", 5))
		return 0;
	errno = 0;
	pid = strtol(name + 5, &end, 10);
	return errno || *end != '-' || pid <= 0 ? 0 : pid;
}

int db_boots_interrupted(sqlite3 *db, int *marked)
{
	sqlite3_stmt *st = NULL, *up = NULL;
	int rc, ret = -1;

	*marked = 0;
	if (prepare(db, &st, "SELECT id, domain_name FROM boots WHERE outcome = 'running'") < 0 ||
	    prepare(db, &up, "UPDATE boots SET outcome = NULL, reason = ?2, finished_at = ?3 "
			     "WHERE id = ?1 AND outcome = 'running'") < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long pid = boot_owner((const char *)sqlite3_column_text(st, 1));
		char *why;

		if (!process_gone(pid))
			continue;
		why = xstrfmt("interrupted: klab (pid %ld) stopped during this boot; nothing was measured", pid);
		sqlite3_reset(up);
		bind_args(up, ARGS(arg_int(sqlite3_column_int64(st, 0)), arg_text(why), arg_int(now_s())));
		rc = sqlite3_step(up);
		free(why);
		if (rc != SQLITE_DONE) {
			error("cannot mark an interrupted boot: %s", sqlite3_errmsg(db));
			goto out;
		}
		(*marked)++;
	}
	if (rc != SQLITE_DONE) {
		error("cannot read boots: %s", sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	return ret;
}

int db_run_set_set_host(sqlite3 *db, int64_t run_set_id, const char *uri, const char *host, const char *accel,
			const char *fingerprint)
{
	return step_done(db, stmt(db, "UPDATE run_sets SET uri = ?2, host = ?3, accel = ?4, fingerprint = ?5 "
				 "WHERE id = ?1",
				 ARGS(arg_int(run_set_id), arg_text(uri), arg_text(host), arg_text(accel),
				      arg_text(fingerprint))),
			 "cannot move the run set to its host");
}
