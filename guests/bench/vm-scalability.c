/* vm-scalability: the cases lkp-tests' vm-scalability jobs run, written
 * for klab from each case script's published behaviour: the sizes come
 * from the guest's memory as the suite's hw_vars computes them, the work
 * is klab's usemem (guests/bench/usemem.c) with the case's options, or
 * the driver's own readers (lru-file-readonce, -readtwice) and truncation
 * (truncate, truncate-seq).  A case runs again and again until the
 * runtime has passed, each run after a "./case-NAME" line as LKP's log
 * has, so that runs are told apart; several cases run one after another,
 * each after its "vm-scalability: case=..." line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_TASKS	1024
#define MAX_SECONDS	86400
#define READ_BLOCK	4096
#define MAX_ARGS	32
#define MAX_CASES	64

/* What the case's usemem does: one run, or one a task on a file of its own. */
enum kind { USEMEM, PER_TASK, READ_ONCE, READ_TWICE, TRUNCATE, TRUNCATE_SEQ };
/* The file usemem maps, if any. */
enum file { NO_FILE, SPARSE_FILE, SHM_FILE };
/* The size usemem gets (before --unit-size and --task-size). */
enum size {
	HALF_MEM_PER_TASK,	/* mem/2 / T */
	HALF_MEM,		/* mem/2 */
	QUARTER_MEM,		/* mem/4 */
	HALF_MEM_PER_TASK1,	/* mem/2 / (T+1): cow cases leave the parent's copy */
	PTE_PER_TASK,		/* min(PTE_LIMIT/T, AS_LIMIT) */
	PTE_LIMITED_PER_TASK,	/* min(PTE_LIMIT, AS_LIMIT) / T */
	ROTATE_PER_TASK,	/* ROTATE_BYTES / T */
	ROTATE,			/* ROTATE_BYTES */
	ROTATE_EIGHTH,		/* ROTATE_BYTES / 8 */
	SMALL_ALLOCS,		/* small-allocs-common's size / T */
	SHM_HALF,		/* shm_size / 2 */
	SHM_HALF_PER_TASK,	/* shm_size / T / 2 */
	MSYNC_PER_TASK,		/* mem / T / 2 */
	SWAP_PER_TASK,		/* (MemAvailable + SwapTotal) * 3/4 / T */
};

#define F_THREADS	0x001	/* -t T, else -n T */
#define F_READONLY	0x002
#define F_RANDOM	0x004
#define F_PREALLOC	0x008
#define F_PREFAULT	0x010
#define F_HUGETLB	0x020
#define F_REMAP		0x040
#define F_MSYNC		0x080
#define F_OPEN_RW	0x100
#define F_SMALL_UNIT	0x200	/* --unit of 10 pages */
#define F_SWAP		0x400	/* needs swap */

struct vcase {
	const char *name;
	enum kind kind;
	enum file file;
	enum size size;
	unsigned flags;
};

/* The file a case maps: its size, by the same rules. */
struct sizes {
	uint64_t mem, mem_avail, swap, rotate, pte, shm, small, hugepage;
	long page;
};

