/* JSON strings and numbers, escaped so that untrusted text (commit
 * subjects, guest output) always gives a valid document. */
#include "json.h"
#include "strbuf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

size_t utf8_decode(const char *str, size_t len, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c, min;
	size_t n;

	if (!len)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
		min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;	/* continuation byte, or 0xc0/0xc1/0xf5+ */
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void json_add_string(struct strbuf *sb, const char *s)
{
	size_t len;

	if (!s) {
		strbuf_addstr(sb, "null");
		return;
	}
	len = strlen(s);
	strbuf_addch(sb, '"');
	while (len) {
		unsigned char c = (unsigned char)*s;
		uint32_t cp;
		size_t n;

		switch (c) {
		case '"':  strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\b': strbuf_addstr(sb, "\\b"); break;
		case '\f': strbuf_addstr(sb, "\\f"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				strbuf_addf(sb, "\\u%04x", c);
				break;
			}
			n = utf8_decode(s, len, &cp);
			if (!n) {
				strbuf_addstr(sb, "\\ufffd");
				break;
			}
			if (cp == 0x2028 || cp == 0x2029)
				strbuf_addf(sb, "\\u%04x", (unsigned)cp);
			else
				strbuf_add(sb, s, n);
			s += n;
			len -= n;
			continue;
		}
		s++;
		len--;
	}
	strbuf_addch(sb, '"');
}

void json_add_number(struct strbuf *sb, double v)
{
	if (!isfinite(v))
		strbuf_addstr(sb, "null");
	else if (fabs(v) < 1e15 && v == (double)(int64_t)v)
		strbuf_addf(sb, "%lld", (long long)v);
	else
		strbuf_addf(sb, "%.10g", v);
}

void json_add_numbers(struct strbuf *sb, const double *v, size_t n, const char *sep)
{
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, sep);
		json_add_number(sb, v[i]);
	}
	strbuf_addch(sb, ']');
}
