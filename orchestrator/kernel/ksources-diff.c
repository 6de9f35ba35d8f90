/* Whether a commit can change a kernel whose source set klab knows
 * (ksources.h): libgit2's tree diff against the set and the names that
 * matter to any build. */
#include <stdlib.h>
#include <string.h>

#include "lab/gitrepo.h"
#include "kernel/kbuild.h"
#include "kernel/ksources.h"
#include "util/strbuf.h"
#include "util/util.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The extensions of files a kernel build reads only through a compiler
 * (so its .cmd files name them) or never: documentation and source. */
static const char *const plain_exts[] = {
	".c", ".h", ".S", ".s", ".rs", ".rst", ".md", ".dts", ".dtsi", ".cocci",
};
/* Files of the top directory no rule reads. */
static const char *const plain_top[] = {
	"MAINTAINERS", "CREDITS", "README", "COPYING", ".mailmap", ".clang-format", ".cocciconfig",
	".get_maintainer.ignore", ".gitattributes",
};

int ksources_path_matters(const char *path)
{
	const char *base = strrchr(path, '/'), *ext;

	base = base ? base + 1 : path;
	if (kbuild_path_feeds_config(path) || ends_with(base, ".mk"))
		return 1;
	if (!strncmp(path, "tools/", 6) || !strncmp(path, "usr/", 4) || !strncmp(path, "include/generated/", 18) ||
	    strstr(path, "/scripts/") || strstr(path, "/tools/"))
		return 1;
	if (!strncmp(path, "Documentation/", 14) || !strncmp(path, "LICENSES/", 9) || !strcmp(base, ".gitignore"))
		return 0;
	if (base == path)
		for (size_t i = 0; i < ARRAY_SIZE(plain_top); i++)
			if (!strcmp(path, plain_top[i]))
				return 0;
	/* linker scripts, generator input and scripts are read by rules
	 * whose .cmd files need not name them; unknown kinds may be data a
	 * rule embeds (.incbin): all doubt */
	if (ends_with(base, ".lds.S") || ends_with(base, ".lds.h"))
		return 1;
	ext = strrchr(base, '.');
	if (ext && ext != base)
		for (size_t i = 0; i < ARRAY_SIZE(plain_exts); i++)
			if (!strcmp(ext, plain_exts[i]))
				return 0;
	return 1;
}

/* A new file beside one the kernel read (a .c a wildcard picks up, a
 * header earlier on the include path) or named like one (an arch header
 * that now shadows asm-generic's, a .S beside a .c): the set, made
 * without it, cannot say it is not read. */
static int new_file_may_be_read(const struct ksources *set, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t dlen = base ? (size_t)(base - path) : 0, stem;

	base = base ? base + 1 : path;
	stem = strcspn(base, ".");
	for (size_t i = 0; i < set->nr; i++) {
		const char *p = set->paths[i], *pb = strrchr(p, '/');
		size_t pdlen = pb ? (size_t)(pb - p) : 0;

		pb = pb ? pb + 1 : p;
		if (pdlen == dlen && !strncmp(p, path, dlen))
			return 1;	/* the same directory */
		if (strlen(p) == dlen && !strncmp(p, path, dlen))
			return 1;	/* a directory the set names (-I) */
		if (strcspn(pb, ".") == stem && !strncmp(pb, base, stem))
			return 1;
	}
	return 0;
}

int ksources_same_tokens(const char *path, const char *a, size_t alen, const char *b, size_t blen)
{
	struct strbuf ba = STRBUF_INIT, bb = STRBUF_INIT;
	/* a header may be preprocessed as assembler-with-cpp, whose "//"
	 * need not be a comment: a header's "//" is doubt */
	int line_comments = ends_with(path, ".c"), ret;

	if (!ends_with(path, ".c") && !ends_with(path, ".h"))
		return 0;
	ret = ksources_blank_comments(a, alen, line_comments, &ba) == 0 &&
	      ksources_blank_comments(b, blen, line_comments, &bb) == 0 && ba.len == bb.len &&
	      (!ba.len || !memcmp(ba.buf, bb.buf, ba.len));
	strbuf_release(&ba);
	strbuf_release(&bb);
	return ret;
}

/* 1 when path differs between commits from and to in its comments and
 * blanks only (ksources_same_tokens), 0 when not or not sure, -1 after
 * error(). */
