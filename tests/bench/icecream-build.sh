#!/bin/sh
# Benchmark: builds through icecream (issue 43), compiler_wrapper = icecc
# with Debian's real daemons: a scheduler of this benchmark's own, a node
# here that takes no jobs and one compiling node in a network namespace
# behind a veth pair (tests/icecream-farm.sh).  What it measures: an
# incremental kernel build of N .c files (default 30 of mm/ and kernel/,
# each given a line no earlier build compiled, so ccache misses exactly
# those) over the shared tree's warm build, once local and once through
# icecream, in one lab and one build directory, each arm its own probe
# values; printed side by side with their ratio, and the share of the
# compiles that went to the namespaced node (klab build's "icecream:"
# line).  On a 2-core machine that node shares the same cores: the ratio
# is icecream's overhead (local preprocessing, transfer, the scheduler
# holding jobs while the host looks busy), not a speed-up.  The compiler
# environment is made and sent once before timing (a standing farm has
# it).  Root only.  Never fails on time.
#   KLAB_BENCH_FILES=N   how many .c files the commit changes (default 30)
#   KLAB_BENCH_ROUNDS=R  local/icecream pairs, alternating (default 1)
BENCH=icecream-build
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/bench/kernel-bench.sh"
. "$KLAB_SRCDIR/tests/icecream-farm.sh"
files=${KLAB_BENCH_FILES:-30}
rounds=${KLAB_BENCH_ROUNDS:-1}
trap 'ice_farm_stop; rm -rf "$B"' EXIT
trap 'exit 1' INT TERM

ms() { date +%s%N | cut -c1-13; }
lab=$B/lab
sed -i "s|^ccache_dir =.*|ccache_dir = $KCCACHE|" "$lab/klab.conf"
git clone -q --shared "$KTREE" "$B/linux"
base=$(git -C "$B/linux" rev-parse HEAD)
"$KLAB" --state "$lab" build --repo "$B/linux" --rev "$base" > "$B/base.out" 2>&1 || { cat "$B/base.out"; exit 1; }
echo "base build (warm ccache, untimed): $(sed -n 's/^build: *//p' "$B/base.out")"

# N .c files of mm/ and kernel/ that the recipe compiles (their objects)
bd=$(find "$lab/worktrees" -maxdepth 2 -type d -name '.klab-build-*' | head -n 1)
list=$(cd "$bd" && find mm kernel -name '*.o' ! -name 'built-in*' ! -name '*.mod.o' 2>/dev/null | sort |
	while read -r o; do [ -f "$B/linux/${o%.o}.c" ] && echo "${o%.o}.c"; done | head -n "$files")
n=$(echo "$list" | grep -c .)
echo "changed files per commit: $n (mm/, kernel/)"

commit_probe() {	# TAG -> the commit: each listed file gets a line of its own
	git -C "$B/linux" checkout -q "$base"
	for f in $list; do echo "int klab_bench_icecc_$1_$$_$(echo "$f" | tr -c 'a-zA-Z0-9\n' _);" >> "$B/linux/$f"; done
	git -C "$B/linux" commit -q -a -m "bench: $1"
	git -C "$B/linux" rev-parse HEAD
}
build() {	# WRAPPER TAG OUT -> milliseconds
	sed -i "s|^compiler_wrapper =.*|compiler_wrapper = $1|" "$lab/klab.conf"
	c=$(commit_probe "$2")
	t0=$(ms)
	"$KLAB" --state "$lab" build --repo "$B/linux" --rev "$c" > "$3" 2>&1 || { cat "$3"; exit 1; }
	echo $(( $(ms) - t0 ))
}

ice_farm_start || { tail -n 5 "$ICE"/*.log; echo "the icecream farm did not come up" >&2; exit 1; }
# the compiler environment: made here and installed on the node once
printf 'int klab_bench_warmup;\n' > "$B/warm.c"
CCACHE_DISABLE=1 icecc gcc -c "$B/warm.c" -o "$B/warm.o"
placed0=$(grep -c 'in joblist of klab-remote' "$ICE/scheduler.log" || true)
compiled0=$(grep -c 'remote compile for file' "$ICE/remote.log" || true)
echo "farm up: scheduler $ICE_LOCAL_ADDR:$ICE_PORT, compiling node $ICE_REMOTE_ADDR (namespace $ICE_NS, -m 2), environment installed"

tl=0 ti=0 r=1
while [ $r -le "$rounds" ]; do
	t=$(build "" "local$r" "$B/local$r.out"); tl=$((tl + t))
	echo "round $r local:    $(awk "BEGIN{printf \"%.1f\", $t/1000}") s  $(grep '^compiles:' "$B/local$r.out")"
	t=$(build icecc "icecc$r" "$B/icecc$r.out"); ti=$((ti + t))
	echo "round $r icecream: $(awk "BEGIN{printf \"%.1f\", $t/1000}") s  $(grep '^compiles:' "$B/icecc$r.out")"
	echo "                   $(grep '^icecream:' "$B/icecc$r.out")"
	r=$((r + 1))
done
placed=$(grep -c 'in joblist of klab-remote' "$ICE/scheduler.log" || true)
compiled=$(grep -c 'remote compile for file' "$ICE/remote.log" || true)
set -- $(sed -n 's/^icecream: *\([0-9]*\) through icecc: \([0-9]*\) compiled remotely.*/\1 \2/p' "$B"/icecc*.out |
	awk '{c += $1; r += $2} END {print c + 0, r + 0}')
awk -v tl="$tl" -v ti="$ti" -v n="$rounds" -v c="$1" -v rm="$2" -v p="$((placed - placed0))" -v k="$((compiled - compiled0))" 'BEGIN {
	printf "local %.1f s, icecream %.1f s (mean of %d): icecream/local %.2f; remote share %d of %d icecc calls (%.0f%%); scheduler placed %d on the node, the node compiled %d\n",
		tl / n / 1000, ti / n / 1000, n, tl ? ti / tl : 0, rm, c, c ? 100 * rm / c : 0, p, k }'
