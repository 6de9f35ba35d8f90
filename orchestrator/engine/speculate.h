/* Speculative builds (issue 19): while a step's guests run, the commits
 * the next step may test (one if the step is good, one if it is bad) are
 * built by a child process on the host CPUs that hold none of the guests'
 * vCPUs, at idle priority (SCHED_IDLE: the guests' emulator threads, which
 * may share those CPUs, always go first), so that the next step finds its
 * kernel in the artifact store.  The child owns klab's worktree while it
 * runs; the parent settles it (waits for the commit it needs, stops the
 * rest) before it builds anything itself.  A builder stopped half way
 * leaves what a killed klab leaves, which the next build cleans up. */
#ifndef KLAB_SPECULATE_H
#define KLAB_SPECULATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct strbuf;

struct speculation {
	pid_t pid;		/* the builder; 0: none running */
	int fd;			/* read end of its pipe: one byte per commit done */
	char hex[2][41];	/* what it builds, in order */
	int n, done;
	int boosted;		/* a step waited: the builder was given every CPU */
	int64_t started_ms;
	char cpus[64];		/* the CPU list it runs on, for the lines */
};

/* The child's work: set up (its own database connection: the parent's is
 * never used across fork), then build each commit.  Both run in the
 * child; build's result does not matter (a commit that fails to build is
 * the parent's to meet again). */
struct speculate_ops {
	int (*setup)(void *data);
	void (*build)(void *data, const char *hex, int jobs);
	void *data;
};

/* The CPUs of cpus[0..nr) (a bitmap) that klab may run on and that are
 * not set in busy[0..nr_busy): into *spare (a bitmap, caller frees),
 * returning how many. */
size_t speculate_spare_cpus(const unsigned char *busy, size_t nr_busy, unsigned char **spare, size_t *nr_spare);

/* Which of a step's two successors to build first, from the step's first
 * KPI value v and the ends' medians: 1 when v is nearer the bad end (on
 * the log scale: the after-a-bad-verdict commit first), 0 otherwise (also
 * when a value is not positive). */
int speculate_bad_first(double v, double good, double bad);

/* Fork the builder for hex[0..n) (n <= 2) on the CPUs set in
 * cpus[0..nr), at SCHED_IDLE, building with one make job per CPU klab may
 * use, its output appended to log_path.  0 started, -1 not (error printed; nothing to settle). */
int speculate_start(struct speculation *sp, const char (*hex)[41], int n, const unsigned char *cpus, size_t nr,
		    const char *log_path, const struct speculate_ops *ops);

/* The parent is about to test `want` (NULL: nothing more is built ahead):
 * waits while the builder builds `want` (the builder and its make then
 * run on every CPU klab may use, at the normal policy), then stops it.  Returns 1 when
 * the builder finished `want` (its kernel is stored, or its failure
 * recorded), else 0; *line (when not NULL) says what became of the
 * builder's work.  No builder: 0 and nothing said. */
int speculate_settle(struct speculation *sp, const char *want, struct strbuf *line);

#endif