static const struct vcase cases[] = {
	{ "anon-w-seq", USEMEM, NO_FILE, HALF_MEM_PER_TASK, 0 },
	{ "anon-w-seq-mt", USEMEM, NO_FILE, HALF_MEM_PER_TASK, F_THREADS },
	{ "anon-w-rand", USEMEM, NO_FILE, HALF_MEM_PER_TASK, F_RANDOM },
	{ "anon-w-rand-mt", USEMEM, NO_FILE, HALF_MEM_PER_TASK, F_THREADS | F_RANDOM },
	{ "anon-wx-seq-mt", USEMEM, NO_FILE, HALF_MEM, F_THREADS | F_PREALLOC },
	{ "anon-wx-rand-mt", USEMEM, NO_FILE, HALF_MEM_PER_TASK, F_THREADS | F_PREALLOC | F_RANDOM },
	{ "anon-r-seq", USEMEM, NO_FILE, PTE_PER_TASK, F_READONLY },
	{ "anon-r-seq-mt", USEMEM, NO_FILE, PTE_LIMITED_PER_TASK, F_THREADS | F_READONLY },
	{ "anon-r-rand", USEMEM, NO_FILE, ROTATE_PER_TASK, F_READONLY | F_RANDOM },
	{ "anon-r-rand-mt", USEMEM, NO_FILE, ROTATE_PER_TASK, F_THREADS | F_READONLY | F_RANDOM },
	{ "anon-rx-seq-mt", USEMEM, NO_FILE, ROTATE, F_THREADS | F_PREALLOC | F_READONLY },
	{ "anon-rx-rand-mt", USEMEM, NO_FILE, ROTATE_PER_TASK, F_THREADS | F_PREALLOC | F_READONLY | F_RANDOM },
	{ "anon-cow-seq", USEMEM, NO_FILE, HALF_MEM_PER_TASK1, F_PREALLOC | F_PREFAULT },
	{ "anon-cow-seq-mt", USEMEM, NO_FILE, QUARTER_MEM, F_THREADS | F_PREALLOC | F_PREFAULT },
	{ "anon-cow-rand", USEMEM, NO_FILE, HALF_MEM_PER_TASK1, F_PREALLOC | F_PREFAULT | F_RANDOM },
	{ "anon-cow-rand-mt", USEMEM, NO_FILE, QUARTER_MEM, F_THREADS | F_PREALLOC | F_PREFAULT | F_RANDOM },
	{ "anon-w-seq-hugetlb", USEMEM, NO_FILE, HALF_MEM_PER_TASK, F_HUGETLB },
	{ "anon-w-rand-hugetlb", USEMEM, NO_FILE, HALF_MEM_PER_TASK, F_HUGETLB | F_RANDOM },
	{ "anon-cow-seq-hugetlb", USEMEM, NO_FILE, HALF_MEM_PER_TASK1, F_HUGETLB | F_PREALLOC | F_PREFAULT },
	{ "anon-cow-rand-hugetlb", USEMEM, NO_FILE, HALF_MEM_PER_TASK1, F_HUGETLB | F_PREALLOC | F_PREFAULT | F_RANDOM },
	{ "lru-file-mmap-read", PER_TASK, SPARSE_FILE, ROTATE_PER_TASK, F_READONLY },
	{ "lru-file-mmap-read-rand", PER_TASK, SPARSE_FILE, ROTATE_PER_TASK, F_READONLY | F_RANDOM },
	{ "lru-file-readonce", READ_ONCE, SPARSE_FILE, ROTATE_PER_TASK, 0 },
	{ "lru-file-readtwice", READ_TWICE, SPARSE_FILE, ROTATE_PER_TASK, 0 },
	{ "mmap-pread-seq", USEMEM, SPARSE_FILE, ROTATE_PER_TASK, F_READONLY },
	{ "mmap-pread-seq-mt", USEMEM, SPARSE_FILE, ROTATE_EIGHTH, F_THREADS | F_READONLY },
	{ "mmap-pread-rand", USEMEM, SPARSE_FILE, ROTATE_PER_TASK, F_READONLY | F_RANDOM },
	{ "mmap-pread-rand-mt", USEMEM, SPARSE_FILE, ROTATE_PER_TASK, F_THREADS | F_READONLY | F_RANDOM },
	{ "mmap-xread-seq-mt", USEMEM, SPARSE_FILE, ROTATE_EIGHTH, F_THREADS | F_PREALLOC | F_READONLY },
	{ "mmap-xread-rand-mt", USEMEM, SPARSE_FILE, ROTATE_PER_TASK, F_THREADS | F_PREALLOC | F_READONLY | F_RANDOM },
	{ "mremap-xread-rand-mt", USEMEM, SPARSE_FILE, ROTATE_PER_TASK,
	  F_THREADS | F_PREALLOC | F_READONLY | F_RANDOM | F_REMAP },
	{ "small-allocs", USEMEM, NO_FILE, SMALL_ALLOCS, F_READONLY | F_SMALL_UNIT },
	{ "small-allocs-mt", USEMEM, NO_FILE, SMALL_ALLOCS, F_THREADS | F_READONLY | F_SMALL_UNIT },
	{ "msync", PER_TASK, SPARSE_FILE, MSYNC_PER_TASK, F_MSYNC | F_PREFAULT | F_PREALLOC | F_OPEN_RW },
	{ "msync-mt", USEMEM, SPARSE_FILE, HALF_MEM, F_THREADS | F_MSYNC | F_PREFAULT | F_PREALLOC | F_OPEN_RW },
	{ "shm-pread-seq", USEMEM, SHM_FILE, SHM_HALF, F_READONLY },
	{ "shm-pread-seq-mt", USEMEM, SHM_FILE, SHM_HALF, F_THREADS | F_READONLY },
	{ "shm-pread-rand", USEMEM, SHM_FILE, SHM_HALF, F_READONLY | F_RANDOM },
	{ "shm-pread-rand-mt", USEMEM, SHM_FILE, SHM_HALF, F_THREADS | F_READONLY | F_RANDOM },
	{ "shm-xread-seq", USEMEM, SHM_FILE, SHM_HALF, F_PREALLOC | F_READONLY },
	{ "shm-xread-seq-mt", USEMEM, SHM_FILE, SHM_HALF, F_THREADS | F_PREALLOC | F_READONLY },
	{ "shm-xread-rand", USEMEM, SHM_FILE, SHM_HALF, F_PREALLOC | F_READONLY | F_RANDOM },
	{ "shm-xread-rand-mt", USEMEM, SHM_FILE, SHM_HALF, F_THREADS | F_PREALLOC | F_READONLY | F_RANDOM },
	{ "lru-shm", PER_TASK, SHM_FILE, SHM_HALF_PER_TASK, F_READONLY },
	{ "lru-shm-rand", PER_TASK, SHM_FILE, SHM_HALF_PER_TASK, F_READONLY | F_RANDOM },
	{ "truncate", TRUNCATE, SPARSE_FILE, HALF_MEM, 0 },
	{ "truncate-seq", TRUNCATE_SEQ, SPARSE_FILE, HALF_MEM, 0 },
	{ "swap-w-seq", USEMEM, NO_FILE, SWAP_PER_TASK, F_SWAP },
	{ "swap-w-seq-mt", USEMEM, NO_FILE, SWAP_PER_TASK, F_SWAP | F_THREADS },
	{ "swap-w-rand", USEMEM, NO_FILE, SWAP_PER_TASK, F_SWAP | F_RANDOM },
	{ "swap-w-rand-mt", USEMEM, NO_FILE, SWAP_PER_TASK, F_SWAP | F_THREADS | F_RANDOM },
};

