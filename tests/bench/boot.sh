#!/bin/sh
# Benchmark: guest boot with klab (libvirt: virDomainCreateXML, streams,
# pinning) against the same kernel and initramfs started by a bare
# `qemu-system-x86_64 -kernel` command, side by side in one run.
#   create   virDomainCreateXML returns (klab only)
#   agent    start → the agent's hello on the result channel
#   sample   start → the benchmark's first output line
#   whole    start → the domain stopped, and klab run's wall time a boot
#            (klab only)
# Target: klab/bare <= 1.1x for "agent".  Prints figures; never fails on time.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
N=${KLAB_BENCH_BOOTS:-5}
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
B=$(mktemp -d /var/tmp/klab-bench-boot.XXXXXX)
chmod 755 "$B"
trap 'rm -rf "$B"' EXIT
"$KLAB" --state "$B/lab" init >/dev/null
sed -e 's/^runtime:.*/runtime: 1s/' -e "s/^repeat:.*/repeat: $N/" \
	"$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$B/job.yaml"
t0=$(date +%s%N)
"$KLAB" --state "$B/lab" run --job "$B/job.yaml" --kernel "$KBZIMAGE" --quiet > "$B/klab.out" 2>&1 ||
	{ cat "$B/klab.out"; exit 1; }
k_wall=$(( ($(date +%s%N) - t0) / 1000000 / N ))
q() { sqlite3 "$B/lab/klab.db" "$1"; }
accel=$(q "SELECT accel FROM run_sets")
kernel=$(q "SELECT kernel FROM run_sets")
initrd=$(sed -n 's/^initramfs \([^ ]*\) .*/\1/p' "$B/klab.out")
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
k_create=$(q "SELECT create_ms FROM boots" | med)
k_agent=$(q "SELECT boot_ms FROM boots" | med)
k_first=$(q "SELECT first_output_ms FROM boots" | med)
b_agent=$(awk '{ print $1 }' "$B/bare" | med)
b_first=$(awk '{ print $2 }' "$B/bare" | med)
echo "guest boot benchmark: $N boots each, accelerator $accel, 2 vCPUs, 2 NUMA cells, 1 GiB; medians in ms"
echo "kernel $kernel"
printf '%-34s %10s %10s %8s\n' "" klab bare ratio
printf '%-34s %10s %10s %8s\n' "virDomainCreateXML" "$k_create" - -
printf '%-34s %10s %10s %8s\n' "start -> agent hello" "$k_agent" "$b_agent" "$(awk -v a="$k_agent" -v b="$b_agent" 'BEGIN { printf "%.2fx", a / b }')"
printf '%-34s %10s %10s %8s\n' "start -> first benchmark output" "$k_first" "$b_first" "$(awk -v a="$k_first" -v b="$b_first" 'BEGIN { printf "%.2fx", a / b }')"
# a whole boot: klab's start -> the domain gone (the guest's 2 s warm-up
# and 1 s runtime, the monitors, the power-off and libvirt's teardown),
# and klab run's wall time a boot (the host's work between boots too)
k_whole=$(sed -n 's|^boot [0-9]*/[0-9]*: ok .*, run \([0-9.]*\)s, .*|\1|p' "$B/klab.out" | awk '{ print $1 * 1000 }' | med)
printf '%-34s %10s %10s %8s\n' "start -> domain stopped" "$k_whole" - -
printf '%-34s %10s %10s %8s\n' "klab run's wall time a boot" "$k_wall" - -
