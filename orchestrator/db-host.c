/* Hypervisors (klab host): registered hosts and the boots they ran. */
#include "db-int.h"

#include <stdlib.h>
#include <string.h>

void db_host_release(struct db_host *h)
{
	free(h->name);
	free(h->uri);
	free(h->cpus);
	free(h->accel);
	memset(h, 0, sizeof(*h));
}

void db_hosts_free(struct db_host *h, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		db_host_release(&h[i]);
	free(h);
}

#define HOST_COLUMNS "id, name, uri, cpus, max_guests, accel, created_at"

static void host_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_host *h = arg;

	h->id = sqlite3_column_int64(st, 0);
	h->name = col_strdup(st, 1);
	h->uri = col_strdup(st, 2);
	h->cpus = col_strdup(st, 3);
	h->max_guests = (unsigned)sqlite3_column_int(st, 4);
	h->accel = col_strdup(st, 5);
	h->created_at = sqlite3_column_int64(st, 6);
}

/* removed_at NULL: a host of that name is registered. */
static void row_live(sqlite3_stmt *st, void *live)
{
	*(int *)live = sqlite3_column_type(st, 0) == SQLITE_NULL;
}

int db_host_add(sqlite3 *db, const struct db_host *h, int64_t *id)
{
	sqlite3_stmt *st;
	int live = 0;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "SELECT removed_at FROM hosts WHERE name = ?1") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, h->name, -1, SQLITE_TRANSIENT);
	if (step_row(db, st, row_live, &live, "cannot look the host up") < 0)
		goto fail;
	if (live) {
		db_rollback(db);
		return error("host '%s' exists already ('klab host remove %s' first)", h->name, h->name);
	}
	/* the removed host's history stays under another name */
	if (prepare(db, &st, "UPDATE hosts SET name = name || '~' || id WHERE name = ?1 AND removed_at IS NOT NULL") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, h->name, -1, SQLITE_TRANSIENT);
	if (step_done(db, st, "cannot rename the removed host") < 0)
		goto fail;
	if (prepare(db, &st, "INSERT INTO hosts (name, uri, cpus, max_guests, accel, created_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, h->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, h->uri, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, h->cpus);
	sqlite3_bind_int(st, 4, (int)h->max_guests);
	sqlite3_bind_text(st, 5, h->accel ? h->accel : "auto", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, now_s());
	if (insert_returning(db, st, id, "cannot add the host") < 0)
		goto fail;
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

int db_hosts_list(sqlite3 *db, struct db_host **out, size_t *nr)
{
	sqlite3_stmt *st;
	void *rows;
	int rc;

	*out = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT " HOST_COLUMNS " FROM hosts WHERE removed_at IS NULL ORDER BY name") < 0)
		return -1;
	rc = step_rows(db, st, host_from_row, sizeof(**out), &rows, nr, "cannot list hosts");
	*out = rows;
	if (rc < 0) {
		db_hosts_free(*out, *nr);
		*out = NULL;
		*nr = 0;
	}
	return rc;
}

int db_host_find(sqlite3 *db, const char *name, struct db_host *h)
{
	sqlite3_stmt *st;

	memset(h, 0, sizeof(*h));
	if (prepare(db, &st, "SELECT " HOST_COLUMNS " FROM hosts WHERE name = ?1 AND removed_at IS NULL") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	return step_row(db, st, host_from_row, h, "cannot look the host up");
}

int db_host_remove(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE hosts SET removed_at = ?2 WHERE name = ?1 AND removed_at IS NULL") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, now_s());
	return step_changed(db, st, "cannot remove the host");
}

int db_host_boots(sqlite3 *db, int64_t host_id, int64_t *n)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "SELECT count(*) FROM boots WHERE host_id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, host_id);
	return step_int64(db, st, n, "cannot count the host's boots");
}

int db_bisection_host(sqlite3 *db, int64_t step_id, int64_t *host_id)
{
	sqlite3_stmt *st;

	*host_id = 0;
	if (prepare(db, &st, "SELECT b.host_id FROM boots b JOIN steps s ON s.id = b.step_id "
			     "WHERE s.bisection_id = (SELECT bisection_id FROM steps WHERE id = ?1) "
			     "AND b.host_id IS NOT NULL ORDER BY b.id DESC LIMIT 1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	return step_row(db, st, row_int64, host_id, "cannot read the bisection's host") < 0 ? -1 : 0;
}
