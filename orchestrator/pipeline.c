/* Test one commit.  The build step: look the artifact store up by (tree,
 * recipe) before touching the worktree, so a hit costs milliseconds. */
#include "pipeline.h"
#include "db.h"
#include "gitrepo.h"
#include "guestimg.h"
#include "job.h"
#include "lab.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

int pipeline_build(struct lab *lab, struct gitrepo *repo, int64_t repo_id, struct worktree *wt,
		   const char *hex, int already_checked_out, const struct kbuild_recipe *recipe,
		   int jobs, enum kbuild_progress progress, const char *indent, struct kbuild_result *res)
{
	struct commit_info ci;
	struct kbuild_request req = { 0 };
	char recipe_id[41];
	int rc;

	if (gitrepo_commit_info(repo, hex, &ci) < 0)
		return -1;
	if (kbuild_recipe_id(recipe, recipe_id) < 0) {
		commit_info_release(&ci);
		return -1;
	}
	rc = kbuild_lookup(lab, ci.tree, recipe_id, res);
	if (rc != 0) {
		commit_info_release(&ci);
		return rc < 0 ? -1 : 0;
	}
	if (!already_checked_out) {
		int64_t t0 = now_ms();
		char dur[32];
		if (progress != PROGRESS_QUIET)
			fprintf(stderr, "%s[checkout] %.12s\n", indent ? indent : "", hex);
		if (worktree_checkout(wt, hex) < 0) {
			commit_info_release(&ci);
			return -1;
		}
		if (progress != PROGRESS_QUIET)
			fprintf(stderr, "%s[checkout] done in %s\n", indent ? indent : "",
				fmt_duration(now_ms() - t0, dur, sizeof(dur)));
	}
	req.lab = lab;
	req.repo_id = repo_id;
	req.commit = hex;
	req.tree = ci.tree;
	req.src_dir = worktree_path(wt);
	req.recipe = recipe;
	req.jobs = jobs;
	req.progress = progress;
	req.indent = indent;
	rc = kbuild_build(&req, res);
	commit_info_release(&ci);
	return rc;
}

int pipeline_build_rev(struct lab *lab, const char *repo_arg, const char *rev, const struct kbuild_recipe *recipe,
		       int quiet, char hex[41], struct kbuild_result *res)
{
	struct pipeline_repo pr;
	int ret;

	memset(res, 0, sizeof(*res));
	if (pipeline_repo_open(&pr, lab, repo_arg, rev) < 0)
		return -1;
	memcpy(hex, pr.hex, 41);
	if (!quiet)
		fprintf(stderr, "build %.12s of %s\n", hex, pr.abs_path);
	ret = pipeline_build(lab, pr.repo, pr.repo_id, pr.wt, hex, 0, recipe, 0, quiet ? PROGRESS_QUIET : PROGRESS_AUTO,
			     "  ", res);
	if (ret == 0 && !quiet)
		pipeline_print_build(res, "  ");
	pipeline_repo_release(&pr);
	return ret;
}

void pipeline_print_build(const struct kbuild_result *res, const char *indent)
{
	static const char *const names[] = { "ok", "build-failed", "env-failed", "config-drift" };
	char dur[32];

	if (!indent)
		indent = "";
	printf("%sbuild:      %s%s", indent, names[res->status], res->cache_hit ? " (cache hit: not rebuilt)" : "");
	if (!res->cache_hit && res->status == KBUILD_OK)
		printf(", %d objects compiled in %s", res->objects, fmt_duration(res->duration_ms, dur, sizeof(dur)));
	printf("\n");
	if (res->message)
		printf("%smessage:    %s\n", indent, res->message);
	if (res->status == KBUILD_OK) {
		printf("%skernel:     %s\n", indent, res->bzimage);
		printf("%sconfig:     %s (hash %.12s)\n", indent, res->config, res->config_hash);
		printf("%ssystem.map: %s\n", indent, res->system_map);
	}
	if (res->log)
		printf("%slog:        %s\n", indent, res->log);
	if (res->excerpt && *res->excerpt) {
		const char *p = res->excerpt;
		printf("%s%s:\n", indent, res->status == KBUILD_DRIFT ? "config drift" : "errors");
		while (*p) {
			const char *eol = strchrnul(p, '\n');
			printf("%s  ", indent);
			for (const char *q = p; q < eol; q++)
				putchar((unsigned char)*q < 0x20 ? '?' : *q);
			printf("\n");
			p = *eol ? eol + 1 : eol;
		}
	}
}

