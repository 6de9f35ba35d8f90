/* Bisections by klab's real engine over simulated runs: see engine-sim.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine-sim.h"
#include "cmd/klab.h"
#include "core/revert-rule.h"
#include "engine/bisect-run.h"
#include "engine/perfbisect.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/util.h"

#define ENGINE_SIM_KPI "will-it-scale.per_process_ops"
#define ENGINE_SIM_JOB KLAB_ABS_SRCDIR "/jobs/will-it-scale-malloc1.yaml"

static int shell(const char *cmd)
{
	int rc = system(cmd);

	return rc == 0 ? 0 : error("'%.80s...' failed (%d)", cmd, rc);
}

int engine_sim_open(struct engine_sim *es)
{
	const char *tmp = getenv("TMPDIR");

	memset(es, 0, sizeof(*es));
	gitrepo_global_init();
	/* tmpfs unless TMPDIR says otherwise: the labs' fsyncs */
	snprintf(es->dir, sizeof(es->dir), "%s/klab-engine-sim.XXXXXX",
		 tmp ? tmp : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(es->dir))
		return error("mkdtemp %s: %s", es->dir, strerror(errno));
	es->job_path = xstrdup(ENGINE_SIM_JOB);
	es->revert_check = 1;
	es->direction = 1;
	return read_file(es->job_path, 1 << 20, &es->job_text, NULL);
}

void engine_sim_close(struct engine_sim *es)
{
	if (es->keep) {
		fprintf(stderr, "kept %s\n", es->dir);
	} else if (es->dir[0]) {
		char *cmd = xstrfmt("rm -rf '%s'", es->dir);

		(void)shell(cmd);
		free(cmd);
	}
	for (size_t i = 0; i < es->nr_hist; i++) {
		FREE_MANY(es->hist[i]->dir, es->hist[i]->levels, es->hist[i]->hashes);
		free(es->hist[i]);
	}
	FREE_MANY(es->hist, es->job_path, es->job_text);
}

int engine_history_index(const struct engine_history *h, const char *hex)
{
	for (size_t i = 0; hex && i < h->n; i++)
		if (!strcmp(h->hashes[i], hex))
			return (int)i;
	return -1;
}

/* git: commit i adds the file f<i> and sets `level` (so that the revert
 * of a commit that changes the level applies on the last one). */
static int history_make(struct engine_history *h)
{
	struct strbuf cmd = STRBUF_INIT;
	char *list = NULL, *path, *p;
	size_t len = 0;
	int rc;

	strbuf_addf(&cmd, "set -e; git init -q '%s'; cd '%s'; git config user.name T; "
		    "git config user.email t@example.org; ", h->dir, h->dir);
	for (size_t i = 0; i < h->n; i++)
		strbuf_addf(&cmd, "echo %zu > f%zu; echo %.17g > level; git add f%zu level; "
			    "GIT_AUTHOR_DATE='%zu +0000' GIT_COMMITTER_DATE='%zu +0000' git commit -q -m c%zu; ", i,
			    i, h->levels[i], i, 1700000000 + i, 1700000000 + i, i);
	strbuf_addstr(&cmd, "git rev-list --reverse HEAD > hashes");
	rc = shell(cmd.buf);
	strbuf_release(&cmd);
	if (rc < 0)
		return -1;
	path = xstrfmt("%s/hashes", h->dir);
	rc = read_file(path, 1 << 20, &list, &len);
	free(path);
	if (rc < 0 || len != 41 * h->n) {
		free(list);
		return rc < 0 ? -1 : error("%s: %zu commits expected", h->dir, h->n);
	}
	p = list;
	for (size_t i = 0; i < h->n; i++, p += 41) {
		memcpy(h->hashes[i], p, 40);
		h->hashes[i][40] = 0;
	}
	free(list);
	return 0;
}

