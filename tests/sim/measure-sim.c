/* The simulated measurer: see measure-sim.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure-sim.h"
#include "job/job.h"
#include "kernel/kernel.h"
#include "lab/db.h"
#include "util/hash.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/util.h"

#define SIM_KERNEL_PREFIX "sim-kernel level="

void sim_model_init(struct sim_model *m, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	m->base = 10000;
	m->effect_percent = 10;
	m->cv_percent = 2;
	m->direction = 1;
	m->slow_factor = 1;
	sim_rng_seed(&m->rng, seed);
}

struct sim_measurer {
	struct sim_model *model;
	struct lab *lab;
	const struct job *job;
	char hash[41];		/* of model->host */
};

static int sm_open(void **data, void *arg, struct lab *lab, const struct job *job)
{
	struct sim_measurer *sm = xcalloc(1, sizeof(*sm));

	sm->model = arg;
	sm->lab = lab;
	sm->job = job;
	*data = sm;
	return 0;
}

static void sm_close(void *data)
{
	free(data);
}

/* The level in commit hex's tree: the user's repository, or for a commit
 * klab made, its worktree's (which borrows the user's objects). */
static int read_level(const struct kernel_request *rq, int klab_commit, double *level)
{
	struct gitrepo *repo = rq->repo, *own = NULL;
	char *text = NULL, *end;
	size_t len;
	int rc;

	if (klab_commit && gitrepo_open(&own, worktree_path(rq->wt)) < 0)
		return -1;
	if (own)
		repo = own;
	rc = gitrepo_read_path(repo, rq->hex, "level", 64, &text, &len);
	gitrepo_free(own);
	if (rc <= 0) {
		free(text);
		return rc < 0 ? -1 : error("%.12s has no file 'level'", rq->hex);
	}
	*level = strtod(text, &end);
	rc = end == text ? error("%.12s: 'level' is not a number", rq->hex) : 0;
	free(text);
	return rc;
}

/* A kernel per commit, named after its level (two commits at one level
 * are two kernels, as two builds of different trees are). */
static int sm_kernel(void *data, const struct kernel_request *rq, int klab_commit, struct kernel_result *kr)
{
	struct sim_measurer *sm = data;
	double level = 0;

	memset(kr, 0, sizeof(*kr));
	if (read_level(rq, klab_commit, &level) < 0)
		return -1;
	sm->model->kernels++;
	sm->model->klab_kernels += klab_commit != 0;
	kr->build.status = KBUILD_OK;
	kr->build.bzimage = xstrfmt(SIM_KERNEL_PREFIX "%g commit=%s", level, rq->hex);
	kr->kernel = kr->build.bzimage;
	kr->message = xstrdup("simulated: no build");
	return 0;
}

static int sm_use(void *data, const char *kernel, int64_t step_id)
{
	(void)data;
	(void)step_id;
	if (strncmp(kernel, SIM_KERNEL_PREFIX, strlen(SIM_KERNEL_PREFIX)))
		return error("'%s' is not a simulated kernel", kernel);
	return 0;
}

/* One draw of the KPI at level: noise, the host's trend and slow spell
 * by the model's clock. */
static double draw(struct sim_model *m, double level)
{
	double speed = 1 - level * m->effect_percent / 100;

	speed *= 1 + m->cv_percent / 100 * sim_rng_normal(&m->rng);
	speed *= exp(m->drift_percent / 100 * (double)m->runs);
	if (m->runs >= m->slow_from && m->runs < m->slow_to)
		speed *= m->slow_factor;
	m->runs++;
	return m->direction > 0 ? m->base * speed : m->base / speed;
}

/* The run stored as a guest's is: a boot row, its run and the KPI sample. */
static int sm_run(void *data, const struct measurer_run *run, double *value, double *time, char **reason)
{
	struct sim_measurer *sm = data;
	struct db_boot boot = { 0 };
	struct db_boot_end end = { 0 };
	struct db_run r = { 0 };
	struct db_sample sample;
	int64_t boot_id, run_id;
	double level = strtod(run->kernel + strlen(SIM_KERNEL_PREFIX), NULL);

	*reason = NULL;
	boot.build_id = run->build_id;
	boot.step_id = run->step_id;
	boot.domain_name = "simulated";
	boot.accel = NULL;	/* no accelerator: not a guest */
	if (sm->model->fail_at && sm->model->runs + 1 >= sm->model->fail_at) {
		sm->model->fail_at = 0;
		return error("simulated: the machine went away");
	}
	if (sm->model->host) {
		blob_hash(sm->model->host, strlen(sm->model->host), sm->hash);
		if (db_fingerprint_put(sm->lab->db, sm->hash, sm->model->host) < 0)
			return -1;
		boot.fingerprint = sm->hash;
	}
	if (db_boot_begin(sm->lab->db, &boot, &boot_id) < 0)
		return -1;
	if (sm->model->env_fail_at && sm->model->runs + 1 == sm->model->env_fail_at) {
		r.boot_id = boot_id;
		r.step_id = run->step_id;
		r.iteration = run->iteration;
		r.status = "failed";
		r.fault = "infrastructure";
		r.exit_code = -1;
		r.started_at = r.finished_at = now_s();
		end.outcome = "infrastructure";
		end.reason = "infrastructure: QEMU ended without a guest panic (simulated)";
		end.boot_ms = end.create_ms = end.first_output_ms = -1;
		if (db_run_store(sm->lab->db, &r, &run_id) == 0)
			db_boot_finish(sm->lab->db, boot_id, &end);
		*reason = xstrfmt("environment failure after 3 tries: %s", end.reason);
		return -1;
	}
	*value = draw(sm->model, level);
	sample = (struct db_sample){ sm->job->kpi, 0, *value };
	r.boot_id = boot_id;
	r.step_id = run->step_id;
	r.job_path = sm->job->path;
	r.job_hash = sm->job->hash;
	r.iteration = run->iteration;
	r.status = "ok";
	r.exit_code = 0;
	r.started_at = r.finished_at = now_s();
	r.samples = &sample;
	r.nr_samples = 1;
	end.outcome = "ok";
	end.boot_ms = end.create_ms = end.first_output_ms = -1;
	if (db_run_store(sm->lab->db, &r, &run_id) < 0 || db_boot_finish(sm->lab->db, boot_id, &end) < 0)
		return -1;
	*time = (double)run_id;
	printf("%srun %u: %s = %g (simulated)\n", run->label, run->iteration, sm->job->kpi, *value);
	return 0;
}

static void sm_fingerprint(void *data, const char **hash, const char **text)
{
	struct sim_measurer *sm = data;

	*hash = *text = NULL;
	if (!sm->model->host)
		return;
	blob_hash(sm->model->host, strlen(sm->model->host), sm->hash);
	*hash = sm->hash;
	*text = sm->model->host;
}

const struct measurer_ops sim_measurer = {
	.name = "simulated",
	.open = sm_open,
	.close = sm_close,
	.kernel = sm_kernel,
	.use = sm_use,
	.run = sm_run,
	.fingerprint = sm_fingerprint,
};
