/* The guest→host result channel (docs/guest-protocol.md): a line splitter
 * that gives the same records however the bytes are chunked, a strict
 * record parser with caps on what it stores, and what the suites' parsers
 * (suite-*.c) share to turn a benchmark's output into metrics.  Everything
 * the guest sends is hostile: nothing here trusts a length, a name or a
 * number it has not checked. */
#include "job/resultproto.h"
#include "job/suite.h"
#include "job/monitor.h"
#include "util/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What one stored string costs, counting the allocator's overhead. */
#define STR_COST(len) ((len) + 1 + 16)

static int name_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || result_is_digit(c) || strchr("_.:+()/-", c);
}

int result_name_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (i >= RESULT_MAX_NAME || !name_char((unsigned char)s[i]))
			return 0;
	return i > 0;
}

/* Past the decimal digits at p; *n says how many. */
static const char *digits(const char *p, size_t *n)
{
	const char *start = p;

	while (result_is_digit(*p))
		p++;
	*n = (size_t)(p - start);
	return p;
}

/* strtod alone would also take "nan", "inf", hex floats and leading
 * blanks, and stop silently at trailing junk. */
int result_parse_number(const char *s, double *out)
{
	const char *p = s;
	size_t n, frac = 0;
	char *end;
	double v;

	p = digits(p + (*p == '-' || *p == '+'), &n);
	if (*p == '.')
		p = digits(p + 1, &frac);
	if (!n && !frac)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p = digits(p + 1 + (p[1] == '-' || p[1] == '+'), &n);
		if (!n)
			return -1;
	}
	if (*p)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int result_parse_int64(const char *s, int64_t *out)
{
	size_t n;
	char *end;
	long long v;

	if (*digits(s + (*s == '-'), &n) || !n)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

/* Printable UTF-8: no C0 or C1 control characters (the agent turns them
 * into '?'), no overlong forms, surrogates or code points past U+10FFFF. */
static int text_valid(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i], cp, min;
		size_t n;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return 0;
		}
		if (len - i - 1 < n)
			return 0;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
			return 0;
		i += n + 1;
	}
	return 1;
}

/* A cut can split a UTF-8 sequence: drop its incomplete tail so that the
 * rest of a cut line can still be valid. */
static size_t utf8_cut_tail(const unsigned char *s, size_t len)
{
	size_t i = len, cont = 0, need;
	unsigned c;

	while (i > 0 && cont < 3 && (s[i - 1] & 0xc0) == 0x80) {
		i--;
		cont++;
	}
	if (i == 0)
		return len;
	c = s[i - 1];
	if (c < 0xc0)
		return len;
	need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
	return need > cont ? i - 1 : len;
}

void result_init(struct result *r)
{
	memset(r, 0, sizeof(*r));
	r->max_out = RESULT_MAX_OUT;
	r->max_mon = RESULT_MAX_MON;
	r->max_env = RESULT_MAX_ENV;
	r->max_warnings = RESULT_MAX_WARNINGS;
	r->max_bytes = RESULT_MAX_BYTES;
}

void result_release(struct result *r)
{
	free(r->agent_version);
	for (size_t i = 0; i < r->nr_env; i++) {
		free(r->env[i].key);
		free(r->env[i].value);
	}
	free(r->env);
	for (size_t i = 0; i < r->nr_mon; i++)
		FREE_MANY(r->mon[i].phase, r->mon[i].source, r->mon[i].name);
	free(r->mon);
	strings_free(r->warnings, r->nr_warnings);
	strings_free(r->out, r->nr_out);
	free(r->partial);
	result_init(r);
}

/* A cap of 0 is the default: a struct result that was zeroed instead of
 * result_init'ed must not silently drop everything. */
static size_t cap(size_t max, size_t def)
{
	return max ? max : def;
}

/* Room for one more record of `bytes` under its count cap and the byte
 * cap; a record that does not fit is counted in *dropped. */
static int may_store(struct result *r, size_t nr, size_t max, size_t bytes, size_t *dropped)
{
	size_t max_bytes = cap(r->max_bytes, RESULT_MAX_BYTES);

	if (nr >= max || bytes > max_bytes || r->stored_bytes > max_bytes - bytes) {
		(*dropped)++;
		return 0;
	}
	r->stored_bytes += bytes;
	return 1;
}

