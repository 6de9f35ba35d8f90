/* All of klab's SQL.  Statements bind every value (no string-built SQL);
 * each function reports its own error and returns -1. */
#include "db.h"
#include "gitrepo.h"
#include "report.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "util/run-command.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

extern const char klab_schema_sql[];
extern const char klab_migration_2_sql[];
extern const char klab_migration_3_sql[];
extern const char klab_migration_4_sql[];
extern const char klab_migration_5_sql[];

/* Migration n brings the database from user_version n-1 to n. */
static const char *const migrations[] = {
	klab_schema_sql,
	klab_migration_2_sql,
	klab_migration_3_sql,
	klab_migration_4_sql,
	klab_migration_5_sql,
};

int db_schema_version(void)
{
	return (int)ARRAY_SIZE(migrations);
}

static int db_fail(sqlite3 *db, const char *what)
{
	return error("database: %s: %s", what, sqlite3_errmsg(db));
}

static int exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		error("database: %s", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int prepare(sqlite3 *db, sqlite3_stmt **st, const char *sql)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK)
		return db_fail(db, "cannot prepare statement");
	return 0;
}

/* Step a statement that returns no rows, then finalize it. */
static int step_done(sqlite3 *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, what);
	return 0;
}

static char *col_strdup(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? xstrdup((const char *)t) : NULL;
}

