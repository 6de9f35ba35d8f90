/* A kernel image's proof of what it is.  A bzImage is setup code, a
 * decompressor and, as a blob the decompressor's piggy.o pulls in with
 * .incbin, the compressed kernel: nothing in make's or ccache's view ties
 * that blob to the build, so klab checks it after every build and keeps
 * the hashes that say which kernel an artifact is. */
#include "kernel/kimage.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "util/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Images and kernels klab reads whole: a tinyconfig bzImage is 3.5 MB, a
 * distribution's about 12. */
#define MAX_IMAGE (256u << 20)

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int kimage_payload_span(const unsigned char *img, size_t len, size_t *off, size_t *plen)
{
	size_t setup_sects, pm, poff, pl;
	unsigned version;

	if (len < 0x250 || memcmp(img + 0x202, "HdrS", 4))
		return error("not a bzImage (no 'HdrS' setup header)");
	version = (unsigned)img[0x206] | (unsigned)img[0x207] << 8;
	if (version < 0x0208)
		return error("bzImage boot protocol %u.%02u has no payload fields (2.08 or later needed)",
			     version >> 8, version & 0xff);
	setup_sects = img[0x1f1] ? img[0x1f1] : 4;
	pm = (setup_sects + 1) * 512;
	poff = le32(img + 0x248);
	pl = le32(img + 0x24c);
	if (pm > len || poff > len - pm || pl == 0 || pl > len - pm - poff)
		return error("bzImage payload (offset %zu, %zu bytes) lies outside the image (%zu bytes)", pm + poff,
			     pl, len);
	*off = pm + poff;
	*plen = pl;
	return 0;
}

int kimage_piggy_input(const char *text, char *name, size_t name_size, size_t *input_len)
{
	const char *p = strstr(text, ".incbin \""), *end, *z;
	unsigned long n;

	if (!p)
		return error("piggy.S has no .incbin line");
	p += 9;
	end = strchr(p, '"');
	if (!end || end == p || (size_t)(end - p) >= name_size || memchr(p, '\n', (size_t)(end - p)))
		return error("piggy.S's .incbin names no file klab can read");
	memcpy(name, p, (size_t)(end - p));
	name[end - p] = '\0';
	if (name[0] == '/' || strstr(name, ".."))
		return error("piggy.S's .incbin names a file outside the build directory");
	z = strstr(text, "z_input_len = ");
	if (!z || sscanf(z + 14, "%lu", &n) != 1)
		return error("piggy.S declares no z_input_len");
	*input_len = n;
	return 0;
}

int kimage_verify_build(const char *bd, struct kimage_identity *id, char **why)
{
	char *image_path = xstrfmt("%s/arch/x86/boot/bzImage", bd);
	char *piggy_path = xstrfmt("%s/arch/x86/boot/compressed/piggy.S", bd);
	char *vmlinux_path = xstrfmt("%s/vmlinux", bd);
	char *img = NULL, *piggy = NULL, *blob = NULL, *blob_path = NULL;
	size_t img_len, blob_len, off, plen, zlen;
	int ret = -1;

	memset(id, 0, sizeof(*id));
	*why = NULL;
	if (read_file(image_path, MAX_IMAGE, &img, &img_len) < 0 ||
	    read_file(piggy_path, 1 << 20, &piggy, NULL) < 0)
		goto out;
	if (kimage_payload_span((const unsigned char *)img, img_len, &off, &plen) < 0 ||
	    kimage_piggy_input(piggy, id->payload, sizeof(id->payload), &zlen) < 0)
		goto out;
	blob_path = xstrfmt("%s/%s", bd, id->payload);
	if (read_file(blob_path, MAX_IMAGE, &blob, &blob_len) < 0)
		goto out;
	if (blob_len != zlen) {
		*why = xstrfmt("%s is %zu bytes, piggy.S says %zu: the build directory changed under the build",
			       id->payload, blob_len, zlen);
		ret = 1;
		goto out;
	}
	if (plen != blob_len || memcmp(img + off, blob, blob_len)) {
		*why = xstrfmt("the image's payload (%zu bytes) is not this build's %s (%zu bytes): "
			       "arch/x86/boot/compressed/piggy.o holds another kernel (a stale object from a cache)",
			       plen, id->payload, blob_len);
		ret = 1;
		goto out;
	}
	id->payload_len = blob_len;
	if (sha256_file(image_path, id->image_sha256) < 0 ||
	    sha256_file(vmlinux_path, id->vmlinux_sha256) < 0)
		goto out;
	ret = 0;
out:
	FREE_MANY(image_path, piggy_path, vmlinux_path, img, piggy, blob, blob_path);
	return ret;
}

