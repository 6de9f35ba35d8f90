/* will-it-scale: klab's runner of will-it-scale's testcases, written for
 * klab from each test's published behaviour (every testcase lkp-tests'
 * will-it-scale jobs run).  N tasks (processes or threads) loop over one
 * testcase; the runner prints the operations done per second.  Several
 * --test options run one after another, each in a child of its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

#include "bench.h"

#define AREA_SIZE	(128UL << 20)	/* malloc1, mmap1/2, page_fault1-3, tlb_flush1/3 */
#define SMALL_AREA	(1UL << 20)	/* tlb_flush2 */
#define FILE_SIZE	(1UL << 20)	/* read1-4, write1, fallocate1/2 */
#define BUF_LEN		4096
#define POLL_FILES	128
#define MAX_TASKS	4096
#define MAX_TESTS	128
#define MAX_SECONDS	86400
#define READY_WAIT_S	10

/* One cache line per task: the counters must not bounce between CPUs. */
struct counter {
	uint64_t ops;
	int ready;
	int failed;
	char pad[64 - sizeof(uint64_t) - 2 * sizeof(int)];
} __attribute__((aligned(64)));

/* What a testcase's tasks share, set up before they start. */
struct ctx {
	const struct testcase *tc;
	unsigned nr_tasks;
	int threads;
	const char *dir;		/* where temporary files go (default /tmp) */
	char shared[PATH_MAX];		/* the "same file" tests' file */
	char (*paths)[PATH_MAX];	/* per task: a file or a directory */
};

struct task {
	const struct ctx *ctx;
	unsigned nr;			/* 0 .. nr_tasks - 1 */
	struct counter *c;
};

struct testcase {
	const char *name;
	const char *description;
	void (*loop)(struct task *t);
	/* before the tasks start (NULL: nothing); 0 or -1 after a message */
	int (*prepare)(struct ctx *ctx);
};

/* ---- output: write(2) from a stack buffer, no stdio buffer to allocate
 * while tasks move the program break (brk1, brk2) ---- */

static void say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	for (ssize_t off = 0, w; off < n; off += w) {
		w = write(fd, buf + off, (size_t)(n - off));
		if (w <= 0 && errno != EINTR)
			return;
		if (w < 0)
			w = 0;
	}
}

/* ---- what every task does ---- */

/* Tasks write only their own counter and the parent only reads it, so
 * relaxed atomics are enough: plain loads and stores, no locked add. */
