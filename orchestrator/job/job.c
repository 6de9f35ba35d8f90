/* Job files: YAML (libyaml events, loaded into a small bounded tree) into
 * a checked struct job, every error naming file:line; and the guest
 * agent's job.conf (docs/guest-protocol.md) made from a job.  What
 * differs between suites (testcases, params, defaults, argv) is asked of
 * the suite registry (suite.h). */
#include "job/job.h"
#include "util/hash.h"
#include "job/suite.h"
#include "job/monitor.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#define JOB_MAX_SIZE (64 << 10)
/* a job is two levels deep (guest: {vcpus: 2}); more is a mistake */
#define JOB_MAX_DEPTH 4
#define JOB_MAX_NODES 2048
#define JOB_MAX_TEXT 1024

#define MAX_TASKS 4096
/* hackbench's LKP jobs run 1600% of the CPUs' groups */
#define MAX_PERCENT 6400
#define MAX_RUNTIME_S 86400
#define MAX_MONITOR_S 3600
#define MAX_SWAP_MB (64 * 1024)
#define MAX_DISK_MB (1024 * 1024)
/* job->monitors when the job does not choose, and `all`: the cheap ones
 * (perf-profile only when named) */
#define JOB_MONITORS_DEFAULT monitor_default_set()
#define MIN_MEMORY_MB 128
#define MAX_MEMORY_MB (1024 * 1024)
#define TIMEOUT_MARGIN_S 60

#define THP_DIR "kernel/mm/transparent_hugepage/"

static const char *const thp_enabled_values[] = { "always", "madvise", "never" };
static const char *const thp_defrag_values[] = { "always", "defer", "defer+madvise", "madvise", "never" };

/* ---- the YAML tree -------------------------------------------------------- */

enum node_type { NODE_SCALAR, NODE_MAP, NODE_SEQ };

struct node {
	enum node_type type;
	int line;		/* 1-based */
	char *text;		/* scalar */
	int is_null;		/* plain empty, ~ or null */
	struct node **kids;	/* map: key, value, key, value, ...; seq: items */
	size_t nr, alloc;
};

enum top_key {
	K_SUITE, K_TESTCASE, K_MODE, K_NR_TASK, K_NR_THREADS, K_RUNTIME, K_SIZE, K_FS, K_KPI, K_DIRECTION,
	K_REPEAT, K_CONFIRM_SHARE, K_PROFILE_RUNS, K_MAX_RUNS, K_REVERT_CHECK, K_SYSCTL, K_THP, K_ASLR, K_DROP_CACHES, K_MONITOR_INTERVAL, K_MONITORS, K_GUEST, K_KCONFIG,
	K_PARAMS, NR_TOP_KEYS
};

struct parser {
	const char *path;
	const char *buf;
	size_t len;
	yaml_parser_t yaml;
	size_t nr_nodes;
	struct job *job;
	int top_line;
	int key_line[NR_TOP_KEYS];	/* 0 = not given */
	const struct node *mode;	/* mode: as written, judged once the suite is known */
	int disk_line;			/* guest.disk's line, 0 = not given */
	int *sysctl_line, *param_line;
	size_t alloc_sysctl, alloc_params, alloc_fragments, alloc_sysctl_line, alloc_param_line;
};

static void node_free(struct node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nr; i++)
		node_free(n->kids[i]);
	FREE_MANY(n->kids, n->text, n);
}

static int line_of_offset(const struct parser *p, size_t off)
{
	int line = 1;

	for (size_t i = 0; i < off && i < p->len; i++)
		if (p->buf[i] == '\n')
			line++;
	return line;
}

/* libyaml's error channel, wrapped once */
static int yaml_failed(struct parser *p)
{
	const yaml_parser_t *y = &p->yaml;
	const char *problem = y->problem ? y->problem : "malformed YAML";
	int line;

	if (y->error == YAML_MEMORY_ERROR)
		die("out of memory parsing '%s'", p->path);
	if (y->error == YAML_READER_ERROR) {
		line = line_of_offset(p, y->problem_offset);
		if (y->problem_value > 0xff)
			return error("%s:%d: not a valid job file: %s (U+%04X)", p->path, line, problem,
				     (unsigned)y->problem_value);
		if (y->problem_value >= 0)
			return error("%s:%d: not a valid job file: %s (byte 0x%02x)", p->path, line, problem,
				     (unsigned)y->problem_value);
		return error("%s:%d: not a valid job file: %s", p->path, line, problem);
	}
	line = (int)y->problem_mark.line + 1;
	if (y->context)
		return error("%s:%d: YAML syntax error: %s (%s at line %d)", p->path, line, problem, y->context,
			     (int)y->context_mark.line + 1);
	return error("%s:%d: YAML syntax error: %s", p->path, line, problem);
}

static int next_event(struct parser *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&p->yaml, ev))
		return yaml_failed(p);
	return 0;
}

static const char *type_name(enum node_type t)
{
	return t == NODE_MAP ? "a map" : t == NODE_SEQ ? "a list" : "text";
}

static int load_node(struct parser *p, const yaml_event_t *ev, int depth, const char *where, struct node **out);

static int load_scalar(struct parser *p, const yaml_event_t *ev, const char *where, struct node *n)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;

	if (len > JOB_MAX_TEXT)
		return error("%s:%d: %s: text longer than %d characters", p->path, n->line, where, JOB_MAX_TEXT);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		/* a quoted "\n" or "\0" escape, a literal block, a tab */
		if (c < 0x20 || c == 0x7f)
			return error("%s:%d: %s: control character (newline, tab, NUL, ...) in text; job values are one line",
				     p->path, n->line, where);
	}
	n->text = xstrndup(s, len);
	n->is_null = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		     (!len || !strcmp(n->text, "~") || !strcmp(n->text, "null") || !strcmp(n->text, "Null") ||
		      !strcmp(n->text, "NULL"));
	return 0;
}

static void add_kid(struct node *n, struct node *kid)
{
	ALLOC_GROW(n->kids, n->nr + 1, n->alloc);
	n->kids[n->nr++] = kid;
}

/* The items of a sequence or the pairs of a map, up to its end event. */
static int load_children(struct parser *p, struct node *n, int depth, const char *where)
{
	for (;;) {
		yaml_event_t ev;
		struct node *kid = NULL;
		const char *kid_where = where;
		char *path = NULL;
		int rc;

		if (next_event(p, &ev) < 0)
			return -1;
		if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			return 0;
		}
		/* a value is named by its keys: guest.memory, params.vm-bytes */
		if (n->type == NODE_MAP && n->nr % 2) {
			const char *key = n->kids[n->nr - 1]->text;
			kid_where = depth == 1 ? key : (path = xstrfmt("%s.%s", where, key));
		} else if (n->type == NODE_MAP) {
			kid_where = depth == 1 ? "key" : (path = xstrfmt("%s key", where));
		}
		rc = load_node(p, &ev, depth + 1, kid_where, &kid);
		yaml_event_delete(&ev);
		free(path);
		if (rc < 0)
			return -1;
		if (n->type == NODE_MAP && n->nr % 2 == 0) {
			if (kid->type != NODE_SCALAR) {
				error("%s:%d: keys must be text, got %s", p->path, kid->line, type_name(kid->type));
				node_free(kid);
				return -1;
			}
			for (size_t i = 0; i < n->nr; i += 2) {
				if (!strcmp(n->kids[i]->text, kid->text)) {
					error("%s:%d: duplicate key '%s' (first at line %d)", p->path, kid->line,
					      kid->text, n->kids[i]->line);
					node_free(kid);
					return -1;
				}
			}
		}
		add_kid(n, kid);
	}
}

