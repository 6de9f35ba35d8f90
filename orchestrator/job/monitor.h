/* Monitors: what the guest agent reads before and after a run (and every
 * monitor_interval) and sends as "KLAB1 mon PHASE SOURCE NAME VALUE"
 * (docs/guest-protocol.md), as one table per monitor in monitor-<name>.c
 * listed in one registry in monitor.c.  The agent's own reader table
 * (guests/agent/agent.c) has a row of the same name for each. */
#ifndef KLAB_MONITOR_H
#define KLAB_MONITOR_H

#include <stddef.h>

#include "job/suite.h"

/* A monitor-<name>.c sets only what is not zero: a field left out is a
 * level, read before and after the run only, in the default set, with
 * no program of its own. */
struct monitor {
	const char *name;	/* SOURCE in the records; series are monitor.<name>.<field> */
	const char *reads;	/* what the agent reads in the guest */
	int counters;		/* values only grow: a run's own share is after - before (a
				 * "delta" row); else levels (memory), kept as they are */
	int sampled;		/* also read at each monitor_interval (phase t<N>) */
	/* Not in a job's default set (`monitors: all`, or no key): a job
	 * runs it only by naming it, as it costs the guest more than reading
	 * a file (perf-profile). */
	int named_only;
	/* A host program the agent runs for it (name NULL: none), put into
	 * the guest image with its libraries only for a job that chooses the
	 * monitor (guestimg_programs). */
	struct suite_program program;
	/* Seconds the agent may spend on it after the benchmark: the host
	 * waits that much longer for the run. */
	unsigned after_s;
	/* A field name it sends, beyond result_name_valid() (NULL: any
	 * valid name).  Guest output is hostile: bounded checks only. */
	int (*field_ok)(const char *field);
};

/* The monitor of that name, or NULL (a record of an unknown source is bad). */
const struct monitor *monitor_find(const char *name);
/* 1 when field is a name this monitor's records may carry. */
int monitor_field_valid(const struct monitor *m, const char *field);
/* The registry in order (a job's `monitors:` is a bit set over it). */
size_t monitor_count(void);
const struct monitor *monitor_at(size_t i);
/* Its index, or -1 for a name that is not a monitor. */
int monitor_index(const char *name);
/* The bit set of the monitors that are not named_only: a job's monitors
 * when it does not choose, and `monitors: all`. */
unsigned monitor_default_set(void);
/* A field_ok for the per-node monitors: "node<digits>.<name>". */
int monitor_node_field(const char *field);

#endif
