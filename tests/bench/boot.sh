#!/bin/sh
# Benchmark: guest boot with klab (libvirt: virDomainCreateXML, streams,
# pinning) against the same kernel and initramfs started by a bare
# `qemu-system-x86_64 -kernel` command, side by side in one run, N boots
# each, back to back: klab with its guests made ahead (`klab run --repeat
# N`: from the second boot on, each guest is created paused while the one
# before it boots; klab.conf's guests_ahead), klab without (guests_ahead =
# no: every guest created at its boot), and bare QEMU.
#   create   virDomainCreateXML returns (klab, guests created at their boot)
#   agent    start (the guest's creation, or the resume of one made ahead)
#            → the agent's hello on the result channel
#   sample   start → the benchmark's first output line
#   whole    start → the domain stopped (klab only: bare QEMU's agent waits
#            for a host's ack that a file chardev never sends)
#   a boot   klab run's wall time over N, with and without guests made
#            ahead (the host's work between boots, and the guest made
#            ahead beside the boot before it)
# Target: klab/bare <= 1.2x for "agent" (issue 19).  Prints figures;
# never fails on time.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
N=${KLAB_BENCH_BOOTS:-5}
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
B=$(mktemp -d /var/tmp/klab-bench-boot.XXXXXX)
chmod 755 "$B"
trap 'rm -rf "$B"' EXIT
sed -e 's/^runtime:.*/runtime: 1s/' -e "s/^repeat:.*/repeat: $N/" \
	"$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$B/job.yaml"
# klab_series NAME AHEAD: N boots in a new lab $B/NAME (guests_ahead =
# AHEAD); its wall time a boot in ms on stdout
klab_series() {
	"$KLAB" --state "$B/$1" init >/dev/null
	sed -i "s/^guests_ahead = .*/guests_ahead = $2/" "$B/$1/klab.conf"
	t0=$(date +%s%N)
	"$KLAB" --state "$B/$1" run --job "$B/job.yaml" --kernel "$KBZIMAGE" --quiet > "$B/$1.out" 2>&1 ||
		{ cat "$B/$1.out" >&2; exit 1; }
	echo $(( ($(date +%s%N) - t0) / 1000000 / N ))
}
# the lab without first: its boot builds the initramfs both then share
k_wall0=$(klab_series lab0 no)
k_wall=$(klab_series lab yes)
q() { sqlite3 "$B/lab/klab.db" "$1"; }
q0() { sqlite3 "$B/lab0/klab.db" "$1"; }
accel=$(q "SELECT accel FROM run_sets")
kernel=$(q "SELECT kernel FROM run_sets")
initrd=$(sed -n 's/^initramfs \([^ ]*\) .*/\1/p' "$B/lab.out")
staged=$(ls "$(dirname "$initrd")"/bzImage-* | head -n1)

# The bare command: same machine type, CPUs, NUMA cells, memory, devices
# that matter (serial console, virtio-serial result port), TCG or KVM.
bare_once() {
	rm -f "$B/res" "$B/console"
	python3 - "$B" "$staged" "$initrd" "$accel" <<'PY'
import os, subprocess, sys, time
b, kernel, initrd, accel = sys.argv[1:5]
accel_arg = "kvm" if accel == "kvm" else "tcg,thread=multi"
cpu = "host" if accel == "kvm" else "max"
argv = ["qemu-system-x86_64", "-machine", "pc", "-accel", accel_arg, "-cpu", cpu,
        "-smp", "2,sockets=2,cores=1,threads=1", "-m", "1024",
        "-object", "memory-backend-ram,id=m0,size=512M", "-object", "memory-backend-ram,id=m1,size=512M",
        "-numa", "node,nodeid=0,cpus=0,memdev=m0", "-numa", "node,nodeid=1,cpus=1,memdev=m1",
        "-kernel", kernel, "-initrd", initrd, "-append", "console=ttyS0 panic=-1",
        "-display", "none", "-no-reboot", "-nodefaults",
        "-serial", "file:" + b + "/console",
        "-device", "virtio-serial", "-chardev", "file,id=res,path=" + b + "/res",
        "-device", "virtserialport,chardev=res,name=org.klab.results"]
t0 = time.monotonic()
p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
hello = first = None
while p.poll() is None and time.monotonic() - t0 < 300:
    try:
        with open(b + "/res", "rb") as f:
            data = f.read()
    except FileNotFoundError:
        data = b""
    if hello is None and b"KLAB1 hello" in data:
        hello = time.monotonic() - t0
    if first is None and b"KLAB1 out " in data:
        first = time.monotonic() - t0
    if hello is not None and first is not None:
        break
    time.sleep(0.01)
p.kill()
p.wait()
print("%d %d" % ((hello or -1) * 1000, (first or -1) * 1000))
PY
}
i=0
: > "$B/bare"
while [ "$i" -lt "$N" ]; do bare_once >> "$B/bare"; i=$((i + 1)); done

med() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'; }
# whole boots: klab's start -> the domain gone (the guest's 2 s warm-up
# and 1 s runtime, the monitors, the power-off and libvirt's teardown)
whole() { sed -n 's|^boot [0-9]*/[0-9]*: ok .*, run \([0-9.]*\)s, .*|\1|p' "$1" | awk '{ print $1 * 1000 }' | med; }
n_ahead=$(q "SELECT count(*) FROM boots WHERE create_ms = 0")
k_agent=$(q "SELECT boot_ms FROM boots WHERE create_ms = 0" | med)
k_first=$(q "SELECT first_output_ms FROM boots WHERE create_ms = 0" | med)
k_agent1=$(q "SELECT boot_ms FROM boots WHERE create_ms > 0" | med)
k_whole=$(whole "$B/lab.out")
c_create=$(q0 "SELECT create_ms FROM boots" | med)
c_agent=$(q0 "SELECT boot_ms FROM boots" | med)
c_first=$(q0 "SELECT first_output_ms FROM boots" | med)
c_whole=$(whole "$B/lab0.out")
b_agent=$(awk '{ print $1 }' "$B/bare" | med)
b_first=$(awk '{ print $2 }' "$B/bare" | med)
echo "guest boot benchmark: $N boots each, back to back, accelerator $accel, 2 vCPUs, 2 NUMA cells, 1 GiB; medians in ms"
echo "kernel $kernel"
echo "klab ahead: $n_ahead of $N guests made ahead (created paused while the boot before booted); klab at boot: every guest created at its boot"
printf '%-34s %10s %10s %10s %9s %9s\n' "" "klab ahead" "at boot" bare ahead/bare boot/bare
printf '%-34s %10s %10s %10s %9s %9s\n' "virDomainCreateXML" - "$c_create" - - -
printf '%-34s %10s %10s %10s %9s %9s\n' "start -> agent hello" "${k_agent:--}" "$c_agent" "$b_agent" \
	"$(ratio "${k_agent:-0}" "$b_agent")" "$(ratio "$c_agent" "$b_agent")"
printf '%-34s %10s %10s %10s %9s %9s\n' "start -> first benchmark output" "${k_first:--}" "$c_first" "$b_first" \
	"$(ratio "${k_first:-0}" "$b_first")" "$(ratio "$c_first" "$b_first")"
printf '%-34s %10s %10s %10s %9s %9s\n' "start -> domain stopped" "$k_whole" "$c_whole" - - -
printf '%-34s %10s %10s %10s %9s %9s\n' "klab run's wall time a boot" "$k_wall" "$k_wall0" - - -
echo "klab ahead / at boot, wall time a boot: $(ratio "$k_wall" "$k_wall0"); the first boot of the series ahead (made at start, the next made beside it): agent hello ${k_agent1:--} ms"
