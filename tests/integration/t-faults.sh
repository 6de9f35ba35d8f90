#!/bin/sh
# A full disk, for real: the lab on a small tmpfs that runs out during a
# checkout, during a database write, during make and during an artifact
# copy.  Each
# time: one clear error line, and once space is back the bisection
# resumes (or starts again) and names the right culprit; a build's marker
# never outlives the build.  Needs root (mount); skips otherwise.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

disk="$T/disk"
mkdir "$disk"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=2m tmpfs "$disk" 2>/dev/null; then
	echo "# skip: mounting a tmpfs needs root"
	rm -rf "$T"
	exit 77
fi
trap 'umount "$disk" 2>/dev/null' EXIT
lab="$disk/lab"
# fill DISK, leaving about KB kilobytes free
fill() {
	avail=$(df -k --output=avail "$disk" | tail -n1)
	dd if=/dev/zero of="$disk/fill" bs=1k count=$((avail - $1)) 2>/dev/null
}
k init >/dev/null

# 16 commits; from commit 11 on a file 'bug' and a 400 kB 'zbig' (written
# after 'bug' by a checkout, so a checkout that runs out of space has
# written 'bug' already)
repo="$T/repo"
git init -q "$repo"
for i in $(seq 1 16); do
	echo "$i" > "$repo/value"
	if [ "$i" -eq 11 ]; then
		echo yes > "$repo/bug"
		head -c 300000 /dev/urandom | base64 > "$repo/zbig"
	fi
	git -C "$repo" add -A
	git -C "$repo" commit -qm "commit $i"
	[ "$i" -eq 1 ] && git -C "$repo" tag good
done
git -C "$repo" branch -q -M main
culprit=$(git -C "$repo" log --format=%H --grep='^commit 11$')
cat > "$T/test.sh" <<EOF
#!/bin/sh
# at step \$FILL_AT, fill the disk before the verdict is stored
if [ "\${FILL_AT:-0}" = "\$KLAB_STEP" ]; then
	dd if=/dev/zero of="$disk/fill" bs=4k 2>/dev/null
fi
test ! -e bug
EOF
chmod +x "$T/test.sh"

# ---- ENOSPC during a checkout ----------------------------------------------
# step 1 (commit 8, small) checks out; step 2 (commit 12) runs out in zbig
fill 250
k bisect start --repo "$repo" --good good --bad main -- "$T/test.sh" > "$T/co.out" 2> "$T/co.err"; rc=$?
check "checkout on a full disk: non-zero exit" test "$rc" -ne 0
check "checkout on a full disk: one line says so" \
	test "$(grep -c "^klab: error: cannot check out '[0-9a-f]*': .*No space left on device" "$T/co.err")" -eq 1
check "the failed checkout left 'bug' behind (the case that misled)" test -e "$lab/worktrees/repo-1/bug"
rm -f "$disk/fill"
# the same bisection again: its first commit (8) must not see that 'bug'
k bisect start --repo "$repo" --good good --bad main -- "$T/test.sh" > "$T/co2.out" 2> "$T/co2.err"; rc=$?
check "started again with space back: exit 0" test "$rc" -eq 0
check "started again: the right culprit" grep -q "^$culprit is the first bad commit" "$T/co2.out"
check "started again: it says the worktree is checked out afresh" grep -q "did not finish: checking" "$T/co2.err"
k bisect resume 1 > "$T/co3.out" 2>&1; rc=$?
check "the stopped one resumes: exit 0" test "$rc" -eq 0
check "resumed: the right culprit" grep -q "^$culprit is the first bad commit" "$T/co3.out"

# ---- ENOSPC during a database write ----------------------------------------
# the test of step 2 fills the disk: its verdict cannot be stored
rm -f "$disk/fill"
FILL_AT=2 k bisect start --repo "$repo" --good good --bad main -- "$T/test.sh" > "$T/db.out" 2> "$T/db.err"; rc=$?
check "database full: non-zero exit" test "$rc" -ne 0
check "database full: the error says so" grep -q "^klab: error: database: .*disk is full" "$T/db.err"
rm -f "$disk/fill"
id=$(q "SELECT max(id) FROM bisections")
k bisect resume "$id" > "$T/db2.out" 2>&1; rc=$?
check "database full, space back: resume exits 0" test "$rc" -eq 0
check "database full: the right culprit" test "$(q "SELECT culprit FROM bisections WHERE id = $id")" = "$culprit"
check "database full: no commit has two finished steps" \
	test "$(q "SELECT count(*) FROM (SELECT hash FROM steps WHERE bisection_id = $id AND status = 'done' GROUP BY hash HAVING count(*) > 1)")" -eq 0
check "integrity_check ok" test "$(q 'PRAGMA integrity_check')" = ok

# ---- ENOSPC during an artifact copy, and a compile error -------------------
# A stand-in for a kernel tree: the make targets klab's build runs, writing
# into O=; KLAB_TEST_FILL fills the disk once the image is built.
kern="$T/kern"
git init -q "$kern"
cat > "$kern/Makefile" <<'EOF'
tinyconfig:
	@echo 'CONFIG_FAKE=y' > $(O)/.config
olddefconfig:
	@true
