/* klab worker: run queued jobs (engine/worker.c does the work). */
#include "cmd/klab.h"
#include "engine/worker.h"
#include "lab/lab.h"
#include "util/util.h"

static const struct opt_usage worker_usage = {
	"worker", NULL,
	"Claim queued jobs and run them, each as a child klab process whose output goes\n"
	"to <state>/logs/queue-ID.log.  SIGTERM or SIGINT: stop the running jobs and hand\n"
	"them back to the queue.",
	"QUEUE"
};

int cmd_worker(int argc, char **argv, const struct global_opts *g)
{
	unsigned long slots = 1, lease = 60;
	int once = 0, ret;
	struct opt opts[] = {
		OPT_BOOL(0, "once", &once, "stop when the queue is empty and the jobs started are done"),
		OPT_UINT(0, "slots", &slots, "N", "jobs at once (default 1; their guests never share CPUs)", 1,
			 WORKER_MAX_SLOTS),
		OPT_UINT_R(0, "lease", &lease, "SEC", "a job not renewed for SEC seconds is claimed again (default 60)",
			   3, 86400, "seconds from 3 to 86400"),
		OPT_END()
	};
	struct worker_opts o;
	struct lab lab;

	argc = parse_options(argc, argv, &worker_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&worker_usage, "worker takes no arguments (got '%s')", argv[0]);
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	o.slots = (unsigned)slots;
	o.lease_s = (int64_t)lease;
	o.once = once;
	ret = worker_run(&lab, &o) < 0 ? EXIT_FAIL : EXIT_OK;
	lab_close(&lab);
	return ret;
}
