/* Bisections, their steps (one per tested commit, rounds of a
 * multisection) and the verdict evidence stored with a step. */
#include "lab/db-int.h"
#include "core/revert-rule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the vocabulary: one table per column (db.h) ----------------------- */

KLAB_ENUM_IMPL(bisection_kind, BISECTION_KIND_LAST, "command", "job")
KLAB_ENUM_IMPL(bisection_state, BISECTION_STATE_LAST, "created", "running", "stopped", "done", "failed")
KLAB_ENUM_IMPL(bisection_result, BISECTION_RESULT_LAST,
	       NULL, "culprit", "skipped-only", "not-reproduced", "unconfirmed", "error")
KLAB_ENUM_IMPL(step_phase, STEP_PHASE_LAST, "bisect", "merge-base", "reference", "confirm", "revert", "profile")
KLAB_ENUM_IMPL(step_status, STEP_STATUS_LAST, "running", "done", "aborted")

/* A stored name into its enum; one the table lacks (a newer klab's) as
 * `other`. */
static int parsed(int v, int other)
{
	return v < 0 ? other : v;
}

/* A bisection's list (paths, argv): one row per item, ?1 the bisection,
 * ?2 its index, ?3 the text. */
static int insert_list(sqlite3 *db, const char *sql, int64_t bisection_id, char *const *items, size_t n,
		       const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (step_done(db, stmt(db, sql, ARGS(arg_int(bisection_id), arg_int((int64_t)i), arg_text(items[i]))),
			      what) < 0)
			return -1;
	return 0;
}

int db_bisection_create(sqlite3 *db, struct bisection *b)
{
	/* inside the caller's transaction when there is one (queued
	 * bisections are created and queued at once) */
	int own = sqlite3_get_autocommit(db);
	const char *kind = bisection_kind_to_string(b->job_path ? BISECTION_JOB : BISECTION_COMMAND);

	if (own && db_begin(db) < 0)
		return -1;
	if (step_done(db, stmt(db, "INSERT INTO bisections (repo_id, kind, state, bad, first_parent, timeout_ms, "
			       "created_at, build, config, job_path, job_text, kpi) "
			       "VALUES (?1, ?8, 'created', ?2, ?3, ?4, ?5, ?6, ?7, ?9, ?10, ?11)",
			       ARGS(arg_int(b->repo_id), arg_text(b->bad), arg_int(b->first_parent),
				    arg_int(b->timeout_ms), arg_int(now_s()), arg_int(b->build), arg_text(b->config),
				    arg_text(kind), arg_text(b->job_path), arg_text(b->job_text), arg_text(b->kpi))),
		      "cannot create bisection") < 0)
		goto fail;
	b->id = sqlite3_last_insert_rowid(db);
	for (size_t i = 0; i < b->nr_goods; i++)
		if (step_done(db, stmt(db, "INSERT OR IGNORE INTO bisection_goods (bisection_id, hash) VALUES (?1, ?2)",
				       ARGS(arg_int(b->id), arg_text(b->goods[i]))),
			      "cannot record good revision") < 0)
			goto fail;
	if (insert_list(db, "INSERT INTO bisection_paths (bisection_id, idx, path) VALUES (?1, ?2, ?3)", b->id,
			b->paths, b->nr_paths, "cannot record path") < 0 ||
	    insert_list(db, "INSERT INTO bisection_argv (bisection_id, idx, arg) VALUES (?1, ?2, ?3)", b->id,
			b->argv, b->argc, "cannot record command") < 0)
		goto fail;
	return own ? db_commit(db) : 0;
fail:
	if (own)
		db_rollback(db);
	return -1;
}

void bisection_release(struct bisection *b)
{
	FREE_MANY(b->repo_path, b->kind, b->state, b->result, b->culprit, b->message, b->config, b->job_path,
		  b->job_text, b->kpi, b->goods);
	strings_free(b->paths, b->nr_paths);
	strings_free(b->argv, b->argc);
	free(b->candidates);
	memset(b, 0, sizeof(*b));
}

