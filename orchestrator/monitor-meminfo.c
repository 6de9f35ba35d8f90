/* meminfo: memory levels, /proc/meminfo lines "Name:  value kB" (the
 * value in kB as the kernel prints it); levels, so no delta. */
#include "monitor.h"

const struct monitor monitor_meminfo = {
	.name = "meminfo",
	.reads = "/proc/meminfo",
	.counters = 0,
	.sampled = 1,
	.default_on = 1,
};