static void count(struct counter *c, uint64_t n)
{
	__atomic_store_n(&c->ops, __atomic_load_n(&c->ops, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static void task_failed(struct task *t, const char *what)
{
	say(2, "will-it-scale: %s: task %u: %s: %s\n", t->ctx->tc->name, t->nr, what, strerror(errno));
	__atomic_store_n(&t->c->failed, 1, __ATOMIC_RELAXED);
}

/* A loop's check: on failure the task says what and stops counting. */
#define CHECK(t, cond, what)                  \
	do {                                  \
		if (!(cond)) {                \
			task_failed((t), (what)); \
			return;               \
		}                             \
	} while (0)

/* An unlinked temporary file of the task's own in ctx->dir. */
static int task_tmpfile(struct task *t, int flags)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/willitscale.XXXXXX", t->ctx->dir);
	fd = mkostemp(path, flags);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* An unlinked file of `size` bytes (written, or a hole when !write). */
static int task_file_of(struct task *t, size_t size, int write_it, int flags)
{
	static const char zero[BUF_LEN];
	int fd = task_tmpfile(t, flags);

	if (fd < 0)
		return -1;
	if (!write_it)
		return ftruncate(fd, (off_t)size) == 0 ? fd : (close(fd), -1);
	for (size_t done = 0; done < size; done += BUF_LEN)
		if (write(fd, zero, BUF_LEN) != BUF_LEN) {
			close(fd);
			return -1;
		}
	return fd;
}

/* A helper task beside t (context_switch1's echo): a thread in thread
 * mode, else a process that dies with its task. */
static int new_helper(struct task *t, void *(*fn)(void *), void *arg)
{
	pthread_t th;
	pid_t pid;

	if (t->ctx->threads)
		return pthread_create(&th, NULL, fn, arg) ? -1 : 0;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fn(arg);
		_exit(1);
	}
	return 0;
}

/* ---- the testcases ---- */

static void brk1(struct task *t)
{
	long page = sysconf(_SC_PAGESIZE);
	char *addr = sbrk(0);

	for (;;) {
		CHECK(t, brk(addr + page) == 0, "brk up");
		CHECK(t, brk(addr) == 0, "brk down");
		count(t->c, 2);
	}
}

/* brk2: the same above a page of the task's own */
static void brk2(struct task *t)
{
	long page = sysconf(_SC_PAGESIZE);
	char *addr = sbrk(page);

	CHECK(t, addr != (void *)-1, "sbrk");
	addr += page;
	for (;;) {
		CHECK(t, brk(addr + page) == 0, "brk up");
		CHECK(t, brk(addr) == 0, "brk down");
		count(t->c, 2);
	}
}

struct pipes {
	int to[2], from[2];
};

static void *echo(void *arg)
{
	struct pipes *p = arg;
	char c;

	for (;;) {
		if (read(p->to[0], &c, 1) != 1 && errno != EINTR)
			break;
		if (write(p->from[1], &c, 1) != 1 && errno != EINTR)
			break;
	}
	return NULL;
}

static int xfer(int fd, int out)
{
	char c = 0;
	ssize_t n;

	do
		n = out ? write(fd, &c, 1) : read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? 0 : -1;
}

/* a byte to a helper task and back: two context switches */
static void context_switch1(struct task *t)
{
	static __thread struct pipes p;

	CHECK(t, pipe(p.to) == 0 && pipe(p.from) == 0, "pipe");
	CHECK(t, new_helper(t, echo, &p) == 0, "start the echo task");
	for (;;) {
		CHECK(t, xfer(p.to[1], 1) == 0, "write");
		CHECK(t, xfer(p.from[0], 0) == 0, "read");
		count(t->c, 2);
	}
}

static void dup1(struct task *t)
{
	int fd = task_tmpfile(t, 0);

	CHECK(t, fd >= 0, "temporary file");
	for (;;) {
		int fd2 = dup(fd);

		CHECK(t, fd2 >= 0, "dup");
		close(fd2);
		count(t->c, 1);
	}
}

static void eventfd1(struct task *t)
{
	int fd = eventfd(0, 0);
	uint64_t v = 1;

	CHECK(t, fd >= 0, "eventfd");
	for (;;) {
		CHECK(t, write(fd, &v, sizeof(v)) == sizeof(v) || errno == EINTR, "write");
		CHECK(t, read(fd, &v, sizeof(v)) == sizeof(v) || errno == EINTR, "read");
		v = 1;
		count(t->c, 1);
	}
}

/* fallocate a file of the task's 1/128 of a megabyte at a time, cut it
 * back to nothing at a megabyte */
static void fallocate_in(struct task *t, int fd)
{
	off_t at = 0;

	CHECK(t, fd >= 0, "temporary file");
	for (;;) {
		CHECK(t, fallocate(fd, 0, at, FILE_SIZE / 128) == 0 || errno == EINTR, "fallocate");
		at += FILE_SIZE / 128;
		if (at >= (off_t)FILE_SIZE) {
			CHECK(t, ftruncate(fd, 0) == 0, "ftruncate");
			at = 0;
		}
		count(t->c, 1);
	}
}

/* fallocate1 on tmpfs (/dev/shm), fallocate2 in the test directory */
static void fallocate1(struct task *t)
{
	char path[] = "/dev/shm/willitscale.XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	fallocate_in(t, fd);
}

static void fallocate2(struct task *t)
{
	fallocate_in(t, task_tmpfile(t, 0));
}

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* Wake nobody, and wait for a value that is not there (EAGAIN at once):
 * the futex hash without sleeping; shared (1, 2) and private (3, 4). */
static void futex_loop(struct task *t, int op)
{
	for (;;) {
		uint32_t word = 0;

		futex(&word, op, 1);
		count(t->c, 1);
	}
}

static void futex1(struct task *t)
{
	futex_loop(t, FUTEX_WAKE);
}

static void futex2(struct task *t)
{
	futex_loop(t, FUTEX_WAIT);
}

static void futex3(struct task *t)
{
	futex_loop(t, FUTEX_WAKE_PRIVATE);
}

static void futex4(struct task *t)
{
	futex_loop(t, FUTEX_WAIT_PRIVATE);
}

static void getppid1(struct task *t)
{
	for (;;) {
		getppid();
		count(t->c, 1);
	}
}

/* a write lock of the first byte, taken and given back */
static void lock_loop(struct task *t, int fd)
{
	struct flock l = { .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	CHECK(t, fd >= 0, "open");
	for (;;) {
		l.l_type = F_WRLCK;
		CHECK(t, fcntl(fd, F_SETLKW, &l) == 0, "lock");
		l.l_type = F_UNLCK;
		CHECK(t, fcntl(fd, F_SETLKW, &l) == 0, "unlock");
		count(t->c, 2);
	}
}

static void lock1(struct task *t)
{
	lock_loop(t, task_tmpfile(t, 0));
}

static void lock2(struct task *t)
{
	lock_loop(t, open(t->ctx->shared, O_RDWR));
}

static void lseek_loop(struct task *t, int fd)
{
	CHECK(t, fd >= 0, "open");
	for (;;) {
		lseek(fd, 0, SEEK_SET);
		count(t->c, 1);
	}
}

static void lseek1(struct task *t)
{
	lseek_loop(t, task_file_of(t, BUF_LEN, 1, 0));
}

static void lseek2(struct task *t)
{
	lseek_loop(t, open(t->ctx->shared, O_RDWR));
}

/*
 * As upstream's malloc1: glibc serves 128 MiB with mmap (far above its
 * mmap threshold) and writes the chunk header, so each loop is one
 * mapping, one page fault and one unmapping.  Only the first page is
 * touched on purpose: klab's demo regression (THP-aligned anonymous
 * mappings, jobs/will-it-scale-malloc1.yaml) turns that one fault into
 * clearing a huge page; touching every page would hide it.
 */
static void malloc1(struct task *t)
{
	for (;;) {
		volatile char *p = malloc(AREA_SIZE);

		CHECK(t, p, "malloc");
		/* the fault glibc's header write makes anyway, made explicit
		 * so that the compiler cannot drop the malloc/free pair */
		p[0] = 1;
		free((void *)p);
		count(t->c, 1);
	}
}

static void malloc2(struct task *t)
{
	for (;;) {
		volatile char *p = malloc(1024);

		CHECK(t, p, "malloc");
		p[0] = 1;
		free((void *)p);
		count(t->c, 1);
	}
}

static void mmap_loop(struct task *t, int fd)
{
	int flags = fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_PRIVATE;

	for (;;) {
		void *p = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, flags, fd, 0);

		CHECK(t, p != MAP_FAILED, "mmap");
		munmap(p, AREA_SIZE);
		count(t->c, 1);
	}
}

static void mmap1(struct task *t)
{
	mmap_loop(t, -1);
}

static void mmap2(struct task *t)
{
	int fd = task_file_of(t, AREA_SIZE, 0, 0);

	CHECK(t, fd >= 0, "a 128 MiB file");
	mmap_loop(t, fd);
}

static void open_loop(struct task *t, const char *path, int unlink_too)
{
	for (;;) {
		int fd = open(path, O_RDWR | (unlink_too ? O_CREAT : 0), 0600);

		CHECK(t, fd >= 0, "open");
		close(fd);
		if (unlink_too)
			unlink(path);
		count(t->c, 1);
	}
}

static void open1(struct task *t)
{
	open_loop(t, t->ctx->paths[t->nr], 0);
}

/* open2, unlink2: a file in a directory of the task's own */
static void open2(struct task *t)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/willitscale", t->ctx->paths[t->nr]);
	open_loop(t, path, 0);
}

static void open3(struct task *t)
{
	open_loop(t, t->ctx->shared, 0);
}

static void unlink1(struct task *t)
{
	open_loop(t, t->ctx->paths[t->nr], 1);
}

static void unlink2(struct task *t)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/willitscale", t->ctx->paths[t->nr]);
	open_loop(t, path, 1);
}

