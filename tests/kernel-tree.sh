# Sourced by kernel tests and benchmarks: the one shared, cached kernel
# tree (Debian's linux-source-6.1 imported by klab) and ccache.
#   KLAB_TEST_CACHE  where they live (default /var/tmp/klab-test-cache)
# Sets KTREE (the imported repository) and KCCACHE (shared ccache dir).
: "${KLAB_TEST_CACHE:=/var/tmp/klab-test-cache}"
KTREE="$KLAB_TEST_CACHE/linux-6.1"
KCCACHE="$KLAB_TEST_CACHE/ccache"
mkdir -p "$KLAB_TEST_CACHE" "$KCCACHE"
if [ ! -f /usr/src/linux-source-6.1.tar.xz ]; then
	echo "kernel tests need Debian's linux-source-6.1 (./bootstrap installs it)" >&2
	exit 1
fi
# One importer at a time (tests may run in parallel).  The cached labs
# (guest-lab, demo-lab, ...) are a cache too, but their databases carry
# the schema of the klab that made them: a klab of another schema (an
# older checkout, a branch with a migration of its own) would be refused
# by them or read tables it does not know.  So they live in $KLABS, one
# folder per schema (its sources' hash); the three most recently used are
# kept.  The tree, ccache and the artifact store (each entry checked by
# its identity file) are shared by all.
KSCHEMA=$(cat "$KLAB_SRCDIR"/db/schema.sql "$KLAB_SRCDIR"/db/migrations/*.sql | sha256sum | cut -c1-16)
KLABS="$KLAB_TEST_CACHE/labs-$KSCHEMA"
(
	flock 9
	for db in "$KLAB_TEST_CACHE"/*/klab.db; do
		[ -f "$db" ] || continue
		echo "test cache: $(dirname "$db"), a lab of the cache's older layout: dropped" >&2
		rm -rf "$(dirname "$db")"
	done
	mkdir -p "$KLABS" && touch "$KLABS"
	# shellcheck disable=SC2012
	ls -dt "$KLAB_TEST_CACHE"/labs-* | tail -n +4 | while read -r old; do
		echo "test cache: $old, labs of a schema not used lately: dropped" >&2
		rm -rf "$old"
	done
	"$KLAB" tree import --dest "$KTREE" >&2
) 9>"$KLAB_TEST_CACHE/.import.lock" || exit 1
export KTREE KCCACHE KLAB_TEST_CACHE KLABS
