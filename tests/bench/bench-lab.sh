# Sourced by the benches that bisect a cached history in guests, after
# tests/kernel-tree.sh, tests/guest-kernel.sh and the history's kernels
# (tests/demo-kernels.sh, tests/trust-kernels.sh):
#
#   bench_lab NAME [REPO]
#
# a scratch directory $B (/var/tmp/klab-bench-NAME.*, removed on exit)
# with a lab $lab that takes the shared ccache and artifact store, and,
# given REPO, $B/linux, a clone of it with its tags (without, the bench
# makes its own $B/linux); q SQL queries the lab.
bench_lab() {
	B=$(mktemp -d "/var/tmp/klab-bench-$1.XXXXXX")
	chmod 755 "$B"
	trap 'rm -rf "$B"' EXIT
	lab=$B/lab
	"$KLAB" --state "$lab" init >/dev/null
	printf 'ccache_dir = %s\nartifact_store = %s\n' "$KCCACHE" "$KSTORE" >> "$lab/klab.conf"
	[ -n "${2:-}" ] || return 0
	git clone -q --shared "$2" "$B/linux"
	git -C "$B/linux" fetch -q "$2" 'refs/tags/*:refs/tags/*'
}
q() { sqlite3 "$lab/klab.db" "$1"; }
