/* Sides measured interleaved (measure.h): one guest environment per job,
 * the kernel swapped between boots, every boot stored under its side's
 * run set. */
#include "guest/measure.h"
#include "lab/db.h"
#include "job/job.h"
#include "lab/lab.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int measure_begin(struct measure *m, struct lab *lab, struct measure_side *sides, size_t n,
		  const struct guest_env_opts *geo, unsigned runs)
{
	struct measure opts = *m;

	memset(m, 0, sizeof(*m));
	m->every_boot = opts.every_boot;
	m->stop_on_failure = opts.stop_on_failure;
	m->own_lines = opts.own_lines;
	m->booted = opts.booted;
	m->data = opts.data;
	m->lab = lab;
	m->sides = sides;
	m->nr_sides = n;
	m->quiet = geo->quiet;
	m->envs = xcalloc(n, sizeof(*m->envs));
	m->staged = xcalloc(n, sizeof(*m->staged));
	/* until every side has its run set: those made end 'failed' */
	m->failed = 1;
	for (size_t i = 0; i < n; i++) {
		struct guest_env_opts o = *geo;
		size_t j;

		for (j = 0; j < i && sides[j].job != sides[i].job; j++)
			;
		if (j < i) {
			m->envs[i] = m->envs[j];
		} else {
			o.kernel = sides[i].kernel;
			/* every side on the host of the first: like for like */
			if (i && guest_env_host_id(m->envs[0]))
				o.prefer_host_id = guest_env_host_id(m->envs[0]);
			if (guest_env_prepare(&m->envs[i], lab, sides[i].job, &o) < 0)
				return -1;
			m->staged[i] = sides[i].kernel;
			if (!m->quiet && !m->own_lines)
				printf("guests for %s: %u vCPUs, %u NUMA nodes, %llu MiB, accelerator %s (%s)%s%s\n",
				       sides[i].label, sides[i].job->guest.vcpus, sides[i].job->guest.numa_nodes,
				       (unsigned long long)sides[i].job->guest.memory_mb,
				       accel_name(guest_env_accel(m->envs[i])), guest_env_accel_why(m->envs[i]),
				       guest_env_host_name(m->envs[i]) ? ", host " : "",
				       guest_env_host_name(m->envs[i]) ? guest_env_host_name(m->envs[i]) : "");
		}
		if (i && guest_env_accel(m->envs[i]) != guest_env_accel(m->envs[0]))
			return error("the guests of %s would run under %s, those of %s under %s: runs under different "
				     "accelerators are never compared (give --accel)", sides[0].label,
				     accel_name(guest_env_accel(m->envs[0])), sides[i].label,
				     accel_name(guest_env_accel(m->envs[i])));
		if (guest_run_set_create(m->envs[i], sides[i].job, sides[i].kernel, sides[i].build_id,
					 sides[i].commit_hash, runs, sides[i].track_tip_id, &sides[i].run_set_id) < 0)
			return -1;
	}
	m->failed = 0;
	return 0;
}

/* The env's owner: the first side of its job, whose staged[] slot says
 * which kernel the env boots. */
static size_t env_owner(const struct measure *m, size_t i)
{
	size_t j;

	for (j = 0; j < i && m->envs[j] != m->envs[i]; j++)
		;
	return j;
}

/* The files of a try the host ended, kept beside the next try's (which
 * reuses the names): "<file>.infra-<try>", the rows pointing there. */
static void keep_try_files(struct guest_env *ge, const struct guest_result *gr, unsigned try)
{
	char *console = xstrfmt("%s.infra-%u", gr->console_path, try);
	char *raw = xstrfmt("%s.infra-%u", gr->raw_path, try);

	if (rename(gr->console_path, console) < 0)
		*console = '\0';
	if (gr->run_id && rename(gr->raw_path, raw) < 0)
		*raw = '\0';
	if (*console)
		db_boot_move_files(guest_env_lab(ge)->db, gr->boot_id, *raw ? gr->run_id : 0, console, raw);
	free(console);
	free(raw);
}

