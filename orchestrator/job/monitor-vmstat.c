/* vmstat: the kernel's VM event and page counters, /proc/vmstat lines
 * "name value"; a run is judged by how far they moved. */
#include "job/monitor.h"

const struct monitor monitor_vmstat = {
	.name = "vmstat",
	.reads = "/proc/vmstat",
	.counters = 1,
	.sampled = 1,
};
