/* The guest measurer (measurer.h): a commit's kernel from the artifact
 * store or a build, runs booted in guests of one environment for the
 * whole bisection (libvirt connection, accelerator, initramfs), the kernel
 * swapped per commit, every run stored under its step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/measurer.h"
#include "guest/guest.h"
#include "guest/measure.h"
#include "job/job.h"
#include "kernel/kernel.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/util.h"

struct guest_measurer {
	struct lab *lab;
	const struct job *job;
	struct guest_env *ge;	/* NULL until the first boot */
};

static int gm_open(void **data, void *arg, struct lab *lab, const struct job *job)
{
	struct guest_measurer *gm = xcalloc(1, sizeof(*gm));

	(void)arg;
	gm->lab = lab;
	gm->job = job;
	*data = gm;
	return 0;
}

static void gm_close(void *data)
{
	struct guest_measurer *gm = data;

	if (!gm)
		return;
	guest_env_free(gm->ge);
	free(gm);
}

static int gm_kernel(void *data, const struct kernel_request *rq, int klab_commit, struct kernel_result *kr)
{
	(void)data;
	return klab_commit ? kernel_for_klab_commit(rq, kr) : kernel_for_commit(rq, kr);
}

static int gm_use(void *data, const char *kernel, int64_t step_id)
{
	struct guest_measurer *gm = data;
	const struct job *job = gm->job;
	struct guest_env_opts o = { 0 };
	char *fp = NULL;
	int rc;

	if (gm->ge)
		return guest_env_set_kernel(gm->ge, kernel);
	o.kernel = kernel;
	o.quiet = 1;
	/* like-for-like: a resumed bisection boots where it booted before,
	 * or on a host of the same fingerprint when that one is gone */
	if (db_bisection_host(gm->lab->db, step_id, &o.prefer_host_id) < 0 ||
	    (o.prefer_host_id && db_bisection_host_fingerprint(gm->lab->db, step_id, o.prefer_host_id, &fp) < 0))
		return -1;
	o.prefer_fingerprint = fp;
	rc = guest_env_prepare(&gm->ge, gm->lab, job, &o);
	free(fp);
	if (rc < 0)
		return rc == -2 ? 1 : -1;
	printf("  guests: %u vCPUs, %u NUMA nodes, %llu MiB, accelerator %s (%s)%s%s, host fingerprint %.12s\n",
	       job->guest.vcpus, job->guest.numa_nodes, (unsigned long long)job->guest.memory_mb,
	       accel_name(guest_env_accel(gm->ge)), guest_env_accel_why(gm->ge),
	       guest_env_host_name(gm->ge) ? ", host " : "",
	       guest_env_host_name(gm->ge) ? guest_env_host_name(gm->ge) : "",
	       guest_env_fingerprint(gm->ge) ? guest_env_fingerprint(gm->ge) : "unknown");
	return 0;
}

static int gm_run(void *data, const struct measurer_run *run, double *value, double *time, char **reason)
{
	struct guest_measurer *gm = data;
	const struct job *job = gm->job;
	struct guest_result gr;
	/* the next guest is made while this one boots */
	struct measure_boot b = { 0, run->build_id, run->step_id, run->iteration, run->label, run->next_kernel,
				  job->kpi };
	char buf[32];
	int ret = -1;

	if (measure_boot(gm->ge, &b, &gr, value) < 0) {
		/* the host failed every try: the bisection stops, resumable */
		if (gr.outcome == VM_INFRA)
			*reason = xstrfmt("environment failure after %d tries: %s", MEASURE_INFRA_TRIES, gr.reason);
		goto out;
	}
	if (gr.outcome != VM_OK) {
		*reason = xstrfmt("%s: %s", vm_outcome_name(gr.outcome), gr.reason);
		print_line("%srun %u: %s (console: %s)", run->label, run->iteration, *reason, gr.console_path);
		if (gr.outcome == VM_PANIC && gr.excerpt)
			print_lines("", gr.excerpt);
		ret = 1;
		goto out;
	}
	if (isnan(*value)) {
		error("the KPI '%s' is not among the metrics of run %u (see %s)", job->kpi, run->iteration,
		      gr.raw_path);
		goto out;
	}
	*time = (double)gr.run_id;
	printf("%srun %u: %s = %g (agent after %s)\n", run->label, run->iteration, job->kpi, *value,
	       fmt_duration(gr.hello_ms, buf, sizeof(buf)));
	fflush(stdout);
	ret = 0;
out:
	guest_result_release(&gr);
	return ret;
}

static void gm_disconnect(void *data)
{
	struct guest_measurer *gm = data;

	/* a libvirt connection must not be shared with children (their
	 * event loops would read its socket) */
	guest_env_free(gm->ge);
	gm->ge = NULL;
}

static void gm_detach(void *data)
{
	struct guest_measurer *gm = data;

	guest_env_detach(&gm->ge);
}

static int gm_vcpu_cpus(void *data, int now, unsigned char **cpus, size_t *nr, const char **why)
{
	struct guest_measurer *gm = data;

	return guest_env_vcpu_cpus(gm->ge, now, cpus, nr, why);
}

static void gm_fingerprint(void *data, const char **hash, const char **text)
{
	struct guest_measurer *gm = data;

	*hash = gm->ge ? guest_env_fingerprint(gm->ge) : NULL;
	*text = gm->ge ? guest_env_fingerprint_text(gm->ge) : NULL;
}

const struct measurer_ops guest_measurer = {
	.name = "guest",
	.open = gm_open,
	.close = gm_close,
	.kernel = gm_kernel,
	.use = gm_use,
	.run = gm_run,
	.disconnect = gm_disconnect,
	.detach = gm_detach,
	.vcpu_cpus = gm_vcpu_cpus,
	.fingerprint = gm_fingerprint,
};
