/* The monitor registry: the one table of what the guest reports besides
 * the benchmark's output. */
#include "job/monitor.h"
#include "job/resultproto.h"
#include "util/util.h"

#include <string.h>

extern const struct monitor monitor_vmstat, monitor_meminfo, monitor_stat, monitor_numa_meminfo, monitor_interrupts,
	monitor_softirqs, monitor_numa_vmstat, monitor_perf_profile;

/* The order the agent sends them in. */
static const struct monitor *const monitors[] = {
	&monitor_vmstat,
	&monitor_meminfo,
	&monitor_stat,
	&monitor_numa_meminfo,
	&monitor_interrupts,
	&monitor_softirqs,
	&monitor_numa_vmstat,
	&monitor_perf_profile,
};

size_t monitor_count(void)
{
	return ARRAY_SIZE(monitors);
}

const struct monitor *monitor_at(size_t i)
{
	return i < ARRAY_SIZE(monitors) ? monitors[i] : NULL;
}

int monitor_index(const char *name)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(monitors); i++)
		if (!strcmp(monitors[i]->name, name))
			return (int)i;
	return -1;
}

const struct monitor *monitor_find(const char *name)
{
	int i = monitor_index(name);

	return i < 0 ? NULL : monitors[i];
}

int monitor_field_valid(const struct monitor *m, const char *field)
{
	return result_name_valid(field) && (!m->field_ok || m->field_ok(field));
}

unsigned monitor_default_set(void)
{
	unsigned set = 0;

	for (size_t i = 0; i < ARRAY_SIZE(monitors); i++)
		if (!monitors[i]->named_only)
			set |= 1u << i;
	return set;
}

int monitor_node_field(const char *field)
{
	size_t i = 4;

	if (strncmp(field, "node", 4))
		return 0;
	while (field[i] >= '0' && field[i] <= '9')
		i++;
	return i > 4 && field[i] == '.' && field[i + 1];
}