static void bisection_from_row(sqlite3_stmt *st, void *arg)
{
	struct bisection *b = arg;

	READ_COLS(st, 0, COL(&b->id), COL(&b->repo_id), COL(&b->repo_path), COL(&b->kind), COL(&b->state),
		  COL(&b->result), COL(&b->bad), COL(&b->first_parent), COL(&b->timeout_ms), COL(&b->culprit),
		  COL(&b->message), COL(&b->created_at), COL(&b->started_at), COL(&b->finished_at), COL(&b->build),
		  COL(&b->config), COL(&b->job_path), COL(&b->job_text), COL(&b->kpi));
	b->kind_id = parsed(bisection_kind_from_string(b->kind), BISECTION_COMMAND);
	b->state_id = parsed(bisection_state_from_string(b->state), BISECTION_CREATED);
	b->result_id = parsed(bisection_result_from_string(b->result), BISECTION_ERROR);
}

int db_bisection_load(sqlite3 *db, int64_t id, struct bisection *b)
{
	void *goods, *candidates;
	int rc;

	memset(b, 0, sizeof(*b));
	rc = step_row(db, stmt(db, "SELECT b.id, b.repo_id, r.path, b.kind, b.state, b.result, b.bad, "
			       "b.first_parent, b.timeout_ms, b.culprit, b.message, b.created_at, b.started_at, "
			       "b.finished_at, b.build, b.config, b.job_path, b.job_text, b.kpi "
			       "FROM bisections b JOIN repos r ON r.id = b.repo_id WHERE b.id = ?1",
			       ARGS(arg_int(id))),
		      bisection_from_row, b, "cannot read bisection");
	if (rc == 0)
		return error("no bisection %lld (see 'klab bisect list')", (long long)id);
	if (rc < 0)
		return -1;
	rc = step_rows(db, stmt(db, "SELECT hash FROM bisection_goods WHERE bisection_id = ?1 ORDER BY rowid",
				ARGS(arg_int(id))),
		       row_hex, NULL, sizeof(*b->goods), &goods, &b->nr_goods, "cannot read bisection");
	b->goods = goods;
	if (rc < 0 ||
	    col_strings(db, stmt(db, "SELECT path FROM bisection_paths WHERE bisection_id = ?1 ORDER BY idx",
				 ARGS(arg_int(id))),
			&b->paths, &b->nr_paths, "cannot read bisection") < 0 ||
	    col_strings(db, stmt(db, "SELECT arg FROM bisection_argv WHERE bisection_id = ?1 ORDER BY idx",
				 ARGS(arg_int(id))),
			&b->argv, &b->argc, "cannot read bisection") < 0)
		goto fail;
	b->argv = xrealloc(b->argv, (b->argc + 1) * sizeof(*b->argv));
	b->argv[b->argc] = NULL;
	rc = step_rows(db, stmt(db, "SELECT hash FROM bisection_candidates WHERE bisection_id = ?1 ORDER BY rowid",
				ARGS(arg_int(id))),
		       row_hex, NULL, sizeof(*b->candidates), &candidates, &b->nr_candidates, "cannot read bisection");
	b->candidates = candidates;
	if (rc < 0)
		goto fail;
	return 0;
fail:
	bisection_release(b);
	return -1;
}

int db_bisection_ids(sqlite3 *db, int64_t **ids, size_t *nr)
{
	return col_int64s(db, stmt(db, "SELECT id FROM bisections ORDER BY id", NULL), ids, nr,
			  "cannot read bisections");
}

int db_bisection_set_state(sqlite3 *db, int64_t id, const char *state, const char *result,
			   const char *culprit, const char *message)
{
	int v = bisection_state_from_string(state);
	int finished = v == BISECTION_DONE || v == BISECTION_FAILED;

	return step_done(db, stmt(db, "UPDATE bisections SET state = ?2, result = ?3, culprit = ?4, message = ?5, "
				 "started_at = CASE WHEN ?2 = 'running' THEN coalesce(started_at, ?6) "
				 "ELSE started_at END, finished_at = CASE WHEN ?7 THEN ?6 ELSE NULL END WHERE id = ?1",
				 ARGS(arg_int(id), arg_text(state), arg_text(result), arg_text(culprit),
				      arg_text(message), arg_int(now_s()), arg_int(finished))),
			 "cannot update bisection");
}

