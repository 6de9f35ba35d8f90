/* Notifications: one row per mail or webhook, with its delivery
 * attempts. */
#include "db-int.h"

#include <stdlib.h>
#include <string.h>

void db_notification_release(struct db_notification *n)
{
	free(n->kind);
	free(n->target);
	free(n->subject);
	free(n->body);
	free(n->state);
	free(n->last_error);
	memset(n, 0, sizeof(*n));
}

void db_notifications_free(struct db_notification *n, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		db_notification_release(&n[i]);
	free(n);
}

int db_notification_add(sqlite3 *db, const char *kind, const char *target, const char *subject,
			const char *body, int64_t bisection_id, int64_t *id)
{
	sqlite3_stmt *st;
	int64_t now = now_s();

	if (prepare(db, &st, "INSERT INTO notifications (kind, target, subject, body, state, attempts, next_try_at, "
			     "bisection_id, created_at) VALUES (?1, ?2, ?3, ?4, 'pending', 0, ?5, ?6, ?5) "
			     "RETURNING id") < 0)
		return -1;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, target, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, subject);
	sqlite3_bind_text(st, 4, body, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now);
	bind_id_or_null(st, 6, bisection_id);
	return insert_returning(db, st, id, "cannot record the notification");
}

#define NOTIFICATION_COLUMNS "id, kind, target, subject, body, state, attempts, coalesce(next_try_at, 0), " \
	"last_error, coalesce(bisection_id, 0), created_at"

static void notification_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_notification *n = arg;

	n->id = sqlite3_column_int64(st, 0);
	n->kind = col_strdup(st, 1);
	n->target = col_strdup(st, 2);
	n->subject = col_strdup(st, 3);
	n->body = col_strdup(st, 4);
	n->state = col_strdup(st, 5);
	n->attempts = sqlite3_column_int(st, 6);
	n->next_try_at = sqlite3_column_int64(st, 7);
	n->last_error = col_strdup(st, 8);
	n->bisection_id = sqlite3_column_int64(st, 9);
	n->created_at = sqlite3_column_int64(st, 10);
}

int db_notification_load(sqlite3 *db, int64_t id, struct db_notification *n)
{
	sqlite3_stmt *st;
	int rc;

	memset(n, 0, sizeof(*n));
	if (prepare(db, &st, "SELECT " NOTIFICATION_COLUMNS " FROM notifications WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = step_row(db, st, notification_from_row, n, "cannot read the notification");
	if (rc == 0)
		return error("no notification %lld", (long long)id);
	return rc < 0 ? -1 : 0;
}

int db_notifications_list(sqlite3 *db, struct db_notification **out, size_t *nr)
{
	sqlite3_stmt *st;
	void *rows;
	int rc;

	*out = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT " NOTIFICATION_COLUMNS " FROM notifications ORDER BY id") < 0)
		return -1;
	rc = step_rows(db, st, notification_from_row, sizeof(**out), &rows, nr, "cannot list notifications");
	*out = rows;
	if (rc < 0) {
		db_notifications_free(*out, *nr);
		*out = NULL;
		*nr = 0;
	}
	return rc;
}

int db_notifications_due(sqlite3 *db, int64_t now, int all, int64_t **ids, size_t *nr)
{
	sqlite3_stmt *st;

	*ids = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT id FROM notifications WHERE state = 'pending' "
			     "AND (?2 OR coalesce(next_try_at, 0) <= ?1) ORDER BY id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int(st, 2, all != 0);
	return col_int64s(db, st, ids, nr, "cannot read pending notifications");
}

int db_notification_attempt(sqlite3 *db, int64_t id, const char *state, int attempts, int64_t next_try_at,
			    const char *last_error)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE notifications SET state = ?2, attempts = ?3, next_try_at = ?4, "
			     "last_error = ?5 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, state, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, attempts);
	bind_id_or_null(st, 4, next_try_at);
	bind_text_or_null(st, 5, last_error);
	return step_done(db, st, "cannot record the delivery");
}
