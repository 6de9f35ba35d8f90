/* The queue: 'klab submit' checks a bisection, run or reproduction as the
 * direct command would and stores it in the lab database; 'klab worker'
 * runs queued work; 'klab status', 'log', 'cancel' and 'retry' look after
 * it.
 *
 * A worker runs each job as a child process ('klab bisect resume ID',
 * 'klab run ARGS' or 'klab reproduce --queue-job ID ARGS') in its own
 * process group that dies with the worker
 * (PR_SET_PDEATHSIG; the child's own supervisors and libvirt's
 * AUTODESTROY take its builds and guests down with it).  The job's lease
 * is renewed while it runs: a job whose worker died is claimed again once
 * the lease has run out, and a bisection then resumes from its last
 * recorded step.  Every result is stored by the child as it is measured;
 * the queue only records who runs what and how it ended. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/klab.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_SLOTS 64
#define LOG_CHUNK 65536

static const char *const submit_usage[] = {
	"usage: klab submit bisect ARGS...   (the arguments of 'klab bisect start')",
	"   or: klab submit run ARGS...      (the arguments of 'klab run')",
	"   or: klab submit reproduce ARGS...  (the arguments of 'klab reproduce')",
	"",
	"Check everything the command needs now, as the command itself does",
	"(repository, revisions, job file and whether it fits its guest, kernel",
	"image, accelerator, libvirt URI, config options; a report is parsed and",
	"its job checked), store it in the lab's queue and print the job id.  A",
	"queued reproduction reads its report file again when it runs (not",
	"stdin); 'klab status' shows its verdict and the bisection --bisect",
	"started.",
	"A 'klab worker' runs it; 'klab status', 'klab log ID -f', 'klab cancel ID'",
	"and 'klab retry ID' follow it.  Relative paths are taken from the current",
	"directory.",
	NULL
};

static const char *const worker_usage[] = {
	"usage: klab worker [--once] [--slots N] [--lease SEC]",
	"",
	"Claim queued jobs and run them, each as a child klab process whose output",
	"goes to <state>/logs/queue-ID.log.",
	"  --once       stop when the queue is empty and the jobs started are done",
	"  --slots N    jobs at once (default 1; guests of concurrent jobs never",
	"               share host CPUs)",
	"  --lease SEC  a job whose worker stops renewing for SEC seconds (it was",
	"               killed, the machine died) is claimed again by the next",
	"               worker; a bisection resumes from its last recorded step",
	"               (default 60)",
	"SIGTERM or SIGINT: stop the running jobs and hand them back to the queue.",
	NULL
};

static const char *const joblog_usage[] = {
	"usage: klab log [-f|--follow] ID",
	"",
	"The output of queued job ID (a job id from 'klab status') so far;",
	"-f follows it until the job has ended.",
	NULL
};

static const char *const cancel_usage[] = {
	"usage: klab cancel ID",
	"",
	"Stop queued or running job ID (a job id from 'klab status'): a running",
	"job is stopped by its worker within seconds; its results are kept.",
	NULL
};

static const char *const retry_usage[] = {
	"usage: klab retry ID",
	"",
	"Queue failed or cancelled job ID (a job id from 'klab status') again; a",
	"bisection continues from its last recorded step.",
	NULL
};

static const char *const status_usage[] = {
	"usage: klab status [ID] [--json]",
	"",
	"The queue: one line per job (id, kind, state, attempts, worker, age, what),",
	"or one job in detail.  --json prints the same as a JSON document.",
	NULL
};

/* ---- submit ------------------------------------------------------------- */

int cmd_submit(int argc, char **argv, const struct global_opts *g)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(submit_usage, argc < 2);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (!strcmp(argv[1], "bisect"))
		return bisect_submit(argc - 1, argv + 1, g);
	if (!strcmp(argv[1], "run"))
		return run_submit(argc - 1, argv + 1, g);
	if (!strcmp(argv[1], "reproduce"))
		return reproduce_submit(argc - 1, argv + 1, g);
	error("submit: unknown kind '%s' (bisect, run or reproduce)", argv[1]);
	return EXIT_USAGE;
}

/* ---- worker ------------------------------------------------------------- */

