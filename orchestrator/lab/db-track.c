/* Tracked branches (klab track): tracks and their jobs, tested tips,
 * fetch records. */
#include "lab/db-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int db_track_add(sqlite3 *db, const struct db_track *t, int64_t *id)
{
	int64_t found = 0;

	if (db_begin(db) < 0)
		return -1;
	if (step_row(db, stmt(db, "SELECT 1 FROM tracks WHERE name = ?1", ARGS(arg_text(t->name))), row_int64, &found,
		     "cannot read tracks") < 0)
		goto fail;
	if (found) {
		error("a track named '%s' exists (see 'klab track list')", t->name);
		goto fail;
	}
	if (insert_returning(db, stmt(db, "INSERT INTO tracks (name, repo_id, remote, branch, config, threshold_pct, "
				      "notify, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
				      ARGS(arg_text(t->name), arg_int(t->repo_id), arg_text(t->remote),
					   arg_text(t->branch), arg_text(t->config), arg_real(t->threshold_pct),
					   arg_text(t->notify), arg_int(now_s()))),
			     id, "cannot record the track") < 0)
		goto fail;
	for (size_t i = 0; i < t->nr_jobs; i++)
		if (step_done(db, stmt(db, "INSERT OR IGNORE INTO track_jobs (track_id, job_path) VALUES (?1, ?2)",
				       ARGS(arg_int(*id), arg_text(t->jobs[i]))),
			      "cannot record the track's job") < 0)
			goto fail;
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

void db_track_release(struct db_track *t)
{
	FREE_MANY(t->name, t->repo_path, t->remote, t->branch, t->config, t->notify);
	strings_free(t->jobs, t->nr_jobs);
	memset(t, 0, sizeof(*t));
}

static void track_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_track *t = arg;

	READ_COLS(st, 0, COL(&t->id), COL(&t->name), COL(&t->repo_id), COL(&t->repo_path), COL(&t->remote),
		  COL(&t->branch), COL(&t->config), COL(&t->threshold_pct), COL(&t->notify), COL(&t->created_at));
}

int db_track_load(sqlite3 *db, const char *name, struct db_track *t)
{
	int rc;

	memset(t, 0, sizeof(*t));
	rc = step_row(db, stmt(db, "SELECT t.id, t.name, t.repo_id, r.path, t.remote, t.branch, t.config, "
			       "t.threshold_pct, t.notify, t.created_at FROM tracks t JOIN repos r ON r.id = t.repo_id "
			       "WHERE t.name = ?1", ARGS(arg_text(name))),
		      track_from_row, t, "cannot read the track");
	if (rc < 1)
		return rc;
	if (col_strings(db, stmt(db, "SELECT job_path FROM track_jobs WHERE track_id = ?1 ORDER BY rowid",
				 ARGS(arg_int(t->id))),
			&t->jobs, &t->nr_jobs, "cannot read the track's jobs") < 0) {
		db_track_release(t);
		return -1;
	}
	return 1;
}

int db_track_names(sqlite3 *db, char ***names, size_t *nr)
{
	return col_strings(db, stmt(db, "SELECT name FROM tracks ORDER BY name", NULL), names, nr,
			   "cannot list tracks");
}

int db_track_remove(sqlite3 *db, const char *name)
{
	return step_changed(db, stmt(db, "DELETE FROM tracks WHERE name = ?1", ARGS(arg_text(name))),
			    "cannot remove the track");
}

static void tip_release(void *arg)
{
	struct db_track_tip *t = arg;

	FREE_MANY(t->status, t->compared_to, t->message, t->kpi_text, t->subject);
}

void db_track_tips_free(struct db_track_tip *tips, size_t nr)
{
	rows_free(tips, nr, sizeof(*tips), tip_release);
}

static void tip_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_track_tip *t = arg;

	READ_COLS(st, 0, COL(&t->id), COL(&t->hash), COL(&t->status), COL(&t->compared_to), COL(&t->bisection_id),
		  COL(&t->queue_job_id), COL(&t->message), COL(&t->kpi_text), COL(&t->subject), COL(&t->created_at),
		  COL(&t->finished_at));
}

int db_track_tips(sqlite3 *db, int64_t track_id, struct db_track_tip **tips, size_t *nr)
{
	void *rows;
	int rc = step_rows(db, stmt(db, "SELECT tt.id, tt.hash, tt.status, tt.compared_to, "
				    "coalesce(tt.bisection_id, 0), coalesce(tt.queue_job_id, 0), tt.message, "
				    "tt.kpi_text, c.subject, tt.created_at, coalesce(tt.finished_at, 0) "
				    "FROM track_tips tt JOIN tracks t ON t.id = tt.track_id "
				    "LEFT JOIN commits c ON c.repo_id = t.repo_id AND c.hash = tt.hash "
				    "WHERE tt.track_id = ?1 ORDER BY tt.id DESC", ARGS(arg_int(track_id))),
			   tip_from_row, tip_release, sizeof(**tips), &rows, nr, "cannot read tracked tips");

	*tips = rows;
	return rc;
}

