/* Shared by klab.c and the cmd-*.c files: global options, the signature
 * of a command, its subcommands' dispatch. */
#ifndef KLAB_KLAB_H
#define KLAB_KLAB_H

#include <stddef.h>
#include <stdint.h>

#include "util/parse-options.h"
#include "util/util.h"

struct lab;

/* What a command does to the lab (the command table in klab.c). */
enum lab_access {
	LAB_CREATE,	/* init: makes the lab */
	LAB_READ,	/* only reads: works on a read-only or full lab */
	LAB_WRITE
};

struct global_opts {
	const char *state_dir;	/* --state, or NULL for the default */
	enum lab_access access;	/* of the command running, from the table */
};

/* Open the lab named by the global options (message on failure):
 * read-only when the command only reads and the lab cannot be written. */
int open_lab(const struct global_opts *g, struct lab *lab);

typedef int command_fn(int argc, char **argv, const struct global_opts *g);

/* A command made of subcommands: argv[1] names one of subs, run with
 * argv from there.  "-h", "--help" and "help" print the subcommands'
 * usage lines (each asked with --help) and u's text; no name, or one not
 * in subs, is a usage error.  A sub with a synopsis is shown as "klab
 * CMD SUB SYNOPSIS" instead (a sub that takes another command's
 * arguments). */
struct subcommand {
	const char *name;
	command_fn *fn;
	const char *synopsis;
};
int run_subcommand(const struct opt_usage *u, const struct subcommand *subs, size_t nr, int argc, char **argv,
		   const struct global_opts *g);

command_fn cmd_init, cmd_build, cmd_tree, cmd_gc, cmd_bisect, cmd_run, cmd_worker, cmd_status, cmd_joblog,
	cmd_cancel, cmd_retry, cmd_track, cmd_report, cmd_notify, cmd_host, cmd_job, cmd_reproduce, cmd_compare;
/* 'klab submit KIND': the checks of 'bisect start' / 'run' / 'reproduce',
 * then queue instead of running. */
command_fn bisect_submit, run_submit, reproduce_submit;

#endif
