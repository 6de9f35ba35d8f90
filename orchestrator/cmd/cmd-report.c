/* klab report: the static HTML report of the lab, written to a directory.
 * Pages are rendered in memory and a file is replaced (temp + rename)
 * only when its bytes changed, so regenerating is cheap to sync. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "report/report.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const report_forms[] = { "-o [--since]", NULL };
static const struct opt_usage report_usage = {
	"report", report_forms,
	"Write the lab's static HTML report to DIR: index.html, a page per bisection and\n"
	"tracked branch, the last 64 KiB of each step's logs.  Self-contained pages; only\n"
	"those whose content changed are rewritten.",
	"REPORT"
};

struct writer {
	const char *dir;
	unsigned written, unchanged;
	unsigned logs_written, logs_unchanged, logs_gone;
};

/* 1 when path holds exactly data (len bytes). */
static int same_content(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t off = 0;
	int same = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size != len) {
		close(fd);
		return 0;
	}
	buf = xmalloc(len + 1);
	while (off < len) {
		ssize_t n = read(fd, buf + off, len - off);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		off += (size_t)n;
	}
	same = off == len && !memcmp(buf, data, len);
	free(buf);
	close(fd);
	return same;
}

/* Replace path by data unless it already holds it: 1 written, 0
 * unchanged, -1 error.  No fsync: the report is rebuilt from the
 * database at will; the rename only keeps readers from half a page. */
