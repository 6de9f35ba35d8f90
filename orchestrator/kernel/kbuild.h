/* Kernel builds: config recipes (base + fragments + options, then
 * olddefconfig and a drift check), make with ccache out of tree, and the
 * artifact store keyed by (tree id, recipe id). */
#ifndef KLAB_KBUILD_H
#define KLAB_KBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/icecc-log.h"
#include "kernel/ksources.h"
#include "util/enum.h"

struct lab;
struct strbuf;
struct gitrepo;

/* What config to build: a base (tinyconfig, defconfig, allnoconfig or a
 * path to a .config), fragments (paths) and single options. */
struct kbuild_recipe {
	char *base;
	char **fragments;
	size_t nr_fragments;
	char **options;		/* "CONFIG_X=y" or "CONFIG_X=n" */
	size_t nr_options;
	int allow_drift;
};

struct kconfig_setting {
	char *name;		/* CONFIG_X */
	char *value;		/* "y", "m", "\"str\"", "123"; NULL = is not set */
	char *origin;		/* file:line or "--config-option" */
};

/* Directory of the fragments klab ships (guests/kconfig). */
const char *kbuild_fragment_dir(void);
/* Where klab's ccache shim lives (kernel/ccache-shim.c): $KLAB_SHIM_DIR,
 * else shim/ beside the klab binary (the build tree), else
 * <libexecdir>/klab/shim. */
const char *kbuild_shim_dir(void);
/* A fragment name ("perf-guest") or path to its file; error if missing. */
int kbuild_resolve_fragment(const char *name, char **path);
/* The default recipe: tinyconfig + x86_64-base + perf-guest. */
int kbuild_recipe_default(struct kbuild_recipe *r);
void kbuild_recipe_release(struct kbuild_recipe *r);
/* Serialize / parse a recipe (stored with bisections). */
void kbuild_recipe_to_text(const struct kbuild_recipe *r, struct strbuf *out);
int kbuild_recipe_from_text(struct kbuild_recipe *r, const char *text);
/* Every requested setting, later ones winning; malformed lines are
 * errors with file:line. */
int kbuild_recipe_settings(const struct kbuild_recipe *r, struct kconfig_setting **out, size_t *nr);
void kconfig_settings_release(struct kconfig_setting *s, size_t nr);
/* Id of the recipe: hash of base (content if a file), fragment contents,
 * options and compiler version.  Known without building. */
int kbuild_recipe_id(const struct kbuild_recipe *r, char id[41]);
/* Compare a final .config with the requested settings; each symbol that
 * was dropped or changed is reported by name.  Returns the count. */
int kbuild_check_drift(const char *config_text, const struct kconfig_setting *s, size_t nr,
		       struct strbuf *report);

enum kbuild_status {
	KBUILD_OK,
	KBUILD_FAILED,		/* the commit does not build: a result */
	KBUILD_ENV_FAILED,	/* the machine failed (disk, tools): stop */
	KBUILD_DRIFT		/* the config came out other than asked */
};
#define KBUILD_STATUS_LAST (KBUILD_DRIFT + 1)
KLAB_ENUM_DECL(kbuild_status);	/* "ok", "build-failed", "env-failed", "config-drift" */

enum kbuild_progress { PROGRESS_AUTO, PROGRESS_QUIET, PROGRESS_LINES, PROGRESS_TTY };

struct kbuild_request {
	struct lab *lab;
	int64_t repo_id;
	const char *commit;		/* hex, for the record */
	const char *tree;		/* tree id of the commit */
	const char *src_dir;		/* a checkout of that commit */
	struct gitrepo *repo;		/* its repository: NULL, the config step always runs */
	const struct kbuild_recipe *recipe;
	const char *recipe_id;		/* kbuild_recipe_id(recipe), as looked up */
	int jobs;			/* 0: lab config, else CPUs */
	enum kbuild_progress progress;
	const char *indent;		/* prefix for progress lines */
	/* What the checkout before this build changed (kernel/kkeep.h):
	 * the paths whose objects are compiled again, and how many files
	 * kept their build; NULL: not known (nothing checked out here) */
	const struct ksources *changed;
	size_t kept_files;
};

/* Where a build's compiles went, from ccache's stats log of the build
 * (CCACHE_STATSLOG): each cacheable compile is a local cache hit, a hit
 * in ccache_remote, or compiled (locally or through compiler_wrapper). */
struct kbuild_compiles {
	unsigned calls, local_hits, remote_hits, compiled;
};
/* Count the compiles of a stats log's text ("# FILE" then a counter a
 * line per call).  Unknown lines are ignored; never fails. */
void kbuild_compiles_parse(struct kbuild_compiles *c, const char *text);

/* Where icecream sent the compiles of a build whose compiler_wrapper is
 * icecc (its client's log, icecc-log.h). */
