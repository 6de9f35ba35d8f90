/* Where a guest goes and which CPUs it gets: the registered hosts (which
 * one fits a guest of the job's shape now), the CPU plan locks (one per
 * machine, one per remote URI) and the wait for room beside the other
 * klab guests.  Works on guest.c's environment (guest-int.h). */
#ifndef KLAB_PLACEMENT_H
#define KLAB_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

struct guest_env;
struct guest_env_opts;
struct strbuf;

/* How long a guest waits between looks for a host or CPUs. */
#define HOST_WAIT_S 3

/* The candidates for ge's guests: none with --uri (that libvirt, no
 * placement), the --host one, a bisection's earlier host, or all. */
int placement_choose_hosts(struct guest_env *ge, const struct guest_env_opts *o);
/* Attach to the first host that fits now, skipping `skip` ((size_t)-1:
 * none); 1 attached, 0 none fits (*why lists them), -1 error (also when
 * none ever fits), -2 no host answers (a host of another fingerprint than
 * the bisection's counts as none): the environment's failure, not klab's.
 * Both after one error line. */
int placement_pick(struct guest_env *ge, size_t skip, struct strbuf *why);
/* "waiting for a host" on stderr, once per different why. */
void placement_say_waiting(struct guest_env *ge, const struct strbuf *why);
/* The plan lock of one boot, with room for it: the lock fd (close it once
 * the domain exists) and the CPUs running klab guests hold (*busy, caller
 * frees).  With hosts: the attached host's lock, waiting while it is
 * full (before the first boot a full host is traded for one that fits,
 * of the bisection's fingerprint when it has one, and run set run_set_id
 * follows); without: the machine-wide one. */
int placement_lock_for_boot(struct guest_env *ge, int64_t run_set_id, unsigned char **busy, size_t *nr_busy);
/* The lock `what` ("plan", "upload") of the host at `uri`: fd, or -1. */
int placement_host_lock(const char *uri, const char *what);

#endif
