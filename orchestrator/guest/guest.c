/* One boot of a kernel running the job once: plan, domain, boot row,
 * run, store; and the guest environment a series of boots shares. */
#include "guest/guest.h"
#include "guest/guest-int.h"
#include "guest/placement.h"
#include "job/suite.h"
#include "lab/db.h"
#include "guest/domain.h"
#include "guest/guestimg.h"
#include "job/job.h"
#include "lab/lab.h"
#include "job/monitor.h"
#include "guest/vm.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "util/run-command.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL_NAME "klab"
#define POOL_TARGET "/var/lib/libvirt/images/klab"

/* The file as the host sees it: the local one, or a volume of pool klab. */
static int host_file(struct guest_env *ge, const char *local, char **out)
{
	char *vol_name;
	int fd, uploaded = 0, ret;

	if (!vm_uri_is_remote(ge->vm.uri)) {
		*out = xstrdup(local);
		return 0;
	}
	vol_name = xstrdup(strrchr(local, '/') ? strrchr(local, '/') + 1 : local);
	/* two klab processes must not take each other's half-sent volume */
	fd = placement_host_lock(ge->vm.uri, "upload");
	if (fd < 0) {
		free(vol_name);
		return -1;
	}
	ret = vm_upload_file(&ge->vm, POOL_NAME, POOL_TARGET, local, vol_name, 256u << 20, out, &uploaded);
	close(fd);
	if (!ret && uploaded && !ge->quiet)
		fprintf(stderr, "uploaded %s to pool %s on %s\n", vol_name, POOL_NAME, ge->vm.uri);
	free(vol_name);
	return ret;
}

/* The fingerprint of the host at uri for this job's guest: this
 * machine's /proc and /sys when the URI is local, else what libvirt's
 * capabilities say. */
static void make_fingerprint(struct guest_env *ge, const char *uri)
{
	struct fingerprint_in in = { 0 };

	in.root = vm_uri_is_remote(uri) ? NULL : "";
	in.topo = &ge->topo;
	in.accel = accel_name(ge->accel);
	in.vcpus = ge->job->guest.vcpus;
	in.numa_nodes = ge->job->guest.numa_nodes;
	in.memory_mb = (unsigned long long)ge->job->guest.memory_mb;
	vm_versions(&ge->vm, &in.qemu_version, &in.libvirt_version);
	host_fingerprint_release(&ge->fp);
	host_fingerprint_make(&ge->fp, &in);
	ge->fp_stored = 0;
}

int guest_env_store_fingerprint(struct guest_env *ge)
{
	if (!ge->fp.text || ge->fp_stored)
		return 0;
	if (db_fingerprint_put(ge->lab->db, ge->fp.hash, ge->fp.text) < 0)
		return -1;
	ge->fp_stored = 1;
	return 0;
}

const char *guest_env_fingerprint(const struct guest_env *ge)
{
	return ge->fp.text ? ge->fp.hash : NULL;
}

const char *guest_env_fingerprint_text(const struct guest_env *ge)
{
	return ge->fp.text;
}