struct slot {
	pid_t pid;		/* 0: free */
	struct queue_job job;
	int cancelled;		/* stopped because of 'klab cancel' */
	int64_t kill_at;	/* SIGKILL the group after this (ms), 0 = not asked */
};

struct worker {
	struct lab *lab;
	char name[128];
	char self[4096];
	unsigned nr_slots;
	int64_t lease_s;
	struct slot slots[MAX_SLOTS];
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static char *job_log_path(struct lab *lab, int64_t id)
{
	return xstrfmt("%s/logs/queue-%lld.log", lab->state_dir, (long long)id);
}

/* A line in the job's log from the worker itself. */
static void log_line(struct lab *lab, int64_t id, const char *fmt, ...) KLAB_PRINTF(3, 4);
static void log_line(struct lab *lab, int64_t id, const char *fmt, ...)
{
	char *path = job_log_path(lab, id), stamp[32];
	FILE *f = fopen(path, "a");
	time_t t = time(NULL);
	struct tm tm;
	va_list ap;

	free(path);
	if (!f)
		return;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(f, "== %s UTC: ", stamp);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* The child: its own process group, killed with the worker, output to the
 * job's log, then klab itself with the job's arguments (argv, no shell). */
static pid_t spawn_job(struct worker *w, const struct queue_job *j)
{
	char *log = job_log_path(w->lab, j->id), id[32], qid[32];
	const char **argv;
	size_t n = 0;
	pid_t parent = getpid(), pid;

	snprintf(id, sizeof(id), "%lld", (long long)j->bisection_id);
	snprintf(qid, sizeof(qid), "%lld", (long long)j->id);
	argv = xcalloc(j->nr_args + 8, sizeof(char *));
	argv[n++] = "klab";
	argv[n++] = "--state";
	argv[n++] = w->lab->state_dir;
	if (j->kind_id == QUEUE_BISECT) {
		argv[n++] = "bisect";
		argv[n++] = "resume";
		argv[n++] = id;
	} else {
		/* run, or reproduce told which job it is (its verdict and
		 * bisection go on the job's row) */
		if (j->kind_id == QUEUE_REPRODUCE) {
			argv[n++] = "reproduce";
			argv[n++] = "--queue-job";
			argv[n++] = qid;
		} else {
			argv[n++] = "run";
		}
		for (size_t i = 1; i < j->nr_args; i++)
			argv[n++] = j->args[i];
	}
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		error("cannot fork: %s", strerror(errno));
	} else if (pid == 0) {
		int fd;
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 0);
			close(fd);
		}
		if (j->nr_args && j->args[0][0] && chdir(j->args[0]) < 0) {
			fprintf(stderr, "klab: worker: cannot enter the submitter's directory %s: %s\n", j->args[0],
				strerror(errno));
			_exit(1);
		}
		setenv("KLAB_QUEUE_JOB", id, 1);
		execv(w->self, (char *const *)argv);
		fprintf(stderr, "klab: worker: cannot run %s: %s\n", w->self, strerror(errno));
		_exit(127);
	} else {
		setpgid(pid, pid);	/* both sides: no race with kill(-pid) */
	}
	free(argv);
	free(log);
	return pid;
}

static int claim_one(struct worker *w, struct slot *s)
{
	int rc = db_queue_claim(w->lab->db, w->name, w->lease_s, &s->job);

	if (rc <= 0)
		return rc;
	if (s->job.kind_id != QUEUE_BISECT && s->job.kind_id != QUEUE_RUN && s->job.kind_id != QUEUE_REPRODUCE) {
		/* a kind a newer klab queued */
		db_queue_finish(w->lab->db, s->job.id, w->name, QUEUE_FAILED, "this klab's worker cannot run it");
		queue_job_release(&s->job);
		return 1;
	}
	log_line(w->lab, s->job.id, "attempt %d by worker %s", s->job.attempts, w->name);
	s->cancelled = 0;
	s->kill_at = 0;
	s->pid = spawn_job(w, &s->job);
	if (s->pid < 0) {
		s->pid = 0;
		db_queue_finish(w->lab->db, s->job.id, w->name, QUEUE_QUEUED, "the worker could not start it");
		queue_job_release(&s->job);
		return -1;
	}
	printf("worker %s: job %lld (%s%s) started, pid %d, log %s/logs/queue-%lld.log\n", w->name,
	       (long long)s->job.id, s->job.kind, s->job.attempts > 1 ? ", resumed" : "", (int)s->pid,
	       w->lab->state_dir, (long long)s->job.id);
	fflush(stdout);
	return 1;
}

