# Shared helpers for klab's shell tests (sourced).  POSIX sh.
# Provides: $KLAB, $T (a temp dir removed on success), ok/fail/check,
# require_tools, require_libvirt, quiet git identity, make_linear_repo,
# the fast-import stream writers gen_commit/gen_file; for the guest tests
# k/q on $lab, kernel_lab, demo_lab, trust_lab, demo_history, the loopback
# libvirt listener and a libvirt host over ssh.

: "${KLAB_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${KLAB:=$KLAB_SRCDIR/orchestrator/klab}"
export KLAB KLAB_SRCDIR

GIT_CONFIG_NOSYSTEM=1
GIT_CONFIG_GLOBAL=/dev/null
GIT_AUTHOR_NAME="klab test"
GIT_AUTHOR_EMAIL="test@klab.invalid"
GIT_COMMITTER_NAME="klab test"
GIT_COMMITTER_EMAIL="test@klab.invalid"
export GIT_CONFIG_NOSYSTEM GIT_CONFIG_GLOBAL GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
unset KLAB_STATE XDG_STATE_HOME GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

T=$(mktemp -d "${TMPDIR:-/tmp}/klab-test.XXXXXX")
failures=0
checks=0

ok() { checks=$((checks + 1)); echo "ok - $*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "not ok - $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds
check() {
	desc=$1; shift
	if "$@"; then ok "$desc"; else fail "$desc"; fi
}

# finish [NOTE]: the summary line and the exit status; $T is removed on
# success, kept (NOTE after its name, e.g. a seed to replay) on failure.
finish() {
	if [ "$failures" -eq 0 ] && [ "$checks" -gt 0 ]; then
		echo "# $checks checks passed"
		rm -rf "$T"
		exit 0
	fi
	echo "# $failures of $checks checks failed; files kept in $T${1:-}"
	exit 1
}

# require_tools TOOL...: a test that needs them fails (never skips) when
# one is missing, and when the klab binary is.
require_tools() {
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "not ok - '$tool' is required by this test and not installed"
			exit 1
		fi
	done
	if [ ! -x "$KLAB" ]; then
		echo "not ok - klab binary '$KLAB' not found (set KLAB)"
		exit 1
	fi
}

# require_libvirt: a guest test fails (never skips) when libvirt does not
# answer at $KLAB_LIBVIRT_URI (default qemu:///system); sets URI.
require_libvirt() {
	URI=${KLAB_LIBVIRT_URI:-qemu:///system}
	if ! virsh -q -c "$URI" version >/dev/null 2>&1; then
		echo "not ok - libvirt does not answer at $URI: start it (./bootstrap services)"
		exit 1
	fi
}

# require_loopback_libvirt: the remote-host tests reach qemu:///system
# through a socat listener of their own; they fail (never skip) when
# libvirt does not answer or socat is missing.  Sets URI and SOCK (its
# unix socket).
require_loopback_libvirt() {
	URI=qemu:///system
	SOCK=/var/run/libvirt/libvirt-sock
	if ! virsh -q -c "$URI" version >/dev/null 2>&1; then
		echo "not ok - libvirt does not answer at $URI: start it (./bootstrap services)"
		exit 1
	fi
	if ! command -v socat >/dev/null 2>&1; then
		echo "not ok - socat is missing (./bootstrap deps installs it)"
		exit 1
	fi
}

# loopback_listener PORT: TCP on loopback forwarded to libvirtd's unix
# socket $SOCK (whose auth, 'none' for root, the remote driver
# negotiates), killed when the test exits; waits until libvirt answers
# through it or fails the test.  Sets SOCAT (its pid) and RURI.
loopback_listener() {
	socat TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:$SOCK 2>"$T/socat.err" &
	SOCAT=$!
	trap 'kill $SOCAT 2>/dev/null' EXIT INT TERM
	RURI="qemu+tcp://127.0.0.1:$1/system"
	i=0
	until virsh -q -c "$RURI" version >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 50 ]; then
			echo "not ok - libvirt does not answer through the loopback listener at $RURI"
			cat "$T/socat.err"
			exit 1
		fi
		sleep 0.1
	done
}

# ssh_libvirt_host: the test's own sshd on 127.0.0.1 in front of the real
# libvirtd (its own host key, key authentication with a key the test
# makes; libvirt's command= runs the real ssh with the test's
# known_hosts, so nothing of root's ~/.ssh is touched), stopped when the
# test exits; waits until libvirt answers through it or fails the test.
# Sets SURI, the qemu+ssh URI.  stop_sshd / start_sshd: a host that goes
# away and comes back.
ssh_libvirt_host() {
	[ -x /usr/sbin/sshd ] || { echo "not ok - /usr/sbin/sshd is required (openssh-server)"; exit 1; }
	require_tools ssh ssh-keygen virsh
	SSH_PORT=$((20000 + ($$ + 7) % 20000))
	ssh-keygen -q -t ed25519 -N '' -f "$T/hostkey"
	ssh-keygen -q -t ed25519 -N '' -f "$T/clientkey"
	cp "$T/clientkey.pub" "$T/authorized_keys"
	cat > "$T/sshd_config" <<CONF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $T/hostkey
AuthorizedKeysFile $T/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile $T/sshd.pid
CONF
	mkdir -p /run/sshd
	start_sshd || { echo "not ok - sshd does not start"; cat "$T/sshd.log"; exit 1; }
	trap stop_sshd EXIT INT TERM
	printf '#!/bin/sh\nexec ssh -o UserKnownHostsFile=%s/known_hosts -o StrictHostKeyChecking=accept-new -o BatchMode=yes "$@"\n' \
		"$T" > "$T/ssh"
	chmod +x "$T/ssh"
	SURI="qemu+ssh://root@127.0.0.1:$SSH_PORT/system?keyfile=$T/clientkey&command=$T/ssh"
	i=0
	until timeout 20 virsh -q -c "$SURI" version >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 30 ] || { echo "not ok - libvirt does not answer over ssh at $SURI"; cat "$T/sshd.log"; exit 1; }
		sleep 0.2
	done
}
# (the daemon must not hold the CPUs lock: guest_cpus_lock's fd 7)
start_sshd() { /usr/sbin/sshd -f "$T/sshd_config" -E "$T/sshd.log" 7>&-; }
# (its sessions too: a listener gone leaves libvirt's open connection up)
stop_sshd() {
	[ -f "$T/sshd.pid" ] || return 0
	pkill -P "$(cat "$T/sshd.pid")" 2>/dev/null
	kill "$(cat "$T/sshd.pid")" 2>/dev/null
	rm -f "$T/sshd.pid"
}

