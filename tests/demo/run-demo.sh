#!/bin/sh
# The README's 2-second demo (the kernel demo is run-kernel-demo.sh): generate a
# project history with a planted bug and a commit that does not build,
# let klab bisect it with a compile-and-test command, and exit 0 only if
# klab names the planted commit.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
KLAB=${KLAB:-$top/orchestrator/klab}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

state=$("$KLAB" init | sed -n 's/^.* lab in \(.*\) (database.*$/\1/p')
demo="$state/demo"
rm -rf "$demo/ringbuf"
mkdir -p "$demo"
cp "$here/check.sh" "$demo/check.sh"
planted=$(python3 "$here/make-history.py" "$demo/ringbuf")
planted_hash=$(git -C "$demo/ringbuf" log --format=%H -F --grep="$planted")
echo "demo: $(git -C "$demo/ringbuf" rev-list --count v1.0..main) commits after v1.0 in $demo/ringbuf"
echo "demo: good v1.0, bad main; test: $demo/check.sh (compile, run; 125 if it does not build)"
echo
set +e
"$KLAB" bisect start --repo "$demo/ringbuf" --good v1.0 --bad main -- "$demo/check.sh"
rc=$?
set -e
id=$("$KLAB" bisect list | tail -n1 | cut -f1)
culprit=$(sqlite3 "$state/klab.db" "select coalesce(culprit, '') from bisections where id = $id")
echo
echo "demo: what klab did: bisection $id, stored in $state/klab.db"
echo "demo: details: klab bisect show $id; replayable log: klab bisect log $id"
if [ "$rc" -eq 0 ] && [ "$culprit" = "$planted_hash" ]; then
	echo "demo: OK: klab named the planted commit $planted_hash ($planted)"
	echo "demo: the kernel performance demo is tests/demo/run-kernel-demo.sh (./bootstrap demo)"
	exit 0
fi
echo "demo: FAILED: expected $planted_hash, klab said '${culprit:-nothing}' (exit $rc)" >&2
exit 1