int pipeline_worktree_lock(struct lab *lab, int64_t repo_id, char **dir)
{
	char *name = xstrfmt("worktree-%lld", (long long)repo_id);
	int copy, fd = lab_lock_copy(lab, name, &copy);

	free(name);
	*dir = NULL;
	if (fd >= 0)
		*dir = copy ? xstrfmt("%s/worktrees/repo-%lld.%d", lab->state_dir, (long long)repo_id, copy)
			    : xstrfmt("%s/worktrees/repo-%lld", lab->state_dir, (long long)repo_id);
	return fd;
}

int pipeline_repo_open(struct pipeline_repo *pr, struct lab *lab, const char *repo_arg, const char *rev)
{
	char *lock_name = NULL, *wt_dir = NULL;
	int ret = -1;

	memset(pr, 0, sizeof(*pr));
	pr->lock_fd = -1;
	if (gitrepo_open(&pr->repo, repo_arg) < 0 || gitrepo_resolve(pr->repo, rev, pr->hex) < 0)
		goto out;
	pr->abs_path = real_path(gitrepo_path(pr->repo));
	if (!pr->abs_path || db_repo_id(lab->db, pr->abs_path, &pr->repo_id) < 0)
		goto out;
	pr->lock_fd = pipeline_worktree_lock(lab, pr->repo_id, &wt_dir);
	if (pr->lock_fd < 0)
		goto out;
	if (worktree_open(&pr->wt, pr->repo, wt_dir) < 0)
		goto out;
	ret = 0;
out:
	free(lock_name);
	free(wt_dir);
	if (ret < 0)
		pipeline_repo_release(pr);
	return ret;
}

void pipeline_repo_release(struct pipeline_repo *pr)
{
	worktree_free(pr->wt);
	gitrepo_free(pr->repo);
	if (pr->lock_fd >= 0)
		close(pr->lock_fd);
	free(pr->abs_path);
	memset(pr, 0, sizeof(*pr));
	pr->lock_fd = -1;
}

/* ---- the guest: boot, run, store ------------------------------------------ */



/* Guests of every lab on this machine plan CPUs under one lock, so two
 * klab processes never pick the same free CPU.  A remote host has a lock
 * of its own, keyed by its URI (klab processes of this machine only). */
#define PLAN_LOCK "/var/tmp/klab-guest-plan.lock"
#define POOL_NAME "klab"
#define POOL_TARGET "/var/lib/libvirt/images/klab"
#define HOST_WAIT_S 3

static char *host_lock_path(const char *uri, const char *what)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	if (!vm_uri_is_remote(uri) && !strcmp(what, "plan"))
		return xstrdup(PLAN_LOCK);
	for (const char *p = uri; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return xstrfmt("/var/tmp/klab-guest-%s-%016llx.lock", what, (unsigned long long)h);
}

static int lock_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);

	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	fchmod(fd, 0666);
	if (flock(fd, LOCK_EX) < 0) {
		close(fd);
		return error("cannot lock '%s': %s", path, strerror(errno));
	}
	return fd;
}

static int host_lock(const char *uri, const char *what)
{
	char *path = host_lock_path(uri, what);
	int fd = lock_file(path);

	free(path);
	return fd;
}

static int plan_lock(void)
{
	return lock_file(PLAN_LOCK);
}

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
	fd = host_lock(ge->vm.uri, "upload");
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

/* Connect to `uri` (a registered host when h != NULL): orphans, topology,
 * accelerator, CPUs allowed, and the kernel and initramfs where it can
 * read them. */
