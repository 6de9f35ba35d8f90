/* The guest's initramfs: a cached base image (agent, busybox, and klab's
 * own benchmark programs), a cached programs part with the host programs
 * the job's suite, fs: and monitors run (stress-ng, fio, mkfs.xfs, perf,
 * ...) and their libraries, and a small job part, as cpio newc archives
 * concatenated, not compressed (docs/guest-protocol.md). */
#ifndef KLAB_GUESTIMG_H
#define KLAB_GUESTIMG_H

#include <stddef.h>

struct lab;
struct strbuf;

/* Where the guest binaries klab builds live: $KLAB_GUEST_BINDIR, the
 * build tree next to the running klab, or the installed libexec dir. */
const char *guestimg_bindir(void);

/* A directory QEMU (user libvirt-qemu) can read kernels and initrds in:
 * <state>/images when every ancestor of it is world-traversable, else
 * /var/tmp/klab-images-<uid>.  Created if missing. */
int guestimg_image_dir(const struct lab *lab, char **out);

/* Build (or find) the base image; *path is under image_dir, named by the
 * hash of every input's content, so it is rebuilt only when one changes.
 * *hit says whether it already existed. */
int guestimg_base(const char *image_dir, char **path, int *hit);

/* Build (or find) the part of the image a job needs beyond the base:
 * the host programs its suite runs (stress-ng, fio, perf, hackbench; a
 * suite program with a Debian package), the mkfs tool of its fs: (NULL:
 * none), and its monitors' (perf, for perf-profile), each with its
 * libraries, content-addressed like the base.  *path is NULL when they
 * need nothing (klab's own benchmarks, the default monitors). */
int guestimg_programs(const char *image_dir, const char *suite, const char *fs, unsigned monitors, char **path,
		      int *hit);

/* base + the programs part (NULL: none) + a job part with
 * /klab/job.conf = conf: a cached initrd file named by their hashes. */
int guestimg_initrd(const char *image_dir, const char *base_path, const char *programs_path, const char *conf,
		    size_t conf_len, char **path);

/* 0 when `kernel` is a readable x86 bzImage (its boot header), else -1
 * with a message naming the file. */
int guestimg_check_kernel(const char *kernel);
/* Copy a kernel image into image_dir under its content hash (readable
 * by QEMU); *path is the copy. */
int guestimg_stage_kernel(const char *image_dir, const char *kernel, char **path);

/* Pure part, for tests: append one cpio newc entry (name without a
 * leading '/'; data may be NULL for directories, devices and links). */
void cpio_add(struct strbuf *out, const char *name, unsigned mode, unsigned rdev_major,
	      unsigned rdev_minor, const void *data, size_t len);
void cpio_trailer(struct strbuf *out);

#endif
