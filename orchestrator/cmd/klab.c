/* klab: a kernel performance lab.  main(), global options and the one
 * table of commands. */
#include "cmd/klab.h"
#include "job/job.h"
#include "util/strbuf.h"
#include "lab/lab.h"
#include "lab/gitrepo.h"
#include "util/util.h"

#include <getopt.h>
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
	int (*fn)(int argc, char **argv, const struct global_opts *g);
	enum lab_access needs;
	const char *const *readers;	/* subcommands that only read, NULL-terminated */
	const char *summary;
};

static const char *const bisect_readers[] = { "list", "show", "log", NULL };
static const char *const list_readers[] = { "list", NULL };
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
	{ "host", cmd_host, LAB_WRITE, list_readers, "the libvirt hosts guests are placed on (add, list, remove)" },
	{ "job", cmd_job, LAB_READ, NULL, "import an lkp-tests job file as klab jobs, one per combination" },
	{ "compare", cmd_compare, LAB_WRITE, NULL,
	  "run sets side by side, LKP's way: commits (--rev), job variants (--set) or stored (--runset)" },
	{ "reproduce", cmd_reproduce, LAB_WRITE, NULL,
	  "an LKP regression report: a klab job for it, then its parent measured against its commit" },
};

static const char *const klab_usage[] = {
	"usage: klab [--state DIR] <command> [<args>]",
	"",
	"  --state DIR   the lab's state directory (default: $KLAB_STATE,",
	"                else $XDG_STATE_HOME/klab, else ~/.local/state/klab;",
	"                an empty DIR or KLAB_STATE is an error)",
	"  --version     print the version",
	"",
	"Commands:",
	NULL
};

void print_usage(const char *const *usage, int to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;

	for (; *usage; usage++)
		fprintf(f, "%s\n", *usage);
}

int help_or_usage(int c, const char *const *usage, const char *cmd)
{
	if (c == 'h') {
		print_usage(usage, 0);
		return EXIT_OK;
	}
	fprintf(stderr, "see 'klab %s --help'\n", cmd);
	return EXIT_USAGE;
}

int run_subcommand(const char *cmd, const struct subcommand *subs, size_t nr, const char *const *usage,
		   int argc, char **argv, const struct global_opts *g)
{
	if (argc < 2) {
		print_usage(usage, 1);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		print_usage(usage, 0);
		return EXIT_OK;
	}
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(argv[1], subs[i].name)) {
			optind = 0;
			return subs[i].fn(argc - 1, argv + 1, g);
		}
	error("'%s' is not a %s subcommand (see 'klab %s --help')", argv[1], cmd, cmd);
	return EXIT_USAGE;
}

int check_kpi_option(const struct job *job, const char *kpi)
{
	struct strbuf why = STRBUF_INIT;
	int bad = check_kpi(job, kpi, &why) < 0;

	if (bad)
		error("--kpi '%s': expected %s", kpi, why.buf);
	strbuf_release(&why);
	return bad ? -1 : 0;
}

int wants_help(int argc, char **argv, const char *const *usage)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			print_usage(usage, 0);
			return 1;
		}
	return 0;
}

static void print_main_usage(int to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;

	print_usage(klab_usage, to_stderr);
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'klab <command> --help' describes a command.\n");
}

int open_lab(const struct global_opts *g, struct lab *lab)
{
	char *dir = lab_default_state_dir(g->state_dir);
	int ret = g->access == LAB_READ ? lab_open_read(lab, dir) : lab_open(lab, dir);

	free(dir);
	return ret;
}

static enum lab_access access_of(const struct command *c, const char *sub)
{
	for (const char *const *r = c->readers; r && *r && sub; r++)
		if (!strcmp(*r, sub))
			return LAB_READ;
	return c->needs;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct global_opts g = { 0 };
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* '+': stop at the command name; its options are its own. */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			g.state_dir = optarg;
			break;
		case 'V':
			printf("klab %s\n", PACKAGE_VERSION);
			return EXIT_OK;
		case 'h':
			print_main_usage(0);
			return EXIT_OK;
		default:
			print_main_usage(1);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		print_main_usage(1);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help")) {
		print_main_usage(0);
		return EXIT_OK;
	}
	/* an empty value is a mistake (an unset shell variable), not a
	 * request for the default lab */
	if (g.state_dir && !*g.state_dir) {
		error("--state needs a directory, not an empty string");
		return EXIT_USAGE;
	}
	if (!g.state_dir && getenv("KLAB_STATE") && !*getenv("KLAB_STATE")) {
		error("KLAB_STATE is set but empty: set it to the lab's directory or unset it");
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (!strcmp(argv[optind], commands[i].name)) {
			int ac = argc - optind;
			char **av = argv + optind;
			g.access = access_of(&commands[i], ac > 1 ? av[1] : NULL);
			optind = 0;	/* reset getopt for the command */
			gitrepo_global_init();
			return commands[i].fn(ac, av, &g);
		}
	}
	error("'%s' is not a klab command (see 'klab --help')", argv[optind]);
	return EXIT_USAGE;
}
