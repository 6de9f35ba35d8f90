# Sourced by the trust tests and benches after tests/guest-kernel.sh: the
# trust history (tests/demo/make-trust-history.sh on the imported tree)
# generated once under $KLAB_TEST_CACHE, and its distinct kernels built
# once into the shared artifact store $KSTORE by a cache lab: the two
# planted regressions, the harmless change, and the bad end with either
# planted commit reverted (a revert git makes the same way klab's
# libgit2 revert does, so the revert check's tree is in the store too).
# The comment-only commits' kernels are byte for byte a neighbour's, but
# klab builds every tree it tests, so they are built here as well.
# Sets KSTORE and KTRUST (the cached history, to clone or fetch from).
KSTORE="$KLAB_TEST_CACHE/artifacts"
KTRUST="$KLAB_TEST_CACHE/trust"
KTRUSTLAB="$KLABS/trust-lab"
(
	flock 9
	set -e
	# a history made by an older script lacks the newest tag: made again
	if [ -d "$KTRUST" ] && ! git -C "$KTRUST" rev-parse -q --verify trust-history-4 >/dev/null; then
		rm -rf "$KTRUST"
	fi
	if [ ! -d "$KTRUST" ]; then
		rm -rf "$KTRUST.tmp"
		sh "$KLAB_SRCDIR/tests/demo/make-trust-history.sh" "$KTREE" "$KTRUST.tmp" >/dev/null
		(
			# the revert check's trees: the bad end without each
			# planted commit
			cd "$KTRUST.tmp"
			for t in two-bad:two-first two-bad:two-second mmapaddr-bad:mmapaddr-planted; do
				git checkout -q --detach "${t%%:*}"
				git revert --no-edit "${t#*:}" >/dev/null
				git tag "revert-${t#*:}"
			done
			git checkout -q --detach two-bad
		)
		mv "$KTRUST.tmp" "$KTRUST"
	fi
	[ -f "$KTRUSTLAB/klab.db" ] || "$KLAB" --state "$KTRUSTLAB" init >&2
	grep -q "^ccache_dir = $KCCACHE\$" "$KTRUSTLAB/klab.conf" ||
		printf 'ccache_dir = %s\n' "$KCCACHE" >> "$KTRUSTLAB/klab.conf"
	grep -q "^artifact_store = $KSTORE\$" "$KTRUSTLAB/klab.conf" ||
		printf 'artifact_store = %s\n' "$KSTORE" >> "$KTRUSTLAB/klab.conf"
	# what t-trust boots (the mmapaddr range's kernels are built by its
	# bench, tests/bench/trust-mmapaddr.sh, into the same store)
	for c in $(git -C "$KTRUST" rev-list --reverse two-good..two-bad two-good..harmless-bad) \
		revert-two-first revert-two-second; do
		"$KLAB" --state "$KTRUSTLAB" build --repo "$KTRUST" --rev "$c" --quiet >&2
	done
) 9>"$KLAB_TEST_CACHE/.trust-kernels.lock" || { echo "cannot build the trust history's kernels" >&2; exit 1; }
export KSTORE KTRUST
