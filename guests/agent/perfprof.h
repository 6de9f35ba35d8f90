/* The agent's perf-profile monitor: `perf record -a -g` around the
 * benchmark, then `perf report` reduced to LKP's rows
 * (perf-profile.self.cycles-pp.<symbol>, .children.cycles-pp.<symbol>,
 * .calltrace.cycles-pp.<callee>.<caller>...).  perf's output is the
 * guest's, so hostile: the parser is pure and bounded, and the host
 * unit-tests and fuzzes it (tests/unit/test-perfprof.c, tests/fuzz/). */
#ifndef KLAB_PERFPROF_H
#define KLAB_PERFPROF_H

#include <stddef.h>
#include <sys/types.h>

/* Longest field name made (the host's RESULT_MAX_NAME is 128; the same
 * bound as procmon.h's). */
#define PERFPROF_MAX_NAME	120
/* A symbol is cut to this many bytes (then a chain has room for more). */
#define PERFPROF_MAX_SYMBOL	96
/* Rows under this share of the samples are not sent (as LKP). */
#define PERFPROF_MIN_PCT	0.5
/* Rows sent per kind, the largest first. */
#define PERFPROF_MAX_ROWS	50
/* Distinct names kept per kind while parsing; the rest are dropped. */
#define PERFPROF_MAX_CANDIDATES	2048
/* The most of perf report's output read. */
#define PERFPROF_MAX_REPORT	(1024 * 1024)

enum perfprof_kind { PERFPROF_SELF, PERFPROF_CHILDREN, PERFPROF_CALLTRACE, PERFPROF_NR_KINDS };

struct perfprof_row {
	char name[PERFPROF_MAX_NAME + 1];	/* the field: "self.cycles-pp.clear_page_erms" */
	double pct;				/* 0 < pct <= 100 */
};

struct perfprof {
	struct perfprof_row rows[PERFPROF_NR_KINDS][PERFPROF_MAX_CANDIDATES];
	size_t nr[PERFPROF_NR_KINDS];
};

/*
 * Parse perf report --stdio output into pp (reset first): entry lines
 * "  23.83%  23.68%  [k] read_zero" (children and self; with one percent
 * column, self only) and folded call chains "23.83% read_zero;vfs_read;..."
 * (callee first).  Symbols keep the bytes a host name may hold (others
 * become '_'); addresses and [unknown] are not symbols (a chain stops at
 * one); a percent over 100 or a line of anything else is skipped.  Rows
 * of the same name are summed (at most 100); afterwards each kind holds
 * at most PERFPROF_MAX_ROWS rows of at least PERFPROF_MIN_PCT, largest
 * first.
 */
void perfprof_parse(struct perfprof *pp, const char *text);

/* "cycles" when the CPU has a hardware cycle counter (a KVM guest with a
 * PMU), else "cpu-clock" (TCG has none): probed with perf_event_open. */
const char *perfprof_event(void);

/* A perf record running, or not (pid 0). */
struct perfprof_run {
	pid_t pid;
	int reaped, status;	/* set by perfprof_reaped() */
};

/* Samples per second and CPU: LKP's 800, less for a long run on many
 * CPUs so that perf.data (in the guest's memory) stays near
 * PERFPROF_MAX_SAMPLES samples; never under 100. */
#define PERFPROF_FREQ		800
#define PERFPROF_MIN_FREQ	100
#define PERFPROF_MAX_SAMPLES	200000
unsigned perfprof_freq(unsigned seconds, unsigned cpus);

/*
 * Start `perf record -a -g -e event -F freq -o data` in its own process
 * group, stdin /dev/null, its messages to log.  0, or -1 with why in err.
 */
int perfprof_start(struct perfprof_run *pr, const char *perf, const char *event, unsigned freq, const char *data,
		   const char *log, char *err, size_t errsize);
/* The agent's reaper saw pid go with status: ours, if it is perf record. */
void perfprof_reaped(struct perfprof_run *pr, pid_t pid, int status);
/*
 * SIGINT to perf record and wait (at most timeout_ms, then SIGKILL to its
 * group); 0 when it wrote its data (exited 0, or of the SIGINT, as perf
 * record -a does), -1 with why in err.
 */
int perfprof_stop(struct perfprof_run *pr, int timeout_ms, char *err, size_t errsize);
/*
 * Run perf report on data into buf (NUL-terminated, at most size - 1
 * bytes; the rest is not read), its own process group killed after
 * timeout_ms.  The output's length, or -1 with why in err.
 */
ssize_t perfprof_report(const char *perf, const char *data, char *buf, size_t size, int timeout_ms, char *err,
			size_t errsize);

#endif
