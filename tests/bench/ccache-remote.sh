#!/bin/sh
# Benchmark: a compile cache shared by machines (issue 43): ccache_remote
# = redis://127.0.0.1:PORT, a redis-server of this benchmark's own on
# loopback.  Lab A builds Debian's 6.1 kernel with an empty ccache of its
# own (cold: every compile runs and goes to Redis too); lab B, with
# another empty local ccache, builds the same commit: its first build
# should come from Redis.  Prints the share of lab B's compiles that were
# remote hits (klab build's "compiles:" line, from ccache's stats log) and
# B's build time against A's cold one.  Never fails on time.
#   KLAB_BENCH_WARM=1: lab A takes the shared test ccache (warm) with
#   CCACHE_RESHARE instead of building cold (minutes instead of ~10-12:
#   then A's time is no cold build and only B's share means anything).
BENCH=ccache-remote
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/bench/kernel-bench.sh"
PORT=$((20000 + $$ % 20000))
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
	--pidfile "$B/redis.pid" --logfile "$B/redis.log" --dir "$B" >/dev/null
trap 'kill "$(cat "$B/redis.pid")" 2>/dev/null; rm -rf "$B"' EXIT
i=0
while ! redis-cli -p "$PORT" ping >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

ms() { date +%s%N | cut -c1-13; }
lab_with() {	# STATE CCACHE_DIR
	[ -d "$1" ] || "$KLAB" --state "$1" init >/dev/null
	printf 'ccache_dir = %s\nccache_remote = redis://127.0.0.1:%s\n' "$2" "$PORT" >> "$1/klab.conf"
}
build() {	# STATE OUT -> milliseconds
	t0=$(ms)
	"$KLAB" --state "$1" build --repo "$KTREE" --rev HEAD > "$2" 2>&1 || { cat "$2"; exit 1; }
	echo $(( $(ms) - t0 ))
}
lab_with "$B/lab" "$B/a-ccache"
lab_with "$B/b" "$B/b-ccache"
if [ "${KLAB_BENCH_WARM:-0}" = 1 ]; then
	sed -i "s|^ccache_dir = $B/a-ccache|ccache_dir = $KCCACHE|" "$B/lab/klab.conf"
	export CCACHE_RESHARE=1
fi
ta=$(build "$B/lab" "$B/a.out")
unset CCACHE_RESHARE
tb=$(build "$B/b" "$B/b.out")
echo "lab A ($([ "${KLAB_BENCH_WARM:-0}" = 1 ] && echo 'warm local ccache, reshared' || echo cold)): $(grep '^compiles:' "$B/a.out"), $(awk "BEGIN{printf \"%.1f\", $ta/1000}") s"
echo "lab B (empty local ccache, Redis): $(grep '^compiles:' "$B/b.out"), $(awk "BEGIN{printf \"%.1f\", $tb/1000}") s"
set -- $(grep '^compiles:' "$B/b.out" | sed 's/[^0-9 ]//g')
awk -v n="${1:-0}" -v r="${3:-0}" -v ta="$ta" -v tb="$tb" 'BEGIN {
	printf "remote hit share of lab B'"'"'s first build: %d of %d (%.1f%%); B/A time %.2f\n", r, n, n ? 100 * r / n : 0, ta ? tb / ta : 0 }'
echo "Redis: $(redis-cli -p "$PORT" dbsize) keys, $(redis-cli -p "$PORT" info memory | sed -n 's/^used_memory_human:\(.*\)\r*$/\1/p' | tr -d '\r') used"
