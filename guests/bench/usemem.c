/* usemem: vm-scalability's memory toucher, written for klab from its
 * published behaviour.  Each task (a process, or a thread of one) maps
 * SIZE bytes (anonymous, huge pages, or a shared mapping of a file),
 * reads or writes it a word at a time, in order or at random, and prints
 * its throughput as "N bytes / N usecs = N KB/s".  With --prealloc the
 * area is mapped before the tasks start and they all touch it (copy on
 * write, or the file's pages). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT	26
#endif
#define MAP_HUGE_2MB_	(21 << MAP_HUGE_SHIFT)

#define MAX_PROCS	4096
#define MAX_THREADS	1024
#define MAX_RUNTIME	(7 * 86400)
#define MAX_UNITS	4096	/* mappings a task keeps until it is done */
#define REMAP_FACTOR	10	/* --remap grows the preallocated area tenfold */

struct options {
	unsigned nr_procs, nr_threads, runtime_s;
	int readonly, random, prealloc, prefault, open_rw, hugetlb, remap, msync;
	const char *file;
	size_t size, unit;
};

static struct options o = { .nr_procs = 1 };
static int fd = -1;
static char *prealloc;		/* --prealloc: the area every task touches */
static size_t prealloc_len;
static int64_t deadline_us;	/* 0: no runtime */
static int go_pipe[2];		/* the tasks start together */

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int past_deadline(void)
{
	return deadline_us && now_us() >= deadline_us;
}

static void *map_area(size_t len)
{
	int prot = o.readonly && !o.open_rw ? PROT_READ : PROT_READ | PROT_WRITE;
	int flags = o.file ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
	void *p;

	if (o.prefault)
		flags |= MAP_POPULATE;
	if (o.hugetlb)
		flags |= MAP_HUGETLB | MAP_HUGE_2MB_;
	p = mmap(NULL, len, prot, flags, o.file ? fd : -1, 0);
	if (p == MAP_FAILED) {
		fprintf(stderr, "usemem: mmap of %zu bytes failed: %s%s\n", len, strerror(errno),
			o.hugetlb ? " (are there huge pages to take? nr_overcommit_hugepages)" : "");
		return NULL;
	}
	return p;
}

/* One pass over len bytes a word at a time: read or write each word, in
 * order or at random (as many words as the area has).  The bytes done. */
static uint64_t pass(volatile unsigned long *p, size_t len, unsigned short seed[3])
{
	size_t words = len / sizeof(*p);
	unsigned long sum = 0;
	uint64_t done = 0;

	for (size_t i = 0; i < words; i++) {
		size_t idx = o.random ? (size_t)((double)(words - 1) * erand48(seed)) : i;

		if (o.readonly)
			sum += p[idx];
		else
			p[idx] = idx;
		done += sizeof(*p);
		if (!(i & 0xffff) && past_deadline())
			break;
	}
	/* the reads must happen */
	__asm__ __volatile__("" : : "r"(sum) : "memory");
	if (o.msync && msync((void *)p, len, MS_SYNC) < 0)
		fprintf(stderr, "usemem: msync: %s\n", strerror(errno));
	return done;
}

/* One task: SIZE bytes in units of its own mappings (or the shared area),
 * its line printed at the end.  0, or -1 after a message. */
