/* The queue's worker (worker.c): queued bisections, runs and
 * reproductions claimed and run as child klab processes, with leases so
 * that a dead worker's job is taken over and resumed. */
#ifndef KLAB_WORKER_H
#define KLAB_WORKER_H

#include <stdint.h>

struct lab;

#define WORKER_MAX_SLOTS 64

struct worker_opts {
	unsigned slots;		/* jobs at once, 1 to WORKER_MAX_SLOTS */
	int64_t lease_s;	/* a job not renewed for this long is claimed again */
	int once;		/* stop when the queue is empty and the jobs started are done */
};

/* Claim and run queued jobs until SIGTERM or SIGINT (then the running
 * jobs are stopped and handed back to the queue), or with once until
 * nothing is left.  0, or -1 after error(). */
int worker_run(struct lab *lab, const struct worker_opts *o);
/* Where queued job id's output goes: <state>/logs/queue-ID.log (caller
 * frees). */
char *worker_log_path(const struct lab *lab, int64_t id);

#endif