int db_bisection_enter(sqlite3 *db, int64_t id, enum bisection_state state, enum bisection_result result,
		       const char *culprit, const char *message)
{
	return db_bisection_set_state(db, id, bisection_state_to_string(state), bisection_result_to_string(result),
				      culprit, message);
}

int db_bisection_set_candidates(sqlite3 *db, int64_t id, char (*hashes)[41], size_t nr)
{
	if (db_begin(db) < 0)
		return -1;
	if (step_done(db, stmt(db, "DELETE FROM bisection_candidates WHERE bisection_id = ?1", ARGS(arg_int(id))),
		      "cannot clear candidates") < 0)
		goto fail;
	for (size_t i = 0; i < nr; i++)
		if (step_done(db, stmt(db, "INSERT OR IGNORE INTO bisection_candidates (bisection_id, hash) "
				       "VALUES (?1, ?2)", ARGS(arg_int(id), arg_text(hashes[i]))),
			      "cannot record candidate") < 0)
			goto fail;
	return db_commit(db);
fail:
	db_rollback(db);
	return -1;
}

static void step_release(void *arg)
{
	struct step *s = arg;

	FREE_MANY(s->phase, s->status, s->verdict, s->reason, s->log_path, s->subject);
}

void steps_release(struct step *steps, size_t nr)
{
	rows_free(steps, nr, sizeof(*steps), step_release);
}

/* The steps of a bisection, of its current pass or (all) of every pass. */
static void step_from_row(sqlite3_stmt *st, void *arg)
{
	struct step *s = arg;

	READ_COLS(st, 0, COL(&s->id), COL(&s->seq), COL(&s->hash), COL(&s->phase), COL(&s->status), COL(&s->verdict),
		  COL(&s->reason), COL(&s->exit_code), COL(&s->attempts), COL(&s->remaining), COL(&s->log_path),
		  COL(&s->choose_ms), COL(&s->checkout_ms), COL(&s->test_ms), COL(&s->started_at),
		  COL(&s->finished_at), COL(&s->subject), COL(&s->pass), COL(&s->half));
	s->phase_id = parsed(step_phase_from_string(s->phase), STEP_PHASE_BISECT);
	s->status_id = parsed(step_status_from_string(s->status), STEP_ABORTED);
	/* a verdict this klab does not know: a skip, never a mark */
	s->mark = parsed(bisect_mark_from_string(s->verdict), BISECT_SKIP);
}

/* The steps of a bisection, of its current pass or (all) of every pass. */
static int steps_load(sqlite3 *db, int64_t bisection_id, int all, struct step **steps, size_t *nr)
{
	void *rows;
	int rc = step_rows(db, stmt(db, "SELECT s.id, s.seq, s.hash, s.phase, s.status, s.verdict, s.reason, "
				    "coalesce(s.exit_code, -1), s.attempts, coalesce(s.remaining, -1), s.log_path, "
				    "coalesce(s.choose_ms, 0), coalesce(s.checkout_ms, 0), coalesce(s.test_ms, 0), "
				    "s.started_at, coalesce(s.finished_at, 0), c.subject, s.pass, s.half "
				    "FROM steps s JOIN bisections b ON b.id = s.bisection_id "
				    "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = s.hash "
				    "WHERE s.bisection_id = ?1 AND (?2 OR s.pass = b.pass) ORDER BY s.seq",
				    ARGS(arg_int(bisection_id), arg_int(all))),
			   step_from_row, step_release, sizeof(**steps), &rows, nr, "cannot read steps");

	*steps = rows;
	return rc;
}

int db_steps_load(sqlite3 *db, int64_t bisection_id, struct step **steps, size_t *nr)
{
	return steps_load(db, bisection_id, 0, steps, nr);
}

int db_steps_load_all(sqlite3 *db, int64_t bisection_id, struct step **steps, size_t *nr)
{
	return steps_load(db, bisection_id, 1, steps, nr);
}

/* The row a step runs under: an unfinished row for the same commit and
 * phase is the same step retried (attempts + 1), else a new row.  round
 * <= 0: none (a restarted row keeps the round it had).  found: whether an
 * unfinished row was there; drop_stale runs between the lookup and the
 * insert of a new row.  Inside the caller's transaction. */
