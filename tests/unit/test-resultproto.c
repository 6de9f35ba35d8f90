/* Unit tests of the result channel: the record parser against valid,
 * chunked, cut, binary and forged streams and its caps; the suites'
 * metric parsers against real stress-ng output (tests/data/results/),
 * klab's will-it-scale and usemem formats, and hostile output. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#ifndef KLAB_ABS_SRCDIR
#define KLAB_ABS_SRCDIR ""
#endif

/* cmocka's test signature: most tests have no use for state */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static const char valid_stream[] =
	"early console noise\n"
	"KLAB1 hello 1.0\n"
	"KLAB1 env kernel 6.1.0-klab\n"
	"KLAB1 env cpus 2\n"
	"KLAB1 env cmdline console=ttyS0 quiet  panic=-1\n"
	"KLAB1 env thp_defrag \n"
	"KLAB1 warn unknown job key 'frobnicate'\n"
	"KLAB1 mon before vmstat nr_free_pages 480000\n"
	"KLAB1 mon before meminfo Active(anon) 1234\n"
	"KLAB1 mon before stat cpu.user 17\n"
	"KLAB1 start 1732953600123\n"
	"KLAB1 out stress-ng: info:  [101] dispatching hogs: 2 mmapaddr\n"
	"KLAB1 out \n"
	"KLAB1 out\n"
	"KLAB1 mon t5 vmstat pgfault 1.5e6\n"
	"KLAB1 exit exited 0\n"
	"KLAB1 mon after vmstat nr_free_pages -12.25\n"
	"KLAB1 done 1\n";

static void feed_str(struct result *r, const char *s)
{
	result_feed(r, s, strlen(s));
}

/* A fresh result from one stream fed in chunks of the sizes a pattern
 * of `chunks` gives (0 = all at once). */
static void parse_chunked(struct result *r, const char *data, size_t len, size_t chunk, unsigned seed)
{
	size_t off = 0;

	result_init(r);
	while (off < len) {
		size_t n = chunk ? chunk : len;

		if (seed) {
			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 700;
		}
		if (n > len - off)
			n = len - off;
		result_feed(r, data + off, n);
		off += n;
	}
	result_finish(r);
}

static void parse_str(struct result *r, const char *s)
{
	parse_chunked(r, s, strlen(s), 0, 0);
}

static void assert_results_equal(const struct result *a, const struct result *b)
{
	assert_int_equal(a->hello, b->hello);
	assert_int_equal(a->done, b->done);
	assert_int_equal(a->done_ok, b->done_ok);
	assert_int_equal(a->exit_status, b->exit_status);
	assert_int_equal(a->exit_code, b->exit_code);
	assert_int_equal(a->start_ms, b->start_ms);
	assert_int_equal(!a->agent_version, !b->agent_version);
	if (a->agent_version)
		assert_string_equal(a->agent_version, b->agent_version);
	assert_int_equal(a->nr_env, b->nr_env);
	for (size_t i = 0; i < a->nr_env; i++) {
		assert_string_equal(a->env[i].key, b->env[i].key);
		assert_string_equal(a->env[i].value, b->env[i].value);
	}
	assert_int_equal(a->nr_mon, b->nr_mon);
	for (size_t i = 0; i < a->nr_mon; i++) {
		assert_string_equal(a->mon[i].phase, b->mon[i].phase);
		assert_string_equal(a->mon[i].source, b->mon[i].source);
		assert_string_equal(a->mon[i].name, b->mon[i].name);
		assert_true(a->mon[i].value == b->mon[i].value);
	}
	assert_int_equal(a->nr_warnings, b->nr_warnings);
	for (size_t i = 0; i < a->nr_warnings; i++)
		assert_string_equal(a->warnings[i], b->warnings[i]);
	assert_int_equal(a->nr_out, b->nr_out);
	for (size_t i = 0; i < a->nr_out; i++)
		assert_string_equal(a->out[i], b->out[i]);
	assert_int_equal(a->long_lines, b->long_lines);
	assert_int_equal(a->bad_records, b->bad_records);
	assert_int_equal(a->ignored_lines, b->ignored_lines);
	assert_int_equal(a->dropped_out, b->dropped_out);
	assert_int_equal(a->dropped_mon, b->dropped_mon);
	assert_int_equal(a->dropped_env, b->dropped_env);
	assert_int_equal(a->dropped_warnings, b->dropped_warnings);
}

static void test_resultproto__full_valid_stream_is_parsed(void **state)
{
	struct result r;

	parse_str(&r, valid_stream);
	assert_true(r.hello);
	assert_string_equal(r.agent_version, "1.0");
	assert_true(r.done);
	assert_true(r.done_ok);
	assert_int_equal(r.exit_status, RESULT_EXIT_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(r.start_ms, 1732953600123LL);
	assert_int_equal(r.nr_env, 4);
	assert_string_equal(result_env_get(&r, "kernel"), "6.1.0-klab");
	assert_string_equal(result_env_get(&r, "cpus"), "2");
	assert_string_equal(result_env_get(&r, "cmdline"), "console=ttyS0 quiet  panic=-1");
	assert_string_equal(result_env_get(&r, "thp_defrag"), "");
	assert_null(result_env_get(&r, "numa_nodes"));
	assert_int_equal(r.nr_warnings, 1);
	assert_string_equal(r.warnings[0], "unknown job key 'frobnicate'");
	assert_int_equal(r.nr_mon, 5);
	assert_string_equal(r.mon[1].name, "Active(anon)");
	assert_string_equal(r.mon[1].source, "meminfo");
	assert_string_equal(r.mon[3].phase, "t5");
	assert_true(r.mon[3].value == 1.5e6);
	assert_string_equal(r.mon[4].phase, "after");
	assert_true(r.mon[4].value == -12.25);
	assert_int_equal(r.nr_out, 3);
	assert_string_equal(r.out[0], "stress-ng: info:  [101] dispatching hogs: 2 mmapaddr");
	assert_string_equal(r.out[1], "");
	assert_string_equal(r.out[2], "");
	assert_int_equal(r.ignored_lines, 1);	/* the console noise */
	assert_int_equal(r.bad_records, 0);
	assert_int_equal(r.long_lines, 0);
	result_release(&r);
}

/* The monitors of issue 18 with LKP's names; a numa-meminfo field must be
 * node<N>.<Field>. */
static void test_resultproto__new_monitors_carry_lkp_names(void **state)
{
	struct result r;

	(void)state;
	result_init(&r);
	feed_str(&r, "KLAB1 hello 1\n"
		     "KLAB1 mon before interrupts CPU0.CAL:Function_call_interrupts 5\n"
		     "KLAB1 mon before interrupts 24:IO-APIC.5-edge.ACPI:Ged 1\n"
		     "KLAB1 mon before softirqs CPU1.RCU 7\n"
		     "KLAB1 mon before numa-meminfo node0.AnonHugePages 0\n"
		     "KLAB1 mon before numa-meminfo nodex.AnonHugePages 0\n"
		     "KLAB1 mon before numa-meminfo node1. 0\n"
		     "KLAB1 mon before numa-vmstat node0.nr_free_pages 9\n"
		     "KLAB1 mon before numa-vmstat nr_free_pages 9\n"
		     "KLAB1 done 1\n");
	result_finish(&r);
	assert_int_equal(r.nr_mon, 5);
	assert_int_equal(r.bad_records, 3);
	assert_string_equal(r.mon[0].name, "CPU0.CAL:Function_call_interrupts");
	assert_string_equal(r.mon[3].source, "numa-meminfo");
	assert_string_equal(r.mon[4].source, "numa-vmstat");
	assert_string_equal(r.mon[4].name, "node0.nr_free_pages");
	result_release(&r);
}

static void test_resultproto__crlf_line_ends_are_accepted(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 hello 1\r\nKLAB1 out a b\r\nKLAB1 done 0\r\n");
	assert_int_equal(r.nr_out, 1);
	assert_string_equal(r.out[0], "a b");
	assert_true(r.done);
	assert_false(r.done_ok);
	assert_int_equal(r.bad_records, 0);
	result_release(&r);
}

/* A stream with every kind of trouble, for the chunking test. */
static char *nasty_stream(size_t *len)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add(&sb, "junk\0\xff\n", 7);
	strbuf_addstr(&sb, "KLAB1 hello 2\n");
	strbuf_addstr(&sb, "KLAB1 out \xc2\xb5s and \xe2\x82\xac\r\n");
	strbuf_add(&sb, "KLAB1 out a\0b\n", 14);
	strbuf_addstr(&sb, "KLAB1 out ");
	for (int i = 0; i < 3 * RESULT_MAX_LINE; i++)
		strbuf_addch(&sb, 'x' + i % 3);
	strbuf_addstr(&sb, "\nKLAB1 mon before vmstat a nan\n");
	strbuf_addstr(&sb, "KLAB1 out ");
	for (int i = 0; i < RESULT_MAX_LINE - 10; i++)
		strbuf_addch(&sb, 'y');
	strbuf_addstr(&sb, "\r\n\n\n\r\nKLAB1 exit signaled 9\nKLAB1 done 1\nKLAB1 done 1\nKLAB1 out late\n");
	strbuf_addstr(&sb, "KLAB1 out partial");
	return strbuf_detach(&sb, len);
}

