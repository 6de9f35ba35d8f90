#!/bin/sh
# Several hypervisors: 'klab host add/list/remove' with the checks an add
# makes, and placement on the real libvirtd reached two ways: qemu:///system
# (local) and qemu+tcp://127.0.0.1:PORT/system through a test-only socat
# listener on loopback (remote: kernel and initramfs travel as volumes of
# pool 'klab').  A remote run stores its boot under its host; two runs at
# once go to different hosts and CPUs; removing a host keeps its boots.
# No libvirt = a failure, not a skip.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_loopback_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
# pinning and placement checks need the CPUs to themselves
guest_cpus_lock exclusive

# The test's own listener (RURI), on loopback
PORT=$((20000 + $$ % 20000))
loopback_listener $PORT

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null

# ---- add: every bad input is one line, exit != 0, nothing stored -----------
# bad_add DESCRIPTION ARGS...
bad_add() {
	desc=$1; shift
	k host add "$@" > "$T/bad.out" 2> "$T/bad.err"
	rc=$?
	if [ $rc -ne 0 ] && [ "$(wc -l < "$T/bad.err")" -eq 1 ] && [ ! -s "$T/bad.out" ] &&
	   [ "$(q 'SELECT count(*) FROM hosts')" -eq 0 ]; then
		ok "host add refuses $desc: $(cat "$T/bad.err")"
	else
		fail "host add $desc: exit $rc, stdout/stderr:"; cat "$T/bad.out" "$T/bad.err"
	fi
}
bad_add "a bad name" 'no/slash' "$URI"
bad_add "an empty name" '' "$URI"
bad_add "an unreachable URI" unreach "qemu+tcp://127.0.0.1:1/system"
bad_add "CPUs that do not exist" local "$URI" --cpus 0-4095
bad_add "a malformed CPU list" local "$URI" --cpus 1-x
bad_add "--max-guests 0" local "$URI" --max-guests 0
bad_add "an unknown accelerator" local "$URI" --accel xen
bad_add "a missing URI" local

# ---- add two, list -----------------------------------------------------------
check "host add local (CPU 0, 1 guest)" k host add local "$URI" --cpus 0 --max-guests 1
check "host add remote (loopback tcp, CPU 1, 1 guest)" k host add remote "$RURI" --cpus 1 --max-guests 1
check "a second host of the same name is refused" sh -c "! \"$KLAB\" --state '$lab' host add local '$URI' 2>/dev/null"
k host list > "$T/list.out" 2>&1
check "list shows local: URI, CPUs, max guests, accel, answers, guests" \
	grep -Eq "^local +qemu:///system +0 +1 +auto +yes +0\$" "$T/list.out"
check "list shows remote" grep -Eq "^remote +qemu\+tcp://127.0.0.1:$PORT/system +1 +1 +auto +yes +0\$" "$T/list.out"

sed -e 's/^runtime:.*/runtime: 3s/' -e 's/^repeat:.*/repeat: 1/' \
	-e 's/^guest:.*/guest: { vcpus: 1, numa_nodes: 1, memory: 512M }/' \
	"$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml" > "$T/job.yaml"

# ---- no hosts registered: libvirt_uri, as before hosts existed ---------------
"$KLAB" --state "$T/lab0" init >/dev/null
if "$KLAB" --state "$T/lab0" run --job "$T/job.yaml" --kernel "$KBZIMAGE" > "$T/nohost.out" 2>&1; then
	ok "a lab without hosts runs at libvirt_uri"
else
	fail "a lab without hosts: klab run failed"; cat "$T/nohost.out"
fi
check "its boot has no host and an ok outcome" \
	test "$(sqlite3 "$T/lab0/klab.db" "SELECT outcome || ':' || coalesce(host_id, 'none') FROM boots")" = "ok:none"
check "and no upload, no host line" sh -c "! grep -q '^uploaded\|^host ' '$T/nohost.out'"

