#!/bin/sh
# The kernel demo's scenario: a short, realistic history on top of the
# imported 6.1 tree (klab tree import) in which one commit re-applies
# "mm: align larger anonymous mappings on THP boundaries" (upstream
# f35b5d7d67, reverted in 6.1 stable): with THP 'always' every
# malloc(128 MiB) then faults in a 2 MiB huge page that must be cleared,
# the cause of LKP's will-it-scale.per_process_ops -95.5% malloc1 report.
#
#   make-kernel-history.sh TREE DEST [N]
#
# TREE: the imported tree; DEST: a new repository sharing TREE's objects
# (git clone --shared); N: commits on top (default 24; the planted one is
# in the middle).  Tags: demo-good (the import), demo-bad (the tip).
# Prints the planted commit's hash.  The other commits change comments in
# mm/, fs/, kernel/ and a few headers included by few files, so every
# commit builds and behaves like its parent: incremental builds stay short.
# The planted commit is also tagged demo-planted.
#
# The second scenario adds commits a bisection must skip, as a real tree
# has them: DEMO_PANIC_AT=K puts a commit whose kernel panics at boot (a
# BUG_ON in kernel_init() that always fires) before the K-th generated
# commit (from 0) and its fix after it; DEMO_BREAK_AT=K likewise a commit
# that does not build (kernel/bounds.c calls an undeclared function: kbuild
# compiles that file in its prepare step, so the build fails within a
# minute, as a broken header would, not after most of the kernel).  With
# both at one K the window is: panics, does not build (twice: the break
# and the K-th commit), panics, fixed.  Tagged demo-panics and demo-broken.
#
# Issue 19's range: DEMO_OUTSIDE=M adds M commits that touch only files a
# tinyconfig guest never builds (each appends a line to a file chosen with
# a fixed seed: three in four a `.c`/`.h` under drivers/, the rest under
# Documentation/), spread evenly among the N generated ones, so the
# history has N + M commits and N of them change what the guest's kernel
# is made of.  (A random drivers/ file may be one the guest does compile:
# the bisection must find that out, not the generator.)
#
# Issue 41's range: DEMO_HEADERS=1 makes every other generated commit a
# comment at the end of a header that most of the kernel includes
# (include/linux/mm.h, fs.h, sched.h, ...) instead of a `.c` file, as real
# ranges carry them: make rebuilds every dependent of such a header, and
# klab must not.
set -eu
tree=$1 dest=$2 n=${3:-24}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
[ ! -e "$dest" ] || { echo "make-kernel-history: '$dest' exists" >&2; exit 1; }
git clone -q --shared "$tree" "$dest"
cd "$dest"
git tag demo-good

# commit FILE SUBJECT AUTHOR: a comment line at the end of the file (the
# first lines may be inside a comment block).
i=0
commit() {
	file=$1 subject=$2 author=$3
	i=$((i + 1))
	printf '\n/* %s */\n' "$subject" >> "$file"
	git add "$file"
	GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=$(echo "$author" | sed 's/.*<\(.*\)>/\1/') \
	GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_NAME="klab demo" \
	GIT_COMMITTER_EMAIL=demo@klab.invalid GIT_COMMITTER_DATE="$((1700000000 + i * 3600)) +0000" \
		git commit -q -m "$subject" -m "Comment-only change generated for klab's demo history."
}

