/* Where icecream sent a build's compiles: the log icecc's client writes
 * under ICECC_DEBUG=debug to ICECC_LOGFILE, one file that every icecc of
 * the build appends to.  Pure; the text is untrusted (compile lines). */
#ifndef KLAB_ICECC_LOG_H
#define KLAB_ICECC_LOG_H

#include <stddef.h>

/* Distinct remote nodes counted at most (a count past it says "at least"). */
#define ICECC_LOG_MAX_HOSTS 64
/* Longest node address kept to tell nodes apart ("Have to use host H:P"). */
#define ICECC_LOG_MAX_HOST_LEN 255

struct icecc_counts {
	unsigned calls;		/* icecc processes ("invoked as:") */
	unsigned remote;	/* handed to another node, never taken back */
	unsigned local;		/* compiled here: calls - remote */
	unsigned fallbacks;	/* handed to another node, then compiled here */
	unsigned hosts;		/* distinct nodes the remote ones went to */
	int consistent;		/* 0: the log contradicts itself (remote > calls) */
};

/* Count text[0..len) (NULs allowed).  An icecc's records are told apart
 * by its pid; a record may start mid-line (icecc writes a long line and
 * its newline in two writes, so another's record can land between).
 * Never fails: what is not a record is ignored. */
void icecc_log_parse(struct icecc_counts *c, const char *text, size_t len);

#endif
