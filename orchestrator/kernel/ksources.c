/* A kernel's source set from kbuild's .cmd files, and the check that a
 * commit touches nothing of it (issue 19: such a commit is not built).
 * The .cmd files are input klab did not write: bounded, and any doubt
 * leaves the set unknown, which means build.  Only util/ below it (the
 * fuzz harness links it alone); the decision is ksources-diff.c. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/ksources.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_CMD_FILE (64u << 20)
#define MAX_CMD_FILES 500000
#define MAX_DEPTH 64

void ksources_release(struct ksources *s)
{
	for (size_t i = 0; i < s->nr; i++)
		free(s->paths[i]);
	free(s->paths);
	s->paths = NULL;
	s->nr = s->alloc = 0;
}

/* What separates paths on a .cmd line: blanks, make's and the shell's
 * punctuation, the commas of -Wp,-MMD,x. */
static int is_sep(unsigned char c)
{
	return c <= ' ' || c >= 0x7f || strchr("\\:=,;'\"()|&<>`{}", c);
}

/* tok (len bytes, no separator) as a repository-relative path, or NULL:
 * "../" then a path (the build directory's parent is the tree), "$srctree"
 * forms, or src_abs/ then a path; no "..", no empty result. */
static char *normalise(const char *tok, size_t len, const char *src_abs)
{
	struct strbuf sb = STRBUF_INIT;
	size_t alen = src_abs ? strlen(src_abs) : 0;
	const char *p = tok, *end = tok + len;

	/* -I../include, -T../arch/x86/kernel/vmlinux.lds: the option's letters */
	if (*p == '-') {
		while (p < end && *p != '.' && *p != '/' && *p != '$')
			p++;
	}
	if (end - p >= 3 && !memcmp(p, "../", 3))
		p += 3;
	else if (end - p >= 10 && !memcmp(p, "$(srctree)", 10) && (end - p == 10 || p[10] == '/'))
		p += 10;
	else if (end - p >= 9 && !memcmp(p, "$srctree/", 9))
		p += 9;
	else if (alen && (size_t)(end - p) > alen && !memcmp(p, src_abs, alen) && p[alen] == '/')
		p += alen;
	else
		return NULL;
	while (p < end) {
		const char *c = p, *slash;
		size_t n;

		while (c < end && *c == '/')
			c++;
		slash = memchr(c, '/', end - c);
		n = (slash ? slash : end) - c;
		p = slash ? slash : end;
		if (!n || (n == 1 && c[0] == '.'))
			continue;
		/* out of the tree, make's, or a build directory in it (objtool's
		 * .cmd files name its objects by absolute path) */
		if ((n == 2 && c[0] == '.' && c[1] == '.') || *c == '$' ||
		    (!sb.len && n >= strlen(KBUILD_DIR_PREFIX) && !memcmp(c, KBUILD_DIR_PREFIX, strlen(KBUILD_DIR_PREFIX)))) {
			strbuf_release(&sb);
			return NULL;
		}
		if (sb.len)
			strbuf_addch(&sb, '/');
		strbuf_add(&sb, c, n);
	}
	if (!sb.len || sb.len > KSOURCES_MAX_PATH_LEN) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

static int add_path(struct ksources *s, char *path)
{
	if (s->nr >= KSOURCES_MAX_PATHS) {
		free(path);
		return error("more than %u source paths: the source set is unknown", KSOURCES_MAX_PATHS);
	}
	ALLOC_GROW(s->paths, s->nr + 1, s->alloc);
	s->paths[s->nr++] = path;
	return 0;
}

int ksources_parse_cmd(struct ksources *s, const char *text, size_t len, const char *src_abs)
{
	size_t i = 0;

	while (i < len) {
		size_t start;
		char *path;

		while (i < len && is_sep((unsigned char)text[i]))
			i++;
		start = i;
		if (len - i > 11 && !memcmp(text + i, "$(srctree)/", 11))
			i += 11;
		while (i < len && !is_sep((unsigned char)text[i]))
			i++;
		/* "$(wildcard" reads as "$" then a separator: its argument is a
		 * build-directory path (include/config/X) and drops below */
		if (i == start || i - start > KSOURCES_MAX_PATH_LEN + 16)
			continue;
		path = normalise(text + start, i - start, src_abs);
		if (path && add_path(s, path) < 0)
			return -1;
	}
	return 0;
}

/* Cut the blanks that end each line of sb and the blank lines that end
 * it: no token moves. */
static void trim_blanks(struct strbuf *sb)
{
	size_t o = 0, line = 0;

	for (size_t i = 0; i < sb->len; i++) {
		char c = sb->buf[i];

		if (c == '\n') {
			while (o > line && (sb->buf[o - 1] == ' ' || sb->buf[o - 1] == '\t' || sb->buf[o - 1] == '\r' ||
					    sb->buf[o - 1] == '\f' || sb->buf[o - 1] == '\v'))
				o--;
			sb->buf[o++] = '\n';
			line = o;
		} else {
			sb->buf[o++] = c;
		}
	}
	while (o > 0 && strchr(" \t\r\f\v\n", sb->buf[o - 1]))
		o--;
	strbuf_setlen(sb, o);
}

/* What a comment's byte becomes: a space, but a newline or a tab (a tab
 * stop) stays, and so does a byte of a UTF-8 character (one column to a
 * compiler that counts characters, two bytes to one that counts bytes),
 * so that a token's column is the same whichever way it is counted. */
static char comment_blank(char c)
{
	return c == '\n' || c == '\t' || (unsigned char)c >= 0x80 ? c : ' ';
}

/* Whether the end of out is inside the <...> of an #include: there a
 * comment's opening marks are the name's (or undefined). */
static int in_header_name(const struct strbuf *out)
{
	size_t b = out->len, n = out->len, i;
	const char *l = out->buf;

	while (b && l[b - 1] != '\n')
		b--;
	for (i = b; i < n && (l[i] == ' ' || l[i] == '\t'); i++)
		;
	if (i == n || l[i++] != '#')
		return 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	/* out is NUL-terminated: strncmp stops at its end */
	if (strncmp(l + i, "include", 7) && strncmp(l + i, "import", 6))
		return 0;
	while (i < n && l[i] != '<')
		i++;
	while (i < n && l[i] != '>')
		i++;
	return i == n && memchr(l + b, '<', n - b);
}

int ksources_blank_comments(const char *text, size_t len, int line_comments, struct strbuf *out)
{
	enum { CODE, LITERAL, BLOCK, LINE } st = CODE;
	char quote = 0;

	strbuf_reset(out);
	for (size_t i = 0; i < len; i++) {
		char c = text[i], next = i + 1 < len ? text[i + 1] : '\0';

		if (c == '\0')
			return -1;
		switch (st) {
		case CODE:
			/* "/\<newline>*" is a comment to the preprocessor */
			if (c == '/' && next == '\\')
				return -1;
			if (c == '/' && (next == '*' || next == '/')) {
				if ((next == '/' && !line_comments) || in_header_name(out))
					return -1;
				st = next == '*' ? BLOCK : LINE;
				strbuf_addstr(out, "  ");
				i++;
				continue;
			}
			if (c == '"' || c == '\'') {
				st = LITERAL;
				quote = c;
			}
			strbuf_addch(out, c);
			break;
		case LITERAL:
			strbuf_addch(out, c);
			if (c == '\\' && next) {
				strbuf_addch(out, next);
				i++;
			} else if (c == quote) {
				st = CODE;
			} else if (c == '\n') {
				return -1;	/* not C: an apostrophe in asm or #if 0 prose */
			}
			break;
		case BLOCK:
			/* "*\<newline>/" ends it for the preprocessor */
			if (c == '*' && next == '\\')
				return -1;
			if (c == '*' && next == '/') {
				strbuf_addstr(out, "  ");
				i++;
				st = CODE;
			} else {
				strbuf_addch(out, comment_blank(c));
			}
			break;
		case LINE:
			/* a backslash before the newline (blanks between allowed)
			 * carries the comment on to the next line */
			if (c == '\\')
				return -1;
			if (c == '\n')
				st = CODE;
			strbuf_addch(out, comment_blank(c));
			break;
		}
	}
	if (st == BLOCK || st == LITERAL)
		return -1;
	trim_blanks(out);
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ksources_finish(struct ksources *s)
{
	size_t o = 0;

	if (!s->nr)
		return;
	qsort(s->paths, s->nr, sizeof(*s->paths), cmp_path);
	for (size_t i = 0; i < s->nr; i++) {
		if (o && !strcmp(s->paths[o - 1], s->paths[i]))
			free(s->paths[i]);
		else
			s->paths[o++] = s->paths[i];
	}
	s->nr = o;
}

int ksources_has(const struct ksources *s, const char *path)
{
	size_t lo = 0, hi = s->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(s->paths[mid], path);

		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* A build directory's kbuild .cmd files: fn(path, data) on each regular
 * file named ".*SUFFIX", depth first, at most MAX_CMD_FILES of them;
 * lstat, so the build directory's "source" link does not lead the walk
 * into the tree.  Stops at the first error. */
struct cmd_walk {
	const char *suffix;
	int (*fn)(const char *path, void *data);
	void *data;
	size_t files;
};

static int walk_cmd_files(struct cmd_walk *w, const char *dir, int depth)
{
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (depth > MAX_DEPTH)
		return error("'%s' is nested deeper than %d directories", dir, MAX_DEPTH);
	if (!(d = opendir(dir)))
		return error("cannot read '%s': %s", dir, strerror(errno));
	while (!ret && (de = readdir(d))) {
		char *path;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		path = xstrfmt("%s/%s", dir, de->d_name);
		if (lstat(path, &st) < 0)
			ret = error("cannot stat '%s': %s", path, strerror(errno));
		else if (S_ISDIR(st.st_mode))
			ret = walk_cmd_files(w, path, depth + 1);
		else if (S_ISREG(st.st_mode) && de->d_name[0] == '.' && ends_with(de->d_name, w->suffix))
			ret = ++w->files > MAX_CMD_FILES ? error("more than %d .cmd files under '%s'", MAX_CMD_FILES, dir)
							 : w->fn(path, w->data);
		free(path);
	}
	closedir(d);
	return ret;
}

struct collect {
	struct ksources *s;
	const char *src_abs;
	size_t finished;	/* paths after the last de-duplication */
};

/* One .cmd file's paths into the source set. */
static int collect_cmd(const char *path, void *data)
{
	struct collect *c = data;
	char *text = NULL;
	size_t len = 0;
	int ret = read_file(path, MAX_CMD_FILE, &text, &len);

	if (ret == 0)
		ret = ksources_parse_cmd(c->s, text, len, c->src_abs);
	/* every object names the same headers again: de-duplicated as it
	 * goes, the bound is on distinct paths, not on the sum of every
	 * object's list (a defconfig's is millions) */
	if (ret == 0 && c->s->nr > 2 * c->finished + 65536) {
		ksources_finish(c->s);
		c->finished = c->s->nr;
	}
	free(text);
	return ret;
}

int ksources_collect(struct ksources *s, const char *bd, const char *src_dir)
{
	char *src_abs = real_path(src_dir);
	struct collect c = { s, src_abs, 0 };
	struct cmd_walk w = { ".cmd", collect_cmd, &c, 0 };
	int ret = walk_cmd_files(&w, bd, 0);

	if (ret == 0) {
		ksources_finish(s);
		ret = -1;
		for (size_t i = 0; i < s->nr && ret; i++)
			if (ends_with(s->paths[i], ".c"))
				ret = 0;
		if (ret)
			error("no .cmd file under '%s' names a C source: the source set is unknown", bd);
	}
	if (ret)
		ksources_release(s);
	free(src_abs);
	return ret;
}

int ksources_write(const struct ksources *s, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int rc;

	for (size_t i = 0; i < s->nr; i++) {
		strbuf_addstr(&sb, s->paths[i]);
		strbuf_addch(&sb, '\n');
	}
	rc = write_file_atomic(path, sb.buf ? sb.buf : "", sb.len);
	strbuf_release(&sb);
	return rc;
}

int ksources_parse_list(struct ksources *s, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = (nl ? nl : end) - p, seps = 0;
		char *plain, *norm;

		for (size_t i = 0; i < n; i++)
			seps += is_sep((unsigned char)p[i]);
		plain = xstrfmt("../%.*s", (int)n, p);
		norm = seps ? NULL : normalise(plain, n + 3, NULL);
		/* a line is only what the parser would have made of it */
		if (!norm || strcmp(norm, plain + 3)) {
			free(norm);
			free(plain);
			ksources_release(s);
			return error("a line is not a source path: the source set is unknown");
		}
		free(plain);
		if (add_path(s, norm) < 0) {
			ksources_release(s);
			return -1;
		}
		p = nl ? nl + 1 : end;
	}
	ksources_finish(s);
	return 0;
}

int ksources_read(struct ksources *s, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if (read_file(path, (size_t)KSOURCES_MAX_PATHS * 64, &text, &len) < 0)
		return -1;
	rc = ksources_parse_list(s, text, len);
	free(text);
	return rc < 0 ? error("'%s' is not a source set", path) : 1;
}

struct dependents {
	const char *src_abs;
	char *const *paths;
	size_t nr, *counts;
};

/* The paths one .o.cmd file names, counted. */
static int count_object_cmd(const char *cmd, void *data)
{
	struct dependents *dp = data;
	struct ksources one = KSOURCES_INIT;
	char *text = NULL;
	size_t len = 0;
	int rc = read_file(cmd, MAX_CMD_FILE, &text, &len);

	if (rc == 0)
		rc = ksources_parse_cmd(&one, text, len, dp->src_abs);
	if (rc == 0) {
		ksources_finish(&one);
		for (size_t i = 0; i < dp->nr; i++)
			dp->counts[i] += ksources_has(&one, dp->paths[i]);
	}
	ksources_release(&one);
	free(text);
	return rc;
}

int ksources_dependents(const char *bd, const char *src_dir, char *const *paths, size_t nr, size_t *counts)
{
	char *src_abs = real_path(src_dir);
	struct dependents dp = { src_abs, paths, nr, counts };
	struct cmd_walk w = { ".o.cmd", count_object_cmd, &dp, 0 };
	int rc;

	memset(counts, 0, nr * sizeof(*counts));
	rc = nr ? walk_cmd_files(&w, bd, 0) : 0;
	free(src_abs);
	return rc;
}

size_t ksources_top(char *const *paths, const size_t *counts, size_t nr, size_t show, struct strbuf *out)
{
	size_t shown = 0, last = (size_t)-1, last_i = 0;

	/* show passes over nr: a handful of paths each */
	for (; shown < show; shown++) {
		size_t best = nr;

		for (size_t i = 0; i < nr; i++) {
			if (!counts[i] || counts[i] > last || (counts[i] == last && i <= last_i))
				continue;
			if (best == nr || counts[i] > counts[best])
				best = i;
		}
		if (best == nr)
			break;
		strbuf_addf(out, "%s%s (%zu)", shown ? ", " : "", paths[best], counts[best]);
		last = counts[best];
		last_i = best;
	}
	return shown;
}