static int task(void)
{
	unsigned short seed[3] = { (unsigned short)getpid(), (unsigned short)syscall(SYS_gettid),
				   (unsigned short)now_us() };
	size_t unit = o.unit && o.unit < o.size ? o.unit : o.size, left = o.size, nr = 0;
	void **maps = calloc(MAX_UNITS, sizeof(*maps));
	size_t *lens = calloc(MAX_UNITS, sizeof(*lens));
	uint64_t bytes = 0;
	int64_t t0, usecs;
	char go;
	int ret = -1;

	if (!maps || !lens) {
		fprintf(stderr, "usemem: out of memory\n");
		goto out;
	}
	if (read(go_pipe[0], &go, 1) != 1)
		goto out;
	t0 = now_us();
	if (prealloc) {
		bytes = pass((volatile unsigned long *)prealloc, prealloc_len, seed);
	} else {
		do {
			size_t len = left < unit ? left : unit;
			char *p = map_area(len);

			if (!p)
				goto out;
			/* as vm-scalability's usemem counts a mapping made */
			bytes += len / 8 + pass((volatile unsigned long *)p, len, seed);
			if (nr < MAX_UNITS) {
				maps[nr] = p;
				lens[nr++] = len;
			} else {
				munmap(p, len);
			}
			left -= len;
		} while (left && !past_deadline());
	}
	usecs = now_us() - t0;
	if (usecs < 1)
		usecs = 1;
	printf("%llu bytes / %lld usecs = %llu KB/s\n", (unsigned long long)bytes, (long long)usecs,
	       (unsigned long long)((double)bytes / 1024 / ((double)usecs / 1e6)));
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "usemem: cannot write the result: %s\n", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; maps && i < nr; i++)
		munmap(maps[i], lens[i]);
	free(maps);
	free(lens);
	return ret;
}

static void *thread_main(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)task();
}

/* A process: the task itself, or its threads. */
static int process(void)
{
	pthread_t *th;
	unsigned started = 0;
	int failed = 0;

	if (!o.nr_threads)
		return task();
	th = calloc(o.nr_threads, sizeof(*th));
	if (!th) {
		fprintf(stderr, "usemem: out of memory\n");
		return -1;
	}
	for (unsigned i = 0; i < o.nr_threads; i++) {
		int err = pthread_create(&th[i], NULL, thread_main, NULL);

		if (err) {
			fprintf(stderr, "usemem: cannot create a thread: %s\n", strerror(err));
			failed = 1;
			break;
		}
		started++;
	}
	for (unsigned i = 0; i < started; i++) {
		void *r;

		pthread_join(th[i], &r);
		failed |= r != NULL;
	}
	free(th);
	return failed ? -1 : 0;
}

