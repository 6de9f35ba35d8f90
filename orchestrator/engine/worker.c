/* The queue's worker: claims queued jobs and runs each as a child klab
 * process ('klab bisect resume ID', 'klab run ARGS' or 'klab reproduce
 * --queue-job ID ARGS') in its own process group that dies with the
 * worker (PR_SET_PDEATHSIG; the child's own supervisors and libvirt's
 * AUTODESTROY take its builds and guests down with it).  The job's lease
 * is renewed while it runs: a job whose worker died is claimed again once
 * the lease has run out, and a bisection then resumes from its last
 * recorded step.  Every result is stored by the child as it is measured;
 * the queue only records who runs what and how it ended. */
#include "engine/worker.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
	struct slot slots[WORKER_MAX_SLOTS];
};

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

char *worker_log_path(const struct lab *lab, int64_t id)
{
	return xstrfmt("%s/logs/queue-%lld.log", lab->state_dir, (long long)id);
}

/* A line in the job's log from the worker itself. */
static void log_line(struct lab *lab, int64_t id, const char *fmt, ...) KLAB_PRINTF(3, 4);
static void log_line(struct lab *lab, int64_t id, const char *fmt, ...)
{
	char *path = worker_log_path(lab, id), stamp[32];
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
	char *log = worker_log_path(w->lab, j->id), id[32], qid[32];
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
			error("worker: cannot enter the submitter's directory %s: %s", j->args[0], strerror(errno));
			_exit(1);
		}
		setenv("KLAB_QUEUE_JOB", id, 1);
		execv(w->self, (char *const *)argv);
		error("worker: cannot run %s: %s", w->self, strerror(errno));
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

/* The worker's name (host:pid), its logs directory, its signals. */
static int worker_setup(struct worker *w)
{
	struct sigaction sa;
	char host[64] = "", *logs;
	ssize_t len = readlink("/proc/self/exe", w->self, sizeof(w->self) - 1);

	if (len <= 0)
		return error("cannot find klab's own executable: %s", strerror(errno));
	w->self[len] = '\0';
	gethostname(host, sizeof(host) - 1);
	snprintf(w->name, sizeof(w->name), "%s:%d", host, (int)getpid());
	logs = xstrfmt("%s/logs", w->lab->state_dir);
	mkdir_p(logs, 0700);
	free(logs);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return 0;
}

int worker_run(struct lab *lab, const struct worker_opts *o)
{
	struct worker *w = xcalloc(1, sizeof(*w));
	int64_t last_renew = 0;
	int idle = 0;

	w->lab = lab;
	w->nr_slots = o->slots;
	w->lease_s = o->lease_s;
	if (worker_setup(w) < 0) {
		free(w);
		return -1;
	}
	printf("worker %s: %u slot%s, lease %llds, lab %s\n", w->name, w->nr_slots, w->nr_slots == 1 ? "" : "s",
	       (long long)w->lease_s, lab->state_dir);
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
			if (!s->pid && !idle && claim_one(w, s) == 0)
				idle = 1;
			busy += s->pid != 0;
		}
		if (o->once && idle && !busy)
			break;
		usleep(200000);
		/* look at the queue again every poll */
		idle = 0;
	}
	if (stop_requested)
		hand_back(w);
	printf("worker %s: stopped\n", w->name);
	free(w);
	return 0;
}
