/* Content hashes (hash.h): libgit2's blob id, OpenSSL's sha256. */
#include "hash.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

void blob_hash(const char *data, size_t len, char hex[41])
{
	git_oid oid;

	git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB);
	git_oid_tostr(hex, 41, &oid);
}

static void to_hex(const unsigned char *md, unsigned n, char *hex)
{
	static const char digits[] = "0123456789abcdef";

	for (unsigned i = 0; i < n; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * n] = '\0';
}

int sha256_file(const char *path, char hex[65])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char buf[1 << 16], md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	int fd, ret = -1;
	ssize_t n;

	if (!ctx)
		die("out of memory");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error("cannot open '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		goto out_ssl;
	while ((n = read_full(fd, (char *)buf, sizeof(buf))) > 0)
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n))
			goto out_ssl;
	if (n < 0) {
		error("cannot read '%s': %s", path, strerror(errno));
		goto out;
	}
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32)
		goto out_ssl;
	to_hex(md, mdlen, hex);
	ret = 0;
	goto out;
out_ssl:
	error("cannot hash '%s': OpenSSL's sha256 failed", path);
out:
	if (fd >= 0)
		close(fd);
	EVP_MD_CTX_free(ctx);
	return ret;
}