static void test_resultproto__any_chunking_gives_the_same_result(void **state)
{
	struct result whole, part;
	size_t len;
	char *s = nasty_stream(&len);

	parse_chunked(&whole, s, len, 0, 0);
	assert_int_equal(whole.nr_out, 3);
	assert_int_equal(whole.long_lines, 1);
	assert_int_equal(whole.bad_records, 3);	/* NUL, nan, the second done */
	assert_int_equal(whole.ignored_lines, 6);	/* junk, three empty lines, out late, out partial */
	for (size_t chunk = 1; chunk <= 7; chunk++) {
		parse_chunked(&part, s, len, chunk, 0);
		assert_results_equal(&whole, &part);
		result_release(&part);
	}
	for (unsigned seed = 1; seed <= 20; seed++) {
		parse_chunked(&part, s, len, 0, seed);
		assert_results_equal(&whole, &part);
		result_release(&part);
	}
	parse_chunked(&part, s, len, RESULT_MAX_LINE + 1, 0);
	assert_results_equal(&whole, &part);
	result_release(&part);
	result_release(&whole);
	free(s);
}

static void test_resultproto__line_longer_than_limit_is_cut_and_counted(void **state)
{
	struct result r;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "KLAB1 hello 1\nKLAB1 out ");
	for (int i = 0; i < 100000; i++)
		strbuf_addch(&sb, 'a' + i % 26);
	strbuf_addstr(&sb, "\nKLAB1 out next\nKLAB1 done 1\n");
	parse_str(&r, sb.buf);
	assert_int_equal(r.long_lines, 1);
	assert_int_equal(r.nr_out, 2);
	assert_int_equal(strlen(r.out[0]), RESULT_MAX_LINE - strlen("KLAB1 out "));
	assert_memory_equal(r.out[0], "abcdef", 6);
	assert_string_equal(r.out[1], "next");
	assert_true(r.done);
	assert_int_equal(r.bad_records, 0);
	result_release(&r);
	strbuf_release(&sb);
}

static void test_resultproto__line_of_exactly_the_limit_is_whole(void **state)
{
	struct result r;
	struct strbuf sb = STRBUF_INIT;
	size_t text = RESULT_MAX_LINE - strlen("KLAB1 out ");

	strbuf_addstr(&sb, "KLAB1 hello 1\nKLAB1 out ");
	for (size_t i = 0; i < text; i++)
		strbuf_addch(&sb, 'z');
	strbuf_addstr(&sb, "\r\nKLAB1 out ");
	for (size_t i = 0; i < text + 1; i++)
		strbuf_addch(&sb, 'z');
	strbuf_addstr(&sb, "\r\n");
	parse_str(&r, sb.buf);
	assert_int_equal(r.nr_out, 2);
	assert_int_equal(strlen(r.out[0]), text);
	assert_int_equal(strlen(r.out[1]), text);	/* one byte over: cut */
	assert_int_equal(r.long_lines, 1);
	result_release(&r);
	strbuf_release(&sb);
}

static void test_resultproto__cut_record_with_numbers_is_bad(void **state)
{
	struct result r;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "KLAB1 hello 1\nKLAB1 mon before vmstat pgfault 1");
	for (int i = 0; i < RESULT_MAX_LINE; i++)
		strbuf_addch(&sb, '0');
	strbuf_addstr(&sb, "\nKLAB1 done ");
	for (int i = 0; i < RESULT_MAX_LINE; i++)
		strbuf_addch(&sb, '1');
	strbuf_addstr(&sb, "\n");
	parse_str(&r, sb.buf);
	assert_int_equal(r.long_lines, 2);
	assert_int_equal(r.bad_records, 2);
	assert_int_equal(r.nr_mon, 0);
	assert_false(r.done);
	result_release(&r);
	strbuf_release(&sb);
}

static void test_resultproto__cut_inside_utf8_keeps_the_whole_characters(void **state)
{
	struct result r;
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "KLAB1 hello 1\nKLAB1 out x");
	/* 3-byte euro signs; the cut falls inside one of them */
	while (sb.len < strlen("KLAB1 hello 1\n") + RESULT_MAX_LINE + 10)
		strbuf_addstr(&sb, "\xe2\x82\xac");
	strbuf_addstr(&sb, "\n");
	parse_str(&r, sb.buf);
	assert_int_equal(r.long_lines, 1);
	assert_int_equal(r.bad_records, 0);
	assert_int_equal(r.nr_out, 1);
	assert_int_equal(strlen(r.out[0]), 1 + (RESULT_MAX_LINE - strlen("KLAB1 out x")) / 3 * 3);
	result_release(&r);
	strbuf_release(&sb);
}

static void test_resultproto__binary_junk_makes_a_record_bad_and_other_lines_ignored(void **state)
{
	static const char stream[] =
		"\x7f\x45\x4c\x46\x02\x01\x01\x00\n"	/* an ELF header: not KLAB1 */
		"\0\0\0\0\n"
		"KLAB1 hello 1\n"
		"KLAB1 out a\0b\n"			/* NUL */
		"KLAB1 out tab\there\n"			/* control character */
		"KLAB1 out esc\x1b[31m\n"
		"KLAB1 out bad utf8 \xff\xfe\n"
		"KLAB1 out overlong \xc0\xaf\n"
		"KLAB1 out surrogate \xed\xa0\x80\n"
		"KLAB1 out c1 \xc2\x85\n"
		"KLAB1 mon before vmstat pg\0fault 1\n"
		"KLAB1 env ker\x01nel x\n"
		"KLAB1 out fine \xc2\xb5s\n"
		"KLAB1 done 1\n";
	struct result r;

	parse_chunked(&r, stream, sizeof(stream) - 1, 0, 0);
	assert_int_equal(r.ignored_lines, 2);
	assert_int_equal(r.bad_records, 9);
	assert_int_equal(r.nr_out, 1);
	assert_string_equal(r.out[0], "fine \xc2\xb5s");
	assert_int_equal(r.nr_mon, 0);
	assert_int_equal(r.nr_env, 0);
	assert_true(r.done);
	result_release(&r);
}

static void test_resultproto__done_before_hello_is_bad(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 done 1\nKLAB1 out before\nKLAB1 exit exited 0\nKLAB1 hello 1\nKLAB1 out after\n");
	assert_false(r.done);
	assert_int_equal(r.bad_records, 3);
	assert_int_equal(r.exit_status, RESULT_EXIT_NONE);
	assert_true(r.hello);
	assert_int_equal(r.nr_out, 1);
	assert_string_equal(r.out[0], "after");
	result_release(&r);
}

