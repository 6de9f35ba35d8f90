/* Small helpers every klab module uses: error reporting in one voice,
 * files, time and path helpers (and, through alloc.h, allocation). */
#ifndef KLAB_UTIL_H
#define KLAB_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdarg.h>

#include "alloc.h"

/* klab's exit statuses: every command's, and the bisection loop's. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* error, or bisection stopped */
	EXIT_USAGE = 2,
	EXIT_UNDECIDED = 3,	/* only skipped commits left */
	EXIT_UNCONFIRMED = 4	/* a job bisection's culprit failed its confirmation */
};

/* "klab: error: ..." on stderr; always returns -1 so callers can
 * `return error(...)`. */
int error(const char *fmt, ...) KLAB_PRINTF(1, 2);
void warning(const char *fmt, ...) KLAB_PRINTF(1, 2);
/* The text of this process's last error() ("" before any): for records
 * that must say why something failed (a fetch, a build). */
const char *error_last(void);
/* With hold set, error() only records its text for error_last() (a
 * caller that tries several inputs and reports the failures itself,
 * one line each); returns the previous setting. */
int error_hold(int hold);
/* Only the top level and out-of-memory may exit. */
void die(const char *fmt, ...) KLAB_PRINTF(1, 2) KLAB_NORETURN;

/* Monotonic clock in milliseconds / wall clock in seconds. */
int64_t now_ms(void);
int64_t now_s(void);
/* The user running klab (login name, or the uid as text). */
const char *user_name(void);
/* Untrusted text (commit subjects, guest output) on a terminal: control
 * characters printed as '?' (strbuf_add_clean's rule). */
void print_clean(FILE *f, const char *s);
/* One line on stdout, formatted, cleaned as print_clean() does, then a
 * newline: for lines that carry untrusted text among klab's own. */
void print_line(const char *fmt, ...) KLAB_PRINTF(1, 2);
/* Each line of a multi-line untrusted text (a console excerpt, a stored
 * message) on stdout after indent, cleaned as print_line() does. */
void print_lines(const char *indent, const char *text);
/* 1 when s holds a control character or a bidirectional override
 * (strbuf.h's unsafe_char_len). */
int has_control_chars(const char *s);
/* A command-line value that becomes a name, path, URL or address must be
 * one line of text: -1 after error("OPTION: control characters are not
 * allowed") otherwise. */
int check_no_controls(const char *option, const char *value);

/* A log of more than limit bytes (0: no limit) keeps its first and last
 * bytes, limit in all with a line between them saying how many bytes
 * were cut and why: 1 when it cut, 0 when the log was within the limit
 * (or is missing), -1 after error().  A limit under 4 KiB counts as
 * 4 KiB. */
#define LOG_LIMIT_MIN 4096
int log_trim(const char *path, uint64_t limit);

/* mkdir -p with mode; returns 0 or error(). */
int mkdir_p(const char *path, unsigned mode);
/* Absolute, symlink-resolved path of an existing file or directory
 * (caller frees), or NULL after error(). */
char *real_path(const char *path);
/* Write a whole file atomically (temp + fsync + rename). */
int write_file_atomic(const char *path, const char *data, size_t len);
/* The same with the file's mode (less the umask): 0600 for what only
 * the lab's owner may read (logs, guest output). */
int write_file_atomic_mode(const char *path, const char *data, size_t len, unsigned mode);
/* Read a whole file, at most max bytes; NUL-terminated. */
int read_file(const char *path, size_t max, char **out, size_t *len);
/* 1 when both files hold the same bytes, 0 when they differ, -1 (with a
 * message) when one cannot be read. */
int files_identical(const char *a, const char *b);
/* read() until len bytes or the end: the count, -1 on error (errno). */
ssize_t read_full(int fd, char *buf, size_t len);
/* 1 when path names an executable found directly or through $PATH. */
int find_executable(const char *name, char **out_path);
/* Human-readable duration ("1.2s", "3m04s"). */
const char *fmt_duration(int64_t ms, char *buf, size_t len);
/* Parse a non-negative decimal int with bounds: digits only (no sign,
 * no blanks); 0 or -1. */
int parse_uint(const char *s, unsigned long max, unsigned long *out);

#endif
