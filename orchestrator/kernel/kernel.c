/* A commit's kernel.  The artifact store is looked up by (tree, recipe)
 * before the worktree is touched, so a hit costs milliseconds. */
#include "kernel/kernel.h"
#include "kernel/kkeep.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Check rq->hex out; files whose change is comments only keep their
 * build (kkeep.h) unless klab.conf says comment_only_files = rebuild. */
static int checkout(const struct kernel_request *rq, struct kernel_result *kr, struct kkeep *keep)
{
	const char *indent = rq->indent ? rq->indent : "";
	int say = rq->say_checkout && rq->progress != PROGRESS_QUIET;
	int64_t t0 = now_ms();
	char dur[32];

	if (say)
		fprintf(stderr, "%s[checkout] %.12s\n", indent, rq->hex);
	kkeep_prepare(keep, rq->wt, worktree_path(rq->wt), rq->hex, rq->lab->comment_only_keep);
	if (worktree_checkout(rq->wt, rq->hex) < 0) {
		kr->checkout_failed = 1;
		return -1;
	}
	kkeep_restore(keep, worktree_path(rq->wt));
	kr->checkout_ms = now_ms() - t0;
	if (say) {
		fprintf(stderr, "%s[checkout] done in %s", indent, fmt_duration(kr->checkout_ms, dur, sizeof(dur)));
		if (keep->kept)
			fprintf(stderr, "; %zu file%s with comment-only changes kept %s build", keep->kept,
				keep->kept == 1 ? "" : "s", keep->kept == 1 ? "its" : "their");
		else if (keep->doubt && rq->lab->comment_only_keep)
			fprintf(stderr, "; no file kept its build: %s", keep->doubt);
		fprintf(stderr, "\n");
	}
	return 0;
}

/* The one line of a result: how it was built, or why not. */
static char *result_line(const struct kbuild_result *br)
{
	const char *ex;
	size_t n;
	char dur[32];

	if (br->status == KBUILD_OK && br->cache_hit)
		return xstrdup("artifact store hit");
	if (br->status == KBUILD_OK) {
		struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "compiled %s%s: ", fmt_duration(br->duration_ms, dur, sizeof(dur)),
			    *br->config_from ? " (config reused)" : "");
		kernel_explain_build(br, &sb);
		return strbuf_detach(&sb, NULL);
	}
	ex = br->excerpt && *br->excerpt ? br->excerpt : br->message ? br->message : "";
	n = strcspn(ex, "\n");
	return xstrfmt("%s: %.*s", br->status == KBUILD_DRIFT ? "config drift" :
		       br->status == KBUILD_FAILED ? "build failed" : "build environment failed",
		       (int)(n > 300 ? 300 : n), ex);
}

void kernel_explain_build(const struct kbuild_result *br, struct strbuf *out)
{
	strbuf_addf(out, "%d object%s", br->objects, br->objects == 1 ? "" : "s");
	if (br->ccache_hits >= 0)
		strbuf_addf(out, " (%d from ccache)", br->ccache_hits);
	if (br->rebuilt_for)
		strbuf_addf(out, " for %s", br->rebuilt_for);
	if (br->kept_files)
		strbuf_addf(out, "; %zu comment-only file%s kept %s build", br->kept_files,
			    br->kept_files == 1 ? "" : "s", br->kept_files == 1 ? "its" : "their");
}

