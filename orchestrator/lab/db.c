/* The lab database itself: open, migrate by user_version, transactions.
 * The statements of each table family are in db-<family>.c (db-int.h has
 * their shared helpers); all bind every value (no string-built SQL) and
 * report their own error, returning -1. */
#include "lab/db-int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/strbuf.h"
#include <sys/stat.h>

extern const char klab_schema_sql[];
extern const char klab_migration_2_sql[];
extern const char klab_migration_3_sql[];
extern const char klab_migration_4_sql[];
extern const char klab_migration_5_sql[];
extern const char klab_migration_6_sql[];
extern const char klab_migration_7_sql[];
extern const char klab_migration_8_sql[];
extern const char klab_migration_9_sql[];
extern const char klab_migration_10_sql[];
extern const char klab_migration_11_sql[];
extern const char klab_migration_12_sql[];
extern const char klab_migration_13_sql[];
extern const char klab_migration_14_sql[];

/* Migration n brings the database from user_version n-1 to n.  A NULL
 * entry is a number taken by a migration not in this klab yet (another
 * line of work numbered it): it is skipped, the version counted. */
static const char *const migrations[] = {
	klab_schema_sql,
	klab_migration_2_sql,
	klab_migration_3_sql,
	klab_migration_4_sql,
	klab_migration_5_sql,
	klab_migration_6_sql,
	klab_migration_7_sql,
	klab_migration_8_sql,
	klab_migration_9_sql,
	klab_migration_10_sql,
	klab_migration_11_sql,
	klab_migration_12_sql,
	klab_migration_13_sql,
	klab_migration_14_sql,
};

int db_schema_version(void)
{
	return (int)ARRAY_SIZE(migrations);
}

static int user_version(sqlite3 *db, int *v)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "PRAGMA user_version") < 0)
		return -1;
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, "cannot read schema version");
	}
	*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return 0;
}

/* Versions 0 (nothing yet) to the newest are the ones this klab can
 * migrate from or use; any other is refused before migrations[] is
 * indexed with it. */
static int known_version(const char *path, int v)
{
	if (v < 0)
		return error("database '%s' has schema version %d, which no klab writes: it was changed by hand "
			     "or is damaged; restore it", path, v);
	if (v > db_schema_version())
		return error("database '%s' has schema version %d, newer than this klab knows (%d): it was made "
			     "by a newer klab; upgrade klab", path, v, db_schema_version());
	return 0;
}

static int migrate(sqlite3 *db, const char *path)
{
	int v;

	if (user_version(db, &v) < 0 || known_version(path, v) < 0)
		return -1;
	while (v < db_schema_version()) {
		char pragma[64];

		/* BEGIN IMMEDIATE: two processes never migrate at once. */
		if (exec(db, "BEGIN IMMEDIATE") < 0)
			return -1;
		if (user_version(db, &v) < 0 || known_version(path, v) < 0) {
			db_rollback(db);
			return -1;
		}
		if (v >= db_schema_version()) {
			db_rollback(db);
			break;
		}
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if ((migrations[v] && exec(db, migrations[v]) < 0) || exec(db, pragma) < 0) {
			db_rollback(db);
			return error("database migration to version %d failed", v + 1);
		}
		if (exec(db, "COMMIT") < 0)
			return -1;
		v++;
	}
	return 0;
}

/* What an existing file holds, read before anything is written to it:
 * a database klab made, of a version it knows.  Only a file that did not
 * exist may start empty: a lost lab database silently re-created would
 * hand out the numbers and log directories of the bisections it had. */
static int check_existing(sqlite3 *db, const char *path, long long size)
{
	sqlite3_stmt *st = NULL;
	int rc, pages = 0, v = 0;

	rc = sqlite3_prepare_v2(db, "SELECT * FROM pragma_page_count, pragma_user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		pages = sqlite3_column_int(st, 0);
		v = sqlite3_column_int(st, 1);
	}
	sqlite3_finalize(st);
	if ((rc & 0xff) == SQLITE_NOTADB)
		return error("database '%s' is not a SQLite database (%lld bytes): it was not created by klab init, "
			     "or is damaged; restore it or remove the lab", path, size);
	if (rc != SQLITE_ROW)
		return error("cannot read database '%s': %s", path, sqlite3_errmsg(db));
	if (!pages)
		return error("database '%s' is empty (%lld bytes): it was not created by klab init, or was "
			     "truncated; restore it or remove the lab", path, size);
	if (!v)
		return error("database '%s' has no klab schema (schema version 0): it was not created by klab "
			     "init; restore it or remove the lab", path);
	return known_version(path, v);
}

