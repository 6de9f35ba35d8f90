/* Unit tests of the lab database: schema creation, migrations by
 * user_version, pragmas, constraints, and the step bookkeeping that
 * makes resume safe. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/db.h"
#include "engine/revert.h"
#include "lab/lab.h"
#include "util/util.h"
#include "helpers.h"

static char tmpdir[256];

static int setup(void **state)
{
	make_test_dir(tmpdir, sizeof(tmpdir), "db");
	return 0;
}

static int teardown(void **state)
{
	remove_test_dir(tmpdir);
	return 0;
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char *query_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	char *v = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

static void test_db__create_sets_version_wal_and_foreign_keys(void **state)
{
	char *path = xstrfmt("%s/a.db", tmpdir);
	sqlite3 *db;
	char *mode;

	assert_int_equal(db_open(&db, path, 1), 0);
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(query_int(db, "PRAGMA foreign_keys"), 1);
	mode = query_text(db, "PRAGMA journal_mode");
	assert_string_equal(mode, "wal");
	free(mode);
	/* every table of the mission exists from the start */
	static const char *const tables[] = { "repos", "commits", "bisections", "bisection_goods", "steps",
					      "builds", "boots", "runs", "samples", "monitor_stats",
					      "queue_jobs", "tracks", "track_tips", "hosts", "notifications" };
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		char *sql = xstrfmt("SELECT count(*) FROM sqlite_master WHERE type='table' AND name='%s'", tables[i]);
		assert_int_equal(query_int(db, sql), 1);
		free(sql);
	}
	db_close(db);
	free(path);
}

static void test_db__reopen_is_idempotent(void **state)
{
	char *path = xstrfmt("%s/b.db", tmpdir);
	sqlite3 *db;
	int64_t repo1, repo2;

	assert_int_equal(db_open(&db, path, 1), 0);
	assert_int_equal(db_repo_id(db, "/some/repo", &repo1), 0);
	db_close(db);
	assert_int_equal(db_open(&db, path, 0), 0);
	assert_int_equal(db_repo_id(db, "/some/repo", &repo2), 0);
	assert_int_equal(repo1, repo2);
	assert_int_equal(query_int(db, "SELECT count(*) FROM repos"), 1);
	db_close(db);
	free(path);
}

static void test_db__refuses_newer_schema(void **state)
{
	char *path = xstrfmt("%s/c.db", tmpdir);
	sqlite3 *db;

	assert_int_equal(db_open(&db, path, 1), 0);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 999", NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	assert_int_equal(db_open(&db, path, 0), -1);
	assert_null(db);
	free(path);
}

/* Write `len` bytes of `data` (NULL: a fixed non-SQLite pattern) to path. */
static void write_bytes(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	for (size_t i = 0; i < len; i++)
		fputc(data ? data[i] : (int)(i * 131 % 251), f);
	assert_int_equal(fclose(f), 0);
}

static long file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (long)st.st_size;
}

/* The error db_open gave names the file and says `what`. */
static void assert_error_says(const char *path, const char *what)
{
	assert_non_null(strstr(error_last(), path));
	assert_non_null(strstr(error_last(), what));
}

/* A database klab made, then set to schema version v behind klab's back. */
static void make_db_with_version(const char *path, int v)
{
	char *sql = xstrfmt("PRAGMA user_version = %d", v);
	sqlite3 *db;

	assert_int_equal(db_open(&db, path, 1), 0);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	free(sql);
}

static int raw_user_version(const char *path)
{
	sqlite3 *db;
	int v;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	v = (int)query_int(db, "PRAGMA user_version");
	sqlite3_close(db);
	return v;
}

static void test_db__refuses_negative_schema_version(void **state)
{
	char *path = xstrfmt("%s/neg.db", tmpdir);
	sqlite3 *db = NULL;

	make_db_with_version(path, -1);
	assert_int_equal(db_open(&db, path, 0), -1);
	assert_null(db);
	assert_error_says(path, "schema version -1");
	/* klab init is no way round it either, and nothing was migrated */
	assert_int_equal(db_open(&db, path, 1), -1);
	assert_int_equal(raw_user_version(path), -1);
	free(path);
}

static void test_db__newer_schema_says_a_newer_klab_made_it(void **state)
{
	char *path = xstrfmt("%s/new.db", tmpdir);
	char *version = xstrfmt("schema version %d,", db_schema_version() + 1);
	sqlite3 *db = NULL;

	make_db_with_version(path, db_schema_version() + 1);
	assert_int_equal(db_open(&db, path, 0), -1);
	assert_error_says(path, version);
	assert_error_says(path, "made by a newer klab");
	assert_int_equal(raw_user_version(path), db_schema_version() + 1);
	free(version);
	free(path);
}

static void test_db__empty_file_is_not_taken_for_a_new_database(void **state)
{
	char *path = xstrfmt("%s/empty.db", tmpdir);
	sqlite3 *db = NULL;

	write_bytes(path, "", 0);
	assert_int_equal(db_open(&db, path, 0), -1);
	assert_null(db);
	assert_error_says(path, "is empty (0 bytes)");
	assert_int_equal(db_open(&db, path, 1), -1);
	assert_int_equal(file_size(path), 0);
	free(path);
}