static void test_resultproto__second_done_is_bad_and_later_records_ignored(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 hello 1\nKLAB1 done 0\nKLAB1 done 1\nKLAB1 out late\nKLAB1 hello 2\n"
		      "KLAB1 exit exited 0\nKLAB1 bogus\n");
	assert_true(r.done);
	assert_false(r.done_ok);	/* the forged second done changed nothing */
	assert_int_equal(r.bad_records, 1);
	assert_int_equal(r.ignored_lines, 4);
	assert_int_equal(r.nr_out, 0);
	assert_int_equal(r.exit_status, RESULT_EXIT_NONE);
	assert_string_equal(r.agent_version, "1");
	result_release(&r);
}

static void test_resultproto__second_hello_is_bad_not_a_reset(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 hello 1\nKLAB1 out one\nKLAB1 start 5\nKLAB1 hello 2\nKLAB1 start 6\n"
		      "KLAB1 exit exited 3\nKLAB1 exit exited 0\nKLAB1 done 1\n");
	assert_int_equal(r.bad_records, 3);
	assert_string_equal(r.agent_version, "1");
	assert_int_equal(r.nr_out, 1);
	assert_int_equal(r.start_ms, 5);
	assert_int_equal(r.exit_code, 3);
	result_release(&r);
}

static void test_resultproto__exit_with_junk_numbers_is_bad(void **state)
{
	static const char *const bad[] = {
		"KLAB1 exit exited 12abc\n", "KLAB1 exit exited 99999999999\n", "KLAB1 exit exited 0x10\n",
		"KLAB1 exit exited  1\n", "KLAB1 exit exited 1 \n", "KLAB1 exit exited 1 2\n",
		"KLAB1 exit exited\n", "KLAB1 exit\n", "KLAB1 exit bogus 1\n", "KLAB1 exit exited +1\n",
		"KLAB1 exit exited 1.0\n", "KLAB1 exit exited -\n", "KLAB1 exit exited 99999999999999999999999\n",
		"KLAB1 start 0\n", "KLAB1 start -5\n", "KLAB1 start 1e3\n", "KLAB1 done 2\n", "KLAB1 done yes\n",
		"KLAB1 done 1 1\n", "KLAB1 done\n", "KLAB1 hello\n", "KLAB1 hello a b\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct result r;
		char *s = xstrfmt("KLAB1 hello 1\n%s", bad[i]);

		parse_str(&r, s);
		if (r.bad_records != 1)
			fail_msg("'%s' was not a bad record", bad[i]);
		assert_int_equal(r.exit_status, RESULT_EXIT_NONE);
		assert_int_equal(r.start_ms, 0);
		assert_false(r.done);
		result_release(&r);
		free(s);
	}
}

static void test_resultproto__exit_statuses_and_negative_code_parse(void **state)
{
	static const struct {
		const char *rec;
		enum result_exit status;
		int code;
	} ok[] = {
		{ "exited 255", RESULT_EXIT_EXITED, 255 },
		{ "signaled 9", RESULT_EXIT_SIGNALED, 9 },
		{ "timeout -1", RESULT_EXIT_TIMEOUT, -1 },
		{ "exec-failed 2", RESULT_EXIT_EXEC_FAILED, 2 },
		{ "exited -2147483648", RESULT_EXIT_EXITED, -2147483647 - 1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct result r;
		char *s = xstrfmt("KLAB1 hello 1\nKLAB1 exit %s\n", ok[i].rec);

		parse_str(&r, s);
		assert_int_equal(r.bad_records, 0);
		assert_int_equal(r.exit_status, ok[i].status);
		assert_int_equal(r.exit_code, ok[i].code);
		result_release(&r);
		free(s);
	}
}

static void test_resultproto__mon_with_nan_or_junk_number_is_bad(void **state)
{
	static const char *const bad[] = {
		"before vmstat a nan", "before vmstat a NAN", "before vmstat a inf", "before vmstat a -inf",
		"before vmstat a infinity", "before vmstat a 1e999", "before vmstat a -1e999", "before vmstat a 1e-400",
		"before vmstat a 0x10", "before vmstat a 0x1p3", "before vmstat a 1e", "before vmstat a --1",
		"before vmstat a .", "before vmstat a 1,5", "before vmstat a 12abc", "before vmstat a ",
		"before vmstat a", "before vmstat a  1", "before vmstat a 1 ", "before vmstat a 1 2",
		"during vmstat a 1", "t vmstat a 1", "t-1 vmstat a 1", "t1x vmstat a 1", "t12345678901 vmstat a 1",
		"before proc a 1", "before vmstat  1", "before  vmstat a 1", " before vmstat a 1",
		"before vmstat a\xc2\xa0 1",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct result r;
		char *s = xstrfmt("KLAB1 hello 1\nKLAB1 mon %s\n", bad[i]);

		parse_str(&r, s);
		if (r.bad_records != 1 || r.nr_mon)
			fail_msg("'mon %s' was not a bad record", bad[i]);
		result_release(&r);
		free(s);
	}
}

static void test_resultproto__mon_numbers_in_every_decimal_form_parse(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 hello 1\n"
		      "KLAB1 mon t0 stat ctxt 0\n"
		      "KLAB1 mon t30 stat ctxt +7\n"
		      "KLAB1 mon after stat ctxt -0.5\n"
		      "KLAB1 mon after stat ctxt .5\n"
		      "KLAB1 mon after stat ctxt 5.\n"
		      "KLAB1 mon after stat ctxt 1E+3\n"
		      "KLAB1 mon after stat ctxt 18446744073709551615\n");
	assert_int_equal(r.bad_records, 0);
	assert_int_equal(r.nr_mon, 7);
	assert_true(r.mon[1].value == 7);
	assert_true(r.mon[2].value == -0.5);
	assert_true(r.mon[3].value == 0.5);
	assert_true(r.mon[4].value == 5);
	assert_true(r.mon[5].value == 1000);
	assert_true(r.mon[6].value == 18446744073709551615.0);
	result_release(&r);
}

static void test_resultproto__names_with_spaces_quotes_html_are_bad(void **state)
{
	static const char *const bad[] = {
		"KLAB1 mon before vmstat nr free 1\n", "KLAB1 mon before vmstat \"nr\" 1\n",
		"KLAB1 mon before vmstat <b>x</b> 1\n", "KLAB1 mon before vmstat a&b 1\n",
		"KLAB1 mon before vmstat it's 1\n", "KLAB1 env <script>alert(1)</script> x\n",
		"KLAB1 env \"kernel\" x\n", "KLAB1 env a;b x\n", "KLAB1 env a\\b x\n", "KLAB1 env \n",
		"KLAB1 env\n", "KLAB1 hello <b>\n", "KLAB1 env k\xc3\xa9y x\n", "KLAB1 env a=b x\n",
	};
	struct strbuf name = STRBUF_INIT;
	struct result r;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *s = xstrfmt("KLAB1 hello 1\n%s", bad[i]);

		parse_str(&r, s);
		if (r.bad_records != 1 || r.nr_mon || r.nr_env)
			fail_msg("'%s' was not a bad record", bad[i]);
		result_release(&r);
		free(s);
	}

	/* a hello with a bad version is no hello */
	parse_str(&r, "KLAB1 hello <b>\nKLAB1 done 1\n");
	assert_false(r.hello);
	assert_false(r.done);
	assert_int_equal(r.bad_records, 2);
	result_release(&r);

	/* 128 bytes is a name, 129 is not */
	for (int i = 0; i < RESULT_MAX_NAME; i++)
		strbuf_addch(&name, 'n');
	{
		char *s = xstrfmt("KLAB1 hello 1\nKLAB1 env %s ok\nKLAB1 env %sn too long\n", name.buf, name.buf);

		parse_str(&r, s);
		assert_int_equal(r.nr_env, 1);
		assert_int_equal(r.bad_records, 1);
		result_release(&r);
		free(s);
	}
	strbuf_release(&name);

	/* the whole charset is fine, and the value of an env may be anything printable */
	parse_str(&r, "KLAB1 hello 1\nKLAB1 env aZ09_.:+()/- <b>\"it's\"</b> & more\n");
	assert_int_equal(r.bad_records, 0);
	assert_string_equal(result_env_get(&r, "aZ09_.:+()/-"), "<b>\"it's\"</b> & more");
	result_release(&r);
}

