#!/bin/sh
# Benchmark (issue 18): what the monitors cost the KPI.  The same kernel
# (the demo's good end, from the shared store), the same job, booted
# interleaved under job variants that differ only in `monitors:` (none,
# the default set, and each extra monitor given in KLAB_BENCH_MONITORS,
# e.g. perf-profile), with klab compare's engine: the KPI of every
# variant against "none" in one table, from one run.  Prints figures;
# never fails on them.
#   KLAB_BENCH_RUNS (default 5)  runs per variant
#   KLAB_BENCH_JOB (default will-it-scale-malloc1)  a job under jobs/
#   KLAB_BENCH_MONITORS (default none)  extra variants, comma-free names
#   KLAB_BENCH_INTERVAL (default 1s)  monitor_interval of every variant
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
N=${KLAB_BENCH_RUNS:-5}
JOB=${KLAB_BENCH_JOB:-will-it-scale-malloc1}
EXTRA=${KLAB_BENCH_MONITORS:-}
INTERVAL=${KLAB_BENCH_INTERVAL:-1s}
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
. "$KLAB_SRCDIR/tests/demo-kernels.sh"
B=$(mktemp -d /var/tmp/klab-bench-monitors.XXXXXX)
trap 'rm -rf "$B"' EXIT
"$KLAB" --state "$B/lab" init >/dev/null
printf 'ccache_dir = %s\nartifact_store = %s\n' "$KCCACHE" "$KSTORE" >> "$B/lab/klab.conf"
sh "$KLAB_SRCDIR/tests/demo/make-kernel-history.sh" "$KTREE" "$B/linux" 8 >/dev/null
sed -e "s/^monitor_interval:.*//" "$KLAB_SRCDIR/jobs/$JOB.yaml" > "$B/job.yaml"
printf 'monitor_interval: %s\n' "$INTERVAL" >> "$B/job.yaml"
set -- --set monitors=none --set monitors=all
for m in $EXTRA; do
	set -- "$@" --set "monitors=all+$m"
done
echo "monitor overhead: job $JOB, $N runs per variant, interleaved, monitor_interval $INTERVAL, $(nproc) host CPUs"
echo "variants: $*"
"$KLAB" --state "$B/lab" compare --job "$B/job.yaml" --repo "$B/linux" --rev demo-good \
	--runs "$N" --quiet "$@" > "$B/out" 2>&1 || { cat "$B/out"; exit 1; }
# the KPI lines: each variant against the first (monitors none)
grep -E '^(KPI|  [A-Z]  run set| *[A-Z] against A:)' "$B/out" || cat "$B/out"