struct kbuild_icecc {
	int used;			/* compiler_wrapper is icecc */
	const char *unknown;		/* NULL, or why the counts are not known (klab's words) */
	struct icecc_counts counts;
};

struct kbuild_result {
	enum kbuild_status status;
	struct kbuild_compiles compiles;	/* of this build's make (zero: not known) */
	struct kbuild_icecc icecc;		/* of this build's make */
	int cache_hit;
	char *artifact_dir;
	char *bzimage, *config, *system_map, *log;
	char *excerpt;			/* errors or drift report */
	char *message;			/* one line */
	char recipe_id[41];
	char config_hash[41];
	char config_from[41];		/* "" or the commit whose .config was reused (no config step) */
	int64_t duration_ms;
	int objects;
	int ccache_hits;		/* of the objects, how many ccache gave; -1 not known */
	char *rebuilt_for;		/* NULL, or the changed files with the most dependent objects: "a (975), b (1)" */
	size_t kept_files;		/* changed files whose objects were kept (comments only) */
	int64_t build_id;
	char vmlinux_sha256[65];	/* "" unless ok: the verified kernel (kimage.h) */
};

/* Build the kernel of req->tree, which the caller looked up in the store
 * (kbuild_find) and missed: kernel_for_commit is the one caller.  Returns
 * 0 with res->status set, or -1 when klab itself failed. */
int kbuild_build(const struct kbuild_request *req, struct kbuild_result *res);
/* Only look the store up: 1 hit (res filled), 0 miss, -1 error. */
int kbuild_lookup(struct lab *lab, const char *tree, const char *recipe_id, struct kbuild_result *res);
/* kbuild_lookup, then the shared artifact store (klab.conf artifact_store):
 * a kernel another lab built from this tree and recipe is recorded as
 * this lab's build.  1 found, 0 none, -1 error. */
int kbuild_find(struct lab *lab, int64_t repo_id, const char *commit, const char *tree,
		const struct kbuild_recipe *recipe, const char *recipe_id, struct kbuild_result *res);
void kbuild_result_release(struct kbuild_result *res);

/* The build directory of a recipe for a checkout: a direct subdirectory
 * of it (<src>/.klab-build-<recipe12>, copies .N), where kbuild's srctree
 * is ".." and no compile line names the checkout, so ccache shares
 * objects across repositories and worktree copies.  The kernel's
 * .gitignore (".*") and the worktree's info/exclude keep it out of git
 * status.  (KBUILD_DIR_PREFIX, in ksources.h: source sets skip it.) */
char *kbuild_build_dir(const char *src_dir, const char *recipe_id);
/* The lock a build in that directory holds (lab_lock_copy: copy k of the
 * directory is copy k of the lock): build-<checkout's name>-<recipe12>. */
char *kbuild_build_lock_name(const char *src_dir, const char *recipe_id);

/* A build's marker (.klab-building) found at the start of the next one:
 * klab died during that build.  Kills what is left of its make process
 * group, and only that: the group is recognised by its leader's start
 * time recorded in the marker (a process that got the number since is
 * left alone; a marker without it is never acted on).  Returns how many
 * kills were sent (a group counts once). */
int kbuild_reap_interrupted(const char *marker, const char *indent, const char *bd);
/* Pull file:line: error lines (and linker errors) out of a build log;
 * classify environment failures.  Pure: exposed for tests. */
void kbuild_scan_log(const char *log, struct strbuf *excerpt, int *env_failure);

/* What a line of make's output (kbuild's quiet form) says: an object
 * compiled ("  CC", "  AS"), the link, the image.  Pure. */
enum kbuild_line { KBUILD_LINE_OTHER, KBUILD_LINE_OBJECT, KBUILD_LINE_LINK, KBUILD_LINE_IMAGE };
enum kbuild_line kbuild_line_kind(const char *line);
/* The objects a captured make output says it compiled. */
int kbuild_count_objects(const char *output);
/* The compiles a ccache stats log (CCACHE_STATSLOG) records that were
 * cache hits (direct or preprocessed), kbuild's compiler probes (of
 * /dev/null, or of no file) left out.  Pure. */
int kbuild_count_ccache_hits(const char *log);
/* Environment entries every make of a build gets whatever klab inherited
 * (NULL-terminated): no MAKEFLAGS of a make that runs klab, kbuild's quiet
 * output, the C locale. */
extern const char *const kbuild_make_env_fixed[];

/* 1 when a path of the source tree is read by the config step (make
 * <base>, olddefconfig): Kconfig*, Makefile* and Kbuild* anywhere,
 * scripts/, kernel/configs/, arch/<arch>/configs/.  Pure. */
int kbuild_path_feeds_config(const char *path);
/* 1 when the trees of two commits differ in such a path, 0 when not (the
 * .config made for one serves the other), -1 after error(). */
int kbuild_config_inputs_changed(struct gitrepo *repo, const char *from_hex, const char *to_hex);

#endif
