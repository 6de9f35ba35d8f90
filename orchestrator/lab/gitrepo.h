/* libgit2 access to the user's repository (read only) and to klab's own
 * worktree, where commits are checked out for testing. */
#ifndef KLAB_GITREPO_H
#define KLAB_GITREPO_H

#include <stddef.h>
#include <stdint.h>
#include "core/bisect.h"
#include "util/hash.h"

struct gitrepo;
struct worktree;

struct commit_info {
	char hash[41];
	char tree[41];
	char *subject;
	char *author;		/* "Name <email>" */
	int64_t author_time;
	int author_tz;		/* minutes east of UTC */
	int64_t commit_time;
	int nr_parents;
};

/* One-time libgit2 set-up for the process. */
void gitrepo_global_init(void);

int gitrepo_open(struct gitrepo **out, const char *path);
void gitrepo_free(struct gitrepo *repo);
/* Absolute path of the repository's working tree (or git dir if bare). */
const char *gitrepo_path(const struct gitrepo *repo);
/* Object directory (shared by linked worktrees). */
const char *gitrepo_objects_dir(const struct gitrepo *repo);

/* Resolve any revision to a commit id. */
int gitrepo_resolve(struct gitrepo *repo, const char *rev, char hex[41]);
/* 1 if anc is an ancestor of (or equal to) desc, 0 if not, -1 on error. */
int gitrepo_is_ancestor(struct gitrepo *repo, const char *anc, const char *desc);
/* Merge bases of `one` with any of `others` (git's get_merge_bases_many),
 * newest first.  *out is an array of 41-byte hex strings. */
int gitrepo_merge_bases(struct gitrepo *repo, const char *one, char (*others)[41],
			size_t nr_others, char (**out)[41], size_t *nr_out);
int gitrepo_commit_info(struct gitrepo *repo, const char *hex, struct commit_info *out);
void commit_info_release(struct commit_info *ci);

/* The candidate DAG: commits reachable from bad and not from any good,
 * with parents as indices.  With paths, commits that do not touch them
 * are TREESAME and merges that take a path from one parent follow only
 * that parent (git's default history simplification). */
int gitrepo_load_dag(struct gitrepo *repo, const char *bad, char (*goods)[41], size_t nr_goods,
		     int first_parent, const char *const *paths, size_t nr_paths,
		     struct bisect_dag *dag);
/* What the walk learnt on the way, for free: whether bad is a candidate
 * (else it is a good commit or reachable from one), and for each good
 * whether it is the parent of a candidate (then it is an ancestor of
 * bad; if not, it may still be).  Call after gitrepo_load_dag. */
struct range_info {
	int bad_is_candidate;
	unsigned char *good_below;	/* nr_goods flags, caller frees */
};
int gitrepo_load_dag_info(struct gitrepo *repo, const char *bad, char (*goods)[41], size_t nr_goods,
			  int first_parent, const char *const *paths, size_t nr_paths,
			  struct bisect_dag *dag, struct range_info *info);
/* Fetch one branch of a remote into klab's own ref: `remote` is a remote
 * configured in the repository (its URL is used) or a URL or path
 * libgit2 understands (path, file://, https://, ssh://, user@host:path).
 * Only `branch`'s commits are downloaded and only `ref` (e.g.
 * refs/klab/track/NAME) is written, forced: no remote-tracking branch,
 * no tags, no FETCH_HEAD; HEAD, the index and the user's branches are
 * never touched.  old_hex: `ref` before ("" when it did not exist),
 * new_hex: the branch's tip now.  -1 after error() naming the remote
 * (unreachable, branch missing, ...). */
int gitrepo_fetch_branch(struct gitrepo *repo, const char *remote, const char *branch, const char *ref,
			 char old_hex[41], char new_hex[41]);
