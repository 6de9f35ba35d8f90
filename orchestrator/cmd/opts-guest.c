/* The guest option rows run, compare and reproduce share (opts.h): where
 * guests go, under which accelerator, with which limits. */
#include "cmd/opts.h"
#include "guest/guest.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/util.h"

#include <string.h>

int guest_opt_cmdline(const struct opt *o, const char *arg)
{
	struct guest_env_opts *geo = o->value;

	if (strpbrk(arg, "\n\r"))
		return error("--cmdline: a kernel command line is one line");
	geo->extra_cmdline = arg;
	return 0;
}

/* seconds from 1 to max into *ms */
static int seconds(const char *name, const char *arg, unsigned long max, int64_t *ms)
{
	unsigned long secs;
	int rc = opt_number(arg, 1, max, &secs);

	if (rc == -2)
		return error("%s takes seconds from 1 to %lu: %s is out of range", name, max, arg);
	if (rc < 0)
		return error("%s takes seconds from 1 to %lu, not '%s'", name, max, arg);
	*ms = (int64_t)secs * 1000;
	return 0;
}

int guest_opt_boot_timeout(const struct opt *o, const char *arg)
{
	return seconds("--boot-timeout", arg, 86400, &((struct guest_env_opts *)o->value)->boot_timeout_ms);
}

int guest_opt_run_timeout(const struct opt *o, const char *arg)
{
	return seconds("--run-timeout", arg, 7 * 86400, &((struct guest_env_opts *)o->value)->run_timeout_ms);
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