plant() {
	i=$((i + 1))
	python3 - mm/mmap.c <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = """		pgoff = 0;
		get_area = shmem_get_unmapped_area;
	}
"""
new = """		pgoff = 0;
		get_area = shmem_get_unmapped_area;
	} else if (IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE)) {
		/* Ensures that larger anonymous mappings are THP aligned. */
		get_area = thp_get_unmapped_area;
	}
"""
if s.count(old) != 1:
    sys.exit("make-kernel-history: mm/mmap.c does not look like 6.1's get_unmapped_area()")
open(p, "w").write(s.replace(old, new))
PY
	git add mm/mmap.c
	GIT_AUTHOR_NAME="Rik van Riel" GIT_AUTHOR_EMAIL=riel@surriel.com GIT_AUTHOR_DATE="1702000000 +0000" \
	GIT_COMMITTER_NAME="klab demo" GIT_COMMITTER_EMAIL=demo@klab.invalid \
	GIT_COMMITTER_DATE="$((1700000000 + i * 3600)) +0000" git commit -q -F - <<'MSG'
mm: align larger anonymous mappings on THP boundaries

Align larger anonymous memory mappings on THP boundaries by going through
thp_get_unmapped_area if THPs are enabled for the current process.

With this patch, larger anonymous mappings are now THP aligned.  When a
malloc library allocates a 2MB or larger arena, that arena can now be
mapped with THPs right from the start, which can result in better TLB hit
rates and execution time.

(Re-applied on 6.1 by klab's demo scenario; upstream f35b5d7d67.)
MSG
	git tag demo-planted
	git rev-parse HEAD
}

# special KIND: a commit that breaks the build or the boot, or the one
# that repairs it.
special() {
	kind=$1
	i=$((i + 1))
	python3 - "$kind" <<'PY'
import sys
kind = sys.argv[1]
def edit(path, old, new):
    s = open(path).read()
    if s.count(old) != 1:
        sys.exit("make-kernel-history: %s does not look like 6.1's" % path)
    open(path, "w").write(s.replace(old, new))
bounds_old = "\tDEFINE(NR_PAGEFLAGS, __NR_PAGEFLAGS);\n"
bounds_new = bounds_old + "\tDEFINE(NR_FILES_BITS, files_struct_bits());\n"
init_old = "static int __ref kernel_init(void *unused)\n{\n\tint ret;\n\n"
init_new = init_old + "\tBUG_ON(system_state != SYSTEM_RUNNING);\n\n"
if kind == "break":
    edit("kernel/bounds.c", bounds_old, bounds_new)
elif kind == "fix-break":
    edit("kernel/bounds.c", bounds_new, bounds_old)
elif kind == "panic":
    edit("init/main.c", init_old, init_new)
else:
    edit("init/main.c", init_new, init_old)
PY
	# (own variable names: the caller's $file is in use)
	case $kind in
	break) sfile=kernel/bounds.c ssubject="bounds: generate NR_FILES_BITS for the files_struct accounting" ;;
	fix-break) sfile=kernel/bounds.c ssubject="bounds: fix the build after NR_FILES_BITS" ;;
	panic) sfile=init/main.c ssubject="init: assert the system state before freeing init memory" ;;
	*) sfile=init/main.c ssubject="init: drop the wrong system state assertion" ;;
	esac
	git add "$sfile"
	GIT_AUTHOR_NAME="klab demo" GIT_AUTHOR_EMAIL=demo@klab.invalid GIT_AUTHOR_DATE="1700000000 +0000" \
	GIT_COMMITTER_NAME="klab demo" GIT_COMMITTER_EMAIL=demo@klab.invalid \
	GIT_COMMITTER_DATE="$((1700000000 + i * 3600)) +0000" \
		git commit -q -m "$ssubject" -m "Generated for klab's second demo scenario ($kind)."
	case $kind in
	break) git tag demo-broken ;;
	panic) git tag demo-panics ;;
	esac
}

