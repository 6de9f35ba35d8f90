/* klab init: create the lab's state directory, config and database. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>

static const struct opt_usage init_usage = {
	"init", NULL,
	"Create the lab (idempotent): the state directory, klab.conf and the database\n"
	"klab.db, private to its owner (0700, 0600; looser modes are tightened).",
	"THE LAB"
};

int cmd_init(int argc, char **argv, const struct global_opts *g)
{
	const char *state = g->state_dir;
	char *dir;
	int created, ret;
	struct opt opts[] = {
		OPT_STRING(0, "state", &state, "DIR", "where (default: $KLAB_STATE, else $XDG_STATE_HOME/klab, else "
			   "~/.local/state/klab)"),
		OPT_END()
	};

	argc = parse_options(argc, argv, &init_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&init_usage, "init takes no arguments (got '%s')", argv[0]);
	if (state && !*state) {
		error("--state needs a directory, not an empty string");
		return EXIT_USAGE;
	}
	if (check_no_controls("--state", state) < 0)
		return EXIT_USAGE;
	dir = lab_default_state_dir(state);
	ret = lab_init(dir, &created);
	if (!ret)
		printf("%s lab in %s (database schema version %d)\n",
		       created ? "created" : "found existing", dir, db_schema_version());
	free(dir);
	return ret ? EXIT_FAIL : EXIT_OK;
}
