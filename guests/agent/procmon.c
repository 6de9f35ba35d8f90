/* Parsers of the agent's per-CPU and per-node monitor files (procmon.h). */
#include "procmon.h"

#include <stdio.h>
#include <string.h>

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* What the host's names may hold (resultproto.c's name_char). */
static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
	       (c && strchr("_.:+()/-", c));
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* A whole token of at most 20 digits that fits; returns the end or NULL. */
static const char *parse_u64(const char *p, const char *end, unsigned long long *v)
{
	unsigned long long x = 0;
	const char *start = p;

	for (; p < end && is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (~0ULL - d) / 10)
			return NULL;
		x = x * 10 + d;
	}
	if (p == start || (p < end && !is_blank(*p)))
		return NULL;
	*v = x;
	return p;
}

/* The header "   CPU0   CPU1 ...": the CPU numbers (first PROCMON_MAX_CPUS),
 * and how many columns in all. */
static size_t parse_header(const char *p, const char *end, unsigned *cpus, size_t *nr_named)
{
	size_t n = 0;

	*nr_named = 0;
	for (p = skip_blanks(p, end); p < end; p = skip_blanks(p, end)) {
		unsigned long long id;
		if (end - p < 4 || strncmp(p, "CPU", 3) || !(p = parse_u64(p + 3, end, &id)) || id > 1u << 30)
			break;
		if (n < PROCMON_MAX_CPUS)
			cpus[(*nr_named)++] = (unsigned)id;
		n++;
	}
	return n;
}

/* Appends the text of [p, end) to name (at most PROCMON_MAX_NAME - 16 in
 * all, room for "CPU<n>."), runs of blanks as sep, other bytes a name
 * cannot hold as '_'. */
static void append_text(char *name, size_t *len, const char *p, const char *end, char sep)
{
	size_t max = PROCMON_MAX_NAME - 16;

	for (p = skip_blanks(p, end); p < end && *len < max; p++) {
		if (is_blank(*p)) {
			p = skip_blanks(p, end) - 1;
			if (p + 1 < end)
				name[(*len)++] = sep;
			continue;
		}
		name[(*len)++] = name_char(*p) ? *p : '_';
	}
	name[*len] = '\0';
}

/* One "KEY: v v v [text]" line of a per-CPU table. */
static void percpu_line(const char *p, const char *end, const unsigned *cpus, size_t nr_named, size_t nr_cols,
			int with_text, procmon_emit emit, void *ctx)
{
	/* name stays within PROCMON_MAX_NAME - 16 (append_text), so full within
	 * PROCMON_MAX_NAME: the larger buffer only quiets -Wformat-truncation */
	char name[PROCMON_MAX_NAME + 1], full[PROCMON_MAX_NAME + 32];
	unsigned long long v[PROCMON_MAX_CPUS], sum = 0;
	const char *key, *colon;
	size_t len = 0, n = 0, keylen;
	int numbered = 1, overflow = 0;

	p = skip_blanks(p, end);
	key = p;
	colon = memchr(p, ':', (size_t)(end - p));
	if (!colon || colon == key)
		return;
	keylen = (size_t)(colon - key);
	if (keylen > 32)
		return;
	for (size_t i = 0; i < keylen; i++) {
		if (!name_char(key[i]) || key[i] == ':')
			return;
		numbered &= is_digit(key[i]);
	}
	memcpy(name, key, keylen);
	len = keylen;
	name[len] = '\0';
	for (p = skip_blanks(colon + 1, end); p < end; p = skip_blanks(p, end)) {
		unsigned long long x;
		const char *q = parse_u64(p, end, &x);
		if (!q)
			break;
		if (n < PROCMON_MAX_CPUS)
			v[n] = x;
		n++;
		overflow |= sum > ~0ULL - x;
		sum += x;
		p = q;
	}
	if (!n)
		return;
	if (with_text && p < end) {
		name[len++] = ':';
		append_text(name, &len, p, end, numbered ? '.' : '_');
	}
	/* a row with another column count (ERR, MIS) is not per CPU */
	if (n == nr_cols)
		for (size_t i = 0; i < nr_named && i < n; i++) {
			snprintf(full, sizeof(full), "CPU%u.%s", cpus[i], name);
			emit(ctx, full, v[i]);
		}
	if (!overflow)
		emit(ctx, name, sum);
}

static void percpu_table(const char *text, int with_text, procmon_emit emit, void *ctx)
{
	static unsigned cpus[PROCMON_MAX_CPUS];
	size_t nr_named = 0, nr_cols = 0;
	int header = 1;

	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		if (header) {
			nr_cols = parse_header(p, end, cpus, &nr_named);
			header = 0;
			if (!nr_cols)
				return;
		} else {
			percpu_line(p, end, cpus, nr_named, nr_cols, with_text, emit, ctx);
		}
		p = *end ? end + 1 : end;
	}
}

void procmon_interrupts(const char *text, procmon_emit emit, void *ctx)
{
	percpu_table(text, 1, emit, ctx);
}

void procmon_softirqs(const char *text, procmon_emit emit, void *ctx)
{
	percpu_table(text, 0, emit, ctx);
}

void procmon_node_meminfo(const char *text, procmon_emit emit, void *ctx)
{
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n'), *q, *field;
		unsigned long long node, v;
		char name[PROCMON_MAX_NAME + 1];

		if (!end)
			end = p + strlen(p);
		q = skip_blanks(p, end);
		if (end - q > 5 && !strncmp(q, "Node ", 5) && (q = parse_u64(skip_blanks(q + 5, end), end, &node)) &&
		    node < 1u << 20) {
			size_t flen = 0;

			field = q = skip_blanks(q, end);
			while (q + flen < end && flen < 64 && q[flen] != ':' && name_char(q[flen]))
				flen++;
			if (q + flen < end && q[flen] == ':' && flen &&
			    (q = parse_u64(skip_blanks(q + flen + 1, end), end, &v))) {
				snprintf(name, sizeof(name), "node%llu.%.*s", node, (int)flen, field);
				emit(ctx, name, v);
			}
		}
		p = *end ? end + 1 : end;
	}
}

void procmon_node_vmstat(const char *text, unsigned node, procmon_emit emit, void *ctx)
{
	for (const char *p = text; *p;) {
		const char *end = strchr(p, '\n'), *q;
		unsigned long long v;
		char name[PROCMON_MAX_NAME + 1];
		size_t flen = 0;

		if (!end)
			end = p + strlen(p);
		q = skip_blanks(p, end);
		while (q + flen < end && flen < 64 && name_char(q[flen]) && q[flen] != ' ')
			flen++;
		if (flen && q + flen < end && q[flen] == ' ' && parse_u64(skip_blanks(q + flen, end), end, &v)) {
			snprintf(name, sizeof(name), "node%u.%.*s", node, (int)flen, q);
			emit(ctx, name, v);
		}
		p = *end ? end + 1 : end;
	}
}
