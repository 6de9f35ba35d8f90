/* libFuzzer harness for orchestrator/kernel/ksources.c: the input is a kbuild
 * .cmd file (text a build of a hostile tree can shape) and, at once, a
 * sources.txt.  Every path the parser keeps must be a plain path inside
 * the tree, the finished set sorted and unique, and the set written as
 * sources.txt must read back the same.  The same bytes as a C source
 * through the comment blanking (ksources_blank_comments): no longer than
 * the input, line for line, and the same again when blanked twice.  Built
 * and run by run-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kbuild.h"
#include "kernel/ksources.h"
#include "util/strbuf.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what, const char *path)
{
	fprintf(stderr, "fuzz-ksources: %s: '%s'\n", what, path);
	abort();
}

static void check_set(const struct ksources *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		const char *p = s->paths[i];
		size_t n = strlen(p);

		if (!n || n > KSOURCES_MAX_PATH_LEN)
			broken("an empty or too long path", p);
		if (p[0] == '/' || p[n - 1] == '/' || strstr(p, "//"))
			broken("not a relative path", p);
		if (!strcmp(p, "..") || !strncmp(p, "../", 3) || strstr(p, "/../") ||
		    (n >= 3 && !strcmp(p + n - 3, "/..")))
			broken("a path out of the tree", p);
		if (!strcmp(p, ".") || !strncmp(p, "./", 2) || strstr(p, "/./"))
			broken("a path not normalised", p);
		if (!strncmp(p, KBUILD_DIR_PREFIX, strlen(KBUILD_DIR_PREFIX)))
			broken("a path in a build directory", p);
		for (size_t j = 0; j < n; j++)
			if ((unsigned char)p[j] <= ' ' || (unsigned char)p[j] >= 0x7f)
				broken("a blank or control byte in a path", p);
		if (i && strcmp(s->paths[i - 1], p) >= 0)
			broken("the set is not sorted and unique", p);
		if (!ksources_has(s, p))
			broken("a path the set does not find", p);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksources s = KSOURCES_INIT, back = KSOURCES_INIT, list = KSOURCES_INIT;
	struct strbuf sb = STRBUF_INIT;
	int hold = error_hold(1);

	if (ksources_parse_cmd(&s, (const char *)data, size, "/work/linux") == 0) {
		ksources_finish(&s);
		check_set(&s);
		for (size_t i = 0; i < s.nr; i++) {
			strbuf_addstr(&sb, s.paths[i]);
			strbuf_addch(&sb, '\n');
		}
		if (ksources_parse_list(&back, sb.buf ? sb.buf : "", sb.len) < 0 || back.nr != s.nr)
			broken("a set written does not read back", "");
		for (size_t i = 0; i < s.nr; i++)
			if (strcmp(s.paths[i], back.paths[i]))
				broken("a set reads back otherwise", s.paths[i]);
	}
	/* the same bytes as a sources.txt: refused whole, or a valid set */
	if (ksources_parse_list(&list, (const char *)data, size) == 0)
		check_set(&list);
	else if (list.nr)
		broken("a refused list left paths", "");
	for (int lc = 0; lc < 2; lc++) {
		struct strbuf once = STRBUF_INIT, twice = STRBUF_INIT;

		if (ksources_blank_comments((const char *)data, size, lc, &once) == 0) {
			size_t nl_in = 0, nl_out = 0;

			for (size_t i = 0; i < size; i++)
				nl_in += data[i] == '\n';
			for (size_t i = 0; i < once.len; i++)
				nl_out += once.buf[i] == '\n';
			if (once.len > size || nl_out > nl_in)
				broken("blanking made the text longer", "");
			if (ksources_blank_comments(once.buf ? once.buf : "", once.len, lc, &twice) < 0 ||
			    twice.len != once.len || (once.len && memcmp(once.buf, twice.buf, once.len)))
				broken("blanked text blanks otherwise", "");
		}
		strbuf_release(&once);
		strbuf_release(&twice);
	}
	error_hold(hold);
	ksources_release(&s);
	ksources_release(&back);
	ksources_release(&list);
	strbuf_release(&sb);
	return 0;
}
