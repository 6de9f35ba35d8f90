/* klab-agent: the guest's /init.  Reads /klab/job.conf, applies its settings,
 * runs the benchmark once and reports KLAB1 records (docs/guest-protocol.md). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/fs.h>
#include <linux/serial.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "jobconf.h"
#include "../bench/bench.h"
#include "perfprof.h"
#include "procmon.h"

#define AGENT_VERSION		1
#define RESULT_PORT_NAME	"org.klab.results"
#define JOB_CONF		"/klab/job.conf"

#define RECORD_MAX		4096	/* bytes per record, newline included */
#define OUT_CHUNK		4000	/* benchmark output per "out" record */
#define PROC_FILE_MAX		(64 * 1024)

/* Every wait below has one of these bounds: the host destroys a stuck
 * guest only at the run timeout, which would waste the whole run. */
#define PORT_WAIT_MS		5000	/* for the virtio port to show up */
#define RECORD_WAIT_MS		5000	/* for the host to take one record */
#define ACK_WAIT_MS		3000	/* for the host to confirm the done record */
#define DRAIN_MS		2000	/* output after the benchmark exited */
#define KILL_WAIT_MS		5000	/* for a SIGKILLed benchmark to go */
#define DEFAULT_TIMEOUT_S	3600	/* when job.conf gives none */
/* perf-profile: its budget after the run is the host's monitor-perf-profile.c
 * after_s (these two and the snapshot after them) */
#define PERF_STOP_MS		30000	/* for perf record to write its data after SIGINT */
#define PERF_REPORT_MS		120000	/* for perf report */
#define PERF_PATH		"/usr/bin/perf"

#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

extern char **environ;

struct run {
	pid_t pid;
	int out_fd;		/* benchmark's stdout+stderr; -1 after EOF */
	int err_fd;		/* errno of a failed exec; -1 after EOF */
	int sig_fd;		/* SIGCHLD */
	int exec_errno;
	int status;
	int reaped;
	int timed_out;
	struct perfprof_run *perf;	/* perf record, also reaped here */
	char line[OUT_CHUNK];
	size_t line_len;
};

static int rec_fd = -1;		/* result records */
static int con_fd = -1;		/* our own log lines */
static int agent_ok = 1;	/* becomes "done 0" */
static int is_init;
static int test_mode;
/* perf-profile's data and perf record's messages; beside --out in --test mode */
static char perf_data[PATH_MAX] = "/tmp/perf.data";
static char perf_log[PATH_MAX + 8] = "/tmp/perf.data.log";

/*
 * Write all of buf, giving the reader at most timeout_ms.  A virtio port
 * whose host side is not connected blocks writers forever (and polls as
 * POLLHUP until the host connects), so never write without POLLOUT.
 */
