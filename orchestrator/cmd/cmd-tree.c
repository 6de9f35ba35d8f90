/* klab tree import: Debian's linux-source tarball as a git repository. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "kernel/tree.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tree_usage[] = {
	"usage: klab tree import [--tarball PATH] [--dest DIR]",
	"",
	"Turn Debian's kernel source tarball into a git repository once (one",
	"commit on branch main, tagged v<version>; the same tarball gives the",
	"same commit id everywhere).  Run again, it reuses the import.",
	"",
	"  --tarball PATH  default " KLAB_DEFAULT_TARBALL " (package linux-source-6.1)",
	"  --dest DIR      default <state>/trees/linux-6.1",
	NULL
};

int cmd_tree(int argc, char **argv, const struct global_opts *g)
{
	static const struct option opts[] = {
		{ "tarball", required_argument, NULL, 't' },
		{ "dest", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tarball = KLAB_DEFAULT_TARBALL, *dest = NULL;
	char hex[41], *dest_alloc = NULL, dur[32];
	int c, reused, ret = EXIT_FAIL;
	int64_t t0 = now_ms();

	if (argc < 2 || strcmp(argv[1], "import")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			print_usage(tree_usage, 0);
			return EXIT_OK;
		}
		if (argc >= 2)
			error("'%s' is not a tree subcommand", argv[1]);
		print_usage(tree_usage, 1);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			tarball = optarg;
			break;
		case 'd':
			dest = optarg;
			break;
		case 'h':
		default:
			return help_or_usage(c, tree_usage, "tree");
		}
	}
	if (optind < argc) {
		error("tree import takes no arguments (got '%s')", argv[optind]);
		return EXIT_USAGE;
	}
	if (check_no_controls("--tarball", tarball) < 0 || check_no_controls("--dest", dest) < 0)
		return EXIT_USAGE;
	if (!dest) {
		struct lab lab;
		if (open_lab(g, &lab) < 0)
			return EXIT_FAIL;
		dest_alloc = lab_path(&lab, "trees/linux-6.1");
		dest = dest_alloc;
		lab_close(&lab);
	}
	if (tree_import(tarball, dest, hex, &reused) == 0) {
		printf("%s %s: commit %s (%s)\n", reused ? "already imported" : "imported", dest, hex,
		       fmt_duration(now_ms() - t0, dur, sizeof(dur)));
		ret = EXIT_OK;
	}
	free(dest_alloc);
	return ret;
}