set -- \
	"mm/page_alloc.c|mm/page_alloc: clarify the watermark boost comment|Mel Gorman <mgorman@techsingularity.net>" \
	"fs/read_write.c|fs: note why rw_verify_area() checks the range first|Jan Kara <jack@suse.cz>" \
	"kernel/fork.c|fork: document the order of the mm copy steps|Christian Brauner <brauner@kernel.org>" \
	"mm/vmscan.c|mm/vmscan: describe the anon/file balance heuristics|Johannes Weiner <hannes@cmpxchg.org>" \
	"fs/namei.c|fs/namei: comment on the RCU walk fallback|Al Viro <viro@zeniv.linux.org.uk>" \
	"kernel/sched/fair.c|sched/fair: explain the load-balance interval scaling|Peter Zijlstra <peterz@infradead.org>" \
	"mm/memory.c|mm/memory: note the ordering in do_anonymous_page()|Matthew Wilcox <willy@infradead.org>" \
	"mm/slub.c|mm/slub: clarify the partial list comment|Vlastimil Babka <vbabka@suse.cz>" \
	"fs/exec.c|exec: document the bprm credential handoff|Kees Cook <keescook@chromium.org>" \
	"kernel/exit.c|exit: comment on the reaper selection|Oleg Nesterov <oleg@redhat.com>" \
	"mm/huge_memory.c|mm/huge_memory: describe the deferred split queue|Kirill A. Shutemov <kirill.shutemov@linux.intel.com>" \
	"mm/mprotect.c|mm/mprotect: note the PROT_NONE NUMA hinting path|Mel Gorman <mgorman@techsingularity.net>" \
	"include/linux/khugepaged.h|khugepaged: comment on the hugepage_vma_check() callers|Zach O'Keefe <zokeefe@google.com>" \
	"fs/pipe.c|pipe: document the buffer accounting|David Howells <dhowells@redhat.com>" \
	"kernel/signal.c|signal: clarify the shared pending queue comment|Eric W. Biederman <ebiederm@xmission.com>" \
	"mm/mremap.c|mm/mremap: explain the move_page_tables() fast path|Linus Torvalds <torvalds@linux-foundation.org>" \
	"mm/rmap.c|mm/rmap: document the anon_vma locking order|Hugh Dickins <hughd@google.com>" \
	"fs/splice.c|splice: note the pipe-to-pipe short-cut|Jens Axboe <axboe@kernel.dk>" \
	"kernel/time/hrtimer.c|hrtimer: comment on the softirq expiry path|Thomas Gleixner <tglx@linutronix.de>" \
	"mm/madvise.c|mm/madvise: describe MADV_HUGEPAGE's interaction with khugepaged|David Hildenbrand <david@redhat.com>" \
	"fs/open.c|fs/open: clarify do_truncate()'s permission checks|Christian Brauner <brauner@kernel.org>" \
	"mm/filemap.c|mm/filemap: note the readahead window growth|Matthew Wilcox <willy@infradead.org>" \
	"kernel/sched/core.c|sched/core: explain the wakeup preemption check|Ingo Molnar <mingo@kernel.org>" \
	"mm/shmem.c|mm/shmem: comment on huge=within_size|Hugh Dickins <hughd@google.com>" \
	"mm/util.c|mm/util: document vm_mmap_pgoff()'s locking|Liam R. Howlett <Liam.Howlett@oracle.com>" \
	"fs/inode.c|fs/inode: note the LRU isolation rules|Dave Chinner <dchinner@redhat.com>" \
	"kernel/panic.c|panic: comment on the panic_timeout semantics|Petr Mladek <pmladek@suse.com>" \
	"mm/mlock.c|mm/mlock: clarify the munlock batch comment|Hugh Dickins <hughd@google.com>" \
	"fs/dcache.c|fs/dcache: document the shrink list ordering|Al Viro <viro@zeniv.linux.org.uk>" \
	"mm/swap.c|mm/swap: note the lru_add batching|Yu Zhao <yuzhao@google.com>" \
	"kernel/cpu.c|cpu/hotplug: comment on the state machine rollback|Thomas Gleixner <tglx@linutronix.de>" \
	"mm/gup.c|mm/gup: describe FOLL_LONGTERM checks|Jason Gunthorpe <jgg@nvidia.com>" \
	"fs/file_table.c|fs/file_table: note the delayed fput path|Al Viro <viro@zeniv.linux.org.uk>" \
	"mm/page-writeback.c|mm/page-writeback: explain the dirty throttling ramp|Jan Kara <jack@suse.cz>" \
	"kernel/sys.c|sys: comment on the prctl() option ordering|Kees Cook <keescook@chromium.org>" \
	"mm/mempolicy.c|mm/mempolicy: document interleave node selection|Huang Ying <ying.huang@intel.com>" \
	"fs/super.c|fs/super: clarify the sb shrinker locking|Dave Chinner <dchinner@redhat.com>" \
	"kernel/kthread.c|kthread: note the park/unpark handshake|Frederic Weisbecker <frederic@kernel.org>" \
	"mm/compaction.c|mm/compaction: describe the proactive compaction score|Vlastimil Babka <vbabka@suse.cz>"
