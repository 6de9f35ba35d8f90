/* Kernel builds: one row per (tree, recipe), failures included, so a
 * commit is never built twice and a broken tree is not rebuilt. */
#include "lab/db-int.h"

#include <stdlib.h>
#include <string.h>

static void build_from_row(sqlite3_stmt *st, void *arg)
{
	struct db_build *out = arg;

	READ_COLS(st, 0, COL(&out->id), COL(&out->status), COL(&out->artifact_dir), COL(&out->config_hash),
		  COL(&out->error_excerpt), COL(&out->log_path), COL(&out->duration_ms), COL(&out->objects),
		  COL(&out->finished_at));
}

int db_build_find(sqlite3 *db, const char *tree, const char *recipe_id, struct db_build *out)
{
	memset(out, 0, sizeof(*out));
	return step_row(db, stmt(db, "SELECT id, status, artifact_dir, config_hash, error_excerpt, log_path, "
				 "coalesce(duration_ms, 0), coalesce(objects, 0), coalesce(finished_at, 0) "
				 "FROM builds WHERE tree = ?1 AND recipe_id = ?2",
				 ARGS(arg_text(tree), arg_text(recipe_id))),
			build_from_row, out, "cannot read builds");
}

void db_build_release(struct db_build *b)
{
	FREE_MANY(b->status, b->artifact_dir, b->config_hash, b->error_excerpt, b->log_path);
	memset(b, 0, sizeof(*b));
}

int db_build_begin(sqlite3 *db, int64_t repo_id, const char *commit, const char *tree,
		   const char *recipe_id, const char *recipe, int64_t *id)
{
	return insert_returning(db, stmt(db, "INSERT INTO builds (repo_id, commit_hash, tree, recipe_id, recipe, "
					 "status, started_at) VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6) "
					 "ON CONFLICT (tree, recipe_id) DO UPDATE SET status = 'running', "
					 "started_at = ?6, finished_at = NULL, artifact_dir = NULL, "
					 "error_excerpt = NULL RETURNING id",
					 ARGS(arg_int(repo_id), arg_text(commit), arg_text(tree), arg_text(recipe_id),
					      arg_text(recipe), arg_int(now_s()))),
				id, "cannot record build");
}

int db_build_finish(sqlite3 *db, int64_t id, const char *status, const char *artifact_dir,
		    const char *config_hash, const char *config_text, const char *excerpt,
		    const char *log_path, int64_t duration_ms, int objects)
{
	return step_done(db, stmt(db, "UPDATE builds SET status = ?2, artifact_dir = ?3, config_hash = ?4, "
				 "config_text = ?5, error_excerpt = ?6, log_path = ?7, duration_ms = ?8, objects = ?9, "
				 "finished_at = ?10 WHERE id = ?1",
				 ARGS(arg_int(id), arg_text(status), arg_text(artifact_dir), arg_text(config_hash),
				      arg_text(config_text), arg_text(excerpt), arg_text(log_path),
				      arg_int(duration_ms), arg_int(objects), arg_int(now_s()))),
			 "cannot record build result");
}

int db_build_forget_artifact(sqlite3 *db, const char *artifact_dir)
{
	return step_done(db, stmt(db, "UPDATE builds SET artifact_dir = NULL, status = 'env-failed', "
				 "error_excerpt = 'artifact removed by klab gc' "
				 "WHERE artifact_dir = ?1 AND status = 'ok'",
				 ARGS(arg_text(artifact_dir))),
			 "cannot update build");
}