static int write_if_changed(const char *path, const char *data, size_t len)
{
	char *tmp;
	int fd, ret = -1;
	size_t off = 0;

	if (same_content(path, data, len))
		return 0;
	tmp = xstrfmt("%s.tmp.%ld", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	while (off < len) {
		ssize_t n = write(fd, data + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			error("cannot write '%s': %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		off += (size_t)n;
	}
	if (close(fd) < 0) {
		error("cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	ret = 1;
out:
	free(tmp);
	return ret;
}

static int write_page(struct writer *w, const char *name, const struct strbuf *page)
{
	char *path = xstrfmt("%s/%s", w->dir, name);
	int rc = write_if_changed(path, page->buf, page->len);

	free(path);
	if (rc < 0)
		return -1;
	if (rc)
		w->written++;
	else
		w->unchanged++;
	return 0;
}

/* The last REPORT_LOG_MAX bytes of a regular file; 0, or -1 when it is
 * gone or unreadable (not an error: logs may have been cleaned). */
static int read_tail(const char *path, struct strbuf *out)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char buf[8192];
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if (st.st_size > REPORT_LOG_MAX) {
		strbuf_addf(out, "[klab report: the last %d KiB of %lld bytes]\n", REPORT_LOG_MAX / 1024,
			    (long long)st.st_size);
		if (lseek(fd, st.st_size - REPORT_LOG_MAX, SEEK_SET) < 0) {
			close(fd);
			return -1;
		}
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		strbuf_add(out, buf, (size_t)n);
		if (out->len > REPORT_LOG_MAX + 128)	/* the file grew meanwhile */
			break;
	}
	close(fd);
	return 0;
}

static int copy_log(struct writer *w, struct report_log *l)
{
	struct strbuf sb = STRBUF_INIT;
	char *path, *slash;
	int rc = 0;

	if (!l->src || !l->name)
		return 0;
	if (read_tail(l->src, &sb) < 0) {
		w->logs_gone++;
		goto out;
	}
	path = xstrfmt("%s/%s", w->dir, l->name);
	slash = strrchr(path, '/');
	*slash = '\0';
	rc = mkdir_p(path, 0755);
	*slash = '/';
	if (!rc)
		rc = write_if_changed(path, sb.buf, sb.len);
	free(path);
	if (rc < 0)
		goto out;
	l->present = 1;
	if (rc)
		w->logs_written++;
	else
		w->logs_unchanged++;
	rc = 0;
out:
	strbuf_release(&sb);
	return rc;
}

static int copy_logs(struct writer *w, struct report *r)
{
	report_set_log_names(r);
	for (size_t i = 0; i < r->nr_bisections; i++)
		for (size_t k = 0; k < r->bisections[i].nr_steps; k++) {
			struct report_step *s = &r->bisections[i].steps[k];
			if (copy_log(w, &s->log) < 0 || copy_log(w, &s->build_log) < 0 ||
			    copy_log(w, &s->console) < 0 || copy_log(w, &s->raw) < 0)
				return -1;
		}
	return 0;
}

static int parse_since(const char *s, int64_t *out)
{
	static const char *const formats[] = { "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
					       "%Y-%m-%dT%H:%M", "%Y-%m-%d" };

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		struct tm tm;
		const char *end;

		memset(&tm, 0, sizeof(tm));
		end = strptime(s, formats[i], &tm);
		if (end && !*end) {
			*out = (int64_t)timegm(&tm);
			return 0;
		}
	}
	return -1;
}

/* The output directory: created if missing, and writable. */
static int prepare_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return error("'%s' exists and is not a directory", dir);
	if (mkdir_p(dir, 0755) < 0)
		return -1;
	if (access(dir, W_OK | X_OK) < 0)
		return error("cannot write to '%s': %s", dir, strerror(errno));
	return 0;
}

/* write_page for a page whose name is allocated: it is freed. */
static int write_named_page(struct writer *w, char *name, const struct strbuf *page)
{
	int ret = write_page(w, name, page);

	free(name);
	return ret;
}

static int render(struct writer *w, struct report *r)
{
	struct strbuf page = STRBUF_INIT;
	int ret = -1;

	for (size_t i = 0; i < r->nr_bisections; i++) {
		strbuf_reset(&page);
		report_render_bisection(&page, &r->bisections[i]);
		if ((ret = write_named_page(w, report_bisection_file(&r->bisections[i]), &page)) < 0)
			goto out;
	}
	for (size_t i = 0; i < r->nr_tracks; i++) {
		strbuf_reset(&page);
		report_render_track(&page, &r->tracks[i]);
		if ((ret = write_named_page(w, report_track_file(&r->tracks[i]), &page)) < 0)
			goto out;
	}
	strbuf_reset(&page);
	report_render_index(&page, r);
	ret = write_page(w, "index.html", &page);
out:
	strbuf_release(&page);
	return ret;
}

static int since_option(const struct opt *o, const char *arg)
{
	if (parse_since(arg, o->value) < 0)
		return error("--since '%s': expected YYYY-MM-DD or 'YYYY-MM-DD HH:MM' (see 'klab report --help')", arg);
	return 0;
}

int cmd_report(int argc, char **argv, const struct global_opts *g)
{
	struct writer w = { 0 };
	struct report r = { 0 };
	struct lab lab;
	int64_t since = 0;
	int ret = EXIT_FAIL;
	struct opt opts[] = {
		OPT_STRING('o', "output", &w.dir, "DIR", "where to write (created if missing)"),
		OPT_CALLBACK(0, "since", &since, "DATE", "only what started on or after DATE (YYYY-MM-DD[ HH:MM], UTC)",
			     since_option),
		OPT_END()
	};

	argc = parse_options(argc, argv, &report_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&report_usage, "unexpected argument '%s'", argv[0]);
	if (!w.dir || !*w.dir) {
		error("report needs an output directory: -o DIR (see 'klab report --help')");
		return EXIT_USAGE;
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (prepare_dir(w.dir) < 0 || db_report_load(lab.db, since, &r) < 0)
		goto out;
	if (copy_logs(&w, &r) < 0 || render(&w, &r) < 0)
		goto out;
	printf("report: %u page%s written, %u unchanged; logs: %u written, %u unchanged, %u gone\n", w.written,
	       w.written == 1 ? "" : "s", w.unchanged, w.logs_written, w.logs_unchanged, w.logs_gone);
	printf("%s/index.html\n", w.dir);
	ret = EXIT_OK;
out:
	report_release(&r);
	lab_close(&lab);
	return ret;
}
