#!/bin/sh
# The house rules of orchestrator/ as checks: the rooms and their include
# rule (rooms.py), no function over 120 lines but the one allowed
# (long-functions.py).  Each check is also shown a breach, so that a check
# that stopped seeing anything would fail here.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
py=${PYTHON3:-python3}
style=$KLAB_SRCDIR/tests/style

out=$("$py" "$style/rooms.py" "$KLAB_SRCDIR" 2>&1)
check "the rooms' include rule holds, no cycle" test -z "$out"
[ -z "$out" ] || printf '%s\n' "$out"
out=$("$py" "$style/long-functions.py" "$KLAB_SRCDIR" 2>&1)
check "no function over 120 lines but bisect_choose" test -z "$out"
[ -z "$out" ] || printf '%s\n' "$out"

out=$("$py" "$style/sim-engine.py" "$KLAB_SRCDIR" 2>&1)
check "the verdict simulation runs the engine, no copy of its loops in tests/sim" test -z "$out"
[ -z "$out" ] || printf '%s\n' "$out"

# Docs that read in minutes: README at most 150 lines and 1,500 words, no
# line of README or docs/*.md over 400 characters, architecture.md a map
# of at most 400 lines.
readme=$KLAB_SRCDIR/README.md
check "README.md at most 150 lines ($(wc -l < "$readme"))" test "$(wc -l < "$readme")" -le 150
check "README.md at most 1,500 words ($(wc -w < "$readme"))" test "$(wc -w < "$readme")" -le 1500
long=$(awk 'length > 400 { print FILENAME ":" FNR ": " length " characters" }' "$readme" "$KLAB_SRCDIR"/docs/*.md)
check "no line of README.md or docs/*.md over 400 characters" test -z "$long"
[ -z "$long" ] || printf '%s\n' "$long"
check "docs/architecture.md at most 400 lines" test "$(wc -l < "$KLAB_SRCDIR/docs/architecture.md")" -le 400

# A tree with a core file that includes an engine header and two engine
# modules that include each other.
mkdir -p "$T/bad/orchestrator/core" "$T/bad/orchestrator/engine"
printf '#include "engine/a.h"\n' > "$T/bad/orchestrator/core/pure.c"
printf '#include "engine/b.h"\n' > "$T/bad/orchestrator/engine/a.h"
printf '#include "engine/a.h"\n' > "$T/bad/orchestrator/engine/b.h"
out=$("$py" "$style/rooms.py" "$T/bad" 2>&1)
case $out in *"core/pure.c includes engine/a.h"*) ok "rooms.py sees a lower room including a higher one";;
	*) fail "rooms.py on a climbing include: $out";; esac
case $out in *"cycle: engine/a -> engine/b"*) ok "rooms.py sees a cycle";;
	*) fail "rooms.py on a cycle: $out";; esac

# A function of 121 lines, one of 120, and bisect_choose of 200.
body() { i=0; while [ $i -lt "$1" ]; do echo "	x++;"; i=$((i + 1)); done; }
{
	printf 'int long_one(void)\n{\n'; body 119; printf '}\n\n'
	printf 'static int\nshort_enough(int a,\n\t     int b)\n{\n'; body 118; printf '}\n\n'
	printf 'int bisect_choose(void)\n{\n'; body 198; printf '}\n'
} > "$T/bad/orchestrator/core/long.c"
out=$("$py" "$style/long-functions.py" "$T/bad" 2>&1)
case $out in *"long.c:2: long_one: 121 lines"*) ok "long-functions.py sees a function of 121 lines";;
	*) fail "long-functions.py on 121 lines: $out";; esac
case $out in *short_enough*|*bisect_choose*) fail "long-functions.py: $out";;
	*) ok "120 lines, and bisect_choose, pass";; esac

# A copy of the engine's loops come back: a simulation that calls the
# timed verdict rules itself, in a program not built from engine-sim.c.
mkdir -p "$T/bad/tests/sim"
printf 'static int perf_step(int x)\n{\n\treturn verdict_classify_timed(x);\n}\n' > "$T/bad/tests/sim/bisect-sim.c"
printf 'int main(void) { return bisect_run(&br); }\n' > "$T/bad/tests/sim/engine-sim.c"
printf 'tests_sim_verdict_sim_SOURCES = tests/sim/verdict-sim.c tests/sim/bisect-sim.c\n' > "$T/bad/Makefile.am"
out=$("$py" "$style/sim-engine.py" "$T/bad" 2>&1)
case $out in *"bisect-sim.c: calls verdict_classify_timed"*) ok "sim-engine.py sees a verdict rule called in tests/sim";;
	*) fail "sim-engine.py on a verdict rule: $out";; esac
case $out in *"bisect-sim.c: defines perf_step"*) ok "sim-engine.py sees a copy of an engine loop";;
	*) fail "sim-engine.py on a copied loop: $out";; esac
case $out in *"does not run bisect_run with perf_tester"*"not built from tests/sim/engine-sim.c"*)
	ok "sim-engine.py sees the table's program no longer driving the engine";;
	*) fail "sim-engine.py on a program off the engine: $out";; esac

finish