/* A bisection's end as the job's: done or failed when it finished (its
 * message), else how it stopped.  NULL when the row cannot be read. */
static char *bisection_outcome(struct lab *lab, int64_t id, enum queue_state *state)
{
	struct bisection b;
	char *msg;

	if (db_bisection_load(lab->db, id, &b) < 0)
		return NULL;
	if (b.state_id == BISECTION_DONE)
		*state = QUEUE_DONE;
	msg = b.state_id == BISECTION_DONE || b.state_id == BISECTION_FAILED
		      ? xstrdup(b.message ? b.message : b.state)
		      : xstrfmt("bisection %s: %s", b.state, b.message ? b.message : "klab stopped");
	bisection_release(&b);
	return msg;
}

/* A reproduction's end: the verdict its child stored is its result
 * ("not reproduced" is one too, though klab exits 1); the bisection
 * --bisect started decides as a queued bisection's would. */
static char *reproduce_outcome(struct lab *lab, const struct queue_job *j, enum queue_state *state)
{
	struct queue_job now;
	char *msg = NULL;

	if (db_queue_load(lab->db, j->id, &now) < 0)
		return NULL;
	if (now.bisection_id) {
		msg = bisection_outcome(lab, now.bisection_id, state);
		if (*state == QUEUE_DONE && now.message) {
			free(msg);
			msg = xstrdup(now.message);
		}
	} else if (now.message) {
		*state = QUEUE_DONE;
		msg = xstrdup(now.message);
	}
	queue_job_release(&now);
	return msg;
}

/* How a job ended, from what its child stored. */
static void job_ended(struct worker *w, struct slot *s, int status)
{
	struct queue_job *j = &s->job;
	enum queue_state state = QUEUE_FAILED;
	char *msg = NULL;

	if (s->cancelled) {
		if (j->kind_id == QUEUE_REPRODUCE && !j->bisection_id) {
			/* the bisection its child may have started since the claim */
			struct queue_job now;
			if (db_queue_load(w->lab->db, j->id, &now) == 0) {
				j->bisection_id = now.bisection_id;
				queue_job_release(&now);
			}
		}
		if (j->bisection_id)
			db_bisection_enter(w->lab->db, j->bisection_id, BISECTION_STOPPED, BISECTION_NO_RESULT, NULL,
					   "cancelled; 'klab retry' continues it");
		log_line(w->lab, j->id, "cancelled; everything measured so far is kept");
		printf("worker %s: job %lld cancelled\n", w->name, (long long)j->id);
		goto out;
	}
	if (j->kind_id == QUEUE_BISECT)
		msg = bisection_outcome(w->lab, j->bisection_id, &state);
	else if (j->kind_id == QUEUE_REPRODUCE)
		msg = reproduce_outcome(w->lab, j, &state);
	if (!msg && j->kind_id != QUEUE_BISECT && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		state = QUEUE_DONE;
		msg = xstrfmt("%s finished", j->kind);
	}
	if (!msg)
		msg = WIFEXITED(status) ? xstrfmt("klab exited with status %d", WEXITSTATUS(status))
					: xstrfmt("klab was killed by signal %d", WTERMSIG(status));
	if (db_queue_finish(w->lab->db, j->id, w->name, state, msg) == 1) {
		log_line(w->lab, j->id, "%s: %s", queue_state_to_string(state), msg);
		printf("worker %s: job %lld %s: %s\n", w->name, (long long)j->id, queue_state_to_string(state), msg);
	}
out:
	fflush(stdout);
	free(msg);
	queue_job_release(j);
	s->pid = 0;
}

