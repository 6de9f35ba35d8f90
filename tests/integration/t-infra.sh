#!/bin/sh
# Faults of the host are not the kernel's (issue 42), with the real parts:
# a real guest (the shared guest kernel, will-it-scale malloc1) whose QEMU
# process is SIGKILLed in the middle of its benchmark.  The boot is an
# infrastructure fault, never a panic: it is tried again and the retry's
# result stored, the killed run's row saying "infrastructure".  A QEMU
# killed at every try ends the command as an environment failure after
# three tries, nothing taken as the kernel's result.  Then a libvirtd of
# the test's own (a private mount namespace, under tini) is SIGKILLed and
# restarted while the guest runs: klab reconnects and the retry's result
# is stored.  No fake: real SIGKILLs of the real QEMU and libvirtd.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
guest_cpus_lock shared
# the shared lab may be dropped by a test of another schema meanwhile
cp "$KBZIMAGE" "$T/bzImage"
kernel_lab

sed -e 's/^runtime:.*/runtime: 6s/' -e 's/^repeat:.*/repeat: 1/' \
	"$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$T/job.yaml"
echo 'profile_runs: 0' >> "$T/job.yaml"

# kill_qemu_when_running ERRFILE N: N times, once the guest's benchmark
# runs (its "running" phase on klab's stderr, one more each time), the
# QEMU of the boot row still running is SIGKILLed.  Prints what it killed.
kill_qemu_when_running() {
	killed=0
	while [ "$killed" -lt "$2" ]; do
		seen=$(grep -c "running (" "$1" 2>/dev/null || true)
		if [ "${seen:-0}" -le "$killed" ]; then
			sleep 0.2
			continue
		fi
		# in the benchmark, not at its first line
		sleep 2
		name=$(q "SELECT domain_name FROM boots WHERE outcome = 'running' ORDER BY id DESC LIMIT 1")
		pid=$(pgrep -f "guest=$name," | head -n 1)
		[ -n "$pid" ] || { sleep 0.2; continue; }
		kill -KILL "$pid" && echo "killed $name ($pid)"
		killed=$((killed + 1))
	done
}

# ---- one kill: tried again, the retry's result stored ----------------------
k run --job "$T/job.yaml" --kernel "$T/bzImage" > "$T/one.out" 2> "$T/one.err" &
run=$!
kill_qemu_when_running "$T/one.err" 1 > "$T/one.kills" &
killer=$!
if wait "$run"; then ok "one kill: klab run succeeded"; else fail "one kill: klab run failed"; cat "$T/one.err"; fi
kill "$killer" 2>/dev/null
wait "$killer" 2>/dev/null
check "one kill: the QEMU was killed mid-benchmark" grep -q "^killed klab-" "$T/one.kills"
check "one kill: the line says why it tries again" \
	grep -q "infrastructure: QEMU ended without a guest panic.*trying again (try 2 of 3)" "$T/one.err"
check "one kill: the killed boot is an infrastructure fault, not a panic" \
	test "$(q "SELECT count(*) FROM boots WHERE outcome = 'infrastructure'
		     AND reason LIKE 'infrastructure: QEMU ended without a guest panic%'")" -eq 1
check "one kill: no boot classified as the kernel's panic" test "$(q "SELECT count(*) FROM boots WHERE outcome = 'panic'")" -eq 0
check "one kill: the killed run's row names the infrastructure fault" \
	test "$(q "SELECT count(*) FROM runs WHERE status = 'failed' AND fault = 'infrastructure'")" -eq 1
check "one kill: the retry ran and its KPI is stored" \
	test "$(q "SELECT count(*) FROM runs r JOIN samples s ON s.run_id = r.id
		     WHERE r.status = 'ok' AND r.fault IS NULL AND s.metric = 'will-it-scale.per_process_ops'")" -eq 1
check "one kill: the killed try's console kept beside the retry's" \
	test -f "$(q "SELECT console_path FROM boots WHERE outcome = 'infrastructure'")"
check "one kill: the run set is done" test "$(q "SELECT state FROM run_sets ORDER BY id DESC LIMIT 1")" = done

# ---- a kill at every try: an environment failure ---------------------------
k run --job "$T/job.yaml" --kernel "$T/bzImage" > "$T/all.out" 2> "$T/all.err" &
run=$!
kill_qemu_when_running "$T/all.err" 3 > "$T/all.kills" &
killer=$!
if wait "$run"; then fail "every try killed: klab run succeeded"; else ok "every try killed: klab run failed"; fi
kill "$killer" 2>/dev/null
wait "$killer" 2>/dev/null
check "every try killed: three kills" test "$(grep -c "^killed" "$T/all.kills")" -eq 3
check "every try killed: one line says it is an environment failure after 3 tries" \
	grep -q "^klab: error: environment failure: infrastructure: QEMU ended without a guest panic.*3 tries in a row" \
	"$T/all.err"
