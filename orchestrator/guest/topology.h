/* The host's CPUs and NUMA nodes, read from libvirt's capabilities XML,
 * and the pinning plan of a guest.  Pure: XML text in, plan out. */
#ifndef KLAB_TOPOLOGY_H
#define KLAB_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

struct host_cpu {
	int id;			/* host CPU number */
	int node;		/* NUMA cell id */
	int socket, die, core;	/* from capabilities (die 0 if absent) */
	char *siblings;		/* as given, e.g. "0,64" */
};

struct host_node {
	int id;
	uint64_t memory_kb;
	uint64_t free_2m_pages, free_1g_pages;	/* <pages unit='KiB' size='2048'> counts (total, as libvirt reports) */
};

struct host_topology {
	char *arch;		/* x86_64 */
	int has_vmx_or_svm;	/* <feature name='vmx'/> or 'svm' in <host><cpu> */
	int has_kvm_domain;	/* <guest><arch name=arch><domain type='kvm'/> */
	char *cpu_model;	/* <host><cpu><vendor> <model>, e.g. "AMD kvm64" (NULL: absent) */
	char *microcode;	/* <host><cpu><microcode version> (NULL: absent) */
	struct host_cpu *cpus;	/* sorted by id, no id twice (topology_plan relies on it) */
	size_t nr_cpus;
	struct host_node *nodes;	/* sorted by id, no id twice */
	size_t nr_nodes;
};

/* Parse capabilities XML (virConnectGetCapabilities).  -1 + error() on
 * malformed input (no <host><topology> is an error). */
int topology_parse(struct host_topology *t, const char *caps_xml, size_t len);
void topology_release(struct host_topology *t);

/* CPU and node ids at or above this are refused as malformed: no Linux
 * host has that many, and it bounds what a list like "0-4000000000"
 * could make us allocate. */
#define TOPOLOGY_MAX_CPUS 65536
/* Capabilities XML larger than this is refused before parsing. */
#define TOPOLOGY_MAX_CAPS_XML (8u << 20)

/* Parse a CPU list "0-3,8,10-11" into a sorted bitmap of host CPU ids;
 * -1 + error() when malformed.  out[i] set for CPU i, n = max+1. */
int cpulist_parse(const char *s, unsigned char **out, size_t *n);

struct strbuf;
/* Append the ids set in set[0..n) as a CPU list ("0-3,8"); nothing when
 * none is set. */
void cpulist_format(struct strbuf *out, const unsigned char *set, size_t n);
/* Set CPU cpu in the bitmap set[0..*n), growing it (zeroed) as needed;
 * a negative cpu (unpinned) is ignored. */
void cpu_bitmap_set(unsigned char **set, size_t *n, int cpu);

struct guest_shape {
	unsigned vcpus;
	unsigned numa_nodes;	/* guest cells (0 means 1); vcpus and memory split evenly (first cells get the rest) */
	uint64_t memory_mb;
};

struct guest_plan {
	unsigned vcpus;
	int *vcpu_pin;		/* vcpu_pin[i] = host CPU of vCPU i; -1 in an unpinned plan */
	int *emulator_cpus;	/* host CPUs for emulator threads (may be empty: then not pinned) */
	size_t nr_emulator_cpus;
	unsigned nr_cells;
	unsigned *cell_first_vcpu, *cell_nr_vcpus;	/* per guest cell */
	uint64_t *cell_memory_mb;
	int *cell_host_node;	/* host node each guest cell's memory is bound to; -1 in an unpinned plan */
};

/* Plan a guest on host `t`, using only CPUs allowed (NULL: all) and not
 * in `busy` (CPUs of other running guests; NULL: none).  Rules: one host
 * CPU per vCPU, never shared; a guest cell's vCPUs come from one host node
 * where possible, distinct host nodes per cell, the nodes with the most
 * free CPUs first (so concurrent guests spread over the host; cells share
 * nodes only when there are more cells than nodes that fit them); within
 * a node each vCPU gets a core of its own while whole free cores remain,
 * then the siblings of the guest's own vCPUs, and only then cores that
 * another guest or a disallowed CPU already uses; emulator threads get a
 * spare CPU of the first used node if one is left.  Host memory is not
 * checked.  -1 + error() when the host cannot fit the guest (message says
 * how many CPUs are free and needed). */
int topology_plan(struct guest_plan *p, const struct host_topology *t, const struct guest_shape *shape,
		  const unsigned char *allowed, size_t nr_allowed, const unsigned char *busy, size_t nr_busy);
/* A plan with the shape's cells but no host CPUs or nodes (vcpu_pin and
 * cell_host_node -1, no emulator CPUs), for guests that are not pinned. */
int guest_plan_unpinned(struct guest_plan *p, const struct guest_shape *shape);
void guest_plan_release(struct guest_plan *p);

/* Add the host CPUs the plan uses (vCPUs and emulator) to the bitmap
 * *busy of *nr_busy entries, growing it as needed: what the next
 * topology_plan() call must not use while this guest runs. */
void guest_plan_mark_busy(const struct guest_plan *p, unsigned char **busy, size_t *nr_busy);

/* Text of the plan for the database and output, stable across versions:
 * "vcpu0=3,vcpu1=4;emulator=5;cell0=node0:1024M,cell1=node1:1024M";
 * "any" where nothing is pinned ("emulator=any", "vcpu0=any",
 * "cell0=any:512M").  Caller frees. */
char *guest_plan_describe(const struct guest_plan *p);

#endif
