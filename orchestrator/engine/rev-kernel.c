/* A revision's bootable kernel (rev-kernel.h): kernel.c's build or store
 * lookup, its failure made one error line. */
#include "engine/rev-kernel.h"
#include "kernel/kernel.h"
#include "util/util.h"

int rev_kernel(struct lab *lab, const char *repo, const char *rev, const struct kbuild_recipe *recipe, int quiet,
	       char **bzimage, int64_t *build_id, char hex[41])
{
	struct kernel_result kr = { 0 };
	int rc, ret = -1;

	rc = kernel_for_rev(lab, repo, rev, recipe, quiet, hex, &kr);
	if (rc < 0 && !kr.message)
		goto cleanup;
	if (rc != 0) {
		error("cannot run: the kernel of %.12s did not build (%s)", hex,
		      kr.build.message ? kr.build.message : "");
		goto cleanup;
	}
	*bzimage = xstrdup(kr.kernel);
	*build_id = kr.build_id;
	ret = 0;
cleanup:
	kernel_result_release(&kr);
	return ret;
}
