/* The queue: jobs submitted with klab submit, claimed and leased by
 * workers. */
#include "lab/db-int.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

/* ---- the vocabulary: one table per column (db.h) ----------------------- */

KLAB_ENUM_IMPL(queue_kind, QUEUE_KIND_LAST, "bisect", "run", "track", "reproduce")
KLAB_ENUM_IMPL(queue_state, QUEUE_STATE_LAST, "queued", "running", "done", "failed", "cancelled")

/* args is stored as one blob: the strings one after another, each ending
 * in NUL (args[0] is the submitter's working directory). */
int db_queue_add(sqlite3 *db, enum queue_kind kind, char *const *args, size_t nr, int64_t bisection_id,
		 const char *submitted_by, int64_t *id)
{
	struct strbuf blob = STRBUF_INIT;
	int rc;

	for (size_t i = 0; i < nr; i++)
		strbuf_add(&blob, args[i], strlen(args[i]) + 1);
	rc = step_done(db, stmt(db, "INSERT INTO queue_jobs (kind, args, bisection_id, submitted_by, created_at) "
			       "VALUES (?1, ?2, ?3, ?4, ?5)",
			       ARGS(arg_text(queue_kind_to_string(kind)), arg_blob(blob.buf, blob.len),
				    bisection_id ? arg_int(bisection_id) : arg_null(), arg_text(submitted_by),
				    arg_int(now_s()))),
		       "cannot queue the job");
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
	READ_COLS(st, 3, COL(&j->state), COL(&j->bisection_id), COL(&j->worker), COL(&j->lease_until),
		  COL(&j->attempts), COL(&j->message), COL(&j->submitted_by), COL(&j->created_at),
		  COL(&j->started_at), COL(&j->finished_at));
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
	FREE_MANY(j->kind, j->state, j->worker, j->message, j->submitted_by);
	memset(j, 0, sizeof(*j));
}

int db_queue_load(sqlite3 *db, int64_t id, struct queue_job *j)
{
	int rc = step_row(db, stmt(db, "SELECT " QUEUE_COLUMNS " FROM queue_jobs WHERE id = ?1", ARGS(arg_int(id))),
			  queue_job_read, j, "cannot read the queue");

	if (rc == 0)
		return error("no queued job %lld (see 'klab status')", (long long)id);
	return rc < 0 ? -1 : 0;
}

static void queue_job_drop(void *j)
{
	queue_job_release(j);
}

int db_queue_list(sqlite3 *db, struct queue_job **jobs, size_t *nr)
{
	void *rows;
	int rc = step_rows(db, stmt(db, "SELECT " QUEUE_COLUMNS " FROM queue_jobs ORDER BY id", NULL), queue_job_read,
			   queue_job_drop, sizeof(**jobs), &rows, nr, "cannot read the queue");

	*jobs = rows;
	return rc;
}

/* The oldest queued job, or a running one whose lease ran out (its worker
 * died): marked running for `worker` in the same transaction, so two
 * workers never get the same job.  1 claimed, 0 nothing to do, -1 error. */
int db_queue_claim(sqlite3 *db, const char *worker, int64_t lease_s, struct queue_job *j)
{
	int64_t now = now_s(), id = 0;

	if (db_begin(db) < 0)
		return -1;
	if (step_row(db, stmt(db, "SELECT id FROM queue_jobs WHERE state = 'queued' "
			      "OR (state = 'running' AND lease_until < ?1) ORDER BY id LIMIT 1", ARGS(arg_int(now))),
		     row_int64, &id, "cannot read the queue") < 0)
		goto fail;
	if (!id) {
		db_rollback(db);
		return 0;
	}
	if (step_done(db, stmt(db, "UPDATE queue_jobs SET state = 'running', worker = ?2, lease_until = ?3, "
			       "attempts = attempts + 1, started_at = coalesce(started_at, ?4), finished_at = NULL "
			       "WHERE id = ?1", ARGS(arg_int(id), arg_text(worker), arg_int(now + lease_s), arg_int(now))),
		      "cannot claim a job") < 0 ||
	    db_commit(db) < 0)
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
	return step_changed(db, stmt(db, "UPDATE queue_jobs SET lease_until = ?3 WHERE id = ?1 AND worker = ?2 "
				    "AND state = 'running'",
				    ARGS(arg_int(id), arg_text(worker), arg_int(now_s() + lease_s))),
			    "cannot renew a lease");
}

/* A job this worker ran ended: state done, failed or queued (handed
 * back).  Only while it is still this worker's running job: a cancel
 * that came first stays.  1 recorded, 0 not ours any more. */
int db_queue_finish(sqlite3 *db, int64_t id, const char *worker, enum queue_state state, const char *message)
{
	int back = state == QUEUE_QUEUED;

	return step_changed(db, stmt(db, "UPDATE queue_jobs SET state = ?3, message = ?4, lease_until = NULL, "
				    "worker = CASE WHEN ?6 THEN NULL ELSE worker END, "
				    "finished_at = CASE WHEN ?6 THEN NULL ELSE ?5 END "
				    "WHERE id = ?1 AND worker = ?2 AND state = 'running'",
				    ARGS(arg_int(id), arg_text(worker), arg_text(queue_state_to_string(state)),
					 arg_text(message), arg_int(now_s()), arg_int(back))),
			    "cannot record the job's end");
}

int db_queue_note(sqlite3 *db, int64_t id, const char *message)
{
	return step_changed(db, stmt(db, "UPDATE queue_jobs SET message = ?2 WHERE id = ?1 AND state = 'running'",
				    ARGS(arg_int(id), arg_text(message))),
			    "cannot record what the job says");
}

int db_queue_set_bisection(sqlite3 *db, int64_t id, int64_t bisection_id)
{
	return step_changed(db, stmt(db, "UPDATE queue_jobs SET bisection_id = ?2 WHERE id = ?1 AND state = 'running'",
				    ARGS(arg_int(id), arg_id(bisection_id))),
			    "cannot link the job to its bisection");
}

/* One job's row changed by `sql` (?1 its id, ?2 when there: now).  1
 * when a row changed, 0 when none was in the state the SQL asks for. */
static int queue_job_update(sqlite3 *db, int64_t id, const char *sql, const char *what)
{
	/* a statement without ?2 ignores it */
	return step_changed(db, stmt(db, sql, ARGS(arg_int(id), arg_int(now_s()))), what);
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