/* Exactly n non-empty fields separated by single spaces, split in place. */
static int split_fields(char *s, char **f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *sp;

		if (!s || !*s || *s == ' ')
			return -1;
		f[i] = s;
		sp = strchr(s, ' ');
		if (i == n - 1)
			return sp ? -1 : 0;
		if (!sp)
			return -1;
		*sp = '\0';
		s = sp + 1;
	}
	return -1;
}

/* Each record parser gets the text after "KLAB1 <type> " (NULL when the
 * type ends the line) and returns -1 when the record is bad. */

static int rec_hello(struct result *r, char *args)
{
	char *f[1];

	if (r->hello || split_fields(args, f, 1) < 0 || !result_name_valid(f[0]))
		return -1;
	r->hello = 1;
	r->agent_version = xstrdup(f[0]);
	return 0;
}

static int rec_env(struct result *r, char *args)
{
	char *key = args, *value = "", *sp;
	size_t bytes;

	if (!key)
		return -1;
	sp = strchr(key, ' ');
	if (sp) {
		*sp = '\0';
		value = sp + 1;
	}
	if (!result_name_valid(key))
		return -1;
	/* at the cap, drop before the (linear) duplicate search */
	if (r->nr_env >= cap(r->max_env, RESULT_MAX_ENV)) {
		r->dropped_env++;
		return 0;
	}
	if (result_env_get(r, key))
		return -1;
	bytes = sizeof(*r->env) + STR_COST(strlen(key)) + STR_COST(strlen(value));
	if (!may_store(r, r->nr_env, cap(r->max_env, RESULT_MAX_ENV), bytes, &r->dropped_env))
		return 0;
	ALLOC_GROW(r->env, r->nr_env + 1, r->alloc_env);
	r->env[r->nr_env].key = xstrdup(key);
	r->env[r->nr_env].value = xstrdup(value);
	r->nr_env++;
	return 0;
}

/* A record's text kept as it came (warn, out), under its cap. */
static void store_text(struct result *r, const char *args, char ***list, size_t *nr, size_t *alloc, size_t max,
		       size_t *dropped)
{
	const char *text = args ? args : "";
	size_t bytes = sizeof(char *) + STR_COST(strlen(text));

	if (!may_store(r, *nr, max, bytes, dropped))
		return;
	ALLOC_GROW(*list, *nr + 1, *alloc);
	(*list)[(*nr)++] = xstrdup(text);
}

static int rec_warn(struct result *r, char *args)
{
	store_text(r, args, &r->warnings, &r->nr_warnings, &r->alloc_warnings,
		   cap(r->max_warnings, RESULT_MAX_WARNINGS), &r->dropped_warnings);
	return 0;
}

static int phase_valid(const char *p)
{
	size_t n = 0;

	if (!strcmp(p, "before") || !strcmp(p, "after"))
		return 1;
	if (*p++ != 't')
		return 0;
	for (; result_is_digit(*p); p++)
		n++;
	return !*p && n >= 1 && n <= 10;
}

static int rec_mon(struct result *r, char *args)
{
	char *f[4];
	double v;
	size_t bytes;
	struct result_mon *m;
	const struct monitor *mon;

	if (split_fields(args, f, 4) < 0 || !phase_valid(f[0]) || !(mon = monitor_find(f[1])) ||
	    !monitor_field_valid(mon, f[2]) || result_parse_number(f[3], &v) < 0)
		return -1;
	bytes = sizeof(*r->mon) + STR_COST(strlen(f[0])) + STR_COST(strlen(f[1])) + STR_COST(strlen(f[2]));
	if (!may_store(r, r->nr_mon, cap(r->max_mon, RESULT_MAX_MON), bytes, &r->dropped_mon))
		return 0;
	ALLOC_GROW(r->mon, r->nr_mon + 1, r->alloc_mon);
	m = &r->mon[r->nr_mon++];
	m->phase = xstrdup(f[0]);
	m->source = xstrdup(f[1]);
	m->name = xstrdup(f[2]);
	m->value = v;
	return 0;
}

static int rec_start(struct result *r, char *args)
{
	char *f[1];
	int64_t ms;

	if (r->start_ms || split_fields(args, f, 1) < 0 || result_parse_int64(f[0], &ms) < 0 || ms <= 0)
		return -1;
	r->start_ms = ms;
	return 0;
}

static int rec_out(struct result *r, char *args)
{
	store_text(r, args, &r->out, &r->nr_out, &r->alloc_out, cap(r->max_out, RESULT_MAX_OUT), &r->dropped_out);
	return 0;
}