bzImage:
	@mkdir -p $(O)/arch/x86/boot
	@echo '  CC      init/main.o'
	@if [ -e broken.c ]; then echo 'broken.c:1:1: error: expected declaration'; exit 2; fi
	@python3 mkimage.py $(O)
	@echo 'ffffffff81000000 T _text' > $(O)/System.map
	@[ -z "$$KLAB_TEST_FILL" ] || dd if=/dev/zero of="$$KLAB_TEST_FILL" bs=4k 2>/dev/null || true
	@[ -z "$$KLAB_TEST_BIG" ] || head -c 8000000 /dev/zero > $(O)/vmlinux.o || { rm -f $(O)/vmlinux.o; exit 2; }
EOF
head -c 200000 /dev/urandom > "$kern/image"
# kbuild's layout as klab checks it after a build: the compressed kernel
# (here: image), the piggy.S that .incbins it, a vmlinux, and a bzImage
# whose setup header points at that payload
cat > "$kern/mkimage.py" <<'PY'
import os, shutil, sys
O = sys.argv[1]
c = O + '/arch/x86/boot/compressed'
os.makedirs(c, exist_ok=True)
blob = open('image', 'rb').read()
shutil.copy('image', c + '/vmlinux.bin.gz')
open(O + '/vmlinux', 'wb').write(b'vmlinux\n')
open(c + '/piggy.S', 'w').write('z_input_len = %d\n.incbin "arch/x86/boot/compressed/vmlinux.bin.gz"\n' % len(blob))
img = bytearray(1024 + 16)
img[0x1f1] = 1
img[0x202:0x206] = b'HdrS'
img[0x206:0x208] = (0x020f).to_bytes(2, 'little')
img[0x248:0x24c] = (16).to_bytes(4, 'little')
img[0x24c:0x250] = len(blob).to_bytes(4, 'little')
open(O + '/arch/x86/boot/bzImage', 'wb').write(bytes(img) + blob)
PY
git -C "$kern" add -A
git -C "$kern" commit -qm builds
echo 'int x' > "$kern/broken.c"
git -C "$kern" add -A
git -C "$kern" commit -qm broken
rm -f "$disk/fill"
KLAB_TEST_FILL="$disk/fill" k build --repo "$kern" --rev HEAD~1 --no-default-fragments --quiet \
	> "$T/b1.out" 2> "$T/b1.err"; rc=$?
check "artifact copy on a full disk: non-zero exit" test "$rc" -ne 0
check "artifact copy on a full disk: the error names the copy" \
	grep -q "^klab: error: cannot write '$lab/artifacts/.*': No space left on device" "$T/b1.err"
check "no build marker left" test -z "$(find "$lab/builds" "$lab/worktrees" -name .klab-building)"
check "no temp copy left" test -z "$(find "$lab/artifacts" -name '.tmp-*')"
rm -f "$disk/fill"
k build --repo "$kern" --rev HEAD~1 --no-default-fragments --quiet > "$T/b2.out" 2> "$T/b2.err"; rc=$?
check "space back: the build is stored" test "$rc" -eq 0
check "space back: no 'interrupted' build" test "$(grep -c interrupted "$T/b2.err")" -eq 0
check "space back: the artifact is complete" sh -c "tail -c 200000 '$(find "$lab/artifacts" -name bzImage)' | cmp -s '$kern/image' -"
k build --repo "$kern" --rev HEAD --no-default-fragments --quiet > "$T/b3.out" 2> "$T/b3.err"; rc=$?
check "a compile error: exit 1" test "$rc" -eq 1
check "a compile error: no build marker left" test -z "$(find "$lab/builds" "$lab/worktrees" -name .klab-building)"
rm -rf "$kern/broken.c"
git -C "$kern" commit -qam fixed
k build --repo "$kern" --rev HEAD --no-default-fragments --quiet > "$T/b4.out" 2> "$T/b4.err"; rc=$?
check "the next build: exit 0" test "$rc" -eq 0
check "the next build: no 'interrupted' build, nothing killed" test "$(grep -c interrupted "$T/b4.err")" -eq 0

# ---- ENOSPC during make: the build directory runs out ----------------------
# (an object of 8 MB written into O= on the 2 MB tmpfs: the write fails
# as a compiler's would, and the half-written object is deleted as the
# kernel's make deletes a failed target)
echo big > "$kern/value"
git -C "$kern" add -A
git -C "$kern" commit -qm big
arts=$(find "$lab/artifacts" -name bzImage | wc -l)
KLAB_TEST_BIG=1 k build --repo "$kern" --rev HEAD --no-default-fragments --quiet > "$T/b5.out" 2> "$T/b5.err"; rc=$?
check "make on a full disk: non-zero exit" test "$rc" -ne 0
check "make on a full disk: one klab: error line says the disk is full" grep -q "^klab: error: .*No space left on device" "$T/b5.err"
check "make on a full disk: not called the commit's failure" \
	test "$(q "SELECT status FROM builds ORDER BY id DESC LIMIT 1")" = env-failed
check "make on a full disk: no store entry" test "$(find "$lab/artifacts" -name bzImage | wc -l)" -eq "$arts"
check "make on a full disk: no build marker left" test -z "$(find "$lab/builds" "$lab/worktrees" -name .klab-building)"
k build --repo "$kern" --rev HEAD --no-default-fragments --quiet > "$T/b6.out" 2> "$T/b6.err"; rc=$?
check "make on a full disk, space back: the build is stored" test "$rc" -eq 0
check "make on a full disk, space back: one more store entry" \
	test "$(find "$lab/artifacts" -name bzImage | wc -l)" -eq $((arts + 1))

umount "$disk"
finish
