#!/usr/bin/env python3
"""Generate the demo repository: a small C ring-buffer library with a
48-commit history by several authors, a merged topic branch, one commit
that does not compile (fixed by the next) and one planted bug.

    make-history.py DIR

Deterministic: same hashes every time.  Prints the planted commit's
subject on stdout.  Used by tests/demo/run-demo.sh (the README's demo)
until the kernel demo exists."""
import subprocess
import sys

PLANTED = "ringbuf: avoid the modulo in rb_next()"

HEADER = """#ifndef RINGBUF_H
#define RINGBUF_H
#include <stddef.h>

struct ringbuf {
	int *slot;
	size_t cap, head, tail, len;
};

int rb_init(struct ringbuf *rb, size_t cap);
void rb_free(struct ringbuf *rb);
int rb_push(struct ringbuf *rb, int v);
int rb_pop(struct ringbuf *rb, int *v);
size_t rb_next(const struct ringbuf *rb, size_t i);
%EXTRA%
#endif
"""

CORE = """#include <stdlib.h>
#include "ringbuf.h"

/* %NOTE% */
int rb_init(struct ringbuf *rb, size_t cap)
{
	rb->slot = calloc(cap, sizeof(*rb->slot));
	rb->cap = cap;
	rb->head = rb->tail = rb->len = 0;
	return rb->slot ? 0 : -1;
}

void rb_free(struct ringbuf *rb)
{
	free(rb->slot);
	rb->slot = NULL;
}

size_t rb_next(const struct ringbuf *rb, size_t i)
{
	%NEXT%
}

int rb_push(struct ringbuf *rb, int v)
{
	if (rb->len == rb->cap)
		return -1;
	rb->slot[rb->tail] = v;
	rb->tail = rb_next(rb, rb->tail);
	rb->len++;
	return 0;
}

int rb_pop(struct ringbuf *rb, int *v)
{
	if (!rb->len)
		return -1;
	*v = rb->slot[rb->head];
	rb->head = rb_next(rb, rb->head);
	rb->len--;
	return 0;
}
"""

TEST = """#include <stdio.h>
#include "ringbuf.h"

int main(void)
{
	struct ringbuf rb;
	int v, errors = 0;

	/* a capacity that is not a power of two, on purpose */
	if (rb_init(&rb, 12))
		return 2;
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 7; i++)
			rb_push(&rb, round * 10 + i);
		for (int i = 0; i < 7; i++)
			if (rb_pop(&rb, &v) || v != round * 10 + i)
				errors++;
	}
	rb_free(&rb);
	printf("%d errors\\n", errors);
	return errors ? 1 : 0;
}
"""

AUTHORS = [
    ("Ada Lovelace", "ada@example.org"),
    ("Linus Torvalds", "torvalds@example.org"),
    ("Grace Hopper", "grace@example.org"),
    ("Ken Thompson", "ken@example.org"),
]

def main():
    repo = sys.argv[1]
    subprocess.run(["git", "init", "-q", repo], check=True)
    state = {"note": "ring buffer of ints", "next": "return (i + 1) % rb->cap;",
             "extra": [], "stats": [], "docs": ["# ringbuf", ""]}
    commits = []  # (subject, branch)

    def files():
        stats_c = "#include \"ringbuf.h\"\n\n" + "\n".join(state["stats"]) + "\n"
        return {
            "ringbuf.h": HEADER.replace("%EXTRA%", "\n".join(state["extra"])),
            "ringbuf.c": CORE.replace("%NOTE%", state["note"]).replace("%NEXT%", state["next"]),
            "stats.c": stats_c,
            "test.c": TEST,
            "README.md": "\n".join(state["docs"]) + "\n",
        }

    out = []
    mark = 0
    t = 1700000000

    def commit(subject, branch="main", merge_from=None):
        nonlocal mark, t
        mark += 1
        t += 3600
        name, email = AUTHORS[mark % len(AUTHORS)]
        out.append(f"commit refs/heads/{branch}\nmark :{mark}\n")
        out.append(f"author {name} <{email}> {t} +0000\ncommitter {name} <{email}> {t} +0000\n")
        msg = subject + "\n\nSigned-off-by: " + name + " <" + email + ">\n"
        out.append(f"data {len(msg.encode())}\n{msg}")
        if merge_from:
            out.append(f"merge {merge_from}\n")
        for path, text in sorted(files().items()):
            data = text.encode()
            out.append(f"M 100644 inline {path}\ndata {len(data)}\n")
            out.append(text + "\n")
        return mark

    commit("ringbuf: initial import")
    out.append("reset refs/tags/v1.0\nfrom :1\n\n")
    for i in range(2, 49):
        if i == 30:
            state["stats"].append("size_t rb_free_slots(const struct ringbuf *rb)\n{\n\treturn rb->cap - rb->len\n}")
            state["extra"].append("size_t rb_free_slots(const struct ringbuf *rb);")
            commit("stats: add rb_free_slots()")
        elif i == 31:
            state["stats"][-1] = "size_t rb_free_slots(const struct ringbuf *rb)\n{\n\treturn rb->cap - rb->len;\n}"
            commit("stats: fix the build of rb_free_slots()")
        elif i == 33:
            state["next"] = "return (i + 1) & (rb->cap - 1);"
            commit(PLANTED)
        elif i == 24:
            # a topic branch with two doc commits, merged back
            out.append("reset refs/heads/topic\nfrom :%d\n\n" % mark)
            state["docs"].append("Capacity may be any size.")
            commit("docs: say that any capacity works", branch="topic")
            state["docs"].append("Not thread safe.")
            topic = commit("docs: mention thread safety", branch="topic")
            commit("Merge branch 'topic'", merge_from=":%d" % topic)
        elif i % 3 == 0:
            n = len(state["stats"])
            state["stats"].append(f"size_t rb_stat_{n}(const struct ringbuf *rb)\n{{\n\treturn rb->len + {n};\n}}")
            state["extra"].append(f"size_t rb_stat_{n}(const struct ringbuf *rb);")
            commit(f"stats: add rb_stat_{n}()")
        elif i % 3 == 1:
            state["docs"].append(f"Note {i}: see ringbuf.h.")
            commit(f"docs: note {i}")
        else:
            state["note"] = f"ring buffer of ints (revision {i})"
            commit(f"ringbuf: reword the comment (revision {i})")
    stream = "".join(out).encode()
    subprocess.run(["git", "-C", repo, "fast-import", "--quiet"], input=stream, check=True)
    subprocess.run(["git", "-C", repo, "symbolic-ref", "HEAD", "refs/heads/main"], check=True)
    subprocess.run(["git", "-C", repo, "reset", "-q", "--hard"], check=True)
    print(PLANTED)

if __name__ == "__main__":
    main()
