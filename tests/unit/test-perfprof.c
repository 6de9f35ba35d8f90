/* Unit tests of the agent's perf report parser (guests/agent/perfprof.c)
 * on output captured from perf 6.1 on a real host (tests/data/perf/: the
 * table the agent asks for, with call chains, of dd and of will-it-scale
 * malloc1; self only; the default fields with IPC columns; self with
 * chains) and on hostile variants:
 * every name it makes must be one the host's perf-profile monitor takes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compare.h"
#include "perfprof.h"
#include "job/monitor.h"
#include "job/resultproto.h"
#include "helpers.h"
#include "util/strbuf.h"
#include "util/util.h"

/* What the last perfprof_parse read: rows for every kind, too many for
 * the stack. */
static struct perfprof parsed, *const pp = &parsed;

static char *fixture(const char *name)
{
	char *path = xstrfmt("%s/tests/data/perf/%s", KLAB_ABS_SRCDIR, name), *text = NULL;

	assert_int_equal(read_file(path, 1 << 20, &text, NULL), 0);
	free(path);
	return text;
}

/* Every row: a name the host takes, a share in (0, 100], the largest
 * first, at most PERFPROF_MAX_ROWS, none under the limit. */
static void check_rows(void)
{
	const struct monitor *m = monitor_find("perf-profile");

	assert_non_null(m);
	for (int k = 0; k < PERFPROF_NR_KINDS; k++) {
		assert_true(pp->nr[k] <= PERFPROF_MAX_ROWS);
		for (size_t i = 0; i < pp->nr[k]; i++) {
			const struct perfprof_row *r = &pp->rows[k][i];

			if (!monitor_field_valid(m, r->name))
				fail_msg("the host would refuse '%s'", r->name);
			assert_true(strlen(r->name) <= PERFPROF_MAX_NAME);
			assert_true(r->pct >= PERFPROF_MIN_PCT && r->pct <= 100);
			if (i)
				assert_true(pp->rows[k][i - 1].pct >= r->pct);
		}
	}
}

/* tests/data/perf/<name> parsed into pp, its rows checked. */
static void parse_fixture(const char *name)
{
	char *text = fixture(name);

	perfprof_parse(pp, text);
	free(text);
	check_rows();
}

/* The share sent for name, or -1 when it was not sent. */
static double pct_of(enum perfprof_kind k, const char *name)
{
	for (size_t i = 0; i < pp->nr[k]; i++)
		if (!strcmp(pp->rows[k][i].name, name))
			return pp->rows[k][i].pct;
	return -1;
}

#define assert_pct(k, name, v) assert_true(fabs(pct_of((k), (name)) - (v)) < 1e-9)

static void test_perfprof__children_with_chains_gives_lkp_rows(void **state)
{
	(void)state;
	parse_fixture("children-callchains.txt");
	assert_true(pp->nr[PERFPROF_CALLTRACE] > 20);
	assert_string_equal(pp->rows[PERFPROF_SELF][0].name, "self.cycles-pp.read_zero");
	assert_pct(PERFPROF_SELF, "self.cycles-pp.read_zero", 23.68);
	assert_pct(PERFPROF_SELF, "self.cycles-pp.do_syscall_64", 3.95);
	/* the same share: names break the tie */
	assert_string_equal(pp->rows[PERFPROF_CHILDREN][0].name, "children.cycles-pp.do_syscall_64");
	assert_string_equal(pp->rows[PERFPROF_CHILDREN][1].name, "children.cycles-pp.entry_SYSCALL_64_after_hwframe");
	assert_pct(PERFPROF_CHILDREN, "children.cycles-pp.read_zero", 23.83);
	assert_pct(PERFPROF_CALLTRACE,
		   "calltrace.cycles-pp.read_zero.vfs_read.ksys_read.do_syscall_64.entry_SYSCALL_64_after_hwframe.read",
		   23.83);
	assert_pct(PERFPROF_CALLTRACE, "calltrace.cycles-pp.entry_SYSCALL_64_after_hwframe.read", 27.48);
	/* 0.00% self rows are not sent, nor addresses, nor one-frame chains */
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.entry_SYSCALL_64_after_hwframe") < 0);
	assert_true(pct_of(PERFPROF_CHILDREN, "children.cycles-pp.0x00007f6839656240") < 0);
	assert_true(pct_of(PERFPROF_CALLTRACE, "calltrace.cycles-pp.read") < 0);
	/* "_int_free;0x1": the chain stops at the address, one frame is none */
	assert_true(pct_of(PERFPROF_CALLTRACE, "calltrace.cycles-pp._int_free") < 0);
	/* a symbol with dots keeps them */
	assert_pct(PERFPROF_CHILDREN, "children.cycles-pp.do_execveat_common.isra.0", 2.22);
}