static int attach(struct guest_env *ge, const char *uri, const struct db_host *h)
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
	if (vm_connect(&ge->vm, uri) < 0)
		return -1;
	/* Orphans are recognised by lab path and owner pid, both of this
	 * machine: on another host they could be another machine's guests
	 * (there START_AUTODESTROY ends a dead klab's guests anyway). */
	if (!vm_uri_is_remote(uri) && vm_clean_orphans(&ge->vm, ge->lab->state_dir) < 0)
		goto cleanup;
	if (vm_capabilities(&ge->vm, &caps) < 0 || topology_parse(&ge->topo, caps, strlen(caps)) < 0)
		goto cleanup;
	if (vm_choose_accel(&ge->topo, choice, &ge->accel, &ge->accel_why) < 0)
		goto cleanup;
	if (host_file(ge, ge->local_kernel, &ge->kernel) < 0 || host_file(ge, ge->local_initrd, &ge->initrd) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	free(caps);
	return ret;
}

/* CPUs of `t` klab may use (in `allowed`; NULL: all), and how many of
 * them no running klab guest holds (`busy`). */
static void count_cpus(const struct host_topology *t, const unsigned char *allowed, size_t nr_allowed,
		       const unsigned char *busy, size_t nr_busy, size_t *usable, size_t *free_cpus)
{
	*usable = *free_cpus = 0;
	for (size_t i = 0; i < t->nr_cpus; i++) {
		size_t id = (size_t)t->cpus[i].id;
		if (allowed && (id >= nr_allowed || !allowed[id]))
			continue;
		(*usable)++;
		if (id >= nr_busy || !busy[id])
			(*free_cpus)++;
	}
}

/* Can host h take one more guest of the job's shape now?  1 yes, 0 no
 * (*why says why), -1 it does not answer.  c/t: a connection and
 * topology of the host. */
static int host_fits(const struct guest_env *ge, const struct db_host *h, struct vm_conn *c,
		     const struct host_topology *t, const unsigned char *allowed, size_t nr_allowed,
		     unsigned char **busy, size_t *nr_busy, struct strbuf *why)
{
	size_t usable, free_cpus;
	int count;

	*busy = NULL;
	*nr_busy = 0;
	if (vm_klab_guests(c, allowed, nr_allowed, busy, nr_busy, &count) < 0) {
		strbuf_addf(why, "%s (does not answer)", h->name);
		return -1;
	}
	count_cpus(t, allowed, nr_allowed, *busy, *nr_busy, &usable, &free_cpus);
	if (usable < ge->job->guest.vcpus) {
		strbuf_addf(why, "%s (never: %zu CPU%s for %u vCPUs)", h->name, usable, usable == 1 ? "" : "s",
			    ge->job->guest.vcpus);
		return 0;
	}
	if ((unsigned)count >= h->max_guests) {
		strbuf_addf(why, "%s (%d of %u guests)", h->name, count, h->max_guests);
		return 0;
	}
	if (free_cpus < ge->job->guest.vcpus) {
		strbuf_addf(why, "%s (%zu free CPU%s, %u needed)", h->name, free_cpus, free_cpus == 1 ? "" : "s",
			    ge->job->guest.vcpus);
		return 0;
	}
	return 1;
}

/* Check host i without attaching to it (a connection of its own). */
static int host_fits_fresh(const struct guest_env *ge, size_t i, struct strbuf *why)
{
	const struct db_host *h = &ge->hosts[i];
	struct vm_conn c;
	struct host_topology t = { 0 };
	unsigned char *allowed = NULL, *busy = NULL;
	size_t nr_allowed = 0, nr_busy = 0;
	char *caps = NULL;
	int rc = -1;

	if (h->cpus && cpulist_parse(h->cpus, &allowed, &nr_allowed) < 0)
		return -1;
	if (vm_connect_quiet(&c, h->uri) < 0) {
		strbuf_addf(why, "%s (does not answer)", h->name);
		free(allowed);
		return -1;
	}
	if (vm_capabilities(&c, &caps) == 0 && topology_parse(&t, caps, strlen(caps)) == 0)
		rc = host_fits(ge, h, &c, &t, allowed, nr_allowed, &busy, &nr_busy, why);
	else
		strbuf_addf(why, "%s (no topology)", h->name);
	free(caps);
	free(busy);
	free(allowed);
	topology_release(&t);
	vm_disconnect(&c);
	return rc;
}

static void say_waiting(struct guest_env *ge, const struct strbuf *why)
{
	if (ge->waiting && !strcmp(ge->waiting, why->buf))
		return;
	free(ge->waiting);
	ge->waiting = xstrdup(why->buf);
	fprintf(stderr, "waiting for a host (every %d s): %s\n", HOST_WAIT_S, why->buf);
}

