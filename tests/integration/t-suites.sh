#!/bin/sh
# The suites and testcases LKP reports most, each run once in a real guest
# (TCG here, KVM where the host has it) and its metrics parsed: every
# will-it-scale testcase in process mode (and a set in thread mode) in
# one boot each (params.also), on a btrfs made fresh on a scratch disk
# (read3 and read4 need O_DIRECT, which tmpfs lacks in 6.1); the
# vm-scalability cases in one boot on xfs (LKP's sparse root); hackbench;
# the five perf-bench-futex tests and perf bench sched pipe, sched
# messaging, mem and syscall; fio-basic on ext4; klab-netperf's five
# loopback tests in one boot.  One guest kernel: klab's default recipe
# with jobs/fs.config and jobs/netperf.config, built once into the shared
# store.  Short runtimes, 1-2 s; fails (never skips) when libvirt does
# not answer.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
: "${top_builddir:=${KLAB_BUILDDIR:-.}}"
require_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
KSTORE="$KLAB_TEST_CACHE/artifacts"
kernel_lab
(
	flock 9
	k build --repo "$KTREE" --rev HEAD --fragment "$KLAB_SRCDIR/jobs/fs.config" \
		--fragment "$KLAB_SRCDIR/jobs/netperf.config" --quiet
) 9>"$KLAB_TEST_CACHE/.suites-kernel.lock" > "$T/build.out" 2>&1 ||
	{ echo "not ok - the suites' guest kernel did not build"; tail -20 "$T/build.out"; exit 1; }
KERNEL=$(q "SELECT artifact_dir FROM builds WHERE status = 'ok' ORDER BY id DESC LIMIT 1")/bzImage
[ -f "$KERNEL" ] || { echo "not ok - no kernel at $KERNEL"; exit 1; }
guest_cpus_lock shared

# metric NAME: its value in the last run (empty: none)
metric() {
	q "SELECT value FROM samples WHERE run_id = (SELECT max(id) FROM runs) AND metric = '$1' AND seq = 0"
}
positive() { [ -n "$1" ] && awk -v v="$1" 'BEGIN { exit !(v > 0) }'; }

# run NAME: the job on stdin, one boot of the suites' kernel
run() {
	cat > "$T/$1.yaml"
	printf 'repeat: 1\nprofile_runs: 0\n' >> "$T/$1.yaml"
	t0=$(date +%s)
	if k run --job "$T/$1.yaml" --kernel "$KERNEL" > "$T/$1.out" 2>&1; then
		ok "$1: the boot ran ($(($(date +%s) - t0)) s)"
	else
		fail "$1: klab run failed"
		tail -30 "$T/$1.out"
	fi
}
# check_metrics NAME METRIC...: each > 0 in the last run
check_metrics() {
	name=$1
	shift
	missing=""
	for m; do
		positive "$(metric "$m")" || missing="$missing $m"
	done
	if [ -z "$missing" ]; then
		ok "$name: $# metrics > 0"
	else
		fail "$name: no positive$missing"
		tail -20 "$(q "SELECT raw_path FROM runs ORDER BY id DESC LIMIT 1")" 2>/dev/null
	fi
}

guest='guest: { vcpus: 2, numa_nodes: 1, memory: 2G, hugepages: none }'

# ---- will-it-scale: every testcase of LKP's jobs, process mode, one boot -----
WIS_ALL=$("$top_builddir/guests/bench/will-it-scale" --list | cut -f1)
also=$(printf '%s\n' $WIS_ALL | grep -vx brk1 | tr '\n' ' ')
run wis-process <<EOF
suite: will-it-scale
testcase: brk1
mode: process
nr_task: 2
runtime: 1s
fs: btrfs
params: { warmup: 0, also: '$also' }
$guest
EOF
wants=""
for t in $also; do wants="$wants will-it-scale.$t.per_process_ops"; done
# shellcheck disable=SC2086
check_metrics "will-it-scale process: $(printf '%s\n' $WIS_ALL | wc -l) testcases" will-it-scale.per_process_ops \
	will-it-scale.workload $wants
