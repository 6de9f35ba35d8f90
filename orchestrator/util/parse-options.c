/* Option tables: parsing argv against a command's rows, and the help and
 * synopsis text made from the same rows (parse-options.h).  argv is
 * hostile input: every value is echoed through error(), which shows
 * control characters and bidirectional overrides as '?'. */
#include "parse-options.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HELP_WIDTH 79
#define HELP_COLUMN 26	/* where an option's help starts, at most */

static enum opt_help_mode help_mode = OPT_HELP_FULL;
static unsigned help_lines;	/* usage entries printed since the mode was set */

void opt_strings_add(struct opt_strings *s, const char *v)
{
	ALLOC_GROW(s->v, s->nr + 1, s->alloc);
	s->v[s->nr++] = v;
}

void opt_strings_release(struct opt_strings *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int opt_number(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return -1;
	for (const char *p = s; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE || v > max || v < min)
		return -2;
	*out = (unsigned long)v;
	return 0;
}

/* ---- the text of --help ------------------------------------------------- */

void parse_options_help_mode(enum opt_help_mode mode)
{
	help_mode = mode;
	help_lines = 0;
}

enum opt_help_mode parse_options_current_help_mode(void)
{
	return help_mode;
}

static int takes_value(const struct opt *o)
{
	return o->type == OPT_T_STRING || o->type == OPT_T_LIST || o->type == OPT_T_UINT ||
	       (o->type == OPT_T_CALLBACK && o->argh);
}

static int is_option(const struct opt *o)
{
	return o->type != OPT_T_END && o->type != OPT_T_GROUP;
}

static void man_escaped(struct strbuf *sb, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '-' || s[i] == '\\')
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, s[i]);
	}
}

/* A value's name: man(7) sets literal choices (auto|kvm|tcg) bold and
 * placeholders (PATH) in italics. */
static void add_argh(struct strbuf *sb, const char *argh, int man)
{
	const char *p = argh;

	if (!man) {
		strbuf_addstr(sb, argh);
		return;
	}
	while (*p) {
		size_t n = strcspn(p, "|");
		int literal = 0;

		for (size_t i = 0; i < n; i++)
			literal |= islower((unsigned char)p[i]);
		strbuf_addstr(sb, literal ? "\\fB" : "\\fI");
		man_escaped(sb, p, n);
		strbuf_addstr(sb, "\\fR");
		p += n;
		if (*p)
			strbuf_addch(sb, *p++);
	}
}

/* Text as it is, or escaped for man(7). */
static void add_text(struct strbuf *sb, const char *s, int man)
{
	if (man)
		man_escaped(sb, s, strlen(s));
	else
		strbuf_addstr(sb, s);
}

/* "--name VALUE" or "-c VALUE" (man: the name bold, the value as
 * add_argh sets it). */
static void add_option(struct strbuf *sb, const struct opt *o, int use_short, int man)
{
	char name[3] = { '-', (char)o->short_name, 0 };

	if (man)
		strbuf_addstr(sb, "\\fB");
	if (use_short) {
		add_text(sb, name, man);
	} else {
		add_text(sb, "--", man);
		add_text(sb, o->long_name, man);
	}
	if (man)
		strbuf_addstr(sb, "\\fR");
	if (takes_value(o)) {
		strbuf_addch(sb, ' ');
		add_argh(sb, o->argh ? o->argh : "VALUE", man);
	}
}

/* The row a form names: "--name" (long) or "-c" (short). */
static const struct opt *form_option(const struct opt *opts, const char *name, size_t n, int is_short)
{
	for (const struct opt *o = opts; o->type != OPT_T_END; o++) {
		if (!is_option(o))
			continue;
		if (is_short ? o->short_name == name[0]
			     : o->long_name && strlen(o->long_name) == n && !strncmp(o->long_name, name, n))
			return o;
	}
	return NULL;
}

/* A word of a form that is not an option: operands in italics, "--"
 * and "-" bold, the rest as it is. */
