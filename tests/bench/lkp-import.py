#!/usr/bin/env python3
"""How much of lkp-tests' jobs/ 'klab job import' takes: every job file of
the suites klab runs (and of those it refuses), imported with --json, the
combinations counted as imported or refused, grouped by the reason.
Prints figures; asserts nothing.

  tests/bench/lkp-import.py LKP-TESTS-DIR [KLAB]

LKP-TESTS-DIR is a checkout (or an unpacked copy) of intel/lkp-tests; its
jobs/ is read, nothing of it is written or kept.  KLAB defaults to the
build tree's orchestrator/klab.  A kbuild job needs a kernel tree:
KLAB_KBUILD_SOURCE (default /usr/src/linux-source-6.1, as 'klab job
import' itself).
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

# the suites klab runs, and those it refuses
RUNS = ["stress-ng", "will-it-scale", "vm-scalability", "kbuild", "hackbench", "netperf", "fio-basic",
        "perf-bench-futex", "perf-bench-sched-pipe", "perf-bench-sched-messaging", "perf-bench-mem"]
REFUSED = ["aim7", "aim9", "reaim", "unixbench", "lmbench3", "fsmark", "phoronix-test-suite"]


def suite_of(path):
    """The suite a job file names (its 'suite:' line), else its directory's."""
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"suite:\s*(\S+)", line)
            if m:
                return m.group(1)
    return os.path.basename(os.path.dirname(path))


def reason_class(why):
    """A short class of a refusal: what would make it import."""
    if "unknown suite" in why:
        return "suite klab does not know"
    m = re.search(r"testcase: (\S+) supports .*got '([^']*)'", why)
    if m and m.group(1) == "kbuild":
        return "klab's kbuild has no config target %s" % m.group(2)
    if m:
        return "testcase %s not in klab's %s" % (m.group(2), m.group(1))
    return why


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    klab = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../orchestrator/klab")
    files = []
    for d, _, names in os.walk(os.path.join(root, "jobs")):
        files += [os.path.join(d, n) for n in names if n.endswith(".yaml")]
    files.sort()
    per = collections.defaultdict(lambda: collections.Counter())
    reasons = collections.defaultdict(collections.Counter)
    whole = collections.Counter()
    with tempfile.TemporaryDirectory() as out:
        for path in files:
            suite = suite_of(path)
            base = suite if suite in RUNS + REFUSED else None
            if base is None and os.path.basename(os.path.dirname(path)) in RUNS + REFUSED:
                base = os.path.basename(os.path.dirname(path))
            if base is None:
                continue
            p = subprocess.run([klab, "job", "import", "--json", "--accel", "kvm", "--out-dir", out, path],
                               capture_output=True, text=True)
            per[base]["files"] += 1
            try:
                doc = json.loads(p.stdout)
            except ValueError:
                err = p.stderr.strip().replace(path + ": ", "")
                err = re.sub(r"^klab: error: ", "", err)
                per[base]["files refused whole"] += 1
                whole[(base, err)] += 1
                continue
            per[base]["combinations"] += doc["combinations"]
            per[base]["imported"] += len(doc["jobs"])
            if "refused" in doc:
                per[base]["refused"] += doc["combinations"]
                reasons[base][reason_class(doc["refused"])] += doc["combinations"]
            for s in doc["skipped"]:
                per[base]["refused"] += 1
                reasons[base][reason_class(s["why"])] += 1

    total = collections.Counter()
    print("%-28s %5s %6s %8s %7s" % ("suite", "files", "combos", "imported", "refused"))
    for suite in RUNS + REFUSED:
        c = per.get(suite)
        if not c:
            continue
        print("%-28s %5d %6d %8d %7d" % (suite, c["files"], c["combinations"], c["imported"], c["refused"]))
        if suite in RUNS:
            total.update(c)
    print("%-28s %5d %6d %8d %7d" % ("(suites klab runs)", total["files"], total["combinations"], total["imported"],
                                      total["refused"]))
    if total["combinations"]:
        print("imported: %d of %d combinations (%.1f%%)" % (
            total["imported"], total["combinations"], 100.0 * total["imported"] / total["combinations"]))
    print("\nrefused combinations, by reason:")
    for suite in sorted(reasons):
        for r, n in reasons[suite].most_common():
            print("  %-28s %4d  %s" % (suite, n, r))
    print("\nfiles refused whole:")
    for (suite, err), n in sorted(whole.items()):
        print("  %-28s %4d  %s" % (suite, n, err))


if __name__ == "__main__":
    main()
