/* klab: a kernel performance lab.  main(), global options, the one
 * table of commands, and klab help (every command's synopsis from its
 * option table, for the man page). */
#include "cmd/klab.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a command needs of the lab: LAB_WRITE commands change it and are
 * refused, with the reason, on a lab that cannot be written (read-only
 * file system, no space, no permission); LAB_READ commands (and the
 * `readers` subcommands of a LAB_WRITE command) open it read-only when
 * it cannot be written. */
struct command {
	const char *name;
	command_fn *fn;
	enum lab_access needs;
	const char *const *readers;	/* subcommands that only read, NULL-terminated */
	const char *summary;
};

static command_fn cmd_submit, cmd_help;

static const char *const bisect_readers[] = { "list", "show", "log", NULL };
static const char *const list_readers[] = { "list", NULL };
static const char *const host_readers[] = { "list", "check", NULL };
static const char *const track_readers[] = { "list", "show", NULL };

static const struct command commands[] = {
	{ "init", cmd_init, LAB_CREATE, NULL, "create a lab: state directory, config, database" },
	{ "bisect", cmd_bisect, LAB_WRITE, bisect_readers,
	  "find the commit that broke a test (git bisect run, natively)" },
	{ "build", cmd_build, LAB_WRITE, NULL, "build a commit's kernel (config fragments, ccache, artifact store)" },
	{ "tree", cmd_tree, LAB_WRITE, NULL, "import Debian's linux-source tarball as a git repository" },
	{ "gc", cmd_gc, LAB_WRITE, NULL, "bound the artifact store and build directories" },
	{ "run", cmd_run, LAB_WRITE, NULL, "boot a kernel in a pinned libvirt guest and run a job (N boots)" },
	{ "submit", cmd_submit, LAB_WRITE, NULL, "queue a bisection or run (checked now) for a worker" },
	{ "worker", cmd_worker, LAB_WRITE, NULL, "run queued jobs (leases: a dead worker's job is resumed)" },
	{ "status", cmd_status, LAB_READ, NULL, "the queue, or one job (--json)" },
	{ "log", cmd_joblog, LAB_READ, NULL, "a queued job's output (-f follows it)" },
	{ "cancel", cmd_cancel, LAB_WRITE, NULL, "stop a queued or running job; its results are kept" },
	{ "retry", cmd_retry, LAB_WRITE, NULL, "queue a failed or cancelled job again (a bisection resumes)" },
	{ "report", cmd_report, LAB_READ, NULL,
	  "write the static HTML report (bisections, charts, tracked branches)" },
	{ "notify", cmd_notify, LAB_WRITE, list_readers,
	  "mail and webhook notices of finished bisections: test, list, flush, send" },
	{ "track", cmd_track, LAB_WRITE, track_readers,
	  "follow a branch nightly: test new tips, bisect regressions (add, run, show, ...)" },
	{ "host", cmd_host, LAB_WRITE, host_readers,
	  "the libvirt hosts guests are placed on (add, list, remove, check)" },
	{ "job", cmd_job, LAB_READ, NULL, "import an lkp-tests job file as klab jobs, one per combination" },
	{ "compare", cmd_compare, LAB_WRITE, NULL,
	  "run sets side by side, LKP's way: commits (--rev), job variants (--set) or stored (--runset)" },
	{ "reproduce", cmd_reproduce, LAB_WRITE, NULL,
	  "an LKP regression report: a klab job for it, then its parent measured against its commit" },
	{ "help", cmd_help, LAB_READ, NULL, "this list; a command's help; --synopsis: every command's synopsis" },
};

int open_lab(const struct global_opts *g, struct lab *lab)
{
	char *dir = lab_default_state_dir(g->state_dir);
	int ret = g->access == LAB_READ ? lab_open_read(lab, dir) : lab_open(lab, dir);

	free(dir);
	return ret;
}

/* ---- subcommands -------------------------------------------------------- */

/* --help of a command with subcommands: each one's usage lines (or, in
 * klab help --synopsis, its synopsis lines), then u's text. */
