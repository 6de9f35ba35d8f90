/* What the db*.c files share and nothing else includes: the statement,
 * column and binding helpers.  Each reports its own error(). */
#ifndef KLAB_DB_INT_H
#define KLAB_DB_INT_H

#include "db.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Step a statement that changes rows (UPDATE, DELETE), then finalize it:
 * 1 when it changed any, 0 when none matched, -1 after db_fail. */
static inline int step_changed(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	if (step_done(db, st, what) < 0)
		return -1;
	return sqlite3_changes(db) > 0;
}

/* Step a query that yields at most one row, read(st, out) taking the
 * row when there is one, then finalize it.  1: a row, 0: none, -1 after
 * db_fail naming `what`. */
static inline int step_row(sqlite3 *db, sqlite3_stmt *st, void (*read)(sqlite3_stmt *, void *), void *out,
			   const char *what)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		read(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : db_fail(db, what);
}

/* A stored name's index in a vocabulary table (db.h's enums; a NULL
 * entry matches nothing), -1 when the table lacks it. */
static inline int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (names[i] && name && !strcmp(names[i], name))
			return i;
	return -1;
}

/* A step_row reader: the first column, an int64_t. */
static inline void row_int64(sqlite3_stmt *st, void *out)
{
	*(int64_t *)out = sqlite3_column_int64(st, 0);
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

/* A value that is negative when there is none (a timing not taken, no
 * exit code): NULL then. */
static inline void bind_nonneg_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* Step a query whose one row's first column is a number (a count) into
 * *out, then finalize it; no row is an error naming `what`. */
static inline int step_int64(sqlite3 *db, sqlite3_stmt *st, int64_t *out, const char *what)
{
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, what);
	}
	*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* The id of the row an INSERT ... RETURNING id made. */
static inline int insert_returning(sqlite3 *db, sqlite3_stmt *st, int64_t *id, const char *what)
{
	return step_int64(db, st, id, what);
}

/* col_doubles, col_int64s: step a query whose first column is a number,
 * collecting every row's into *vals (caller frees), then finalize it.
 * On an error nothing is kept and `what` names what could not be read. */
#define DEFINE_COL_NUMBERS(name, type, column)                                              \
	static inline int name(sqlite3 *db, sqlite3_stmt *st, type **vals, size_t *n, const char *what) \
	{                                                                                   \
		size_t alloc = 0;                                                           \
		int rc;                                                                     \
                                                                                            \
		*vals = NULL;                                                               \
		*n = 0;                                                                     \
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {                             \
			ALLOC_GROW(*vals, *n + 1, alloc);                                   \
			(*vals)[(*n)++] = column(st, 0);                                    \
		}                                                                           \
		sqlite3_finalize(st);                                                       \
		if (rc != SQLITE_DONE) {                                                    \
			free(*vals);                                                        \
			*vals = NULL;                                                       \
			*n = 0;                                                             \
			return db_fail(db, what);                                           \
		}                                                                           \
		return 0;                                                                   \
	}
DEFINE_COL_NUMBERS(col_doubles, double, sqlite3_column_double)
DEFINE_COL_NUMBERS(col_int64s, int64_t, sqlite3_column_int64)
#undef DEFINE_COL_NUMBERS

/* The same for a text column: every row's string (NULL for NULL) into
 * *vals, the strings and the array the caller's (strings_free). */
static inline int col_strings(sqlite3 *db, sqlite3_stmt *st, char ***vals, size_t *n, const char *what)
{
	size_t alloc = 0;
	int rc;

	*vals = NULL;
	*n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*vals, *n + 1, alloc);
		(*vals)[(*n)++] = col_strdup(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		strings_free(*vals, *n);
		*vals = NULL;
		*n = 0;
		return db_fail(db, what);
	}
	return 0;
}

/* Step a query of any number of rows, then finalize it: each row read by
 * read(st, row) into a zeroed row of `size` bytes, the array in *rows and
 * its length in *nr.  0, or -1 after db_fail naming `what` (the rows read
 * so far are in *rows, for the caller to free). */
static inline int step_rows(sqlite3 *db, sqlite3_stmt *st, void (*read)(sqlite3_stmt *, void *), size_t size,
			    void **rows, size_t *nr, const char *what)
{
	char *v = NULL;
	size_t alloc = 0;
	int rc;

	*nr = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(v, (*nr + 1) * size, alloc);
		memset(v + *nr * size, 0, size);
		read(st, v + (*nr)++ * size);
	}
	sqlite3_finalize(st);
	*rows = v;
	return rc == SQLITE_DONE ? 0 : db_fail(db, what);
}

/* The revert check's columns (migration 7's names, in that order: outcome,
 * commit, runs, median, cv, good and bad median, detail) from column
 * `col` on: 1 a check was stored, 0 none (NULL outcome), -1 an outcome
 * this klab does not know (bisection `id`'s, said). */
struct revert_check;
int col_revert(sqlite3_stmt *st, int col, struct revert_check *rc, int64_t id);

#endif
