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

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void sim_rng_seed(struct sim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sim_rng_next(struct sim_rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sim_rng_uniform(struct sim_rng *r)
{
	return (double)(sim_rng_next(r) >> 11) * 0x1.0p-53;
}

double sim_rng_normal(struct sim_rng *r)
{
	double u = sim_rng_uniform(r), v = sim_rng_uniform(r);

	/* Box-Muller; 1 - u keeps the logarithm finite */
	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

void sim_model_init(struct sim_model *m, uint64_t seed)
{
	memset(m, 0, sizeof(*m));
	m->base = 10000;
	m->effect_percent = 10;
	m->cv_percent = 2;
	m->direction = 1;
	m->slow_factor = 1;
	m->replay_block = 8;
	sim_rng_seed(&m->rng, seed);
}

/* Student t, 3 degrees of freedom */
static double t3(struct sim_rng *r)
{
	double z = sim_rng_normal(r), c = 0;

	for (int i = 0; i < 3; i++) {
		double y = sim_rng_normal(r);
		c += y * y;
	}
	return z / sqrt(c / 3);
}

/* The next ratio of the replayed series: blocks of consecutive runs from
 * random places. */
static double replay_next(struct sim_model *m)
{
	if (!m->replay_left) {
		m->replay_at = (size_t)(sim_rng_uniform(&m->rng) * (double)m->nr_replay);
		m->replay_left = m->replay_block ? m->replay_block : 1;
	}
	m->replay_left--;
	return m->replay[m->replay_at++ % m->nr_replay];
}

/* One run's speed (1 at level 0, no noise) with its noise alone. */
static double noisy(struct sim_model *m, double mu, double level)
{
	double cv = m->cv_percent / 100;

	switch (m->noise) {
	case SIM_NOISE_LOGNORMAL: {
		double s = sqrt(log1p(cv * cv));

		return mu * exp(s * sim_rng_normal(&m->rng) - s * s / 2);
	}
	case SIM_NOISE_T3:
		/* t3's standard deviation is sqrt(3) */
		return mu * exp(cv / sqrt(3) * t3(&m->rng));
	case SIM_NOISE_BIMODAL:
		return mu * (1 + cv * (sim_rng_uniform(&m->rng) < 0.5 ? -1 : 1) + cv / 4 * sim_rng_normal(&m->rng));
	case SIM_NOISE_UNEVEN:
		return mu * (1 + (level >= 0.5 ? cv : cv / 5) * sim_rng_normal(&m->rng));
	case SIM_NOISE_REPLAY:
		return m->nr_replay ? mu * replay_next(m) : mu;
	default:
		return mu * (1 + cv * sim_rng_normal(&m->rng));
	}
}

/* Random slow spells of one or two runs. */
static double spell(struct sim_model *m)
{
	if (m->slow_left > 0) {
		m->slow_left--;
		return 0.4 + 0.3 * sim_rng_uniform(&m->rng);
	}
	if (m->slow_rate > 0 && sim_rng_uniform(&m->rng) < m->slow_rate) {
		m->slow_left = sim_rng_uniform(&m->rng) < 0.5 ? 0 : 1;
		return 0.4 + 0.3 * sim_rng_uniform(&m->rng);
	}
	return 1;
}

/* One draw of the KPI at level: noise, slow spells, the host's trend or
 * random walk and the planted slow spell, by the model's clock. */
double sim_model_draw(struct sim_model *m, double level)
{
	double mu = 1 - level * m->effect_percent / 100, speed = noisy(m, mu, level);

	if (speed < mu * 0.01)
		speed = mu * 0.01;
	speed *= spell(m);
	speed *= exp(m->drift_percent / 100 * (double)m->runs);
	if (m->walk_percent > 0) {
		m->walk += m->walk_percent / 100 * sim_rng_normal(&m->rng);
		speed *= exp(m->walk);
	}
	if (m->runs >= m->slow_from && m->runs < m->slow_to)
		speed *= m->slow_ramp ? 1 - (1 - m->slow_factor) * (double)(m->runs - m->slow_from + 1) /
						    (double)(m->slow_to - m->slow_from)
				      : m->slow_factor;
	m->runs++;
	return m->direction > 0 ? m->base * speed : m->base / speed;
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
	struct sim_measurer *sm = data;

	(void)step_id;
	if (strncmp(kernel, SIM_KERNEL_PREFIX, strlen(SIM_KERNEL_PREFIX)))
		return error("'%s' is not a simulated kernel", kernel);
	if (sm->model->no_host) {
		error("no host answers: simulated");
		return 1;
	}
	return 0;
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
	*value = sim_model_draw(sm->model, level);
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
