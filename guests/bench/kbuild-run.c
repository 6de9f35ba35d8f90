/* kbuild-run: LKP's kbuild benchmark, written for klab.  Configures a
 * kernel tree into a build directory and builds the target once to warm
 * up (klab's: the guest's page cache then holds the tree and the
 * toolchain it reads over 9p), then, as LKP does each iteration, starts
 * afresh (mrproper: here the build directory emptied, since the tree is
 * read-only and O= keeps every output there), configures again and
 * builds, until the runtime has passed, timing each build with wait4's
 * rusage.  make runs from an argv (no shell of ours), in its own process
 * group, killed after a build timeout.
 *
 * In the guest (--root DIR) it first makes DIR a root for the build: the
 * agent has mounted the host's /usr at DIR/usr and the kernel tree at
 * DIR/src (9p, read-only); here come /proc, /dev, a tmpfs /tmp and a
 * tmpfs /build, the merged-/usr links (bin, sbin, lib, lib64), then
 * chroot.  Without --root it mounts nothing (the host's tests). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_JOBS	4096
#define MAX_RUNTIME	(7 * 86400)
#define LINE_MAX_OUT	1000	/* of make's output per forwarded line */
#define LINES_PER_BUILD	2000	/* forwarded, then only counted */
#define KILL_WAIT_MS	5000

static const char *src_dir = "/src", *build_dir = "/build", *make_prog = "make";
static char first_error[LINE_MAX_OUT + 1];

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* ---- the root for the build ------------------------------------------------ */

