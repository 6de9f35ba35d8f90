/* Allocation that dies only on out-of-memory, and the attributes every
 * header uses: the bottom of util/, so that strbuf needs nothing above it. */
#ifndef KLAB_ALLOC_H
#define KLAB_ALLOC_H

#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define KLAB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define KLAB_NORETURN __attribute__((noreturn))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xstrfmt(const char *fmt, ...) KLAB_PRINTF(1, 2);
/* Free the n strings of v and v itself (NULL with n 0 is fine). */
void strings_free(char **v, size_t n);
/* Free each of the n pointers of p: FREE_MANY(x->a, x->b, ...), what a
 * release function lists of the fields its struct owns (systemd's
 * free_many). */
void free_many(void *const *p, size_t n);
#define FREE_MANY(...) free_many((void *const[]){ __VA_ARGS__ }, ARRAY_SIZE(((void *const[]){ __VA_ARGS__ })))

/* Grow *p (of *alloc elements of size sz) so that it holds at least n. */
#define ALLOC_GROW(p, n, alloc) do { \
	if ((size_t)(n) > (size_t)(alloc)) { \
		size_t new_alloc_ = (alloc) ? (size_t)(alloc) * 2 : 16; \
		if (new_alloc_ < (size_t)(n)) new_alloc_ = (size_t)(n); \
		(p) = xrealloc((p), new_alloc_ * sizeof(*(p))); \
		(alloc) = new_alloc_; \
	} \
} while (0)

#endif
