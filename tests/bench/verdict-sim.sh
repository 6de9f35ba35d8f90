#!/bin/sh
# Benchmark: the verdict rules in simulated bisections (no VMs): for every
# cell (scenario x CV x effect as a multiple of the CV) wrong and right
# culprits, inconclusive, unconfirmed and refused bisections, every run
# (ends, fresh reference runs, commits, confirmation) against a fixed 5
# runs per commit plus a 5 + 5 confirmation, and how often the
# confirmation passes a right and a wrong culprit.  Prints figures
# (tests/sim/README.md explains them; about a minute per direction on one
# core); fails only when the program cannot be built or run, or a cell of
# the original distributions with effect >= 4 x CV breaks the 1% rule.
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
