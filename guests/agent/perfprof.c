/* The perf-profile monitor's parser of perf report and its perf processes
 * (perfprof.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pipe2, memrchr; klab's own config.h has it already */
#endif
#include "perfprof.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* LKP's names; the host's monitor-perf-profile.c takes these three. */
static const char *const prefixes[PERFPROF_NR_KINDS] = {
	[PERFPROF_SELF] = "self.cycles-pp.",
	[PERFPROF_CHILDREN] = "children.cycles-pp.",
	[PERFPROF_CALLTRACE] = "calltrace.cycles-pp.",
};

/* ---- the parser (pure) -------------------------------------------------- */

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* What the host's names may hold (resultproto.c's name_char). */
static int name_char(char c)
{
	return is_alpha(c) || is_digit(c) || (c && strchr("_.:+()/-", c));
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* "23.83%": at most 3 + 6 digits; the end, or NULL. */
static const char *parse_pct(const char *p, const char *end, double *v)
{
	double x = 0, scale = 1;
	size_t n = 0, frac = 0;

	for (; p < end && is_digit(*p) && n < 3; p++, n++)
		x = x * 10 + (*p - '0');
	if (!n || (p < end && is_digit(*p)))
		return NULL;
	if (p < end && *p == '.') {
		for (p++; p < end && is_digit(*p) && frac < 6; p++, frac++) {
			scale /= 10;
			x += (*p - '0') * scale;
		}
		if (!frac || (p < end && is_digit(*p)))
			return NULL;
	}
	if (p >= end || *p != '%' || x > 100)
		return NULL;
	*v = x;
	return p + 1;
}

/* A symbol's name starts as a C or C++ name does; addresses ("0x7f...",
 * "0000000000000000") and "[unknown]" are no names. */
static int is_symbol(const char *p, const char *end)
{
	return p < end && (is_alpha(*p) || *p == '_');
}

/* Appends [p, end), cut to PERFPROF_MAX_SYMBOL, to name at *len when all
 * of it fits (or when whole is 0: as much as fits); bytes a name cannot
 * hold become '_'.  1 when something was appended. */
static int append_symbol(char *name, size_t *len, const char *p, const char *end, int whole)
{
	size_t n = (size_t)(end - p);

	if (n > PERFPROF_MAX_SYMBOL)
		n = PERFPROF_MAX_SYMBOL;
	if (*len + n > PERFPROF_MAX_NAME) {
		if (whole)
			return 0;
		n = PERFPROF_MAX_NAME - *len;
	}
	for (size_t i = 0; i < n; i++)
		name[(*len)++] = name_char(p[i]) ? p[i] : '_';
	name[*len] = '\0';
	return n > 0;
}

static void add_row(struct perfprof *pp, enum perfprof_kind kind, const char *name, double pct)
{
	struct perfprof_row *rows = pp->rows[kind];
	size_t i;

	if (pct <= 0)
		return;
	for (i = 0; i < pp->nr[kind]; i++)
		if (!strcmp(rows[i].name, name))
			break;
	if (i == pp->nr[kind]) {
		if (i == PERFPROF_MAX_CANDIDATES)
			return;
		memcpy(rows[i].name, name, strlen(name) + 1);
		rows[i].pct = 0;
		pp->nr[kind]++;
	}
	/* one name twice: the same symbol in two objects, or a chain cut
	 * to a common prefix; a share is at most all of it */
	rows[i].pct += pct;
	if (rows[i].pct > 100)
		rows[i].pct = 100;
}

/* prefix + the symbol of [p, end) */
static void add_symbol(struct perfprof *pp, enum perfprof_kind kind, const char *p, const char *end, double pct)
{
	char name[PERFPROF_MAX_NAME + 1];
	size_t len = strlen(prefixes[kind]);

	memcpy(name, prefixes[kind], len + 1);
	if (is_symbol(p, end) && append_symbol(name, &len, p, end, 0))
		add_row(pp, kind, name, pct);
}

/* "  45.48%   3.95%  [k] do_syscall_64": p is past the first percent. */
static void entry_line(struct perfprof *pp, const char *p, const char *end, double first)
{
	double self = first;
	int children = 0;
	const char *sym, *q;

	p = skip_blanks(p, end);
	if (p < end && is_digit(*p)) {
		if (!(p = parse_pct(p, end, &self)))
			return;
		children = 1;
		p = skip_blanks(p, end);
	}
	/* "[k] ", "[.] ": where the symbol is */
	if (end - p < 4 || p[0] != '[' || p[2] != ']' || p[3] != ' ')
		return;
	sym = p + 4;
	/* the symbol ends where the next column starts (IPC, with the
	 * default fields) or at the padding */
	for (q = sym; q < end && *q != '\t' && !(q[0] == ' ' && q + 1 < end && q[1] == ' '); q++)
		;
	while (q > sym && is_blank(q[-1]))
		q--;
	add_symbol(pp, PERFPROF_SELF, sym, q, self);
	if (children)
		add_symbol(pp, PERFPROF_CHILDREN, sym, q, first);
}

/* "23.83% read_zero;vfs_read;ksys_read": p is at the chain.  As many
 * frames as fit, up to the first that is not a symbol; at least two. */
static void chain_line(struct perfprof *pp, const char *p, const char *end, double pct)
{
	char name[PERFPROF_MAX_NAME + 1];
	size_t len = strlen(prefixes[PERFPROF_CALLTRACE]);
	int frames = 0;

	memcpy(name, prefixes[PERFPROF_CALLTRACE], len + 1);
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p)), *f_end = semi ? semi : end;
		size_t saved = len;

		if (!is_symbol(p, f_end))
			break;
		if (frames && len < PERFPROF_MAX_NAME)
			name[len++] = '.';
		if (!append_symbol(name, &len, p, f_end, frames > 0)) {
			len = saved;
			name[len] = '\0';
			break;
		}
		frames++;
		if (!semi)
			break;
		p = semi + 1;
	}
	if (frames >= 2)
		add_row(pp, PERFPROF_CALLTRACE, name, pct);
}

