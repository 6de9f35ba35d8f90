/* Token-identical files keep their build: when klab checks a commit out
 * over another in its worktree, a source whose new text is the old one's
 * tokens at the same lines and columns (a comment edit) gets its old
 * mtime back, so make does not rebuild what includes it; and what a
 * build then compiled, explained by the files that made it. */
#ifndef KLAB_KKEEP_H
#define KLAB_KKEEP_H

#include <stddef.h>
#include <time.h>

#include "kernel/ksources.h"

struct worktree;
struct strbuf;

struct kkeep_file {
	char *path;		/* repository-relative */
	struct timespec mtime;	/* before the checkout */
	char blob[41];		/* what the checkout must leave there */
};

struct kkeep {
	struct kkeep_file *files;	/* token-identical: their mtime goes back */
	size_t nr, alloc;
	size_t kept;			/* restored by kkeep_restore */
	struct ksources rebuilt;	/* the other paths the checkout changes (finished) */
	char *doubt;			/* why nothing is kept (NULL: each file decided) */
};

#define KKEEP_INIT { NULL, 0, 0, 0, KSOURCES_INIT, NULL }

/* Before checking commit `to` out in wt (whose directory is wt_dir),
 * for each path its HEAD and `to` differ in: a .c or .h that matters to
 * no rule by its name (ksources_path_matters), a regular file whose text
 * on disk and in `to` are the same tokens (ksources_same_tokens) is
 * remembered with its mtime; every other path goes to k->rebuilt.
 * Nothing is remembered (k->doubt says why) when the build directories
 * under wt_dir (kbuild.h) are not each a configured build without Rust
 * and without CONFIG_IKHEADERS (bindgen and the embedded headers read
 * comments), when the commits differ in what the config step reads, or
 * when git cannot compare them, when more than 20000 paths changed, or
 * when keep is 0 (klab.conf's
 * comment_only_files = rebuild).  Never fails: doubt is a full rebuild. */
void kkeep_prepare(struct kkeep *k, struct worktree *wt, const char *wt_dir, const char *to, int keep);
/* After the checkout: each remembered file whose content is now the blob
 * `to` has gets its old mtime back (k->kept counts them); any other goes
 * to k->rebuilt.  Sound because a file's mtime stays what it was only
 * while its text has the same tokens: an object newer than it was built
 * from those tokens. */
void kkeep_restore(struct kkeep *k, const char *wt_dir);
void kkeep_release(struct kkeep *k);

#endif
