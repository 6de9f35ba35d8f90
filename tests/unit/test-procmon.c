/* Unit tests of the agent's monitor parsers (guests/agent/procmon.c) on
 * files captured from a real kernel (tests/data/monitors/) and on hostile
 * variants: every name they make must be one the host accepts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procmon.h"
#include "job/monitor.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

struct seen {
	const char *source;
	char names[4096][PROCMON_MAX_NAME + 1];
	unsigned long long values[4096];
	size_t n;
};

static void collect(void *ctx, const char *name, unsigned long long value)
{
	struct seen *s = ctx;

	if (!monitor_field_valid(monitor_find(s->source), name))
		fail_msg("%s: the host would refuse name '%s'", s->source, name);
	assert_true(s->n < ARRAY_SIZE(s->names));
	snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
	s->values[s->n++] = value;
}

/* The value sent for name; fails when it was not sent. */
static unsigned long long value_of(const struct seen *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return s->values[i];
	fail_msg("%s: no '%s' among %zu names", s->source, name, s->n);
	return 0;
}

static int sent(const struct seen *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return 1;
	return 0;
}

static char *fixture(const char *name)
{
	char *path = xstrfmt("%s/tests/data/monitors/%s", KLAB_ABS_SRCDIR, name), *buf = xcalloc(1, 1 << 16);
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	free(path);
	return buf;
}

static struct seen *parse(const char *source, void (*fn)(const char *, procmon_emit, void *), const char *text)
{
	struct seen *s = xcalloc(1, sizeof(*s));

	s->source = source;
	fn(text, collect, s);
	return s;
}

/* tests/data/monitors/file parsed by fn as source's. */
static struct seen *parse_fixture(const char *source, void (*fn)(const char *, procmon_emit, void *), const char *file)
{
	char *text = fixture(file);
	struct seen *s = parse(source, fn, text);

	free(text);
	return s;
}

static void test_procmon__interrupts_per_cpu_and_summed_with_lkp_names(void **state)
{
	struct seen *s = parse_fixture("interrupts", procmon_interrupts, "interrupts");

	(void)state;
	assert_int_equal(value_of(s, "CPU0.RES:Rescheduling_interrupts"), 709698);
	assert_int_equal(value_of(s, "CPU1.RES:Rescheduling_interrupts"), 499890);
	assert_int_equal(value_of(s, "RES:Rescheduling_interrupts"), 709698 + 499890);
	assert_int_equal(value_of(s, "CAL:Function_call_interrupts"), 347189 + 238434);
	assert_int_equal(value_of(s, "CPU1.LOC:Local_timer_interrupts"), 1121441);
	assert_int_equal(value_of(s, "CPU0.24:IO-APIC.5-edge.ACPI:Ged"), 1);
	assert_true(sent(s, "28:PCI-MSIX-0000:00:01.0.0-edge.virtio0-config"));
	/* one column, not one per CPU: only the sum */
	assert_int_equal(value_of(s, "ERR"), 0);
	assert_false(sent(s, "CPU0.ERR"));
	free(s);
}

static void test_procmon__softirqs_per_cpu_and_summed(void **state)
{
	struct seen *s = parse_fixture("softirqs", procmon_softirqs, "softirqs");

	(void)state;
	assert_int_equal(value_of(s, "CPU1.BLOCK"), 1772187);
	assert_int_equal(value_of(s, "RCU"), 1178245 + 1343166);
	assert_int_equal(s->n, 10 * 3);
	free(s);
}

static void test_procmon__node_meminfo_as_node_dot_field(void **state)
{
	struct seen *s = parse_fixture("numa-meminfo", procmon_node_meminfo, "node0-meminfo");

	(void)state;
	assert_int_equal(value_of(s, "node0.MemTotal"), 13068492);
	assert_int_equal(value_of(s, "node0.AnonHugePages"), 0);
	assert_int_equal(s->n, 36);
	free(s);
}

