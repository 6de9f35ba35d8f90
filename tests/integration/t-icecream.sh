#!/bin/sh
# compiler_wrapper = icecc with icecream's real daemons (Debian's): a
# scheduler of the test's own (its netname and port), a node here that
# takes no jobs and one in a network namespace the test makes, behind a
# veth pair of its own addresses (tests/icecream-farm.sh).  A lab builds
# Debian's 6.1 kernel with the shared ccache (warm) from a commit that
# changes two .c files: ccache gives the rest, the two compiles must
# travel to the namespaced node.  Icecream's own logs say they did (the
# scheduler put them on that node, that node compiled those files) and
# 'klab build' says so in its "icecream:" line.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools icecc iceccd icecc-scheduler ccache ip
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
. "$KLAB_SRCDIR/tests/guest-kernel.sh"
# The CPUs to itself: icecream's scheduler holds a job while its node's
# host looks busy (iceccd reports load 1000 when no CPU is idle) and icecc
# gives up after 4 minutes and compiles here; beside another test's guests
# or build the two compiles could stay here and the checks would fail.
guest_cpus_lock exclusive
. "$KLAB_SRCDIR/tests/icecream-farm.sh"

# the daemons' logs stay with the test's files (kept when it fails)
stop_farm() { [ -n "$ICE" ] && cp "$ICE"/*.log "$T/" 2>/dev/null; ice_farm_stop; }
trap stop_farm EXIT
trap 'exit 1' INT TERM
if ice_farm_start; then
	ok "icecream farm up: scheduler on $ICE_LOCAL_ADDR:$ICE_PORT (netname $ICE_NET), nodes klab-local (no jobs) and klab-remote ($ICE_REMOTE_ADDR, namespace $ICE_NS)"
else
	fail "the icecream farm did not come up (logs in $ICE)"
	tail -n 5 "$ICE"/*.log
	finish
fi

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
sed -i -e "s|^ccache_dir =.*|ccache_dir = $KCCACHE|" -e "s|^compiler_wrapper =.*|compiler_wrapper = icecc|" "$lab/klab.conf"

# two changes no earlier run compiled, so ccache must really compile them
git clone -q --shared "$KTREE" "$T/linux"
probe="klab_icecc_probe_$(date +%s%N)_$$"
echo "int ${probe}_mmap;" >> "$T/linux/mm/mmap.c"
echo "int ${probe}_fork;" >> "$T/linux/kernel/fork.c"
git -C "$T/linux" commit -q -a -m "mm, fork: something only this run compiles"

k build --repo "$T/linux" --rev HEAD > "$T/build.out" 2>&1
rc=$?
check "the build through icecream succeeds (exit $rc)" sh -c '[ "$1" -eq 0 ] && grep -q "^build: *ok" "$2"' - "$rc" "$T/build.out" ||
	tail -n 20 "$T/build.out"
grep -E '^(build|compiles|icecream):' "$T/build.out" | sed 's/^/# /'

# icecream's own word: the scheduler put the jobs on the namespaced node,
# that node compiled the two files, the node here compiled nothing for others
placed=$(grep -c 'in joblist of klab-remote' "$ICE/scheduler.log")
placed_here=$(grep -c 'in joblist of klab-local' "$ICE/scheduler.log")
compiled=$(grep -c 'remote compile for file' "$ICE/remote.log")
echo "# icecream: scheduler placed $placed job(s) on klab-remote, $placed_here on klab-local; klab-remote compiled $compiled"
check "the scheduler placed the jobs on the namespaced node ($placed), none on the node here" \
	sh -c '[ "$1" -ge 2 ] && [ "$2" -eq 0 ]' - "$placed" "$placed_here"
check "the namespaced node compiled mm/mmap.c" grep -q 'remote compile for file .*mm/mmap\.c' "$ICE/remote.log"
check "the namespaced node compiled kernel/fork.c" grep -q 'remote compile for file .*kernel/fork\.c' "$ICE/remote.log"
check "the node here compiled nothing for others" sh -c '! grep -q "remote compile for file" "$1"' - "$ICE/local.log"
check "the objects came back over the veth (the client connected to $ICE_REMOTE_ADDR)" \
	grep -q "accepted [0-9]* $ICE_LOCAL_ADDR" "$ICE/remote.log"
grep -q "$probe" "$(sqlite3 "$lab/klab.db" "select artifact_dir from builds where status = 'ok'")/System.map" &&
	ok "the kernel holds the probe symbols" || fail "System.map lacks $probe"

# klab's word, from icecc's client log
line=$(grep '^icecream:' "$T/build.out")
set -- $(echo "$line" | sed -n 's/^icecream: *\([0-9]*\) through icecc: \([0-9]*\) compiled remotely on \([0-9]*\) node.*, \([0-9]*\) here.*/\1 \2 \3 \4/p')
calls=${1:-0} remote=${2:-0} hosts=${3:-0} here=${4:-0}
check "klab build says where compiles went ('$line')" test -n "$1"
# the node logs every compile it was sent; a compile that failed (kbuild's
# probes fail on purpose: cc-option, as-instr) is run again here and
# counted so ("N of them after a remote node failed"), and some of those
# failed before they were sent: remote <= the node's <= remote + failed
failed=$(echo "$line" | sed -n 's/.*(\([0-9]*\) of them after a remote node failed).*/\1/p')
failed=${failed:-0}
check "klab counts the remote compiles icecream made ($remote, and $failed failed there; the node's log: $compiled), on one node ($hosts)" \
	sh -c '[ "$1" -ge 2 ] && [ "$1" -le "$2" ] && [ "$2" -le $(($1 + $4)) ] && [ "$3" -eq 1 ]' - \
	"$remote" "$compiled" "$hosts" "$failed"
check "calls add up ($calls = $remote remote + $here here)" test "$calls" -eq $((remote + here))
check "icecc's log is not left in the build directory" sh -c '[ -z "$(find "$1/worktrees" -name .klab-icecc-log)" ]' - "$lab"

# the user's own icecc logging wins, and klab says it cannot count
echo "int ${probe}_again;" >> "$T/linux/mm/mmap.c"
git -C "$T/linux" commit -q -a -m "mm: another change"
ICECC_LOGFILE="$T/user-icecc.log" ICECC_DEBUG=info k build --repo "$T/linux" --rev HEAD > "$T/build2.out" 2>&1
check "with the user's ICECC_LOGFILE: built, and the counts said unknown" \
	sh -c 'grep -q "^build: *ok" "$1" && grep -q "^icecream: *where compiles went is not known: ICECC_LOGFILE" "$1"' - "$T/build2.out" ||
	tail -n 20 "$T/build2.out"
stop_farm
check "the namespace is gone" sh -c '! ip netns list | grep -q "^$1\\b"' - "$ICE_NS"
finish
