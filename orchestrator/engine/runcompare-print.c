/* Stored run sets compared and printed (runcompare-print.h): the
 * comparison is runcompare.c's, this is its way to stdout and a file. */
#include "engine/runcompare-print.h"
#include "engine/runcompare.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>

int runcmp_print(struct sqlite3 *db, const int64_t *ids, const char *const *labels, size_t n, const char *kpi,
		 int json, const char *html_path)
{
	struct runcmp c;
	struct strbuf sb = STRBUF_INIT;

	if (runcmp_load(&c, db, ids, labels, n, kpi) < 0)
		return -1;
	runcmp_compute(&c);
	if (html_path) {
		runcmp_html(&sb, &c);
		if (write_file_atomic(html_path, sb.buf, sb.len) < 0) {
			strbuf_release(&sb);
			runcmp_release(&c);
			return -1;
		}
		strbuf_reset(&sb);
	}
	if (json) {
		runcmp_json(&sb, &c);
	} else {
		runcmp_format(&sb, &c, 25);
		strbuf_addstr(&sb, "\nagain without booting: klab compare");
		for (size_t i = 0; i < n; i++)
			strbuf_addf(&sb, " --runset %lld", (long long)ids[i]);
		strbuf_addch(&sb, '\n');
	}
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
	runcmp_release(&c);
	return 0;
}
