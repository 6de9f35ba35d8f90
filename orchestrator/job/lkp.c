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

struct scan {
	const char *name;
	char *subject_commit, *subject_kpi, *subject_change;
	char *heads_base, *heads_head;
	char *parent_line;
	char *list_first, *list_last;	/* "commit:" followed by a list of commits */
	char *testcase_line;
	int have_axis;
	struct lkp_params block;	/* "parameters:" block */
};

/* "f35b5d7d67: will-it-scale.per_process_ops -95.5% regression" anywhere
 * in the line, or "noticed a -95.5% regression of METRIC". */
static void find_subject(struct scan *sc, const char *line)
{
	char *copy, *tok[MAX_TOKENS * 2];
	size_t n = tokenize(line, &copy, tok, ARRAY_SIZE(tok));

	for (size_t i = 0; !sc->subject_kpi && i + 3 < n; i++) {
		size_t l = strlen(tok[i]);
		int verdict = !strncmp(tok[i + 3], "regression", 10) || !strncmp(tok[i + 3], "improvement", 11);

		if (l > 7 && tok[i][l - 1] == ':' && verdict && is_metric(tok[i + 1]) && is_change(tok[i + 2])) {
			tok[i][l - 1] = '\0';
			if (!is_hex(tok[i], 7))
				continue;
			sc->subject_commit = xstrdup(tok[i]);
			sc->subject_kpi = xstrdup(tok[i + 1]);
			sc->subject_change = xstrdup(tok[i + 2]);
		}
	}
	for (size_t i = 0; !sc->subject_kpi && i + 4 < n; i++) {
		size_t l = strlen(tok[i + 4]);

		if (strcmp(tok[i], "a") || !is_change(tok[i + 1]) || strcmp(tok[i + 3], "of") ||
		    (strcmp(tok[i + 2], "regression") && strcmp(tok[i + 2], "improvement")))
			continue;
		while (l && strchr(":,", tok[i + 4][l - 1]))
			tok[i + 4][--l] = '\0';
		if (is_metric(tok[i + 4])) {
			sc->subject_kpi = xstrdup(tok[i + 4]);
			sc->subject_change = xstrdup(tok[i + 1]);
		}
	}
	free(copy);
}

/* A row: base [± N%] change head [± N%] metric.  0 parsed, 1 all but
 * the metric (a wrapped row), -1 not a row. */
static int parse_row(const char *line, struct lkp_row *row)
{
	char *copy, *tok[MAX_TOKENS];
	size_t n = tokenize(line, &copy, tok, MAX_TOKENS), i = 0;
	const char *base, *change, *head;
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
	if (i >= n || !is_change(tok[i]))
		goto out;
	change = tok[i++];
	if (i >= n || !is_number(tok[i]))
		goto out;
	head = tok[i++];
	SKIP_STDDEV();
	if (i == n) {
		ret = 1;
	} else if (i + 1 == n && is_metric(tok[i])) {
		row->metric = xstrdup(tok[i]);
		ret = 0;
	} else {
		goto out;
	}
	row->base = xstrdup(base);
	row->change = xstrdup(change);
	row->head = xstrdup(head);
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

/* Two or more hex ids, the comparison table's column heads. */
static int heads_line(const char *line, char **base, char **head)
{
	char *copy, *tok[MAX_TOKENS];
	size_t n = tokenize(line, &copy, tok, MAX_TOKENS);
	int ok = n >= 2;

	for (size_t i = 0; ok && i < n; i++)
		ok = is_hex(tok[i], 7);
	if (ok) {
		*base = xstrdup(tok[0]);
		*head = xstrdup(tok[n - 1]);
	}
	free(copy);
	return ok;
}

static int dashes_line(const char *s)
{
	s = skip_blanks(s);
	return !strncmp(s, "----", 4) && only(s, "- \t");
}

/* The axis keys: "a/b/c:" (wrapped after a '/', joined); the values on
 * the next lines, joined until there are as many. */
static int parse_axis(struct lkp_report *r, const struct scan *sc, const struct lines *ls, size_t *i)
{
	struct strbuf keys = STRBUF_INIT, vals = STRBUF_INIT;
	char **k = NULL, **v = NULL;
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
		error("%s: the axis line names %zu parameters but its values line has %zu", sc->name, nk, nv);
		goto out;
	}
	k = xcalloc(nk, sizeof(*k));
	v = xcalloc(nk, sizeof(*v));
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
	free(k);
	free(v);
	strbuf_release(&keys);
	strbuf_release(&vals);
	return ret;
}

