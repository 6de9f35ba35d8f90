#!/bin/sh
# The trust scenarios of issue 17 on top of the imported 6.1 tree (klab
# tree import), for the guest tests and benches that check what a culprit
# is worth:
#
#   make-trust-history.sh TREE DEST
#
# TREE: the imported tree; DEST: a new repository sharing TREE's objects
# (git clone --shared).  Deterministic (fixed dates and identities), so
# every copy has the same commits and trees, and the shared artifact store
# serves its kernels.  Tags:
#
#   two-good     the import
#   two-first    the first of two planted regressions: every munmap()
#                spins KLAB_TRUST_SPIN1 iterations of a compiler barrier
#   two-second   the second: every mmap() spins KLAB_TRUST_SPIN2 more (a
#                function of its own, so either reverts alone and builds)
#   two-bad      the tip, comment-only commits around the two
#   harmless     a real code change with no cost (one more boot line)
#   harmless-bad the tip of that branch (two-good..harmless-bad: the
#                kernels differ, their performance does not)
#
# Both spins cost time in proportion to the guest's speed, as the
# benchmark does, so their share of a will-it-scale malloc1 iteration
# (one mmap, one fault, one munmap of 128 MiB) does not move when a TCG
# host slows down.  The counts are chosen so that each change carries
# about half of the range's regression on the log scale (malloc1 at
# 1 -> ~0.55 -> ~0.3 of the good end's rate): see tests/bench/trust.sh.
# The other commits change comments only, so their kernels are byte for
# byte a neighbour's (klab boots none of them).
set -eu
tree=$1 dest=$2
spin1=${KLAB_TRUST_SPIN1:-60000}
spin2=${KLAB_TRUST_SPIN2:-130000}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
[ ! -e "$dest" ] || { echo "make-trust-history: '$dest' exists" >&2; exit 1; }
git clone -q --shared "$tree" "$dest"
cd "$dest"
git tag two-good

i=0
# commit_as FILE SUBJECT AUTHOR BODY: commit FILE (already edited)
commit_as() {
	i=$((i + 1))
	git add "$1"
	GIT_AUTHOR_NAME=${3% <*} GIT_AUTHOR_EMAIL=$(echo "$3" | sed 's/.*<\(.*\)>/\1/') \
	GIT_AUTHOR_DATE="1701000000 +0000" GIT_COMMITTER_NAME="klab demo" \
	GIT_COMMITTER_EMAIL=demo@klab.invalid GIT_COMMITTER_DATE="$((1701000000 + i * 3600)) +0000" \
		git commit -q -m "$2" -m "$4"
}
# comment FILE SUBJECT AUTHOR: a comment line at the end of FILE
comment() {
	printf '\n/* %s */\n' "$2" >> "$1"
	commit_as "$1" "$2" "$3" "Comment-only change generated for klab's trust scenarios."
}
# edit FILE OLD NEW: replace the one OLD in FILE by NEW
edit() {
	python3 - "$@" <<'PY'
import sys
path, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
s = open(path).read()
if s.count(old) != 1:
    sys.exit("make-trust-history: %s does not look like 6.1's" % path)
open(path, "w").write(s.replace(old, new))
PY
}

comment mm/page_alloc.c "mm/page_alloc: note the pcp high mark scaling" "Mel Gorman <mgorman@techsingularity.net>"
comment fs/read_write.c "fs: describe the iov_iter fast path" "Jan Kara <jack@suse.cz>"

edit mm/mmap.c "SYSCALL_DEFINE2(munmap, unsigned long, addr, size_t, len)
{
	addr = untagged_addr(addr);
" "/* Planted by klab's trust scenario: a spin on every munmap(). */
static noinline void munmap_spin(unsigned long n)
{
	while (n--)
		barrier();
}

SYSCALL_DEFINE2(munmap, unsigned long, addr, size_t, len)
{
	munmap_spin($spin1);
	addr = untagged_addr(addr);
"
commit_as mm/mmap.c "mm/mmap: spin on every munmap (planted regression 1 of 2)" "klab demo <demo@klab.invalid>" \
	"A busy loop of $spin1 compiler barriers at every munmap() call: klab's
trust scenario plants it as the first of two regressions of about half
the range's each (tests/demo/make-trust-history.sh)."
git tag two-first

comment kernel/fork.c "fork: explain the vm_area_dup ordering" "Christian Brauner <brauner@kernel.org>"
comment mm/vmscan.c "mm/vmscan: note the swappiness corner cases" "Johannes Weiner <hannes@cmpxchg.org>"

edit mm/mmap.c "unsigned long ksys_mmap_pgoff(unsigned long addr, unsigned long len,
			      unsigned long prot, unsigned long flags,
			      unsigned long fd, unsigned long pgoff)
{
	struct file *file = NULL;
	unsigned long retval;
" "/* Planted by klab's trust scenario: a spin on every mmap(). */
static noinline void mmap_spin(unsigned long n)
{
	while (n--)
		barrier();
}

unsigned long ksys_mmap_pgoff(unsigned long addr, unsigned long len,
			      unsigned long prot, unsigned long flags,
			      unsigned long fd, unsigned long pgoff)
{
	struct file *file = NULL;
	unsigned long retval;

	mmap_spin($spin2);"
commit_as mm/mmap.c "mm/mmap: spin on every mmap too (planted regression 2 of 2)" "klab demo <demo@klab.invalid>" \
	"A busy loop of $spin2 compiler barriers at every mmap() call, on top of
the first: klab's trust scenario plants it as the second of two
regressions (tests/demo/make-trust-history.sh)."
git tag two-second

comment kernel/sched/fair.c "sched/fair: comment on the wake affine heuristic" "Peter Zijlstra <peterz@infradead.org>"
git tag two-bad

# The harmless branch: a real change of the kernel image that costs
# nothing measurable (a line at boot).
git checkout -q -b harmless-branch two-good
comment fs/namei.c "fs/namei: note the LOOKUP_RCU retry" "Al Viro <viro@zeniv.linux.org.uk>"
edit init/main.c "static int __ref kernel_init(void *unused)
{
	int ret;
" "static int __ref kernel_init(void *unused)
{
	int ret;

	pr_info(\"init: starting the first process\\n\");
"
commit_as init/main.c "init: say when the first process starts" "klab demo <demo@klab.invalid>" \
	"One more line at boot: a real change of the kernel image that costs
nothing a benchmark can see (klab's trust scenario)."
git tag harmless
comment mm/slub.c "mm/slub: clarify the cpu partial comment" "Vlastimil Babka <vbabka@suse.cz>"
git tag harmless-bad
git checkout -q --detach two-bad