check "every try killed: its three boots infrastructure faults (four in the lab)" \
	test "$(q "SELECT count(*) FROM boots WHERE outcome = 'infrastructure'")" -eq 4
check "every try killed: never a kernel fault" test "$(q "SELECT count(*) FROM runs WHERE fault = 'kernel'")" -eq 0
# ---- libvirtd SIGKILLed and restarted while the guest runs -----------------
# A libvirtd of this test's own, under tini as ./bootstrap starts the
# machine's, in a mount namespace whose /run/libvirt and qemu state dirs
# are private (the machine's libvirtd and the other tests' guests are not
# touched); klab runs in that namespace.  The boot the kill ends is the
# host's fault; klab waits for libvirtd (bounded), destroys the guest the
# restarted libvirtd still runs, and the retry's result is stored.
if command -v unshare >/dev/null && command -v nsenter >/dev/null && command -v tini >/dev/null; then
	cat > "$T/ns.sh" <<'EOF'
#!/bin/sh
mount --make-rprivate / || exit 1
for d in /run/libvirt /var/lib/libvirt/qemu /var/cache/libvirt/qemu; do
	mount -t tmpfs tmpfs "$d" || exit 1
done
/usr/sbin/virtlogd -d -p /run/libvirt/virtlogd.pid || exit 1
echo ready
exec sleep 100000
EOF
	chmod +x "$T/ns.sh"
	unshare -m "$T/ns.sh" > "$T/ns.out" 2>&1 &
	holder=$!
	i=0
	until grep -q ready "$T/ns.out" || [ $i -gt 50 ]; do sleep 0.1; i=$((i + 1)); done
	in_ns() { nsenter -m -t "$holder" "$@"; }
	ns_pids() {	# NAME: its processes in the namespace
		for p in $(pgrep -x "$1"); do
			[ "$(readlink "/proc/$p/ns/mnt")" = "$(readlink "/proc/$holder/ns/mnt")" ] && echo "$p"
		done
	}
	start_libvirtd() {
		in_ns sh -c "setsid tini -s -- /usr/sbin/libvirtd -p /run/libvirt/libvirtd.pid </dev/null >>'$T/libvirtd.log' 2>&1 &"
		i=0
		until in_ns virsh -q -c qemu:///system version >/dev/null 2>&1 || [ $i -gt 300 ]; do sleep 0.1; i=$((i + 1)); done
	}
	start_libvirtd
	rs_before=$(q "SELECT max(id) FROM run_sets")
	in_ns "$KLAB" --state "$lab" run --job "$T/job.yaml" --kernel "$T/bzImage" > "$T/lv.out" 2> "$T/lv.err" &
	run=$!
	i=0
	until grep -q "running (" "$T/lv.err" || [ $i -gt 3000 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 2
	lv=$(ns_pids libvirtd)
	check "libvirtd: the private libvirtd runs the guest" test -n "$lv"
	[ -z "$lv" ] || kill -KILL $lv
	sleep 3
	start_libvirtd
	if wait "$run"; then ok "libvirtd killed: klab run succeeded"; else fail "libvirtd killed: klab run failed"; cat "$T/lv.err"; fi
	rs=$(q "SELECT max(id) FROM run_sets")
	check "libvirtd killed: a run set of its own" test "$rs" -gt "$rs_before"
	check "libvirtd killed: the lost connection is the host's fault, tried again" \
		grep -q "infrastructure: the connection to libvirtd was lost.*trying again (try 2 of 3)" "$T/lv.err"
	check "libvirtd killed: klab waited for libvirtd and reconnected" grep -q "reconnected to libvirtd" "$T/lv.err"
	check "libvirtd killed: the boot is an infrastructure fault" \
		test "$(q "SELECT count(*) FROM boots WHERE run_set_id = $rs AND outcome = 'infrastructure'")" -eq 1
	check "libvirtd killed: the retry's KPI is stored" \
		test "$(q "SELECT count(*) FROM runs r JOIN boots b ON b.id = r.boot_id JOIN samples s ON s.run_id = r.id
			     WHERE b.run_set_id = $rs AND r.status = 'ok' AND s.metric = 'will-it-scale.per_process_ops'")" -eq 1
	check "libvirtd killed: no guest left in the restarted libvirtd" \
		test -z "$(in_ns virsh -q -c qemu:///system list --all --name)"
	for p in $(ns_pids libvirtd) $(ns_pids virtlogd); do kill "$p"; done
	kill "$holder"
	wait "$holder" 2>/dev/null
else
	echo "# libvirtd restart: skipped (unshare, nsenter or tini missing)"
fi

left=0
for name in $(q "SELECT domain_name FROM boots"); do
	virsh -q -c "$URI" list --name | grep -qx "$name" && left=$((left + 1))
done
check "no guest of this lab left running" test "$left" -eq 0
boots_summary
finish
