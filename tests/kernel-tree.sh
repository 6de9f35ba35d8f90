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
# (guest-lab, demo-lab, ...) are a cache too: their databases carry the
# schema of the klab that made them, and a klab of another schema (an older
# checkout, a branch that numbered its migrations otherwise) must not be
# refused by them or read tables it does not know.  So they are dropped
# when the schema's sources change; the tree, ccache and the artifact store
# (each entry checked by its identity file) stay.
KSCHEMA=$(cat "$KLAB_SRCDIR"/db/schema.sql "$KLAB_SRCDIR"/db/migrations/*.sql | sha256sum | cut -c1-16)
(
	flock 9
	if [ "$(cat "$KLAB_TEST_CACHE/.labs-schema" 2>/dev/null)" != "$KSCHEMA" ]; then
		for db in "$KLAB_TEST_CACHE"/*/klab.db; do
			[ -f "$db" ] || continue
			echo "test cache: $(dirname "$db") made with another database schema: dropped" >&2
			rm -rf "$(dirname "$db")"
		done
		echo "$KSCHEMA" > "$KLAB_TEST_CACHE/.labs-schema"
	fi
	"$KLAB" tree import --dest "$KTREE" >&2
) 9>"$KLAB_TEST_CACHE/.import.lock" || exit 1
export KTREE KCCACHE KLAB_TEST_CACHE
