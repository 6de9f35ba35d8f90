#!/bin/sh
# Benchmark (issue 19): a 200-commit history where most commits touch
# files the guest's kernel is not made of.  tests/demo/make-kernel-history.sh
# with DEMO_OUTSIDE: 7 commits that change what a tinyconfig guest builds
# (6 comment-only changes in mm/, fs/, kernel/ and the planted THP
# alignment commit) among 193 that touch only a seeded pick of drivers/
# and Documentation/ files.  klab bisects it with will-it-scale malloc1 in
# guests (revert check and profile runs off: they cost the same with or
# without the rules measured here) and this prints, per step, whether the
# commit was built and booted, or took a decided commit's mark with no
# build (`treesame-build`: its changes touch no file that commit's kernel
# read) or no boot (`identical-kernel`: its image is byte for byte one
# already measured); then the builds and boots saved against the same
# steps each built and booted.  Checks that the culprit is the planted
# commit, confirmed (exit 1 if not: a bench's outcome, not a test's; not
# in `make check` for CI time: about 20 minutes, a 4-minute history).
#   KLAB_BENCH_COMMITS  commits outside the build (default 193)
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
. "$KLAB_SRCDIR/tests/demo-kernels.sh"
. "$KLAB_SRCDIR/tests/bench/bench-lab.sh"
M=${KLAB_BENCH_COMMITS:-193}
# the history is made here, into $B/linux
bench_lab treesame

t0=$(date +%s)
planted=$(DEMO_OUTSIDE=$M sh "$KLAB_SRCDIR/tests/demo/make-kernel-history.sh" "$KTREE" "$B/linux" 7)
echo "bench: $(git -C "$B/linux" rev-list --count demo-good..demo-bad) commits ($M outside the build)," \
	"planted $(git -C "$B/linux" rev-parse --short=12 "$planted"), history in $(($(date +%s) - t0)) s"
sed -e 's/^runtime:.*/runtime: 3s/' "$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$B/job.yaml"
echo 'profile_runs: 0' >> "$B/job.yaml"

t0=$(date +%s)
rc=0
"$KLAB" --state "$lab" bisect start --repo "$B/linux" --good demo-good --bad demo-bad --job "$B/job.yaml" \
	--no-revert-check > "$B/bisect.out" 2>&1 || rc=$?
wall=$(($(date +%s) - t0))
grep -E "regression reproduced|not reproduced|^step [0-9]+:|touches only files|changes only comments|confirmed: parent|^bisection" \
	"$B/bisect.out" | cut -c1-200 || true
echo "bench: exit $rc after $wall s"

# per bisect step: how its mark was reached
echo "bench: the steps (phase bisect): commit, mark, how (build = a build of its own, boots = guests booted)"
q "SELECT substr(s.hash, 1, 12), coalesce(s.verdict, '-'),
	coalesce((SELECT group_concat(v.rule) FROM verdicts v WHERE v.step_id = s.id
		  AND v.rule IN ('treesame-build', 'identical-kernel')), 'measured'),
	(SELECT count(*) FROM boots b WHERE b.step_id = s.id)
   FROM steps s WHERE s.bisection_id = 1 AND s.phase = 'bisect' ORDER BY s.id" |
	while IFS='|' read -r h v how boots; do
		printf '  %s  %-4s  %-16s  %s boots\n' "$h" "$v" "$how" "$boots"
	done
steps=$(q "SELECT count(*) FROM steps WHERE bisection_id = 1 AND phase = 'bisect'")
treesame=$(q "SELECT count(DISTINCT s.id) FROM steps s JOIN verdicts v ON v.step_id = s.id
	      WHERE s.bisection_id = 1 AND s.phase = 'bisect' AND v.rule = 'treesame-build'")
identical=$(q "SELECT count(DISTINCT s.id) FROM steps s JOIN verdicts v ON v.step_id = s.id
	       WHERE s.bisection_id = 1 AND s.phase = 'bisect' AND v.rule = 'identical-kernel'")
measured=$((steps - treesame - identical))
# (a kernel taken from the shared store is a row with no duration)
builds=$(q "SELECT count(*) FROM builds WHERE status = 'ok' AND duration_ms > 0")
build_s=$(q "SELECT coalesce(sum(duration_ms), 0) / 1000 FROM builds WHERE status = 'ok'")
stored=$(q "SELECT count(*) FROM builds WHERE status = 'ok' AND coalesce(duration_ms, 0) = 0")
boots=$(q "SELECT count(*) FROM boots")
step_boots=$(q "SELECT count(*) FROM boots b JOIN steps s ON s.id = b.step_id
		WHERE s.bisection_id = 1 AND s.phase = 'bisect'")
# the same steps without the two rules: every step built, and booted as
# often as the measured steps were on average (at least 3: no commit is
# decided from fewer)
per=3
[ "$measured" -eq 0 ] || per=$(((step_boots + measured - 1) / measured))
[ "$per" -ge 3 ] || per=3
echo "bench: $steps steps over $(git -C "$B/linux" rev-list --count demo-good..demo-bad) commits:" \
	"$treesame took a decided commit's mark unbuilt (treesame-build), $identical built but not booted" \
	"(identical-kernel), $measured built and booted"
echo "bench: builds $builds compiled here ($build_s s) + $stored from the artifact store; boots $boots in all" \
	"($step_boots for the steps); wall $wall s"
echo "bench: saved against the same steps built and booted: $treesame builds," \
	"about $(((treesame + identical) * per)) boots ($per a measured step here)"
culprit=$(q "SELECT result || ':' || coalesce(culprit, '') FROM bisections WHERE id = 1")
if [ "$culprit" = "culprit:$planted" ]; then
	echo "bench: the planted commit, confirmed"
else
	echo "bench: not the planted commit, confirmed: $culprit"
	tail -20 "$B/bisect.out"
	exit 1
fi
