/* Unit tests of the job tester's side of two change points
 * (perf-halves.c, perf-measure.c): the references of each half after a
 * split, taken from stored steps and runs, with no kernel or guest (the
 * reference phase of a resumed bisection decides from its stored runs
 * and boots nothing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/bisect-run.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "engine/perfbisect.h"
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

/* A lab in tmpdir/NAME with bisection 1 of GOOD..BAD under the malloc1
 * job, its stored steps (run ids 1-6 the good end at 1000 + i, 7-12 the
 * bad end at 500 + i, 13-24 SPLIT at 750 + i), and the job tester begun
 * on it: the stored ends reproduce, nothing boots. */
struct fixture {
	char *state_dir, *job, *text, *msg;
	struct bisection b;
	struct bisect_run br;
	struct perf p;
	struct lab lab;
};

static void fixture_open(struct fixture *f, const char *name)
{
	int created;

	memset(f, 0, sizeof(*f));
	f->state_dir = xstrfmt("%s/%s", tmpdir, name);
	f->job = data_path("../../jobs/will-it-scale-malloc1.yaml");
	assert_int_equal(read_file(f->job, 1 << 20, &f->text, NULL), 0);
	assert_int_equal(lab_init(f->state_dir, &created), 0);
	assert_int_equal(lab_open(&f->lab, f->state_dir), 0);
	assert_int_equal(db_repo_id(f->lab.db, tmpdir, &f->b.repo_id), 0);
	f->b.goods = xcalloc(1, 41);
	memcpy(f->b.goods[0], GOOD, 41);
	f->b.nr_goods = 1;
	memcpy(f->b.bad, BAD, 41);
	f->b.job_path = f->job;
	f->b.job_text = f->text;
	f->b.kpi = KPI;
	assert_int_equal(db_bisection_create(f->lab.db, &f->b), 0);
	assert_int_equal(f->b.id, 1);
	free(f->b.goods);
	stored_step(f->lab.db, GOOD, "reference", "good", 1000, 6);
	stored_step(f->lab.db, BAD, "reference", "bad", 500, 6);
	stored_step(f->lab.db, SPLIT, "bisect", "skip", 750, 12);
	assert_int_equal(db_bisection_load(f->lab.db, 1, &f->b), 0);
	assert_int_equal(perf_init(&f->p, &f->lab, f->b.job_path, f->b.job_text, f->b.kpi), 0);
	assert_int_equal(bisect_run_init(&f->br, &f->lab, &f->b, NULL, NULL), 0);
	f->br.tester = &perf_tester;
	f->br.tester_data = &f->p;
	assert_int_equal(perf_tester.begin(&f->br, &f->msg), 0);
}

static void fixture_close(struct fixture *f)
{
	free(f->msg);
	perf_release(&f->p);
	bisect_run_release(&f->br);
	bisection_release(&f->b);
	lab_close(&f->lab);
	free(f->text);
	free(f->job);
	free(f->state_dir);
}

/* A resumed bisection split at SPLIT: half 1 judges against good and
 * the split commit's runs as its bad end, half 2 against the split
 * commit as its good end and the range's bad end again; a split commit
 * without a step is refused. */
static void test_perfbisect__each_half_takes_the_split_commit_as_an_end(void **state)
{
	struct fixture f;
	struct perf *p = &f.p;

	(void)state;
	fixture_open(&f, "lab");
	assert_int_equal(p->ng, 6);
	assert_int_equal(p->nb, 6);

	assert_int_equal(perf_tester.half(&f.br, 1, SPLIT), 0);
	assert_int_equal(p->ng, 6);
	assert_true(p->good[0] == 1000);
	assert_int_equal(p->nb, 12);
	assert_true(p->bad[0] == 750 && p->bad[11] == 761);
	/* the range's bad end kept aside, for the share */
	assert_int_equal(p->outer.n, 6);
	assert_true(p->outer.v[0] == 500);

	assert_int_equal(perf_tester.half(&f.br, 2, SPLIT), 0);
	assert_int_equal(p->ng, 12);
	assert_true(p->good[0] == 750);
	assert_int_equal(p->nb, 6);
	assert_true(p->bad[0] == 500);
	assert_int_equal(p->outer.n, 6);
	assert_true(p->outer.v[0] == 1000);
	assert_int_equal(p->good_step, 3);

	assert_int_equal(perf_tester.half(&f.br, 1, "4444444444444444444444444444444444444444"), -1);
	fixture_close(&f);
}

/* Under drift a side's references are its end's runs and those of the
 * commits decided like it, in time order; an end runs again only when
 * its side has no run among the last side_age runs; a half starts again
 * from its own ends. */
static void test_perfbisect__decided_commits_join_their_side_under_drift(void **state)
{
	const double v1[] = { 990, 991 }, t1[] = { 30, 20 }, v2[] = { 995 }, t2[] = { 25 };
	struct runs_buf refs = { 0 };
	struct fixture f;
	struct perf *p = &f.p;

	(void)state;
	fixture_open(&f, "lab-sides");
	assert_int_equal(p->pol.side_age, 6);

	/* two good commits, decided out of time order */
	perf_side_add(p, 0, v1, t1, 2);
	perf_side_add(p, 0, v2, t2, 1);
	assert_int_equal(p->side[0].n, 3);
	assert_true(p->side[0].t[0] == 20 && p->side[0].t[1] == 25 && p->side[0].t[2] == 30);
	assert_true(p->side[0].v[0] == 991 && p->side[0].v[1] == 995 && p->side[0].v[2] == 990);
	perf_side_refs(p, 0, &refs);
	assert_int_equal(refs.n, 9);
	for (size_t i = 1; i < refs.n; i++)
		assert_true(refs.t[i - 1] < refs.t[i]);
	assert_true(refs.v[0] == 1000 && refs.v[5] == 1005 && refs.v[6] == 991 && refs.v[8] == 990);
	perf_side_refs(p, 1, &refs);
	assert_int_equal(refs.n, 6);
	assert_true(refs.v[0] == 500 && refs.t[5] == 12);

	/* the good side ran at 30, the bad end at 12 */
	p->last_run = 35;
	assert_false(perf_side_stale(p, 0, 1, p->pol.side_age));
	assert_true(perf_side_stale(p, 1, 1, p->pol.side_age));
	p->last_run = 36;
	assert_true(perf_side_stale(p, 0, 1, p->pol.side_age));
	/* the good end alone last ran at 6 */
	p->last_run = 11;
	assert_false(perf_side_stale(p, 0, 0, p->pol.side_age));
	p->last_run = 12;
	assert_true(perf_side_stale(p, 0, 0, p->pol.side_age));
	/* age 1 (the revert check's good end under drift): stale unless
	 * the latest run is the end's */
	p->last_run = 6;
	assert_false(perf_side_stale(p, 0, 0, 1));
	p->last_run = 7;
	assert_true(perf_side_stale(p, 0, 0, 1));

	/* a half judges against its own ends only */
	assert_int_equal(perf_tester.half(&f.br, 1, SPLIT), 0);
	assert_int_equal(p->side[0].n, 0);
	assert_int_equal(p->side[1].n, 0);
	perf_side_refs(p, 1, &refs);
	assert_int_equal(refs.n, 12);
	assert_true(refs.v[0] == 750);

	runs_buf_release(&refs);
	fixture_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfbisect__each_half_takes_the_split_commit_as_an_end),
		cmocka_unit_test(test_perfbisect__decided_commits_join_their_side_under_drift),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
