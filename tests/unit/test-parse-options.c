/* Unit tests of util/parse-options: options and operands in any order,
 * "--", --opt=value, bounds, unknown and ambiguous options, one error
 * line each, and the help and synopsis made from the rows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/parse-options.h"
#include "util/strbuf.h"
#include "util/util.h"

/* What the test table fills. */
struct vals {
	const char *repo, *bad;
	struct opt_strings goods, paths;
	unsigned long slots, jobs;
	int first_parent, quiet, check;
	const char *cb_seen;
};

static int cb_refuse_x(const struct opt *o, const char *arg)
{
	struct vals *v = o->value;

	if (!strcmp(arg, "x"))
		return error("--hook: 'x' refused");
	v->cb_seen = arg;
	return 0;
}

static const char *const forms[] = { "--repo --good... [--slots] [-j] [--paths...] -- CMD [ARGS...]", NULL };
static const struct opt_usage usage = { "t sub", forms, "What it does.", "T" };

#define ROWS(v)                                                                                         \
	struct opt opts[] = {                                                                            \
		OPT_STRING(0, "repo", &(v)->repo, "PATH", "the repository"),                            \
		OPT_LIST(0, "good", &(v)->goods, "REV", "a good revision (repeatable)"),               \
		OPT_STRING_F(0, "bad", &(v)->bad, "REV", "the bad one", OPT_ONCE),                    \
		OPT_UINT(0, "slots", &(v)->slots, "K", "commits at once", 1, 4),                        \
		OPT_UINT('j', NULL, &(v)->jobs, "N", "parallel jobs", 1, 1024),                         \
		OPT_BOOL('f', "first-parent", &(v)->first_parent, "first parents only"),               \
		OPT_BOOL('q', "quiet", &(v)->quiet, "no progress"),                                     \
		OPT_GROUP("more"),                                                                       \
		OPT_LIST_F(0, "paths", &(v)->paths, "P", "paths (P Q ...)", OPT_GREEDY),               \
		OPT_SET_INT(0, "no-check", &(v)->check, "no check", 0),                                 \
		OPT_CALLBACK(0, "hook", v, "X", "a callback", cb_refuse_x),                              \
		OPT_STRING_F(0, "secret", &(v)->repo, "S", "hidden", OPT_HIDDEN),                      \
		OPT_END()                                                                                \
	}

/* parse a NULL-terminated list; argv kept in *out for the operands */
static int parse(struct vals *v, char ***out, unsigned flags, ...)
{
	static char *argv[64];
	va_list ap;
	int argc = 0;
	const char *a;
	ROWS(v);

	argv[argc++] = "sub";
	va_start(ap, flags);
	while ((a = va_arg(ap, const char *)))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	*out = argv;
	return parse_options(argc, argv, &usage, opts, flags);
}

static void vals_init(struct vals *v)
{
	memset(v, 0, sizeof(*v));
	v->check = 1;
}

static void vals_release(struct vals *v)
{
	opt_strings_release(&v->goods);
	opt_strings_release(&v->paths);
}

static void test_parse_options__operands_and_options_in_any_order(void **state)
{
	struct vals v;
	char **argv;
	int n;

	(void)state;
	vals_init(&v);
	n = parse(&v, &argv, 0, "FILE", "--repo", "r", "OTHER", "--good=g1", "-q", "--good", "g2", "LAST", NULL);
	assert_int_equal(n, 3);
	assert_string_equal(argv[0], "FILE");
	assert_string_equal(argv[1], "OTHER");
	assert_string_equal(argv[2], "LAST");
	assert_null(argv[3]);
	assert_string_equal(v.repo, "r");
	assert_int_equal(v.goods.nr, 2);
	assert_string_equal(v.goods.v[0], "g1");
	assert_string_equal(v.goods.v[1], "g2");
	assert_int_equal(v.quiet, 1);
	vals_release(&v);
}

static void test_parse_options__dashdash_ends_options(void **state)
{
	struct vals v;
	char **argv;
	int n;

	(void)state;
	vals_init(&v);
	n = parse(&v, &argv, 0, "--repo", "r", "--", "./test.sh", "--repo", "x", "-q", NULL);
	assert_int_equal(n, 4);
	assert_string_equal(argv[0], "./test.sh");
	assert_string_equal(argv[1], "--repo");
	assert_string_equal(argv[3], "-q");
	assert_string_equal(v.repo, "r");
	assert_int_equal(v.quiet, 0);
	vals_release(&v);
	/* stopping at the first operand: the command's options are its own */
	vals_init(&v);
	n = parse(&v, &argv, PARSE_OPT_STOP_AT_NON_OPTION, "-q", "./test.sh", "-f", "--repo", "x", NULL);
	assert_int_equal(n, 4);
	assert_string_equal(argv[0], "./test.sh");
	assert_string_equal(argv[1], "-f");
	assert_int_equal(v.first_parent, 0);
	assert_null(v.repo);
	vals_release(&v);
}

