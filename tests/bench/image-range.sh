#!/bin/sh
# Benchmark (issue 44): a range where every commit changes the kernel
# image, bisected for a planted regression.  Twelve commits on the trust
# history's good end (tests/demo/make-trust-history.sh) each rewrite one
# string of init/main.c to another of the same length and letters, so
# that neighbouring kernels often compress to the same size: the case in
# which ccache's depend mode handed back an earlier kernel's piggy.o and
# klab confirmed a harmless commit.  The seventh commit also plants the
# mmapaddr spin (100000 compiler barriers on every munmap(), about -40%
# on stress-ng mmapaddr under TCG).
#
# Prints how many neighbouring kernels have payloads of the same size,
# that every image carries its own commit's kernel (the mark read out of
# each decompressed payload), the bisection's steps and its culprit.
# Exits 1 when a check fails.  Not in `make check`: 12 incremental
# kernel builds (about 40 s each here) and about 15 minutes of guests.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="klab bench" GIT_AUTHOR_EMAIL=bench@klab.invalid GIT_COMMITTER_NAME="klab bench" \
	GIT_COMMITTER_EMAIL=bench@klab.invalid
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
. "$KLAB_SRCDIR/tests/trust-kernels.sh"
. "$KLAB_SRCDIR/tests/bench/bench-lab.sh"
bench_lab image-range "$KTRUST"

# mark N: the string of commit N, a permutation of the same 24 letters
mark() {
	python3 -c "import random, sys; r = random.Random(int(sys.argv[1])); s = list('q7Zx3Wv9Lk2Pm8Rt5Yh1Nb6C'); r.shuffle(s); print('klab-mark-' + ''.join(s))" "$1"
}
cd "$B/linux"
git checkout -q -b image-range two-good
printf '\nconst char klab_image_mark[] = "%s";\n' "$(mark 0)" >> init/main.c
git commit -qam "init: an image mark"
good=$(git rev-parse HEAD)
prev=$(mark 0)
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do
	next=$(mark "$n")
	sed -i "s/$prev/$next/" init/main.c
	if [ "$n" = 7 ]; then
		python3 - <<'PY'
s = open("mm/mmap.c").read()
old = "SYSCALL_DEFINE2(munmap, unsigned long, addr, size_t, len)\n{\n\taddr = untagged_addr(addr);\n"
new = ("static noinline __aligned(64) void munmap_spin(unsigned long n)\n{\n\twhile (n--)\n\t\tbarrier();\n}\n\n"
       "SYSCALL_DEFINE2(munmap, unsigned long, addr, size_t, len)\n{\n\tmunmap_spin(100000);\n\taddr = untagged_addr(addr);\n")
assert s.count(old) == 1
open("mm/mmap.c", "w").write(s.replace(old, new))
PY
		git commit -qam "mm/mmap: spin on every munmap (planted), and the mark $n"
		planted=$(git rev-parse HEAD)
	else
		git commit -qam "init: the image mark $n"
	fi
	prev=$next
done
bad=$(git rev-parse HEAD)
cd "$KLAB_SRCDIR"

# payload IMAGE: "SIZE MARK" of the image's compressed kernel
payload() {
	python3 - "$1" <<'PY'
import re, sys, zlib
img = open(sys.argv[1], 'rb').read()
pm = ((img[0x1f1] or 4) + 1) * 512
off = pm + int.from_bytes(img[0x248:0x24c], 'little')
n = int.from_bytes(img[0x24c:0x250], 'little')
k = zlib.decompressobj(31).decompress(img[off:off + n])
m = re.search(rb'klab-mark-[0-9A-Za-z]{24}', k)
print(n, m.group(0).decode() if m else '-')
PY
}
fail=0 same=0 last=
n=0
for c in $(git -C "$B/linux" rev-list --reverse "$good^..$bad"); do
	img=$("$KLAB" --state "$lab" build --repo "$B/linux" --rev "$c" 2>/dev/null | sed -n 's/^kernel: *//p')
	set -- $(payload "$img")
	want=$(mark "$n")
	[ "$2" = "$want" ] || { echo "commit $n: its image carries $2, not $want"; fail=1; }
	[ "$1" != "$last" ] || same=$((same + 1))
	last=$1
	n=$((n + 1))
done
echo "bench: 13 kernels, $same neighbouring pairs with payloads of the same size; every image carries its own commit's mark: $([ "$fail" = 0 ] && echo yes || echo NO)"

sed -e 's/^runtime:.*/runtime: 3s/' "$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml" > "$B/mmapaddr.yaml"
echo 'profile_runs: 0' >> "$B/mmapaddr.yaml"
t0=$(date +%s)
rc=0
"$KLAB" --state "$lab" bisect start --repo "$B/linux" --good "$good" --bad "$bad" --job "$B/mmapaddr.yaml" \
	> "$B/bisect.out" 2>&1 || rc=$?
grep -E "regression reproduced|not reproduced|^step [0-9]+:|identical-kernel|confirmed: parent|^revert check|^bisection" \
	"$B/bisect.out" | cut -c1-200
echo "exit $rc after $(($(date +%s) - t0)) s"
result=$(q "SELECT result || ':' || coalesce(culprit, '') FROM bisections WHERE id = 1")
if [ "$result" = "culprit:$planted" ]; then
	echo "image-range: the planted commit, confirmed"
else
	echo "image-range: not the planted commit: $result (planted $planted)"
	fail=1
fi
exit "$fail"
