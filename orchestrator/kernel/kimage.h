/* What a built kernel image is: proof that a bzImage carries its own
 * build's kernel, and the identity stored beside every artifact (the
 * image's and vmlinux's sha256), which the store checks before a boot and
 * the identical-kernel shortcut compares. */
#ifndef KLAB_KIMAGE_H
#define KLAB_KIMAGE_H

#include <stddef.h>

#define KIMAGE_IDENTITY_FILE "identity"

struct kimage_identity {
	char image_sha256[65];		/* the bzImage as stored */
	char vmlinux_sha256[65];	/* the kernel as linked */
	char payload[256];		/* the file the image's payload is, relative to the build directory */
	size_t payload_len;
};

/* Where the compressed kernel lies in a bzImage, from its setup header
 * (boot protocol 2.08+: payload_offset and payload_length, counted from
 * the protected-mode code after the setup sectors).  0, or -1 with a
 * message naming what is wrong with the image. */
int kimage_payload_span(const unsigned char *img, size_t len, size_t *off, size_t *plen);

/* The file arch/x86/boot/compressed/piggy.S pulls in with .incbin, and
 * the size it declares (z_input_len).  0, or -1 with a message. */
int kimage_piggy_input(const char *piggy_text, char *name, size_t name_size, size_t *input_len);

/* The bzImage in build directory bd holds, as its payload, byte for byte
 * the compressed kernel this build made (the file piggy.S names): 0 and
 * *id filled (its image and vmlinux hashes taken from bd); 1 it does not
 * (*why says how; free it); -1 klab could not tell (a message). */
int kimage_verify_build(const char *bd, struct kimage_identity *id, char **why);

/* The identity beside an artifact (dir/identity).  0 read; 1 there is
 * none (an artifact made before klab verified images); -1 unreadable or
 * malformed (a message). */
int kimage_identity_read(const char *dir, struct kimage_identity *id);
int kimage_identity_write(const char *dir, const struct kimage_identity *id);

/* The artifact in dir is what its identity says: the bzImage's sha256
 * is the one recorded.  0 yes; 1 no identity; 2 damaged (*why set: free
 * it); -1 unreadable (a message). */
int kimage_check_artifact(const char *dir, char **why);

/* Two artifacts hold the same kernel: both verified, the same vmlinux
 * and the same image.  1 yes, 0 no or unknown (an artifact without an
 * identity is never the same as another). */
int kimage_same_kernel(const char *dir_a, const char *dir_b);
/* The same for two stored images, named by their paths (DIR/bzImage). */
int kimage_same_image(const char *bzimage_a, const char *bzimage_b);

#endif