# ---- a host that stops answering: list says so, a run fails at once ----------
PORT2=$((PORT + 1))
socat TCP-LISTEN:$PORT2,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:$SOCK 2>>"$T/socat.err" &
SOCAT2=$!
trap 'kill $SOCAT $SOCAT2 2>/dev/null' EXIT INT TERM
i=0
until virsh -q -c "qemu+tcp://127.0.0.1:$PORT2/system" version >/dev/null 2>&1 || [ $i -gt 50 ]; do
	i=$((i + 1)); sleep 0.1
done
check "host add gone (a second listener)" k host add gone "qemu+tcp://127.0.0.1:$PORT2/system" --cpus 1
kill $SOCAT2; wait $SOCAT2 2>/dev/null
k host list > "$T/list-gone.out" 2>/dev/null
check "list says gone does not answer" grep -Eq "^gone .* no +\?\$" "$T/list-gone.out"
timeout 60 "$KLAB" --state "$lab" run --job "$T/job.yaml" --kernel "$KBZIMAGE" --host gone > "$T/gone.out" 2>&1
rc=$?
check "a run on it fails at once (exit $rc), saying so" \
	sh -c "[ $rc -eq 1 ] && grep -q 'no host answers: gone (does not answer)' '$T/gone.out'"
check "host remove gone" k host remove gone

# ---- a run on the remote host: uploaded, booted, stored under it -------------
# volumes of an earlier test run would hide the upload
for v in $(virsh -q -c "$URI" vol-list klab 2>/dev/null | awk '{print $1}'); do
	virsh -q -c "$URI" vol-delete --pool klab "$v" >/dev/null 2>&1
done
if k run --job "$T/job.yaml" --kernel "$KBZIMAGE" --host remote > "$T/remote.out" 2>&1; then
	ok "klab run --host remote: one boot ran and produced its KPI"
else
	fail "klab run --host remote failed"; cat "$T/remote.out"
fi
check "the kernel was uploaded to pool klab" grep -q "^uploaded bzImage-.* to pool klab on $RURI" "$T/remote.out"
check "the initramfs was uploaded to pool klab" grep -q "^uploaded initrd-.* to pool klab on $RURI" "$T/remote.out"
virsh -q -c "$URI" vol-list klab > "$T/vols.out" 2>&1
check "virsh vol-list klab shows both volumes" sh -c "grep -q '^ *bzImage-' '$T/vols.out' && grep -q '^ *initrd-' '$T/vols.out'"
remote_id=$(q "SELECT id FROM hosts WHERE name = 'remote'")
local_id=$(q "SELECT id FROM hosts WHERE name = 'local'")
check "the boot is ok and stored with host_id of remote" \
	test "$(q "SELECT outcome || ':' || host_id FROM boots WHERE run_set_id = 1")" = "ok:$remote_id"
check "its KPI is stored" test "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id
	JOIN boots b ON b.id = r.boot_id WHERE b.run_set_id = 1 AND s.metric = 'stress-ng.mmapaddr.ops_per_sec'")" -ge 1
check "the run set names the remote URI" test "$(q "SELECT uri FROM run_sets WHERE id = 1")" = "$RURI"
check "pinned to the remote host's CPU 1" test "$(q "SELECT pinning FROM boots WHERE run_set_id = 1")" = "0:1"
# a second run finds the volumes and sends nothing
k run --job "$T/job.yaml" --kernel "$KBZIMAGE" --host remote > "$T/remote2.out" 2>&1
check "a second run reuses the volumes (no upload)" sh -c "! grep -q '^uploaded' '$T/remote2.out'"

# Two runs of the job, the second started DELAY seconds after the first,
# with the options that follow; their output in $T/NAME1.out and
# $T/NAME2.out.  Both must exit 0.
two_runs() {
	name=$1 desc=$2 delay=$3
	shift 3
	k run --job "$T/job.yaml" --kernel "$KBZIMAGE" "$@" > "$T/${name}1.out" 2>&1 &
	p1=$!
	sleep "$delay"
	k run --job "$T/job.yaml" --kernel "$KBZIMAGE" "$@" > "$T/${name}2.out" 2>&1 &
	p2=$!
	wait $p1; r1=$?
	wait $p2; r2=$?
	if [ $r1 -eq 0 ] && [ $r2 -eq 0 ]; then
		ok "$desc both ran"
	else
		fail "$desc: exits $r1 $r2"; cat "$T/${name}1.out" "$T/${name}2.out"
	fi
}