#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

struct options {
	const struct vcase *c;		/* the case running */
	const struct vcase *cases[MAX_CASES];	/* --case, in order */
	unsigned nr_cases;
	unsigned tasks, runtime_s;
	uint64_t unit_size;	/* LKP's unit_size: the case's total, 0 = its default */
	uint64_t task_size;	/* klab's size: each usemem's SIZE, 0 = the case's */
	const char *usemem;
	const char *sparse_dir;	/* the sparse files' file system (the job's fs:) */
	const char *shm_dir;	/* a tmpfs of the guest's memory */
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* "Key:   123 kB" from /proc/meminfo, in bytes (0 when absent). */
static uint64_t meminfo(const char *key)
{
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10) << 10;
	if (f)
		fclose(f);
	return v;
}

/* hw_vars's figures */
static void measure(const struct options *o, struct sizes *s)
{
	struct statfs sf;
	uint64_t vma_max;

	s->page = sysconf(_SC_PAGESIZE);
	s->mem = meminfo("MemTotal");
	s->mem_avail = meminfo("MemAvailable");
	s->swap = meminfo("SwapTotal");
	s->hugepage = meminfo("Hugepagesize");
	s->pte = s->mem_avail << 8;
	s->rotate = (uint64_t)1 << 42;
	if (s->rotate > s->pte)
		s->rotate = s->pte;
	s->shm = o->shm_dir && statfs(o->shm_dir, &sf) == 0 ? (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize : 0;
	/* small-allocs: as many 10-page mappings as a third of memory's worth
	 * of VMAs allows */
	vma_max = 21 * (s->mem / 3) / 4096;
	s->small = s->rotate;
	while (s->small / (10 * (uint64_t)s->page) > vma_max)
		s->small >>= 1;
}

static uint64_t case_size(const struct options *o, const struct sizes *s)
{
	uint64_t t = o->tasks, u = o->unit_size, as = (uint64_t)1 << 46, pte;

	switch (o->c->size) {
	case HALF_MEM_PER_TASK:
		return (u ? u : s->mem / 2) / t;
	case HALF_MEM:
		return u ? u : s->mem / 2;
	case QUARTER_MEM:
		return u ? u : s->mem / 4;
	case HALF_MEM_PER_TASK1:
		return (u ? u : s->mem / 2) / (t + 1);
	case PTE_PER_TASK:
		return s->pte / t < as ? s->pte / t : as;
	case PTE_LIMITED_PER_TASK:
		pte = s->pte < as ? s->pte : as;
		return pte / t;
	case ROTATE_PER_TASK:
		return s->rotate / t;
	case ROTATE:
		return s->rotate;
	case ROTATE_EIGHTH:
		return s->rotate >> 3;
	case SMALL_ALLOCS:
		return s->small / t;
	case SHM_HALF:
		return u ? u : s->shm / 2;
	case SHM_HALF_PER_TASK:
		return s->shm / t / 2;
	case MSYNC_PER_TASK:
		return s->mem / t / 2;
	case SWAP_PER_TASK:
		return (u ? u : (s->mem_avail + s->swap) * 3 / 4) / t;
	}
	return 0;
}

/* The file a case maps, as big as its script makes it. */
static uint64_t file_size(const struct options *o, const struct sizes *s)
{
	const char *n = o->c->name;

	if (o->c->file == SHM_FILE)
		return s->shm;
	if (!strcmp(n, "msync") || !strcmp(n, "msync-mt"))
		return s->mem;
	if (!strcmp(n, "mmap-pread-seq") || !strcmp(n, "mmap-pread-seq-mt") || !strcmp(n, "mmap-xread-seq-mt") ||
	    !strcmp(n, "mremap-xread-rand-mt"))
		return s->rotate;
	if (o->c->kind == TRUNCATE || o->c->kind == TRUNCATE_SEQ)
		return s->mem / o->tasks;
	return s->rotate / o->tasks;
}

static int sparse_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		fprintf(stderr, "vm-scalability: cannot make the sparse file %s of %llu bytes: %s\n", path,
			(unsigned long long)size, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void file_name(char *buf, size_t size, const struct options *o, unsigned i)
{
	snprintf(buf, size, "%s/sparse-%s-%u", o->c->file == SHM_FILE ? o->shm_dir : o->sparse_dir, o->c->name, i);
}

static pid_t spawn_usemem(const struct options *o, char **argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(o->usemem, argv);
		fprintf(stderr, "vm-scalability: cannot run %s: %s\n", o->usemem, strerror(errno));
		_exit(127);
	}
	if (pid < 0)
		fprintf(stderr, "vm-scalability: fork: %s\n", strerror(errno));
	return pid;
}

/* usemem's argv for the case: procs or threads, its flags, the file. */
static void usemem_argv(const struct options *o, unsigned tasks, const char *file, uint64_t size, unsigned remaining,
			char bufs[][32], char **argv)
{
	unsigned f = o->c->flags;
	int n = 0, b = 0;

	argv[n++] = (char *)o->usemem;
	argv[n++] = f & F_THREADS ? "-t" : "-n";
	snprintf(bufs[b], 32, "%u", tasks);
	argv[n++] = bufs[b++];
	argv[n++] = "--runtime";
	snprintf(bufs[b], 32, "%u", remaining);
	argv[n++] = bufs[b++];
	if (f & F_READONLY)
		argv[n++] = "--readonly";
	if (f & F_RANDOM)
		argv[n++] = "--random";
	if (f & F_PREALLOC)
		argv[n++] = "--prealloc";
	if (f & F_PREFAULT)
		argv[n++] = "--prefault";
	if (f & F_HUGETLB)
		argv[n++] = "--hugetlb";
	if (f & F_REMAP)
		argv[n++] = "--remap";
	if (f & F_MSYNC)
		argv[n++] = "--msync";
	if (f & F_OPEN_RW)
		argv[n++] = "--open-rw";
	if (f & F_SMALL_UNIT) {
		argv[n++] = "--unit";
		snprintf(bufs[b], 32, "%ld", 10 * sysconf(_SC_PAGESIZE));
		argv[n++] = bufs[b++];
	}
	if (file) {
		argv[n++] = "-f";
		argv[n++] = (char *)file;
	}
	snprintf(bufs[b], 32, "%llu", (unsigned long long)size);
	argv[n++] = bufs[b++];
	argv[n] = NULL;
}

static int wait_all(pid_t *pids, unsigned n)
{
	int failed = 0;

	for (unsigned i = 0; i < n; i++) {
		int status;

		if (pids[i] <= 0) {
			failed = 1;
			continue;
		}
		while (waitpid(pids[i], &status, 0) < 0)
			if (errno != EINTR) {
				status = 1;
				break;
			}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	}
	return failed ? -1 : 0;
}

/* dd bs=4k of one file until its end or the deadline; its throughput
 * in usemem's form. */
static int read_file(const char *path, int64_t deadline)
{
	static char buf[READ_BLOCK];
	int fd = open(path, O_RDONLY);
	uint64_t bytes = 0;
	int64_t t0 = now_us(), usecs;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "vm-scalability: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		bytes += (uint64_t)n;
		if (!(bytes & ((1u << 24) - 1)) && now_us() >= deadline)
			break;
	}
	close(fd);
	usecs = now_us() - t0;
	if (usecs < 1)
		usecs = 1;
	printf("%llu bytes / %lld usecs = %llu KB/s\n", (unsigned long long)bytes, (long long)usecs,
	       (unsigned long long)((double)bytes / 1024 / ((double)usecs / 1e6)));
	return n < 0 ? -1 : 0;
}

