/* The agent's clock, for its own waits and perf-profile's (agent.c,
 * perfprof.c): monotonic milliseconds, and a sleep a signal does not cut
 * short.  Static functions: each file that includes it gets its own. */
#ifndef KLAB_AGENT_CLOCK_H
#define KLAB_AGENT_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

static inline int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

#endif
