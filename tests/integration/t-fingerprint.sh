#!/bin/sh
# Host fingerprints in real guests: two 'klab run's of one kernel (TCG
# here, KVM where the host has it) store the host's fingerprint on every
# run set, boot and run, once in table fingerprints, its hash the git blob
# id of its text, the text this machine's CPU, kernel, accelerator, guest
# shape, QEMU and libvirt; 'klab compare' of the two marks nothing.  A
# side from another host is then marked with what differs: this machine
# cannot change its own kernel between two runs, so a FAKE fingerprint
# (the real one with another kernel line) is written for the second run
# set, named as such.  Fails (never skips) when libvirt does not answer.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
require_tools python3 sqlite3 git
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
guest_cpus_lock shared

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
sed -e 's/^runtime:.*/runtime: 2s/' -e 's/^repeat:.*/repeat: 1/' \
	"$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml" > "$T/job.yaml"

for i in 1 2; do
	if k run --job "$T/job.yaml" --kernel "$KBZIMAGE" --quiet > "$T/run$i.out" 2>&1; then
		ok "run $i: one boot ran"
	else
		fail "run $i failed"; cat "$T/run$i.out"
	fi
done
check "every run set, boot and run names a fingerprint" test \
	"$(q "SELECT (SELECT count(*) FROM run_sets WHERE fingerprint IS NULL) + (SELECT count(*) FROM boots WHERE fingerprint IS NULL) + (SELECT count(*) FROM runs WHERE fingerprint IS NULL)"):$(q 'SELECT count(*) FROM runs')" = 0:2
check "one host, one fingerprint row" test "$(q 'SELECT count(*) FROM fingerprints')" -eq 1
check "the rows name the stored fingerprint" test \
	"$(q 'SELECT count(DISTINCT b.fingerprint) FROM boots b JOIN fingerprints f ON f.hash = b.fingerprint')" -eq 1
python3 - "$lab/klab.db" > "$T/fp.check" 2>&1 <<'PY'
import os, re, sqlite3, subprocess, sys
h, text = sqlite3.connect(sys.argv[1]).execute("SELECT hash, text FROM fingerprints").fetchone()
blob = subprocess.run(["git", "hash-object", "--stdin"], input=text.encode(), capture_output=True).stdout.decode().strip()
kv = dict(l.split("=", 1) for l in text.splitlines())
model = re.search(r"^model name\s*:\s*(.*)$", open("/proc/cpuinfo").read(), re.M)
want = {
    "hash is the text's git blob id": h == blob,
    "cpu is /proc/cpuinfo's model name": model is None or kv.get("cpu") == model.group(1).strip(),
    "kernel is uname -r": kv.get("kernel") == os.uname().release,
    "accel is kvm or tcg": kv.get("accel") in ("kvm", "tcg"),
    "guest shape": re.match(r"\d+ vCPUs, \d+ nodes, \d+ MiB$", kv.get("guest", "")) is not None,
    "qemu and libvirt versions": all(re.match(r"\d+\.\d+\.\d+$", kv.get(k, "")) for k in ("qemu", "libvirt")),
    "microcode, governor, smt keys": all(k in kv for k in ("microcode", "governor", "smt")),
}
for k, v in want.items():
    print(("ok " if v else "BAD ") + k)
print(text)
PY
check "the fingerprint's text and hash (python check)" sh -c '! grep -q "^BAD" "$1"' - "$T/fp.check" ||
	cat "$T/fp.check"

k compare --runset 1 --runset 2 > "$T/same.out" 2>&1
check "compare of two runs on this host: exit 0" test $? -eq 0
check "... no side marked as from another host" sh -c '! grep -q "another host" "$1"' - "$T/same.out"
k compare --runset 1 --runset 2 --json > "$T/same.json" 2>/dev/null
check "... JSON: the same fingerprint on both sides, nothing differs" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sets"]
sys.exit(0 if s[0]["fingerprint"] == s[1]["fingerprint"] and s[0]["fingerprint"] and s[1]["fingerprint_differs"] is None else 1)' "$T/same.json"

# FAKE: another host kernel for run set 2 (one machine cannot change its
# kernel between two runs)
q "INSERT INTO fingerprints (hash, text, created_at) SELECT 'fake0000000000000000000000000000000000ff', replace(text, 'kernel=', 'kernel=other-'), 0 FROM fingerprints LIMIT 1"
q "UPDATE run_sets SET fingerprint = 'fake0000000000000000000000000000000000ff' WHERE id = 2"
k compare --runset 1 --runset 2 > "$T/diff.out" 2>&1
check "compare of a side from another host: exit 0 (the accelerator is what refuses)" test $? -eq 0
check "... B marked: another host, the kernel differs" \
	grep -q "^  B  run set 2: .*; ! another host: its fingerprint differs from A's (kernel)$" "$T/diff.out" ||
	cat "$T/diff.out"
k compare --runset 1 --runset 2 --json > "$T/diff.json" 2>/dev/null
check "... JSON: fingerprint_differs \"kernel\"" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["sets"]
sys.exit(0 if s[1]["fingerprint_differs"] == "kernel" else 1)' "$T/diff.json"
boots_summary
finish