static void col_hex(sqlite3_stmt *st, int col, char out[41])
{
	const unsigned char *t = sqlite3_column_text(st, col);
	snprintf(out, 41, "%s", t ? (const char *)t : "");
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

static int migrate(sqlite3 *db)
{
	int v;

	if (user_version(db, &v) < 0)
		return -1;
	if (v > db_schema_version())
		return error("database schema version %d is newer than this klab knows (%d): upgrade klab",
			     v, db_schema_version());
	while (v < db_schema_version()) {
		char pragma[64];

		/* BEGIN IMMEDIATE: two processes never migrate at once. */
		if (exec(db, "BEGIN IMMEDIATE") < 0)
			return -1;
		if (user_version(db, &v) < 0) {
			db_rollback(db);
			return -1;
		}
		if (v >= db_schema_version()) {
			db_rollback(db);
			break;
		}
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", v + 1);
		if (exec(db, migrations[v]) < 0 || exec(db, pragma) < 0) {
			db_rollback(db);
			return error("database migration to version %d failed", v + 1);
		}
		if (exec(db, "COMMIT") < 0)
			return -1;
		v++;
	}
	return 0;
}

int db_open(sqlite3 **out, const char *path, int create)
{
	sqlite3 *db = NULL;
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (create ? SQLITE_OPEN_CREATE : 0);

	*out = NULL;
	if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
		error("cannot open database '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	/* a lab has many klab processes (workers, submits, reports): wait
	 * for the one writer rather than fail, up to two minutes */
	sqlite3_busy_timeout(db, 120000);
	sqlite3_extended_result_codes(db, 1);
	if (exec(db, "PRAGMA journal_mode = WAL") < 0 ||
	    exec(db, "PRAGMA synchronous = NORMAL") < 0 ||
	    exec(db, "PRAGMA foreign_keys = ON") < 0 ||
	    migrate(db) < 0) {
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

static int repo_lookup(sqlite3 *db, const char *path, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	if (prepare(db, &st, "SELECT id FROM repos WHERE path = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, "cannot read repositories");
	return rc == SQLITE_ROW;
}

int db_repo_id(sqlite3 *db, const char *path, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	/* a known repository costs no write (many klab processes at once
	 * queue for the one writer) */
	rc = repo_lookup(db, path, id);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (prepare(db, &st, "INSERT INTO repos (path, created_at) VALUES (?1, ?2) "
			     "ON CONFLICT (path) DO NOTHING") < 0)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, now_s());
	if (step_done(db, st, "cannot record repository") < 0)
		return -1;
	rc = repo_lookup(db, path, id);
	if (rc == 0)
		return error("database: repository '%s' vanished after it was recorded", path);
	return rc < 0 ? -1 : 0;
}

int db_commit_store(sqlite3 *db, int64_t repo_id, const struct commit_info *ci)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO commits (repo_id, hash, tree, subject, author, author_time, commit_time) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (repo_id, hash) DO NOTHING") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_text(st, 2, ci->hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, ci->tree, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, ci->subject, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, ci->author, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, ci->author_time);
	sqlite3_bind_int64(st, 7, ci->commit_time);
	return step_done(db, st, "cannot record commit");
}

char *db_commit_subject(sqlite3 *db, int64_t repo_id, const char *hash)
{
	sqlite3_stmt *st;
	char *s = NULL;

	if (prepare(db, &st, "SELECT subject FROM commits WHERE repo_id = ?1 AND hash = ?2") < 0)
		return NULL;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_text(st, 2, hash, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		s = col_strdup(st, 0);
	sqlite3_finalize(st);
	return s;
}

int db_bisection_create(sqlite3 *db, struct bisection *b)
{
	sqlite3_stmt *st;

	/* inside the caller's transaction when there is one (queued
	 * bisections are created and queued at once) */
	int own = sqlite3_get_autocommit(db);

	if (own && db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "INSERT INTO bisections (repo_id, kind, state, bad, first_parent, timeout_ms, created_at, "
			     "build, config, job_path, job_text, kpi) "
			     "VALUES (?1, ?8, 'created', ?2, ?3, ?4, ?5, ?6, ?7, ?9, ?10, ?11)") < 0)
		goto fail;
	sqlite3_bind_int(st, 6, b->build);
	sqlite3_bind_text(st, 7, b->config, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 8, b->job_path ? "job" : "command", -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, b->job_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 10, b->job_text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 11, b->kpi, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 1, b->repo_id);
	sqlite3_bind_text(st, 2, b->bad, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 3, b->first_parent);
	sqlite3_bind_int64(st, 4, b->timeout_ms);
	sqlite3_bind_int64(st, 5, now_s());
	if (step_done(db, st, "cannot create bisection") < 0)
		goto fail;
	b->id = sqlite3_last_insert_rowid(db);
	for (size_t i = 0; i < b->nr_goods; i++) {
		if (prepare(db, &st, "INSERT OR IGNORE INTO bisection_goods (bisection_id, hash) VALUES (?1, ?2)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, b->id);
		sqlite3_bind_text(st, 2, b->goods[i], -1, SQLITE_TRANSIENT);
		if (step_done(db, st, "cannot record good revision") < 0)
			goto fail;
	}
	for (size_t i = 0; i < b->nr_paths; i++) {
		if (prepare(db, &st, "INSERT INTO bisection_paths (bisection_id, idx, path) VALUES (?1, ?2, ?3)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, b->id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_text(st, 3, b->paths[i], -1, SQLITE_TRANSIENT);
		if (step_done(db, st, "cannot record path") < 0)
			goto fail;
	}
	for (size_t i = 0; i < b->argc; i++) {
		if (prepare(db, &st, "INSERT INTO bisection_argv (bisection_id, idx, arg) VALUES (?1, ?2, ?3)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, b->id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_text(st, 3, b->argv[i], -1, SQLITE_TRANSIENT);
		if (step_done(db, st, "cannot record command") < 0)
			goto fail;
	}
	return own ? db_commit(db) : 0;
fail:
	if (own)
		db_rollback(db);
	return -1;
}

void bisection_release(struct bisection *b)
{
	free(b->repo_path);
	free(b->kind);
	free(b->state);
	free(b->result);
	free(b->culprit);
	free(b->message);
	free(b->config);
	free(b->job_path);
	free(b->job_text);
	free(b->kpi);
	free(b->goods);
	for (size_t i = 0; i < b->nr_paths; i++)
		free(b->paths[i]);
	free(b->paths);
	for (size_t i = 0; i < b->argc; i++)
		free(b->argv[i]);
	free(b->argv);
	free(b->candidates);
	memset(b, 0, sizeof(*b));
}

int db_bisection_load(sqlite3 *db, int64_t id, struct bisection *b)
{
	sqlite3_stmt *st;
	size_t alloc;
	int rc;

	memset(b, 0, sizeof(*b));
	if (prepare(db, &st, "SELECT b.id, b.repo_id, r.path, b.kind, b.state, b.result, b.bad, b.first_parent, "
			     "b.timeout_ms, b.culprit, b.message, b.created_at, b.started_at, b.finished_at, "
			     "b.build, b.config, b.job_path, b.job_text, b.kpi "
			     "FROM bisections b JOIN repos r ON r.id = b.repo_id WHERE b.id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE)
			return error("no bisection %lld (see 'klab bisect list')", (long long)id);
		return db_fail(db, "cannot read bisection");
	}
	b->id = sqlite3_column_int64(st, 0);
	b->repo_id = sqlite3_column_int64(st, 1);
	b->repo_path = col_strdup(st, 2);
	b->kind = col_strdup(st, 3);
	b->state = col_strdup(st, 4);
	b->result = col_strdup(st, 5);
	col_hex(st, 6, b->bad);
	b->first_parent = sqlite3_column_int(st, 7);
	b->timeout_ms = sqlite3_column_int64(st, 8);
	b->culprit = col_strdup(st, 9);
	b->message = col_strdup(st, 10);
	b->created_at = sqlite3_column_int64(st, 11);
	b->started_at = sqlite3_column_int64(st, 12);
	b->finished_at = sqlite3_column_int64(st, 13);
	b->build = sqlite3_column_int(st, 14);
	b->config = col_strdup(st, 15);
	b->job_path = col_strdup(st, 16);
	b->job_text = col_strdup(st, 17);
	b->kpi = col_strdup(st, 18);
	sqlite3_finalize(st);

	alloc = 0;
	if (prepare(db, &st, "SELECT hash FROM bisection_goods WHERE bisection_id = ?1 ORDER BY rowid") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(b->goods, b->nr_goods + 1, alloc);
		col_hex(st, 0, b->goods[b->nr_goods++]);
	}
	sqlite3_finalize(st);

	alloc = 0;
	if (prepare(db, &st, "SELECT path FROM bisection_paths WHERE bisection_id = ?1 ORDER BY idx") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(b->paths, b->nr_paths + 1, alloc);
		b->paths[b->nr_paths++] = col_strdup(st, 0);
	}
	sqlite3_finalize(st);

	alloc = 0;
	if (prepare(db, &st, "SELECT arg FROM bisection_argv WHERE bisection_id = ?1 ORDER BY idx") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(b->argv, b->argc + 2, alloc);
		b->argv[b->argc++] = col_strdup(st, 0);
	}
	sqlite3_finalize(st);
	ALLOC_GROW(b->argv, b->argc + 1, alloc);
	b->argv[b->argc] = NULL;

	alloc = 0;
	if (prepare(db, &st, "SELECT hash FROM bisection_candidates WHERE bisection_id = ?1 ORDER BY rowid") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(b->candidates, b->nr_candidates + 1, alloc);
		col_hex(st, 0, b->candidates[b->nr_candidates++]);
	}
	sqlite3_finalize(st);
	return 0;
fail:
	bisection_release(b);
	return -1;
}

int db_bisection_ids(sqlite3 *db, int64_t **ids, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;

	*ids = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT id FROM bisections ORDER BY id") < 0)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		ALLOC_GROW(*ids, *nr + 1, alloc);
		(*ids)[(*nr)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return 0;
}

int db_bisection_set_state(sqlite3 *db, int64_t id, const char *state, const char *result,
			   const char *culprit, const char *message)
{
	sqlite3_stmt *st;
	int finished = !strcmp(state, "done") || !strcmp(state, "failed");

	if (prepare(db, &st, "UPDATE bisections SET state = ?2, result = ?3, culprit = ?4, message = ?5, "
			     "started_at = CASE WHEN ?2 = 'running' THEN coalesce(started_at, ?6) ELSE started_at END, "
			     "finished_at = CASE WHEN ?7 THEN ?6 ELSE NULL END WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, state, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, result, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, culprit, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, message, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, now_s());
	sqlite3_bind_int(st, 7, finished);
	return step_done(db, st, "cannot update bisection");
}

int db_bisection_set_candidates(sqlite3 *db, int64_t id, char (*hashes)[41], size_t nr)
{
	sqlite3_stmt *st;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "DELETE FROM bisection_candidates WHERE bisection_id = ?1") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, id);
	if (step_done(db, st, "cannot clear candidates") < 0)
		goto fail;
	for (size_t i = 0; i < nr; i++) {
		if (prepare(db, &st, "INSERT OR IGNORE INTO bisection_candidates (bisection_id, hash) VALUES (?1, ?2)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, hashes[i], -1, SQLITE_TRANSIENT);
		if (step_done(db, st, "cannot record candidate") < 0)
			goto fail;
	}
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

static void step_release(struct step *s)
{
	free(s->phase);
	free(s->status);
	free(s->verdict);
	free(s->reason);
	free(s->log_path);
	free(s->subject);
}

void steps_release(struct step *steps, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		step_release(&steps[i]);
	free(steps);
}

int db_steps_load(sqlite3 *db, int64_t bisection_id, struct step **steps, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;

	*steps = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT s.id, s.seq, s.hash, s.phase, s.status, s.verdict, s.reason, "
			     "coalesce(s.exit_code, -1), s.attempts, coalesce(s.remaining, -1), s.log_path, "
			     "coalesce(s.choose_ms, 0), coalesce(s.checkout_ms, 0), coalesce(s.test_ms, 0), "
			     "s.started_at, coalesce(s.finished_at, 0), c.subject "
			     "FROM steps s JOIN bisections b ON b.id = s.bisection_id "
			     "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = s.hash "
			     "WHERE s.bisection_id = ?1 ORDER BY s.seq") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, bisection_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		struct step *s;

		ALLOC_GROW(*steps, *nr + 1, alloc);
		s = &(*steps)[(*nr)++];
		memset(s, 0, sizeof(*s));
		s->id = sqlite3_column_int64(st, 0);
		s->seq = sqlite3_column_int(st, 1);
		col_hex(st, 2, s->hash);
		s->phase = col_strdup(st, 3);
		s->status = col_strdup(st, 4);
		s->verdict = col_strdup(st, 5);
		s->reason = col_strdup(st, 6);
		s->exit_code = sqlite3_column_int(st, 7);
		s->attempts = sqlite3_column_int(st, 8);
		s->remaining = sqlite3_column_int(st, 9);
		s->log_path = col_strdup(st, 10);
		s->choose_ms = sqlite3_column_int64(st, 11);
		s->checkout_ms = sqlite3_column_int64(st, 12);
		s->test_ms = sqlite3_column_int64(st, 13);
		s->started_at = sqlite3_column_int64(st, 14);
		s->finished_at = sqlite3_column_int64(st, 15);
		s->subject = col_strdup(st, 16);
	}
	sqlite3_finalize(st);
	return 0;
}

int db_step_begin(sqlite3 *db, int64_t bisection_id, struct step *s)
{
	sqlite3_stmt *st;
	int64_t existing = 0;
	int seq = 0, attempts = 0;

	if (db_begin(db) < 0)
		return -1;
	/* An unfinished row for the same commit is the same step retried. */
	if (prepare(db, &st, "SELECT id, seq, attempts FROM steps WHERE bisection_id = ?1 AND hash = ?2 "
			     "AND status != 'done' AND phase = ?3 ORDER BY seq DESC LIMIT 1") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, bisection_id);
	sqlite3_bind_text(st, 2, s->hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, s->phase, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		existing = sqlite3_column_int64(st, 0);
		seq = sqlite3_column_int(st, 1);
		attempts = sqlite3_column_int(st, 2);
	}
	sqlite3_finalize(st);
	if (existing) {
		if (prepare(db, &st, "UPDATE steps SET status = 'running', attempts = attempts + 1, "
				     "remaining = ?2, log_path = ?3, started_at = ?4, reason = NULL WHERE id = ?1") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, existing);
		sqlite3_bind_int(st, 2, s->remaining);
		sqlite3_bind_text(st, 3, s->log_path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, now_s());
		if (step_done(db, st, "cannot restart step") < 0)
			goto fail;
		s->id = existing;
		s->seq = seq;
		s->attempts = attempts + 1;
	} else {
		/* Any other unfinished bisect row was a commit we no longer test
		 * (reference and confirm steps come in pairs, both running).
		 * One that already has boots keeps them, marked aborted. */
		if (prepare(db, &st, "UPDATE steps SET status = 'aborted' WHERE bisection_id = ?1 AND status = 'running' "
				     "AND phase IN ('bisect', 'merge-base') "
				     "AND EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, bisection_id);
		if (step_done(db, st, "cannot drop stale step") < 0)
			goto fail;
		if (prepare(db, &st, "DELETE FROM steps WHERE bisection_id = ?1 AND status != 'done' "
				     "AND phase IN ('bisect', 'merge-base') "
				     "AND NOT EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, bisection_id);
		if (step_done(db, st, "cannot drop stale step") < 0)
			goto fail;
		if (prepare(db, &st, "INSERT INTO steps (bisection_id, seq, hash, phase, status, remaining, log_path, "
				     "started_at) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM steps "
				     "WHERE bisection_id = ?1), ?2, ?3, 'running', ?4, ?5, ?6)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, bisection_id);
		sqlite3_bind_text(st, 2, s->hash, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, s->phase, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 4, s->remaining);
		sqlite3_bind_text(st, 5, s->log_path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 6, now_s());
		if (step_done(db, st, "cannot record step") < 0)
			goto fail;
		s->id = sqlite3_last_insert_rowid(db);
		if (prepare(db, &st, "SELECT seq FROM steps WHERE id = ?1") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, s->id);
		if (sqlite3_step(st) == SQLITE_ROW)
			s->seq = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		s->attempts = 1;
	}
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

int db_step_finish(sqlite3 *db, const struct step *s)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE steps SET status = 'done', verdict = ?2, reason = ?3, exit_code = ?4, "
			     "choose_ms = ?5, checkout_ms = ?6, test_ms = ?7, finished_at = ?8 "
			     "WHERE id = ?1 AND status = 'running'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_text(st, 2, s->verdict, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, s->reason, -1, SQLITE_TRANSIENT);
	if (s->exit_code >= 0)
		sqlite3_bind_int(st, 4, s->exit_code);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, s->choose_ms);
	sqlite3_bind_int64(st, 6, s->checkout_ms);
	sqlite3_bind_int64(st, 7, s->test_ms);
	sqlite3_bind_int64(st, 8, now_s());
	if (step_done(db, st, "cannot record step result") < 0)
		return -1;
	if (sqlite3_changes(db) != 1)
		return error("step %lld was not running: another klab process owns this bisection?",
			     (long long)s->id);
	return 0;
}

int db_step_abort(sqlite3 *db, int64_t step_id, const char *reason)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE steps SET status = 'aborted', reason = ?2, finished_at = ?3 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	sqlite3_bind_text(st, 2, reason, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, now_s());
	return step_done(db, st, "cannot record aborted step");
}

int db_build_find(sqlite3 *db, const char *tree, const char *recipe_id, struct db_build *out)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	if (prepare(db, &st, "SELECT id, status, artifact_dir, config_hash, error_excerpt, log_path, "
			     "coalesce(duration_ms, 0), coalesce(objects, 0), coalesce(finished_at, 0) "
			     "FROM builds WHERE tree = ?1 AND recipe_id = ?2") < 0)
		return -1;
	sqlite3_bind_text(st, 1, tree, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, recipe_id, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->id = sqlite3_column_int64(st, 0);
		out->status = col_strdup(st, 1);
		out->artifact_dir = col_strdup(st, 2);
		out->config_hash = col_strdup(st, 3);
		out->error_excerpt = col_strdup(st, 4);
		out->log_path = col_strdup(st, 5);
		out->duration_ms = sqlite3_column_int64(st, 6);
		out->objects = sqlite3_column_int(st, 7);
		out->finished_at = sqlite3_column_int64(st, 8);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return db_fail(db, "cannot read builds");
}

void db_build_release(struct db_build *b)
{
	free(b->status);
	free(b->artifact_dir);
	free(b->config_hash);
	free(b->error_excerpt);
	free(b->log_path);
	memset(b, 0, sizeof(*b));
}

int db_build_begin(sqlite3 *db, int64_t repo_id, const char *commit, const char *tree,
		   const char *recipe_id, const char *recipe, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO builds (repo_id, commit_hash, tree, recipe_id, recipe, status, started_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6) "
			     "ON CONFLICT (tree, recipe_id) DO UPDATE SET status = 'running', started_at = ?6, "
			     "finished_at = NULL, artifact_dir = NULL, error_excerpt = NULL RETURNING id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_text(st, 2, commit, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, tree, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, recipe_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, recipe, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, now_s());
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, "cannot record build");
	}
	*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int db_build_finish(sqlite3 *db, int64_t id, const char *status, const char *artifact_dir,
		    const char *config_hash, const char *config_text, const char *excerpt,
		    const char *log_path, int64_t duration_ms, int objects)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE builds SET status = ?2, artifact_dir = ?3, config_hash = ?4, config_text = ?5, "
			     "error_excerpt = ?6, log_path = ?7, duration_ms = ?8, objects = ?9, finished_at = ?10 "
			     "WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, status, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, artifact_dir, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, config_hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, config_text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, excerpt, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 7, log_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 8, duration_ms);
	sqlite3_bind_int(st, 9, objects);
	sqlite3_bind_int64(st, 10, now_s());
	return step_done(db, st, "cannot record build result");
}

int db_build_forget_artifact(sqlite3 *db, const char *artifact_dir)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE builds SET artifact_dir = NULL, status = 'env-failed', "
			     "error_excerpt = 'artifact removed by klab gc' WHERE artifact_dir = ?1 AND status = 'ok'") < 0)
		return -1;
	sqlite3_bind_text(st, 1, artifact_dir, -1, SQLITE_TRANSIENT);
	return step_done(db, st, "cannot update build");
}

/* ---- guest runs ----------------------------------------------------------- */

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_id_or_null(sqlite3_stmt *st, int i, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(st, i, id);
	else
		sqlite3_bind_null(st, i);
}

static void bind_ms_or_null(sqlite3_stmt *st, int i, int64_t ms)
{
	if (ms >= 0)
		sqlite3_bind_int64(st, i, ms);
	else
		sqlite3_bind_null(st, i);
}

static int insert_returning(sqlite3 *db, sqlite3_stmt *st, int64_t *id, const char *what)
{
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, what);
	}
	*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int db_run_set_create(sqlite3 *db, const struct db_run_set *rs, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO run_sets (job_path, job_hash, suite, testcase, kpi, kernel, build_id, "
			     "commit_hash, uri, host, accel, repeat, state, created_at, track_tip_id) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'running', ?13, ?14) RETURNING id") < 0)
		return -1;
	bind_text_or_null(st, 1, rs->job_path);
	bind_text_or_null(st, 2, rs->job_hash);
	bind_text_or_null(st, 3, rs->suite);
	bind_text_or_null(st, 4, rs->testcase);
	bind_text_or_null(st, 5, rs->kpi);
	bind_text_or_null(st, 6, rs->kernel);
	bind_id_or_null(st, 7, rs->build_id);
	bind_text_or_null(st, 8, rs->commit_hash);
	bind_text_or_null(st, 9, rs->uri);
	bind_text_or_null(st, 10, rs->host);
	bind_text_or_null(st, 11, rs->accel);
	sqlite3_bind_int(st, 12, (int)rs->repeat);
	sqlite3_bind_int64(st, 13, now_s());
	bind_id_or_null(st, 14, rs->track_tip_id);
	return insert_returning(db, st, id, "cannot record the run");
}

int db_run_set_finish(sqlite3 *db, int64_t id, const char *state)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE run_sets SET state = ?2, finished_at = ?3 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, state, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, now_s());
	return step_done(db, st, "cannot finish the run");
}

int db_boot_begin(sqlite3 *db, const struct db_boot *b, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO boots (run_set_id, build_id, step_id, domain_name, accel, vcpus, numa_nodes, "
			     "memory_mb, pinning, console_path, outcome, started_at, host_id) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'running', ?11, ?12) RETURNING id") < 0)
		return -1;
	bind_id_or_null(st, 1, b->run_set_id);
	bind_id_or_null(st, 2, b->build_id);
	bind_id_or_null(st, 3, b->step_id);
	bind_text_or_null(st, 4, b->domain_name);
	bind_text_or_null(st, 5, b->accel);
	sqlite3_bind_int(st, 6, (int)b->vcpus);
	sqlite3_bind_int(st, 7, (int)b->numa_nodes);
	sqlite3_bind_int64(st, 8, (int64_t)b->memory_mb);
	bind_text_or_null(st, 9, b->pinning);
	bind_text_or_null(st, 10, b->console_path);
	sqlite3_bind_int64(st, 11, now_s());
	bind_id_or_null(st, 12, b->host_id);
	return insert_returning(db, st, id, "cannot record the boot");
}

int db_boot_finish(sqlite3 *db, int64_t id, const struct db_boot_end *e)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE boots SET outcome = ?2, reason = ?3, console_excerpt = ?4, kernel_release = ?5, "
			     "guest_env = ?6, pinning = coalesce(?7, pinning), boot_ms = ?8, create_ms = ?9, "
			     "first_output_ms = ?10, finished_at = ?11 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	bind_text_or_null(st, 2, e->outcome);
	bind_text_or_null(st, 3, e->reason);
	bind_text_or_null(st, 4, e->excerpt);
	bind_text_or_null(st, 5, e->kernel_release);
	bind_text_or_null(st, 6, e->guest_env);
	bind_text_or_null(st, 7, e->pinning);
	bind_ms_or_null(st, 8, e->boot_ms);
	bind_ms_or_null(st, 9, e->create_ms);
	bind_ms_or_null(st, 10, e->first_output_ms);
	sqlite3_bind_int64(st, 11, now_s());
	return step_done(db, st, "cannot finish the boot");
}

int db_run_store(sqlite3 *db, const struct db_run *r, int64_t *id)
{
	sqlite3_stmt *st = NULL;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "INSERT INTO runs (boot_id, step_id, job_path, job_hash, iteration, status, exit_code, "
			     "raw_path, started_at, finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
			     "RETURNING id") < 0)
		goto fail;
	bind_id_or_null(st, 1, r->boot_id);
	bind_id_or_null(st, 2, r->step_id);
	bind_text_or_null(st, 3, r->job_path);
	bind_text_or_null(st, 4, r->job_hash);
	sqlite3_bind_int(st, 5, (int)r->iteration);
	sqlite3_bind_text(st, 6, r->status, -1, SQLITE_TRANSIENT);
	if (r->exit_code >= 0)
		sqlite3_bind_int(st, 7, r->exit_code);
	else
		sqlite3_bind_null(st, 7);
	bind_text_or_null(st, 8, r->raw_path);
	sqlite3_bind_int64(st, 9, r->started_at);
	sqlite3_bind_int64(st, 10, r->finished_at);
	if (insert_returning(db, st, id, "cannot record the run") < 0)
		goto fail;

	/* Duplicate (metric, seq) pairs from a hostile guest keep the first. */
	if (prepare(db, &st, "INSERT OR IGNORE INTO samples (run_id, metric, seq, value) VALUES (?1, ?2, ?3, ?4)") < 0)
		goto fail;
	for (size_t i = 0; i < r->nr_samples; i++) {
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_text(st, 2, r->samples[i].metric, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 3, r->samples[i].seq);
		sqlite3_bind_double(st, 4, r->samples[i].value);
		if (sqlite3_step(st) != SQLITE_DONE) {
			db_fail(db, "cannot store a sample");
			goto fail_st;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (prepare(db, &st, "INSERT OR IGNORE INTO monitor_stats (run_id, source, name, phase, value) "
			     "VALUES (?1, ?2, ?3, ?4, ?5)") < 0)
		goto fail;
	for (size_t i = 0; i < r->nr_mons; i++) {
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_text(st, 2, r->mons[i].source, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, r->mons[i].name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, r->mons[i].phase, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(st, 5, r->mons[i].value);
		if (sqlite3_step(st) != SQLITE_DONE) {
			db_fail(db, "cannot store a monitor value");
			goto fail_st;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return db_commit(db);

fail_st:
	sqlite3_finalize(st);
fail:
	db_rollback(db);
	return -1;
}

/* ---- performance bisections ---------------------------------------------- */

int db_verdict_store(sqlite3 *db, int64_t step_id, const char *rule, double p_good, double p_bad,
		     const char *statistic, const char *detail)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO verdicts (step_id, rule, p_good, p_bad, statistic, detail, created_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	sqlite3_bind_text(st, 2, rule, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(st, 3, p_good);
	sqlite3_bind_double(st, 4, p_bad);
	bind_text_or_null(st, 5, statistic);
	bind_text_or_null(st, 6, detail);
	sqlite3_bind_int64(st, 7, now_s());
	return step_done(db, st, "cannot store the verdict");
}

int db_step_metric_values(sqlite3 *db, int64_t step_id, const char *metric, double **vals, size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*vals = NULL;
	*n = 0;
	if (prepare(db, &st, "SELECT s.value FROM samples s JOIN runs r ON r.id = s.run_id "
			     "JOIN boots b ON b.id = r.boot_id WHERE b.step_id = ?1 AND r.status = 'ok' "
			     "AND s.metric = ?2 AND s.seq = 0 ORDER BY r.id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	sqlite3_bind_text(st, 2, metric, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*vals, *n + 1, alloc);
		(*vals)[(*n)++] = sqlite3_column_double(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*vals);
		*vals = NULL;
		*n = 0;
		return db_fail(db, "cannot read a step's samples");
	}
	return 0;
}

int db_step_mon_deltas(sqlite3 *db, int64_t step_id, const char *source, struct db_mon_mean **out, size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (prepare(db, &st, "SELECT m.name, avg(m.value), count(*) FROM monitor_stats m JOIN runs r ON r.id = m.run_id "
			     "JOIN boots b ON b.id = r.boot_id WHERE b.step_id = ?1 AND r.status = 'ok' "
			     "AND m.source = ?2 AND m.phase = 'delta' GROUP BY m.name ORDER BY m.name") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	sqlite3_bind_text(st, 2, source, -1, SQLITE_TRANSIENT);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*out, *n + 1, alloc);
		(*out)[*n].name = col_strdup(st, 0);
		(*out)[*n].mean = sqlite3_column_double(st, 1);
		(*out)[*n].runs = sqlite3_column_int(st, 2);
		(*n)++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, "cannot read monitor values");
	return 0;
}

void db_mon_means_free(struct db_mon_mean *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].name);
	free(m);
}

int db_step_verdicts(sqlite3 *db, int64_t step_id, char ***details, size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*details = NULL;
	*n = 0;
	if (prepare(db, &st, "SELECT coalesce(detail, rule) FROM verdicts WHERE step_id = ?1 ORDER BY id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*details, *n + 1, alloc);
		(*details)[(*n)++] = col_strdup(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, "cannot read verdicts");
	return 0;
}

/* ---- the queue ---------------------------------------------------------- */

/* args is stored as one blob: the strings one after another, each ending
 * in NUL (args[0] is the submitter's working directory). */
int db_queue_add(sqlite3 *db, const char *kind, char *const *args, size_t nr, int64_t bisection_id,
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
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_TRANSIENT);
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

static void queue_job_read(sqlite3_stmt *st, struct queue_job *j)
{
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
}

void queue_job_release(struct queue_job *j)
{
	for (size_t i = 0; i < j->nr_args; i++)
		free(j->args[i]);
	free(j->args);
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
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		queue_job_read(st, j);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return error("no queued job %lld (see 'klab status')", (long long)id);
	return rc == SQLITE_ROW ? 0 : db_fail(db, "cannot read the queue");
}

int db_queue_list(sqlite3 *db, struct queue_job **jobs, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*jobs = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT " QUEUE_COLUMNS " FROM queue_jobs ORDER BY id") < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*jobs, *nr + 1, alloc);
		queue_job_read(st, &(*jobs)[(*nr)++]);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(db, "cannot read the queue");
}

/* The oldest queued job, or a running one whose lease ran out (its worker
 * died): marked running for `worker` in the same transaction, so two
 * workers never get the same job.  1 claimed, 0 nothing to do, -1 error. */
int db_queue_claim(sqlite3 *db, const char *worker, int64_t lease_s, struct queue_job *j)
{
	sqlite3_stmt *st;
	int64_t now = now_s(), id = 0;
	int rc;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "SELECT id FROM queue_jobs WHERE state = 'queued' "
			     "OR (state = 'running' AND lease_until < ?1) ORDER BY id LIMIT 1") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, now);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_fail(db, "cannot read the queue");
		goto fail;
	}
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
	if (step_done(db, st, "cannot renew a lease") < 0)
		return -1;
	return sqlite3_changes(db) > 0;
}

/* A job this worker ran ended: state done, failed or queued (handed
 * back).  Only while it is still this worker's running job: a cancel
 * that came first stays.  1 recorded, 0 not ours any more. */
int db_queue_finish(sqlite3 *db, int64_t id, const char *worker, const char *state, const char *message)
{
	sqlite3_stmt *st;
	int back = !strcmp(state, "queued");

	if (prepare(db, &st, "UPDATE queue_jobs SET state = ?3, message = ?4, lease_until = NULL, "
			     "worker = CASE WHEN ?6 THEN NULL ELSE worker END, "
			     "finished_at = CASE WHEN ?6 THEN NULL ELSE ?5 END "
			     "WHERE id = ?1 AND worker = ?2 AND state = 'running'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, worker, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, state, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, message, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, now_s());
	sqlite3_bind_int(st, 6, back);
	if (step_done(db, st, "cannot record the job's end") < 0)
		return -1;
	return sqlite3_changes(db) > 0;
}

/* Cancel a queued or running job (its worker notices at the next lease
 * renewal).  1 cancelled, 0 it had already ended. */
int db_queue_cancel(sqlite3 *db, int64_t id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE queue_jobs SET state = 'cancelled', message = 'cancelled', "
			     "finished_at = ?2 WHERE id = ?1 AND state IN ('queued', 'running')") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now_s());
	if (step_done(db, st, "cannot cancel the job") < 0)
		return -1;
	return sqlite3_changes(db) > 0;
}

/* Queue a failed or cancelled job again.  1 queued, 0 not in such a state. */
int db_queue_retry(sqlite3 *db, int64_t id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE queue_jobs SET state = 'queued', worker = NULL, lease_until = NULL, "
			     "message = NULL, finished_at = NULL WHERE id = ?1 AND state IN ('failed', 'cancelled')") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (step_done(db, st, "cannot queue the job again") < 0)
		return -1;
	return sqlite3_changes(db) > 0;
}

/* ---- the report ---------------------------------------------------------- */

/* Every table is read in one pass (a handful of statements for the whole
 * lab, not a few per step), then joined in memory by id. */

struct step_ref {
	int64_t id;
	struct report_step *s;
};

static int cmp_step_ref(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

struct report_index {
	struct report *r;
	struct step_ref *steps;
	size_t nr_steps;
};

/* r->bisections is ordered by id, newest first. */
static struct report_bisection *find_bisection(struct report *r, int64_t id)
{
	size_t lo = 0, hi = r->nr_bisections;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->bisections[mid].id == id)
			return &r->bisections[mid];
		if (r->bisections[mid].id > id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct report_step *find_report_step(const struct report_index *x, int64_t id)
{
	struct step_ref key = { id, NULL }, *hit;

	hit = bsearch(&key, x->steps, x->nr_steps, sizeof(key), cmp_step_ref);
	return hit ? hit->s : NULL;
}

static void replace_str(char **dst, sqlite3_stmt *st, int col)
{
	free(*dst);
	*dst = col_strdup(st, col);
}

/* Run a statement and hand each row to fn; -1 after error() on failure. */
static int each_row(sqlite3 *db, const char *sql, int64_t bind1, int (*fn)(sqlite3_stmt *, void *), void *data,
		    const char *what)
{
	sqlite3_stmt *st;
	int rc;

	if (prepare(db, &st, sql) < 0)
		return -1;
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, bind1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (fn(st, data) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, what);
	return 0;
}

static int row_bisection(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	struct report_bisection *b;

	ALLOC_GROW(r->bisections, r->nr_bisections + 1, r->alloc_bisections);
	b = &r->bisections[r->nr_bisections++];
	memset(b, 0, sizeof(*b));
	b->id = sqlite3_column_int64(st, 0);
	b->repo = col_strdup(st, 1);
	b->kind = col_strdup(st, 2);
	b->state = col_strdup(st, 3);
	b->result = col_strdup(st, 4);
	b->message = col_strdup(st, 5);
	col_hex(st, 6, b->bad);
	b->job_path = col_strdup(st, 7);
	b->job_text = col_strdup(st, 8);
	b->kpi = col_strdup(st, 9);
	b->config = col_strdup(st, 10);
	b->build = sqlite3_column_int(st, 11);
	b->culprit = col_strdup(st, 12);
	b->culprit_subject = col_strdup(st, 13);
	b->culprit_author = col_strdup(st, 14);
	b->culprit_time = sqlite3_column_int64(st, 15);
	b->created_at = sqlite3_column_int64(st, 16);
	b->finished_at = sqlite3_column_int64(st, 17);
	return 0;
}

static int row_good(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b) {
		ALLOC_GROW(b->goods, b->nr_goods + 1, b->alloc_goods);
		col_hex(st, 1, b->goods[b->nr_goods++]);
	}
	return 0;
}

static int row_arg(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b) {
		ALLOC_GROW(b->argv, b->argc + 1, b->alloc_argv);
		b->argv[b->argc++] = col_strdup(st, 1);
	}
	return 0;
}

static int row_candidate(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b) {
		ALLOC_GROW(b->candidates, b->nr_candidates + 1, b->alloc_candidates);
		b->candidates[b->nr_candidates++] = col_strdup(st, 1);
	}
	return 0;
}

static int row_step(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));
	struct report_step *s;

	if (!b)
		return 0;
	ALLOC_GROW(b->steps, b->nr_steps + 1, b->alloc_steps);
	s = &b->steps[b->nr_steps++];
	memset(s, 0, sizeof(*s));
	s->id = sqlite3_column_int64(st, 1);
	s->seq = sqlite3_column_int(st, 2);
	col_hex(st, 3, s->hash);
	s->phase = col_strdup(st, 4);
	s->status = col_strdup(st, 5);
	s->verdict = col_strdup(st, 6);
	s->reason = col_strdup(st, 7);
	s->exit_code = sqlite3_column_int(st, 8);
	s->test_ms = sqlite3_column_int64(st, 9);
	s->log.src = col_strdup(st, 10);
	s->subject = col_strdup(st, 11);
	return 0;
}

static int row_verdict(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));

	if (s) {
		replace_str(&s->rule, st, 1);
		replace_str(&s->evidence, st, 2);
	}
	return 0;
}

static int row_kpi(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));

	if (s) {
		ALLOC_GROW(s->kpi, s->nr_kpi + 1, s->alloc_kpi);
		s->kpi[s->nr_kpi++] = sqlite3_column_double(st, 1);
	}
	return 0;
}