static int mount_in(const char *root, const char *dir, const char *type, const char *data, mode_t mode)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, dir);
	if (mkdir(path, mode) < 0 && errno != EEXIST) {
		say("kbuild: error: cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (mount(type, path, type, MS_NOSUID, data) < 0) {
		say("kbuild: error: cannot mount %s on %s: %s", type, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The shares are read-only in QEMU (<readonly/>) and mounted ro by the
 * agent; this proves it from inside the guest, as root, each run: a new
 * file and an existing one opened for writing must both be refused.  A
 * share that takes a write fails the run (the probe file is removed). */
static int check_read_only(const char *dir, const char *existing)
{
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/.klab-write-probe", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	err = errno;
	if (fd >= 0) {
		close(fd);
		unlink(path);
		say("kbuild: error: share %s is writable from the guest (created %s)", dir, path);
		return -1;
	}
	if (err != EROFS && err != EACCES && err != EPERM) {
		say("kbuild: error: share %s: creating %s failed with %s, not a refusal", dir, path, strerror(err));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, existing);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		say("kbuild: error: share %s is writable from the guest (%s opened for writing)", dir, path);
		return -1;
	}
	if (errno != EROFS && errno != EACCES && errno != EPERM) {
		say("kbuild: error: share %s: opening %s for writing failed with %s, not a refusal", dir, path,
		    strerror(errno));
		return -1;
	}
	say("kbuild: share %s is read-only (create: %s, write: %s)", dir, strerrorname_np(err),
	    strerrorname_np(errno));
	return 0;
}

static int setup_root(const char *root)
{
	static const char *const links[][2] = {
		{ "bin", "usr/bin" }, { "sbin", "usr/sbin" }, { "lib", "usr/lib" }, { "lib64", "usr/lib64" },
	};
	char path[4096], target[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/usr/bin", root);
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		say("kbuild: error: no toolchain at %s (the agent mounts the host's /usr there: mount9p)", path);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/src/Makefile", root);
	if (stat(path, &st) < 0) {
		say("kbuild: error: no kernel tree at %s/src (the agent mounts it there: mount9p)", root);
		return -1;
	}
	if (mount_in(root, "proc", "proc", NULL, 0555) < 0 || mount_in(root, "dev", "devtmpfs", "mode=0755", 0755) < 0 ||
	    mount_in(root, "tmp", "tmpfs", "mode=1777", 01777) < 0 || mount_in(root, "build", "tmpfs", "mode=0755", 0755) < 0)
		return -1;
	/* merged /usr (Debian 12): /bin/sh and the dynamic loader are in /usr */
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		snprintf(target, sizeof(target), "%s/%s", root, links[i][1]);
		snprintf(path, sizeof(path), "%s/%s", root, links[i][0]);
		if (stat(target, &st) == 0 && symlink(links[i][1], path) < 0 && errno != EEXIST) {
			say("kbuild: error: cannot link %s: %s", path, strerror(errno));
			return -1;
		}
	}
	if (chroot(root) < 0 || chdir("/") < 0) {
		say("kbuild: error: cannot chroot to %s: %s", root, strerror(errno));
		return -1;
	}
	if (check_read_only("/src", "Makefile") < 0 || check_read_only("/usr", "include/stdio.h") < 0)
		return -1;
	return 0;
}

/* ---- one make ------------------------------------------------------------------ */

struct result {
	double real_s, user_s, sys_s;
	int status;
	int timed_out;
};

static int looks_like_error(const char *line)
{
	return strstr(line, "error:") || strstr(line, "Error ") || strstr(line, "*** ") ||
	       strstr(line, "No such file") || strstr(line, "not found");
}

/* One line of make's output: forwarded with "| " (never read as ours),
 * cut, and the first error remembered. */
static void forward(char *line, size_t len, unsigned *lines)
{
	line[len] = '\0';
	if (!first_error[0] && looks_like_error(line))
		snprintf(first_error, sizeof(first_error), "%s", line);
	if (++*lines <= LINES_PER_BUILD)
		say("| %s", line);
}

static void child(char *const *argv, int out_fd)
{
	static char *envp[] = {
		"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LC_ALL=C",
		"KBUILD_BUILD_USER=klab", "KBUILD_BUILD_HOST=klab",
		"KBUILD_BUILD_TIMESTAMP=2026-01-01", "KBUILD_VERBOSE=0", NULL,
	};
	extern char **environ;

	setpgid(0, 0);
	child_stdio(out_fd);
	environ = envp;
	execvp(argv[0], argv);
	fprintf(stderr, "kbuild-run: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Run argv (make `what`), its output forwarded, within timeout_s; -1
 * when it could not start at all. */
static int run(const char *what, char *const *argv, unsigned timeout_s, struct result *res)
{
	int64_t t0 = now_ms(), deadline = t0 + (int64_t)timeout_s * 1000, kill_until = 0;
	char buf[LINE_MAX_OUT + 1];
	size_t len = 0;
	unsigned lines = 0;
	struct rusage ru;
	int p[2], reaped = 0;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (pipe2(p, O_CLOEXEC) < 0) {
		say("kbuild: error: pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		say("kbuild: error: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0)
		child(argv, p[1]);
	setpgid(pid, pid);
	close(p[1]);
	while (p[0] >= 0 || !reaped) {
		int64_t now = now_ms(), wait_ms;
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };

		if (!reaped) {
			int st;
			pid_t r = wait4(pid, &st, WNOHANG, &ru);

			if (r == pid) {
				reaped = 1;
				res->status = st;
				res->real_s = (double)(now_ms() - t0) / 1000;
				/* make's rusage holds the compilers it waited for */
				res->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
				res->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
				/* what it left behind would spoil the next build */
				kill(-pid, SIGKILL);
			}
		}
		if (!res->timed_out && now >= deadline) {
			say("kbuild: error: make %s still running after %u s, killed", what, timeout_s);
			res->timed_out = 1;
			kill(-pid, SIGKILL);
			kill_until = now + KILL_WAIT_MS;
		}
		if (res->timed_out && !reaped && now >= kill_until) {
			say("kbuild: error: make did not go after SIGKILL");
			break;
		}
		if (p[0] < 0) {
			poll(NULL, 0, 10);
			continue;
		}
		wait_ms = res->timed_out ? 50 : deadline - now;
		if (wait_ms > 200)
			wait_ms = 200;	/* look for the exit now and then */
		if (poll(&pfd, 1, (int)(wait_ms < 0 ? 0 : wait_ms)) > 0) {
			ssize_t n = read(p[0], buf + len, sizeof(buf) - 1 - len);

			if (n <= 0 && !(n < 0 && errno == EINTR)) {
				if (len)
					forward(buf, len, &lines);
				len = 0;
				close(p[0]);
				p[0] = -1;
				continue;
			}
			for (len += n > 0 ? (size_t)n : 0;;) {
				char *nl = memchr(buf, '\n', len);
				size_t one = nl ? (size_t)(nl - buf) : len;

				if (!nl && len < sizeof(buf) - 1)
					break;
				forward(buf, one, &lines);
				one += nl ? 1 : 0;
				memmove(buf, buf + one, len - one);
				len -= one;
			}
		}
	}
	if (p[0] >= 0)
		close(p[0]);
	if (lines > LINES_PER_BUILD)
		say("kbuild: %u more lines of make's output not shown", lines - LINES_PER_BUILD);
	return 0;
}

/* make -s [-jN] -C SRC O=BUILD TARGET, within timeout_s; 0 when it built.
 * A failure says what failed and make's first error line. */
static int make(const char *target, unsigned jobs, unsigned timeout_s, struct result *res)
{
	char jflag[32], oflag[4096 + 3];
	char *argv[8];
	int n = 0;

	snprintf(jflag, sizeof(jflag), "-j%u", jobs);
	snprintf(oflag, sizeof(oflag), "O=%s", build_dir);
	argv[n++] = (char *)make_prog;
	argv[n++] = "-s";
	if (jobs)
		argv[n++] = jflag;
	argv[n++] = "-C";
	argv[n++] = (char *)src_dir;
	argv[n++] = oflag;
	argv[n++] = (char *)target;
	argv[n] = NULL;
	first_error[0] = '\0';
	if (run(target, argv, timeout_s, res) < 0)
		return -1;
	if (res->timed_out)
		goto failed;
	if (WIFEXITED(res->status) && WEXITSTATUS(res->status) == 0)
		return 0;
	if (WIFEXITED(res->status))
		say("kbuild: error: make %s exited %d", target, WEXITSTATUS(res->status));
	else if (WIFSIGNALED(res->status))
		say("kbuild: error: make %s killed by signal %d", target, WTERMSIG(res->status));
failed:
	if (first_error[0])
		say("kbuild: first error: %s", first_error);
	return -1;
}

static int unlink_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (ftw->level == 0)
		return 0;	/* the build directory itself stays (a mount point) */
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0) {
		say("kbuild: error: mrproper: cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* LKP's `make mrproper` for an O= build of a read-only tree: every file
 * of the build directory removed, on its own file system only (it is a
 * tmpfs in the guest), without running make over the tree's Makefiles. */
static int mrproper(struct result *res)
{
	int64_t t0 = now_ms();

	memset(res, 0, sizeof(*res));
	if (nftw(build_dir, unlink_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0)
		return -1;
	res->real_s = (double)(now_ms() - t0) / 1000.0;
	return 0;
}

static const char usage[] =
	"usage: kbuild-run [--root DIR] [--src DIR] [--build DIR] [--make PROG]\n"
	"                  --config TARGET --target TARGET --jobs N --runtime S [--build-timeout S]\n"
	"                  [--no-warmup]\n";

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "src", required_argument, NULL, 's' },
		{ "build", required_argument, NULL, 'b' },
		{ "make", required_argument, NULL, 'm' },
		{ "config", required_argument, NULL, 'c' },
		{ "target", required_argument, NULL, 't' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "runtime", required_argument, NULL, 'R' },
		{ "build-timeout", required_argument, NULL, 'T' },
		{ "no-warmup", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = NULL, *config = NULL, *target = NULL;
	unsigned jobs = 0, runtime = 0, timeout = 600, k;
	int warmup = 1;
	struct result r;
	int64_t t0;
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'r': root = optarg; break;
		case 's': src_dir = optarg; break;
		case 'b': build_dir = optarg; break;
		case 'm': make_prog = optarg; break;
		case 'c': config = optarg; break;
		case 't': target = optarg; break;
		case 'j':
			if (parse_uint(optarg, 1, MAX_JOBS, &jobs) < 0)
				goto bad;
			break;
		case 'R':
			if (parse_uint(optarg, 1, MAX_RUNTIME, &runtime) < 0)
				goto bad;
			break;
		case 'T':
			if (parse_uint(optarg, 1, MAX_RUNTIME, &timeout) < 0)
				goto bad;
			break;
		case 'W': warmup = 0; break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || !config || !target || !jobs || !runtime || config[0] == '-' || target[0] == '-')
		goto bad;
	if (strlen(build_dir) > 4000 || (root && setup_root(root) < 0))
		return 1;

	say("kbuild: config=%s target=%s jobs=%u runtime=%u", config, target, jobs, runtime);
	/* the warm-up (klab's, not LKP's): the page cache holds the tree and
	 * the toolchain after it; without it the first iteration reads them
	 * cold, as LKP's first does */
	if (warmup) {
		if (make(config, 0, timeout, &r) < 0)
			return 1;
		say("config: real=%.2f", r.real_s);
		if (make(target, jobs, timeout, &r) < 0)
			return 1;
		say("warmup: real=%.2f user=%.2f sys=%.2f", r.real_s, r.user_s, r.sys_s);
	}
	t0 = now_ms();
	for (k = 1;; k++) {
		struct result fresh;

		if (mrproper(&fresh) < 0)
			return 1;
		say("mrproper: real=%.2f", fresh.real_s);
		if (make(config, 0, timeout, &fresh) < 0)
			return 1;
		say("config: real=%.2f", fresh.real_s);
		if (make(target, jobs, timeout, &r) < 0)
			return 1;
		say("iteration:%u real=%.2f user=%.2f sys=%.2f", k, r.real_s, r.user_s, r.sys_s);
		if (now_ms() - t0 >= (int64_t)runtime * 1000)
			break;
	}
	say("iterations:%u", k);
	return 0;
bad:
	fputs(usage, stderr);
	return 2;
}
