/* klab build: build one commit's kernel (or find it in the artifact
 * store).  Also the recipe options shared with `klab bisect --build`. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "kernel/kbuild.h"
#include "kernel/kernel.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const build_usage[] = {
	"usage: klab build --repo PATH --rev REV [--config BASE] [--fragment F...]",
	"                  [--no-default-fragments] [--config-option CONFIG_X=V...]",
	"                  [--allow-config-drift] [-j N] [--quiet]",
	"",
	"Check REV out into klab's worktree and build its bzImage out of tree",
	"with ccache, in one build directory per (repository, config) so the",
	"next commit builds incrementally.  The result goes to the artifact store",
	"keyed by (tree id, config recipe): the same tree is never built twice.",
	"",
	"  --config BASE           tinyconfig (default), defconfig, allnoconfig or",
	"                          a path to a .config",
	"  --fragment F            add a fragment: a name from the shipped set",
	"                          (x86_64-base, perf-guest) or a path (relative",
	"                          to the current directory); repeatable",
	"  --no-default-fragments  do not add x86_64-base and perf-guest",
	"  --config-option O       one setting, e.g. CONFIG_KASAN=y; repeatable;",
	"                          the value is y, m, n, a number, 0x hex or a",
	"                          \"string\"",
	"  --allow-config-drift    build even if Kconfig changed a requested symbol",
	"  -j N                    parallel jobs (default: build_jobs in klab.conf,",
	"                          else the number of CPUs)",
	"  --quiet                 no progress",
	"",
	"Exit status: 0 built (or found), 1 the build failed (compile error,",
	"config drift, or the environment), 2 usage.",
	NULL
};

void recipe_opts_add(struct recipe_opts *ro, int which, const char *arg)
{
	switch (which) {
	case RECIPE_OPT_CONFIG:
		ro->base = arg;
		break;
	case RECIPE_OPT_FRAGMENT:
		ALLOC_GROW(ro->fragments, ro->nr_fragments + 1, ro->alloc_fragments);
		ro->fragments[ro->nr_fragments++] = arg;
		break;
	case RECIPE_OPT_OPTION:
		ALLOC_GROW(ro->options, ro->nr_options + 1, ro->alloc_options);
		ro->options[ro->nr_options++] = arg;
		break;
	case RECIPE_OPT_NO_DEFAULTS:
		ro->no_defaults = 1;
		break;
	case RECIPE_OPT_DRIFT:
		ro->allow_drift = 1;
		break;
	}
}

void recipe_opts_release(struct recipe_opts *ro)
{
	free(ro->fragments);
	free(ro->options);
	memset(ro, 0, sizeof(*ro));
}

int recipe_from_opts(const struct recipe_opts *ro, struct kbuild_recipe *r)
{
	struct kconfig_setting *s;
	size_t nr;

	memset(r, 0, sizeof(*r));
	if (check_no_controls("--config", ro->base) < 0)
		return -1;
	for (size_t i = 0; i < ro->nr_fragments; i++)
		if (check_no_controls("--fragment", ro->fragments[i]) < 0)
			return -1;
	for (size_t i = 0; i < ro->nr_options; i++)
		if (check_no_controls("--config-option", ro->options[i]) < 0)
			return -1;
	if (ro->no_defaults) {
		r->base = xstrdup("tinyconfig");
	} else if (kbuild_recipe_default(r) < 0) {
		return -1;
	}
	if (ro->base) {
		free(r->base);
		if (strchr(ro->base, '/')) {
			r->base = real_path(ro->base);
			if (!r->base) {
				kbuild_recipe_release(r);
				return error("--config '%s': no such file", ro->base);
			}
		} else if (!strcmp(ro->base, "tinyconfig") || !strcmp(ro->base, "defconfig") ||
			   !strcmp(ro->base, "allnoconfig")) {
			r->base = xstrdup(ro->base);
		} else {
			r->base = NULL;
			kbuild_recipe_release(r);
			return error("--config '%s': expected tinyconfig, defconfig, allnoconfig or a path", ro->base);
		}
	}
	for (size_t i = 0; i < ro->nr_fragments; i++) {
		char *p;
		if (kbuild_resolve_fragment(ro->fragments[i], &p) < 0) {
			kbuild_recipe_release(r);
			return -1;
		}
		r->fragments = xrealloc(r->fragments, (r->nr_fragments + 1) * sizeof(char *));
		r->fragments[r->nr_fragments++] = p;
	}
	for (size_t i = 0; i < ro->nr_options; i++) {
		r->options = xrealloc(r->options, (r->nr_options + 1) * sizeof(char *));
		r->options[r->nr_options++] = xstrdup(ro->options[i]);
	}
	r->allow_drift = ro->allow_drift;
	/* parse now: a malformed fragment is an error before any work */
	if (kbuild_recipe_settings(r, &s, &nr) < 0) {
		kbuild_recipe_release(r);
		return -1;
	}
	kconfig_settings_release(s, nr);
	return 0;
}

int cmd_build(int argc, char **argv, const struct global_opts *g)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "rev", required_argument, NULL, 'R' },
		RECIPE_OPTION_ROWS,
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *repo_arg = NULL, *rev = NULL;
	struct recipe_opts ro = { 0 };
	struct kbuild_recipe recipe = { 0 };
	struct kernel_request rq = { 0 };
	struct kernel_result kr = { 0 };
	struct kernel_repo pr;
	struct lab lab;
	int c, ret = EXIT_FAIL, lab_opened = 0, repo_opened = 0, quiet = 0;
	unsigned long jobs = 0;

	while ((c = getopt_long(argc, argv, "+hj:", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			repo_arg = optarg;
			break;
		case 'R':
			rev = optarg;
			break;
		case 'j':
			if (parse_uint(optarg, 1024, &jobs) < 0 || !jobs) {
				error("-j takes a number from 1 to 1024 (see 'klab build --help')");
				ret = EXIT_USAGE;
				goto out;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			if (shared_option(c, optarg, &ro, NULL, build_usage, "build", &ret))
				continue;
			goto out;
		}
	}
	if (!repo_arg || !rev || optind < argc) {
		error("build needs --repo and --rev and no other arguments (see 'klab build --help')");
		ret = EXIT_USAGE;
		goto out;
	}
	if (check_no_controls("--repo", repo_arg) < 0) {
		ret = EXIT_USAGE;
		goto out;
	}
	if (recipe_from_opts(&ro, &recipe) < 0)
		goto out;
	if (open_lab(g, &lab) < 0)
		goto out;
	lab_opened = 1;
	if (kernel_repo_open(&pr, &lab, repo_arg, rev) < 0)
		goto out;
	repo_opened = 1;
	printf("building %.12s of %s\n", pr.hex, pr.abs_path);
	rq.lab = &lab;
	rq.repo = pr.repo;
	rq.repo_id = pr.repo_id;
	rq.wt = pr.wt;
	rq.hex = pr.hex;
	rq.recipe = &recipe;
	rq.jobs = (int)jobs;
	rq.progress = quiet ? PROGRESS_QUIET : PROGRESS_AUTO;
	rq.indent = "";
	rq.say_checkout = 1;
	if (kernel_for_commit(&rq, &kr) < 0 && !kr.message)
		goto out;
	kernel_print_build(&kr.build, "");
	ret = kr.kernel ? EXIT_OK : EXIT_FAIL;
out:
	kernel_result_release(&kr);
	kbuild_recipe_release(&recipe);
	recipe_opts_release(&ro);
	if (repo_opened)
		kernel_repo_release(&pr);
	if (lab_opened)
		lab_close(&lab);
	return ret;
}
