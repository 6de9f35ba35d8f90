#!/bin/sh
# Benchmark (issue 41): the build of a commit whose one change is a
# comment in include/linux/mm.h, over the build of its parent, with
# klab's shortcut (the file keeps its old mtime: kernel/kkeep.h) and
# without it (klab.conf comment_only_files = rebuild: make recompiles
# every object that includes mm.h).  Each comment carries a word no
# earlier run wrote, so ccache misses as on a real range (depend mode
# hashes the header's bytes).  Prints build time and objects compiled
# side by side with their ratio, and whether the two images are byte for
# byte the same.  The base build comes from the shared ccache (cold the
# first time on a machine).  Never fails on time.
BENCH=header-comment
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/bench/kernel-bench.sh"
sed -i "s|^ccache_dir =.*|ccache_dir = $KCCACHE|" "$B/lab/klab.conf"
git clone -q --shared "$KTREE" "$B/linux"
ms() { date +%s%N | cut -c1-13; }
# build REV: $t (ms), $objects, $kernel
build() {
	t0=$(ms)
	"$KLAB" --state "$B/lab" build --repo "$B/linux" --rev "$1" > "$B/out" 2>&1 || { cat "$B/out"; exit 1; }
	t=$(($(ms) - t0))
	objects=$(sed -n 's/^compiled: *\([0-9]*\) object.*/\1/p' "$B/out")
	kernel=$(sed -n 's/^kernel: *//p' "$B/out")
	sed -n 's/^compiled: */    /p' "$B/out"
}
sec() { awk "BEGIN{printf \"%.1f\", $1/1000}"; }
base=$(git -C "$B/linux" rev-parse HEAD)
nonce=$(date +%s%N)
comment() {	# comment REV WORD: a commit on REV whose change is a word in mm.h's first comment
	git -C "$B/linux" checkout -q "$1"
	sed -i "1s|GPL-2.0 \*/|GPL-2.0 (bench $2) */|" "$B/linux/include/linux/mm.h"
	git -C "$B/linux" commit -qam "mm.h: comment $2"
	git -C "$B/linux" rev-parse HEAD
}
echo "header-comment benchmark: $(nproc) CPUs, $(gcc --version | head -n1), ccache $(ccache --version | head -n1 | awk '{print $3}')"
build "$base"
echo "base build (shared ccache): $(sec "$t") s, $objects objects"

with=$(comment "$base" "a-$nonce")
build "$with"
t_with=$t o_with=$objects k_with=$kernel
echo "with the shortcut:    $(sec "$t_with") s, $o_with objects compiled"

# the same edit without it, over the build the shortcut left (the base's
# objects, the other word in the comment)
sed -i 's|^comment_only_files =.*|comment_only_files = rebuild|' "$B/lab/klab.conf"
without=$(comment "$base" "b-$nonce")
build "$without"
t_without=$t o_without=$objects k_without=$kernel
echo "without the shortcut: $(sec "$t_without") s, $o_without objects compiled"

same=no
cmp -s "$k_with" "$k_without" && same=yes
echo "| step build of a comment in mm.h | without | with | ratio |"
echo "| --- | --- | --- | --- |"
echo "| time | $(sec "$t_without") s | $(sec "$t_with") s | $(awk "BEGIN{printf \"%.1f\", $t_without/($t_with > 0 ? $t_with : 1)}")x |"
if [ "$o_with" -gt 0 ]; then
	echo "| objects compiled | $o_without | $o_with | $(awk "BEGIN{printf \"%.0f\", $o_without/$o_with}")x |"
else
	echo "| objects compiled | $o_without | 0 | none compiled |"
fi
echo "images byte for byte the same: $same"