/* kernel_for_commit once the commit's tree is known. */
static int kernel_for_tree(const struct kernel_request *rq, const char *tree, struct kernel_result *kr)
{
	struct kbuild_result *br = &kr->build;
	struct kbuild_request req = { 0 };
	struct kkeep keep = KKEEP_INIT;
	char recipe_id[41];
	int rc;

	if (kbuild_recipe_id(rq->recipe, recipe_id) < 0)
		return -1;
	rc = kbuild_find(rq->lab, rq->repo_id, rq->hex, tree, rq->recipe, recipe_id, br);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (!rq->checked_out && checkout(rq, kr, &keep) < 0) {
			kkeep_release(&keep);
			return -1;
		}
		if (!rq->checked_out) {
			req.changed = &keep.rebuilt;
			req.kept_files = keep.kept;
		}
		req.lab = rq->lab;
		req.repo_id = rq->repo_id;
		req.commit = rq->hex;
		req.tree = tree;
		req.src_dir = worktree_path(rq->wt);
		req.repo = rq->repo;
		req.recipe = rq->recipe;
		req.recipe_id = recipe_id;
		req.jobs = rq->jobs;
		req.progress = rq->progress;
		req.indent = rq->indent;
		rc = kbuild_build(&req, br);
		kkeep_release(&keep);
		if (rc < 0)
			return -1;
	}
	kr->message = result_line(br);
	if (br->status == KBUILD_ENV_FAILED)
		return -1;
	if (br->status != KBUILD_OK)
		return 1;
	kr->kernel = br->bzimage;
	kr->build_id = br->build_id;
	return 0;
}

int kernel_for_commit(const struct kernel_request *rq, struct kernel_result *kr)
{
	struct commit_info ci;
	int rc;

	memset(kr, 0, sizeof(*kr));
	if (gitrepo_commit_info(rq->repo, rq->hex, &ci) < 0)
		return -1;
	rc = kernel_for_tree(rq, ci.tree, kr);
	commit_info_release(&ci);
	return rc;
}

void kernel_result_release(struct kernel_result *kr)
{
	kbuild_result_release(&kr->build);
	free(kr->message);
	memset(kr, 0, sizeof(*kr));
}

/* Where icecream sent the compiles ccache did not have. */
static void print_icecc(const struct kbuild_icecc *ic, const char *indent)
{
	const struct icecc_counts *c = &ic->counts;

	if (ic->unknown) {
		printf("%sicecream:   where compiles went is not known: %s\n", indent, ic->unknown);
		return;
	}
	printf("%sicecream:   %u through icecc: %u compiled remotely on %u%s node%s, %u here", indent, c->calls,
	       c->remote, c->hosts, c->hosts >= ICECC_LOG_MAX_HOSTS ? " or more" : "", c->hosts == 1 ? "" : "s",
	       c->local);
	if (c->fallbacks)
		printf(" (%u of them after a remote node failed)", c->fallbacks);
	printf("\n");
}

void kernel_print_build(const struct kbuild_result *res, const char *indent)
{
	char dur[32];

	if (!indent)
		indent = "";
	printf("%sbuild:      %s%s", indent, kbuild_status_to_string(res->status), res->cache_hit ? " (cache hit: not rebuilt)" : "");
	if (!res->cache_hit && res->status == KBUILD_OK)
		printf(", %d objects compiled in %s%s", res->objects, fmt_duration(res->duration_ms, dur, sizeof(dur)),
		       *res->config_from ? " (config step skipped)" : "");
	printf("\n");
	if (!res->cache_hit && res->status == KBUILD_OK) {
		struct strbuf sb = STRBUF_INIT;

		kernel_explain_build(res, &sb);
		printf("%scompiled:   %s\n", indent, sb.buf);
		strbuf_release(&sb);
	}
	if (!res->cache_hit && res->compiles.calls)
		printf("%scompiles:   %u: %u from the local ccache, %u from ccache_remote, %u compiled\n",
		       indent, res->compiles.calls, res->compiles.local_hits, res->compiles.remote_hits,
		       res->compiles.compiled);
	if (!res->cache_hit && res->icecc.used && (res->compiles.calls || res->icecc.unknown))
		print_icecc(&res->icecc, indent);
	if (res->message)
		print_line("%smessage:    %s", indent, res->message);
	if (res->status == KBUILD_OK) {
		printf("%skernel:     %s\n", indent, res->bzimage);
		printf("%sconfig:     %s (hash %.12s)\n", indent, res->config, res->config_hash);
		printf("%ssystem.map: %s\n", indent, res->system_map);
		printf("%svmlinux:    sha256 %s (the image's payload verified)\n", indent, res->vmlinux_sha256);
	}
	if (res->log)
		printf("%slog:        %s\n", indent, res->log);
	if (res->excerpt && *res->excerpt) {
		char *in = xstrfmt("%s  ", indent);

		printf("%s%s:\n", indent, res->status == KBUILD_DRIFT ? "config drift" : "errors");
		print_lines(in, res->excerpt);
		free(in);
	}
}

