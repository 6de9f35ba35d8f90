#!/bin/sh
# The README's demo command end to end in a private lab: klab must name
# the planted commit (run-demo.sh exits 0 only then), skipping the commit
# that does not build.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

if ! command -v cc >/dev/null 2>&1; then
	fail "the demo needs a C compiler (build-essential)"
	finish
fi
out=$(KLAB_STATE="$T/lab" sh "$KLAB_SRCDIR/tests/demo/run-demo.sh" 2>&1); rc=$?
check "demo exits 0" test "$rc" -eq 0
case $out in *"demo: OK: klab named the planted commit"*) ok "demo names the planted commit";; *) fail "demo output: $out";; esac
case $out in *"is skip (exit 125"*) ok "demo skips the commit that does not build";; *) fail "no skip in demo";; esac
# run twice: idempotent, regenerates the same history
out=$(KLAB_STATE="$T/lab" sh "$KLAB_SRCDIR/tests/demo/run-demo.sh" 2>&1); rc=$?
check "demo runs again" test "$rc" -eq 0
check "two bisections recorded" test "$(sqlite3 "$T/lab/klab.db" 'select count(*) from bisections')" = 2
finish