struct claimed {
	int64_t id;
	int seq, attempts;
};

static void claimed_from_row(sqlite3_stmt *st, void *arg)
{
	struct claimed *c = arg;

	c->id = sqlite3_column_int64(st, 0);
	c->seq = sqlite3_column_int(st, 1);
	c->attempts = sqlite3_column_int(st, 2);
}

static int step_claim(sqlite3 *db, int64_t bisection_id, struct step *s, int round,
		      int (*drop_stale)(sqlite3 *db, int64_t bisection_id))
{
	struct claimed old = { 0 };

	if (step_row(db, stmt(db, "SELECT id, seq, attempts FROM steps WHERE bisection_id = ?1 AND hash = ?2 "
			      "AND status != 'done' AND phase = ?3 "
			      "AND pass = (SELECT pass FROM bisections WHERE id = ?1) ORDER BY seq DESC LIMIT 1",
			      ARGS(arg_int(bisection_id), arg_text(s->hash), arg_text(s->phase))),
		     claimed_from_row, &old, "cannot read steps") < 0)
		return -1;
	if (old.id) {
		if (step_done(db, stmt(db, "UPDATE steps SET status = 'running', attempts = attempts + 1, "
				       "remaining = ?2, log_path = ?3, started_at = ?4, reason = NULL, "
				       "round = coalesce(?5, round) WHERE id = ?1",
				       ARGS(arg_int(old.id), arg_int(s->remaining), arg_text(s->log_path),
					    arg_int(now_s()), arg_id(round))),
			      "cannot restart step") < 0)
			return -1;
		s->id = old.id;
		s->seq = old.seq;
		s->attempts = old.attempts + 1;
		return 0;
	}
	if (drop_stale && drop_stale(db, bisection_id) < 0)
		return -1;
	if (step_done(db, stmt(db, "INSERT INTO steps (bisection_id, seq, hash, phase, status, remaining, log_path, "
			       "started_at, round, pass, half) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 "
			       "FROM steps WHERE bisection_id = ?1), ?2, ?3, 'running', ?4, ?5, ?6, ?7, "
			       "(SELECT pass FROM bisections WHERE id = ?1), "
			       "(SELECT half FROM bisections WHERE id = ?1))",
			       ARGS(arg_int(bisection_id), arg_text(s->hash), arg_text(s->phase),
				    arg_int(s->remaining), arg_text(s->log_path), arg_int(now_s()), arg_id(round))),
		      "cannot record step") < 0)
		return -1;
	s->id = sqlite3_last_insert_rowid(db);
	s->attempts = 1;
	return step_row(db, stmt(db, "SELECT seq FROM steps WHERE id = ?1", ARGS(arg_int(s->id))), row_int, &s->seq,
			"cannot read steps") < 0 ? -1 : 0;
}

/* Unfinished steps no longer tested (`which`: a WHERE clause on ?1 = id):
 * one that already has boots keeps them, marked aborted; the rest go. */
static int drop_steps(sqlite3 *db, const char *which, int64_t id)
{
	char *sql = xstrfmt("UPDATE steps SET status = 'aborted' WHERE %s AND status = 'running' "
			    "AND EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)", which);
	int rc = step_done(db, stmt(db, sql, ARGS(arg_int(id))), "cannot drop stale step");

	free(sql);
	if (rc < 0)
		return -1;
	sql = xstrfmt("DELETE FROM steps WHERE %s AND status != 'done' "
		      "AND NOT EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)", which);
	rc = step_done(db, stmt(db, sql, ARGS(arg_int(id))), "cannot drop stale step");
	free(sql);
	return rc;
}

/* Any other unfinished bisect row was a commit we no longer test
 * (reference and confirm steps come in pairs, both running). */
static int drop_stale_bisect_steps(sqlite3 *db, int64_t bisection_id)
{
	return drop_steps(db, "bisection_id = ?1 AND phase IN ('bisect', 'merge-base')", bisection_id);
}

int db_step_begin(sqlite3 *db, int64_t bisection_id, struct step *s)
{
	if (db_begin(db) < 0)
		return -1;
	if (step_claim(db, bisection_id, s, 0, drop_stale_bisect_steps) < 0) {
		db_rollback(db);
		return -1;
	}
	return db_commit(db);
}

