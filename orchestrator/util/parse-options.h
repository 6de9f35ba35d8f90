/* Command-line options declared as a table, in the spirit of git's
 * parse-options: one array of rows per command, from which the parsing,
 * its errors, `--help` and the man page's synopsis all come. */
#ifndef KLAB_PARSE_OPTIONS_H
#define KLAB_PARSE_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "util.h"

struct strbuf;

enum opt_type {
	OPT_T_END,
	OPT_T_GROUP,		/* a heading in --help */
	OPT_T_BOOL,		/* int *: set to 1 */
	OPT_T_SET_INT,		/* int *: set to defval */
	OPT_T_STRING,		/* const char **: the last one given */
	OPT_T_LIST,		/* struct opt_strings *: every one given */
	OPT_T_UINT,		/* unsigned long *: digits, min to max */
	OPT_T_CALLBACK		/* cb(row, value): 0, or -1 after error() */
};

enum opt_flags {
	OPT_HIDDEN = 1 << 0,	/* parsed, never shown (what klab passes itself) */
	OPT_GREEDY = 1 << 1,	/* a list that also takes the words after its value, up to the next option */
	OPT_ONCE = 1 << 2	/* given twice is a usage error */
};

/* A repeatable string option's values, in the order given (the strings
 * are argv's; release frees only the array). */
struct opt_strings {
	const char **v;
	size_t nr, alloc;
};
void opt_strings_add(struct opt_strings *s, const char *v);
void opt_strings_release(struct opt_strings *s);

struct opt {
	enum opt_type type;
	int short_name;			/* 0: none */
	const char *long_name;		/* NULL: none */
	void *value;
	const char *argh;		/* the value's name in help ("PATH"); NULL: takes none */
	const char *help;		/* one line (a group's heading) */
	unsigned flags;
	long defval;			/* OPT_T_SET_INT */
	unsigned long min, max;		/* OPT_T_UINT */
	const char *range;		/* OPT_T_UINT: what errors say it takes; NULL: "a number from MIN to MAX" */
	int (*cb)(const struct opt *o, const char *arg);
};

/* (type)0 against v: a compile error (-Werror) when v is of another type */
#define OPT_PTR(type, v) ((void *)(1 ? (v) : (type)0))

#define OPT_END() { .type = OPT_T_END }
#define OPT_GROUP(h) { .type = OPT_T_GROUP, .help = (h) }
#define OPT_BOOL(s, l, v, h) \
	{ .type = OPT_T_BOOL, .short_name = (s), .long_name = (l), .value = OPT_PTR(int *, v), .help = (h) }
#define OPT_SET_INT(s, l, v, h, i)                                                                   \
	{ .type = OPT_T_SET_INT, .short_name = (s), .long_name = (l), .value = OPT_PTR(int *, v), .help = (h), \
	  .defval = (i) }
#define OPT_STRING_F(s, l, v, a, h, f)                                                                    \
	{ .type = OPT_T_STRING, .short_name = (s), .long_name = (l), .value = OPT_PTR(const char **, v), \
	  .argh = (a), .help = (h), .flags = (f) }
#define OPT_STRING(s, l, v, a, h) OPT_STRING_F(s, l, v, a, h, 0)
#define OPT_LIST_F(s, l, v, a, h, f)                                                                             \
	{ .type = OPT_T_LIST, .short_name = (s), .long_name = (l), .value = OPT_PTR(struct opt_strings *, v), \
	  .argh = (a), .help = (h), .flags = (f) }
#define OPT_LIST(s, l, v, a, h) OPT_LIST_F(s, l, v, a, h, 0)
/* a number from lo to hi; r: what the error says it takes (NULL: the
 * bounds); f: flags */
#define OPT_UINT_X(s, l, v, a, h, lo, hi, r, f)                                                              \
	{ .type = OPT_T_UINT, .short_name = (s), .long_name = (l), .value = OPT_PTR(unsigned long *, v),    \
	  .argh = (a), .help = (h), .min = (lo), .max = (hi), .range = (r), .flags = (f) }
