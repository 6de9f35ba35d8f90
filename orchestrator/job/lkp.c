/* LKP reports and lkp-tests job files in, klab jobs out.  Both inputs
 * come from elsewhere (a mail, a download) and are treated as hostile:
 * sizes are bounded, every value that reaches a klab job is checked
 * against a small character set, and the job is checked by job.c. */
#include "job/lkp.h"
#include "job/job.h"
#include "job/suite.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define MAX_TOKENS 16
#define MAX_ROWS 4096
#define MAX_PARAMS 256
#define MAX_TEXT 1024
#define MAX_WRAP 4		/* continuation lines joined to one */
#define JF_MAX_NODES 20000
#define JF_MAX_DEPTH 8

#define KEY_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
#define PLUS_MINUS "\xc2\xb1"

/* ---- small helpers ---------------------------------------------------------- */

static void params_add(struct lkp_params *p, const char *key, const char *value)
{
	ALLOC_GROW(p->v, p->nr + 1, p->alloc);
	p->v[p->nr].key = xstrdup(key);
	p->v[p->nr].value = xstrdup(value);
	p->nr++;
}

/* key once, with why it is not a parameter */
static void ignore_key(struct lkp_params *p, const char *key, const char *why)
{
	if (!lkp_param(p, key) && p->nr < MAX_PARAMS)
		params_add(p, key, why);
}

static void params_release(struct lkp_params *p)
{
	for (size_t i = 0; i < p->nr; i++) {
		free(p->v[i].key);
		free(p->v[i].value);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

const char *lkp_param(const struct lkp_params *p, const char *key)
{
	for (size_t i = 0; i < p->nr; i++)
		if (!strcmp(p->v[i].key, key))
			return p->v[i].value;
	return NULL;
}

static int only(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

static int is_hex(const char *s, size_t min)
{
	size_t n = strlen(s);

	return n >= min && n <= 40 && strspn(s, "0123456789abcdef") == n;
}

/* One hex id is the other's prefix: the same commit. */
static int same_commit(const char *a, const char *b)
{
	size_t n = strlen(a) < strlen(b) ? strlen(a) : strlen(b);

	return !strncmp(a, b, n);
}

static int is_blank(int c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *s)
{
	while (is_blank(*s))
		s++;
	return s;
}

/* s without trailing blanks, as a new string. */
static char *trimmed(const char *s)
{
	size_t n;

	s = skip_blanks(s);
	n = strlen(s);
	while (n && is_blank(s[n - 1]))
		n--;
	return xstrndup(s, n);
}

/* Blank-separated tokens of a copy of s; 0 when there are more than max. */
static size_t tokenize(const char *s, char **copy, char **tok, size_t max)
{
	size_t n = 0;
	char *p;

	*copy = p = xstrdup(s);
	for (;;) {
		while (is_blank(*p))
			*p++ = '\0';
		if (!*p)
			return n;
		if (n == max)
			return 0;
		tok[n++] = p;
		while (*p && !is_blank(*p))
			p++;
	}
}

/* A decimal number as LKP prints it (1.135e+08, 4965911, 0.13). */
static int is_number(const char *s)
{
	char *end;
	double v;

	if (!*s || !only(s, "0123456789.eE+-") || !strchr("0123456789.-", s[0]))
		return 0;
	v = strtod(s, &end);
	return !*end && isfinite(v);
}

/* "-95.6%", "+12.3%", or "+0.1" (percent metrics change in points). */
static int is_change(const char *s)
{
	size_t n = strlen(s);
	char *num;
	int ok;

	if (n < 2 || n > 24 || (s[0] != '-' && s[0] != '+'))
		return 0;
	num = xstrndup(s, s[n - 1] == '%' ? n - 1 : n);
	ok = is_number(num + 1) && num[1] != '-' && num[1] != '+';
	free(num);
	return ok;
}

static int is_metric(const char *s)
{
	return check_kpi(NULL, s, NULL) == 0;
}

/* ---- the report's lines ------------------------------------------------------- */

struct lines {
	char **l;
	size_t nr, alloc;
};

static void lines_add(struct lines *ls, const char *s, size_t n)
{
	ALLOC_GROW(ls->l, ls->nr + 1, ls->alloc);
	ls->l[ls->nr++] = xstrndup(s, n);
}

static void lines_release(struct lines *ls)
{
	strings_free(ls->l, ls->nr);
	memset(ls, 0, sizeof(*ls));
}

/* Lines of buf without their CR LF or LF. */
static void split_lines(struct lines *ls, const char *buf, size_t len)
{
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;
		size_t keep = n;

		if (keep && buf[i + keep - 1] == '\r')
			keep--;
		lines_add(ls, buf + i, keep);
		i += n + 1;
	}
}

/* '> ', '>', '> > ', '>> ' ... removed. */
static const char *unquote(const char *s)
{
	const char *p = s;
	int quoted = 0;

	for (;;) {
		const char *q = skip_blanks(p);
		if (*q != '>')
			break;
		p = q + 1;
		quoted = 1;
	}
	if (quoted && *p == ' ')
		p++;
	return p;
}

static int is_header(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");

	return n && s[n] == ':';
}

/* 0-15 for a hex digit of either case, else -1 */
static int hexval(int c)
{
	static const char digits[] = "0123456789abcdef0123456789ABCDEF";
	const char *d = c ? memchr(digits, c, sizeof(digits) - 1) : NULL;

	return d ? (int)((d - digits) % 16) : -1;
}

/* Quoted-printable: "=XX" bytes and "=" soft line breaks. */
static void qp_decode(struct lines *ls)
{
	struct lines out = { 0 };
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < ls->nr; i++) {
		const char *s = ls->l[i];
		size_t n = strlen(s);
		int soft = n && s[n - 1] == '=';

		for (size_t k = 0; k < n - (size_t)soft; k++) {
			int hi, lo;
			if (s[k] == '=' && k + 2 < n + 1 && (hi = hexval(s[k + 1])) >= 0 && (lo = hexval(s[k + 2])) >= 0) {
				strbuf_addch(&sb, hi * 16 + lo);
				k += 2;
			} else {
				strbuf_addch(&sb, s[k]);
			}
		}
		if (!soft || i + 1 == ls->nr) {
			lines_add(&out, sb.buf, strlen(sb.buf));
			strbuf_reset(&sb);
		}
	}
	strbuf_release(&sb);
	lines_release(ls);
	*ls = out;
}

/* Headers unfolded; returns the number of header lines (0: not a mail). */
static size_t mail_headers(const struct lines *raw, char **subject, int *qp)
{
	size_t end = 0;
	int mail = 0;

	*subject = NULL;
	*qp = 0;
	if (!raw->nr || (!is_header(raw->l[0]) && strncmp(raw->l[0], "From ", 5)))
		return 0;
	while (end < raw->nr && raw->l[end][0])
		end++;
	for (size_t i = 0; i < end; i++) {
		const char *s = raw->l[i];
		if (!strncasecmp(s, "subject:", 8) || !strncasecmp(s, "from:", 5) || !strncasecmp(s, "message-id:", 11) ||
		    !strncasecmp(s, "date:", 5))
			mail = 1;
	}
	if (!mail)
		return 0;
	for (size_t i = 0; i < end; i++) {
		struct strbuf sb = STRBUF_INIT;
		const char *s = raw->l[i];

		if (!is_header(s))
			continue;
		strbuf_addstr(&sb, s);
		for (size_t k = i + 1; k < end && is_blank(raw->l[k][0]); k++) {
			strbuf_addch(&sb, ' ');
			strbuf_addstr(&sb, skip_blanks(raw->l[k]));
		}
		if (!strncasecmp(sb.buf, "subject:", 8) && !*subject && sb.len <= MAX_TEXT)
			*subject = trimmed(sb.buf + 8);
		if (!strncasecmp(sb.buf, "content-transfer-encoding:", 26) &&
		    !strncasecmp(skip_blanks(sb.buf + 26), "quoted-printable", 16))
			*qp = 1;
		strbuf_release(&sb);
	}
	return end < raw->nr ? end + 1 : end;
}

/* ---- report patterns ------------------------------------------------------------ */

#define MAX_COLUMNS 8		/* commits compared side by side in one table */
#define MAX_RESULTS 32		/* "in addition" entries kept */
#define MAX_URL 512

struct scan {
	const char *name;
	char *subject_commit, *subject_kpi, *subject_change;
	int subject_improvement, subject_signed;
	char *heads[MAX_COLUMNS];	/* the comparison table's column heads */
	size_t nr_heads, col;		/* col: the commit's column */
	char *list[MAX_COLUMNS];	/* "commit:" followed by a list of commits */
	size_t nr_list;
	char *parent_line;
	char *testcase_line;
	int have_axis, tables;
	struct lkp_params block;	/* "parameters:" block */
	struct lkp_result *also;	/* "In addition to that ..." entries */
	size_t nr_also, alloc_also;
	int in_also;			/* 1 while the entry's "test parameters" go on */
	char *patch_url, *patch_base, *patch_link;
};

/* A headline's change: "-95.6%", "+12.3%" or "50.3%" (LKP prints a rise
 * without its '+'), as a signed copy; NULL when s is not one.  *is_signed
 * says whether s had its sign. */
static char *headline_change(const char *s, int *is_signed)
{
	size_t n = strlen(s);
	char *num, *out = NULL;

	if (n < 2 || n > 24 || s[n - 1] != '%')
		return NULL;
	*is_signed = s[0] == '-' || s[0] == '+';
	num = xstrndup(s + *is_signed, n - 1 - *is_signed);
	if (is_number(num) && num[0] != '-')
		out = xstrfmt("%c%s", s[0] == '-' ? '-' : '+', s + *is_signed);
	free(num);
	return out;
}

/* "regression" or "improvement" (maybe with punctuation after): 0 or 1,
 * else -1. */
static int verdict_word(const char *s)
{
	if (!strncmp(s, "regression", 10) && strlen(s) <= 11)
		return 0;
	if (!strncmp(s, "improvement", 11) && strlen(s) <= 12)
		return 1;
	return -1;
}

/* "f35b5d7d67: will-it-scale.per_process_ops -95.5% regression" anywhere
 * in the line (a subject), or "noticed a -95.5% regression of METRIC"
 * (LKP's headline; "FYI, we noticed ..." in its older reports). */
static void find_subject(struct scan *sc, const char *line)
{
	char *copy, *tok[MAX_TOKENS * 2], *change;
	size_t n = tokenize(line, &copy, tok, ARRAY_SIZE(tok));
	int sgn, word;

	for (size_t i = 0; !sc->subject_kpi && i + 3 < n; i++) {
		size_t l = strlen(tok[i]);

		if (l <= 7 || tok[i][l - 1] != ':' || (word = verdict_word(tok[i + 3])) < 0 || !is_metric(tok[i + 1]))
			continue;
		tok[i][l - 1] = '\0';
		if (is_hex(tok[i], 7) && (change = headline_change(tok[i + 2], &sgn))) {
			sc->subject_commit = xstrdup(tok[i]);
			sc->subject_kpi = xstrdup(tok[i + 1]);
			sc->subject_change = change;
			sc->subject_improvement = word;
			sc->subject_signed = sgn;
		}
		tok[i][l - 1] = ':';
	}
	for (size_t i = 0; !sc->subject_kpi && i + 4 < n; i++) {
		size_t l = strlen(tok[i + 4]);

		if (strcmp(tok[i], "a") || strcmp(tok[i + 3], "of") || (word = verdict_word(tok[i + 2])) < 0)
			continue;
		while (l && strchr(":,", tok[i + 4][l - 1]))
			tok[i + 4][--l] = '\0';
		if (is_metric(tok[i + 4]) && (change = headline_change(tok[i + 1], &sgn))) {
			sc->subject_kpi = xstrdup(tok[i + 4]);
			sc->subject_change = change;
			sc->subject_improvement = word;
			sc->subject_signed = sgn;
		}
	}
	free(copy);
}

/* A row: base [± N%], then for each compared commit change head [± N%],
 * then the metric; the change and head of column col (1: the first
 * compared) go into *row.  0 parsed, 1 all but the metric (a wrapped
 * row: join the next line), -1 not a row (or no such column). */
static int parse_row(const char *line, size_t col, struct lkp_row *row)
{
	char *copy, *tok[MAX_TOKENS * 2];
	size_t n = tokenize(line, &copy, tok, ARRAY_SIZE(tok)), i = 0, pairs = 0;
	const char *base, *change = NULL, *head = NULL;
	int ret = -1;

#define SKIP_STDDEV() do { \
		if (i + 1 < n && (!strcmp(tok[i], PLUS_MINUS) || !strcmp(tok[i], "+-")) && \
		    tok[i + 1][strlen(tok[i + 1]) - 1] == '%') \
			i += 2; \
		else if (i < n && !strncmp(tok[i], PLUS_MINUS, 2) && strlen(tok[i]) > 3 && \
			 tok[i][strlen(tok[i]) - 1] == '%') \
			i++; \
	} while (0)

	if (n < 3 || !is_number(tok[0]))
		goto out;
	base = tok[i++];
	SKIP_STDDEV();
	while (i + 1 < n && pairs < MAX_COLUMNS && is_change(tok[i]) && is_number(tok[i + 1])) {
		if (++pairs == col) {
			change = tok[i];
			head = tok[i + 1];
		}
		i += 2;
		SKIP_STDDEV();
	}
	if (!pairs)
		goto out;
	if (i == n) {
		ret = 1;
		goto out;
	}
	if (i + 1 != n || !is_metric(tok[i]) || !change)
		goto out;
	row->metric = xstrdup(tok[i]);
	row->base = xstrdup(base);
	row->change = xstrdup(change);
	row->head = xstrdup(head);
	ret = 0;
#undef SKIP_STDDEV
out:
	free(copy);
	return ret;
}

