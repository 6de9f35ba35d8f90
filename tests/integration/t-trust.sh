#!/bin/sh
# A culprit you can trust (issue 17), on real guests and real kernels of
# the trust history (tests/demo/make-trust-history.sh):
#
# 1. Two changes.  Two planted regressions of about half the range's
#    each (a spin on every munmap, then a second one on that path): klab meets a
#    commit between the ends, splits the range there, names both
#    culprits with their shares, and reverts each alone on the bad end:
#    neither revert restores good, and klab says so.
#
# 2. A confirmation that fails for real.  The range's kernels differ
#    (a harmless boot line) but perform alike; while the bad end's guests
#    run in the reference phase the host stalls them for real (their QEMU
#    processes stopped 80% of the time, 0.2 s in every 0.25 s: a host
#    whose hypervisor loses the CPUs at the wrong moment; busy processes
#    beside a 2-vCPU TCG guest slowed malloc1 in one run and sped it up
#    in another), so the regression "reproduces".
#    The bisection narrows to the harmless commit, its confirmation's
#    fresh runs show no step, pass 2's fresh references do not reproduce
#    the regression, and the bisection ends unconfirmed, exit 4, naming
#    no culprit.  Nothing is faked: the stall is real, only its timing is
#    the test's.
#
# Issue 17's first unseen range, rebuilt (stress-ng mmapaddr on the same
# history) is tests/bench/trust-mmapaddr.sh: CI time.
#
# Fails (never skips) when libvirt does not answer.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
. "$KLAB_SRCDIR/tests/trust-kernels.sh"
# exclusive: scenario 2 stalls every QEMU process of the host, which must
# be this test's
guest_cpus_lock exclusive
kernel_lab

git clone -q --shared "$KTRUST" "$T/linux"
git -C "$T/linux" fetch -q "$KTRUST" 'refs/tags/*:refs/tags/*'
first=$(git -C "$T/linux" rev-parse two-first)
second=$(git -C "$T/linux" rev-parse two-second)
sed -e 's/^runtime:.*/runtime: 3s/' "$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$T/malloc1.yaml"
echo 'profile_runs: 0' >> "$T/malloc1.yaml"

# ---- 1. two changes ---------------------------------------------------------
k bisect start --repo "$T/linux" --good two-good --bad two-bad --job "$T/malloc1.yaml" > "$T/two.out" 2>&1
rc=$?
check "two changes: exits 0" test "$rc" -eq 0 || tail -40 "$T/two.out"
check "two changes: the range split at a commit between the ends" \
	grep -q "is clearly apart from both ends: two changes" "$T/two.out"
check "two changes: half 1's culprit is the first planted commit, confirmed" \
	test "$(q "SELECT culprit || ':' || confirmed FROM bisection_culprits WHERE bisection_id = 1 AND half = 1")" = "$first:1"
check "two changes: half 2's culprit is the second planted commit, confirmed" \
	test "$(q "SELECT culprit || ':' || confirmed FROM bisection_culprits WHERE bisection_id = 1 AND half = 2")" = "$second:1"
check "two changes: each culprit has its share of the regression" \
	test "$(q "SELECT count(*) FROM bisection_culprits WHERE bisection_id = 1 AND share BETWEEN 10 AND 90")" -eq 2
check "two changes: the outcome names both with their shares" \
	grep -Eq "half 1 culprit [0-9a-f]{12} \([0-9]+% of the regression\); half 2 culprit [0-9a-f]{12} \([0-9]+%" "$T/two.out"
check "two changes: neither revert alone restores good" \
	test "$(q "SELECT group_concat(revert_outcome) FROM bisection_culprits WHERE bisection_id = 1")" = \
		"does-not-restore,does-not-restore"