int measure_boot(struct guest_env *ge, const struct measure_boot *b, struct guest_result *gr, double *kpi)
{
	*kpi = NAN;
	for (unsigned try = 1;; try++) {
		int rc;

		guest_env_expect_next(ge, b->next_kernel);
		rc = guest_run_once(ge, b->run_set_id, b->build_id, b->step_id, b->iteration, b->label, gr);
		/* -1 with VM_INFRA: the host could not be reached, no boot made */
		if (rc < 0 && gr->outcome != VM_INFRA)
			return -1;
		if (gr->outcome != VM_INFRA)
			break;
		if (try == MEASURE_INFRA_TRIES)
			return error("environment failure: %s, %u tries in a row (console: %s); not the kernel's "
				     "result, nothing was decided from it", gr->reason, try,
				     gr->console_path ? gr->console_path : "none");
		warning("%s (console: %s): the host's fault, not the kernel's; trying again (try %u of %u)",
			gr->reason, gr->console_path ? gr->console_path : "none", try + 1, MEASURE_INFRA_TRIES);
		if (gr->console_path)
			keep_try_files(ge, gr, try);
		guest_result_release(gr);
	}
	if (gr->outcome == VM_OK)
		*kpi = guest_result_kpi(gr, b->kpi);
	return 0;
}

/* The boot after side i's: the same side's next run (its guest can be
 * made ahead), else another side's or none (NULL). */
static const char *next_kernel(const struct measure *m, size_t i, unsigned runs)
{
	const struct measure_side *s = &m->sides[i];
	unsigned have = m->every_boot ? s->nr_boots : (unsigned)s->nr_kpi;

	for (size_t j = i + 1; j < m->nr_sides; j++)
		if ((m->every_boot ? m->sides[j].nr_boots : (unsigned)m->sides[j].nr_kpi) < runs)
			return NULL;
	return have + 1 < runs ? s->kernel : NULL;
}

/* Side i's next boot: 0 ok; 1 the guest failed, or gave no KPI where
 * KPI values are counted (not with every_boot), *why; -1 klab failed. */
static int boot_side(struct measure *m, size_t i, unsigned runs, char **why)
{
	struct measure_side *s = &m->sides[i];
	size_t owner = env_owner(m, i);
	struct guest_result gr;
	unsigned iteration = (m->every_boot ? s->nr_boots : (unsigned)s->nr_kpi) + 1;
	struct measure_boot b = { s->run_set_id, s->build_id, 0, iteration, NULL, next_kernel(m, i, runs),
				  s->job->kpi };
	double v;
	int rc = 1;
	char label[96], buf[32];

	if (strcmp(m->staged[owner], s->kernel)) {
		if (guest_env_set_kernel(m->envs[i], s->kernel) < 0)
			return -1;
		m->staged[owner] = s->kernel;
	}
	if (m->every_boot)
		snprintf(label, sizeof(label), "  boot %u/%u: ", iteration, runs);
	else
		snprintf(label, sizeof(label), "  %.60s run %u: ", s->label, iteration);
	b.label = label;
	if (measure_boot(m->envs[i], &b, &gr, &v) < 0) {
		guest_result_release(&gr);
		return -1;
	}
	s->nr_boots++;
	s->nr_ok += gr.outcome == VM_OK;
	if (gr.outcome != VM_OK) {
		/* the caller reports why on stderr; stdout may be JSON */
		*why = xstrfmt("%s run %u: %s: %s (console: %s)", s->label, iteration, vm_outcome_name(gr.outcome),
			       gr.reason ? gr.reason : "", gr.console_path);
		if (!m->quiet && !m->own_lines && gr.outcome == VM_PANIC && gr.excerpt) {
			printf("%sconsole excerpt:\n", label);
			print_lines("    | ", gr.excerpt);
		}
	} else if (isnan(v)) {
		rc = m->every_boot ? 0 : 1;
		if (rc)
			*why = xstrfmt("%s run %u: the KPI %s is not among the run's metrics (see %s)", s->label, iteration,
				       s->job->kpi, gr.raw_path);
	} else {
		s->kpi = xrealloc(s->kpi, (s->nr_kpi + 1) * sizeof(double));
		s->kpi[s->nr_kpi++] = v;
		if (!m->quiet && !m->own_lines) {
			print_line("%s%s = %g (agent after %s)", label, s->job->kpi, v,
				   fmt_duration(gr.hello_ms, buf, sizeof(buf)));
			fflush(stdout);
		}
		rc = 0;
	}
	if (m->booted)
		m->booted(m, i, iteration, &gr, m->data);
	guest_result_release(&gr);
	return rc;
}