/* node vmstat has no node number in it: the caller names the node */
static void node3_vmstat(const char *text, procmon_emit emit, void *ctx)
{
	procmon_node_vmstat(text, 3, emit, ctx);
}

static void test_procmon__node_vmstat_as_node_dot_field(void **state)
{
	struct seen *s = parse_fixture("numa-vmstat", node3_vmstat, "node0-vmstat");

	(void)state;
	assert_int_equal(value_of(s, "node3.nr_free_pages"), 1502730);
	assert_int_equal(value_of(s, "node3.numa_hit"), 432204758);
	assert_int_equal(s->n, 68);
	free(s);
	/* lines that are not quite */
	s = parse("numa-vmstat", node3_vmstat,
		  "nr_ok 12\nnr_neg -1\nbad$ 3\nnr_novalue\nnr_novalue2 \nnr_big 99999999999999999999999\n"
		  " nr_lead 4\nnr_trail 5 x\n\n");
	assert_int_equal(value_of(s, "node3.nr_ok"), 12);
	assert_int_equal(value_of(s, "node3.nr_lead"), 4);
	assert_false(sent(s, "node3.nr_neg"));
	assert_false(sent(s, "node3.bad$"));
	assert_false(sent(s, "node3.nr_big"));
	free(s);
}

static void test_procmon__hostile_tables_stay_bounded(void **state)
{
	struct strbuf big = STRBUF_INIT;
	struct seen *s;

	(void)state;
	/* no header, a header of garbage: nothing */
	s = parse("interrupts", procmon_interrupts, "RES: 1 2 Rescheduling\n");
	assert_int_equal(s->n, 0);
	free(s);
	s = parse("softirqs", procmon_softirqs, "CPUx CPU1\nRCU: 1 2\n");
	assert_int_equal(s->n, 0);
	free(s);
	/* overflowing numbers, bad keys, a column too many, an overflowing sum */
	s = parse("interrupts", procmon_interrupts,
		  " CPU0 CPU1\nA: 99999999999999999999999 1 x\nB$: 1 2\n: 1 2\nC: 1 2 3\n"
		  "D: 18446744073709551615 1 t\n\n\n");
	assert_false(sent(s, "A:x"));
	assert_false(sent(s, "CPU0.A:x"));
	assert_false(sent(s, "B$"));
	assert_int_equal(value_of(s, "C"), 6);
	assert_false(sent(s, "CPU0.C"));
	assert_int_equal(value_of(s, "CPU0.D:t"), 18446744073709551615ULL);
	assert_false(sent(s, "D:t"));
	free(s);
	/* a description far longer than a name, odd bytes in it */
	strbuf_addstr(&big, "  CPU0\n7: 5 ");
	for (int i = 0; i < 500; i++)
		strbuf_addstr(&big, "x\x01[] ");
	s = parse("interrupts", procmon_interrupts, big.buf);
	assert_int_equal(s->n, 2);
	assert_true(strlen(s->names[0]) <= PROCMON_MAX_NAME);
	free(s);
	/* meminfo lines that are not quite */
	s = parse("numa-meminfo", procmon_node_meminfo,
		  "Node 0 MemTotal: 12 kB\nNode x MemFree: 1 kB\nNode 1 Bad$: 2 kB\nNode 2 NoValue:\n"
		  "Node 99999999 Huge: 1 kB\nNode 3 Neg: -1 kB\nNode 4");
	assert_int_equal(s->n, 1);
	assert_int_equal(value_of(s, "node0.MemTotal"), 12);
	free(s);
	strbuf_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procmon__interrupts_per_cpu_and_summed_with_lkp_names),
		cmocka_unit_test(test_procmon__softirqs_per_cpu_and_summed),
		cmocka_unit_test(test_procmon__node_meminfo_as_node_dot_field),
		cmocka_unit_test(test_procmon__node_vmstat_as_node_dot_field),
		cmocka_unit_test(test_procmon__hostile_tables_stay_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
