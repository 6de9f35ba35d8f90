/* The kernel a revision boots with, for the commands that measure
 * commits (run, compare, reproduce): built with a recipe, or found in
 * the artifact store. */
#ifndef KLAB_REV_KERNEL_H
#define KLAB_REV_KERNEL_H

#include <stdint.h>

struct kbuild_recipe;
struct lab;

/* Commit rev of the repository at repo built with recipe (or found):
 * *bzimage (caller frees), its build row and the commit.  A kernel that
 * did not build is an error here ("cannot run: the kernel of X did not
 * build (why)"), as is an unknown revision.  0, or -1 after error(). */
int rev_kernel(struct lab *lab, const char *repo, const char *rev, const struct kbuild_recipe *recipe, int quiet,
	       char **bzimage, int64_t *build_id, char hex[41]);

#endif