static int rec_exit(struct result *r, char *args)
{
	static const struct {
		const char *name;
		enum result_exit status;
	} statuses[] = {
		{ "exited", RESULT_EXIT_EXITED },
		{ "signaled", RESULT_EXIT_SIGNALED },
		{ "timeout", RESULT_EXIT_TIMEOUT },
		{ "exec-failed", RESULT_EXIT_EXEC_FAILED },
	};
	char *f[2];
	int64_t code;

	if (r->exit_status != RESULT_EXIT_NONE || split_fields(args, f, 2) < 0 ||
	    result_parse_int64(f[1], &code) < 0 || code < INT_MIN || code > INT_MAX)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(statuses); i++) {
		if (!strcmp(f[0], statuses[i].name)) {
			r->exit_status = statuses[i].status;
			r->exit_code = (int)code;
			return 0;
		}
	}
	return -1;
}

static int rec_done(struct result *r, char *args)
{
	char *f[1];

	if (split_fields(args, f, 1) < 0 || (strcmp(f[0], "0") && strcmp(f[0], "1")))
		return -1;
	r->done = 1;
	r->done_ok = f[0][0] == '1';
	return 0;
}

static const struct record_type {
	const char *name;
	int (*parse)(struct result *r, char *args);
	int cut_ok;		/* a cut line still says something true */
} record_types[] = {
	{ "hello", rec_hello, 0 },
	{ "env", rec_env, 1 },
	{ "warn", rec_warn, 1 },
	{ "mon", rec_mon, 0 },
	{ "start", rec_start, 0 },
	{ "out", rec_out, 1 },
	{ "exit", rec_exit, 0 },
	{ "done", rec_done, 0 },
};

/* One line, NUL at line[len] (the buffer has room), possibly with NULs
 * inside: they are junk and are found by text_valid(). */
static void parse_line(struct result *r, char *line, size_t len, int cut)
{
	const struct record_type *t = NULL;
	char *type, *args = NULL;
	size_t tlen;

	if (len < 5 || memcmp(line, "KLAB1", 5) || (len > 5 && line[5] != ' ')) {
		r->ignored_lines++;
		return;
	}
	if (cut)
		len = utf8_cut_tail((unsigned char *)line, len);
	line[len] = '\0';
	type = len > 6 ? line + 6 : line + len;
	for (tlen = 0; type + tlen < line + len && type[tlen] != ' '; tlen++)
		;
	if (type + tlen < line + len)
		args = type + tlen + 1;
	for (size_t i = 0; i < ARRAY_SIZE(record_types); i++) {
		if (strlen(record_types[i].name) == tlen && !memcmp(record_types[i].name, type, tlen)) {
			t = &record_types[i];
			break;
		}
	}

	if (r->done) {
		/* the stream is over; only a second done is worth calling forged */
		if (t && t->parse == rec_done)
			r->bad_records++;
		else
			r->ignored_lines++;
		return;
	}
	if (!text_valid((unsigned char *)line, len) || !tlen) {
		r->bad_records++;
		return;
	}
	if (!t) {
		r->ignored_lines++;
		return;
	}
	if ((cut && !t->cut_ok) || (!r->hello && t->parse != rec_hello) || t->parse(r, args) < 0)
		r->bad_records++;
}

/* The partial buffer holds RESULT_MAX_LINE + 1 bytes (a line of the
 * maximum length may still be followed by '\r') and a NUL. */
static void end_line(struct result *r)
{
	size_t len = r->partial_len;
	int cut = r->partial_overflow;

	if (!cut && len && r->partial[len - 1] == '\r')
		len--;
	if (len > RESULT_MAX_LINE) {
		len = RESULT_MAX_LINE;
		cut = 1;
	}
	if (cut)
		r->long_lines++;
	parse_line(r, r->partial, len, cut);
	r->partial_len = 0;
	r->partial_overflow = 0;
}

void result_feed(struct result *r, const char *data, size_t len)
{
	if (!r->partial)
		r->partial = xmalloc(RESULT_MAX_LINE + 2);
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;
		size_t room = RESULT_MAX_LINE + 1 - r->partial_len;

		if (n > room) {
			r->partial_overflow = 1;
			memcpy(r->partial + r->partial_len, data, room);
			r->partial_len += room;
		} else {
			memcpy(r->partial + r->partial_len, data, n);
			r->partial_len += n;
		}
		if (nl) {
			end_line(r);
			n++;
		}
		data += n;
		len -= n;
	}
}

