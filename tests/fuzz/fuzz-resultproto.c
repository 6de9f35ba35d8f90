/* libFuzzer harness for the result channel (orchestrator/job/resultproto.c):
 * the input is what a hostile guest writes to its result port.  It is fed
 * whole and in chunks of sizes derived from the data (the two results must
 * agree), then every suite's metric parser runs over the out lines and
 * over the raw lines of the input; the metrics must keep their promises.
 * The agent's monitor parsers (guests/agent/procmon.c) read the input as
 * the file they parse: every name they make must be one the host takes.
 * Built and run by run-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "job/resultproto.h"
#include "job/monitor.h"
#include "job/suite.h"
#include "procmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what)
{
	fprintf(stderr, "fuzz-resultproto: %s\n", what);
	abort();
}

static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void set_caps(struct result *r, uint32_t h)
{
	/* sometimes caps small enough for the input to reach them */
	if (h & 1) {
		r->max_out = 1 + (h >> 1) % 64;
		r->max_mon = 1 + (h >> 7) % 64;
		r->max_env = 1 + (h >> 13) % 8;
		r->max_warnings = 1 + (h >> 16) % 8;
		r->max_bytes = 1024 + (h >> 19) % 65536;
	}
}

static int str_eq(const char *a, const char *b)
{
	return !strcmp(a, b);
}

static void check_same(const struct result *a, const struct result *b)
{
	if (a->hello != b->hello || a->done != b->done || a->done_ok != b->done_ok ||
	    a->exit_status != b->exit_status || a->exit_code != b->exit_code || a->start_ms != b->start_ms ||
	    a->nr_env != b->nr_env || a->nr_mon != b->nr_mon || a->nr_warnings != b->nr_warnings ||
	    a->nr_out != b->nr_out || a->long_lines != b->long_lines || a->bad_records != b->bad_records ||
	    a->ignored_lines != b->ignored_lines || a->dropped_out != b->dropped_out ||
	    a->dropped_mon != b->dropped_mon || a->dropped_env != b->dropped_env ||
	    a->dropped_warnings != b->dropped_warnings || a->stored_bytes != b->stored_bytes)
		broken("chunked feed disagrees with whole feed (counts)");
	if (!a->agent_version != !b->agent_version || (a->agent_version && !str_eq(a->agent_version, b->agent_version)))
		broken("chunked feed disagrees with whole feed (hello)");
	for (size_t i = 0; i < a->nr_env; i++)
		if (!str_eq(a->env[i].key, b->env[i].key) || !str_eq(a->env[i].value, b->env[i].value))
			broken("chunked feed disagrees with whole feed (env)");
	for (size_t i = 0; i < a->nr_mon; i++)
		if (!str_eq(a->mon[i].phase, b->mon[i].phase) || !str_eq(a->mon[i].source, b->mon[i].source) ||
		    !str_eq(a->mon[i].name, b->mon[i].name) || a->mon[i].value != b->mon[i].value)
			broken("chunked feed disagrees with whole feed (mon)");
	for (size_t i = 0; i < a->nr_warnings; i++)
		if (!str_eq(a->warnings[i], b->warnings[i]))
			broken("chunked feed disagrees with whole feed (warn)");
	for (size_t i = 0; i < a->nr_out; i++)
		if (!str_eq(a->out[i], b->out[i]))
			broken("chunked feed disagrees with whole feed (out)");
}

static void check_result(const struct result *r)
{
	if (r->nr_out > r->max_out || r->nr_mon > r->max_mon || r->nr_env > r->max_env ||
	    r->nr_warnings > r->max_warnings || r->stored_bytes > r->max_bytes)
		broken("a cap was exceeded");
	if (r->done && !r->hello)
		broken("done without hello");
	for (size_t i = 0; i < r->nr_out; i++)
		if (strlen(r->out[i]) > RESULT_MAX_LINE)
			broken("an out line longer than a record");
	for (size_t i = 0; i < r->nr_mon; i++)
		if (!isfinite(r->mon[i].value) || !result_name_valid(r->mon[i].name))
			broken("a mon record with a bad value or name");
	for (size_t i = 0; i < r->nr_env; i++)
		if (!result_name_valid(r->env[i].key))
			broken("an env record with a bad key");
}

static void check_metrics(const struct result_metric *m, size_t n)
{
	if (!n && m)
		broken("no metrics but an array");
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(m[i].value))
			broken("a metric that is not finite");
		if (!result_name_valid(m[i].name))
			broken("a metric with an invalid name");
	}
	if (n > 4096)
		return;		/* the quadratic check only on sizes it can afford */
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < i; k++)
			if (m[i].seq == m[k].seq && str_eq(m[i].name, m[k].name))
				broken("a duplicate (metric, seq)");
}

/* Every suite of the registry, and one that is not there. */
static void parse_all_suites(char *const *lines, size_t nr)
{
	size_t nr_suites;
	const struct suite *const *suites = suite_all(&nr_suites);

	for (size_t s = 0; s <= nr_suites; s++) {
		struct result_metric *m;
		size_t n = result_parse_metrics(s < nr_suites ? suites[s]->name : "unknown", "fuzz", lines, nr, &m);

		check_metrics(m, n);
		result_metrics_free(m, n);
	}
}

/* The input's own lines, as a parser would get them from any source. */
static void parse_raw_lines(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), **lines, *p;
	size_t nr = 0;

	if (!copy)
		return;
	memcpy(copy, data, size);
	copy[size] = '\0';
	lines = malloc((size + 1) * sizeof(*lines));
	if (!lines) {
		free(copy);
		return;
	}
	for (p = copy; p < copy + size;) {
		char *nl = memchr(p, '\n', (size_t)(copy + size - p));

		lines[nr++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	parse_all_suites(lines, nr);
	free(lines);
	free(copy);
}

static void procmon_check(void *ctx, const char *name, unsigned long long value)
{
	const struct monitor *m = monitor_find(ctx);

	(void)value;
	if (!m || strlen(name) > PROCMON_MAX_NAME || !monitor_field_valid(m, name))
		broken("a monitor parser made a name the host refuses");
}

/* The input as /proc/interrupts, /proc/softirqs and a node's meminfo. */
static void parse_procmon(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	if (!text)
		return;
	memcpy(text, data, size);
	text[size] = '\0';
	procmon_interrupts(text, procmon_check, "interrupts");
	procmon_softirqs(text, procmon_check, "softirqs");
	procmon_node_meminfo(text, procmon_check, "numa-meminfo");
	procmon_node_vmstat(text, 7, procmon_check, "numa-vmstat");
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result whole, chunked;
	uint32_t h = 2166136261u, x;
	size_t off = 0;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	x = h ? h : 1;

	result_init(&whole);
	set_caps(&whole, h);
	result_feed(&whole, (const char *)data, size);
	result_finish(&whole);
	check_result(&whole);

	result_init(&chunked);
	set_caps(&chunked, h);
	while (off < size) {
		uint32_t v = next_rand(&x);
		size_t n = v & 0x100 ? v % (RESULT_MAX_LINE + 200) : v % 9;	/* 0 is a valid chunk too */

		if (n > size - off)
			n = size - off;
		result_feed(&chunked, (const char *)data + off, n);
		off += n;
	}
	result_finish(&chunked);
	check_same(&whole, &chunked);

	parse_all_suites(whole.out, whole.nr_out);
	parse_raw_lines(data, size);
	parse_procmon(data, size);

	result_release(&whole);
	result_release(&chunked);
	return 0;
}
