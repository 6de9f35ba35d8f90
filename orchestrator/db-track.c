/* Tracked branches (klab track): tracks and their jobs, tested tips,
 * fetch records. */
#include "db-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int db_track_add(sqlite3 *db, const struct db_track *t, int64_t *id)
{
	sqlite3_stmt *st;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "SELECT 1 FROM tracks WHERE name = ?1") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_finalize(st);
		error("a track named '%s' exists (see 'klab track list')", t->name);
		goto fail;
	}
	sqlite3_finalize(st);
	if (prepare(db, &st, "INSERT INTO tracks (name, repo_id, remote, branch, config, threshold_pct, notify, "
			     "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, t->repo_id);
	sqlite3_bind_text(st, 3, t->remote, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, t->branch, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 5, t->config);
	sqlite3_bind_double(st, 6, t->threshold_pct);
	bind_text_or_null(st, 7, t->notify);
	sqlite3_bind_int64(st, 8, now_s());
	if (insert_returning(db, st, id, "cannot record the track") < 0)
		goto fail;
	for (size_t i = 0; i < t->nr_jobs; i++) {
		if (prepare(db, &st, "INSERT OR IGNORE INTO track_jobs (track_id, job_path) VALUES (?1, ?2)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_text(st, 2, t->jobs[i], -1, SQLITE_TRANSIENT);
		if (step_done(db, st, "cannot record the track's job") < 0)
			goto fail;
	}
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

void db_track_release(struct db_track *t)
{
	free(t->name);
	free(t->repo_path);
	free(t->remote);
	free(t->branch);
	free(t->config);
	free(t->notify);
	strings_free(t->jobs, t->nr_jobs);
	memset(t, 0, sizeof(*t));
}

static void track_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_track *t = arg;

	t->id = sqlite3_column_int64(st, 0);
	t->name = col_strdup(st, 1);
	t->repo_id = sqlite3_column_int64(st, 2);
	t->repo_path = col_strdup(st, 3);
	t->remote = col_strdup(st, 4);
	t->branch = col_strdup(st, 5);
	t->config = col_strdup(st, 6);
	t->threshold_pct = sqlite3_column_double(st, 7);
	t->notify = col_strdup(st, 8);
	t->created_at = sqlite3_column_int64(st, 9);
}

int db_track_load(sqlite3 *db, const char *name, struct db_track *t)
{
	sqlite3_stmt *st;
	int rc;

	memset(t, 0, sizeof(*t));
	if (prepare(db, &st, "SELECT t.id, t.name, t.repo_id, r.path, t.remote, t.branch, t.config, t.threshold_pct, "
			     "t.notify, t.created_at FROM tracks t JOIN repos r ON r.id = t.repo_id WHERE t.name = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = step_row(db, st, track_from_row, t, "cannot read the track");
	if (rc < 1)
		return rc;
	if (prepare(db, &st, "SELECT job_path FROM track_jobs WHERE track_id = ?1 ORDER BY rowid") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, t->id);
	if (col_strings(db, st, &t->jobs, &t->nr_jobs, "cannot read the track's jobs") < 0)
		goto fail;
	return 1;
fail:
	db_track_release(t);
	return -1;
}

int db_track_names(sqlite3 *db, char ***names, size_t *nr)
{
	sqlite3_stmt *st;

	*names = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT name FROM tracks ORDER BY name") < 0)
		return -1;
	return col_strings(db, st, names, nr, "cannot list tracks");
}

int db_track_remove(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "DELETE FROM tracks WHERE name = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	return step_changed(db, st, "cannot remove the track");
}

void db_track_tips_free(struct db_track_tip *tips, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(tips[i].status);
		free(tips[i].compared_to);
		free(tips[i].message);
		free(tips[i].kpi_text);
		free(tips[i].subject);
	}
	free(tips);
}

int db_track_tips(sqlite3 *db, int64_t track_id, struct db_track_tip **tips, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*tips = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT tt.id, tt.hash, tt.status, tt.compared_to, coalesce(tt.bisection_id, 0), "
			     "coalesce(tt.queue_job_id, 0), tt.message, tt.kpi_text, c.subject, tt.created_at, "
			     "coalesce(tt.finished_at, 0) FROM track_tips tt JOIN tracks t ON t.id = tt.track_id "
			     "LEFT JOIN commits c ON c.repo_id = t.repo_id AND c.hash = tt.hash "
			     "WHERE tt.track_id = ?1 ORDER BY tt.id DESC") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_track_tip *t;
		ALLOC_GROW(*tips, *nr + 1, alloc);
		t = &(*tips)[(*nr)++];
		t->id = sqlite3_column_int64(st, 0);
		col_hex(st, 1, t->hash);
		t->status = col_strdup(st, 2);
		t->compared_to = col_strdup(st, 3);
		t->bisection_id = sqlite3_column_int64(st, 4);
		t->queue_job_id = sqlite3_column_int64(st, 5);
		t->message = col_strdup(st, 6);
		t->kpi_text = col_strdup(st, 7);
		t->subject = col_strdup(st, 8);
		t->created_at = sqlite3_column_int64(st, 9);
		t->finished_at = sqlite3_column_int64(st, 10);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_track_tips_free(*tips, *nr);
		*tips = NULL;
		*nr = 0;
		return db_fail(db, "cannot read tracked tips");
	}
	return 0;
}

int db_track_tip_begin(sqlite3 *db, int64_t track_id, const char *hash, const char *compared_to,
		       const char *message, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO track_tips (track_id, hash, status, compared_to, message, created_at) "
			     "VALUES (?1, ?2, 'running', ?3, ?4, ?5) RETURNING id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	sqlite3_bind_text(st, 2, hash, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, compared_to);
	bind_text_or_null(st, 4, message);
	sqlite3_bind_int64(st, 5, now_s());
	return insert_returning(db, st, id, "cannot record the tip");
}

int db_track_tip_finish(sqlite3 *db, int64_t id, const char *status, const char *message, const char *kpi_text,
			int64_t bisection_id, int64_t queue_job_id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE track_tips SET status = ?2, message = coalesce(?3, message), kpi_text = ?4, bisection_id = ?5, "
			     "queue_job_id = ?6, finished_at = ?7 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, status, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, message);
	bind_text_or_null(st, 4, kpi_text);
	bind_id_or_null(st, 5, bisection_id);
	bind_id_or_null(st, 6, queue_job_id);
	sqlite3_bind_int64(st, 7, now_s());
	return step_done(db, st, "cannot record the tip's result");
}

int db_track_tip_values(sqlite3 *db, int64_t tip_id, const char *job_path, const char *job_hash, const char *kpi,
			const char *accel, double **vals, size_t *n)
{
	sqlite3_stmt *st;

	*vals = NULL;
	*n = 0;
	if (prepare(db, &st, "SELECT sa.value FROM run_sets rs JOIN boots bo ON bo.run_set_id = rs.id "
			     "JOIN runs r ON r.boot_id = bo.id JOIN samples sa ON sa.run_id = r.id "
			     "WHERE rs.track_tip_id = ?1 AND rs.job_path = ?2 AND rs.job_hash = ?3 AND r.status = 'ok' "
			     "AND sa.metric = ?4 AND sa.seq = 0 AND (?5 IS NULL OR rs.accel = ?5) ORDER BY r.id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, tip_id);
	sqlite3_bind_text(st, 2, job_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, job_hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, kpi, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 5, accel);
	return col_doubles(db, st, vals, n, "cannot read a tip's samples");
}

static void row_accel(sqlite3_stmt *st, void *accel)
{
	const unsigned char *a = sqlite3_column_text(st, 0);

	snprintf(accel, 8, "%s", a ? (const char *)a : "");
}

int db_track_tip_accel(sqlite3 *db, int64_t tip_id, const char *job_path, char accel[8])
{
	sqlite3_stmt *st;

	accel[0] = '\0';
	if (prepare(db, &st, "SELECT accel FROM run_sets WHERE track_tip_id = ?1 AND job_path = ?2 "
			     "ORDER BY id DESC LIMIT 1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, tip_id);
	sqlite3_bind_text(st, 2, job_path, -1, SQLITE_TRANSIENT);
	return step_row(db, st, row_accel, accel, "cannot read a tip's run sets") < 0 ? -1 : 0;
}

int db_track_fetch_record(sqlite3 *db, int64_t track_id, const char *outcome, const char *old_tip,
			  const char *new_tip, const char *message)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO track_fetches (track_id, outcome, old_tip, new_tip, message, created_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	sqlite3_bind_text(st, 2, outcome, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, old_tip && *old_tip ? old_tip : NULL);
	bind_text_or_null(st, 4, new_tip && *new_tip ? new_tip : NULL);
	bind_text_or_null(st, 5, message);
	sqlite3_bind_int64(st, 6, now_s());
	return step_done(db, st, "cannot record the fetch");
}

static void fetch_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_track_fetch *f = arg;

	f->outcome = col_strdup(st, 0);
	col_hex(st, 1, f->old_tip);
	col_hex(st, 2, f->new_tip);
	f->message = col_strdup(st, 3);
	f->created_at = sqlite3_column_int64(st, 4);
}

int db_track_last_fetch(sqlite3 *db, int64_t track_id, struct db_track_fetch *f)
{
	sqlite3_stmt *st;

	memset(f, 0, sizeof(*f));
	if (prepare(db, &st, "SELECT outcome, old_tip, new_tip, message, created_at FROM track_fetches "
			     "WHERE track_id = ?1 ORDER BY id DESC LIMIT 1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	return step_row(db, st, fetch_from_row, f, "cannot read the track's fetches");
}

void db_track_fetch_release(struct db_track_fetch *f)
{
	free(f->outcome);
	free(f->message);
	memset(f, 0, sizeof(*f));
}