check "will-it-scale: the run said where its file system is" \
	grep -q "^disk: btrfs made fresh each boot on a [0-9]*M scratch disk, at /klab/disk in the guest" "$T/wis-process.out"
check "will-it-scale: the agent made btrfs on the scratch disk" \
	grep -q "fs: btrfs made on /dev/vd[a-z] (serial klab-disk), mounted on /klab/disk" \
	"$(q "SELECT console_path FROM boots ORDER BY id DESC LIMIT 1")"

# thread mode: the testcases whose threads share what processes do not
# (the mm, the fd table, the signal handlers, a file's lock, the brk)
thread_tests="brk2 context_switch1 dup1 futex2 lock2 malloc1 mmap1 page_fault2 poll2 pthread_mutex1 read4 signal1 tlb_flush2 unlink2"
run wis-thread <<EOF
suite: will-it-scale
testcase: page_fault1
mode: thread
nr_task: 2
runtime: 1s
fs: btrfs
params: { warmup: 0, also: '$thread_tests' }
kpi: will-it-scale.per_thread_ops
$guest
EOF
wants=""
for t in $thread_tests; do wants="$wants will-it-scale.$t.per_thread_ops"; done
# shellcheck disable=SC2086
check_metrics "will-it-scale thread" will-it-scale.per_thread_ops $wants

# ---- vm-scalability: every case of LKP's jobs but the swap ones, one boot ----
# (a task's size cut to 16 MiB; the swap cases need a kernel with swap,
# jobs/swap.config, and run in a boot of their own elsewhere)
VM_ALL=$("$top_builddir/guests/bench/vm-scalability" --list | grep -v '^swap-')
also=$(printf '%s\n' $VM_ALL | grep -vx anon-w-seq | tr '\n' ' ')
run vm-scalability <<EOF
suite: vm-scalability
testcase: anon-w-seq
nr_task: 2
runtime: 1s
size: 16m
params: { also: '$also' }
$guest
EOF
wants=""
for c in $also; do wants="$wants vm-scalability.$c.throughput"; done
# shellcheck disable=SC2086
check_metrics "vm-scalability: $(printf '%s\n' $VM_ALL | wc -l) cases" vm-scalability.throughput \
	vm-scalability.median vm-scalability.workload $wants
check "vm-scalability: the sparse files on xfs, LKP's default" grep -q "^disk: xfs made fresh each boot" "$T/vm-scalability.out"

# ---- hackbench ----------------------------------------------------------------
run hackbench <<EOF
suite: hackbench
mode: threads
nr_threads: 2
runtime: 1s
params: { ipc: pipe, loops: 100 }
$guest
EOF
check_metrics hackbench hackbench.throughput hackbench.throughput_avg hackbench.throughput_worst

# ---- perf bench ---------------------------------------------------------------
for t in hash lock-pi requeue wake wake-parallel; do
	case $t in
	hash | lock-pi) m=perf-bench-futex.ops/s ;;
	wake) m=perf-bench-futex.wokeup_time_ms ;;
	requeue) m=perf-bench-futex.requeued_time_ms ;;
	wake-parallel) m=perf-bench-futex.avg_per_thread_latency_ms ;;
	esac
	run "futex-$t" <<EOF
suite: perf-bench-futex
testcase: $t
nr_task: 2
runtime: 1s
$guest
EOF
	check_metrics "perf-bench-futex $t" "$m"
