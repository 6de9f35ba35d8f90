/* usemem: the core of vm-scalability's usemem, written for klab.  Each task
 * maps anonymous memory, writes it through and reports its throughput. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_PROCS	4096
#define MAX_THREADS	1024
#define MAX_RUNTIME	(7 * 86400)

struct slice {
	unsigned char *start;
	size_t len;
	int64_t deadline_us;	/* 0: one pass */
	uint64_t bytes;		/* written, in total */
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * Write every byte, pass after pass.  The first pass is the page faults
 * (what the vm-scalability cases measure); a byte that changes per pass
 * keeps later passes real stores.
 */
static void *write_slice(void *arg)
{
	struct slice *s = arg;
	unsigned pass = 0;

	do {
		memset(s->start, (int)(++pass & 0xff) | 1, s->len);
		/* the area is never read: tell the compiler the stores matter */
		__asm__ __volatile__("" : : "r"(s->start) : "memory");
		s->bytes += s->len;
	} while (s->deadline_us && now_us() < s->deadline_us);
	return NULL;
}

/* One task: its own mapping, split in page-aligned slices between threads. */
static int run_task(size_t size, unsigned nr_threads, unsigned runtime_s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = (size_t)(size + page - 1) / page;
	struct slice *slices = NULL;
	pthread_t *threads = NULL;
	unsigned char *area;
	uint64_t bytes = 0;
	int64_t t0, usecs;
	size_t off = 0;
	unsigned i, started = 0;
	int ret = -1, err;

	area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED) {
		fprintf(stderr, "usemem: mmap of %zu bytes failed: %s\n", size, strerror(errno));
		return -1;
	}
	slices = calloc(nr_threads, sizeof(*slices));
	threads = calloc(nr_threads, sizeof(*threads));
	if (!slices || !threads) {
		fprintf(stderr, "usemem: out of memory\n");
		goto cleanup;
	}

	t0 = now_us();
	for (i = 0; i < nr_threads; i++) {
		size_t n = pages / nr_threads + (i < pages % nr_threads);

		slices[i].start = area + off;
		slices[i].len = n * page;
		if (off + slices[i].len > size)
			slices[i].len = size - off;
		slices[i].deadline_us = runtime_s ? t0 + (int64_t)runtime_s * 1000000 : 0;
		off += slices[i].len;
	}
	/* the calling thread takes slice 0: -t 1 is plain sequential code */
	for (i = 1; i < nr_threads; i++) {
		err = pthread_create(&threads[i], NULL, write_slice, &slices[i]);
		if (err) {
			fprintf(stderr, "usemem: cannot create a thread: %s\n", strerror(err));
			break;
		}
		started++;
	}
	write_slice(&slices[0]);
	for (i = 1; i <= started; i++)
		pthread_join(threads[i], NULL);
	if (started != nr_threads - 1)
		goto cleanup;
	usecs = now_us() - t0;
	if (usecs < 1)
		usecs = 1;

	for (i = 0; i < nr_threads; i++)
		bytes += slices[i].bytes;
	printf("%llu bytes / %lld usecs = %llu KB/s\n", (unsigned long long)bytes,
	       (long long)usecs,
	       (unsigned long long)((double)bytes / 1024 / ((double)usecs / 1e6)));
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "usemem: cannot write the result: %s\n", strerror(errno));
		goto cleanup;
	}
	ret = 0;
cleanup:
	munmap(area, size);
	free(slices);
	free(threads);
	return ret;
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
	"usage: usemem [-n NPROC] [-t NTHREADS] [--runtime SECS] SIZE\n"
	"\n"
	"Each of NPROC processes maps SIZE bytes of anonymous memory and writes\n"
	"all of it (its NTHREADS threads split the area), then prints\n"
	"'N bytes / N usecs = N KB/s'.  SIZE takes a k, m, g or t suffix (1024).\n"
	"\n"
	"    -n NPROC        processes (default 1)\n"
	"    -t NTHREADS     threads per process (default 1)\n"
	"    --runtime SECS  repeat passes until SECS elapsed (default: one pass)\n";

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "runtime", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned nr_procs = 1, nr_threads = 1, runtime_s = 0, i, started = 0;
	size_t size;
	int c, failed = 0;

	while ((c = getopt_long(argc, argv, "n:t:h", options, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_uint(optarg, 1, MAX_PROCS, &nr_procs) < 0) {
				fprintf(stderr, "usemem: -n wants 1 to %d, not '%s'\n", MAX_PROCS, optarg);
				goto usage;
			}
			break;
		case 't':
			if (parse_uint(optarg, 1, MAX_THREADS, &nr_threads) < 0) {
				fprintf(stderr, "usemem: -t wants 1 to %d, not '%s'\n", MAX_THREADS, optarg);
				goto usage;
			}
			break;
		case 'r':
			if (parse_uint(optarg, 0, MAX_RUNTIME, &runtime_s) < 0) {
				fprintf(stderr, "usemem: bad --runtime '%s'\n", optarg);
				goto usage;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usemem: expected exactly one SIZE\n");
		goto usage;
	}
	if (parse_size(argv[optind], &size) < 0) {
		fprintf(stderr, "usemem: bad SIZE '%s'\n", argv[optind]);
		goto usage;
	}
	if (size / (size_t)sysconf(_SC_PAGESIZE) < nr_threads) {
		fprintf(stderr, "usemem: SIZE is less than a page per thread\n");
		goto usage;
	}

	/* nothing buffered may be duplicated into the children */
	fflush(stdout);
	for (i = 0; i < nr_procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "usemem: fork: %s\n", strerror(errno));
			failed = 1;
			break;
		}
		if (pid == 0)
			_exit(run_task(size, nr_threads, runtime_s) < 0 ? 1 : 0);
		started++;
	}
	for (i = 0; i < started; i++) {
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

usage:
	fputs(usage, stderr);
	return 2;
}