int guest_env_attach(struct guest_env *ge, const char *uri, const struct db_host *h)
{
	enum accel_choice choice;
	const char *a = ge->accel_opt ? ge->accel_opt
		      : h && h->accel && strcmp(h->accel, "auto") ? h->accel : ge->lab->accel;
	char *caps = NULL;
	int ret = -1;

	vm_disconnect(&ge->vm);
	topology_release(&ge->topo);
	free(ge->kernel);
	free(ge->initrd);
	ge->kernel = ge->initrd = NULL;
	if (h) {
		free(ge->allowed);
		ge->allowed = NULL;
		ge->nr_allowed = 0;
		if (h->cpus && cpulist_parse(h->cpus, &ge->allowed, &ge->nr_allowed) < 0)
			return error("host %s: --cpus '%s' is not a CPU list", h->name, h->cpus);
	}
	if (accel_choice_parse(a, &choice) < 0)
		return -1;
	/* a share names a directory of this machine */
	if (ge->job->nr_shares && vm_uri_is_remote(uri))
		return error("job '%s' shares host directories with the guest (9p), which needs a local hypervisor, "
			     "not %s", ge->job->path, uri);
	if (vm_connect(&ge->vm, uri) < 0)
		return -1;
	ge->vm.wait_s = ge->lab->host_wait;
	/* Orphans are recognised by lab path and owner pid, both of this
	 * machine: on another host they could be another machine's guests
	 * (there START_AUTODESTROY ends a dead klab's guests anyway). */
	if (!vm_uri_is_remote(uri) && vm_clean_orphans(&ge->vm, ge->lab->state_dir) < 0)
		goto cleanup;
	if (vm_capabilities(&ge->vm, &caps) < 0 || topology_parse(&ge->topo, caps, strlen(caps)) < 0)
		goto cleanup;
	if (vm_choose_accel(&ge->topo, choice, &ge->accel, &ge->accel_why) < 0)
		goto cleanup;
	make_fingerprint(ge, uri);
	if (host_file(ge, ge->local_kernel, &ge->kernel) < 0 || host_file(ge, ge->local_initrd, &ge->initrd) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	free(caps);
	return ret;
}

int guest_env_check(const struct lab *lab, const struct job *job, const struct guest_env_opts *o)
{
	struct strbuf conf = STRBUF_INIT;
	enum accel_choice choice;
	unsigned char *cpus = NULL;
	size_t nr_cpus;
	int ret = -1;

	if (accel_choice_parse(o->accel ? o->accel : lab->accel, &choice) < 0)
		return -1;
	if (lab->guest_cpus && cpulist_parse(lab->guest_cpus, &cpus, &nr_cpus) < 0)
		return error("guest_cpus in %s: not a CPU list", lab->config_path);
	free(cpus);
	if (o->uri && vm_uri_check(o->uri) < 0)
		return -1;
	if (job_agent_conf(job, job->guest.vcpus, &conf) < 0)
		goto out;
	if (o->kernel && guestimg_check_kernel(o->kernel) < 0)
		goto out;
	ret = 0;
out:
	strbuf_release(&conf);
	return ret;
}

/* What the job's monitors may add after the benchmark (perf report). */
static unsigned monitors_after_s(const struct job *job)
{
	unsigned s = 0;

	for (size_t i = 0; i < monitor_count(); i++)
		if (job->monitors & (1u << i))
			s += monitor_at(i)->after_s;
	return s;
}

int guest_env_prepare(struct guest_env **out, struct lab *lab, const struct job *job,
		      const struct guest_env_opts *o)
{
	struct guest_env *ge = xcalloc(1, sizeof(*ge));
	enum accel_choice choice;
	struct strbuf conf = STRBUF_INIT, cmd = STRBUF_INIT;
	unsigned agent_timeout;
	int ret = -1, marked, programs_hit;

	*out = NULL;
	ge->lab = lab;
	ge->job = job;
	ge->pin = !o->no_pin;
	ge->quiet = o->quiet;
	ge->accel_opt = o->accel;
	if (guest_env_check(lab, job, o) < 0 || accel_choice_parse(o->accel ? o->accel : lab->accel, &choice) < 0)
		goto cleanup;
	if (lab->guest_cpus && cpulist_parse(lab->guest_cpus, &ge->allowed, &ge->nr_allowed) < 0) {
		error("guest_cpus in %s: not a CPU list", lab->config_path);
		goto cleanup;
	}
	/* boots a dead klab left running say so before new ones start */
	if (placement_choose_hosts(ge, o) < 0 || db_boots_interrupted(lab->db, &marked) < 0)
		goto cleanup;

	if (guestimg_image_dir(lab, &ge->image_dir) < 0 ||
	    guestimg_stage_kernel(ge->image_dir, o->kernel, &ge->local_kernel) < 0 ||
	    guestimg_base(ge->image_dir, &ge->base_image, &ge->base_hit) < 0)
		goto cleanup;
	ge->kernel_source = xstrdup(o->kernel);
	/* the suite's, fs:'s and monitors' host programs (fio, mkfs.xfs,
	 * perf...) only for the job that runs them */
	if (guestimg_programs(ge->image_dir, job->suite, job->fs, job->monitors, &ge->programs_image, &programs_hit) < 0)
		goto cleanup;
	if (job_agent_conf(job, job->guest.vcpus, &conf) < 0 ||
	    guestimg_initrd(ge->image_dir, ge->base_image, ge->programs_image, conf.buf, conf.len,
			    &ge->local_initrd) < 0)
		goto cleanup;

	if (!ge->nr_hosts) {
		if (guest_env_attach(ge, o->uri ? o->uri : lab->libvirt_uri, NULL) < 0)
			goto cleanup;
	} else {
		for (;;) {
			struct strbuf why = STRBUF_INIT;
			int rc = placement_pick(ge, (size_t)-1, &why);
			if (rc == 0)
				placement_say_waiting(ge, &why);
			strbuf_release(&why);
			if (rc < 0) {
				ret = rc;	/* -2: no host answers */
				goto cleanup;
			}
			if (rc > 0)
				break;
			sleep(HOST_WAIT_S);
		}
	}

	/* panic=-1: a panicking guest reboots at once, and on_reboot=destroy
	 * ends it; the console keeps the panic text.  no_timer_check: the
	 * IO-APIC timer test counts ticks in a short window, and a TCG vCPU
	 * on a busy host misses it ("IO-APIC + timer doesn't work!", a panic
	 * at boot: CI, an end of t-speculate's range while a kernel built
	 * beside it); guests under KVM, Hyper-V and VMware skip the test by
	 * themselves (arch/x86/kernel/kvm.c), TCG guests cannot tell. */
	strbuf_addstr(&cmd, "console=ttyS0 panic=-1 no_timer_check");
	if (o->extra_cmdline && *o->extra_cmdline)
		strbuf_addf(&cmd, " %s", o->extra_cmdline);
	ge->cmdline = strbuf_detach(&cmd, NULL);
	/* TCG boots a few seconds on an idle host, but these hosts are shared. */
	ge->boot_timeout_ms = o->boot_timeout_ms ? o->boot_timeout_ms
			    : ge->accel == ACCEL_KVM ? 60000 : 180000;
	/* The agent kills the benchmark at the job's timeout; this is the
	 * host's own limit beyond it (a kbuild job's warm-up build can be
	 * far longer than its runtime). */
	if (job_agent_timeout_s(job, &agent_timeout) < 0)
		goto cleanup;
	ge->run_timeout_ms = o->run_timeout_ms ? o->run_timeout_ms : ((int64_t)job->runtime_s * 2 + 180 + monitors_after_s(job)) * 1000;
	if (!o->run_timeout_ms && ge->run_timeout_ms < ((int64_t)agent_timeout + 120 + monitors_after_s(job)) * 1000)
		ge->run_timeout_ms = ((int64_t)agent_timeout + 120 + monitors_after_s(job)) * 1000;
	/* the way the host's files reach the guest, said once (virtiofs is
	 * not used: Debian 12's libvirt 9.0 cannot make it read-only) */
	for (size_t i = 0; !ge->quiet && i < job->nr_shares; i++)
		print_line("share: %s as %s in the guest (9p, read-only)", job->shares[i].host, job->shares[i].guest_dir);
	if (!ge->quiet && job->fs)
		print_line("disk: %s made fresh each boot on a %lluM scratch disk, at %s in the guest", job->fs,
			   (unsigned long long)job->guest.disk_mb, JOB_DISK_DIR);
	if (!ge->quiet && suite_find(job->suite) && suite_find(job->suite)->note)
		print_line("%s: %s", job->suite, suite_find(job->suite)->note);
	ret = 0;
cleanup:
	strbuf_release(&conf);
	if (ret < 0)
		guest_env_free(ge);
	else
		*out = ge;
	return ret;
}

int guest_env_set_kernel(struct guest_env *ge, const char *kernel)
{
	char *local = NULL, *remote = NULL;

	if (guestimg_stage_kernel(ge->image_dir, kernel, &local) < 0)
		return -1;
	if (vm_ensure_connected(&ge->vm) < 0 || host_file(ge, local, &remote) < 0) {
		free(local);
		return -1;
	}
	free(ge->local_kernel);
	ge->local_kernel = local;
	free(ge->kernel);
	ge->kernel = remote;
	free(ge->kernel_source);
	ge->kernel_source = xstrdup(kernel);
	return 0;
}

struct lab *guest_env_lab(const struct guest_env *ge)
{
	return ge->lab;
}

int64_t guest_env_host_id(const struct guest_env *ge)
{
	return ge->nr_hosts ? ge->hosts[ge->host].id : 0;
}

const char *guest_env_host_name(const struct guest_env *ge)
{
	return ge->nr_hosts ? ge->hosts[ge->host].name : NULL;
}

enum accel guest_env_accel(const struct guest_env *ge)
{
	return ge->accel;
}

const char *guest_env_accel_why(const struct guest_env *ge)
{
	return ge->accel_why;
}

const char *guest_env_uri(const struct guest_env *ge)
{
	return ge->vm.uri;
}

int guest_env_pinned(const struct guest_env *ge)
{
	return ge->pin;
}

int guest_env_vcpu_cpus(struct guest_env *ge, int now, unsigned char **vcpus, size_t *nr, const char **why)
{
	const struct job *job = ge->job;
	struct guest_shape shape = { job->guest.vcpus, job->guest.numa_nodes, job->guest.memory_mb };
	struct guest_plan plan = { 0 };
	int hold, rc;

	*vcpus = NULL;
	*nr = 0;
	if (vm_uri_is_remote(ge->vm.uri)) {
		*why = "the guests run on another host";
		return 1;
	}
	if (!ge->pin) {
		*why = "the guests are not pinned";
		return 1;
	}
	/* now: beside the other klab guests running, as the boot will plan */
	if (now && (vm_ensure_connected(&ge->vm) < 0 || vm_busy_cpus(&ge->vm, vcpus, nr) < 0))
		return -1;
	hold = error_hold(1);
	rc = topology_plan(&plan, &ge->topo, &shape, ge->allowed, ge->nr_allowed, *vcpus, *nr);
	error_hold(hold);
	if (rc < 0) {
		*why = "other klab guests use the CPUs now";
		return 2;
	}
	/* the vCPUs only: the emulator threads are mostly idle, and an
	 * idle-priority build gives way to them */
	for (unsigned i = 0; i < plan.vcpus; i++)
		cpu_bitmap_set(vcpus, nr, plan.vcpu_pin[i]);
	guest_plan_release(&plan);
	return 0;
}

const char *guest_env_initrd(const struct guest_env *ge)
{
	return ge->initrd;
}

int guest_env_base_hit(const struct guest_env *ge)
{
	return ge->base_hit;
}

/* Forget the spare; the owner (not a forked child) also destroys it and
 * removes its disks. */
static void spare_drop(struct guest_spare *sp, int owner)
{
	if (owner) {
		vm_spare_destroy(sp->dom);
		if (sp->swap)
			unlink(sp->swap);
		if (sp->scratch)
			unlink(sp->scratch);
	}
	FREE_MANY(sp->name, sp->kernel, sp->plan, sp->swap, sp->scratch);
	memset(sp, 0, sizeof(*sp));
}

void guest_env_expect_next(struct guest_env *ge, const char *kernel)
{
	free(ge->expect_next);
	ge->expect_next = kernel ? xstrdup(kernel) : NULL;
}

/* The host's path of bzImage `kernel` staged for a boot (ge->kernel when
 * it is the one staged now); NULL after error(). */
static char *staged_kernel(struct guest_env *ge, const char *kernel)
{
	char *local = NULL, *remote = NULL;

	if (ge->kernel_source && !strcmp(ge->kernel_source, kernel))
		return xstrdup(ge->kernel);
	if (guestimg_stage_kernel(ge->image_dir, kernel, &local) == 0)
		host_file(ge, local, &remote);
	free(local);
	return remote;
}

/* All but the connection, which the caller closes or leaves alone. */
static void env_free_but_vm(struct guest_env *ge)
{
	topology_release(&ge->topo);
	host_fingerprint_release(&ge->fp);
	free(ge->allowed);
	free(ge->image_dir);
	free(ge->base_image);
	free(ge->programs_image);
	free(ge->initrd);
	free(ge->kernel);
	free(ge->local_kernel);
	free(ge->kernel_source);
	free(ge->expect_next);
	free(ge->local_initrd);
	free(ge->cmdline);
	free(ge->waiting);
	db_hosts_free(ge->hosts, ge->nr_hosts);
	free(ge->want_fingerprint);
	free(ge);
}

void guest_env_free(struct guest_env *ge)
{
	if (!ge)
		return;
	spare_drop(&ge->spare, 1);
	vm_disconnect(&ge->vm);
	env_free_but_vm(ge);
}

void guest_env_detach(struct guest_env **ge)
{
	if (!*ge)
		return;
	/* vm.conn is the parent's libvirt state: not closed, not freed here,
	 * and so is the spare */
	spare_drop(&(*ge)->spare, 0);
	free((*ge)->vm.uri);
	free((*ge)->vm.hostname);
	env_free_but_vm(*ge);
	*ge = NULL;
}

void guest_result_release(struct guest_result *res)
{
	FREE_MANY(res->reason, res->excerpt, res->kernel_release, res->pinning, res->raw_path, res->console_path);
	result_metrics_free(res->metrics, res->nr_metrics);
	memset(res, 0, sizeof(*res));
}

double guest_result_kpi(const struct guest_result *res, const char *kpi)
{
	for (size_t i = 0; i < res->nr_metrics; i++)
		if (res->metrics[i].seq == 0 && !strcmp(res->metrics[i].name, kpi))
			return res->metrics[i].value;
	return NAN;
}

/* The next boot's guest in the making, beside this boot's (a thread: the
 * event loop keeps reading this guest's streams meanwhile). */
struct spare_job {
	struct vm_conn *vm;
	const char *xml;
	char *name, *swap, *scratch, *why, *kernel;
	void *dom;
	int64_t ms, done_at;	/* the creation's time; when it ended (now_ms) */
	pthread_t thr;
	int started;
};

static void *spare_make(void *arg)
{
	struct spare_job *j = arg;

	vm_create_paused(j->vm, j->xml, &j->dom, &j->ms, &j->why);
	j->done_at = now_ms();
	return NULL;
}

struct phase_ctx {
	const struct guest_env *ge;
	const char *label;
	int plan_fd;
	struct spare_job *sj;	/* NULL: no next guest to make */
};

static void on_phase(const char *phase, int64_t ms, void *data)
{
	struct phase_ctx *p = data;
	char buf[32];

	if (!p->ge->quiet)
		fprintf(stderr, "%s%s (%s)\n", p->label, phase, fmt_duration(ms, buf, sizeof(buf)));
}

static void on_created(void *data)
{
	struct phase_ctx *p = data;

	if (p->plan_fd >= 0) {
		close(p->plan_fd);
		p->plan_fd = -1;
	}
}

/* This guest boots: the next one is made now, while this one is still
 * far from its benchmark (under TCG about a second of a 2.5-s boot). */
static void on_resumed(void *data)
{
	struct phase_ctx *p = data;

	if (p->sj && pthread_create(&p->sj->thr, NULL, spare_make, p->sj) == 0)
		p->sj->started = 1;
}

/* The next guest, made or not: kept for the next boot, or said once.
 * bench_at: when this boot's benchmark began (now_ms; -1 unknown): a
 * creation still running then shared the host with the measurement,
 * which a host too fast to boot past it (KVM) is told once. */
static void spare_finish(struct guest_env *ge, struct spare_job *sj, const char *plan_text, int64_t bench_at)
{
	if (sj->started) {
		pthread_join(sj->thr, NULL);
		sj->started = 0;
		if (bench_at >= 0 && sj->done_at > bench_at && !ge->spare_late_warned++)
			fprintf(stderr, "klab: the next guest was still being made when this run's benchmark began "
				"(for %lld ms): guests_ahead = no in klab.conf keeps them apart\n",
				(long long)(sj->done_at - bench_at));
	}
	if (sj->dom) {
		spare_drop(&ge->spare, 1);
		ge->spare = (struct guest_spare){ sj->dom, sj->name, sj->kernel, xstrdup(plan_text), sj->swap,
						  sj->scratch };
		sj->dom = NULL;
		sj->name = sj->swap = sj->scratch = sj->kernel = NULL;
	} else if (sj->why && !ge->spare_warned++) {
		fprintf(stderr, "klab: the next guest could not be made ahead, it is made when it boots (%s)\n",
			sj->why);
	}
	if (sj->swap)
		unlink(sj->swap);
	if (sj->scratch)
		unlink(sj->scratch);
	FREE_MANY(sj->name, sj->swap, sj->scratch, sj->why, sj->kernel);
}

/* Monitor records → before/after/delta rows, and time series as samples. */
static void collect_mons(const struct result *r, struct db_mon **mons, size_t *nr_mons,
			 struct db_sample **ts, size_t *nr_ts, char ***names, size_t *nr_names)
{
	size_t alloc = 0, alloc_ts = 0, alloc_names = 0;

	*mons = NULL;
	*ts = NULL;
	*names = NULL;
	*nr_mons = *nr_ts = *nr_names = 0;
	for (size_t i = 0; i < r->nr_mon; i++) {
		const struct result_mon *m = &r->mon[i];
		const struct monitor *mon = monitor_find(m->source);
		if (!strcmp(m->phase, "before") || !strcmp(m->phase, "after")) {
			ALLOC_GROW(*mons, *nr_mons + 1, alloc);
			(*mons)[(*nr_mons)++] = (struct db_mon){ m->source, m->name, m->phase, m->value };
			if (!strcmp(m->phase, "after") && mon && mon->counters) {
				/* counters: the run's own share */
				for (size_t j = 0; j < r->nr_mon; j++) {
					const struct result_mon *b = &r->mon[j];
					if (!strcmp(b->phase, "before") && !strcmp(b->source, m->source) &&
					    !strcmp(b->name, m->name)) {
						ALLOC_GROW(*mons, *nr_mons + 1, alloc);
						(*mons)[(*nr_mons)++] =
							(struct db_mon){ m->source, m->name, "delta", m->value - b->value };
						break;
					}
				}
			}
		} else if (m->phase[0] == 't') {
			unsigned long sec;
			if (parse_uint(m->phase + 1, 1u << 30, &sec) < 0)
				continue;
			ALLOC_GROW(*names, *nr_names + 1, alloc_names);
			(*names)[*nr_names] = xstrfmt("monitor.%s.%s", m->source, m->name);
			ALLOC_GROW(*ts, *nr_ts + 1, alloc_ts);
			(*ts)[(*nr_ts)++] = (struct db_sample){ (*names)[*nr_names], (int64_t)sec, m->value };
			(*nr_names)++;
		}
	}
}

static char *env_text(const struct result *r)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < r->nr_env; i++)
		strbuf_addf(&sb, "%s=%s\n", r->env[i].key, r->env[i].value);
	return strbuf_detach(&sb, NULL);
}

