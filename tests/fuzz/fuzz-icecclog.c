/* libFuzzer harness for orchestrator/kernel/icecc-log.c: the input is an
 * icecc client's debug log (ICECC_LOGFILE), text a build of a hostile
 * tree can shape (its compile lines are in it).  The counts must add up
 * whenever the parser calls them consistent, the nodes stay within their
 * bound, and the same bytes must count the same twice.  Built and run by
 * run-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/icecc-log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what)
{
	fprintf(stderr, "fuzz-icecclog: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct icecc_counts a, b;

	icecc_log_parse(&a, (const char *)data, size);
	icecc_log_parse(&b, (const char *)data, size);
	if (memcmp(&a, &b, sizeof(a)))
		broken("the same log counted twice differs");
	if (a.consistent && a.local + a.remote != a.calls)
		broken("local + remote != calls in a consistent count");
	if (!a.consistent && a.remote <= a.calls)
		broken("called inconsistent while remote <= calls");
	if (a.hosts > ICECC_LOG_MAX_HOSTS)
		broken("more nodes than the bound");
	if (a.hosts && !a.remote && !a.fallbacks)
		broken("a node named but no compile sent");
	if (a.calls > size / 12 + 1)
		broken("more calls than records the input can hold");
	return 0;
}
