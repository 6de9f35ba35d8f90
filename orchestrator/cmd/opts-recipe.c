/* The kernel config recipe rows build, bisect start, run, compare and
 * track add share (opts.h): what they collected made into a kbuild
 * recipe, checked before any work. */
#include "cmd/opts.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

int recipe_opts_given(const struct recipe_opts *ro)
{
	return ro->base || ro->fragments.nr || ro->options.nr || ro->no_defaults || ro->allow_drift;
}

void recipe_opts_release(struct recipe_opts *ro)
{
	opt_strings_release(&ro->fragments);
	opt_strings_release(&ro->options);
	memset(ro, 0, sizeof(*ro));
}

int recipe_from_opts(const struct recipe_opts *ro, struct kbuild_recipe *r)
{
	struct kconfig_setting *s;
	size_t nr;

	memset(r, 0, sizeof(*r));
	if (check_no_controls("--config", ro->base) < 0)
		return -1;
	for (size_t i = 0; i < ro->fragments.nr; i++)
		if (check_no_controls("--fragment", ro->fragments.v[i]) < 0)
			return -1;
	for (size_t i = 0; i < ro->options.nr; i++)
		if (check_no_controls("--config-option", ro->options.v[i]) < 0)
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
	for (size_t i = 0; i < ro->fragments.nr; i++) {
		char *p;
		if (kbuild_resolve_fragment(ro->fragments.v[i], &p) < 0) {
			kbuild_recipe_release(r);
			return -1;
		}
		r->fragments = xrealloc(r->fragments, (r->nr_fragments + 1) * sizeof(char *));
		r->fragments[r->nr_fragments++] = p;
	}
	for (size_t i = 0; i < ro->options.nr; i++) {
		r->options = xrealloc(r->options, (r->nr_options + 1) * sizeof(char *));
		r->options[r->nr_options++] = xstrdup(ro->options.v[i]);
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

int recipe_for_job(struct recipe_opts *ro, const struct job *job, struct kbuild_recipe *r)
{
	/* the job's own fragments join the recipe */
	for (size_t i = 0; i < job->nr_fragments; i++)
		opt_strings_add(&ro->fragments, job->fragments[i]);
	return recipe_from_opts(ro, r);
}