static int write_raw(const char *path, const struct result *r)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	for (size_t i = 0; i < r->nr_out; i++) {
		strbuf_addstr(&sb, r->out[i]);
		strbuf_addch(&sb, '\n');
	}
	/* private as the console beside it: the guest's output is the lab's */
	ret = write_file_atomic_mode(path, sb.buf, sb.len, 0600);
	strbuf_release(&sb);
	return ret;
}

/* The domain XML of one boot of `kernel` (the host's path) on `plan`. */
static int boot_domain_xml(const struct guest_env *ge, const char *kernel, const struct guest_plan *plan,
			   const char *name, int64_t created_s, const char *swap_disk, const char *scratch_disk,
			   struct strbuf *xml)
{
	const struct job *job = ge->job;
	struct domain_share shares[DOMAIN_MAX_SHARES];
	struct domain_spec spec = { 0 };

	spec.name = name;
	spec.accel = ge->accel;
	spec.kernel = kernel;
	spec.initrd = ge->initrd;
	spec.cmdline = ge->cmdline;
	spec.memory_mb = job->guest.memory_mb;
	spec.plan = plan;
	spec.pin = ge->pin;
	spec.hugepages = job->guest.hugepages == JOB_HUGEPAGES_2M ? BACKING_2M
		       : job->guest.hugepages == JOB_HUGEPAGES_1G ? BACKING_1G : BACKING_NONE;
	spec.swap_disk = swap_disk;
	spec.scratch_disk = scratch_disk;
	if (job->nr_shares > DOMAIN_MAX_SHARES)
		return error("job '%s' shares %zu directories, at most %d", job->path, job->nr_shares, DOMAIN_MAX_SHARES);
	for (size_t i = 0; i < job->nr_shares; i++)
		shares[i] = (struct domain_share){ job->shares[i].host, job->shares[i].tag, 1 };
	spec.shares = shares;
	spec.nr_shares = job->nr_shares;
	spec.lab_id = ge->lab->state_dir;
	spec.owner_pid = (int)getpid();
	spec.created_s = created_s;
	return domain_xml(&spec, xml);
}

