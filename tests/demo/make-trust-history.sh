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
#   two-second   the second: every munmap() spins KLAB_TRUST_SPIN2 more in
#                __vm_munmap (a function and a hunk of its own, so either
#                reverts alone and builds)
#   two-bad      the tip, comment-only commits around the two
#   harmless     a real code change with no cost (one more boot line)
#   harmless-bad the tip of that branch (two-good..harmless-bad: the
#                kernels differ, their performance does not)
#   mmapaddr-planted, mmapaddr-bad  a single regression for stress-ng
#                mmapaddr among harmless image changes (below)
#
# Both spins cost time in proportion to the guest's speed, as the
# benchmark does, and are the same loop at the same alignment (64 bytes),
# so that a spin costs the same in both: a first, unaligned pair cost
# about 1 and 2 units a spin (TCG chains its translated blocks only
# within a page: the likely reason, not measured).  Each change's share of the range's regression is
# then set by the counts: the second 1.6 times the first, so that the
# commit between the ends sits at about half the log-scale gap (0.5 to
# 0.6 for a spin costing anything from a third of a malloc1 iteration's
# other work to three times it: 1 -> ~0.4 -> ~0.2 of the good end's rate
# on this machine), reverting the second leaves the first's half, and
# reverting the first leaves more than that.  A first version put the
# second spin on mmap: its share grew from about 40% quiet to 75% on a
# loaded CI host, and the commit between the ends looked good.
# The other commits change comments only, so their kernels are byte for
# byte a neighbour's (klab boots none of them).  The tag trust-history-4
# names this script's version: tests/trust-kernels.sh makes the history
# again when it is missing.
set -eu
tree=$1 dest=$2
spin1=${KLAB_TRUST_SPIN1:-150000}
spin2=${KLAB_TRUST_SPIN2:-240000}
spin3=${KLAB_TRUST_SPIN3:-100000}
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

# plant_munmap_spin N: a spin of N compiler barriers at the top of the
# munmap syscall (the first planted regression and the mmapaddr one)
plant_munmap_spin() {
	edit mm/mmap.c "SYSCALL_DEFINE2(munmap, unsigned long, addr, size_t, len)
{
	addr = untagged_addr(addr);
" "/* Planted by klab's trust scenario: a spin on every munmap(). */
static noinline __aligned(64) void munmap_spin(unsigned long n)
{
	while (n--)
		barrier();
}

SYSCALL_DEFINE2(munmap, unsigned long, addr, size_t, len)
{
	munmap_spin($1);
	addr = untagged_addr(addr);
"
}

comment mm/page_alloc.c "mm/page_alloc: note the pcp high mark scaling" "Mel Gorman <mgorman@techsingularity.net>"
comment fs/read_write.c "fs: describe the iov_iter fast path" "Jan Kara <jack@suse.cz>"

plant_munmap_spin "$spin1"
commit_as mm/mmap.c "mm/mmap: spin on every munmap (planted regression 1 of 2)" "klab demo <demo@klab.invalid>" \
	"A busy loop of $spin1 compiler barriers at every munmap() call: klab's
trust scenario plants it as the first of two regressions of about half
the range's each (tests/demo/make-trust-history.sh)."
git tag two-first

comment kernel/fork.c "fork: explain the vm_area_dup ordering" "Christian Brauner <brauner@kernel.org>"
comment mm/vmscan.c "mm/vmscan: note the swappiness corner cases" "Johannes Weiner <hannes@cmpxchg.org>"

edit mm/mmap.c "static int __vm_munmap(unsigned long start, size_t len, bool downgrade)
{
	int ret;
	struct mm_struct *mm = current->mm;
	LIST_HEAD(uf);
	MA_STATE(mas, &mm->mm_mt, start, start);
" "/* Planted by klab's trust scenario: a second spin on every munmap(). */
static noinline __aligned(64) void vm_munmap_spin(unsigned long n)
{
	while (n--)
		barrier();
}

static int __vm_munmap(unsigned long start, size_t len, bool downgrade)
{
	int ret;
	struct mm_struct *mm = current->mm;
	LIST_HEAD(uf);
	MA_STATE(mas, &mm->mm_mt, start, start);

	vm_munmap_spin($spin2);"
commit_as mm/mmap.c "mm/mmap: spin in __vm_munmap too (planted regression 2 of 2)" "klab demo <demo@klab.invalid>" \
	"A busy loop of $spin2 compiler barriers at every munmap() call, on top
of the first (the same path, so their shares hold when the host's speed
moves the benchmark's other costs): klab's trust scenario plants it as
the second of two regressions (tests/demo/make-trust-history.sh)."
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

# The mmapaddr range (issue 17's first unseen range, rebuilt): a
# regression of about -40% on stress-ng mmapaddr (KLAB_TRUST_SPIN3 spins
# on every munmap) among commits that each change the kernel image
# harmlessly, so that every commit between the ends is booted and judged
# (none inherits an end's mark by an identical image).
git checkout -q -b mmapaddr-branch two-good
edit init/main.c "static int __ref kernel_init(void *unused)
{
	int ret;
" "static int __ref kernel_init(void *unused)
{
	int ret;

	pr_info(\"init: about to free the init memory\\n\");
"
commit_as init/main.c "init: say when the init memory goes" "klab demo <demo@klab.invalid>" \
	"One more line at boot (klab's trust scenario: a harmless image change)."
plant_munmap_spin "$spin3"
commit_as mm/mmap.c "mm/mmap: spin on every munmap (planted regression, mmapaddr)" "klab demo <demo@klab.invalid>" \
	"A busy loop of $spin3 compiler barriers at every munmap() call: about
-40% on stress-ng mmapaddr under TCG, where 20000 made -12%
(tests/demo/make-trust-history.sh)."
git tag mmapaddr-planted
edit mm/mmap.c "	ret = percpu_counter_init(&vm_committed_as, 0, GFP_KERNEL);
	VM_BUG_ON(ret);
" "	ret = percpu_counter_init(&vm_committed_as, 0, GFP_KERNEL);
	VM_BUG_ON(ret);
	pr_info(\"mmap: commit accounting ready\\n\");
"
commit_as mm/mmap.c "mm/mmap: say when the commit accounting is ready" "klab demo <demo@klab.invalid>" \
	"One more line at boot (klab's trust scenario: another harmless image change)."
comment mm/rmap.c "mm/rmap: note the anon_vma chain order" "Hugh Dickins <hughd@google.com>"
git tag mmapaddr-bad
git tag trust-history-4
git checkout -q --detach two-bad
