/* libFuzzer harness for the command-line parser (orchestrator/util/
 * parse-options.c): argv is hostile input.  The input is NUL-separated
 * words: the first is rendered as a synopsis form against the rows (plain
 * and man(7)), the rest are parsed as argv, permuting or stopping at the
 * first operand as the first byte says.  Built and run by run-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-options.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct vals {
	const char *repo, *bad;
	struct opt_strings goods, paths;
	unsigned long slots, jobs;
	int flag, quiet, check;
};

static int cb(const struct opt *o, const char *arg)
{
	(void)o;
	return strlen(arg) % 2 ? error("--hook: odd") : 0;
}

static FILE *null_out;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct opt_usage usage = { "fuzz", NULL, "What it does.", "FUZZ" };
	char *copy = malloc(size + 1), *argv[MAX_WORDS + 2];
	struct strbuf sb = STRBUF_INIT;
	struct vals v;
	const char *forms[2] = { NULL, NULL };
	struct opt_usage u = usage;
	int argc = 0, n;
	size_t at = 0;
	struct opt opts[] = {
		OPT_STRING(0, "repo", &v.repo, "PATH", "the repository"),
		OPT_LIST(0, "good", &v.goods, "REV", "a good revision"),
		OPT_STRING_F(0, "bad", &v.bad, "REV", "the bad one", OPT_ONCE),
		OPT_UINT(0, "slots", &v.slots, "K", "commits at once", 1, 4),
		OPT_UINT_R('j', NULL, &v.jobs, "N", "jobs", 0, (unsigned long)-1, "any number"),
		OPT_BOOL('f', "flag", &v.flag, "a flag"),
		OPT_BOOL('q', "quiet", &v.quiet, "quiet"),
		OPT_GROUP("more"),
		OPT_LIST_F(0, "paths", &v.paths, "P", "paths", OPT_GREEDY),
		OPT_SET_INT(0, "no-check", &v.check, "no check", 0),
		OPT_CALLBACK(0, "hook", &v, "X|y", "a callback", cb),
		OPT_STRING_F(0, "hidden", &v.repo, "S", "hidden", OPT_HIDDEN),
		OPT_END()
	};

	if (!null_out) {
		null_out = fopen("/dev/null", "w");
		/* --help prints on stdout */
		if (!freopen("/dev/null", "w", stdout))
			abort();
		error_hold(1);
	}
	memset(&v, 0, sizeof(v));
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = "fuzz";
	while (at <= size && argc <= MAX_WORDS) {
		argv[argc++] = copy + at;
		at += strlen(copy + at) + 1;
	}
	argv[argc] = NULL;
	/* the first word as a synopsis form */
	forms[0] = argv[1];
	u.forms = forms;
	usage_render_form(&sb, &u, opts, 0, 0);
	strbuf_reset(&sb);
	usage_render_form(&sb, &u, opts, 0, 1);
	strbuf_release(&sb);
	usage_with_options(null_out, &u, opts);
	/* the rest as argv (argv[1] becomes the command's name) */
	n = parse_options(argc - 1, argv + 1, &usage, opts, size && (data[0] & 1) ? PARSE_OPT_STOP_AT_NON_OPTION : 0);
	if (n >= 0)
		for (int i = 0; i < n; i++)
			if (!argv[1 + i])
				abort();	/* the operands are argv's own words */
	opt_strings_release(&v.goods);
	opt_strings_release(&v.paths);
	free(copy);
	return 0;
}