static void test_parse_options__values_short_and_long_forms(void **state)
{
	struct vals v;
	char **argv;
	int n;

	(void)state;
	vals_init(&v);
	n = parse(&v, &argv, 0, "-j4", "--slots=2", "-fq", "--no-check", "--good=--all", "-", "-1", NULL);
	assert_int_equal(n, 2);
	assert_string_equal(argv[0], "-");	/* stdin */
	assert_string_equal(argv[1], "-1");	/* no option is a digit */
	assert_int_equal(v.jobs, 4);
	assert_int_equal(v.slots, 2);
	assert_int_equal(v.first_parent, 1);
	assert_int_equal(v.quiet, 1);
	assert_int_equal(v.check, 0);
	assert_string_equal(v.goods.v[0], "--all");
	vals_release(&v);
	vals_init(&v);
	/* a value is the next argument, whatever it looks like; a unique prefix will do */
	n = parse(&v, &argv, 0, "-j", "8", "--rep", "-x", "--first", NULL);
	assert_int_equal(n, 0);
	assert_int_equal(v.jobs, 8);
	assert_string_equal(v.repo, "-x");
	assert_int_equal(v.first_parent, 1);
	vals_release(&v);
}

static void test_parse_options__greedy_list_takes_words_up_to_an_option(void **state)
{
	struct vals v;
	char **argv;
	int n;

	(void)state;
	vals_init(&v);
	n = parse(&v, &argv, PARSE_OPT_STOP_AT_NON_OPTION, "--paths", "a", "b", "c", "-q", "--", "cmd", NULL);
	assert_int_equal(n, 1);
	assert_int_equal(v.paths.nr, 3);
	assert_string_equal(v.paths.v[2], "c");
	assert_int_equal(v.quiet, 1);
	vals_release(&v);
}

/* a refused argv: PARSE_OPT_ERROR and the one line error() said */
static void assert_refused(const char *want, ...)
{
	static char *argv[32];
	struct vals v;
	va_list ap;
	int argc = 0, held;
	const char *a;
	ROWS(&v);

	vals_init(&v);
	argv[argc++] = "sub";
	va_start(ap, want);
	while ((a = va_arg(ap, const char *)))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	held = error_hold(1);
	assert_int_equal(parse_options(argc, argv, &usage, opts, 0), PARSE_OPT_ERROR);
	error_hold(held);
	if (!strstr(error_last(), want))
		fail_msg("error '%s' does not say '%s'", error_last(), want);
	assert_null(strchr(error_last(), '\n'));
	vals_release(&v);
}

static void test_parse_options__mistakes_are_one_clear_line(void **state)
{
	(void)state;
	assert_refused("unknown option '--frob' (see 'klab t sub --help')", "x", "--frob", NULL);
	assert_refused("unknown option '-z'", "-z", NULL);
	assert_refused("--repo needs a value (PATH)", "--repo", NULL);
	assert_refused("-j needs a value", "-j", NULL);
	assert_refused("--quiet takes no value", "--quiet=yes", NULL);
	assert_refused("ambiguous option '--s'", "--s", "1", NULL);
	assert_refused("only one --bad is allowed", "--bad", "a", "--bad", "b", NULL);
	assert_refused("--hook: 'x' refused", "--hook", "x", NULL);
	/* argv is echoed with control characters and bidi overrides as '?' */
	assert_refused("unknown option '--a?b?c'", "--a\nb\xe2\x80\xae" "c", NULL);
}

