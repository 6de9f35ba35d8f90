// SPDX-License-Identifier: GPL-2.0
#include <linux/mm.h>	/* for vm_area_struct */
#include "internal.h" // local
/*
 * A block comment with "quotes", 'apostrophes' and // inside.
 */
static const char *s = "/* not a comment */ \" // nor this";
static char c = '/', d = '\'';
#define X(a) ((a) /* arg */ * 2) \
	+ 1 // tail
int f(void) { return X(c) /**/ + d; }	/* end */
