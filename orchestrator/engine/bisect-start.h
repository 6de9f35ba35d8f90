/* Starting a bisection, for every command that starts one (bisect start,
 * reproduce --bisect, submit bisect, track's queued regressions): what
 * it is checked against the lab and its repository, created, queued for
 * a worker or run to its end with the right tester. */
#ifndef KLAB_BISECT_START_H
#define KLAB_BISECT_START_H

#include <stddef.h>
#include <stdint.h>

#include "core/bisect.h"
#include "job/job.h"
#include "lab/gitrepo.h"

struct bisection;
struct lab;

/* A bisection to start, as a command was told it. */
struct bisect_request {
	const char *repo;			/* the repository, as given */
	const char *bad;			/* revisions, as given */
	const char *const *goods;
	size_t nr_goods;
	int first_parent;
	const char *const *paths;		/* relative to the repository's top */
	size_t nr_paths;
	int64_t timeout_ms;			/* a test command's (0: none) */
	const char *recipe_text;		/* built first with this recipe (NULL: no build) */
	char **argv;				/* the test command ... */
	size_t argc;
	const struct job *job;			/* ... or a job bisection's job */
	const char *job_path, *job_text;	/* its absolute path and text */
	const char *kpi;			/* the metric that decides (a job's) */
	unsigned slots;				/* commits tested at once (1: plain) */
	unsigned max_runs;			/* a job's cap of runs (0: the job's) */
	int revert_check;			/* a confirmed culprit gets one */
	int64_t queue_id;			/* the queued job running it (0: none) */
};

/* The range a created bisection was checked with, kept for its first run
 * so that it is not walked twice. */
struct bisect_range {
	struct bisect_dag dag;
	struct range_info info;
	int loaded;
};
void bisect_range_release(struct bisect_range *r);

/* A job bisection's job file: parsed, its text and its absolute path
 * (what the bisection stores).  -1 after error(). */
struct bisect_job {
	struct job job;
	char *path, *text;
	int parsed;
};
int bisect_job_load(struct bisect_job *bj, const char *file);
void bisect_job_release(struct bisect_job *bj);

/* Check rq against the lab and the repository (the guests of a job, the
 * revisions, the range: same commits, swapped ends, nothing between,
 * paths no commit touches are refused), then create the bisection and
 * print its line ("bisection N: ..."); linked at once to rq->queue_id.
 * *id: its id.  -1 after error(), nothing stored. */
int bisect_create(struct lab *lab, const struct bisect_request *rq, struct bisect_range *range, int64_t *id);
/* The same checks, then the bisection created and queued for a worker
 * in one transaction ("job N queued: ...").  -1 after error(). */
int bisect_queue_request(struct lab *lab, const struct bisect_request *rq);
/* Bisection b (repo_id, bad, goods, ... filled in; b->id set here)
 * created and queued for a worker, as 'klab submit bisect' does; track
 * queues its regressions so.  -1 after error(). */
int bisection_queue(struct lab *lab, struct bisection *b, unsigned slots, int revert_check, unsigned max_runs,
		    int64_t *queue_id);

/* Run (or continue) bisection id to its end: its lock, a worktree no
 * other klab process uses, the tester its kind needs.  range: what
 * bisect_create checked (the caller releases it), or NULL.  An exit status: EXIT_OK
 * culprit, EXIT_UNDECIDED, EXIT_UNCONFIRMED, EXIT_FAIL. */
int bisection_run(struct lab *lab, int64_t id, struct bisect_range *range);

#endif
