/* Where a guest goes: which registered host fits the job's shape now,
 * and the CPU plan locks under which a boot picks its CPUs. */
#include "guest/placement.h"
#include "guest/guest-int.h"
#include "lab/db.h"
#include "job/job.h"
#include "lab/lab.h"
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

/* Guests of every lab on this machine plan CPUs under one lock, so two
 * klab processes never pick the same free CPU.  A remote host has a lock
 * of its own, keyed by its URI (klab processes of this machine only). */
#define PLAN_LOCK "/var/tmp/klab-guest-plan.lock"

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

int placement_host_lock(const char *uri, const char *what)
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
	if (vm_connect_timed(&c, h->uri, HOST_ANSWER_S, 0) < 0) {
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

void placement_say_waiting(struct guest_env *ge, const struct strbuf *why)
{
	if (ge->waiting && !strcmp(ge->waiting, why->buf))
		return;
	free(ge->waiting);
	ge->waiting = xstrdup(why->buf);
	fprintf(stderr, "waiting for a host (every %d s): %s\n", HOST_WAIT_S, why->buf);
}

int placement_pick(struct guest_env *ge, size_t skip, struct strbuf *why)
{
	int never = 1, answered = 0, first = 1;

	for (size_t i = 0; i < ge->nr_hosts; i++) {
		size_t before = why->len;
		int rc;
		if (i == skip)
			continue;
		if (why->len)
			strbuf_addstr(why, ", ");
		rc = host_fits_fresh(ge, i, why);
		if (i == 0)
			first = rc;
		if (rc == 1) {
			/* not the bisection's own host: its fingerprint decides */
			int other = ge->want_fingerprint && ge->hosts[i].id != ge->own_host_id;

			if (guest_env_attach(ge, ge->hosts[i].uri, &ge->hosts[i]) < 0)
				return -1;
			if (other && guest_env_fingerprint(ge) && strcmp(guest_env_fingerprint(ge), ge->want_fingerprint)) {
				/* runs there would not be like the earlier ones:
				 * as good as a host that does not answer */
				strbuf_addf(why, "%s (another fingerprint)", ge->hosts[i].name);
				vm_disconnect(&ge->vm);
				continue;
			}
			if (other) {
				int own = ge->hosts[0].id == ge->own_host_id;

				fprintf(stderr, "the bisection's host%s%s cannot take the guest (%s): it goes to %s, "
					"a host of the same fingerprint %.12s\n", own ? " " : "",
					own ? ge->hosts[0].name : "",
					!own ? "it was removed" : first < 0 ? "it does not answer" : "no room for it now",
					ge->hosts[i].name, ge->want_fingerprint);
			}
			ge->host = i;
			return 1;
		}
		if (rc >= 0)
			answered++;
		if (rc != 0 || !strstr(why->buf + before, "(never:"))
			never = 0;
	}
	if (skip != (size_t)-1)
		return 0;
	/* nothing to wait for: a shape no host fits, or no host answering */
	if (!answered) {
		error("no host %sanswers: %s", ge->want_fingerprint ? "of the bisection's fingerprint " : "", why->buf);
		return -2;
	}
	if (never)
		return error("no host can take a guest of %u vCPUs: %s", ge->job->guest.vcpus, why->buf);
	return 0;
}

int placement_choose_hosts(struct guest_env *ge, const struct guest_env_opts *o)
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
	if (!o->prefer_host_id)
		return 0;
	/* like-for-like: a resumed bisection stays where it ran, or, when
	 * that host cannot take the guest (gone, full, removed), goes to one
	 * of the same fingerprint (placement_pick checks it); a removed host
	 * without a fingerprint: any host, as before fingerprints */
	ge->own_host_id = o->prefer_host_id;
	if (o->prefer_fingerprint) {
		ge->want_fingerprint = xstrdup(o->prefer_fingerprint);
		ge->host_fixed = 1;
	}
	for (size_t i = 0; i < ge->nr_hosts; i++)
		if (ge->hosts[i].id == o->prefer_host_id) {
			struct db_host keep = ge->hosts[i];
			memmove(&ge->hosts[1], &ge->hosts[0], i * sizeof(keep));
			ge->hosts[0] = keep;
			if (!o->prefer_fingerprint) {
				for (size_t j = 1; j < ge->nr_hosts; j++)
					db_host_release(&ge->hosts[j]);
				ge->nr_hosts = 1;
			}
			ge->host_fixed = 1;
			return 0;
		}
	return 0;
}

/* Under the attached host's plan lock, with room for one more guest:
 * the lock fd, and the busy CPUs to plan around.  Waits while the host is
 * full; before the first boot a full host is traded for one that fits
 * (the run set follows), a bisection's only for one of the same
 * fingerprint (placement_pick checks it). */
static int host_acquire(struct guest_env *ge, int64_t run_set_id, unsigned char **busy, size_t *nr_busy)
{
	for (;;) {
		struct strbuf why = STRBUF_INIT;
		const struct db_host *h = &ge->hosts[ge->host];
		int fd = placement_host_lock(ge->vm.uri, "plan"), rc;

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
		/* a bisection's host (host_fixed) gives way only to one of its
		 * fingerprint: the slots of a multisection round spread so */
		if ((!ge->host_fixed || ge->want_fingerprint) && !ge->nr_boots && ge->nr_hosts > 1) {
			size_t was = ge->host;
			rc = placement_pick(ge, ge->host, &why);
			if (rc < 0) {
				strbuf_release(&why);
				return -1;
			}
			if (rc > 0) {
				if (!ge->quiet)
					fprintf(stderr, "host %s is full: the guests go to %s (%s)\n", ge->hosts[was].name,
						ge->hosts[ge->host].name, ge->vm.uri);
				strbuf_release(&why);
				if (run_set_id && (guest_env_store_fingerprint(ge) < 0 ||
						   db_run_set_set_host(ge->lab->db, run_set_id, ge->vm.uri,
								       ge->vm.hostname, accel_name(ge->accel),
								       guest_env_fingerprint(ge)) < 0))
					return -1;
				continue;
			}
		}
		placement_say_waiting(ge, &why);
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

int placement_lock_for_boot(struct guest_env *ge, int64_t run_set_id, unsigned char **busy, size_t *nr_busy)
{
	if (ge->nr_hosts)
		return host_acquire(ge, run_set_id, busy, nr_busy);
	return plan_lock_free_cpus(ge, busy, nr_busy);
}
