/* Growable text buffer; see strbuf.h. */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->len = 0;
	sb->alloc = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *r;

	if (!sb->alloc)
		strbuf_grow(sb, 0);
	r = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return r;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need <= sb->alloc)
		return;
	if (!sb->alloc)
		sb->buf = NULL;
	if (need < sb->alloc * 2)
		need = sb->alloc * 2;
	if (need < 64)
		need = 64;
	sb->buf = xrealloc(sb->buf, need);
	if (!sb->alloc)
		sb->buf[0] = '\0';
	sb->alloc = need;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return;
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	strbuf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_rtrim(struct strbuf *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

size_t unsafe_char_len(const char *s)
{
	unsigned char c = (unsigned char)s[0];

	if (c < 0x20 || c == 0x7f)
		return 1;
	if (c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f)
		return 2;
	/* U+202A-U+202E (embeddings, overrides) and U+2066-U+2069
	 * (isolates): text shown in another order than it is stored */
	if (c == 0xe2 && (unsigned char)s[1] == 0x80 && (unsigned char)s[2] >= 0xaa && (unsigned char)s[2] <= 0xae)
		return 3;
	if (c == 0xe2 && (unsigned char)s[1] == 0x81 && (unsigned char)s[2] >= 0xa6 && (unsigned char)s[2] <= 0xa9)
		return 3;
	return 0;
}

static void add_clean_n(struct strbuf *sb, const char *s, size_t len)
{
	const char *end = s + len;

	while (s < end && *s) {
		size_t n = unsafe_char_len(s);

		if (n) {
			strbuf_addch(sb, '?');
			s += n;
		} else {
			strbuf_addch(sb, *s++);
		}
	}
}

void strbuf_add_clean(struct strbuf *sb, const char *s)
{
	if (s)
		add_clean_n(sb, s, strlen(s));
}

void strbuf_add_shell_word(struct strbuf *sb, const char *w)
{
	int plain = *w != '\0', controls = 0;

	for (const char *p = w; *p; p++) {
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+=:,@%^", *p))
			plain = 0;
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			controls = 1;
	}
	if (plain) {
		strbuf_addstr(sb, w);
		return;
	}
	if (!controls) {
		strbuf_addch(sb, '\'');
		for (const char *p = w; *p; p++) {
			if (*p == '\'')
				strbuf_addstr(sb, "'\\''");
			else
				strbuf_addch(sb, *p);
		}
		strbuf_addch(sb, '\'');
		return;
	}
	strbuf_addstr(sb, "$'");
	for (const char *p = w; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\'' || c == '\\')
			strbuf_addf(sb, "\\%c", c);
		else if (c == '\n')
			strbuf_addstr(sb, "\\n");
		else if (c == '\t')
			strbuf_addstr(sb, "\\t");
		else if (c == '\r')
			strbuf_addstr(sb, "\\r");
		else if (c < 0x20 || c == 0x7f)
			strbuf_addf(sb, "\\x%02x", c);
		else
			strbuf_addch(sb, (char)c);
	}
	strbuf_addch(sb, '\'');
}

void strbuf_add_url_redacted(struct strbuf *sb, const char *url, int keep_path)
{
	const char *scheme_end = strstr(url, "://"), *host, *end, *at, *rest;

	if (!scheme_end || scheme_end == url || strcspn(url, "/?#@") < (size_t)(scheme_end - url)) {
		strbuf_add_clean(sb, url);
		return;
	}
	host = scheme_end + 3;
	end = host + strcspn(host, "/?#");
	add_clean_n(sb, url, (size_t)(host - url));
	/* the last '@' of the authority ends the user info */
	for (at = end; at > host && at[-1] != '@'; at--)
		;
	if (at > host)
		host = at;
	add_clean_n(sb, host, (size_t)(end - host));
	if (!*end)
		return;
	if (!keep_path) {
		strbuf_addstr(sb, "/...");
		return;
	}
	rest = end + strcspn(end, "?#");
	add_clean_n(sb, end, (size_t)(rest - end));
	if (*rest)
		strbuf_addstr(sb, "?...");
}