/* what the agent itself asks perf report for, on will-it-scale malloc1 */
static void test_perfprof__malloc1_names_the_kernel_paths(void **state)
{
	(void)state;
	parse_fixture("malloc1-agent.txt");
	assert_pct(PERFPROF_SELF, "self.cycles-pp.clear_page_erms", 4.73);
	assert_pct(PERFPROF_CHILDREN, "children.cycles-pp.__x64_sys_munmap", 15.53);
	/* a long chain keeps the callers that fit the name, whole; the
	 * chains it stands for are summed (1.70 % and 0.51 %) */
	assert_pct(PERFPROF_CALLTRACE,
		   "calltrace.cycles-pp.clear_page_erms.get_page_from_freelist.__alloc_frozen_pages_noprof."
		   "alloc_pages_mpol", 1.70 + 0.51);
	assert_pct(PERFPROF_CALLTRACE,
		   "calltrace.cycles-pp.__x64_sys_munmap.do_syscall_64.entry_SYSCALL_64_after_hwframe.__munmap", 15.53);
}

static void test_perfprof__self_table_has_no_children_or_chains(void **state)
{
	(void)state;
	parse_fixture("self.txt");
	assert_int_equal(pp->nr[PERFPROF_CHILDREN], 0);
	assert_int_equal(pp->nr[PERFPROF_CALLTRACE], 0);
	assert_pct(PERFPROF_SELF, "self.cycles-pp.read_zero", 23.68);
	assert_pct(PERFPROF_SELF, "self.cycles-pp._int_free", 1.29);
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.0x0000000000186664") < 0);
}

static void test_perfprof__default_fields_ipc_columns_are_not_the_symbol(void **state)
{
	(void)state;
	parse_fixture("children-ipc.txt");
	assert_pct(PERFPROF_SELF, "self.cycles-pp.main", 13.45);
	assert_pct(PERFPROF_CHILDREN, "children.cycles-pp.main", 13.74);
	/* cmp_double of two programs: one name, the shares summed */
	assert_pct(PERFPROF_SELF, "self.cycles-pp.cmp_double", 4.13 + 2.96);
	assert_int_equal(pp->nr[PERFPROF_CALLTRACE], 0);
}

static void test_perfprof__self_chains_are_calltraces(void **state)
{
	(void)state;
	parse_fixture("self-callchains.txt");
	assert_int_equal(pp->nr[PERFPROF_CHILDREN], 0);
	assert_pct(PERFPROF_CALLTRACE,
		   "calltrace.cycles-pp.read_zero.vfs_read.ksys_read.do_syscall_64.entry_SYSCALL_64_after_hwframe.read",
		   23.68);
}

