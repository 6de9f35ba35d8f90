#!/bin/sh
# Benchmark: the verdict rules in simulated bisections (no VMs): wrong-
# culprit rate for every cell (distribution x effect x CV) and the runs per
# step of the adaptive policy against a fixed 5 runs per commit.  Prints
# figures (tests/sim/README.md explains them); fails only when the program
# cannot be built or run, or a cell with effect >= 4 x CV breaks the 1% rule.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB_BUILDDIR=${KLAB_BUILDDIR:-$KLAB_SRCDIR}
N=${KLAB_BENCH_BISECTIONS:-1000}
SIM=$KLAB_BUILDDIR/tests/sim/verdict-sim
if [ ! -x "$SIM" ]; then
	make -C "$KLAB_BUILDDIR" tests/sim/verdict-sim >/dev/null
fi
for direction in 1 -1; do
	"$SIM" -n "$N" -d "$direction" "$@"
	echo
done