/* Disks a killed klab left (swap-klab-<pid>-<ms>.img and
 * disk-klab-<pid>-<ms>.img, see make_disk: removed with the boot, unless
 * the process died first): removed by the next boot, with disks or not,
 * when that pid is gone.  A name that does not parse is left. */
static void remove_orphan_disks(const char *dir)
{
	static const char *const prefixes[] = { "swap-" DOMAIN_NAME_PREFIX, "disk-" DOMAIN_NAME_PREFIX };
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		char *end, *p;
		size_t k;
		long pid;

		for (k = 0; k < ARRAY_SIZE(prefixes) && strncmp(n, prefixes[k], strlen(prefixes[k])); k++)
			;
		if (k == ARRAY_SIZE(prefixes))
			continue;
		errno = 0;
		pid = strtol(n + strlen(prefixes[k]), &end, 10);
		if (errno || pid <= 0 || *end != '-' || pid == (long)getpid() || !process_gone(pid))
			continue;
		p = xstrfmt("%s/%s", dir, n);
		if (unlink(p) == 0)
			printf("klab: removed %s, the %s disk of klab process %ld, which is gone\n", p,
			       k ? "scratch" : "swap", pid);
		free(p);
	}
	if (d)
		closedir(d);
}

/* A job's disk for one boot: a sparse file of `mb` MiB beside the staged
 * kernel (QEMU's user can reach it there; libvirt hands it over), fresh
 * for every boot so that no run starts with another's pages or files:
 * guest.swap's (kind "swap") or the scratch disk fs: is made on (kind
 * "disk").  *path stays NULL for 0 MiB.  0, or -1 after error(). */