static int row_run(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));
	const unsigned char *status = sqlite3_column_text(st, 1);

	if (s) {
		s->runs++;
		if (status && !strcmp((const char *)status, "ok"))
			s->runs_ok++;
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			replace_str(&s->raw.src, st, 2);
	}
	return 0;
}

static int row_boot(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));
	const unsigned char *outcome = sqlite3_column_text(st, 1);
	int ok = outcome && !strcmp((const char *)outcome, "ok");

	if (!s)
		return 0;
	s->boots++;
	s->boots_ok += ok;
	/* keep the first failure; else follow the last boot */
	if (s->boot_outcome && strcmp(s->boot_outcome, "ok") && strcmp(s->boot_outcome, "running"))
		return 0;
	replace_str(&s->boot_outcome, st, 1);
	replace_str(&s->boot_reason, st, 2);
	replace_str(&s->console_excerpt, st, 3);
	replace_str(&s->console.src, st, 4);
	return 0;
}

static int row_build(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));

	if (s) {
		replace_str(&s->build_status, st, 1);
		replace_str(&s->build_excerpt, st, 2);
		replace_str(&s->build_log.src, st, 3);
	}
	return 0;
}

static int row_stat(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));
	const char *name = (const char *)sqlite3_column_text(st, 1);
	struct report_stat *m;

	if (!s || !name)
		return 0;
	/* rows come sorted by step and name */
	m = s->nr_stats ? &s->stats[s->nr_stats - 1] : NULL;
	if (!m || strcmp(m->name, name)) {
		ALLOC_GROW(s->stats, s->nr_stats + 1, s->alloc_stats);
		m = &s->stats[s->nr_stats++];
		memset(m, 0, sizeof(*m));
		m->name = xstrdup(name);
	}
	ALLOC_GROW(m->v, m->n + 1, m->alloc);
	m->v[m->n++] = sqlite3_column_double(st, 2);
	return 0;
}

