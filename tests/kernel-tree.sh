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
# one importer at a time (tests may run in parallel)
(
	flock 9
	"$KLAB" tree import --dest "$KTREE" >&2
) 9>"$KLAB_TEST_CACHE/.import.lock" || exit 1
export KTREE KCCACHE KLAB_TEST_CACHE