static int make_disk(const struct guest_env *ge, const char *name, const char *kind, uint64_t mb, char **path)
{
	uint64_t bytes = mb << 20;
	char *p;
	int fd;

	*path = NULL;
	if (!bytes)
		return 0;
	p = xstrfmt("%s/%s-%s.img", ge->image_dir, kind, name);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0) {
		error("cannot make the %s disk %s: %s", kind, p, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(p);
		}
		free(p);
		return -1;
	}
	close(fd);
	*path = p;
	return 0;
}

/* Both disks of a boot (none, either or both). */
static int make_disks(const struct guest_env *ge, const char *name, char **swap, char **scratch)
{
	remove_orphan_disks(ge->image_dir);
	*scratch = NULL;
	if (make_disk(ge, name, "swap", ge->job->guest.swap_mb, swap) < 0)
		return -1;
	if (make_disk(ge, name, "disk", ge->job->fs ? ge->job->guest.disk_mb : 0, scratch) < 0) {
		if (*swap)
			unlink(*swap);
		free(*swap);
		*swap = NULL;
		return -1;
	}
	return 0;
}

/* What the guest said, kept even when the run failed: the raw output, the
 * run row with its samples (metrics and monitor series) and monitor
 * values, in one transaction. */
static int store_run(struct guest_env *ge, const struct vm_run *vr, int64_t step_id, unsigned iteration,
		     int64_t started, struct guest_result *res)
{
	const struct job *job = ge->job;
	struct db_run run = { 0 };
	struct db_mon *mons = NULL;
	struct db_sample *samples = NULL, *ts = NULL;
	char **ts_names = NULL;
	size_t nr_mons = 0, nr_ts = 0, nr_names = 0;
	int ret = -1;

	res->nr_metrics = result_parse_metrics(job->suite, job->testcase, vr->result.out, vr->result.nr_out,
					       &res->metrics);
	if (write_raw(res->raw_path, &vr->result) < 0)
		return -1;
	collect_mons(&vr->result, &mons, &nr_mons, &ts, &nr_ts, &ts_names, &nr_names);
	samples = xcalloc(res->nr_metrics + nr_ts + 1, sizeof(*samples));
	for (size_t i = 0; i < res->nr_metrics; i++)
		samples[i] = (struct db_sample){ res->metrics[i].name, res->metrics[i].seq, res->metrics[i].value };
	if (nr_ts)	/* ts is NULL without series: memcpy(NULL) is undefined even for 0 bytes */
		memcpy(samples + res->nr_metrics, ts, nr_ts * sizeof(*ts));
	run.boot_id = res->boot_id;
	run.step_id = step_id;
	run.job_path = job->path;
	run.job_hash = job->hash;
	run.iteration = iteration;
	run.status = vr->outcome == VM_OK ? "ok" : vr->outcome == VM_TIMEOUT ? "timeout" : "failed";
	run.fault = vm_outcome_fault(vr->outcome);
	run.exit_code = vr->result.exit_status == RESULT_EXIT_EXITED ? vr->result.exit_code : -1;
	run.raw_path = res->raw_path;
	run.started_at = started;
	run.finished_at = now_s();
	run.samples = samples;
	run.nr_samples = res->nr_metrics + nr_ts;
	run.mons = mons;
	run.nr_mons = nr_mons;
	res->nr_mons = nr_mons;
	if (db_run_store(ge->lab->db, &run, &res->run_id) >= 0)
		ret = 0;
	strings_free(ts_names, nr_names);
	free(ts);
	free(mons);
	free(samples);
	return ret;
}