static int write_bounded(int fd, const char *buf, size_t len, int timeout_ms)
{
	int64_t deadline = mono_ms() + timeout_ms;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int64_t left = deadline - mono_ms();
		ssize_t n;
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		if (!(pfd.revents & POLLOUT)) {
			if (pfd.revents & POLLNVAL) {
				errno = EBADF;
				return -1;
			}
			/* hung up, for now: the host may still connect */
			sleep_ms(left < 50 ? left : 50);
			continue;
		}
		n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* prefix and the formatted text in buf[size], cut to fit; its length
 * (without the NUL), or -1. */
static int vformat(char *buf, size_t size, const char *prefix, const char *fmt, va_list ap) PRINTF_LIKE(4, 0);
static int vformat(char *buf, size_t size, const char *prefix, const char *fmt, va_list ap)
{
	size_t len = strlen(prefix);
	int n;

	memcpy(buf, prefix, len);
	n = vsnprintf(buf + len, size - len, fmt, ap);
	if (n < 0)
		return -1;
	return (int)(len + ((size_t)n < size - len ? (size_t)n : size - len - 1));
}

static void logmsg(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void logmsg(const char *fmt, ...)
{
	char buf[RECORD_MAX];
	va_list ap;
	int n;

	if (con_fd < 0)
		return;
	va_start(ap, fmt);
	n = vformat(buf, sizeof(buf) - 1, "klab-agent: ", fmt, ap);	/* room for the newline */
	va_end(ap);
	if (n < 0)
		return;
	buf[n++] = '\n';
	write_bounded(con_fd, buf, (size_t)n, 1000);
}

/*
 * Send one record: control characters become '?', the line is cut to fit
 * RECORD_MAX and goes out in one write() so records never interleave.
 */
static void emit(const char *line, size_t len)
{
	char buf[RECORD_MAX];
	size_t i;

	if (len > RECORD_MAX - 1)
		len = RECORD_MAX - 1;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];

		buf[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	buf[len++] = '\n';
	if (rec_fd < 0)
		return;
	if (write_bounded(rec_fd, buf, len, RECORD_WAIT_MS) == 0)
		return;

	/* The console is better than nothing: the host keeps its log. */
	agent_ok = 0;
	if (rec_fd == con_fd) {
		rec_fd = -1;
		return;
	}
	logmsg("result channel failed (%s), records go to the console", strerror(errno));
	close(rec_fd);
	rec_fd = con_fd;
	if (rec_fd >= 0)
		write_bounded(rec_fd, buf, len, RECORD_WAIT_MS);
}

static void record(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void record(const char *fmt, ...)
{
	char buf[RECORD_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vformat(buf, sizeof(buf), "KLAB1 ", fmt, ap);
	va_end(ap);
	if (n >= 0)
		emit(buf, (size_t)n);
}

/* To the console log and as a warn record. */
static void vwarn(const char *fmt, va_list ap) PRINTF_LIKE(1, 0);
static void vwarn(const char *fmt, va_list ap)
{
	char buf[RECORD_MAX - 16];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	logmsg("%s", buf);
	record("warn %s", buf);
}

/* Something the host should know; the run goes on. */
static void warn(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

/* An internal error of the agent: reported as a warning and as "done 0". */
static int fail(const char *fmt, ...) PRINTF_LIKE(1, 2);
static int fail(const char *fmt, ...)
{
	va_list ap;

	agent_ok = 0;
	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	return -1;
}

/* Read a small file whole, NUL-terminated; returns its length or -1. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

static void chomp(char *s)
{
	size_t len = strlen(s);

	while (len && (s[len - 1] == '\n' || s[len - 1] == ' '))
		s[--len] = '\0';
}

/* ---- early boot ------------------------------------------------------- */

static int mount_one(const char *src, const char *dir, const char *type,
		     unsigned long flags, const char *data, mode_t mode)
{
	if (mkdir(dir, mode) < 0 && errno != EEXIST)
		return fail("cannot create %s: %s", dir, strerror(errno));
	if (mount(src, dir, type, flags, data) < 0 && errno != EBUSY)
		return fail("cannot mount %s on %s: %s", type, dir, strerror(errno));
	return 0;
}

/*
 * /dev first so that the console is there for "started", which the host
 * uses to measure boot time.  Mount failures are logged but not fatal:
 * the records say what went wrong, and "done 0" marks the run.
 */
static void early_setup(void)
{
	int fd;

	mount_one("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755", 0755);
	con_fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	logmsg("started");

	/* The kernel may have started us without fds 0-2; keep them taken so
	 * that no later open() lands there and leaks into the benchmark. */
	do {
		fd = open("/dev/null", O_RDWR);
	} while (fd >= 0 && fd <= 2);
	if (fd > 2)
		close(fd);

	mount_one("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 0555);
	mount_one("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, 0555);
	mount_one("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777", 01777);
	mount_one("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755", 0755);
	/* POSIX shared memory and semaphores (stress-ng uses both) live here. */
	mount_one("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777", 01777);
	if (chdir("/") < 0)
		logmsg("cannot chdir to /: %s", strerror(errno));
}

/* Is a virtio-serial device bound?  Its ports appear a little later. */
static int have_virtio_serial(void)
{
	struct dirent *de;
	int found = 0;
	DIR *dir;

	dir = opendir("/sys/bus/virtio/drivers/virtio_console");
	if (!dir)
		return 0;
	while (!found && (de = readdir(dir)))
		found = !strncmp(de->d_name, "virtio", 6);
	closedir(dir);
	return found;
}

/* 1: *dev names the port, 0: not (yet) there, -1: no virtio-serial at all. */
static int find_result_port(char *dev, size_t size)
{
	struct dirent *de;
	int found = 0;
	DIR *dir;

	/* the class exists whenever the driver is built in: not a device */
	if (!have_virtio_serial())
		return -1;
	dir = opendir("/sys/class/virtio-ports");
	if (!dir)
		return 0;
	while (!found && (de = readdir(dir))) {
		char path[PATH_MAX], name[256];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
		if (read_file(path, name, sizeof(name)) < 0)
			continue;
		chomp(name);
		if (strcmp(name, RESULT_PORT_NAME))
			continue;
		snprintf(dev, size, "/dev/%s", de->d_name);
		/* devtmpfs creates the node a little after the sysfs entry */
		found = access(dev, F_OK) == 0;
	}
	closedir(dir);
	return found;
}

/*
 * A second serial line, if the machine has one: the 8250 driver also
 * opens its legacy ports when no UART answers there.  The line must pass
 * bytes as they are: no \n → \r\n, no wait for a carrier.
 */
static int open_serial(const char *dev)
{
	struct serial_struct ss;
	struct termios tio;
	int fd;

	fd = open(dev, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (ioctl(fd, TIOCGSERIAL, &ss) == 0 && ss.type == PORT_UNKNOWN) {
		close(fd);
		errno = ENODEV;
		return -1;
	}
	if (tcgetattr(fd, &tio) == 0) {
		cfmakeraw(&tio);
		tio.c_cflag |= CLOCAL;
		tcsetattr(fd, TCSANOW, &tio);
	}
	return fd;
}

static int open_result_channel(void)
{
	int64_t deadline = mono_ms() + PORT_WAIT_MS;
	char dev[PATH_MAX];
	int fd, r;

	while ((r = find_result_port(dev, sizeof(dev))) == 0 && mono_ms() < deadline)
		sleep_ms(50);
	if (r == 1) {
		/* Blocking on purpose: a blocking write returns once the host
		 * took the data, so nothing is in flight at power-off.
		 * write_bounded() polls first, so it cannot hang us. */
		fd = open(dev, O_RDWR | O_NOCTTY | O_CLOEXEC);	/* read: the host's ack */
		if (fd >= 0) {
			logmsg("results go to %s", dev);
			return fd;
		}
		logmsg("cannot open %s: %s", dev, strerror(errno));
	}
	fd = open_serial("/dev/ttyS1");
	if (fd >= 0) {
		logmsg("no port named %s, results go to /dev/ttyS1", RESULT_PORT_NAME);
		return fd;
	}
	logmsg("no result channel, results go to the console");
	return con_fd;
}

/* ---- job.conf (parsed by jobconf.c) ----------------------------------- */

static int read_conf(struct job_conf *jc, const char *path)
{
	ssize_t n;

	jc->buf = malloc(CONF_MAX + 2);
	if (!jc->buf)
		return fail("out of memory");
	/* one byte more than allowed tells a file that is too big */
	n = read_file(path, jc->buf, CONF_MAX + 2);
	if (n < 0)
		return fail("cannot read %s: %s", path, strerror(errno));
	return jobconf_parse(jc, path, (size_t)n);
}

/* jobconf.c's voice is the agent's: records and console lines. */
void jobconf_warn(const char *fmt, ...) __attribute__((alias("warn")));
int jobconf_fail(const char *fmt, ...) __attribute__((alias("fail")));

/* ---- settings and the environment ------------------------------------- */

static int write_value(const char *path, const char *value)
{
	char buf[CONF_LINE_MAX + 1];
	int fd, len, ret = -1;
	ssize_t n;

	/* with a newline, as `echo value > path` would: what people test by hand */
	len = snprintf(buf, sizeof(buf), "%s\n", value);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return fail("cannot open %s: %s", path, strerror(errno));
	n = write(fd, buf, (size_t)len);
	if (n < 0) {
		fail("cannot write '%s' to %s: %s", value, path, strerror(errno));
		goto cleanup;
	}
	if (n != len) {
		fail("short write of '%s' to %s", value, path);
		goto cleanup;
	}
	ret = 0;
cleanup:
	if (close(fd) < 0 && !ret)
		ret = fail("cannot write '%s' to %s: %s", value, path, strerror(errno));
	return ret;
}

/*
 * The host directories the domain shares (9p, read-only in QEMU): each
 * tag mounted read-only at its directory (made, with its parents, in the
 * initramfs).  The guest's ro is a second lock, not the first: QEMU's
 * fsdev refuses writes whatever the guest mounts.  cache=loose: the
 * shares do not change during a run, and a build reads its headers over
 * and over (cache=none would send every read to QEMU).  Not in --test mode:
 * the host's mounts are not the agent's to change.
 */
static int mount_shares(const struct job_conf *jc)
{
	for (size_t i = 0; i < jc->nr_shares; i++) {
		const struct share *sh = &jc->shares[i];
		char dir[PATH_MAX];

		if (test_mode) {
			logmsg("test mode: 9p share %s not mounted on %s", sh->tag, sh->dir);
			continue;
		}
		if (strlen(sh->dir) >= sizeof(dir))
			return fail("mount9p: %s: path too long", sh->dir);
		strcpy(dir, sh->dir);
		for (char *p = dir + 1; (p = strchr(p, '/')); p++) {
			*p = '\0';
			if (mkdir(dir, 0755) < 0 && errno != EEXIST)
				return fail("mount9p: cannot create %s: %s", dir, strerror(errno));
			*p = '/';
		}
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return fail("mount9p: cannot create %s: %s", dir, strerror(errno));
		if (mount(sh->tag, dir, "9p", MS_RDONLY | MS_NOSUID | MS_NODEV,
			  "trans=virtio,version=9p2000.L,cache=loose,msize=262144,ro") < 0)
			return fail("mount9p: cannot mount share %s on %s: %s (are CONFIG_NET_9P_VIRTIO and "
				    "CONFIG_9P_FS in the kernel?)", sh->tag, dir, strerror(errno));
		logmsg("mounted share %s on %s (9p, read-only)", sh->tag, dir);
	}
	return 0;
}

static int apply_settings(const struct job_conf *jc)
{
	size_t i;

	for (i = 0; i < jc->nr_settings; i++) {
		if (write_value(jc->settings[i].path, jc->settings[i].value) < 0)
			return -1;
		logmsg("set %s = %s", jc->settings[i].path, jc->settings[i].value);
	}
	return 0;
}

/*
 * The swap disk the host attached (a job's guest.swap): a version-1 swap
 * header written as mkswap(8) writes it (bootbits, version, last page and
 * no bad pages at 1024, "SWAPSPACE2" in the last ten bytes of the first
 * page), then swapon(2).  Not in --test mode: the host's own swap is not
 * the agent's to change.
 */
static int setup_swap(const struct job_conf *jc)
{
	static unsigned char page[65536];
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t bytes = 0, pages;
	uint32_t info[3];
	int fd, tries;

	if (!jc->swap)
		return 0;
	if (test_mode) {
		logmsg("test mode: swap on %s not enabled", jc->swap);
		return 0;
	}
	if (psz <= 0 || (size_t)psz > sizeof(page))
		return fail("swap: odd page size %ld", psz);
	/* a built-in virtio disk is probed before init runs; wait a little anyway */
	for (tries = 0; (fd = open(jc->swap, O_RDWR | O_CLOEXEC)) < 0 && errno == ENOENT && tries < 50; tries++)
		usleep(100 * 1000);
	if (fd < 0)
		return fail("swap: cannot open %s: %s (is CONFIG_VIRTIO_BLK in the kernel?)", jc->swap,
			    strerror(errno));
	if (ioctl(fd, BLKGETSIZE64, &bytes) < 0 || bytes / (uint64_t)psz < 16) {
		close(fd);
		return fail("swap: %s is not a usable disk (%llu bytes)", jc->swap, (unsigned long long)bytes);
	}
	pages = bytes / (uint64_t)psz;
	if (pages - 1 > UINT32_MAX)
		pages = (uint64_t)UINT32_MAX + 1;
	memset(page, 0, (size_t)psz);
	info[0] = 1;			/* version */
	info[1] = (uint32_t)(pages - 1);	/* last_page */
	info[2] = 0;			/* nr_badpages */
	memcpy(page + 1024, info, sizeof(info));
	memcpy(page + psz - 10, "SWAPSPACE2", 10);
	if (pwrite(fd, page, (size_t)psz, 0) != (ssize_t)psz || fsync(fd) < 0) {
		close(fd);
		return fail("swap: cannot write the header on %s: %s", jc->swap, strerror(errno));
	}
	close(fd);
	if (swapon(jc->swap, 0) < 0)
		return fail("swap: swapon %s: %s%s", jc->swap, strerror(errno),
			    errno == ENOSYS ? " (the kernel has no CONFIG_SWAP)" : "");
	logmsg("swap on %s: %llu MiB", jc->swap, (unsigned long long)((pages * (uint64_t)psz) >> 20));
	return 0;
}

/* The block device (/dev/vdX) whose serial is `serial`, waited for a
 * little as the swap disk is: 0 or -1. */
static int disk_by_serial(const char *serial, char *dev, size_t size)
{
	for (int tries = 0; tries < 50; tries++) {
		DIR *d = opendir("/sys/block");
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char path[PATH_MAX], buf[64];
			ssize_t n;
			int fd;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/sys/block/%s/serial", de->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (n <= 0)
				continue;
			buf[n] = '\0';
			chomp(buf);
			if (!strcmp(buf, serial) && strlen(de->d_name) < 32) {
				snprintf(dev, size, "/dev/%s", de->d_name);
				closedir(d);
				return access(dev, R_OK) == 0 ? 0 : -1;
			}
		}
		if (d)
			closedir(d);
		usleep(100 * 1000);
	}
	return -1;
}

/*
 * The scratch disk (a job's fs:): a fresh file system made on it with the
 * mkfs the image carries (/usr/sbin/mkfs.<type>), mounted for the
 * benchmark.  Not in --test mode: the host's disks are not the agent's.
 */
static int setup_fs(const struct job_conf *jc)
{
	char dev[64], mkfs[64], out[512];
	const char *argv[8];
	int pipefd[2], status, n = 0;
	ssize_t len = 0, r;
	pid_t pid;

	if (!jc->fs.serial)
		return 0;
	if (test_mode) {
		logmsg("test mode: no %s made on disk %s", jc->fs.type, jc->fs.serial);
		return 0;
	}
	if (disk_by_serial(jc->fs.serial, dev, sizeof(dev)) < 0)
		return fail("fs: no disk with serial %s (is CONFIG_VIRTIO_BLK in the kernel?)", jc->fs.serial);
	snprintf(mkfs, sizeof(mkfs), "/usr/sbin/mkfs.%s", jc->fs.type);
	argv[n++] = mkfs;
	/* quiet, and over whatever the disk held (it is new each boot) */
	argv[n++] = !strcmp(jc->fs.type, "ext4") ? "-F" : "-f";
	argv[n++] = "-q";
	argv[n++] = dev;
	argv[n] = NULL;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return fail("fs: pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0) {
		child_stdio(pipefd[1]);
		execv(mkfs, (char *const *)argv);
		_exit(127);
	}
	close(pipefd[1]);
	/* to its end, keeping the first lines: a full pipe would stop mkfs */
	while (pid > 0) {
		char sink[512];
		size_t room = sizeof(out) - 1 - (size_t)len;

		r = read(pipefd[0], room ? out + len : sink, room ? room : sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (room)
			len += r;
	}
	close(pipefd[0]);
	out[len] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		chomp(out);
		for (char *c = out; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = ' ';
		return fail("fs: %s %s failed%s%s", mkfs, dev, *out ? ": " : "", out);
	}
	if (mount_one(dev, jc->fs.dir, jc->fs.type, MS_NOSUID | MS_NODEV, NULL, 0755) < 0)
		return -1;
	/* as /tmp: benchmarks may run as anyone */
	chmod(jc->fs.dir, 01777);
	logmsg("fs: %s made on %s (serial %s), mounted on %s", jc->fs.type, dev, jc->fs.serial, jc->fs.dir);
	return 0;
}

/* "always [madvise] never" → "madvise" */
static void send_bracketed(const char *key, const char *path)
{
	char buf[256], *open_br, *close_br;

	/* no THP in this kernel: no record, rather than a made-up value */
	if (read_file(path, buf, sizeof(buf)) < 0)
		return;
	open_br = strchr(buf, '[');
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (!close_br)
		return;
	*close_br = '\0';
	record("env %s %s", key, open_br + 1);
}

static void send_env(const char *perf_event)
{
	static char buf[PROC_FILE_MAX];
	struct utsname uts;
	struct dirent *de;
	unsigned nodes = 0;
	char *p;
	DIR *dir;

	if (uname(&uts) == 0)
		record("env kernel %s", uts.release);
	record("env cpus %ld", sysconf(_SC_NPROCESSORS_ONLN));

	dir = opendir("/sys/devices/system/node");
	if (dir) {
		while ((de = readdir(dir)))
			if (!strncmp(de->d_name, "node", 4) && isdigit((unsigned char)de->d_name[4]))
				nodes++;
		closedir(dir);
	}
	/* a kernel without CONFIG_NUMA has no node directory, yet one node */
	record("env numa_nodes %u", nodes ? nodes : 1);

	if (read_file("/proc/meminfo", buf, sizeof(buf)) >= 0 &&
	    (p = strstr(buf, "MemTotal:"))) {
		p += strlen("MemTotal:");
		record("env mem_total_kb %llu", strtoull(p, NULL, 10));
	}
	send_bracketed("thp_enabled", "/sys/kernel/mm/transparent_hugepage/enabled");
	send_bracketed("thp_defrag", "/sys/kernel/mm/transparent_hugepage/defrag");
	if (read_file("/proc/cmdline", buf, sizeof(buf)) >= 0) {
		chomp(buf);
		record("env cmdline %s", buf);
	}
	/* which event perf-profile samples: its percentages are of that */
	if (perf_event)
		record("env perf_event %s", perf_event);
}

/* ---- monitoring ------------------------------------------------------- */

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* A /proc/vmstat ("name value") or /proc/meminfo ("Name:  value kB") line. */
static void send_name_value(const char *phase, const char *source, char *line)
{
	char *name, *value, *save;

	name = strtok_r(line, ": \t", &save);
	value = name ? strtok_r(NULL, ": \t", &save) : NULL;
	if (value && is_number(value))
		record("mon %s %s %s %s", phase, source, name, value);
}

/* A /proc/stat line: the all-CPU and per-CPU times, ctxt and processes. */
static void send_stat(const char *phase, const char *source, char *line)
{
	static const char *const cpu_names[] = {
		"user", "nice", "system", "idle", "iowait", "irq", "softirq",
	};
	char *tok, *save;

	tok = strtok_r(line, " ", &save);
	if (!tok)
		return;
	if (!strncmp(tok, "cpu", 3) && (!tok[3] || (is_number(tok + 3) && strlen(tok) < 16))) {
		const char *cpu = tok;	/* "cpu" all, "cpu3" one (LKP's per-CPU proc-stat) */

		for (size_t i = 0; i < sizeof(cpu_names) / sizeof(cpu_names[0]); i++) {
			tok = strtok_r(NULL, " ", &save);
			if (!tok || !is_number(tok))
				break;
			record("mon %s %s %s.%s %s", phase, source, cpu, cpu_names[i], tok);
		}
	} else if (!strcmp(tok, "ctxt") || !strcmp(tok, "processes")) {
		char *value = strtok_r(NULL, " ", &save);

		if (value && is_number(value))
			record("mon %s %s %s %s", phase, source, tok, value);
	}
}

static void send_parsed(void *ctx, const char *name, unsigned long long value)
{
	const char *const *pa = ctx;	/* phase, source */

	record("mon %s %s %s %llu", pa[0], pa[1], name, value);
}

/* A per-CPU table; a kernel without it (no /proc/softirqs) sends nothing. */
static void send_table(const char *phase, const char *source, const char *path,
		       void (*parse)(const char *, procmon_emit, void *))
{
	static char buf[PROC_FILE_MAX];
	const char *pa[] = { phase, source };

	if (read_file(path, buf, sizeof(buf)) >= 0)
		parse(buf, send_parsed, pa);
}

static void send_interrupts(const char *phase, const char *source, const char *path)
{
	send_table(phase, source, path, procmon_interrupts);
}

static void send_softirqs(const char *phase, const char *source, const char *path)
{
	send_table(phase, source, path, procmon_softirqs);
}

/* Every node's meminfo or vmstat; a kernel without CONFIG_NUMA has none:
 * nothing sent. */
static void send_per_node(const char *phase, const char *source, const char *dirpath, const char *file)
{
	static char buf[PROC_FILE_MAX];
	const char *pa[] = { phase, source };
	struct dirent *de;
	DIR *dir = opendir(dirpath);

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char path[PATH_MAX];

		if (strncmp(de->d_name, "node", 4) || !is_number(de->d_name + 4) || strlen(de->d_name) > 10)
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", dirpath, de->d_name, file);
		if (read_file(path, buf, sizeof(buf)) < 0)
			continue;
		if (!strcmp(file, "meminfo"))
			procmon_node_meminfo(buf, send_parsed, pa);
		else
			procmon_node_vmstat(buf, (unsigned)strtoul(de->d_name + 4, NULL, 10), send_parsed, pa);
	}
	closedir(dir);
}

static void send_numa_meminfo(const char *phase, const char *source, const char *dirpath)
{
	send_per_node(phase, source, dirpath, "meminfo");
}

static void send_numa_vmstat(const char *phase, const char *source, const char *dirpath)
{
	send_per_node(phase, source, dirpath, "vmstat");
}

/* The monitors, one row each: the file read and what one of its lines
 * sends, or a reader of its own (a table with a header, a directory).
 * The host's side of each is orchestrator/monitor-<name>.c.  interrupts
 * and softirqs are one record per CPU and line: before and after only.
 * perf-profile is no snapshot: run_job starts and stops its perf record
 * around the benchmark (perfprof.c). */
static const struct monitor {
	const char *name, *path;
	void (*send_line)(const char *phase, const char *source, char *line);
	int sampled;		/* also read every monitor_interval */
	void (*send_all)(const char *phase, const char *source, const char *path);
} monitors[] = {
	{ "vmstat", "/proc/vmstat", send_name_value, 1, NULL },
	{ "meminfo", "/proc/meminfo", send_name_value, 1, NULL },
	{ "stat", "/proc/stat", send_stat, 0, NULL },
	{ "numa-meminfo", "/sys/devices/system/node", NULL, 1, send_numa_meminfo },
	{ "interrupts", "/proc/interrupts", NULL, 0, send_interrupts },
	{ "softirqs", "/proc/softirqs", NULL, 0, send_softirqs },
	{ "numa-vmstat", "/sys/devices/system/node", NULL, 1, send_numa_vmstat },
};

static void send_monitor(const char *phase, const struct monitor *m)
{
	static char buf[PROC_FILE_MAX];
	char *line, *next;

	if (m->send_all) {
		m->send_all(phase, m->name, m->path);
		return;
	}
	if (read_file(m->path, buf, sizeof(buf)) < 0) {
		fail("cannot read %s: %s", m->path, strerror(errno));
		return;
	}
	for (line = buf; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		m->send_line(phase, m->name, line);
	}
}

/* Every monitor the job wants before and after the run, the sampled
 * ones in between. */
static void snapshot(const struct job_conf *jc, const char *phase, int all)
{
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++)
		if ((all || monitors[i].sampled) && jobconf_monitor_on(jc, monitors[i].name))
			send_monitor(phase, &monitors[i]);
}

/* ---- perf-profile (perfprof.c) ---------------------------------------- */

/* Not in the default set: only a job that names it (a few MB in the
 * image, and a profiler running beside the benchmark). */
static int profile_wanted(const struct job_conf *jc)
{
	return jc && jobconf_monitor_named(jc, "perf-profile");
}

/* what went wrong, and the head of perf record's own messages */
static void warn_perf(const char *what, const char *err)
{
	char text[256];
	ssize_t n;

	n = read_file(perf_log, text, sizeof(text));
	for (ssize_t i = 0; i < n; i++)
		if (text[i] == '\n')
			text[i] = ' ';
	if (n > 0) {
		chomp(text);
		warn("perf-profile: %s: %s (perf: %s)", what, err, text);
	} else {
		warn("perf-profile: %s: %s", what, err);
	}
}

/* perf record, right after the before snapshot; 1 when it runs.  The
 * job's timeout bounds the run, so the samples stay bounded too. */
static int profile_start(struct perfprof_run *pr, const char *event, unsigned timeout_s)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned freq = perfprof_freq(timeout_s, cpus > 0 ? (unsigned)cpus : 1);
	char err[256];

	if (access(PERF_PATH, X_OK) < 0) {
		warn("perf-profile: no %s: %s", PERF_PATH, strerror(errno));
		return 0;
	}
	if (perfprof_start(pr, PERF_PATH, event, freq, perf_data, perf_log, err, sizeof(err)) < 0) {
		warn_perf("cannot start perf record", err);
		return 0;
	}
	logmsg("perf record -e %s -F %u started", event, freq);
	return 1;
}

/* Stop it once the benchmark is gone (before the after snapshot, which
 * it must not be in); 1 when it left data to report on. */
static int profile_stop(struct perfprof_run *pr)
{
	char err[256];

	if (perfprof_stop(pr, PERF_STOP_MS, err, sizeof(err)) < 0) {
		warn_perf("perf record failed", err);
		return 0;
	}
	return 1;
}

/* perf report, reduced to LKP's rows, as mon records of phase. */
static void profile_send(const char *phase)
{
	static struct perfprof pp;
	static char buf[PERFPROF_MAX_REPORT];
	char err[256];
	size_t sent = 0;
	ssize_t n;

	n = perfprof_report(PERF_PATH, perf_data, buf, sizeof(buf), PERF_REPORT_MS, err, sizeof(err));
	if (n < 0) {
		warn("perf-profile: %s", err);
		goto cleanup;
	}
	perfprof_parse(&pp, buf);
	for (int k = 0; k < PERFPROF_NR_KINDS; k++)
		for (size_t i = 0; i < pp.nr[k]; i++, sent++)
			record("mon %s perf-profile %s %.2f", phase, pp.rows[k][i].name, pp.rows[k][i].pct);
	if (!sent)
		warn("perf-profile: perf report gave no row of %.1f%% or more", PERFPROF_MIN_PCT);
cleanup:
	/* tmpfs is the guest's memory */
	unlink(perf_data);
	unlink(perf_log);
}

/* ---- the benchmark ---------------------------------------------------- */

static void send_out(const char *data, size_t len)
{
	char buf[RECORD_MAX];
	size_t prefix = strlen("KLAB1 out ");

	memcpy(buf, "KLAB1 out ", prefix);
	memcpy(buf + prefix, data, len);
	emit(buf, prefix + len);
}

/* Long lines are split rather than cut: every byte printed may be a number. */
static void feed_output(struct run *r, const char *data, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (data[i] == '\n') {
			send_out(r->line, r->line_len);
			r->line_len = 0;
			continue;
		}
		if (r->line_len == OUT_CHUNK) {
			send_out(r->line, r->line_len);
			r->line_len = 0;
		}
		r->line[r->line_len++] = data[i];
	}
}

static void close_output(struct run *r)
{
	if (r->line_len)
		send_out(r->line, r->line_len);
	r->line_len = 0;
	close(r->out_fd);
	r->out_fd = -1;
}

/* The minimal PATH and HOME, then job.conf's env lines (which may replace them). */
static char **build_env(const struct job_conf *jc)
{
	char **envp;
	size_t n = 0, i, j;

	envp = calloc(jc->nr_env + 3, sizeof(*envp));
	if (!envp)
		return NULL;
	envp[n++] = "PATH=/usr/bin:/bin:/usr/lib/klab";
	envp[n++] = "HOME=/tmp";
	for (i = 0; i < jc->nr_env; i++) {
		size_t name_len = (size_t)(strchr(jc->env[i], '=') - jc->env[i]) + 1;

		for (j = 0; j < n; j++)
			if (!strncmp(envp[j], jc->env[i], name_len))
				break;
		envp[j] = jc->env[i];
		if (j == n)
			n++;
	}
	return envp;
}

/* In the child: never returns. */
static void exec_benchmark(const struct job_conf *jc, char **envp, int out_fd, int err_fd,
			   const sigset_t *mask)
{
	static const int sigs[] = { SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP };
	size_t i;
	int e;

	setpgid(0, 0);
	/* whatever our own parent ignored, a benchmark starts with defaults */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	child_stdio(out_fd);
	if (chdir("/tmp") < 0 && chdir("/") < 0) {
		/* wherever we are is fine too */
	}
	/* execvp() searches the PATH of environ, so it must be the benchmark's */
	environ = envp;
	execvp(jc->argv[0], jc->argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0) {
		/* the parent then reports "exited 127" */
	}
	_exit(127);
}

static void reap(struct run *r)
{
	struct signalfd_siginfo si;
	pid_t pid;
	int status;

	while (read(r->sig_fd, &si, sizeof(si)) > 0)
		;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == r->pid) {
			r->status = status;
			r->reaped = 1;
		}
		perfprof_reaped(r->perf, pid, status);
	}
}

/*
 * Kill what is left of the benchmark's group and reap it, so that the
 * "after" snapshot sees a quiet machine.  Bounded: something that left
 * the group (setsid) is not waited for.
 */
static void reap_leftovers(pid_t pgid, struct perfprof_run *perf)
{
	int64_t deadline = mono_ms() + 1000;

	kill(-pgid, SIGKILL);
	while (mono_ms() < deadline) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid > 0)
			perfprof_reaped(perf, pid, status);

		if (pid < 0)
			break;	/* ECHILD: all gone */
		if (pid == 0 && kill(-pgid, 0) < 0)
			break;	/* the group is gone; strangers are not waited for */
		if (pid == 0)
			sleep_ms(10);
	}
}

