/* A growable, always NUL-terminated text buffer (after git's strbuf). */
#ifndef KLAB_STRBUF_H
#define KLAB_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include "alloc.h"

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

/* The length of the character at s that must never reach a terminal
 * raw: a control character (C0, DEL, C1 as UTF-8) or a bidirectional
 * embedding, override or isolate (U+202A-U+202E, U+2066-U+2069); 0 for
 * any other. */
size_t unsafe_char_len(const char *s);
/* Untrusted text (commit subjects, paths, guest output, argv) for a
 * terminal or a log: every character unsafe_char_len() names is added
 * as '?', so no ESC sequence, CR, newline or reordering comes through.  The
 * one rule print_clean(), print_line(), error() and warning() follow. */
void strbuf_add_clean(struct strbuf *sb, const char *s);
/* A word as bash reads it back: bare when plainly safe, else
 * '...' quoted, or $'...' when it holds control characters (a newline
 * shows as \n, not as a line break), so a printed command line can be
 * copied and run. */
void strbuf_add_shell_word(struct strbuf *sb, const char *w);
/* A URL with its secrets cut: the user info (user:password@) is dropped;
 * with keep_path the path stays and a query or fragment becomes "?...",
 * without it everything after the host becomes "/..." (a webhook's path
 * may be its token).  Text that is not scheme://... (a path, an scp-like
 * git address) is added as it is. */
void strbuf_add_url_redacted(struct strbuf *sb, const char *url, int keep_path);

#endif