int db_step_finish(sqlite3 *db, const struct step *s)
{
	int rc = step_changed(db, stmt(db, "UPDATE steps SET status = 'done', verdict = ?2, reason = ?3, "
				       "exit_code = ?4, choose_ms = ?5, checkout_ms = ?6, test_ms = ?7, "
				       "finished_at = ?8 WHERE id = ?1 AND status = 'running'",
				       ARGS(arg_int(s->id), arg_text(s->verdict), arg_text(s->reason),
					    arg_nonneg(s->exit_code), arg_int(s->choose_ms), arg_int(s->checkout_ms),
					    arg_int(s->test_ms), arg_int(now_s()))),
				"cannot record step result");

	if (rc == 0)
		return error("step %lld was not running: another klab process owns this bisection?",
			     (long long)s->id);
	return rc < 0 ? -1 : 0;
}

int db_step_retire(sqlite3 *db, int64_t step_id, const char *reason)
{
	return step_done(db, stmt(db, "UPDATE steps SET status = 'done', verdict = 'skip', reason = ?2, "
				 "finished_at = ?3 WHERE id = ?1 AND status != 'done'",
				 ARGS(arg_int(step_id), arg_text(reason), arg_int(now_s()))),
			 "cannot close a step");
}

int db_step_reopen(sqlite3 *db, int64_t step_id)
{
	int rc = step_changed(db, stmt(db, "UPDATE steps SET status = 'running', attempts = attempts + 1, "
				       "finished_at = NULL WHERE id = ?1 AND status = 'done'",
				       ARGS(arg_int(step_id))),
				"cannot open a step again");

	if (rc == 0)
		return error("step %lld is not done: another klab process owns this bisection?", (long long)step_id);
	return rc < 0 ? -1 : 0;
}

int db_step_abort(sqlite3 *db, int64_t step_id, const char *reason)
{
	return step_done(db, stmt(db, "UPDATE steps SET status = 'aborted', reason = ?2, finished_at = ?3 WHERE id = ?1",
				 ARGS(arg_int(step_id), arg_text(reason), arg_int(now_s()))),
			 "cannot record aborted step");
}

int db_verdict_store(sqlite3 *db, int64_t step_id, const char *rule, double p_good, double p_bad,
		     const char *statistic, const char *detail)
{
	return step_done(db, stmt(db, "INSERT INTO verdicts (step_id, rule, p_good, p_bad, statistic, detail, "
				 "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
				 ARGS(arg_int(step_id), arg_text(rule), arg_real(p_good), arg_real(p_bad),
				      arg_text(statistic), arg_text(detail), arg_int(now_s()))),
			 "cannot store the verdict");
}

int db_step_verdicts(sqlite3 *db, int64_t step_id, char ***details, size_t *n)
{
	return col_strings(db, stmt(db, "SELECT coalesce(detail, rule) FROM verdicts WHERE step_id = ?1 ORDER BY id",
				    ARGS(arg_int(step_id))),
			   details, n, "cannot read verdicts");
}

/* One integer column of a bisection set (sql: ?1 the id, ?2 the value). */
static int set_bisection_int(sqlite3 *db, const char *sql, int64_t id, int value, const char *what)
{
	return step_done(db, stmt(db, sql, ARGS(arg_int(id), arg_int(value))), what);
}

/* One integer column of bisection id (sql selects it by ?1): *out, or
 * dflt when there is no such bisection.  0, or -1 after db_fail(what). */
static int bisection_int(sqlite3 *db, const char *sql, int64_t id, int dflt, int *out, const char *what)
{
	*out = dflt;
	return step_row(db, stmt(db, sql, ARGS(arg_int(id))), row_int, out, what) < 0 ? -1 : 0;
}

/* db_bisection_<col> and db_bisection_set_<col> (db.h): an integer column
 * of a bisection as it is, dflt when there is no such bisection; the
 * errors say "cannot read" or "cannot record" `what`. */