void result_finish(struct result *r)
{
	if (r->partial && (r->partial_len || r->partial_overflow))
		end_line(r);
	free(r->partial);
	r->partial = NULL;
}

const char *result_env_get(const struct result *r, const char *key)
{
	for (size_t i = 0; i < r->nr_env; i++)
		if (!strcmp(r->env[i].key, key))
			return r->env[i].value;
	return NULL;
}

/* ---- metrics from the benchmark's output ------------------------------ */

void result_add_metric(struct result_metrics *ml, char *name, int64_t seq, double value)
{
	if (!isfinite(value) || !result_name_valid(name)) {
		free(name);
		return;
	}
	ALLOC_GROW(ml->m, ml->nr + 1, ml->alloc);
	ml->m[ml->nr].name = name;
	ml->m[ml->nr].seq = seq;
	ml->m[ml->nr].value = value;
	ml->nr++;
}

double result_metric_sum(const struct result_metrics *ml, const char *name, size_t *n)
{
	double sum = 0;

	*n = 0;
	for (size_t i = 0; i < ml->nr; i++) {
		if (!strcmp(ml->m[i].name, name)) {
			sum += ml->m[i].value;
			(*n)++;
		}
	}
	return sum;
}

size_t result_tokenize(const char *line, char **copy, char **tok)
{
	size_t n = 0;
	char *p;

	p = *copy = xstrdup(line);
	for (;;) {
		while (result_is_blank(*p))
			p++;
		if (!*p)
			return n;
		if (n == RESULT_MAX_TOKENS)
			return RESULT_MAX_TOKENS + 1;
		tok[n++] = p;
		while (*p && !result_is_blank(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

const char *result_skip_blanks(const char *p)
{
	while (result_is_blank(*p))
		p++;
	return p;
}

const char *result_key_value(const char *tok, const char *key, char sep)
{
	size_t n = strlen(key);

	return !strncmp(tok, key, n) && tok[n] == sep ? tok + n + 1 : NULL;
}

struct metric_key {
	const struct result_metric *m;
	size_t idx;
};

static int metric_key_cmp(const void *a, const void *b)
{
	const struct metric_key *x = a, *y = b;
	int c = strcmp(x->m->name, y->m->name);

	if (c)
		return c;
	if (x->m->seq != y->m->seq)
		return x->m->seq < y->m->seq ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The samples table has UNIQUE (run, metric, seq): keep the first of
 * each (name, seq), in output order. */
static void drop_duplicates(struct result_metrics *ml)
{
	struct metric_key *keys;
	unsigned char *dup;
	size_t j = 0;

	if (ml->nr < 2)
		return;
	keys = xmalloc(ml->nr * sizeof(*keys));
	dup = xcalloc(ml->nr, 1);
	for (size_t i = 0; i < ml->nr; i++) {
		keys[i].m = &ml->m[i];
		keys[i].idx = i;
	}
	qsort(keys, ml->nr, sizeof(*keys), metric_key_cmp);
	for (size_t i = 1; i < ml->nr; i++)
		if (!strcmp(keys[i].m->name, keys[i - 1].m->name) && keys[i].m->seq == keys[i - 1].m->seq)
			dup[keys[i].idx] = 1;
	for (size_t i = 0; i < ml->nr; i++) {
		if (dup[i])
			free(ml->m[i].name);
		else
			ml->m[j++] = ml->m[i];
	}
	ml->nr = j;
	free(keys);
	free(dup);
}

size_t result_parse_metrics(const char *suite, const char *testcase, char *const *lines, size_t nr_lines,
			    struct result_metric **out)
{
	struct result_metrics ml = { 0 };
	const struct suite *s = suite_find(suite);

	(void)testcase;
	*out = NULL;
	if (!s || (!lines && nr_lines))
		return 0;
	s->parse(&ml, lines, nr_lines);
	drop_duplicates(&ml);
	if (s->derive)
		s->derive(&ml);
	if (!ml.nr) {
		free(ml.m);
		return 0;
	}
	*out = ml.m;
	return ml.nr;
}

void result_metrics_free(struct result_metric *m, size_t n)
{
	if (!m)
		return;
	for (size_t i = 0; i < n; i++)
		free(m[i].name);
	free(m);
}