[ "$n" -ge 4 ] && [ "$n" -le $(($# + 1)) ] || { echo "make-kernel-history: N must be 4..$(($# + 1))" >&2; exit 1; }
outside=${DEMO_OUTSIDE:-0}
case $outside in *[!0-9]* | '') echo "make-kernel-history: DEMO_OUTSIDE must be a number" >&2; exit 1 ;; esac
if [ "$outside" -gt 0 ]; then
	# the files, in commit order: a seeded shuffle of each pool
	pick() { # POOL-PATTERN COUNT SEED
		git ls-files -- "$1" | awk -v seed="$3" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' |
			sort -n | head -n "$2" | cut -f2
	}
	nd=$((outside * 3 / 4))
	{ pick 'drivers/*.[ch]' "$nd" 19; pick 'Documentation/*.rst' $((outside - nd)) 20; } |
		awk -v seed=21 'BEGIN { srand(seed) } { print rand() "\t" $0 }' | sort -n | cut -f2 > .git/outside-files
fi
o=0
# outside_upto K: outside commits until K*M/N of them are made (spread
# evenly among the N generated commits)
outside_upto() {
	while [ "$o" -lt $(($1 * outside / n)) ]; do
		o=$((o + 1))
		ofile=$(sed -n "${o}p" .git/outside-files)
		i=$((i + 1))
		case $ofile in
		*.rst) printf '\n.. note %d: wording generated for klab'"'"'s issue 19 range.\n' "$o" >> "$ofile" ;;
		*) printf '\n/* note %d: comment generated for klab'"'"'s issue 19 range */\n' "$o" >> "$ofile" ;;
		esac
		git add "$ofile"
		GIT_AUTHOR_NAME="klab demo" GIT_AUTHOR_EMAIL=demo@klab.invalid GIT_AUTHOR_DATE="1700000000 +0000" \
		GIT_COMMITTER_NAME="klab demo" GIT_COMMITTER_EMAIL=demo@klab.invalid \
		GIT_COMMITTER_DATE="$((1700000000 + i * 3600)) +0000" \
			git commit -q -m "${ofile%%/*}: note $o in ${ofile#*/}" \
			-m "Generated for klab's issue 19 range: a file a tinyconfig guest does not build."
	done
}
headers="include/linux/mm.h include/linux/fs.h include/linux/sched.h include/linux/mm_types.h
	include/linux/slab.h include/linux/gfp.h include/linux/mmzone.h include/linux/pagemap.h
	include/linux/list.h include/linux/spinlock.h include/linux/rmap.h include/linux/swap.h"
case ${DEMO_HEADERS:-0} in 0 | 1) ;; *) echo "make-kernel-history: DEMO_HEADERS must be 0 or 1" >&2; exit 1 ;; esac
half=$((n / 2))
k=0
planted=
for spec in "$@"; do
	[ "$k" -lt $((n - 1)) ] || break
	outside_upto "$k"
	if [ "$k" -eq "$half" ]; then
		planted=$(plant)
	fi
	file=${spec%%|*} rest=${spec#*|}
	subject=${rest%%|*}
	if [ "${DEMO_HEADERS:-0}" = 1 ] && [ $((k % 2)) = 1 ]; then
		file=$(echo $headers | tr ' ' '\n' | sed -n "$((k / 2 % 12 + 1))p")
		subject="${file#include/}: fix a comment's wording"
	fi
	[ "$k" != "${DEMO_PANIC_AT:-}" ] || special panic
	[ "$k" != "${DEMO_BREAK_AT:-}" ] || special break
	commit "$file" "$subject" "${rest#*|}"
	[ "$k" != "${DEMO_BREAK_AT:-}" ] || special fix-break
	[ "$k" != "${DEMO_PANIC_AT:-}" ] || special fix-panic
	k=$((k + 1))
done
[ -n "$planted" ] || planted=$(plant)
outside_upto "$n"
git tag demo-bad
echo "$planted"
