#!/bin/sh
# Real kernel builds of Debian's 6.1 tree with the shipped fragments:
# cold build (shared through ccache across runs), artifact store hits,
# a commit with a syntax error, config drift, an interrupted build, the
# compiler wrapper, gc, and a bisection with --build that skips the
# broken commit and finds a scripted culprit.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
# The shared guest kernel first (one build under a lock, filling the shared
# ccache), so this test and t-guest do not compile the same tree twice side
# by side when make check runs them in parallel.
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
# its builds keep both CPUs busy: a test that needs them to itself waits
guest_cpus_lock shared

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
sed -i "s|^ccache_dir =.*|ccache_dir = $KCCACHE|" "$lab/klab.conf"

# A history on top of the imported tree (a clone that borrows its objects).
git clone -q --shared "$KTREE" "$T/linux"
cd "$T/linux"
commit() { git add -A && git commit -q -m "$1"; git rev-parse HEAD; }
base=$(git rev-parse HEAD)
sed -i '1a /* klab test: a harmless comment */' mm/mmap.c
c_comment=$(commit "mm: a comment")
bad_line=$(($(wc -l < kernel/fork.c) + 1))
echo 'int klab_broken_build = ;' >> kernel/fork.c
c_broken=$(commit "fork: a commit that does not build")
git checkout -q "$c_comment" -- kernel/fork.c
c_fixed=$(commit "fork: fix the build")
printf '\nnoinline void klab_planted_culprit(void) { }\n' >> mm/mmap.c
c_culprit=$(commit "mm: the planted culprit")
# (a header a handful of files include: one that every file includes made
# each bisection step that crosses it recompile the whole kernel from
# ccache, minutes of CI on 2 CPUs)
sed -i '1a /* klab test: a comment in a header a few files include */' include/linux/khugepaged.h
c_top=$(commit "khugepaged.h: a comment")
cd "$KLAB_SRCDIR"
check "syntax error inserted" test -n "$bad_line"

# 1. the base kernel (cold the first time on a machine, then ccache)
out=$(k build --repo "$T/linux" --rev "$base" 2>&1); rc=$?
check "base builds" test "$rc" -eq 0
kernel=$(echo "$out" | sed -n 's/^kernel: *//p')
check "bzImage in the artifact store" test -s "$kernel"
adir=$(dirname "$kernel")
check "artifact has config, System.map, build log" test -s "$adir/config" -a -s "$adir/System.map" -a -s "$adir/build.log"
# the kernel's source set (issue 19), from the build's .cmd files
for f in mm/mmap.c kernel/fork.c include/linux/mm.h arch/x86/entry/syscalls/syscall_64.tbl; do
	grep -qx "$f" "$adir/sources.txt" && ok "sources.txt names $f" || fail "sources.txt lacks $f"
done
check "sources.txt names only paths of the tree" sh -c "! grep -Eq '^/|^\\.\\./|^\\.klab-build|^Documentation/' '$adir/sources.txt'"
tree=$(git -C "$T/linux" rev-parse "$base^{tree}")
case $adir in "$lab/artifacts/$tree-"*) ok "artifact keyed by tree id";; *) fail "artifact dir $adir";; esac
for sym in CONFIG_64BIT=y CONFIG_SMP=y CONFIG_NUMA=y CONFIG_TRANSPARENT_HUGEPAGE=y CONFIG_VIRTIO_CONSOLE=y \
	   CONFIG_SERIAL_8250_CONSOLE=y CONFIG_HUGETLBFS=y CONFIG_PERF_EVENTS=y CONFIG_VM_EVENT_COUNTERS=y; do
	grep -qx "$sym" "$adir/config" && ok "config has $sym" || fail "config lacks $sym"
done
check "final config and its hash stored" test "$(q "select count(*) from builds where status='ok' and length(config_hash)=40 and config_text like '%CONFIG_64BIT=y%'")" -ge 1
grep -q 'CCACHE_DIR=\|CC=ccache gcc' "$adir/build.log" && ok "make ran with ccache" || fail "ccache not in build log"

