/* Boots and KPI values for job bisections: one guest environment for the
 * whole bisection (libvirt connection, accelerator, initramfs), the kernel
 * swapped per commit, every run stored under its step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfbisect.h"
#include "db.h"
#include "guestimg.h"
#include "lab.h"
#include "stats.h"
#include "util/strbuf.h"
#include "util/util.h"

int perf_init(struct perf *p, struct lab *lab, const char *job_path, const char *job_text, const char *kpi)
{
	memset(p, 0, sizeof(*p));
	p->lab = lab;
	if (!job_text)
		return error("bisection has no job text");
	if (job_parse_buffer(&p->job, job_path ? job_path : "job", job_text, strlen(job_text)) < 0)
		return -1;
	if (kpi && *kpi) {
		free(p->job.kpi);
		p->job.kpi = xstrdup(kpi);
	}
	verdict_policy_init(&p->pol);
	p->pol.confirm_share = p->job.confirm_share;
	return 0;
}

void perf_release(struct perf *p)
{
	guest_env_free(p->ge);
	job_release(&p->job);
	free(p->good);
	free(p->bad);
	free(p->good_kernel);
	free(p->bad_kernel);
	memset(p, 0, sizeof(*p));
}

static int use_kernel(struct perf *p, const char *kernel, int64_t step_id)
{
	struct guest_env_opts o = { 0 };

	if (!p->ge) {
		o.kernel = kernel;
		o.quiet = 1;
		/* like-for-like: a resumed bisection boots where it booted before */
		if (db_bisection_host(p->lab->db, step_id, &o.prefer_host_id) < 0 ||
		    guest_env_prepare(&p->ge, p->lab, &p->job, &o) < 0)
			return -1;
		printf("  guests: %u vCPUs, %u NUMA nodes, %llu MiB, accelerator %s (%s)%s%s\n", p->job.guest.vcpus,
		       p->job.guest.numa_nodes, (unsigned long long)p->job.guest.memory_mb,
		       accel_name(guest_env_accel(p->ge)), guest_env_accel_why(p->ge), guest_env_host_name(p->ge) ? ", host " : "",
		       guest_env_host_name(p->ge) ? guest_env_host_name(p->ge) : "");
		return 0;
	}
	return guest_env_set_kernel(p->ge, kernel);
}

int perf_measure_to(struct perf *p, const char *kernel, int64_t build_id, int64_t step_id, const char *label,
		    size_t want, double **vals, size_t *n, char **reason)
{
	*reason = NULL;
	if (db_step_metric_values(p->lab->db, step_id, p->job.kpi, vals, n) < 0)
		return -1;
	if (*n >= want)
		return 0;
	if (use_kernel(p, kernel, step_id) < 0)
		return -1;
	while (*n < want) {
		struct guest_result gr;
		double v = NAN;
		char buf[32];

		if (guest_run_once(p->ge, 0, build_id, step_id, (unsigned)*n + 1, label, &gr) < 0) {
			guest_result_release(&gr);
			return -1;
		}
		if (gr.outcome != VM_OK) {
			*reason = xstrfmt("%s: %s", vm_outcome_name(gr.outcome), gr.reason);
			print_line("%srun %zu: %s (console: %s)", label, *n + 1, *reason, gr.console_path);
			if (gr.outcome == VM_PANIC && gr.excerpt)
				print_lines("", gr.excerpt);
			guest_result_release(&gr);
			return 1;
		}
		for (size_t i = 0; i < gr.nr_metrics; i++)
			if (!strcmp(gr.metrics[i].name, p->job.kpi) && gr.metrics[i].seq == 0)
				v = gr.metrics[i].value;
		if (isnan(v)) {
			error("the KPI '%s' is not among the metrics of run %zu (see %s)", p->job.kpi, *n + 1,
			      gr.raw_path);
			guest_result_release(&gr);
			return -1;
		}
		*vals = xrealloc(*vals, (*n + 1) * sizeof(double));
		(*vals)[(*n)++] = v;
		printf("%srun %zu: %s = %g (agent after %s)\n", label, *n, p->job.kpi, v,
		       fmt_duration(gr.hello_ms, buf, sizeof(buf)));
		fflush(stdout);
		guest_result_release(&gr);
	}
	return 0;
}

void perf_describe(struct strbuf *sb, const double *v, size_t n)
{
	if (!n) {
		strbuf_addstr(sb, "-");
		return;
	}
	strbuf_addf(sb, "%.6g ±%.0f%%", stats_median(v, n), stats_cv_percent(v, n));
}