static void add_form_word(struct strbuf *sb, const char *w, size_t n, int man)
{
	int upper = 0, dashes = 1;

	if (!man) {
		strbuf_add(sb, w, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		upper |= isupper((unsigned char)w[i]);
		dashes &= w[i] == '-';
	}
	if (upper || dashes)
		strbuf_addstr(sb, upper ? "\\fI" : "\\fB");
	man_escaped(sb, w, n);
	if (upper || dashes)
		strbuf_addstr(sb, "\\fR");
}

static int word_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.' || c == '=' || c == ',' || c == '/' || c == ':';
}

/* One form rendered (form: the text, or NULL for every row). */
static int render_form(struct strbuf *out, const struct opt_usage *u, const struct opt *opts, const char *form,
		       int man)
{
	const char *p = form;

	if (!form) {
		for (const struct opt *o = opts; o->type != OPT_T_END; o++) {
			if (!is_option(o) || (o->flags & OPT_HIDDEN))
				continue;
			strbuf_addstr(out, out->len ? " [" : "[");
			add_option(out, o, !o->long_name, man);
			strbuf_addstr(out, o->type == OPT_T_LIST ? "...]" : "]");
		}
		return 0;
	}
	while (*p) {
		size_t n = 0;

		if (!word_char((unsigned char)*p)) {
			strbuf_addch(out, *p++);
			continue;
		}
		while (word_char((unsigned char)p[n]) && (p[n] != '.' || p[n + 1] != '.'))
			n++;
		if (!n) {	/* "..." */
			strbuf_addch(out, *p++);
			continue;
		}
		if (p[0] == '-' && n > 1 && (p[1] != '-' || n > 2)) {
			int is_short = p[1] != '-';
			const char *name = p + (is_short ? 1 : 2);
			const struct opt *o = form_option(opts, name, n - (size_t)(is_short ? 1 : 2), is_short);

			if (!o || (is_short && n != 2))
				return error("the synopsis of 'klab %s' names '%.*s', which is not one of its options",
					     u->name, (int)n, p);
			add_option(out, o, is_short, man);
		} else {
			add_form_word(out, p, n, man);
		}
		p += n;
	}
	return 0;
}

int usage_render_form(struct strbuf *out, const struct opt_usage *u, const struct opt *opts, size_t i, int man)
{
	size_t nr = 0;

	while (u->forms && u->forms[nr])
		nr++;
	if (i >= (u->forms ? nr : 1))
		return error("'klab %s' has no synopsis form %zu", u->name, i + 1);
	return render_form(out, u, opts, u->forms ? u->forms[i] : NULL, man);
}

/* 1 when the space at text[i] may end a line: outside brackets, not
 * between "--" and the command after it, not between an option and its
 * value's name. */
static int may_break(const char *text, size_t i, size_t depth)
{
	size_t w = i;

	if (depth)
		return 0;
	while (w > 0 && text[w - 1] != ' ')
		w--;
	if (text[w] != '-')
		return 1;
	if (i - w == 2 && text[w + 1] == '-')
		return 0;	/* "-- CMD" */
	return text[i + 1] == '[' || text[i + 1] == '(' || text[i + 1] == '-' || text[i + 1] == '|';
}

/* Print text broken into lines of at most HELP_WIDTH at spaces outside
 * brackets, the first after prefix, the others indented under it. */
static void print_usage_line(FILE *f, const char *prefix, const char *text, size_t indent)
{
	size_t col = strlen(prefix), depth = 0, len = strlen(text), line = 0, brk = 0;

	fputs(prefix, f);
	for (size_t i = 0; i <= len; i++) {
		int at_space = i == len || (text[i] == ' ' && may_break(text, i, depth));

		if (at_space) {
			if (col + (i - line) > HELP_WIDTH && brk > line) {
				fwrite(text + line, 1, brk - line, f);
				fprintf(f, "\n%*s", (int)indent, "");
				col = indent;
				line = brk + 1;
			}
			brk = i;
		}
		if (i < len && (text[i] == '[' || text[i] == '('))
			depth++;
		else if (i < len && (text[i] == ']' || text[i] == ')') && depth)
			depth--;
	}
	fwrite(text + line, 1, len - line, f);
	fputc('\n', f);
}