static void row_release(struct lkp_row *row)
{
	FREE_MANY(row->metric, row->base, row->head, row->change);
	memset(row, 0, sizeof(*row));
}

/* 1 when every token of line is a commit id (7-40 hex digits), *n of them. */
static int hex_tokens(const char *line, char **out, size_t max, size_t *n)
{
	char *copy, *tok[MAX_COLUMNS];
	size_t k = tokenize(line, &copy, tok, MAX_COLUMNS);
	int ok = k > 0 && *n + k <= max;

	for (size_t i = 0; ok && i < k; i++)
		ok = is_hex(tok[i], 7);
	for (size_t i = 0; ok && i < k; i++)
		out[(*n)++] = xstrdup(tok[i]);
	free(copy);
	return ok;
}

static int dashes_line(const char *s)
{
	s = skip_blanks(s);
	return !strncmp(s, "----", 4) && only(s, "- \t");
}

static void free_heads(char **heads, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		free(heads[i]);
		heads[i] = NULL;
	}
	*n = 0;
}

/* The comparison table's column heads, the commit ids compared (wrapped
 * over a few lines when many are), then a line of dashes.  The index of
 * the line after the dashes, or 0 when line i does not start one. */
static size_t heads_at(struct scan *sc, const struct lines *ls, size_t i, const char *commit)
{
	char *heads[MAX_COLUMNS];
	size_t n = 0, j = i;

	while (j < ls->nr && j < i + MAX_WRAP && hex_tokens(ls->l[j], heads, MAX_COLUMNS, &n))
		j++;
	if (n < 2 || j == i || j >= ls->nr || !dashes_line(ls->l[j])) {
		free_heads(heads, &n);
		return 0;
	}
	/* the dashes wrap as the heads did */
	while (j + 1 < ls->nr && dashes_line(ls->l[j + 1]))
		j++;
	if (sc->tables++) {
		free_heads(heads, &n);
		return j + 1;
	}
	memcpy(sc->heads, heads, n * sizeof(*heads));	/* n >= 2 */
	sc->nr_heads = n;
	/* the commit's column: the one the subject or the commit line names,
	 * else the first compared (LKP lists debug builds after it) */
	sc->col = 1;
	for (size_t k = 1; commit && k < n; k++) {
		if (same_commit(heads[k], commit)) {
			sc->col = k;
			break;
		}
	}
	return j + 1;
}

/* The axis keys: "a/b/c:" (wrapped after a '/', joined); the values on
 * the next lines, joined until there are as many. */
static int parse_axis(struct lkp_report *r, const struct scan *sc, const struct lines *ls, size_t *i)
{
	struct strbuf keys = STRBUF_INIT, vals = STRBUF_INIT;
	size_t nk = 0, nv = 0, j = *i, wraps = 0;
	int ret = -1;

	strbuf_addstr(&keys, skip_blanks(ls->l[j]));
	strbuf_rtrim(&keys);
	while (keys.len && keys.buf[keys.len - 1] == '/' && j + 1 < ls->nr && wraps++ < MAX_WRAP) {
		char *t = trimmed(ls->l[++j]);
		strbuf_addstr(&keys, t);
		free(t);
	}
	if (!keys.len || keys.buf[keys.len - 1] != ':') {
		ret = 1;
		goto out;
	}
	strbuf_setlen(&keys, keys.len - 1);
	if (!only(keys.buf, KEY_CHARS "/") || !strchr(keys.buf, '/') || keys.len > MAX_TEXT) {
		ret = 1;
		goto out;
	}
	while (++j < ls->nr && !*skip_blanks(ls->l[j]))
		;
	for (const char *p = keys.buf; p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
		nk++;
	wraps = 0;
	for (; j < ls->nr && *skip_blanks(ls->l[j]); j++) {
		char *t = trimmed(ls->l[j]);
		size_t slashes = 0;

		strbuf_addstr(&vals, t);
		free(t);
		for (size_t c = 0; c < vals.len; c++)
			slashes += vals.buf[c] == '/';
		if (slashes + 1 >= nk || wraps++ >= MAX_WRAP || vals.len > MAX_TEXT)
			break;
	}
	*i = j;
	for (const char *p = vals.buf; vals.len && p; p = strchr(p, '/') ? strchr(p, '/') + 1 : NULL)
		nv++;
	if (nv != nk) {
		error("%s: the axis line names %zu parameters but its values line has %zu (expected a line of "
		      "%zu values separated by '/' below 'key/key/...:')", sc->name, nk, nv, nk);
		goto out;
	}
	{
		char *kp = keys.buf, *vp = vals.buf;
		for (size_t a = 0; a < nk; a++) {
			char *ks = strchr(kp, '/'), *vs = strchr(vp, '/');
			if (ks)
				*ks = '\0';
			if (vs)
				*vs = '\0';
			if (!*kp) {
				error("%s: the axis line has an empty parameter name", sc->name);
				goto out;
			}
			params_add(&r->params, kp, vp);
			kp = ks ? ks + 1 : kp + strlen(kp);
			vp = vs ? vs + 1 : vp + strlen(vp);
		}
	}
	ret = 0;
out:
	strbuf_release(&keys);
	strbuf_release(&vals);
	return ret;
}

/* "commit: <sha> ("subject")", the subject possibly wrapped; or "commit:"
 * alone, the compared commits one a line below it. */
static void parse_commit_line(struct lkp_report *r, struct scan *sc, const struct lines *ls, size_t *i)
{
	const char *rest = skip_blanks(skip_blanks(ls->l[*i]) + 7);
	char *copy, *tok[2];
	size_t n;

	if (!*rest) {
		/* "  c7f7475ba4 ("...")", "  da5ba99800 (last debug patch)" */
		size_t j = *i + 1;
		for (; j < ls->nr && j < *i + 16; j++) {
			char *c2, *t2[MAX_TOKENS];
			size_t m = tokenize(ls->l[j], &c2, t2, MAX_TOKENS);
			int ok = m >= 1 && is_hex(t2[0], 7);

			if (ok && sc->nr_list < MAX_COLUMNS && !sc->tables)
				sc->list[sc->nr_list++] = xstrdup(t2[0]);
			free(c2);
			if (!ok)
				break;
		}
		*i = j - 1;
		return;
	}
	n = tokenize(rest, &copy, tok, 1);
	if (!n) {
		/* more than one token: take the first */
		char *sp = xstrdup(rest);
		sp[strcspn(sp, " \t")] = '\0';
		free(copy);
		copy = sp;
		tok[0] = sp;
	}
	if (!r->commit && is_hex(tok[0], 7)) {
		const char *open = strstr(rest, "(\"");
		r->commit = xstrdup(tok[0]);
		if (open) {
			struct strbuf sb = STRBUF_INIT;
			char *close;
			size_t j = *i, wraps = 0;

			strbuf_addstr(&sb, open + 2);
			while (!strstr(sb.buf, "\")") && j + 1 < ls->nr && wraps++ < MAX_WRAP && *skip_blanks(ls->l[j + 1])) {
				char *t = trimmed(ls->l[++j]);
				strbuf_addch(&sb, ' ');
				strbuf_addstr(&sb, t);
				free(t);
			}
			close = strstr(sb.buf, "\")");
			if (close && (size_t)(close - sb.buf) <= MAX_TEXT) {
				/* the last '")' ends it: subjects may quote */
				char *last = close;
				while ((close = strstr(close + 1, "\")")))
					last = close;
				*last = '\0';
				r->subject = xstrdup(sb.buf);
				*i = j;
			}
			strbuf_release(&sb);
		}
	}
	free(copy);
}

/* "key: value" lines after "parameters:". */
static void parse_block(struct scan *sc, const struct lines *ls, size_t *i)
{
	size_t j = *i + 1, blanks = 0;

	for (; j < ls->nr && sc->block.nr < MAX_PARAMS; j++) {
		const char *s = skip_blanks(ls->l[j]);
		size_t k = strspn(s, KEY_CHARS);
		char *v, *key;

		if (!*s) {
			if (sc->block.nr || ++blanks > 2)
				break;
			continue;
		}
		if (!k || s[k] != ':' || !is_blank(s[k + 1]))
			break;
		v = trimmed(s + k + 1);
		key = xstrndup(s, k);
		params_add(&sc->block, key, v);
		free(key);
		free(v);
	}
	*i = j - 1;
}

/* After "commit:", "testcase:", "parent:": the first token, or NULL. */
static char *first_token_after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p;

	if (strncmp(s, prefix, n))
		return NULL;
	p = skip_blanks(s + n);
	n = strcspn(p, " \t");
	return n ? xstrndup(p, n) : NULL;
}

