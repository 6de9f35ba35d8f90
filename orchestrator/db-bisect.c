/* Bisections, their steps (one per tested commit, rounds of a
 * multisection) and the verdict evidence stored with a step. */
#include "db-int.h"
#include "revert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the vocabulary: one table per column (db.h) ----------------------- */

static const char *const bisection_kind_names[] = { "command", "job" };
static const char *const bisection_state_names[] = { "created", "running", "stopped", "done", "failed" };
static const char *const bisection_result_names[] = {
	NULL, "culprit", "skipped-only", "not-reproduced", "unconfirmed", "error",
};
static const char *const step_phase_names[] = { "bisect", "merge-base", "reference", "confirm", "revert", "profile" };
static const char *const step_status_names[] = { "running", "done", "aborted" };
_Static_assert(ARRAY_SIZE(bisection_kind_names) == BISECTION_KIND_LAST, "one name per kind");
_Static_assert(ARRAY_SIZE(bisection_state_names) == BISECTION_STATE_LAST, "one name per state");
_Static_assert(ARRAY_SIZE(bisection_result_names) == BISECTION_RESULT_LAST, "one name per result");
_Static_assert(ARRAY_SIZE(step_phase_names) == STEP_PHASE_LAST, "one name per phase");
_Static_assert(ARRAY_SIZE(step_status_names) == STEP_STATUS_LAST, "one name per status");

