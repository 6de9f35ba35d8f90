/* All of klab's SQL.  Statements bind every value (no string-built SQL);
 * each function reports its own error and returns -1. */
#include "db.h"
#include "gitrepo.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char klab_schema_sql[];
extern const char klab_migration_2_sql[];

/* Migration n brings the database from user_version n-1 to n. */
static const char *const migrations[] = {
	klab_schema_sql,
	klab_migration_2_sql,
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
	sqlite3_busy_timeout(db, 30000);
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

int db_repo_id(sqlite3 *db, const char *path, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT INTO repos (path, created_at) VALUES (?1, ?2) "
			     "ON CONFLICT (path) DO NOTHING") < 0)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, now_s());
	if (step_done(db, st, "cannot record repository") < 0)
		return -1;
	if (prepare(db, &st, "SELECT id FROM repos WHERE path = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_fail(db, "cannot find repository");
	}
	*id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
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

	if (db_begin(db) < 0)
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
	return db_commit(db);
fail:
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
			     "commit_hash, uri, host, accel, repeat, state, created_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'running', ?13) RETURNING id") < 0)
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
			     "memory_mb, pinning, console_path, outcome, started_at) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'running', ?11) RETURNING id") < 0)
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