static int by_pct(const void *a, const void *b)
{
	const struct perfprof_row *x = a, *y = b;

	if (x->pct != y->pct)
		return x->pct < y->pct ? 1 : -1;
	return strcmp(x->name, y->name);
}

void perfprof_parse(struct perfprof *pp, const char *text)
{
	for (int k = 0; k < PERFPROF_NR_KINDS; k++)
		pp->nr[k] = 0;
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n'), *q;
		double pct;

		if (!end)
			end = p + strlen(p);
		q = skip_blanks(p, end);
		if (q < end && *q != '#' && (q = parse_pct(q, end, &pct))) {
			if (q < end && q[0] == ' ' && q + 1 < end && !is_blank(q[1]) && q[1] != '[' && !is_digit(q[1]))
				chain_line(pp, q + 1, end, pct);
			else
				entry_line(pp, q, end, pct);
		}
		p = *end ? end + 1 : end;
	}
	for (int k = 0; k < PERFPROF_NR_KINDS; k++) {
		size_t n = 0;

		for (size_t i = 0; i < pp->nr[k]; i++)
			if (pp->rows[k][i].pct >= PERFPROF_MIN_PCT)
				pp->rows[k][n++] = pp->rows[k][i];
		qsort(pp->rows[k], n, sizeof(pp->rows[k][0]), by_pct);
		pp->nr[k] = n < PERFPROF_MAX_ROWS ? n : PERFPROF_MAX_ROWS;
	}
}

/* ---- the event ---------------------------------------------------------- */

const char *perfprof_event(void)
{
	struct perf_event_attr attr;
	long fd;

	/* what perf record -a asks for: sampling cycles on a CPU */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.freq = 1;
	attr.sample_freq = 800;
	attr.disabled = 1;
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return "cpu-clock";
	close((int)fd);
	return "cycles";
}

/* ---- the processes ------------------------------------------------------ */

/* In the child: its own group, default signals, stdin /dev/null, stdout
 * to out_fd and stderr to err_fd; never returns. */
static void exec_perf(const char *const argv[], int out_fd, int err_fd)
{
	static const int sigs[] = { SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD };
	static char *const envp[] = { "PATH=/usr/bin:/bin", "HOME=/tmp", "LC_ALL=C", NULL };
	sigset_t none;
	int fd;

	setpgid(0, 0);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		if (out_fd < 0)
			out_fd = fd;
		if (err_fd < 0)
			err_fd = fd;
	}
	if (out_fd >= 0)
		dup2(out_fd, 1);
	if (err_fd >= 0)
		dup2(err_fd, 2);
	/* argv is not changed by execve: the cast only drops the const */
	execve(argv[0], (char *const *)argv, envp);
	_exit(127);
}

unsigned perfprof_freq(unsigned seconds, unsigned cpus)
{
	unsigned long long per_s = (unsigned long long)(seconds ? seconds : 1) * (cpus ? cpus : 1);
	unsigned long long f = PERFPROF_MAX_SAMPLES / per_s;

	return f > PERFPROF_FREQ ? PERFPROF_FREQ : f < PERFPROF_MIN_FREQ ? PERFPROF_MIN_FREQ : (unsigned)f;
}

