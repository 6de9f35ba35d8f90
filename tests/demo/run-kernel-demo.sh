#!/bin/sh
# The README's demo command: from nothing to the culprit of a real kernel
# performance regression.  Imports Debian's 6.1 tree (once), writes the
# demo history (comment-only commits with "mm: align larger anonymous
# mappings on THP boundaries" re-applied in the middle; once), bisects it
# with will-it-scale malloc1 in guests, and exits 0 only if klab names the
# planted commit.  A second run reuses the tree, the history and every
# built kernel: only the guests run again.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
KLAB=${KLAB:-$top/orchestrator/klab}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
start=$(date +%s)

state=$("$KLAB" init | sed -n 's/^.* lab in \(.*\) (database.*$/\1/p')
echo "demo: lab $state"
"$KLAB" --state "$state" tree import
tree="$state/trees/linux-6.1"
demo="$state/demo/linux-demo"
if ! git -C "$demo" rev-parse -q --verify demo-planted >/dev/null 2>&1; then
	rm -rf "$demo"
	mkdir -p "$state/demo"
	echo "demo: writing the demo history in $demo"
	sh "$here/make-kernel-history.sh" "$tree" "$demo" 24 >/dev/null
fi
planted=$(git -C "$demo" rev-parse demo-planted)
echo "demo: $(git -C "$demo" rev-list --count demo-good..demo-bad) commits between demo-good and demo-bad"
# The shipped job with a shorter measurement: the regression is -95%.
job="$state/demo/will-it-scale-malloc1.yaml"
sed -e 's/^runtime:.*/runtime: 5s/' "$top/jobs/will-it-scale-malloc1.yaml" > "$job"
echo "demo: klab bisect start --repo $demo --good demo-good --bad demo-bad --job $job"
echo
set +e
"$KLAB" --state "$state" bisect start --repo "$demo" --good demo-good --bad demo-bad --job "$job"
rc=$?
set -e
id=$("$KLAB" --state "$state" bisect list | tail -n1 | cut -f1)
culprit=$(sqlite3 "$state/klab.db" "select coalesce(culprit, '') from bisections where id = $id")
echo
echo "demo: bisection $id in $(( $(date +%s) - start )) s; details: klab bisect show $id"
if [ "$rc" -eq 0 ] && [ "$culprit" = "$planted" ]; then
	echo "demo: OK, klab found the planted commit $planted"
	exit 0
fi
echo "demo: FAILED: exit $rc, culprit '${culprit:-none}', planted $planted" >&2
exit 1