/* "commit: <sha> ("subject")", the subject possibly wrapped. */
static void parse_commit_line(struct lkp_report *r, struct scan *sc, const struct lines *ls, size_t *i)
{
	const char *rest = skip_blanks(skip_blanks(ls->l[*i]) + 7);
	char *copy, *tok[2];
	size_t n;

	if (!*rest) {
		/* the compared commits, one a line: "  c7f7475ba4 ("...")" */
		size_t j = *i + 1;
		for (; j < ls->nr && j < *i + 16; j++) {
			char *c2, *t2[MAX_TOKENS];
			size_t m = tokenize(ls->l[j], &c2, t2, MAX_TOKENS);
			int ok = m >= 1 && is_hex(t2[0], 7);

			if (ok && !sc->list_first)
				sc->list_first = xstrdup(t2[0]);
			if (ok) {
				free(sc->list_last);
				sc->list_last = xstrdup(t2[0]);
			}
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
		char *v;

		if (!*s) {
			if (sc->block.nr || ++blanks > 2)
				break;
			continue;
		}
		if (!k || s[k] != ':' || !is_blank(s[k + 1]))
			break;
		v = trimmed(s + k + 1);
		{
			char *key = xstrndup(s, k);
			params_add(&sc->block, key, v);
			free(key);
		}
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

static void scan_line_keys(struct lkp_report *r, struct scan *sc, const char *s)
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
	(void)r;
}

static void scan_release(struct scan *sc)
{
	FREE_MANY(sc->subject_commit, sc->subject_kpi, sc->subject_change, sc->heads_base, sc->heads_head,
		  sc->parent_line, sc->list_first, sc->list_last, sc->testcase_line);
	params_release(&sc->block);
}

static int scan_lines(struct lkp_report *r, struct scan *sc, const struct lines *ls)
{
	int in_table = 0, tables = 0;

	for (size_t i = 0; i < ls->nr; i++) {
		const char *s = skip_blanks(ls->l[i]);
		struct lkp_row row = { 0 };
		char *b, *h;
		int rc;

		if (!*s)
			continue;
		find_subject(sc, s);
		scan_line_keys(r, sc, s);
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
		if (i + 1 < ls->nr && dashes_line(ls->l[i + 1]) && heads_line(s, &b, &h)) {
			if (tables++) {
				free(b);
				free(h);
				in_table = 0;
			} else {
				sc->heads_base = b;
				sc->heads_head = h;
				in_table = 1;
			}
			i++;
			continue;
		}
		if (!in_table || r->nr_rows >= MAX_ROWS)
			continue;
		rc = parse_row(s, &row);
		if (rc == 1 && i + 1 < ls->nr) {
			/* the metric's name wrapped onto the next line */
			char *t = trimmed(ls->l[i + 1]);
			if (is_metric(t)) {
				row.metric = t;
				rc = 0;
				i++;
			} else {
				free(t);
			}
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

/* Commit, parent, suite and KPI from what the lines held. */
static int decide(struct lkp_report *r, struct scan *sc)
{
	const char *name = sc->name;

	if (!r->commit && sc->list_last && sc->list_first && strcmp(sc->list_first, sc->list_last))
		r->commit = xstrdup(sc->list_last);
	if (!r->commit && sc->subject_commit)
		r->commit = xstrdup(sc->subject_commit);
	if (!r->commit && sc->heads_head)
		r->commit = xstrdup(sc->heads_head);
	if (!r->commit)
		return error("%s: no commit: expected a line like 'commit: <sha> (\"subject\")' or a subject like '<sha>: <metric> -95.5%% regression'",
			     name);
	if (sc->subject_commit && !same_commit(sc->subject_commit, r->commit))
		return error("%s: the subject names commit %s but the report's commit is %s", name, sc->subject_commit,
			     r->commit);
	if (sc->heads_base) {
		if (!same_commit(sc->heads_head, r->commit))
			return error("%s: the comparison table compares %s with %s, not with commit %s", name,
				     sc->heads_base, sc->heads_head, r->commit);
		r->parent = xstrdup(sc->heads_base);
	}
	if (sc->parent_line) {
		if (r->parent && !same_commit(r->parent, sc->parent_line))
			return error("%s: the comparison table's base %s and the parent line's %s differ", name, r->parent,
				     sc->parent_line);
		if (!r->parent)
			r->parent = xstrdup(sc->parent_line);
	}
	if (!r->parent && sc->list_first && !same_commit(sc->list_first, r->commit))
		r->parent = xstrdup(sc->list_first);
	if (!r->parent)
		return error("%s: no parent commit: expected the comparison table's two column heads or a line 'parent: <sha>'",
			     name);
	if (same_commit(r->parent, r->commit))
		return error("%s: the parent and the commit are the same (%s)", name, r->commit);

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
		r->change = xstrdup(sc->subject_change);
		for (size_t i = 0; i < r->nr_rows && !r->row; i++)
			if (!strcmp(r->rows[i].metric, r->kpi))
				r->row = &r->rows[i];
	} else if (r->nr_rows) {
		r->row = &r->rows[0];
		r->kpi = xstrdup(r->row->metric);
		r->change = xstrdup(r->row->change);
	} else {
		return error("%s: no KPI: expected a subject like '<sha>: <metric> -95.5%% regression' or a comparison table row",
			     name);
	}
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
	FREE_MANY(r->commit, r->subject, r->parent, r->suite, r->kpi, r->change);
	params_release(&r->params);
	for (size_t i = 0; i < r->nr_rows; i++)
		row_release(&r->rows[i]);
	free(r->rows);
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
		int flatten = depth == 1 && ((suite && !strcmp(key, suite)) || !strcmp(key, "transparent_hugepage"));
		if (!flatten) {
			ignore_key(ignored, key, "a map: a setup or monitor of lkp-tests");
			rc = jf_skip(p, &ev, depth + 1);
		} else {
			char *kt;

			while ((rc = jf_next_text(p, YAML_MAPPING_END_EVENT, NULL, &kt)) > 0) {
				rc = jf_value(p, x, ignored, kt, NULL, depth + 1);
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
	{ "category", "lkp-tests' job category" },
	{ "size", "LKP's total size for the test machine; klab sizes usemem per task against the guest's memory" },
	{ "unit_size", "LKP's size of one usemem pass; klab's usemem has none" },
	{ "<<", "includes another lkp-tests file, which is not read" },
};

static void add_note(char ***v, size_t *nr, size_t *alloc, char *text)
{
	ALLOC_GROW(*v, *nr + 1, *alloc);
	(*v)[(*nr)++] = text;
}

#define MAPPED(j, ...) add_note(&(j)->mapped, &(j)->nr_mapped, &(j)->alloc_mapped, xstrfmt(__VA_ARGS__))
#define UNMAPPED(j, ...) add_note(&(j)->unmapped, &(j)->nr_unmapped, &(j)->alloc_unmapped, xstrfmt(__VA_ARGS__))

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

/* What lkp_map learnt from the parameters, on its way to a job file. */
struct lkp_mapping {
	const char *testcase, *mode, *tasks, *thp_en, *thp_df, *class;
	unsigned runtime, lkp_runtime;
	int have_runtime;
	struct strbuf lkp;	/* the parameters as given, for the file's comment */
};

/* One parameter: mapped onto the job, or listed as unmapped. */
static void map_param(struct lkp_klab_job *out, const struct suite *suite, struct lkp_mapping *m, const char *k,
		      const char *v, const char *has_nr_task, enum lkp_accel accel)
{
	if (!strcmp(k, "testcase")) {
		if (strcmp(v, suite->name))
			UNMAPPED(out, "testcase %s: not the suite %s", v, suite->name);
		return;
	}
	if (!strcmp(k, "test") && !m->testcase && strlen(v) <= 64 && only(v, NAME_CHARS)) {
		m->testcase = v;
		return;
	}
	if (!strcmp(k, "mode") && (suite->keys & SUITE_KEY_MODE)) {
		if (!strcmp(v, "process") || !strcmp(v, "thread")) {
			m->mode = v;
			MAPPED(out, "mode %s → mode: %s", v, v);
		} else {
			UNMAPPED(out, "mode %s: klab runs one mode per job, process (the default) or thread", v);
		}
		return;
	}
	if ((!strcmp(k, "nr_task") || (!strcmp(k, "nr_threads") && !has_nr_task)) && !m->tasks) {
		if (is_count(v)) {
			m->tasks = v;
			MAPPED(out, "%s %s → nr_task: %s (of the guest's vCPUs when a share)", k, v, v);
		} else {
			UNMAPPED(out, "%s %s: not a count like 4 or 100%%", k, v);
		}
		return;
	}
	if ((!strcmp(k, "testtime") || !strcmp(k, "runtime")) && !m->have_runtime) {
		if (job_parse_duration(v, 1, 86400, &m->lkp_runtime) == 0) {
			m->have_runtime = 1;
			m->runtime = lkp_scaled_runtime(m->lkp_runtime, accel);
			if (accel == LKP_ACCEL_TCG)
				MAPPED(out, "%s %s → runtime: %us: TCG guests run about 10x slower, so a tenth (at least 5s); KVM keeps the report's %us",
				       k, v, m->runtime, m->lkp_runtime);
			else
				MAPPED(out, "%s %s → runtime: %us (KVM: the report's)", k, v, m->runtime);
		} else {
			UNMAPPED(out, "%s %s: not a duration like 30s or 300", k, v);
		}
		return;
	}
	if (!strcmp(k, "nr_threads") && has_nr_task) {
		UNMAPPED(out, "nr_threads %s: nr_task decides klab's tasks", v);
		return;
	}
	if (!strcmp(k, "class")) {
		m->class = v;
		return;
	}
	if (!strcmp(k, "thp_enabled") || !strcmp(k, "thp_defrag")) {
		if (thp_ok(k, v)) {
			*(!strcmp(k, "thp_enabled") ? &m->thp_en : &m->thp_df) = v;
			MAPPED(out, "%s %s → thp.%s: %s", k, v, k + 4, v);
		} else {
			UNMAPPED(out, "%s %s: not one of%s", k, v, thp_values(k));
		}
		return;
	}
	for (size_t u = 0; u < ARRAY_SIZE(unmappable); u++) {
		if (!strcmp(k, unmappable[u].key)) {
			UNMAPPED(out, "%s %s: %s", k, v, unmappable[u].why);
			return;
		}
	}
	UNMAPPED(out, "%s %s: no klab equivalent", k, v);
}

/* The job's name: suite-testcase-mode-tasks-runtime-thp. */
static char *mapped_name(const struct suite *suite, const struct lkp_mapping *m)
{
	struct strbuf nm = STRBUF_INIT;

	strbuf_addstr(&nm, suite->name);
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
	if (m->thp_en)
		name_part(&nm, m->thp_en);
	if (m->thp_df)
		name_part(&nm, m->thp_df);
	return strbuf_detach(&nm, NULL);
}

/* The job file's text. */
static char *mapped_yaml(struct lkp_klab_job *out, const struct suite *suite, const struct lkp_mapping *m,
			 const char *kpi, const char *origin)
{
	struct strbuf y = STRBUF_INIT;

	strbuf_addstr(&y, "# made by klab from ");
	strbuf_add_clean(&y, origin ? origin : "LKP parameters");
	strbuf_addstr(&y, "\n# LKP: ");
	strbuf_add_clean(&y, m->lkp.buf);
	strbuf_addf(&y, "\nsuite: %s\ntestcase: '%s'\n", suite->name, m->testcase);
	if (m->mode)
		strbuf_addf(&y, "mode: %s\n", m->mode);
	if (m->tasks)
		strbuf_addf(&y, "nr_task: '%s'\n", m->tasks);
	if (m->have_runtime)
		strbuf_addf(&y, "runtime: %us\n", m->runtime);
	if (m->thp_en || m->thp_df) {
		strbuf_addstr(&y, "thp:\n");
		if (m->thp_en)
			strbuf_addf(&y, "  enabled: %s\n", m->thp_en);
		if (m->thp_df)
			strbuf_addf(&y, "  defrag: %s\n", m->thp_df);
	}
	if (kpi) {
		size_t n = strlen(suite->name);
		if (is_metric(kpi) && !strncmp(kpi, suite->name, n) && kpi[n] == '.') {
			strbuf_addf(&y, "kpi: '%s'\n", kpi);
			MAPPED(out, "KPI %s → kpi: %s", kpi, kpi);
		} else {
			UNMAPPED(out, "KPI %s: not a %s metric klab measures; the job's KPI is the suite's default", kpi,
				 suite->name);
		}
	}
	strbuf_addstr(&y, "guest: { vcpus: 2, numa_nodes: 2, memory: 2G, hugepages: none }\nrepeat: 3\n");
	return strbuf_detach(&y, NULL);
}

int lkp_map(struct lkp_klab_job *out, const char *suite_name, const struct lkp_params *params, const char *kpi,
	    enum lkp_accel accel, const char *origin, const char *name)
{
	const struct suite *suite;
	struct lkp_mapping m = { .lkp = STRBUF_INIT };
	const char *has_nr_task = lkp_param(params, "nr_task"), *kc = lkp_param(params, "kconfig");
	char *from_kpi = NULL, *pname = NULL;
	int ret = -1;
	struct job job;

	memset(out, 0, sizeof(*out));
	suite = suite_get(suite_name);
	if (!suite)
		return -1;
	for (size_t i = 0; i < params->nr; i++) {
		const char *k = params->v[i].key, *v = params->v[i].value;

		if (!*v)
			continue;
		if (m.lkp.len < 400)
			strbuf_addf(&m.lkp, "%s%s=%s", m.lkp.len ? " " : "", k, v);
		map_param(out, suite, &m, k, v, has_nr_task, accel);
	}
	/* stress-ng's older reports name the stressor only in the KPI */
	if (!m.testcase && kpi && !strcmp(suite->name, "stress-ng") && !strncmp(kpi, "stress-ng.", 10)) {
		const char *s = kpi + 10, *dot = strchr(s, '.');
		if (dot && dot > s) {
			from_kpi = xstrndup(s, (size_t)(dot - s));
			if (strlen(from_kpi) <= 64 && only(from_kpi, NAME_CHARS))
				m.testcase = from_kpi;
		}
	}
	if (!m.testcase) {
		error("LKP %s parameters name no test klab could run (expected 'test: NAME'%s)", suite->name,
		      !strcmp(suite->name, "stress-ng") ? " or a KPI stress-ng.<stressor>.<metric>" : "");
		goto out;
	}
	if (!m.have_runtime)
		MAPPED(out, "no testtime or runtime given → klab's default runtime (10s)");
	if (m.class)
		UNMAPPED(out, "class %s: klab runs the one stressor %s, not the whole class", m.class, m.testcase);
	MAPPED(out, "%s %s → suite: %s, testcase: %s", suite->name, m.testcase, suite->name, m.testcase);
	if (!m.thp_en && kc && !strncmp(kc, "x86_64-rhel", 11)) {
		m.thp_en = "always";
		MAPPED(out, "kconfig %s → thp.enabled: always: RHEL configs make THP 'always' the default, klab's guest config may not",
		       kc);
	}
	out->name = mapped_name(suite, &m);
	out->testcase = xstrdup(m.testcase);
	out->yaml = mapped_yaml(out, suite, &m, kpi, origin);

	/* what klab itself would say about the file */
	pname = name ? xstrdup(name) : xstrfmt("%s.yaml", out->name);
	if (job_parse_buffer(&job, pname, out->yaml, strlen(out->yaml)) < 0)
		goto out;
	job_release(&job);
	ret = 0;
out:
	free(from_kpi);
	free(pname);
	strbuf_release(&m.lkp);
	if (ret < 0)
		lkp_klab_job_release(out);
	return ret;
}

void lkp_klab_job_release(struct lkp_klab_job *j)
{
	FREE_MANY(j->name, j->testcase, j->yaml);
	strings_free(j->mapped, j->nr_mapped);
	strings_free(j->unmapped, j->nr_unmapped);
	memset(j, 0, sizeof(*j));
}
