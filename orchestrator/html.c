/* HTML escaping and the page skeleton; see html.h. */
#include "html.h"

#include <string.h>

/* web/page.html and web/style.css, embedded at build time. */
extern const char klab_web_page_html[];
extern const char klab_web_style_css[];

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD */

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 when it is
 * not one: overlong forms, surrogates and values past U+10FFFF included. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned min;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, min = 0x80, cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, min = 0x800, cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, min = 0x10000, cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls and non-characters are not text either */
	if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
		return 0;
	return len;
}

void html_escn(struct strbuf *sb, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	if (!s)
		return;
	strbuf_grow(sb, n + n / 8);
	while (i < n) {
		size_t run = i, len;

		/* copy plain text in runs */
		while (run < n && p[run] >= 0x20 && p[run] < 0x7f && !strchr("&<>\"'", p[run]))
			run++;
		if (run > i) {
			strbuf_add(sb, p + i, run - i);
			i = run;
			continue;
		}
		switch (p[i]) {
		case '&': strbuf_addstr(sb, "&amp;"); i++; continue;
		case '<': strbuf_addstr(sb, "&lt;"); i++; continue;
		case '>': strbuf_addstr(sb, "&gt;"); i++; continue;
		case '"': strbuf_addstr(sb, "&quot;"); i++; continue;
		case '\'': strbuf_addstr(sb, "&#39;"); i++; continue;
		case '\t': case '\n': strbuf_addch(sb, p[i]); i++; continue;
		}
		len = p[i] >= 0x80 ? utf8_len(p + i, n - i) : 0;
		if (len) {
			strbuf_add(sb, p + i, len);
			i += len;
		} else {
			strbuf_addstr(sb, replacement);
			i++;
		}
	}
}

void html_esc(struct strbuf *sb, const char *s)
{
	if (s)
		html_escn(sb, s, strlen(s));
}

void html_elem(struct strbuf *sb, const char *tag, const char *cls, const char *text)
{
	strbuf_addf(sb, "<%s", tag);
	if (cls) {
		strbuf_addstr(sb, " class=\"");
		html_esc(sb, cls);
		strbuf_addch(sb, '"');
	}
	strbuf_addch(sb, '>');
	html_esc(sb, text);
	strbuf_addf(sb, "</%s>", tag);
}

/* The skeleton's slots: {{title}} (escaped here), {{style}}, {{body}}. */
void html_page(struct strbuf *out, const char *title, const char *body)
{
	const char *p = klab_web_page_html;

	while (*p) {
		const char *slot = strstr(p, "{{");
		const char *end = slot ? strstr(slot, "}}") : NULL;

		if (!slot || !end) {
			strbuf_addstr(out, p);
			break;
		}
		strbuf_add(out, p, (size_t)(slot - p));
		if (!strncmp(slot, "{{title}}", 9))
			html_esc(out, title);
		else if (!strncmp(slot, "{{style}}", 9))
			strbuf_addstr(out, klab_web_style_css);
		else if (!strncmp(slot, "{{body}}", 8))
			strbuf_addstr(out, body);
		else
			strbuf_add(out, slot, (size_t)(end + 2 - slot));
		p = end + 2;
	}
}
