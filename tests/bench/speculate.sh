#!/bin/sh
# Benchmark (issue 19): speculative builds, side by side.  The trust
# history's mmapaddr range (tests/demo/make-trust-history.sh: every
# commit between the ends changes the kernel image, so every step boots)
# bisected twice with will-it-scale malloc1 in 1-vCPU guests on this
# host: once with `speculative_builds = no` (the default), once with
# `auto` (the next step's possible commits built on the CPU the guest's
# vCPU leaves free, at idle priority, while the guests run).  Each lab
# takes the shared ccache but keeps its own artifact store and worktree,
# so both compile every kernel they test (from ccache); the first build of
# each lab is a whole tree.  Prints per run the wall time, the time the
# bisection's own process spent building (the builds the steps waited
# for) and the builder's, the steps whose kernel was ready, the culprit,
# and the ratio.  Never fails on time; exits 1 when a run does not name
# the planted commit.  About 20 minutes here.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
. "$KLAB_SRCDIR/tests/trust-kernels.sh"
. "$KLAB_SRCDIR/tests/bench/bench-lab.sh"
bench_lab speculate "$KTRUST"
sed -e 's/^runtime:.*/runtime: 3s/' \
	-e 's/^guest:.*/guest: { vcpus: 1, numa_nodes: 1, memory: 512M, hugepages: none }/' \
	"$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$B/job.yaml"
printf 'profile_runs: 0\nrevert_check: no\n' >> "$B/job.yaml"
planted=$(git -C "$B/linux" rev-parse mmapaddr-planted)
echo "bench: two-good..mmapaddr-bad, $(git -C "$B/linux" rev-list --count two-good..mmapaddr-bad) commits," \
	"planted $(git -C "$B/linux" rev-parse --short=12 mmapaddr-planted); malloc1, 1 vCPU, $(nproc) host CPUs"
fail=0
for mode in no auto; do
	l=$B/lab-$mode
	"$KLAB" --state "$l" init >/dev/null
	printf 'ccache_dir = %s\nspeculative_builds = %s\n' "$KCCACHE" "$mode" >> "$l/klab.conf"
	t0=$(date +%s)
	rc=0
	"$KLAB" --state "$l" bisect start --repo "$B/linux" --good two-good --bad mmapaddr-bad --job "$B/job.yaml" \
		> "$B/$mode.out" 2>&1 || rc=$?
	eval "wall_$mode=$(($(date +%s) - t0))"
	qq() { sqlite3 "$l/klab.db" "$1"; }
	# builds begun while the bisection's process waited for them: the
	# steps' builds; the builder's began before their step did
	ready=$(grep -c "^  speculative build of .* ready" "$B/$mode.out" || true)
	waited=$(sed -n 's/^  built: compiled \([0-9hms.]*\).*/\1/p' "$B/$mode.out" |
		awk '{ t = 0; v = $1
		       if (match(v, /^[0-9]+h/)) { t += 3600 * substr(v, 1, RLENGTH - 1); v = substr(v, RLENGTH + 1) }
		       if (match(v, /^[0-9]+m/)) { t += 60 * substr(v, 1, RLENGTH - 1); v = substr(v, RLENGTH + 1) }
		       s += t + v } END { printf "%.0f", s }')
	all=$(qq "SELECT coalesce(sum(duration_ms), 0) / 1000 FROM builds")
	boots=$(qq "SELECT count(*) FROM boots")
	result=$(qq "SELECT result || ':' || coalesce(culprit, '') FROM bisections WHERE id = 1")
	echo "speculative_builds = $mode: exit $rc, $(eval echo \$wall_$mode) s, $boots boots;" \
		"builds $all s in all, of which steps waited for $waited s (their own compiles);" \
		"$ready step kernel(s) ready from the builder"
	grep -E "^  speculative|^step [0-9]+:" "$B/$mode.out" | cut -c1-160 | sed 's/^/    /'
	[ "$result" = "culprit:$planted" ] || { echo "  not the planted commit, confirmed: $result"; fail=1; }
done
awk -v a="$wall_no" -v b="$wall_auto" 'BEGIN { printf "wall time, speculative / none: %.2f (%d s against %d s)\n", b / a, b, a }'
exit "$fail"
