/* Kernel builds: one row per (tree, recipe), failures included, so a
 * commit is never built twice and a broken tree is not rebuilt. */
#include "db-int.h"

#include <stdlib.h>
#include <string.h>

static void build_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_build *out = arg;

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

int db_build_find(sqlite3 *db, const char *tree, const char *recipe_id, struct db_build *out)
{
	sqlite3_stmt *st;

	memset(out, 0, sizeof(*out));
	if (prepare(db, &st, "SELECT id, status, artifact_dir, config_hash, error_excerpt, log_path, "
			     "coalesce(duration_ms, 0), coalesce(objects, 0), coalesce(finished_at, 0) "
			     "FROM builds WHERE tree = ?1 AND recipe_id = ?2") < 0)
		return -1;
	sqlite3_bind_text(st, 1, tree, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, recipe_id, -1, SQLITE_TRANSIENT);
	return step_row(db, st, build_from_row, out, "cannot read builds");
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
	return insert_returning(db, st, id, "cannot record build");
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
