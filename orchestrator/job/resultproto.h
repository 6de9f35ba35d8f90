/* The guest→host record format (docs/guest-protocol.md) and the parsers
 * that turn a benchmark's raw output into metrics.  Pure and hostile-input
 * safe: bounded, never trusts a length or a number it did not check. */
#ifndef KLAB_RESULTPROTO_H
#define KLAB_RESULTPROTO_H

#include <stddef.h>
#include <stdint.h>

#define RESULT_MAX_LINE 4096

/* Names (env keys, mon names, metric names, the agent version) are 1 to
 * RESULT_MAX_NAME bytes of [A-Za-z0-9_.:+()/-]. */
#define RESULT_MAX_NAME 128

/* Default caps result_init puts in struct result: what a hostile guest
 * can make the host store.  Records past a cap are counted, not kept. */
#define RESULT_MAX_OUT 200000		/* out lines */
#define RESULT_MAX_MON 1000000		/* mon records */
#define RESULT_MAX_ENV 10000		/* env records */
#define RESULT_MAX_WARNINGS 10000	/* warn records */
#define RESULT_MAX_BYTES ((size_t)256 << 20)	/* everything stored, with allocator overhead */

struct result_metric {
	char *name;		/* LKP name, e.g. stress-ng.mmapaddr.ops_per_sec */
	int64_t seq;		/* per-second or per-task index; 0 for a single value */
	double value;
};

struct result_mon {
	char *phase;		/* before | after | t<N> */
	char *source;		/* a monitor's name (monitor.h): vmstat | meminfo | stat */
	char *name;
	double value;
};

struct result_env {
	char *key;
	char *value;
};

enum result_exit {
	RESULT_EXIT_NONE,	/* no exit record */
	RESULT_EXIT_EXITED,
	RESULT_EXIT_SIGNALED,
	RESULT_EXIT_TIMEOUT,
	RESULT_EXIT_EXEC_FAILED
};

/* Everything one boot's result channel said. */
struct result {
	int hello;		/* the agent started */
	int done;		/* a done record arrived */
	int done_ok;		/* its value */
	enum result_exit exit_status;
	int exit_code;
	int64_t start_ms;	/* 0 when no start record */
	char *agent_version;	/* from hello, or NULL */
	struct result_env *env;
	size_t nr_env, alloc_env;
	struct result_mon *mon;
	size_t nr_mon, alloc_mon;
	char **warnings;
	size_t nr_warnings, alloc_warnings;
	/* the benchmark's output lines (from "out" records), for raw storage and metric parsing */
	char **out;
	size_t nr_out, alloc_out;
	/* counters of what was rejected */
	size_t long_lines, bad_records, ignored_lines;
	/* valid records not stored because a cap was reached */
	size_t dropped_out, dropped_mon, dropped_env, dropped_warnings;

	/* caps; result_init sets the RESULT_MAX_* defaults (0 also means
	 * the default), a caller may lower them before the first result_feed */
	size_t max_out, max_mon, max_env, max_warnings, max_bytes;
	size_t stored_bytes;

	/* internal: partial line */
	char *partial;
	size_t partial_len;
	int partial_overflow;
};

void result_init(struct result *r);
void result_release(struct result *r);

/* Feed bytes as they arrive from the channel (any chunking).  Lines end
 * with '\n' (a '\r' before it is dropped).  A line longer than
 * RESULT_MAX_LINE counts in long_lines and only its first RESULT_MAX_LINE
 * bytes are looked at: a cut out, warn or env record keeps its cut text,
 * any other cut record is bad.  A line that does not start with "KLAB1"
 * and a record of an unknown type count in ignored_lines, as does any
 * record after done.  A KLAB1 record that is malformed (control bytes,
 * invalid UTF-8, a number that is not a finite decimal, a name outside
 * the charset, a record before hello, a second hello, done, start or exit,
 * a repeated env key) counts in bad_records. */
void result_feed(struct result *r, const char *data, size_t len);
/* End of stream: a partial last line is parsed. */
void result_finish(struct result *r);

/* The value of an env record, or NULL. */
const char *result_env_get(const struct result *r, const char *key);

/* Metrics from the benchmark's output lines (NUL-terminated; NULL entries
 * are skipped) by the suite's parser (suite-<name>.c).  Returns the number of metrics (possibly 0:
 * unknown suite, nothing recognised) and sets *out (NULL when 0; caller
 * frees with result_metrics_free).  testcase is the job's testcase (e.g.
 * mmapaddr); the names come from the output itself:
 *
 *   stress-ng       stress-ng.<stressor>.{ops, ops_per_sec, ops_per_sec_usr_sys,
 *                   real_time, usr_time, sys_time, cpu_used_per_instance,
 *                   RSS_Max} and stress-ng.<stressor>.<description> for each
 *                   "miscellaneous metrics" line (MB_per_sec_vm-splice_rate)
 *   will-it-scale   will-it-scale.{per_process_ops | per_thread_ops, average,
 *                   workload}; ops_per_sec, min_task_ops, max_task_ops with
 *                   seq = the second
 *   vm-scalability  vm-scalability.{throughput, workload}; task_throughput,
 *                   task_usecs, task_bytes with seq = the task (from 0)
 *   kbuild          kbuild.{buildtime_per_iteration, user_time, sys_time,
 *                   iterations}; iteration_buildtime, iteration_user_time,
 *                   iteration_sys_time with seq = the measured build (from 1)
 *
 * A line with a malformed number is skipped.  Every value is finite,
 * every name valid (RESULT_MAX_NAME), and the (name, seq) pairs are
 * unique: a later duplicate is dropped. */
size_t result_parse_metrics(const char *suite, const char *testcase, char *const *lines, size_t nr_lines,
			    struct result_metric **out);
void result_metrics_free(struct result_metric *m, size_t n);

/* 1 when s is a valid name (see RESULT_MAX_NAME). */
int result_name_valid(const char *s);

/* ---- for the suites' output parsers (suite-*.c) ---- */

/* The metrics a parser collects. */
struct result_metrics {
	struct result_metric *m;
	size_t nr, alloc;
};

/* Takes name; a metric with an invalid name or a value that is not
 * finite is dropped. */
void result_add_metric(struct result_metrics *ml, char *name, int64_t seq, double value);
/* The sum of the values of the metrics named `name` (a series, for a
 * suite's derive op), *n how many there are. */
double result_metric_sum(const struct result_metrics *ml, const char *name, size_t *n);

#define RESULT_MAX_TOKENS 16
/* Split line (copied into *copy, which the caller frees) at runs of
 * blanks into tok[RESULT_MAX_TOKENS].  Returns the number of tokens,
 * RESULT_MAX_TOKENS + 1 when there are more. */
size_t result_tokenize(const char *line, char **copy, char **tok);
/* A finite decimal number, nothing else: [-+]digits[.digits][e[-+]digits]. */
int result_parse_number(const char *s, double *out);
/* A decimal integer: [-]digits, in range. */
int result_parse_int64(const char *s, int64_t *out);
const char *result_skip_blanks(const char *p);
/* "key:value" (sep ':') → value, or NULL. */
const char *result_key_value(const char *tok, const char *key, char sep);

static inline int result_is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static inline int result_is_blank(int c)
{
	return c == ' ' || c == '\t';
}

#endif
