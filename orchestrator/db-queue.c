/* The queue: jobs submitted with klab submit, claimed and leased by
 * workers. */
#include "db-int.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

/* ---- the vocabulary: one table per column (db.h) ----------------------- */

static const char *const queue_kind_names[] = { "bisect", "run", "track", "reproduce" };
static const char *const queue_state_names[] = { "queued", "running", "done", "failed", "cancelled" };
_Static_assert(ARRAY_SIZE(queue_kind_names) == QUEUE_KIND_LAST, "one name per kind");
_Static_assert(ARRAY_SIZE(queue_state_names) == QUEUE_STATE_LAST, "one name per state");

const char *queue_kind_to_string(enum queue_kind v)
{
	return (unsigned)v < QUEUE_KIND_LAST ? queue_kind_names[v] : NULL;
}

int queue_kind_from_string(const char *name)
{
	return name_index(queue_kind_names, QUEUE_KIND_LAST, name);
}

const char *queue_state_to_string(enum queue_state v)
{
	return (unsigned)v < QUEUE_STATE_LAST ? queue_state_names[v] : NULL;
}

int queue_state_from_string(const char *name)
{
	return name_index(queue_state_names, QUEUE_STATE_LAST, name);
}

/* args is stored as one blob: the strings one after another, each ending
 * in NUL (args[0] is the submitter's working directory). */
int db_queue_add(sqlite3 *db, enum queue_kind kind, char *const *args, size_t nr, int64_t bisection_id,
		 const char *submitted_by, int64_t *id)
{
	struct strbuf blob = STRBUF_INIT;
	sqlite3_stmt *st;
	int rc;

	for (size_t i = 0; i < nr; i++)
		strbuf_add(&blob, args[i], strlen(args[i]) + 1);
	if (prepare(db, &st, "INSERT INTO queue_jobs (kind, args, bisection_id, submitted_by, created_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5)") < 0) {
		strbuf_release(&blob);
		return -1;
	}
	sqlite3_bind_text(st, 1, queue_kind_to_string(kind), -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, blob.buf, (int)blob.len, SQLITE_TRANSIENT);
	if (bisection_id)
		sqlite3_bind_int64(st, 3, bisection_id);
	sqlite3_bind_text(st, 4, submitted_by, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now_s());
	rc = step_done(db, st, "cannot queue the job");
	strbuf_release(&blob);
	if (rc == 0)
		*id = sqlite3_last_insert_rowid(db);
	return rc;
}

#define QUEUE_COLUMNS "id, kind, args, state, bisection_id, worker, lease_until, attempts, message, " \
		      "submitted_by, created_at, started_at, finished_at"

static void queue_job_read(sqlite3_stmt *st, void *arg)
{
	struct queue_job *j = arg;
	const char *blob = sqlite3_column_blob(st, 2);
	int len = sqlite3_column_bytes(st, 2);

	memset(j, 0, sizeof(*j));
	j->id = sqlite3_column_int64(st, 0);
	j->kind = col_strdup(st, 1);
	for (int off = 0; blob && off < len;) {
		const char *s = blob + off;
		size_t n = strnlen(s, (size_t)(len - off));
		j->args = xrealloc(j->args, (j->nr_args + 2) * sizeof(char *));
		j->args[j->nr_args++] = xstrndup(s, n);
		j->args[j->nr_args] = NULL;
		off += (int)n + 1;
	}
	j->state = col_strdup(st, 3);
	j->bisection_id = sqlite3_column_int64(st, 4);
	j->worker = col_strdup(st, 5);
	j->lease_until = sqlite3_column_int64(st, 6);
	j->attempts = sqlite3_column_int(st, 7);
	j->message = col_strdup(st, 8);
	j->submitted_by = col_strdup(st, 9);
	j->created_at = sqlite3_column_int64(st, 10);
	j->started_at = sqlite3_column_int64(st, 11);
	j->finished_at = sqlite3_column_int64(st, 12);
	/* a name the table lacks (a newer klab's): a kind this klab's worker
	 * does not run, a state that has ended */
	j->kind_id = (enum queue_kind)queue_kind_from_string(j->kind);
	if ((int)j->kind_id < 0)
		j->kind_id = QUEUE_TRACK;
	j->state_id = (enum queue_state)queue_state_from_string(j->state);
	if ((int)j->state_id < 0)
		j->state_id = QUEUE_FAILED;
}

void queue_job_release(struct queue_job *j)
{
	strings_free(j->args, j->nr_args);
	free(j->kind);
	free(j->state);
	free(j->worker);
	free(j->message);
	free(j->submitted_by);
	memset(j, 0, sizeof(*j));
}

