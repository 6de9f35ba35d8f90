/* Option rows several commands share (opts-*.c): the kernel config
 * recipe, where and how guests run, a --kpi's check, LKP's --accel.
 * Each is a macro of rows for a command's table and the functions that
 * turn what they collected into what the modules take. */
#ifndef KLAB_CMD_OPTS_H
#define KLAB_CMD_OPTS_H

#include "job/lkp.h"
#include "util/parse-options.h"

struct guest_env_opts;
struct job;
struct kbuild_recipe;
struct lab;
struct lkp_klab_job;

/* ---- the kernel config recipe (opts-recipe.c): build, bisect, run,
 * compare, track add ---- */
struct recipe_opts {
	const char *base;
	struct opt_strings fragments;
	struct opt_strings options;
	int no_defaults;
	int allow_drift;
};
#define OPT_RECIPE_ROWS(ro)                                                                                        \
	OPT_GROUP("config options"),                                                                                \
	OPT_STRING(0, "config", &(ro)->base, "BASE", "tinyconfig (default), defconfig, allnoconfig or a .config"), \
	OPT_LIST(0, "fragment", &(ro)->fragments, "F", "add a fragment: a shipped name or a path (repeatable)"),   \
	OPT_LIST(0, "config-option", &(ro)->options, "O", "one setting, e.g. CONFIG_KASAN=y (repeatable)"),        \
	OPT_BOOL(0, "no-default-fragments", &(ro)->no_defaults, "do not add x86_64-base and perf-guest"),          \
	OPT_BOOL(0, "allow-config-drift", &(ro)->allow_drift, "build even if Kconfig changed a requested symbol")
/* 1 when any of the rows was given. */
int recipe_opts_given(const struct recipe_opts *ro);
void recipe_opts_release(struct recipe_opts *ro);
/* The recipe: fragments resolved and every setting parsed, so that a
 * mistake is said before any work.  -1 after error(). */
int recipe_from_opts(const struct recipe_opts *ro, struct kbuild_recipe *r);
/* The same with the job's own fragments added to ro first. */
int recipe_for_job(struct recipe_opts *ro, const struct job *job, struct kbuild_recipe *r);

/* ---- guests (opts-guest.c): run, compare; reproduce takes --uri,
 * --host and --quiet ---- */
int guest_opt_cmdline(const struct opt *o, const char *arg);
int guest_opt_boot_timeout(const struct opt *o, const char *arg);
int guest_opt_run_timeout(const struct opt *o, const char *arg);
#define OPT_GUEST_URI(geo) \
	OPT_STRING(0, "uri", &(geo)->uri, "URI", "libvirt URI (default: a registered host, else libvirt_uri)")
#define OPT_GUEST_HOST(geo) \
	OPT_STRING(0, "host", &(geo)->host, "NAME", "only this registered host (waits while it is full)")
#define OPT_GUEST_QUIET(geo) OPT_BOOL(0, "quiet", &(geo)->quiet, "no progress lines")
#define OPT_GUEST_ROWS(geo)                                                                                   \
	OPT_GROUP("guest options"), OPT_GUEST_URI(geo), OPT_GUEST_HOST(geo),                                        \
	OPT_STRING(0, "accel", &(geo)->accel, "auto|kvm|tcg", "accelerator (default auto: KVM with vmx/svm)"), \
	OPT_BOOL(0, "no-pin", &(geo)->no_pin, "do not pin vCPUs (for comparisons)"),                          \
	OPT_CALLBACK(0, "cmdline", geo, "TEXT", "appended to the guest kernel's command line",                \
		     guest_opt_cmdline),                                                                          \
	OPT_CALLBACK(0, "boot-timeout", geo, "S", "seconds to the agent (default 60 KVM, 180 TCG)",           \
		     guest_opt_boot_timeout),                                                                     \
	OPT_CALLBACK(0, "run-timeout", geo, "S", "seconds to the result (default 2 x runtime + 180)",        \
		     guest_opt_run_timeout),                                                                      \
	OPT_GUEST_QUIET(geo)
/* The checks once all are parsed: one line each, --uri or --host
 * (cmd names the command for the message). */
int guest_opts_check(const struct guest_env_opts *o, const char *cmd);
/* --host naming a registered host. */
int guest_opts_check_host(struct lab *lab, const struct guest_env_opts *o);

/* ---- --kpi METRIC (opts-kpi.c): bisect start, run, compare ---- */
/* kpi checked against job (NULL: only its form): 0, or -1 after
 * "--kpi 'X': expected ...". */
int check_kpi_option(const struct job *job, const char *kpi);

/* ---- LKP input (opts-lkp.c): job import, reproduce ---- */
/* --accel auto|kvm|tcg (NULL: auto) into the accelerator LKP runtimes
 * are scaled for, *why how it was chosen. */
int lkp_accel_option(const char *arg, enum lkp_accel *out, const char **why);
/* What a kbuild job needs of this host (KLAB_KBUILD_SOURCE, klab's
 * kbuild.config) set in *in. */
struct lkp_map_in;
void lkp_host_paths(struct lkp_map_in *in);
/* The mapping table of a job, one line per LKP parameter, on stdout. */
void lkp_print_table(const struct lkp_klab_job *j, const char *indent);

#endif
