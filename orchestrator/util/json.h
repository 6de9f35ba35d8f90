/* JSON text for the documents klab sends (webhooks), and the UTF-8
 * check behind it: any bytes, hostile or not UTF-8, give valid JSON. */
#ifndef KLAB_JSON_H
#define KLAB_JSON_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* Length (1-4) of the well-formed UTF-8 sequence at s (at most len
 * bytes), its code point in *cp; 0 when the bytes there are not UTF-8
 * (overlong, surrogate, beyond U+10FFFF, truncated). */
size_t utf8_decode(const char *s, size_t len, uint32_t *cp);

/* s as a quoted JSON string: quotes, backslashes and control characters
 * escaped, U+2028/U+2029 escaped (JavaScript), every byte that is not
 * UTF-8 replaced by U+FFFD.  NULL gives null. */
void json_add_string(struct strbuf *sb, const char *s);
/* A number, or null for NaN and infinities (JSON has neither). */
void json_add_number(struct strbuf *sb, double v);
/* The n numbers of v as an array, sep between them (", " or ","). */
void json_add_numbers(struct strbuf *sb, const double *v, size_t n, const char *sep);

#endif