/* Renew the leases; stop a job that was cancelled (or taken over). */
static void watch_jobs(struct worker *w, int renew)
{
	for (unsigned i = 0; i < w->nr_slots; i++) {
		struct slot *s = &w->slots[i];
		struct queue_job now;
		int ours;

		if (!s->pid || s->kill_at)
			continue;
		if (db_queue_load(w->lab->db, s->job.id, &now) < 0)
			continue;
		ours = now.state_id == QUEUE_RUNNING && now.worker && !strcmp(now.worker, w->name);
		s->cancelled = now.state_id == QUEUE_CANCELLED;
		queue_job_release(&now);
		if (ours && renew)
			ours = db_queue_renew(w->lab->db, s->job.id, w->name, w->lease_s) != 0;
		if (!ours) {
			printf("worker %s: job %lld %s: stopping it\n", w->name, (long long)s->job.id,
			       s->cancelled ? "cancelled" : "taken over by another worker");
			fflush(stdout);
			kill(-s->pid, SIGTERM);
			s->kill_at = now_ms() + 10000;
		}
	}
}

static void reap(struct worker *w)
{
	for (unsigned i = 0; i < w->nr_slots; i++) {
		struct slot *s = &w->slots[i];
		int status;
		pid_t p;

		if (!s->pid)
			continue;
		if (s->kill_at && now_ms() > s->kill_at) {
			kill(-s->pid, SIGKILL);
			s->kill_at = now_ms() + 10000;
		}
		p = waitpid(s->pid, &status, WNOHANG);
		if (p == s->pid) {
			kill(-s->pid, SIGKILL);	/* anything it left in its group */
			job_ended(w, s, status);
		}
	}
}

/* SIGTERM: stop every job, hand it back to the queue. */
static void hand_back(struct worker *w)
{
	int64_t deadline = now_ms() + 10000;

	for (unsigned i = 0; i < w->nr_slots; i++)
		if (w->slots[i].pid)
			kill(-w->slots[i].pid, SIGTERM);
	for (unsigned i = 0; i < w->nr_slots; i++) {
		struct slot *s = &w->slots[i];
		int status;
		if (!s->pid)
			continue;
		while (waitpid(s->pid, &status, WNOHANG) == 0) {
			if (now_ms() > deadline) {
				kill(-s->pid, SIGKILL);
				waitpid(s->pid, &status, 0);
				break;
			}
			usleep(100000);
		}
		kill(-s->pid, SIGKILL);
		db_queue_finish(w->lab->db, s->job.id, w->name, QUEUE_QUEUED, "its worker stopped; queued again");
		log_line(w->lab, s->job.id, "worker %s stopped: queued again", w->name);
		printf("worker %s: job %lld handed back to the queue\n", w->name, (long long)s->job.id);
		queue_job_release(&s->job);
		s->pid = 0;
	}
}