# k ARGS...: klab on the test's lab, $lab; q SQL: a query of its database.
k() { "$KLAB" --state "$lab" "$@"; }
q() { sqlite3 "$lab/klab.db" "$1"; }

# boots_summary [DIR...]: a diagnostic line with the boots of every lab
# under $T (and under each DIR) and their wall time (what a guest test
# costs CI, docs/testing.md).
boots_summary() {
	n=0 s=0
	for db in $(find "$T" "$@" -maxdepth 3 -name klab.db 2>/dev/null); do
		set -- $(sqlite3 -separator ' ' "$db" \
			"SELECT count(*), coalesce(sum(finished_at - started_at), 0) FROM boots" 2>/dev/null) 0 0
		n=$((n + $1)) s=$((s + $2))
	done
	echo "# boots: $n, $s s of guest time"
}

# kernel_lab: lab=$T/lab, a new lab building with the shared ccache and
# taking kernels from the shared artifact store ($KCCACHE, $KSTORE: the
# guest tests source tests/kernel-tree.sh first).
kernel_lab() {
	lab="$T/lab"
	"$KLAB" --state "$lab" init >/dev/null
	printf 'ccache_dir = %s\nartifact_store = %s\n' "$KCCACHE" "$KSTORE" >> "$lab/klab.conf"
}

# demo_lab: what a guest test on the demo history sources (the imported
# tree, the shared guest kernel, the demo history's kernels built once
# into the shared store), a shared hold on the guests' CPUs, then the
# test's lab (kernel_lab).
demo_lab() {
	. "$KLAB_SRCDIR/tests/kernel-tree.sh"
	. "$KLAB_SRCDIR/tests/guest-kernel.sh"
	. "$KLAB_SRCDIR/tests/demo-kernels.sh"
	guest_cpus_lock shared
	kernel_lab
}

