/* A commit's kernel: the artifact store first (no checkout on a hit),
 * else a checkout in klab's worktree and a build; and klab's worktree
 * copies of a repository, which those checkouts use. */
#ifndef KLAB_KERNEL_H
#define KLAB_KERNEL_H

#include <stdint.h>
#include "kernel/kbuild.h"

struct lab;
struct gitrepo;
struct strbuf;
struct worktree;

struct kernel_request {
	struct lab *lab;
	struct gitrepo *repo;
	int64_t repo_id;
	struct worktree *wt;		/* klab's worktree, checked out on a store miss */
	const char *hex;		/* the commit */
	const struct kbuild_recipe *recipe;
	int jobs;			/* 0: the lab's */
	enum kbuild_progress progress;
	const char *indent;		/* before progress lines */
	int checked_out;		/* wt holds hex already (a test command runs there) */
	int say_checkout;		/* "[checkout]" lines on stderr (unless progress is quiet) */
};

struct kernel_result {
	struct kbuild_result build;	/* status, paths, log, errors: for printing */
	const char *kernel;		/* build.bzimage when ok, else NULL */
	int64_t build_id;
	/* One line for the caller to print: ok "artifact store hit" or
	 * "compiled 2 m 3 s"; a skip or an environment failure of the build
	 * "build failed: <first error line>"; NULL when klab itself failed
	 * (reported already). */
	char *message;
	int64_t checkout_ms;		/* 0 when nothing was checked out here */
	int checkout_failed;		/* the -1 was the checkout's */
};

/* Get the kernel of rq->hex: resolve its tree, ask the artifact store
 * (kbuild_find: a hit, built, known broken or in the shared store, checks
 * nothing out; looked up once), else
 * check it out in rq->wt (unless rq->checked_out) and build.  0 ok
 * (kr->kernel, kr->build_id); 1 skip: the commit does not build or its
 * config drifts (kr->message the reason); -1 an environment failure: the
 * machine failed the build (kr->message says how) or klab did (message
 * NULL, error reported).  Release kr with kernel_result_release(). */
int kernel_for_commit(const struct kernel_request *rq, struct kernel_result *kr);
void kernel_result_release(struct kernel_result *kr);
/* kernel_for_commit for a commit klab made in rq->wt's own object store
 * (the revert check's), which the user's repository does not have: its
 * tree is read from the worktree; rq->checked_out must be 0. */
int kernel_for_klab_commit(const struct kernel_request *rq, struct kernel_result *kr);

/* What a compiled build compiled and why, appended to out: "12 objects
 * (3 from ccache) for include/linux/fs.h (975), mm/mmap.c (1); 1
 * comment-only file kept its build". */
void kernel_explain_build(const struct kbuild_result *res, struct strbuf *out);
/* Print a build result the way `klab build` does. */
void kernel_print_build(const struct kbuild_result *res, const char *indent);

/* klab's checkout of a repository: the first of its copies no other klab
 * process holds (bisections and builds of one repository can run at
 * once, each in its own).  Lock fd, *dir the worktree; -1 if all busy. */
int kernel_worktree_lock(struct lab *lab, int64_t repo_id, char **dir);

/* A user's repository at a revision, with klab's worktree for it taken
 * (locks/worktree-<repo>.lock held until release): what `klab build` and
 * `klab run --rev` need before kernel_for_commit. */
struct kernel_repo {
	struct gitrepo *repo;
	struct worktree *wt;
	char *abs_path;
	int64_t repo_id;
	char hex[41];
	int lock_fd;
};
int kernel_repo_open(struct kernel_repo *kp, struct lab *lab, const char *repo_arg, const char *rev);
void kernel_repo_release(struct kernel_repo *kp);

/* Build commit `rev` of the repository at `repo_arg` with `recipe`,
 * klab's worktree for it taken and given back, printing as `klab run`
 * does unless quiet.  kernel_for_commit's 0 / 1 / -1 (-1 also for an
 * unknown revision or a busy worktree); hex: the commit. */
int kernel_for_rev(struct lab *lab, const char *repo_arg, const char *rev, const struct kbuild_recipe *recipe,
		   int quiet, char hex[41], struct kernel_result *kr);

#endif
