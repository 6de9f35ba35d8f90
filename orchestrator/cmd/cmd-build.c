/* klab build: build one commit's kernel (or find it in the artifact
 * store). */
#include "cmd/klab.h"
#include "cmd/opts.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "kernel/kbuild.h"
#include "kernel/kernel.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const build_forms[] = { "--repo --rev [config options] [-j] [--quiet]", NULL };
static const struct opt_usage build_usage = {
	"build", build_forms,
	"Check REV out into klab's worktree and build its bzImage with ccache, or find it\n"
	"in the artifact store (keyed by tree and config recipe: never built twice).",
	"BUILD"
};

int cmd_build(int argc, char **argv, const struct global_opts *g)
{
	const char *repo_arg = NULL, *rev = NULL;
	struct recipe_opts ro = { 0 };
	struct kbuild_recipe recipe = { 0 };
	struct kernel_request rq = { 0 };
	struct kernel_result kr = { 0 };
	struct kernel_repo pr;
	struct lab lab;
	int ret = EXIT_FAIL, lab_opened = 0, repo_opened = 0, quiet = 0;
	unsigned long jobs = 0;
	struct opt opts[] = {
		OPT_STRING(0, "repo", &repo_arg, "PATH", "the git repository"),
		OPT_STRING(0, "rev", &rev, "REV", "the commit to build"),
		OPT_UINT('j', NULL, &jobs, "N", "parallel jobs (default: build_jobs in klab.conf, else CPUs)", 1, 1024),
		OPT_BOOL(0, "quiet", &quiet, "no progress"),
		OPT_RECIPE_ROWS(&ro),
		OPT_END()
	};

	argc = parse_options(argc, argv, &build_usage, opts, 0);
	if (argc < 0) {
		ret = parse_options_exit(argc);
		goto out;
	}
	if (!repo_arg || !rev || argc) {
		ret = usage_error(&build_usage, "build needs --repo and --rev and no other arguments");
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
	if (kr.build.status == KBUILD_ENV_FAILED) {
		/* the machine's fault (a full disk): one line on stderr says it */
		const char *ex = kr.build.excerpt ? kr.build.excerpt : "";
		size_t len = strcspn(ex, "\n");

		error("the build of %.12s failed for a reason outside the commit, nothing was stored: %.*s",
		      pr.hex, (int)len, ex);
	}
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