static void test_db__corrupt_file_is_refused_and_kept(void **state)
{
	char *path = xstrfmt("%s/corrupt.db", tmpdir);
	char *before, *after;
	size_t n_before, n_after;
	sqlite3 *db = NULL;

	write_bytes(path, NULL, 8192);
	assert_int_equal(read_file(path, 1 << 20, &before, &n_before), 0);
	assert_int_equal(db_open(&db, path, 0), -1);
	assert_null(db);
	assert_error_says(path, "is not a SQLite database");
	assert_int_equal(db_open(&db, path, 1), -1);
	assert_int_equal(read_file(path, 1 << 20, &after, &n_after), 0);
	assert_int_equal(n_after, n_before);
	assert_memory_equal(after, before, n_before);
	free(before);
	free(after);
	free(path);
}

static void test_db__sqlite_file_without_klab_schema_is_refused(void **state)
{
	char *path = xstrfmt("%s/other.db", tmpdir);
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE mine (a)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	db = NULL;
	assert_int_equal(db_open(&db, path, 0), -1);
	assert_error_says(path, "no klab schema");
	assert_int_equal(db_open(&db, path, 1), -1);
	assert_int_equal(raw_user_version(path), 0);
	free(path);
}

static void test_db__missing_file_is_not_created_without_create(void **state)
{
	char *path = xstrfmt("%s/none.db", tmpdir);
	sqlite3 *db;

	assert_int_equal(db_open(&db, path, 0), -1);
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
}

static void test_db__foreign_keys_are_enforced(void **state)
{
	char *path = xstrfmt("%s/d.db", tmpdir);
	sqlite3 *db;

	assert_int_equal(db_open(&db, path, 1), 0);
	assert_int_not_equal(sqlite3_exec(db, "INSERT INTO steps (bisection_id, seq, hash, status, started_at) "
					      "VALUES (4242, 1, 'x', 'running', 0)", NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	free(path);
}

static struct bisection sample_bisection(sqlite3 *db)
{
	static char *argv[] = { "true", "an arg with 'quotes'", NULL };
	struct bisection b;

	memset(&b, 0, sizeof(b));
	assert_int_equal(db_repo_id(db, "/r", &b.repo_id), 0);
	strcpy(b.bad, "1111111111111111111111111111111111111111");
	b.goods = calloc(2, 41);
	strcpy(b.goods[0], "2222222222222222222222222222222222222222");
	strcpy(b.goods[1], "3333333333333333333333333333333333333333");
	b.nr_goods = 2;
	b.argv = argv;
	b.argc = 2;
	b.timeout_ms = 5000;
	assert_int_equal(db_bisection_create(db, &b), 0);
	free(b.goods);
	b.goods = NULL;
	return b;
}

/* A step of `phase` at `hash` begun in bisection_id (not run yet). */
static void begin_step(sqlite3 *db, int64_t bisection_id, struct step *s, const char *hash, char *phase)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->hash, hash);
	s->phase = phase;
	s->exit_code = -1;
	assert_int_equal(db_step_begin(db, bisection_id, s), 0);
}

static void test_db__bisection_roundtrip(void **state)
{
	char *path = xstrfmt("%s/e.db", tmpdir);
	sqlite3 *db;
	struct bisection b, l;

	assert_int_equal(db_open(&db, path, 1), 0);
	b = sample_bisection(db);
	assert_int_equal(db_bisection_load(db, b.id, &l), 0);
	assert_string_equal(l.state, "created");
	assert_string_equal(l.bad, "1111111111111111111111111111111111111111");
	assert_int_equal(l.nr_goods, 2);
	assert_string_equal(l.goods[1], "3333333333333333333333333333333333333333");
	assert_int_equal(l.argc, 2);
	assert_string_equal(l.argv[1], "an arg with 'quotes'");
	assert_null(l.argv[2]);
	assert_int_equal(l.timeout_ms, 5000);
	bisection_release(&l);
	assert_int_equal(db_bisection_load(db, b.id + 100, &l), -1);
	db_close(db);
	free(path);
}

static void test_db__unfinished_step_is_reused_not_duplicated(void **state)
{
	char *path = xstrfmt("%s/f.db", tmpdir);
	sqlite3 *db;
	struct bisection b;
	struct step s, s2, s3, *steps;
	size_t nr;

	assert_int_equal(db_open(&db, path, 1), 0);
	b = sample_bisection(db);
	begin_step(db, b.id, &s, "4444444444444444444444444444444444444444", "bisect");
	assert_int_equal(s.seq, 1);
	assert_int_equal(s.attempts, 1);
	/* crash: the same commit is started again */
	s2 = s;
	assert_int_equal(db_step_begin(db, b.id, &s2), 0);
	assert_int_equal(s2.id, s.id);
	assert_int_equal(s2.seq, 1);
	assert_int_equal(s2.attempts, 2);
	s2.verdict = "good";
	s2.reason = "exit 0";
	s2.exit_code = 0;
	assert_int_equal(db_step_finish(db, &s2), 0);
	/* a finished step cannot be finished twice */
	assert_int_equal(db_step_finish(db, &s2), -1);
	/* the next commit gets seq 2 */
	begin_step(db, b.id, &s3, "5555555555555555555555555555555555555555", "bisect");
	assert_int_equal(s3.seq, 2);
	assert_int_equal(db_steps_load(db, b.id, &steps, &nr), 0);
	assert_int_equal(nr, 2);
	assert_string_equal(steps[0].status, "done");
	assert_string_equal(steps[0].verdict, "good");
	assert_int_equal(steps[0].exit_code, 0);
	assert_string_equal(steps[1].status, "running");
	assert_null(steps[1].verdict);
	steps_release(steps, nr);
	db_close(db);
	free(path);
}

/* A round's steps start together; a resumed round reuses the unfinished
 * row of a commit picked again and drops the one no longer picked. */
