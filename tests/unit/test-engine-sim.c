/* The real engine against a second measurer: the bisection loop
 * (bisect-run.c), the job tester's files (perf-*.c: references, the step
 * ladder, the split, the confirmation) and the revert check (revert.c),
 * over a real lab database in a temporary directory and a real small git
 * history, with kernels and runs from the simulated measurer
 * (tests/sim/measure-sim.c: seeded draws, a planted step in the KPI at a
 * known commit), through the measuring seam the guests use
 * (engine/measurer.h).  Each bisection runs in a child process, its
 * output in the lab's directory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/bisect-run.h"
#include "engine/perfbisect.h"
#include "core/revert-rule.h"
#include "cmd/klab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/util.h"
#include "helpers.h"
#include "../sim/measure-sim.h"

#define NR_COMMITS 24	/* c0 (good) .. c23 (bad) */
#define KPI "will-it-scale.per_process_ops"

static char tmpdir[256];
static int lab_nr;

struct history {
	char dir[300];
	char hashes[NR_COMMITS][41];
};

/* A linear history in tmpdir/name: commit i adds the file f<i> and sets
 * `level` (what the simulated kernel's KPI is) to levels[i] (so that the
 * revert of a commit that changes the level applies on the last one). */
static void history_make(struct history *h, const char *name, const double *levels)
{
	struct strbuf cmd = STRBUF_INIT;
	char *list, *path, *p;

	snprintf(h->dir, sizeof(h->dir), "%s/%s", tmpdir, name);
	strbuf_addf(&cmd, "set -e; git init -q '%s'; cd '%s'; git config user.name T; "
		    "git config user.email t@example.org; ", h->dir, h->dir);
	for (int i = 0; i < NR_COMMITS; i++)
		strbuf_addf(&cmd, "echo %d > f%d; echo %g > level; git add f%d level; "
			    "GIT_AUTHOR_DATE='%d +0000' GIT_COMMITTER_DATE='%d +0000' git commit -q -m c%d; ", i,
			    i, levels[i], i, 1700000000 + i, 1700000000 + i, i);
	strbuf_addstr(&cmd, "git rev-list --reverse HEAD > hashes");
	sh("%s", cmd.buf);
	strbuf_release(&cmd);
	path = xstrfmt("%s/hashes", h->dir);
	assert_int_equal(read_file(path, 1 << 16, &list, NULL), 0);
	free(path);
	p = list;
	for (int i = 0; i < NR_COMMITS; i++) {
		memcpy(h->hashes[i], p, 40);
		h->hashes[i][40] = 0;
		p += 41;
	}
	free(list);
}

static int commit_index(const struct history *h, const char *hex)
{
	for (int i = 0; i < NR_COMMITS; i++)
		if (hex && !strcmp(h->hashes[i], hex))
			return i;
	return -1;
}