static void report_exit(const struct run *r)
{
	if (r->exec_errno)
		record("exit exec-failed %d", r->exec_errno);
	else if (r->timed_out)
		record("exit timeout 0");
	else if (!r->reaped)
		fail("lost track of the benchmark");
	else if (WIFEXITED(r->status))
		record("exit exited %d", WEXITSTATUS(r->status));
	else if (WIFSIGNALED(r->status))
		record("exit signaled %d", WTERMSIG(r->status));
	else
		fail("benchmark ended with status %#x", r->status);
}

static void read_output(struct run *r)
{
	char buf[65536];
	ssize_t n;

	n = read(r->out_fd, buf, sizeof(buf));
	if (n > 0)
		feed_output(r, buf, (size_t)n);
	else if (n == 0 || (errno != EINTR && errno != EAGAIN))
		close_output(r);
}

static void read_exec_errno(struct run *r)
{
	int e;
	ssize_t n;

	n = read(r->err_fd, &e, sizeof(e));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n == sizeof(e))
		r->exec_errno = e ? e : ENOEXEC;
	close(r->err_fd);
	r->err_fd = -1;
}

/*
 * Wait for the benchmark while forwarding its output, sampling the
 * monitors and watching the timeout, all from one poll() loop.  Every
 * child is reaped here: as PID 1 the benchmark's orphans are ours.
 */