static int comments_only(struct gitrepo *repo, const char *from, const char *to, const char *path)
{
	char *a = NULL, *b = NULL;
	size_t alen, blen;
	int ret;

	if (!ends_with(path, ".c") && !ends_with(path, ".h"))
		return 0;
	ret = gitrepo_read_path(repo, from, path, KSOURCES_MAX_COMPARED, &a, &alen);
	if (ret == 1)
		ret = gitrepo_read_path(repo, to, path, KSOURCES_MAX_COMPARED, &b, &blen);
	if (ret == 1)
		ret = ksources_same_tokens(path, a, alen, b, blen);
	free(a);
	free(b);
	return ret;
}

struct same_kernel {
	struct gitrepo *repo;
	const char *from, *to;
	const struct ksources *set;
	size_t show, n;
	struct strbuf *touched, *why;
	int comments;	/* comment-only changes of sources count as none */
	size_t n_comments, shown_comments;
};

static int check_path(const char *path, int added, void *data)
{
	struct same_kernel *sk = data;
	int comments = 0;

	if (ksources_has(sk->set, path)) {
		if (sk->comments && !added && (comments = comments_only(sk->repo, sk->from, sk->to, path)) < 0)
			return -1;
		if (!comments)
			strbuf_addf(sk->why, "%s is one of its sources", path);
	}
	if (!sk->why->len && ksources_path_matters(path))
		strbuf_addf(sk->why, "%s matters to the build by its name", path);
	else if (!sk->why->len && added && new_file_may_be_read(sk->set, path))
		strbuf_addf(sk->why, "%s is new beside or named like one of its sources", path);
	if (sk->why->len)
		return 1;
	sk->n_comments += comments;
	if (sk->n++ < sk->show) {
		strbuf_addf(sk->touched, "%s%s%s", sk->n > 1 ? ", " : "", path, comments ? ": comments only" : "");
		sk->shown_comments += comments;
	}
	return 0;
}

int ksources_same_kernel(struct gitrepo *repo, const char *from, const char *to, const struct ksources *set,
			 int comments, size_t show, struct strbuf *touched, struct strbuf *why)
{
	struct same_kernel sk = { repo, from, to, set, show, 0, touched, why, comments, 0, 0 };
	int rc;

	if (!set->nr) {
		strbuf_addstr(why, "its source set is empty");
		return 0;
	}
	/* CONFIG_IKHEADERS: the script tars every header it finds, read or
	 * not, into the kernel */
	if (ksources_has(set, "kernel/gen_kheaders.sh")) {
		strbuf_addstr(why, "it embeds the tree's headers (kernel/gen_kheaders.sh)");
		return 0;
	}
	/* bindgen turns the comments of the headers a Rust kernel reads
	 * into its bindings' documentation: no comment is only a comment */
	for (size_t i = 0; i < set->nr && sk.comments; i++)
		if (!strncmp(set->paths[i], "rust/", 5))
			sk.comments = 0;
	rc = gitrepo_diff_each(repo, from, to, check_path, &sk);
	if (rc < 0)
		return -1;
	if (rc)
		return 0;
	if (sk.n > sk.show)
		strbuf_addf(touched, "%s%zu more", sk.show ? ", " : "", sk.n - sk.show);
	if (sk.n_comments > sk.shown_comments)
		strbuf_addf(touched, " (%zu of them: comments only)", sk.n_comments - sk.shown_comments);
	return 1;
}

int ksources_kernel_serves(struct gitrepo *repo, const char *bzimage, const char *recipe_id, const char *from,
			   const char *to, int comments, struct strbuf *touched)
{
	const char *slash = strrchr(bzimage, '/');
	struct ksources set = KSOURCES_INIT;
	struct strbuf why = STRBUF_INIT;
	char *dir, *list;
	size_t len;
	int ret = 0;

	strbuf_reset(touched);
	if (!slash)
		return 0;
	dir = xstrndup(bzimage, slash - bzimage);
	list = xstrfmt("%s/%s", dir, KSOURCES_FILE);
	len = strlen(dir);
	/* the store's entry is <tree>-<recipe id>: made with this recipe */
	if (len > 41 && dir[len - 41] == '-' && !strcmp(dir + len - 40, recipe_id) && ksources_read(&set, list) == 1)
		ret = ksources_same_kernel(repo, from, to, &set, comments, 3, touched, &why);
	if (ret != 1)
		strbuf_reset(touched);
	ksources_release(&set);
	strbuf_release(&why);
	free(list);
	free(dir);
	return ret;
}
