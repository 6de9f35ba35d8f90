/* Text into HTML (and inline SVG) only through escaping: every string that
 * came from a repository, a job file, a guest or the database goes through
 * html_esc, in element text and in attribute values alike.  Pure. */
#ifndef KLAB_HTML_H
#define KLAB_HTML_H

#include <stddef.h>
#include "util/strbuf.h"

/* Append s with & < > " ' as character references, control characters
 * other than tab and newline as U+FFFD, and bytes that are not UTF-8 as
 * U+FFFD: the result is always well-formed text.  NULL appends nothing. */
void html_esc(struct strbuf *sb, const char *s);
void html_escn(struct strbuf *sb, const char *s, size_t len);

/* <tag class="cls">escaped text</tag>; cls may be NULL. */
void html_elem(struct strbuf *sb, const char *tag, const char *cls, const char *text);

/* A whole page: the skeleton of web/page.html with the stylesheet of
 * web/style.css, the (escaped) title and the body, which is HTML. */
void html_page(struct strbuf *out, const char *title, const char *body);

#endif
