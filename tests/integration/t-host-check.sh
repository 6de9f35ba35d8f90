#!/bin/sh
# klab host check: this machine's facts, each with its consequence, read
# from the real /proc, /sys and libvirtd.  On a CPU without vmx/svm (these
# machines: the host is itself a guest) it must say plainly that KVM is
# not usable and why; --json must be one valid JSON document.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools python3 virsh

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null

"$KLAB" --state "$lab" host check > "$T/out" 2> "$T/err"
rc=$?
check "host check exits 0" [ $rc -eq 0 ]
check "host check writes nothing to stderr" [ ! -s "$T/err" ]
for fact in kvm cpu kernel pmu numa hugepages governor turbo smt isolcpus thp memory; do
	check "host check says '$fact'" grep -Eq "^.. $fact +[^ ]" "$T/out"
done
if grep -Eqw 'vmx|svm' /proc/cpuinfo; then
	check "a CPU with vmx/svm: KVM usable" grep -Eq '^ +kvm +usable' "$T/out"
else
	check "no vmx/svm: KVM is not usable, and why" \
		grep -Eq '^!! kvm +not usable: the CPU has no vmx or svm flag.*guests run under TCG' "$T/out"
	if [ -e /dev/kvm ]; then
		check "... though /dev/kvm opens" grep -q '/dev/kvm opens, but' "$T/out"
	fi
fi
if [ -d /sys/bus/event_source/devices/cpu ]; then :; else
	check "no 'cpu' PMU: only cpu-clock" grep -Eq '^!  pmu +only cpu-clock' "$T/out"
fi
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
check "NUMA: $nodes node(s) as /sys has them" grep -Eq "numa +$nodes nodes?:" "$T/out"

"$KLAB" --state "$lab" host check --json > "$T/json" 2> "$T/err"
check "--json exits 0" [ $? -eq 0 ]
check "--json parses (python3 -m json.tool)" sh -c 'python3 -m json.tool "$1" >/dev/null' - "$T/json"
check "--json: the kvm fact with its level" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
kvm = [f for f in d["facts"] if f["name"] == "kvm"][0]
sys.exit(0 if kvm["level"] in ("ok", "bad") and kvm["consequence"] else 1)' "$T/json"

# a registered host by name; an unknown one is one error line
"$KLAB" --state "$lab" host add here qemu:///system >/dev/null
check "host check NAME (a local host)" sh -c '"$KLAB" --state "$1" host check here | grep -q "^host here (qemu:///system)"' - "$lab"
"$KLAB" --state "$lab" host check nosuch > "$T/out" 2> "$T/err"
rc=$?
check "an unknown host: exit 1" [ $rc -eq 1 ]
check "... one line naming it" sh -c '[ "$(wc -l < "$1")" -eq 1 ] && grep -q "^klab: error: no host named .nosuch." "$1"' - "$T/err"
"$KLAB" --state "$lab" host check a b > /dev/null 2> "$T/err"
check "two names: a usage error (exit 2)" [ $? -eq 2 ]
finish