/* The text after prefix, one line of at most MAX_URL printable
 * characters, or NULL. */
static char *text_after(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	char *t;

	if (strncmp(s, prefix, n))
		return NULL;
	t = trimmed(s + n);
	if (!*t || strlen(t) > MAX_URL) {
		free(t);
		return NULL;
	}
	return t;
}

static void scan_line_keys(struct scan *sc, const char *s)
{
	static const char *const parents[] = { "parent:", "parent commit:", "base:", "base commit:", "base-commit:" };
	char *t;

	for (size_t k = 0; k < ARRAY_SIZE(parents) && !sc->parent_line; k++) {
		t = first_token_after(s, parents[k]);
		if (t && is_hex(t, 7))
			sc->parent_line = t;
		else
			free(t);
	}
	if (!sc->testcase_line) {
		t = first_token_after(s, "testcase:");
		if (!t)
			t = first_token_after(s, "in testcase:");
		if (t && strlen(t) <= 64 && only(t, KEY_CHARS))
			sc->testcase_line = t;
		else
			free(t);
	}
	/* a patch under review: the robot's branch, its base, the posting */
	if (!sc->patch_url && (t = text_after(s, "url:")))
		sc->patch_url = t;
	if (!sc->patch_base && (t = text_after(s, "base:"))) {
		if (is_hex(t, 7))
			free(t);	/* a parent line */
		else
			sc->patch_base = t;
	}
	if (!sc->patch_link && (t = text_after(s, "patch link:")))
		sc->patch_link = t;
}

static void result_release(struct lkp_result *x)
{
	FREE_MANY(x->suite, x->kpi, x->change, x->machine);
	params_release(&x->params);
	memset(x, 0, sizeof(*x));
}

/* The "In addition to that, the commit also has significant impact on
 * the following tests" table:
 *   | testcase: change | stress-ng: stress-ng.schedmix.ops_per_sec 194.5% improvement |
 *   | test machine     | 64 threads 2 sockets ...                                       |
 *   | test parameters  | cpufreq_governor=performance                                   |
 *   |                  | nr_threads=100%                                                |
 * 1 when line s was one of its lines. */
static int also_line(struct scan *sc, const char *s)
{
	const char *p2, *p3;
	char *left, *right;
	int ret = 1;

	if (s[0] != '|' || !(p2 = strchr(s + 1, '|')) || !(p3 = strchr(p2 + 1, '|'))) {
		sc->in_also = 0;
		return 0;
	}
	left = xstrndup(s + 1, (size_t)(p2 - s - 1));
	right = xstrndup(p2 + 1, (size_t)(p3 - p2 - 1));
	{
		char *l = trimmed(left), *r = trimmed(right);
		free(left);
		free(right);
		left = l;
		right = r;
	}
	if (!strcmp(left, "testcase: change")) {
		char *copy, *tok[5], *change;
		size_t n = tokenize(right, &copy, tok, ARRAY_SIZE(tok));
		size_t l = n ? strlen(tok[0]) : 0;
		int sgn, word;

		sc->in_also = 0;
		if (n == 4 && l > 1 && l <= 65 && tok[0][l - 1] == ':' && (word = verdict_word(tok[3])) >= 0 &&
		    is_metric(tok[1]) && sc->nr_also < MAX_RESULTS && (change = headline_change(tok[2], &sgn))) {
			struct lkp_result *x;

			tok[0][l - 1] = '\0';
			if (only(tok[0], KEY_CHARS)) {
				ALLOC_GROW(sc->also, sc->nr_also + 1, sc->alloc_also);
				x = &sc->also[sc->nr_also++];
				memset(x, 0, sizeof(*x));
				x->suite = xstrdup(tok[0]);
				x->kpi = xstrdup(tok[1]);
				x->change = change;
				x->improvement = word;
				sc->in_also = 1;
			} else {
				free(change);
			}
		}
		free(copy);
	} else if (sc->in_also && !strcmp(left, "test machine")) {
		struct lkp_result *x = &sc->also[sc->nr_also - 1];
		if (!x->machine && strlen(right) <= MAX_TEXT)
			x->machine = xstrdup(right);
	} else if (sc->in_also && (!strcmp(left, "test parameters") || !*left)) {
		struct lkp_result *x = &sc->also[sc->nr_also - 1];
		size_t k = strspn(right, KEY_CHARS);

		if (k && right[k] == '=' && x->params.nr < MAX_PARAMS && strlen(right) <= MAX_TEXT) {
			char *key = xstrndup(right, k);
			params_add(&x->params, key, right + k + 1);
			free(key);
		}
	} else {
		sc->in_also = 0;
		ret = 0;
	}
	free(left);
	free(right);
	return ret;
}

static void scan_release(struct scan *sc)
{
	FREE_MANY(sc->subject_commit, sc->subject_kpi, sc->subject_change, sc->parent_line, sc->testcase_line,
		  sc->patch_url, sc->patch_base, sc->patch_link);
	free_heads(sc->heads, &sc->nr_heads);
	free_heads(sc->list, &sc->nr_list);
	params_release(&sc->block);
	for (size_t i = 0; i < sc->nr_also; i++)
		result_release(&sc->also[i]);
	free(sc->also);
}

/* The commit the table's columns are matched against, as far as the
 * lines before it told. */
static const char *commit_so_far(const struct lkp_report *r, const struct scan *sc)
{
	if (sc->subject_commit)
		return sc->subject_commit;
	if (r->commit)
		return r->commit;
	return sc->nr_list >= 2 ? sc->list[1] : NULL;
}

static int scan_lines(struct lkp_report *r, struct scan *sc, const struct lines *ls)
{
	int in_table = 0;

	for (size_t i = 0; i < ls->nr; i++) {
		const char *s = skip_blanks(ls->l[i]);
		struct lkp_row row = { 0 };
		size_t next;
		int rc;

		if (!*s)
			continue;
		find_subject(sc, s);
		if (also_line(sc, s))
			continue;
		scan_line_keys(sc, s);
		if (!strncmp(s, "commit:", 7)) {
			parse_commit_line(r, sc, ls, &i);
			continue;
		}
		if (!sc->have_axis && !sc->block.nr && strlen(s) >= 11 &&
		    !strcmp(s + strlen(s) - 11, "parameters:")) {
			parse_block(sc, ls, &i);
			continue;
		}
		if (!sc->have_axis && strchr(s, '/') && (s[strlen(s) - 1] == ':' || s[strlen(s) - 1] == '/') &&
		    only(s, KEY_CHARS "/:")) {
			size_t j = i;
			rc = parse_axis(r, sc, ls, &j);
			if (rc < 0)
				return -1;
			if (rc == 0) {
				sc->have_axis = 1;
				i = j;
				continue;
			}
		}
		if (!strncmp(s, "=====", 5)) {
			in_table = 0;
			continue;
		}
		if ((next = heads_at(sc, ls, i, commit_so_far(r, sc)))) {
			in_table = sc->tables == 1;
			i = next - 1;
			continue;
		}
		if (!in_table || r->nr_rows >= MAX_ROWS)
			continue;
		rc = parse_row(s, sc->col, &row);
		if (rc == 1) {
			/* the row wrapped: its metric (and columns) on the next lines */
			struct strbuf joined = STRBUF_INIT;
			size_t j = i;

			strbuf_addstr(&joined, s);
			while (rc == 1 && j + 1 < ls->nr && j < i + MAX_WRAP && joined.len <= MAX_TEXT) {
				strbuf_addch(&joined, ' ');
				strbuf_addstr(&joined, ls->l[++j]);
				rc = parse_row(joined.buf, sc->col, &row);
			}
			strbuf_release(&joined);
			if (rc == 0)
				i = j;
		}
		if (rc == 0) {
			ALLOC_GROW(r->rows, r->nr_rows + 1, r->alloc_rows);
			r->rows[r->nr_rows++] = row;
		} else {
			row_release(&row);
		}
	}
	return 0;
}