int cmd_worker(int argc, char **argv, const struct global_opts *g)
{
	static const struct option opts[] = {
		{ "once", no_argument, NULL, 'o' },
		{ "slots", required_argument, NULL, 's' },
		{ "lease", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct worker *w;
	struct lab lab;
	struct sigaction sa;
	unsigned long v;
	int once = 0, c, idle = 0;
	int64_t last_renew = 0;
	char host[64] = "";
	ssize_t len;

	w = xcalloc(1, sizeof(*w));
	w->nr_slots = 1;
	w->lease_s = 60;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			once = 1;
			break;
		case 's':
			if (parse_uint(optarg, MAX_SLOTS, &v) < 0 || !v) {
				free(w);
				error("--slots takes a number from 1 to %d", MAX_SLOTS);
				return EXIT_USAGE;
			}
			w->nr_slots = (unsigned)v;
			break;
		case 'l':
			if (parse_uint(optarg, 86400, &v) < 0 || v < 3) {
				free(w);
				error("--lease takes seconds from 3 to 86400");
				return EXIT_USAGE;
			}
			w->lease_s = (int64_t)v;
			break;
		case 'h':
			free(w);
			print_usage(worker_usage, 0);
			return EXIT_OK;
		default:
			free(w);
			print_usage(worker_usage, 1);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		free(w);
		error("worker takes no arguments (see 'klab worker --help')");
		return EXIT_USAGE;
	}
	len = readlink("/proc/self/exe", w->self, sizeof(w->self) - 1);
	if (len <= 0) {
		free(w);
		error("cannot find klab's own executable: %s", strerror(errno));
		return EXIT_FAIL;
	}
	w->self[len] = '\0';
	if (open_lab(g, &lab) < 0) {
		free(w);
		return EXIT_FAIL;
	}
	w->lab = &lab;
	gethostname(host, sizeof(host) - 1);
	snprintf(w->name, sizeof(w->name), "%s:%d", host, (int)getpid());
	{
		char *logs = xstrfmt("%s/logs", lab.state_dir);
		mkdir_p(logs, 0700);
		free(logs);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("worker %s: %u slot%s, lease %llds, lab %s\n", w->name, w->nr_slots, w->nr_slots == 1 ? "" : "s",
	       (long long)w->lease_s, lab.state_dir);
	fflush(stdout);

	while (!stop_requested) {
		unsigned busy = 0;
		int renew = now_ms() - last_renew >= w->lease_s * 1000 / 3;

		reap(w);
		watch_jobs(w, renew);
		if (renew)
			last_renew = now_ms();
		for (unsigned i = 0; i < w->nr_slots; i++) {
			struct slot *s = &w->slots[i];
			if (!s->pid && !idle) {
				int rc = claim_one(w, s);
				if (rc == 0)
					idle = 1;
			}
			busy += s->pid != 0;
		}
		if (once && idle && !busy)
			break;
		usleep(200000);
		/* look at the queue again every poll */
		idle = 0;
	}
	if (stop_requested)
		hand_back(w);
	printf("worker %s: stopped\n", w->name);
	lab_close(&lab);
	free(w);
	return EXIT_OK;
}

/* ---- status, log, cancel, retry ----------------------------------------- */

/* A bisection's progress and outcome, one line. */
static char *bisection_what(struct lab *lab, int64_t id)
{
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0, done = 0;
	char *what;

	if (db_bisection_load(lab->db, id, &b) < 0)
		return xstrfmt("bisection %lld (gone)", (long long)id);
	if (db_steps_load(lab->db, b.id, &steps, &nr) == 0)
		for (size_t i = 0; i < nr; i++)
			done += steps[i].status_id == STEP_DONE;
	steps_release(steps, nr);
	what = xstrfmt("bisection %lld %s, %zu step%s%s%s%s%.12s", (long long)b.id, b.state, done, done == 1 ? "" : "s",
		       b.result ? ", " : "", b.result ? b.result : "", b.culprit ? " " : "", b.culprit ? b.culprit : "");
	bisection_release(&b);
	return what;
}

/* What the job is about, one line: the bisection's progress and outcome,
 * or the command line (a reproduction's, then the bisection it started). */
static char *job_what(struct lab *lab, const struct queue_job *j)
{
	struct strbuf sb = STRBUF_INIT;

	if (j->kind_id == QUEUE_BISECT)
		return bisection_what(lab, j->bisection_id);
	strbuf_addstr(&sb, j->kind_id == QUEUE_REPRODUCE ? "reproduce" : "run");
	/* as the shell would take it back */
	for (size_t i = 1; i < j->nr_args; i++) {
		strbuf_addch(&sb, ' ');
		strbuf_add_shell_word(&sb, j->args[i]);
	}
	if (j->kind_id == QUEUE_REPRODUCE && j->bisection_id) {
		char *b = bisection_what(lab, j->bisection_id);
		strbuf_addf(&sb, "; %s", b);
		free(b);
	}
	return strbuf_detach(&sb, NULL);
}

static void status_json(struct lab *lab, struct queue_job *jobs, size_t nr, int one)
{
	struct strbuf sb = STRBUF_INIT;

	if (!one)
		strbuf_addstr(&sb, "[\n");
	for (size_t i = 0; i < nr; i++) {
		struct queue_job *j = &jobs[i];
		char *what = job_what(lab, j);
		strbuf_addf(&sb, "%s{\"id\": %lld, \"kind\": ", one ? "" : "  ", (long long)j->id);
		json_add_string(&sb, j->kind);
		strbuf_addstr(&sb, ", \"state\": ");
		json_add_string(&sb, j->state);
		strbuf_addf(&sb, ", \"attempts\": %d, \"bisection\": ", j->attempts);
		if (j->bisection_id)
			strbuf_addf(&sb, "%lld", (long long)j->bisection_id);
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ", \"worker\": ");
		json_add_string(&sb, j->worker);
		strbuf_addstr(&sb, ", \"message\": ");
		json_add_string(&sb, j->message);
		strbuf_addstr(&sb, ", \"what\": ");
		json_add_string(&sb, what);
		strbuf_addstr(&sb, ", \"submitted_by\": ");
		json_add_string(&sb, j->submitted_by);
		strbuf_addf(&sb, ", \"created_at\": %lld, \"started_at\": %lld, \"finished_at\": %lld}%s\n",
			    (long long)j->created_at, (long long)j->started_at, (long long)j->finished_at,
			    !one && i + 1 < nr ? "," : "");
		free(what);
	}
	if (!one)
		strbuf_addstr(&sb, "]\n");
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
}

static const char *age(int64_t t, char *buf, size_t len)
{
	return t ? fmt_duration((now_s() - t) * 1000, buf, len) : "-";
}

int cmd_status(int argc, char **argv, const struct global_opts *g)
{
	struct queue_job *jobs = NULL;
	struct lab lab;
	int64_t id = 0;
	size_t nr = 0;
	int json = 0, ret = EXIT_FAIL;

	for (int i = 1; i < argc; i++) {
		unsigned long v;
		if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			print_usage(status_usage, 0);
			return EXIT_OK;
		} else if (!id && parse_uint(argv[i], INT64_MAX, &v) == 0 && v) {
			id = (int64_t)v;
		} else {
			error("status: unexpected argument '%s' (see 'klab status --help')", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (id) {
		jobs = xcalloc(1, sizeof(*jobs));
		if (db_queue_load(lab.db, id, jobs) < 0)
			goto out;
		nr = 1;
	} else if (db_queue_list(lab.db, &jobs, &nr) < 0) {
		goto out;
	}
	if (json) {
		status_json(&lab, jobs, nr, id != 0);
	} else if (id) {
		struct queue_job *j = jobs;
		char *what = job_what(&lab, j), b1[32];
		printf("job %lld: %s, %s\n", (long long)j->id, j->kind, j->state);
		printf("what:      ");
		print_clean(stdout, what);
		printf("\nsubmitted: %s ago by %s, from %s\n", age(j->created_at, b1, sizeof(b1)),
		       j->submitted_by ? j->submitted_by : "?", j->nr_args ? j->args[0] : "?");
		printf("attempts:  %d%s%s\n", j->attempts, j->worker ? ", worker " : "", j->worker ? j->worker : "");
		if (j->message) {
			printf("message:   ");
			print_clean(stdout, j->message);
			putchar('\n');
		}
		printf("log:       %s/logs/queue-%lld.log\n", lab.state_dir, (long long)j->id);
		free(what);
	} else {
		if (!nr)
			printf("the queue is empty\n");
		for (size_t i = 0; i < nr; i++) {
			char *what = job_what(&lab, &jobs[i]), b1[32];
			printf("%lld\t%s\t%s\t%d\t%s\t%s\t", (long long)jobs[i].id, jobs[i].kind, jobs[i].state,
			       jobs[i].attempts, jobs[i].worker ? jobs[i].worker : "-", age(jobs[i].created_at, b1, sizeof(b1)));
			print_clean(stdout, what);
			/* a reproduction's result is its verdict line */
			if (jobs[i].kind_id == QUEUE_REPRODUCE && jobs[i].message) {
				fputs(": ", stdout);
				print_clean(stdout, jobs[i].message);
			}
			putchar('\n');
			free(what);
		}
	}
	ret = EXIT_OK;
out:
	for (size_t i = 0; i < nr; i++)
		queue_job_release(&jobs[i]);
	free(jobs);
	lab_close(&lab);
	return ret;
}

/* The one ID argument of log, cancel and retry; a usage error on stderr
 * otherwise. */
static int one_job(int argc, char **argv, const char *const *usage, int64_t *id)
{
	unsigned long v;

	if (argc != 2 || parse_uint(argv[1], INT64_MAX, &v) < 0 || !v) {
		if (argc == 2)
			error("'%s' is not a job id (a number from 'klab status')", argv[1]);
		print_usage(usage, 1);
		return -1;
	}
	*id = (int64_t)v;
	return 0;
}

/* The job's log; -f follows it until the job has ended. */
int cmd_joblog(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	int follow = 0, fd = -1, ret = EXIT_FAIL;
	int64_t id;
	char *path = NULL, *buf = NULL;

	if (wants_help(argc, argv, joblog_usage))
		return EXIT_OK;
	if (argc >= 2 && (!strcmp(argv[1], "-f") || !strcmp(argv[1], "--follow"))) {
		follow = 1;
		argv++;
		argc--;
	} else if (argc == 3 && (!strcmp(argv[2], "-f") || !strcmp(argv[2], "--follow"))) {
		follow = 1;
		argc--;
	}
	if (one_job(argc, argv, joblog_usage, &id) < 0)
		return EXIT_USAGE;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	{
		struct queue_job j;
		if (db_queue_load(lab.db, id, &j) < 0)
			goto out;
		queue_job_release(&j);
	}
	path = job_log_path(&lab, id);
	buf = xmalloc(LOG_CHUNK);
	for (;;) {
		ssize_t n;
		int ended = 0;

		if (fd < 0)
			fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && !follow) {
			printf("job %lld has no log yet (it has not started)\n", (long long)id);
			break;
		}
		while (fd >= 0 && (n = read(fd, buf, LOG_CHUNK)) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		fflush(stdout);
		if (!follow)
			break;
		{
			struct queue_job j;
			if (db_queue_load(lab.db, id, &j) < 0)
				goto out;
			ended = j.state_id != QUEUE_QUEUED && j.state_id != QUEUE_RUNNING;
			queue_job_release(&j);
		}
		if (ended) {
			/* what was written before the end was recorded */
			while (fd >= 0 && (n = read(fd, buf, LOG_CHUNK)) > 0)
				fwrite(buf, 1, (size_t)n, stdout);
			break;
		}
		usleep(300000);
	}
	ret = EXIT_OK;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
	lab_close(&lab);
	return ret;
}

/* cancel and retry: help, the one job id, the lab and the job's row,
 * then act(lab, id, job), which gives the exit code. */
static int on_one_job(int argc, char **argv, const struct global_opts *g, const char *const *usage,
		      int (*act)(struct lab *, int64_t, const struct queue_job *))
{
	struct lab lab;
	struct queue_job j;
	int64_t id;
	int ret = EXIT_FAIL;

	if (wants_help(argc, argv, usage))
		return EXIT_OK;
	if (one_job(argc, argv, usage, &id) < 0)
		return EXIT_USAGE;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (db_queue_load(lab.db, id, &j) == 0) {
		ret = act(&lab, id, &j);
		queue_job_release(&j);
	}
	lab_close(&lab);
	return ret;
}

static int cancel_job(struct lab *lab, int64_t id, const struct queue_job *j)
{
	int rc = db_queue_cancel(lab->db, id);

	if (rc == 1 && j->state_id == QUEUE_RUNNING) {
		printf("job %lld cancelled: its worker stops it within a few seconds; results so far are kept\n",
		       (long long)id);
		return EXIT_OK;
	} else if (rc == 1) {
		if (j->bisection_id)
			db_bisection_enter(lab->db, j->bisection_id, BISECTION_STOPPED, BISECTION_NO_RESULT, NULL,
					   "cancelled before it ran; 'klab retry' queues it again");
		printf("job %lld cancelled before it ran\n", (long long)id);
		return EXIT_OK;
	} else if (rc == 0) {
		error("job %lld has already ended (%s)", (long long)id, j->state);
	}
	return EXIT_FAIL;
}

int cmd_cancel(int argc, char **argv, const struct global_opts *g)
{
	return on_one_job(argc, argv, g, cancel_usage, cancel_job);
}

static int retry_job(struct lab *lab, int64_t id, const struct queue_job *j)
{
	int rc = db_queue_retry(lab->db, id);

	if (rc == 1) {
		printf("job %lld queued again%s\n", (long long)id,
		       j->bisection_id ? ": the bisection continues from its last recorded step" : "");
		return EXIT_OK;
	} else if (rc == 0) {
		error("job %lld is %s: only failed or cancelled jobs can be retried", (long long)id, j->state);
	}
	return EXIT_FAIL;
}

int cmd_retry(int argc, char **argv, const struct global_opts *g)
{
	return on_one_job(argc, argv, g, retry_usage, retry_job);
}
