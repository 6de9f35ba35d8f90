/* What only guest.c and placement.c share: the inside of a guest
 * environment, and attaching it to a host. */
#ifndef KLAB_GUEST_INT_H
#define KLAB_GUEST_INT_H

#include "guest/guest.h"
#include "guest/hostcheck.h"

struct db_host;

/* Everything a series of boots of one kernel with one job shares. */
struct guest_env {
	struct lab *lab;
	const struct job *job;
	struct vm_conn vm;
	enum accel accel;
	const char *accel_why;
	struct host_topology topo;
	struct host_fingerprint fp;	/* of the host attached, for the job's guest */
	int fp_stored;			/* fp is in the lab's fingerprints table */
	unsigned char *allowed;	/* lab's guest_cpus, NULL = all */
	size_t nr_allowed;
	int pin;
	char *image_dir, *base_image, *initrd, *kernel;
	char *programs_image;	/* the job's suite's, fs:'s and monitors' programs, or NULL */
	int base_hit;
	char *cmdline;
	int64_t boot_timeout_ms, run_timeout_ms;
	int quiet;
	/* Hosts (klab host): with some registered and no --uri, the guests go
	 * to one of them.  The host is fixed after the first boot (runs are
	 * compared like-for-like); before it, a full host is traded for one
	 * that fits. */
	const char *accel_opt;		/* --accel, NULL: the host's or the lab's */
	struct db_host *hosts;		/* candidates (one with --host or a bisection's) */
	size_t nr_hosts;
	size_t host;			/* index of the host attached */
	int host_fixed;
	/* a resumed bisection's host and its fingerprint there: another host
	 * takes over (own gone, full or removed) only with this fingerprint */
	int64_t own_host_id;
	char *want_fingerprint;
	unsigned nr_boots;
	char *local_kernel, *local_initrd;	/* in image_dir; kernel/initrd are the host's paths */
	char *waiting;			/* the last "waiting for a host" line */
	/* The next boot's guest, made paused while a boot's guest boots when
	 * the caller said which kernel the next boot boots
	 * (guest_env_expect_next; vm.h, "spares"): used by the next boot when
	 * its kernel and CPU plan are the same, else destroyed. */
	char *expect_next;		/* that kernel's bzImage, for one boot */
	char *kernel_source;		/* the bzImage ge->kernel was staged from */
	struct guest_spare {
		void *dom;		/* virDomainPtr, paused; NULL: none */
		char *name, *kernel, *plan, *swap, *scratch;
	} spare;
	int spare_warned;		/* a spare could not be made: said once */
	int spare_late_warned;		/* one was still in the making at a benchmark: said once */
};

/* Connect to `uri` (a registered host when h != NULL): orphans, topology,
 * accelerator, CPUs allowed, and the kernel and initramfs where it can
 * read them.  (guest.c) */
int guest_env_attach(struct guest_env *ge, const char *uri, const struct db_host *h);
/* Store the attached host's fingerprint in the lab, once, before a row
 * names it.  (guest.c) */
int guest_env_store_fingerprint(struct guest_env *ge);

#endif