/* Write a byte into each page of a 128 MiB mapping, one operation per
 * page fault, then unmap it. */
static void fault_loop(struct task *t, int fd, int flags)
{
	long page = sysconf(_SC_PAGESIZE);

	for (;;) {
		volatile char *p = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, flags, fd, 0);

		CHECK(t, p != MAP_FAILED, "mmap");
		for (size_t i = 0; i < AREA_SIZE; i += (size_t)page) {
			p[i] = 0;
			count(t->c, 1);
		}
		munmap((void *)p, AREA_SIZE);
	}
}

static void page_fault1(struct task *t)
{
	fault_loop(t, -1, MAP_PRIVATE | MAP_ANONYMOUS);
}

static void page_fault2(struct task *t)
{
	int fd = task_file_of(t, AREA_SIZE, 0, 0);

	CHECK(t, fd >= 0, "a 128 MiB file");
	fault_loop(t, fd, MAP_PRIVATE);
}

static void page_fault3(struct task *t)
{
	int fd = task_file_of(t, AREA_SIZE, 0, 0);

	CHECK(t, fd >= 0, "a 128 MiB file");
	fault_loop(t, fd, MAP_SHARED);
}

/* a byte through a pipe (pipe1) or a unix socket pair (unix1) to itself */
static void loopback_loop(struct task *t, int fd[2])
{
	for (;;) {
		CHECK(t, xfer(fd[1], 1) == 0, "write");
		CHECK(t, xfer(fd[0], 0) == 0, "read");
		count(t->c, 1);
	}
}

static void pipe1(struct task *t)
{
	int fd[2];

	CHECK(t, pipe(fd) == 0, "pipe");
	loopback_loop(t, fd);
}

static void unix1(struct task *t)
{
	int fd[2];

	CHECK(t, socketpair(AF_UNIX, SOCK_STREAM, 0, fd) == 0, "socketpair");
	loopback_loop(t, fd);
}

static void poll_loop(struct task *t, unsigned n)
{
	struct pollfd pfd[POLL_FILES];

	for (unsigned i = 0; i < n; i++) {
		pfd[i].fd = task_tmpfile(t, 0);
		pfd[i].events = POLLOUT;
		CHECK(t, pfd[i].fd >= 0, "temporary file");
	}
	for (;;) {
		CHECK(t, poll(pfd, n, 0) >= 0, "poll");
		count(t->c, 1);
	}
}

static void poll1(struct task *t)
{
	poll_loop(t, 1);
}

static void poll2(struct task *t)
{
	poll_loop(t, POLL_FILES);
}

/* poll2's 128 files a task: room in RLIMIT_NOFILE for every task */
static int prepare_poll2(struct ctx *ctx)
{
	struct rlimit r;
	rlim_t want = (rlim_t)(POLL_FILES + 16) * ctx->nr_tasks + 64;

	if (getrlimit(RLIMIT_NOFILE, &r) < 0)
		return -1;
	if (r.rlim_cur >= want)
		return 0;
	r.rlim_cur = want;
	if (r.rlim_max < want)
		r.rlim_max = want;
	if (setrlimit(RLIMIT_NOFILE, &r) < 0) {
		say(2, "will-it-scale: poll2: cannot raise the open file limit to %llu: %s\n",
		    (unsigned long long)want, strerror(errno));
		return -1;
	}
	return 0;
}

static void posix_semaphore1(struct task *t)
{
	sem_t sem;

	CHECK(t, sem_init(&sem, 0, 1) == 0, "sem_init");
	for (;;) {
		sem_wait(&sem);
		sem_post(&sem);
		count(t->c, 1);
	}
}

/* pread/pwrite of a page at `off` of fd */
static void pio_loop(struct task *t, int fd, off_t off, int out)
{
	char buf[BUF_LEN] = { 0 };

	CHECK(t, fd >= 0, "open");
	for (;;) {
		ssize_t n = out ? pwrite(fd, buf, BUF_LEN, off) : pread(fd, buf, BUF_LEN, off);

		CHECK(t, n == BUF_LEN, out ? "pwrite" : "pread");
		count(t->c, 1);
	}
}

static off_t own_page(const struct task *t)
{
	return (off_t)t->nr * sysconf(_SC_PAGESIZE);
}