static void test_resultproto__repeated_env_key_is_bad(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 hello 1\nKLAB1 env kernel 6.1\nKLAB1 env kernel evil\n");
	assert_int_equal(r.bad_records, 1);
	assert_int_equal(r.nr_env, 1);
	assert_string_equal(result_env_get(&r, "kernel"), "6.1");
	result_release(&r);
}

static void test_resultproto__unknown_types_and_foreign_lines_are_ignored(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 hello 1\nKLAB1 future stuff\nKLAB1x out no\nKLAB2 out no\nklab1 out no\n"
		      " KLAB1 out no\n\nKLAB1\nKLAB1 \nKLAB1  out x\n");
	assert_int_equal(r.ignored_lines, 6);
	assert_int_equal(r.bad_records, 3);	/* no type, empty type, empty type */
	assert_int_equal(r.nr_out, 0);
	result_release(&r);
}

static void test_resultproto__missing_done_leaves_done_unset(void **state)
{
	struct result r;

	parse_str(&r, "KLAB1 hello 1\nKLAB1 start 10\nKLAB1 out half a run\nKLAB1 exit timeout 0\n");
	assert_true(r.hello);
	assert_false(r.done);
	assert_false(r.done_ok);
	assert_int_equal(r.exit_status, RESULT_EXIT_TIMEOUT);
	assert_int_equal(r.nr_out, 1);
	result_release(&r);

	result_init(&r);
	result_finish(&r);	/* nothing at all */
	assert_false(r.hello);
	assert_false(r.done);
	result_release(&r);
}

static void test_resultproto__partial_last_line_is_parsed_at_finish(void **state)
{
	struct result r;

	result_init(&r);
	feed_str(&r, "KLAB1 hello 1\nKLAB1 out last");
	assert_int_equal(r.nr_out, 0);
	feed_str(&r, " words\nKLAB1 do");
	feed_str(&r, "ne 1");
	assert_false(r.done);
	result_finish(&r);
	assert_int_equal(r.nr_out, 1);
	assert_string_equal(r.out[0], "last words");
	assert_true(r.done);
	assert_true(r.done_ok);
	result_release(&r);

	/* a partial line that overflowed is still cut and counted */
	result_init(&r);
	feed_str(&r, "KLAB1 hello 1\nKLAB1 out ");
	for (int i = 0; i < 2 * RESULT_MAX_LINE; i++)
		feed_str(&r, "q");
	result_finish(&r);
	assert_int_equal(r.long_lines, 1);
	assert_int_equal(r.nr_out, 1);
	result_release(&r);
}

static void test_resultproto__caps_drop_and_count_what_did_not_fit(void **state)
{
	struct result r;

	result_init(&r);
	r.max_out = 3;
	r.max_mon = 2;
	r.max_env = 1;
	r.max_warnings = 2;
	feed_str(&r, "KLAB1 hello 1\n");
	for (int i = 0; i < 10; i++) {
		char *s = xstrfmt("KLAB1 out line %d\nKLAB1 mon t%d stat ctxt %d\nKLAB1 env k%d v\nKLAB1 warn w%d\n",
				  i, i, i, i, i);

		feed_str(&r, s);
		free(s);
	}
	feed_str(&r, "KLAB1 done 1\n");
	result_finish(&r);
	assert_int_equal(r.nr_out, 3);
	assert_int_equal(r.dropped_out, 7);
	assert_string_equal(r.out[2], "line 2");
	assert_int_equal(r.nr_mon, 2);
	assert_int_equal(r.dropped_mon, 8);
	assert_int_equal(r.nr_env, 1);
	assert_int_equal(r.dropped_env, 9);
	assert_int_equal(r.nr_warnings, 2);
	assert_int_equal(r.dropped_warnings, 8);
	assert_int_equal(r.bad_records, 0);
	assert_true(r.done);
	result_release(&r);

	/* the byte cap holds whatever the counts allow */
	result_init(&r);
	r.max_bytes = 64 * 1024;
	feed_str(&r, "KLAB1 hello 1\n");
	for (int i = 0; i < 100; i++) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "KLAB1 out ");
		for (int k = 0; k < 4000; k++)
			strbuf_addch(&sb, 'b');
		strbuf_addch(&sb, '\n');
		result_feed(&r, sb.buf, sb.len);
		strbuf_release(&sb);
	}
	result_finish(&r);
	assert_true(r.stored_bytes <= r.max_bytes);
	assert_true(r.nr_out > 0 && r.nr_out <= 16);
	assert_int_equal(r.nr_out + r.dropped_out, 100);
	result_release(&r);
}

static void test_resultproto__zeroed_result_is_not_capped_to_nothing(void **state)
{
	struct result r;

	memset(&r, 0, sizeof(r));
	feed_str(&r, "KLAB1 hello 1\nKLAB1 env a b\nKLAB1 warn w\nKLAB1 mon before stat ctxt 1\nKLAB1 out o\n");
	result_finish(&r);
	assert_int_equal(r.nr_env + r.nr_warnings + r.nr_mon + r.nr_out, 4);
	assert_int_equal(r.dropped_env + r.dropped_warnings + r.dropped_mon + r.dropped_out, 0);
	result_release(&r);
}

static void test_resultproto__default_out_cap_holds_against_a_flood(void **state)
{
	struct result r;
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < 1000; i++)
		strbuf_addstr(&sb, "KLAB1 out flood\n");
	result_init(&r);
	feed_str(&r, "KLAB1 hello 1\n");
	for (int i = 0; i < RESULT_MAX_OUT / 1000 + 1; i++)
		result_feed(&r, sb.buf, sb.len);
	result_finish(&r);
	assert_int_equal(r.nr_out, RESULT_MAX_OUT);
	assert_int_equal(r.dropped_out, 1000);
	result_release(&r);
	strbuf_release(&sb);
}

/* ---- metric parsers ----------------------------------------------------- */

static char *data_path(const char *name)
{
	const char *src = getenv("KLAB_SRCDIR");

	if (!src || !*src)
		src = *KLAB_ABS_SRCDIR ? KLAB_ABS_SRCDIR : ".";
	return xstrfmt("%s/tests/data/results/%s", src, name);
}

/* The lines of a data file (in *buf, which the caller frees with the array). */
static char **read_lines(const char *name, char **buf, size_t *nr)
{
	char *path = data_path(name), **lines = NULL, *p;
	size_t len, alloc = 0;

	if (read_file(path, 1 << 20, buf, &len) < 0)
		fail_msg("cannot read %s (set KLAB_SRCDIR)", path);
	free(path);
	*nr = 0;
	for (p = *buf; *p;) {
		char *nl = strchr(p, '\n');

		ALLOC_GROW(lines, *nr + 1, alloc);
		lines[(*nr)++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	return lines;
}

/* What the suite's parser makes of a data file taken as a run's output:
 * the number of metrics, the metrics in *m. */
static size_t parse_output(const char *name, const char *suite, const char *testcase, struct result_metric **m)
{
	char *buf, **lines;
	size_t nr, n;

	lines = read_lines(name, &buf, &nr);
	n = result_parse_metrics(suite, testcase, lines, nr, m);
	free(lines);
	free(buf);
	return n;
}

static size_t parse_text(const char *suite, const char *text, struct result_metric **m)
{
	char *copy = xstrdup(text), **lines = NULL, *p = copy;
	size_t nr = 0, alloc = 0, n;

	while (*p) {
		char *nl = strchr(p, '\n');

		ALLOC_GROW(lines, nr + 1, alloc);
		lines[nr++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	n = result_parse_metrics(suite, NULL, lines, nr, m);
	free(lines);
	free(copy);
	return n;
}

static const struct result_metric *find(const struct result_metric *m, size_t n, const char *name, int64_t seq)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].name, name) && m[i].seq == seq)
			return &m[i];
	return NULL;
}

static double value_of(const struct result_metric *m, size_t n, const char *name, int64_t seq)
{
	const struct result_metric *x = find(m, n, name, seq);

	if (!x)
		fail_msg("no metric %s seq %lld", name, (long long)seq);
	return x->value;
}

