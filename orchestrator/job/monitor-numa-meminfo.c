/* numa-meminfo: each NUMA node's memory levels, from
 * /sys/devices/system/node/node<N>/meminfo ("Node N Name: value kB"), as
 * LKP names them: node0.AnonHugePages (kB).  Levels, sampled; a kernel
 * without CONFIG_NUMA sends none. */
#include "job/monitor.h"

const struct monitor monitor_numa_meminfo = {
	.name = "numa-meminfo",
	.reads = "/sys/devices/system/node/node*/meminfo",
	.sampled = 1,
	.field_ok = monitor_node_field,
};