#define OPT_UINT_R(s, l, v, a, h, lo, hi, r) OPT_UINT_X(s, l, v, a, h, lo, hi, r, 0)
#define OPT_UINT(s, l, v, a, h, lo, hi) OPT_UINT_X(s, l, v, a, h, lo, hi, NULL, 0)
#define OPT_CALLBACK_F(s, l, v, a, h, fn, f)                                                                 \
	{ .type = OPT_T_CALLBACK, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), .help = (h), \
	  .cb = (fn), .flags = (f) }
#define OPT_CALLBACK(s, l, v, a, h, fn) OPT_CALLBACK_F(s, l, v, a, h, fn, 0)

/* What a command's --help says around its rows.  A form is a synopsis
 * line after "klab NAME": each option it names (--repo, -j, [--paths...])
 * is looked up in the rows and gets its value's name from there; the
 * rest (operands, brackets, "[config options]") is copied.  No forms:
 * one, every row in table order. */
struct opt_usage {
	const char *name;		/* "bisect start" */
	const char *const *forms;	/* NULL-terminated, or NULL */
	const char *what;		/* a line or two on what it does */
	const char *more;		/* klab(1)'s sections with the details: "BISECT" */
};

enum {
	PARSE_OPT_STOP_AT_NON_OPTION = 1 << 0	/* the first operand ends the options (a command to run) */
};
enum {
	PARSE_OPT_ERROR = -1,	/* a usage error was said */
	PARSE_OPT_HELP = -2	/* help was printed on stdout */
};

/* Parse argv[1..argc) (argv[0] names the command) against opts: options
 * and operands in any order (stopping at the first operand with
 * PARSE_OPT_STOP_AT_NON_OPTION), "--" ending the options, --long=value
 * and --long value, -s value and -svalue, unambiguous prefixes of long
 * names; "-" and "-1" (no option is a digit) are operands.  The operands end up in argv[0..n), in order, argv[n] NULL; n
 * is returned.  -h/--help prints the help and returns PARSE_OPT_HELP; a
 * mistake is one error line ("klab: error: unknown option '--frob' (see
 * 'klab bisect start --help')") and PARSE_OPT_ERROR. */
int parse_options(int argc, char **argv, const struct opt_usage *u, const struct opt *opts, unsigned flags);
/* The exit status for parse_options' negative returns. */
static inline int parse_options_exit(int rc)
{
	return rc == PARSE_OPT_HELP ? EXIT_OK : EXIT_USAGE;
}

/* What -h/--help prints, process-wide (klab help sets it): */
enum opt_help_mode {
	OPT_HELP_FULL,		/* usage lines, what, one line per option, more */
	OPT_HELP_USAGE,		/* only the usage lines ("usage:" first, "   or:" after) */
	OPT_HELP_SYNOPSIS,	/* "klab NAME FORM", one line each */
	OPT_HELP_MAN		/* the same as man(7) SYNOPSIS lines */
};
void parse_options_help_mode(enum opt_help_mode mode);
enum opt_help_mode parse_options_current_help_mode(void);

/* The help of a command, as --help prints it. */
void usage_with_options(FILE *f, const struct opt_usage *u, const struct opt *opts);
/* Its usage lines only ("usage: klab ...", "   or: ..."). */
void usage_lines(FILE *f, const struct opt_usage *u, const struct opt *opts);
/* "klab NAME FORM" as the help mode says, for a command without a table
 * (klab submit's `bisect ARGS...`): in OPT_HELP_FULL as a usage line. */
void usage_print_form(FILE *f, const char *name, const char *form);
/* Form i of u (0-based) rendered after "klab NAME " into out: plain,
 * or as man(7) text.  -1 after error() when the form names an option
 * opts does not have (or i is past the last form). */
int usage_render_form(struct strbuf *out, const struct opt_usage *u, const struct opt *opts, size_t i, int man);
/* error("MSG (see 'klab NAME --help')"); returns EXIT_USAGE. */
int usage_error(const struct opt_usage *u, const char *fmt, ...) KLAB_PRINTF(2, 3);

/* A decimal number from min to max, digits only: 0, -1 when s is not
 * digits, -2 when it is out of range (nothing printed). */
int opt_number(const char *s, unsigned long min, unsigned long max, unsigned long *out);

#endif