#define NAME_TABLE(type, last)                                                        \
	const char *type##_to_string(enum type v)                                     \
	{                                                                             \
		return (unsigned)v < (last) ? type##_names[v] : NULL;                 \
	}                                                                             \
	int type##_from_string(const char *name)                                      \
	{                                                                             \
		return name_index(type##_names, (last), name);                        \
	}

NAME_TABLE(bisection_kind, BISECTION_KIND_LAST)
NAME_TABLE(bisection_state, BISECTION_STATE_LAST)
NAME_TABLE(step_phase, STEP_PHASE_LAST)
NAME_TABLE(step_status, STEP_STATUS_LAST)

const char *bisection_result_to_string(enum bisection_result v)
{
	return (unsigned)v < BISECTION_RESULT_LAST ? bisection_result_names[v] : NULL;
}

int bisection_result_from_string(const char *name)
{
	return name ? name_index(bisection_result_names, BISECTION_RESULT_LAST, name) : BISECTION_NO_RESULT;
}

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
	sqlite3_stmt *st;

	for (size_t i = 0; i < n; i++) {
		if (prepare(db, &st, sql) < 0)
			return -1;
		sqlite3_bind_int64(st, 1, bisection_id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_text(st, 3, items[i], -1, SQLITE_TRANSIENT);
		if (step_done(db, st, what) < 0)
			return -1;
	}
	return 0;
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
	sqlite3_bind_text(st, 8, bisection_kind_to_string(b->job_path ? BISECTION_JOB : BISECTION_COMMAND), -1, SQLITE_STATIC);
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
	b->kind_id = parsed(bisection_kind_from_string(b->kind), BISECTION_COMMAND);
	b->state_id = parsed(bisection_state_from_string(b->state), BISECTION_CREATED);
	b->result_id = parsed(bisection_result_from_string(b->result), BISECTION_ERROR);

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
	int v = bisection_state_from_string(state);
	int finished = v == BISECTION_DONE || v == BISECTION_FAILED;

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

int db_bisection_enter(sqlite3 *db, int64_t id, enum bisection_state state, enum bisection_result result,
		       const char *culprit, const char *message)
{
	return db_bisection_set_state(db, id, bisection_state_to_string(state), bisection_result_to_string(result),
				      culprit, message);
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

/* The steps of a bisection, of its current pass or (all) of every pass. */
static int steps_load(sqlite3 *db, int64_t bisection_id, int all, struct step **steps, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;

	*steps = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT s.id, s.seq, s.hash, s.phase, s.status, s.verdict, s.reason, "
			     "coalesce(s.exit_code, -1), s.attempts, coalesce(s.remaining, -1), s.log_path, "
			     "coalesce(s.choose_ms, 0), coalesce(s.checkout_ms, 0), coalesce(s.test_ms, 0), "
			     "s.started_at, coalesce(s.finished_at, 0), c.subject, s.pass, s.half "
			     "FROM steps s JOIN bisections b ON b.id = s.bisection_id "
			     "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = s.hash "
			     "WHERE s.bisection_id = ?1 AND (?2 OR s.pass = b.pass) ORDER BY s.seq") < 0)
		return -1;
	sqlite3_bind_int(st, 2, all);
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
		s->pass = sqlite3_column_int(st, 17);
		s->half = sqlite3_column_int(st, 18);
		s->phase_id = parsed(step_phase_from_string(s->phase), STEP_PHASE_BISECT);
		s->status_id = parsed(step_status_from_string(s->status), STEP_ABORTED);
		/* a verdict this klab does not know: a skip, never a mark */
		s->mark = parsed(bisect_mark_from_string(s->verdict), BISECT_SKIP);
	}
	sqlite3_finalize(st);
	return 0;
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
static int step_claim(sqlite3 *db, int64_t bisection_id, struct step *s, int round,
		      int (*drop_stale)(sqlite3 *db, int64_t bisection_id))
{
	sqlite3_stmt *st;
	int64_t existing = 0;
	int seq = 0, attempts = 0;

	if (prepare(db, &st, "SELECT id, seq, attempts FROM steps WHERE bisection_id = ?1 AND hash = ?2 "
			     "AND status != 'done' AND phase = ?3 "
			     "AND pass = (SELECT pass FROM bisections WHERE id = ?1) ORDER BY seq DESC LIMIT 1") < 0)
		return -1;
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
				     "remaining = ?2, log_path = ?3, started_at = ?4, reason = NULL, "
				     "round = coalesce(?5, round) WHERE id = ?1") < 0)
			return -1;
		sqlite3_bind_int64(st, 1, existing);
		sqlite3_bind_int(st, 2, s->remaining);
		sqlite3_bind_text(st, 3, s->log_path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, now_s());
		bind_id_or_null(st, 5, round);
		if (step_done(db, st, "cannot restart step") < 0)
			return -1;
		s->id = existing;
		s->seq = seq;
		s->attempts = attempts + 1;
		return 0;
	}
	if (drop_stale && drop_stale(db, bisection_id) < 0)
		return -1;
	if (prepare(db, &st, "INSERT INTO steps (bisection_id, seq, hash, phase, status, remaining, log_path, "
			     "started_at, round, pass, half) VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM steps "
			     "WHERE bisection_id = ?1), ?2, ?3, 'running', ?4, ?5, ?6, ?7, "
			     "(SELECT pass FROM bisections WHERE id = ?1), (SELECT half FROM bisections WHERE id = ?1))") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, bisection_id);
	sqlite3_bind_text(st, 2, s->hash, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, s->phase, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 4, s->remaining);
	sqlite3_bind_text(st, 5, s->log_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, now_s());
	bind_id_or_null(st, 7, round);
	if (step_done(db, st, "cannot record step") < 0)
		return -1;
	s->id = sqlite3_last_insert_rowid(db);
	if (prepare(db, &st, "SELECT seq FROM steps WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, s->id);
	if (sqlite3_step(st) == SQLITE_ROW)
		s->seq = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	s->attempts = 1;
	return 0;
}

/* Unfinished steps no longer tested (`which`: a WHERE clause on ?1 = id):
 * one that already has boots keeps them, marked aborted; the rest go. */
static int drop_steps(sqlite3 *db, const char *which, int64_t id)
{
	char *sql = xstrfmt("UPDATE steps SET status = 'aborted' WHERE %s AND status = 'running' "
			    "AND EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)", which);
	sqlite3_stmt *st;
	int rc = prepare(db, &st, sql);

	free(sql);
	if (rc < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (step_done(db, st, "cannot drop stale step") < 0)
		return -1;
	sql = xstrfmt("DELETE FROM steps WHERE %s AND status != 'done' "
		      "AND NOT EXISTS (SELECT 1 FROM boots b WHERE b.step_id = steps.id)", which);
	rc = prepare(db, &st, sql);
	free(sql);
	if (rc < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	return step_done(db, st, "cannot drop stale step");
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
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE steps SET status = 'done', verdict = ?2, reason = ?3, exit_code = ?4, "
			     "choose_ms = ?5, checkout_ms = ?6, test_ms = ?7, finished_at = ?8 "
			     "WHERE id = ?1 AND status = 'running'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_text(st, 2, s->verdict, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, s->reason, -1, SQLITE_TRANSIENT);
	bind_nonneg_or_null(st, 4, s->exit_code);
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

int db_step_reopen(sqlite3 *db, int64_t step_id)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "UPDATE steps SET status = 'running', attempts = attempts + 1, finished_at = NULL "
			     "WHERE id = ?1 AND status = 'done'") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, step_id);
	if (step_done(db, st, "cannot open a step again") < 0)
		return -1;
	if (sqlite3_changes(db) != 1)
		return error("step %lld is not done: another klab process owns this bisection?", (long long)step_id);
	return 0;
}

int db_step_abort(sqlite3 *db, int64_t step_id, const char *reason)
{
	return update_text_now(db, "UPDATE steps SET status = 'aborted', reason = ?2, finished_at = ?3 WHERE id = ?1",
			       step_id, reason, "cannot record aborted step");
}

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

/* One integer column of a bisection set (sql: ?1 the id, ?2 the value). */
static int set_bisection_int(sqlite3 *db, const char *sql, int64_t id, int value, const char *what)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, sql) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, value);
	return step_done(db, st, what);
}

