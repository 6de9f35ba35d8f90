/* What the db*.c files share and nothing else includes: the statement,
 * column and binding helpers.  Each reports its own error(). */
#ifndef KLAB_DB_INT_H
#define KLAB_DB_INT_H

#include "lab/db.h"
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

/* A value bound to a statement's next parameter (?1, ?2, ... in order),
 * made by one of the arg_* functions so its C type is checked.  A list
 * of them is ARGS(...); NULL is no arguments. */
struct db_arg {
	enum { ARG_END, ARG_NULL, ARG_INT, ARG_REAL, ARG_TEXT, ARG_BLOB } type;
	union {
		int64_t i;
		double r;
		const char *s;
		const void *p;
	};
	size_t len;		/* a blob's */
};

#define ARGS(...) ((const struct db_arg[]){ __VA_ARGS__, { .type = ARG_END } })

static inline struct db_arg arg_null(void)
{
	return (struct db_arg){ .type = ARG_NULL };
}

static inline struct db_arg arg_int(int64_t v)
{
	return (struct db_arg){ .type = ARG_INT, .i = v };
}

static inline struct db_arg arg_real(double v)
{
	return (struct db_arg){ .type = ARG_REAL, .r = v };
}

/* NULL binds NULL, as sqlite3_bind_text does. */
static inline struct db_arg arg_text(const char *s)
{
	return s ? (struct db_arg){ .type = ARG_TEXT, .s = s } : arg_null();
}

static inline struct db_arg arg_blob(const void *p, size_t len)
{
	return (struct db_arg){ .type = ARG_BLOB, .p = p, .len = len };
}

/* A row id, NULL when there is none (0). */
static inline struct db_arg arg_id(int64_t id)
{
	return id > 0 ? arg_int(id) : arg_null();
}

/* A value that is negative when there is none (a timing not taken, no
 * exit code): NULL then. */
static inline struct db_arg arg_nonneg(int64_t v)
{
	return v >= 0 ? arg_int(v) : arg_null();
}

/* Bind args to ?1, ?2, ...; one beyond the statement's parameters is
 * left out (a statement that does not use the last ones). */
static inline void bind_args(sqlite3_stmt *st, const struct db_arg *args)
{
	int n = sqlite3_bind_parameter_count(st);

	for (int i = 1; args && args->type != ARG_END && i <= n; args++, i++) {
		if (args->type == ARG_INT)
			sqlite3_bind_int64(st, i, args->i);
		else if (args->type == ARG_REAL)
			sqlite3_bind_double(st, i, args->r);
		else if (args->type == ARG_TEXT)
			sqlite3_bind_text(st, i, args->s, -1, SQLITE_TRANSIENT);
		else if (args->type == ARG_BLOB)
			sqlite3_bind_blob(st, i, args->p, (int)args->len, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, i);
	}
}

/* A statement prepared from sql with args bound; NULL after db_fail.
 * Every step_* and col_* helper takes that NULL as the error it is
 * (-1, nothing more said), so a statement is made and run in one line:
 * return step_done(db, stmt(db, sql, ARGS(...)), "cannot ..."). */
static inline sqlite3_stmt *stmt(sqlite3 *db, const char *sql, const struct db_arg *args)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, sql) < 0)
		return NULL;
	bind_args(st, args);
	return st;
}

/* Step a statement that returns no rows, then finalize it. */
static inline int step_done(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);

	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, what);
	return 0;
}

/* Step a statement run once per item with args bound anew, then reset
 * it for the next; on an error it is finalized (-1 after db_fail). */
