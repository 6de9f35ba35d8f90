#!/usr/bin/env python3
"""No function of orchestrator/ over LIMIT body lines, but the ones listed
in ALLOWED with why.  A function's body is what lies between a top-level
definition's opening brace, alone at the start of a line, and the next
closing brace at the start of a line (the pairs `git grep -n '^{'` and
`git grep -n '^}'` show); its lines are those from one to the other, both counted.
Prints each breach and exits 1; `make check` runs it
(tests/style/t-style.sh).  With --list, prints every function over
LIMIT / 2 lines, longest first."""
import os
import re
import sys

LIMIT = 120
ALLOWED = {
    "bisect_choose": "git's bisect choice written as git writes it (core/bisect.c), "
                     "so that the two can be read side by side",
}
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    """(name, first line of the body's brace, body lines) of each top-level
    definition in path"""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        start = i
        end = start + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        name = "?"
        for k in range(start - 1, max(start - 12, -1), -1):
            if lines[k] and not lines[k][0].isspace():
                m = NAME.search(lines[k])
                if m:
                    name = m.group(1)
                break
        yield name, start + 1, end - start + 1
        i = end + 1


def main(argv):
    top = argv[1] if len(argv) > 1 and not argv[1].startswith("-") else "."
    listing = "--list" in argv
    orch = os.path.join(top, "orchestrator")
    found = []
    for d, _, files in os.walk(orch):
        for f in sorted(files):
            if f.endswith(".c"):
                path = os.path.join(d, f)
                for name, line, n in functions(path):
                    found.append((n, os.path.relpath(path, top), line, name))
    found.sort(reverse=True)
    problems = 0
    for n, path, line, name in found:
        if listing and n > LIMIT // 2:
            print("%4d %s:%d %s" % (n, path, line, name))
        if n > LIMIT and name not in ALLOWED:
            if not listing:
                print("%s:%d: %s: %d lines (at most %d; split it by what its parts do)" % (path, line, name, n, LIMIT))
            problems += 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