/* The forms of u, as the mode says; *nth counts entries across calls. */
static int print_forms(FILE *f, const struct opt_usage *u, const struct opt *opts, enum opt_help_mode mode,
		       unsigned *nth)
{
	struct strbuf sb = STRBUF_INIT;
	int man = mode == OPT_HELP_MAN, ret = 0;

	for (size_t i = 0; !i || (u->forms && u->forms[i]); i++) {
		strbuf_reset(&sb);
		if (usage_render_form(&sb, u, opts, i, man) < 0) {
			ret = -1;
			break;
		}
		if (man) {
			fprintf(f, "%s.B klab%s%s\n", (*nth)++ ? ".br\n" : "", *u->name ? " " : "", u->name);
			if (sb.len)
				fprintf(f, "%s\n", sb.buf);
		} else {
			char *line = xstrfmt("klab%s%s%s%s", *u->name ? " " : "", u->name, sb.len ? " " : "", sb.buf);

			if (mode == OPT_HELP_SYNOPSIS)
				fprintf(f, "%s\n", line);
			else
				print_usage_line(f, (*nth)++ ? "   or: " : "usage: ", line,
						 strlen("usage: klab ") + strlen(u->name) + !!*u->name);
			free(line);
		}
		if (mode == OPT_HELP_SYNOPSIS)
			(*nth)++;
	}
	strbuf_release(&sb);
	return ret;
}

void usage_lines(FILE *f, const struct opt_usage *u, const struct opt *opts)
{
	unsigned nth = 0;

	print_forms(f, u, opts, OPT_HELP_USAGE, &nth);
}

/* "-o, --output DIR", "--repo PATH", "-j N" */
static void option_text(struct strbuf *sb, const struct opt *o)
{
	if (o->short_name && o->long_name) {
		strbuf_addf(sb, "-%c, ", o->short_name);
		add_option(sb, o, 0, 0);
	} else {
		add_option(sb, o, !o->long_name, 0);
	}
}

static void print_rows(FILE *f, const struct opt *opts)
{
	struct strbuf sb = STRBUF_INIT;
	size_t width = 0;

	for (const struct opt *o = opts; o->type != OPT_T_END; o++) {
		if (!is_option(o) || (o->flags & OPT_HIDDEN))
			continue;
		strbuf_reset(&sb);
		option_text(&sb, o);
		if (sb.len + 4 > width && sb.len + 4 <= HELP_COLUMN)
			width = sb.len + 4;
	}
	for (const struct opt *o = opts; o->type != OPT_T_END; o++) {
		if (o->type == OPT_T_GROUP) {
			fprintf(f, "\n%s:\n", o->help);
			continue;
		}
		if (o->flags & OPT_HIDDEN)
			continue;
		strbuf_reset(&sb);
		option_text(&sb, o);
		fprintf(f, "  %-*s%s\n", (int)(width > sb.len + 2 ? width - 2 : sb.len + 2), sb.buf, o->help ? o->help : "");
	}
	strbuf_release(&sb);
}

void usage_with_options(FILE *f, const struct opt_usage *u, const struct opt *opts)
{
	unsigned nth = 0;
	int any = 0;

	print_forms(f, u, opts, OPT_HELP_USAGE, &nth);
	if (u->what)
		fprintf(f, "\n%s\n", u->what);
	for (const struct opt *o = opts; o->type != OPT_T_END; o++)
		any |= is_option(o) && !(o->flags & OPT_HIDDEN);
	if (any) {
		fputc('\n', f);
		print_rows(f, opts);
	}
	if (u->more)
		fprintf(f, "\nMore in klab(1): %s.\n", u->more);
	else if (!*u->name)
		fprintf(f, "\n'klab COMMAND --help' describes a command; klab(1) all of them.\n");
}

