/* Notifications: one row per mail or webhook, with its delivery
 * attempts. */
#include "lab/db-int.h"

#include <stdlib.h>
#include <string.h>

void db_notification_release(struct db_notification *n)
{
	FREE_MANY(n->kind, n->target, n->subject, n->body, n->state, n->last_error);
	memset(n, 0, sizeof(*n));
}

static void notification_release(void *n)
{
	db_notification_release(n);
}

void db_notifications_free(struct db_notification *n, size_t nr)
{
	rows_free(n, nr, sizeof(*n), notification_release);
}

int db_notification_add(sqlite3 *db, const char *kind, const char *target, const char *subject,
			const char *body, int64_t bisection_id, int64_t *id)
{
	return insert_returning(db, stmt(db, "INSERT INTO notifications (kind, target, subject, body, state, attempts, "
					 "next_try_at, bisection_id, created_at) "
					 "VALUES (?1, ?2, ?3, ?4, 'pending', 0, ?5, ?6, ?5) RETURNING id",
					 ARGS(arg_text(kind), arg_text(target), arg_text(subject), arg_text(body),
					      arg_int(now_s()), arg_id(bisection_id))),
				id, "cannot record the notification");
}

#define NOTIFICATION_COLUMNS "id, kind, target, subject, body, state, attempts, coalesce(next_try_at, 0), " \
	"last_error, coalesce(bisection_id, 0), created_at"

static void notification_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_notification *n = arg;

	READ_COLS(st, 0, COL(&n->id), COL(&n->kind), COL(&n->target), COL(&n->subject), COL(&n->body), COL(&n->state),
		  COL(&n->attempts), COL(&n->next_try_at), COL(&n->last_error), COL(&n->bisection_id),
		  COL(&n->created_at));
}

int db_notification_load(sqlite3 *db, int64_t id, struct db_notification *n)
{
	int rc;

	memset(n, 0, sizeof(*n));
	rc = step_row(db, stmt(db, "SELECT " NOTIFICATION_COLUMNS " FROM notifications WHERE id = ?1", ARGS(arg_int(id))),
		      notification_from_row, n, "cannot read the notification");
	if (rc == 0)
		return error("no notification %lld", (long long)id);
	return rc < 0 ? -1 : 0;
}

int db_notifications_list(sqlite3 *db, struct db_notification **out, size_t *nr)
{
	void *rows;
	int rc = step_rows(db, stmt(db, "SELECT " NOTIFICATION_COLUMNS " FROM notifications ORDER BY id", NULL),
			   notification_from_row, notification_release, sizeof(**out), &rows, nr,
			   "cannot list notifications");

	*out = rows;
	return rc;
}

int db_notifications_due(sqlite3 *db, int64_t now, int all, int64_t **ids, size_t *nr)
{
	return col_int64s(db, stmt(db, "SELECT id FROM notifications WHERE state = 'pending' "
				   "AND (?2 OR coalesce(next_try_at, 0) <= ?1) ORDER BY id",
				   ARGS(arg_int(now), arg_int(all != 0))),
			  ids, nr, "cannot read pending notifications");
}

int db_notification_attempt(sqlite3 *db, int64_t id, const char *state, int attempts, int64_t next_try_at,
			    const char *last_error)
{
	return step_done(db, stmt(db, "UPDATE notifications SET state = ?2, attempts = ?3, next_try_at = ?4, "
				 "last_error = ?5 WHERE id = ?1",
				 ARGS(arg_int(id), arg_text(state), arg_int(attempts), arg_id(next_try_at),
				      arg_text(last_error))),
			 "cannot record the delivery");
}