# 2. the same request again: a cache hit without a checkout or make
t0=$(date +%s%N)
out=$(k build --repo "$T/linux" --rev "$base" 2>&1); rc=$?
t1=$(date +%s%N)
check "second build exits 0" test "$rc" -eq 0
case $out in *"cache hit"*) ok "second build is a cache hit ($(( (t1 - t0) / 1000000 )) ms)";; *) fail "no cache hit: $out";; esac
git -C "$T/linux" tag same-tree "$base"
git -C "$T/linux" commit-tree -m "same tree, other commit" -p "$base" "$tree" > "$T/other"
out=$(k build --repo "$T/linux" --rev "$(cat "$T/other")" 2>&1)
case $out in *"cache hit"*) ok "another commit with the same tree is a cache hit";; *) fail "same tree rebuilt: $out";; esac

# 3. a commit that does not build
out=$(k build --repo "$T/linux" --rev "$c_broken" 2>&1); rc=$?
check "broken commit exits 1" test "$rc" -eq 1
case $out in *"build:      build-failed"*) ok "status build-failed";; *) fail "status: $out";; esac
case $out in *"kernel/fork.c:$bad_line:"*"error:"*) ok "error names kernel/fork.c:$bad_line";; *) fail "error excerpt: $out";; esac
check "excerpt stored" test "$(q "select count(*) from builds where status='build-failed' and error_excerpt like 'kernel/fork.c:$bad_line:%'")" = 1
out=$(k build --repo "$T/linux" --rev "$c_broken" 2>&1)
case $out in *"cache hit"*"build-failed"*|*"build-failed"*"cache hit"*) ok "a failed build is not retried";; *) fail "failed build retried: $out";; esac

# 4. config drift: a symbol Kconfig drops is named
out=$(k build --repo "$T/linux" --rev "$base" --config-option CONFIG_KVM_INTEL=y --config-option CONFIG_NR_CPUS=99999 2>&1); rc=$?
check "drift refuses the build" test "$rc" -eq 1
case $out in *"CONFIG_KVM_INTEL: asked y (--config-option), Kconfig dropped it"*) ok "dropped symbol reported by name";; *) fail "drift: $out";; esac
case $out in *"CONFIG_NR_CPUS: asked 99999"*) ok "changed symbol reported by name";; *) fail "drift 2: $out";; esac
echo "CONFIG_NO_SUCH_SYMBOL_KLAB=y" > "$T/bogus.config"
out=$(k build --repo "$T/linux" --rev "$base" --fragment "$T/bogus.config" 2>&1); rc=$?
case $out in *"CONFIG_NO_SUCH_SYMBOL_KLAB: asked y ($T/bogus.config:1)"*) ok "fragment drift names file:line";; *) fail "fragment drift: $out";; esac
echo "NOT A CONFIG LINE" > "$T/junk.config"
err=$(k build --repo "$T/linux" --rev "$base" --fragment "$T/junk.config" 2>&1); rc=$?
case $err in *"junk.config:1: expected"*) ok "malformed fragment: file:line";; *) fail "junk fragment: $err";; esac

# 5. interrupt a build at a random moment, then build again
delay=$(awk 'BEGIN { srand(); printf "%.1f", 2 + rand() * 6 }')
"$KLAB" --state "$lab" build --quiet --repo "$T/linux" --rev "$c_culprit" >/dev/null 2>&1 &
pid=$!
sleep "$delay"
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
echo "# killed the build after ${delay}s"
check "no half artifact left under its final name" sh -c "! ls -d '$lab'/artifacts/$(git -C "$T/linux" rev-parse "$c_culprit^{tree}")-* 2>/dev/null | grep -q . || test -s '$lab'/artifacts/$(git -C "$T/linux" rev-parse "$c_culprit^{tree}")-*/bzImage"
out=$(k build --repo "$T/linux" --rev "$c_culprit" 2>&1); rc=$?
check "rebuild after the kill succeeds" test "$rc" -eq 0
kernel=$(echo "$out" | sed -n 's/^kernel: *//p')
grep -q klab_planted_culprit "$(dirname "$kernel")/System.map" && ok "the artifact is the interrupted commit's kernel" || fail "System.map lacks the culprit symbol"
check "no temp artifacts left" sh -c "! ls -d '$lab'/artifacts/.tmp-* 2>/dev/null | grep -q ."

