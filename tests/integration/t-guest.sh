#!/bin/sh
# Real guests: the 6.1 kernel klab builds, booted under libvirt (TCG here,
# KVM where the host has it) with the initramfs klab writes.  Every
# shipped job runs briefly and its metrics arrive; NUMA and pinning are as
# planned; a panicking kernel, a guest that never finishes and one whose
# agent never starts are classified and destroyed; orphans are cleaned;
# two concurrent guests never share a CPU.  No libvirt = a failure, not a
# skip: this is the tier CI must not lose silently.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
# pinning and placement checks need the CPUs to themselves
guest_cpus_lock exclusive

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
klab_domains() { virsh -q -c "$URI" list --name | grep -c '^klab-' || true; }

# A shipped job with a short runtime and one boot.
short_job() {
	sed -e 's/^runtime:.*/runtime: 3s/' -e 's/^repeat:.*/repeat: 1/' \
		"$KLAB_SRCDIR/jobs/$1.yaml" > "$T/$1.yaml"
}

# metric_positive RUN_SET METRIC
metric_positive() {
	v=$(q "SELECT max(s.value) FROM samples s JOIN runs r ON r.id = s.run_id JOIN boots b ON b.id = r.boot_id
	       WHERE b.run_set_id = $1 AND s.metric = '$2'")
	[ -n "$v" ] && awk -v v="$v" 'BEGIN { exit !(v > 0) }'
}

# ---- every shipped job, briefly -------------------------------------------
rs=0
for spec in \
	"stress-ng-mmapaddr stress-ng.mmapaddr.ops_per_sec stress-ng.mmapaddr.ops" \
	"stress-ng-vm-splice stress-ng.vm-splice.ops_per_sec stress-ng.vm-splice.MB_per_sec" \
	"usemem-anon-w-seq vm-scalability.throughput vm-scalability.task_throughput" \
	"will-it-scale-malloc1 will-it-scale.per_process_ops will-it-scale.ops_per_sec" \
	"will-it-scale-page_fault1 will-it-scale.per_process_ops will-it-scale.workload"; do
	set -- $spec
	job=$1 kpi=$2 other=$3
	short_job "$job"
	rs=$((rs + 1))
	if k run --job "$T/$job.yaml" --kernel "$KBZIMAGE" --quiet > "$T/$job.out" 2>&1; then
		ok "$job: one boot ran and produced its KPI"
	else
		fail "$job: klab run failed"; cat "$T/$job.out"
	fi
	check "$job: KPI $kpi > 0 stored" metric_positive "$rs" "$kpi"
	check "$job: $other > 0 stored (not only the KPI)" metric_positive "$rs" "$other"
	check "$job: output names the accelerator" grep -q "accelerator tcg\|accelerator kvm" "$T/$job.out"
	check "$job: /proc/vmstat before and after stored" \
		test "$(q "SELECT count(*) FROM monitor_stats m JOIN runs r ON r.id = m.run_id JOIN boots b ON b.id = r.boot_id
			     WHERE b.run_set_id = $rs AND m.source = 'vmstat' AND m.phase IN ('before', 'after')")" -gt 100
	check "$job: raw output kept" test -s "$(q "SELECT raw_path FROM runs r JOIN boots b ON b.id = r.boot_id WHERE b.run_set_id = $rs")"
done

# ---- a series of boots of one kernel: each next guest made ahead ----------
# (created paused while the one before it boots: no virDomainCreateXML on
# its path, create_ms 0); every boot still measured, nothing left behind
sed -e 's/^runtime:.*/runtime: 1s/' -e 's/^repeat:.*/repeat: 3/' \
	"$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$T/series.yaml"
rs=$((rs + 1))
if k run --job "$T/series.yaml" --kernel "$KBZIMAGE" > "$T/series.out" 2>&1; then
	ok "series: three boots ran"
else
	fail "series: klab run failed"; cat "$T/series.out"
fi
check "series: the first guest created at its boot" \
	test "$(q "SELECT count(*) FROM boots WHERE run_set_id = $rs AND create_ms > 0")" -eq 1
check "series: the second and third made ahead (no creation on their path)" \
	test "$(q "SELECT count(*) FROM boots WHERE run_set_id = $rs AND create_ms = 0 AND outcome = 'ok'")" -eq 2
check "series: the progress says so" grep -q "booting (its guest made ahead)" "$T/series.out"
check "series: every boot's KPI stored" \
	test "$(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id JOIN boots b ON b.id = r.boot_id
		     WHERE b.run_set_id = $rs AND s.metric = 'will-it-scale.per_process_ops'")" -eq 3
check "series: no guest left running or paused" test "$(klab_domains)" -eq 0

# The guest saw what was planned: 2 NUMA nodes, 2 CPUs, THP as the job said.
env=$(q "SELECT guest_env FROM boots WHERE run_set_id = 4")
check "guest reports 2 NUMA nodes" sh -c "echo '$env' | grep -qx 'numa_nodes=2'"
check "guest reports 2 CPUs" sh -c "echo '$env' | grep -qx 'cpus=2'"
check "guest THP is 'always' as the malloc1 job asks" sh -c "echo '$env' | grep -qx 'thp_enabled=always'"
check "boot stored the accelerator" test "$(q "SELECT accel FROM boots WHERE run_set_id = 4")" = tcg -o \
	"$(q "SELECT accel FROM boots WHERE run_set_id = 4")" = kvm
# virDomainGetVcpuPinInfo's answer, stored at the end of the boot, is the plan.
pin=$(q "SELECT pinning FROM boots WHERE run_set_id = 4")
check "vCPU pinning as planned ($pin): one host CPU each, distinct" \
	sh -c "[ '$pin' = '0:0,1:1' ] || [ '$pin' = '0:1,1:0' ]"
check "no klab domain left after the runs" test "$(klab_domains)" -eq 0

# ---- a kernel that panics at boot -----------------------------------------
short_job will-it-scale-malloc1
start=$(date +%s)
k run --job "$T/will-it-scale-malloc1.yaml" --kernel "$KBZIMAGE" --quiet --boot-timeout 120 \
	--cmdline "rdinit=/nonexistent init=/nonexistent" > "$T/panic.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
check "panic: exit 1" test "$rc" -eq 1
check "panic: outcome 'panic' stored" test "$(q "SELECT outcome FROM boots ORDER BY id DESC LIMIT 1")" = panic
check "panic: excerpt has the panic line" grep -q "Kernel panic - not syncing" "$T/panic.out"
check "panic: reason stored" sh -c "sqlite3 '$lab/klab.db' \"SELECT reason FROM boots ORDER BY id DESC LIMIT 1\" | grep -q 'Kernel panic'"
check "panic: classified within the boot timeout (${took}s < 120s)" test "$took" -lt 120
check "panic: no domain left" test "$(klab_domains)" -eq 0

# ---- an agent that never starts (a shell as init, waiting forever) --------
k run --job "$T/will-it-scale-malloc1.yaml" --kernel "$KBZIMAGE" --quiet --boot-timeout 25 \
	--cmdline "rdinit=/bin/sh" > "$T/noagent.out" 2>&1
rc=$?
check "agent never starts: exit 1" test "$rc" -eq 1
check "agent never starts: outcome 'boot-failed'" \
	test "$(q "SELECT outcome FROM boots ORDER BY id DESC LIMIT 1")" = boot-failed
check "agent never starts: reason names the boot timeout" grep -q "did not start within 25 s" "$T/noagent.out"
check "agent never starts: destroyed" test "$(klab_domains)" -eq 0

# ---- a guest that never finishes ------------------------------------------
sed -e 's/^runtime:.*/runtime: 600s/' -e 's/^repeat:.*/repeat: 1/' \
	"$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml" > "$T/forever.yaml"
start=$(date +%s)
k run --job "$T/forever.yaml" --kernel "$KBZIMAGE" --quiet --run-timeout 15 > "$T/forever.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
check "never finishes: exit 1" test "$rc" -eq 1
check "never finishes: outcome 'timeout'" test "$(q "SELECT outcome FROM boots ORDER BY id DESC LIMIT 1")" = timeout
check "never finishes: stopped by the run timeout (${took}s)" test "$took" -lt 200
check "never finishes: destroyed, no domain left" test "$(klab_domains)" -eq 0

# ---- klab killed mid-run: libvirt destroys its guest (AUTODESTROY) ---------
"$KLAB" --state "$lab" run --job "$T/forever.yaml" --kernel "$KBZIMAGE" --quiet > "$T/killed.out" 2>&1 &
pid=$!
i=0
while [ "$(klab_domains)" -eq 0 ] && [ "$i" -lt 60 ]; do sleep 1; i=$((i + 1)); done
check "killed klab: its guest was running" test "$(klab_domains)" -eq 1
kill -9 "$pid"; wait "$pid" 2>/dev/null
i=0
while [ "$(klab_domains)" -gt 0 ] && [ "$i" -lt 30 ]; do sleep 1; i=$((i + 1)); done
check "killed klab: no domain left within 30 s" test "$(klab_domains)" -eq 0
check "killed klab: its boot row stays 'running' (not a fake result)" \
	test "$(q "SELECT outcome FROM boots ORDER BY id DESC LIMIT 1")" = running

# ---- an orphan with klab's metadata and a dead owner is cleaned -----------
cat > "$T/orphan.xml" <<EOF
<domain type='qemu'>
  <name>klab-orphan-$$</name>
  <memory unit='MiB'>128</memory>
  <vcpu>1</vcpu>
  <metadata><klab:guest xmlns:klab='https://klab.invalid/xmlns/domain/1'><klab:lab>$lab</klab:lab><klab:owner-pid>999999999</klab:owner-pid><klab:created>0</klab:created></klab:guest></metadata>
  <os><type arch='x86_64' machine='pc'>hvm</type><kernel>$KBZIMAGE</kernel><cmdline>console=ttyS0</cmdline></os>
  <on_poweroff>destroy</on_poweroff><on_reboot>destroy</on_reboot><on_crash>destroy</on_crash>
  <devices><memballoon model='none'/></devices>
</domain>
EOF
# the kernel must be readable by QEMU's user: stage it like klab does
cp "$KBZIMAGE" /var/tmp/klab-test-orphan-bzImage && chmod 644 /var/tmp/klab-test-orphan-bzImage
sed -i "s|<kernel>.*</kernel>|<kernel>/var/tmp/klab-test-orphan-bzImage</kernel>|" "$T/orphan.xml"
virsh -q -c "$URI" create "$T/orphan.xml" --paused >/dev/null
check "orphan: created" test "$(klab_domains)" -eq 1
# and the swap disk a killed klab leaves (made before its boot, removed
# after it; the guest kernel here has no swap, so the file is planted
# with a dead owner's pid, as the domain above is, in the directory the
# runs above staged their initramfs in)
images=$(sed -n 's|^initramfs \(/.*\)/initrd-.*|\1|p' "$T"/*.out | head -n 1)
check "orphan swap disk: klab's image directory known" test -d "${images:-/nonexistent}"
orphan_swap=${images:-/nonexistent}/swap-klab-999999999-1.img
[ -d "${images:-/nonexistent}" ] && : > "$orphan_swap"
k run --job "$T/will-it-scale-malloc1.yaml" --kernel "$KBZIMAGE" --quiet > "$T/after-orphan.out" 2>&1
check "orphan: the next run says it destroyed it" grep -q "destroyed orphaned guest 'klab-orphan-$$'" "$T/after-orphan.out"
check "orphan: gone" test "$(klab_domains)" -eq 0
check "orphan swap disk: the next boot removed it and said so" \
	sh -c "[ ! -e '$orphan_swap' ] && grep -q 'swap disk of klab process 999999999, which is gone' '$T/after-orphan.out'"
rm -f /var/tmp/klab-test-orphan-bzImage

# ---- two concurrent guests never share a CPU ------------------------------
sed -e 's/^runtime:.*/runtime: 3s/' -e 's/^repeat:.*/repeat: 1/' \
	-e 's/^guest:.*/guest: { vcpus: 1, numa_nodes: 1, memory: 512M }/' \
	"$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$T/one-cpu.yaml"
"$KLAB" --state "$lab" run --job "$T/one-cpu.yaml" --kernel "$KBZIMAGE" --quiet > "$T/c1.out" 2>&1 &
p1=$!
"$KLAB" --state "$lab" run --job "$T/one-cpu.yaml" --kernel "$KBZIMAGE" --quiet > "$T/c2.out" 2>&1 &
p2=$!
wait "$p1"; r1=$?
wait "$p2"; r2=$?
check "concurrent: both runs ok" test "$r1" -eq 0 -a "$r2" -eq 0
pins=$(q "SELECT pinning FROM boots WHERE vcpus = 1 AND outcome = 'ok' ORDER BY id DESC LIMIT 2" | sort | tr '\n' ' ')
check "concurrent: distinct host CPUs ($pins)" test "$pins" = "0:0 0:1 "

# ---- bad input ------------------------------------------------------------
printf 'suite: will-it-scale\ntestcase: malloc1\nruntime: soon\n' > "$T/bad.yaml"
before=$(q "SELECT count(*) FROM boots")
k run --job "$T/bad.yaml" --kernel "$KBZIMAGE" > "$T/bad.out" 2>&1
check "bad job: exit != 0" test $? -ne 0
check "bad job: one line naming file:line" sh -c "grep -q 'bad.yaml:3' '$T/bad.out' && [ \$(wc -l < '$T/bad.out') -eq 1 ]"
check "bad job: nothing stored" test "$(q "SELECT count(*) FROM boots")" = "$before"
k run --job "$T/one-cpu.yaml" --kernel /etc/passwd > "$T/notkernel.out" 2>&1
check "not a kernel: exit != 0 with a clear message" grep -q "not an x86 bzImage" "$T/notkernel.out"
k run --job "$T/one-cpu.yaml" --kernel "$KBZIMAGE" --kpi stress-ng.x > "$T/badkpi.out" 2>&1
check "kpi of another suite refused" grep -q "metrics are named will-it-scale.<metric>" "$T/badkpi.out"
check "integrity_check ok" test "$(q "PRAGMA integrity_check")" = ok

boots_summary
finish
