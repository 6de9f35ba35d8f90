# Sourced by guest tests and benchmarks, after tests/kernel-tree.sh: the one
# shared guest kernel — the imported 6.1 tree built by klab with its default
# recipe (tinyconfig + x86_64-base + perf-guest) in a shared lab, so the
# tests and benchmarks pay for one build between them (ccache, artifact
# store).  Sets KBZIMAGE.
KGUESTLAB="$KLABS/guest-lab"
(
	flock 9
	[ -f "$KGUESTLAB/klab.db" ] || "$KLAB" --state "$KGUESTLAB" init >&2 || exit 1
	grep -q "^ccache_dir = $KCCACHE\$" "$KGUESTLAB/klab.conf" ||
		printf 'ccache_dir = %s\n' "$KCCACHE" >> "$KGUESTLAB/klab.conf"
	"$KLAB" --state "$KGUESTLAB" build --repo "$KTREE" --rev HEAD --quiet >&2
) 9>"$KLABS/.guest-kernel.lock" || { echo "cannot build the guest kernel" >&2; exit 1; }
KBZIMAGE=$(sqlite3 "$KGUESTLAB/klab.db" \
	"SELECT artifact_dir FROM builds WHERE status = 'ok' ORDER BY finished_at DESC LIMIT 1")/bzImage
[ -f "$KBZIMAGE" ] || { echo "guest kernel missing: $KBZIMAGE" >&2; exit 1; }
export KBZIMAGE KGUESTLAB
