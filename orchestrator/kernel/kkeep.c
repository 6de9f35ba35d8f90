/* Token-identical files keep their build (kkeep.h).  make compares
 * mtimes and ccache's depend mode hashes a header's bytes, so a comment
 * edit in a header every object includes used to cost a full rebuild
 * whose objects came out the same as before. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kbuild.h"
#include "kernel/kkeep.h"
#include "kernel/ksources.h"
#include "lab/gitrepo.h"
#include "util/hash.h"
#include "util/strbuf.h"
#include "util/util.h"

#define MAX_CONFIG (16u << 20)
/* Past this many changed paths (another release) the texts are not
 * compared: the build is nearly whole anyway. */
#define MAX_COMPARED_PATHS 20000

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static int config_has(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

/* Why the build directories under wt_dir rule the shortcut out, or NULL:
 * each must be configured, without Rust (bindgen turns the headers'
 * comments into documentation) and without the embedded headers
 * (CONFIG_IKHEADERS: an archive of their text). */
static char *build_dirs_doubt(const char *wt_dir)
{
	DIR *d = opendir(wt_dir);
	struct dirent *de;
	char *why = NULL;

	if (!d)
		return xstrfmt("cannot read '%s'", wt_dir);
	while (!why && (de = readdir(d))) {
		char *cfg, *text = NULL;
		int hold;

		if (strncmp(de->d_name, KBUILD_DIR_PREFIX, strlen(KBUILD_DIR_PREFIX)))
			continue;
		cfg = xstrfmt("%s/%s/.config", wt_dir, de->d_name);
		hold = error_hold(1);
		if (read_file(cfg, MAX_CONFIG, &text, NULL) < 0)
			why = xstrfmt("%s has no .config", de->d_name);
		else if (config_has(text, "CONFIG_RUST=y"))
			why = xstrfmt("%s builds Rust", de->d_name);
		else if (config_has(text, "CONFIG_IKHEADERS=y") || config_has(text, "CONFIG_IKHEADERS=m"))
			why = xstrfmt("%s embeds the headers (CONFIG_IKHEADERS)", de->d_name);
		error_hold(hold);
		free(text);
		free(cfg);
	}
	closedir(d);
	return why;
}

/* A regular file's whole text and mtime, read unchanged: 1, or 0 when
 * it is not one, is larger than max, or changed while read. */
static int read_stable(const char *path, size_t max, char **text, size_t *len, struct timespec *mtime)
{
	struct stat a, b;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), ok = 0;

	*text = NULL;
	if (fd < 0)
		return 0;
	if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode) || (size_t)a.st_size > max)
		goto out;
	*text = xmalloc((size_t)a.st_size + 1);
	while (got < (size_t)a.st_size) {
		ssize_t n = read(fd, *text + got, (size_t)a.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		got += (size_t)n;
	}
	(*text)[got] = '\0';
	ok = fstat(fd, &b) == 0 && b.st_size == a.st_size && b.st_mtim.tv_sec == a.st_mtim.tv_sec &&
	     b.st_mtim.tv_nsec == a.st_mtim.tv_nsec;
	*len = got;
	*mtime = a.st_mtim;
out:
	close(fd);
	if (!ok) {
		free(*text);
		*text = NULL;
	}
	return ok;
}

struct prepare {
	struct kkeep *k;
	struct worktree *wt;
	const char *wt_dir, *to;
};

static void add_rebuilt(struct kkeep *k, const char *path)
{
	if (k->rebuilt.nr == k->rebuilt.alloc) {
		k->rebuilt.alloc = k->rebuilt.alloc ? 2 * k->rebuilt.alloc : 16;
		k->rebuilt.paths = xrealloc(k->rebuilt.paths, k->rebuilt.alloc * sizeof(*k->rebuilt.paths));
	}
	k->rebuilt.paths[k->rebuilt.nr++] = xstrdup(path);
}

/* 1 when path's text on disk and in commit `to` are the same tokens
 * (mtime: the file's), else 0. */
