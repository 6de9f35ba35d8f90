# Sourced by the kernel build benchmarks (kbuild.sh, ccache-repos.sh) with
# BENCH set to their name: klab, git without the user's configuration and
# with a bench identity, the shared kernel tree (tests/kernel-tree.sh: KTREE,
# KCCACHE), and B, a scratch directory removed on exit, holding a new lab
# at $B/lab.
set -eu
KLAB_SRCDIR=${KLAB_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
KLAB=${KLAB:-$KLAB_SRCDIR/orchestrator/klab}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@klab.invalid GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@klab.invalid
. "$KLAB_SRCDIR/tests/kernel-tree.sh"

B=$(mktemp -d "${TMPDIR:-/var/tmp}/klab-bench-$BENCH.XXXXXX")
trap 'rm -rf "$B"' EXIT
"$KLAB" --state "$B/lab" init >/dev/null