check "two changes: klab says so for each half" \
	test "$(grep -c "^revert check, half [12]: revert does not restore (.*it recovers" "$T/two.out")" -eq 2
check "two changes: each revert step is of its culprit's half" \
	test "$(q "SELECT group_concat(half) FROM (SELECT half FROM steps WHERE bisection_id = 1 AND phase = 'revert'
		   ORDER BY half)")" = "1,2"
k bisect show 1 > "$T/two-show.out" 2>&1
check "two changes: bisect show has each half's revert line" \
	test "$(grep -c "^            revert check: revert does not restore" "$T/two-show.out")" -eq 2
k notify send 1 > /dev/null 2>&1 || true
sed -n '/^split:/,/^range:/p;/^  good /,/^  bad /p' "$T/two-show.out" | sed 's/^/# /'
grep -E "^(revert check, half|bisection 1: two changes|  share:)" "$T/two.out" | sed 's/^/# /'

# ---- 2. a confirmation that fails for real ----------------------------------
bad=$(git -C "$T/linux" rev-parse harmless-bad)
# stall_while_bad ID: while bisection ID's bad end is being measured in
# pass 1's reference step, the host's QEMU processes (this test's guests:
# it holds the guests' CPUs exclusively) are stopped 0.2 s in every
# 0.25 s.  Each stalled boot is counted in $T/stalled.  (At 0.15 s in
# 0.25 s, with kernel builds of other tests beside it, the stalled end
# measured 4,884 ±32% against good 8,281 ±33%: 2.7 standard errors
# after 12 runs, not reproduced.)
stall_while_bad() {
	stalled=
	trap 'pkill -CONT -x qemu-system-x86 2>/dev/null; exit 0' TERM
	while :; do
		state=$(q "SELECT coalesce((SELECT s.status FROM steps s WHERE s.bisection_id = $1 AND s.phase = 'reference'
			   AND s.pass = 1 AND s.hash = '$bad'), 'none')
			   || ':' || coalesce((SELECT group_concat(b.id) FROM boots b JOIN steps s ON s.id = b.step_id
			   WHERE s.bisection_id = $1 AND s.phase = 'reference' AND s.pass = 1 AND s.hash = '$bad'
			   AND b.outcome = 'running'), '')" 2>/dev/null) || state=
		case $state in
		done:*) break ;;
		*:[1-9]*)
			[ "$stalled" = "${state#*:}" ] || { stalled=${state#*:}; echo "$stalled" >> "$T/stalled"; }
			# a second of stalls between two looks at the database:
			# the look (a sqlite3 process) takes 10-100 ms on a
			# loaded host and would make the stall irregular
			for i in 1 2 3 4; do
				pkill -STOP -x qemu-system-x86 2>/dev/null
				sleep 0.2
				pkill -CONT -x qemu-system-x86 2>/dev/null
				sleep 0.05
			done ;;
		*) sleep 0.2 ;;
		esac
	done
	pkill -CONT -x qemu-system-x86 2>/dev/null
}
: > "$T/stalled"
stall_while_bad 2 &
staller=$!
# at most 8 runs of a commit or an end: the stalled end reproduces from 3
# or 4, and the confirmation and pass 2, which can only fail, went to the
# default cap of 12 (16 boots more, CI time)
k bisect start --repo "$T/linux" --good two-good --bad harmless-bad --job "$T/malloc1.yaml" --max-runs 8 \
	> "$T/host.out" 2>&1
rc=$?
kill $staller 2>/dev/null
wait $staller 2>/dev/null
check "host fault: the bad end's guests ran stalled ($(wc -l < "$T/stalled") of its boots)" \
	test "$(wc -l < "$T/stalled")" -ge 3
check "host fault: the stalled bad end looked like a regression" grep -q "regression reproduced" "$T/host.out"
check "host fault: exit 4 (unconfirmed)" test "$rc" -eq 4 || tail -30 "$T/host.out"
check "host fault: stored unconfirmed, no culprit named" \
	test "$(q "SELECT result FROM bisections WHERE id = 2")" = unconfirmed
check "host fault: the confirmation's fresh runs did not show the step" grep -q "culprit [0-9a-f]* NOT confirmed" "$T/host.out"
check "host fault: pass 2 measured the ends afresh" grep -q "pass 2: the range once more" "$T/host.out"
check "host fault: no culprit was confirmed" sh -c "! grep -Eq 'culprit [0-9a-f]{12} confirmed: parent' '$T/host.out'"
k bisect show 2 > "$T/host-show.out" 2>&1
check "host fault: bisect show says unconfirmed" grep -q "unconfirmed" "$T/host-show.out"
harmless=$(git -C "$T/linux" rev-parse harmless)
check "host fault: pass 1's suspect is kept as the suspect, the harmless commit" \
	test "$(q "SELECT culprit FROM bisections WHERE id = 2")" = "$harmless"
grep -E "regression reproduced|NOT confirmed|pass 2|unconfirmed|not reproduced" "$T/host.out" | sed 's/^/# /'
check "integrity_check ok" test "$(q "PRAGMA integrity_check")" = ok
finish
