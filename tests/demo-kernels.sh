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
KDEMOLAB="$KLABS/demo-lab"
# t-perf-bisect's second scenario (DEMO_BREAK_AT=4 DEMO_PANIC_AT=4): the
# history is made here once and its kernels of the window that build (the
# two that panic) are cached too, so that its bisection builds only the
# commits that do not build.  Sets KDEMO2 (that history, to fetch from).
KDEMO2="$KLAB_TEST_CACHE/demo-8-s2"
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
	if [ ! -d "$KDEMO2" ]; then
		rm -rf "$KDEMO2.tmp"
		DEMO_BREAK_AT=4 DEMO_PANIC_AT=4 sh "$KLAB_SRCDIR/tests/demo/make-kernel-history.sh" \
			"$KTREE" "$KDEMO2.tmp" 8 >/dev/null
		mv "$KDEMO2.tmp" "$KDEMO2"
	fi
	# every commit of the window but the two that do not build (the
	# break and the commit after it); the rest are the first history's
	# trees, in the store already
	nobuild="$(git -C "$KDEMO2" rev-parse demo-broken) $(git -C "$KDEMO2" rev-list --ancestry-path demo-broken..demo-bad | tail -n 1)"
	for c in $(git -C "$KDEMO2" rev-list --reverse demo-good..demo-bad); do
		case " $nobuild " in *" $c "*) continue ;; esac
		"$KLAB" --state "$KDEMOLAB" build --repo "$KDEMO2" --rev "$c" --quiet >&2
	done
) 9>"$KLAB_TEST_CACHE/.demo-kernels.lock" || { echo "cannot build the demo history's kernels" >&2; exit 1; }
export KSTORE KDEMO2
