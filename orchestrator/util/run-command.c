/* fork/exec with a timeout; see run-command.h. */
#include "run-command.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

static void supervise(pid_t cmd) __attribute__((noreturn));

static void kill_group(int sig)
{
	(void)sig;
	kill(0, SIGKILL);
	_exit(128 + SIGKILL);
}

/* The process group leader between klab and the command: it waits for
 * the command and, when klab dies (even by SIGKILL, through
 * PR_SET_PDEATHSIG), kills the whole group, so no grandchild (a make -j
 * compiler, a test's background job) outlives klab. */
static void supervise(pid_t cmd)
{
	int status;

	for (;;) {
		pid_t w = waitpid(cmd, &status, 0);
		if (w == cmd)
			break;
		if (w < 0 && errno != EINTR)
			_exit(127);
	}
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	signal(WTERMSIG(status), SIG_DFL);
	raise(WTERMSIG(status));
	_exit(128 + WTERMSIG(status));
}

static void child_setup(const struct run_opts *o, int out_fd, int err_pipe, pid_t parent)
	__attribute__((noreturn));
static void child_setup(const struct run_opts *o, int out_fd, int err_pipe, pid_t parent)
{
	struct sigaction sa;
	pid_t cmd;
	int e;

	setpgid(0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kill_group;
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);	/* klab decides what a ^C means */
	signal(SIGPIPE, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)	/* klab died before prctl */
		kill_group(0);
	if (out_fd >= 0) {
		dup2(out_fd, 1);
		dup2(out_fd, 2);
	}
	{
		int nullfd = open("/dev/null", O_RDONLY);
		if (nullfd >= 0) {
			dup2(nullfd, 0);
			close(nullfd);
		}
	}
	/* Keep nothing of klab's open (lock files above all: a lock must
	 * go away with klab, not with its children). */
	for (int fd = 3; fd < 1024; fd++)
		if (fd != err_pipe)
			close(fd);
	cmd = fork();
	if (cmd < 0) {
		e = errno;
		if (write(err_pipe, &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (cmd > 0) {
		close(err_pipe);	/* the command's copy reports exec errors */
		supervise(cmd);
	}
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, 0);
	if (o->dir && chdir(o->dir) < 0)
		goto fail;
	if (o->env)
		for (const char *const *p = o->env; *p; p++)
			putenv((char *)*p);
	execvp(o->argv[0], (char *const *)o->argv);
fail:
	e = errno;
	if (write(err_pipe, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Read what the child wrote: copy it to the log and hand out lines. */
static void drain_output(const struct run_opts *o, int outpipe[2], int out_fd,
			 char *linebuf, size_t *linelen)
{
	char buf[16384];
	ssize_t n;

	fcntl(outpipe[0], F_SETFL, O_NONBLOCK);
	while ((n = read(outpipe[0], buf, sizeof(buf))) > 0) {
		if (out_fd >= 0 && write(out_fd, buf, (size_t)n) < 0) {
			/* a full disk shows up in the command's own errors */
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				linebuf[*linelen] = '\0';
				o->on_line(linebuf, *linelen, o->on_line_data);
				*linelen = 0;
			} else if (*linelen < 4095) {
				linebuf[(*linelen)++] = buf[i];
			}
		}
		linebuf[*linelen] = '\0';
	}
	if (n == 0) {
		close(outpipe[0]);
		outpipe[0] = -1;
	}
}

/* A child's end cut short: the whole group killed, the child reaped. */
static void kill_child(pid_t pid, int *status, struct run_result *r, enum run_status why, int64_t start)
{
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	r->status = why;
	r->elapsed_ms = now_ms() - start;
}

/* Wait for the child, passing its output on, until it exits (1), the
 * timeout or should_stop ends it (0, r->status set) or waitpid fails (-1). */
static int wait_child(const struct run_opts *o, struct run_result *r, pid_t pid, int *status, int outpipe[2],
		      int out_fd, char *linebuf, size_t *linelen, int64_t start)
{
	int pidfd = pidfd_open_compat(pid), ret = -1;

	for (;;) {
		struct pollfd pfd[2];
		int nfds = 0, wait_ms = pidfd >= 0 ? 1000 : 5;
		pid_t w = waitpid(pid, status, WNOHANG);
		int64_t waited;

		if (w == pid) {
			ret = 1;
			break;
		}
		if (w < 0 && errno != EINTR) {
			error("waitpid failed: %s", strerror(errno));
			break;
		}
		waited = now_ms() - start;
		if (o->timeout_ms > 0 && waited >= o->timeout_ms) {
			kill_child(pid, status, r, RUN_TIMEOUT, start);
			ret = 0;
			break;
		}
		if (o->should_stop && o->should_stop(o->on_line_data)) {
			kill_child(pid, status, r, RUN_CANCELLED, start);
			ret = 0;
			break;
		}
		if (o->timeout_ms > 0 && o->timeout_ms - waited < wait_ms)
			wait_ms = (int)(o->timeout_ms - waited);
		if (pidfd >= 0)
			pfd[nfds++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		if (outpipe[0] >= 0)
			pfd[nfds++] = (struct pollfd){ .fd = outpipe[0], .events = POLLIN };
		if (nfds)
			poll(pfd, nfds, wait_ms);
		else
			usleep(2000);
		if (outpipe[0] >= 0)
			drain_output(o, outpipe, out_fd, linebuf, linelen);
	}
	if (pidfd >= 0)
		close(pidfd);
	return ret;
}

int run_command(const struct run_opts *o, struct run_result *r)
{
	int out_fd = -1, pipefd[2] = { -1, -1 }, status = 0, ret = -1;
	int outpipe[2] = { -1, -1 }, child_out;
	char linebuf[4096];
	size_t linelen = 0;
	int64_t start = now_ms();
	pid_t pid, parent;
	ssize_t n;
	int child_errno;

	memset(r, 0, sizeof(*r));
	if (o->output_path) {
		out_fd = open(o->output_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (out_fd < 0)
			return error("cannot open log '%s': %s", o->output_path, strerror(errno));
	}
	child_out = out_fd;
	if (o->on_line) {
		if (pipe2(outpipe, O_CLOEXEC) < 0) {
			error("cannot create pipe: %s", strerror(errno));
			goto cleanup;
		}
		child_out = outpipe[1];
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		error("cannot create pipe: %s", strerror(errno));
		goto cleanup;
	}
	fflush(stdout);
	fflush(stderr);
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		error("cannot fork: %s", strerror(errno));
		goto cleanup;
	}
	if (pid == 0)
		child_setup(o, child_out, pipefd[1], parent);
	setpgid(pid, pid);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (outpipe[1] >= 0) {
		close(outpipe[1]);
		outpipe[1] = -1;
	}

	/* The pipe closes on a successful exec; an errno arrives on failure. */
	do
		n = read(pipefd[0], &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(child_errno)) {
		waitpid(pid, &status, 0);
		r->status = RUN_EXEC_FAILED;
		r->errno_value = child_errno;
		r->elapsed_ms = now_ms() - start;
		ret = 0;
		goto cleanup;
	}

	if (o->on_start)
		o->on_start((int)pid, o->on_line_data);
	switch (wait_child(o, r, pid, &status, outpipe, out_fd, linebuf, &linelen, start)) {
	case 0:
		ret = 0;
		/* fall through */
	case -1:
		goto cleanup;
	}
	/* the rest of the output, up to EOF (grandchildren may hold it) */
	while (outpipe[0] >= 0) {
		struct pollfd pfd = { .fd = outpipe[0], .events = POLLIN };
		if (poll(&pfd, 1, 200) <= 0)
			break;
		drain_output(o, outpipe, out_fd, linebuf, &linelen);
	}
	if (linelen) {
		linebuf[linelen] = '\0';
		o->on_line(linebuf, linelen, o->on_line_data);
	}
	r->elapsed_ms = now_ms() - start;
	if (WIFEXITED(status)) {
		r->status = RUN_EXITED;
		r->exit_code = WEXITSTATUS(status);
	} else {
		r->status = RUN_SIGNALED;
		r->signal = WTERMSIG(status);
	}
	/* Reap the rest of the process group the test may have left. */
	kill(-pid, SIGKILL);
	ret = 0;
cleanup:
	if (outpipe[0] >= 0)
		close(outpipe[0]);
	if (outpipe[1] >= 0)
		close(outpipe[1]);
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (out_fd >= 0)
		close(out_fd);
	return ret;
}

int remove_tree(const char *path)
{
	const char *argv[] = { "rm", "-rf", "--", path, NULL };
	struct run_opts o = { .argv = argv, .output_path = "/dev/null" };
	struct run_result r;

	if (run_command(&o, &r) < 0 || r.status != RUN_EXITED || r.exit_code)
		return error("cannot remove '%s'", path);
	return 0;
}

int process_gone(long pid)
{
	if (pid <= 0 || pid != (long)(pid_t)pid)
		return 0;
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

long long process_start_time(long pid, long *pgrp)
{
	char path[64], buf[1024], *p;
	long long start = 0;
	long grp = 0;
	ssize_t n;
	int fd;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the command name (field 2) may hold spaces and parentheses: the
	 * fields after it start after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime */
	if (sscanf(p + 1, " %*c %*d %ld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %lld",
		   &grp, &start) != 2)
		return 0;
	if (pgrp)
		*pgrp = grp;
	return start;
}

long name_owner_pid(const char *name, const char *prefix)
{
	const char *dash;
	char *end;
	long pid;

	if (strncmp(name, prefix, strlen(prefix)) || !(dash = strrchr(name, '-')) || !dash[1])
		return 0;
	errno = 0;
	pid = strtol(dash + 1, &end, 10);
	return *end || errno || pid <= 0 ? 0 : pid;
}