/* A step's monitor values per run: a counter's delta, a level's value
 * after the run; failed runs and before rows left out. */
static void test_db__step_mon_values_are_per_run_deltas_and_levels(void **state)
{
	char *path = xstrfmt("%s/monvalues.db", tmpdir);
	sqlite3 *db;
	struct bisection b;
	struct step s;
	struct db_boot boot;
	struct db_mon_values *v;
	int64_t boot_id, run_id;
	size_t n;

	assert_int_equal(db_open(&db, path, 1), 0);
	b = sample_bisection(db);
	begin_step(db, b.id, &s, "4444444444444444444444444444444444444444", "confirm");
	memset(&boot, 0, sizeof(boot));
	boot.step_id = s.id;
	boot.domain_name = "klab-1-1";
	boot.accel = "tcg";
	assert_int_equal(db_boot_begin(db, &boot, &boot_id), 0);
	for (int i = 0; i < 3; i++) {
		const struct db_mon mons[] = {
			{ "vmstat", "thp_fault_alloc", "before", 100 },
			{ "vmstat", "thp_fault_alloc", "after", 1100.0 + i },
			{ "vmstat", "thp_fault_alloc", "delta", 1000.0 + i },
			{ "meminfo", "MemFree", "before", 9 },
			{ "meminfo", "MemFree", "after", 500.0 + i },
			{ "numa-meminfo", "node0.AnonHugePages", "after", 2048 },
			{ "interrupts", "RES:Rescheduling_interrupts", "delta", 7 },
		};
		struct db_run r = { .boot_id = boot_id, .step_id = s.id, .job_path = "j", .job_hash = "h",
				    .iteration = (unsigned)i, .status = i == 2 ? "failed" : "ok", .exit_code = 0,
				    .mons = mons, .nr_mons = ARRAY_SIZE(mons) };
		assert_int_equal(db_run_store(db, &r, &run_id), 0);
	}
	assert_int_equal(db_step_mon_values(db, s.id, &v, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(v[0].name, "interrupts.RES:Rescheduling_interrupts");
	assert_string_equal(v[1].name, "meminfo.MemFree");
	assert_int_equal(v[1].n, 2);	/* the failed run is not a sample */
	assert_true(v[1].v[0] == 500 && v[1].v[1] == 501);
	assert_string_equal(v[2].name, "numa-meminfo.node0.AnonHugePages");
	assert_string_equal(v[3].name, "vmstat.thp_fault_alloc");
	assert_true(v[3].n == 2 && v[3].v[0] == 1000 && v[3].v[1] == 1001);
	db_mon_values_free(v, n);
	db_close(db);
	free(path);
}

static void test_db__round_steps_start_together_and_resume(void **state)
{
	char *path = xstrfmt("%s/m.db", tmpdir);
	sqlite3 *db;
	struct bisection b;
	struct step r1[3], r2[2], *steps;
	int64_t *ids;
	int *rounds, slots = 0;
	size_t nr, nr_rounds;
	const char *h1[3] = { "a1", "a2", "a3" }, *h2[2] = { "a2", "a4" };

	assert_int_equal(db_open(&db, path, 1), 0);
	b = sample_bisection(db);
	assert_int_equal(db_bisection_slots(db, b.id, &slots), 0);
	assert_int_equal(slots, 1);
	assert_int_equal(db_bisection_set_slots(db, b.id, 3), 0);
	assert_int_equal(db_bisection_slots(db, b.id, &slots), 0);
	assert_int_equal(slots, 3);
	memset(r1, 0, sizeof(r1));
	for (int i = 0; i < 3; i++) {
		snprintf(r1[i].hash, sizeof(r1[i].hash), "%s%038d", h1[i], 0);
		r1[i].phase = "bisect";
		r1[i].exit_code = -1;
	}
	assert_int_equal(db_round_begin(db, b.id, r1, 3, 1), 0);
	assert_int_equal(r1[0].seq, 1);
	assert_int_equal(r1[2].seq, 3);
	/* one finishes, then the process is killed */
	r1[0].verdict = "good";
	r1[0].reason = "exit 0";
	assert_int_equal(db_step_finish(db, &r1[0]), 0);
	/* resumed: a2 again (its row reused), a4 new, a3 dropped */
	memset(r2, 0, sizeof(r2));
	for (int i = 0; i < 2; i++) {
		snprintf(r2[i].hash, sizeof(r2[i].hash), "%s%038d", h2[i], 0);
		r2[i].phase = "bisect";
		r2[i].exit_code = -1;
	}
	assert_int_equal(db_round_begin(db, b.id, r2, 2, 2), 0);
	assert_int_equal(r2[0].id, r1[1].id);
	assert_int_equal(r2[0].attempts, 2);
	assert_int_equal(r2[1].seq, 4);
	assert_int_equal(db_steps_load(db, b.id, &steps, &nr), 0);
	assert_int_equal(nr, 3);
	for (size_t i = 0; i < nr; i++)
		assert_int_not_equal(steps[i].id, r1[2].id);
	steps_release(steps, nr);
	assert_int_equal(db_step_rounds(db, b.id, &ids, &rounds, &nr_rounds), 0);
	assert_int_equal(nr_rounds, 3);
	assert_int_equal(ids[0], r1[0].id);
	assert_int_equal(rounds[0], 1);
	assert_int_equal(rounds[1], 2);
	assert_int_equal(rounds[2], 2);
	free(ids);
	free(rounds);
	db_close(db);
	free(path);
}

static void test_db__state_transitions_record_times(void **state)
{
	char *path = xstrfmt("%s/g.db", tmpdir);
	sqlite3 *db;
	struct bisection b, l;

	assert_int_equal(db_open(&db, path, 1), 0);
	b = sample_bisection(db);
	assert_int_equal(db_bisection_set_state(db, b.id, "running", NULL, NULL, NULL), 0);
	assert_int_equal(db_bisection_set_state(db, b.id, "done", "culprit",
						"6666666666666666666666666666666666666666", "found"), 0);
	assert_int_equal(db_bisection_load(db, b.id, &l), 0);
	assert_string_equal(l.state, "done");
	assert_string_equal(l.result, "culprit");
	assert_string_equal(l.culprit, "6666666666666666666666666666666666666666");
	assert_true(l.started_at > 0);
	assert_true(l.finished_at >= l.started_at);
	bisection_release(&l);
	/* the schema refuses a state that does not exist */
	assert_int_equal(db_bisection_set_state(db, b.id, "bogus", NULL, NULL, NULL), -1);
	/* migration 6: a failed confirmation has its own result, writable by
	 * the connection that migrated; a made-up result is still refused */
	assert_int_equal(db_bisection_set_state(db, b.id, "done", "unconfirmed",
						"6666666666666666666666666666666666666666", "not confirmed"), 0);
	assert_int_equal(db_bisection_load(db, b.id, &l), 0);
	assert_string_equal(l.result, "unconfirmed");
	bisection_release(&l);
	assert_int_equal(db_bisection_set_state(db, b.id, "done", "confirmed-ish", NULL, NULL), -1);
	db_close(db);
	free(path);
}

/* Migration 9: a queued reproduction has its own kind; its child's note
 * (the verdict) and bisection go on the running row only, the worker's
 * end keeps the bisection, and a kind klab does not know is refused. */
static void test_db__reproduce_job_keeps_its_note_and_bisection(void **state)
{
	char *path = xstrfmt("%s/q.db", tmpdir);
	char *args[] = { "/tmp", "report.txt" };
	struct queue_job j;
	struct bisection b;
	sqlite3 *db;
	int64_t id;

	assert_int_equal(db_open(&db, path, 1), 0);
	b = sample_bisection(db);
	assert_int_equal(db_queue_add(db, QUEUE_REPRODUCE, args, 2, 0, "me", &id), 0);
	assert_int_equal(db_queue_load(db, id, &j), 0);
	assert_string_equal(j.kind, "reproduce");
	assert_int_equal(j.kind_id, QUEUE_REPRODUCE);
	assert_int_equal(j.state_id, QUEUE_QUEUED);
	assert_int_equal(j.nr_args, 2);
	queue_job_release(&j);
	/* not running yet: the child's words are not taken */
	assert_int_equal(db_queue_note(db, id, "reproduced: -95.0%"), 0);
	assert_int_equal(db_queue_claim(db, "w:1", 60, &j), 1);
	assert_int_equal(j.state_id, QUEUE_RUNNING);
	queue_job_release(&j);
	assert_int_equal(db_queue_note(db, id, "reproduced: -95.0% (report said -95.5%)"), 1);
	assert_int_equal(db_queue_set_bisection(db, id, b.id), 1);
	assert_int_equal(db_queue_finish(db, id, "w:1", QUEUE_DONE, "reproduced: -95.0% (report said -95.5%)"), 1);
	assert_int_equal(db_queue_load(db, id, &j), 0);
	assert_int_equal(j.state_id, QUEUE_DONE);
	assert_string_equal(j.state, queue_state_to_string(QUEUE_DONE));
	assert_int_equal(j.bisection_id, b.id);
	assert_string_equal(j.message, "reproduced: -95.0% (report said -95.5%)");
	queue_job_release(&j);
	assert_int_not_equal(sqlite3_exec(db, "INSERT INTO queue_jobs (kind, args, created_at) VALUES ('reproduced', '', 0)",
					  NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(queue_kind_from_string("track"), QUEUE_TRACK);
	assert_int_equal(queue_state_from_string("lost"), -1);
	db_close(db);
	free(path);
}

/* Migration 7 on a lab made by the klab before it (version 6, a
 * bisection and a confirm step in it): the revert check is on by default,
 * a 'revert' step can be stored, its result is set and read back, and the
 * schema refuses an outcome klab does not know. */
extern const char klab_schema_sql[], klab_migration_2_sql[], klab_migration_3_sql[], klab_migration_4_sql[],
	klab_migration_5_sql[], klab_migration_6_sql[], klab_migration_7_sql[], klab_migration_8_sql[],
	klab_migration_9_sql[], klab_migration_10_sql[], klab_migration_11_sql[];

/* A database as the klab of schema `version` (at most 11) left it: the
 * schema and its migrations up to that version, user_version set, then
 * `seed` run on it.  The handle stays open for the test. */
static sqlite3 *db_at_version(const char *path, int version, const char *seed)
{
	static const char *const upto11[] = { klab_schema_sql, klab_migration_2_sql, klab_migration_3_sql,
					      klab_migration_4_sql, klab_migration_5_sql, klab_migration_6_sql,
					      klab_migration_7_sql, klab_migration_8_sql, klab_migration_9_sql,
					      klab_migration_10_sql, klab_migration_11_sql };
	char *pragma = xstrfmt("PRAGMA user_version = %d", version);
	sqlite3 *db;

	assert_in_range(version, 1, ARRAY_SIZE(upto11));
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (int i = 0; i < version; i++)
		assert_int_equal(sqlite3_exec(db, upto11[i], NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, seed, NULL, NULL, NULL), SQLITE_OK);
	free(pragma);
	return db;
}

static void test_db__migration_7_stores_the_revert_check(void **state)
{
	char *path = xstrfmt("%s/rv.db", tmpdir);
	sqlite3 *db;
	struct step s;
	struct revert_check rc = { 0 }, got;
	int on;

	(void)state;
	db = db_at_version(path, 6, "INSERT INTO repos (id, path, created_at) VALUES (1, '/r', 0);"
				    "INSERT INTO bisections (id, repo_id, kind, bad, created_at) "
				    "VALUES (1, 1, 'job', '1111111111111111111111111111111111111111', 0);"
				    "INSERT INTO steps (bisection_id, seq, hash, phase, status, started_at) "
				    "VALUES (1, 1, 'x', 'confirm', 'done', 0)");
	/* version 6 knows no 'revert' phase */
	assert_int_not_equal(sqlite3_exec(db, "INSERT INTO steps (bisection_id, seq, hash, phase, status, started_at) "
					      "VALUES (1, 2, 'y', 'revert', 'running', 0)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	assert_int_equal(db_open(&db, path, 0), 0);
	/* and on to the latest: 8 lets the profile runs' steps in */
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(query_int(db, "SELECT count(*) FROM steps WHERE phase = 'confirm'"), 1);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO steps (bisection_id, seq, hash, phase, status, started_at) "
					  "VALUES (1, 9, 'p', 'profile', 'done', 0)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_not_equal(sqlite3_exec(db, "INSERT INTO steps (bisection_id, seq, hash, phase, status, started_at) "
					      "VALUES (1, 10, 'q', 'profiles', 'done', 0)", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DELETE FROM steps WHERE seq = 9", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(db_bisection_revert_check(db, 1, &on), 0);
	assert_int_equal(on, 1);
	assert_int_equal(db_bisection_revert(db, 1, &got), 0);
	assert_int_equal(got.outcome, REVERT_NONE);
	begin_step(db, 1, &s, "2222222222222222222222222222222222222222", "revert");

	revert_restored(&rc, s.hash, 12345, 0.5, 12400, 9000, "like-good: ...");
	assert_int_equal(db_bisection_set_revert(db, 1, &rc), 0);
	assert_int_equal(db_bisection_revert(db, 1, &got), 1);
	assert_int_equal(got.outcome, REVERT_RESTORES_GOOD);
	assert_string_equal(got.commit, s.hash);
	assert_int_equal(got.runs, 5);
	assert_true(got.median == 12345 && got.good_median == 12400 && got.bad_median == 9000);
	assert_string_equal(got.detail, "like-good: ...");
	revert_check_release(&got);

	/* does not apply: no commit, no numbers */
	memset(&rc, 0, sizeof(rc));
	rc.outcome = REVERT_NO_APPLY;
	rc.detail = "conflicts in 1 file: a";
	assert_int_equal(db_bisection_set_revert(db, 1, &rc), 0);
	assert_int_equal(db_bisection_revert(db, 1, &got), 1);
	assert_int_equal(got.outcome, REVERT_NO_APPLY);
	assert_string_equal(got.commit, "");
	assert_int_equal(got.runs, 0);
	revert_check_release(&got);

	assert_int_equal(db_bisection_set_revert_check(db, 1, 0), 0);
	assert_int_equal(db_bisection_revert_check(db, 1, &on), 0);
	assert_int_equal(on, 0);
	assert_int_not_equal(sqlite3_exec(db, "UPDATE bisections SET revert_outcome = 'maybe' WHERE id = 1", NULL,
					  NULL, NULL), SQLITE_OK);
	db_close(db);
	free(path);
}

/* Migration 10: a bisection's drift (set once, the first trend kept) and
 * its run cap; a done step opened again keeps its runs and can finish. */
static void test_db__migration_10_stores_drift_and_the_run_cap(void **state)
{
	char *path = xstrfmt("%s/m9.db", tmpdir);
	sqlite3 *db;
	struct step s;
	unsigned cap;
	double pct;
	int drift;

	(void)state;
	assert_int_equal(db_open(&db, path, 1), 0);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO repos (id, path, created_at) VALUES (1, '/r', 0);"
				      "INSERT INTO bisections (id, repo_id, kind, bad, created_at) "
				      "VALUES (1, 1, 'job', '1111111111111111111111111111111111111111', 0)", NULL, NULL,
				      NULL), SQLITE_OK);
	assert_int_equal(db_bisection_drift(db, 1, &drift, &pct), 0);
	assert_int_equal(drift, 0);
	assert_int_equal(db_bisection_max_runs(db, 1, &cap), 0);
	assert_int_equal(cap, 0);
	assert_int_equal(db_bisection_set_drift(db, 1, -1.25), 0);
	assert_int_equal(db_bisection_set_drift(db, 1, 3.0), 0);
	assert_int_equal(db_bisection_drift(db, 1, &drift, &pct), 0);
	assert_int_equal(drift, 1);
	assert_true(pct == -1.25);
	assert_int_equal(db_bisection_set_max_runs(db, 1, 40), 0);
	assert_int_equal(db_bisection_max_runs(db, 1, &cap), 0);
	assert_int_equal(cap, 40);
	assert_int_not_equal(sqlite3_exec(db, "UPDATE bisections SET max_runs = 2 WHERE id = 1", NULL, NULL, NULL),
			     SQLITE_OK);

	begin_step(db, 1, &s, "2222222222222222222222222222222222222222", "reference");
	s.verdict = "good";
	s.reason = "regression";
	assert_int_equal(db_step_finish(db, &s), 0);
	/* only a done step opens again, once */
	assert_int_equal(db_step_reopen(db, s.id), 0);
	assert_int_equal(db_step_reopen(db, s.id), -1);
	assert_int_equal(query_int(db, "SELECT count(*) FROM steps WHERE status = 'running'"), 1);
	assert_int_equal(db_step_finish(db, &s), 0);
	assert_int_equal(query_int(db, "SELECT attempts FROM steps WHERE id = 1"), 2);
	db_close(db);
	free(path);
}

/* Migration 11 on a lab made by the klab before it (version 10, a
 * bisection and a step in it): the old step is of the whole range, the
 * split is set once (the first kept), the half and each half's culprit
 * are stored and read back, and the schema refuses a third half. */

static void test_db__migration_11_stores_two_change_points(void **state)
{
	const char *c1 = "3333333333333333333333333333333333333333", *c2 = "4444444444444444444444444444444444444444";
	char *path = xstrfmt("%s/m12.db", tmpdir), split[41];
	struct half_culprit hc, *got = NULL;
	struct step s, *steps = NULL;
	size_t nr = 0;
	sqlite3 *db;
	int has, half;

	(void)state;
	db = db_at_version(path, 10, "INSERT INTO repos (id, path, created_at) VALUES (1, '/r', 0);"
				     "INSERT INTO bisections (id, repo_id, kind, bad, created_at) "
				     "VALUES (1, 1, 'job', '1111111111111111111111111111111111111111', 0);"
				     "INSERT INTO steps (bisection_id, seq, hash, phase, status, verdict, started_at) "
				     "VALUES (1, 1, '2222222222222222222222222222222222222222', 'bisect', 'done', 'skip', 0)");
	sqlite3_close(db);

	assert_int_equal(db_open(&db, path, 0), 0);
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(db_steps_load(db, 1, &steps, &nr), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(steps[0].half, 0);
	steps_release(steps, nr);
	assert_int_equal(db_bisection_split(db, 1, split, &has), 0);
	assert_int_equal(has, 0);
	assert_int_equal(db_bisection_half(db, 1, &half), 0);
	assert_int_equal(half, 0);

	assert_int_equal(db_bisection_set_split(db, 1, "2222222222222222222222222222222222222222"), 0);
	assert_int_equal(db_bisection_set_split(db, 1, c1), 0);
	assert_int_equal(db_bisection_split(db, 1, split, &has), 0);
	assert_int_equal(has, 1);
	assert_string_equal(split, "2222222222222222222222222222222222222222");

	/* a step begun in half 2 belongs to it */
	assert_int_equal(db_bisection_set_half(db, 1, 2), 0);
	assert_int_equal(db_bisection_half(db, 1, &half), 0);
	assert_int_equal(half, 2);
	begin_step(db, 1, &s, c2, "bisect");
	assert_int_equal(db_steps_load(db, 1, &steps, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(steps[1].half, 2);
	steps_release(steps, nr);
	assert_int_not_equal(sqlite3_exec(db, "UPDATE bisections SET half = 3 WHERE id = 1", NULL, NULL, NULL),
			     SQLITE_OK);

	/* half 2 first, then half 1 twice (the second replaces it): read in half order */
	memset(&hc, 0, sizeof(hc));
	hc.half = 2;
	hc.has_culprit = 1;
	memcpy(hc.culprit, c2, 41);
	hc.confirmed = 1;
	hc.share = 55.5;
	hc.message = "culprit confirmed";
	assert_int_equal(db_half_culprit_store(db, 1, &hc), 0);
	hc.half = 1;
	hc.has_culprit = 0;
	hc.confirmed = 0;
	hc.share = NAN;
	hc.message = "only skipped commits left";
	assert_int_equal(db_half_culprit_store(db, 1, &hc), 0);
	hc.has_culprit = 1;
	memcpy(hc.culprit, c1, 41);
	hc.message = "suspect";
	assert_int_equal(db_half_culprit_store(db, 1, &hc), 0);
	assert_int_equal(db_half_culprits_load(db, 1, &got, &nr), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(got[0].half, 1);
	assert_int_equal(got[0].has_culprit, 1);
	assert_string_equal(got[0].culprit, c1);
	assert_int_equal(got[0].confirmed, 0);
	assert_true(isnan(got[0].share));
	assert_string_equal(got[0].message, "suspect");
	assert_int_equal(got[1].half, 2);
	assert_string_equal(got[1].culprit, c2);
	assert_int_equal(got[1].confirmed, 1);
	assert_true(got[1].share == 55.5);
	half_culprits_release(got, nr);
	assert_int_not_equal(sqlite3_exec(db, "INSERT INTO bisection_culprits (bisection_id, half, confirmed, message) "
					      "VALUES (1, 3, 0, 'x')", NULL, NULL, NULL), SQLITE_OK);
	/* gone with their bisection */
	assert_int_equal(sqlite3_exec(db, "DELETE FROM bisections WHERE id = 1", NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(query_int(db, "SELECT count(*) FROM bisection_culprits"), 0);
	db_close(db);
	free(path);
}

/* Migration 12 on a version-11 lab with a split bisection: each half's
 * culprit gets its own revert check, stored in its row and read back
 * beside the bisection's own (which stays empty). */
static void test_db__migration_12_stores_each_halfs_revert(void **state)
{
	char *path = xstrfmt("%s/m12b.db", tmpdir);
	struct revert_check rc, got;
	sqlite3 *db;

	(void)state;
	db = db_at_version(path, 11, "INSERT INTO repos (id, path, created_at) VALUES (1, '/r', 0);"
				     "INSERT INTO bisections (id, repo_id, kind, bad, created_at) "
				     "VALUES (1, 1, 'job', '1111111111111111111111111111111111111111', 0);"
				     "INSERT INTO bisection_culprits (bisection_id, half, culprit, confirmed, message) "
				     "VALUES (1, 1, '3333333333333333333333333333333333333333', 1, 'a'), "
				     "(1, 2, '4444444444444444444444444444444444444444', 1, 'b')");
	sqlite3_close(db);
	assert_int_equal(db_open(&db, path, 0), 0);
	assert_int_equal(query_int(db, "PRAGMA user_version"), db_schema_version());
	assert_int_equal(db_half_revert(db, 1, 2, &got), 0);

	memset(&rc, 0, sizeof(rc));
	rc.outcome = REVERT_NO_RESTORE;
	memcpy(rc.commit, "5555555555555555555555555555555555555555", 41);
	rc.runs = 5;
	rc.median = 10700;
	rc.cv_percent = 1.5;
	rc.good_median = 12400;
	rc.bad_median = 9000;
	rc.detail = "apart-from-good: x";
	assert_int_equal(db_half_set_revert(db, 1, 2, &rc), 0);
	assert_int_equal(db_half_revert(db, 1, 2, &got), 1);
	assert_int_equal(got.outcome, REVERT_NO_RESTORE);
	assert_string_equal(got.commit, rc.commit);
	assert_int_equal(got.runs, 5);
	assert_true(got.median == 10700 && got.good_median == 12400 && got.bad_median == 9000);
	assert_string_equal(got.detail, "apart-from-good: x");
	revert_check_release(&got);
	/* the other half and the bisection itself: none */
	assert_int_equal(db_half_revert(db, 1, 1, &got), 0);
	assert_int_equal(db_bisection_revert(db, 1, &got), 0);
	assert_int_not_equal(sqlite3_exec(db, "UPDATE bisection_culprits SET revert_outcome = 'restores' WHERE half = 1",
					  NULL, NULL, NULL), SQLITE_OK);
	db_close(db);
	free(path);
}

static void test_lab__init_creates_dirs_config_and_db(void **state)
{
	char *dir = xstrfmt("%s/lab/nested", tmpdir);
	struct lab lab;
	int created;

	assert_int_equal(lab_init(dir, &created), 0);
	assert_int_equal(created, 1);
	assert_int_equal(lab_init(dir, &created), 0);
	assert_int_equal(created, 0);
	assert_int_equal(lab_open(&lab, dir), 0);
	assert_string_equal(lab.libvirt_uri, "qemu:///system");
	lab_close(&lab);
	free(dir);
}

static void test_lab__open_without_init_says_how(void **state)
{
	char *dir = xstrfmt("%s/nolab", tmpdir);
	struct lab lab;

	assert_int_equal(lab_open(&lab, dir), -1);
	free(dir);
}

/* Remove a lab's database with its WAL files. */
static void remove_db(const char *dir)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };

	for (size_t i = 0; i < ARRAY_SIZE(suffix); i++) {
		char *p = xstrfmt("%s/klab.db%s", dir, suffix[i]);
		unlink(p);
		free(p);
	}
}

static void test_lab__lost_database_is_not_re_created(void **state)
{
	char *dir = xstrfmt("%s/lostdb", tmpdir);
	char *dbp = xstrfmt("%s/klab.db", dir);
	struct lab lab;
	int created;

	assert_int_equal(lab_init(dir, &created), 0);
	remove_db(dir);
	assert_int_equal(lab_open(&lab, dir), -1);
	assert_error_says(dbp, "is missing");
	assert_int_not_equal(access(dbp, F_OK), 0);
	/* truncated to nothing: neither a command nor klab init takes it */
	write_bytes(dbp, "", 0);
	assert_int_equal(lab_open(&lab, dir), -1);
	assert_error_says(dbp, "is empty (0 bytes)");
	assert_int_equal(lab_init(dir, &created), -1);
	assert_int_equal(file_size(dbp), 0);
	free(dbp);
	free(dir);
}

static void test_lab__bad_config_line_is_an_error(void **state)
{
	char *dir = xstrfmt("%s/badcfg", tmpdir);
	char *cfg = xstrfmt("%s/klab.conf", dir);
	struct lab lab;
	int created;
	FILE *f;

	assert_int_equal(lab_init(dir, &created), 0);
	f = fopen(cfg, "w");
	fputs("build_jobs = lots\n", f);
	fclose(f);
	assert_int_equal(lab_open(&lab, dir), -1);
	free(cfg);
	free(dir);
}

static void test_lab__config_error_line_counts_blank_lines(void **state)
{
	static const char text[] = "accel = auto\n\n\n\nbogus_key = 1\n";
	struct lab lab;

	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", text, strlen(text)), -1);
	assert_non_null(strstr(error_last(), "c:5: unknown key 'bogus_key'"));
	lab_config_release(&lab);
	/* the last line without a newline, spaces-only lines counted */
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "  \n\t\naccel = fast", 17), -1);
	assert_non_null(strstr(error_last(), "c:3: accel must be"));
	lab_config_release(&lab);
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "accel = tcg\0x = y\n", 18), -1);
	assert_non_null(strstr(error_last(), "NUL byte"));
	lab_config_release(&lab);
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "accel = tcg\n\n", 13), 0);
	assert_string_equal(lab.accel, "tcg");
	assert_int_equal(lab.guests_ahead, 1);
	lab_config_release(&lab);
	/* log_limit: 8 MiB by default, sizes with K, M, G, 0 for none */
	assert_int_equal(lab.log_limit, 8u << 20);
	{
		static const struct { const char *text; int ok; uint64_t v; } sizes[] = {
			{ "log_limit = 8M\n", 0, 8u << 20 },	{ "log_limit = 512KiB\n", 0, 512u << 10 },
			{ "log_limit = 1G\n", 0, 1u << 30 },	{ "log_limit = 0\n", 0, 0 },
			{ "log_limit = 70000\n", 0, 70000 },	{ "log_limit = 2G\n", -1, 0 },
			{ "log_limit = 1K\n", -1, 0 },		{ "log_limit = 8MB\n", -1, 0 },
			{ "log_limit = -1\n", -1, 0 },		{ "log_limit = M\n", -1, 0 },
		};
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			memset(&lab, 0, sizeof(lab));
			assert_int_equal(lab_config_parse(&lab, "c", sizes[i].text, strlen(sizes[i].text)), sizes[i].ok);
			if (!sizes[i].ok)
				assert_int_equal(lab.log_limit, sizes[i].v);
			else
				assert_non_null(strstr(error_last(), "log_limit must be a size"));
			lab_config_release(&lab);
		}
	}
	/* host_wait: 120 s by default, 0 to 3600 */
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "\n", 1), 0);
	assert_int_equal(lab.host_wait, 120);
	lab_config_release(&lab);
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "host_wait = 0\n", 14), 0);
	assert_int_equal(lab.host_wait, 0);
	lab_config_release(&lab);
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "host_wait = 2h\n", 15), -1);
	assert_non_null(strstr(error_last(), "host_wait must be a number of seconds"));
	lab_config_release(&lab);
	/* guests made ahead: yes by default, no turns them off, nothing else */
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "guests_ahead = no\n", 18), 0);
	assert_int_equal(lab.guests_ahead, 0);
	lab_config_release(&lab);
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "guests_ahead = maybe\n", 21), -1);
	assert_non_null(strstr(error_last(), "guests_ahead must be yes or no"));
	lab_config_release(&lab);
	/* comment-only commits: skipped by default, built when asked */
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "\n", 1), 0);
	assert_int_equal(lab.comment_only_skip, 1);
	lab_config_release(&lab);
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "comment_only_commits = build\n", 29), 0);
	assert_int_equal(lab.comment_only_skip, 0);
	lab_config_release(&lab);
	memset(&lab, 0, sizeof(lab));
	assert_int_equal(lab_config_parse(&lab, "c", "comment_only_commits = yes\n", 27), -1);
	assert_non_null(strstr(error_last(), "comment_only_commits must be skip or build"));
	lab_config_release(&lab);
}