static void test_parse_options__numbers_have_bounds(void **state)
{
	unsigned long v;

	(void)state;
	assert_refused("--slots takes a number from 1 to 4: 0 is out of range", "--slots", "0", NULL);
	assert_refused("--slots takes a number from 1 to 4: 5 is out of range", "--slots=5", NULL);
	assert_refused("--slots takes a number from 1 to 4: 99999999999999999999999 is out of range", "--slots",
		       "99999999999999999999999", NULL);
	assert_refused("--slots takes a number from 1 to 4, not '-1'", "--slots", "-1", NULL);
	assert_refused("--slots takes a number from 1 to 4, not ' 2'", "--slots", " 2", NULL);
	assert_refused("-j takes a number from 1 to 1024, not '0x10'", "-j0x10", NULL);
	assert_int_equal(opt_number("18446744073709551615", 0, (unsigned long)-1, &v), 0);
	assert_int_equal(opt_number("18446744073709551616", 0, (unsigned long)-1, &v), -2);
	assert_int_equal(opt_number("", 0, 10, &v), -1);
	assert_int_equal(opt_number("+1", 0, 10, &v), -1);
	assert_int_equal(opt_number("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
}

/* What fn prints on stdout. */
static char *stdout_of(void (*fn)(void *), void *data)
{
	char path[] = "/tmp/klab-test-po-XXXXXX";
	int fd = mkstemp(path), saved = dup(1);
	char *text = NULL;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	dup2(fd, 1);
	fn(data);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	assert_int_equal(read_file(path, 1 << 20, &text, NULL), 0);
	unlink(path);
	return text;
}

static void call_help(void *data)
{
	struct vals v;
	char *argv[] = { "sub", "--repo", "r", "--help", NULL };
	ROWS(&v);

	vals_init(&v);
	*(int *)data = parse_options(4, argv, &usage, opts, 0);
	vals_release(&v);
}

static void test_parse_options__help_comes_from_the_rows(void **state)
{
	int rc = 0;
	char *text;

	(void)state;
	text = stdout_of(call_help, &rc);
	assert_int_equal(rc, PARSE_OPT_HELP);
	assert_int_equal(parse_options_exit(rc), EXIT_OK);
	/* wrapped at 79 columns, never between "--" and the command */
	assert_non_null(strstr(text, "usage: klab t sub --repo PATH --good REV... [--slots K] [-j N] [--paths P...]\n"
				     "                  -- CMD [ARGS...]\n"));
	assert_non_null(strstr(text, "\nWhat it does.\n"));
	assert_non_null(strstr(text, "  --repo PATH "));
	assert_non_null(strstr(text, "  -f, --first-parent "));
	assert_non_null(strstr(text, "  -j N "));
	assert_non_null(strstr(text, "\nmore:\n"));
	assert_null(strstr(text, "--secret"));	/* hidden */
	assert_non_null(strstr(text, "\nMore in klab(1): T.\n"));
	free(text);
	/* in synopsis mode --help prints the forms, one line each */
	parse_options_help_mode(OPT_HELP_SYNOPSIS);
	text = stdout_of(call_help, &rc);
	parse_options_help_mode(OPT_HELP_FULL);
	assert_string_equal(text, "klab t sub --repo PATH --good REV... [--slots K] [-j N] [--paths P...] -- CMD [ARGS...]\n");
	free(text);
}

static void test_parse_options__synopsis_forms_name_only_real_options(void **state)
{
	static const char *const bad_forms[] = { "--repo [--nosuch]", NULL };
	static const struct opt_usage bad = { "t bad", bad_forms, NULL, NULL };
	struct strbuf sb = STRBUF_INIT;
	struct vals v;
	int held;
	ROWS(&v);

	(void)state;
	vals_init(&v);
	assert_int_equal(usage_render_form(&sb, &usage, opts, 0, 1), 0);
	assert_string_equal(sb.buf, "\\fB\\-\\-repo\\fR \\fIPATH\\fR \\fB\\-\\-good\\fR \\fIREV\\fR... "
				    "[\\fB\\-\\-slots\\fR \\fIK\\fR] [\\fB\\-j\\fR \\fIN\\fR] "
				    "[\\fB\\-\\-paths\\fR \\fIP\\fR...] \\fB\\-\\-\\fR \\fICMD\\fR [\\fIARGS\\fR...]");
	strbuf_reset(&sb);
	held = error_hold(1);
	assert_int_equal(usage_render_form(&sb, &bad, opts, 0, 0), -1);
	assert_non_null(strstr(error_last(), "the synopsis of 'klab t bad' names '--nosuch'"));
	assert_int_equal(usage_render_form(&sb, &usage, opts, 1, 0), -1);
	error_hold(held);
	assert_non_null(strstr(error_last(), "has no synopsis form 2"));
	strbuf_release(&sb);
	vals_release(&v);
}

static void test_parse_options__no_forms_lists_every_visible_row(void **state)
{
	static const struct opt_usage plain = { "t plain", NULL, NULL, NULL };
	struct strbuf sb = STRBUF_INIT;
	struct vals v;
	ROWS(&v);

	(void)state;
	vals_init(&v);
	assert_int_equal(usage_render_form(&sb, &plain, opts, 0, 0), 0);
	assert_string_equal(sb.buf, "[--repo PATH] [--good REV...] [--bad REV] [--slots K] [-j N] [--first-parent] "
				    "[--quiet] [--paths P...] [--no-check] [--hook X]");
	strbuf_release(&sb);
	vals_release(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_options__operands_and_options_in_any_order),
		cmocka_unit_test(test_parse_options__dashdash_ends_options),
		cmocka_unit_test(test_parse_options__values_short_and_long_forms),
		cmocka_unit_test(test_parse_options__greedy_list_takes_words_up_to_an_option),
		cmocka_unit_test(test_parse_options__mistakes_are_one_clear_line),
		cmocka_unit_test(test_parse_options__numbers_have_bounds),
		cmocka_unit_test(test_parse_options__help_comes_from_the_rows),
		cmocka_unit_test(test_parse_options__synopsis_forms_name_only_real_options),
		cmocka_unit_test(test_parse_options__no_forms_lists_every_visible_row),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
