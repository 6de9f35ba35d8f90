#!/bin/sh
# A hypervisor over ssh: 'klab host add NAME qemu+ssh://...' through a real
# sshd (the test's own instance on loopback, its own host key, key
# authentication with a key the test makes) in front of the real
# libvirtd; libvirt runs virt-ssh-helper at the other end.  The ssh client
# is the real one, given the test's known_hosts file (libvirt's command=
# parameter) so that nothing of root's ~/.ssh is touched.  Checked: add,
# list, host check of the remote host, a run whose guest boots there
# (kernel and initramfs as volumes of pool 'klab'), its boot stored under
# the host with a fingerprint; then sshd stops and a run there fails at
# once, saying the host does not answer.  Fails (never skips) when
# libvirt or sshd is missing.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
guest_cpus_lock shared

ssh_libvirt_host
ok "virsh answers over ssh (sshd on 127.0.0.1:$SSH_PORT, key authentication)"

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
k host add viassh "$SURI" > "$T/add.out" 2>&1
check "host add viassh qemu+ssh://...: connected and checked" grep -q "^host viassh: " "$T/add.out" ||
	cat "$T/add.out"
check "... a remote host: images go through pool klab" grep -q "remote: images go through storage pool 'klab'" "$T/add.out"
k host list > "$T/list.out" 2>&1
check "host list: viassh answers" grep -Eq "^viassh .* yes +[0-9]+\$" "$T/list.out" || cat "$T/list.out"
k host check viassh > "$T/check.out" 2>&1
check "host check viassh: its capabilities' facts" \
	sh -c 'grep -q "^host viassh (qemu+ssh://" "$1" && grep -Eq "^.. kvm " "$1" && grep -Eq "^.. numa " "$1"' - "$T/check.out" ||
	cat "$T/check.out"

sed -e 's/^runtime:.*/runtime: 2s/' -e 's/^repeat:.*/repeat: 1/' \
	"$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml" > "$T/job.yaml"
if k run --job "$T/job.yaml" --kernel "$KBZIMAGE" --host viassh > "$T/run.out" 2>&1; then
	ok "klab run --host viassh: the guest booted over ssh and produced its KPI"
else
	fail "klab run --host viassh failed"; cat "$T/run.out"
fi
host_id=$(q "SELECT id FROM hosts WHERE name = 'viassh'")
check "the boot is ok, stored under viassh, with a fingerprint" \
	test "$(q "SELECT outcome || ':' || host_id || ':' || (fingerprint IS NOT NULL) FROM boots WHERE run_set_id = 1")" = "ok:$host_id:1"
check "the run set names the ssh URI" test "$(q "SELECT uri FROM run_sets WHERE id = 1")" = "$SURI"
check "the kernel is a volume of pool klab" sh -c 'virsh -q -c "$1" vol-list klab | grep -q "bzImage-"' - "$SURI"

stop_sshd
timeout 60 "$KLAB" --state "$lab" run --job "$T/job.yaml" --kernel "$KBZIMAGE" --host viassh > "$T/gone.out" 2>&1
rc=$?
check "sshd gone: a run there fails at once (exit $rc), saying the host does not answer" \
	sh -c '[ "$2" -eq 1 ] && grep -q "no host answers: viassh (does not answer)" "$1"' - "$T/gone.out" "$rc" ||
	cat "$T/gone.out"
boots_summary
finish