# 6. the compiler wrapper (distcc/icecc) is what make's compiler runs through
cat > "$T/fake-distcc" <<EOS
#!/bin/sh
echo "\$*" >> "$T/wrapper.log"
exec "\$@"
EOS
chmod +x "$T/fake-distcc"
sed -i "s|^compiler_wrapper =.*|compiler_wrapper = $T/fake-distcc|" "$lab/klab.conf"
# a change no earlier run compiled, so ccache must really compile it
cd "$T/linux"
git checkout -q -b wrapper-probe "$base"
echo "int klab_wrapper_probe_$(date +%s%N)_$$;" >> mm/mmap.c
c_wrap=$(commit "mm: something only this run compiles")
git checkout -q main 2>/dev/null || git checkout -q "$c_top"
cd "$KLAB_SRCDIR"
out=$(k build --repo "$T/linux" --rev "$c_wrap" 2>&1); rc=$?
check "build through the wrapper succeeds" test "$rc" -eq 0
grep -q "gcc.*mm/mmap.c" "$T/wrapper.log" 2>/dev/null && ok "the wrapper compiled mm/mmap.c" || fail "wrapper not used: $(head -3 "$T/wrapper.log" 2>/dev/null)"
# (ccache in depend mode: a miss compiles once, no preprocessing first)
check "ccache ran in depend mode" grep -q "CCACHE_DEPEND=1" \
	"$(q "select artifact_dir from builds where commit_hash = '$c_wrap' and status = 'ok'")/build.log"
sed -i "s|^compiler_wrapper =.*|compiler_wrapper =|" "$lab/klab.conf"

# 7. bisection with --build: the broken commit is skipped with its error
cat > "$T/test.sh" <<'EOS'
#!/bin/sh
# good while the kernel lacks the planted function
test -s "$KLAB_KERNEL" || exit 200
! grep -q klab_planted_culprit "$KLAB_SYSTEM_MAP"
EOS
chmod +x "$T/test.sh"
out=$(k bisect start --build --repo "$T/linux" --good "$base" --bad "$c_top" -- "$T/test.sh" 2>&1); rc=$?
check "bisection with builds succeeds" test "$rc" -eq 0
case $out in *"$c_culprit is the first bad commit"*) ok "culprit found";; *) fail "bisect --build: $out";; esac
id=$(q "select max(id) from bisections")
r=$(q "select reason from steps where bisection_id=$id and hash='$c_broken'")
case $r in "build failed: kernel/fork.c:$bad_line:"*) ok "broken commit skipped: $r";; "") ok "broken commit not needed by the search";; *) fail "broken step reason: $r";; esac
check "no step is both built and failed" test "$(q "select count(*) from steps where bisection_id=$id and status!='done'")" = 0