static void test_lab__default_state_dir_order(void **state)
{
	char *d;

	setenv("KLAB_STATE", "/x/state", 1);
	d = lab_default_state_dir("/over");
	assert_string_equal(d, "/over");
	free(d);
	d = lab_default_state_dir(NULL);
	assert_string_equal(d, "/x/state");
	free(d);
	unsetenv("KLAB_STATE");
	setenv("XDG_STATE_HOME", "/xdg", 1);
	d = lab_default_state_dir(NULL);
	assert_string_equal(d, "/xdg/klab");
	free(d);
	unsetenv("XDG_STATE_HOME");
	setenv("HOME", "/home/u", 1);
	d = lab_default_state_dir(NULL);
	assert_string_equal(d, "/home/u/.local/state/klab");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_db__create_sets_version_wal_and_foreign_keys),
		cmocka_unit_test(test_db__reopen_is_idempotent),
		cmocka_unit_test(test_db__refuses_newer_schema),
		cmocka_unit_test(test_db__refuses_negative_schema_version),
		cmocka_unit_test(test_db__newer_schema_says_a_newer_klab_made_it),
		cmocka_unit_test(test_db__empty_file_is_not_taken_for_a_new_database),
		cmocka_unit_test(test_db__corrupt_file_is_refused_and_kept),
		cmocka_unit_test(test_db__sqlite_file_without_klab_schema_is_refused),
		cmocka_unit_test(test_db__missing_file_is_not_created_without_create),
		cmocka_unit_test(test_db__foreign_keys_are_enforced),
		cmocka_unit_test(test_db__bisection_roundtrip),
		cmocka_unit_test(test_db__unfinished_step_is_reused_not_duplicated),
		cmocka_unit_test(test_db__step_mon_values_are_per_run_deltas_and_levels),
		cmocka_unit_test(test_db__round_steps_start_together_and_resume),
		cmocka_unit_test(test_db__state_transitions_record_times),
		cmocka_unit_test(test_db__migration_7_stores_the_revert_check),
		cmocka_unit_test(test_db__migration_10_stores_drift_and_the_run_cap),
		cmocka_unit_test(test_db__migration_11_stores_two_change_points),
		cmocka_unit_test(test_db__migration_12_stores_each_halfs_revert),
		cmocka_unit_test(test_db__reproduce_job_keeps_its_note_and_bisection),
		cmocka_unit_test(test_lab__init_creates_dirs_config_and_db),
		cmocka_unit_test(test_lab__open_without_init_says_how),
		cmocka_unit_test(test_lab__lost_database_is_not_re_created),
		cmocka_unit_test(test_lab__bad_config_line_is_an_error),
		cmocka_unit_test(test_lab__config_error_line_counts_blank_lines),
		cmocka_unit_test(test_lab__default_state_dir_order),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
