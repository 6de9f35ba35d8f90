/* Turn Debian's linux-source tarball into a git repository (libgit2),
 * atomically: unpack and commit in a temporary directory, then rename. */
#include "kernel/tree.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "util/run-command.h"

#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fixed identity and date: the same tarball gives the same commit id
 * on every machine. */
#define IMPORT_NAME "klab import"
#define IMPORT_EMAIL "klab@localhost"
#define IMPORT_TIME 1670760000	/* 2022-12-11, Linux 6.1 */

int tree_strip_debian_gitignore(char *text)
{
	char *p = strstr(text, "\n#\n# Debian packaging");
	if (!p)
		p = strstr(text, "\n# Debian packaging");
	if (!p)
		return 0;
	p[1] = '\0';
	return 1;
}

static int git_fail(const char *what, const char *subject)
{
	const git_error *e = git_error_last();
	return error("%s '%s': %s", what, subject, e && e->message ? e->message : "unknown libgit2 error");
}

static int existing_import(const char *dest, char hex[41])
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	int ok = 0;

	if (git_repository_open_ext(&repo, dest, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return 0;
	if (git_revparse_single(&obj, repo, "refs/heads/main") == 0) {
		git_oid_tostr(hex, 41, git_object_id(obj));
		ok = 1;
	}
	git_object_free(obj);
	git_repository_free(repo);
	return ok;
}

static char *kernel_version(const char *top)
{
	char *mf = xstrfmt("%s/Makefile", top), *text = NULL, *v = NULL;
	int ver = -1, patch = -1, sub = -1;

	if (read_file(mf, 1 << 20, &text, NULL) == 0) {
		char *l;
		if ((l = strstr(text, "\nVERSION = ")))
			ver = atoi(l + 11);
		if ((l = strstr(text, "\nPATCHLEVEL = ")))
			patch = atoi(l + 14);
		if ((l = strstr(text, "\nSUBLEVEL = ")))
			sub = atoi(l + 12);
		if (ver >= 0 && patch >= 0 && sub >= 0)
			v = xstrfmt("%d.%d.%d", ver, patch, sub);
	}
	free(mf);
	free(text);
	return v ? v : xstrdup("unknown");
}

/* nftw cannot carry a context: one import at a time in a process. */
static git_index *walk_index;
static size_t walk_top_len;
static int walk_failed;
static size_t walk_count;

static int add_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	const char *rel = path + walk_top_len;

	(void)st;
	(void)f;
	if (!strcmp(rel, ".git") || !strncmp(rel, ".git/", 5))
		return 0;
	if (flag != FTW_F && flag != FTW_SL)
		return 0;
	/* Every file of the tarball, whatever the .gitignore files say (git
	 * add -f): add_bypath does not consult ignore rules. */
	if (git_index_add_bypath(walk_index, rel) < 0) {
		git_fail("cannot add", rel);
		walk_failed = 1;
		return 1;
	}
	walk_count++;
	return 0;
}

