/* Allocation, error reporting, clocks and paths shared by all of klab. */
#include "util.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


static char last_error[4096];
static int errors_held;

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];
	struct strbuf clean = STRBUF_INIT;

	/* messages quote argv, paths and commit subjects: one line each */
	vsnprintf(buf, sizeof(buf), fmt, ap);
	strbuf_add_clean(&clean, buf);
	if (!errors_held || strcmp(prefix, "error: "))
		fprintf(stderr, "klab: %s%s\n", prefix, clean.buf);
	if (!strcmp(prefix, "error: "))
		snprintf(last_error, sizeof(last_error), "%s", clean.buf);
	strbuf_release(&clean);
}

const char *error_last(void)
{
	return last_error;
}

int error_hold(int hold)
{
	int was = errors_held;

	errors_held = hold;
	return was;
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning: ", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal: ", fmt, ap);
	va_end(ap);
	exit(128);
}

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

const char *user_name(void)
{
	static char name[64];
	struct passwd *pw = getpwuid(getuid());

	snprintf(name, sizeof(name), "%s", pw && pw->pw_name ? pw->pw_name : "");
	if (!name[0])
		snprintf(name, sizeof(name), "uid %u", (unsigned)getuid());
	return name;
}

void print_clean(FILE *f, const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_clean(&sb, s);
	fputs(sb.buf, f);
	strbuf_release(&sb);
}

void print_line(const char *fmt, ...)
{
	struct strbuf raw = STRBUF_INIT, clean = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&raw, fmt, ap);
	va_end(ap);
	strbuf_add_clean(&clean, raw.buf);
	strbuf_addch(&clean, '\n');
	fputs(clean.buf, stdout);
	strbuf_release(&raw);
	strbuf_release(&clean);
}

void print_lines(const char *indent, const char *text)
{
	for (const char *p = text; p && *p;) {
		const char *eol = strchrnul(p, '\n');

		print_line("%s%.*s", indent, (int)(eol - p), p);
		p = *eol ? eol + 1 : eol;
	}
}

int has_control_chars(const char *s)
{
	for (; s && *s; s++)
		if (unsafe_char_len(s))
			return 1;
	return 0;
}

int check_no_controls(const char *option, const char *value)
{
	if (has_control_chars(value))
		return error("%s '%s': control characters (newline, escape, bidirectional overrides, ...) are not allowed",
			     option, value);
	return 0;
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path);
	char *s;
	int ret = 0;

	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				ret = error("cannot create directory '%s': %s", p, strerror(errno));
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	if (!ret) {
		struct stat st;
		if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			ret = error("'%s' exists and is not a directory", path);
	}
	return ret;
}

char *real_path(const char *path)
{
	char *r = realpath(path, NULL);

	if (!r)
		error("cannot resolve '%s': %s", path, strerror(errno));
	return r;
}

int write_file_atomic(const char *path, const char *data, size_t len)
{
	return write_file_atomic_mode(path, data, len, 0644);
}

int write_file_atomic_mode(const char *path, const char *data, size_t len, unsigned mode)
{
	char *tmp = xstrfmt("%s.tmp.%ld", path, (long)getpid());
	int fd, ret = -1;
	size_t off = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)mode);
	if (fd < 0) {
		error("cannot create '%s': %s", tmp, strerror(errno));
		goto cleanup;
	}
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			error("cannot write '%s': %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto cleanup;
		}
		off += (size_t)n;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		error("cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		goto cleanup;
	}
	if (rename(tmp, path) < 0) {
		error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(tmp);
	return ret;
}