/* --help as the process-wide mode says.  PARSE_OPT_HELP, or
 * PARSE_OPT_ERROR when a form names an option the rows lack. */
static int show_help(const struct opt_usage *u, const struct opt *opts)
{
	if (help_mode == OPT_HELP_FULL) {
		usage_with_options(stdout, u, opts);
		return PARSE_OPT_HELP;
	}
	return print_forms(stdout, u, opts, help_mode, &help_lines) < 0 ? PARSE_OPT_ERROR : PARSE_OPT_HELP;
}

void usage_print_form(FILE *f, const char *name, const char *form)
{
	const char *forms[] = { form, NULL };
	struct opt_usage u = { name, forms, NULL, NULL };
	struct opt none[] = { OPT_END() };
	enum opt_help_mode mode = help_mode == OPT_HELP_FULL ? OPT_HELP_USAGE : help_mode;

	print_forms(f, &u, none, mode, &help_lines);
}

int usage_error(const struct opt_usage *u, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error("%s (see 'klab%s%s --help')", sb.buf, *u->name ? " " : "", u->name);
	strbuf_release(&sb);
	return EXIT_USAGE;
}

/* ---- parsing ------------------------------------------------------------ */

struct parse_state {
	const struct opt_usage *u;
	const struct opt *opts;
	int argc, i;
	char **argv;
	unsigned char *seen;	/* per row: given already (OPT_ONCE) */
};

/* "--name" or "-c" for messages. */
static char *shown_name(const struct opt *o, int as_short)
{
	if (as_short || !o->long_name)
		return xstrfmt("-%c", o->short_name);
	return xstrfmt("--%s", o->long_name);
}

static int take_number(struct parse_state *st, const struct opt *o, const char *name, const char *arg)
{
	unsigned long v;
	int rc = opt_number(arg, o->min, o->max, &v);
	char *range = o->range ? xstrdup(o->range) : xstrfmt("a number from %lu to %lu", o->min, o->max);

	if (rc == -1)
		usage_error(st->u, "%s takes %s, not '%s'", name, range, arg);
	else if (rc == -2)
		usage_error(st->u, "%s takes %s: %s is out of range", name, range, arg);
	else
		*(unsigned long *)o->value = v;
	free(range);
	return rc ? -1 : 0;
}

/* Row o given (value arg, NULL for a flag). */
static int take(struct parse_state *st, const struct opt *o, int as_short, const char *arg)
{
	char *name = shown_name(o, as_short);
	int ret = 0;

	if ((o->flags & OPT_ONCE) && st->seen[o - st->opts]) {
		usage_error(st->u, "only one %s is allowed", name);
		ret = -1;
		goto out;
	}
	st->seen[o - st->opts] = 1;
	switch (o->type) {
	case OPT_T_BOOL:
		*(int *)o->value = 1;
		break;
	case OPT_T_SET_INT:
		*(int *)o->value = (int)o->defval;
		break;
	case OPT_T_STRING:
		*(const char **)o->value = arg;
		break;
	case OPT_T_LIST:
		opt_strings_add(o->value, arg);
		/* --paths a b c: the words after it up to the next option */
		while ((o->flags & OPT_GREEDY) && st->i + 1 < st->argc && st->argv[st->i + 1][0] != '-')
			opt_strings_add(o->value, st->argv[++st->i]);
		break;
	case OPT_T_UINT:
		ret = take_number(st, o, name, arg);
		break;
	case OPT_T_CALLBACK:
		ret = o->cb(o, arg) < 0 ? -1 : 0;
		break;
	default:
		break;
	}
out:
	free(name);
	return ret;
}

/* The value of row o: after '=' (inline), glued to a short option
 * (inline too), or the next argument. */