# 9. every image its commit's (issue 44): two kernels that differ in two
# bytes of a string and whose compressed payloads are the same size (two
# characters swapped: the same letters, so the same Huffman code, found by
# trying), built one after the other in one build directory.  ccache's
# depend mode handed back the first piggy.o (its source holds only the
# sizes) and the second image carried the first kernel.
# payload IMAGE [MARK]: the size of the image's compressed kernel, or
# whether the kernel inside holds MARK (gzip, klab's recipe's compression)
payload() {
	python3 - "$@" <<'PY'
import sys, zlib
img = open(sys.argv[1], 'rb').read()
pm = ((img[0x1f1] or 4) + 1) * 512
off = pm + int.from_bytes(img[0x248:0x24c], 'little')
n = int.from_bytes(img[0x24c:0x250], 'little')
if len(sys.argv) == 2:
    print(n)
    sys.exit(0)
data = img[off:off + n]
if data[:2] != b'\x1f\x8b':
    sys.exit('payload is not gzip')
kernel = zlib.decompressobj(31).decompress(data)
sys.exit(0 if sys.argv[2].encode() in kernel else 1)
PY
}
mark=klab-image-mark-q7Zx3Wv9Lk2Pm8Rt5Yh1Nb6Cd4Fg0Js
cd "$T/linux"
git checkout -q -b identity-probe "$base"
printf '\nconst char klab_image_mark[] = "%s";\n' "$mark" >> init/main.c
c_mark=$(commit "init: an image mark")
cd "$KLAB_SRCDIR"
img_a=$(k build --repo "$T/linux" --rev "$c_mark" 2>&1 | sed -n 's/^kernel: *//p')
size_a=$(payload "$img_a")
same=""
for i in 17 19 21 23 25 27 29 31 33; do
	swapped=$(echo "$mark" | sed -E "s/^(.{$i})(.)(.)/\1\3\2/")
	cd "$T/linux"
	git checkout -q identity-probe
	git checkout -q -B identity-try "$c_mark"
	sed -i "s/$mark/$swapped/" init/main.c
	c_try=$(commit "init: the image mark, two letters swapped at $i")
	cd "$KLAB_SRCDIR"
	img_b=$(k build --repo "$T/linux" --rev "$c_try" 2>&1 | sed -n 's/^kernel: *//p')
	size_b=$(payload "$img_b")
	echo "# swap at $i: payload $size_b bytes, the first $size_a"
	if [ -n "$size_b" ] && [ "$size_b" = "$size_a" ]; then same=$swapped; break; fi
done
check "two commits whose compressed kernels are the same size ($size_a bytes)" test -n "$same"
check "their images differ" sh -c "! cmp -s '$img_a' '$img_b'"
check "the first image holds the first commit's kernel" payload "$img_a" "$mark"
check "the second image holds the second commit's kernel" payload "$img_b" "$same"
payload "$img_b" "$mark" && fail "the second image carries the first commit's kernel" ||
	ok "the second image does not carry the first commit's kernel"
va=$(sed -n 's/^vmlinux sha256://p' "$(dirname "$img_a")/identity")
vb=$(sed -n 's/^vmlinux sha256://p' "$(dirname "$img_b")/identity")
check "each artifact carries its verified vmlinux hash" test -n "$va" -a -n "$vb" -a "$va" != "$vb"
# a damaged image is built again, never booted
printf 'Z' | dd of="$img_b" bs=1 seek=4096 conv=notrunc 2>/dev/null
out=$(k build --repo "$T/linux" --rev "$c_try" 2>&1); rc=$?
case $out in *"is damaged"*"building it again"*) ok "a damaged image is noticed";; *) fail "damage not seen: $out";; esac
case $rc:$out in 0:*"cache hit"*) fail "the damaged image was used: $out";; 0:*) ok "... and built again";; *) fail "rebuild: $out";; esac
out=$(k gc --verify 2>&1)
case $out in *" 0 without identity, 0 damaged"*) ok "gc --verify: the store is sound";; *) fail "gc --verify: $out";; esac

# 8. gc keeps the newest artifacts
n_before=$(ls -d "$lab"/artifacts/*/ | wc -l)
out=$(k gc --keep-last 2 --dry-run)
check "gc --dry-run removes nothing" test "$(ls -d "$lab"/artifacts/*/ | wc -l)" -eq "$n_before"
k gc --keep-last 2 >/dev/null
check "gc --keep-last 2 leaves 2 artifacts (had $n_before)" test "$(ls -d "$lab"/artifacts/*/ | wc -l)" -eq 2
check "integrity of the database" test "$(q 'PRAGMA integrity_check')" = ok
finish