static void assert_metrics_sane(const struct result_metric *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		assert_true(result_name_valid(m[i].name));
		assert_true(isfinite(m[i].value));
		for (size_t k = 0; k < i; k++)
			if (!strcmp(m[i].name, m[k].name) && m[i].seq == m[k].seq)
				fail_msg("duplicate metric %s seq %lld", m[i].name, (long long)m[i].seq);
	}
}

static const struct {
	const char *file;
	const char *suite;
} golden[] = {
	{ "stress-ng-mmapaddr", "stress-ng" },
	{ "stress-ng-vm-splice", "stress-ng" },
	{ "stress-ng-malloc", "stress-ng" },
	{ "stress-ng-pipe-switch", "stress-ng" },
	{ "stress-ng-mmapaddr-brief", "stress-ng" },
	{ "stress-ng-vm-splice-sn", "stress-ng" },
	{ "will-it-scale-process", "will-it-scale" },
	{ "will-it-scale-thread", "will-it-scale" },
	{ "vm-scalability-usemem", "vm-scalability" },
	{ "vm-scalability-anon-w-seq", "vm-scalability" },
	{ "vm-scalability-truncate-seq", "vm-scalability" },
	{ "will-it-scale-both-also", "will-it-scale" },
	{ "kbuild-tinyconfig", "kbuild" },
	{ "hackbench", "hackbench" },
	{ "perf-bench-futex-hash", "perf-bench-futex" },
	{ "perf-bench-futex-lock-pi", "perf-bench-futex" },
	{ "perf-bench-futex-wake", "perf-bench-futex" },
	{ "perf-bench-futex-requeue", "perf-bench-futex" },
	{ "perf-bench-futex-wake-parallel", "perf-bench-futex" },
	{ "perf-bench-sched-pipe", "perf-bench-sched-pipe" },
	{ "perf-bench-sched-messaging", "perf-bench-sched-messaging" },
	{ "perf-bench-mem", "perf-bench-mem" },
	{ "perf-bench-syscall", "perf-bench-syscall" },
	{ "fio-randrw", "fio-basic" },
	{ "fio-write", "fio-basic" },
	{ "netperf-tcp-rr", "netperf" },
	{ "netperf-udp-stream", "netperf" },
};

static void test_resultproto__every_data_file_gives_its_golden_metrics(void **state)
{
	for (size_t g = 0; g < ARRAY_SIZE(golden); g++) {
		char *name = xstrfmt("%s.out", golden[g].file), *mname = xstrfmt("%s.metrics", golden[g].file);
		char *buf, **lines, *path = data_path(mname), *want;
		struct strbuf got = STRBUF_INIT;
		struct result_metric *m;
		size_t nr, n, len;

		lines = read_lines(name, &buf, &nr);
		n = result_parse_metrics(golden[g].suite, NULL, lines, nr, &m);
		assert_true(n > 0);
		assert_metrics_sane(m, n);
		for (size_t i = 0; i < n; i++)
			strbuf_addf(&got, "%s %lld %.15g\n", m[i].name, (long long)m[i].seq, m[i].value);
		if (getenv("KLAB_REGENERATE") && !strcmp(getenv("KLAB_REGENERATE"), "1")) {
			assert_int_equal(write_file_atomic(path, got.buf, got.len), 0);
		} else {
			if (read_file(path, 1 << 20, &want, &len) < 0)
				fail_msg("cannot read %s (KLAB_REGENERATE=1 writes it)", path);
			if (strcmp(want, got.buf))
				fail_msg("%s: metrics differ from %s:\n%s", name, path, got.buf);
			free(want);
		}
		result_metrics_free(m, n);
		strbuf_release(&got);
		free(lines);
		free(buf);
		free(path);
		free(name);
		free(mname);
	}
}

static void test_resultproto__stress_ng_table_row_gives_every_column(void **state)
{
	struct result_metric *m;
	size_t n;

	n = parse_output("stress-ng-mmapaddr.out", "stress-ng", "mmapaddr", &m);
	assert_int_equal(n, 8);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.ops", 0) == 8896);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.real_time", 0) == 3.00);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.usr_time", 0) == 0.99);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.sys_time", 0) == 3.71);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.ops_per_sec", 0) == 2962.63);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.ops_per_sec_usr_sys", 0) == 1893.62);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.cpu_used_per_instance", 0) == 78.23);
	assert_true(value_of(m, n, "stress-ng.mmapaddr.RSS_Max", 0) == 2492);
	result_metrics_free(m, n);

	n = parse_output("stress-ng-mmapaddr-brief.out", "stress-ng", "mmapaddr", &m);
	assert_int_equal(n, 6);	/* --metrics-brief: no CPU used, no RSS */
	assert_true(value_of(m, n, "stress-ng.mmapaddr.ops_per_sec_usr_sys", 0) == 5961.03);
	assert_null(find(m, n, "stress-ng.mmapaddr.RSS_Max", 0));
	result_metrics_free(m, n);
}

static void test_resultproto__stress_ng_miscellaneous_metrics_are_named_by_description(void **state)
{
	struct result_metric *m;
	size_t n;

	n = parse_output("stress-ng-vm-splice.out", "stress-ng", "vm-splice", &m);
	assert_int_equal(n, 10);
	assert_true(value_of(m, n, "stress-ng.vm-splice.ops_per_sec", 0) == 218342.32);
	assert_true(value_of(m, n, "stress-ng.vm-splice.MB_per_sec", 0) == 7671.95);
	assert_true(value_of(m, n, "stress-ng.vm-splice.calls_per_sec", 0) == 436448.78);
	result_metrics_free(m, n);

	n = parse_output("stress-ng-pipe-switch.out", "stress-ng", "pipe", &m);
	assert_int_equal(n, 18);
	assert_true(value_of(m, n, "stress-ng.pipe.MB_per_sec_pipe_write_rate", 0) == 77.83);
	assert_true(value_of(m, n, "stress-ng.switch.nanosecs_per_context_switch_pipe_method", 0) == 11143.82);
	assert_true(value_of(m, n, "stress-ng.switch.ops", 0) == 179072);
	result_metrics_free(m, n);

	n = parse_output("stress-ng-vm-splice-sn.out", "stress-ng", "vm-splice", &m);
	assert_int_equal(n, 10);
	assert_true(value_of(m, n, "stress-ng.vm-splice.ops_per_sec", 0) == 1.46345e+05);
	assert_true(value_of(m, n, "stress-ng.vm-splice.cpu_used_per_instance", 0) == 1.0012e+02);
	assert_true(value_of(m, n, "stress-ng.vm-splice.MB_per_sec", 0) == 2.02e+04);
	result_metrics_free(m, n);
}

static void test_resultproto__stress_ng_output_through_the_channel_gives_the_same_metrics(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct result_metric *direct, *chan;
	struct result r;
	char *buf, **lines;
	size_t nr, nd, nc;

	lines = read_lines("stress-ng-vm-splice.out", &buf, &nr);
	strbuf_addstr(&sb, "KLAB1 hello 1\n");
	for (size_t i = 0; i < nr; i++)
		strbuf_addf(&sb, "KLAB1 out %s\n", lines[i]);
	strbuf_addstr(&sb, "KLAB1 exit exited 0\nKLAB1 done 1\n");
	parse_chunked(&r, sb.buf, sb.len, 1, 0);
	nd = result_parse_metrics("stress-ng", "vm-splice", lines, nr, &direct);
	nc = result_parse_metrics("stress-ng", "vm-splice", r.out, r.nr_out, &chan);
	assert_int_equal(nd, nc);
	for (size_t i = 0; i < nd; i++) {
		assert_string_equal(direct[i].name, chan[i].name);
		assert_true(direct[i].value == chan[i].value);
	}
	result_metrics_free(direct, nd);
	result_metrics_free(chan, nc);
	result_release(&r);
	strbuf_release(&sb);
	free(lines);
	free(buf);
}