# trust_lab [exclusive]: demo_lab's twin for the trust history
# (tests/trust-kernels.sh): the same hold (shared unless asked) and test
# lab, then $T/linux, a clone of the cached
# history with its tags, and $T/malloc1.yaml, will-it-scale malloc1 at
# 3 s a run without profile runs (t-trust, t-trust-host).
trust_lab() {
	. "$KLAB_SRCDIR/tests/kernel-tree.sh"
	. "$KLAB_SRCDIR/tests/guest-kernel.sh"
	. "$KLAB_SRCDIR/tests/trust-kernels.sh"
	guest_cpus_lock "${1:-shared}"
	kernel_lab
	git clone -q --shared "$KTRUST" "$T/linux"
	git -C "$T/linux" fetch -q "$KTRUST" 'refs/tags/*:refs/tags/*'
	sed -e 's/^runtime:.*/runtime: 3s/' "$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$T/malloc1.yaml"
	echo 'profile_runs: 0' >> "$T/malloc1.yaml"
}

# demo_history DIR [N]: the demo history of N commits (8) generated in
# DIR (tests/demo/make-kernel-history.sh); sets planted, the planted
# commit, or fails the test.
demo_history() {
	planted=$(sh "$KLAB_SRCDIR/tests/demo/make-kernel-history.sh" "$KTREE" "$1" "${2:-8}") ||
		{ echo "not ok - cannot generate the demo history"; exit 1; }
}

# gen_commit REF MARK TIME SUBJECT [FROM] [MERGE]: a commit of a
# git fast-import stream, by "klab test"; FROM and MERGE are marks.
gen_commit() {
	printf 'commit %s\nmark :%s\n' "$1" "$2"
	printf 'author klab test <test@klab.invalid> %s +0000\n' "$3"
	printf 'committer klab test <test@klab.invalid> %s +0000\n' "$3"
	printf 'data <<EOM\n%s\nEOM\n' "$4"
	[ -n "${5:-}" ] && printf 'from :%s\n' "$5"
	[ -n "${6:-}" ] && printf 'merge :%s\n' "$6"
	:
}
# gen_file PATH CONTENT: a file of that commit.
gen_file() {
	printf 'M 100644 inline %s\ndata <<EOM\n%s\nEOM\n' "$1" "$2"
}

# make_linear_repo DIR N BADFROM [MSGFN [AUTHOR]]: N commits; file 'value'
# holds i; commits i >= BADFROM also have file 'broken'.  Dates increase
# by one second.  MSGFN I, when given, prints commit I's message (raw
# bytes; default "commit I"); AUTHOR ("Name <mail>") is every commit's
# author when given, else the committer is.
make_linear_repo() {
	dir=$1 n=$2 badfrom=$3 msgfn=${4:-} author=${5:-}
	git init -q "$dir"
	{
		i=1
		while [ "$i" -le "$n" ]; do
			msg="commit $i"
			[ -n "$msgfn" ] && msg=$("$msgfn" "$i")
			echo "commit refs/heads/main"
			[ -n "$author" ] && echo "author $author $((1700000000 + i)) +0000"
			echo "committer klab test <test@klab.invalid> $((1700000000 + i)) +0000"
			echo "data $(printf '%s' "$msg" | wc -c)"
			printf '%s\n' "$msg"
			echo "M 100644 inline value"
			echo "data ${#i}"
			echo "$i"
			if [ "$i" -ge "$badfrom" ]; then
				echo "M 100644 inline broken"
				echo "data 4"
				echo "yes"
			fi
			i=$((i + 1))
		done
	} | git -C "$dir" fast-import --quiet
	git -C "$dir" symbolic-ref HEAD refs/heads/main
	git -C "$dir" reset -q --hard
}

# write_test_script FILE [SKIP]: the test script used by bisections: good
# unless 'broken' exists; with SKIP, the commit whose 'value' is SKIP is
# skipped (exit 125: it "does not build").
write_test_script() {
	{
		echo '#!/bin/sh'
		[ -n "${2:-}" ] && echo "[ \"\$(cat value)\" = $2 ] && exit 125"
		echo 'test ! -e broken'
	} > "$1"
	chmod +x "$1"
}

# guest_cpus_lock shared|exclusive: tests that keep the host's CPUs busy
# (guests, kernel builds of their own) take it after the shared kernels
# are built.  Those whose checks need the host's CPUs to themselves
# (pinning plans, placement on hosts, two changes told apart by their
# size) take it exclusive, the others shared: under `make -j2 check` an
# exclusive test never shares the CPUs with another test's guests or
# builds (klab itself waits for CPUs that other guests hold, see
# placement.c).  Released when the test exits.
guest_cpus_lock() {
	exec 7>>"${KLAB_TEST_LOCKDIR:-/var/tmp}/klab-test-guests.lock"
	if [ "$1" = exclusive ]; then
		flock -x 7
	else
		flock -s 7
	fi
}