static inline int step_again(sqlite3 *db, sqlite3_stmt *st, const struct db_arg *args, const char *what)
{
	bind_args(st, args);
	if (sqlite3_step(st) != SQLITE_DONE) {
		int rc = db_fail(db, what);

		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_reset(st);
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
	int rc;

	if (!st)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : db_fail(db, what);
}

/* A step_row reader: the first column, a string the caller frees (NULL
 * for NULL). */
static inline void row_text(sqlite3_stmt *st, void *out)
{
	const unsigned char *t = sqlite3_column_text(st, 0);

	*(char **)out = t ? xstrdup((const char *)t) : NULL;
}

/* A step_row reader: the first column, an int64_t. */
static inline void row_int64(sqlite3_stmt *st, void *out)
{
	*(int64_t *)out = sqlite3_column_int64(st, 0);
}

/* A step_row reader: the first column, an int. */
static inline void row_int(sqlite3_stmt *st, void *out)
{
	*(int *)out = sqlite3_column_int(st, 0);
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

/* Where read_cols puts a column: COL(&field) picks how it is read by the
 * field's type (int64_t, int, unsigned, double; char * a copy of the
 * text, NULL for NULL; char[41] a commit's hex, "" for NULL). */
struct db_col {
	enum { COL_INT64, COL_INT, COL_UINT, COL_DOUBLE, COL_TEXT, COL_HEX } type;
	void *p;
};

#define COL(p)                                                                                        \
	((struct db_col){ _Generic((p), int64_t *: COL_INT64, int *: COL_INT, unsigned *: COL_UINT,   \
				   double *: COL_DOUBLE, char **: COL_TEXT, char(*)[41]: COL_HEX), (p) })

/* A row's columns first, first + 1, ... into the places COL(...) names,
 * in the order of the SELECT. */
#define READ_COLS(st, first, ...)                                                                     \
	read_cols((st), (first), (const struct db_col[]){ __VA_ARGS__ },                             \
		  ARRAY_SIZE(((const struct db_col[]){ __VA_ARGS__ })))

static inline void read_cols(sqlite3_stmt *st, int first, const struct db_col *c, size_t n)
{
	for (int i = first; n--; c++, i++) {
		if (c->type == COL_INT64)
			*(int64_t *)c->p = sqlite3_column_int64(st, i);
		else if (c->type == COL_INT)
			*(int *)c->p = sqlite3_column_int(st, i);
		else if (c->type == COL_UINT)
			*(unsigned *)c->p = (unsigned)sqlite3_column_int(st, i);
		else if (c->type == COL_DOUBLE)
			*(double *)c->p = sqlite3_column_double(st, i);
		else if (c->type == COL_TEXT)
			*(char **)c->p = col_strdup(st, i);
		else
			col_hex(st, i, c->p);
	}
}

/* A step_row or step_rows reader: the first column, a commit's hex
 * (char[41]; NULL as ""). */
static inline void row_hex(sqlite3_stmt *st, void *out)
{
	col_hex(st, 0, out);
}

/* Step a query whose one row's first column is a number (a count) into
 * *out, then finalize it; no row is an error naming `what`. */
static inline int step_int64(sqlite3 *db, sqlite3_stmt *st, int64_t *out, const char *what)
{
	if (!st)
		return -1;
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
		if (!st)                                                                    \
			return -1;                                                          \
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
	if (!st)
		return -1;
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

/* release(row) each of nr rows of `size` bytes (when there is anything
 * in a row to free), then free the array. */
static inline void rows_free(void *rows, size_t nr, size_t size, void (*release)(void *))
{
	for (size_t i = 0; release && i < nr; i++)
		release((char *)rows + i * size);
	free(rows);
}

/* Step a query of any number of rows, then finalize it: each row read by
 * read(st, row) into a zeroed row of `size` bytes, the array in *rows and
 * its length in *nr.  0, or -1 after db_fail naming `what`: then the rows
 * read so far are released (release(row) each, when there is anything
 * in a row to free) and freed, *rows NULL and *nr 0. */
static inline int step_rows(sqlite3 *db, sqlite3_stmt *st, void (*read)(sqlite3_stmt *, void *),
			    void (*release)(void *), size_t size, void **rows, size_t *nr, const char *what)
{
	char *v = NULL;
	size_t alloc = 0;
	int rc;

	*rows = NULL;
	*nr = 0;
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(v, (*nr + 1) * size, alloc);
		memset(v + *nr * size, 0, size);
		read(st, v + (*nr)++ * size);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		*rows = v;
		return 0;
	}
	rows_free(v, *nr, size, release);
	*nr = 0;
	return db_fail(db, what);
}

/* The revert check's columns (migration 7's names, in that order: outcome,
 * commit, runs, median, cv, good and bad median, detail) from column
 * `col` on: 1 a check was stored, 0 none (NULL outcome), -1 an outcome
 * this klab does not know (bisection `id`'s, said). */
struct revert_check;
int col_revert(sqlite3_stmt *st, int col, struct revert_check *rc, int64_t id);

#endif
