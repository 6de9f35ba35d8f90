/* meminfo: memory levels, /proc/meminfo lines "Name:  value kB" (the
 * value in kB as the kernel prints it); levels, so no delta. */
#include "job/monitor.h"

const struct monitor monitor_meminfo = {
	.name = "meminfo",
	.reads = "/proc/meminfo",
	.sampled = 1,
};
