# Sourced by the icecream test and bench: a small icecream farm of real
# Debian daemons, apart from the system's (its own netname, ports, unix
# sockets and environment directories).  A network namespace with a veth
# pair of its own addresses holds the one node that compiles; the node in
# the root namespace takes no jobs (--no-remote -m 0), so every compile
# icecream sends out really crosses the veth.  The scheduler listens on
# the veth's root-side address only.
#   ice_farm_start   start it; sets ICE (its directory: logs, sockets),
#                    ICE_REMOTE_ADDR and exports ICECC_TEST_SOCKET (the
#                    local daemon's socket, which icecc's client uses)
#   ice_farm_stop    stop the daemons, remove the namespace and ICE
# Root only (namespaces); every daemon starts with fd 7 closed (the
# tests' CPUs lock).

ICE='' ICE_NS='' ICE_VETH=''

# (every step may fail: a caller under set -e, the benches, must not stop
# half way and leave the namespace behind)
ice_farm_stop() {
	for d in remote local sched; do
		[ ! -f "$ICE/$d.pid" ] || kill "$(cat "$ICE/$d.pid")" 2>/dev/null || :
	done
	# the daemons' compile children go with their process groups
	sleep 0.5
	for d in remote local sched; do
		[ ! -f "$ICE/$d.pid" ] || kill -9 "$(cat "$ICE/$d.pid")" 2>/dev/null || :
	done
	[ -z "$ICE_NS" ] || ip netns del "$ICE_NS" 2>/dev/null || :
	[ -z "$ICE_VETH" ] || ip link del "$ICE_VETH" 2>/dev/null || :
	case $ICE in /var/tmp/klab-icecc.*) rm -rf "$ICE" ;; esac
	ICE=''
	return 0
}

# ice_farm_start: 0 when both daemons are logged in to the scheduler
ice_farm_start() {
	ICE_NS=klabice$$
	ICE_VETH=kice$$a
	ICE_NET=klabtest$$
	ICE_PORT=$((30000 + $$ % 20000))
	o=$(($$ % 250 + 1))
	ICE_LOCAL_ADDR=10.213.$o.1
	ICE_REMOTE_ADDR=10.213.$o.2
	# the daemons drop to user icecc: their directory must be theirs, and
	# reachable (not under a test's private temp directory)
	ICE=$(mktemp -d /var/tmp/klab-icecc.XXXXXX) || return 1
	chmod 755 "$ICE" && chown icecc:icecc "$ICE" || return 1
	ip netns add "$ICE_NS" &&
	ip link add "$ICE_VETH" type veth peer name "kice$$b" &&
	ip link set "kice$$b" netns "$ICE_NS" &&
	ip addr add "$ICE_LOCAL_ADDR/30" dev "$ICE_VETH" && ip link set "$ICE_VETH" up &&
	ip -n "$ICE_NS" addr add "$ICE_REMOTE_ADDR/30" dev "kice$$b" &&
	ip -n "$ICE_NS" link set "kice$$b" up && ip -n "$ICE_NS" link set lo up || return 1
	icecc-scheduler -n "$ICE_NET" -p "$ICE_PORT" -i "$ICE_VETH" -l "$ICE/scheduler.log" -vvv \
		</dev/null >/dev/null 2>&1 7>&- &
	echo $! > "$ICE/sched.pid"
	ICECC_TEST_SOCKET=$ICE/local.sock iceccd --no-remote -m 0 -n "$ICE_NET" -s "$ICE_LOCAL_ADDR:$ICE_PORT" \
		-b "$ICE/env-local" -N klab-local -l "$ICE/local.log" -vvv </dev/null >/dev/null 2>&1 7>&- &
	echo $! > "$ICE/local.pid"
	# (ip netns exec execs the daemon: $! is its pid)
	ICECC_TEST_SOCKET=$ICE/remote.sock ip netns exec "$ICE_NS" iceccd -m 2 -n "$ICE_NET" \
		-s "$ICE_LOCAL_ADDR:$ICE_PORT" -b "$ICE/env-remote" -N klab-remote -l "$ICE/remote.log" -vvv \
		</dev/null >/dev/null 2>&1 7>&- &
	echo $! > "$ICE/remote.pid"
	export ICECC_TEST_SOCKET="$ICE/local.sock"
	i=0
	while [ $i -lt 300 ]; do
		if grep -q 'Connected to scheduler' "$ICE/local.log" 2>/dev/null &&
		   grep -q 'Connected to scheduler' "$ICE/remote.log" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
