/* stat: from /proc/stat, the all-CPU time line as cpu.user, cpu.nice,
 * cpu.system, cpu.idle, cpu.iowait, cpu.irq, cpu.softirq (USER_HZ ticks),
 * the same per CPU (cpu0.user, ...) and the ctxt and processes counters;
 * before and after the run only. */
#include "job/monitor.h"

const struct monitor monitor_stat = {
	.name = "stat",
	.reads = "/proc/stat",
	.counters = 1,
};