static int group_setup(void **state)
{
	(void)state;
	gitrepo_global_init();
	/* tmpfs unless TMPDIR says otherwise: the labs' fsyncs */
	snprintf(tmpdir, sizeof(tmpdir), "%s/klab-test-engine-sim.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char *cmd;
	int rc;

	(void)state;
	if (getenv("KLAB_KEEP_TEST_DIR")) {
		fprintf(stderr, "kept %s\n", tmpdir);
		return 0;
	}
	cmd = xstrfmt("rm -rf '%s'", tmpdir);
	rc = system(cmd);
	free(cmd);
	return rc;
}

/* A lab with one job bisection of the whole history (good c0, bad the
 * last), built (by the measurer) with the will-it-scale malloc1 job. */
struct labfix {
	char *state, *job, *text;
	int64_t id;
};

static struct labfix new_bisection(const struct history *h)
{
	struct labfix lf;
	struct lab lab;
	struct bisection b;
	int created;

	lf.state = xstrfmt("%s/lab%d", tmpdir, ++lab_nr);
	lf.job = data_path("../../jobs/will-it-scale-malloc1.yaml");
	assert_int_equal(read_file(lf.job, 1 << 20, &lf.text, NULL), 0);
	assert_int_equal(lab_init(lf.state, &created), 0);
	assert_int_equal(lab_open(&lab, lf.state), 0);
	memset(&b, 0, sizeof(b));
	assert_int_equal(db_repo_id(lab.db, h->dir, &b.repo_id), 0);
	b.goods = xcalloc(1, 41);
	memcpy(b.goods[0], h->hashes[0], 41);
	b.nr_goods = 1;
	memcpy(b.bad, h->hashes[NR_COMMITS - 1], 41);
	b.job_path = lf.job;
	b.job_text = lf.text;
	b.kpi = KPI;
	b.build = 1;
	b.config = "base tinyconfig\n";
	assert_int_equal(db_bisection_create(lab.db, &b), 0);
	lf.id = b.id;
	free(b.goods);
	lab_close(&lab);
	return lf;
}

static void labfix_release(struct labfix *lf)
{
	FREE_MANY(lf->state, lf->job, lf->text);
}

/* A child that could not set up its bisection: what it said first. */
static void child_exit(int code)
{
	fflush(stdout);
	fflush(stderr);
	_exit(code);
}

/* The bisection to its end in a child, as `klab bisect resume` runs it,
 * the job tester measuring through the simulated measurer: its exit code
 * (the model's counters copied back through a file). */
static int run_child(const struct labfix *lf, const struct history *h, struct sim_model *model)
{
	char *counts = xstrfmt("%s/model-%lld", lf->state, (long long)lf->id), *text = NULL;
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *out = xstrfmt("%s/out-%lld.log", lf->state, (long long)lf->id);
		char *wt = xstrfmt("%s/worktree", lf->state);
		struct bisect_run br;
		struct bisection b;
		struct perf perf;
		struct lab lab;
		int rc = EXIT_FAIL;
		FILE *f;

		if (!freopen(out, "a", stdout) || !freopen(out, "a", stderr))
			_exit(100);
		if (lab_open(&lab, lf->state) < 0 || db_bisection_load(lab.db, lf->id, &b) < 0)
			child_exit(101);
		if (bisect_run_init(&br, &lab, &b, NULL, NULL) < 0 || gitrepo_open(&br.repo, h->dir) < 0 ||
		    worktree_open(&br.wt, br.repo, wt) < 0)
			child_exit(102);
		br.log_dir = xstrfmt("%s/logs", lf->state);
		if (perf_init(&perf, &lab, b.job_path, b.job_text, b.kpi) < 0 ||
		    perf_set_measurer(&perf, &sim_measurer, model) < 0)
			child_exit(103);
		if (bisect_run_open(&br) == 0) {
			br.tester = &perf_tester;
			br.tester_data = &perf;
			rc = bisect_run(&br);
		}
		f = fopen(counts, "w");
		if (!f || fprintf(f, "%zu %zu %zu\n", model->runs, model->kernels, model->klab_kernels) < 0 ||
		    fclose(f))
			_exit(104);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) >= 100) {
		/* what the bisection said, for the failure's log */
		char *out = xstrfmt("%s/out-%lld.log", lf->state, (long long)lf->id);

		if (read_file(out, 1 << 24, &text, NULL) == 0)
			fputs(text, stderr);
		free(text);
		free(out);
		fail_msg("the bisection's process ended with status %d", status);
	}
	assert_int_equal(read_file(counts, 1 << 10, &text, NULL), 0);
	assert_int_equal(sscanf(text, "%zu %zu %zu", &model->runs, &model->kernels, &model->klab_kernels), 3);
	free(text);
	free(counts);
	return WEXITSTATUS(status);
}

struct outcome {
	char result[32];
	int culprit;		/* commit index, -1 none */
	int culprits[2];	/* two changes: each half's, -1 none */
	int confirmed;		/* confirm steps that called the culprit bad */
	enum revert_outcome revert;
	size_t runs;		/* KPI runs stored */
};

static struct outcome outcome_of(const struct labfix *lf, const struct history *h)
{
	struct outcome o;
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	struct revert_check rc;
	struct half_culprit *hc = NULL;
	size_t nr = 0, nr_hc = 0;