static int load_node(struct parser *p, const yaml_event_t *ev, int depth, const char *where, struct node **out)
{
	struct node *n;
	int line = (int)ev->start_mark.line + 1;

	*out = NULL;
	if (ev->type == YAML_ALIAS_EVENT)
		/* a few bytes of aliases can stand for gigabytes of nodes */
		return error("%s:%d: %s: YAML aliases (*%.40s) are not allowed in job files", p->path, line, where,
			     (const char *)ev->data.alias.anchor);
	if (ev->type != YAML_SCALAR_EVENT && ev->type != YAML_SEQUENCE_START_EVENT &&
	    ev->type != YAML_MAPPING_START_EVENT)
		return error("%s:%d: %s: unexpected YAML structure", p->path, line, where);
	if (depth > JOB_MAX_DEPTH)
		return error("%s:%d: %s: nested deeper than a job file can be", p->path, line, where);
	if (++p->nr_nodes > JOB_MAX_NODES)
		return error("%s:%d: more than %d YAML nodes; not a job file", p->path, line, JOB_MAX_NODES);

	n = xcalloc(1, sizeof(*n));
	n->line = line;
	if (ev->type == YAML_SCALAR_EVENT) {
		n->type = NODE_SCALAR;
		if (load_scalar(p, ev, where, n) < 0)
			goto fail;
	} else {
		n->type = ev->type == YAML_MAPPING_START_EVENT ? NODE_MAP : NODE_SEQ;
		if (load_children(p, n, depth, where) < 0)
			goto fail;
	}
	*out = n;
	return 0;
fail:
	node_free(n);
	return -1;
}

/* One document holding one node; NULL document is an error here. */
static int load_document(struct parser *p, struct node **root)
{
	yaml_event_t ev;
	int rc;

	*root = NULL;
	if (next_event(p, &ev) < 0)
		return -1;
	yaml_event_delete(&ev);	/* stream start */
	if (next_event(p, &ev) < 0)
		return -1;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		return error("%s:1: empty job file: expected keys such as 'suite:' and 'testcase:'", p->path);
	}
	yaml_event_delete(&ev);	/* document start */
	if (next_event(p, &ev) < 0)
		return -1;
	rc = load_node(p, &ev, 1, "job", root);
	yaml_event_delete(&ev);
	if (rc < 0)
		return -1;
	if (next_event(p, &ev) < 0)
		goto fail;
	yaml_event_delete(&ev);	/* document end */
	if (next_event(p, &ev) < 0)
		goto fail;
	if (ev.type != YAML_STREAM_END_EVENT) {
		error("%s:%d: a job file holds one YAML document; a second one starts here", p->path,
		      (int)ev.start_mark.line + 1);
		yaml_event_delete(&ev);
		goto fail;
	}
	yaml_event_delete(&ev);
	return 0;
fail:
	node_free(*root);
	*root = NULL;
	return -1;
}

/* ---- values ---------------------------------------------------------------- */

/* What a value looked like, for "got ..." (quoted, cut, printable). */
static const char *shown(const struct node *v, char *buf, size_t size)
{
	size_t i, n = 0, max = 60;

	if (v->type != NODE_SCALAR)
		return type_name(v->type);
	if (v->is_null)
		return "nothing";
	buf[n++] = '\'';
	for (i = 0; v->text[i] && i < max && n + 5 < size; i++) {
		unsigned char c = (unsigned char)v->text[i];
		buf[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (v->text[i]) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n++] = '\'';
	buf[n] = '\0';
	return buf;
}

static int expected(const struct parser *p, const struct node *v, const char *what, const char *expect)
{
	char b[80];

	return error("%s:%d: %s: expected %s, got %s", p->path, v->line, what, expect, shown(v, b, sizeof(b)));
}

static const char *scalar(const struct node *v)
{
	return v->type == NODE_SCALAR && !v->is_null ? v->text : NULL;
}

static int one_of(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return (int)i;
	return -1;
}

static void join(struct strbuf *sb, const char *const *list, size_t n, const char *last_sep)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, i + 1 == n ? last_sep : ", ");
		strbuf_addstr(sb, list[i]);
	}
}

/* A value that must be one of a list: the message names them all. */
static int pick(const struct parser *p, const struct node *v, const char *what, const char *const *list,
		size_t n, int *out)
{
	const char *s = scalar(v);
	struct strbuf sb = STRBUF_INIT;
	int i = s ? one_of(s, list, n) : -1;

	if (i >= 0) {
		*out = i;
		return 0;
	}
	strbuf_addstr(&sb, "one of ");
	join(&sb, list, n, " or ");
	expected(p, v, what, sb.buf);
	strbuf_release(&sb);
	return -1;
}

/* Decimal digits into *out; the rest of s in *end.  -1 without digits or
 * on overflow. */