/* Attach to the first host that fits now, skipping `skip` (the full one
 * attached); 1 attached, 0 none fits (*why lists them), -1 error. */
static int host_pick(struct guest_env *ge, size_t skip, struct strbuf *why)
{
	int never = 1, answered = 0;

	for (size_t i = 0; i < ge->nr_hosts; i++) {
		size_t before = why->len;
		int rc;
		if (i == skip)
			continue;
		if (why->len)
			strbuf_addstr(why, ", ");
		rc = host_fits_fresh(ge, i, why);
		if (rc >= 0)
			answered++;
		if (rc != 0 || !strstr(why->buf + before, "(never:"))
			never = 0;
		if (rc == 1) {
			if (attach(ge, ge->hosts[i].uri, &ge->hosts[i]) < 0)
				return -1;
			ge->host = i;
			return 1;
		}
	}
	if (skip != (size_t)-1)
		return 0;
	/* nothing to wait for: a shape no host fits, or no host answering */
	if (!answered)
		return error("no host answers: %s", why->buf);
	if (never)
		return error("no host can take a guest of %u vCPUs: %s", ge->job->guest.vcpus, why->buf);
	return 0;
}

static int choose_hosts(struct guest_env *ge, const struct guest_env_opts *o)
{
	struct db_host one;
	int rc;

	if (o->uri)
		return 0;	/* --uri: that libvirt, no placement */
	if (o->host) {
		rc = db_host_find(ge->lab->db, o->host, &one);
		if (rc == 0)
			error("--host '%s': no such host (see 'klab host list')", o->host);
		if (rc <= 0)
			return -1;
		ge->hosts = xcalloc(1, sizeof(*ge->hosts));
		ge->hosts[0] = one;
		ge->nr_hosts = 1;
		ge->host_fixed = 1;
		return 0;
	}
	if (db_hosts_list(ge->lab->db, &ge->hosts, &ge->nr_hosts) < 0)
		return -1;
	for (size_t i = 0; o->prefer_host_id && i < ge->nr_hosts; i++)
		if (ge->hosts[i].id == o->prefer_host_id) {
			/* like-for-like: a resumed bisection stays where it ran */
			struct db_host keep = ge->hosts[i];
			memset(&ge->hosts[i], 0, sizeof(keep));
			db_hosts_free(ge->hosts, ge->nr_hosts);
			ge->hosts = xcalloc(1, sizeof(*ge->hosts));
			ge->hosts[0] = keep;
			ge->nr_hosts = 1;
			ge->host_fixed = 1;
			break;
		}
	return 0;
}

int guest_env_prepare(struct guest_env *ge, struct lab *lab, const struct job *job,
		      const struct guest_env_opts *o)
{
	enum accel_choice choice;
	struct strbuf conf = STRBUF_INIT, cmd = STRBUF_INIT;
	int ret = -1, marked;

	memset(ge, 0, sizeof(*ge));
	ge->lab = lab;
	ge->job = job;
	ge->pin = !o->no_pin;
	ge->quiet = o->quiet;
	ge->accel_opt = o->accel;
	if (accel_choice_parse(o->accel ? o->accel : lab->accel, &choice) < 0)
		return -1;
	if (lab->guest_cpus && cpulist_parse(lab->guest_cpus, &ge->allowed, &ge->nr_allowed) < 0)
		return error("guest_cpus in %s: not a CPU list", lab->config_path);
	/* boots a dead klab left running say so before new ones start */
	if (choose_hosts(ge, o) < 0 || db_boots_interrupted(lab->db, &marked) < 0)
		goto cleanup;

	if (guestimg_image_dir(lab, &ge->image_dir) < 0 ||
	    guestimg_stage_kernel(ge->image_dir, o->kernel, &ge->local_kernel) < 0 ||
	    guestimg_base(ge->image_dir, &ge->base_image, &ge->base_hit) < 0)
		goto cleanup;
	if (job_agent_conf(job, job->guest.vcpus, &conf) < 0 ||
	    guestimg_initrd(ge->image_dir, ge->base_image, conf.buf, conf.len, &ge->local_initrd) < 0)
		goto cleanup;

	if (!ge->nr_hosts) {
		if (attach(ge, o->uri ? o->uri : lab->libvirt_uri, NULL) < 0)
			goto cleanup;
	} else {
		for (;;) {
			struct strbuf why = STRBUF_INIT;
			int rc = host_pick(ge, (size_t)-1, &why);
			if (rc == 0)
				say_waiting(ge, &why);
			strbuf_release(&why);
			if (rc < 0)
				goto cleanup;
			if (rc > 0)
				break;
			sleep(HOST_WAIT_S);
		}
	}

	/* panic=-1: a panicking guest reboots at once, and on_reboot=destroy
	 * ends it; the console keeps the panic text. */
	strbuf_addstr(&cmd, "console=ttyS0 panic=-1");
	if (o->extra_cmdline && *o->extra_cmdline)
		strbuf_addf(&cmd, " %s", o->extra_cmdline);
	ge->cmdline = strbuf_detach(&cmd, NULL);
	/* TCG boots a few seconds on an idle host, but these hosts are shared. */
	ge->boot_timeout_ms = o->boot_timeout_ms ? o->boot_timeout_ms
			    : ge->accel == ACCEL_KVM ? 60000 : 180000;
	/* The agent kills the benchmark at the job's timeout; this is the
	 * host's own limit beyond it. */
	ge->run_timeout_ms = o->run_timeout_ms ? o->run_timeout_ms : ((int64_t)job->runtime_s * 2 + 180) * 1000;
	ret = 0;
cleanup:
	strbuf_release(&conf);
	if (ret < 0)
		guest_env_release(ge);
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
	return 0;
}

