/* The agent's parsers of the per-CPU and per-node files it monitors
 * (/proc/interrupts, /proc/softirqs, /sys/devices/system/node/nodeN/meminfo
 * and .../vmstat)
 * into LKP's stat names.  Pure and bounded: a kernel under test may print
 * anything, so nothing here trusts a length or a column count; the host
 * unit-tests and fuzzes the same file (tests/unit/test-procmon.c,
 * tests/fuzz/). */
#ifndef KLAB_PROCMON_H
#define KLAB_PROCMON_H

#include <stddef.h>

/* Longest name handed to the callback (the host's RESULT_MAX_NAME is 128). */
#define PROCMON_MAX_NAME 120
/* CPUs named per column; columns past it count only in the sums. */
#define PROCMON_MAX_CPUS 1024

typedef void (*procmon_emit)(void *ctx, const char *name, unsigned long long value);

/* /proc/interrupts: "CPU<n>.<irq>" per CPU and "<irq>" summed over CPUs,
 * <irq> as LKP names it: "RES:Rescheduling_interrupts" (a named one's
 * text, blanks as '_'), "24:IO-APIC.5-edge.ACPI:Ged" (a numbered one's
 * columns joined by '.'), "ERR" (no text). */
void procmon_interrupts(const char *text, procmon_emit emit, void *ctx);
/* /proc/softirqs: "CPU<n>.<type>" per CPU and "<type>" summed. */
void procmon_softirqs(const char *text, procmon_emit emit, void *ctx);
/* One node's meminfo, "Node 0 MemTotal:   123 kB" -> "node0.MemTotal" (kB). */
void procmon_node_meminfo(const char *text, procmon_emit emit, void *ctx);
/* Node `node`'s vmstat, "nr_free_pages 1234" -> "node0.nr_free_pages". */
void procmon_node_vmstat(const char *text, unsigned node, procmon_emit emit, void *ctx);

#endif
