/* Run a program from an argv (never through a shell), in a directory,
 * with extra environment, its output sent to a file, under a timeout. */
#ifndef KLAB_RUN_COMMAND_H
#define KLAB_RUN_COMMAND_H

#include <stddef.h>
#include <stdint.h>

enum run_status {
	RUN_EXITED,	/* exit_code is valid */
	RUN_SIGNALED,	/* signal is valid */
	RUN_TIMEOUT,	/* killed by us after timeout_ms */
	RUN_EXEC_FAILED,	/* could not start; errno_value says why */
	RUN_CANCELLED	/* should_stop asked to stop it */
};

struct run_opts {
	const char *const *argv;	/* argv[0] is looked up in $PATH */
	const char *dir;		/* working directory, or NULL */
	const char *const *env;		/* extra "NAME=value" entries, NULL-terminated, or NULL */
	const char *output_path;	/* stdout+stderr appended here (created 0600: logs may hold secrets), or NULL to inherit */
	int64_t timeout_ms;		/* 0: none */
	/* Called with each output line (without the newline, bounded to
	 * 4 KiB) as it arrives; output still goes to output_path. */
	void (*on_line)(const char *line, size_t len, void *data);
	void *on_line_data;
	/* Polled about once a second; returning non-zero kills the
	 * command (result RUN_CANCELLED). */
	int (*should_stop)(void *data);
	/* Called once the program runs, with its pid (= process group). */
	void (*on_start)(int pid, void *data);
};

struct run_result {
	enum run_status status;
	int exit_code;
	int signal;
	int errno_value;
	int64_t elapsed_ms;
};

/* Returns 0 when the program ran (whatever its exit code: see result),
 * -1 after error() when klab itself could not set it up. */
int run_command(const struct run_opts *opts, struct run_result *result);

/* rm -rf -- path (argv, no shell); 0 or error(). */
int remove_tree(const char *path);

/* 1 when no process PID exists (kill(PID, 0) says ESRCH); 0 when it
 * runs, belongs to another user (EPERM), or PID is not a process id:
 * what is left by a dead klab may be cleaned, nothing else. */
int process_gone(long pid);

/* When process PID started (field 22 of /proc/PID/stat, clock ticks
 * since boot) and, in *pgrp if not NULL, its process group; 0 when no
 * such process exists or its stat cannot be read.  A PID that is used
 * again by another process has another start time. */
long long process_start_time(long pid, long *pgrp);

/* The PID at the end of a temp name "PREFIX...-PID" (klab's ".tmp-KEY-PID"
 * artifact copies), or 0 when NAME does not start with PREFIX or does
 * not end in "-" and a positive number. */
long name_owner_pid(const char *name, const char *prefix);

#endif