/* "16m" → 16 MiB; 1024-based suffixes k, m, g, t. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || !v || v > (SIZE_MAX >> 1) >> shift)
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

static const char usage[] =
	"usage: usemem [-n NPROC] [-t NTHREADS] [options] SIZE\n"
	"\n"
	"Each task (NPROC processes, or NTHREADS threads in each) maps SIZE\n"
	"bytes and writes (or reads) them a word at a time, then prints\n"
	"'N bytes / N usecs = N KB/s'.  SIZE takes a k, m, g or t suffix (1024).\n"
	"\n"
	"    -n NPROC        processes (default 1)\n"
	"    -t NTHREADS     threads in each process, each a task (default: none)\n"
	"    -o, --readonly  read the words instead of writing them\n"
	"    -R, --random    words at random instead of in order\n"
	"    -f FILE         a shared mapping of FILE instead of anonymous memory\n"
	"    -w, --open-rw   FILE read-write (with --readonly: mapped writable)\n"
	"    -P, --prealloc  one area mapped before the tasks start, touched by all\n"
	"    -F, --prefault  map with MAP_POPULATE\n"
	"    -U, --hugetlb   anonymous 2 MiB huge pages (MAP_HUGETLB)\n"
	"    -E, --remap     mremap the preallocated area to ten times its size\n"
	"    -u, --unit SIZE map SIZE at a time (the mappings kept to the end)\n"
	"    -S, --msync     msync(MS_SYNC) after each pass\n"
	"    --runtime SECS  stop when SECS have passed (default: the whole SIZE)\n";

static int parse_args(int argc, char **argv)
{
	static const struct option options[] = {
		{ "readonly", no_argument, NULL, 'o' },
		{ "random", no_argument, NULL, 'R' },
		{ "file", required_argument, NULL, 'f' },
		{ "open-rw", no_argument, NULL, 'w' },
		{ "prealloc", no_argument, NULL, 'P' },
		{ "prefault", no_argument, NULL, 'F' },
		{ "hugetlb", no_argument, NULL, 'U' },
		{ "remap", no_argument, NULL, 'E' },
		{ "unit", required_argument, NULL, 'u' },
		{ "msync", no_argument, NULL, 'S' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "n:t:oRf:wPFUEu:Sh", options, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_uint(optarg, 1, MAX_PROCS, &o.nr_procs) < 0) {
				fprintf(stderr, "usemem: -n wants 1 to %d, not '%s'\n", MAX_PROCS, optarg);
				return -1;
			}
			break;
		case 't':
			if (parse_uint(optarg, 1, MAX_THREADS, &o.nr_threads) < 0) {
				fprintf(stderr, "usemem: -t wants 1 to %d, not '%s'\n", MAX_THREADS, optarg);
				return -1;
			}
			break;
		case 'o': o.readonly = 1; break;
		case 'R': o.random = 1; break;
		case 'f': o.file = optarg; break;
		case 'w': o.open_rw = 1; break;
		case 'P': o.prealloc = 1; break;
		case 'F': o.prefault = 1; break;
		case 'U': o.hugetlb = 1; break;
		case 'E': o.remap = 1; break;
		case 'S': o.msync = 1; break;
		case 'u':
			if (parse_size(optarg, &o.unit) < 0) {
				fprintf(stderr, "usemem: bad --unit '%s'\n", optarg);
				return -1;
			}
			break;
		case 'r':
			if (parse_uint(optarg, 0, MAX_RUNTIME, &o.runtime_s) < 0) {
				fprintf(stderr, "usemem: bad --runtime '%s'\n", optarg);
				return -1;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usemem: expected exactly one SIZE\n");
		return -1;
	}
	if (parse_size(argv[optind], &o.size) < 0) {
		fprintf(stderr, "usemem: bad SIZE '%s'\n", argv[optind]);
		return -1;
	}
	if (o.hugetlb && o.file) {
		fprintf(stderr, "usemem: --hugetlb maps anonymous memory, not a file\n");
		return -1;
	}
	if (o.remap && !o.prealloc) {
		fprintf(stderr, "usemem: --remap grows the --prealloc area\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned started = 0, tasks;
	int failed = 0;

	switch (parse_args(argc, argv)) {
	case 1:
		return 0;
	case -1:
		fputs(usage, stderr);
		return 2;
	}
	if (o.file) {
		fd = open(o.file, (o.readonly && !o.open_rw ? O_RDONLY : O_RDWR) | O_CREAT, 0666);
		if (fd < 0) {
			fprintf(stderr, "usemem: cannot open '%s': %s\n", o.file, strerror(errno));
			return 1;
		}
	}
	if (o.runtime_s)
		deadline_us = now_us() + (int64_t)o.runtime_s * 1000000;
	if (o.prealloc) {
		prealloc_len = o.size;
		prealloc = map_area(o.size);
		if (!prealloc)
			return 1;
		if (o.remap) {
			char *p = mremap(prealloc, o.size, REMAP_FACTOR * o.size, MREMAP_MAYMOVE);

			if (p == MAP_FAILED) {
				fprintf(stderr, "usemem: mremap: %s\n", strerror(errno));
				return 1;
			}
			prealloc = p;
		}
	}
	if (pipe(go_pipe) < 0) {
		fprintf(stderr, "usemem: pipe: %s\n", strerror(errno));
		return 1;
	}
	/* nothing buffered may be duplicated into the children */
	fflush(stdout);
	for (unsigned i = 0; i < o.nr_procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "usemem: fork: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			_exit(process() < 0 ? 1 : 0);
		}
		started++;
	}
	/* every task's start byte, once they are all there */
	tasks = started * (o.nr_threads ? o.nr_threads : 1);
	for (unsigned i = 0; i < tasks; i++)
		if (write(go_pipe[1], "g", 1) != 1)
			failed = 1;
	for (unsigned i = 0; i < started; i++) {
		int status;

		if (wait(&status) < 0) {
			fprintf(stderr, "usemem: wait: %s\n", strerror(errno));
			return 1;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			if (WIFSIGNALED(status))
				fprintf(stderr, "usemem: a task died of signal %d\n", WTERMSIG(status));
			failed = 1;
		}
	}
	return failed;
}
