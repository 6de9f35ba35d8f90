/* What klab's guest programs (the benchmarks usemem, will-it-scale and
 * kbuild-run, and the agent's job.conf reader) share: each is one static
 * guest program, so this is a header of static functions. */
#ifndef KLAB_BENCH_H
#define KLAB_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* In a child about to exec: stdin from /dev/null, stdout and stderr to
 * out_fd (closed unless it is one of them). */
static inline void child_stdio(int out_fd)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0 && fd != 0) {
		dup2(fd, 0);
		close(fd);
	}
	dup2(out_fd, 1);
	dup2(out_fd, 2);
	if (out_fd > 2)
		close(out_fd);
}

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