static char *identity_path(const char *dir)
{
	return xstrfmt("%s/" KIMAGE_IDENTITY_FILE, dir);
}

int kimage_identity_write(const char *dir, const struct kimage_identity *id)
{
	char *path = identity_path(dir);
	char *text = xstrfmt("klab-identity 1\nbzImage sha256:%s\nvmlinux sha256:%s\npayload %s %zu\n",
			     id->image_sha256, id->vmlinux_sha256, id->payload, id->payload_len);
	int rc = write_file_atomic_mode(path, text, strlen(text), 0644);

	free(text);
	free(path);
	return rc;
}

static int is_hex64(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n == 64 && !s[64];
}

int kimage_identity_read(const char *dir, struct kimage_identity *id)
{
	char *path = identity_path(dir), *text = NULL;
	int ret = -1;

	memset(id, 0, sizeof(*id));
	if (access(path, F_OK) < 0 && errno == ENOENT) {
		ret = 1;
		goto out;
	}
	if (read_file(path, 4096, &text, NULL) < 0)
		goto out;
	if (sscanf(text, "klab-identity 1\nbzImage sha256:%64s\nvmlinux sha256:%64s\npayload %255s %zu",
		   id->image_sha256, id->vmlinux_sha256, id->payload, &id->payload_len) != 4 ||
	    !is_hex64(id->image_sha256) || !is_hex64(id->vmlinux_sha256)) {
		error("'%s' is not an identity klab wrote", path);
		goto out;
	}
	ret = 0;
out:
	free(text);
	free(path);
	return ret;
}

int kimage_check_artifact(const char *dir, char **why)
{
	struct kimage_identity id;
	char *image = NULL, now[65];
	int rc;

	*why = NULL;
	rc = kimage_identity_read(dir, &id);
	if (rc)
		return rc;
	image = xstrfmt("%s/bzImage", dir);
	rc = sha256_file(image, now);
	free(image);
	if (rc < 0)
		return -1;
	if (strcmp(now, id.image_sha256)) {
		*why = xstrfmt("its bzImage's sha256 is %.12s, the identity recorded at the build says %.12s", now,
			       id.image_sha256);
		return 2;
	}
	return 0;
}

int kimage_same_kernel(const char *dir_a, const char *dir_b)
{
	struct kimage_identity a, b;
	int hold = error_hold(1), same = 0;

	if (kimage_identity_read(dir_a, &a) == 0 && kimage_identity_read(dir_b, &b) == 0)
		same = !strcmp(a.vmlinux_sha256, b.vmlinux_sha256) && !strcmp(a.image_sha256, b.image_sha256);
	error_hold(hold);
	return same;
}

int kimage_same_image(const char *bzimage_a, const char *bzimage_b)
{
	const char *sa = strrchr(bzimage_a, '/'), *sb = strrchr(bzimage_b, '/');
	char *da, *db;
	int same;

	if (!sa || !sb || strcmp(sa, "/bzImage") || strcmp(sb, "/bzImage"))
		return 0;
	da = xstrndup(bzimage_a, (size_t)(sa - bzimage_a));
	db = xstrndup(bzimage_b, (size_t)(sb - bzimage_b));
	same = kimage_same_kernel(da, db);
	free(da);
	free(db);
	return same;
}
