/* numa-meminfo: each NUMA node's memory levels, from
 * /sys/devices/system/node/node<N>/meminfo ("Node N Name: value kB"), as
 * LKP names them: node0.AnonHugePages (kB).  Levels, sampled; a kernel
 * without CONFIG_NUMA sends none. */
#include "monitor.h"

#include <string.h>

/* "node<digits>.<Name>" */
static int node_field(const char *field)
{
	size_t i = 4;

	if (strncmp(field, "node", 4))
		return 0;
	while (field[i] >= '0' && field[i] <= '9')
		i++;
	return i > 4 && field[i] == '.' && field[i + 1];
}

const struct monitor monitor_numa_meminfo = {
	.name = "numa-meminfo",
	.reads = "/sys/devices/system/node/node*/meminfo",
	.counters = 0,
	.sampled = 1,
	.default_on = 1,
	.field_ok = node_field,
};
