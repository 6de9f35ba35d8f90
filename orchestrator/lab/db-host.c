/* Hypervisors (klab host): registered hosts and the boots they ran. */
#include "lab/db-int.h"

#include <stdlib.h>
#include <string.h>

void db_host_release(struct db_host *h)
{
	FREE_MANY(h->name, h->uri, h->cpus, h->accel);
	memset(h, 0, sizeof(*h));
}

static void host_release(void *h)
{
	db_host_release(h);
}

void db_hosts_free(struct db_host *h, size_t nr)
{
	rows_free(h, nr, sizeof(*h), host_release);
}

#define HOST_COLUMNS "id, name, uri, cpus, max_guests, accel, created_at"

static void host_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_host *h = arg;

	READ_COLS(st, 0, COL(&h->id), COL(&h->name), COL(&h->uri), COL(&h->cpus), COL(&h->max_guests), COL(&h->accel),
		  COL(&h->created_at));
}

/* removed_at NULL: a host of that name is registered. */
static void row_live(sqlite3_stmt *st, void *live)
{
	*(int *)live = sqlite3_column_type(st, 0) == SQLITE_NULL;
}

int db_host_add(sqlite3 *db, const struct db_host *h, int64_t *id)
{
	int live = 0;

	if (db_begin(db) < 0)
		return -1;
	if (step_row(db, stmt(db, "SELECT removed_at FROM hosts WHERE name = ?1", ARGS(arg_text(h->name))), row_live,
		     &live, "cannot look the host up") < 0)
		goto fail;
	if (live) {
		db_rollback(db);
		return error("host '%s' exists already ('klab host remove %s' first)", h->name, h->name);
	}
	/* the removed host's history stays under another name */
	if (step_done(db, stmt(db, "UPDATE hosts SET name = name || '~' || id WHERE name = ?1 AND removed_at IS NOT NULL",
			       ARGS(arg_text(h->name))),
		      "cannot rename the removed host") < 0 ||
	    insert_returning(db, stmt(db, "INSERT INTO hosts (name, uri, cpus, max_guests, accel, created_at) "
				      "VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
				      ARGS(arg_text(h->name), arg_text(h->uri), arg_text(h->cpus),
					   arg_int((int)h->max_guests), arg_text(h->accel ? h->accel : "auto"),
					   arg_int(now_s()))),
			     id, "cannot add the host") < 0)
		goto fail;
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

int db_hosts_list(sqlite3 *db, struct db_host **out, size_t *nr)
{
	void *rows;
	int rc = step_rows(db, stmt(db, "SELECT " HOST_COLUMNS " FROM hosts WHERE removed_at IS NULL ORDER BY name",
				    NULL),
			   host_from_row, host_release, sizeof(**out), &rows, nr, "cannot list hosts");

	*out = rows;
	return rc;
}

int db_host_find(sqlite3 *db, const char *name, struct db_host *h)
{
	memset(h, 0, sizeof(*h));
	return step_row(db, stmt(db, "SELECT " HOST_COLUMNS " FROM hosts WHERE name = ?1 AND removed_at IS NULL",
				 ARGS(arg_text(name))),
			host_from_row, h, "cannot look the host up");
}

int db_host_remove(sqlite3 *db, const char *name)
{
	return step_changed(db, stmt(db, "UPDATE hosts SET removed_at = ?2 WHERE name = ?1 AND removed_at IS NULL",
				    ARGS(arg_text(name), arg_int(now_s()))),
			    "cannot remove the host");
}

int db_host_boots(sqlite3 *db, int64_t host_id, int64_t *n)
{
	return step_int64(db, stmt(db, "SELECT count(*) FROM boots WHERE host_id = ?1", ARGS(arg_int(host_id))), n,
			  "cannot count the host's boots");
}

int db_bisection_host_fingerprint(sqlite3 *db, int64_t step_id, int64_t host_id, char **fingerprint)
{
	*fingerprint = NULL;
	return step_row(db, stmt(db, "SELECT b.fingerprint FROM boots b JOIN steps s ON s.id = b.step_id "
				 "WHERE s.bisection_id = (SELECT bisection_id FROM steps WHERE id = ?1) "
				 "AND b.host_id = ?2 AND b.fingerprint IS NOT NULL ORDER BY b.id DESC LIMIT 1",
				 ARGS(arg_int(step_id), arg_int(host_id))),
			row_text, fingerprint, "cannot read the bisection's host fingerprint") < 0 ? -1 : 0;
}

int db_bisection_host(sqlite3 *db, int64_t step_id, int64_t *host_id)
{
	*host_id = 0;
	return step_row(db, stmt(db, "SELECT b.host_id FROM boots b JOIN steps s ON s.id = b.step_id "
				 "WHERE s.bisection_id = (SELECT bisection_id FROM steps WHERE id = ?1) "
				 "AND b.host_id IS NOT NULL ORDER BY b.id DESC LIMIT 1",
				 ARGS(arg_int(step_id))),
			row_int64, host_id, "cannot read the bisection's host") < 0 ? -1 : 0;
}