/* 1 when refs/heads/<branch> is a valid ref name, else 0. */
int gitrepo_branch_name_valid(const char *branch);
/* Delete a ref of klab's own (a missing one is no error). */
int gitrepo_ref_delete(struct gitrepo *repo, const char *ref);
/* 1 when `name` is a remote configured in the repository, else 0. */
int gitrepo_has_remote(struct gitrepo *repo, const char *name);
void oid_to_hex41(const unsigned char oid[20], char hex[41]);
int hex_to_oid(const char *hex, unsigned char oid[20]);

/* klab's own checkout of a repository: a separate git directory at dir
 * that borrows the repository's objects (alternates), so the user's
 * HEAD, index, refs and files are never touched.  The caller must hold
 * klab's lock on the worktree: stale git lock files are removed. */
int worktree_open(struct worktree **out, struct gitrepo *src, const char *dir);
/* Check a commit out, rewriting only files that differ. */
int worktree_checkout(struct worktree *wt, const char *hex);
const char *worktree_path(const struct worktree *wt);
void worktree_free(struct worktree *wt);

/* The revert of `culprit` on top of `onto` (the bad end), made by klab in
 * the worktree's own object store: libgit2's revert (a merge against its
 * first parent, as `git revert -m 1`), the merged index's tree, a commit
 * with onto as its parent, author and committer "klab" at onto's commit
 * time (so the same revert has the same id wherever it is made).  No ref
 * is written and nothing reaches the user's repository.  0 made (rr->hex);
 * 1 it does not apply (rr->reason: the conflicting paths, at most
 * REVERT_MAX_CONFLICTS named and all counted); -1 error.  Release rr with
 * revert_result_release(). */
#define REVERT_MAX_CONFLICTS 10
struct revert_result {
	int applies;
	char hex[41];
	char *paths[REVERT_MAX_CONFLICTS];
	size_t nr_paths;	/* kept in paths[] */
	size_t nr_conflicts;	/* all of them */
	char *reason;		/* why it does not apply, one line */
};
int worktree_revert(struct worktree *wt, const char *culprit, const char *onto, struct revert_result *rr);
void revert_result_release(struct revert_result *rr);
/* The tree of a commit the worktree can read (klab's own commits too). */
int worktree_commit_tree(struct worktree *wt, const char *hex, char tree[41]);
/* gitrepo_commit_info for a commit the worktree can read. */
int worktree_commit_info(struct worktree *wt, const char *hex, struct commit_info *out);
/* The commit the worktree's HEAD names: 1 (hex filled), 0 none (unborn,
 * unreadable). */
int worktree_head(struct worktree *wt, char hex[41]);
/* gitrepo_diff_each and gitrepo_read_path for commits the worktree can
 * read (klab's own commits too). */
int worktree_diff_each(struct worktree *wt, const char *from_hex, const char *to_hex,
		       int (*fn)(const char *path, int added, void *data), void *data);
int worktree_read_path(struct worktree *wt, const char *hex, const char *path, size_t max, char **data,
		       size_t *len);


/* 1 when a path the trees of two commits differ in (either side's name
 * of a rename, a deletion, an addition) satisfies match, 0 when none
 * does, -1 after error() (a commit the repository does not have). */
int gitrepo_diff_matches(struct gitrepo *repo, const char *from_hex, const char *to_hex,
			 int (*match)(const char *path, void *data), void *data);
/* The content of path in commit hex's tree, NUL-terminated (*data
 * malloc'd, *len without the NUL): 1 read, 0 when it is not a regular
 * file there (absent, a link, a submodule, a directory) or is larger
 * than max bytes, -1 after error() (a commit the repository lacks). */
int gitrepo_read_path(struct gitrepo *repo, const char *hex, const char *path, size_t max, char **data,
		      size_t *len);
/* fn for each path the trees of two commits differ in (both names of a
 * rename, which is a deletion and an addition; added: the path is new in
 * to_hex), until it returns non-zero: that value, 0 when it never does,
 * -1 after error() (a commit the repository does not have). */
int gitrepo_diff_each(struct gitrepo *repo, const char *from_hex, const char *to_hex,
		      int (*fn)(const char *path, int added, void *data), void *data);

#endif