static int row_host(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	struct report_host *h;

	ALLOC_GROW(r->hosts, r->nr_hosts + 1, r->alloc_hosts);
	h = &r->hosts[r->nr_hosts++];
	h->name = col_strdup(st, 0);
	h->uri = col_strdup(st, 1);
	h->cpus = col_strdup(st, 2);
	h->max_guests = sqlite3_column_int(st, 3);
	h->accel = col_strdup(st, 4);
	return 0;
}

static int row_track(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	struct report_track *t;

	ALLOC_GROW(r->tracks, r->nr_tracks + 1, r->alloc_tracks);
	t = &r->tracks[r->nr_tracks++];
	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(st, 0);
	t->name = col_strdup(st, 1);
	t->repo = col_strdup(st, 2);
	t->remote = col_strdup(st, 3);
	t->branch = col_strdup(st, 4);
	t->threshold_pct = sqlite3_column_double(st, 5);
	return 0;
}

static struct report_track *find_track(struct report *r, int64_t id)
{
	for (size_t i = 0; i < r->nr_tracks; i++)
		if (r->tracks[i].id == id)
			return &r->tracks[i];
	return NULL;
}

static int row_tip(sqlite3_stmt *st, void *data)
{
	struct report_track *t = find_track(data, sqlite3_column_int64(st, 0));
	struct report_tip *tip;

	if (!t)
		return 0;
	ALLOC_GROW(t->tips, t->nr_tips + 1, t->alloc_tips);
	tip = &t->tips[t->nr_tips++];
	memset(tip, 0, sizeof(*tip));
	tip->id = sqlite3_column_int64(st, 1);
	col_hex(st, 2, tip->hash);
	tip->status = col_strdup(st, 3);
	tip->compared_to = col_strdup(st, 4);
	tip->bisection_id = sqlite3_column_int64(st, 5);
	tip->message = col_strdup(st, 6);
	tip->created_at = sqlite3_column_int64(st, 7);
	tip->subject = col_strdup(st, 8);
	return 0;
}