int64_t guest_env_host_id(const struct guest_env *ge)
{
	return ge->nr_hosts ? ge->hosts[ge->host].id : 0;
}

const char *guest_env_host_name(const struct guest_env *ge)
{
	return ge->nr_hosts ? ge->hosts[ge->host].name : NULL;
}

void guest_env_release(struct guest_env *ge)
{
	vm_disconnect(&ge->vm);
	topology_release(&ge->topo);
	free(ge->allowed);
	free(ge->image_dir);
	free(ge->base_image);
	free(ge->initrd);
	free(ge->kernel);
	free(ge->local_kernel);
	free(ge->local_initrd);
	free(ge->cmdline);
	free(ge->waiting);
	db_hosts_free(ge->hosts, ge->nr_hosts);
	memset(ge, 0, sizeof(*ge));
}

/* Under the attached host's plan lock, with room for one more guest:
 * the lock fd, and the busy CPUs to plan around.  Waits while the host is
 * full; before the first boot a full host is traded for one that fits
 * (the run set follows). */
static int host_acquire(struct guest_env *ge, int64_t run_set_id, unsigned char **busy, size_t *nr_busy)
{
	for (;;) {
		struct strbuf why = STRBUF_INIT;
		const struct db_host *h = &ge->hosts[ge->host];
		int fd = host_lock(ge->vm.uri, "plan"), rc;

		if (fd < 0)
			return -1;
		rc = host_fits(ge, h, &ge->vm, &ge->topo, ge->allowed, ge->nr_allowed, busy, nr_busy, &why);
		if (rc == 1) {
			strbuf_release(&why);
			return fd;
		}
		close(fd);
		free(*busy);
		*busy = NULL;
		if (!ge->host_fixed && !ge->nr_boots && ge->nr_hosts > 1) {
			size_t was = ge->host;
			rc = host_pick(ge, ge->host, &why);
			if (rc < 0) {
				strbuf_release(&why);
				return -1;
			}
			if (rc > 0) {
				if (!ge->quiet)
					fprintf(stderr, "host %s is full: the guests go to %s (%s)\n", ge->hosts[was].name,
						ge->hosts[ge->host].name, ge->vm.uri);
				strbuf_release(&why);
				if (run_set_id && db_run_set_set_host(ge->lab->db, run_set_id, ge->vm.uri, ge->vm.hostname,
								      accel_name(ge->accel)) < 0)
					return -1;
				continue;
			}
		}
		say_waiting(ge, &why);
		strbuf_release(&why);
		sleep(HOST_WAIT_S);
		if (vm_ensure_connected(&ge->vm) < 0)
			return -1;
	}
}