	memset(&o, 0, sizeof(o));
	o.culprits[0] = o.culprits[1] = -1;
	assert_int_equal(lab_open(&lab, lf->state), 0);
	assert_int_equal(db_bisection_load(lab.db, lf->id, &b), 0);
	snprintf(o.result, sizeof(o.result), "%s", b.result ? b.result : "-");
	o.culprit = commit_index(h, b.culprit);
	assert_int_equal(db_steps_load(lab.db, lf->id, &steps, &nr), 0);
	for (size_t i = 0; i < nr; i++) {
		double *v = NULL;
		size_t n = 0;

		assert_int_equal(db_step_metric_values(lab.db, steps[i].id, KPI, &v, &n), 0);
		o.runs += n;
		free(v);
		o.confirmed += steps[i].phase_id == STEP_PHASE_CONFIRM && steps[i].mark == BISECT_BAD &&
			       commit_index(h, steps[i].hash) == o.culprit;
	}
	steps_release(steps, nr);
	o.revert = db_bisection_revert(lab.db, lf->id, &rc) > 0 ? rc.outcome : REVERT_NONE;
	revert_check_release(&rc);
	assert_int_equal(db_half_culprits_load(lab.db, lf->id, &hc, &nr_hc), 0);
	for (size_t i = 0; i < nr_hc; i++)
		if (hc[i].has_culprit && hc[i].confirmed && hc[i].half >= 1 && hc[i].half <= 2)
			o.culprits[hc[i].half - 1] = commit_index(h, hc[i].culprit);
	half_culprits_release(hc, nr_hc);
	bisection_release(&b);
	lab_close(&lab);
	return o;
}

/* Whether the bisection's output says it saw the host drift. */
static int file_contains_drift(const struct labfix *lf)
{
	char *path = xstrfmt("%s/out-%lld.log", lf->state, (long long)lf->id), *text = NULL;
	int found;

	assert_int_equal(read_file(path, 1 << 24, &text, NULL), 0);
	found = strstr(text, "drift: the host trended") != NULL;
	free(text);
	free(path);
	return found;
}

static void one_step_at(double *levels, int culprit)
{
	for (int i = 0; i < NR_COMMITS; i++)
		levels[i] = i >= culprit ? 1 : 0;
}

/* A -10% step at c13 under 2% noise: the engine names c13, its parent
 * and it confirm the step, and the bad end with c13 reverted (klab's own
 * commit, its level read from its tree) restores good. */
static void test_engine_sim__planted_step_is_named_confirmed_and_reverted(void **state)
{
	double levels[NR_COMMITS];
	struct history h;
	struct labfix lf;
	struct sim_model model;
	struct outcome o;

	(void)state;
	one_step_at(levels, 13);
	history_make(&h, "one-step", levels);
	lf = new_bisection(&h);
	sim_model_init(&model, 45);
	assert_int_equal(run_child(&lf, &h, &model), EXIT_OK);
	o = outcome_of(&lf, &h);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 13);
	assert_int_equal(o.confirmed, 1);
	assert_int_equal(o.revert, REVERT_RESTORES_GOOD);
	/* every run the model drew is stored, the revert's kernel was asked
	 * for as klab's own commit */
	assert_int_equal(o.runs, model.runs);
	assert_int_equal(model.klab_kernels, 1);
	labfix_release(&lf);
}

/* Whether the bisection's output holds text. */
static int output_has(const struct labfix *lf, const char *what)
{
	char *path = xstrfmt("%s/out-%lld.log", lf->state, (long long)lf->id), *text = NULL;
	int found;

	assert_int_equal(read_file(path, 1 << 24, &text, NULL), 0);
	found = strstr(text, what) != NULL;
	free(text);
	free(path);
	return found;
}

/* The machine goes away after the reference phase (run 16) on host A; the
 * bisection resumes on host B (another kernel): it says the host changed
 * and what, measures the ends again (a second reference pair, on B) and
 * still names c13.  Resumed on the same host, the stored references are
 * used as they are. */
static void test_engine_sim__resume_on_another_host_takes_fresh_references(void **state)
{
	double levels[NR_COMMITS];
	struct history h;
	struct labfix lf;
	struct sim_model model;
	struct outcome o;
	struct lab lab;
	struct step *steps = NULL;
	size_t nr = 0, refs = 0;

	(void)state;
	one_step_at(levels, 13);
	history_make(&h, "host-change", levels);
	lf = new_bisection(&h);
	sim_model_init(&model, 45);
	model.host = "cpu=sim\nkernel=6.1.0-a\naccel=tcg\n";
	model.fail_at = 16;
	assert_int_not_equal(run_child(&lf, &h, &model), EXIT_OK);
	assert_false(output_has(&lf, "the host changed"));
	/* the same host again: no fresh references, the machine fails again */
	model.fail_at = model.runs + 2;
	assert_int_not_equal(run_child(&lf, &h, &model), EXIT_OK);
	assert_false(output_has(&lf, "the host changed"));
	assert_true(output_has(&lf, "references from earlier runs"));
	model.host = "cpu=sim\nkernel=6.1.0-b\naccel=tcg\n";
	model.fail_at = 0;
	assert_int_equal(run_child(&lf, &h, &model), EXIT_OK);
	assert_true(output_has(&lf, "the host changed since the earlier runs"));
	assert_true(output_has(&lf, "kernel differs): fresh references"));
	o = outcome_of(&lf, &h);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 13);
	assert_int_equal(lab_open(&lab, lf.state), 0);
	assert_int_equal(db_steps_load(lab.db, lf.id, &steps, &nr), 0);
	for (size_t i = 0; i < nr; i++)
		refs += steps[i].phase_id == STEP_PHASE_REFERENCE;
	assert_int_equal(refs, 4);
	steps_release(steps, nr);
	lab_close(&lab);
	labfix_release(&lf);
}