static void say_rate(const char *what, uint64_t bytes, int64_t usecs)
{
	if (usecs < 1)
		usecs = 1;
	printf("%s: %llu bytes / %lld usecs = %llu KB/s\n", what, (unsigned long long)bytes, (long long)usecs,
	       (unsigned long long)((double)bytes / 1024 / ((double)usecs / 1e6)));
}

/* Read every file into the page cache (cat > /dev/null), in order, until
 * the deadline; the bytes read. */
static int fill_cache(const struct options *o, uint64_t size, int64_t deadline, uint64_t *bytes)
{
	static char buf[1 << 16];
	char path[PATH_MAX];

	*bytes = 0;
	for (unsigned i = 0; i < o->tasks; i++) {
		ssize_t n;
		int fd;

		file_name(path, sizeof(path), o, i);
		if (sparse_file(path, size) < 0 || (fd = open(path, O_RDONLY)) < 0)
			return -1;
		while (now_us() < deadline && (n = read(fd, buf, sizeof(buf))) > 0)
			*bytes += (uint64_t)n;
		close(fd);
	}
	return 0;
}

/* truncate: remove T cached files at once; truncate-seq: fill them in
 * order (faulted), then remove them in order.  The filling stops at the
 * deadline: a guest's memory of holes read under TCG takes long. */