int db_track_tip_begin(sqlite3 *db, int64_t track_id, const char *hash, const char *compared_to,
		       const char *message, int64_t *id)
{
	return insert_returning(db, stmt(db, "INSERT INTO track_tips (track_id, hash, status, compared_to, message, "
					 "created_at) VALUES (?1, ?2, 'running', ?3, ?4, ?5) RETURNING id",
					 ARGS(arg_int(track_id), arg_text(hash), arg_text(compared_to),
					      arg_text(message), arg_int(now_s()))),
				id, "cannot record the tip");
}

int db_track_tip_finish(sqlite3 *db, int64_t id, const char *status, const char *message, const char *kpi_text,
			int64_t bisection_id, int64_t queue_job_id)
{
	return step_done(db, stmt(db, "UPDATE track_tips SET status = ?2, message = coalesce(?3, message), "
				 "kpi_text = ?4, bisection_id = ?5, queue_job_id = ?6, finished_at = ?7 WHERE id = ?1",
				 ARGS(arg_int(id), arg_text(status), arg_text(message), arg_text(kpi_text),
				      arg_id(bisection_id), arg_id(queue_job_id), arg_int(now_s()))),
			 "cannot record the tip's result");
}

int db_track_tip_values(sqlite3 *db, int64_t tip_id, const char *job_path, const char *job_hash, const char *kpi,
			const char *accel, double **vals, size_t *n)
{
	return col_doubles(db, stmt(db, "SELECT sa.value FROM run_sets rs JOIN boots bo ON bo.run_set_id = rs.id "
				    "JOIN runs r ON r.boot_id = bo.id JOIN samples sa ON sa.run_id = r.id "
				    "WHERE rs.track_tip_id = ?1 AND rs.job_path = ?2 AND rs.job_hash = ?3 "
				    "AND r.status = 'ok' AND sa.metric = ?4 AND sa.seq = 0 "
				    "AND (?5 IS NULL OR rs.accel = ?5) ORDER BY r.id",
				    ARGS(arg_int(tip_id), arg_text(job_path), arg_text(job_hash), arg_text(kpi),
					 arg_text(accel))),
			   vals, n, "cannot read a tip's samples");
}

static void row_accel(sqlite3_stmt *st, void *accel)
{
	const unsigned char *a = sqlite3_column_text(st, 0);

	snprintf(accel, 8, "%s", a ? (const char *)a : "");
}

int db_track_tip_accel(sqlite3 *db, int64_t tip_id, const char *job_path, char accel[8])
{
	accel[0] = '\0';
	return step_row(db, stmt(db, "SELECT accel FROM run_sets WHERE track_tip_id = ?1 AND job_path = ?2 "
				 "ORDER BY id DESC LIMIT 1", ARGS(arg_int(tip_id), arg_text(job_path))),
			row_accel, accel, "cannot read a tip's run sets") < 0 ? -1 : 0;
}

int db_track_fetch_record(sqlite3 *db, int64_t track_id, const char *outcome, const char *old_tip,
			  const char *new_tip, const char *message)
{
	return step_done(db, stmt(db, "INSERT INTO track_fetches (track_id, outcome, old_tip, new_tip, message, "
				 "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
				 ARGS(arg_int(track_id), arg_text(outcome), arg_text(old_tip && *old_tip ? old_tip : NULL),
				      arg_text(new_tip && *new_tip ? new_tip : NULL), arg_text(message),
				      arg_int(now_s()))),
			 "cannot record the fetch");
}

static void fetch_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_track_fetch *f = arg;

	READ_COLS(st, 0, COL(&f->outcome), COL(&f->old_tip), COL(&f->new_tip), COL(&f->message), COL(&f->created_at));
}

int db_track_last_fetch(sqlite3 *db, int64_t track_id, struct db_track_fetch *f)
{
	memset(f, 0, sizeof(*f));
	return step_row(db, stmt(db, "SELECT outcome, old_tip, new_tip, message, created_at FROM track_fetches "
				 "WHERE track_id = ?1 ORDER BY id DESC LIMIT 1", ARGS(arg_int(track_id))),
			fetch_from_row, f, "cannot read the track's fetches");
}

void db_track_fetch_release(struct db_track_fetch *f)
{
	free(f->outcome);
	free(f->message);
	memset(f, 0, sizeof(*f));
}
