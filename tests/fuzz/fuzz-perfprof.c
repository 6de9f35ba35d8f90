/* libFuzzer harness for the agent's perf report parser
 * (guests/agent/perfprof.c): the input is what perf report prints in a
 * hostile guest.  Every row it keeps must be one the host's perf-profile
 * monitor takes, a share in [0.5, 100], the largest first, at most
 * PERFPROF_MAX_ROWS of a kind.  Built and run by run-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/monitor.h"
#include "perfprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what, const char *name)
{
	fprintf(stderr, "fuzz-perfprof: %s: '%s'\n", what, name);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct perfprof pp;
	const struct monitor *m = monitor_find("perf-profile");
	char *text;

	if (!m)
		broken("no perf-profile monitor", "");
	/* as the agent has it: the bytes read, then a NUL */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	perfprof_parse(&pp, text);
	for (int k = 0; k < PERFPROF_NR_KINDS; k++) {
		if (pp.nr[k] > PERFPROF_MAX_ROWS)
			broken("too many rows", "");
		for (size_t i = 0; i < pp.nr[k]; i++) {
			const struct perfprof_row *r = &pp.rows[k][i];

			if (strlen(r->name) > PERFPROF_MAX_NAME || !monitor_field_valid(m, r->name))
				broken("a name the host refuses", r->name);
			if (!(r->pct >= PERFPROF_MIN_PCT && r->pct <= 100))
				broken("a share out of range", r->name);
			if (i && pp.rows[k][i - 1].pct < r->pct)
				broken("rows out of order", r->name);
		}
	}
	free(text);
	return 0;
}