static void pread1(struct task *t)
{
	pio_loop(t, task_file_of(t, BUF_LEN, 1, 0), 0, 0);
}

static void pread2(struct task *t)
{
	pio_loop(t, open(t->ctx->shared, O_RDONLY), 0, 0);
}

static void pread3(struct task *t)
{
	pio_loop(t, open(t->ctx->shared, O_RDONLY), own_page(t), 0);
}

static void pwrite1(struct task *t)
{
	pio_loop(t, task_tmpfile(t, 0), 0, 1);
}

static void pwrite2(struct task *t)
{
	pio_loop(t, open(t->ctx->shared, O_RDWR), 0, 1);
}

static void pwrite3(struct task *t)
{
	pio_loop(t, open(t->ctx->shared, O_RDWR), own_page(t), 1);
}

/* The mutexes are the program's (contended between threads; each process
 * has its own copy) or the task's own (pthread_mutex2). */
static pthread_mutex_t global_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned long global_val;
static __thread unsigned long tls_val;

static void pthread_mutex1(struct task *t)
{
	for (;;) {
		pthread_mutex_lock(&global_mutex);
		pthread_mutex_unlock(&global_mutex);
		count(t->c, 1);
	}
}

static void pthread_mutex2(struct task *t)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	for (;;) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		count(t->c, 1);
	}
}

/* the update inside the lock: a shared line (3), the stack (4), TLS (5) */
static void pthread_mutex3(struct task *t)
{
	for (;;) {
		pthread_mutex_lock(&global_mutex);
		__atomic_store_n(&global_val, global_val + 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&global_mutex);
		count(t->c, 1);
	}
}

static void pthread_mutex4(struct task *t)
{
	volatile unsigned long local = 0;

	for (;;) {
		pthread_mutex_lock(&global_mutex);
		local++;
		pthread_mutex_unlock(&global_mutex);
		count(t->c, 1);
	}
}

static void pthread_mutex5(struct task *t)
{
	for (;;) {
		pthread_mutex_lock(&global_mutex);
		__atomic_store_n(&tls_val, tls_val + 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&global_mutex);
		count(t->c, 1);
	}
}

/* read a page at a time from a 1 MiB file, from the start again at its end */
static void read_loop(struct task *t, int fd, int direct)
{
	long page = sysconf(_SC_PAGESIZE);
	char *buf = direct ? aligned_alloc((size_t)page, (size_t)page) : malloc(BUF_LEN);
	size_t len = direct ? (size_t)page : BUF_LEN;

	CHECK(t, fd >= 0, direct ? "open with O_DIRECT (tmpfs has none before Linux 6.6: give the job a disk, fs:)"
				 : "open");
	CHECK(t, buf, "malloc");
	for (;;) {
		ssize_t n = read(fd, buf, len);

		CHECK(t, n >= 0 || errno == EINTR, "read");
		if (n == 0)
			lseek(fd, 0, SEEK_SET);
		count(t->c, 1);
	}
}

static void read1(struct task *t)
{
	read_loop(t, task_file_of(t, FILE_SIZE, 1, 0), 0);
}

static void read2(struct task *t)
{
	read_loop(t, open(t->ctx->shared, O_RDONLY), 0);
}

static void read3(struct task *t)
{
	int fd = task_file_of(t, FILE_SIZE, 1, 0), dfd = -1;
	char path[64];

	/* written through the page cache, read around it */
	if (fd >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		dfd = open(path, O_RDONLY | O_DIRECT);
		close(fd);
	}
	read_loop(t, dfd, 1);
}

static void read4(struct task *t)
{
	read_loop(t, open(t->ctx->shared, O_RDONLY | O_DIRECT), 1);
}

/* lseek to `off`, then read or write a page */
static void seekio_loop(struct task *t, int fd, off_t off, int out)
{
	char buf[BUF_LEN] = { 0 };

	CHECK(t, fd >= 0, "open");
	for (;;) {
		lseek(fd, off, SEEK_SET);
		CHECK(t, (out ? write(fd, buf, BUF_LEN) : read(fd, buf, BUF_LEN)) == BUF_LEN, out ? "write" : "read");
		count(t->c, 1);
	}
}

static void readseek1(struct task *t)
{
	seekio_loop(t, task_file_of(t, BUF_LEN, 1, 0), 0, 0);
}

static void readseek2(struct task *t)
{
	seekio_loop(t, open(t->ctx->shared, O_RDWR), 0, 0);
}

static void readseek3(struct task *t)
{
	seekio_loop(t, open(t->ctx->shared, O_RDONLY), own_page(t), 0);
}

static void writeseek1(struct task *t)
{
	seekio_loop(t, task_tmpfile(t, 0), 0, 1);
}

static void writeseek2(struct task *t)
{
	seekio_loop(t, open(t->ctx->shared, O_RDWR), 0, 1);
}

static void writeseek3(struct task *t)
{
	seekio_loop(t, open(t->ctx->shared, O_RDWR), own_page(t), 1);
}

static void write1(struct task *t)
{
	char buf[BUF_LEN] = { 0 };
	int fd = task_tmpfile(t, 0);
	size_t done = 0;

	CHECK(t, fd >= 0, "temporary file");
	for (;;) {
		ssize_t n = write(fd, buf, BUF_LEN);

		CHECK(t, n >= 0 || errno == EINTR, "write");
		done += n > 0 ? (size_t)n : 0;
		if (done >= FILE_SIZE) {
			done = 0;
			lseek(fd, 0, SEEK_SET);
		}
		count(t->c, 1);
	}
}