static int same_tokens_on_disk(struct prepare *p, const char *path, struct timespec *mtime, char blob[41])
{
	char *disk = NULL, *next = NULL, *abs;
	size_t dlen = 0, nlen = 0;
	int same = 0, hold;

	if ((!ends_with(path, ".c") && !ends_with(path, ".h")) || ksources_path_matters(path))
		return 0;
	abs = xstrfmt("%s/%s", p->wt_dir, path);
	hold = error_hold(1);
	if (read_stable(abs, KSOURCES_MAX_COMPARED, &disk, &dlen, mtime) &&
	    worktree_read_path(p->wt, p->to, path, KSOURCES_MAX_COMPARED, &next, &nlen) == 1 &&
	    ksources_same_tokens(path, disk, dlen, next, nlen)) {
		blob_hash(next, nlen, blob);
		same = 1;
	}
	error_hold(hold);
	free(disk);
	free(next);
	free(abs);
	return same;
}

static int prepare_path(const char *path, int added, void *data)
{
	struct prepare *p = data;
	struct kkeep *k = p->k;
	struct kkeep_file f = { NULL, { 0, 0 }, "" };

	if (kbuild_path_feeds_config(path) && !k->doubt)
		k->doubt = xstrfmt("%s feeds the config step", path);
	if (k->nr + k->rebuilt.nr >= MAX_COMPARED_PATHS && !k->doubt)
		k->doubt = xstrfmt("more than %d files changed", MAX_COMPARED_PATHS);
	if (added || k->doubt || !same_tokens_on_disk(p, path, &f.mtime, f.blob)) {
		add_rebuilt(k, path);
		return 0;
	}
	if (k->nr == k->alloc) {
		k->alloc = k->alloc ? 2 * k->alloc : 16;
		k->files = xrealloc(k->files, k->alloc * sizeof(*k->files));
	}
	f.path = xstrdup(path);
	k->files[k->nr++] = f;
	return 0;
}

/* Everything remembered goes to the rebuilt paths. */
static void forget_all(struct kkeep *k)
{
	for (size_t i = 0; i < k->nr; i++) {
		add_rebuilt(k, k->files[i].path);
		free(k->files[i].path);
	}
	k->nr = 0;
}

void kkeep_prepare(struct kkeep *k, struct worktree *wt, const char *wt_dir, const char *to, int keep)
{
	struct prepare p = { k, wt, wt_dir, to };
	char from[41];
	int hold, rc;

	if (!worktree_head(wt, from))
		return;	/* nothing checked out: nothing built from it either */
	k->doubt = keep ? build_dirs_doubt(wt_dir) : xstrdup("klab.conf says comment_only_files = rebuild");
	hold = error_hold(1);
	rc = worktree_diff_each(wt, from, to, prepare_path, &p);
	if (rc < 0 && !k->doubt)
		k->doubt = xstrfmt("cannot compare %.12s with %.12s: %s", from, to, error_last());
	error_hold(hold);
	if (k->doubt)
		forget_all(k);
	ksources_finish(&k->rebuilt);
}

void kkeep_restore(struct kkeep *k, const char *wt_dir)
{
	for (size_t i = 0; i < k->nr; i++) {
		struct kkeep_file *f = &k->files[i];
		char *abs = xstrfmt("%s/%s", wt_dir, f->path), *text = NULL, now[41];
		struct timespec times[2] = { { 0, UTIME_OMIT }, f->mtime }, mtime;
		size_t len = 0;

		/* only over the very text the checkout was to write */
		if (read_stable(abs, KSOURCES_MAX_COMPARED, &text, &len, &mtime)) {
			blob_hash(text, len, now);
			if (!strcmp(now, f->blob) && utimensat(AT_FDCWD, abs, times, AT_SYMLINK_NOFOLLOW) == 0)
				k->kept++;
			else
				add_rebuilt(k, f->path);
		} else {
			add_rebuilt(k, f->path);
		}
		free(text);
		free(abs);
	}
	ksources_finish(&k->rebuilt);
}

void kkeep_release(struct kkeep *k)
{
	for (size_t i = 0; i < k->nr; i++)
		free(k->files[i].path);
	free(k->files);
	ksources_release(&k->rebuilt);
	free(k->doubt);
	memset(k, 0, sizeof(*k));
}
