/* Shared by klab.c and the cmd-*.c files: global options and the
 * signature of a command. */
#ifndef KLAB_KLAB_H
#define KLAB_KLAB_H

#include <stddef.h>
#include <stdint.h>

#include "job/lkp.h"
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

/* Print a usage array to stdout (help) or stderr (error). */
void print_usage(const char *const *usage, int to_stderr);
/* The last cases of a command's getopt loop: 'h' prints its usage on
 * stdout (EXIT_OK); any other value (getopt said what was wrong) gets
 * "see 'klab CMD --help'" (EXIT_USAGE). */
int help_or_usage(int c, const char *const *usage, const char *cmd);
/* A command made of subcommands: argv[1] names one of subs, which is
 * run with argv from there (getopt reset); "-h", "--help" and "help"
 * print the usage (EXIT_OK); no name, or one not in subs, is a usage
 * error ("'x' is not a CMD subcommand"). */
struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv, const struct global_opts *g);
};
int run_subcommand(const char *cmd, const struct subcommand *subs, size_t nr, const char *const *usage,
		   int argc, char **argv, const struct global_opts *g);
/* A --kpi METRIC option checked against job (NULL: only its form):
 * 0, or -1 after "--kpi 'X': expected ...". */
struct job;
int check_kpi_option(const struct job *job, const char *kpi);
/* 1 after printing usage on stdout when any argument is -h or --help. */
int wants_help(int argc, char **argv, const char *const *usage);

/* Config recipe options shared by build and bisect (getopt values). */
enum {
	RECIPE_OPT_CONFIG = 1000,
	RECIPE_OPT_FRAGMENT,
	RECIPE_OPT_OPTION,
	RECIPE_OPT_NO_DEFAULTS,
	RECIPE_OPT_DRIFT
};

/* The recipe options' rows of a getopt_long table, and their cases. */
#define RECIPE_OPTION_ROWS                                                   \
	{ "config", required_argument, NULL, RECIPE_OPT_CONFIG },            \
	{ "fragment", required_argument, NULL, RECIPE_OPT_FRAGMENT },        \
	{ "config-option", required_argument, NULL, RECIPE_OPT_OPTION },     \
	{ "no-default-fragments", no_argument, NULL, RECIPE_OPT_NO_DEFAULTS }, \
	{ "allow-config-drift", no_argument, NULL, RECIPE_OPT_DRIFT }
#define RECIPE_OPT_CASES                                                     \
	case RECIPE_OPT_CONFIG:                                              \
	case RECIPE_OPT_FRAGMENT:                                            \
	case RECIPE_OPT_OPTION:                                              \
	case RECIPE_OPT_NO_DEFAULTS:                                         \
	case RECIPE_OPT_DRIFT

struct recipe_opts {
	const char *base;
	const char **fragments;
	size_t nr_fragments, alloc_fragments;
	const char **options;
	size_t nr_options, alloc_options;
	int no_defaults;
	int allow_drift;
};

/* Guest options shared by run, compare and reproduce (opts-guest.c):
 * their getopt values, a value into o (1), not a guest option (0), or
 * -1 after error() (a usage error); the checks once all are parsed
 * (one line each, --uri or --host); --host naming a registered host. */
enum {
	GUEST_OPT_URI = 1100,
	GUEST_OPT_HOST,
	GUEST_OPT_ACCEL,
	GUEST_OPT_NO_PIN,
	GUEST_OPT_CMDLINE,
	GUEST_OPT_BOOT_TIMEOUT,
	GUEST_OPT_RUN_TIMEOUT,
	GUEST_OPT_QUIET
};
/* Their rows of a getopt_long table. */
#define GUEST_OPTION_ROWS                                                    \
	{ "uri", required_argument, NULL, GUEST_OPT_URI },                   \
	{ "host", required_argument, NULL, GUEST_OPT_HOST },                 \
	{ "accel", required_argument, NULL, GUEST_OPT_ACCEL },               \
	{ "no-pin", no_argument, NULL, GUEST_OPT_NO_PIN },                   \
	{ "cmdline", required_argument, NULL, GUEST_OPT_CMDLINE },           \
	{ "boot-timeout", required_argument, NULL, GUEST_OPT_BOOT_TIMEOUT }, \
	{ "run-timeout", required_argument, NULL, GUEST_OPT_RUN_TIMEOUT },   \
	{ "quiet", no_argument, NULL, GUEST_OPT_QUIET }
struct guest_env_opts;
int guest_opt_parse(struct guest_env_opts *o, int c, const char *arg);
/* The last cases of the getopt loop of a command with the recipe (ro)
 * or guest (geo) option rows, NULL for rows it does not have: 1 when c
 * was one of them (taken); else 0 with *code the exit code: a guest
 * option's bad value (said), or help_or_usage's. */
