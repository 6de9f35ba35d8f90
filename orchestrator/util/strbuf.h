/* A growable, always NUL-terminated text buffer (after git's strbuf). */
#ifndef KLAB_STRBUF_H
#define KLAB_STRBUF_H

#include <stddef.h>
#include "util.h"

struct strbuf {
	size_t len;
	size_t alloc;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
/* Free the contents; the struct may be reused. */
void strbuf_release(struct strbuf *sb);
/* Hand the buffer to the caller (who frees it). */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
#define strbuf_reset(sb) strbuf_setlen((sb), 0)
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) KLAB_PRINTF(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_rtrim(struct strbuf *sb);

#endif
