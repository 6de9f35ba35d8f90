/* The guest option rows klab run, compare and reproduce share (klab.h):
 * where guests go, under which accelerator, with which limits; and the
 * last cases of a getopt loop with them or the recipe rows. */
#include "cmd/klab.h"
#include "lab/db.h"
#include "guest/guest.h"
#include "lab/lab.h"
#include "util/util.h"

#include <string.h>

int guest_opt_parse(struct guest_env_opts *o, int c, const char *arg)
{
	unsigned long secs;

	switch (c) {
	case GUEST_OPT_URI:
		o->uri = arg;
		return 1;
	case GUEST_OPT_HOST:
		o->host = arg;
		return 1;
	case GUEST_OPT_ACCEL:
		o->accel = arg;
		return 1;
	case GUEST_OPT_NO_PIN:
		o->no_pin = 1;
		return 1;
	case GUEST_OPT_CMDLINE:
		if (strpbrk(arg, "\n\r"))
			return error("--cmdline: a kernel command line is one line");
		o->extra_cmdline = arg;
		return 1;
	case GUEST_OPT_BOOT_TIMEOUT:
		if (parse_uint(arg, 86400, &secs) < 0 || !secs)
			return error("--boot-timeout takes seconds from 1 to 86400");
		o->boot_timeout_ms = (int64_t)secs * 1000;
		return 1;
	case GUEST_OPT_RUN_TIMEOUT:
		if (parse_uint(arg, 7 * 86400, &secs) < 0 || !secs)
			return error("--run-timeout takes seconds from 1 to 604800");
		o->run_timeout_ms = (int64_t)secs * 1000;
		return 1;
	case GUEST_OPT_QUIET:
		o->quiet = 1;
		return 1;
	}
	return 0;
}

int shared_option(int c, const char *arg, struct recipe_opts *ro, struct guest_env_opts *geo,
		  const char *const *usage, const char *cmd, int *code)
{
	switch (c) {
	RECIPE_OPT_CASES:
		if (!ro)
			break;
		recipe_opts_add(ro, c, arg);
		return 1;
	}
	switch (geo ? guest_opt_parse(geo, c, arg) : 0) {
	case 1:
		return 1;
	case -1:
		*code = EXIT_USAGE;
		return 0;
	}
	*code = help_or_usage(c, usage, cmd);
	return 0;
}

int guest_opts_check(const struct guest_env_opts *o, const char *cmd)
{
	/* names and URIs that are stored and printed: one line each */
	if (check_no_controls("--uri", o->uri) < 0 || check_no_controls("--host", o->host) < 0 ||
	    check_no_controls("--cmdline", o->extra_cmdline) < 0)
		return -1;
	if (o->uri && o->host)
		return error("--uri and --host: choose one (see 'klab %s --help')", cmd);
	return 0;
}

int guest_opts_check_host(struct lab *lab, const struct guest_env_opts *o)
{
	struct db_host h;
	int rc;

	if (!o->host)
		return 0;
	rc = db_host_find(lab->db, o->host, &h);
	if (rc == 0)
		return error("--host '%s': no such host (see 'klab host list')", o->host);
	if (rc < 0)
		return -1;
	db_host_release(&h);
	return 0;
}