int db_bisection_set_slots(sqlite3 *db, int64_t id, int slots)
{
	return set_bisection_int(db, "UPDATE bisections SET slots = ?2 WHERE id = ?1", id, slots,
				 "cannot record the bisection's slots");
}

/* One integer column of bisection id (sql selects it by ?1): *out, or
 * dflt when there is no such bisection.  0, or -1 after db_fail(what). */
static int bisection_int(sqlite3 *db, const char *sql, int64_t id, int dflt, int *out, const char *what)
{
	sqlite3_stmt *st;
	int rc;

	*out = dflt;
	if (prepare(db, &st, sql) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	return db_fail(db, what);
}

int db_bisection_slots(sqlite3 *db, int64_t id, int *slots)
{
	return bisection_int(db, "SELECT slots FROM bisections WHERE id = ?1", id, 1, slots,
			     "cannot read the bisection's slots");
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
	for (size_t i = 0; i < n; i++)
		if (step_claim(db, bisection_id, &steps[i], round, NULL) < 0)
			goto fail;
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
	for (size_t i = 0; i < nr_stale; i++)
		if (drop_steps(db, "id = ?1", stale[i]) < 0)
			goto fail;
	free(stale);
	return db_commit(db);
fail:
	free(stale);
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

int db_bisection_pass(sqlite3 *db, int64_t id, int *pass)
{
	return bisection_int(db, "SELECT pass FROM bisections WHERE id = ?1", id, 1, pass,
			     "cannot read the bisection's pass");
}

int db_bisection_set_pass(sqlite3 *db, int64_t id, int pass)
{
	return set_bisection_int(db, "UPDATE bisections SET pass = ?2 WHERE id = ?1", id, pass,
				 "cannot record the bisection's pass");
}

/* ---- two change points (migration 11) ------------------------------------- */

int db_bisection_split(sqlite3 *db, int64_t id, char hex[41], int *has)
{
	sqlite3_stmt *st;
	int rc;

	*has = 0;
	hex[0] = 0;
	if (prepare(db, &st, "SELECT split_commit FROM bisections WHERE id = ?1 AND split_commit IS NOT NULL") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		col_hex(st, 0, hex);
		*has = 1;
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	return db_fail(db, "cannot read the commit that split the bisection");
}

int db_bisection_set_split(sqlite3 *db, int64_t id, const char *hex)
{
	sqlite3_stmt *st;

	/* the first commit between the ends splits the range; one level only */
	if (prepare(db, &st, "UPDATE bisections SET split_commit = ?2 WHERE id = ?1 AND split_commit IS NULL") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_text(st, 2, hex, -1, SQLITE_TRANSIENT);
	return step_done(db, st, "cannot record the commit that splits the bisection");
}

int db_bisection_half(sqlite3 *db, int64_t id, int *half)
{
	return bisection_int(db, "SELECT half FROM bisections WHERE id = ?1", id, 0, half,
			     "cannot read the bisection's half");
}

int db_bisection_set_half(sqlite3 *db, int64_t id, int half)
{
	return set_bisection_int(db, "UPDATE bisections SET half = ?2 WHERE id = ?1", id, half,
				 "cannot record the bisection's half");
}

int db_half_culprit_store(sqlite3 *db, int64_t id, const struct half_culprit *c)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, "INSERT OR REPLACE INTO bisection_culprits (bisection_id, half, culprit, confirmed, "
			     "share, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6)") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, c->half);
	bind_text_or_null(st, 3, c->has_culprit ? c->culprit : NULL);
	sqlite3_bind_int(st, 4, c->confirmed ? 1 : 0);
	if (isnan(c->share))
		sqlite3_bind_null(st, 5);
	else
		sqlite3_bind_double(st, 5, c->share);
	sqlite3_bind_text(st, 6, c->message ? c->message : "", -1, SQLITE_TRANSIENT);
	return step_done(db, st, "cannot record the culprit of a half");
}

int db_half_culprits_load(sqlite3 *db, int64_t id, struct half_culprit **out, size_t *nr)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	*out = NULL;
	*nr = 0;
	if (prepare(db, &st, "SELECT half, culprit, confirmed, share, message FROM bisection_culprits "
			     "WHERE bisection_id = ?1 ORDER BY half") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct half_culprit *c;

		ALLOC_GROW(*out, *nr + 1, alloc);
		c = &(*out)[(*nr)++];
		memset(c, 0, sizeof(*c));
		c->half = sqlite3_column_int(st, 0);
		c->has_culprit = sqlite3_column_type(st, 1) != SQLITE_NULL;
		if (c->has_culprit)
			col_hex(st, 1, c->culprit);
		c->confirmed = sqlite3_column_int(st, 2);
		c->share = sqlite3_column_type(st, 3) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 3);
		c->message = col_strdup(st, 4);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		half_culprits_release(*out, *nr);
		*out = NULL;
		*nr = 0;
		return db_fail(db, "cannot read the culprits of the halves");
	}
	return 0;
}