static void test_resultproto__stress_ng_hostile_output_is_skipped_not_trusted(void **state)
{
	struct result_metric *m;
	size_t n;
	struct strbuf longdesc = STRBUF_INIT;
	char *text;

	n = parse_text("stress-ng",
		       "stress-ng: metrc: [1] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n"
		       "stress-ng: metrc: [1] nanrow  nan 3.00 0.99 3.71 2962.63 1893.62\n"
		       "stress-ng: metrc: [1] infrow  1 inf 0.99 3.71 2962.63 1893.62\n"
		       "stress-ng: metrc: [1] hugerow 1 1e999 0.99 3.71 2962.63 1893.62\n"
		       "stress-ng: metrc: [1] hexrow 0x10 3 0.99 3.71 2962.63 1893.62\n"
		       "stress-ng: metrc: [1] short 1 2 3 4 5\n"
		       "stress-ng: metrc: [1] seven 1 2 3 4 5 6 7\n"
		       "stress-ng: metrc: [1] <b>x</b> 1 2 3 4 5 6\n"
		       "stress-ng: metrc: [1] a\"b 1 2 3 4 5 6\n"
		       "stress-ng: metrc: [x] nopid 1 2 3 4 5 6\n"
		       "stress-ng: metrc: nopid 1 2 3 4 5 6\n"
		       "stress-ng: metrc: [1]nospace 1 2 3 4 5 6\n"
		       "stress-ng: info:  [1] info 1 2 3 4 5 6\n"
		       "stress-ng: metrc: [1] good 1 2 3 4 5 6\n"
		       "stress-ng: metrc: [1] good 9 9 9 9 9 9\n"
		       "stress-ng: metrc: [1] miscellaneous metrics:\n"
		       "stress-ng: metrc: [1] good nan MB per sec (geometic mean of 1 instances)\n"
		       "stress-ng: metrc: [1] good 1e400 MB per sec (geometic mean of 1 instances)\n"
		       "stress-ng: metrc: [1] good 12x MB per sec (geometic mean of 1 instances)\n"
		       "stress-ng: metrc: [1] good 5 (geometic mean of 1 instances)\n"
		       "stress-ng: metrc: [1] good 5\n"
		       "stress-ng: metrc: [1] good 6 <script>alert(\"x\")</script> & co (geometic mean of 1 instances)\n"
		       "stress-ng: metrc: [1] good 7 nanosecs per inb(0x80) op, 100% sure\n"
		       "stress-ng: metrc: [1] good 8 <script>alert(\"x\")</script> & co\n",
		       &m);
	assert_metrics_sane(m, n);
	assert_int_equal(n, 8);
	assert_true(value_of(m, n, "stress-ng.good.ops", 0) == 1);	/* the first row wins */
	assert_true(value_of(m, n, "stress-ng.good.ops_per_sec_usr_sys", 0) == 6);
	assert_true(value_of(m, n, "stress-ng.good.script_alert_x_script_co", 0) == 6);
	assert_true(value_of(m, n, "stress-ng.good.nanosecs_per_inb_0x80_op_100_sure", 0) == 7);
	result_metrics_free(m, n);

	/* a description that makes too long a name is dropped, not cut */
	for (int i = 0; i < 200; i++)
		strbuf_addstr(&longdesc, "word ");
	text = xstrfmt("stress-ng: metrc: [1] miscellaneous metrics:\nstress-ng: metrc: [1] x 1 %s\n", longdesc.buf);
	assert_int_equal(parse_text("stress-ng", text, &m), 0);
	assert_null(m);
	free(text);
	strbuf_release(&longdesc);

	/* nothing but noise */
	assert_int_equal(parse_text("stress-ng", "stress-ng: metrc: [\nstress-ng: metrc: [1\nstress-ng: metrc:", &m), 0);
	assert_int_equal(parse_text("stress-ng", "", &m), 0);
}

static void test_resultproto__will_it_scale_process_and_thread(void **state)
{
	struct result_metric *m;
	size_t n;

	n = parse_output("will-it-scale-process.out", "will-it-scale", "malloc1", &m);
	assert_int_equal(n, 3 * 5 + 3);
	assert_true(value_of(m, n, "will-it-scale.per_process_ops", 0) == 905691);
	assert_null(find(m, n, "will-it-scale.per_thread_ops", 0));
	/* LKP's: the sections' average totals a second, summed */
	assert_true(value_of(m, n, "will-it-scale.workload", 0) == 1811382);
	assert_true(value_of(m, n, "will-it-scale.average", 0) == 1811382);
	assert_true(value_of(m, n, "will-it-scale.ops_per_sec", 1) == 1813579);
	assert_true(value_of(m, n, "will-it-scale.ops_per_sec", 5) == 1811110);
	assert_true(value_of(m, n, "will-it-scale.min_task_ops", 2) == 900001);
	assert_true(value_of(m, n, "will-it-scale.max_task_ops", 3) == 911111);
	assert_null(find(m, n, "will-it-scale.ops_per_sec", 0));	/* warmup is not measured */
	result_metrics_free(m, n);

	n = parse_output("will-it-scale-thread.out", "will-it-scale", "page_fault1", &m);
	assert_int_equal(n, 3 * 3 + 3);
	assert_true(value_of(m, n, "will-it-scale.per_thread_ops", 0) == 501916);
	assert_true(value_of(m, n, "will-it-scale.workload", 0) == value_of(m, n, "will-it-scale.average", 0));
	result_metrics_free(m, n);
}

/* kbuild: the measured builds' means; the warm-up and make's own lines
 * ("| ...", even one shaped like an iteration) do not count. */
static void test_resultproto__kbuild_means_of_the_measured_builds(void **state)
{
	struct result_metric *m;
	size_t n;

	(void)state;
	n = parse_output("kbuild-tinyconfig.out", "kbuild", "tinyconfig", &m);
	assert_metrics_sane(m, n);
	assert_int_equal(n, 3 * 2 + 8);
	assert_true(fabs(value_of(m, n, "kbuild.buildtime_per_iteration", 0) - (61.50 + 60.10) / 2) < 1e-9);
	assert_true(fabs(value_of(m, n, "kbuild.user_time_per_iteration", 0) - (110.33 + 109.70) / 2) < 1e-9);
	assert_true(value_of(m, n, "kbuild.workload", 0) == 2);
	assert_true(fabs(value_of(m, n, "kbuild.user_time", 0) - (110.33 + 109.70) / 2) < 1e-9);
	assert_true(fabs(value_of(m, n, "kbuild.sys_time", 0) - (12.01 + 11.42) / 2) < 1e-9);
	assert_true(value_of(m, n, "kbuild.iterations", 0) == 2);
	assert_true(value_of(m, n, "kbuild.iteration_buildtime", 2) == 60.10);
	assert_null(find(m, n, "kbuild.iteration_buildtime", 9));
	result_metrics_free(m, n);
}

static void test_resultproto__kbuild_hostile_output_is_skipped(void **state)
{
	struct result_metric *m;
	size_t n;

	(void)state;
	/* nothing before the header, nothing malformed, no second copy */
	n = parse_text("kbuild", "iteration:1 real=5 user=1 sys=1\n"
				 "kbuild: config=tinyconfig\n"
				 "iteration:0 real=5 user=1 sys=1\n"
				 "iteration:-1 real=5 user=1 sys=1\n"
				 "iteration:100001 real=5 user=1 sys=1\n"
				 "iteration:1 real=0 user=1 sys=1\n"
				 "iteration:1 real=-5 user=1 sys=1\n"
				 "iteration:1 real=nan user=1 sys=1\n"
				 "iteration:1 real=1e999 user=1 sys=1\n"
				 "iteration:1 real=5 user=-1 sys=1\n"
				 "iteration:1 real=5 user=1\n"
				 "iteration:1 real=5 user=1 sys=1 extra\n"
				 "iteration:x real=5 user=1 sys=1\n"
				 "iteration:2 real=10 user=2 sys=3\n"
				 "iteration:2 real=1000 user=2000 sys=3000\n", &m);
	assert_metrics_sane(m, n);
	assert_int_equal(n, 3 + 8);
	assert_true(value_of(m, n, "kbuild.buildtime_per_iteration", 0) == 10);
	assert_true(value_of(m, n, "kbuild.sys_time", 0) == 3);
	assert_true(value_of(m, n, "kbuild.iterations", 0) == 1);
	result_metrics_free(m, n);
	/* a run whose builds all failed has no KPI at all */
	n = parse_text("kbuild", "kbuild: config=tinyconfig\nkbuild: error: make mm/ exited 2\n"
				 "kbuild: first error: mm/x.c:1:1: error: boom\n", &m);
	assert_int_equal(n, 0);
	result_metrics_free(m, n);
}