done
run sched-pipe <<EOF
suite: perf-bench-sched-pipe
mode: threads
runtime: 1s
params: { loops: 10000ops }
$guest
EOF
check_metrics "perf-bench-sched-pipe" perf-bench-sched-pipe.ops_per_sec perf-bench-sched-pipe.usecs_per_op
run sched-messaging <<EOF
suite: perf-bench-sched-messaging
mode: process
runtime: 1s
params: { loops: 10, groups: 2, ipc: socket }
$guest
EOF
check_metrics "perf-bench-sched-messaging" perf-bench-sched-messaging.total_time_sec
run mem <<EOF
suite: perf-bench-mem
runtime: 1s
params: { op: memset, size: 1MB }
$guest
EOF
check_metrics "perf-bench-mem" perf-bench-mem.memset.default.MB_per_sec
run syscall <<EOF
suite: perf-bench-syscall
runtime: 1s
params: { op: basic, loop: 100000 }
$guest
EOF
check_metrics "perf-bench-syscall" perf-bench-syscall.getppid.ops_per_sec

# ---- fio-basic on ext4 --------------------------------------------------------
run fio <<EOF
suite: fio-basic
fs: ext4
nr_task: 2
runtime: 2s
params: { rw: randrw, bs: 4k, ioengine: io_uring, test_size: 64m }
$guest
EOF
check_metrics "fio-basic randrw on ext4" fio.read_bw_MBps fio.read_iops fio.write_bw_MBps fio.write_iops \
	fio.write_clat_mean_ns fio.workload

# ---- netperf's loopback tests, klab-netperf, one boot ---------------------------
run netperf <<EOF
suite: netperf
testcase: TCP_RR
nr_threads: 2
runtime: 1s
params: { also: 'TCP_CRR TCP_STREAM UDP_RR UDP_STREAM' }
$guest
EOF
check_metrics "netperf" netperf.Throughput_tps netperf.Throughput_total_tps netperf.workload \
	netperf.TCP_CRR.Throughput_tps netperf.TCP_STREAM.Throughput_Mbps netperf.UDP_RR.Throughput_tps \
	netperf.UDP_STREAM.Throughput_Mbps
check "netperf: the run says klab-netperf is not netperf" grep -q "^netperf: klab-netperf, .*not netperf" "$T/netperf.out"

# ---- refused before a boot -------------------------------------------------------
boots=$(q "SELECT count(*) FROM boots")
printf 'suite: will-it-scale\ntestcase: page_fault2\nkpi: will-it-scale.per_thread_ops\n' > "$T/badkpi.yaml"
k run --job "$T/badkpi.yaml" --kernel "$KERNEL" > "$T/badkpi.out" 2>&1
rc=$?
check "a KPI the job cannot produce: exit != 0, one line saying why" \
	sh -c "[ $rc -ne 0 ] && grep -q 'never produces it' '$T/badkpi.out' && [ \$(wc -l < '$T/badkpi.out') -eq 1 ]"
printf 'suite: aim9\ntestcase: x\n' > "$T/aim9.yaml"
k run --job "$T/aim9.yaml" --kernel "$KERNEL" > "$T/aim9.out" 2>&1
check "a suite klab does not run: refused with the reason" \
	grep -q "suite: klab does not run aim9: AIM9 is not packaged in Debian" "$T/aim9.out"
check "nothing booted for them" test "$(q "SELECT count(*) FROM boots")" -eq "$boots"
images=$(sed -n 's|^initramfs \(/.*\)/initrd-.*|\1|p' "$T"/*.out | head -n 1)
# this lab's guests only: other labs' may run beside (a shared hold)
ours=0
for d in $(virsh -q -c "$URI" list --all --name | grep '^klab-'); do
	virsh -q -c "$URI" dumpxml "$d" 2>/dev/null | grep -qF "<klab:lab>$lab</klab:lab>" && ours=$((ours + 1))
done
check "no guest of this lab left" test "$ours" -eq 0
check "no scratch disk left in ${images:-?}" sh -c "[ -d '${images:-/nonexistent}' ] && ! ls '${images:-/nonexistent}' | grep -q '^disk-klab-'"
boots_summary
finish