static int parse_digits(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	const char *q = s;

	for (; *q >= '0' && *q <= '9'; q++) {
		if (v > (UINT64_MAX - (uint64_t)(*q - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	if (q == s)
		return -1;
	*end = q;
	*out = v;
	return 0;
}

static int parse_number(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *end;

	if (!s || parse_digits(s, &end, out) < 0 || *end || *out < min || *out > max)
		return -1;
	return 0;
}

/* "20s", "5m", "1h" or plain seconds. */
int job_parse_duration(const char *s, uint64_t min, uint64_t max, unsigned *out)
{
	const char *end;
	uint64_t v, mult = 1;

	if (!s || parse_digits(s, &end, &v) < 0)
		return -1;
	if (!strcmp(end, "m"))
		mult = 60;
	else if (!strcmp(end, "h"))
		mult = 3600;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (v > max / mult || v * mult < min)
		return -1;
	*out = (unsigned)(v * mult);
	return 0;
}

/* "4" or "50%" (of the guest's vCPUs). */
static int parse_count(const char *s, struct job_count *c)
{
	const char *end;
	uint64_t v;

	if (!s || parse_digits(s, &end, &v) < 0)
		return -1;
	if (!strcmp(end, "%")) {
		if (v < 1 || v > MAX_PERCENT)
			return -1;
		c->is_percent = 1;
	} else {
		if (*end || v < 1 || v > MAX_TASKS)
			return -1;
		c->is_percent = 0;
	}
	c->value = (unsigned)v;
	return 0;
}

/* Guest memory: "2G", "512M", "1T" or plain MiB. */
static int parse_memory_mb(const char *s, uint64_t *mb)
{
	const char *end;
	uint64_t v, mult = 1;

	if (!s || parse_digits(s, &end, &v) < 0)
		return -1;
	if (!strcasecmp(end, "g"))
		mult = 1024;
	else if (!strcasecmp(end, "t"))
		mult = 1024 * 1024;
	else if (*end && strcasecmp(end, "m"))
		return -1;
	if (v > MAX_MEMORY_MB / mult || v * mult < MIN_MEMORY_MB)
		return -1;
	*mb = v * mult;
	return 0;
}

int job_parse_share(const char *s, unsigned *pct)
{
	const char *end;
	uint64_t v;

	if (!s || parse_digits(s, &end, &v) < 0 || strcmp(end, "%") || v < 1 || v > 100)
		return -1;
	*pct = (unsigned)v;
	return 0;
}

/* usemem sizes: bytes, or with a k/m/g/t suffix (powers of 1024). */
int job_parse_bytes(const char *s, uint64_t *bytes)
{
	const char *end;
	uint64_t v, mult = 1;
	static const uint64_t max = (uint64_t)1 << 40;

	if (!s || parse_digits(s, &end, &v) < 0)
		return -1;
	if (*end) {
		const char *units = "kmgt";
		const char *u = end[1] ? NULL : strchr(units, end[0] | 0x20);
		if (!u)
			return -1;
		mult = (uint64_t)1 << (10 * (u - units + 1));
	}
	if (!v || v > max / mult)
		return -1;
	*bytes = v * mult;
	return 0;
}

static int is_printable_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

static int only_chars(const char *s, const char *set)
{
	return *s && strspn(s, set) == strlen(s);
}

#define LOWER_DIGITS "abcdefghijklmnopqrstuvwxyz0123456789"
#define ALNUM "ABCDEFGHIJKLMNOPQRSTUVWXYZ" LOWER_DIGITS

/* ---- sysctl and sysfs ------------------------------------------------------- */

int job_sysctl_is_sysfs(const char *key)
{
	return !strncmp(key, "kernel/mm/", 10);
}

/* The file a setting writes, for finding a setting given twice. */
static char *setting_file(const char *key)
{
	char *f;

	if (job_sysctl_is_sysfs(key))
		return xstrfmt("/sys/%s", key);
	f = xstrfmt("/proc/sys/%s", key);
	/* as the agent does: a key with a '/' is a path already (its dots
	 * are part of names, like eth0.100) */
	if (!strchr(key, '/'))
		for (char *c = f + 10; *c; c++)
			if (*c == '.')
				*c = '/';
	return f;
}

/* NULL when fine, else what is wrong with the key. */
static const char *bad_setting_key(const char *k)
{
	size_t n = strlen(k);

	if (!n || n > 200 || !only_chars(k, ALNUM "_./-"))
		return "characters other than A-Z a-z 0-9 _ . / -";
	if (strstr(k, "..") || strstr(k, "//") || strstr(k, "/.") || strstr(k, "./") || k[0] == '.' ||
	    k[0] == '/' || k[0] == '-' || k[n - 1] == '.' || k[n - 1] == '/')
		return "an empty, '.' or '..' path component";
	if (!strchr(k, '.') && !strchr(k, '/'))
		return "a single name (a sysctl is dir.name or dir/name)";
	return NULL;
}

static int add_setting(struct parser *p, const char *what, const char *key, const struct node *v, int line)
{
	struct job *job = p->job;
	const char *val = scalar(v);
	char *file;

	if (!val || !*val || !is_printable_ascii(val))
		return expected(p, v, what, "a value (printable text on one line)");
	file = setting_file(key);
	if (!strcmp(file, "/sys/" THP_DIR "enabled") || !strcmp(file, "/sys/" THP_DIR "defrag")) {
		int is_enabled = !strcmp(file, "/sys/" THP_DIR "enabled"), i;
		int rc = is_enabled ? pick(p, v, what, thp_enabled_values, ARRAY_SIZE(thp_enabled_values), &i)
				    : pick(p, v, what, thp_defrag_values, ARRAY_SIZE(thp_defrag_values), &i);
		if (rc < 0) {
			free(file);
			return -1;
		}
	}
	for (size_t i = 0; i < job->nr_sysctl; i++) {
		char *other = setting_file(job->sysctl[i].key);
		int same = !strcmp(other, file);

		free(other);
		if (same) {
			free(file);
			return error("%s:%d: %s: %s is already set at line %d", p->path, line, what,
				     job_sysctl_is_sysfs(key) ? "this sysfs file" : "this sysctl", p->sysctl_line[i]);
		}
	}
	free(file);
	ALLOC_GROW(job->sysctl, job->nr_sysctl + 1, p->alloc_sysctl);
	ALLOC_GROW(p->sysctl_line, job->nr_sysctl + 1, p->alloc_sysctl_line);
	job->sysctl[job->nr_sysctl].key = xstrdup(key);
	job->sysctl[job->nr_sysctl].value = xstrdup(val);
	p->sysctl_line[job->nr_sysctl] = line;
	job->nr_sysctl++;
	return 0;
}

/* ---- the keys ---------------------------------------------------------------- */

typedef int (*key_fn)(struct parser *p, const struct node *k, const struct node *v);

static int need_map(const struct parser *p, const struct node *v, const char *what, const char *example)
{
	if (v->type == NODE_MAP)
		return 0;
	return expected(p, v, what, example);
}

static int key_suite(struct parser *p, const struct node *k, const struct node *v)
{
	const char *s = scalar(v);
	const struct suite *suite = s ? suite_find(s) : NULL;
	struct strbuf sb = STRBUF_INIT;

	(void)k;
	if (suite) {
		p->job->suite = xstrdup(suite->name);
		return 0;
	}
	/* an LKP suite klab does not run: why, not the list */
	if (s && suite_not_run(s))
		return error("%s:%d: suite: klab does not run %s: %s", p->path, v->line, s, suite_not_run(s));
	strbuf_addstr(&sb, "one of ");
	suite_names(&sb, 0, " or ");
	expected(p, v, "suite", sb.buf);
	strbuf_release(&sb);
	return -1;
}

static int key_testcase(struct parser *p, const struct node *k, const struct node *v)
{
	const char *s = scalar(v);

	(void)k;
	if (!s || strlen(s) > 64 || !only_chars(s, ALNUM "_-"))
		return expected(p, v, "testcase", "a test name such as mmapaddr or malloc1");
	p->job->testcase = xstrdup(s);
	return 0;
}

/* Its values are the suite's (check_job): the key may come first. */
static int key_mode(struct parser *p, const struct node *k, const struct node *v)
{
	(void)k;
	p->mode = v;
	return 0;
}

static int key_fs(struct parser *p, const struct node *k, const struct node *v)
{
	static const char *const fs[] = { "xfs", "ext4", "btrfs" };
	int i;

	(void)k;
	if (pick(p, v, "fs", fs, ARRAY_SIZE(fs), &i) < 0)
		return -1;
	free(p->job->fs);
	p->job->fs = xstrdup(fs[i]);
	return 0;
}

static int count_key(struct parser *p, const struct node *v, const char *what, struct job_count *c)
{
	if (parse_count(scalar(v), c) < 0)
		return expected(p, v, what, "a count from 1 to 4096 or a share of the vCPUs like 50% (1% to 6400%)");
	return 0;
}

static int key_nr_task(struct parser *p, const struct node *k, const struct node *v)
{
	(void)k;
	return count_key(p, v, "nr_task", &p->job->nr_task);
}

static int key_nr_threads(struct parser *p, const struct node *k, const struct node *v)
{
	(void)k;
	return count_key(p, v, "nr_threads", &p->job->nr_threads);
}

static int key_runtime(struct parser *p, const struct node *k, const struct node *v)
{
	(void)k;
	if (job_parse_duration(scalar(v), 1, MAX_RUNTIME_S, &p->job->runtime_s) < 0)
		return expected(p, v, "runtime", "a duration like 20s, 5m or 30 (1s to 24h)");
	return 0;
}

static int key_size(struct parser *p, const struct node *k, const struct node *v)
{
	uint64_t bytes;
	unsigned pct;

	(void)k;
	if (job_parse_bytes(scalar(v), &bytes) < 0 && job_parse_share(scalar(v), &pct) < 0)
		return expected(p, v, "size",
				"a size per task like 256m, 1g or 4096 (bytes; k/m/g/t suffixes, at most 1t), "
				"or a share of the guest's memory plus swap for all tasks, like 75%");
	p->job->size = xstrdup(v->text);
	return 0;
}

int check_kpi(const struct job *job, const char *kpi, struct strbuf *why)
{
	struct strbuf list = STRBUF_INIT, *produces = &list;
	const struct suite *suite;
	const char *prefix;
	size_t n;

	/* the names result records may carry (resultproto.h) */
	if (!kpi || strlen(kpi) > 128 || !only_chars(kpi, ALNUM "_.:+()/-") || !strchr(kpi, '.')) {
		if (why)
			strbuf_addstr(why, "a metric name like will-it-scale.per_process_ops");
		return -1;
	}
	if (!job || !job->suite)
		return 0;
	suite = suite_find(job->suite);
	prefix = suite ? suite_prefix(suite) : job->suite;
	n = strlen(prefix);
	if (strncmp(kpi, prefix, n) || kpi[n] != '.' || !kpi[n + 1]) {
		if (why)
			strbuf_addf(why, "a %s job's metrics are named %s.<metric> (default %s)", job->suite, prefix,
				    job->default_kpi ? job->default_kpi : "?");
		return -1;
	}
	if (suite && job->testcase && job->mode && !suite_produces(suite, job, kpi, produces)) {
		if (why)
			strbuf_addf(why, "this %s job (testcase %s%s%s) never produces it; it produces %s", job->suite,
				    job->testcase, suite->modes ? ", mode " : "", suite->modes ? job->mode : "",
				    produces->buf);
		strbuf_release(produces);
		return -1;
	}
	strbuf_release(produces);
	return 0;
}

static int key_kpi(struct parser *p, const struct node *k, const struct node *v)
{
	const char *s = scalar(v);

	(void)k;
	if (check_kpi(NULL, s, NULL) < 0)
		return expected(p, v, "kpi", "a metric name like will-it-scale.per_process_ops");
	p->job->kpi = xstrdup(s);
	return 0;
}

static int key_direction(struct parser *p, const struct node *k, const struct node *v)
{
	const char *s = scalar(v);

	(void)k;
	if (s && (!strcmp(s, "1") || !strcmp(s, "+1") || !strcmp(s, "higher")))
		p->job->direction = 1;
	else if (s && (!strcmp(s, "-1") || !strcmp(s, "lower")))
		p->job->direction = -1;
	else
		return expected(p, v, "direction", "1 (higher is better), -1 (lower is better), higher or lower");
	return 0;
}

/* key_<name>: a number from min to max into the job's field of the same
 * name, else expected(what). */
#define NUMBER_KEY(name, type, min, max, what)                                        \
	static int key_##name(struct parser *p, const struct node *k, const struct node *v) \
	{                                                                             \
		uint64_t n;                                                           \
                                                                                      \
		(void)k;                                                              \
		if (parse_number(scalar(v), (min), (max), &n) < 0)                    \
			return expected(p, v, #name, what);                           \
		p->job->name = (type)n;                                               \
		return 0;                                                             \
	}

NUMBER_KEY(repeat, unsigned, 1, 100, "a number of runs from 1 to 100")
NUMBER_KEY(profile_runs, unsigned, 0, 10, "a number of profiled runs from 0 (none) to 10")
NUMBER_KEY(max_runs, unsigned, 3, 1000, "the most runs of one commit, from 3 to 1000 (default 12)")

static int key_revert_check(struct parser *p, const struct node *k, const struct node *v)
{
	const char *s = scalar(v);

	(void)k;
	if (s && (!strcmp(s, "yes") || !strcmp(s, "true")))
		p->job->revert_check = 1;
	else if (s && (!strcmp(s, "no") || !strcmp(s, "false")))
		p->job->revert_check = 0;
	else
		return expected(p, v, "revert_check", "yes or no (default yes)");
	return 0;
}

static int key_confirm_share(struct parser *p, const struct node *k, const struct node *v)
{
	const char *s = scalar(v);
	char *end = NULL;
	double x = s ? strtod(s, &end) : NAN;

	(void)k;
	if (!s || !*s || end == s || *end || !(x > 0 && x <= 1))
		return expected(p, v, "confirm_share", "a share of the regression above 0 and at most 1, like 0.5");
	p->job->confirm_share = x;
	return 0;
}

static int key_sysctl(struct parser *p, const struct node *k, const struct node *v)
{
	(void)k;
	if (need_map(p, v, "sysctl", "a map like { vm.swappiness: 10 }") < 0)
		return -1;
	for (size_t i = 0; i < v->nr; i += 2) {
		const struct node *sk = v->kids[i];
		const char *why = bad_setting_key(sk->text);
		char b[80];
		char *what;
		int rc;

		if (why)
			return error("%s:%d: sysctl: expected a key like vm.swappiness or %senabled, got %s: %s",
				     p->path, sk->line, THP_DIR, shown(sk, b, sizeof(b)), why);
		what = xstrfmt("sysctl %s", sk->text);
		rc = add_setting(p, what, sk->text, v->kids[i + 1], sk->line);
		free(what);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int key_thp(struct parser *p, const struct node *k, const struct node *v)
{
	static const char *const keys[] = { "enabled", "defrag" };

	(void)k;
	if (need_map(p, v, "thp", "a map like { enabled: always, defrag: madvise }") < 0)
		return -1;
	for (size_t i = 0; i < v->nr; i += 2) {
		const struct node *tk = v->kids[i];
		char *what, *key;
		int rc;

		if (one_of(tk->text, keys, ARRAY_SIZE(keys)) < 0) {
			char b[80];
			return error("%s:%d: thp: unknown key %s (known: enabled, defrag)", p->path, tk->line,
				     shown(tk, b, sizeof(b)));
		}
		what = xstrfmt("thp.%s", tk->text);
		key = xstrfmt(THP_DIR "%s", tk->text);
		rc = add_setting(p, what, key, v->kids[i + 1], tk->line);
		free(what);
		free(key);
		if (rc < 0)
			return -1;
	}
	return 0;
}

NUMBER_KEY(aslr, int, 0, 2, "0, 1 or 2 (kernel.randomize_va_space)")
NUMBER_KEY(drop_caches, int, 0, 3, "0, 1, 2 or 3 (vm.drop_caches before the run)")

static int key_monitor_interval(struct parser *p, const struct node *k, const struct node *v)
{
	(void)k;
	if (job_parse_duration(scalar(v), 0, MAX_MONITOR_S, &p->job->monitor_interval_s) < 0)
		return expected(p, v, "monitor_interval", "a duration like 1s or 0 (before/after only), at most 1h");
	return 0;
}

/* The monitors' names, for messages: "vmstat, meminfo, ..., perf-profile". */
static void monitor_names(struct strbuf *sb)
{
	for (size_t i = 0; i < monitor_count(); i++)
		strbuf_addf(sb, "%s%s", i ? ", " : "", monitor_at(i)->name);
}

/* One monitor's name into the job's set: 0, or -1 after error(). */
static int add_monitor(struct parser *p, const char *name, int line, const struct strbuf *names)
{
	int idx = monitor_index(name);

	if (idx < 0)
		return error("%s:%d: monitors: '%s' is not a monitor (klab has %s)", p->path, line,
			     name && result_name_valid(name) ? name : "?", names->buf);
	p->job->monitors |= 1u << idx;
	return 0;
}

/* Those outside the default set, for messages: " (all is every one but perf-profile)". */
static void monitor_not_default(struct strbuf *sb)
{
	unsigned def = monitor_default_set();
	size_t n = 0;

	for (size_t i = 0; i < monitor_count(); i++)
		if (!(def & (1u << i)))
			strbuf_addf(sb, "%s%s", n++ ? ", " : " (all is every one but ", monitor_at(i)->name);
	if (n)
		strbuf_addch(sb, ')');
}

/* monitors: all | none | [ vmstat, meminfo, ... ] | vmstat,meminfo |
 * all+perf-profile (the last two for --set monitors=...) */
static int key_monitors(struct parser *p, const struct node *k, const struct node *v)
{
	struct strbuf names = STRBUF_INIT;
	const char *s = scalar(v);
	int ret = -1;

	(void)k;
	monitor_names(&names);
	p->job->monitors = 0;
	if (s && (!strcmp(s, "all") || !strcmp(s, "none"))) {
		p->job->monitors = !strcmp(s, "all") ? JOB_MONITORS_DEFAULT : 0;
		ret = 0;
	} else if (s && *s) {
		char *copy = xstrdup(s), *save = NULL;

		ret = 0;
		/* ',' in a file, '+' on the command line (--set splits at ',');
		 * "all" there is the default set: all+perf-profile */
		for (char *t = strtok_r(copy, ",+", &save); t && !ret; t = strtok_r(NULL, ",+", &save)) {
			if (!strcmp(t, "all"))
				p->job->monitors |= JOB_MONITORS_DEFAULT;
			else
				ret = add_monitor(p, t, v->line, &names);
		}
		free(copy);
	} else if (v->type == NODE_SEQ) {
		ret = 0;
		for (size_t i = 0; i < v->nr && !ret; i++)
			ret = add_monitor(p, scalar(v->kids[i]), v->kids[i]->line, &names);
	} else {
		monitor_not_default(&names);
		error("%s:%d: monitors: expected all, none or a list of %s", p->path, v->line, names.buf);
	}
	strbuf_release(&names);
	return ret;
}

static int key_guest(struct parser *p, const struct node *k, const struct node *v)
{
	static const char *const keys[] = { "vcpus", "numa_nodes", "memory", "hugepages", "swap", "disk" };
	static const char *const hugepages[] = { "none", "2M", "1G" };
	struct job_guest *g = &p->job->guest;
	int line[ARRAY_SIZE(keys)] = { 0 };
	uint64_t page_mb;

	if (need_map(p, v, "guest", "a map like { vcpus: 2, numa_nodes: 2, memory: 2G, hugepages: none }") < 0)
		return -1;
	for (size_t i = 0; i < v->nr; i += 2) {
		const struct node *gk = v->kids[i], *gv = v->kids[i + 1];
		int which = one_of(gk->text, keys, ARRAY_SIZE(keys));
		uint64_t n;

		if (which < 0) {
			char b[80];
			return error("%s:%d: guest: unknown key %s (known: vcpus, numa_nodes, memory, hugepages, swap, disk)",
				     p->path, gk->line, shown(gk, b, sizeof(b)));
		}
		line[which] = gv->line;
		switch (which) {
		case 0:
			if (parse_number(scalar(gv), 1, 256, &n) < 0)
				return expected(p, gv, "guest.vcpus", "a number of vCPUs from 1 to 256");
			g->vcpus = (unsigned)n;
			break;
		case 1:
			if (parse_number(scalar(gv), 1, 256, &n) < 0)
				return expected(p, gv, "guest.numa_nodes", "a number of NUMA nodes from 1 to the vCPUs");
			g->numa_nodes = (unsigned)n;
			break;
		case 2:
			if (parse_memory_mb(scalar(gv), &g->memory_mb) < 0)
				return expected(p, gv, "guest.memory",
						"a size like 2G, 512M or 4096 (MiB), from 128M to 1T");
			break;
		case 3: {
			const char *s = scalar(gv);
			int h = -1;
			for (size_t j = 0; s && j < ARRAY_SIZE(hugepages); j++)
				if (!strcasecmp(s, hugepages[j]))
					h = (int)j;
			if (h < 0)
				return expected(p, gv, "guest.hugepages", "none, 2M or 1G");
			g->hugepages = h == 0 ? JOB_HUGEPAGES_NONE : h == 1 ? JOB_HUGEPAGES_2M : JOB_HUGEPAGES_1G;
			break;
		}
		case 4:
			if (scalar(gv) && !strcasecmp(scalar(gv), "none")) {
				g->swap_mb = 0;
				break;
			}
			if (parse_memory_mb(scalar(gv), &g->swap_mb) < 0 || g->swap_mb > MAX_SWAP_MB)
				return expected(p, gv, "guest.swap",
						"none or a size like 1G or 512M (MiB), from 128M to 64G: a swap disk");
			break;
		case 5:
			if (parse_memory_mb(scalar(gv), &g->disk_mb) < 0 || g->disk_mb > MAX_DISK_MB)
				return expected(p, gv, "guest.disk",
						"a size like 4G or 512M (MiB), from 128M to 1T: the scratch disk fs: is made on");
			p->disk_line = gv->line;
			break;
		}
	}
	if (g->numa_nodes > g->vcpus)
		return error("%s:%d: guest.numa_nodes: %u NUMA nodes need at least as many vCPUs (guest.vcpus is %u)",
			     p->path, line[1] ? line[1] : line[0] ? line[0] : k->line, g->numa_nodes, g->vcpus);
	/* every node gets whole host pages and a usable amount of memory */
	page_mb = g->hugepages == JOB_HUGEPAGES_1G ? 1024 : g->hugepages == JOB_HUGEPAGES_2M ? 2 : 1;
	if (g->memory_mb % ((uint64_t)g->numa_nodes * page_mb) || g->memory_mb / g->numa_nodes < 64)
		return error("%s:%d: guest.memory: %lluM cannot be split into %u NUMA node%s of whole %s pages (at least 64M each)",
			     p->path, line[2] ? line[2] : line[1] ? line[1] : k->line,
			     (unsigned long long)g->memory_mb, g->numa_nodes, g->numa_nodes == 1 ? "" : "s",
			     page_mb == 1024 ? "1G" : page_mb == 2 ? "2M" : "1M");
	return 0;
}

/* The directory fragment paths are relative to. */
static char *job_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

static int key_kconfig(struct parser *p, const struct node *k, const struct node *v)
{
	struct job *job = p->job;
	char *dir;
	int ret = -1;

	(void)k;
	if (v->type != NODE_SEQ)
		return expected(p, v, "kconfig", "a list of config fragment files like [ debug.config ]");
	dir = job_dir(p->path);
	for (size_t i = 0; i < v->nr; i++) {
		const struct node *f = v->kids[i];
		const char *s = scalar(f);
		struct stat st;
		char *full, *real;

		if (!s) {
			expected(p, f, "kconfig", "a path to a config fragment");
			goto out;
		}
		full = s[0] == '/' ? xstrdup(s) : xstrfmt("%s/%s", dir, s);
		if (stat(full, &st) < 0 || !S_ISREG(st.st_mode)) {
			error("%s:%d: kconfig: fragment '%s' not found (looked for %s)", p->path, f->line, s, full);
			free(full);
			goto out;
		}
		real = real_path(full);
		free(full);
		if (!real)
			goto out;
		ALLOC_GROW(job->fragments, job->nr_fragments + 1, p->alloc_fragments);
		job->fragments[job->nr_fragments++] = real;
	}
	ret = 0;
out:
	free(dir);
	return ret;
}

static int key_params(struct parser *p, const struct node *k, const struct node *v)
{
	struct job *job = p->job;

	(void)k;
	if (need_map(p, v, "params", "a map of suite options like { vm-bytes: 64m }") < 0)
		return -1;
	for (size_t i = 0; i < v->nr; i += 2) {
		const struct node *pk = v->kids[i], *pv = v->kids[i + 1];
		char b[80];

		/* LKP's parameter names have '_' (test_size), stress-ng's '-' */
		if (strlen(pk->text) > 64 || !only_chars(pk->text, LOWER_DIGITS "-_") || pk->text[0] == '-')
			return error("%s:%d: params: expected an option name of a-z, 0-9, '_' and '-', got %s", p->path,
				     pk->line, shown(pk, b, sizeof(b)));
		if (pv->type != NODE_SCALAR || (!pv->is_null && !*pv->text) || !is_printable_ascii(pv->text) ||
		    strlen(pv->text) > JOB_MAX_TEXT) {
			char *what = xstrfmt("params.%s", pk->text);
			expected(p, pv, what,
				 "a value (printable text on one line, at most 1024 characters) or nothing for a bare option");
			free(what);
			return -1;
		}
		ALLOC_GROW(job->params, job->nr_params + 1, p->alloc_params);
		ALLOC_GROW(p->param_line, job->nr_params + 1, p->alloc_param_line);
		job->params[job->nr_params].key = xstrdup(pk->text);
		/* a bare option (`vm-keep:`) has no value */
		job->params[job->nr_params].value = pv->is_null ? NULL : xstrdup(pv->text);
		p->param_line[job->nr_params] = pk->line;
		job->nr_params++;
	}
	return 0;
}

static const struct {
	const char *name;
	key_fn fn;
} top_keys[NR_TOP_KEYS] = {
	[K_SUITE] = { "suite", key_suite },
	[K_TESTCASE] = { "testcase", key_testcase },
	[K_MODE] = { "mode", key_mode },
	[K_NR_TASK] = { "nr_task", key_nr_task },
	[K_NR_THREADS] = { "nr_threads", key_nr_threads },
	[K_RUNTIME] = { "runtime", key_runtime },
	[K_SIZE] = { "size", key_size },
	[K_FS] = { "fs", key_fs },
	[K_KPI] = { "kpi", key_kpi },
	[K_DIRECTION] = { "direction", key_direction },
	[K_REPEAT] = { "repeat", key_repeat },
	[K_CONFIRM_SHARE] = { "confirm_share", key_confirm_share },
	[K_PROFILE_RUNS] = { "profile_runs", key_profile_runs },
	[K_MAX_RUNS] = { "max_runs", key_max_runs },
	[K_REVERT_CHECK] = { "revert_check", key_revert_check },
	[K_SYSCTL] = { "sysctl", key_sysctl },
	[K_THP] = { "thp", key_thp },
	[K_ASLR] = { "aslr", key_aslr },
	[K_DROP_CACHES] = { "drop_caches", key_drop_caches },
	[K_MONITOR_INTERVAL] = { "monitor_interval", key_monitor_interval },
	[K_MONITORS] = { "monitors", key_monitors },
	[K_GUEST] = { "guest", key_guest },
	[K_KCONFIG] = { "kconfig", key_kconfig },
	[K_PARAMS] = { "params", key_params },
};

/* ---- checks across keys ------------------------------------------------------ */

/* A key only other suites read: the suite would ignore it and silently
 * measure something else. */
static int check_suite_keys(struct parser *p, const struct suite *suite)
{
	static const struct {
		int key;
		unsigned bit;
		const char *fmt;
	} only[] = {
		{ K_MODE, SUITE_KEY_MODE, "%s:%d: mode: only %s have a mode" },
		{ K_NR_THREADS, SUITE_KEY_NR_THREADS, "%s:%d: nr_threads: only %s take nr_threads" },
		{ K_SIZE, SUITE_KEY_SIZE, "%s:%d: size: only %s take a size" },
		{ K_FS, SUITE_KEY_FS, "%s:%d: fs: only %s run on a file system of their own" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(only); i++) {
		struct strbuf sb = STRBUF_INIT;

		if (!p->key_line[only[i].key] || (suite->keys & only[i].bit))
			continue;
		suite_names(&sb, only[i].bit, " and ");
		error(only[i].fmt, p->path, p->key_line[only[i].key], sb.buf);
		strbuf_release(&sb);
		return -1;
	}
	return 0;
}

/* mode: one of the suite's (the first is the default). */
static int check_mode(struct parser *p, const struct suite *suite)
{
	struct job *job = p->job;
	const char *const *modes = suite->modes;
	struct strbuf sb = STRBUF_INIT;
	const char *s;
	size_t n = 0;
	int i;

	free(job->mode);
	job->mode = NULL;
	if (!modes) {
		job->mode = xstrdup("process");
		return 0;
	}
	if (!p->mode) {
		job->mode = xstrdup(modes[0]);
		return 0;
	}
	while (modes[n])
		n++;
	s = scalar(p->mode);
	if (s && (i = one_of(s, modes, n)) >= 0) {
		job->mode = xstrdup(modes[i]);
		return 0;
	}
	strbuf_addstr(&sb, "one of ");
	join(&sb, modes, n, " or ");
	strbuf_addf(&sb, " (%s's modes)", suite->name);
	expected(p, p->mode, "mode", sb.buf);
	strbuf_release(&sb);
	return -1;
}

/* params: a key the suite takes (stress-ng's: any of its options). */
static int check_params(struct parser *p, const struct suite *suite)
{
	struct job *job = p->job;

	for (size_t i = 0; i < job->nr_params; i++) {
		if (suite->params && !suite_takes_param(suite, job->params[i].key)) {
			struct strbuf sb = STRBUF_INIT;

			for (const char *const *k = suite->params; *k; k++)
				strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", *k);
			error("%s:%d: params: %s has no option '%s' (%s%s)", p->path, p->param_line[i], suite->name,
			      job->params[i].key, sb.len ? "known: " : "it takes none", sb.buf);
			strbuf_release(&sb);
			return -1;
		}
		if (suite->check_param(job, &job->params[i], p->path, p->param_line[i]) < 0)
			return -1;
	}
	return 0;
}

/* fs: a scratch disk to make it on (guest.disk, or the suite's size). */
static int check_disk(struct parser *p, const struct suite *suite)
{
	struct job *job = p->job;

	if (!job->fs) {
		if (p->disk_line)
			return error("%s:%d: guest.disk: the scratch disk is for a file system: add fs: (xfs, ext4 or btrfs)",
				     p->path, p->disk_line);
		return 0;
	}
	if (!job->guest.disk_mb)
		job->guest.disk_mb = suite->disk_mb ? suite->disk_mb(job) : JOB_DEFAULT_DISK_MB;
	/* mkfs.xfs wants 300 MB */
	if (job->guest.disk_mb < 512)
		return error("%s:%d: guest.disk: %lluM is too small for a file system (at least 512M)", p->path,
			     p->disk_line ? p->disk_line : p->key_line[K_FS], (unsigned long long)job->guest.disk_mb);
	return 0;
}

static int check_job(struct parser *p)
{
	struct job *job = p->job;
	const struct suite *suite;

	if (!job->suite) {
		struct strbuf sb = STRBUF_INIT;
		suite_names(&sb, 0, " or ");
		error("%s:%d: missing key 'suite' (%s)", p->path, p->top_line, sb.buf);
		strbuf_release(&sb);
		return -1;
	}
	suite = suite_get(job->suite);
	if (!suite)
		return -1;
	if (!job->testcase && suite->testcase_is_suite)
		job->testcase = xstrdup(suite->name);
	if (!job->testcase)
		return error("%s:%d: missing key 'testcase' (the %s test to run)", p->path, p->top_line, job->suite);
	if (suite->check_testcase(job, p->path, p->key_line[K_TESTCASE] ? p->key_line[K_TESTCASE] : p->top_line) < 0 ||
	    check_suite_keys(p, suite) < 0 || check_mode(p, suite) < 0 || check_params(p, suite) < 0)
		return -1;
	/* before the disk: a suite may choose the file system (LKP's default) */
	if (suite->check && suite->check(job, p->path, p->key_line[K_PARAMS] ? p->key_line[K_PARAMS] : p->top_line) < 0)
		return -1;
	if (check_disk(p, suite) < 0)
		return -1;
	if (suite->shares &&
	    suite->shares(job, p->path, p->key_line[K_PARAMS] ? p->key_line[K_PARAMS] : p->top_line) < 0)
		return -1;

	job->default_kpi = suite->default_kpi(job);
	if (!job->kpi) {
		job->kpi = xstrdup(job->default_kpi);
	} else {
		struct strbuf why = STRBUF_INIT;
		if (check_kpi(job, job->kpi, &why) < 0) {
			error("%s:%d: kpi: %s, got '%s'", p->path, p->key_line[K_KPI], why.buf, job->kpi);
			strbuf_release(&why);
			return -1;
		}
	}
	return 0;
}

/* ---- parsing ---------------------------------------------------------------- */

static void job_defaults(struct job *job)
{
	memset(job, 0, sizeof(*job));
	/* the suite's default once it is known (check_mode) */
	job->mode = xstrdup("process");
	job->nr_task.is_percent = 1;
	job->nr_task.value = 100;
	job->nr_threads.value = 1;
	job->runtime_s = 10;
	job->direction = 1;
	job->repeat = 3;
	job->confirm_share = 0.5;
	job->profile_runs = 2;
	job->revert_check = 1;
	job->guest.vcpus = 2;
	job->guest.numa_nodes = 1;
	job->guest.memory_mb = 2048;
	job->guest.hugepages = JOB_HUGEPAGES_NONE;
	job->aslr = -1;
	job->drop_caches = -1;
	job->monitors = JOB_MONITORS_DEFAULT;
}

static int walk(struct parser *p, const struct node *root)
{
	struct strbuf known = STRBUF_INIT;
	char b[80];

	if (root->type != NODE_MAP) {
		return error("%s:%d: expected a map of job keys (suite: ..., testcase: ...), got %s", p->path,
			     root->line, shown(root, b, sizeof(b)));
	}
	p->top_line = root->line;
	for (size_t i = 0; i < root->nr; i += 2) {
		const struct node *k = root->kids[i];
		int which = -1;

		for (int j = 0; j < NR_TOP_KEYS; j++)
			if (!strcmp(k->text, top_keys[j].name))
				which = j;
		if (which < 0) {
			for (int j = 0; j < NR_TOP_KEYS; j++)
				strbuf_addf(&known, "%s%s", j ? ", " : "", top_keys[j].name);
			error("%s:%d: unknown key %s (known keys: %s)", p->path, k->line, shown(k, b, sizeof(b)),
			      known.buf);
			strbuf_release(&known);
			return -1;
		}
		p->key_line[which] = k->line;
		if (top_keys[which].fn(p, k, root->kids[i + 1]) < 0)
			return -1;
	}
	return check_job(p);
}

/* ---- variants: --set KEY=VALUE ------------------------------------------------ */

int job_set_parse(struct job_set *out, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : 0;

	memset(out, 0, sizeof(*out));
	if (!eq || !klen || klen > 200 || strspn(arg, ALNUM "_./-") != klen || arg[0] == '.' || arg[klen - 1] == '.')
		return error("--set '%.80s': expected KEY=VALUE with a job key such as runtime, thp.enabled or "
			     "sysctl.vm.swappiness", arg);
	if (has_control_chars(eq + 1) || strlen(eq + 1) > JOB_MAX_TEXT)
		return error("--set '%.*s': the value is one line of at most %d characters", (int)klen, arg,
			     JOB_MAX_TEXT);
	out->key = xstrndup(arg, klen);
	out->value = xstrdup(eq + 1);
	return 0;
}

void job_sets_release(struct job_set *sets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(sets[i].key);
		free(sets[i].value);
	}
	free(sets);
}

static struct node *set_scalar(const char *text, int line)
{
	struct node *n = xcalloc(1, sizeof(*n));

	n->type = NODE_SCALAR;
	n->line = line;
	n->text = xstrdup(text);
	n->is_null = !*text || !strcmp(text, "~") || !strcmp(text, "null");
	return n;
}

/* The index of key's value in a map, or 0 (a value is never at 0). */
static size_t map_find(const struct node *map, const char *key)
{
	for (size_t i = 0; i + 1 < map->nr; i += 2)
		if (!strcmp(map->kids[i]->text, key))
			return i + 1;
	return 0;
}

/* key = value into map: the value replaced (on its line) or the pair
 * added; the parser's key functions then judge it as if written. */
static void map_put(struct node *map, const char *key, struct node *value)
{
	size_t i = map_find(map, key);

	if (i) {
		node_free(map->kids[i]);
		map->kids[i] = value;
		return;
	}
	add_kid(map, set_scalar(key, value->line));
	add_kid(map, value);
}

/* One --set in the loaded tree: KEY at the top, or TOP.SUB under the map
 * TOP (the rest of the name is SUB: sysctl.vm.swappiness). */
static void apply_set(struct node *root, const struct job_set *s)
{
	const char *dot = strchr(s->key, '.');
	char *top;
	size_t i;

	if (root->type != NODE_MAP)
		return;	/* walk() says what is wrong with the file */
	if (!dot) {
		i = map_find(root, s->key);
		map_put(root, s->key, set_scalar(s->value, i ? root->kids[i]->line : root->line));
		return;
	}
	top = xstrndup(s->key, (size_t)(dot - s->key));
	i = map_find(root, top);
	if (i && root->kids[i]->type == NODE_MAP) {
		struct node *map = root->kids[i];
		size_t j = map_find(map, dot + 1);
		map_put(map, dot + 1, set_scalar(s->value, j ? map->kids[j]->line : map->line));
	} else {
		/* a map where the file has text is the key function's error */
		struct node *map = xcalloc(1, sizeof(*map));
		map->type = NODE_MAP;
		map->line = i ? root->kids[i]->line : root->line;
		add_kid(map, set_scalar(dot + 1, map->line));
		add_kid(map, set_scalar(s->value, map->line));
		map_put(root, top, map);
	}
	free(top);
}

static int parse_buffer(struct job *job, const char *name, const char *buf, size_t len, const struct job_set *sets,
			size_t nr_sets)
{
	struct parser p = { 0 };
	struct node *root = NULL;
	char hash[41];
	int yaml_ready = 0, ret = -1;

	job_defaults(job);
	job->path = xstrdup(name);
	if (len > JOB_MAX_SIZE) {
		error("%s: %zu bytes: a job file is at most %d bytes (64 KiB)", name, len, JOB_MAX_SIZE);
		goto out;
	}
	p.path = name;
	p.buf = buf;
	p.len = len;
	p.job = job;
	if (!yaml_parser_initialize(&p.yaml))
		die("out of memory initializing the YAML parser");
	yaml_ready = 1;
	yaml_parser_set_input_string(&p.yaml, (const unsigned char *)buf, len);
	if (load_document(&p, &root) < 0)
		goto out;
	for (size_t i = 0; i < nr_sets; i++)
		apply_set(root, &sets[i]);
	if (walk(&p, root) < 0)
		goto out;
	if (nr_sets) {
		/* a variant is another job: its runs must not pool with the file's */
		struct strbuf sb = STRBUF_INIT;
		strbuf_add(&sb, buf, len);
		for (size_t i = 0; i < nr_sets; i++)
			strbuf_addf(&sb, "\n# klab --set %s=%s\n", sets[i].key, sets[i].value);
		blob_hash(sb.buf, sb.len, hash);
		strbuf_release(&sb);
	} else {
		blob_hash(buf, len, hash);
	}
	job->hash = xstrdup(hash);
	ret = 0;
out:
	if (yaml_ready)
		yaml_parser_delete(&p.yaml);
	node_free(root);
	free(p.sysctl_line);
	free(p.param_line);
	if (ret < 0)
		job_release(job);
	return ret;
}

int job_parse_buffer(struct job *job, const char *name, const char *buf, size_t len)
{
	return parse_buffer(job, name, buf, len, NULL, 0);
}

/* A held parser message without its "FILE:LINE: " (the line is the one
 * a --set replaced, which would mislead). */
static const char *without_place(const char *msg, const char *name)
{
	size_t n = strlen(name);
	const char *q;

	if (strncmp(msg, name, n) || msg[n] != ':')
		return msg;
	q = msg + n + 1;
	while (*q >= '0' && *q <= '9')
		q++;
	return q[0] == ':' && q[1] == ' ' ? q + 2 : msg;
}

int job_parse_buffer_sets(struct job *job, const char *name, const char *buf, size_t len,
			  const struct job_set *sets, size_t nr_sets, const char *what)
{
	int held, rc;

	/* the file alone first: its own errors are the file's */
	if (parse_buffer(job, name, buf, len, NULL, 0) < 0)
		return -1;
	job_release(job);
	/* then each setting alone, so a bad one is named, then all of them */
	for (size_t i = 0; i <= nr_sets; i++) {
		int all = i == nr_sets;

		held = error_hold(1);
		rc = parse_buffer(job, name, buf, len, all ? sets : &sets[i], all ? nr_sets : 1);
		error_hold(held);
		if (rc < 0) {
			if (all)
				return error("%s: %s", what, without_place(error_last(), name));
			return error("--set %s=%s: %s", sets[i].key, sets[i].value, without_place(error_last(), name));
		}
		if (!all)
			job_release(job);
	}
	return 0;
}

int job_parse_file(struct job *job, const char *path)
{
	struct stat st;
	char *buf;
	size_t len;
	int ret;

	memset(job, 0, sizeof(*job));
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > JOB_MAX_SIZE)
		return error("%s: %lld bytes: a job file is at most %d bytes (64 KiB)", path, (long long)st.st_size,
			     JOB_MAX_SIZE);
	if (read_file(path, JOB_MAX_SIZE, &buf, &len) < 0)
		return -1;
	ret = job_parse_buffer(job, path, buf, len);
	free(buf);
	return ret;
}

void job_release(struct job *job)
{
	FREE_MANY(job->path, job->hash, job->suite, job->testcase, job->mode, job->size, job->fs, job->kpi,
		  job->default_kpi);
	for (size_t i = 0; i < job->nr_sysctl; i++) {
		free(job->sysctl[i].key);
		free(job->sysctl[i].value);
	}
	free(job->sysctl);
	for (size_t i = 0; i < job->nr_params; i++) {
		free(job->params[i].key);
		free(job->params[i].value);
	}
	free(job->params);
	strings_free(job->fragments, job->nr_fragments);
	for (size_t i = 0; i < job->nr_shares; i++)
		FREE_MANY(job->shares[i].host, job->shares[i].tag, job->shares[i].guest_dir);
	free(job->shares);
	memset(job, 0, sizeof(*job));
}

unsigned job_count_resolve(const struct job_count *c, unsigned vcpus)
{
	uint64_t n = c->is_percent ? (uint64_t)c->value * vcpus / 100 : c->value;

	if (n < 1)
		return 1;
	return n > UINT32_MAX ? UINT32_MAX : (unsigned)n;
}

const char *job_default_kpi(const struct job *job)
{
	return job->default_kpi;
}

int job_agent_timeout_s(const struct job *job, unsigned *out)
{
	const struct suite *suite = suite_get(job->suite);
	unsigned warmup = 0;

	if (!suite || (suite->warmup_s && suite->warmup_s(job, &warmup) < 0))
		return -1;
	*out = job->runtime_s + warmup + TIMEOUT_MARGIN_S;
	return 0;
}

/* ---- shared host directories --------------------------------------------------- */

/* QEMU opens a share's files as its own user: every ancestor must let
 * others through, the directory let them read and list. */
static int reachable_by_others(const char *what, const char *dir)
{
	char *p = xstrdup(dir);
	struct stat st;
	int ret = 0;

	if (stat(p, &st) < 0 || (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
		ret = error("%s: '%s' is not readable by other users (QEMU runs as its own user, "
			    "libvirt-qemu on Debian): chmod o+rx it", what, dir);
	for (char *slash = strrchr(p, '/'); !ret && slash && slash != p; slash = strrchr(p, '/')) {
		*slash = '\0';
		if (stat(p, &st) < 0 || !(st.st_mode & S_IXOTH))
			ret = error("%s: '%s' cannot be entered by other users (QEMU runs as its own user, "
				    "libvirt-qemu on Debian): chmod o+x it or use another directory", what, p);
	}
	free(p);
	return ret;
}

int job_check_share_dir(const char *what, const char *host)
{
	struct stat st;
	char *real;
	int ret;

	if (!host || host[0] != '/' || !is_printable_ascii(host))
		return error("%s: expected an absolute path, got '%s'", what, host ? host : "");
	if (stat(host, &st) < 0)
		return error("%s: '%s' does not exist", what, host);
	if (!S_ISDIR(st.st_mode))
		return error("%s: '%s' is not a directory", what, host);
	real = real_path(host);
	if (!real)
		return -1;
	if (!strcmp(real, "/"))
		ret = error("%s: '%s' is the host's root directory, which is never shared", what, host);
	else
		ret = reachable_by_others(what, real);
	free(real);
	return ret;
}

int job_add_share(struct job *job, const char *what, const char *host, const char *tag, const char *guest_dir)
{
	struct job_share *sh;

	if (job_check_share_dir(what, host) < 0)
		return -1;
	if (job->nr_shares >= JOB_MAX_SHARES)
		return error("%s: at most %d shared directories", what, JOB_MAX_SHARES);
	if (!only_chars(tag, LOWER_DIGITS "_") || strlen(tag) > 31 || strncmp(guest_dir, "/klab/", 6))
		return error("%s: bad share tag '%s' or guest directory '%s'", what, tag, guest_dir);
	job->shares = xrealloc(job->shares, (job->nr_shares + 1) * sizeof(*job->shares));
	sh = &job->shares[job->nr_shares++];
	sh->host = real_path(host);
	sh->tag = xstrdup(tag);
	sh->guest_dir = xstrdup(guest_dir);
	if (!sh->host) {
		free(sh->tag);
		free(sh->guest_dir);
		job->nr_shares--;
		return -1;
	}
	return 0;
}

/* ---- the agent's job.conf ------------------------------------------------------ */

/* One directive; the agent reads values to the end of the line, so a
 * value that is not one line of printable text never gets that far. */
int job_conf_line(struct strbuf *sb, const char *key, const char *value)
{
	if (!is_printable_ascii(value))
		return error("job.conf %s: value '%s' is not one line of printable text", key, value);
	strbuf_addf(sb, "%s %s\n", key, value);
	return 0;
}

int job_conf_argvf(struct strbuf *sb, const char *fmt, ...)
{
	struct strbuf arg = STRBUF_INIT;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	strbuf_vaddf(&arg, fmt, ap);
	va_end(ap);
	ret = job_conf_line(sb, "argv", arg.buf);
	strbuf_release(&arg);
	return ret;
}

int job_conf_argv(struct strbuf *sb, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (job_conf_line(sb, "argv", v[i]) < 0)
			return -1;
	return 0;
}

int job_conf_argv_uint(struct strbuf *sb, const char *opt, unsigned v)
{
	if (job_conf_line(sb, "argv", opt) < 0)
		return -1;
	return job_conf_argvf(sb, "%u", v);
}

/* "job-name" from "dir/job-name.yaml", in characters a log line likes. */
static void conf_name(struct strbuf *sb, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".yaml"))
		n -= 5;
	else if (n > 4 && !strcmp(base + n - 4, ".yml"))
		n -= 4;
	if (n > 100)
		n = 100;
	for (size_t i = 0; i < n; i++)
		strbuf_addch(sb, strchr(ALNUM "._+-", base[i]) ? base[i] : '_');
	if (!n)
		strbuf_addstr(sb, "job");
}

int job_agent_conf(const struct job *job, unsigned vcpus, struct strbuf *out)
{
	struct strbuf sb = STRBUF_INIT;
	const struct suite *suite;
	unsigned timeout;
	int ret = -1;

	if (!job->suite || !job->testcase || !job->mode)
		return error("job '%s' has no suite or testcase", job->path ? job->path : "?");
	if (!vcpus)
		return error("job '%s': a guest has at least one vCPU", job->path);
	suite = suite_get(job->suite);
	if (!suite || job_agent_timeout_s(job, &timeout) < 0)
		return -1;

	strbuf_addstr(&sb, "version 1\nname ");
	conf_name(&sb, job->path ? job->path : "job");
	strbuf_addch(&sb, '\n');
	for (size_t i = 0; i < job->nr_sysctl; i++) {
		const struct job_kv *kv = &job->sysctl[i];
		struct strbuf line = STRBUF_INIT;
		int rc;

		if (bad_setting_key(kv->key)) {
			error("job '%s': bad sysctl key '%s'", job->path, kv->key);
			goto out;
		}
		if (job_sysctl_is_sysfs(kv->key)) {
			strbuf_addf(&line, "/sys/%s %s", kv->key, kv->value);
			rc = job_conf_line(&sb, "sysfs", line.buf);
		} else {
			strbuf_addf(&line, "%s %s", kv->key, kv->value);
			rc = job_conf_line(&sb, "sysctl", line.buf);
		}
		strbuf_release(&line);
		if (rc < 0)
			goto out;
	}
	if (job->aslr >= 0)
		strbuf_addf(&sb, "aslr %d\n", job->aslr);
	if (job->drop_caches >= 0)
		strbuf_addf(&sb, "drop_caches %d\n", job->drop_caches);
	strbuf_addf(&sb, "timeout %u\n", timeout);
	/* the disk guest.c attaches: the first virtio disk */
	if (job->guest.swap_mb)
		strbuf_addstr(&sb, "swap " JOB_SWAP_DEVICE "\n");
	/* the scratch disk guest.c attaches, found by its serial */
	if (job->fs)
		strbuf_addf(&sb, "fs %s %s %s\n", JOB_DISK_SERIAL, job->fs, JOB_DISK_DIR);
	/* the shares guest.c attaches, by tag (the host path stays on the host) */
	for (size_t i = 0; i < job->nr_shares; i++)
		strbuf_addf(&sb, "mount9p %s %s\n", job->shares[i].tag, job->shares[i].guest_dir);
	strbuf_addf(&sb, "monitor_interval %u\n", job->monitor_interval_s);
	/* the default set is said by saying nothing: the same file as before
	 * perf-profile (a list of exactly the cheap ones too) */
	if (job->monitors != JOB_MONITORS_DEFAULT) {
		strbuf_addstr(&sb, "monitors");
		for (size_t i = 0; i < monitor_count(); i++)
			if (job->monitors & (1u << i))
				strbuf_addf(&sb, " %s", monitor_at(i)->name);
		strbuf_addstr(&sb, job->monitors ? "\n" : " none\n");
	}

	ret = suite->agent_argv(job, vcpus, &sb);
	if (!ret)
		strbuf_add(out, sb.buf, sb.len);
out:
	strbuf_release(&sb);
	return ret;
}
