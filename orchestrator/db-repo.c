/* The repositories klab works on and the commits it has seen: the facts
 * (subject, author, tree) every report and notice names a commit by. */
#include "db-int.h"
#include "gitrepo.h"

static int repo_lookup(sqlite3 *db, const char *path, int64_t *id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "SELECT id FROM repos WHERE path = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
	return step_row(db, st, row_int64, id, "cannot read repositories");
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
