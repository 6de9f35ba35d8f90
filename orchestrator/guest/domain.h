/* Guest spec → libvirt domain XML.  Pure: no libvirt calls; every value
 * that comes from a user is XML-escaped. */
#ifndef KLAB_DOMAIN_H
#define KLAB_DOMAIN_H

#include <stddef.h>
#include <stdint.h>
#include "guest/topology.h"
#include "util/enum.h"

struct strbuf;

enum accel { ACCEL_KVM, ACCEL_TCG };

#define ACCEL_LAST (ACCEL_TCG + 1)
KLAB_ENUM_DECL(accel);	/* "kvm" | "tcg" */
/* The accelerator's name for a line: never NULL ("unknown" outside the table). */
static inline const char *accel_name(enum accel a)
{
	const char *name = accel_to_string(a);

	return name ? name : "unknown";
}

enum hugepage_backing { BACKING_NONE, BACKING_2M, BACKING_1G };

#define DOMAIN_RESULT_CHANNEL "org.klab.results"
/* The serial of a job's scratch disk, which the agent finds it by
 * (job.h's JOB_DISK_SERIAL). */
#define DOMAIN_SCRATCH_SERIAL "klab-disk"
#define DOMAIN_NAME_PREFIX "klab-"
#define DOMAIN_NAME_MAX 64		/* prefix included */
#define DOMAIN_METADATA_NS "https://klab.invalid/xmlns/domain/1"
#define DOMAIN_MAX_SHARES 8
#define DOMAIN_SHARE_TAG_MAX 31	/* QEMU's 9p mount tags are short */

/* A host directory the guest sees through 9p (virtio-9p-pci): always
 * read-only, enforced by QEMU (fsdev readonly=on), not by the guest's
 * mount options -- the guest runs the kernel under test and is hostile. */
struct domain_share {
	const char *source_dir;	/* absolute host path, no "." or ".." component */
	const char *tag;	/* the guest's mount tag: [a-z0-9_], 1..DOMAIN_SHARE_TAG_MAX */
	int readonly;		/* must be 1: a writable share is refused */
};

struct domain_spec {
	const char *name;		/* DOMAIN_NAME_PREFIX + [A-Za-z0-9_.-], at most DOMAIN_NAME_MAX */
	const char *uuid;		/* optional, 8-4-4-4-12 hex digits */
	enum accel accel;
	const char *emulator;		/* optional path, e.g. /usr/bin/qemu-system-x86_64 */
	const char *kernel, *initrd, *cmdline;	/* absolute paths; initrd, cmdline optional */
	uint64_t memory_mb;		/* 0: the plan's cells; else must equal their sum */
	const struct guest_plan *plan;	/* vcpus, pinning, cells, numatune; pinning omitted when `pin` is 0 */
	int pin;
	enum hugepage_backing hugepages;
	/* a raw file attached as the first virtio disk (vda), the job's
	 * swap (absolute path; optional) */
	const char *swap_disk;
	/* a raw file attached as the next virtio disk (vdb, or vda without
	 * swap) with the serial DOMAIN_SCRATCH_SERIAL, the job's file
	 * system's (absolute path; optional) */
	const char *scratch_disk;
	/* read-only 9p shares (a kbuild job's toolchain and source tree);
	 * none for every other job, whose XML is then unchanged */
	const struct domain_share *shares;
	size_t nr_shares;
	/* klab metadata (in <metadata><klab:guest xmlns:klab=NS>): owner
	 * process and lab so orphans can be recognised and cleaned. */
	const char *lab_id;		/* required */
	int owner_pid;
	int64_t created_s;
};

/* Append the domain XML.  Contents: type kvm|qemu; <os> direct kernel
 * boot (machine 'pc'); <vcpu placement='static'>; <cputune> vcpupin +
 * emulatorpin; <cpu> host-passthrough migratable='off' (kvm) or
 * mode='maximum' (tcg), check='none', with <topology sockets=cells dies=1
 * cores=vcpus/cells threads=1> (sockets=1 cores=vcpus when vcpus do not
 * divide evenly) and <numa><cell>s; <numatune> memory mode='strict' +
 * <memnode> per cell; hugepage <memoryBacking> if asked (each cell's
 * memory must be a whole number of pages); <features><acpi/><apic/>;
 * <clock offset='utc'>; <on_poweroff/on_reboot/on_crash> destroy; a pty
 * serial console; a virtio-serial channel named DOMAIN_RESULT_CHANNEL
 * on a unix socket that libvirt places (<source mode='bind'/>);
 * <panic model='isa'> at 0x505; <memballoon model='none'/>; no USB
 * controller, no network, no graphics, no disk but the swap disk when
 * asked (a raw file as virtio vda, cache='unsafe': it holds only what
 * the guest swaps out during one run) and the scratch disk when asked (a
 * raw file as the next virtio disk with <serial>DOMAIN_SCRATCH_SERIAL,
 * cache='unsafe' too: made fresh each boot, nothing on it outlives the
 * run, and the host's flushes would be noise; cache='none' needs
 * O_DIRECT, which a tmpfs image directory refuses); one <filesystem type='mount'
 * accessmode='squash'> with <driver type='path'/> and <readonly/> per
 * share (9p; QEMU reads the files as its own user); klab metadata.
 * Pinning (cputune, numatune) only when spec->pin, which needs a pinned
 * plan.  Multi-threaded TCG is QEMU's default for x86 on x86 hosts, so
 * nothing TCG-specific is written.
 * -1 + error() on an invalid spec (bad name or uuid, relative path,
 * control character or invalid UTF-8 in a value, plan that does not
 * match); `out` is then unchanged. */
int domain_xml(const struct domain_spec *spec, struct strbuf *out);

/* Escape for XML text and attribute values: & < > ' " as entities, tab
 * and newline as character references (they survive in attributes);
 * other control characters and invalid UTF-8 become U+FFFD, so the
 * output is always well-formed.  domain_xml() rejects those instead. */
void strbuf_add_xml_escaped(struct strbuf *sb, const char *s);

#endif