/* The list entry (or table head) that is the subject's commit, or NULL. */
static const char *listed(char *const *v, size_t n, const char *commit)
{
	for (size_t i = 0; commit && i < n; i++)
		if (same_commit(v[i], commit))
			return v[i];
	return NULL;
}

static int decide_commits(struct lkp_report *r, struct scan *sc)
{
	const char *name = sc->name, *c;

	if (!r->commit && (c = listed(sc->list + 1, sc->nr_list ? sc->nr_list - 1 : 0, sc->subject_commit)))
		r->commit = xstrdup(c);
	if (!r->commit && sc->nr_list >= 2)
		r->commit = xstrdup(sc->list[1]);
	if (!r->commit && sc->subject_commit)
		r->commit = xstrdup(sc->subject_commit);
	if (!r->commit && sc->nr_heads >= 2)
		r->commit = xstrdup(sc->heads[sc->col]);
	if (!r->commit)
		return error("%s: no commit: expected a line like 'commit: <sha> (\"subject\")' or a subject like '<sha>: <metric> -95.5%% regression'",
			     name);
	if (sc->subject_commit && !same_commit(sc->subject_commit, r->commit))
		return error("%s: the subject names commit %s but the report's commit is %s", name, sc->subject_commit,
			     r->commit);
	if (sc->nr_heads) {
		if (!same_commit(sc->heads[sc->col], r->commit))
			return error("%s: the comparison table compares %s with %s, not with commit %s", name,
				     sc->heads[0], sc->heads[sc->col], r->commit);
		r->parent = xstrdup(sc->heads[0]);
	}
	if (sc->parent_line) {
		if (r->parent && !same_commit(r->parent, sc->parent_line))
			return error("%s: the comparison table's base %s and the parent line's %s differ", name, r->parent,
				     sc->parent_line);
		if (!r->parent)
			r->parent = xstrdup(sc->parent_line);
	}
	if (!r->parent && sc->nr_list >= 2 && !same_commit(sc->list[0], r->commit))
		r->parent = xstrdup(sc->list[0]);
	if (r->parent && same_commit(r->parent, r->commit))
		return error("%s: the parent and the commit are the same (%s)", name, r->commit);
	return 0;
}

/* The job direction that bisects a change: klab's "bad" is the way the
 * KPI moved. */
static int change_direction(const char *change)
{
	return change[0] == '-' ? 1 : -1;
}

/* Suite, parameters, KPI and change from what the lines held. */
static int decide(struct lkp_report *r, struct scan *sc)
{
	const char *name = sc->name;
	struct lkp_result *own;

	if (decide_commits(r, sc) < 0)
		return -1;
	if (!sc->have_axis)
		for (size_t i = 0; i < sc->block.nr; i++)
			params_add(&r->params, sc->block.v[i].key, sc->block.v[i].value);
	{
		const char *axis = lkp_param(&r->params, "testcase");
		if (axis && sc->testcase_line && strcmp(axis, sc->testcase_line))
			return error("%s: the testcase line says '%s' but the axis line '%s'", name, sc->testcase_line, axis);
		if (axis && only(axis, KEY_CHARS) && strlen(axis) <= 64)
			r->suite = xstrdup(axis);
		else if (sc->testcase_line)
			r->suite = xstrdup(sc->testcase_line);
	}
	if (!r->suite)
		return error("%s: no testcase: expected a line 'testcase: <suite>' or an axis line naming testcase", name);

	if (sc->subject_kpi) {
		r->kpi = xstrdup(sc->subject_kpi);
		r->improvement = sc->subject_improvement;
		for (size_t i = 0; i < r->nr_rows && !r->row; i++)
			if (!strcmp(r->rows[i].metric, r->kpi))
				r->row = &r->rows[i];
		if (r->row && sc->subject_signed && r->row->change[0] != sc->subject_change[0])
			return error("%s: the headline says %s %s but the table's row %s", name, r->kpi,
				     sc->subject_change, r->row->change);
		/* the row's sign is the metric's; a headline may print a fall unsigned */
		if (r->row && r->row->change[strlen(r->row->change) - 1] == '%')
			r->change = xstrdup(r->row->change);
		else
			r->change = xstrdup(sc->subject_change);
	} else if (r->nr_rows) {
		r->row = &r->rows[0];
		r->kpi = xstrdup(r->row->metric);
		r->change = xstrdup(r->row->change);
	} else {
		return error("%s: no KPI: expected a line like 'kernel test robot noticed a -95.5%% regression of <metric> on:', a subject like '<sha>: <metric> -95.5%% regression', or a comparison table row",
			     name);
	}
	r->direction = change_direction(r->change);

	/* results[0] is the report's own, the "in addition" ones follow */
	ALLOC_GROW(r->results, sc->nr_also + 1, r->alloc_results);
	own = &r->results[0];
	memset(own, 0, sizeof(*own));
	own->suite = xstrdup(r->suite);
	for (size_t i = 0; i < r->params.nr; i++)
		params_add(&own->params, r->params.v[i].key, r->params.v[i].value);
	own->kpi = xstrdup(r->kpi);
	own->change = xstrdup(r->change);
	own->improvement = r->improvement;
	if (sc->nr_also)
		memcpy(r->results + 1, sc->also, sc->nr_also * sizeof(*sc->also));
	r->nr_results = sc->nr_also + 1;
	free(sc->also);
	sc->also = NULL;
	sc->nr_also = sc->alloc_also = 0;

	r->patch_url = sc->patch_url;
	r->patch_base = sc->patch_base;
	r->patch_link = sc->patch_link;
	sc->patch_url = sc->patch_base = sc->patch_link = NULL;
	r->patch = (r->patch_url && strstr(r->patch_url, "intel-lab-lkp")) || r->patch_link ||
		   (r->subject && !strncmp(r->subject, "[PATCH", 6));
	return 0;
}

int lkp_report_select(struct lkp_report *r, size_t n)
{
	const struct lkp_result *x;

	if (!n || n > r->nr_results)
		return error("the report has %zu result%s: --result takes 1 (the headline's)%s%zu", r->nr_results,
			     r->nr_results == 1 ? "" : "s", r->nr_results > 1 ? " to " : " only", r->nr_results > 1 ? r->nr_results : 1);
	if (n - 1 == r->selected)
		return 0;
	x = &r->results[n - 1];
	FREE_MANY(r->suite, r->kpi, r->change);
	params_release(&r->params);
	r->suite = xstrdup(x->suite);
	for (size_t i = 0; i < x->params.nr; i++)
		params_add(&r->params, x->params.v[i].key, x->params.v[i].value);
	r->kpi = xstrdup(x->kpi);
	r->change = xstrdup(x->change);
	r->improvement = x->improvement;
	r->direction = change_direction(r->change);
	/* the table is the headline result's */
	r->row = NULL;
	for (size_t i = 0; n == 1 && i < r->nr_rows && !r->row; i++)
		if (!strcmp(r->rows[i].metric, r->kpi))
			r->row = &r->rows[i];
	r->selected = n - 1;
	return 0;
}

int lkp_patch_fetch(const struct lkp_report *r, char **repo, char **branch)
{
	static const char prefix[] = "https://github.com/intel-lab-lkp/linux/commits/";
	const char *b;

	*repo = *branch = NULL;
	if (!r->patch_url || strncmp(r->patch_url, prefix, sizeof(prefix) - 1))
		return -1;
	b = r->patch_url + sizeof(prefix) - 1;
	if (!*b || strlen(b) > 255 || !only(b, KEY_CHARS "/") || b[0] == '-' || b[0] == '/' || strstr(b, "..") ||
	    strstr(b, "//"))
		return -1;
	*repo = xstrndup(prefix, sizeof(prefix) - 1 - strlen("/commits/"));
	*branch = xstrdup(b);
	return 0;
}

int lkp_report_parse(struct lkp_report *r, const char *name, const char *buf, size_t len)
{
	struct lines raw = { 0 }, body = { 0 };
	struct scan sc = { 0 };
	char *subject = NULL;
	size_t start;
	int qp, ret = -1;

	memset(r, 0, sizeof(*r));
	sc.name = name;
	if (len > LKP_MAX_REPORT)
		return error("%s: %zu bytes: a report is at most %d bytes (1 MiB)", name, len, LKP_MAX_REPORT);
	if (memchr(buf, '\0', len))
		return error("%s: not a text report (it holds a NUL byte)", name);
	split_lines(&raw, buf, len);
	start = mail_headers(&raw, &subject, &qp);
	if (subject)
		find_subject(&sc, subject);
	for (size_t i = start; i < raw.nr; i++) {
		const char *u = unquote(raw.l[i]);
		lines_add(&body, u, strlen(u));
	}
	if (qp)
		qp_decode(&body);
	if (scan_lines(r, &sc, &body) < 0 || decide(r, &sc) < 0)
		goto out;
	ret = 0;
out:
	free(subject);
	scan_release(&sc);
	lines_release(&raw);
	lines_release(&body);
	if (ret < 0)
		lkp_report_release(r);
	return ret;
}

