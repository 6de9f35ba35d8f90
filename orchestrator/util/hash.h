/* Content hashes: git's blob id (what a file's bytes would be called in a
 * repository: configs, recipes, jobs) and sha256 (kernel images). */
#ifndef KLAB_HASH_H
#define KLAB_HASH_H

#include <stddef.h>

/* The git blob id of data: 40 hex digits. */
void blob_hash(const char *data, size_t len, char hex[41]);
/* sha256 of a file, 64 hex digits.  0, or -1 with a message. */
int sha256_file(const char *path, char hex[65]);

#endif