int measure_to(struct measure *m, unsigned runs, char **why)
{
	*why = NULL;
	for (;;) {
		int any = 0;

		for (size_t i = 0; i < m->nr_sides; i++) {
			int rc;

			if ((m->every_boot ? m->sides[i].nr_boots : (unsigned)m->sides[i].nr_kpi) >= runs)
				continue;
			any = 1;
			rc = boot_side(m, i, runs, why);
			if (rc > 0 && m->every_boot && !m->stop_on_failure) {
				/* counted; the boots go on */
				m->failed = 1;
				free(*why);
				*why = NULL;
				continue;
			}
			if (rc) {
				m->failed = 1;
				return rc;
			}
		}
		if (!any)
			return 0;
	}
}

void measure_end(struct measure *m)
{
	for (size_t i = 0; i < m->nr_sides; i++) {
		if (m->sides[i].run_set_id)
			db_run_set_finish(m->lab->db, m->sides[i].run_set_id, m->failed ? "failed" : "done");
		if (m->envs && env_owner(m, i) == i)
			guest_env_free(m->envs[i]);
	}
	free(m->envs);
	free(m->staged);
	m->envs = NULL;
	m->staged = NULL;
}

void measure_sides_release(struct measure_side *sides, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(sides[i].kpi);
		sides[i].kpi = NULL;
		sides[i].nr_kpi = 0;
	}
}

/* ---- one job on one kernel, N boots --------------------------------------- */

static void job_run_booted(const struct measure *m, size_t side, unsigned iteration, const struct guest_result *gr,
			   void *data)
{
	struct job_run *jr = data;
	const struct measure_side *s = &m->sides[side];

	jr->nr_done = s->nr_boots;
	jr->nr_ok = s->nr_ok;
	jr->nr_kpi = (unsigned)s->nr_kpi;
	if (gr->outcome != VM_OK && !jr->failure_reason) {
		jr->failure = gr->outcome;
		jr->failure_reason = xstrdup(gr->reason ? gr->reason : vm_outcome_name(gr->outcome));
	}
	if (jr->booted)
		jr->booted(jr, iteration, gr, jr->data);
}

int run_job_on_kernel(struct lab *lab, struct job_run *jr)
{
	struct measure m = { 0 };
	struct measure_side side = { 0 };
	char *why = NULL;
	int rc;

	jr->run_set_id = 0;
	jr->nr_done = jr->nr_ok = jr->nr_kpi = 0;
	jr->failure = VM_OK;
	jr->failure_reason = NULL;
	side.label = "run";
	side.job = jr->job;
	side.kernel = jr->geo->kernel;
	side.build_id = jr->build_id;
	side.commit_hash = jr->commit_hash;
	side.track_tip_id = jr->track_tip_id;
	m.every_boot = 1;
	m.stop_on_failure = jr->stop_on_failure;
	m.own_lines = 1;
	m.booted = job_run_booted;
	m.data = jr;
	if (measure_begin(&m, lab, &side, 1, jr->geo, jr->boots) < 0) {
		/* the env stays the caller's (job_run_release) */
		jr->ge = m.envs ? m.envs[0] : NULL;
		if (m.envs)
			m.envs[0] = NULL;
		measure_end(&m);
		return -1;
	}
	jr->ge = m.envs[0];
	jr->run_set_id = side.run_set_id;
	if (jr->started)
		jr->started(jr, jr->data);
	rc = measure_to(&m, jr->boots, &why);
	free(why);
	m.envs[0] = NULL;
	m.failed = rc < 0 || jr->nr_ok != jr->boots;
	measure_end(&m);
	measure_sides_release(&side, 1);
	if (rc < 0)
		return error("run %lld stopped: klab could not run the guest (stored runs are kept)",
			     (long long)jr->run_set_id);
	return 0;
}

void job_run_release(struct job_run *jr)
{
	guest_env_free(jr->ge);
	jr->ge = NULL;
	free(jr->failure_reason);
	jr->failure_reason = NULL;
}