static int run_truncate(const struct options *o, const struct sizes *s, int seq, int64_t deadline)
{
	uint64_t size = file_size(o, s), total;
	char path[PATH_MAX];
	int64_t t0;
	pid_t *pids;

	t0 = now_us();
	if (fill_cache(o, size, deadline, &total) < 0)
		return -1;
	if (seq)
		say_rate("faulted", total, now_us() - t0);
	pids = calloc(o->tasks, sizeof(*pids));
	if (!pids)
		return -1;
	t0 = now_us();
	for (unsigned i = 0; i < o->tasks; i++) {
		file_name(path, sizeof(path), o, i);
		if (seq) {
			unlink(path);
			continue;
		}
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(unlink(path) == 0 ? 0 : 1);
	}
	if (!seq && wait_all(pids, o->tasks) < 0) {
		free(pids);
		return -1;
	}
	say_rate("truncated", total, now_us() - t0);
	free(pids);
	return 0;
}

/* One run of the case, ending by the deadline; 0 or -1. */
static int run_case(const struct options *o, const struct sizes *s, int64_t deadline)
{
	const struct vcase *c = o->c;
	unsigned remaining = (unsigned)((deadline - now_us()) / 1000000);
	uint64_t size = o->task_size ? o->task_size : case_size(o, s);
	char path[PATH_MAX], bufs[4][32], *argv[MAX_ARGS];
	pid_t *pids;
	unsigned n = 0;
	int ret;

	if (remaining < 1)
		remaining = 1;
	if (c->kind == TRUNCATE || c->kind == TRUNCATE_SEQ)
		return run_truncate(o, s, c->kind == TRUNCATE_SEQ, deadline);
	if (size < (uint64_t)s->page)
		size = (uint64_t)s->page;
	pids = calloc(2 * o->tasks, sizeof(*pids));
	if (!pids)
		return -1;
	fflush(stdout);
	if (c->kind == USEMEM) {
		const char *file = NULL;

		if (c->file != NO_FILE) {
			file_name(path, sizeof(path), o, 0);
			if (sparse_file(path, file_size(o, s)) < 0) {
				free(pids);
				return -1;
			}
			file = path;
		}
		usemem_argv(o, o->tasks, file, size, remaining, bufs, argv);
		pids[n++] = spawn_usemem(o, argv);
	} else {
		/* a file a task, each with its usemem or reader(s) */
		for (unsigned i = 0; i < o->tasks; i++) {
			file_name(path, sizeof(path), o, i);
			if (sparse_file(path, file_size(o, s)) < 0)
				break;
			for (int r = 0; r < (c->kind == READ_TWICE ? 2 : 1); r++) {
				if (c->kind == PER_TASK) {
					usemem_argv(o, 1, path, size, remaining, bufs, argv);
					pids[n++] = spawn_usemem(o, argv);
					continue;
				}
				pids[n] = fork();
				if (pids[n] == 0) {
					prctl(PR_SET_PDEATHSIG, SIGKILL);
					_exit(read_file(path, deadline) == 0 && fflush(stdout) == 0 ? 0 : 1);
				}
				n++;
			}
		}
	}
	ret = wait_all(pids, n);
	if (n < (c->kind == USEMEM ? 1u : o->tasks * (c->kind == READ_TWICE ? 2u : 1u)))
		ret = -1;
	for (unsigned i = 0; i < (c->kind == USEMEM ? 1 : o->tasks); i++) {
		file_name(path, sizeof(path), o, i);
		if (c->file != NO_FILE)
			unlink(path);
	}
	free(pids);
	return ret;
}

