/* Stored run sets compared and printed, for klab compare and klab
 * reproduce: LKP's text table or JSON on stdout, and a page. */
#ifndef KLAB_RUNCOMPARE_PRINT_H
#define KLAB_RUNCOMPARE_PRINT_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;

/* Run sets ids[] (the first the base; labels may be NULL) compared and
 * printed as text (with the line that compares them again without
 * booting), or JSON; with html_path also written as a page there.  0, or
 * -1 after error(). */
int runcmp_print(struct sqlite3 *db, const int64_t *ids, const char *const *labels, size_t n, const char *kpi,
		 int json, const char *html_path);

#endif
