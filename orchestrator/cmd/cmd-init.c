/* klab init: create the lab's state directory, config and database. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const init_usage[] = {
	"usage: klab init [--state DIR]",
	"",
	"Create the lab (idempotent): the state directory, klab.conf and the",
	"SQLite database klab.db (schema migrated to the current version).",
	"The lab is private: directory 0700, klab.db and klab.conf 0600; an",
	"existing lab with looser modes is made so (a line says what changed).",
	"",
	"  --state DIR   where (default: $KLAB_STATE, else $XDG_STATE_HOME/klab,",
	"                else ~/.local/state/klab)",
	NULL
};

int cmd_init(int argc, char **argv, const struct global_opts *g)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = g->state_dir;
	char *dir;
	int c, created, ret;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			state = optarg;
			break;
		case 'h':
			print_usage(init_usage, 0);
			return EXIT_OK;
		default:
			print_usage(init_usage, 1);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		error("init takes no arguments (got '%s')", argv[optind]);
		return EXIT_USAGE;
	}
	if (state && !*state) {
		error("--state needs a directory, not an empty string");
		return EXIT_USAGE;
	}
	dir = lab_default_state_dir(state);
	ret = lab_init(dir, &created);
	if (!ret)
		printf("%s lab in %s (database schema version %d)\n",
		       created ? "created" : "found existing", dir, db_schema_version());
	free(dir);
	return ret ? EXIT_FAIL : EXIT_OK;
}
