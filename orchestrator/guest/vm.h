/* libvirt lifecycle of klab's guests: connect to any URI, choose the
 * accelerator, create a transient domain, read its console and result
 * channel through libvirt streams, enforce timeouts, destroy, classify the
 * outcome, and clean domains a crashed klab left behind. */
#ifndef KLAB_VM_H
#define KLAB_VM_H

#include <stddef.h>
#include <stdint.h>
#include "guest/domain.h"
#include "guest/topology.h"
#include "job/resultproto.h"
#include "util/enum.h"

struct vm_conn {
	void *conn;		/* virConnectPtr */
	char *uri;
	char *hostname;
	int wait_s;		/* vm_ensure_connected: seconds to wait for libvirtd (klab.conf host_wait) */
};

/* Connect (registers libvirt's default event loop once). */
int vm_connect(struct vm_conn *c, const char *uri);
/* A host's libvirtd must answer within this (a stopped or hung one
 * accepts the connection and never replies: host add, list and check,
 * and placement, would hang on it). */
#define HOST_ANSWER_S 15
/* The same, bounded: -1 (said when report) when libvirtd does not answer
 * within timeout_s (a stopped or hung libvirtd accepts the connection
 * and never replies; libvirt's keepalive does not cover the open). */
int vm_connect_timed(struct vm_conn *c, const char *uri, int timeout_s, int report);
void vm_disconnect(struct vm_conn *c);
/* Reconnect if the connection died (idle keepalive while building). */
int vm_ensure_connected(struct vm_conn *c);

/* Capabilities XML of the host (caller frees). */
int vm_capabilities(struct vm_conn *c, char **xml);
/* The hypervisor's (QEMU's) and libvirtd's versions in libvirt's
 * encoding (major * 1000000 + minor * 1000 + micro); 0 where libvirt
 * does not say. */
void vm_versions(struct vm_conn *c, unsigned long *qemu, unsigned long *libvirt);

enum accel_choice { ACCEL_AUTO, ACCEL_FORCE_KVM, ACCEL_FORCE_TCG };
int accel_choice_parse(const char *s, enum accel_choice *out);

/* Choose the accelerator from the parsed capabilities.  auto = KVM only
 * when libvirt offers a 'kvm' domain for the host's architecture AND the
 * host CPU has vmx or svm (an openable /dev/kvm proves nothing: see
 * ENVIRONMENT.md).  *why says how it was decided (static text). */
int vm_choose_accel(const struct host_topology *t, enum accel_choice choice, enum accel *out, const char **why);

/* Host CPUs used by the vCPUs of klab guests running now (their live
 * pinning), as a bitmap; for planning concurrent guests.  Emulator pins
 * are not counted: an emulator thread takes a spare CPU while one is
 * free, but it must not keep a second guest off a small host. */
int vm_busy_cpus(struct vm_conn *c, unsigned char **busy, size_t *nr);
/* The same, and *count = klab guests running with a vCPU on a CPU of
 * `within` (NULL: anywhere); an unpinned guest counts everywhere. */
int vm_klab_guests(struct vm_conn *c, const unsigned char *within, size_t nr_within, unsigned char **busy,
		   size_t *nr, int *count);

/* A URI with a server part ("qemu+tcp://host/system") reaches another
 * libvirtd: files must travel to it (vm_upload_file). */
int vm_uri_is_remote(const char *uri);
/* 0 when uri has a libvirt URI's shape, DRIVER[+TRANSPORT]://[HOST]/[PATH]
 * (qemu:///system, qemu+ssh://host/system, test:///default), else -1
 * with a message.  Whether it connects is only known by connecting. */
int vm_uri_check(const char *uri);

/* Put the local file `path` (at most max bytes) into volume vol_name of
 * the dir pool pool_name (defined at pool_target and started when
 * missing) on c's host, unless a complete volume of that name and size is
 * there; *remote_path is the file's path on that host (caller frees),
 * *uploaded says whether bytes were sent.  -1 + error() naming the pool
 * and host. */
int vm_upload_file(struct vm_conn *c, const char *pool_name, const char *pool_target, const char *path,
		   const char *vol_name, size_t max, char **remote_path, int *uploaded);

/* Destroy domains named klab-* that carry klab's metadata for this lab
 * and whose owner process is gone.  Returns how many were destroyed. */
int vm_clean_orphans(struct vm_conn *c, const char *lab_id);

