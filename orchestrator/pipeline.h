/* Test one commit: (build →) … Today: the build part, shared by
 * `klab build` and `klab bisect --build`. */
#ifndef KLAB_PIPELINE_H
#define KLAB_PIPELINE_H

#include <stdint.h>
#include "kbuild.h"

struct lab;
struct gitrepo;
struct worktree;

/* Kernel of commit `hex`: a store lookup first (no checkout on a hit),
 * else check it out into wt (unless already_checked_out) and build. */
int pipeline_build(struct lab *lab, struct gitrepo *repo, int64_t repo_id, struct worktree *wt,
		   const char *hex, int already_checked_out, const struct kbuild_recipe *recipe,
		   int jobs, enum kbuild_progress progress, const char *indent, struct kbuild_result *res);

/* Print a result the way `klab build` does. */
void pipeline_print_build(const struct kbuild_result *res, const char *indent);

#endif
