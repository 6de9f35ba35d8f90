/* will-it-scale: a will-it-scale style runner written for klab.  N tasks
 * (processes or threads) loop over one testcase; the parent prints the
 * operations done per second. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define AREA_SIZE	(128UL << 20)
#define TOUCH_STRIDE	4096UL
#define MAX_TASKS	4096
#define MAX_SECONDS	86400
#define READY_WAIT_S	10

/* One cache line per task: the counters must not bounce between CPUs. */
struct counter {
	uint64_t ops;
	int ready;
	int failed;
	char pad[64 - sizeof(uint64_t) - 2 * sizeof(int)];
} __attribute__((aligned(64)));

struct testcase {
	const char *name;
	void (*loop)(struct counter *c);
};

/* Tasks write only their own counter and the parent only reads it, so
 * relaxed atomics are enough: plain loads and stores, no locked add. */
static void count(struct counter *c, uint64_t n)
{
	__atomic_store_n(&c->ops, __atomic_load_n(&c->ops, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}

static void task_failed(struct counter *c, const char *what)
{
	fprintf(stderr, "will-it-scale: %s: %s\n", what, strerror(errno));
	__atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
}

/*
 * As upstream's malloc1: glibc serves 128 MiB with mmap (far above its
 * mmap threshold) and writes the chunk header, so each loop is one
 * mapping, one page fault and one unmapping.  Only the first page is
 * touched on purpose: klab's demo regression (THP-aligned anonymous
 * mappings, jobs/will-it-scale-malloc1.yaml) turns that one fault into
 * clearing a huge page; touching every page would hide it.
 */
static void malloc1(struct counter *c)
{
	for (;;) {
		volatile char *p = malloc(AREA_SIZE);

		if (!p) {
			task_failed(c, "malloc");
			return;
		}
		/* the fault glibc's header write makes anyway, made explicit
		 * so that the compiler cannot drop the malloc/free pair */
		p[0] = 1;
		free((void *)p);
		count(c, 1);
	}
}

/* one operation per page fault */
static void page_fault1(struct counter *c)
{
	for (;;) {
		volatile char *p;
		unsigned long i;

		p = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			task_failed(c, "mmap");
			return;
		}
		for (i = 0; i < AREA_SIZE; i += TOUCH_STRIDE) {
			p[i] = 1;
			count(c, 1);
		}
		munmap((void *)p, AREA_SIZE);
	}
}

static void mmap1(struct counter *c)
{
	for (;;) {
		void *p = mmap(NULL, AREA_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			task_failed(c, "mmap");
			return;
		}
		munmap(p, AREA_SIZE);
		count(c, 1);
	}
}

static const struct testcase testcases[] = {
	{ "malloc1", malloc1 },
	{ "page_fault1", page_fault1 },
	{ "mmap1", mmap1 },
};

struct task_arg {
	const struct testcase *tc;
	struct counter *c;
};

static void *task_main(void *arg)
{
	struct task_arg *ta = arg;

	__atomic_store_n(&ta->c->ready, 1, __ATOMIC_RELEASE);
	ta->tc->loop(ta->c);
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

static int any_failed(struct counter *counters, unsigned n, pid_t *pids)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&counters[i].failed, __ATOMIC_RELAXED))
			return 1;
	/* a process can also just die (OOM killer, a signal) */
	return pids && waitpid(-1, NULL, WNOHANG) > 0;
}

static int start_tasks(const struct testcase *tc, int threads, unsigned n,
		       struct counter *counters, pid_t *pids, struct task_arg *args)
{
	pid_t parent = getpid();
	unsigned i;
	int err;

	for (i = 0; i < n; i++) {
		args[i].tc = tc;
		args[i].c = &counters[i];
		if (threads) {
			pthread_t t;

			err = pthread_create(&t, NULL, task_main, &args[i]);
			if (err) {
				fprintf(stderr, "will-it-scale: cannot create a thread: %s\n", strerror(err));
				return -1;
			}
			continue;
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "will-it-scale: fork: %s\n", strerror(errno));
			return -1;
		}
		if (pids[i] == 0) {
			/* never outlive the parent, whatever kills it */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(1);
			task_main(&args[i]);
			_exit(1);
		}
	}
	return 0;
}

static void stop_tasks(pid_t *pids, unsigned n)
{
	unsigned i;

	if (!pids)
		return;
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
}

static int wait_ready(struct counter *counters, unsigned n, pid_t *pids)
{
	int64_t deadline = now_ns() + (int64_t)READY_WAIT_S * 1000000000;
	unsigned i;

	for (i = 0; i < n; i++) {
		while (!__atomic_load_n(&counters[i].ready, __ATOMIC_ACQUIRE)) {
			if (any_failed(counters, n, pids) || now_ns() > deadline) {
				fprintf(stderr, "will-it-scale: task %u did not start\n", i);
				return -1;
			}
			usleep(1000);
		}
	}
	return 0;
}