static void test_perfprof__hostile_output_is_bounded_and_mapped(void **state)
{
	char *x96 = xcalloc(1, PERFPROF_MAX_SYMBOL + 1), *name;

	(void)state;
	parse_fixture("hostile.txt");
	memset(x96, 'x', PERFPROF_MAX_SYMBOL);
	/* an overlong symbol is cut; its chain has no room for a caller */
	name = xstrfmt("self.cycles-pp.%s", x96);
	assert_string_equal(pp->rows[PERFPROF_SELF][0].name, name);
	assert_pct(PERFPROF_SELF, name, 20);
	free(name);
	name = xstrfmt("children.cycles-pp.%s", x96);
	assert_pct(PERFPROF_CHILDREN, name, 30);
	free(name);
	/* control characters and escapes become '_' */
	assert_pct(PERFPROF_SELF, "self.cycles-pp.ctl___31mred_", 11);
	assert_pct(PERFPROF_CHILDREN, "children.cycles-pp.ctl___31mred_", 12);
	/* C++ names keep what a name may hold */
	assert_pct(PERFPROF_SELF, "self.cycles-pp.std::vector_int__std::allocator_int___::push_back(int_const_)", 2);
	/* a chain stops at an address; one starting with one is none */
	assert_pct(PERFPROF_CALLTRACE, "calltrace.cycles-pp.good_symbol.its_caller", 9);
	assert_pct(PERFPROF_CALLTRACE,
		   "calltrace.cycles-pp.frame_00_of_a_deep_chain.frame_01_of_a_deep_chain.frame_02_of_a_deep_chain."
		   "frame_03_of_a_deep_chain", 3);
	assert_int_equal(pp->nr[PERFPROF_CALLTRACE], 2);
	/* the same symbol twice is summed */
	assert_pct(PERFPROF_SELF, "self.cycles-pp.dup_symbol", 2);
	assert_pct(PERFPROF_CHILDREN, "children.cycles-pp.dup_symbol", 4);
	/* one percent column is self; the last line needs no newline */
	assert_pct(PERFPROF_SELF, "self.cycles-pp.one_column_self", 2.5);
	assert_true(pct_of(PERFPROF_CHILDREN, "children.cycles-pp.one_column_self") < 0);
	assert_pct(PERFPROF_CHILDREN, "children.cycles-pp.no_newline_at_end", 4);
	/* over 100 %, odd numbers, under the limit: not sent */
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.over_a_hundred") < 0);
	assert_true(pct_of(PERFPROF_CHILDREN, "children.cycles-pp.self_over_a_hundred") < 0);
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.exponent") < 0);
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.negative") < 0);
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.many_digits") < 0);
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.many_decimals") < 0);
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.below_the_limit") < 0);
	assert_int_equal(pp->nr[PERFPROF_SELF], 7);
	assert_int_equal(pp->nr[PERFPROF_CHILDREN], 6);
	free(x96);
}

static void test_perfprof__many_symbols_keep_the_largest_rows(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* more distinct names than candidates are kept, largest last */
	for (int i = 0; i < PERFPROF_MAX_CANDIDATES + 100; i++)
		strbuf_addf(&sb, "  %d.%02d%%  %d.%02d%%  [k] sym_%d\n", i / 100 % 100, i % 100, i / 100 % 100,
			    i % 100, i);
	perfprof_parse(pp, sb.buf);
	check_rows();
	assert_int_equal(pp->nr[PERFPROF_SELF], PERFPROF_MAX_ROWS);
	/* the first PERFPROF_MAX_CANDIDATES (0.00% is none) are kept: 20.48%
	 * is the largest of them */
	assert_string_equal(pp->rows[PERFPROF_SELF][0].name, "self.cycles-pp.sym_2048");
	assert_true(pct_of(PERFPROF_SELF, "self.cycles-pp.sym_2049") < 0);
	strbuf_release(&sb);
}

static void test_perfprof__empty_and_header_only_output_has_no_rows(void **state)
{
	(void)state;
	perfprof_parse(pp, "");
	for (int k = 0; k < PERFPROF_NR_KINDS; k++)
		assert_int_equal(pp->nr[k], 0);
	perfprof_parse(pp, "# Children  Overhead  Symbol\n#\n# (Tip: nothing)\n");
	for (int k = 0; k < PERFPROF_NR_KINDS; k++)
		assert_int_equal(pp->nr[k], 0);
}

static void test_perfprof__event_is_cycles_or_cpu_clock(void **state)
{
	const char *e = perfprof_event();

	(void)state;
	assert_true(!strcmp(e, "cycles") || !strcmp(e, "cpu-clock"));
}

