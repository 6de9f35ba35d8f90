/* HTML escaping and the page skeleton; see html.h. */
#include "util/html.h"

#include <string.h>

#include "util/json.h"

/* web/page.html and web/style.css, embedded at build time. */
extern const char klab_web_page_html[];
extern const char klab_web_style_css[];

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD */

/* Length of the UTF-8 sequence at s (at most n bytes), or 0 when it is
 * not text: not UTF-8 (utf8_decode), or a C1 control or non-character. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len = utf8_decode((const char *)s, n, &cp);

	if (!len)
		return 0;
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