static const char usage[] =
	"usage: will-it-scale --test NAME --tasks N [--mode process|thread]\n"
	"                     [--runtime SECS] [--warmup SECS]\n"
	"\n"
	"    --test NAME      malloc1, page_fault1 or mmap1\n"
	"    --mode MODE      tasks are processes (default) or threads\n"
	"    --tasks N        how many tasks run the testcase at once\n"
	"    --runtime SECS   measured seconds (default 10)\n"
	"    --warmup SECS    seconds run before measuring (default 2)\n";

struct options {
	const struct testcase *tc;
	const char *mode;	/* process or thread */
	unsigned nr_tasks, runtime_s, warmup_s;
};

/* The command line into o: 0, 1 after --help, -1 after a message. */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option options[] = {
		{ "test", required_argument, NULL, 'T' },
		{ "mode", required_argument, NULL, 'm' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'T':
			for (size_t i = 0; i < sizeof(testcases) / sizeof(testcases[0]); i++)
				if (!strcmp(optarg, testcases[i].name))
					o->tc = &testcases[i];
			if (!o->tc) {
				fprintf(stderr, "will-it-scale: unknown test '%s'\n", optarg);
				return -1;
			}
			break;
		case 'm':
			if (strcmp(optarg, "process") && strcmp(optarg, "thread")) {
				fprintf(stderr, "will-it-scale: mode is process or thread, not '%s'\n", optarg);
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
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind != argc || !o->tc || !o->nr_tasks) {
		fprintf(stderr, "will-it-scale: --test and --tasks are required\n");
		return -1;
	}
	return 0;
}

/* Once a second the operations each task did since the last: the warm-up
 * seconds' totals, then each measured second's min, max and total, then
 * the averages.  0, or -1 when a task failed or stdout cannot be written. */
static int report_seconds(const struct options *o, struct counter *counters, uint64_t *last, pid_t *pids)
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
		if (any_failed(counters, o->nr_tasks, pids)) {
			fprintf(stderr, "will-it-scale: a task failed\n");
			return -1;
		}
		if (s <= o->warmup_s) {
			printf("warmup:%u total:%llu\n", s, (unsigned long long)total);
			continue;
		}
		sum_totals += total;
		printf("second:%u min:%llu max:%llu total:%llu\n", s - o->warmup_s,
		       (unsigned long long)min, (unsigned long long)max, (unsigned long long)total);
	}
	printf("average:%llu\n", (unsigned long long)(sum_totals / o->runtime_s));
	printf("per_task_average:%llu\n", (unsigned long long)(sum_totals / o->runtime_s / o->nr_tasks));
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "will-it-scale: cannot write the results: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .mode = "process", .runtime_s = 10, .warmup_s = 2 };
	struct counter *counters = MAP_FAILED;
	struct task_arg *args = NULL;
	uint64_t *last = NULL;
	pid_t *pids = NULL;
	int threads, ret = 1;

	switch (parse_options(argc, argv, &o)) {
	case 1:
		return 0;
	case -1:
		fputs(usage, stderr);
		return 2;
	}
	threads = !strcmp(o.mode, "thread");

	/* shared with forked tasks; threads would not need it, but one code path */
	counters = mmap(NULL, o.nr_tasks * sizeof(*counters), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	args = calloc(o.nr_tasks, sizeof(*args));
	last = calloc(o.nr_tasks, sizeof(*last));
	pids = threads ? NULL : calloc(o.nr_tasks, sizeof(*pids));
	if (counters == MAP_FAILED || !args || !last || (!threads && !pids)) {
		fprintf(stderr, "will-it-scale: out of memory\n");
		goto cleanup;
	}

	/* the agent forwards lines as they come: do not sit on them */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("will-it-scale: testcase=%s mode=%s tasks=%u warmup=%u runtime=%u\n",
	       o.tc->name, o.mode, o.nr_tasks, o.warmup_s, o.runtime_s);
	fflush(stdout);

	if (start_tasks(o.tc, threads, o.nr_tasks, counters, pids, args) < 0 ||
	    wait_ready(counters, o.nr_tasks, pids) < 0)
		goto cleanup;
	if (report_seconds(&o, counters, last, pids) == 0)
		ret = 0;
cleanup:
	stop_tasks(pids, o.nr_tasks);
	fflush(stdout);
	/* Threads are still looping in malloc and mmap: leave without
	 * running exit handlers under their feet. */
	_exit(ret);
}
