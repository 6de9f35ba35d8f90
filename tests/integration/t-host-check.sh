#!/bin/sh
# klab host check: this machine's facts, each with its consequence, read
# from the real /proc, /sys and libvirtd.  On a CPU without vmx/svm (these
# machines: the host is itself a guest) it must say plainly that KVM is
# not usable and why; --json must be one valid JSON document.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools python3 virsh socat

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

# ---- a libvirtd that accepts and never answers -------------------------------
# A SIGSTOPped or hung libvirtd: the kernel still accepts connections on
# its socket (the backlog), nothing replies.  Two real ones in front of the
# real libvirtd: a socket nobody accepts on (for add), and a socat relay
# that is stopped once the host is added (for list).  timeout
# 120 only ends the old hang; the bound is klab's 15 s.
SOCK=/var/run/libvirt/libvirt-sock
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); time.sleep(300)' "$T/hung.sock" &
HUNG=$!
socat UNIX-LISTEN:"$T/relay.sock",fork UNIX-CONNECT:"$SOCK" 2>/dev/null &
RELAY=$!
trap 'kill -CONT $RELAY 2>/dev/null; kill $HUNG $RELAY 2>/dev/null' EXIT INT TERM
i=0
while { [ ! -S "$T/hung.sock" ] || [ ! -S "$T/relay.sock" ]; } && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
timeout 120 "$KLAB" --state "$lab" host add hung "qemu+unix:///system?socket=$T/hung.sock" > "$T/out" 2> "$T/err"
rc=$?
check "host add, libvirtd never answers: refused, not hung (exit $rc)" [ $rc -eq 1 ]
check "... one line: it does not answer" \
	sh -c '[ "$(wc -l < "$1")" -eq 1 ] && grep -q "accepts connections but does not answer within 15 s" "$1"' - "$T/err"
check "... nothing stored" [ "$(q "SELECT count(*) FROM hosts WHERE name = 'hung'")" -eq 0 ]
check "host add through the relay" k host add relay "qemu+unix:///system?socket=$T/relay.sock"
kill -STOP $RELAY
timeout 120 "$KLAB" --state "$lab" host list > "$T/out" 2> "$T/err"
rc=$?
check "host list, a host stopped: it ends (exit $rc)" [ $rc -eq 0 ]
check "... that host does not answer, the other does" \
	sh -c 'grep -Eq "^relay .* no +\?$" "$1" && grep -Eq "^here .* yes " "$1"' - "$T/out"
kill -CONT $RELAY
finish