int read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t alloc = 4096, n = 0;
	char *buf;

	*out = NULL;
	if (len)
		*len = 0;
	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	buf = xmalloc(alloc);
	for (;;) {
		ssize_t r;
		if (n + 1 >= alloc) {
			if (alloc > max) {
				free(buf);
				close(fd);
				return error("'%s' is larger than %zu bytes", path, max);
			}
			alloc *= 2;
			buf = xrealloc(buf, alloc);
		}
		r = read(fd, buf + n, alloc - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return error("cannot read '%s': %s", path, strerror(errno));
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			close(fd);
			return error("'%s' is larger than %zu bytes", path, max);
		}
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int find_executable(const char *name, char **out_path)
{
	const char *path, *p;

	*out_path = NULL;
	if (!*name)
		return 0;
	if (strchr(name, '/')) {
		struct stat st;
		if (stat(name, &st) == 0 && S_ISREG(st.st_mode) && access(name, X_OK) == 0) {
			*out_path = xstrdup(name);
			return 1;
		}
		return 0;
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; ; ) {
		const char *end = strchrnul(p, ':');
		char *cand;
		struct stat st;

		if (end == p)
			cand = xstrfmt("./%s", name);
		else
			cand = xstrfmt("%.*s/%s", (int)(end - p), p, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
			*out_path = cand;
			return 1;
		}
		free(cand);
		if (!*end)
			break;
		p = end + 1;
	}
	return 0;
}

const char *fmt_duration(int64_t ms, char *buf, size_t len)
{
	if (ms < 0)
		ms = 0;
	if (ms < 10000)
		snprintf(buf, len, "%.2fs", ms / 1000.0);
	else if (ms < 60000)
		snprintf(buf, len, "%.1fs", ms / 1000.0);
	else if (ms < 3600000)
		snprintf(buf, len, "%dm%02ds", (int)(ms / 60000), (int)(ms / 1000 % 60));
	else
		snprintf(buf, len, "%dh%02dm", (int)(ms / 3600000), (int)(ms / 60000 % 60));
	return buf;
}

int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	/* strtoul alone would take " 1", "+1" and "\t1" */
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Read until len bytes or end of file: the count, or -1. */
ssize_t read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int files_identical(const char *a, const char *b)
{
	int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC), ret = -1;
	char x[65536], y[65536];

	if (fa < 0 || fb < 0) {
		error("cannot open '%s': %s", fa < 0 ? a : b, strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t nx = read_full(fa, x, sizeof(x)), ny = read_full(fb, y, sizeof(y));
		if (nx < 0 || ny < 0) {
			error("cannot read '%s': %s", nx < 0 ? a : b, strerror(errno));
			goto out;
		}
		if (nx != ny || memcmp(x, y, (size_t)nx)) {
			ret = 0;
			goto out;
		}
		if (nx == 0) {
			ret = 1;
			goto out;
		}
	}
out:
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ret;
}

/* Move len bytes from offset from to offset to (to < from) in chunks. */
static int move_bytes(int fd, uint64_t from, uint64_t to, uint64_t len)
{
	char buf[1 << 16];

	while (len) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);
		ssize_t got = pread(fd, buf, n, (off_t)from);

		if (got <= 0 || pwrite(fd, buf, (size_t)got, (off_t)to) != got)
			return -1;
		from += (uint64_t)got;
		to += (uint64_t)got;
		len -= (uint64_t)got;
	}
	return 0;
}

int log_trim(const char *path, uint64_t limit)
{
	struct stat st;
	char marker[192];
	uint64_t size, head, tail, cut;
	int fd, n, ret = -1;

	if (!limit)
		return 0;
	if (limit < LOG_LIMIT_MIN)
		limit = LOG_LIMIT_MIN;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : error("cannot open log '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		error("cannot read log '%s': %s", path, strerror(errno));
		goto out;
	}
	size = (uint64_t)st.st_size;
	if (size <= limit) {
		ret = 0;
		goto out;
	}
	/* the marker's room (sizeof(marker)) is taken from the tail */
	head = limit / 2;
	tail = limit - head - sizeof(marker);
	cut = size - head - tail;
	n = snprintf(marker, sizeof(marker),
		     "\n[klab: %llu bytes of this log cut here: it keeps its first %llu and last %llu bytes "
		     "(log_limit = %llu in klab.conf)]\n",
		     (unsigned long long)cut, (unsigned long long)head, (unsigned long long)tail,
		     (unsigned long long)limit);
	if (n < 0 || (size_t)n >= sizeof(marker))
		n = (int)sizeof(marker) - 1;
	if (pwrite(fd, marker, (size_t)n, (off_t)head) != n ||
	    move_bytes(fd, size - tail, head + (uint64_t)n, tail) < 0 ||
	    ftruncate(fd, (off_t)(head + (uint64_t)n + tail)) < 0) {
		error("cannot cut log '%s' to its head and tail: %s", path, strerror(errno));
		goto out;
	}
	ret = 1;
out:
	close(fd);
	return ret;
}
