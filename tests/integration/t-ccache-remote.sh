#!/bin/sh
# ccache_remote: a compile cache shared by labs through a real
# redis-server (Debian's, on loopback, the test's own instance and port).
# Lab A builds Debian's 6.1 kernel with the shared test ccache (warm) and
# CCACHE_RESHARE, which writes its local hits to Redis too: Redis now holds
# every compile.  Lab B has a local ccache of its own, empty: its first
# build of the same commit must come from Redis (remote hits, nothing
# compiled), and 'klab build' says so in its "compiles:" line.  A bad
# ccache_remote is refused with one line.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools redis-server redis-cli ccache
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
# its builds keep both CPUs busy: a test that needs them to itself waits
guest_cpus_lock shared

PORT=$((20000 + $$ % 20000))
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
	--pidfile "$T/redis.pid" --logfile "$T/redis.log" --dir "$T" >/dev/null 7>&-	# (the daemon must not hold the CPUs lock)
i=0
while ! redis-cli -p "$PORT" ping >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
stop_redis() { [ -f "$T/redis.pid" ] && kill "$(cat "$T/redis.pid")" 2>/dev/null; }
trap stop_redis EXIT
check "redis-server answers on 127.0.0.1:$PORT" sh -c 'redis-cli -p "$1" ping >/dev/null' - "$PORT"

# a bad URL: one line, exit != 0
lab="$T/bad"
"$KLAB" --state "$lab" init >/dev/null
printf 'ccache_remote = ftp://x\n' >> "$lab/klab.conf"
k build --repo "$KTREE" --rev HEAD > "$T/bad.out" 2> "$T/bad.err"
rc=$?
check "a ccache_remote that is no ccache remote storage is refused (exit $rc, one line)" \
	sh -c '[ "$2" -ne 0 ] && [ "$(wc -l < "$1")" -eq 1 ] && grep -q "ccache_remote must be redis://" "$1"' - "$T/bad.err" "$rc" ||
	cat "$T/bad.err"

mklab() {
	"$KLAB" --state "$1" init >/dev/null
	printf 'ccache_dir = %s\nccache_remote = redis://127.0.0.1:%s\n' "$2" "$PORT" >> "$1/klab.conf"
}
mklab "$T/a" "$KCCACHE"
mklab "$T/b" "$T/b-ccache"

lab="$T/a"
CCACHE_RESHARE=1 k build --repo "$KTREE" --rev HEAD > "$T/a.out" 2>&1
check "lab A builds (warm local ccache, reshared to Redis)" grep -q "^build: *ok" "$T/a.out" || tail -20 "$T/a.out"
keys=$(redis-cli -p "$PORT" dbsize)
check "Redis holds lab A's compiles ($keys keys)" test "${keys:-0}" -gt 1000

lab="$T/b"
k build --repo "$KTREE" --rev HEAD > "$T/b.out" 2>&1
check "lab B builds" grep -q "^build: *ok" "$T/b.out" || tail -20 "$T/b.out"
line=$(grep '^compiles:' "$T/b.out")
echo "# lab B: $line"
set -- $(echo "$line" | sed 's/[^0-9 ]//g')
calls=${1:-0} remote=${3:-0} compiled=${4:-0}
check "lab B's first build: compiles counted ($calls)" test "$calls" -gt 1000
check "lab B's first build: at least 95% remote hits ($remote of $calls)" test $((remote * 100)) -ge $((calls * 95))
check "lab B's local ccache was empty: it holds what came from Redis now" test -d "$T/b-ccache"
stop_redis
finish