static void test_perfprof__long_runs_on_many_cpus_sample_less(void **state)
{
	(void)state;
	/* a 10 s job's timeout (72 s) on 2 vCPUs: LKP's 800 */
	assert_int_equal(perfprof_freq(72, 2), PERFPROF_FREQ);
	/* 5 minutes on 8 vCPUs: 69 would keep to 200000 samples, but never under 100 */
	assert_int_equal(perfprof_freq(360, 8), PERFPROF_MIN_FREQ);
	assert_int_equal(perfprof_freq(100, 4), 500);
	assert_int_equal(perfprof_freq(30 * 86400, 256), PERFPROF_MIN_FREQ);
	assert_int_equal(perfprof_freq(0, 0), PERFPROF_FREQ);
}

static void test_monitor__perf_profile_is_not_in_the_default_set(void **state)
{
	int i = monitor_index("perf-profile");

	(void)state;
	assert_true(i >= 0);
	assert_false(monitor_default_set() & (1u << i));
	assert_true(monitor_default_set() & (1u << monitor_index("vmstat")));
	assert_false(monitor_at((size_t)i)->counters);
	assert_true(monitor_field_valid(monitor_at((size_t)i), "calltrace.cycles-pp.a.b"));
	assert_false(monitor_field_valid(monitor_at((size_t)i), "self.cycles-pp."));
	assert_false(monitor_field_valid(monitor_at((size_t)i), "clear_page_erms"));
	assert_false(monitor_field_valid(monitor_at((size_t)i), "self.cycles-pp.a b"));
}

static void test_resultproto__takes_the_rows_the_agent_sends(void **state)
{
	static const char input[] =
		"KLAB1 hello 1\n"
		"KLAB1 env perf_event cpu-clock\n"
		"KLAB1 mon after perf-profile self.cycles-pp.clear_page_erms 23.50\n"
		"KLAB1 mon after perf-profile calltrace.cycles-pp.clear_page_erms.clear_huge_page 20.10\n"
		"KLAB1 mon after perf-profile clear_page_erms 23.50\n"
		"KLAB1 mon after perf-profile self.cycles-pp. 1.00\n"
		"KLAB1 done 1\n";
	struct result r;

	(void)state;
	parse_records(&r, input, sizeof(input) - 1);
	assert_int_equal(r.nr_mon, 2);
	assert_string_equal(r.mon[0].source, "perf-profile");
	assert_string_equal(r.mon[0].name, "self.cycles-pp.clear_page_erms");
	assert_true(fabs(r.mon[0].value - 23.5) < 1e-9);
	assert_string_equal(result_env_get(&r, "perf_event"), "cpu-clock");
	/* stored as perf-profile.<name> (db_step_mon_values): the "what
	 * changed" block's profile family */
	assert_string_equal(compare_family("perf-profile.self.cycles-pp.clear_page_erms"), "profile");
	assert_string_equal(compare_family("perf-profile.calltrace.cycles-pp.a.b"), "profile");
	result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfprof__children_with_chains_gives_lkp_rows),
		cmocka_unit_test(test_perfprof__malloc1_names_the_kernel_paths),
		cmocka_unit_test(test_perfprof__self_table_has_no_children_or_chains),
		cmocka_unit_test(test_perfprof__default_fields_ipc_columns_are_not_the_symbol),
		cmocka_unit_test(test_perfprof__self_chains_are_calltraces),
		cmocka_unit_test(test_perfprof__hostile_output_is_bounded_and_mapped),
		cmocka_unit_test(test_perfprof__many_symbols_keep_the_largest_rows),
		cmocka_unit_test(test_perfprof__empty_and_header_only_output_has_no_rows),
		cmocka_unit_test(test_perfprof__event_is_cycles_or_cpu_clock),
		cmocka_unit_test(test_perfprof__long_runs_on_many_cpus_sample_less),
		cmocka_unit_test(test_monitor__perf_profile_is_not_in_the_default_set),
		cmocka_unit_test(test_resultproto__takes_the_rows_the_agent_sends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