static void test_resultproto__will_it_scale_hostile_output_is_skipped(void **state)
{
	struct result_metric *m;
	size_t n;

	/* no header, or one with no known mode: nothing is trusted */
	assert_int_equal(parse_text("will-it-scale", "second:1 min:1 max:1 total:2\naverage:2\nper_task_average:1\n", &m), 0);
	assert_int_equal(parse_text("will-it-scale",
				    "will-it-scale: testcase=x mode=fork tasks=1\nsecond:1 min:1 max:1 total:2\n", &m), 0);

	n = parse_text("will-it-scale",
		       "second:9 min:1 max:1 total:1000\n"		/* before the header */
		       "will-it-scale: testcase=x mode=thread tasks=2 warmup=0 runtime=3\n"
		       "second:1 min:1 max:2 total:3\n"
		       "second:1 min:7 max:7 total:700\n"		/* a repeated second */
		       "second:2 min:nan max:2 total:3\n"
		       "second:3 min:1 max:2 total:inf\n"
		       "second:-4 min:1 max:2 total:3\n"
		       "second:x min:1 max:2 total:3\n"
		       "second:5 min:1 max:2\n"
		       "second:6 min:1 max:2 total:3 extra:1\n"
		       "second:7 max:2 min:1 total:3\n"
		       "second:99999999999999999999 min:1 max:2 total:3\n"
		       "second:8 min:1 max:2 total:1e308\n"
		       "second:10 min:1 max:2 total:1e308\n"
		       "average:\n"
		       "average:12abc\n"
		       "per_task_average:0x20\n"
		       "per_task_average:1.5\n"
		       "per_task_average:2.5\n"
		       "will-it-scale: testcase=y mode=process tasks=1\n",
		       &m);
	assert_metrics_sane(m, n);
	assert_int_equal(n, 3 * 3 + 1);
	assert_true(value_of(m, n, "will-it-scale.ops_per_sec", 1) == 3);
	assert_true(value_of(m, n, "will-it-scale.per_thread_ops", 0) == 1.5);
	assert_null(find(m, n, "will-it-scale.per_process_ops", 0));
	assert_null(find(m, n, "will-it-scale.average", 0));
	assert_null(find(m, n, "will-it-scale.ops_per_sec", 9));
	/* 3 + 1e308 + 1e308 is not finite: no workload rather than inf */
	assert_null(find(m, n, "will-it-scale.workload", 0));
	result_metrics_free(m, n);
}

static void test_resultproto__usemem_tasks_sum_to_throughput_and_workload(void **state)
{
	struct result_metric *m;
	size_t n;

	n = parse_output("vm-scalability-usemem.out", "vm-scalability", "anon-w-seq", &m);
	assert_int_equal(n, 3 * 2 + 3);
	assert_true(value_of(m, n, "vm-scalability.throughput", 0) == 3316022 + 3276687);
	/* LKP's: a run's middle task (of two, the second once sorted) */
	assert_true(value_of(m, n, "vm-scalability.median", 0) == 3316022);
	/* LKP's: kilobytes */
	assert_true(value_of(m, n, "vm-scalability.workload", 0) == 2 * 1048576.0);
	assert_true(value_of(m, n, "vm-scalability.task_throughput", 0) == 3316022);
	assert_true(value_of(m, n, "vm-scalability.task_throughput", 1) == 3276687);
	assert_true(value_of(m, n, "vm-scalability.task_usecs", 1) == 320011);
	assert_true(value_of(m, n, "vm-scalability.task_bytes", 0) == 1073741824);
	result_metrics_free(m, n);
}

static void test_resultproto__usemem_hostile_output_is_skipped(void **state)
{
	struct result_metric *m;
	size_t n;

	n = parse_text("vm-scalability",
		       "usemem: starting 2 tasks\n"
		       "1024 bytes / nan usecs = 1 KB/s\n"
		       "1024 bytes / 10 usecs = inf KB/s\n"
		       "1024 bytes / 10 usecs = 1e999 KB/s\n"
		       "-x bytes / 10 usecs = 1 KB/s\n"
		       "1024 bytes / 10 usecs = 1 MB/s\n"
		       "1024 bytes / 10 usecs = 1 KB/s trailing\n"
		       "1024 bytes 10 usecs = 1 KB/s\n"
		       "1024bytes / 10 usecs = 1 KB/s\n"
		       "\t2048  bytes /  20 usecs =  100 KB/s  \n"
		       "1e308 bytes / 1 usecs = 1 KB/s\n"
		       "1e308 bytes / 1 usecs = 1 KB/s\n",
		       &m);
	assert_metrics_sane(m, n);
	/* three tasks, the throughput and median; the workload overflowed and is dropped */
	assert_int_equal(n, 3 * 3 + 2);
	assert_true(value_of(m, n, "vm-scalability.task_bytes", 0) == 2048);
	assert_true(value_of(m, n, "vm-scalability.task_throughput", 0) == 100);
	assert_true(value_of(m, n, "vm-scalability.throughput", 0) == 102);
	assert_null(find(m, n, "vm-scalability.workload", 0));
	result_metrics_free(m, n);

	assert_int_equal(parse_text("vm-scalability", "nothing here\n", &m), 0);
	assert_null(m);
}

/* The driver's runs: throughput is their mean, not their sum. */
static void test_resultproto__vm_scalability_runs_are_averaged(void **state)
{
	struct result_metric *m;
	size_t n;

	(void)state;
	n = parse_text("vm-scalability", "vm-scalability: case=anon-w-seq tasks=2 runtime=1 mem=1 shm=1\n"
					 "./case-anon-w-seq\n"
					 "100 bytes / 1 usecs = 10 KB/s\n"
					 "100 bytes / 1 usecs = 30 KB/s\n"
					 "./case-anon-w-seq\n"
					 "100 bytes / 1 usecs = 20 KB/s\n"
					 "100 bytes / 1 usecs = 40 KB/s\n"
					 "faulted: 2048 bytes / 1 usecs = 7 KB/s\n",
		       &m);
	assert_metrics_sane(m, n);
	assert_true(value_of(m, n, "vm-scalability.throughput", 0) == (40 + 60) / 2.0);
	assert_true(value_of(m, n, "vm-scalability.median", 0) == (30 + 40) / 2.0);
	assert_true(value_of(m, n, "vm-scalability.workload", 0) == 400 / 1024.0);
	assert_true(value_of(m, n, "vm-scalability.throughput_fault", 0) == 7);
	assert_true(value_of(m, n, "vm-scalability.task_throughput", 3) == 40);
	result_metrics_free(m, n);
}

/* params.also: the first section is the job's, LKP's names; the others
 * under their own name. */
