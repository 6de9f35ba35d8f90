/* What a host offers a performance lab, read from /proc and /sys (and
 * libvirt's view of it): each fact with its consequence (klab host
 * check), and the host's fingerprint, the facts that make two runs
 * comparable (stored with every run set). */
#ifndef KLAB_HOSTCHECK_H
#define KLAB_HOSTCHECK_H

#include <stddef.h>

struct host_topology;
struct strbuf;

enum fact_level { FACT_OK, FACT_WARN, FACT_BAD };

struct host_fact {
	const char *name;	/* "kvm", "pmu", ... (static) */
	char *value;		/* what was read, one line */
	char *consequence;	/* what it means for performance work, one line */
	enum fact_level level;
};

struct host_check {
	struct host_fact *facts;
	size_t nr, alloc;
};

/* Read the facts of the machine this runs on under root ("" for the
 * real one; a directory holding proc/ and sys/ for tests).  topo: the
 * host's libvirt capabilities (NULL: not asked); it decides whether
 * libvirt offers KVM.  Facts that cannot be read say so: never fails. */
void host_check_local(struct host_check *hc, const char *root, const struct host_topology *topo);
/* The facts libvirt's capabilities give of a remote host (its /proc and
 * /sys are out of reach). */
void host_check_remote(struct host_check *hc, const struct host_topology *topo);
void host_check_release(struct host_check *hc);

/* One line per fact, "NAME  VALUE: CONSEQUENCE" (the level as "!" or
 * "!!" before bad news). */
void host_check_format(struct strbuf *sb, const struct host_check *hc);
/* {"host": host, "facts": [{"name", "value", "level", "consequence"}]} */
void host_check_json(struct strbuf *sb, const char *host, const struct host_check *hc);

/* The facts of a host that decide whether runs on it compare with runs
 * on another: CPU model and microcode, host kernel, governor, SMT (read
 * under root when local, else from topo), the accelerator, the guest's
 * shape, QEMU and libvirt versions.  text: one "key=value" per line, in
 * a fixed order; hash: its git blob id. */
struct host_fingerprint {
	char *text;
	char hash[41];
};
struct fingerprint_in {
	const char *root;		/* "" for this machine; NULL: remote (read topo) */
	const struct host_topology *topo;	/* may be NULL */
	const char *accel;		/* kvm | tcg */
	unsigned vcpus, numa_nodes;
	unsigned long long memory_mb;
	unsigned long qemu_version, libvirt_version;	/* libvirt's encoding: major * 1e6 + minor * 1e3 + micro */
};
void host_fingerprint_make(struct host_fingerprint *fp, const struct fingerprint_in *in);
void host_fingerprint_release(struct host_fingerprint *fp);
/* The keys whose values differ between two fingerprint texts, as
 * "cpu, kernel" into out (empty when they are alike). */
void host_fingerprint_diff(struct strbuf *out, const char *a, const char *b);

#endif