/* A benchmark that exited non-zero: the reason gets the one line of its
 * output that says why, when its suite can tell (kbuild's first error). */
static void add_failure_line(const struct job *job, struct vm_run *vr)
{
	const struct suite *s;
	char *why, *reason;

	if (vr->outcome != VM_RUN_FAILED || !vr->result.done || vr->result.exit_status != RESULT_EXIT_EXITED ||
	    !vr->result.exit_code)
		return;
	s = suite_find(job->suite);
	if (!s || !s->failure || !(why = s->failure(vr->result.out, vr->result.nr_out)))
		return;
	reason = xstrfmt("%s: %s", vr->reason, why);
	free(why);
	free(vr->reason);
	vr->reason = reason;
}

/* The boot row's end: outcome and what the guest and libvirt reported. */
static int finish_boot(struct guest_env *ge, const struct vm_run *vr, const struct guest_result *res)
{
	struct db_boot_end end = { 0 };
	char *genv = env_text(&vr->result);
	int rc;

	end.outcome = vm_outcome_name(vr->outcome);
	end.reason = vr->reason;
	end.excerpt = vr->excerpt;
	end.kernel_release = res->kernel_release;
	end.guest_env = genv;
	end.pinning = ge->pin ? vr->pinning : NULL;
	end.boot_ms = vr->hello_ms;
	end.create_ms = vr->create_ms;
	end.first_output_ms = vr->first_output_ms;
	rc = db_boot_finish(ge->lab->db, res->boot_id, &end);
	free(genv);
	return rc;
}

