#!/bin/sh
# Benchmark: run-to-run noise of malloc1 and mmapaddr in guests, pinned
# vCPUs against unpinned, side by side: coefficient of variation of the
# KPI over N boots each (interleaved: pinned, unpinned, pinned, ...).
# Prints figures; never fails on them.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
N=${KLAB_BENCH_RUNS:-5}
RUNTIME=${KLAB_BENCH_RUNTIME:-5}
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
B=$(mktemp -d /var/tmp/klab-bench-noise.XXXXXX)
trap 'rm -rf "$B"' EXIT
"$KLAB" --state "$B/lab" init >/dev/null
q() { sqlite3 "$B/lab/klab.db" "$1"; }
echo "noise benchmark: $N boots per cell, runtime ${RUNTIME}s, $(nproc) host CPUs"
printf '%-26s %-9s %12s %8s  %s\n' job pinning mean "cv %" values
for job in will-it-scale-malloc1 stress-ng-mmapaddr; do
	sed -e "s/^runtime:.*/runtime: ${RUNTIME}s/" -e 's/^repeat:.*/repeat: 1/' \
		"$KLAB_SRCDIR/jobs/$job.yaml" > "$B/$job.yaml"
	kpi=$(sed -n 's/^kpi: *\([^ ]*\).*/\1/p' "$B/$job.yaml")
	: > "$B/pinned"; : > "$B/unpinned"
	i=0
	while [ "$i" -lt "$N" ]; do
		for mode in pinned unpinned; do
			flag=; [ "$mode" = unpinned ] && flag=--no-pin
			"$KLAB" --state "$B/lab" run --job "$B/$job.yaml" --kernel "$KBZIMAGE" --quiet $flag > "$B/out" 2>&1 ||
				{ cat "$B/out"; exit 1; }
			q "SELECT s.value FROM samples s JOIN runs r ON r.id = s.run_id
			   WHERE s.metric = '$kpi' ORDER BY r.id DESC LIMIT 1" >> "$B/$mode"
		done
		i=$((i + 1))
	done
	for mode in pinned unpinned; do
		awk -v job="$job" -v mode="$mode" '{ v[NR] = $1; s += $1 } END {
			m = s / NR; for (i = 1; i <= NR; i++) ss += (v[i] - m) ^ 2
			sd = NR > 1 ? sqrt(ss / (NR - 1)) : 0; vals = ""
			for (i = 1; i <= NR; i++) vals = vals sprintf("%.0f ", v[i])
			printf "%-26s %-9s %12.1f %7.1f%%  %s\n", job, mode, m, 100 * sd / m, vals }' "$B/$mode"
	done
done