static void sched_yield1(struct task *t)
{
	for (;;) {
		CHECK(t, sched_yield() == 0, "sched_yield");
		count(t->c, 1);
	}
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void signal1(struct task *t)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	CHECK(t, sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
	for (;;) {
		raise(SIGUSR1);
		count(t->c, 1);
	}
}

/* Dirty a page, throw it away with MADV_DONTNEED (a TLB flush on every
 * CPU the mm runs on), check what a read then finds; page by page. */
static void tlb_loop(struct task *t, int fd, size_t size, int flags, char after)
{
	long page = sysconf(_SC_PAGESIZE);

	for (;;) {
		volatile char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, fd, 0);

		CHECK(t, p != MAP_FAILED, "mmap");
		for (size_t i = 0; i < size; i += (size_t)page) {
			p[i] = 1;
			madvise((void *)(p + i), (size_t)page, MADV_DONTNEED);
			CHECK(t, p[i] == after, "the page after MADV_DONTNEED");
			count(t->c, 1);
		}
		munmap((void *)p, size);
	}
}

static void tlb_flush1(struct task *t)
{
	int fd = task_file_of(t, AREA_SIZE, 0, 0);

	CHECK(t, fd >= 0, "a 128 MiB file");
	tlb_loop(t, fd, AREA_SIZE, MAP_PRIVATE, 0);
}

static void tlb_flush2(struct task *t)
{
	tlb_loop(t, -1, SMALL_AREA, MAP_PRIVATE | MAP_ANONYMOUS, 0);
}

/* shared: the write stays in the file */
static void tlb_flush3(struct task *t)
{
	int fd = task_file_of(t, AREA_SIZE, 0, 0);

	CHECK(t, fd >= 0, "a 128 MiB file");
	tlb_loop(t, fd, AREA_SIZE, MAP_SHARED, 1);
}

/* ---- setup the tests share ---- */

static int fail_setup(const struct ctx *ctx, const char *what, const char *path)
{
	say(2, "will-it-scale: %s: %s %s: %s\n", ctx->tc->name, what, path, strerror(errno));
	return -1;
}

/* The shared file: `pages` pages written (one a task when 0). */
static int shared_file(struct ctx *ctx, size_t bytes)
{
	static const char zero[BUF_LEN];
	int fd;

	snprintf(ctx->shared, sizeof(ctx->shared), "%s/willitscale.XXXXXX", ctx->dir);
	fd = mkstemp(ctx->shared);
	if (fd < 0)
		return fail_setup(ctx, "cannot create", ctx->shared);
	for (size_t done = 0; done < bytes; done += BUF_LEN)
		if (write(fd, zero, BUF_LEN) != BUF_LEN) {
			close(fd);
			return fail_setup(ctx, "cannot write", ctx->shared);
		}
	close(fd);
	return 0;
}

static int prepare_shared_page(struct ctx *ctx)
{
	return shared_file(ctx, BUF_LEN);
}

static int prepare_shared_mib(struct ctx *ctx)
{
	return shared_file(ctx, FILE_SIZE);
}

/* a page for every task (pread3, pwrite3, readseek3, writeseek3) */
static int prepare_shared_pages(struct ctx *ctx)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return shared_file(ctx, (ctx->nr_tasks * page + BUF_LEN - 1) / BUF_LEN * BUF_LEN);
}

static int prepare_shared_empty(struct ctx *ctx)
{
	return shared_file(ctx, 0);
}

static int alloc_paths(struct ctx *ctx)
{
	ctx->paths = calloc(ctx->nr_tasks, sizeof(*ctx->paths));
	if (!ctx->paths) {
		say(2, "will-it-scale: out of memory\n");
		return -1;
	}
	return 0;
}

/* a file of each task's own: there (open1) or only its name (unlink1) */
static int task_files(struct ctx *ctx, int keep)
{
	if (alloc_paths(ctx) < 0)
		return -1;
	for (unsigned i = 0; i < ctx->nr_tasks; i++) {
		int fd;

		snprintf(ctx->paths[i], sizeof(ctx->paths[i]), "%s/willitscale.XXXXXX", ctx->dir);
		fd = mkstemp(ctx->paths[i]);
		if (fd < 0)
			return fail_setup(ctx, "cannot create", ctx->paths[i]);
		close(fd);
		if (!keep)
			unlink(ctx->paths[i]);
	}
	return 0;
}

static int prepare_open1(struct ctx *ctx)
{
	return task_files(ctx, 1);
}

static int prepare_unlink1(struct ctx *ctx)
{
	return task_files(ctx, 0);
}

/* a directory of each task's own holding its file (open2, unlink2) */
static int prepare_task_dirs(struct ctx *ctx)
{
	if (alloc_paths(ctx) < 0)
		return -1;
	for (unsigned i = 0; i < ctx->nr_tasks; i++) {
		char file[PATH_MAX + 16];
		int fd;

		snprintf(ctx->paths[i], sizeof(ctx->paths[i]), "%s/willitscale.XXXXXX", ctx->dir);
		if (!mkdtemp(ctx->paths[i]))
			return fail_setup(ctx, "cannot create", ctx->paths[i]);
		snprintf(file, sizeof(file), "%s/willitscale", ctx->paths[i]);
		fd = open(file, O_RDWR | O_CREAT, 0600);
		if (fd < 0)
			return fail_setup(ctx, "cannot create", file);
		close(fd);
	}
	return 0;
}

/* The files and directories the setup made (the tasks' own temporary
 * files are unlinked as they are made). */
