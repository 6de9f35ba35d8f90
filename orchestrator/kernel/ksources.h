/* The source files a kernel was made from (kbuild's .cmd files in its
 * build directory), stored with the artifact, and whether a commit can
 * change that kernel at all: a commit that cannot is not built. */
#ifndef KLAB_KSOURCES_H
#define KLAB_KSOURCES_H

/* The name of klab's build directories inside a checkout (kbuild.c makes
 * them): not sources, so a source set never names a file under one. */
#define KBUILD_DIR_PREFIX ".klab-build-"

#include <stddef.h>

struct gitrepo;
struct strbuf;

/* Repository-relative paths; sorted and unique after ksources_finish. */
struct ksources {
	char **paths;
	size_t nr, alloc;
};

#define KSOURCES_INIT { NULL, 0, 0 }
/* The name of the list beside an artifact's bzImage. */
#define KSOURCES_FILE "sources.txt"
/* Bounds on hostile or broken input: past them the set is unknown. */
#define KSOURCES_MAX_PATHS (1u << 20)
#define KSOURCES_MAX_PATH_LEN 4096

/* Add every path of the source tree one .cmd file names: its cmd_ line's
 * operands, source_ and deps_ entries, written relative to the build
 * directory ("../x" when it is a direct subdirectory of the tree), as
 * "$(srctree)/x" or absolute under src_abs (NULL: none).  Paths outside
 * the tree (/usr/include, "../../x"), build outputs ("include/generated/
 * ...", "$(wildcard include/config/X)") and anything that is not a plain
 * path are dropped.  -1 after error() when past the bounds. */
int ksources_parse_cmd(struct ksources *s, const char *text, size_t len, const char *src_abs);
/* Sort and de-duplicate. */
void ksources_finish(struct ksources *s);
void ksources_release(struct ksources *s);
/* 1 when path is in the (finished) set. */
int ksources_has(const struct ksources *s, const char *path);

/* Every .cmd file under build directory bd (symbolic links not followed)
 * of a build of checkout src_dir, finished.  -1 after error() when the
 * directory cannot be read, a bound is passed, or nothing names a C
 * source (then kbuild did not write what this parser knows). */
int ksources_collect(struct ksources *s, const char *bd, const char *src_dir);
/* One path a line.  Write (atomic) and read back (the same checks as the
 * parser: a line that is not a plain relative path makes it unknown).
 * read: 1 read, 0 no such file, -1 after error(). */
int ksources_write(const struct ksources *s, const char *path);
int ksources_read(struct ksources *s, const char *path);
/* The text of a sources.txt into s (finished): 0, or -1 after error()
 * with s empty.  ksources_read's parser, exposed for the fuzz harness. */
int ksources_parse_list(struct ksources *s, const char *text, size_t len);

/* 1 when a path matters to the build by its name whether the set names
 * it or not: Kconfig*, Makefile*, Kbuild*, *.mk, scripts/, tools/, usr/,
 * include/generated/, kernel/configs/, arch/<arch>/configs/, build and
 * generator scripts (*.sh, *.pl, *.py, *.awk, *.tbl, *.lds ...), and any
 * kind of file that is not source or documentation (data a rule may
 * embed).  Pure. */
int ksources_path_matters(const char *path);

/* The text of a C source (line_comments: "//" comments too) or header
 * with every comment's characters blanked (a comment's newlines, tabs
 * and non-ASCII bytes kept),
 * the blanks that end each line and the blank lines that end the text
 * cut: two texts that give the same are the same tokens at the same
 * lines and columns, so the same object for the compiler, __LINE__ and
 * debug information included.  -1 when what the preprocessor makes of it
 * is not sure: a comment opened or closed across a backslash-newline, a
 * "//" comment carried on by a backslash, "//" without line_comments, a
 * literal that runs to its line's end (an apostrophe in assembler or in
 * prose under #if 0), an unterminated comment, a NUL byte.  Pure. */
int ksources_blank_comments(const char *text, size_t len, int line_comments, struct strbuf *out);
/* The largest source file compared for a comment-only change. */
#define KSOURCES_MAX_COMPARED (4u << 20)
/* 1 when a and b, two texts of the source `path`, are the same tokens at
 * the same lines and columns: path a .c (its "//" comments blanked too)
 * or a .h, and ksources_blank_comments sure of both and giving the same.
 * 0 otherwise (not equal, not sure, another kind of file).  Pure. */
int ksources_same_tokens(const char *path, const char *a, size_t alen, const char *b, size_t blen);

/* Whether commit `to` builds the same kernel as commit `from`, whose
 * source set is `set`: 1 when no path the trees differ in (both names of
 * a rename or delete) is in the set (with comments: unless that source,
 * a .c or .h, differs in comments and blanks only, and the set names
 * nothing under rust/), matters by name, or is a new file
 * beside or named like one of the set (a header that now shadows one, a
 * .c a wildcard picks up), and the kernel does not embed the tree's
 * headers (CONFIG_IKHEADERS: never 1).  touched gets the changed paths ("a, b, ...",
 * at most `show` of them, then the count of the rest); on 0, why names
 * the path that decided.  -1 after error() (a commit the repository
 * lacks). */
int ksources_same_kernel(struct gitrepo *repo, const char *from, const char *to, const struct ksources *set,
			 int comments, size_t show, struct strbuf *touched, struct strbuf *why);
/* ksources_same_kernel for a kernel of the artifact store (bzimage in
 * <tree>-<recipe id>/, its set in sources.txt beside it) built from
 * commit `from`: 1 when commit `to` built with recipe_id gives that
 * kernel (touched: up to 3 of the paths they differ in), 0 when it may
 * not (another recipe, no set, a set not readable: build), -1 after
 * error(). */
int ksources_kernel_serves(struct gitrepo *repo, const char *bzimage, const char *recipe_id, const char *from,
			   const char *to, int comments, struct strbuf *touched);

/* The objects of build directory bd (its .o.cmd files) that depend on
 * each of paths (repository-relative, a checkout at src_dir): counts[i]
 * for paths[i].  -1 after error() when bd cannot be read. */
int ksources_dependents(const char *bd, const char *src_dir, char *const *paths, size_t nr, size_t *counts);
/* "a (975), b (3), c (1)": the top `show` of paths by dependents (ties in
 * path order, none with 0), appended to out; the count of the paths named. */
size_t ksources_top(char *const *paths, const size_t *counts, size_t nr, size_t show, struct strbuf *out);

#endif