/* A tip's KPI: the runs of `klab run` sets on that commit with one of the
 * track's jobs, their KPI as the run set named it. */
static int row_tip_kpi(sqlite3_stmt *st, void *data)
{
	struct report_track *t = find_track(data, sqlite3_column_int64(st, 0));
	int64_t tip_id = sqlite3_column_int64(st, 1);
	const char *job = (const char *)sqlite3_column_text(st, 2), *kpi = (const char *)sqlite3_column_text(st, 3);
	struct report_series *se = NULL;
	size_t k;

	if (!t || !job || !kpi)
		return 0;
	for (k = 0; k < t->nr_tips && t->tips[k].id != tip_id; k++)
		;
	if (k == t->nr_tips)
		return 0;
	for (size_t i = 0; i < t->nr_series; i++)
		if (!strcmp(t->series[i].job_path, job) && !strcmp(t->series[i].kpi, kpi))
			se = &t->series[i];
	if (!se) {
		ALLOC_GROW(t->series, t->nr_series + 1, t->alloc_series);
		se = &t->series[t->nr_series++];
		se->job_path = xstrdup(job);
		se->kpi = xstrdup(kpi);
		se->values = xcalloc(t->nr_tips, sizeof(*se->values));
		se->nr_values = xcalloc(t->nr_tips, sizeof(*se->nr_values));
	}
	se->values[k] = xrealloc(se->values[k], (se->nr_values[k] + 1) * sizeof(double));
	se->values[k][se->nr_values[k]++] = sqlite3_column_double(st, 4);
	return 0;
}

/* The culprit's full message and changed files, where the commits table
 * has such columns (later schema versions may add them). */
static int commits_has_column(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;
	int has = 0;

	if (prepare(db, &st, "SELECT 1 FROM pragma_table_info('commits') WHERE name = ?1") < 0)
		return 0;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	has = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return has;
}

static int row_culprit_message(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b)
		replace_str(&b->culprit_message, st, 1);
	return 0;
}

static int row_culprit_files(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b)
		replace_str(&b->culprit_files, st, 1);
	return 0;
}

