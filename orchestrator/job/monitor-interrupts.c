/* interrupts: /proc/interrupts per CPU and summed, with LKP's names:
 * CPU0.CAL:Function_call_interrupts, RES:Rescheduling_interrupts,
 * 24:IO-APIC.5-edge.ACPI:Ged (the agent's guests/agent/procmon.c).
 * Counters; one record per CPU and line, so before and after only. */
#include "job/monitor.h"

const struct monitor monitor_interrupts = {
	.name = "interrupts",
	.reads = "/proc/interrupts",
	.counters = 1,
};
