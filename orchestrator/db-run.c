/* Guest runs: run sets, boots, runs with their samples and monitor
 * values, and the reads a verdict makes of a step's runs. */
#include "db-int.h"
#include "monitor.h"
#include "util/run-command.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int db_run_set_create(sqlite3 *db, const struct db_run_set *rs, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO run_sets (job_path, job_hash, suite, testcase, kpi, kernel, build_id, "
			     "commit_hash, uri, host, accel, repeat, state, created_at, track_tip_id) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'running', ?13, ?14) RETURNING id") < 0)
		return -1;
	bind_text_or_null(st, 1, rs->job_path);
	bind_text_or_null(st, 2, rs->job_hash);
	bind_text_or_null(st, 3, rs->suite);
	bind_text_or_null(st, 4, rs->testcase);
	bind_text_or_null(st, 5, rs->kpi);
	bind_text_or_null(st, 6, rs->kernel);
	bind_id_or_null(st, 7, rs->build_id);
	bind_text_or_null(st, 8, rs->commit_hash);
	bind_text_or_null(st, 9, rs->uri);
	bind_text_or_null(st, 10, rs->host);
	bind_text_or_null(st, 11, rs->accel);
	sqlite3_bind_int(st, 12, (int)rs->repeat);
	sqlite3_bind_int64(st, 13, now_s());
	bind_id_or_null(st, 14, rs->track_tip_id);
	return insert_returning(db, st, id, "cannot record the run");
}

int db_run_set_finish(sqlite3 *db, int64_t id, const char *state)
{
	return update_text_now(db, "UPDATE run_sets SET state = ?2, finished_at = ?3 WHERE id = ?1", id, state,
			       "cannot finish the run");
}

int db_boot_begin(sqlite3 *db, const struct db_boot *b, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO boots (run_set_id, build_id, step_id, domain_name, accel, vcpus, numa_nodes, "
			     "memory_mb, pinning, console_path, outcome, started_at, host_id) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'running', ?11, ?12) RETURNING id") < 0)
		return -1;
	bind_id_or_null(st, 1, b->run_set_id);
	bind_id_or_null(st, 2, b->build_id);
	bind_id_or_null(st, 3, b->step_id);
	bind_text_or_null(st, 4, b->domain_name);
	bind_text_or_null(st, 5, b->accel);
	sqlite3_bind_int(st, 6, (int)b->vcpus);
	sqlite3_bind_int(st, 7, (int)b->numa_nodes);
	sqlite3_bind_int64(st, 8, (int64_t)b->memory_mb);
	bind_text_or_null(st, 9, b->pinning);
	bind_text_or_null(st, 10, b->console_path);
	sqlite3_bind_int64(st, 11, now_s());
	bind_id_or_null(st, 12, b->host_id);
	return insert_returning(db, st, id, "cannot record the boot");
}

int db_boot_finish(sqlite3 *db, int64_t id, const struct db_boot_end *e)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE boots SET outcome = ?2, reason = ?3, console_excerpt = ?4, kernel_release = ?5, "
			     "guest_env = ?6, pinning = coalesce(?7, pinning), boot_ms = ?8, create_ms = ?9, "
			     "first_output_ms = ?10, finished_at = ?11 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	bind_text_or_null(st, 2, e->outcome);
	bind_text_or_null(st, 3, e->reason);
	bind_text_or_null(st, 4, e->excerpt);
	bind_text_or_null(st, 5, e->kernel_release);
	bind_text_or_null(st, 6, e->guest_env);
	bind_text_or_null(st, 7, e->pinning);
	bind_nonneg_or_null(st, 8, e->boot_ms);
	bind_nonneg_or_null(st, 9, e->create_ms);
	bind_nonneg_or_null(st, 10, e->first_output_ms);
	sqlite3_bind_int64(st, 11, now_s());
	return step_done(db, st, "cannot finish the boot");
}

