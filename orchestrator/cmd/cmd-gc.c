/* klab gc: bound the artifact store and the build directories. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "kernel/kbuild.h"
#include "kernel/kimage.h"
#include "util/util.h"
#include "util/run-command.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ftw.h>
#include <unistd.h>

static const char *const gc_forms[] = { "[--keep-last] [--max-size] [--verify] [--dry-run]", NULL };
static const struct opt_usage gc_usage = {
	"gc", gc_forms,
	"Remove the oldest kernel artifacts and build directories: keep the N most\n"
	"recently used of each, and/or keep each set under SIZE; --verify removes stored\n"
	"kernels that fail their recorded identity.  Removed ones are rebuilt when asked.",
	"GC"
};

#define KEEP_ALL ((unsigned long)-1)

struct entry {
	char *path;
	time_t mtime;
	uint64_t size;
};

static uint64_t du_total;
static int du_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	if (flag == FTW_F)
		du_total += (uint64_t)st->st_blocks * 512;
	(void)p;
	(void)f;
	return 0;
}

static uint64_t du(const char *path)
{
	du_total = 0;
	nftw(path, du_cb, 32, FTW_PHYS);
	return du_total;
}

static int cmp_newest(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return (x->mtime < y->mtime) - (x->mtime > y->mtime);
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v = strtod(s, &end);
	uint64_t mult = 1;

	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': mult = 1ULL << 10; end++; break;
	case 'm': case 'M': mult = 1ULL << 20; end++; break;
	case 'g': case 'G': mult = 1ULL << 30; end++; break;
	case 't': case 'T': mult = 1ULL << 40; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = (uint64_t)(v * (double)mult);
	return 0;
}

/* Collect the subdirectories of dir (skipping temp copies, which are
 * removed when their writer is gone). */
static void add_entry(struct entry **e, size_t *nr, size_t *alloc, char *path, const struct stat *st)
{
	ALLOC_GROW(*e, *nr + 1, *alloc);
	(*e)[*nr].path = path;
	(*e)[*nr].mtime = st->st_mtime;
	(*e)[*nr].size = du(path);
	(*nr)++;
}

static int collect(const char *dir, struct entry **out, size_t *nr, int dry_run)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t alloc = 0;

	*out = NULL;
	*nr = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat st;
		char *p;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = xstrfmt("%s/%s", dir, e->d_name);
		if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
			free(p);
			continue;
		}
		if (!strncmp(e->d_name, ".tmp-", 5)) {
			long pid = name_owner_pid(e->d_name, ".tmp-");

			/* a malformed name is no store's: remove it too */
			if (!pid || process_gone(pid)) {
				printf("%s interrupted copy %s\n", dry_run ? "would remove" : "removing", p);
				if (!dry_run)
					remove_tree(p);
			}
			free(p);
			continue;
		}
		add_entry(out, nr, &alloc, p, &st);
	}
	closedir(d);
	if (*nr)	/* qsort takes no NULL, even for nothing */
		qsort(*out, *nr, sizeof(**out), cmp_newest);
	return 0;
}

/* The build directories inside klab's worktrees (kbuild_build_dir), added
 * to e: worktrees/<wt>/.klab-build-<recipe12>[.N]. */
static void collect_worktree_builds(const struct lab *lab, struct entry **e, size_t *nr)
{
	char *wts = lab_path(lab, "worktrees");
	DIR *d = opendir(wts);
	struct dirent *w;
	size_t alloc = *nr;

	while (d && (w = readdir(d))) {
		char *wt;
		DIR *in;
		struct dirent *b;

		if (w->d_name[0] == '.')
			continue;
		wt = xstrfmt("%s/%s", wts, w->d_name);
		in = opendir(wt);
		while (in && (b = readdir(in))) {
			struct stat st;
			char *p;

			if (strncmp(b->d_name, KBUILD_DIR_PREFIX, strlen(KBUILD_DIR_PREFIX)))
				continue;
			p = xstrfmt("%s/%s", wt, b->d_name);
			if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
				free(p);
				continue;
			}
			add_entry(e, nr, &alloc, p, &st);
		}
		if (in)
			closedir(in);
		free(wt);
	}
	if (d)
		closedir(d);
	free(wts);
	if (*nr)
		qsort(*e, *nr, sizeof(**e), cmp_newest);
}

/* The lock a build in directory path holds: build-<wt>-<recipe12>[.N]
 * for one in a worktree, build-<repo>-<recipe12>[.N] for builds/repo-... */
static char *build_lock_of(const char *path)
{
	const char *base = strrchr(path, '/') + 1;
	char *wt, *lock;

	if (strncmp(base, KBUILD_DIR_PREFIX, strlen(KBUILD_DIR_PREFIX)))
		return xstrfmt("build-%s", base + 5);	/* "repo-" */
	wt = xstrndup(path, (size_t)(base - 1 - path));
	lock = kbuild_build_lock_name(wt, base + strlen(KBUILD_DIR_PREFIX));
	/* the copy's ".N" is past the 12 characters the name keeps */
	if (strlen(base + strlen(KBUILD_DIR_PREFIX)) > 12) {
		char *c = xstrfmt("%s%s", lock, base + strlen(KBUILD_DIR_PREFIX) + 12);
		free(lock);
		lock = c;
	}
	free(wt);
	return lock;
}