# ---- two runs at once without --host: different hosts, different CPUs --------
two_runs c "two concurrent runs" 0
hosts=$(q "SELECT group_concat(host_id) FROM (SELECT host_id FROM boots WHERE run_set_id IN (3, 4) ORDER BY host_id)")
check "they went to different hosts ($hosts)" test "$hosts" = "$local_id,$remote_id"
pins=$(q "SELECT group_concat(pinning) FROM (SELECT pinning FROM boots WHERE run_set_id IN (3, 4) ORDER BY host_id)")
check "on different CPUs ($pins)" test "$pins" = "0:0,0:1"
check "each run set names its host's URI" test "$(q "SELECT count(*) FROM run_sets rs JOIN boots b ON b.run_set_id = rs.id
	JOIN hosts h ON h.id = b.host_id WHERE rs.id IN (3, 4) AND rs.uri = h.uri")" -eq 2
check "every boot has a host" test "$(q "SELECT count(*) FROM boots WHERE host_id IS NULL")" -eq 0

# ---- one host, two runs: the second waits, never shares the CPU -------------
two_runs w "two runs on one full host" 1 --host local
check "the second said it waits, and for what" \
	grep -q "^waiting for a host (every 3 s): local (" "$T/w2.out"
check "its boot started after the first ended" test "$(q "SELECT (SELECT started_at FROM boots WHERE run_set_id = 6)
	>= (SELECT finished_at FROM boots WHERE run_set_id = 5)")" -eq 1
# a guest no host can ever take is an error, not an endless wait
sed -e 's/^guest:.*/guest: { vcpus: 2, numa_nodes: 1, memory: 512M }/' "$T/job.yaml" > "$T/job2.yaml"
timeout 60 "$KLAB" --state "$lab" run --job "$T/job2.yaml" --kernel "$KBZIMAGE" > "$T/never.out" 2>&1
rc=$?
check "a 2-vCPU guest on 1-CPU hosts fails at once (exit $rc)" test $rc -eq 1
check "and says no host can take it" grep -q "no host can take a guest of 2 vCPUs: local (never: 1 CPU for 2 vCPUs)" "$T/never.out"

# ---- remove keeps history ----------------------------------------------------
n=$(q "SELECT count(*) FROM boots WHERE host_id = $remote_id")
check "host remove remote" k host remove remote
check "remove of an unknown host fails" sh -c "! \"$KLAB\" --state '$lab' host remove nosuch 2>/dev/null"
k host list > "$T/list2.out" 2>&1
check "list no longer shows remote" sh -c "! grep -q '^remote' '$T/list2.out'"
check "its $n boots still point at it" test "$(q "SELECT count(*) FROM boots WHERE host_id = $remote_id")" -eq "$n"
check "the host row is kept, marked removed" test -n "$(q "SELECT removed_at FROM hosts WHERE id = $remote_id")"
check "--host of a removed host is refused" sh -c "! \"$KLAB\" --state '$lab' run --job '$T/job.yaml' --kernel '$KBZIMAGE' --host remote 2>/dev/null"
check "PRAGMA integrity_check ok" test "$(q 'PRAGMA integrity_check')" = ok
# (this lab's domains only: other klab processes may run guests meanwhile)
virsh -q -c "$URI" list --name > "$T/running.out"
left=0
for d in $(q "SELECT domain_name FROM boots"); do
	if grep -qxF "$d" "$T/running.out"; then left=$((left + 1)); fi
done
check "none of this test's domains is left ($left)" test $left -eq 0

boots_summary
finish
