# Sourced by guest tests after tests/guest-kernel.sh: every kernel of the
# demo history (tests/demo/make-kernel-history.sh, 8 commits on the
# imported tree) built once, by a cache lab, into the shared artifact
# store $KSTORE.  A test lab with 'artifact_store = $KSTORE' takes these
# kernels instead of building them (the history is deterministic, so a
# test's own copy of it has the same trees): the perf bisection, the kill
# soak and tracking then pay for guests, not for builds.  Builds are tested
# by t-kernel-build.sh.  Cached across runs with the tree.  Sets KSTORE.
KSTORE="$KLAB_TEST_CACHE/artifacts"
KDEMO="$KLAB_TEST_CACHE/demo-8"
KDEMOLAB="$KLAB_TEST_CACHE/demo-lab"
(
	flock 9
	set -e
	if [ ! -d "$KDEMO" ]; then
		rm -rf "$KDEMO.tmp"
		sh "$KLAB_SRCDIR/tests/demo/make-kernel-history.sh" "$KTREE" "$KDEMO.tmp" 8 >/dev/null
		mv "$KDEMO.tmp" "$KDEMO"
	fi
	[ -f "$KDEMOLAB/klab.db" ] || "$KLAB" --state "$KDEMOLAB" init >&2
	grep -q "^ccache_dir = $KCCACHE\$" "$KDEMOLAB/klab.conf" ||
		printf 'ccache_dir = %s\n' "$KCCACHE" >> "$KDEMOLAB/klab.conf"
	grep -q "^artifact_store = $KSTORE\$" "$KDEMOLAB/klab.conf" ||
		printf 'artifact_store = %s\n' "$KSTORE" >> "$KDEMOLAB/klab.conf"
	for c in $(git -C "$KDEMO" rev-list --reverse demo-good..demo-bad) $(git -C "$KDEMO" rev-parse demo-good); do
		"$KLAB" --state "$KDEMOLAB" build --repo "$KDEMO" --rev "$c" --quiet >&2
	done
) 9>"$KLAB_TEST_CACHE/.demo-kernels.lock" || { echo "cannot build the demo history's kernels" >&2; exit 1; }
export KSTORE