int db_open(sqlite3 **out, const char *path, int create)
{
	sqlite3 *db = NULL;
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
	struct stat sb = { 0 };
	int fresh = stat(path, &sb) < 0 && errno == ENOENT;

	*out = NULL;
	if (fresh && !create)
		return error("database '%s' does not exist", path);
	if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
		error("cannot open database '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	/* a lab has many klab processes (workers, submits, reports): wait
	 * for the one writer rather than fail, up to two minutes */
	sqlite3_busy_timeout(db, 120000);
	sqlite3_extended_result_codes(db, 1);
	if ((!fresh && check_existing(db, path, (long long)sb.st_size) < 0) ||
	    exec(db, "PRAGMA journal_mode = WAL") < 0 ||
	    exec(db, "PRAGMA synchronous = NORMAL") < 0 ||
	    exec(db, "PRAGMA foreign_keys = ON") < 0 ||
	    migrate(db, path) < 0) {
		sqlite3_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

/* "file:PATH?QUERY" with the characters a URI path cannot hold escaped. */
static char *db_uri(const char *path, const char *query)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (isalnum(*p) || strchr("/-._~", *p))
			strbuf_addch(&sb, (char)*p);
		else
			strbuf_addf(&sb, "%%%02X", *p);
	}
	strbuf_addf(&sb, "?%s", query);
	return strbuf_detach(&sb, NULL);
}

static int open_ro_uri(sqlite3 **out, const char *path, const char *query, int *v)
{
	char *uri = db_uri(path, query);
	sqlite3_stmt *st;
	int rc = sqlite3_open_v2(uri, out, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX, NULL);

	free(uri);
	if (rc != SQLITE_OK)
		return -1;
	sqlite3_busy_timeout(*out, 120000);
	sqlite3_extended_result_codes(*out, 1);
	/* the first read is where a missing -shm or -wal shows; quietly,
	 * the caller may try another way */
	if (sqlite3_prepare_v2(*out, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

int db_open_ro(sqlite3 **out, const char *path)
{
	char *wal = xstrfmt("%s-wal", path);
	struct stat st;
	sqlite3 *db = NULL;
	int v = 0, wal_empty;

	*out = NULL;
	/* mode=ro reads a WAL another klab may be writing, but needs the
	 * -shm to exist or be creatable; immutable=1 needs neither, and is
	 * right only when no WAL holds pages the database file lacks */
	wal_empty = stat(wal, &st) != 0 || st.st_size == 0;
	if (open_ro_uri(&db, path, "mode=ro", &v) < 0) {
		if (!wal_empty) {
			error("cannot open database '%s' read-only: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
			goto fail;
		}
		sqlite3_close(db);
		db = NULL;
		if (open_ro_uri(&db, path, "immutable=1", &v) < 0) {
			error("cannot open database '%s' read-only: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
			goto fail;
		}
	}
	if (v <= 0) {
		error("database '%s' has no klab schema (schema version %d): it is empty, damaged or not made "
		      "by klab init; restore it", path, v);
		goto fail;
	}
	if (v != db_schema_version()) {
		error("database '%s' has schema version %d and this klab reads %d: %s", path, v, db_schema_version(),
		      v > db_schema_version() ? "upgrade klab" : "run a klab command on a writable lab once to migrate it");
		goto fail;
	}
	if (exec(db, "PRAGMA query_only = 1") < 0)
		goto fail;
	free(wal);
	*out = db;
	return 0;
fail:
	free(wal);
	sqlite3_close(db);
	return -1;
}

void db_close(sqlite3 *db)
{
	if (db)
		sqlite3_close(db);
}

int db_begin(sqlite3 *db)
{
	return exec(db, "BEGIN IMMEDIATE");
}

int db_commit(sqlite3 *db)
{
	return exec(db, "COMMIT");
}

void db_rollback(sqlite3 *db)
{
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}
