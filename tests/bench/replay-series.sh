#!/bin/sh
# Record a real KPI series for the verdict table's replay cell: N boots
# (KLAB_REPLAY_BOOTS, 40) of the shared guest kernel under TCG with the
# will-it-scale malloc1 job (1 s runtime), back to back, their KPI in run
# order, one a line, with a header saying how they were taken.  Writes
# tests/data/sim/replay-malloc1.txt (or $1).  The series keeps what the
# host did meanwhile (other guests, builds, slow spells): that is the
# point of replaying it.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
N=${KLAB_REPLAY_BOOTS:-40}
OUT=${1:-$KLAB_SRCDIR/tests/data/sim/replay-malloc1.txt}
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
B=$(mktemp -d /var/tmp/klab-replay.XXXXXX)
trap 'rm -rf "$B"' EXIT
"$KLAB" --state "$B/lab" init >/dev/null
sed -e 's/^runtime:.*/runtime: 1s/' "$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$B/job.yaml"
kpi=$(sed -n 's/^kpi: *\([^ ]*\).*/\1/p' "$B/job.yaml")
"$KLAB" --state "$B/lab" run --job "$B/job.yaml" --kernel "$KBZIMAGE" --repeat "$N" --quiet > "$B/out" 2>&1 ||
	{ cat "$B/out"; exit 1; }
{
	echo "# $kpi of $N boots in run order, one boot each, TCG, $(nproc) host CPUs,"
	echo "# the shared 6.1 guest kernel, jobs/will-it-scale-malloc1.yaml at 1 s runtime;"
	echo "# recorded $(date -u +%Y-%m-%d) by tests/bench/replay-series.sh"
	sqlite3 "$B/lab/klab.db" "SELECT s.value FROM samples s JOIN runs r ON r.id = s.run_id
		WHERE s.metric = '$kpi' AND s.seq = 0 ORDER BY r.id"
} > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "$(grep -vc '^#' "$OUT") runs in $OUT"