static void test_resultproto__vm_scalability_and_netperf_sections(void **state)
{
	struct result_metric *m;
	size_t n;

	(void)state;
	n = parse_text("vm-scalability", "vm-scalability: case=anon-w-seq tasks=1 runtime=1 mem=1 shm=1\n"
					 "./case-anon-w-seq\n"
					 "100 bytes / 1 usecs = 10 KB/s\n"
					 "vm-scalability: case=lru-shm tasks=1 runtime=1 mem=1 shm=1\n"
					 "./case-lru-shm\n"
					 "100 bytes / 1 usecs = 20 KB/s\n"
					 "./case-lru-shm\n"
					 "100 bytes / 1 usecs = 40 KB/s\n"
					 "vm-scalability: case=../x tasks=1\n"
					 "100 bytes / 1 usecs = 80 KB/s\n",
		       &m);
	assert_metrics_sane(m, n);
	assert_true(value_of(m, n, "vm-scalability.throughput", 0) == 10);
	assert_true(value_of(m, n, "vm-scalability.lru-shm.throughput", 0) == 30);
	assert_true(value_of(m, n, "vm-scalability.workload", 0) == 100 / 1024.0);
	assert_null(find(m, n, "vm-scalability.task_throughput", 1));
	result_metrics_free(m, n);
	n = parse_text("netperf", "klab-netperf: test=TCP_RR clients=1 runtime=1 send_size=1 (x)\n"
				  "client:0 elapsed:1.000 tps:100 transactions:100\n"
				  "klab-netperf: test=TCP_STREAM clients=1 runtime=1 send_size=1000 (x)\n"
				  "client:0 elapsed:1.000 send_Mbps:8 recv_Mbps:8 bytes:1000000\n"
				  "klab-netperf: test=SCTP_RR clients=1 runtime=1 send_size=1 (x)\n"
				  "client:0 elapsed:1.000 tps:7 transactions:7\n",
		       &m);
	assert_metrics_sane(m, n);
	assert_true(value_of(m, n, "netperf.Throughput_tps", 0) == 100);
	assert_true(value_of(m, n, "netperf.workload", 0) == 100);
	assert_true(value_of(m, n, "netperf.TCP_STREAM.Throughput_Mbps", 0) == 8);
	assert_null(find(m, n, "netperf.Throughput_Mbps", 0));
	assert_null(find(m, n, "netperf.SCTP_RR.Throughput_tps", 0));
	result_metrics_free(m, n);
}

/* will-it-scale's both mode and params.also: LKP's names for the job's
 * testcase, the others under their own name. */
static void test_resultproto__will_it_scale_both_and_also(void **state)
{
	struct result_metric *m;
	size_t n;

	(void)state;
	n = parse_output("will-it-scale-both-also.out", "will-it-scale", "page_fault2", &m);
	assert_metrics_sane(m, n);
	assert_true(value_of(m, n, "will-it-scale.per_process_ops", 0) == 13481);
	assert_true(value_of(m, n, "will-it-scale.per_thread_ops", 0) == 87861);
	assert_true(value_of(m, n, "will-it-scale.workload", 0) == 26962 + 175722);
	assert_true(value_of(m, n, "will-it-scale.average", 0) == 26962);
	assert_true(value_of(m, n, "will-it-scale.ops_per_sec", 2) == 33195);
	assert_true(value_of(m, n, "will-it-scale.pipe1.per_process_ops", 0) == 306032);
	assert_true(value_of(m, n, "will-it-scale.pipe1.per_thread_ops", 0) == 274980);
	assert_null(find(m, n, "will-it-scale.pipe1.per_process_ops", 1));
	result_metrics_free(m, n);
	/* a section header with a testcase that cannot be a name part */
	n = parse_text("will-it-scale", "will-it-scale: testcase=malloc1 mode=process tasks=1\n"
					"per_task_average:5\n"
					"will-it-scale: testcase=../x mode=thread tasks=1\n"
					"per_task_average:6\n",
		       &m);
	assert_int_equal(n, 1);
	assert_true(value_of(m, n, "will-it-scale.per_process_ops", 0) == 5);
	result_metrics_free(m, n);
}

/* A line of more words than the tokenizer keeps is skipped, not read
 * past its words (the fuzzer's find: hackbench's last word). */
static void test_resultproto__lines_of_too_many_words_are_skipped(void **state)
{
	static const char *const suites[] = { "hackbench", "perf-bench-futex", "perf-bench-sched-pipe", "netperf",
					      "vm-scalability", "perf-bench-mem", "perf-bench-syscall" };
	struct result_metric *m;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		assert_int_equal(parse_text(suites[i], "Running a b c d e f g h i j k l m n o p q r s t u v (== 40 tasks)\n"
						       "Avg per-thread latency a b c d e f g h i j k l m n o p q in 1 ms (x)\n"
						       "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 ops/sec\n",
					    &m),
				 0);
		assert_null(m);
	}
}

static void test_resultproto__unknown_suite_gives_no_metrics(void **state)
{
	char *lines[] = { "stress-ng: metrc: [1] good 1 2 3 4 5 6", "second:1 min:1 max:1 total:1" };
	struct result_metric *m = (struct result_metric *)1;

	assert_int_equal(result_parse_metrics("lmbench", "x", lines, 2, &m), 0);
	assert_null(m);
	m = (struct result_metric *)1;
	assert_int_equal(result_parse_metrics(NULL, "x", lines, 2, &m), 0);
	assert_null(m);
	assert_int_equal(result_parse_metrics("stress-ng", "x", NULL, 0, &m), 0);
	assert_null(m);
	result_metrics_free(NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resultproto__full_valid_stream_is_parsed),
		cmocka_unit_test(test_resultproto__crlf_line_ends_are_accepted),
		cmocka_unit_test(test_resultproto__new_monitors_carry_lkp_names),
		cmocka_unit_test(test_resultproto__any_chunking_gives_the_same_result),
		cmocka_unit_test(test_resultproto__line_longer_than_limit_is_cut_and_counted),
		cmocka_unit_test(test_resultproto__line_of_exactly_the_limit_is_whole),
		cmocka_unit_test(test_resultproto__cut_record_with_numbers_is_bad),
		cmocka_unit_test(test_resultproto__cut_inside_utf8_keeps_the_whole_characters),
		cmocka_unit_test(test_resultproto__binary_junk_makes_a_record_bad_and_other_lines_ignored),
		cmocka_unit_test(test_resultproto__done_before_hello_is_bad),
		cmocka_unit_test(test_resultproto__second_done_is_bad_and_later_records_ignored),
		cmocka_unit_test(test_resultproto__second_hello_is_bad_not_a_reset),
		cmocka_unit_test(test_resultproto__exit_with_junk_numbers_is_bad),
		cmocka_unit_test(test_resultproto__exit_statuses_and_negative_code_parse),
		cmocka_unit_test(test_resultproto__mon_with_nan_or_junk_number_is_bad),
		cmocka_unit_test(test_resultproto__mon_numbers_in_every_decimal_form_parse),
		cmocka_unit_test(test_resultproto__names_with_spaces_quotes_html_are_bad),
		cmocka_unit_test(test_resultproto__repeated_env_key_is_bad),
		cmocka_unit_test(test_resultproto__unknown_types_and_foreign_lines_are_ignored),
		cmocka_unit_test(test_resultproto__missing_done_leaves_done_unset),
		cmocka_unit_test(test_resultproto__partial_last_line_is_parsed_at_finish),
		cmocka_unit_test(test_resultproto__caps_drop_and_count_what_did_not_fit),
		cmocka_unit_test(test_resultproto__zeroed_result_is_not_capped_to_nothing),
		cmocka_unit_test(test_resultproto__default_out_cap_holds_against_a_flood),
		cmocka_unit_test(test_resultproto__every_data_file_gives_its_golden_metrics),
		cmocka_unit_test(test_resultproto__stress_ng_table_row_gives_every_column),
		cmocka_unit_test(test_resultproto__stress_ng_miscellaneous_metrics_are_named_by_description),
		cmocka_unit_test(test_resultproto__stress_ng_output_through_the_channel_gives_the_same_metrics),
		cmocka_unit_test(test_resultproto__stress_ng_hostile_output_is_skipped_not_trusted),
		cmocka_unit_test(test_resultproto__will_it_scale_process_and_thread),
		cmocka_unit_test(test_resultproto__will_it_scale_hostile_output_is_skipped),
		cmocka_unit_test(test_resultproto__usemem_tasks_sum_to_throughput_and_workload),
		cmocka_unit_test(test_resultproto__usemem_hostile_output_is_skipped),
		cmocka_unit_test(test_resultproto__kbuild_means_of_the_measured_builds),
		cmocka_unit_test(test_resultproto__kbuild_hostile_output_is_skipped),
		cmocka_unit_test(test_resultproto__vm_scalability_runs_are_averaged),
		cmocka_unit_test(test_resultproto__will_it_scale_both_and_also),
		cmocka_unit_test(test_resultproto__vm_scalability_and_netperf_sections),
		cmocka_unit_test(test_resultproto__lines_of_too_many_words_are_skipped),
		cmocka_unit_test(test_resultproto__unknown_suite_gives_no_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