static void supervise(struct run *r, const struct job_conf *jc, int64_t t0)
{
	int64_t deadline = t0 + (int64_t)jc->timeout_s * 1000;
	int64_t next_mon = jc->monitor_s ? t0 + (int64_t)jc->monitor_s * 1000 : INT64_MAX;
	int64_t drain_until = INT64_MAX, kill_wait_until = INT64_MAX;
	unsigned mon_s = 0;

	for (;;) {
		struct pollfd pfd[3];
		int64_t now, wake;
		int nfds = 0, out_i = -1, err_i = -1;

		reap(r);
		now = mono_ms();
		if (r->reaped && drain_until == INT64_MAX) {
			/* Whatever is left in its group is a leftover; what it
			 * wrote already stays readable in the pipe. */
			kill(-r->pid, SIGKILL);
			drain_until = now + DRAIN_MS;
		}
		if (r->reaped && ((r->out_fd < 0 && r->err_fd < 0) || now >= drain_until))
			break;
		if (!r->timed_out && now >= deadline) {
			logmsg("timeout after %u s, killing the benchmark", jc->timeout_s);
			kill(-r->pid, SIGKILL);
			kill(r->pid, SIGKILL);
			r->timed_out = 1;
			kill_wait_until = now + KILL_WAIT_MS;
		}
		if (!r->reaped && now >= kill_wait_until) {
			fail("benchmark still there %d s after SIGKILL", KILL_WAIT_MS / 1000);
			break;
		}
		if (now >= next_mon && !r->reaped) {
			char phase[32];

			mon_s += jc->monitor_s;
			snprintf(phase, sizeof(phase), "t%u", mon_s);
			snapshot(jc, phase, 0);
			next_mon += (int64_t)jc->monitor_s * 1000;
			continue;	/* that took a while: look again */
		}

		pfd[nfds++] = (struct pollfd){ .fd = r->sig_fd, .events = POLLIN };
		if (r->out_fd >= 0) {
			out_i = nfds;
			pfd[nfds++] = (struct pollfd){ .fd = r->out_fd, .events = POLLIN };
		}
		if (r->err_fd >= 0) {
			err_i = nfds;
			pfd[nfds++] = (struct pollfd){ .fd = r->err_fd, .events = POLLIN };
		}
		wake = r->timed_out ? kill_wait_until : deadline;
		if (drain_until < wake)
			wake = drain_until;
		if (next_mon < wake)
			wake = next_mon;
		wake -= now;
		if (wake < 0)
			wake = 0;
		if (wake > 60000)
			wake = 60000;
		if (poll(pfd, (nfds_t)nfds, (int)wake) < 0) {
			if (errno == EINTR)
				continue;
			fail("poll: %s", strerror(errno));
			break;
		}
		if (out_i >= 0 && (pfd[out_i].revents & (POLLIN | POLLHUP | POLLERR)))
			read_output(r);
		if (err_i >= 0 && (pfd[err_i].revents & (POLLIN | POLLHUP | POLLERR)))
			read_exec_errno(r);
	}
	if (r->out_fd >= 0)
		close_output(r);
	if (r->err_fd >= 0)
		close(r->err_fd);
	r->err_fd = -1;
	reap_leftovers(r->pid, r->perf);
}

