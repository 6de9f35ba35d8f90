/* Unit tests of the job tester's side of two change points
 * (perfbisect.c): the references of each half after a split, taken from
 * stored steps and runs, with no kernel or guest (the reference phase of
 * a resumed bisection decides from its stored runs and boots nothing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect-run.h"
#include "db.h"
#include "lab.h"
#include "perfbisect.h"
#include "util/util.h"
#include "helpers.h"

static char tmpdir[256];

#define GOOD "1111111111111111111111111111111111111111"
#define SPLIT "2222222222222222222222222222222222222222"
#define BAD "3333333333333333333333333333333333333333"
#define KPI "will-it-scale.per_process_ops"

static int setup(void **state)
{
	(void)state;
	make_test_dir(tmpdir, sizeof(tmpdir), "perfbisect");
	return 0;
}

static int teardown(void **state)
{
	char *cmd = xstrfmt("rm -rf '%s'", tmpdir);
	int rc = system(cmd);

	(void)state;
	free(cmd);
	return rc;
}

/* A done step of bisection 1 with n KPI runs of value base + i. */
static void stored_step(sqlite3 *db, const char *hash, char *phase, char *verdict, double base, int n)
{
	struct step s;

	memset(&s, 0, sizeof(s));
	memcpy(s.hash, hash, 41);
	s.phase = phase;
	s.exit_code = -1;
	assert_int_equal(db_step_begin(db, 1, &s), 0);
	for (int i = 0; i < n; i++) {
		char *sql = xstrfmt("INSERT INTO boots (step_id, outcome, started_at) VALUES (%lld, 'ok', 0);"
				    "INSERT INTO runs (boot_id, step_id, status, started_at) "
				    "VALUES (last_insert_rowid(), %lld, 'ok', 0);"
				    "INSERT INTO samples (run_id, metric, value) VALUES (last_insert_rowid(), '" KPI "', %g)",
				    (long long)s.id, (long long)s.id, base + i);
		assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
		free(sql);
	}
	s.verdict = verdict;
	s.reason = "stored";
	assert_int_equal(db_step_finish(db, &s), 0);
}

/* A resumed bisection split at SPLIT: half 1 judges against good and
 * the split commit's runs as its bad end, half 2 against the split
 * commit as its good end and the range's bad end again; a split commit
 * without a step is refused. */
static void test_perfbisect__each_half_takes_the_split_commit_as_an_end(void **state)
{
	char *state_dir = xstrfmt("%s/lab", tmpdir), *job = data_path("../../jobs/will-it-scale-malloc1.yaml"), *text;
	struct bisection b;
	struct bisect_run br;
	struct perf p;
	struct lab lab;
	char *msg = NULL;
	int created;

	(void)state;
	assert_int_equal(read_file(job, 1 << 20, &text, NULL), 0);
	assert_int_equal(lab_init(state_dir, &created), 0);
	assert_int_equal(lab_open(&lab, state_dir), 0);
	memset(&b, 0, sizeof(b));
	assert_int_equal(db_repo_id(lab.db, tmpdir, &b.repo_id), 0);
	b.goods = xcalloc(1, 41);
	memcpy(b.goods[0], GOOD, 41);
	b.nr_goods = 1;
	memcpy(b.bad, BAD, 41);
	b.job_path = job;
	b.job_text = text;
	b.kpi = KPI;
	assert_int_equal(db_bisection_create(lab.db, &b), 0);
	assert_int_equal(b.id, 1);
	free(b.goods);
	stored_step(lab.db, GOOD, "reference", "good", 1000, 6);
	stored_step(lab.db, BAD, "reference", "bad", 500, 6);
	stored_step(lab.db, SPLIT, "bisect", "skip", 750, 12);

	assert_int_equal(db_bisection_load(lab.db, 1, &b), 0);
	assert_int_equal(perf_init(&p, &lab, b.job_path, b.job_text, b.kpi), 0);
	assert_int_equal(bisect_run_init(&br, &lab, &b, NULL, NULL), 0);
	br.tester = &perf_tester;
	br.tester_data = &p;
	/* the stored ends reproduce: nothing boots */
	assert_int_equal(perf_tester.begin(&br, &msg), 0);
	assert_int_equal(p.ng, 6);
	assert_int_equal(p.nb, 6);

	assert_int_equal(perf_tester.half(&br, 1, SPLIT), 0);
	assert_int_equal(p.ng, 6);
	assert_true(p.good[0] == 1000);
	assert_int_equal(p.nb, 12);
	assert_true(p.bad[0] == 750 && p.bad[11] == 761);
	/* the range's bad end kept aside, for the share */
	assert_int_equal(p.outer.n, 6);
	assert_true(p.outer.v[0] == 500);

	assert_int_equal(perf_tester.half(&br, 2, SPLIT), 0);
	assert_int_equal(p.ng, 12);
	assert_true(p.good[0] == 750);
	assert_int_equal(p.nb, 6);
	assert_true(p.bad[0] == 500);
	assert_int_equal(p.outer.n, 6);
	assert_true(p.outer.v[0] == 1000);
	assert_int_equal(p.good_step, 3);

	assert_int_equal(perf_tester.half(&br, 1, "4444444444444444444444444444444444444444"), -1);

	free(msg);
	perf_release(&p);
	bisect_run_release(&br);
	bisection_release(&b);
	lab_close(&lab);
	free(text);
	free(job);
	free(state_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfbisect__each_half_takes_the_split_commit_as_an_end),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
