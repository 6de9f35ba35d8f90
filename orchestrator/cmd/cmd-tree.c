/* klab tree import: Debian's linux-source tarball as a git repository. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "kernel/tree.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct opt_usage import_usage = {
	"tree import", NULL,
	"Turn Debian's kernel source tarball into a git repository once (one commit on\n"
	"branch main, tagged v<version>; the same tarball gives the same commit id\n"
	"everywhere).  Run again, it reuses the import.",
	"TREE"
};
static const struct opt_usage tree_usage = {
	"tree", NULL,
	"Kernel trees for klab to build.",
	"TREE"
};

static int tree_import_cmd(int argc, char **argv, const struct global_opts *g)
{
	const char *tarball = KLAB_DEFAULT_TARBALL, *dest = NULL;
	char hex[41], *dest_alloc = NULL, dur[32];
	int reused, ret = EXIT_FAIL;
	int64_t t0 = now_ms();
	struct opt opts[] = {
		OPT_STRING(0, "tarball", &tarball, "PATH", "default " KLAB_DEFAULT_TARBALL),
		OPT_STRING(0, "dest", &dest, "DIR", "default <state>/trees/linux-6.1"),
		OPT_END()
	};

	argc = parse_options(argc, argv, &import_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&import_usage, "tree import takes no arguments (got '%s')", argv[0]);
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

int cmd_tree(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "import", tree_import_cmd, NULL },
	};

	return run_subcommand(&tree_usage, subs, ARRAY_SIZE(subs), argc, argv, g);
}
