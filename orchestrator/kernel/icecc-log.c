/* The icecc client's debug log of a build, counted: how many compiles
 * icecream sent to other nodes and how many ran here (icecc-log.h). */
#include "kernel/icecc-log.h"
#include "util/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PROC_NONE, PROC_REMOTE, PROC_LOCAL };

/* One icecc process: what its last record said about its compile. */
struct proc {
	unsigned pid;
	unsigned char used, invoked, state, fell_back;
};

struct procs {
	struct proc *p;
	size_t cap, nr;		/* cap: a power of two, at least twice nr */
};

struct hosts {
	char *name[ICECC_LOG_MAX_HOSTS];
	size_t nr;
};

static struct proc *slot(struct proc *p, size_t cap, unsigned pid)
{
	size_t i = ((uint32_t)pid * 2654435761u) & (cap - 1);

	while (p[i].used && p[i].pid != pid)
		i = (i + 1) & (cap - 1);
	return &p[i];
}

static struct proc *proc_get(struct procs *t, unsigned pid)
{
	struct proc *e;

	if ((t->nr + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct proc *p = xcalloc(cap, sizeof(*p));

		for (size_t i = 0; i < t->cap; i++)
			if (t->p[i].used)
				*slot(p, cap, t->p[i].pid) = t->p[i];
		free(t->p);
		t->p = p;
		t->cap = cap;
	}
	e = slot(t->p, t->cap, pid);
	if (!e->used) {
		e->used = 1;
		e->pid = pid;
		t->nr++;
	}
	return e;
}

/* A process's compile is done with (its pid may come again): count it. */
static void proc_count(struct icecc_counts *c, struct proc *e)
{
	c->remote += e->state == PROC_REMOTE;
	c->fallbacks += e->fell_back;
	e->invoked = e->fell_back = 0;
	e->state = PROC_NONE;
}

static void host_add(struct hosts *h, const char *s, size_t n)
{
	if (n > ICECC_LOG_MAX_HOST_LEN)
		n = ICECC_LOG_MAX_HOST_LEN;
	for (size_t i = 0; i < h->nr; i++)
		if (strlen(h->name[i]) == n && !memcmp(h->name[i], s, n))
			return;
	if (h->nr < ICECC_LOG_MAX_HOSTS)
		h->name[h->nr++] = xstrndup(s, n);
}

static int starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

/* The record at p ("ICECC[PID] DATE: MESSAGE"): its pid and where its
 * message starts, or NULL when p starts no record. */
static const char *record(const char *p, const char *end, unsigned *pid)
{
	const char *q = p + 6, *lim;
	unsigned long v = 0;
	size_t digits = 0;

	while (q < end && *q >= '0' && *q <= '9' && digits < 10) {
		v = v * 10 + (unsigned long)(*q++ - '0');
		digits++;
	}
	if (!digits || v > UINT32_MAX || end - q < 2 || q[0] != ']' || q[1] != ' ')
		return NULL;
	q += 2;
	/* "2026-12-06 20:36:13: ": the first ": " ends it */
	lim = end - q > 32 ? q + 32 : end;
	for (; q + 1 < lim; q++)
		if (q[0] == ':' && q[1] == ' ') {
			*pid = (unsigned)v;
			return q + 2;
		}
	return NULL;
}

static void on_message(struct procs *t, struct hosts *h, struct icecc_counts *c,
		       unsigned pid, const char *m, size_t n)
{
	struct proc *e;

	if (starts(m, n, "invoked as: ")) {
		c->calls++;
		e = proc_get(t, pid);
		if (e->invoked || e->state != PROC_NONE)
			proc_count(c, e);	/* an earlier icecc had this pid */
		e->invoked = 1;
	} else if (starts(m, n, "Have to use host ")) {
		const char *s = m + 17, *hp = s;

		while (hp < m + n && *hp != ':' && *hp != ' ' && *hp != '\n')
			hp++;
		if (hp == s || (hp - s == 9 && !memcmp(s, "127.0.0.1", 9)))
			return;	/* this node after all: a local build follows */
		e = proc_get(t, pid);
		e->state = PROC_REMOTE;
		host_add(h, s, (size_t)(hp - s));
	} else if (starts(m, n, "<building_local>") ||
		   starts(m, n, "building myself, but telling localhost") ||
		   starts(m, n, "local build forced by remote exception") ||
		   starts(m, n, "got exception ")) {
		e = proc_get(t, pid);
		if (e->state == PROC_REMOTE)
			e->fell_back = 1;
		e->state = PROC_LOCAL;
	}
}

void icecc_log_parse(struct icecc_counts *c, const char *text, size_t len)
{
	struct procs t = { 0 };
	struct hosts h = { { 0 }, 0 };
	const char *p = text, *end = text + len;

	memset(c, 0, sizeof(*c));
	while (p && end - p >= 6 && (p = memmem(p, (size_t)(end - p), "ICECC[", 6))) {
		unsigned pid;
		const char *m = record(p, end, &pid), *nl;

		if (!m) {
			p += 6;
			continue;
		}
		nl = memchr(m, '\n', (size_t)(end - m));
		on_message(&t, &h, c, pid, m, (size_t)((nl ? nl : end) - m));
		/* the next record may start inside this one's line */
		p = m;
	}
	for (size_t i = 0; i < t.cap; i++)
		if (t.p[i].used)
			proc_count(c, &t.p[i]);
	c->hosts = (unsigned)h.nr;
	c->consistent = c->remote <= c->calls;
	c->local = c->consistent ? c->calls - c->remote : 0;
	for (size_t i = 0; i < h.nr; i++)
		free(h.name[i]);
	free(t.p);
}