int db_report_load(sqlite3 *db, int64_t since, struct report *r)
{
	struct report_index x = { r, NULL, 0 };
	size_t alloc = 0;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	/* one snapshot: a bisection running meanwhile cannot tear the report */
	if (exec(db, "BEGIN") < 0)
		return -1;
	if (each_row(db, "SELECT b.id, r.path, b.kind, b.state, b.result, b.message, b.bad, b.job_path, b.job_text, "
			 "b.kpi, b.config, b.build, b.culprit, c.subject, c.author, coalesce(c.author_time, 0), "
			 "b.created_at, coalesce(b.finished_at, 0) "
			 "FROM bisections b JOIN repos r ON r.id = b.repo_id "
			 "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = b.culprit "
			 "WHERE b.created_at >= ?1 ORDER BY b.id DESC",
		     since, row_bisection, r, "cannot read bisections") < 0 ||
	    each_row(db, "SELECT bisection_id, hash FROM bisection_goods ORDER BY bisection_id, rowid", 0, row_good, r,
		     "cannot read good revisions") < 0 ||
	    each_row(db, "SELECT bisection_id, arg FROM bisection_argv ORDER BY bisection_id, idx", 0, row_arg, r,
		     "cannot read test commands") < 0 ||
	    each_row(db, "SELECT bisection_id, hash FROM bisection_candidates ORDER BY bisection_id, rowid", 0,
		     row_candidate, r, "cannot read candidates") < 0 ||
	    each_row(db, "SELECT s.bisection_id, s.id, s.seq, s.hash, s.phase, s.status, s.verdict, s.reason, "
			 "coalesce(s.exit_code, -1), coalesce(s.test_ms, 0), s.log_path, c.subject "
			 "FROM steps s JOIN bisections b ON b.id = s.bisection_id "
			 "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = s.hash "
			 "WHERE b.created_at >= ?1 ORDER BY s.bisection_id, s.seq",
		     since, row_step, r, "cannot read steps") < 0)
		goto out;
	if (commits_has_column(db, "message") &&
	    each_row(db, "SELECT b.id, c.message FROM bisections b JOIN commits c ON c.repo_id = b.repo_id "
			 "AND c.hash = b.culprit WHERE b.created_at >= ?1",
		     since, row_culprit_message, r, "cannot read commit messages") < 0)
		goto out;
	if (commits_has_column(db, "files") &&
	    each_row(db, "SELECT b.id, c.files FROM bisections b JOIN commits c ON c.repo_id = b.repo_id "
			 "AND c.hash = b.culprit WHERE b.created_at >= ?1",
		     since, row_culprit_files, r, "cannot read changed files") < 0)
		goto out;

	for (size_t i = 0; i < r->nr_bisections; i++)
		for (size_t k = 0; k < r->bisections[i].nr_steps; k++) {
			ALLOC_GROW(x.steps, x.nr_steps + 1, alloc);
			x.steps[x.nr_steps].id = r->bisections[i].steps[k].id;
			x.steps[x.nr_steps++].s = &r->bisections[i].steps[k];
		}
	if (x.nr_steps)
		qsort(x.steps, x.nr_steps, sizeof(*x.steps), cmp_step_ref);

	if (each_row(db, "SELECT step_id, rule, detail FROM verdicts ORDER BY step_id, id", 0, row_verdict, &x,
		     "cannot read verdicts") < 0 ||
	    each_row(db, "SELECT bo.step_id, sa.value FROM boots bo JOIN steps st ON st.id = bo.step_id "
			 "JOIN bisections b ON b.id = st.bisection_id JOIN runs r ON r.boot_id = bo.id "
			 "JOIN samples sa ON sa.run_id = r.id AND sa.metric = b.kpi AND sa.seq = 0 "
			 "WHERE r.status = 'ok' AND b.created_at >= ?1 ORDER BY bo.step_id, r.id",
		     since, row_kpi, &x, "cannot read samples") < 0 ||
	    each_row(db, "SELECT bo.step_id, r.status, r.raw_path FROM runs r JOIN boots bo ON bo.id = r.boot_id "
			 "WHERE bo.step_id IS NOT NULL ORDER BY bo.step_id, r.id",
		     0, row_run, &x, "cannot read runs") < 0 ||
	    each_row(db, "SELECT step_id, outcome, reason, console_excerpt, console_path FROM boots "
			 "WHERE step_id IS NOT NULL ORDER BY step_id, id",
		     0, row_boot, &x, "cannot read boots") < 0 ||
	    each_row(db, "SELECT st.id, bu.status, bu.error_excerpt, bu.log_path FROM steps st "
			 "JOIN bisections b ON b.id = st.bisection_id "
			 "JOIN commits c ON c.repo_id = b.repo_id AND c.hash = st.hash "
			 "JOIN builds bu ON bu.tree = c.tree AND bu.recipe = b.config "
			 "WHERE b.created_at >= ?1 ORDER BY st.id, bu.id",
		     since, row_build, &x, "cannot read builds") < 0 ||
	    each_row(db, "SELECT bo.step_id, m.source || '.' || m.name, m.value FROM steps st "
			 "JOIN boots bo ON bo.step_id = st.id JOIN runs r ON r.boot_id = bo.id "
			 "JOIN monitor_stats m ON m.run_id = r.id "
			 "WHERE st.phase = 'confirm' AND r.status = 'ok' "
			 "AND (m.phase = 'delta' OR (m.source = 'meminfo' AND m.phase = 'after')) "
			 "ORDER BY bo.step_id, 2, r.id",
		     0, row_stat, &x, "cannot read monitor values") < 0)
		goto out;

	if (each_row(db, "SELECT t.id, t.name, r.path, t.remote, t.branch, t.threshold_pct FROM tracks t "
			 "JOIN repos r ON r.id = t.repo_id ORDER BY t.name",
		     0, row_track, r, "cannot read tracks") < 0 ||
	    each_row(db, "SELECT tt.track_id, tt.id, tt.hash, tt.status, tt.compared_to, "
			 "coalesce(tt.bisection_id, 0), tt.message, tt.created_at, c.subject "
			 "FROM track_tips tt JOIN tracks t ON t.id = tt.track_id "
			 "LEFT JOIN commits c ON c.repo_id = t.repo_id AND c.hash = tt.hash "
			 "WHERE tt.created_at >= ?1 ORDER BY tt.track_id, tt.created_at, tt.id",
		     since, row_tip, r, "cannot read tracked tips") < 0 ||
	    each_row(db, "SELECT tt.track_id, tt.id, rs.job_path, rs.kpi, sa.value FROM track_tips tt "
			 "JOIN run_sets rs ON rs.track_tip_id = tt.id "
			 "JOIN boots bo ON bo.run_set_id = rs.id JOIN runs r ON r.boot_id = bo.id "
			 "JOIN samples sa ON sa.run_id = r.id AND sa.metric = rs.kpi AND sa.seq = 0 "
			 "WHERE r.status = 'ok' AND tt.created_at >= ?1 ORDER BY tt.track_id, rs.job_path, rs.kpi, r.id",
		     since, row_tip_kpi, r, "cannot read the tracked KPI") < 0 ||
	    each_row(db, "SELECT name, uri, cpus, max_guests, accel FROM hosts ORDER BY name", 0, row_host, r,
		     "cannot read hosts") < 0)
		goto out;
	ret = 0;
out:
	free(x.steps);
	exec(db, "COMMIT");
	if (ret < 0)
		report_release(r);
	return ret;
}

/* ---- tracked branches ------------------------------------------------------ */