/* The guest of the boot after this one (kernel `next`), to be made while
 * this one boots, on this boot's CPU plan: sj filled, its domain XML in
 * xml.  -1 when it cannot be (the next boot makes its own). */
static int spare_job_ready(struct guest_env *ge, const char *next, const struct guest_plan *plan, int64_t started,
			   struct spare_job *sj, struct strbuf *xml)
{
	sj->kernel = staged_kernel(ge, next);
	if (!sj->kernel)
		return -1;
	sj->name = xstrfmt("%s%d-%lld%s", DOMAIN_NAME_PREFIX, (int)getpid(), (long long)now_ms(), VM_SPARE_SUFFIX);
	if (make_disks(ge, sj->name, &sj->swap, &sj->scratch) < 0 ||
	    boot_domain_xml(ge, sj->kernel, plan, sj->name, started, sj->swap, sj->scratch, xml) < 0)
		return -1;
	sj->vm = &ge->vm;
	sj->xml = xml->buf;
	return 0;
}

/* The boot row of a boot (b: its run set, build, step, domain and
 * pinning; the rest filled here) and the paths of its console and raw
 * output in res: a run set's boots by iteration, a step's by step and
 * iteration.  -1 after error(). */
static int begin_boot_row(struct guest_env *ge, struct db_boot *b, unsigned iteration, struct guest_result *res)
{
	const struct job *job = ge->job;
	char *dir, *stem;
	int ret = -1;

	b->host_id = guest_env_host_id(ge);
	b->accel = accel_name(ge->accel);
	b->vcpus = job->guest.vcpus;
	b->numa_nodes = job->guest.numa_nodes;
	b->memory_mb = job->guest.memory_mb;
	if (guest_env_store_fingerprint(ge) < 0)
		return -1;
	b->fingerprint = guest_env_fingerprint(ge);
	dir = b->run_set_id ? xstrfmt("%s/runs/%lld", ge->lab->state_dir, (long long)b->run_set_id)
			    : xstrfmt("%s/runs/steps", ge->lab->state_dir);
	if (mkdir_p(dir, 0700) < 0) {
		free(dir);
		return -1;
	}
	/* a step's files carry its id: run 1 of the next step must not
	 * overwrite this one's console (the boot row names it) */
	stem = b->run_set_id ? xstrfmt("%s/%u", dir, iteration)
			     : xstrfmt("%s/%lld-%u", dir, (long long)b->step_id, iteration);
	res->console_path = xstrfmt("%s.console", stem);
	res->raw_path = xstrfmt("%s.out", stem);
	b->console_path = res->console_path;
	if (db_boot_begin(ge->lab->db, b, &res->boot_id) == 0)
		ret = 0;
	free(dir);
	free(stem);
	return ret;
}

/* What a boot that ran gives its caller, copied out of vr. */
static void take_result(struct guest_result *res, const struct vm_run *vr)
{
	res->outcome = vr->outcome;
	res->reason = xstrdup(vr->reason);
	res->excerpt = vr->excerpt ? xstrdup(vr->excerpt) : NULL;
	res->hello_ms = vr->hello_ms;
	res->first_output_ms = vr->first_output_ms;
	res->create_ms = vr->create_ms;
	res->total_ms = vr->total_ms;
	res->pinning = xstrdup(vr->pinning ? vr->pinning : "?");
	res->dropped = vr->result.long_lines + vr->result.bad_records;
	if (result_env_get(&vr->result, "kernel"))
		res->kernel_release = xstrdup(result_env_get(&vr->result, "kernel"));
}

/* The host's libvirtd cannot be reached before a boot: the host's
 * fault, not klab's (measure_boot tries again, then the bisection stops,
 * resumable); no boot was made.  Always 1. */
static int host_unreachable(struct guest_env *ge, struct guest_result *res)
{
	res->outcome = VM_INFRA;
	res->reason = xstrfmt("libvirtd at %s does not answer", ge->vm.uri ? ge->vm.uri : "?");
	return 1;
}