void lkp_report_release(struct lkp_report *r)
{
	FREE_MANY(r->commit, r->subject, r->parent, r->suite, r->kpi, r->change, r->patch_url, r->patch_base,
		  r->patch_link);
	params_release(&r->params);
	for (size_t i = 0; i < r->nr_rows; i++)
		row_release(&r->rows[i]);
	free(r->rows);
	for (size_t i = 0; i < r->nr_results; i++)
		result_release(&r->results[i]);
	free(r->results);
	memset(r, 0, sizeof(*r));
}

/* ---- lkp-tests job files ---------------------------------------------------------- */

/* An axis: a key and its values (one for a plain value). */
struct axis {
	char *key;
	char **vals;
	size_t nr, alloc;
};

struct axes {
	struct axis *a;
	size_t nr, alloc;
};

struct jfparser {
	const char *name;
	yaml_parser_t yaml;
	size_t nodes;
};

static void axes_release(struct axes *x)
{
	for (size_t i = 0; i < x->nr; i++) {
		free(x->a[i].key);
		for (size_t k = 0; k < x->a[i].nr; k++)
			free(x->a[i].vals[k]);
		free(x->a[i].vals);
	}
	free(x->a);
	memset(x, 0, sizeof(*x));
}

/* The axis of key (replacing its values), new at the end. */
static struct axis *axes_set(struct axes *x, const char *key)
{
	struct axis *a;

	for (size_t i = 0; i < x->nr; i++) {
		if (!strcmp(x->a[i].key, key)) {
			a = &x->a[i];
			for (size_t k = 0; k < a->nr; k++)
				free(a->vals[k]);
			a->nr = 0;
			return a;
		}
	}
	ALLOC_GROW(x->a, x->nr + 1, x->alloc);
	a = &x->a[x->nr++];
	memset(a, 0, sizeof(*a));
	a->key = xstrdup(key);
	return a;
}

static void axis_add(struct axis *a, const char *v)
{
	ALLOC_GROW(a->vals, a->nr + 1, a->alloc);
	a->vals[a->nr++] = xstrdup(v);
}

static void axes_copy(struct axes *dst, const struct axes *src)
{
	for (size_t i = 0; i < src->nr; i++) {
		struct axis *a = axes_set(dst, src->a[i].key);
		for (size_t k = 0; k < src->a[i].nr; k++)
			axis_add(a, src->a[i].vals[k]);
	}
}

static int jf_event(struct jfparser *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&p->yaml, ev)) {
		if (p->yaml.error == YAML_MEMORY_ERROR)
			die("out of memory parsing '%s'", p->name);
		return error("%s:%d: YAML syntax error: %s", p->name, (int)p->yaml.problem_mark.line + 1,
			     p->yaml.problem ? p->yaml.problem : "malformed YAML");
	}
	if (ev->type == YAML_ALIAS_EVENT) {
		int line = (int)ev->start_mark.line + 1;
		yaml_event_delete(ev);
		return error("%s:%d: YAML aliases are not allowed in job files", p->name, line);
	}
	if (++p->nodes > JF_MAX_NODES) {
		yaml_event_delete(ev);
		return error("%s: more than %d YAML events; not a job file", p->name, JF_MAX_NODES);
	}
	return 0;
}

/* A scalar's text: bounded, one line. */
static int jf_text(struct jfparser *p, const yaml_event_t *ev, char **out)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;

	if (n > MAX_TEXT || memchr(s, '\0', n))
		return error("%s:%d: a value longer than %d characters or holding a NUL", p->name,
			     (int)ev->start_mark.line + 1, MAX_TEXT);
	*out = xstrndup(s, n);
	return 0;
}