int engine_sim_history(struct engine_sim *es, const double *levels, size_t n, const struct engine_history **out)
{
	struct engine_history *h;

	for (size_t i = 0; i < es->nr_hist; i++) {
		h = es->hist[i];
		if (h->n == n && !memcmp(h->levels, levels, n * sizeof(*levels))) {
			*out = h;
			return 0;
		}
	}
	h = xcalloc(1, sizeof(*h));
	h->dir = xstrfmt("%s/history%zu", es->dir, es->nr_hist);
	h->n = n;
	h->levels = xcalloc(n, sizeof(*levels));
	memcpy(h->levels, levels, n * sizeof(*levels));
	h->hashes = xcalloc(n, sizeof(*h->hashes));
	es->hist = xrealloc(es->hist, (es->nr_hist + 1) * sizeof(*es->hist));
	es->hist[es->nr_hist++] = h;
	*out = h;
	return history_make(h);
}

/* A lab with one job bisection of the whole history, built (by the
 * measurer) with the will-it-scale job; *id its bisection. */
static int new_bisection(struct engine_sim *es, const struct engine_history *h, const char *state, int64_t *id)
{
	struct lab lab;
	struct bisection b;
	int created, rc = -1;
	/* lower is better: the job says so (will-it-scale's says nothing) */
	char *text = es->direction < 0 ? xstrfmt("%sdirection: -1\n", es->job_text) : xstrdup(es->job_text);

	if (lab_init(state, &created) < 0 || lab_open(&lab, state) < 0) {
		free(text);
		return -1;
	}
	memset(&b, 0, sizeof(b));
	b.goods = xcalloc(1, 41);
	memcpy(b.goods[0], h->hashes[0], 41);
	b.nr_goods = 1;
	memcpy(b.bad, h->hashes[h->n - 1], 41);
	b.job_path = es->job_path;
	b.job_text = text;
	b.kpi = ENGINE_SIM_KPI;
	b.build = 1;
	b.config = "base tinyconfig\n";
	if (db_repo_id(lab.db, h->dir, &b.repo_id) == 0 && db_bisection_create(lab.db, &b) == 0 &&
	    db_bisection_set_revert_check(lab.db, b.id, es->revert_check) == 0) {
		*id = b.id;
		rc = 0;
	}
	free(b.goods);
	free(text);
	lab_close(&lab);
	return rc;
}

/* In the child: the bisection to its end as `klab bisect resume` runs
 * it, the job tester measuring through the simulated measurer; the
 * model's counters written to fd.  Never returns. */
static void child(const char *state, int64_t id, const struct engine_history *h, struct sim_model *m, int fd)
{
	char *out = xstrfmt("%s/out.log", state), *wt = xstrfmt("%s/worktree", state);
	struct bisect_run br;
	struct bisection b;
	struct perf perf;
	struct lab lab;
	int rc = 100;

	if (!freopen(out, "a", stdout) || !freopen(out, "a", stderr))
		_exit(101);
	if (lab_open(&lab, state) == 0 && db_bisection_load(lab.db, id, &b) == 0 &&
	    bisect_run_init(&br, &lab, &b, NULL, NULL) == 0 && gitrepo_open(&br.repo, h->dir) == 0 &&
	    worktree_open(&br.wt, br.repo, wt) == 0) {
		br.log_dir = xstrfmt("%s/logs", state);
		if (perf_init(&perf, &lab, b.job_path, b.job_text, b.kpi) == 0 &&
		    perf_set_measurer(&perf, &sim_measurer, m) == 0 && bisect_run_open(&br) == 0) {
			br.tester = &perf_tester;
			br.tester_data = &perf;
			rc = bisect_run(&br);
		}
	}
	fflush(stdout);
	fflush(stderr);
	if (write(fd, m, sizeof(*m)) != (ssize_t)sizeof(*m))
		_exit(102);
	_exit(rc);
}

