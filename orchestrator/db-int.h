/* What the db*.c files share and nothing else includes: the statement,
 * column and binding helpers.  Each reports its own error(). */
#ifndef KLAB_DB_INT_H
#define KLAB_DB_INT_H

#include "db.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>

static inline int db_fail(sqlite3 *db, const char *what)
{
	return error("database: %s: %s", what, sqlite3_errmsg(db));
}

static inline int exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error("database: %s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static inline int prepare(sqlite3 *db, sqlite3_stmt **st, const char *sql)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
		return db_fail(db, "cannot prepare statement");
	return 0;
}

/* Step a statement that returns no rows, then finalize it. */
static inline int step_done(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, what);
	return 0;
}

/* One row's UPDATE by `sql`: ?1 its id, ?2 a text, ?3 now. */
static inline int update_text_now(sqlite3 *db, const char *sql, int64_t id, const char *text, const char *what)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, sql) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, now_s());
	return step_done(db, st, what);
}

static inline char *col_strdup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? xstrdup((const char *)t) : NULL;
}

static inline void col_hex(sqlite3_stmt *st, int col, char out[41])
{
	const unsigned char *t = sqlite3_column_text(st, col);
	snprintf(out, 41, "%s", t ? (const char *)t : "");
}

static inline void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static inline void bind_id_or_null(sqlite3_stmt *st, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

static inline void bind_ms_or_null(sqlite3_stmt *st, int i, int64_t ms)
{
	if (ms >= 0)
		sqlite3_bind_int64(st, i, ms);
	else
		sqlite3_bind_null(st, i);
}

static inline int insert_returning(sqlite3 *db, sqlite3_stmt *st, int64_t *id, const char *what)
{
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, what);
	}
	*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* Step a query whose first column is a number, collecting every row's
 * into *vals (caller frees), then finalize it.  On an error nothing is
 * kept and `what` names what could not be read. */
static inline int col_doubles(sqlite3 *db, sqlite3_stmt *st, double **vals, size_t *n, const char *what)
{
	size_t alloc = 0;
	int rc;

	*vals = NULL;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*vals, *n + 1, alloc);
		(*vals)[(*n)++] = sqlite3_column_double(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*vals);
		*vals = NULL;
		*n = 0;
		return db_fail(db, what);
	}
	return 0;
}

#endif
