#!/bin/sh
# Benchmark: the verdict table (tests/sim/README.md): klab's real engine
# (bisect-run.c, perf-*.c, revert.c over a real lab and git history)
# bisecting simulated runs, beside Pinpoint's and LKP's rules over the
# same histories, noise and seeds, for every cell (scenario x CV x effect
# as a multiple of the CV): wrong, right and no culprit, and runs.  By
# default the reduced table (CV 2%, ratios 3, 4, 10; 20 bisections a
# cell: KLAB_BENCH_BISECTIONS), direction +1 and -1 side by side (one
# process each); arguments go to both (-A: every CV and ratio).  Fails
# only when the program cannot be built or run, or a cell of normal or
# lognormal noise with effect >= 4 x CV breaks the 1% rule.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB_BUILDDIR=${KLAB_BUILDDIR:-$KLAB_SRCDIR}
N=${KLAB_BENCH_BISECTIONS:-20}
SIM=$KLAB_BUILDDIR/tests/sim/verdict-sim
if [ ! -x "$SIM" ]; then
	make -C "$KLAB_BUILDDIR" tests/sim/verdict-sim >/dev/null
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$SIM" -n "$N" -d 1 "$@" > "$out/up" 2>&1 & up=$!
"$SIM" -n "$N" -d -1 "$@" > "$out/down" 2>&1 & down=$!
rc=0
wait $up || rc=1
wait $down || rc=1
cat "$out/up"
echo
cat "$out/down"
exit $rc