int perfprof_start(struct perfprof_run *pr, const char *perf, const char *event, unsigned freq, const char *data,
		   const char *log, char *err, size_t errsize)
{
	char hz[16];
	const char *argv[] = { perf, "record", "-a", "-g", "-e", event, "-F", hz,
			       /* no build-id pass over the samples at the end */
			       "-B", "-N", "-o", data, NULL };
	int log_fd;
	pid_t pid;

	snprintf(hz, sizeof(hz), "%u", freq);

	pr->pid = 0;
	pr->reaped = 0;
	unlink(data);
	log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errsize, "fork: %s", strerror(errno));
		if (log_fd >= 0)
			close(log_fd);
		return -1;
	}
	if (pid == 0)
		exec_perf(argv, log_fd, log_fd);
	/* also here, so that a kill of the group cannot miss it */
	setpgid(pid, pid);
	if (log_fd >= 0)
		close(log_fd);
	pr->pid = pid;
	return 0;
}

void perfprof_reaped(struct perfprof_run *pr, pid_t pid, int status)
{
	if (pr && pr->pid > 0 && pid == pr->pid && !pr->reaped) {
		pr->status = status;
		pr->reaped = 1;
	}
}

/* Wait for pid until deadline; 1 when it went (*status set). */
static int wait_until(pid_t pid, int64_t deadline, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno == ECHILD) {
			/* a waitpid(-1) elsewhere took it: gone, status unknown */
			*status = 0;
			return 1;
		}
		if (mono_ms() >= deadline)
			return 0;
		sleep_ms(10);
	}
}

static void say_status(char *err, size_t errsize, const char *what, int status)
{
	if (WIFEXITED(status))
		snprintf(err, errsize, "%s exited %d", what, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(err, errsize, "%s was killed by signal %d", what, WTERMSIG(status));
	else
		snprintf(err, errsize, "%s ended with status %#x", what, (unsigned)status);
}

int perfprof_stop(struct perfprof_run *pr, int timeout_ms, char *err, size_t errsize)
{
	int status = 0;

	if (pr->pid <= 0) {
		snprintf(err, errsize, "perf record was not started");
		return -1;
	}
	if (!pr->reaped) {
		kill(pr->pid, SIGINT);
		if (!wait_until(pr->pid, mono_ms() + timeout_ms, &status)) {
			kill(-pr->pid, SIGKILL);
			kill(pr->pid, SIGKILL);
			wait_until(pr->pid, mono_ms() + 2000, &status);
			snprintf(err, errsize, "perf record did not stop within %d s of SIGINT", timeout_ms / 1000);
			pr->pid = 0;
			return -1;
		}
		pr->status = status;
		pr->reaped = 1;
	}
	pr->pid = 0;
	/* perf record -a writes its data on SIGINT, then dies of it */
	if (WIFSIGNALED(pr->status) && WTERMSIG(pr->status) == SIGINT)
		return 0;
	if (!WIFEXITED(pr->status) || WEXITSTATUS(pr->status)) {
		say_status(err, errsize, "perf record", pr->status);
		return -1;
	}
	return 0;
}

ssize_t perfprof_report(const char *perf, const char *data, char *buf, size_t size, int timeout_ms, char *err,
			size_t errsize)
{
	/* one table: children and self per symbol, and under each the call
	 * chains from it to its callers (percent of all samples) */
	const char *argv[] = { perf, "report", "-q", "-i", data, "--stdio", "--children",
			       "--fields", "overhead_children,overhead,sym",
			       "-g", "folded,0.5,callee,function,percent", "--percent-limit", "0.5", NULL };
	int64_t deadline = mono_ms() + timeout_ms;
	size_t len = 0;
	int fds[2], status = 0, full = 0;
	pid_t pid;

	if (size < 2 || pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(err, errsize, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errsize, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0)
		exec_perf(argv, fds[1], -1);
	setpgid(pid, pid);
	close(fds[1]);
	for (;;) {
		struct pollfd pfd = { .fd = fds[0], .events = POLLIN };
		int64_t left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, left > 1000 ? 1000 : (int)left) <= 0)
			continue;
		n = read(fds[0], buf + len, size - 1 - len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == size - 1) {
			full = 1;
			break;
		}
	}
	close(fds[0]);
	buf[len] = '\0';
	if (full) {
		/* the rest is not read; a cut line would be a wrong name */
		char *nl = memrchr(buf, '\n', len);

		len = nl ? (size_t)(nl - buf) + 1 : 0;
		buf[len] = '\0';
		kill(-pid, SIGKILL);
	}
	if (!wait_until(pid, deadline, &status)) {
		kill(-pid, SIGKILL);
		kill(pid, SIGKILL);
		wait_until(pid, mono_ms() + 2000, &status);
		snprintf(err, errsize, "perf report took longer than %d s", timeout_ms / 1000);
		return -1;
	}
	if (!full && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		say_status(err, errsize, "perf report", status);
		return -1;
	}
	return (ssize_t)len;
}
