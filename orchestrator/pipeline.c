/* Test one commit.  The build step: look the artifact store up by (tree,
 * recipe) before touching the worktree, so a hit costs milliseconds. */
#include "pipeline.h"
#include "gitrepo.h"
#include "lab.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

int pipeline_build(struct lab *lab, struct gitrepo *repo, int64_t repo_id, struct worktree *wt,
		   const char *hex, int already_checked_out, const struct kbuild_recipe *recipe,
		   int jobs, enum kbuild_progress progress, const char *indent, struct kbuild_result *res)
{
	struct commit_info ci;
	struct kbuild_request req = { 0 };
	char recipe_id[41];
	int rc;

	if (gitrepo_commit_info(repo, hex, &ci) < 0)
		return -1;
	if (kbuild_recipe_id(recipe, recipe_id) < 0) {
		commit_info_release(&ci);
		return -1;
	}
	rc = kbuild_lookup(lab, ci.tree, recipe_id, res);
	if (rc != 0) {
		commit_info_release(&ci);
		return rc < 0 ? -1 : 0;
	}
	if (!already_checked_out) {
		int64_t t0 = now_ms();
		char dur[32];
		if (progress != PROGRESS_QUIET)
			fprintf(stderr, "%s[checkout] %.12s\n", indent ? indent : "", hex);
		if (worktree_checkout(wt, hex) < 0) {
			commit_info_release(&ci);
			return -1;
		}
		if (progress != PROGRESS_QUIET)
			fprintf(stderr, "%s[checkout] done in %s\n", indent ? indent : "",
				fmt_duration(now_ms() - t0, dur, sizeof(dur)));
	}
	req.lab = lab;
	req.repo_id = repo_id;
	req.commit = hex;
	req.tree = ci.tree;
	req.src_dir = worktree_path(wt);
	req.recipe = recipe;
	req.jobs = jobs;
	req.progress = progress;
	req.indent = indent;
	rc = kbuild_build(&req, res);
	commit_info_release(&ci);
	return rc;
}

void pipeline_print_build(const struct kbuild_result *res, const char *indent)
{
	static const char *const names[] = { "ok", "build-failed", "env-failed", "config-drift" };
	char dur[32];

	if (!indent)
		indent = "";
	printf("%sbuild:      %s%s", indent, names[res->status], res->cache_hit ? " (cache hit: not rebuilt)" : "");
	if (!res->cache_hit && res->status == KBUILD_OK)
		printf(", %d objects compiled in %s", res->objects, fmt_duration(res->duration_ms, dur, sizeof(dur)));
	printf("\n");
	if (res->message)
		printf("%smessage:    %s\n", indent, res->message);
	if (res->status == KBUILD_OK) {
		printf("%skernel:     %s\n", indent, res->bzimage);
		printf("%sconfig:     %s (hash %.12s)\n", indent, res->config, res->config_hash);
		printf("%ssystem.map: %s\n", indent, res->system_map);
	}
	if (res->log)
		printf("%slog:        %s\n", indent, res->log);
	if (res->excerpt && *res->excerpt) {
		const char *p = res->excerpt;
		printf("%s%s:\n", indent, res->status == KBUILD_DRIFT ? "config drift" : "errors");
		while (*p) {
			const char *eol = strchrnul(p, '\n');
			printf("%s  ", indent);
			for (const char *q = p; q < eol; q++)
				putchar((unsigned char)*q < 0x20 ? '?' : *q);
			printf("\n");
			p = *eol ? eol + 1 : eol;
		}
	}
}
