#!/bin/sh
# A job bisection on a host over ssh (the test's own sshd in front of the
# real libvirtd, tests/lib.sh ssh_libvirt_host): each commit's kernel is
# uploaded to the host's pool klab; the host goes away mid-bisection (its
# sshd stopped after the first boots): a clear environment failure, the
# bisection stopped, nothing decided from it.  The host stays gone:
# `bisect resume` continues where it stopped on a twin of it (the same
# libvirtd through qemu+tcp: the same fingerprint), not on a local host
# that sorts first (another fingerprint).  host_wait is 10 s, so the
# loss costs about 30 s; the kernels come from the shared store
# (tests/demo-kernels.sh).  Resumed before the twin exists (no host of its
# fingerprint answers), it stops again.  No libvirt or sshd = a failure,
# not a skip.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
# the demo history's kernels come from the shared store: nothing is built
demo_lab

ssh_libvirt_host
KPID=
trap 'stop_sshd; [ -z "$KPID" ] || kill -9 $KPID 2>/dev/null' EXIT INT TERM

# a host that refuses connections: 10 s a try, not 120 (three tries)
echo 'host_wait = 10' >> "$lab/klab.conf"

demo_history "$T/linux"
parent=$(git -C "$T/linux" rev-parse "$planted^")
sed -e 's/^runtime:.*/runtime: 3s/' -e 's/^repeat:.*/repeat: 2/' \
	-e 's/^guest:.*/guest: { vcpus: 1, numa_nodes: 1, memory: 512M }/' \
	"$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$T/job.yaml"

check "host add remote (qemu+ssh)" k host add remote "$SURI" --cpus 1
remote_id=$(q "SELECT id FROM hosts WHERE name = 'remote'")

# No regression between the import and the planted commit's parent: the
# reference phase only.  The host goes away once a boot is stored.
# klab itself in the background ($! of a shell function would be a subshell)
"$KLAB" --state "$lab" bisect start --repo "$T/linux" --good demo-good --bad "$parent" --job "$T/job.yaml" \
	> "$T/b1.out" 2>&1 &
KPID=$!
i=0
until [ "$(q "SELECT count(*) FROM boots WHERE outcome = 'ok'" 2>/dev/null)" -ge 1 ] 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 6000 ] || ! kill -0 $KPID 2>/dev/null; then
		break
	fi
	sleep 0.2
done
stop_sshd
t0=$(date +%s)
wait $KPID
rc=$?
KPID=
echo "# the host gone: klab stopped after $(($(date +%s) - t0)) s (exit $rc)"
check "the first boots ran on remote" test "$(q "SELECT count(*) FROM boots WHERE host_id = $remote_id AND outcome = 'ok'")" -ge 1
check "host gone: the bisection stops with an error, not a crash (exit $rc)" test "$rc" -ge 1 -a "$rc" -lt 126
check "host gone: it says the host does not answer" grep -q "does not answer" "$T/b1.out" || tail -n 15 "$T/b1.out"
check "host gone: nothing decided (no result)" test -z "$(q "SELECT result FROM bisections WHERE id = 1")"
check "host gone: the bisection is stopped, for resume" test "$(q "SELECT state FROM bisections WHERE id = 1")" = stopped
check "host gone: it waited host_wait (10 s) a try" grep -q "waiting up to 10 s" "$T/b1.out"
check "host gone: every boot ok or an infrastructure fault, none left running" \
	test "$(q "SELECT count(*) FROM boots WHERE outcome IS NULL OR outcome NOT IN ('ok', 'infrastructure')")" -eq 0 ||
	q "SELECT outcome, reason FROM boots"
# The host stays gone.  A host that placement would try first (by name),
# free, but local: another fingerprint (this machine's /proc, not libvirt's
# capabilities); and a twin of the lost one, the same libvirtd through a
# socat listener (qemu+tcp): the same fingerprint, so it takes over.
check "host add a-local" k host add a-local "$URI" --cpus 0
# Resumed while no host of its fingerprint answers (remote gone, a-local
# another): stopped again, resumable, nothing lost, not failed.
k bisect resume 1 > "$T/b-none.out" 2>&1
rc=$?
check "no host of its fingerprint: stopped again, not failed (exit $rc)" \
	test "$rc" -ne 0 -a "$(q "SELECT state FROM bisections WHERE id = 1")" = stopped ||
	{ tail -n 15 "$T/b-none.out"; q "SELECT state, message FROM bisections WHERE id = 1"; }
check "no host of its fingerprint: it says which and why" \
	grep -q "no host of the bisection's fingerprint answers: remote (does not answer), a-local (another fingerprint)" \
	"$T/b-none.out"
SOCK=/var/run/libvirt/libvirt-sock
loopback_listener $((20000 + $$ % 20000))
trap 'stop_sshd; kill $SOCAT 2>/dev/null; [ -z "$KPID" ] || kill -9 $KPID 2>/dev/null' EXIT INT TERM
check "host add twin (qemu+tcp, the same libvirtd)" k host add twin "$RURI" --cpus 1
twin_id=$(q "SELECT id FROM hosts WHERE name = 'twin'")
before=$(q "SELECT max(id) FROM boots")
k bisect resume 1 > "$T/b2.out" 2>&1
rc=$?
check "resumed bisection ends: not reproduced (exit $rc)" \
	sh -c "[ $rc -ne 0 ] && [ \"\$(sqlite3 '$lab/klab.db' 'SELECT result FROM bisections WHERE id = 1')\" = not-reproduced ]"
check "it said remote is gone and twin has its fingerprint" \
	grep -q "the bisection's host remote cannot take the guest (it does not answer): it goes to twin, a host of the same fingerprint" "$T/b2.out" ||
	tail -n 15 "$T/b2.out"
check "it went on with the stopped reference steps' runs" grep -q "going on with the runs of the stopped reference steps" "$T/b2.out"
check "two reference steps in all" test "$(q "SELECT count(*) FROM steps WHERE phase = 'reference'")" -eq 2
after=$(q "SELECT count(*) FROM boots WHERE id > $before")
check "the $after boots after the resume on twin" \
	sh -c '[ "$1" -gt 0 ] && [ "$1" -eq "$2" ]' - "$after" "$(q "SELECT count(*) FROM boots WHERE id > $before AND host_id = $twin_id")"
check "none on a-local" \
	test "$(q "SELECT count(*) FROM boots b JOIN hosts h ON h.id = b.host_id WHERE h.name = 'a-local'")" -eq 0
check "one fingerprint on both hosts' boots" test "$(q "SELECT count(DISTINCT fingerprint) FROM boots WHERE outcome = 'ok'")" -eq 1
n=$(q "SELECT count(*) FROM boots")
check "both ends were measured ($n boots)" test "$n" -ge 4
# every kernel the bisection booted reached the host as a volume named by content
virsh -q -c "$URI" vol-list klab > "$T/vols.out" 2>&1
missing=0 kernels=0
for d in $(q "SELECT DISTINCT artifact_dir FROM builds WHERE status = 'ok'"); do
	kernels=$((kernels + 1))
	grep -q "^ *bzImage-$(git hash-object "$d/bzImage" | cut -c1-16) " "$T/vols.out" || missing=$((missing + 1))
done
check "each of its $kernels kernels is a volume of pool klab ($missing missing)" test $kernels -ge 2 -a $missing -eq 0
check "PRAGMA integrity_check ok" test "$(q 'PRAGMA integrity_check')" = ok

finish