int db_queue_load(sqlite3 *db, int64_t id, struct queue_job *j)
{
	sqlite3_stmt *st;
	int rc;

	if (prepare(db, &st, "SELECT " QUEUE_COLUMNS " FROM queue_jobs WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = step_row(db, st, queue_job_read, j, "cannot read the queue");
	if (rc == 0)
		return error("no queued job %lld (see 'klab status')", (long long)id);
	return rc < 0 ? -1 : 0;
}

int db_queue_list(sqlite3 *db, struct queue_job **jobs, size_t *nr)
{
	sqlite3_stmt *st;
	void *rows;
	int rc;

	*jobs = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT " QUEUE_COLUMNS " FROM queue_jobs ORDER BY id") < 0)
		return -1;
	rc = step_rows(db, st, queue_job_read, sizeof(**jobs), &rows, nr, "cannot read the queue");
	*jobs = rows;
	return rc;
}

/* The oldest queued job, or a running one whose lease ran out (its worker
 * died): marked running for `worker` in the same transaction, so two
 * workers never get the same job.  1 claimed, 0 nothing to do, -1 error. */
int db_queue_claim(sqlite3 *db, const char *worker, int64_t lease_s, struct queue_job *j)
{
	sqlite3_stmt *st;
	int64_t now = now_s(), id = 0;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "SELECT id FROM queue_jobs WHERE state = 'queued' "
			     "OR (state = 'running' AND lease_until < ?1) ORDER BY id LIMIT 1") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, now);
	if (step_row(db, st, row_int64, &id, "cannot read the queue") < 0)
		goto fail;
	if (!id) {
		db_rollback(db);
		return 0;
	}
	if (prepare(db, &st, "UPDATE queue_jobs SET state = 'running', worker = ?2, lease_until = ?3, "
			     "attempts = attempts + 1, started_at = coalesce(started_at, ?4), finished_at = NULL "
			     "WHERE id = ?1") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, worker, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, now + lease_s);
	sqlite3_bind_int64(st, 4, now);
	if (step_done(db, st, "cannot claim a job") < 0)
		goto fail;
	if (db_commit(db) < 0)
		goto fail;
	return db_queue_load(db, id, j) < 0 ? -1 : 1;
fail:
	db_rollback(db);
	return -1;
}

/* Extend the lease of a job this worker runs.  1 still ours, 0 cancelled
 * or taken over (stop it), -1 error. */
int db_queue_renew(sqlite3 *db, int64_t id, const char *worker, int64_t lease_s)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE queue_jobs SET lease_until = ?3 WHERE id = ?1 AND worker = ?2 "
			     "AND state = 'running'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, worker, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, now_s() + lease_s);
	return step_changed(db, st, "cannot renew a lease");
}

/* A job this worker ran ended: state done, failed or queued (handed
 * back).  Only while it is still this worker's running job: a cancel
 * that came first stays.  1 recorded, 0 not ours any more. */
int db_queue_finish(sqlite3 *db, int64_t id, const char *worker, enum queue_state state, const char *message)
{
	sqlite3_stmt *st;
	int back = state == QUEUE_QUEUED;

	if (prepare(db, &st, "UPDATE queue_jobs SET state = ?3, message = ?4, lease_until = NULL, "
			     "worker = CASE WHEN ?6 THEN NULL ELSE worker END, "
			     "finished_at = CASE WHEN ?6 THEN NULL ELSE ?5 END "
			     "WHERE id = ?1 AND worker = ?2 AND state = 'running'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, worker, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, queue_state_to_string(state), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, message, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now_s());
	sqlite3_bind_int(st, 6, back);
	return step_changed(db, st, "cannot record the job's end");
}

int db_queue_note(sqlite3 *db, int64_t id, const char *message)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE queue_jobs SET message = ?2 WHERE id = ?1 AND state = 'running'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, message, -1, SQLITE_TRANSIENT);
	return step_changed(db, st, "cannot record what the job says");
}

int db_queue_set_bisection(sqlite3 *db, int64_t id, int64_t bisection_id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE queue_jobs SET bisection_id = ?2 WHERE id = ?1 AND state = 'running'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	bind_id_or_null(st, 2, bisection_id);
	return step_changed(db, st, "cannot link the job to its bisection");
}

/* One job's row changed by `sql` (?1 its id, ?2 when there: now).  1
 * when a row changed, 0 when none was in the state the SQL asks for. */
static int queue_job_update(sqlite3 *db, int64_t id, const char *sql, const char *what)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, sql) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, now_s());
	return step_changed(db, st, what);
}

/* Cancel a queued or running job (its worker notices at the next lease
 * renewal).  1 cancelled, 0 it had already ended. */
int db_queue_cancel(sqlite3 *db, int64_t id)
{
	return queue_job_update(db, id, "UPDATE queue_jobs SET state = 'cancelled', message = 'cancelled', "
				"finished_at = ?2 WHERE id = ?1 AND state IN ('queued', 'running')",
				"cannot cancel the job");
}

/* Queue a failed or cancelled job again.  1 queued, 0 not in such a state. */
int db_queue_retry(sqlite3 *db, int64_t id)
{
	return queue_job_update(db, id, "UPDATE queue_jobs SET state = 'queued', worker = NULL, lease_until = NULL, "
				"message = NULL, finished_at = NULL WHERE id = ?1 AND state IN ('failed', 'cancelled')",
				"cannot queue the job again");
}