int db_track_add(sqlite3 *db, const struct db_track *t, int64_t *id)
{
	sqlite3_stmt *st;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "SELECT 1 FROM tracks WHERE name = ?1") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_finalize(st);
		error("a track named '%s' exists (see 'klab track list')", t->name);
		goto fail;
	}
	sqlite3_finalize(st);
	if (prepare(db, &st, "INSERT INTO tracks (name, repo_id, remote, branch, config, threshold_pct, notify, "
			     "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, t->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, t->repo_id);
	sqlite3_bind_text(st, 3, t->remote, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, t->branch, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 5, t->config);
	sqlite3_bind_double(st, 6, t->threshold_pct);
	bind_text_or_null(st, 7, t->notify);
	sqlite3_bind_int64(st, 8, now_s());
	if (insert_returning(db, st, id, "cannot record the track") < 0)
		goto fail;
	for (size_t i = 0; i < t->nr_jobs; i++) {
		if (prepare(db, &st, "INSERT OR IGNORE INTO track_jobs (track_id, job_path) VALUES (?1, ?2)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, *id);
		sqlite3_bind_text(st, 2, t->jobs[i], -1, SQLITE_TRANSIENT);
		if (step_done(db, st, "cannot record the track's job") < 0)
			goto fail;
	}
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

void db_track_release(struct db_track *t)
{
	free(t->name);
	free(t->repo_path);
	free(t->remote);
	free(t->branch);
	free(t->config);
	free(t->notify);
	for (size_t i = 0; i < t->nr_jobs; i++)
		free(t->jobs[i]);
	free(t->jobs);
	memset(t, 0, sizeof(*t));
}

int db_track_load(sqlite3 *db, const char *name, struct db_track *t)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	memset(t, 0, sizeof(*t));
	if (prepare(db, &st, "SELECT t.id, t.name, t.repo_id, r.path, t.remote, t.branch, t.config, t.threshold_pct, "
			     "t.notify, t.created_at FROM tracks t JOIN repos r ON r.id = t.repo_id WHERE t.name = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return rc == SQLITE_DONE ? 0 : db_fail(db, "cannot read the track");
	}
	t->id = sqlite3_column_int64(st, 0);
	t->name = col_strdup(st, 1);
	t->repo_id = sqlite3_column_int64(st, 2);
	t->repo_path = col_strdup(st, 3);
	t->remote = col_strdup(st, 4);
	t->branch = col_strdup(st, 5);
	t->config = col_strdup(st, 6);
	t->threshold_pct = sqlite3_column_double(st, 7);
	t->notify = col_strdup(st, 8);
	t->created_at = sqlite3_column_int64(st, 9);
	sqlite3_finalize(st);
	if (prepare(db, &st, "SELECT job_path FROM track_jobs WHERE track_id = ?1 ORDER BY rowid") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, t->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(t->jobs, t->nr_jobs + 1, alloc);
		t->jobs[t->nr_jobs++] = col_strdup(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_fail(db, "cannot read the track's jobs");
		goto fail;
	}
	return 1;
fail:
	db_track_release(t);
	return -1;
}

int db_track_names(sqlite3 *db, char ***names, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*names = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT name FROM tracks ORDER BY name") < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*names, *nr + 1, alloc);
		(*names)[(*nr)++] = col_strdup(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, "cannot list tracks");
	return 0;
}

int db_track_remove(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "DELETE FROM tracks WHERE name = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	if (step_done(db, st, "cannot remove the track") < 0)
		return -1;
	return sqlite3_changes(db) > 0;
}

void db_track_tips_free(struct db_track_tip *tips, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		free(tips[i].status);
		free(tips[i].compared_to);
		free(tips[i].message);
		free(tips[i].kpi_text);
		free(tips[i].subject);
	}
	free(tips);
}

int db_track_tips(sqlite3 *db, int64_t track_id, struct db_track_tip **tips, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*tips = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT tt.id, tt.hash, tt.status, tt.compared_to, coalesce(tt.bisection_id, 0), "
			     "coalesce(tt.queue_job_id, 0), tt.message, tt.kpi_text, c.subject, tt.created_at, "
			     "coalesce(tt.finished_at, 0) FROM track_tips tt JOIN tracks t ON t.id = tt.track_id "
			     "LEFT JOIN commits c ON c.repo_id = t.repo_id AND c.hash = tt.hash "
			     "WHERE tt.track_id = ?1 ORDER BY tt.id DESC") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct db_track_tip *t;
		ALLOC_GROW(*tips, *nr + 1, alloc);
		t = &(*tips)[(*nr)++];
		t->id = sqlite3_column_int64(st, 0);
		col_hex(st, 1, t->hash);
		t->status = col_strdup(st, 2);
		t->compared_to = col_strdup(st, 3);
		t->bisection_id = sqlite3_column_int64(st, 4);
		t->queue_job_id = sqlite3_column_int64(st, 5);
		t->message = col_strdup(st, 6);
		t->kpi_text = col_strdup(st, 7);
		t->subject = col_strdup(st, 8);
		t->created_at = sqlite3_column_int64(st, 9);
		t->finished_at = sqlite3_column_int64(st, 10);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_track_tips_free(*tips, *nr);
		*tips = NULL;
		*nr = 0;
		return db_fail(db, "cannot read tracked tips");
	}
	return 0;
}

int db_track_tip_begin(sqlite3 *db, int64_t track_id, const char *hash, const char *compared_to,
		       const char *message, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO track_tips (track_id, hash, status, compared_to, message, created_at) "
			     "VALUES (?1, ?2, 'running', ?3, ?4, ?5) RETURNING id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	sqlite3_bind_text(st, 2, hash, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, compared_to);
	bind_text_or_null(st, 4, message);
	sqlite3_bind_int64(st, 5, now_s());
	return insert_returning(db, st, id, "cannot record the tip");
}

int db_track_tip_finish(sqlite3 *db, int64_t id, const char *status, const char *message, const char *kpi_text,
			int64_t bisection_id, int64_t queue_job_id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE track_tips SET status = ?2, message = coalesce(?3, message), kpi_text = ?4, bisection_id = ?5, "
			     "queue_job_id = ?6, finished_at = ?7 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, status, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, message);
	bind_text_or_null(st, 4, kpi_text);
	bind_id_or_null(st, 5, bisection_id);
	bind_id_or_null(st, 6, queue_job_id);
	sqlite3_bind_int64(st, 7, now_s());
	return step_done(db, st, "cannot record the tip's result");
}

int db_track_tip_values(sqlite3 *db, int64_t tip_id, const char *job_path, const char *job_hash, const char *kpi,
			const char *accel, double **vals, size_t *n)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*vals = NULL;
	*n = 0;
	if (prepare(db, &st, "SELECT sa.value FROM run_sets rs JOIN boots bo ON bo.run_set_id = rs.id "
			     "JOIN runs r ON r.boot_id = bo.id JOIN samples sa ON sa.run_id = r.id "
			     "WHERE rs.track_tip_id = ?1 AND rs.job_path = ?2 AND rs.job_hash = ?3 AND r.status = 'ok' "
			     "AND sa.metric = ?4 AND sa.seq = 0 AND (?5 IS NULL OR rs.accel = ?5) ORDER BY r.id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, tip_id);
	sqlite3_bind_text(st, 2, job_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, job_hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, kpi, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 5, accel);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*vals, *n + 1, alloc);
		(*vals)[(*n)++] = sqlite3_column_double(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*vals);
		*vals = NULL;
		*n = 0;
		return db_fail(db, "cannot read a tip's samples");
	}
	return 0;
}

int db_track_tip_accel(sqlite3 *db, int64_t tip_id, const char *job_path, char accel[8])
{
	sqlite3_stmt *st;
	int rc;

	accel[0] = '\0';
	if (prepare(db, &st, "SELECT accel FROM run_sets WHERE track_tip_id = ?1 AND job_path = ?2 "
			     "ORDER BY id DESC LIMIT 1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, tip_id);
	sqlite3_bind_text(st, 2, job_path, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *a = sqlite3_column_text(st, 0);
		snprintf(accel, 8, "%s", a ? (const char *)a : "");
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, "cannot read a tip's run sets");
	return 0;
}

int db_track_fetch_record(sqlite3 *db, int64_t track_id, const char *outcome, const char *old_tip,
			  const char *new_tip, const char *message)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO track_fetches (track_id, outcome, old_tip, new_tip, message, created_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6)") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	sqlite3_bind_text(st, 2, outcome, -1, SQLITE_TRANSIENT);
	bind_text_or_null(st, 3, old_tip && *old_tip ? old_tip : NULL);
	bind_text_or_null(st, 4, new_tip && *new_tip ? new_tip : NULL);
	bind_text_or_null(st, 5, message);
	sqlite3_bind_int64(st, 6, now_s());
	return step_done(db, st, "cannot record the fetch");
}

int db_track_last_fetch(sqlite3 *db, int64_t track_id, struct db_track_fetch *f)
{
	sqlite3_stmt *st;
	int rc;

	memset(f, 0, sizeof(*f));
	if (prepare(db, &st, "SELECT outcome, old_tip, new_tip, message, created_at FROM track_fetches "
			     "WHERE track_id = ?1 ORDER BY id DESC LIMIT 1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, track_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		f->outcome = col_strdup(st, 0);
		col_hex(st, 1, f->old_tip);
		col_hex(st, 2, f->new_tip);
		f->message = col_strdup(st, 3);
		f->created_at = sqlite3_column_int64(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, "cannot read the track's fetches");
	return rc == SQLITE_ROW;
}

void db_track_fetch_release(struct db_track_fetch *f)
{
	free(f->outcome);
	free(f->message);
	memset(f, 0, sizeof(*f));
}

/* ---- notifications ------------------------------------------------------- */

int db_commit_facts(sqlite3 *db, int64_t repo_id, const char *hash, char **subject, char **author,
		    int64_t *author_time)
{
	sqlite3_stmt *st;
	int rc;

	*subject = *author = NULL;
	*author_time = 0;
	if (prepare(db, &st, "SELECT subject, author, author_time FROM commits WHERE repo_id = ?1 AND hash = ?2") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, repo_id);
	sqlite3_bind_text(st, 2, hash, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*subject = col_strdup(st, 0);
		*author = col_strdup(st, 1);
		*author_time = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, "cannot read commit");
	return rc == SQLITE_ROW;
}

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

static void notification_from_row(sqlite3_stmt *st, struct db_notification *n)
{
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
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		notification_from_row(st, n);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return error("no notification %lld", (long long)id);
	if (rc != SQLITE_ROW)
		return db_fail(db, "cannot read the notification");
	return 0;
}

int db_notifications_list(sqlite3 *db, struct db_notification **out, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT " NOTIFICATION_COLUMNS " FROM notifications ORDER BY id") < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*out, *nr + 1, alloc);
		memset(&(*out)[*nr], 0, sizeof(**out));
		notification_from_row(st, &(*out)[(*nr)++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_notifications_free(*out, *nr);
		*out = NULL;
		*nr = 0;
		return db_fail(db, "cannot list notifications");
	}
	return 0;
}

int db_notifications_due(sqlite3 *db, int64_t now, int all, int64_t **ids, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*ids = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT id FROM notifications WHERE state = 'pending' "
			     "AND (?2 OR coalesce(next_try_at, 0) <= ?1) ORDER BY id") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int(st, 2, all != 0);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*ids, *nr + 1, alloc);
		(*ids)[(*nr)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*ids);
		*ids = NULL;
		*nr = 0;
		return db_fail(db, "cannot read pending notifications");
	}
	return 0;
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

/* ---- boots of a klab that died ---------------------------------------------- */

/* The owner's PID from a domain name "klab-PID-MS"; 0 when not of that form. */
static long boot_owner(const char *name)
{
	char *end;
	long pid;

	if (!name || strncmp(name, "klab-", 5))
		return 0;
	errno = 0;
	pid = strtol(name + 5, &end, 10);
	return errno || *end != '-' || pid <= 0 ? 0 : pid;
}

int db_boots_interrupted(sqlite3 *db, int *marked)
{
	sqlite3_stmt *st = NULL, *up = NULL;
	int rc, ret = -1;

	*marked = 0;
	if (prepare(db, &st, "SELECT id, domain_name FROM boots WHERE outcome = 'running'") < 0 ||
	    prepare(db, &up, "UPDATE boots SET outcome = NULL, reason = ?2, finished_at = ?3 "
			     "WHERE id = ?1 AND outcome = 'running'") < 0)
		goto out;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long pid = boot_owner((const char *)sqlite3_column_text(st, 1));
		char *why;

		if (!process_gone(pid))
			continue;
		why = xstrfmt("interrupted: klab (pid %ld) stopped during this boot; nothing was measured", pid);
		sqlite3_reset(up);
		sqlite3_bind_int64(up, 1, sqlite3_column_int64(st, 0));
		sqlite3_bind_text(up, 2, why, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(up, 3, now_s());
		rc = sqlite3_step(up);
		free(why);
		if (rc != SQLITE_DONE) {
			error("cannot mark an interrupted boot: %s", sqlite3_errmsg(db));
			goto out;
		}
		(*marked)++;
	}
	if (rc != SQLITE_DONE) {
		error("cannot read boots: %s", sqlite3_errmsg(db));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	sqlite3_finalize(up);
	return ret;
}

/* ---- multisection (issue 6) ---------------------------------------------- */

int db_bisection_set_slots(sqlite3 *db, int64_t id, int slots)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE bisections SET slots = ?2 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, slots);
	return step_done(db, st, "cannot record the bisection's slots");
}

int db_bisection_slots(sqlite3 *db, int64_t id, int *slots)
{
	sqlite3_stmt *st;
	int rc;

	*slots = 1;
	if (prepare(db, &st, "SELECT slots FROM bisections WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*slots = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	return db_fail(db, "cannot read the bisection's slots");
}

int db_step_rounds(sqlite3 *db, int64_t bisection_id, int64_t **step_ids, int **rounds, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0, alloc_r = 0;
	int rc;

	*step_ids = NULL;
	*rounds = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT id, round FROM steps WHERE bisection_id = ?1 AND round IS NOT NULL "
			     "ORDER BY seq") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, bisection_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*step_ids, *nr + 1, alloc);
		ALLOC_GROW(*rounds, *nr + 1, alloc_r);
		(*step_ids)[*nr] = sqlite3_column_int64(st, 0);
		(*rounds)[*nr] = sqlite3_column_int(st, 1);
		(*nr)++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(*step_ids);
		free(*rounds);
		*step_ids = NULL;
		*rounds = NULL;
		*nr = 0;
		return db_fail(db, "cannot read the rounds of the steps");
	}
	return 0;
}

int db_round_begin(sqlite3 *db, int64_t bisection_id, struct step *steps, size_t n, int round)
{
	sqlite3_stmt *st = NULL;
	int64_t *stale = NULL;
	size_t nr_stale = 0, alloc_stale = 0;

	if (db_begin(db) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct step *s = &steps[i];
		int64_t existing = 0;
		int seq = 0, attempts = 0;

		/* an unfinished row for the same commit is the same step retried */
		if (prepare(db, &st, "SELECT id, seq, attempts FROM steps WHERE bisection_id = ?1 AND hash = ?2 "
				     "AND status != 'done' AND phase = ?3 ORDER BY seq DESC LIMIT 1") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, bisection_id);
		sqlite3_bind_text(st, 2, s->hash, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, s->phase, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) == SQLITE_ROW) {
			existing = sqlite3_column_int64(st, 0);
			seq = sqlite3_column_int(st, 1);
			attempts = sqlite3_column_int(st, 2);
		}
		sqlite3_finalize(st);
		if (existing) {
			if (prepare(db, &st, "UPDATE steps SET status = 'running', attempts = attempts + 1, "
					     "remaining = ?2, log_path = ?3, started_at = ?4, reason = NULL, round = ?5 "
					     "WHERE id = ?1") < 0)
				goto fail;
			sqlite3_bind_int64(st, 1, existing);
			sqlite3_bind_int(st, 2, s->remaining);
			sqlite3_bind_text(st, 3, s->log_path, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(st, 4, now_s());
			sqlite3_bind_int(st, 5, round);
			if (step_done(db, st, "cannot restart step") < 0)
				goto fail;
			s->id = existing;
			s->seq = seq;
			s->attempts = attempts + 1;
			continue;
		}
		if (prepare(db, &st, "INSERT INTO steps (bisection_id, seq, hash, phase, status, remaining, log_path, "
				     "started_at, round) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM steps "
				     "WHERE bisection_id = ?1), ?2, ?3, 'running', ?4, ?5, ?6, ?7)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, bisection_id);
		sqlite3_bind_text(st, 2, s->hash, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, s->phase, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 4, s->remaining);
		sqlite3_bind_text(st, 5, s->log_path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 6, now_s());
		sqlite3_bind_int(st, 7, round);
		if (step_done(db, st, "cannot record step") < 0)
			goto fail;
		s->id = sqlite3_last_insert_rowid(db);
		if (prepare(db, &st, "SELECT seq FROM steps WHERE id = ?1") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, s->id);
		if (sqlite3_step(st) == SQLITE_ROW)
			s->seq = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		s->attempts = 1;
	}
	/* Any other unfinished bisect row was a commit no longer tested: as
	 * db_step_begin, kept as aborted when it has boots, else dropped. */
	if (prepare(db, &st, "SELECT id FROM steps WHERE bisection_id = ?1 AND status != 'done' "
			     "AND phase IN ('bisect', 'merge-base')") < 0)
		goto fail;
	sqlite3_bind_int64(st, 1, bisection_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int mine = 0;
		for (size_t i = 0; i < n; i++)
			mine |= steps[i].id == id;
		if (!mine) {
			ALLOC_GROW(stale, nr_stale + 1, alloc_stale);
			stale[nr_stale++] = id;
		}
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < nr_stale; i++) {
		if (prepare(db, &st, "UPDATE steps SET status = 'aborted' WHERE id = ?1 AND status = 'running' "
				     "AND EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, stale[i]);
		if (step_done(db, st, "cannot drop stale step") < 0)
			goto fail;
		if (prepare(db, &st, "DELETE FROM steps WHERE id = ?1 "
				     "AND NOT EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)") < 0)
			goto fail;
		sqlite3_bind_int64(st, 1, stale[i]);
		if (step_done(db, st, "cannot drop stale step") < 0)
			goto fail;
	}
	free(stale);
	return db_commit(db);
fail:
	free(stale);
	db_rollback(db);
	return -1;
}

/* ---- hypervisors (klab host) ------------------------------------------------ */

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

static void host_from_row(sqlite3_stmt *st, struct db_host *h)
{
	h->id = sqlite3_column_int64(st, 0);
	h->name = col_strdup(st, 1);
	h->uri = col_strdup(st, 2);
	h->cpus = col_strdup(st, 3);
	h->max_guests = (unsigned)sqlite3_column_int(st, 4);
	h->accel = col_strdup(st, 5);
	h->created_at = sqlite3_column_int64(st, 6);
}

int db_host_add(sqlite3 *db, const struct db_host *h, int64_t *id)
{
	sqlite3_stmt *st;
	int rc;

	if (db_begin(db) < 0)
		return -1;
	if (prepare(db, &st, "SELECT removed_at FROM hosts WHERE name = ?1") < 0)
		goto fail;
	sqlite3_bind_text(st, 1, h->name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL) {
		sqlite3_finalize(st);
		db_rollback(db);
		return error("host '%s' exists already ('klab host remove %s' first)", h->name, h->name);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_fail(db, "cannot look the host up");
		goto fail;
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
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT " HOST_COLUMNS " FROM hosts WHERE removed_at IS NULL ORDER BY name") < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(*out, *nr + 1, alloc);
		memset(&(*out)[*nr], 0, sizeof(**out));
		host_from_row(st, &(*out)[(*nr)++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		db_hosts_free(*out, *nr);
		*out = NULL;
		*nr = 0;
		return db_fail(db, "cannot list hosts");
	}
	return 0;
}

int db_host_find(sqlite3 *db, const char *name, struct db_host *h)
{
	sqlite3_stmt *st;
	int rc;

	memset(h, 0, sizeof(*h));
	if (prepare(db, &st, "SELECT " HOST_COLUMNS " FROM hosts WHERE name = ?1 AND removed_at IS NULL") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		host_from_row(st, h);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, "cannot look the host up");
	return rc == SQLITE_ROW;
}

int db_host_remove(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE hosts SET removed_at = ?2 WHERE name = ?1 AND removed_at IS NULL") < 0)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, now_s());
	if (step_done(db, st, "cannot remove the host") < 0)
		return -1;
	return sqlite3_changes(db) > 0;
}

int db_host_boots(sqlite3 *db, int64_t host_id, int64_t *n)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "SELECT count(*) FROM boots WHERE host_id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, host_id);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, "cannot count the host's boots");
	}
	*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

int db_bisection_host(sqlite3 *db, int64_t step_id, int64_t *host_id)
{
	sqlite3_stmt *st;
	int rc;

	*host_id = 0;
	if (prepare(db, &st, "SELECT b.host_id FROM boots b JOIN steps s ON s.id = b.step_id "
			     "WHERE s.bisection_id = (SELECT bisection_id FROM steps WHERE id = ?1) "
			     "AND b.host_id IS NOT NULL ORDER BY b.id DESC LIMIT 1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*host_id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, "cannot read the bisection's host");
	return 0;
}

int db_run_set_set_host(sqlite3 *db, int64_t run_set_id, const char *uri, const char *host, const char *accel)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE run_sets SET uri = ?2, host = ?3, accel = ?4 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, run_set_id);
	bind_text_or_null(st, 2, uri);
	bind_text_or_null(st, 3, host);
	bind_text_or_null(st, 4, accel);
	return step_done(db, st, "cannot move the run set to its host");
}