int db_run_store(sqlite3 *db, const struct db_run *r, int64_t *id)
{
	sqlite3_stmt *st = NULL;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "INSERT INTO runs (boot_id, step_id, job_path, job_hash, iteration, status, exit_code, "
			     "raw_path, started_at, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
			     "RETURNING id") < 0)
		goto fail;
	bind_id_or_null(st, 1, r->boot_id);
	bind_id_or_null(st, 2, r->step_id);
	bind_text_or_null(st, 3, r->job_path);
	bind_text_or_null(st, 4, r->job_hash);
	sqlite3_bind_int(st, 5, (int)r->iteration);
	sqlite3_bind_text(st, 6, r->status, -1, SQLITE_TRANSIENT);
	bind_nonneg_or_null(st, 7, r->exit_code);
	bind_text_or_null(st, 8, r->raw_path);
	sqlite3_bind_int64(st, 9, r->started_at);
	sqlite3_bind_int64(st, 10, r->finished_at);
	if (insert_returning(db, st, id, "cannot record the run") < 0)
		goto fail;

	/* Duplicate (metric, seq) pairs from a hostile guest keep the first. */
	if (prepare(db, &st, "INSERT OR IGNORE INTO samples (run_id, metric, seq, value) VALUES (?1, ?2, ?3, ?4)") < 0)
		goto fail;
	for (size_t i = 0; i < r->nr_samples; i++) {
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_text(st, 2, r->samples[i].metric, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 3, r->samples[i].seq);
		sqlite3_bind_double(st, 4, r->samples[i].value);
		if (sqlite3_step(st) != SQLITE_DONE) {
			db_fail(db, "cannot store a sample");
			goto fail_st;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (prepare(db, &st, "INSERT OR IGNORE INTO monitor_stats (run_id, source, name, phase, value) "
			     "VALUES (?1, ?2, ?3, ?4, ?5)") < 0)
		goto fail;
	for (size_t i = 0; i < r->nr_mons; i++) {
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_text(st, 2, r->mons[i].source, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, r->mons[i].name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, r->mons[i].phase, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, 5, r->mons[i].value);
		if (sqlite3_step(st) != SQLITE_DONE) {
			db_fail(db, "cannot store a monitor value");
			goto fail_st;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return db_commit(db);

fail_st:
	sqlite3_finalize(st);
fail:
	db_rollback(db);
	return -1;
}

/* A query over the ok runs of some boots: ?1 a step's or run set's id,
 * ?2 text. */
static int prepare_runs(sqlite3 *db, sqlite3_stmt **st, const char *sql, int64_t id, const char *text)
{
	if (prepare(db, st, sql) < 0)
		return -1;
	sqlite3_bind_int64(*st, 1, id);
	sqlite3_bind_text(*st, 2, text, -1, SQLITE_TRANSIENT);
	return 0;
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
	sqlite3_stmt *st;

	*vals = NULL;
	*n = 0;
	if (prepare_runs(db, &st, KPI_VALUES_SQL("step_id"), step_id, metric) < 0)
		return -1;
	return col_doubles(db, st, vals, n, "cannot read a step's samples");
}

int db_step_metric_runs(sqlite3 *db, int64_t step_id, const char *metric, double **vals, double **times, size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 0, alloc_t = 0;
	int rc;

	*vals = *times = NULL;
	*n = 0;
	if (prepare_runs(db, &st, KPI_VALUES_SQL("step_id"), step_id, metric) < 0)
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

/* MON_VALUES_SQL's rows for `id`: per stat, one value per run, appended
 * to *out (dropped on an error). */
static int read_mon_values(sqlite3 *db, const char *sql, int64_t id, struct db_mon_values **out, size_t *n,
			   size_t *alloc)
{
	sqlite3_stmt *st;
	size_t alloc_v = 0;
	int rc;

	if (prepare(db, &st, sql) < 0) {
		mon_values_drop(out, n);
		return -1;
	}
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *source = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *phase = (const char *)sqlite3_column_text(st, 2);
		const struct monitor *m = monitor_find(source);
		struct db_mon_values *last = *n ? &(*out)[*n - 1] : NULL;
		size_t len;

		if (!m || !name || strcmp(phase, m->counters ? "delta" : "after"))
			continue;
		len = strlen(source);
		if (!last || strncmp(last->name, source, len) || last->name[len] != '.' ||
		    strcmp(last->name + len + 1, name)) {
			last = series_add(out, n, alloc, xstrfmt("%s.%s", source, name));
			alloc_v = 0;
		}
		ALLOC_GROW(last->v, last->n + 1, alloc_v);
		last->v[last->n++] = sqlite3_column_double(st, 3);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		mon_values_drop(out, n);
		return db_fail(db, "cannot read monitor values");
	}
	return 0;
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

	out->id = sqlite3_column_int64(st, 0);
	out->job_path = col_strdup(st, 1);
	out->job_hash = col_strdup(st, 2);
	out->suite = col_strdup(st, 3);
	out->testcase = col_strdup(st, 4);
	out->kpi = col_strdup(st, 5);
	out->kernel = col_strdup(st, 6);
	out->commit_hash = col_strdup(st, 7);
	out->accel = col_strdup(st, 8);
	out->state = col_strdup(st, 9);
	out->repeat = (unsigned)sqlite3_column_int(st, 10);
	out->created_at = sqlite3_column_int64(st, 11);
	out->nr_ok = (unsigned)sqlite3_column_int(st, 12);
}

int db_run_set_get(sqlite3 *db, int64_t id, struct db_run_set_info *out)
{
	sqlite3_stmt *st;

	memset(out, 0, sizeof(*out));
	if (prepare(db, &st, "SELECT rs.id, rs.job_path, rs.job_hash, rs.suite, rs.testcase, rs.kpi, rs.kernel, "
			     "rs.commit_hash, rs.accel, rs.state, rs.repeat, rs.created_at, "
			     "(SELECT count(*) FROM boots b JOIN runs r ON r.boot_id = b.id "
			     " WHERE b.run_set_id = rs.id AND r.status = 'ok') "
			     "FROM run_sets rs WHERE rs.id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	return step_row(db, st, run_set_from_row, out, "cannot read the run set");
}

void db_run_set_info_release(struct db_run_set_info *rs)
{
	free(rs->job_path);
	free(rs->job_hash);
	free(rs->suite);
	free(rs->testcase);
	free(rs->kpi);
	free(rs->kernel);
	free(rs->commit_hash);
	free(rs->accel);
	free(rs->state);
	memset(rs, 0, sizeof(*rs));
}

int db_run_set_metric_values(sqlite3 *db, int64_t run_set_id, const char *metric, double **vals, size_t *n)
{
	sqlite3_stmt *st;

	*vals = NULL;
	*n = 0;
	if (prepare_runs(db, &st, KPI_VALUES_SQL("run_set_id"), run_set_id, metric) < 0)
		return -1;
	return col_doubles(db, st, vals, n, "cannot read a run set's samples");
}

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct db_mon_values *)x)->name, ((const struct db_mon_values *)y)->name);
}

int db_run_set_values(sqlite3 *db, int64_t run_set_id, struct db_mon_values **out, size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 0, alloc_v = 0;
	int rc;

	*out = NULL;
	*n = 0;
	/* a series metric (per second, per task) is its mean in each run */
	if (prepare(db, &st, "SELECT s.metric, avg(s.value) FROM samples s JOIN runs r ON r.id = s.run_id "
			     "JOIN boots b ON b.id = r.boot_id WHERE b.run_set_id = ?1 AND r.status = 'ok' "
			     "GROUP BY s.metric, r.id ORDER BY s.metric, r.id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, run_set_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		struct db_mon_values *last = *n ? &(*out)[*n - 1] : NULL;

		if (!name)
			continue;
		if (!last || strcmp(last->name, name)) {
			last = series_add(out, n, &alloc, xstrdup(name));
			alloc_v = 0;
		}
		ALLOC_GROW(last->v, last->n + 1, alloc_v);
		last->v[last->n++] = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		mon_values_drop(out, n);
		return db_fail(db, "cannot read a run set's samples");
	}
	if (read_mon_values(db, MON_VALUES_SQL("run_set_id"), run_set_id, out, n, &alloc) < 0)
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
		sqlite3_bind_int64(up, 1, sqlite3_column_int64(st, 0));
		sqlite3_bind_text(up, 2, why, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(up, 3, now_s());
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

int db_run_set_set_host(sqlite3 *db, int64_t run_set_id, const char *uri, const char *host, const char *accel)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE run_sets SET uri = ?2, host = ?3, accel = ?4 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, run_set_id);
	bind_text_or_null(st, 2, uri);
	bind_text_or_null(st, 3, host);
	bind_text_or_null(st, 4, accel);
	return step_done(db, st, "cannot move the run set to its host");
}
