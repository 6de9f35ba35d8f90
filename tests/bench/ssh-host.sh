#!/bin/sh
# Benchmark (issue 43): the cost of reaching a hypervisor over ssh.  The
# same libvirtd two ways: qemu:///system (local, kernel and initramfs
# handed over as files) and qemu+ssh through this benchmark's own sshd on
# loopback (tests/lib.sh ssh_libvirt_host: libvirt's ssh transport,
# virt-ssh-helper at the other end, kernel and initramfs uploaded as
# volumes of pool klab).  `klab run --repeat BOOTS` of the shared guest
# kernel, ROUNDS times each way, alternating, plus one run each way of a
# kernel the host has never seen (the upload).  Prints the median wall
# time per boot each way and their ratio.  Never fails on time.
#   SSH_BENCH_BOOTS   boots a run (default 5)
#   SSH_BENCH_ROUNDS  runs each way (default 3)
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
BOOTS=${SSH_BENCH_BOOTS:-5}
ROUNDS=${SSH_BENCH_ROUNDS:-3}
trap 'stop_sshd; rm -rf "$T"' EXIT
ssh_libvirt_host

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
k host add here "$URI" >/dev/null
k host add viassh "$SURI" >/dev/null
sed -e 's/^runtime:.*/runtime: 2s/' -e 's/^repeat:.*/repeat: 1/' \
	"$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml" > "$T/job.yaml"
ms() { date +%s%N | cut -c1-13; }
# one_run HOST KERNEL -> milliseconds per boot
one_run() {
	t0=$(ms)
	k run --job "$T/job.yaml" --kernel "$2" --host "$1" --repeat "$BOOTS" > "$T/run.out" 2>&1 ||
		{ cat "$T/run.out" >&2; exit 1; }
	echo $((($(ms) - t0) / BOOTS))
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "ssh-host benchmark: $(nproc) CPUs, $BOOTS boots a run, $ROUNDS runs each way, stress-ng mmapaddr 2 s"
# a kernel the host has not seen: the same image with a byte of padding
# appended (a bzImage boots with trailing bytes), so its content differs
cp "$KBZIMAGE" "$T/new-local"; printf '\0' >> "$T/new-local"
cp "$KBZIMAGE" "$T/new-ssh"; printf '\0\0' >> "$T/new-ssh"
first_local=$(one_run here "$T/new-local")
first_ssh=$(one_run viassh "$T/new-ssh")
loc= ssh=
for r in $(seq "$ROUNDS"); do
	loc="$loc $(one_run here "$KBZIMAGE")"
	ssh="$ssh $(one_run viassh "$KBZIMAGE")"
done
ml=$(echo "$loc" | median)
msh=$(echo "$ssh" | median)
echo "| a boot (klab run's wall time / boots) | qemu:///system | qemu+ssh | ratio |"
echo "| --- | --- | --- | --- |"
echo "| median of $ROUNDS runs | $ml ms | $msh ms | $(awk "BEGIN{printf \"%.2f\", $msh/$ml}")x |"
echo "| a kernel the host never saw (first run) | $first_local ms | $first_ssh ms | $(awk "BEGIN{printf \"%.2f\", $first_ssh/$first_local}")x |"
echo "runs each way (ms a boot): local$loc; ssh$ssh"