static int subcommand_help(const struct opt_usage *u, const struct subcommand *subs, size_t nr,
			   const struct global_opts *g)
{
	enum opt_help_mode mode = parse_options_current_help_mode();
	int ret = EXIT_OK;

	if (mode == OPT_HELP_FULL)
		parse_options_help_mode(OPT_HELP_USAGE);
	for (size_t i = 0; i < nr; i++) {
		char *av[] = { (char *)subs[i].name, "--help", NULL };

		if (subs[i].synopsis) {
			char *name = xstrfmt("%s %s", u->name, subs[i].name);
			usage_print_form(stdout, name, subs[i].synopsis);
			free(name);
		} else if (subs[i].fn(2, av, g) != EXIT_OK) {
			ret = EXIT_FAIL;
		}
	}
	if (mode != OPT_HELP_FULL)
		return ret;
	parse_options_help_mode(OPT_HELP_FULL);
	if (u->what)
		printf("\n%s\n", u->what);
	printf("\n'klab %s <subcommand> --help' describes one%s%s.\n", u->name, u->more ? "; more in klab(1): " : "",
	       u->more ? u->more : "");
	return ret;
}

int run_subcommand(const struct opt_usage *u, const struct subcommand *subs, size_t nr, int argc, char **argv,
		   const struct global_opts *g)
{
	struct strbuf names = STRBUF_INIT;
	const char *sub = argc > 1 ? argv[1] : NULL;
	int ret;

	if (sub && (!strcmp(sub, "-h") || !strcmp(sub, "--help") || !strcmp(sub, "help")))
		return subcommand_help(u, subs, nr, g);
	for (size_t i = 0; sub && i < nr; i++)
		if (!strcmp(sub, subs[i].name))
			return subs[i].fn(argc - 1, argv + 1, g);
	for (size_t i = 0; i < nr; i++)
		strbuf_addf(&names, "%s%s", i ? (i + 1 == nr ? " or " : ", ") : "", subs[i].name);
	if (sub)
		ret = usage_error(u, "'%s' is not a %s subcommand (%s)", sub, u->name, names.buf);
	else
		ret = usage_error(u, "%s needs a subcommand: %s", u->name, names.buf);
	strbuf_release(&names);
	return ret;
}

/* ---- submit --------------------------------------------------------------- */

static const struct opt_usage submit_usage = {
	"submit", NULL,
	"Check everything the command needs now, as the command itself does, store it in\n"
	"the lab's queue and print the job id; a 'klab worker' runs it.  Relative paths\n"
	"are taken from the current directory.",
	"QUEUE"
};

static int cmd_submit(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "bisect", bisect_submit, "ARGS... (those of 'klab bisect start')" },
		{ "run", run_submit, "ARGS... (those of 'klab run')" },
		{ "reproduce", reproduce_submit, "ARGS... (those of 'klab reproduce')" },
	};

	return run_subcommand(&submit_usage, subs, ARRAY_SIZE(subs), argc, argv, g);
}

/* ---- help and main --------------------------------------------------------- */

static const char *const main_forms[] = { "[--state] [--version] COMMAND [ARGS...]", NULL };
/* main's, for 'klab help' */
static const struct opt_usage *main_usage;
static const struct opt *main_rows;

/* The global rows; g->state_dir is set by them. */
#define GLOBAL_ROWS(g, version)                                                                               \
	OPT_STRING(0, "state", &(g)->state_dir, "DIR", "the lab's state directory (default: $KLAB_STATE, else " \
		   "$XDG_STATE_HOME/klab, else ~/.local/state/klab)"),                                          \
	OPT_BOOL(0, "version", version, "print the version"), OPT_END()

/* The main usage's text: the commands, one line each. */
static char *main_what(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "Commands:");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		strbuf_addf(&sb, "\n  %-10s %s", commands[i].name, commands[i].summary);
	return strbuf_detach(&sb, NULL);
}

/* Every command's synopsis, in table order, as the mode says. */
static int all_synopses(const struct global_opts *g, enum opt_help_mode mode)
{
	struct global_opts none = { 0 };
	int version = 0, ret = EXIT_OK;
	struct opt rows[] = { GLOBAL_ROWS(&none, &version) };
	struct opt_usage u = { "", main_forms, NULL, NULL };
	char *av[] = { "klab", "--help", NULL };

	parse_options_help_mode(mode);
	if (parse_options(2, av, &u, rows, 0) != PARSE_OPT_HELP)
		ret = EXIT_FAIL;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		char *argv[] = { (char *)commands[i].name, "--help", NULL };

		if (commands[i].fn(2, argv, g) != EXIT_OK)
			ret = EXIT_FAIL;
	}
	parse_options_help_mode(OPT_HELP_FULL);
	return ret;
}