/* Skip a value (map or list) up to its end. */
static int jf_skip(struct jfparser *p, const yaml_event_t *start, int depth)
{
	if (start->type != YAML_MAPPING_START_EVENT && start->type != YAML_SEQUENCE_START_EVENT)
		return 0;
	if (depth > JF_MAX_DEPTH)
		return error("%s:%d: nested deeper than a job file is", p->name, (int)start->start_mark.line + 1);
	for (;;) {
		yaml_event_t ev;
		int end, rc;

		if (jf_event(p, &ev) < 0)
			return -1;
		end = ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT;
		rc = end ? 0 : jf_skip(p, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (end || rc < 0)
			return rc;
	}
}

/* The next text of a list (key: whose values) or a map's keys (key
 * NULL) into *t (caller frees): 1, 0 at the `end` event, -1 after
 * error(), a value that is not a scalar included. */
static int jf_next_text(struct jfparser *p, yaml_event_type_t end, const char *key, char **t)
{
	yaml_event_t ev;
	int rc;

	if (jf_event(p, &ev) < 0)
		return -1;
	if (ev.type == end) {
		yaml_event_delete(&ev);
		return 0;
	}
	if (ev.type != YAML_SCALAR_EVENT) {
		int line = (int)ev.start_mark.line + 1;
		yaml_event_delete(&ev);
		if (key)
			return error("%s:%d: %s: expected a list of values", p->name, line, key);
		return error("%s:%d: keys must be text", p->name, line);
	}
	rc = jf_text(p, &ev, t);
	yaml_event_delete(&ev);
	return rc < 0 ? -1 : 1;
}

/* The value of key: a scalar (one value), a list of scalars (an axis),
 * or a map (flattened when it holds parameters, else ignored). */
static int jf_value(struct jfparser *p, struct axes *x, struct lkp_params *ignored, const char *key,
		    const char *suite, int depth)
{
	yaml_event_t ev;
	int rc = 0;

	if (jf_event(p, &ev) < 0)
		return -1;
	if (ev.type == YAML_SCALAR_EVENT) {
		char *t;
		if (jf_text(p, &ev, &t) < 0) {
			rc = -1;
		} else if (!*t || !strcmp(t, "~") || !strcmp(t, "null")) {
			ignore_key(ignored, key, "no value (a placeholder or a monitor switched on)");
			free(t);
		} else {
			axis_add(axes_set(x, key), t);
			free(t);
		}
	} else if (ev.type == YAML_SEQUENCE_START_EVENT) {
		struct axis *a = axes_set(x, key);
		char *t;

		while ((rc = jf_next_text(p, YAML_SEQUENCE_END_EVENT, key, &t)) > 0) {
			if (a->nr >= LKP_MAX_COMBINATIONS) {
				free(t);
				rc = error("%s: %s: more than %d values", p->name, key, LKP_MAX_COMBINATIONS);
				break;
			}
			axis_add(a, t);
			free(t);
		}
	} else if (ev.type == YAML_MAPPING_START_EVENT) {
		/* "if role client:" holds the client's map (netperf's), read as
		 * the job's own; the server's side is netserver, started by it */
		int role = depth == 1 && !strcmp(key, "if role client");
		/* fs: { fs: ext4, format: n } is lkp-tests' fs setup with its
		 * parameters, the file system among them */
		int flatten = depth <= 1 && ((suite && !strcmp(key, suite)) || !strcmp(key, "transparent_hugepage") ||
					     !strcmp(key, "fio-setup-basic") || !strcmp(key, "fs"));
		if (!flatten && !role) {
			ignore_key(ignored, key, !strncmp(key, "if role ", 8) ? "another machine's part of an LKP cluster job"
									 : "a map: a setup or monitor of lkp-tests");
			rc = jf_skip(p, &ev, depth + 1);
		} else {
			char *kt;

			/* the role's keys are the job's: depth 0 is the top level
			 * once more, but with no role inside it */
			while ((rc = jf_next_text(p, YAML_MAPPING_END_EVENT, NULL, &kt)) > 0) {
				rc = jf_value(p, x, ignored, kt, role ? suite : NULL, role ? 0 : depth ? depth + 1 : 2);
				free(kt);
				if (rc < 0)
					break;
			}
		}
	}
	yaml_event_delete(&ev);
	return rc;
}

/* One document's map into axes; *suite set from its suite: key. */
static int jf_document(struct jfparser *p, struct axes *x, struct lkp_params *ignored, char **suite)
{
	yaml_event_t ev;

	if (jf_event(p, &ev) < 0)
		return -1;
	if (ev.type != YAML_MAPPING_START_EVENT) {
		int line = (int)ev.start_mark.line + 1;
		yaml_event_delete(&ev);
		return error("%s:%d: expected a map of lkp-tests job keys (suite: ..., testcase: ...)", p->name, line);
	}
	yaml_event_delete(&ev);
	for (;;) {
		char *key;
		int rc = jf_next_text(p, YAML_MAPPING_END_EVENT, NULL, &key);

		if (rc <= 0)
			return rc;
		if (!strcmp(key, "suite")) {
			struct axes tmp = { 0 };
			struct lkp_params ign = { 0 };
			rc = jf_value(p, &tmp, &ign, key, NULL, 1);
			if (!rc && tmp.nr == 1 && tmp.a[0].nr == 1 && !*suite)
				*suite = xstrdup(tmp.a[0].vals[0]);
			else if (!rc && !(tmp.nr == 1 && tmp.a[0].nr == 1))
				rc = error("%s: suite: expected one name", p->name);
			axes_release(&tmp);
			params_release(&ign);
		} else if (!strcmp(key, "<<")) {
			struct axes tmp = { 0 };
			struct lkp_params ign = { 0 };
			ignore_key(ignored, "<<", "includes another lkp-tests file, which is not read");
			rc = jf_value(p, &tmp, &ign, key, NULL, 2);
			axes_release(&tmp);
			params_release(&ign);
		} else {
			rc = jf_value(p, x, ignored, key, *suite, 1);
		}
		free(key);
		if (rc < 0)
			return -1;
	}
}

/* Every combination of the axes, appended to jf->combos. */
static int jf_expand(struct lkp_jobfile *jf, const char *name, const struct axes *x)
{
	size_t total = 1, *idx;

	for (size_t i = 0; i < x->nr; i++) {
		if (!x->a[i].nr)
			continue;
		if (total > LKP_MAX_COMBINATIONS / x->a[i].nr || total * x->a[i].nr + jf->nr_combos > LKP_MAX_COMBINATIONS)
			return error("%s: more than %d combinations of parameters; split the job file", name,
				     LKP_MAX_COMBINATIONS);
		total *= x->a[i].nr;
	}
	idx = xcalloc(x->nr + 1, sizeof(*idx));
	for (size_t c = 0; c < total; c++) {
		struct lkp_params *p;

		ALLOC_GROW(jf->combos, jf->nr_combos + 1, jf->alloc_combos);
		p = &jf->combos[jf->nr_combos++];
		memset(p, 0, sizeof(*p));
		for (size_t i = 0; i < x->nr; i++)
			if (x->a[i].nr)
				params_add(p, x->a[i].key, x->a[i].vals[idx[i]]);
		/* the last axis varies fastest */
		for (size_t i = x->nr; i-- > 0;) {
			if (!x->a[i].nr)
				continue;
			if (++idx[i] < x->a[i].nr)
				break;
			idx[i] = 0;
		}
	}
	free(idx);
	return 0;
}

int lkp_jobfile_parse(struct lkp_jobfile *jf, const char *name, const char *buf, size_t len)
{
	struct jfparser p = { 0 };
	struct axes base = { 0 };
	size_t docs = 0;
	int ret = -1;

	memset(jf, 0, sizeof(*jf));
	p.name = name;
	if (len > LKP_MAX_JOBFILE)
		return error("%s: %zu bytes: an lkp-tests job file is at most %d bytes", name, len, LKP_MAX_JOBFILE);
	if (!yaml_parser_initialize(&p.yaml))
		die("out of memory initializing the YAML parser");
	yaml_parser_set_input_string(&p.yaml, (const unsigned char *)buf, len);
	for (;;) {
		yaml_event_t ev;
		struct axes doc = { 0 };
		int type;

		if (jf_event(&p, &ev) < 0)
			goto out;
		type = ev.type;
		yaml_event_delete(&ev);
		if (type == YAML_STREAM_END_EVENT)
			break;
		if (type != YAML_DOCUMENT_START_EVENT)
			continue;	/* stream start */
		if (jf_document(&p, docs ? &doc : &base, &jf->ignored, &jf->suite) < 0) {
			axes_release(&doc);
			goto out;
		}
		if (jf_event(&p, &ev) < 0) {	/* document end */
			axes_release(&doc);
			goto out;
		}
		yaml_event_delete(&ev);
		if (!docs++) {
			/* the first document is a job of its own, as in lkp-tests */
			if (jf_expand(jf, name, &base) < 0)
				goto out;
		} else {
			/* a later document is a variant of the first */
			struct axes v = { 0 };
			axes_copy(&v, &base);
			axes_copy(&v, &doc);
			ret = jf_expand(jf, name, &v);
			axes_release(&v);
			axes_release(&doc);
			if (ret < 0)
				goto out;
			ret = -1;
		}
	}
	if (!docs) {
		error("%s: empty job file", name);
		goto out;
	}
	if (!jf->suite) {
		error("%s: missing key 'suite' (the lkp-tests suite, such as will-it-scale)%s", name,
		      lkp_param(&jf->ignored, "<<") ? "; its '<<:' includes of other lkp-tests files are not read" : "");
		goto out;
	}
	if (!only(jf->suite, KEY_CHARS) || strlen(jf->suite) > 64) {
		error("%s: suite: not a suite name", name);
		goto out;
	}
	ret = 0;
out:
	axes_release(&base);
	yaml_parser_delete(&p.yaml);
	if (ret < 0)
		lkp_jobfile_release(jf);
	return ret;
}

char *lkp_jobfile_suite(const char *buf, size_t len)
{
	for (size_t i = 0; i + 6 < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : len - i;

		if (n > 6 && n < 80 && !memcmp(buf + i, "suite:", 6)) {
			char *line = xstrndup(buf + i + 6, n - 6), *name = trimmed(line);

			free(line);
			if (*name && strlen(name) <= 64 && only(name, KEY_CHARS))
				return name;
			free(name);
			return NULL;
		}
		i += n + 1;
	}
	return NULL;
}

void lkp_jobfile_release(struct lkp_jobfile *jf)
{
	free(jf->suite);
	for (size_t i = 0; i < jf->nr_combos; i++)
		params_release(&jf->combos[i]);
	free(jf->combos);
	params_release(&jf->ignored);
	memset(jf, 0, sizeof(*jf));
}

/* ---- mapping onto a klab job -------------------------------------------------------- */

/* LKP suites klab cannot run, and why: said once, before any parameter. */
static const struct {
	const char *suite;
	const char *why;
} refused_suites[] = {
	{ "aim7", "AIM7 (reaim) is not packaged in Debian and klab ships no runner for it; LKP runs it on a file system it makes on a ramdisk or a RAID (disk:, fs:)" },
	{ "reaim", "AIM7 (reaim) is not packaged in Debian and klab ships no runner for it; LKP runs it on a file system it makes on a ramdisk or a RAID (disk:, fs:)" },
	{ "aim9", "AIM9 is not packaged in Debian and klab ships no runner for it" },
	{ "unixbench", "UnixBench is not packaged in Debian and klab ships no runner for it" },
	{ "lmbench3", "lmbench is not packaged in Debian and klab ships no runner for it" },
	{ "fsmark", "klab has no fsmark suite: fs_mark writes its files to a file system LKP makes on a disk (disk:, fs:)" },
	{ "phoronix-test-suite", "it downloads its test profiles and programs while it runs, and klab fetches nothing at run time (its guests have no network)" },
};

const char *lkp_suite_refused(const char *suite)
{
	for (size_t i = 0; suite && i < ARRAY_SIZE(refused_suites); i++)
		if (!strcmp(suite, refused_suites[i].suite))
			return refused_suites[i].why;
	return NULL;
}

/* How an LKP suite's parameters become a klab job's is the suite's own
 * table (suite.h): a suite whose testcase is its name takes none from the
 * parameters; the others take it from test:.  Its modes are mode:, and
 * the keys its params: takes pass on under LKP's own names. */
#define LKP_TESTCASE_KEY "test"

/* kbuild's testcase is the config it builds (klab's older kbuild jobs
 * name it so), LKP's build_kconfig with its run script's default */
#define KBUILD_TESTCASE_KEY "build_kconfig"
#define KBUILD_TESTCASE_DEFAULT "defconfig"

/* stress-ng's options LKP's run script makes of its parameters:
 * "--<test>-method <method>" ('%s' is the stressor). */
static const struct {
	const char *key, *option;
} stress_ng_options[] = {
	{ "method", "%s-method" },
	{ "mode", "%s-mode" },
	{ "type", "%s-type" },
	{ "advise", "madvise-advise" },
	{ "hdd_opts", "hdd-opts" },
	/* LKP's script takes --<test>-sched where stress-ng has it and
	 * --workload-sched else; Debian's stress-ng has the global --sched */
	{ "sched", "sched" },
};

/* Why the test machine's parameters stay behind. */
static const struct {
	const char *key;
	const char *why;
} unmappable[] = {
	{ "tbox_group", "the LKP test machine; klab runs its own guest shape (guest:)" },
	{ "tbox", "the LKP test machine; klab runs its own guest shape (guest:)" },
	{ "rootfs", "LKP's userspace image; klab's guest runs its own initramfs" },
	{ "kconfig", "LKP's kernel config; klab builds with its own recipe (--config, --fragment)" },
	{ "compiler", "klab builds with the host's compiler" },
	{ "cpufreq_governor", "a host setting; a guest has no cpufreq" },
	{ "ucode", "the test machine's CPU microcode; not a guest setting" },
	{ "disk", "klab's guests have no disk; the benchmark runs from the initramfs" },
	{ "fs", "klab's guests have no disk file system" },
	{ "format", "klab makes the file system fresh on its scratch disk each boot" },
	{ "mount_option", "klab mounts the scratch file system with its defaults" },
	{ "category", "lkp-tests' job category" },
	{ "size", "LKP's total size for the test machine; klab sizes usemem per task against the guest's memory" },
	{ "unit_size", "LKP's size of one usemem pass; klab's usemem has none" },
	{ "need_memory", "LKP's memory need for its test machine; klab's guest has guest.memory" },
	{ "cluster", "LKP's client and server machines; klab runs both in one guest, over its loopback" },
	{ "nr_instances", "LKP's copies of the job at once; klab runs one" },
	{ "set_nic_irq_affinity", "a NIC setting of LKP's machine; klab's benchmark uses the guest's loopback" },
	{ "memory.high", "a cgroup limit of LKP's job; klab runs the benchmark in no cgroup" },
	{ "memory.low", "a cgroup limit of LKP's job; klab runs the benchmark in no cgroup" },
	{ "memory.max", "a cgroup limit of LKP's job; klab runs the benchmark in no cgroup" },
	{ "pids.max", "a cgroup limit of LKP's job; klab runs the benchmark in no cgroup" },
	{ "iterations", "LKP's repetitions within one run; klab repeats boots (repeat:)" },
	{ "<<", "includes another lkp-tests file, which is not read" },
};

/* What lkp_map learnt from the parameters, on its way to a job file. */
struct lkp_mapping {
	const struct suite *suite;
	const char *testcase, *testcase_key, *mode, *tasks, *thp_en, *thp_df, *fs;
	unsigned runtime, lkp_runtime;
	int have_runtime, direction, thp_given;
	char *kpi;
	struct lkp_params params;	/* params: of the job */
	struct strbuf lkp;		/* the parameters as given, for the file's comment */
};

static void row_addv(struct lkp_klab_job *j, const char *param, const char *value, const char *key,
		     const char *job_value, const char *fmt, va_list ap)
{
	struct lkp_map_row *row;

	ALLOC_GROW(j->rows, j->nr_rows + 1, j->alloc_rows);
	row = &j->rows[j->nr_rows++];
	row->param = xstrdup(param);
	row->value = xstrdup(value ? value : "");
	row->key = key ? xstrdup(key) : NULL;
	row->job_value = job_value ? xstrdup(job_value) : NULL;
	row->why = NULL;
	if (fmt) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_vaddf(&sb, fmt, ap);
		row->why = strbuf_detach(&sb, NULL);
	}
}