static void cleanup(struct ctx *ctx)
{
	if (ctx->shared[0])
		unlink(ctx->shared);
	for (unsigned i = 0; ctx->paths && i < ctx->nr_tasks; i++) {
		char file[PATH_MAX + 16];

		if (!ctx->paths[i][0])
			continue;
		snprintf(file, sizeof(file), "%s/willitscale", ctx->paths[i]);
		unlink(file);
		if (rmdir(ctx->paths[i]) < 0)
			unlink(ctx->paths[i]);
	}
}

/* Every testcase of lkp-tests' will-it-scale jobs, in their order. */
static const struct testcase testcases[] = {
	{ "brk1", "brk increase/decrease of one page", brk1, NULL },
	{ "brk2", "brk unshared increase/decrease of one page", brk2, NULL },
	{ "context_switch1", "context switch via pipes", context_switch1, NULL },
	{ "dup1", "separate file dup/close", dup1, NULL },
	{ "eventfd1", "eventfd read/write of 8 bytes", eventfd1, NULL },
	{ "fallocate1", "separate file fallocate against tmpfs", fallocate1, NULL },
	{ "fallocate2", "separate file fallocate", fallocate2, NULL },
	{ "futex1", "futex(FUTEX_WAKE)", futex1, NULL },
	{ "futex2", "futex(FUTEX_WAIT)", futex2, NULL },
	{ "futex3", "futex(FUTEX_WAKE_PRIVATE)", futex3, NULL },
	{ "futex4", "futex(FUTEX_WAIT_PRIVATE)", futex4, NULL },
	{ "getppid1", "getppid", getppid1, NULL },
	{ "lock1", "separate file write lock/unlock", lock1, NULL },
	{ "lock2", "same file write lock/unlock", lock2, prepare_shared_empty },
	{ "lseek1", "separate file lseek", lseek1, NULL },
	{ "lseek2", "same file lseek", lseek2, prepare_shared_page },
	{ "malloc1", "malloc/free of 128MB", malloc1, NULL },
	{ "malloc2", "malloc/free of 1kB", malloc2, NULL },
	{ "mmap1", "anonymous memory mmap/munmap of 128MB", mmap1, NULL },
	{ "mmap2", "separate file mmap/munmap of 128MB", mmap2, NULL },
	{ "open1", "separate file open/close", open1, prepare_open1 },
	{ "open2", "separate file open/close in different directories", open2, prepare_task_dirs },
	{ "open3", "same file open/close", open3, prepare_shared_empty },
	{ "page_fault1", "anonymous memory page fault", page_fault1, NULL },
	{ "page_fault2", "separate file private mapping page fault", page_fault2, NULL },
	{ "page_fault3", "separate file shared mapping page fault", page_fault3, NULL },
	{ "pipe1", "pipe read/write", pipe1, NULL },
	{ "poll1", "poll of 1 fd", poll1, NULL },
	{ "poll2", "poll of 128 fds", poll2, prepare_poll2 },
	{ "posix_semaphore1", "POSIX semaphores", posix_semaphore1, NULL },
	{ "pread1", "separate file pread", pread1, NULL },
	{ "pread2", "same file pread to same offset", pread2, prepare_shared_page },
	{ "pread3", "same file pread to different offsets", pread3, prepare_shared_pages },
	{ "pthread_mutex1", "contended pthread mutex", pthread_mutex1, NULL },
	{ "pthread_mutex2", "uncontended pthread mutex", pthread_mutex2, NULL },
	{ "pthread_mutex3", "contended pthread mutex with global update", pthread_mutex3, NULL },
	{ "pthread_mutex4", "contended pthread mutex with local update", pthread_mutex4, NULL },
	{ "pthread_mutex5", "contended pthread mutex with TLS update", pthread_mutex5, NULL },
	{ "pwrite1", "separate file pwrite", pwrite1, NULL },
	{ "pwrite2", "same file pwrite to same offset", pwrite2, prepare_shared_page },
	{ "pwrite3", "same file pwrite to different offsets", pwrite3, prepare_shared_pages },
	{ "read1", "separate file read", read1, NULL },
	{ "read2", "same file read", read2, prepare_shared_mib },
	{ "read3", "separate file O_DIRECT read", read3, NULL },
	{ "read4", "same file O_DIRECT read", read4, prepare_shared_mib },
	{ "readseek1", "separate file seek+read", readseek1, NULL },
	{ "readseek2", "same file seek+read to same offset", readseek2, prepare_shared_page },
	{ "readseek3", "same file seek+read to different offsets", readseek3, prepare_shared_pages },
	{ "sched_yield", "sched_yield", sched_yield1, NULL },
	{ "signal1", "signal delivery", signal1, NULL },
	{ "tlb_flush1", "TLB flush of separate file private mapping", tlb_flush1, NULL },
	{ "tlb_flush2", "TLB flush of anonymous memory private mapping", tlb_flush2, NULL },
	{ "tlb_flush3", "TLB flush of separate file shared mapping", tlb_flush3, NULL },
	{ "unix1", "unix domain socket read/write", unix1, NULL },
	{ "unlink1", "separate file open/close/unlink", unlink1, prepare_unlink1 },
	{ "unlink2", "separate file open/close/unlink in different directories", unlink2, prepare_task_dirs },
	{ "write1", "separate file write", write1, NULL },
	{ "writeseek1", "separate file seek+write", writeseek1, NULL },
	{ "writeseek2", "same file seek+write to same offset", writeseek2, prepare_shared_page },
	{ "writeseek3", "same file seek+write to different offsets", writeseek3, prepare_shared_pages },
};

