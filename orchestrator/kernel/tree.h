/* The test kernel tree: Debian's linux-source tarball turned into a git
 * repository once, reused by tests, benchmarks and the demo. */
#ifndef KLAB_TREE_H
#define KLAB_TREE_H

#define KLAB_DEFAULT_TARBALL "/usr/src/linux-source-6.1.tar.xz"

/* Import `tarball` into a new repository at `dest` (one commit on branch
 * main, tagged v<version>).  Idempotent: an existing import is reused.
 * *hex receives the commit. */
int tree_import(const char *tarball, const char *dest, char hex[41], int *reused);

/* Remove Debian's ignore-everything trailer from a top-level .gitignore
 * text (in place).  Returns 1 if it was there. */
int tree_strip_debian_gitignore(char *text);

#endif