/* setup_hugetlb: enough surplus huge pages for the case */
static int setup_hugetlb(const struct options *o, const struct sizes *s)
{
	char path[128];
	uint64_t unit = o->unit_size ? o->unit_size : s->mem / 2;
	unsigned long long nr;
	FILE *f;

	if (!s->hugepage) {
		fprintf(stderr, "vm-scalability: no huge pages (is CONFIG_HUGETLBFS in the kernel?)\n");
		return -1;
	}
	nr = unit / s->hugepage + o->tasks + 1;
	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_overcommit_hugepages",
		 (unsigned long long)(s->hugepage >> 10));
	f = fopen(path, "w");
	if (!f || fprintf(f, "%llu\n", nr) < 0 || fclose(f) != 0) {
		fprintf(stderr, "vm-scalability: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* LKP's mount_tmpfs: a tmpfs of the guest's whole memory for the shm
 * cases, when the directory is not one already and we may mount. */
static int shm_mount(const char *dir, int *mounted)
{
	struct statfs sf;

	*mounted = 0;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "vm-scalability: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (getuid() != 0)
		return 0;
	if (mount("vm-scalability-tmp", dir, "tmpfs", 0, "size=100%") < 0) {
		if (statfs(dir, &sf) == 0)
			return 0;
		fprintf(stderr, "vm-scalability: cannot mount a tmpfs on %s: %s\n", dir, strerror(errno));
		return -1;
	}
	*mounted = 1;
	return 0;
}

static const char usage[] =
	"usage: vm-scalability --case NAME... --tasks N [--runtime SECS] [--unit-size BYTES]\n"
	"                      [--task-size BYTES] [--sparse-dir DIR] [--shm-dir DIR] [--usemem PATH]\n"
	"       vm-scalability --list\n"
	"\n"
	"Run a vm-scalability case again and again for SECS seconds (at least once).\n"
	"\n"
	"    --case NAME        the case (--list names them); given again, the\n"
	"                       cases run one after another, SECS each\n"
	"    --tasks N          the case's nr_task\n"
	"    --runtime SECS     default 10\n"
	"    --unit-size BYTES  LKP's unit_size: the case's total size\n"
	"    --task-size BYTES  each usemem's size instead of the case's\n"
	"    --sparse-dir DIR   where the sparse files go (default /tmp)\n"
	"    --shm-dir DIR      a tmpfs for the shm cases (default\n"
	"                       /tmp/vm-scalability-tmp, mounted when root)\n"
	"    --usemem PATH      klab's usemem (default /usr/lib/klab/usemem)\n";

/* One case for the runtime, after its header; 0 or -1. */
static int run_one(struct options *o, const struct vcase *c)
{
	int64_t deadline;
	struct sizes s;
	int mounted = 0, ret = 0;

	o->c = c;
	if (c->file == SHM_FILE && shm_mount(o->shm_dir, &mounted) < 0)
		return -1;
	measure(o, &s);
	printf("vm-scalability: case=%s tasks=%u runtime=%u mem=%llu shm=%llu\n", c->name, o->tasks, o->runtime_s,
	       (unsigned long long)s.mem, (unsigned long long)s.shm);
	if ((c->flags & F_SWAP) && !s.swap) {
		fprintf(stderr, "vm-scalability: %s needs swap and there is none (the job's guest.swap)\n", c->name);
		ret = -1;
	} else if ((c->flags & F_HUGETLB) && setup_hugetlb(o, &s) < 0) {
		ret = -1;
	}
	deadline = now_us() + (int64_t)o->runtime_s * 1000000;
	while (!ret) {
		printf("./case-%s\n", c->name);
		if (run_case(o, &s, deadline) < 0) {
			fprintf(stderr, "vm-scalability: case %s failed\n", c->name);
			ret = -1;
		}
		if (now_us() >= deadline)
			break;
	}
	if (mounted)
		umount2(o->shm_dir, MNT_DETACH);
	return ret;
}

static int parse_bytes(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || !*out ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "case", required_argument, NULL, 'c' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "unit-size", required_argument, NULL, 'u' },
		{ "task-size", required_argument, NULL, 's' },
		{ "sparse-dir", required_argument, NULL, 'd' },
		{ "shm-dir", required_argument, NULL, 'm' },
		{ "usemem", required_argument, NULL, 'U' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { .runtime_s = 10, .usemem = "/usr/lib/klab/usemem", .sparse_dir = "/tmp",
			     .shm_dir = "/tmp/vm-scalability-tmp" };
	int c, failed = 0;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 'c':
			if (o.nr_cases == MAX_CASES) {
				fprintf(stderr, "vm-scalability: at most %d cases\n", MAX_CASES);
				goto usage;
			}
			o.c = NULL;
			for (size_t i = 0; i < NR_CASES; i++)
				if (!strcmp(optarg, cases[i].name))
					o.c = &cases[i];
			if (!o.c) {
				fprintf(stderr, "vm-scalability: unknown case '%s' (--list names them)\n", optarg);
				goto usage;
			}
			o.cases[o.nr_cases++] = o.c;
			break;
		case 'n':
			if (parse_uint(optarg, 1, MAX_TASKS, &o.tasks) < 0) {
				fprintf(stderr, "vm-scalability: --tasks wants 1 to %d, not '%s'\n", MAX_TASKS, optarg);
				goto usage;
			}
			break;
		case 'r':
			if (parse_uint(optarg, 1, MAX_SECONDS, &o.runtime_s) < 0) {
				fprintf(stderr, "vm-scalability: bad --runtime '%s'\n", optarg);
				goto usage;
			}
			break;
		case 'u':
		case 's':
			if (parse_bytes(optarg, c == 'u' ? &o.unit_size : &o.task_size) < 0) {
				fprintf(stderr, "vm-scalability: bad size '%s' (bytes)\n", optarg);
				goto usage;
			}
			break;
		case 'd':
		case 'm':
		case 'U':
			if (optarg[0] != '/' || strlen(optarg) > PATH_MAX - 128) {
				fprintf(stderr, "vm-scalability: '%s' is not an absolute path\n", optarg);
				goto usage;
			}
			*(c == 'd' ? &o.sparse_dir : c == 'm' ? &o.shm_dir : &o.usemem) = optarg;
			break;
		case 'l':
			for (size_t i = 0; i < NR_CASES; i++)
				printf("%s\n", cases[i].name);
			return 0;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			goto usage;
		}
	}
	if (optind != argc || !o.nr_cases || !o.tasks) {
		fprintf(stderr, "vm-scalability: --case and --tasks are required\n");
		goto usage;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (unsigned i = 0; i < o.nr_cases; i++)
		if (run_one(&o, o.cases[i]) < 0)
			failed = 1;
	return failed;

usage:
	fputs(usage, stderr);
	return 2;
}