static void prune(struct lab *lab, const char *what, struct entry *e, size_t nr, long keep_last,
		  uint64_t max_size, int dry_run, int is_artifacts)
{
	uint64_t total = 0, freed = 0;
	int removed = 0;

	for (size_t i = 0; i < nr; i++) {
		int drop = 0;
		if (keep_last >= 0 && (long)i >= keep_last)
			drop = 1;
		if (max_size && total + e[i].size > max_size)
			drop = 1;
		if (!drop) {
			total += e[i].size;
			continue;
		}
		printf("%s %s (%.1f MiB)\n", dry_run ? "would remove" : "removing", e[i].path, e[i].size / 1048576.0);
		if (!dry_run) {
			if (is_artifacts)
				db_build_forget_artifact(lab->db, e[i].path);
			remove_tree(e[i].path);
		}
		freed += e[i].size;
		removed++;
	}
	printf("%s: kept %zu (%.1f MiB), %s %d (%.1f MiB)\n", what, nr - (size_t)removed, total / 1048576.0,
	       dry_run ? "would remove" : "removed", removed, freed / 1048576.0);
}

/* gc --verify: every entry of the store against its identity.  The
 * number of entries that were not sound (removed unless dry_run). */
static int verify_store(struct lab *lab, const char *dir, int dry_run)
{
	struct entry *e;
	size_t nr;
	int sound = 0, old = 0, bad = 0;

	collect(dir, &e, &nr, dry_run);
	for (size_t i = 0; i < nr; i++) {
		char *why = NULL;
		int rc = kimage_check_artifact(e[i].path, &why);

		if (rc == 0) {
			sound++;
		} else {
			if (rc == 1)
				old++;
			else
				bad++;
			print_line("%s %s: %s", dry_run ? "would remove" : "removing", e[i].path,
				   rc == 1 ? "no identity (stored before klab verified images)"
				   : rc == 2 ? why : "its identity cannot be read");
			if (!dry_run) {
				db_build_forget_artifact(lab->db, e[i].path);
				remove_tree(e[i].path);
			}
		}
		free(why);
		free(e[i].path);
	}
	free(e);
	printf("verify %s: %d sound, %d without identity, %d damaged%s\n", dir, sound, old, bad,
	       old + bad ? dry_run ? " (would be removed)" : " (removed: rebuilt when asked again)" : "");
	return old + bad;
}

static int size_option(const struct opt *o, const char *arg)
{
	if (parse_size(arg, o->value) < 0 || !*(uint64_t *)o->value)
		return error("--max-size '%s': expected a size such as 20G (see 'klab gc --help')", arg);
	return 0;
}

int cmd_gc(int argc, char **argv, const struct global_opts *g)
{
	unsigned long keep = KEEP_ALL;
	long keep_last;
	uint64_t max_size = 0;
	int dry_run = 0, verify = 0, ret = EXIT_OK;
	struct lab lab;
	struct entry *e;
	size_t nr;
	char *dir;
	struct opt opts[] = {
		OPT_UINT(0, "keep-last", &keep, "N", "keep the N most recently used of each", 0, 1000000),
		OPT_CALLBACK(0, "max-size", &max_size, "SIZE", "keep each under SIZE (bytes, or K, M, G, T)",
			     size_option),
		OPT_BOOL(0, "verify", &verify, "remove stored kernels that fail their identity"),
		OPT_BOOL(0, "dry-run", &dry_run, "say what would be removed"),
		OPT_END()
	};

	argc = parse_options(argc, argv, &gc_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&gc_usage, "gc takes no arguments (got '%s')", argv[0]);
	keep_last = keep == KEEP_ALL ? -1 : (long)keep;
	if (keep_last < 0 && !max_size && !verify) {
		error("gc needs --keep-last N, --max-size SIZE or --verify (see 'klab gc --help')");
		return EXIT_USAGE;
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	{
		/* never remove a build directory while a build uses it */
		int fd = lab_lock(&lab, "gc");
		if (fd < 0) {
			lab_close(&lab);
			return EXIT_FAIL;
		}
		if (verify) {
			dir = lab.artifact_store ? xstrdup(lab.artifact_store) : lab_path(&lab, "artifacts");
			if (verify_store(&lab, dir, dry_run) && dry_run)
				ret = EXIT_FAIL;
			free(dir);
			if (keep_last < 0 && !max_size)
				goto done;
		}
		if (lab.artifact_store) {
			/* other labs' builds point into it too */
			printf("keeping the shared artifact store %s: gc prunes only a lab's own\n",
			       lab.artifact_store);
		} else {
			dir = lab_path(&lab, "artifacts");
			collect(dir, &e, &nr, dry_run);
			prune(&lab, "artifacts", e, nr, keep_last, max_size, dry_run, 1);
			for (size_t i = 0; i < nr; i++)
				free(e[i].path);
			free(e);
			free(dir);
		}
		/* builds/ holds those of klab before build directories moved
		 * into the worktrees */
		dir = lab_path(&lab, "builds");
		collect(dir, &e, &nr, dry_run);
		collect_worktree_builds(&lab, &e, &nr);
		{
			/* skip build directories with a build running now */
			size_t k = 0;
			for (size_t i = 0; i < nr; i++) {
				char *lock = build_lock_of(e[i].path);
				int lfd = lab_try_lock(&lab, lock);
				free(lock);
				if (lfd < 0) {
					printf("keeping %s: a build is running there\n", e[i].path);
					free(e[i].path);
					continue;
				}
				close(lfd);
				e[k++] = e[i];
			}
			nr = k;
		}
		prune(&lab, "build directories", e, nr, keep_last, max_size, dry_run, 0);
		for (size_t i = 0; i < nr; i++)
			free(e[i].path);
		free(e);
		free(dir);
done:
		close(fd);
	}
	lab_close(&lab);
	return ret;
}
