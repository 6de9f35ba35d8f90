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
	memset(m, 0, sizeof(*m));
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
			if (!m->quiet)
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
					 sides[i].commit_hash, runs, 0, &sides[i].run_set_id) < 0)
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

static int boot_side(struct measure *m, size_t i, char **why)
{
	struct measure_side *s = &m->sides[i];
	size_t owner = env_owner(m, i);
	struct guest_result gr;
	unsigned iteration = (unsigned)s->nr_kpi + 1;
	double v = NAN;
	char label[96], buf[32];

	if (strcmp(m->staged[owner], s->kernel)) {
		if (guest_env_set_kernel(m->envs[i], s->kernel) < 0)
			return -1;
		m->staged[owner] = s->kernel;
	}
	snprintf(label, sizeof(label), "  %.60s run %u: ", s->label, iteration);
	if (guest_run_once(m->envs[i], s->run_set_id, s->build_id, 0, iteration, label, &gr) < 0) {
		guest_result_release(&gr);
		return -1;
	}
	if (gr.outcome != VM_OK) {
		/* the caller reports why on stderr; stdout may be JSON */
		*why = xstrfmt("%s run %u: %s: %s (console: %s)", s->label, iteration, vm_outcome_name(gr.outcome),
			       gr.reason ? gr.reason : "", gr.console_path);
		if (!m->quiet && gr.outcome == VM_PANIC && gr.excerpt) {
			printf("%sconsole excerpt:\n", label);
			print_lines("    | ", gr.excerpt);
		}
		guest_result_release(&gr);
		return 1;
	}
	v = guest_result_kpi(&gr, s->job->kpi);
	if (isnan(v)) {
		*why = xstrfmt("%s run %u: the KPI %s is not among the run's metrics (see %s)", s->label, iteration,
			       s->job->kpi, gr.raw_path);
		guest_result_release(&gr);
		return 1;
	}
	s->kpi = xrealloc(s->kpi, (s->nr_kpi + 1) * sizeof(double));
	s->kpi[s->nr_kpi++] = v;
	if (!m->quiet) {
		print_line("%s%s = %g (agent after %s)", label, s->job->kpi, v,
			   fmt_duration(gr.hello_ms, buf, sizeof(buf)));
		fflush(stdout);
	}
	guest_result_release(&gr);
	return 0;
}

int measure_to(struct measure *m, unsigned runs, char **why)
{
	*why = NULL;
	for (;;) {
		int any = 0;

		for (size_t i = 0; i < m->nr_sides; i++) {
			int rc;

			if (m->sides[i].nr_kpi >= runs)
				continue;
			any = 1;
			rc = boot_side(m, i, why);
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