#define NR_TESTCASES (sizeof(testcases) / sizeof(testcases[0]))

/* ---- running one testcase in one mode ---- */

static void *task_main(void *arg)
{
	struct task *t = arg;

	__atomic_store_n(&t->c->ready, 1, __ATOMIC_RELEASE);
	t->ctx->tc->loop(t);
	return NULL;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_until(int64_t t_ns)
{
	struct timespec ts = { t_ns / 1000000000, t_ns % 1000000000 };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int any_failed(struct counter *counters, unsigned n, int processes)
{
	for (unsigned i = 0; i < n; i++)
		if (__atomic_load_n(&counters[i].failed, __ATOMIC_RELAXED))
			return 1;
	/* a process can also just die (OOM killer, a signal) */
	return processes && waitpid(-1, NULL, WNOHANG) > 0;
}

static int start_tasks(const struct ctx *ctx, struct counter *counters, pid_t *pids, struct task *tasks)
{
	pid_t parent = getpid();

	for (unsigned i = 0; i < ctx->nr_tasks; i++) {
		tasks[i] = (struct task){ ctx, i, &counters[i] };
		if (ctx->threads) {
			pthread_t th;
			int err = pthread_create(&th, NULL, task_main, &tasks[i]);

			if (err) {
				say(2, "will-it-scale: cannot create a thread: %s\n", strerror(err));
				return -1;
			}
			continue;
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			say(2, "will-it-scale: fork: %s\n", strerror(errno));
			return -1;
		}
		if (pids[i] == 0) {
			/* never outlive the runner, whatever kills it */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			task_main(&tasks[i]);
			_exit(1);
		}
	}
	return 0;
}

static void stop_tasks(pid_t *pids, unsigned n)
{
	if (!pids)
		return;
	for (unsigned i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (unsigned i = 0; i < n; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
}

static int wait_ready(struct counter *counters, unsigned n, int processes)
{
	int64_t deadline = now_ns() + (int64_t)READY_WAIT_S * 1000000000;

	for (unsigned i = 0; i < n; i++) {
		while (!__atomic_load_n(&counters[i].ready, __ATOMIC_ACQUIRE)) {
			if (any_failed(counters, n, processes) || now_ns() > deadline) {
				say(2, "will-it-scale: task %u did not start\n", i);
				return -1;
			}
			usleep(1000);
		}
	}
	return 0;
}

struct options {
	const struct testcase *tests[MAX_TESTS];
	unsigned nr_tests;
	const char *mode;	/* process, thread or both */
	const char *dir;
	unsigned nr_tasks, runtime_s, warmup_s;
};

/* Once a second the operations each task did since the last: the warm-up
 * seconds' totals, then each measured second's min, max and total, then
 * the averages.  0, or -1 when a task failed. */
static int report_seconds(const struct options *o, struct counter *counters, uint64_t *last, int processes)
{
	uint64_t sum_totals = 0;
	int64_t tick = now_ns();

	for (unsigned s = 1; s <= o->warmup_s + o->runtime_s; s++) {
		uint64_t min = UINT64_MAX, max = 0, total = 0;

		/* absolute deadlines: the printing does not make seconds longer */
		tick += 1000000000;
		sleep_until(tick);
		for (unsigned i = 0; i < o->nr_tasks; i++) {
			uint64_t now = __atomic_load_n(&counters[i].ops, __ATOMIC_RELAXED);
			uint64_t delta = now - last[i];

			last[i] = now;
			total += delta;
			if (delta < min)
				min = delta;
			if (delta > max)
				max = delta;
		}
		if (any_failed(counters, o->nr_tasks, processes)) {
			say(2, "will-it-scale: a task failed\n");
			return -1;
		}
		if (s <= o->warmup_s) {
			say(1, "warmup:%u total:%llu\n", s, (unsigned long long)total);
			continue;
		}
		sum_totals += total;
		say(1, "second:%u min:%llu max:%llu total:%llu\n", s - o->warmup_s, (unsigned long long)min,
		    (unsigned long long)max, (unsigned long long)total);
	}
	say(1, "average:%llu\n", (unsigned long long)(sum_totals / o->runtime_s));
	say(1, "per_task_average:%llu\n", (unsigned long long)(sum_totals / o->runtime_s / o->nr_tasks));
	return 0;
}

/* One testcase in one mode, in the calling process (a child of the
 * runner's, which exits after it: threads still looping go with it). */
static int run_testcase(const struct options *o, const struct testcase *tc, int threads)
{
	struct ctx ctx = { .tc = tc, .nr_tasks = o->nr_tasks, .threads = threads, .dir = o->dir };
	struct counter *counters;
	struct task *tasks;
	uint64_t *last;
	pid_t *pids = NULL;
	int ret = -1;

	/* shared with forked tasks; threads would not need it, but one code path */
	counters = mmap(NULL, o->nr_tasks * sizeof(*counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	tasks = calloc(o->nr_tasks, sizeof(*tasks));
	last = calloc(o->nr_tasks, sizeof(*last));
	if (!threads)
		pids = calloc(o->nr_tasks, sizeof(*pids));
	if (counters == MAP_FAILED || !tasks || !last || (!threads && !pids)) {
		say(2, "will-it-scale: out of memory\n");
		return -1;
	}
	say(1, "will-it-scale: testcase=%s mode=%s tasks=%u warmup=%u runtime=%u\n", tc->name,
	    threads ? "thread" : "process", o->nr_tasks, o->warmup_s, o->runtime_s);
	if (tc->prepare && tc->prepare(&ctx) < 0)
		goto out;
	if (start_tasks(&ctx, counters, pids, tasks) < 0 || wait_ready(counters, o->nr_tasks, !threads) < 0)
		goto out;
	ret = report_seconds(o, counters, last, !threads);
out:
	stop_tasks(pids, o->nr_tasks);
	cleanup(&ctx);
	return ret;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Each testcase and mode in a child of its own: a test's threads, its
 * rlimits, signal handlers and program break end with it.  Its files go
 * into a directory of its own, removed once it has gone (threads still
 * looping would make them again behind a cleanup).  0 when every one
 * ran. */
static int run_all(const struct options *o)
{
	int failed = 0;

	for (unsigned i = 0; i < o->nr_tests; i++) {
		for (int threads = 0; threads < 2; threads++) {
			struct options own = *o;
			char dir[PATH_MAX];
			int status;
			pid_t pid;

			if ((threads && !strcmp(o->mode, "process")) || (!threads && !strcmp(o->mode, "thread")))
				continue;
			snprintf(dir, sizeof(dir), "%s/willitscale.XXXXXX", o->dir);
			if (!mkdtemp(dir)) {
				say(2, "will-it-scale: cannot create a directory in %s: %s\n", o->dir, strerror(errno));
				return -1;
			}
			own.dir = dir;
			pid = fork();
			if (pid < 0) {
				say(2, "will-it-scale: fork: %s\n", strerror(errno));
				rmdir(dir);
				return -1;
			}
			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				/* leave without exit handlers under looping threads' feet */
				_exit(run_testcase(&own, o->tests[i], threads) == 0 ? 0 : 1);
			}
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				if (WIFSIGNALED(status))
					say(2, "will-it-scale: %s %s: died of signal %d\n", o->tests[i]->name,
					    threads ? "thread" : "process", WTERMSIG(status));
				failed = 1;
			}
		}
	}
	return failed ? -1 : 0;
}

static const char usage[] =
	"usage: will-it-scale --test NAME... --tasks N [--mode process|thread|both]\n"
	"                     [--runtime SECS] [--warmup SECS] [--dir DIR]\n"
	"       will-it-scale --list\n"
	"\n"
	"    --test NAME      a testcase (--list names them); given again, the\n"
	"                     testcases run one after another\n"
	"    --mode MODE      tasks are processes (default), threads, or both in turn\n"
	"    --tasks N        how many tasks run the testcase at once\n"
	"    --runtime SECS   measured seconds (default 10)\n"
	"    --warmup SECS    seconds run before measuring (default 2)\n"
	"    --dir DIR        where the testcases' files go (default /tmp)\n"
	"    --list           print each testcase and what it does\n";

static const struct testcase *find_test(const char *name)
{
	for (size_t i = 0; i < NR_TESTCASES; i++)
		if (!strcmp(name, testcases[i].name))
			return &testcases[i];
	return NULL;
}

/* The command line into o: 0, 1 after --help or --list, -1 after a message. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option options[] = {
		{ "test", required_argument, NULL, 'T' },
		{ "mode", required_argument, NULL, 'm' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "dir", required_argument, NULL, 'd' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'T':
			if (o->nr_tests == MAX_TESTS) {
				fprintf(stderr, "will-it-scale: at most %d tests\n", MAX_TESTS);
				return -1;
			}
			if (!(o->tests[o->nr_tests++] = find_test(optarg))) {
				fprintf(stderr, "will-it-scale: unknown test '%s' (--list names them)\n", optarg);
				return -1;
			}
			break;
		case 'm':
			if (strcmp(optarg, "process") && strcmp(optarg, "thread") && strcmp(optarg, "both")) {
				fprintf(stderr, "will-it-scale: mode is process, thread or both, not '%s'\n", optarg);
				return -1;
			}
			o->mode = optarg;
			break;
		case 'n':
			if (parse_uint(optarg, 1, MAX_TASKS, &o->nr_tasks) < 0) {
				fprintf(stderr, "will-it-scale: --tasks wants 1 to %d, not '%s'\n", MAX_TASKS, optarg);
				return -1;
			}
			break;
		case 'r':
			if (parse_uint(optarg, 1, MAX_SECONDS, &o->runtime_s) < 0) {
				fprintf(stderr, "will-it-scale: bad --runtime '%s'\n", optarg);
				return -1;
			}
			break;
		case 'w':
			if (parse_uint(optarg, 0, MAX_SECONDS, &o->warmup_s) < 0) {
				fprintf(stderr, "will-it-scale: bad --warmup '%s'\n", optarg);
				return -1;
			}
			break;
		case 'd':
			if (optarg[0] != '/' || strlen(optarg) > PATH_MAX - 64) {
				fprintf(stderr, "will-it-scale: --dir wants an absolute path, not '%s'\n", optarg);
				return -1;
			}
			o->dir = optarg;
			break;
		case 'l':
			for (size_t i = 0; i < NR_TESTCASES; i++)
				printf("%s\t%s\n", testcases[i].name, testcases[i].description);
			return 1;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind != argc || !o->nr_tests || !o->nr_tasks) {
		fprintf(stderr, "will-it-scale: --test and --tasks are required\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = "process", .dir = "/tmp", .runtime_s = 10, .warmup_s = 2 };

	switch (parse_options(argc, argv, &o)) {
	case 1:
		return 0;
	case -1:
		fputs(usage, stderr);
		return 2;
	}
	/* nothing buffered may be duplicated into the children */
	fflush(stdout);
	return run_all(&o) == 0 ? 0 : 1;
}