enum vm_outcome {
	VM_OK,
	VM_BOOT_FAILED,		/* the agent never started */
	VM_PANIC,		/* the kernel panicked (excerpt kept) */
	VM_TIMEOUT,		/* the run did not finish in time */
	VM_RUN_FAILED,		/* the agent ran, the benchmark or agent failed */
	/* The host's fault, not the kernel's: QEMU ended with no panic on
	 * the console (killed, crashed: libvirt's STOPPED_FAILED), or the
	 * connection to libvirtd was lost.  Tried again, never a verdict. */
	VM_INFRA,
	VM_ERROR		/* klab or libvirt failed: not the kernel's fault */
};

#define VM_OUTCOME_LAST (VM_ERROR + 1)
/* Whose fault a failed boot was: "kernel" or "infrastructure" (NULL for
 * VM_OK and VM_ERROR). */
const char *vm_outcome_fault(enum vm_outcome o);
KLAB_ENUM_DECL(vm_outcome);
/* The outcome's name for a line: never NULL ("error" outside the table). */
static inline const char *vm_outcome_name(enum vm_outcome o)
{
	const char *name = vm_outcome_to_string(o);

	return name ? name : "error";
}

struct vm_run_opts {
	const char *xml;		/* domain XML (domain_xml) */
	/* A guest made ahead by vm_create_paused to boot instead of creating
	 * one from xml (then unused); vm_boot_and_run owns and destroys it. */
	void *spare;
	const char *console_path;	/* the guest's console is written here */
	int64_t boot_timeout_ms;	/* create → agent hello */
	int64_t run_timeout_ms;		/* hello → done */
	/* Called on progress: "booting", "running", with ms since create. */
	void (*on_phase)(const char *phase, int64_t ms, void *data);
	/* Called once the domain exists (paused), e.g. to release a planning
	 * lock; with a spare, once its CPUs run (from then on other klab
	 * processes count them). */
	void (*on_created)(void *data);
	/* Called once the guest's CPUs run (e.g. to make the next guest). */
	void (*on_resumed)(void *data);
	void *data;
};

struct vm_run {
	enum vm_outcome outcome;
	char *reason;			/* one line */
	char *excerpt;			/* panic/oops text, or console tail on boot failure */
	int64_t create_ms;		/* virDomainCreateXML duration */
	int64_t hello_ms;		/* create start → agent hello (-1 if never) */
	int64_t first_output_ms;	/* create start → first benchmark output (-1) */
	int64_t total_ms;
	struct result result;		/* everything the result channel said */
	char *pinning;			/* what virDomainGetVcpuPinInfo reported, "0:3,1:4" */
	char *domain_name;
};

/* Guests made ahead of their boot (spares): created paused while the
 * guest before them boots, so that libvirt's start (about a second under
 * TCG, most of it libvirt reading the guest CPU's features back) is not
 * on the next boot's path.  Their names end with VM_SPARE_SUFFIX; while
 * paused they run nothing and vm_klab_guests does not count their CPUs,
 * which the owner claims by resuming one under the planning lock. */
#define VM_SPARE_SUFFIX "-next"
/* Create a domain paused (destroyed with the connection); safe in a
 * thread beside the event loop.  0 with *dom and *ms (the call's time),
 * or -1 with *why (malloc'd libvirt message), printing nothing. */
int vm_create_paused(struct vm_conn *c, const char *xml, void **dom, int64_t *ms, char **why);
/* 1 when a spare is still there and paused. */
int vm_spare_usable(void *dom);
/* Destroy and free a spare (NULL-safe). */
void vm_spare_destroy(void *dom);

/* Boot the domain, read its streams until it ends or a timeout, destroy
 * it, classify.  Returns 0 when the outcome is known (any outcome but
 * VM_ERROR), -1 after error() when klab/libvirt failed. */
int vm_boot_and_run(struct vm_conn *c, const struct vm_run_opts *o, struct vm_run *r);
void vm_run_release(struct vm_run *r);
/* After a VM_INFRA boot: the connection made again (the bounded wait of
 * vm_ensure_connected) and the guest of that boot destroyed if libvirtd
 * still runs it (a restarted libvirtd keeps the QEMUs it finds, and
 * forgets their auto-destroy).  0, or -1 after error(). */
int vm_destroy_leftover(struct vm_conn *c, const char *name);

/* Pure, for tests: find a panic or oops in console text; returns a
 * malloc'd excerpt or NULL. */
char *vm_panic_excerpt(const char *console, size_t len);

#endif