/* The same history under a host that slows down by 0.3% a run: the
 * engine sees the drift and still names c13. */
static void test_engine_sim__drifting_host_still_names_the_step(void **state)
{
	double levels[NR_COMMITS];
	struct history h;
	struct labfix lf;
	struct sim_model model;
	struct outcome o;

	(void)state;
	one_step_at(levels, 13);
	history_make(&h, "drift", levels);
	lf = new_bisection(&h);
	sim_model_init(&model, 7);
	model.drift_percent = -0.3;
	assert_int_equal(run_child(&lf, &h, &model), EXIT_OK);
	o = outcome_of(&lf, &h);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 13);
	assert_true(file_contains_drift(&lf));
	labfix_release(&lf);
}

/* Two changes of half the effect each, at c6 and c17: a commit between
 * the ends splits the range, each half names its own culprit. */
static void test_engine_sim__two_changes_split_the_range(void **state)
{
	double levels[NR_COMMITS];
	struct history h;
	struct labfix lf;
	struct sim_model model;
	struct outcome o;

	(void)state;
	for (int i = 0; i < NR_COMMITS; i++)
		levels[i] = 0.5 * (i >= 6) + 0.5 * (i >= 17);
	history_make(&h, "two", levels);
	lf = new_bisection(&h);
	sim_model_init(&model, 1);
	model.effect_percent = 20;
	assert_int_equal(run_child(&lf, &h, &model), EXIT_OK);
	o = outcome_of(&lf, &h);
	assert_int_equal(o.culprits[0], 6);
	assert_int_equal(o.culprits[1], 17);
	labfix_release(&lf);
}

/* The host fails a run mid-bisection (a fault that outlived measure_boot's
 * tries): the bisection stops, resumable, no commit skipped or marked for
 * it; resumed, it names the culprit it names without the fault. */
static void test_engine_sim__environment_failure_stops_and_resume_finishes(void **state)
{
	double levels[NR_COMMITS];
	struct history h;
	struct labfix lf;
	struct sim_model model;
	struct outcome o;
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0;

	(void)state;
	one_step_at(levels, 13);
	history_make(&h, "env-failure", levels);
	lf = new_bisection(&h);
	sim_model_init(&model, 45);
	model.env_fail_at = 14;	/* past the ends' first runs: a step's */
	assert_int_equal(run_child(&lf, &h, &model), EXIT_FAIL);
	assert_int_equal(lab_open(&lab, lf.state), 0);
	assert_int_equal(db_bisection_load(lab.db, lf.id, &b), 0);
	assert_int_equal(b.state_id, BISECTION_STOPPED);
	assert_non_null(b.message);
	assert_non_null(strstr(b.message, "environment failure after 3 tries: infrastructure"));
	assert_int_equal(db_steps_load(lab.db, lf.id, &steps, &nr), 0);
	for (size_t i = 0; i < nr; i++)
		assert_true(steps[i].status_id != STEP_DONE || steps[i].mark != BISECT_SKIP);
	steps_release(steps, nr);
	bisection_release(&b);
	lab_close(&lab);
	/* resumed on a healthy host */
	model.env_fail_at = 0;
	assert_int_equal(run_child(&lf, &h, &model), EXIT_OK);
	o = outcome_of(&lf, &h);
	assert_string_equal(o.result, "culprit");
	assert_int_equal(o.culprit, 13);
	assert_int_equal(o.runs, model.runs);	/* no stored run lost */
	labfix_release(&lf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_sim__planted_step_is_named_confirmed_and_reverted),
		cmocka_unit_test(test_engine_sim__drifting_host_still_names_the_step),
		cmocka_unit_test(test_engine_sim__resume_on_another_host_takes_fresh_references),
		cmocka_unit_test(test_engine_sim__two_changes_split_the_range),
		cmocka_unit_test(test_engine_sim__environment_failure_stops_and_resume_finishes),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
