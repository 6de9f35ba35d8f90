/* Speculative builds: a child process that builds the next step's
 * possible commits beside the guests (speculate.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/speculate.h"
#include "guest/topology.h"
#include "util/strbuf.h"
#include "util/util.h"

size_t speculate_spare_cpus(const unsigned char *busy, size_t nr_busy, unsigned char **spare, size_t *nr_spare)
{
	cpu_set_t mine;
	size_t n = 0;

	*spare = NULL;
	*nr_spare = 0;
	if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
		return 0;
	for (size_t cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &mine) || (cpu < nr_busy && busy[cpu]))
			continue;
		cpu_bitmap_set(spare, nr_spare, (int)cpu);
		n++;
	}
	return n;
}

int speculate_bad_first(double v, double good, double bad)
{
	if (!(v > 0) || !(good > 0) || !(bad > 0))
		return 0;
	return fabs(log(v) - log(bad)) < fabs(log(v) - log(good));
}

static void builder(const struct speculation *sp, int wfd, const unsigned char *cpus, size_t nr, int jobs,
		    const char *log_path, const struct speculate_ops *ops, pid_t parent) __attribute__((noreturn));
static void builder(const struct speculation *sp, int wfd, const unsigned char *cpus, size_t nr, int jobs,
		    const char *log_path, const struct speculate_ops *ops, pid_t parent)
{
	struct sched_param prio = { 0 };
	cpu_set_t set;
	int fd;

	/* the bisection's end is the builder's: make and the compilers go
	 * with it (run_command's supervisor kills its group when we die) */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	CPU_ZERO(&set);
	for (size_t cpu = 0; cpu < nr && cpu < CPU_SETSIZE; cpu++)
		if (cpus[cpu])
			CPU_SET(cpu, &set);
	/* inherited by make and every compiler it starts */
	if (sched_setaffinity(0, sizeof(set), &set) < 0 || sched_setscheduler(0, SCHED_IDLE, &prio) < 0)
		_exit(1);
	/* confined: the parent may boost us from now on */
	if (write(wfd, "r", 1) != 1)
		_exit(1);
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		close(fd);
	}
	if (ops->setup && ops->setup(ops->data) < 0)
		_exit(1);
	for (int i = 0; i < sp->n; i++) {
		printf("klab: speculative build of %s on CPU %s\n", sp->hex[i], sp->cpus);
		fflush(stdout);
		ops->build(ops->data, sp->hex[i], jobs);
		fflush(stdout);
		fflush(stderr);
		if (write(wfd, "x", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

int speculate_start(struct speculation *sp, const char (*hex)[41], int n, const unsigned char *cpus, size_t nr,
		    const char *log_path, const struct speculate_ops *ops)
{
	struct strbuf list = STRBUF_INIT;
	cpu_set_t mine;
	int pfd[2], spare = 0, jobs;
	pid_t parent = getpid();

	memset(sp, 0, sizeof(*sp));
	sp->fd = -1;
	if (n < 1 || n > 2)
		return -1;
	for (size_t cpu = 0; cpu < nr; cpu++)
		spare += cpus[cpu] != 0;
	if (!spare)
		return -1;
	/* one make job per CPU klab may use, not per spare one: confined,
	 * the jobs share the spare CPUs; boosted (a step waits for the
	 * build), they take every CPU */
	jobs = sched_getaffinity(0, sizeof(mine), &mine) == 0 ? CPU_COUNT(&mine) : spare;
	if (jobs < spare)
		jobs = spare;
	for (int i = 0; i < n; i++)
		memcpy(sp->hex[i], hex[i], 41);
	sp->n = n;
	cpulist_format(&list, cpus, nr);
	snprintf(sp->cpus, sizeof(sp->cpus), "%s", list.buf);
	strbuf_release(&list);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error("speculative builds: cannot create a pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	sp->pid = fork();
	if (sp->pid < 0) {
		error("speculative builds: cannot fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		sp->pid = 0;
		return -1;
	}
	if (sp->pid == 0) {
		close(pfd[0]);
		builder(sp, pfd[1], cpus, nr, jobs, log_path, ops, parent);
	}
	close(pfd[1]);
	sp->fd = pfd[0];
	sp->started_ms = now_ms();
	/* the builder's first byte: it runs confined (a boost before that
	 * would be undone) */
	{
		struct pollfd pfd1 = { .fd = sp->fd, .events = POLLIN };
		char c = 0;
		int rc;

		do
			rc = poll(&pfd1, 1, 10000);
		while (rc < 0 && errno == EINTR);
		if (rc != 1 || read(sp->fd, &c, 1) != 1 || c != 'r') {
			error("speculative builds: the builder did not start");
			speculate_settle(sp, NULL, NULL);
			return -1;
		}
	}
	return 0;
}

/* The builder and everything it started (make, the compilers): klab's
 * own CPUs and the normal policy from now on.  A process forked meanwhile
 * inherits its parent's settings, changed here or not: a compiler that
 * stays idle-priority ends with its file. */
static void boost(pid_t root)
{
	struct sched_param prio = { 0 };
	cpu_set_t all;
	pid_t *tree = xmalloc(sizeof(pid_t));
	size_t n = 1, alloc = 1;
	int grew = 1;

	if (sched_getaffinity(0, sizeof(all), &all) < 0) {
		free(tree);
		return;
	}
	tree[0] = root;
	/* descendants by parent id, to a fixpoint (a make -j tree is shallow) */
	for (int pass = 0; grew && pass < 8; pass++) {
		DIR *d = opendir("/proc");
		struct dirent *de;

		grew = 0;
		while (d && (de = readdir(d))) {
			char path[64], buf[512], *close_paren;
			long pid, ppid;
			int fd, found = 0;
			ssize_t k;

			pid = strtol(de->d_name, &close_paren, 10);
			if (*close_paren || pid <= 1)
				continue;
			for (size_t i = 0; i < n && !found; i++)
				found = tree[i] == (pid_t)pid;
			if (found)
				continue;
			snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			k = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (k <= 0)
				continue;
			buf[k] = '\0';
			/* "pid (comm) state ppid ...": comm may hold anything */
			close_paren = strrchr(buf, ')');
			if (!close_paren || sscanf(close_paren + 1, " %*c %ld", &ppid) != 1)
				continue;
			for (size_t i = 0; i < n && !found; i++)
				found = tree[i] == (pid_t)ppid;
			if (!found)
				continue;
			if (n == alloc) {
				alloc *= 2;
				tree = xrealloc(tree, alloc * sizeof(pid_t));
			}
			tree[n++] = (pid_t)pid;
			grew = 1;
		}
		if (d)
			closedir(d);
	}
	for (size_t i = 0; i < n; i++) {
		sched_setaffinity(tree[i], sizeof(all), &all);
		sched_setscheduler(tree[i], SCHED_OTHER, &prio);
	}
	free(tree);
}

/* Count what the builder finished; block: wait for one more (or its end).
 * Returns 1 when the builder is gone (EOF). */
static int drain(struct speculation *sp, int block)
{
	char buf[8];

	for (;;) {
		struct pollfd pfd = { .fd = sp->fd, .events = POLLIN };
		ssize_t k;
		int rc = poll(&pfd, 1, block ? -1 : 0);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return 0;
		k = read(sp->fd, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 1;
		sp->done += (int)k;
		if (block)
			return 0;
	}
}

int speculate_settle(struct speculation *sp, const char *want, struct strbuf *line)
{
	char took[32];
	int idx = -1, gone, got, status;

	if (!sp->pid)
		return 0;
	for (int i = 0; want && i < sp->n; i++)
		if (!strcmp(sp->hex[i], want))
			idx = i;
	gone = drain(sp, 0);
	/* building the commit wanted now: let it finish (what it compiled
	 * so far is not lost either way, but a stop and a new make cost the
	 * tree walk again) */
	if (idx >= 0 && sp->done == idx && !gone) {
		/* the guests are done: the build the step waits for gets
		 * every CPU */
		boost(sp->pid);
		sp->boosted = 1;
	}
	while (idx >= 0 && sp->done == idx && !gone)
		gone = drain(sp, 1);
	got = idx >= 0 && sp->done > idx;
	if (!gone)
		kill(sp->pid, SIGKILL);
	while (waitpid(sp->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(sp->fd);
	fmt_duration(now_ms() - sp->started_ms, took, sizeof(took));
	if (line) {
		if (got)
			strbuf_addf(line, "speculative build of %.12s ready: built beside the guests on CPU %s "
				    "(%s since it began%s)", want, sp->cpus, took,
				    sp->boosted ? "; the step waited for its end, on every CPU" : "");
		else if (idx >= 0)
			strbuf_addf(line, "speculative build of %.12s stopped before it was done (the builder had "
				    "begun with the other commit; %s): built here", want, took);
		else if (sp->done < sp->n)
			strbuf_addf(line, "speculative builds stopped after %s (%d of %d done): %s", took, sp->done,
				    sp->n, want ? "the next step is neither of them" : "not needed");
	}
	sp->pid = 0;
	sp->fd = -1;
	return got;
}