/* Without registered hosts: the machine-wide plan lock, once the CPUs
 * klab may use have room for the guest beside the other klab guests
 * running (another run, a test suite's other tests); until then it waits
 * with one line.  A guest that could never fit is left to topology_plan
 * to refuse. */
static int plan_lock_free_cpus(struct guest_env *ge, unsigned char **busy, size_t *nr_busy)
{
	int said = 0;

	for (;;) {
		size_t usable, free_cpus;
		int fd = plan_lock();

		if (fd < 0)
			return -1;
		if (vm_busy_cpus(&ge->vm, busy, nr_busy) < 0) {
			close(fd);
			return -1;
		}
		count_cpus(&ge->topo, ge->allowed, ge->nr_allowed, *busy, *nr_busy, &usable, &free_cpus);
		if (usable < ge->job->guest.vcpus || free_cpus >= ge->job->guest.vcpus)
			return fd;
		close(fd);
		free(*busy);
		*busy = NULL;
		*nr_busy = 0;
		if (!said && !ge->quiet)
			fprintf(stderr, "waiting for CPUs (every %d s): %zu of %zu free beside other klab guests, "
				"%u needed\n", HOST_WAIT_S, free_cpus, usable, ge->job->guest.vcpus);
		else if (!said)
			fprintf(stderr, "  waiting for CPUs: other klab guests use them\n");
		said = 1;
		sleep(HOST_WAIT_S);
		if (vm_ensure_connected(&ge->vm) < 0)
			return -1;
	}
}

void guest_result_release(struct guest_result *res)
{
	free(res->reason);
	free(res->excerpt);
	free(res->kernel_release);
	free(res->pinning);
	free(res->raw_path);
	free(res->console_path);
	result_metrics_free(res->metrics, res->nr_metrics);
	memset(res, 0, sizeof(*res));
}