int guest_run_once(struct guest_env *ge, int64_t run_set_id, int64_t build_id, int64_t step_id,
		   unsigned iteration, const char *label, struct guest_result *res)
{
	const struct job *job = ge->job;
	struct guest_shape shape = { job->guest.vcpus, job->guest.numa_nodes, job->guest.memory_mb };
	struct guest_plan plan = { 0 };
	struct strbuf xml = STRBUF_INIT;
	struct phase_ctx pc = { ge, label, -1, NULL };
	struct vm_run_opts vo = { 0 };
	struct vm_run vr;
	struct db_boot boot = { 0 };
	struct spare_job sj = { 0 };
	struct strbuf spare_xml = STRBUF_INIT;
	char *name = NULL, *plan_text = NULL, *swap = NULL, *scratch = NULL;
	unsigned char *busy = NULL;
	size_t nr_busy = 0;
	int have_vr = 0, ret = -1;
	char *next = ge->expect_next;	/* the hint holds for this boot only */
	int64_t started = now_s(), boot_at = 0;

	memset(res, 0, sizeof(*res));
	res->outcome = VM_ERROR;
	ge->expect_next = NULL;
	if (!ge->lab->guests_ahead) {
		free(next);
		next = NULL;
	}
	if (vm_ensure_connected(&ge->vm) < 0 && host_unreachable(ge, res))
		goto cleanup;
	pc.plan_fd = placement_lock_for_boot(ge, run_set_id, &busy, &nr_busy);
	if (pc.plan_fd < 0)
		goto cleanup;
	if (topology_plan(&plan, &ge->topo, &shape, ge->allowed, ge->nr_allowed, busy, nr_busy) < 0)
		goto cleanup;
	ge->nr_boots++;
	plan_text = guest_plan_describe(&plan);

	/* the guest made ahead by the boot before, when it is this kernel's
	 * on these CPUs (its plan was that boot's), else gone */
	if (ge->spare.dom) {
		if (!strcmp(ge->spare.kernel, ge->kernel) && !strcmp(ge->spare.plan, plan_text) &&
		    vm_spare_usable(ge->spare.dom)) {
			vo.spare = ge->spare.dom;
			name = ge->spare.name;
			swap = ge->spare.swap;
			scratch = ge->spare.scratch;
			ge->spare.dom = NULL;
			ge->spare.name = ge->spare.swap = ge->spare.scratch = NULL;
		}
		spare_drop(&ge->spare, 1);
	}
	if (!vo.spare) {
		name = xstrfmt("%s%d-%lld", DOMAIN_NAME_PREFIX, (int)getpid(), (long long)now_ms());
		if (make_disks(ge, name, &swap, &scratch) < 0 ||
		    boot_domain_xml(ge, ge->kernel, &plan, name, started, swap, scratch, &xml) < 0)
			goto cleanup;
	}
	/* the next boot's guest, when the caller says which kernel it boots */
	if (next && spare_job_ready(ge, next, &plan, started, &sj, &spare_xml) == 0)
		pc.sj = &sj;

	boot.run_set_id = run_set_id;
	boot.build_id = build_id;
	boot.step_id = step_id;
	boot.domain_name = name;
	boot.pinning = ge->pin ? plan_text : "unpinned";
	if (begin_boot_row(ge, &boot, iteration, res) < 0)
		goto cleanup;

	vo.xml = xml.buf;
	vo.console_path = res->console_path;
	vo.boot_timeout_ms = ge->boot_timeout_ms;
	vo.run_timeout_ms = ge->run_timeout_ms;
	vo.on_phase = on_phase;
	vo.on_created = on_created;
	vo.on_resumed = on_resumed;
	vo.data = &pc;
	boot_at = now_ms();
	if (vm_boot_and_run(&ge->vm, &vo, &vr) < 0) {
		struct db_boot_end end = { 0 };
		have_vr = 1;
		end.reason = "klab or libvirt failed (see the error above)";
		db_boot_finish(ge->lab->db, res->boot_id, &end);
		goto cleanup;
	}
	have_vr = 1;
	if (vr.outcome == VM_INFRA && vr.domain_name)
		vm_destroy_leftover(&ge->vm, vr.domain_name);
	add_failure_line(job, &vr);
	take_result(res, &vr);

	if (vr.result.hello && store_run(ge, &vr, step_id, iteration, started, res) < 0)
		goto cleanup;
	if (finish_boot(ge, &vr, res) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	if (pc.plan_fd >= 0)
		close(pc.plan_fd);
	/* a guest made ahead, taken and never handed to vm_boot_and_run
	 * (which owns it once called) */
	if (vo.spare && !have_vr)
		vm_spare_destroy(vo.spare);
	spare_finish(ge, &sj, plan_text,
		     have_vr && vr.first_output_ms >= 0 ? boot_at + vr.first_output_ms : -1);
	free(next);
	strbuf_release(&spare_xml);
	if (have_vr)
		vm_run_release(&vr);
	if (swap)
		unlink(swap);
	if (scratch)
		unlink(scratch);
	free(swap);
	free(scratch);
	free(busy);
	free(name);
	free(plan_text);
	guest_plan_release(&plan);
	strbuf_release(&xml);
	return ret;
}

/* ---- a run set's row ------------------------------------------------------- */

int guest_run_set_create(struct guest_env *ge, const struct job *job, const char *kernel, int64_t build_id,
			 const char *commit_hash, unsigned boots, int64_t track_tip_id, int64_t *id)
{
	struct db_run_set rs = { job->path, job->hash, job->suite, job->testcase, job->kpi, kernel, build_id,
				 commit_hash, ge->vm.uri, ge->vm.hostname, accel_name(ge->accel), boots,
				 track_tip_id, guest_env_fingerprint(ge) };

	if (guest_env_store_fingerprint(ge) < 0)
		return -1;
	return db_run_set_create(ge->lab->db, &rs, id);
}