/* param value → key: job_value, and why (a format, may be NULL) */
__attribute__((format(printf, 6, 7)))
static void mapped(struct lkp_klab_job *j, const char *param, const char *value, const char *key,
		   const char *job_value, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	row_addv(j, param, value, key, job_value, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 4, 5)))
static void unmapped(struct lkp_klab_job *j, const char *param, const char *value, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	row_addv(j, param, value, NULL, NULL, fmt, ap);
	va_end(ap);
}

unsigned lkp_scaled_runtime(unsigned lkp_s, enum lkp_accel accel)
{
	unsigned s;

	if (accel == LKP_ACCEL_KVM)
		return lkp_s;
	s = (lkp_s + 9) / 10;
	/* a few seconds of measurement at least, never more than asked */
	if (s < 5)
		s = lkp_s < 5 ? lkp_s : 5;
	return s ? s : 1;
}

/* "4" or "50%": digits and at most one trailing '%'. */
static int is_count(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 6 && strspn(s, "0123456789") == n - (s[n - 1] == '%') && s[0] != '%';
}

/* A value that may go into the job between single quotes. */
static int value_ok(const char *v)
{
	return strlen(v) <= 64 && only(v, KEY_CHARS "%+,/=");
}

static void name_part(struct strbuf *sb, const char *v)
{
	strbuf_addch(sb, '-');
	for (; *v && sb->len < 120; v++) {
		if (*v == '%')
			strbuf_addstr(sb, "pct");
		else
			strbuf_addch(sb, strchr(NAME_CHARS ".", *v) ? *v : '_');
	}
}

static const char *thp_values(const char *key)
{
	return !strcmp(key, "thp_enabled") ? " always madvise never " : " always defer defer+madvise madvise never ";
}

static int thp_ok(const char *key, const char *v)
{
	char *w = xstrfmt(" %s ", v);
	int ok = only(v, "abcdefghijklmnopqrstuvwxyz+") && strstr(thp_values(key), w);

	free(w);
	return ok;
}

static int listed_value(const char *const *list, const char *v)
{
	for (size_t i = 0; list && list[i]; i++)
		if (!strcmp(list[i], v))
			return 1;
	return 0;
}

/* " a, b" of a suite's modes, for a message (static: one at a time) */
static const char *modes_of(const struct suite *s)
{
	static char buf[128];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; s->modes && s->modes[i] && n < sizeof(buf) - 1; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s %s", i ? "," : "", s->modes[i]);
	return buf;
}

/* The testcase: the suite's name where the suite has no test axis, else
 * LKP's test:. */
static void map_testcase(struct lkp_klab_job *out, struct lkp_mapping *m, const struct lkp_params *params)
{
	const char *v;

	int kbuild = !strcmp(m->suite->name, "kbuild");

	if (m->suite->testcase_is_suite && !kbuild) {
		m->testcase = m->suite->name;
		m->testcase_key = "testcase";
		return;
	}
	m->testcase_key = kbuild ? KBUILD_TESTCASE_KEY : LKP_TESTCASE_KEY;
	v = lkp_param(params, m->testcase_key);
	if (v && *v && strlen(v) <= 64 && only(v, NAME_CHARS)) {
		m->testcase = v;
		mapped(out, m->testcase_key, v, "testcase", v, NULL);
	} else if (v && *v) {
		unmapped(out, m->testcase_key, v, "not a %s test name (letters, digits, '_' and '-')", m->suite->name);
	} else if (kbuild) {
		m->testcase = KBUILD_TESTCASE_DEFAULT;
		mapped(out, m->testcase_key, "(not given)", "testcase", m->testcase, "LKP's kbuild runs %s without it",
		       m->testcase);
	}
}

/* One parameter: mapped onto the job, or a row saying why not. */
static void map_param(struct lkp_klab_job *out, struct lkp_mapping *m, const char *k, const char *v,
		      const char *has_nr_task, const struct lkp_map_in *in)
{
	const struct suite *suite = m->suite;
	char *key;

	if (!strcmp(k, "testcase")) {
		if (strcmp(v, suite->name))
			unmapped(out, k, v, "not the suite %s", suite->name);
		else
			mapped(out, k, v, "suite", suite->name, NULL);
		return;
	}
	if (!strcmp(k, m->testcase_key))
		return;		/* map_testcase's */
	if (!strcmp(k, "mode") && (suite->keys & SUITE_KEY_MODE)) {
		if (listed_value(suite->modes, v))
			mapped(out, k, v, "mode", m->mode = v, NULL);
		else
			unmapped(out, k, v, "klab's %s runs one mode per job, one of%s", suite->name, modes_of(suite));
		return;
	}
	if ((!strcmp(k, "nr_task") || (!strcmp(k, "nr_threads") && !has_nr_task)) && !m->tasks) {
		if (is_count(v))
			mapped(out, k, v, "nr_task", m->tasks = v, "%s", v[strlen(v) - 1] == '%' ? "of the guest's vCPUs" : "tasks");
		else
			unmapped(out, k, v, "not a count like 4 or 100%%");
		return;
	}
	if ((!strcmp(k, "testtime") || !strcmp(k, "runtime")) && !m->have_runtime) {
		if (job_parse_duration(v, 1, 86400, &m->lkp_runtime) == 0) {
			char b[16];

			m->have_runtime = 1;
			m->runtime = lkp_scaled_runtime(m->lkp_runtime, in->accel);
			snprintf(b, sizeof(b), "%us", m->runtime);
			if (in->accel == LKP_ACCEL_TCG)
				mapped(out, k, v, "runtime", b,
				       "TCG guests run about 10x slower, so a tenth (at least 5s); KVM keeps %us", m->lkp_runtime);
			else
				mapped(out, k, v, "runtime", b, "KVM: LKP's own");
		} else {
			unmapped(out, k, v, "not a duration like 30s or 300");
		}
		return;
	}
	if (!strcmp(k, "nr_threads") && has_nr_task) {
		unmapped(out, k, v, "nr_task decides klab's tasks");
		return;
	}
	if (!strcmp(k, "class") && !strcmp(suite->name, "stress-ng")) {
		unmapped(out, k, v, "klab runs the one stressor %s, not the whole class", m->testcase ? m->testcase : "named");
		return;
	}
	if (!strcmp(k, "fs") && (suite->keys & SUITE_KEY_FS)) {
		if (!strcmp(v, "xfs") || !strcmp(v, "ext4") || !strcmp(v, "btrfs"))
			mapped(out, k, v, "fs", m->fs = v, "made fresh on the guest's scratch disk each boot");
		else
			unmapped(out, k, v, "klab makes xfs, ext4 or btrfs on its scratch disk");
		return;
	}
	if (!strcmp(k, "thp_enabled") || !strcmp(k, "thp_defrag")) {
		if (thp_ok(k, v)) {
			*(!strcmp(k, "thp_enabled") ? &m->thp_en : &m->thp_df) = v;
			key = xstrfmt("thp.%s", k + 4);
			mapped(out, k, v, key, v, NULL);
			free(key);
		} else {
			unmapped(out, k, v, "not one of%s", thp_values(k));
		}
		return;
	}
	if (!strcmp(suite->name, "stress-ng") && m->testcase) {
		for (size_t i = 0; i < ARRAY_SIZE(stress_ng_options); i++) {
			if (strcmp(k, stress_ng_options[i].key))
				continue;
			if (!value_ok(v) || lkp_param(&m->params, k)) {
				unmapped(out, k, v, "not a stress-ng option value");
				return;
			}
			/* the formats are this table's own */
			key = strchr(stress_ng_options[i].option, '%') ? xstrfmt("%s-%s", m->testcase, k)
								       : xstrdup(stress_ng_options[i].option);
			params_add(&m->params, key, v);
			{
				char *full = xstrfmt("params.%s", key);
				mapped(out, k, v, full, v, "stress-ng --%s %s, as LKP's stress-ng script runs it", key, v);
				free(full);
			}
			free(key);
			return;
		}
	}
	if (suite_takes_param(suite, k)) {
		if (!value_ok(v) || lkp_param(&m->params, k)) {
			unmapped(out, k, v, "not a value klab passes on (at most 64 of a-z, 0-9, _-.%%+,/=)");
		} else {
			key = xstrfmt("params.%s", k);
			params_add(&m->params, k, v);
			mapped(out, k, v, key, v, "LKP's name");
			free(key);
		}
		return;
	}
	if (!strcmp(k, "kconfig") && !strncmp(v, "x86_64-rhel", 11) && !m->thp_given) {
		m->thp_en = "always";
		mapped(out, k, v, "thp.enabled", "always",
		       "RHEL configs make THP 'always' the default; klab builds with its own recipe, whose default may differ");
		return;
	}
	for (size_t u = 0; u < ARRAY_SIZE(unmappable); u++) {
		if (!strcmp(k, unmappable[u].key)) {
			unmapped(out, k, v, "%s", unmappable[u].why);
			return;
		}
	}
	unmapped(out, k, v, "no klab equivalent");
}

/* The job's name: suite-testcase-mode-tasks-runtime-thp-params. */
static char *mapped_name(const struct lkp_mapping *m)
{
	struct strbuf nm = STRBUF_INIT;

	strbuf_addstr(&nm, m->suite->name);
	name_part(&nm, m->testcase);
	if (m->mode)
		name_part(&nm, m->mode);
	if (m->tasks)
		name_part(&nm, m->tasks);
	if (m->have_runtime) {
		char b[16];
		snprintf(b, sizeof(b), "%us", m->lkp_runtime);
		name_part(&nm, b);
	}
	if (m->fs)
		name_part(&nm, m->fs);
	if (m->thp_en)
		name_part(&nm, m->thp_en);
	if (m->thp_df)
		name_part(&nm, m->thp_df);
	for (size_t i = 0; i < m->params.nr; i++)
		if (strcmp(m->params.v[i].key, "source"))
			name_part(&nm, m->params.v[i].value);
	return strbuf_detach(&nm, NULL);
}