static int cmd_help(int argc, char **argv, const struct global_opts *g)
{
	int synopsis = 0, man = 0;
	static const char *const forms[] = { "[COMMAND [SUBCOMMAND]]", "--synopsis [--man]", NULL };
	static const struct opt_usage u = {
		"help", forms,
		"Without arguments, the list of commands; with a command, its help (as\n"
		"'klab COMMAND --help').  --synopsis prints every command's synopsis from its\n"
		"option table, one line each; with --man as klab(1)'s SYNOPSIS section.",
		NULL
	};
	struct opt rows[] = {
		OPT_BOOL(0, "synopsis", &synopsis, "every command's synopsis, one line each"),
		OPT_BOOL(0, "man", &man, "with --synopsis: as man(7) text (klab(1)'s SYNOPSIS)"),
		OPT_END()
	};
	char *av[4];

	argc = parse_options(argc, argv, &u, rows, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (synopsis)
		return argc ? usage_error(&u, "--synopsis takes no command") : all_synopses(g, man ? OPT_HELP_MAN : OPT_HELP_SYNOPSIS);
	if (man)
		return usage_error(&u, "--man goes with --synopsis");
	if (argc > 2)
		return usage_error(&u, "help takes a command and a subcommand at most");
	for (size_t i = 0; argc && i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[0], commands[i].name))
			continue;
		av[0] = argv[0];
		av[1] = argc > 1 ? argv[1] : "--help";
		av[2] = argc > 1 ? "--help" : NULL;
		av[3] = NULL;
		return commands[i].fn(argc > 1 ? 3 : 2, av, g);
	}
	if (argc)
		return usage_error(&u, "'%s' is not a klab command", argv[0]);
	usage_with_options(stdout, main_usage, main_rows);
	return EXIT_OK;
}

static enum lab_access access_of(const struct command *c, const char *sub)
{
	for (const char *const *r = c->readers; r && *r && sub; r++)
		if (!strcmp(*r, sub))
			return LAB_READ;
	return c->needs;
}

/* The state directory's checks: an empty value is a mistake (an unset
 * shell variable), not a request for the default lab; a name with a
 * control character would be printed and stored as one. */
static int check_state_dir(const struct global_opts *g)
{
	const char *env = getenv("KLAB_STATE");

	if (g->state_dir && !*g->state_dir)
		return error("--state needs a directory, not an empty string");
	if (check_no_controls("--state", g->state_dir) < 0)
		return -1;
	if (!g->state_dir && env && !*env)
		return error("KLAB_STATE is set but empty: set it to the lab's directory or unset it");
	if (!g->state_dir && check_no_controls("KLAB_STATE", env) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct global_opts g = { 0 };
	int version = 0, ret;
	struct opt rows[] = { GLOBAL_ROWS(&g, &version) };
	char *what = main_what();
	struct opt_usage u = { "", main_forms, what, NULL };

	setvbuf(stdout, NULL, _IOLBF, 0);
	main_usage = &u;
	main_rows = rows;
	/* the command's options are its own: stop at its name */
	argc = parse_options(argc, argv, &u, rows, PARSE_OPT_STOP_AT_NON_OPTION);
	if (argc < 0 || version) {
		if (version && argc >= 0)
			printf("klab %s\n", PACKAGE_VERSION);
		free(what);
		return argc < 0 ? parse_options_exit(argc) : EXIT_OK;
	}
	if (!argc) {
		free(what);
		return usage_error(&u, "no command given ('klab help' lists them)");
	}
	if (check_state_dir(&g) < 0) {
		free(what);
		return EXIT_USAGE;
	}
	ret = -1;
	for (size_t i = 0; i < ARRAY_SIZE(commands) && ret < 0; i++) {
		if (strcmp(argv[0], commands[i].name))
			continue;
		g.access = access_of(&commands[i], argc > 1 ? argv[1] : NULL);
		gitrepo_global_init();
		ret = commands[i].fn(argc, argv, &g);
	}
	if (ret < 0)
		ret = usage_error(&u, "'%s' is not a klab command", argv[0]);
	free(what);
	return ret;
}
