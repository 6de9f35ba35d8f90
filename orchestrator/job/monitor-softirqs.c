/* softirqs: /proc/softirqs per CPU and summed, LKP's names (CPU0.RCU,
 * RCU).  Counters; one record per CPU and type, so before and after only. */
#include "job/monitor.h"

const struct monitor monitor_softirqs = {
	.name = "softirqs",
	.reads = "/proc/softirqs",
	.counters = 1,
};