void half_culprits_release(struct half_culprit *c, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(c[i].message);
	free(c);
}

int db_bisection_set_drift(sqlite3 *db, int64_t id, double percent)
{
	sqlite3_stmt *st;

	/* the first trend seen stays: later verdicts only confirm the flag */
	if (prepare(db, &st, "UPDATE bisections SET drift = 1, drift_percent = coalesce(drift_percent, ?2) "
			     "WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_double(st, 2, percent);
	return step_done(db, st, "cannot record the drift a bisection saw");
}

int db_bisection_drift(sqlite3 *db, int64_t id, int *drift, double *percent)
{
	sqlite3_stmt *st;
	int rc;

	*drift = 0;
	*percent = 0;
	if (prepare(db, &st, "SELECT drift, coalesce(drift_percent, 0) FROM bisections WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*drift = sqlite3_column_int(st, 0);
		*percent = sqlite3_column_double(st, 1);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(db, "cannot read the drift a bisection saw");
	return 0;
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
 * bound to ?2..?9 in this order: outcome, commit, runs, median, cv,
 * good median, bad median, detail. */
#define REVERT_COLUMNS "revert_outcome, revert_commit, revert_runs, revert_median, revert_cv, " \
		       "revert_good_median, revert_bad_median, revert_detail"
#define REVERT_SET "revert_outcome = ?2, revert_commit = ?3, revert_runs = ?4, revert_median = ?5, " \
		   "revert_cv = ?6, revert_good_median = ?7, revert_bad_median = ?8, revert_detail = ?9"

static void bind_revert(sqlite3_stmt *st, const struct revert_check *rc)
{
	int measured = rc->outcome == REVERT_RESTORES_GOOD || rc->outcome == REVERT_NO_RESTORE;

	if (rc->outcome == REVERT_NONE)
		sqlite3_bind_null(st, 2);
	else
		sqlite3_bind_text(st, 2, revert_outcome_name(rc->outcome), -1, SQLITE_STATIC);
	bind_text_or_null(st, 3, rc->commit[0] ? rc->commit : NULL);
	if (measured) {
		sqlite3_bind_int64(st, 4, (int64_t)rc->runs);
		sqlite3_bind_double(st, 5, rc->median);
		sqlite3_bind_double(st, 6, rc->cv_percent);
		sqlite3_bind_double(st, 7, rc->good_median);
		sqlite3_bind_double(st, 8, rc->bad_median);
	}
	bind_text_or_null(st, 9, rc->detail);
}

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
	rc->median = sqlite3_column_double(st, col + 3);
	rc->cv_percent = sqlite3_column_double(st, col + 4);
	rc->good_median = sqlite3_column_double(st, col + 5);
	rc->bad_median = sqlite3_column_double(st, col + 6);
	rc->detail = col_strdup(st, col + 7);
	return 1;
}

/* The revert check of the bisection (half 0) or of a half's culprit. */
static int set_revert(sqlite3 *db, int64_t id, int half, const struct revert_check *rc)
{
	sqlite3_stmt *st;

	if (prepare(db, &st, half ? "UPDATE bisection_culprits SET " REVERT_SET " WHERE bisection_id = ?1 AND half = ?10"
				  : "UPDATE bisections SET " REVERT_SET " WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	bind_revert(st, rc);
	if (half)
		sqlite3_bind_int(st, 10, half);
	return step_done(db, st, "cannot record the revert check");
}

static int get_revert(sqlite3 *db, int64_t id, int half, struct revert_check *rc)
{
	sqlite3_stmt *st;
	int r, found = 0;

	memset(rc, 0, sizeof(*rc));
	if (prepare(db, &st, half ? "SELECT " REVERT_COLUMNS " FROM bisection_culprits WHERE bisection_id = ?1 AND half = ?2"
				  : "SELECT " REVERT_COLUMNS " FROM bisections WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	if (half)
		sqlite3_bind_int(st, 2, half);
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
