/* The repositories klab works on and the commits it has seen: the facts
 * (subject, author, tree) every report and notice names a commit by. */
#include "lab/db-int.h"
#include "lab/gitrepo.h"

static int repo_lookup(sqlite3 *db, const char *path, int64_t *id)
{
	return step_row(db, stmt(db, "SELECT id FROM repos WHERE path = ?1", ARGS(arg_text(path))), row_int64, id,
			"cannot read repositories");
}

int db_repo_id(sqlite3 *db, const char *path, int64_t *id)
{
	int rc;

	/* a known repository costs no write (many klab processes at once
	 * queue for the one writer) */
	rc = repo_lookup(db, path, id);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (step_done(db, stmt(db, "INSERT INTO repos (path, created_at) VALUES (?1, ?2) ON CONFLICT (path) DO NOTHING",
			       ARGS(arg_text(path), arg_int(now_s()))),
		      "cannot record repository") < 0)
		return -1;
	rc = repo_lookup(db, path, id);
	if (rc == 0)
		return error("database: repository '%s' vanished after it was recorded", path);
	return rc < 0 ? -1 : 0;
}

int db_commit_store(sqlite3 *db, int64_t repo_id, const struct commit_info *ci)
{
	return step_done(db, stmt(db, "INSERT INTO commits (repo_id, hash, tree, subject, author, author_time, "
				 "commit_time) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (repo_id, hash) DO NOTHING",
				 ARGS(arg_int(repo_id), arg_text(ci->hash), arg_text(ci->tree), arg_text(ci->subject),
				      arg_text(ci->author), arg_int(ci->author_time), arg_int(ci->commit_time))),
			 "cannot record commit");
}

char *db_commit_subject(sqlite3 *db, int64_t repo_id, const char *hash)
{
	sqlite3_stmt *st = stmt(db, "SELECT subject FROM commits WHERE repo_id = ?1 AND hash = ?2",
				ARGS(arg_int(repo_id), arg_text(hash)));
	char *s = NULL;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		s = col_strdup(st, 0);
	sqlite3_finalize(st);
	return s;
}

/* The facts of a commit, as db_commit_facts hands them out. */
struct commit_facts {
	char *subject, *author;
	int64_t author_time;
};

static void facts_from_row(sqlite3_stmt *st, void *arg)
{
	struct commit_facts *f = arg;

	f->subject = col_strdup(st, 0);
	f->author = col_strdup(st, 1);
	f->author_time = sqlite3_column_int64(st, 2);
}

int db_commit_facts(sqlite3 *db, int64_t repo_id, const char *hash, char **subject, char **author,
		    int64_t *author_time)
{
	struct commit_facts f = { NULL, NULL, 0 };
	int rc = step_row(db, stmt(db, "SELECT subject, author, author_time FROM commits WHERE repo_id = ?1 "
				   "AND hash = ?2", ARGS(arg_int(repo_id), arg_text(hash))),
			  facts_from_row, &f, "cannot read commit");

	*subject = f.subject;
	*author = f.author;
	*author_time = f.author_time;
	return rc;
}
