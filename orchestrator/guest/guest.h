/* One boot: plan the CPUs, write the domain, record the boot row, run the
 * job once, store what it said.  A guest environment (libvirt connection,
 * accelerator, initramfs, the host the guests go to) serves a series of
 * boots; it is opaque, and a forked child detaches the one it inherited. */
#ifndef KLAB_GUEST_H
#define KLAB_GUEST_H

#include <stddef.h>
#include <stdint.h>
#include "job/resultproto.h"
#include "guest/topology.h"
#include "guest/vm.h"

struct lab;
struct job;
struct guest_env;

struct guest_env_opts {
	const char *kernel;		/* bzImage path */
	const char *uri;		/* NULL: the lab's libvirt_uri */
	const char *accel;		/* NULL: the lab's accel */
	int no_pin;
	const char *extra_cmdline;	/* appended to the kernel command line */
	int64_t boot_timeout_ms;	/* 0: default for the accelerator */
	int64_t run_timeout_ms;		/* 0: from the job's runtime */
	int quiet;
	const char *host;		/* --host NAME: only this registered host */
	int64_t prefer_host_id;		/* a bisection's earlier host (0: none) */
	const char *prefer_fingerprint;	/* its fingerprint there: another host with the
					 * same one may take over when it does not answer */
};

/* Everything about guests that can be checked without libvirt: the
 * accelerator (o->accel, else klab.conf's), guest_cpus, the URI's shape
 * (o->uri), the job's guest configuration (its sizes fit the guest) and,
 * when o->kernel is set, that it is an x86 bzImage.  klab run, submit run
 * and bisect start --job call it before anything is built or queued;
 * guest_env_prepare calls it too.  0, or -1 after one error line. */
int guest_env_check(const struct lab *lab, const struct job *job, const struct guest_env_opts *o);
/* Connect, clean orphans, choose the accelerator, read the topology,
 * build or find the initramfs and stage the kernel.  *out: the env (NULL
 * on failure); free it with guest_env_free().  0, -1 after error(), -2
 * after error() when no registered host answers (placement_pick). */
int guest_env_prepare(struct guest_env **out, struct lab *lab, const struct job *job,
		      const struct guest_env_opts *o);
/* Close the connection and free (NULL-safe). */
void guest_env_free(struct guest_env *ge);
/* In a forked child: forget the env the parent had (*ge, may be NULL)
 * without closing or using its libvirt connection, which stays the
 * parent's; the child prepares its own.  *ge becomes NULL. */
void guest_env_detach(struct guest_env **ge);
/* The boot after the next guest_run_once boots `kernel` (a bzImage; NULL:
 * not known): that boot's guest is made while the next one boots, and
 * libvirt's start leaves the path between them (a series of runs of one
 * commit, or of two interleaved).  Holds for one guest_run_once. */
void guest_env_expect_next(struct guest_env *ge, const char *kernel);
/* Boot `kernel` from now on (staged, and uploaded to a remote host). */
int guest_env_set_kernel(struct guest_env *ge, const char *kernel);
/* The host the env's guests go to: its row id (0: none registered, or
 * --uri) and name (NULL then). */
int64_t guest_env_host_id(const struct guest_env *ge);
/* The lab the env stores its boots in. */
struct lab *guest_env_lab(const struct guest_env *ge);
const char *guest_env_host_name(const struct guest_env *ge);
/* What the env chose, for the commands' lines. */
enum accel guest_env_accel(const struct guest_env *ge);
const char *guest_env_accel_why(const struct guest_env *ge);
/* The attached host's fingerprint (hostcheck.h): its hash, and its
 * "key=value" text; every boot and run set records the hash. */
const char *guest_env_fingerprint(const struct guest_env *ge);
const char *guest_env_fingerprint_text(const struct guest_env *ge);
const char *guest_env_uri(const struct guest_env *ge);
int guest_env_pinned(const struct guest_env *ge);
const char *guest_env_initrd(const struct guest_env *ge);
/* The host CPUs the env's next guest would take: its vCPUs as a boot
 * pins them, planned alone (now 0) or beside the other klab guests
 * running (now 1: their CPUs are in the set too); a bitmap into *vcpus,
 * caller frees.  0; 1 with *why when they are not this machine's to know
 * (another host, guests not pinned); 2 with *why when the guest would not
 * fit now; -1 error. */
int guest_env_vcpu_cpus(struct guest_env *ge, int now, unsigned char **vcpus, size_t *nr, const char **why);
int guest_env_base_hit(const struct guest_env *ge);	/* the initramfs base was cached */

struct guest_result {
	enum vm_outcome outcome;
	char *reason, *excerpt;
	int64_t boot_id, run_id;
	int64_t hello_ms, first_output_ms, create_ms, total_ms;
	char *kernel_release;
	char *pinning;
	struct result_metric *metrics;
	size_t nr_metrics;
	char *raw_path, *console_path;
	size_t nr_mons;
	size_t dropped;		/* hostile or oversized output the parser refused */
};

/* Boot once, run the job once, store boot, run, samples and monitor
 * values.  0 with the outcome in *res (whatever the kernel did), -1 when
 * klab or libvirt failed (the boot row then says so); -1 with outcome
 * VM_INFRA when the host's libvirtd could not be reached (no boot row). */
int guest_run_once(struct guest_env *ge, int64_t run_set_id, int64_t build_id, int64_t step_id,
		   unsigned iteration, const char *label, struct guest_result *res);
void guest_result_release(struct guest_result *res);
/* The KPI of a run: its single value of metric `kpi` (seq 0, as the
 * database's KPI reads take it; a series' values have their own seq),
 * NAN when the run has none. */
double guest_result_kpi(const struct guest_result *res, const char *kpi);

/* The run_sets row for `boots` boots of job on kernel in this env (its
 * URI, host and accelerator): klab run, track and compare. */
int guest_run_set_create(struct guest_env *ge, const struct job *job, const char *kernel, int64_t build_id,
			 const char *commit_hash, unsigned boots, int64_t track_tip_id, int64_t *id);

#endif