/* The outcome as the lab stored it. */
static int outcome_read(const char *state, int64_t id, const struct engine_history *h, struct engine_outcome *o)
{
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	struct revert_check rc;
	struct half_culprit *hc = NULL;
	size_t nr = 0, nr_hc = 0;
	char *path, *text = NULL;

	if (lab_open(&lab, state) < 0)
		return -1;
	if (db_bisection_load(lab.db, id, &b) < 0 || db_steps_load(lab.db, id, &steps, &nr) < 0) {
		lab_close(&lab);
		return -1;
	}
	snprintf(o->result, sizeof(o->result), "%s", b.result ? b.result : "-");
	o->culprit = engine_history_index(h, b.culprit);
	o->steps = nr;
	for (size_t i = 0; i < nr; i++) {
		double *v = NULL;
		size_t n = 0;

		if (db_step_metric_values(lab.db, steps[i].id, ENGINE_SIM_KPI, &v, &n) == 0)
			o->runs += n;
		free(v);
		if (steps[i].phase_id == STEP_PHASE_BISECT) {
			int c = engine_history_index(h, steps[i].hash);
			double lv = c >= 0 ? h->levels[c] : 0;

			o->misjudged += c >= 0 && ((steps[i].mark == BISECT_GOOD && lv >= h->levels[h->n - 1]) ||
						   (steps[i].mark == BISECT_BAD && lv <= h->levels[0]));
		}
		o->confirmed += steps[i].phase_id == STEP_PHASE_CONFIRM && steps[i].mark == BISECT_BAD &&
				engine_history_index(h, steps[i].hash) == o->culprit;
	}
	steps_release(steps, nr);
	o->revert = db_bisection_revert(lab.db, id, &rc) > 0 ? rc.outcome : REVERT_NONE;
	revert_check_release(&rc);
	if (db_half_culprits_load(lab.db, id, &hc, &nr_hc) == 0)
		for (size_t i = 0; i < nr_hc; i++)
			if (hc[i].has_culprit && hc[i].confirmed && hc[i].half >= 1 && hc[i].half <= 2)
				o->culprits[hc[i].half - 1] = engine_history_index(h, hc[i].culprit);
	half_culprits_release(hc, nr_hc);
	bisection_release(&b);
	lab_close(&lab);
	path = xstrfmt("%s/out.log", state);
	if (read_file(path, 1 << 26, &text, NULL) == 0)
		o->drift = strstr(text, "drift: the host trended") != NULL;
	free(text);
	free(path);
	return 0;
}

/* The bisection in o->lab run (again) to its end by a child process; the
 * outcome read afresh. */
static int run_bisection(const struct engine_history *h, struct sim_model *m, struct engine_outcome *o)
{
	char lab[sizeof(o->lab)];
	int64_t id = o->id;
	int fds[2], status, rc;
	pid_t pid;
	ssize_t got;

	memcpy(lab, o->lab, sizeof(lab));
	if (pipe(fds) < 0)
		return error("pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return error("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		child(lab, id, h, m, fds[1]);
	}
	close(fds[1]);
	got = read(fds[0], m, sizeof(*m));
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid)
		return error("waitpid: %s", strerror(errno));
	if (got != (ssize_t)sizeof(*m) || !WIFEXITED(status) || WEXITSTATUS(status) >= 100)
		return error("the bisection in %s ended with status %d (its out.log says why)", lab, status);
	memset(o, 0, sizeof(*o));
	memcpy(o->lab, lab, sizeof(lab));
	o->id = id;
	o->culprit = o->culprits[0] = o->culprits[1] = -1;
	rc = outcome_read(lab, id, h, o);
	o->exit_code = WEXITSTATUS(status);
	return rc;
}

int engine_sim_start(struct engine_sim *es, const struct engine_history *h, struct sim_model *m,
		     struct engine_outcome *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->lab, sizeof(o->lab), "%s/lab%u", es->dir, ++es->labs);
	if (new_bisection(es, h, o->lab, &o->id) < 0)
		return -1;
	return run_bisection(h, m, o);
}

int engine_sim_resume(const struct engine_history *h, struct sim_model *m, struct engine_outcome *o)
{
	return run_bisection(h, m, o);
}

int engine_sim_remove(const struct engine_outcome *o)
{
	char *cmd = xstrfmt("rm -rf '%s'", o->lab);
	int rc = shell(cmd);

	free(cmd);
	return rc;
}

int engine_sim_bisect(struct engine_sim *es, const struct engine_history *h, struct sim_model *m,
		      struct engine_outcome *o)
{
	int rc = engine_sim_start(es, h, m, o);

	if (rc == 0 && !es->keep && engine_sim_remove(o) < 0)
		rc = -1;
	return rc;
}