/* The job file's text. */
static char *mapped_yaml(const struct lkp_mapping *m, const struct lkp_map_in *in)
{
	struct strbuf y = STRBUF_INIT;

	strbuf_addstr(&y, "# made by klab from ");
	strbuf_add_clean(&y, in->origin ? in->origin : "LKP parameters");
	strbuf_addstr(&y, "\n# LKP: ");
	strbuf_add_clean(&y, m->lkp.buf);
	strbuf_addf(&y, "\nsuite: %s\ntestcase: '%s'\n", m->suite->name, m->testcase);
	if (m->mode)
		strbuf_addf(&y, "mode: %s\n", m->mode);
	if (m->tasks)
		strbuf_addf(&y, "nr_task: '%s'\n", m->tasks);
	if (m->have_runtime)
		strbuf_addf(&y, "runtime: %us\n", m->runtime);
	if (m->fs)
		strbuf_addf(&y, "fs: %s\n", m->fs);
	if (m->thp_en || m->thp_df) {
		strbuf_addstr(&y, "thp:\n");
		if (m->thp_en)
			strbuf_addf(&y, "  enabled: %s\n", m->thp_en);
		if (m->thp_df)
			strbuf_addf(&y, "  defrag: %s\n", m->thp_df);
	}
	if (m->params.nr) {
		strbuf_addstr(&y, "params:\n");
		for (size_t i = 0; i < m->params.nr; i++)
			strbuf_addf(&y, "  %s: '%s'\n", m->params.v[i].key, m->params.v[i].value);
	}
	if (m->kpi)
		strbuf_addf(&y, "kpi: '%s'\n", m->kpi);
	if (m->direction)
		strbuf_addf(&y, "direction: %d\n", m->direction);
	if (!strcmp(m->suite->name, "kbuild") && in->kbuild_config)
		strbuf_addf(&y, "kconfig: [ '%s' ]\n", in->kbuild_config);
	/* vm-scalability's swap cases write past memory into swap: LKP's
	 * machines have it, klab's guest gets a disk for it */
	if (!strcmp(m->suite->name, "vm-scalability") && !strncmp(m->testcase, "swap-", 5))
		strbuf_addstr(&y, "guest: { vcpus: 2, numa_nodes: 2, memory: 2G, hugepages: none, swap: 1G }\nrepeat: 3\n");
	else
		strbuf_addstr(&y, "guest: { vcpus: 2, numa_nodes: 2, memory: 2G, hugepages: none }\nrepeat: 3\n");
	return strbuf_detach(&y, NULL);
}

/* will-it-scale's per-task KPI names its mode. */
static const char *kpi_mode(const struct lkp_mapping *m, const char *kpi)
{
	if (!kpi || !(m->suite->keys & SUITE_KEY_MODE))
		return NULL;
	if (!strcmp(kpi, "will-it-scale.per_thread_ops"))
		return "thread";
	if (!strcmp(kpi, "will-it-scale.per_process_ops"))
		return "process";
	return NULL;
}

/* The suite's KPIs for the testcase, for a message. */
static void kpi_names(struct strbuf *sb, const struct lkp_mapping *m)
{
	for (const struct suite_kpi *k = m->suite->kpis; k->name; k++) {
		char *n = xstrfmt(k->name, m->testcase);	/* the suite's own format */
		strbuf_addf(sb, "%s%s", k == m->suite->kpis ? "" : ", ", n);
		free(n);
	}
}

/* The report's KPI onto the job, or -1 after error() when the job's
 * suite, testcase and mode cannot produce it. */
static int map_kpi(struct lkp_klab_job *out, struct lkp_mapping *m, const struct lkp_map_in *in)
{
	const char *kpi = in->kpi, *implied = kpi_mode(m, kpi);
	struct strbuf sb = STRBUF_INIT;
	int dir;

	if (implied && !m->mode) {
		m->mode = implied;
		mapped(out, "mode", "(not given)", "mode", implied, "the KPI %s is a %s-mode metric", kpi, implied);
	} else if (implied && strcmp(implied, m->mode)) {
		return error("the KPI %s is measured in %s mode, but LKP's parameters say mode %s", kpi, implied, m->mode);
	}
	if (kpi && !suite_kpi_direction(m->suite, m->testcase, kpi)) {
		kpi_names(&sb, m);
		error("the KPI %s is not one klab's %s measures for %s (its KPIs: %s)", kpi, m->suite->name,
		      m->testcase, sb.buf);
		strbuf_release(&sb);
		return -1;
	}
	if (kpi) {
		m->kpi = xstrdup(kpi);
		mapped(out, "KPI", kpi, "kpi", kpi, NULL);
	}
	dir = suite_kpi_direction(m->suite, m->testcase, kpi ? kpi : m->suite->kpis[0].name);
	if (in->direction) {
		char *v = xstrfmt("%s %s", in->change ? in->change : "", in->improvement ? "improvement" : "regression");
		char *d = xstrfmt("%d", in->direction);
		m->direction = in->direction;
		if (in->improvement)
			mapped(out, "change", v, "direction", d,
			       "klab bisects the improvement: its 'bad' side is the KPI's %s", in->direction < 0 ? "rise" : "fall");
		else
			mapped(out, "change", v, "direction", d, "%s is better", in->direction > 0 ? "higher" : "lower");
		free(v);
		free(d);
	} else if (dir < 0) {
		m->direction = -1;
	}
	return 0;
}

int lkp_map(struct lkp_klab_job *out, const struct lkp_map_in *in)
{
	struct lkp_mapping m = { .lkp = STRBUF_INIT };
	const struct lkp_params *params = in->params;
	const char *has_nr_task = lkp_param(params, "nr_task"), *why;
	char *from_kpi = NULL, *pname = NULL;
	int ret = -1;
	struct job job;

	memset(out, 0, sizeof(*out));
	if ((why = lkp_suite_refused(in->suite)))
		return error("klab cannot run LKP's %s: %s", in->suite, why);
	m.suite = suite_get(in->suite);
	if (!m.suite)
		return -1;
	m.thp_given = lkp_param(params, "thp_enabled") != NULL;
	map_testcase(out, &m, params);
	/* stress-ng's older reports name the stressor only in the KPI */
	if (!m.testcase && in->kpi && !strcmp(m.suite->name, "stress-ng") && !strncmp(in->kpi, "stress-ng.", 10)) {
		const char *s = in->kpi + 10, *dot = strchr(s, '.');
		if (dot && dot > s) {
			from_kpi = xstrndup(s, (size_t)(dot - s));
			if (strlen(from_kpi) <= 64 && only(from_kpi, NAME_CHARS)) {
				m.testcase = from_kpi;
				mapped(out, "KPI", in->kpi, "testcase", from_kpi, "the stressor the KPI names");
			}
		}
	}
	if (!m.testcase) {
		error("LKP %s parameters name no test klab could run (expected '%s: NAME'%s)", m.suite->name,
		      m.testcase_key, !strcmp(m.suite->name, "stress-ng") ? " or a KPI stress-ng.<stressor>.<metric>" : "");
		goto out;
	}
	for (size_t i = 0; i < params->nr; i++) {
		const char *k = params->v[i].key, *v = params->v[i].value;

		if (!*v)
			continue;
		if (m.lkp.len < 400)
			strbuf_addf(&m.lkp, "%s%s=%s", m.lkp.len ? " " : "", k, v);
		map_param(out, &m, k, v, has_nr_task, in);
	}
	if (!m.have_runtime)
		mapped(out, "runtime", "(not given)", "runtime", "10s", "klab's default");
	if (!strcmp(m.suite->name, "kbuild")) {
		const char *src = in->kbuild_source;

		if (!src) {
			error("a kbuild job needs the kernel tree its guest builds (KLAB_KBUILD_SOURCE)");
			goto out;
		}
		if (src[0] != '/' || strlen(src) > 512 || !only(src, KEY_CHARS "/+")) {
			error("the kbuild tree '%s': expected an absolute path of letters, digits and _-.+/", src);
			goto out;
		}
		params_add(&m.params, "source", src);
		mapped(out, "(kernel tree)", "LKP's own", "params.source", src,
		       "the tree the guest builds (KLAB_KBUILD_SOURCE; LKP builds its own copy of a Linux tree)");
		if (in->kbuild_config)
			mapped(out, "(9p)", "", "kconfig", in->kbuild_config, "klab's fragment for the guest kernel's 9p, which shares the tree");
	}
	if (map_kpi(out, &m, in) < 0)
		goto out;
	out->name = mapped_name(&m);
	out->suite = xstrdup(m.suite->name);
	out->testcase = xstrdup(m.testcase);
	out->yaml = mapped_yaml(&m, in);

	/* what klab itself would say about the file */
	pname = in->name ? xstrdup(in->name) : xstrfmt("%s.yaml", out->name);
	if (job_parse_buffer(&job, pname, out->yaml, strlen(out->yaml)) < 0)
		goto out;
	job_release(&job);
	ret = 0;
out:
	free(from_kpi);
	free(pname);
	free(m.kpi);
	params_release(&m.params);
	strbuf_release(&m.lkp);
	if (ret < 0)
		lkp_klab_job_release(out);
	return ret;
}

void lkp_klab_job_release(struct lkp_klab_job *j)
{
	FREE_MANY(j->name, j->suite, j->testcase, j->yaml);
	for (size_t i = 0; i < j->nr_rows; i++)
		FREE_MANY(j->rows[i].param, j->rows[i].value, j->rows[i].key, j->rows[i].job_value, j->rows[i].why);
	free(j->rows);
	memset(j, 0, sizeof(*j));
}
