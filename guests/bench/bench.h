/* What klab's guest programs (the benchmarks usemem, will-it-scale and
 * kbuild-run, and the agent's job.conf reader) share: each is one static
 * guest program, so this is a header of static functions. */
#ifndef KLAB_BENCH_H
#define KLAB_BENCH_H

#include <errno.h>
#include <stdlib.h>

/* A decimal number from min to max into *out: 0, or -1 for anything else
 * (none, a sign, a suffix, out of range). */
static inline int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

#endif