static int value_of(struct parse_state *st, const struct opt *o, int as_short, const char *inline_val,
		    const char **arg)
{
	char *name;

	*arg = NULL;
	if (!takes_value(o)) {
		if (!inline_val)
			return 0;
		name = shown_name(o, as_short);
		usage_error(st->u, "%s takes no value", name);
		free(name);
		return -1;
	}
	if (inline_val) {
		*arg = inline_val;
		return 0;
	}
	if (st->i + 1 >= st->argc) {
		name = shown_name(o, as_short);
		usage_error(st->u, "%s needs a value (%s)", name, o->argh ? o->argh : "VALUE");
		free(name);
		return -1;
	}
	*arg = st->argv[++st->i];
	return 0;
}

static const struct opt *find_long(struct parse_state *st, const char *name, size_t n, int *ambiguous)
{
	const struct opt *found = NULL;

	*ambiguous = 0;
	for (const struct opt *o = st->opts; o->type != OPT_T_END; o++) {
		if (!is_option(o) || !o->long_name || strncmp(o->long_name, name, n))
			continue;
		if (strlen(o->long_name) == n)
			return o;	/* exact beats any prefix */
		if (found)
			*ambiguous = 1;
		found = o;
	}
	return *ambiguous ? NULL : found;
}

static int parse_long(struct parse_state *st, const char *a)
{
	const char *name = a + 2, *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	const struct opt *o;
	const char *arg;
	int ambiguous = 0;

	if (n == 4 && !strncmp(name, "help", 4) && !eq)
		return show_help(st->u, st->opts);
	o = n ? find_long(st, name, n, &ambiguous) : NULL;
	if (!o) {
		if (!ambiguous && n && !strncmp("help", name, n) && !eq)
			return show_help(st->u, st->opts);
		usage_error(st->u, "%s option '--%.*s'", ambiguous ? "ambiguous" : "unknown", (int)n, name);
		return PARSE_OPT_ERROR;
	}
	if (value_of(st, o, 0, eq ? eq + 1 : NULL, &arg) < 0 || take(st, o, 0, arg) < 0)
		return PARSE_OPT_ERROR;
	return 0;
}

/* -x, -xVALUE, -xy (flags together) */
static int parse_short(struct parse_state *st, const char *a)
{
	for (const char *p = a + 1; *p; p++) {
		const struct opt *o = NULL;
		const char *arg;

		for (const struct opt *r = st->opts; r->type != OPT_T_END && !o; r++)
			if (is_option(r) && r->short_name && r->short_name == *p)
				o = r;
		if (!o && *p == 'h')
			return show_help(st->u, st->opts);
		if (!o) {
			usage_error(st->u, "unknown option '-%c'", *p);
			return PARSE_OPT_ERROR;
		}
		if (value_of(st, o, 1, takes_value(o) && p[1] ? p + 1 : NULL, &arg) < 0 || take(st, o, 1, arg) < 0)
			return PARSE_OPT_ERROR;
		if (takes_value(o))
			break;
	}
	return 0;
}

int parse_options(int argc, char **argv, const struct opt_usage *u, const struct opt *opts, unsigned flags)
{
	struct parse_state st = { u, opts, argc, 1, argv, NULL };
	size_t nr = 0;
	int nout = 0, rc = 0;

	while (opts[nr].type != OPT_T_END)
		nr++;
	st.seen = xcalloc(nr + 1, 1);
	for (; st.i < argc && !rc; st.i++) {
		const char *a = argv[st.i];

		if (!strcmp(a, "--")) {
			st.i++;
			break;
		}
		/* "-" (stdin) and "-1" (no option is a digit) are operands */
		if (a[0] != '-' || !a[1] || isdigit((unsigned char)a[1])) {
			if (flags & PARSE_OPT_STOP_AT_NON_OPTION)
				break;
			argv[nout++] = argv[st.i];
			continue;
		}
		rc = a[1] == '-' ? parse_long(&st, a) : parse_short(&st, a);
	}
	free(st.seen);
	if (rc < 0)
		return rc;
	for (; st.i < argc; st.i++)
		argv[nout++] = argv[st.i];
	argv[nout] = NULL;
	return nout;
}