static void run_job(const struct job_conf *jc, const char *perf_event)
{
	struct perfprof_run perf = { 0 };
	struct run r = { .pid = -1, .out_fd = -1, .err_fd = -1, .sig_fd = -1, .perf = &perf };
	int out_pipe[2] = { -1, -1 }, err_pipe[2] = { -1, -1 };
	sigset_t chld, old_mask;
	struct timespec ts;
	char **envp = NULL;
	int profiling = 0;
	int64_t t0;

	/* 0 is what the kernel refuses anyway: it means "leave them" */
	if (jc->drop_caches > 0) {
		char value[2] = { (char)('0' + jc->drop_caches), '\0' };

		sync();
		if (write_value("/proc/sys/vm/drop_caches", value) < 0)
			return;
	}
	snapshot(jc, "before", 1);
	profiling = perf_event && profile_start(&perf, perf_event, jc->timeout_s);

	envp = build_env(jc);
	if (!envp) {
		fail("out of memory");
		return;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);
	r.sig_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (r.sig_fd < 0) {
		fail("signalfd: %s", strerror(errno));
		goto cleanup;
	}
	if (pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
		fail("pipe: %s", strerror(errno));
		goto cleanup;
	}

	clock_gettime(CLOCK_REALTIME, &ts);
	record("start %lld", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	logmsg("running %s", jc->argv[0]);
	t0 = mono_ms();
	r.pid = fork();
	if (r.pid < 0) {
		fail("fork: %s", strerror(errno));
		goto cleanup;
	}
	if (r.pid == 0)
		exec_benchmark(jc, envp, out_pipe[1], err_pipe[1], &old_mask);
	/* also here, so that a kill of the group cannot miss an early child */
	setpgid(r.pid, r.pid);
	close(out_pipe[1]);
	close(err_pipe[1]);
	out_pipe[1] = err_pipe[1] = -1;
	r.out_fd = out_pipe[0];
	r.err_fd = err_pipe[0];
	out_pipe[0] = err_pipe[0] = -1;

	supervise(&r, jc, t0);
	report_exit(&r);
	profiling = profiling && profile_stop(&perf);
	snapshot(jc, "after", 1);
	if (profiling)
		profile_send("after");

cleanup:
	if (perf.pid > 0) {
		/* the run ended early: no profile */
		kill(-perf.pid, SIGKILL);
		waitpid(perf.pid, NULL, 0);
	}
	if (r.out_fd >= 0)
		close(r.out_fd);
	if (r.sig_fd >= 0)
		close(r.sig_fd);
	if (out_pipe[0] >= 0)
		close(out_pipe[0]);
	if (out_pipe[1] >= 0)
		close(out_pipe[1]);
	if (err_pipe[0] >= 0)
		close(err_pipe[0]);
	if (err_pipe[1] >= 0)
		close(err_pipe[1]);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	free(envp);
}

/* ---- the end ---------------------------------------------------------- */

/* Make sure the host has the records before the machine goes away. */
static void flush_results(void)
{
	int64_t deadline = mono_ms() + 3000;
	int queued;

	if (rec_fd < 0)
		return;
	if (!isatty(rec_fd)) {
		fsync(rec_fd);	/* EINVAL on a virtio port: its writes are synchronous */
		return;
	}
	/* Not tcdrain(): it has no bound, and alarm() needs POSIX timers,
	 * which small guest kernels leave out. */
	while (ioctl(rec_fd, TIOCOUTQ, &queued) == 0 && queued > 0 && mono_ms() < deadline)
		sleep_ms(10);
	/* the UART's own FIFO: a few more bytes at 115200 baud */
	sleep_ms(20);
}

/*
 * The host's "ack" once it has the done record: a blocking write only
 * means QEMU took the data, and libvirt may drop what it has not relayed
 * yet when the domain stops (the tail of a run's last monitor snapshots
 * was lost that way).  Bounded: a host that never answers costs ACK_WAIT_MS.
 */
static void wait_for_ack(void)
{
	int64_t deadline = mono_ms() + ACK_WAIT_MS;
	char buf[64];
	size_t got = 0;

	if (rec_fd < 0 || rec_fd == con_fd || isatty(rec_fd))
		return;
	while (mono_ms() < deadline) {
		struct pollfd pfd = { .fd = rec_fd, .events = POLLIN };
		ssize_t n;
		int r = poll(&pfd, 1, (int)(deadline - mono_ms()));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || !(pfd.revents & POLLIN))
			return;	/* timed out, or no host on the port */
		n = read(rec_fd, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			return;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "ack"))
			return;
		if (got >= sizeof(buf) - 1)
			got = 0;
	}
}

