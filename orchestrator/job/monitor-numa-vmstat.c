/* numa-vmstat: each NUMA node's vmstat, from
 * /sys/devices/system/node/node<N>/vmstat ("nr_free_pages 1234"), as LKP
 * names them: node0.nr_free_pages.  Levels, sampled: most rows are page
 * counts (nr_*), and the few event counters (numa_hit, ...) are compared
 * the same way LKP does, as values over time.  A kernel without
 * CONFIG_NUMA sends none. */
#include "job/monitor.h"

const struct monitor monitor_numa_vmstat = {
	.name = "numa-vmstat",
	.reads = "/sys/devices/system/node/node*/vmstat",
	.sampled = 1,
	.field_ok = monitor_node_field,
};