static int commit_everything(const char *top, const char *version, char hex[41])
{
	git_repository *repo = NULL;
	git_index *index = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid tree_id, commit_id;
	git_object *target = NULL;
	char *msg = NULL, *tag = NULL;
	int ret = -1;

	if (git_repository_init(&repo, top, 0) < 0)
		return git_fail("cannot create repository", top);
	if (git_repository_index(&index, repo) < 0) {
		git_fail("cannot open the index of", top);
		goto out;
	}
	walk_index = index;
	walk_top_len = strlen(top) + 1;
	walk_failed = 0;
	walk_count = 0;
	if (nftw(top, add_one, 64, FTW_PHYS) != 0 || walk_failed) {
		error("cannot add the files of '%s'", top);
		goto out;
	}
	if (git_index_write(index) < 0 || git_index_write_tree(&tree_id, index) < 0) {
		git_fail("cannot write the index of", top);
		goto out;
	}
	fprintf(stderr, "klab: %zu files\n", walk_count);
	if (git_tree_lookup(&tree, repo, &tree_id) < 0 ||
	    git_signature_new(&sig, IMPORT_NAME, IMPORT_EMAIL, IMPORT_TIME, 0) < 0) {
		git_fail("cannot prepare the commit in", top);
		goto out;
	}
	msg = xstrfmt("Linux %s\n\nImported by klab from Debian's linux-source-6.1 tarball.\n", version);
	if (git_commit_create(&commit_id, repo, "refs/heads/main", sig, sig, NULL, msg, tree, 0, NULL) < 0 ||
	    git_repository_set_head(repo, "refs/heads/main") < 0) {
		git_fail("cannot commit in", top);
		goto out;
	}
	tag = xstrfmt("v%s", version);
	if (git_object_lookup(&target, repo, &commit_id, GIT_OBJECT_COMMIT) == 0)
		git_tag_create_lightweight(&commit_id, repo, tag, target, 1);
	git_oid_tostr(hex, 41, git_object_id(target));
	ret = 0;
out:
	free(msg);
	free(tag);
	git_object_free(target);
	git_tree_free(tree);
	git_signature_free(sig);
	git_index_free(index);
	git_repository_free(repo);
	return ret;
}

int tree_import(const char *tarball, const char *dest, char hex[41], int *reused)
{
	char *tmp = NULL, *top = NULL, *gi = NULL, *text = NULL, *version = NULL;
	const char *argv[] = { "tar", "-xJf", tarball, "-C", NULL, NULL };
	struct run_opts o = { 0 };
	struct run_result rr;
	struct stat st;
	DIR *d = NULL;
	struct dirent *e;
	int ret = -1;

	*reused = 0;
	if (existing_import(dest, hex)) {
		*reused = 1;
		return 0;
	}
	if (stat(tarball, &st) < 0)
		return error("cannot read '%s': %s (install the Debian package linux-source-6.1)", tarball,
			     strerror(errno));
	if (stat(dest, &st) == 0)
		return error("'%s' exists and is not an imported tree: remove it or choose another --dest", dest);
	tmp = xstrfmt("%s.tmp-%ld", dest, (long)getpid());
	if (mkdir_p(tmp, 0755) < 0)
		goto out;
	argv[4] = tmp;
	o.argv = argv;
	o.output_path = "/dev/null";
	fprintf(stderr, "klab: unpacking %s\n", tarball);
	if (run_command(&o, &rr) < 0)
		goto out;
	if (rr.status != RUN_EXITED || rr.exit_code) {
		error("tar could not unpack '%s' (exit %d)", tarball, rr.exit_code);
		goto out;
	}
	d = opendir(tmp);
	if (!d) {
		error("cannot read '%s': %s", tmp, strerror(errno));
		goto out;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (top) {
			error("'%s' does not hold a single top directory", tarball);
			goto out;
		}
		top = xstrfmt("%s/%s", tmp, e->d_name);
	}
	if (!top) {
		error("'%s' is empty", tarball);
		goto out;
	}
	/* Debian's .gitignore ends by ignoring everything at the top. */
	gi = xstrfmt("%s/.gitignore", top);
	if (read_file(gi, 1 << 20, &text, NULL) == 0 && tree_strip_debian_gitignore(text) &&
	    write_file_atomic(gi, text, strlen(text)) < 0)
		goto out;
	version = kernel_version(top);
	fprintf(stderr, "klab: committing Linux %s\n", version);
	if (commit_everything(top, version, hex) < 0)
		goto out;
	{
		char *parent = xstrdup(dest), *slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			mkdir_p(parent, 0755);
		}
		free(parent);
	}
	if (rename(top, dest) < 0) {
		error("cannot move '%s' to '%s': %s", top, dest, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (d)
		closedir(d);
	if (tmp)
		remove_tree(tmp);
	free(tmp);
	free(top);
	free(gi);
	free(text);
	free(version);
	return ret;
}