int kernel_worktree_lock(struct lab *lab, int64_t repo_id, char **dir)
{
	char *name = xstrfmt("worktree-%lld", (long long)repo_id);
	int copy, fd = lab_lock_copy(lab, name, &copy);

	free(name);
	*dir = NULL;
	if (fd >= 0)
		*dir = copy ? xstrfmt("%s/worktrees/repo-%lld.%d", lab->state_dir, (long long)repo_id, copy)
			    : xstrfmt("%s/worktrees/repo-%lld", lab->state_dir, (long long)repo_id);
	return fd;
}

int kernel_repo_open(struct kernel_repo *pr, struct lab *lab, const char *repo_arg, const char *rev)
{
	char *lock_name = NULL, *wt_dir = NULL;
	int ret = -1;

	memset(pr, 0, sizeof(*pr));
	pr->lock_fd = -1;
	if (gitrepo_open(&pr->repo, repo_arg) < 0 || gitrepo_resolve(pr->repo, rev, pr->hex) < 0)
		goto out;
	pr->abs_path = real_path(gitrepo_path(pr->repo));
	if (!pr->abs_path || db_repo_id(lab->db, pr->abs_path, &pr->repo_id) < 0)
		goto out;
	pr->lock_fd = kernel_worktree_lock(lab, pr->repo_id, &wt_dir);
	if (pr->lock_fd < 0)
		goto out;
	if (worktree_open(&pr->wt, pr->repo, wt_dir) < 0)
		goto out;
	ret = 0;
out:
	free(lock_name);
	free(wt_dir);
	if (ret < 0)
		kernel_repo_release(pr);
	return ret;
}

void kernel_repo_release(struct kernel_repo *pr)
{
	worktree_free(pr->wt);
	gitrepo_free(pr->repo);
	if (pr->lock_fd >= 0)
		close(pr->lock_fd);
	free(pr->abs_path);
	memset(pr, 0, sizeof(*pr));
	pr->lock_fd = -1;
}

int kernel_for_rev(struct lab *lab, const char *repo_arg, const char *rev, const struct kbuild_recipe *recipe,
		   int quiet, char hex[41], struct kernel_result *kr)
{
	struct kernel_request rq = { 0 };
	struct kernel_repo pr;
	int rc;

	memset(kr, 0, sizeof(*kr));
	if (kernel_repo_open(&pr, lab, repo_arg, rev) < 0)
		return -1;
	memcpy(hex, pr.hex, 41);
	if (!quiet)
		fprintf(stderr, "build %.12s of %s\n", hex, pr.abs_path);
	rq.lab = lab;
	rq.repo = pr.repo;
	rq.repo_id = pr.repo_id;
	rq.wt = pr.wt;
	rq.hex = hex;
	rq.recipe = recipe;
	rq.progress = quiet ? PROGRESS_QUIET : PROGRESS_AUTO;
	rq.indent = "  ";
	rq.say_checkout = 1;
	rc = kernel_for_commit(&rq, kr);
	if ((rc >= 0 || kr->message) && !quiet)
		kernel_print_build(&kr->build, "  ");
	kernel_repo_release(&pr);
	return rc;
}

/* A commit of klab's own (the revert check's) is in the worktree's object
 * store only, so its tree is read there; the store, the checkout and the
 * build are kernel_for_commit's. */
int kernel_for_klab_commit(const struct kernel_request *rq, struct kernel_result *kr)
{
	char tree[41];

	memset(kr, 0, sizeof(*kr));
	if (worktree_commit_tree(rq->wt, rq->hex, tree) < 0)
		return -1;
	return kernel_for_tree(rq, tree, kr);
}