struct phase_ctx {
	const struct guest_env *ge;
	const char *label;
	int plan_fd;
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
		if (!strcmp(m->phase, "before") || !strcmp(m->phase, "after")) {
			ALLOC_GROW(*mons, *nr_mons + 1, alloc);
			(*mons)[(*nr_mons)++] = (struct db_mon){ m->source, m->name, m->phase, m->value };
			if (!strcmp(m->phase, "after") && strcmp(m->source, "meminfo")) {
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
	ret = write_file_atomic(path, sb.buf, sb.len);
	strbuf_release(&sb);
	return ret;
}

int guest_run_once(struct guest_env *ge, int64_t run_set_id, int64_t build_id, int64_t step_id,
		   unsigned iteration, const char *label, struct guest_result *res)
{
	const struct job *job = ge->job;
	struct guest_shape shape = { job->guest.vcpus, job->guest.numa_nodes, job->guest.memory_mb };
	struct guest_plan plan = { 0 };
	struct domain_spec spec = { 0 };
	struct strbuf xml = STRBUF_INIT;
	struct phase_ctx pc = { ge, label, -1 };
	struct vm_run_opts vo = { 0 };
	struct vm_run vr;
	struct db_boot boot = { 0 };
	struct db_boot_end end = { 0 };
	struct db_run run = { 0 };
	struct db_mon *mons = NULL;
	struct db_sample *samples = NULL, *ts = NULL;
	char **ts_names = NULL, *name = NULL, *dir = NULL, *plan_text = NULL, *genv = NULL;
	unsigned char *busy = NULL;
	size_t nr_busy = 0, nr_mons = 0, nr_ts = 0, nr_names = 0;
	int have_vr = 0, ret = -1;
	int64_t started = now_s();

	memset(res, 0, sizeof(*res));
	res->outcome = VM_ERROR;
	if (vm_ensure_connected(&ge->vm) < 0)
		return -1;
	if (ge->nr_hosts) {
		pc.plan_fd = host_acquire(ge, run_set_id, &busy, &nr_busy);
		if (pc.plan_fd < 0)
			return -1;
	} else {
		pc.plan_fd = plan_lock_free_cpus(ge, &busy, &nr_busy);
		if (pc.plan_fd < 0)
			return -1;
	}
	if (topology_plan(&plan, &ge->topo, &shape, ge->allowed, ge->nr_allowed, busy, nr_busy) < 0)
		goto cleanup;
	ge->nr_boots++;
	plan_text = guest_plan_describe(&plan);

	name = xstrfmt("%s%d-%lld", DOMAIN_NAME_PREFIX, (int)getpid(), (long long)now_ms());
	spec.name = name;
	spec.accel = ge->accel;
	spec.kernel = ge->kernel;
	spec.initrd = ge->initrd;
	spec.cmdline = ge->cmdline;
	spec.memory_mb = job->guest.memory_mb;
	spec.plan = &plan;
	spec.pin = ge->pin;
	spec.hugepages = job->guest.hugepages == JOB_HUGEPAGES_2M ? BACKING_2M
		       : job->guest.hugepages == JOB_HUGEPAGES_1G ? BACKING_1G : BACKING_NONE;
	spec.lab_id = ge->lab->state_dir;
	spec.owner_pid = (int)getpid();
	spec.created_s = started;
	if (domain_xml(&spec, &xml) < 0)
		goto cleanup;

	boot.run_set_id = run_set_id;
	boot.build_id = build_id;
	boot.step_id = step_id;
	boot.host_id = guest_env_host_id(ge);
	boot.domain_name = name;
	boot.accel = accel_name(ge->accel);
	boot.pinning = ge->pin ? plan_text : "unpinned";
	boot.vcpus = shape.vcpus;
	boot.numa_nodes = shape.numa_nodes;
	boot.memory_mb = shape.memory_mb;
	dir = run_set_id ? xstrfmt("%s/runs/%lld", ge->lab->state_dir, (long long)run_set_id)
			 : xstrfmt("%s/runs/steps", ge->lab->state_dir);
	if (mkdir_p(dir, 0700) < 0)
		goto cleanup;
	res->console_path = xstrfmt("%s/%u.console", dir, iteration);
	res->raw_path = xstrfmt("%s/%u.out", dir, iteration);
	boot.console_path = res->console_path;
	if (db_boot_begin(ge->lab->db, &boot, &res->boot_id) < 0)
		goto cleanup;

	vo.xml = xml.buf;
	vo.console_path = res->console_path;
	vo.boot_timeout_ms = ge->boot_timeout_ms;
	vo.run_timeout_ms = ge->run_timeout_ms;
	vo.on_phase = on_phase;
	vo.on_created = on_created;
	vo.data = &pc;
	if (vm_boot_and_run(&ge->vm, &vo, &vr) < 0) {
		have_vr = 1;
		end.reason = "klab or libvirt failed (see the error above)";
		db_boot_finish(ge->lab->db, res->boot_id, &end);
		goto cleanup;
	}
	have_vr = 1;
	res->outcome = vr.outcome;
	res->reason = xstrdup(vr.reason);
	res->excerpt = vr.excerpt ? xstrdup(vr.excerpt) : NULL;
	res->hello_ms = vr.hello_ms;
	res->first_output_ms = vr.first_output_ms;
	res->create_ms = vr.create_ms;
	res->total_ms = vr.total_ms;
	res->pinning = xstrdup(vr.pinning ? vr.pinning : "?");
	res->dropped = vr.result.long_lines + vr.result.bad_records;
	if (result_env_get(&vr.result, "kernel"))
		res->kernel_release = xstrdup(result_env_get(&vr.result, "kernel"));

	/* What the guest said is kept even when the run failed. */
	if (vr.result.hello) {
		res->nr_metrics = result_parse_metrics(job->suite, job->testcase, vr.result.out, vr.result.nr_out,
						       &res->metrics);
		if (write_raw(res->raw_path, &vr.result) < 0)
			goto cleanup;
		collect_mons(&vr.result, &mons, &nr_mons, &ts, &nr_ts, &ts_names, &nr_names);
		samples = xcalloc(res->nr_metrics + nr_ts + 1, sizeof(*samples));
		for (size_t i = 0; i < res->nr_metrics; i++)
			samples[i] = (struct db_sample){ res->metrics[i].name, res->metrics[i].seq,
							 res->metrics[i].value };
		if (nr_ts)	/* ts is NULL without series: memcpy(NULL) is undefined even for 0 bytes */
			memcpy(samples + res->nr_metrics, ts, nr_ts * sizeof(*ts));
		run.boot_id = res->boot_id;
		run.step_id = step_id;
		run.job_path = job->path;
		run.job_hash = job->hash;
		run.iteration = iteration;
		run.status = vr.outcome == VM_OK ? "ok" : vr.outcome == VM_TIMEOUT ? "timeout" : "failed";
		run.exit_code = vr.result.exit_status == RESULT_EXIT_EXITED ? vr.result.exit_code : -1;
		run.raw_path = res->raw_path;
		run.started_at = started;
		run.finished_at = now_s();
		run.samples = samples;
		run.nr_samples = res->nr_metrics + nr_ts;
		run.mons = mons;
		run.nr_mons = nr_mons;
		res->nr_mons = nr_mons;
		if (db_run_store(ge->lab->db, &run, &res->run_id) < 0)
			goto cleanup;
	}
	genv = env_text(&vr.result);
	end.outcome = vm_outcome_name(vr.outcome);
	end.reason = vr.reason;
	end.excerpt = vr.excerpt;
	end.kernel_release = res->kernel_release;
	end.guest_env = genv;
	end.pinning = ge->pin ? vr.pinning : NULL;
	end.boot_ms = vr.hello_ms;
	end.create_ms = vr.create_ms;
	end.first_output_ms = vr.first_output_ms;
	if (db_boot_finish(ge->lab->db, res->boot_id, &end) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	if (pc.plan_fd >= 0)
		close(pc.plan_fd);
	if (have_vr)
		vm_run_release(&vr);
	for (size_t i = 0; i < nr_names; i++)
		free(ts_names[i]);
	free(ts_names);
	free(ts);
	free(mons);
	free(samples);
	free(genv);
	free(busy);
	free(name);
	free(dir);
	free(plan_text);
	guest_plan_release(&plan);
	strbuf_release(&xml);
	return ret;
}

/* ---- one job on one kernel, N boots ----------------------------------------- */

int run_job_on_kernel(struct lab *lab, struct job_run *jr)
{
	const struct job *job = jr->job;
	int ret = -1;

	jr->run_set_id = 0;
	jr->nr_done = jr->nr_ok = jr->nr_kpi = 0;
	jr->failure = VM_OK;
	jr->failure_reason = NULL;
	if (guest_env_prepare(&jr->ge, lab, job, jr->geo) < 0)
		return -1;
	{
		struct db_run_set rs = { job->path, job->hash, job->suite, job->testcase, job->kpi, jr->geo->kernel,
					 jr->build_id, jr->commit_hash, jr->ge.vm.uri, jr->ge.vm.hostname,
					 accel_name(jr->ge.accel), jr->boots, jr->track_tip_id };
		if (db_run_set_create(lab->db, &rs, &jr->run_set_id) < 0)
			return -1;
	}
	if (jr->started)
		jr->started(jr, jr->data);
	for (unsigned i = 1; i <= jr->boots; i++) {
		struct guest_result gr;
		char label[64];

		snprintf(label, sizeof(label), "  boot %u/%u: ", i, jr->boots);
		if (guest_run_once(&jr->ge, jr->run_set_id, jr->build_id, 0, i, label, &gr) < 0) {
			guest_result_release(&gr);
			db_run_set_finish(lab->db, jr->run_set_id, "failed");
			return error("run %lld stopped: klab could not run the guest (stored runs are kept)",
				     (long long)jr->run_set_id);
		}
		jr->nr_done++;
		if (gr.outcome == VM_OK) {
			jr->nr_ok++;
			for (size_t m = 0; m < gr.nr_metrics; m++)
				if (!strcmp(gr.metrics[m].name, job->kpi)) {
					jr->nr_kpi++;
					break;
				}
		} else if (!jr->failure_reason) {
			jr->failure = gr.outcome;
			jr->failure_reason = xstrdup(gr.reason ? gr.reason : vm_outcome_name(gr.outcome));
		}
		if (jr->booted)
			jr->booted(jr, i, &gr, jr->data);
		guest_result_release(&gr);
		if (jr->failure_reason && jr->stop_on_failure)
			break;
	}
	ret = 0;
	db_run_set_finish(lab->db, jr->run_set_id, jr->nr_ok == jr->boots ? "done" : "failed");
	return ret;
}

void job_run_release(struct job_run *jr)
{
	guest_env_release(&jr->ge);
	free(jr->failure_reason);
	jr->failure_reason = NULL;
}