#define BISECTION_INT(col, dflt, what)                                                                   \
	int db_bisection_##col(sqlite3 *db, int64_t id, int *out)                                        \
	{                                                                                                \
		return bisection_int(db, "SELECT " #col " FROM bisections WHERE id = ?1", id, (dflt), out, \
				     "cannot read " what);                                               \
	}                                                                                                \
	int db_bisection_set_##col(sqlite3 *db, int64_t id, int value)                                   \
	{                                                                                                \
		return set_bisection_int(db, "UPDATE bisections SET " #col " = ?2 WHERE id = ?1", id, value, \
					 "cannot record " what);                                         \
	}

BISECTION_INT(slots, 1, "the bisection's slots")

int db_step_rounds(sqlite3 *db, int64_t bisection_id, int64_t **step_ids, int **rounds, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0, alloc_r = 0;
	int rc;

	*step_ids = NULL;
	*rounds = NULL;
	*nr = 0;
	st = stmt(db, "SELECT id, round FROM steps WHERE bisection_id = ?1 AND round IS NOT NULL ORDER BY seq",
		  ARGS(arg_int(bisection_id)));
	if (!st)
		return -1;
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
	int64_t *ids = NULL;
	size_t nr = 0;

	if (db_begin(db) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (step_claim(db, bisection_id, &steps[i], round, NULL) < 0)
			goto fail;
	/* Any other unfinished bisect row was a commit no longer tested: as
	 * db_step_begin, kept as aborted when it has boots, else dropped. */
	if (col_int64s(db, stmt(db, "SELECT id FROM steps WHERE bisection_id = ?1 AND status != 'done' "
				"AND phase IN ('bisect', 'merge-base')", ARGS(arg_int(bisection_id))),
		       &ids, &nr, "cannot read steps") < 0)
		goto fail;
	for (size_t k = 0; k < nr; k++) {
		int mine = 0;

		for (size_t i = 0; i < n; i++)
			mine |= steps[i].id == ids[k];
		if (!mine && drop_steps(db, "id = ?1", ids[k]) < 0)
			goto fail;
	}
	free(ids);
	return db_commit(db);
fail:
	free(ids);
	db_rollback(db);
	return -1;
}

/* ---- the revert check (migration 7) ----------------------------------------- */

int db_bisection_set_revert_check(sqlite3 *db, int64_t id, int on)
{
	return set_bisection_int(db, "UPDATE bisections SET revert_check = ?2 WHERE id = ?1", id, on ? 1 : 0,
				 "cannot record whether the bisection checks a revert");
}

int db_bisection_revert_check(sqlite3 *db, int64_t id, int *on)
{
	return bisection_int(db, "SELECT revert_check FROM bisections WHERE id = ?1", id, 1, on,
			     "cannot read whether the bisection checks a revert");
}

/* ---- drift, the run cap and the pass (migration 10) --------------------------- */

BISECTION_INT(pass, 1, "the bisection's pass")

/* ---- two change points (migration 11) ------------------------------------- */

int db_bisection_split(sqlite3 *db, int64_t id, char hex[41], int *has)
{
	int rc;

	hex[0] = 0;
	rc = step_row(db, stmt(db, "SELECT split_commit FROM bisections WHERE id = ?1 AND split_commit IS NOT NULL",
			       ARGS(arg_int(id))),
		      row_hex, hex, "cannot read the commit that split the bisection");
	*has = rc > 0;
	return rc < 0 ? -1 : 0;
}

int db_bisection_set_split(sqlite3 *db, int64_t id, const char *hex)
{
	/* the first commit between the ends splits the range; one level only */
	return step_done(db, stmt(db, "UPDATE bisections SET split_commit = ?2 WHERE id = ?1 AND split_commit IS NULL",
				 ARGS(arg_int(id), arg_text(hex))),
			 "cannot record the commit that splits the bisection");
}

BISECTION_INT(half, 0, "the bisection's half")

int db_half_culprit_store(sqlite3 *db, int64_t id, const struct half_culprit *c)
{
	return step_done(db, stmt(db, "INSERT OR REPLACE INTO bisection_culprits (bisection_id, half, culprit, "
				 "confirmed, share, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
				 ARGS(arg_int(id), arg_int(c->half), arg_text(c->has_culprit ? c->culprit : NULL),
				      arg_int(c->confirmed ? 1 : 0), isnan(c->share) ? arg_null() : arg_real(c->share),
				      arg_text(c->message ? c->message : ""))),
			 "cannot record the culprit of a half");
}

static void half_release(void *c)
{
	free(((struct half_culprit *)c)->message);
}

static void half_from_row(sqlite3_stmt *st, void *arg)
{
	struct half_culprit *c = arg;

	c->half = sqlite3_column_int(st, 0);
	c->has_culprit = sqlite3_column_type(st, 1) != SQLITE_NULL;
	if (c->has_culprit)
		col_hex(st, 1, c->culprit);
	c->confirmed = sqlite3_column_int(st, 2);
	c->share = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
	c->message = col_strdup(st, 4);
}

int db_half_culprits_load(sqlite3 *db, int64_t id, struct half_culprit **out, size_t *nr)
{
	void *rows;
	int rc = step_rows(db, stmt(db, "SELECT half, culprit, confirmed, share, message FROM bisection_culprits "
				    "WHERE bisection_id = ?1 ORDER BY half", ARGS(arg_int(id))),
			   half_from_row, half_release, sizeof(**out), &rows, nr,
			   "cannot read the culprits of the halves");

	*out = rows;
	return rc;
}

void half_culprits_release(struct half_culprit *c, size_t nr)
{
	rows_free(c, nr, sizeof(*c), half_release);
}

int db_bisection_set_drift(sqlite3 *db, int64_t id, double percent)
{
	/* the first trend seen stays: later verdicts only confirm the flag */
	return step_done(db, stmt(db, "UPDATE bisections SET drift = 1, drift_percent = coalesce(drift_percent, ?2) "
				 "WHERE id = ?1", ARGS(arg_int(id), arg_real(percent))),
			 "cannot record the drift a bisection saw");
}

struct drift {
	int on;
	double percent;
};

static void drift_from_row(sqlite3_stmt *st, void *arg)
{
	struct drift *d = arg;

	d->on = sqlite3_column_int(st, 0);
	d->percent = sqlite3_column_double(st, 1);
}

int db_bisection_drift(sqlite3 *db, int64_t id, int *drift, double *percent)
{
	struct drift d = { 0, 0 };
	int rc = step_row(db, stmt(db, "SELECT drift, coalesce(drift_percent, 0) FROM bisections WHERE id = ?1",
				   ARGS(arg_int(id))),
			  drift_from_row, &d, "cannot read the drift a bisection saw");

	*drift = d.on;
	*percent = d.percent;
	return rc < 0 ? -1 : 0;
}

int db_bisection_set_max_runs(sqlite3 *db, int64_t id, unsigned max_runs)
{
	return set_bisection_int(db, "UPDATE bisections SET max_runs = ?2 WHERE id = ?1", id, (int)max_runs,
				 "cannot record the bisection's run cap");
}

int db_bisection_max_runs(sqlite3 *db, int64_t id, unsigned *max_runs)
{
	int v = 0;
	int rc = bisection_int(db, "SELECT coalesce(max_runs, 0) FROM bisections WHERE id = ?1", id, 0, &v,
			       "cannot read the bisection's run cap");

	*max_runs = v > 0 ? (unsigned)v : 0;
	return rc;
}

/* The revert columns (migration 7 on bisections, 12 on a half's row),
 * set from ?2..?9 in this order: outcome, commit, runs, median, cv,
 * good median, bad median, detail. */
#define REVERT_COLUMNS "revert_outcome, revert_commit, revert_runs, revert_median, revert_cv, " \
		       "revert_good_median, revert_bad_median, revert_detail"
#define REVERT_SET "revert_outcome = ?2, revert_commit = ?3, revert_runs = ?4, revert_median = ?5, " \
		   "revert_cv = ?6, revert_good_median = ?7, revert_bad_median = ?8, revert_detail = ?9"

int col_revert(sqlite3_stmt *st, int col, struct revert_check *rc, int64_t id)
{
	memset(rc, 0, sizeof(*rc));
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return 0;
	/* the column's CHECK admits only names revert.c knows */
	if (revert_outcome_from_name((const char *)sqlite3_column_text(st, col), &rc->outcome) < 0)
		return error("bisection %lld has a revert check outcome this klab does not know", (long long)id);
	if (sqlite3_column_type(st, col + 1) != SQLITE_NULL)
		col_hex(st, col + 1, rc->commit);
	rc->runs = (size_t)sqlite3_column_int64(st, col + 2);
	READ_COLS(st, col + 3, COL(&rc->median), COL(&rc->cv_percent), COL(&rc->good_median), COL(&rc->bad_median),
		  COL(&rc->detail));
	return 1;
}

/* The revert check of the bisection (half 0) or of a half's culprit (?10
 * in its row's UPDATE). */
static int set_revert(sqlite3 *db, int64_t id, int half, const struct revert_check *rc)
{
	const char *sql = half ? "UPDATE bisection_culprits SET " REVERT_SET " WHERE bisection_id = ?1 AND half = ?10"
			       : "UPDATE bisections SET " REVERT_SET " WHERE id = ?1";
	/* the numbers only for a check that measured */
	int m = rc->outcome == REVERT_RESTORES_GOOD || rc->outcome == REVERT_NO_RESTORE;
	struct db_arg none = arg_null();

	return step_done(db, stmt(db, sql,
				 ARGS(arg_int(id),
				      arg_text(rc->outcome == REVERT_NONE ? NULL : revert_outcome_name(rc->outcome)),
				      arg_text(rc->commit[0] ? rc->commit : NULL), m ? arg_int((int64_t)rc->runs) : none,
				      m ? arg_real(rc->median) : none, m ? arg_real(rc->cv_percent) : none,
				      m ? arg_real(rc->good_median) : none, m ? arg_real(rc->bad_median) : none,
				      arg_text(rc->detail), arg_int(half))),
			 "cannot record the revert check");
}

static int get_revert(sqlite3 *db, int64_t id, int half, struct revert_check *rc)
{
	sqlite3_stmt *st;
	int r, found = 0;

	memset(rc, 0, sizeof(*rc));
	/* ?2, the half, only in a half's row's SELECT */
	st = stmt(db, half ? "SELECT " REVERT_COLUMNS " FROM bisection_culprits WHERE bisection_id = ?1 AND half = ?2"
			   : "SELECT " REVERT_COLUMNS " FROM bisections WHERE id = ?1",
		  ARGS(arg_int(id), arg_int(half)));
	if (!st)
		return -1;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		found = col_revert(st, 0, rc, id);
	sqlite3_finalize(st);
	if (found < 0)
		return -1;
	if (r == SQLITE_ROW || r == SQLITE_DONE)
		return found;
	return db_fail(db, "cannot read the revert check");
}

int db_bisection_set_revert(sqlite3 *db, int64_t id, const struct revert_check *rc)
{
	return set_revert(db, id, 0, rc);
}

int db_bisection_revert(sqlite3 *db, int64_t id, struct revert_check *rc)
{
	return get_revert(db, id, 0, rc);
}

int db_half_set_revert(sqlite3 *db, int64_t id, int half, const struct revert_check *rc)
{
	return set_revert(db, id, half, rc);
}

int db_half_revert(sqlite3 *db, int64_t id, int half, struct revert_check *rc)
{
	return get_revert(db, id, half, rc);
}

int db_bisection_delete(sqlite3 *db, int64_t id)
{
	static const char *const sql[] = {
		"DELETE FROM runs WHERE step_id IN (SELECT id FROM steps WHERE bisection_id = ?1) OR boot_id IN "
		"(SELECT b.id FROM boots b JOIN steps s ON s.id = b.step_id WHERE s.bisection_id = ?1)",
		"DELETE FROM boots WHERE step_id IN (SELECT id FROM steps WHERE bisection_id = ?1)",
		"UPDATE queue_jobs SET bisection_id = NULL WHERE bisection_id = ?1",
		"UPDATE track_tips SET bisection_id = NULL WHERE bisection_id = ?1",
		"DELETE FROM notifications WHERE bisection_id = ?1",
		"DELETE FROM bisections WHERE id = ?1",	/* its steps, verdicts, ... cascade */
	};

	if (db_begin(db) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(sql); i++)
		if (step_done(db, stmt(db, sql[i], ARGS(arg_int(id))), "cannot delete the bisection") < 0) {
			db_rollback(db);
			return -1;
		}
	return db_commit(db);
}