int shared_option(int c, const char *arg, struct recipe_opts *ro, struct guest_env_opts *geo,
		  const char *const *usage, const char *cmd, int *code);
int guest_opts_check(const struct guest_env_opts *o, const char *cmd);
int guest_opts_check_host(struct lab *lab, const struct guest_env_opts *o);

struct kbuild_recipe;
void recipe_opts_add(struct recipe_opts *ro, int which, const char *arg);
void recipe_opts_release(struct recipe_opts *ro);
/* Resolve fragments and check them; error() on bad input. */
int recipe_from_opts(const struct recipe_opts *ro, struct kbuild_recipe *r);
/* Shared by run, compare and reproduce (cmd-run.c): the recipe with a
 * job's fragments added to ro, and the kernel of rev built with it (or
 * found in the store): *bzimage (caller frees), its build row and the
 * commit.  -1 after error(), a build failure included. */
struct job;
int run_recipe_for_job(struct recipe_opts *ro, const struct job *job, struct kbuild_recipe *recipe);
int run_kernel_for_rev(struct lab *lab, const char *repo_arg, const char *rev, const struct kbuild_recipe *recipe,
		       int quiet, char **bzimage, int64_t *build_id, char hex[41]);

int cmd_init(int argc, char **argv, const struct global_opts *g);
int cmd_build(int argc, char **argv, const struct global_opts *g);
int cmd_tree(int argc, char **argv, const struct global_opts *g);
int cmd_gc(int argc, char **argv, const struct global_opts *g);
int cmd_bisect(int argc, char **argv, const struct global_opts *g);
int cmd_run(int argc, char **argv, const struct global_opts *g);
int cmd_submit(int argc, char **argv, const struct global_opts *g);
int cmd_worker(int argc, char **argv, const struct global_opts *g);
int cmd_status(int argc, char **argv, const struct global_opts *g);
int cmd_joblog(int argc, char **argv, const struct global_opts *g);
int cmd_cancel(int argc, char **argv, const struct global_opts *g);
int cmd_retry(int argc, char **argv, const struct global_opts *g);
/* The checks of 'bisect start' / 'run' / 'reproduce', then queue instead
 * of running. */
int bisect_submit(int argc, char **argv, const struct global_opts *g);
int run_submit(int argc, char **argv, const struct global_opts *g);
int reproduce_submit(int argc, char **argv, const struct global_opts *g);
/* 'bisect start' (argv[0] "start"); the bisection, once created, linked
 * to queued job queue_id (0: none), as 'klab reproduce --bisect' run by
 * a worker asks. */
int bisect_start_for(int argc, char **argv, const struct global_opts *g, int64_t queue_id);
/* What 'klab submit bisect' does once everything is checked: create the
 * bisection b (b->repo_id, bad, goods, ... filled in; b->id set here)
 * and queue it for a worker.  -1 after error(); a bisection that could
 * not be queued is marked failed. */
struct bisection;
int bisect_queue(struct lab *lab, struct bisection *b, int64_t *queue_id);
int cmd_track(int argc, char **argv, const struct global_opts *g);
int cmd_report(int argc, char **argv, const struct global_opts *g);
int cmd_notify(int argc, char **argv, const struct global_opts *g);
int cmd_host(int argc, char **argv, const struct global_opts *g);
int cmd_job(int argc, char **argv, const struct global_opts *g);
int cmd_reproduce(int argc, char **argv, const struct global_opts *g);
int cmd_compare(int argc, char **argv, const struct global_opts *g);
/* Shared by compare and reproduce (cmd-compare.c): run sets ids[] (the
 * first the base; labels may be NULL) compared and printed as text, or
 * JSON; with html_path also written as a page there.  EXIT_OK, or
 * EXIT_FAIL after error(). */
struct sqlite3;
int compare_print(struct sqlite3 *db, const int64_t *ids, const char *const *labels, size_t n, const char *kpi,
		  int json, const char *html_path);
/* Shared by 'job import' and 'reproduce' (cmd-job.c): --accel
 * auto|kvm|tcg (NULL: auto) into the accelerator LKP runtimes are
 * scaled for, *why how it was chosen; what a kbuild job needs of this
 * host (KLAB_KBUILD_SOURCE, klab's kbuild.config) set in *in; and the
 * mapping table of a job, one line per LKP parameter. */

struct lkp_klab_job;
struct lkp_map_in;
int lkp_accel_option(const char *arg, enum lkp_accel *out, const char **why);
void lkp_host_paths(struct lkp_map_in *in);
void lkp_print_table(const struct lkp_klab_job *j, const char *indent);

#endif
