#!/bin/sh
# Benchmark: does a second repository in a lab compile what the first
# one already compiled?  (issue 19: "the same sources compile once per
# lab, in any repository")  Prints figures; never fails on time.
#   repository A: Debian's 6.1 tree (the shared import), built cold with
#     an empty ccache of this benchmark's own;
#   repository B: another repository at another path (its own git
#     directory, so klab gives it its own worktree repo-2 and build
#     directory) whose head is A's tree plus a commit that changes only
#     Documentation/, so the artifact store misses (another tree id) while
#     every compiled source is the same: B's first build should be all
#     ccache hits;
#   then B after a one-line change in mm/mmap.c: an incremental build
#     whose config step is skipped.
# The figure: ccache's hit rate over B's first build (ccache --print-stats
# after ccache -z).  Target >= 95 %.
# About 10 minutes here (the cold build of A), then a minute or two.
BENCH=ccache-repos
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/bench/kernel-bench.sh"
export CCACHE_DIR="$B/ccache"
sed -i "s|^ccache_dir =.*|ccache_dir = $CCACHE_DIR|" "$B/lab/klab.conf"
mkdir -p "$CCACHE_DIR"
# no size-based cleanup during the benchmark (a cold 6.1 build is ~50 MB)
ccache -M 5G >/dev/null

ms() { date +%s%N | cut -c1-13; }
sec() { awk "BEGIN{printf \"%.1f\", $1/1000}"; }
build() {	# repo rev -> milliseconds; klab's output in $B/out
	t0=$(ms)
	"$KLAB" --state "$B/lab" build --repo "$1" --rev "$2" > "$B/out" 2>&1 || { cat "$B/out"; exit 1; }
	echo $(( $(ms) - t0 ))
}
stat_of() { ccache --print-stats | awk -v k="$1" '$1 == k { print $2 }'; }
hit_rate() {	# "hits of compiles (percent)" since the last ccache -z
	h=$(( $(stat_of direct_cache_hit) + $(stat_of preprocessed_cache_hit) ))
	m=$(stat_of cache_miss)
	awk -v h="$h" -v m="$m" 'BEGIN { t = h + m; printf "%d of %d compiles (%.1f%%)", h, t, t ? 100 * h / t : 0 }'
}

# A: a clone that borrows the import's objects
git clone -q --shared "$KTREE" "$B/a"
# B: another repository of the same content, with a history of its own
git clone -q --shared "$KTREE" "$B/b"
echo "klab bench: a second repository" >> "$B/b/Documentation/process/howto.rst"
git -C "$B/b" commit -qam "Documentation: a change no build compiles"

echo "klab ccache across repositories: $(nproc) CPUs, $(gcc --version | head -n1), ccache $(ccache --version | head -n1 | awk '{print $3}')"
ccache -z >/dev/null
t=$(build "$B/a" HEAD)
echo "A, cold (empty ccache):          $(sec "$t") s, ccache $(hit_rate); $(grep -o '[0-9]* objects compiled' "$B/out" | head -n1)"

ccache -z >/dev/null
t=$(build "$B/b" HEAD)
echo "B, first build (same sources):   $(sec "$t") s, ccache $(hit_rate) (target >= 95%); $(grep -o '[0-9]* objects compiled' "$B/out" | head -n1)"

sed -i 's|^\(\s*\)unsigned long retval;$|\1unsigned long retval; /* bench */|' "$B/b/mm/mmap.c"
git -C "$B/b" commit -qam "mmap: one line"
ccache -z >/dev/null
t=$(build "$B/b" HEAD)
skipped=no
grep -q 'config step skipped' "$B/out" && skipped=yes
echo "B, one line in mm/mmap.c:        $(sec "$t") s, ccache $(hit_rate); config step skipped: $skipped"
