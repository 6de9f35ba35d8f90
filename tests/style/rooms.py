#!/usr/bin/env python3
"""The house rule of orchestrator/: each file lives in a room, a room
includes only its own headers and those of the rooms below it, and no
module's includes come back to it (no cycles).  Prints each breach and
exits 1; `make check` runs it (tests/style/t-style.sh).

The rooms, lowest first:
  util    strbuf, allocation, errors, run-command, JSON, HTML escaping
  core    pure decisions: bisect, stats, verdict, compare, track, the revert rule
  job     jobs, suites, monitors, the result protocol, LKP input (parsers)
  lab     a lab's state: the directory, klab.conf, the database, repositories
  kernel  a commit's kernel: tree import, config and make, the store, images
  guest   host topology, placement, domain XML, the initramfs, libvirt, a run
  engine  the bisection loop, its testers, confirmation, revert, speculation
  report  the HTML report, notices
  cmd     the klab program: the command table and one file per command
"""
import os
import re
import sys

ROOMS = ["util", "core", "job", "lab", "kernel", "guest", "engine", "report", "cmd"]
RANK = {r: i for i, r in enumerate(ROOMS)}
# Cycles inside a room that are one concept written in two or more files;
# every other cycle is a breach.  (A module's "-int.h", the header only
# its own files share, is part of the module.)
ALLOWED_CYCLES = {
    frozenset(["job/job", "job/monitor", "job/resultproto", "job/suite"]):
        "a job names its suite and monitors, and they check the job: one registry",
    frozenset(["guest/guest", "guest/placement"]):
        "placement attaches the guest environment to the host it picks",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(top):
    orch = os.path.join(top, "orchestrator")
    problems = []
    graph = {}
    for room in sorted(os.listdir(orch)):
        d = os.path.join(orch, room)
        if not os.path.isdir(d) or room == "shim" or room.startswith("."):
            continue
        if room not in RANK:
            problems.append("orchestrator/%s/: not a room (rooms: %s)" % (room, " ".join(ROOMS)))
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            path = "%s/%s" % (room, name)
            text = open(os.path.join(d, name), encoding="utf-8", errors="replace").read()
            module = module_of(path)
            for inc in INCLUDE.findall(text):
                if "/" not in inc:
                    target = "%s/%s" % (room, inc)	# beside it
                else:
                    target = inc
                troom = target.split("/")[0]
                if troom not in RANK:
                    continue	# config.h and the like
                if RANK[troom] > RANK[room]:
                    problems.append("orchestrator/%s includes %s: the %s room is above %s" % (path, inc, troom, room))
                if room == "cmd" and name.startswith("cmd-") and os.path.basename(target).startswith("cmd-"):
                    problems.append("orchestrator/%s includes %s: a command is not a library" % (path, inc))
                graph.setdefault(module, set()).add(module_of(target))
            graph.setdefault(module, set())
    # a module is its .c and .h together
    for cycle in cycles(graph):
        if frozenset(cycle) not in ALLOWED_CYCLES:
            problems.append("cycle: " + " -> ".join(cycle))
    for p in problems:
        print(p)
    return 1 if problems else 0


def module_of(path):
    """room/name of a .c or .h, its -int.h counted as the module's."""
    m = path[:-2]
    return m[:-4] if m.endswith("-int") else m


def cycles(graph):
    """Each strongly connected set of two or more modules, as one path."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
