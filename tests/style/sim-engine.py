#!/usr/bin/env python3
"""The verdict simulation runs klab's engine, never a copy of its loops.

tests/sim/ once re-wrote by hand the loops that decide which runs are
taken and when (the reference phase, perf_step's ladder, the split, the
confirmation, the revert check); the copies drifted from the engine.
Now the table's bisections are the engine's (engine-sim.c).  This check
fails when a file in tests/sim calls a verdict rule of core/verdict.c
(verdict_policy_init aside: those calls are what a copy of the loops makes), defines a function
named after one of the engine's loops, or when the table's program stops
driving the engine: engine-sim.c must call bisect_run with perf_tester,
and Makefile.am must build verdict-sim from engine-sim.c.

usage: sim-engine.py SRCDIR   (prints one line per breach)
"""
import os
import re
import sys

ENGINE_LOOPS = ("perf_step", "perf_reference", "perf_confirm", "confirm_and_report", "revert_check_run",
                "perf_measure_timed", "bisect_run", "perf_test")


def main(srcdir):
    simdir = os.path.join(srcdir, "tests", "sim")
    breaches = []
    for name in sorted(os.listdir(simdir)):
        if not name.endswith((".c", ".h")):
            continue
        text = open(os.path.join(simdir, name), encoding="utf-8").read()
        code = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        for m in re.finditer(r"\b(verdict_[a-z_]+)\s*\(", code):
            if m.group(1) == "verdict_policy_init":
                continue
            breaches.append(f"tests/sim/{name}: calls {m.group(1)} (a verdict rule: the engine's loops call it)")
        for loop in ENGINE_LOOPS:
            if re.search(r"^[a-z].*\b%s\s*\([^;]*$" % loop, code, flags=re.M):
                breaches.append(f"tests/sim/{name}: defines {loop} (a copy of the engine's loop)")
    engine = os.path.join(simdir, "engine-sim.c")
    text = open(engine, encoding="utf-8").read() if os.path.exists(engine) else ""
    if not re.search(r"\bbisect_run\s*\(&", text) or "&perf_tester" not in text:
        breaches.append("tests/sim/engine-sim.c: does not run bisect_run with perf_tester")
    makefile = open(os.path.join(srcdir, "Makefile.am"), encoding="utf-8").read()
    m = re.search(r"^tests_sim_verdict_sim_SOURCES\s*=((?:.*\\\n)*.*)$", makefile, flags=re.M)
    if not m or "tests/sim/engine-sim.c" not in m.group(1):
        breaches.append("Makefile.am: verdict-sim is not built from tests/sim/engine-sim.c")
    for b in breaches:
        print(b)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
