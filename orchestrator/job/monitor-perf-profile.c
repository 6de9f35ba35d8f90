/* perf-profile: `perf record -a -g` in the guest while the benchmark
 * runs, reduced by the agent (guests/agent/perfprof.c) to LKP's rows:
 * self.cycles-pp.<symbol> (self %), children.cycles-pp.<symbol> and
 * calltrace.cycles-pp.<callee>.<caller>... (children %), after the run
 * only.  Shares of the samples: levels.  Not in the default set: perf
 * and its libraries make the image larger and the profiler runs beside
 * the benchmark, so a job names it (a bisection's confirmation runs). */
#include "job/monitor.h"

#include <string.h>

/* "<kind>.cycles-pp.<name>": the rest is result_name_valid()'s */
static int profile_field(const char *field)
{
	static const char *const kinds[] = { "self.cycles-pp.", "children.cycles-pp.", "calltrace.cycles-pp." };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i]);

		if (!strncmp(field, kinds[i], n) && field[n])
			return 1;
	}
	return 0;
}

const struct monitor monitor_perf_profile = {
	.name = "perf-profile",
	.reads = "perf record -a -g, then perf report",
	.named_only = 1,
	.program = { "perf", "/usr/bin/perf", "linux-perf" },
	/* the agent's PERF_STOP_MS and PERF_REPORT_MS, and some margin */
	.after_s = 180,
	.field_ok = profile_field,
};
