#!/bin/sh
# Benchmark (issue 20): "my kernel builds got 27% slower", bisected by
# klab.  The demo range (tests/demo/make-kernel-history.sh: comment-only
# commits and "mm: align larger anonymous mappings on THP boundaries"
# re-applied) bisected with the kernel-build job in place of malloc1:
# the guests build a kernel tree (the imported 6.1 tree, read-only over
# 9p) with the host's toolchain, THP always.
#
# The reference phase is the parent/culprit measurement: the demo's ends
# boot the same images as the planted commit's parent and the planted
# commit (every other commit changes a comment; klab's builds are
# reproducible), KBUILD_BOOTS boots of each, interleaved, each boot one
# warm-up build and then builds for KBUILD_RUNTIME (100 s: two measured
# builds of init/ under TCG), so 10 measured builds of each by default.
# The cap is the same number of boots: klab decides on those.  Prints
# every measured build (real, user, sys), the medians, the guests' THP
# counters and the bisection's outcome.  Under TCG here a boot of the
# kernel-build job took 12 min 25 s with `runtime: 10s` (the warm-up
# build of init/ from an empty build directory, config and prepare
# included, then one measured build of 96 s), so the reference phase
# alone is about 2.5 hours at the defaults.  Never fails on time or on
# the outcome (under TCG the commit may not show).
#   KBUILD_TARGET   what each build makes (default init/)
#   KBUILD_RUNTIME  seconds of measured builds per boot (default 100)
#   KBUILD_BOOTS    boots per end (default 5)
#   KBUILD_WARMUP   yes (default) or no: no is LKP's way, every measured
#                   build reads the tree and the toolchain cold over 9p
#                   (about 4 minutes a boot with KBUILD_RUNTIME=10)
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
TARGET=${KBUILD_TARGET:-init/}
RUNTIME=${KBUILD_RUNTIME:-100}
BOOTS=${KBUILD_BOOTS:-5}
WARMUP=${KBUILD_WARMUP:-yes}
case $WARMUP in yes | no) ;; *) echo "kbuild-bisect: KBUILD_WARMUP must be yes or no" >&2; exit 1 ;; esac
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
. "$KLAB_SRCDIR/tests/demo-kernels.sh"
. "$KLAB_SRCDIR/tests/bench/bench-lab.sh"
bench_lab kbuild "$KDEMO"
sed -e "s|^  source:.*|  source: $KTREE|" -e "s|^  target:.*|  target: $TARGET|" \
	-e "s/^runtime:.*/runtime: ${RUNTIME}s/" -e "s/^repeat:.*/repeat: $BOOTS/" \
	-e "s/^  warmup:.*/  warmup: $WARMUP/" \
	-e "s|^kconfig:.*|kconfig: [ $KLAB_SRCDIR/jobs/kbuild.config ]|" \
	"$KLAB_SRCDIR/jobs/kbuild.yaml" > "$B/kbuild.yaml"
printf 'revert_check: no\nprofile_runs: 0\n' >> "$B/kbuild.yaml"
echo "bench: demo range $(git -C "$B/linux" rev-list --count demo-good..demo-bad) commits, planted" \
	"$(git -C "$B/linux" rev-parse --short=12 demo-planted); target $TARGET, ${RUNTIME} s of builds" \
	"per boot, $BOOTS boots per end, warm-up build $WARMUP"
t0=$(date +%s)
rc=0
"$KLAB" --state "$lab" bisect start --repo "$B/linux" --good demo-good --bad demo-bad --job "$B/kbuild.yaml" \
	--max-runs "$BOOTS" > "$B/bisect.out" 2>&1 || rc=$?
t=$(($(date +%s) - t0))
grep -E "^(will-it-scale|kbuild|  |regression|bisection|Bisecting|.*first bad commit|.*is the first)" "$B/bisect.out" |
	grep -v '^  revert ' | tail -40
echo
echo "every measured build, in boot order (end, boot, build: real user sys, seconds):"
q "SELECT CASE s.hash WHEN '$(git -C "$B/linux" rev-parse demo-good)' THEN 'parent-image' ELSE 'planted-image' END,
	   r.id, sm.seq, printf('%.1f', sm.value),
	   printf('%.1f', (SELECT u.value FROM samples u WHERE u.run_id = r.id AND u.metric = 'kbuild.iteration_user_time' AND u.seq = sm.seq)),
	   printf('%.1f', (SELECT y.value FROM samples y WHERE y.run_id = r.id AND y.metric = 'kbuild.iteration_sys_time' AND y.seq = sm.seq))
	FROM samples sm JOIN runs r ON r.id = sm.run_id JOIN steps s ON s.id = r.step_id
	WHERE s.phase = 'reference' AND sm.metric = 'kbuild.iteration_buildtime' ORDER BY r.id, sm.seq" | tr '|' ' '
echo
for side in good bad; do
	hash=$(git -C "$B/linux" rev-parse "demo-$side")
	vals=$(q "SELECT sm.value FROM samples sm JOIN runs r ON r.id = sm.run_id JOIN steps s ON s.id = r.step_id
		  WHERE s.phase = 'reference' AND s.hash = '$hash' AND sm.metric = 'kbuild.iteration_buildtime' ORDER BY sm.value")
	sys=$(q "SELECT sm.value FROM samples sm JOIN runs r ON r.id = sm.run_id JOIN steps s ON s.id = r.step_id
		 WHERE s.phase = 'reference' AND s.hash = '$hash' AND sm.metric = 'kbuild.iteration_sys_time' ORDER BY sm.value")
	thp=$(q "SELECT printf('%.0f', avg(m.value)) FROM monitor_stats m JOIN runs r ON r.id = m.run_id JOIN steps s ON s.id = r.step_id
		 WHERE s.phase = 'reference' AND s.hash = '$hash' AND m.source = 'vmstat' AND m.name = 'thp_fault_alloc' AND m.phase = 'delta'")
	n=$(echo "$vals" | grep -c . || true)
	med() { echo "$1" | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }
	echo "demo-$side ($([ $side = good ] && echo "the planted commit's parent's image" || echo "the planted commit's image")):" \
		"$n builds, buildtime median $(med "$vals") s (min $(echo "$vals" | head -n1), max $(echo "$vals" | tail -n1))," \
		"sys median $(med "$sys") s, thp_fault_alloc per boot $thp"
done
echo "bisection: exit $rc, result $(q "SELECT result FROM bisections WHERE id = 1"), $t s"
q "SELECT message FROM bisections WHERE id = 1"