static void power_off(void)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	sync();
	logmsg("powering off");
	reboot(RB_POWER_OFF);
	logmsg("power off failed: %s; halting", strerror(errno));
	reboot(RB_HALT_SYSTEM);
	/* Returning from init panics the kernel: loud, and the host notices. */
}

static const char usage[] =
	"usage: klab-agent [--conf FILE] [--out FILE]\n"
	"   or: klab-agent --test --conf FILE --out FILE\n"
	"\n"
	"As PID 1 (the guest's /init) arguments are ignored; it mounts the\n"
	"pseudo file systems, runs " JOB_CONF " and powers off.\n"
	"\n"
	"    --test       run on the host: no result port, log on stderr\n"
	"    --conf FILE  job configuration (default " JOB_CONF ")\n"
	"    --out FILE   write the records to FILE\n";

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "test", no_argument, NULL, 't' },
		{ "conf", required_argument, NULL, 'c' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct job_conf jc = { .drop_caches = -1 };
	const char *conf_path = JOB_CONF, *out_path = NULL;
	int c;

	is_init = getpid() == 1;
	/* The kernel hands init the command-line words it did not know:
	 * as PID 1 the arguments are not ours to judge. */
	while (!is_init && (c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 't':
			test_mode = 1;
			break;
		case 'c':
			conf_path = optarg;
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!is_init && (optind != argc || (test_mode && !out_path))) {
		fputs(usage, stderr);
		return 2;
	}

	if (is_init) {
		early_setup();
	} else {
		con_fd = 2;
		logmsg("started");
		/* Orphans of the benchmark come to us, as they would to PID 1. */
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	}

	if (out_path) {
		/* not /tmp/perf.data of the host: beside the records */
		snprintf(perf_data, sizeof(perf_data), "%s.perf.data", out_path);
		snprintf(perf_log, sizeof(perf_log), "%s.log", perf_data);
		rec_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (rec_fd < 0) {
			logmsg("cannot open %s: %s", out_path, strerror(errno));
			rec_fd = con_fd;
			agent_ok = 0;
		}
	} else {
		rec_fd = open_result_channel();
	}
	record("hello %d", AGENT_VERSION);

	if (read_conf(&jc, conf_path) == 0 && apply_settings(&jc) == 0 && setup_swap(&jc) == 0 &&
	    setup_fs(&jc) == 0 && mount_shares(&jc) == 0) {
		if (jc.name)
			logmsg("job %s", jc.name);
		const char *perf_event = profile_wanted(&jc) ? perfprof_event() : NULL;

		if (!jc.timeout_s)
			jc.timeout_s = DEFAULT_TIMEOUT_S;
		send_env(perf_event);
		run_job(&jc, perf_event);
	} else {
		/* still say what machine this was: it helps to read the failure */
		send_env(NULL);
	}

	record("done %d", agent_ok);
	flush_results();
	if (is_init)
		wait_for_ack();
	logmsg("done%s", agent_ok ? "" : " (with errors)");
	jobconf_release(&jc);
	if (rec_fd >= 0 && rec_fd != con_fd)
		close(rec_fd);
	if (is_init)
		power_off();
	return agent_ok ? 0 : 1;
}
