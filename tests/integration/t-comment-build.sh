#!/bin/sh
# A comment-only edit of a header nearly every object includes
# (include/linux/mm.h) rebuilds next to nothing over the base's build
# (kernel/kkeep.h), and the image is byte for byte the one built without
# the shortcut (the same commit over the same build directory, mm.h's
# mtime new); a comment line that shifts the next ones and a real change
# of a header do rebuild what includes them.  Real builds of the cached
# 6.1 tree in a lab of its own with the shared ccache.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
. "$KLAB_SRCDIR/tests/kernel-tree.sh"
require_tools git sqlite3 ccache cmp
# its builds keep both CPUs busy: a test that needs them to itself waits
guest_cpus_lock shared

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
sed -i "s|^ccache_dir =.*|ccache_dir = $KCCACHE|" "$lab/klab.conf"
grep -q '^comment_only_files = keep$' "$lab/klab.conf" && ok "klab.conf keeps comment-only files' builds by default" ||
	fail "klab.conf: $(grep comment_only_files "$lab/klab.conf")"

git clone -q --shared "$KTREE" "$T/linux"
cd "$T/linux"
commit() { git add -A && git commit -q -m "$1"; git rev-parse HEAD; }
base=$(git rev-parse HEAD)
sed -i '1s|GPL-2.0 \*/|GPL-2.0 (klab test: comment only) */|' include/linux/mm.h
c_comment=$(commit "mm.h: a comment")
# a header a handful of objects include: a line more shifts every token
sed -i '1a /* klab test: a line of comment */' include/linux/khugepaged.h
c_shift=$(commit "khugepaged.h: a comment line")
sed -i 's|^#endif /\* _LINUX_KHUGEPAGED_H \*/|#define KLAB_TEST_REAL 1\n&|' include/linux/khugepaged.h
c_real=$(commit "khugepaged.h: a real change")
cd "$KLAB_SRCDIR"
check "the real change is code" grep -q '^#define KLAB_TEST_REAL 1' "$T/linux/include/linux/khugepaged.h"

# build REV: $out, $kernel, $objects (make's count) and $hits (ccache's)
build() {
	out=$(k build --repo "$T/linux" --rev "$1" 2>&1); rc=$?
	kernel=$(echo "$out" | sed -n 's/^kernel: *//p')
	objects=$(echo "$out" | sed -n 's/^compiled: *\([0-9]*\) object.*/\1/p')
	hits=$(echo "$out" | sed -n 's/^compiled: *[0-9]* objects\{0,1\} (\([0-9]*\) from ccache).*/\1/p')
	[ "$rc" -eq 0 ] && [ -s "$kernel" ] && [ -n "$objects" ]
}

check "the base builds (from the shared ccache after the first run)" build "$base"
echo "# base: $objects objects, $hits from ccache"

# 1. the comment in mm.h: next to nothing compiled, the header kept
if build "$c_comment"; then ok "the comment-only commit builds"; else fail "comment-only build: $out"; fi
k_comment=$kernel
echo "# mm.h comment: $objects objects compiled"
check "the comment in mm.h compiled at most 5 objects (566 without the shortcut)" test "$objects" -le 5
case $out in *"[checkout] done"*"1 file with comment-only changes kept its build"*) ok "the checkout says mm.h kept its build";;
	*) fail "checkout line: $out";; esac
case $out in *"1 comment-only file kept its build"*) ok "the build says a file kept its build";; *) fail "compiled line: $out";; esac

# 2. a shifted line: rebuilt, and said why
build "$c_shift" && ok "the shifted-line commit builds" || fail "shifted-line build: $out"
echo "# khugepaged.h line shift: $objects objects compiled"
check "a comment line that shifts tokens rebuilds what includes the header" test "$objects" -ge 3
case $out in *"compiled:"*" for include/linux/khugepaged.h ("*) ok "the build names khugepaged.h as what it compiled for";; *) fail "no reason: $out";; esac

# 3. a real change of the header: rebuilt
build "$c_real" && ok "the real change builds" || fail "real-change build: $out"
echo "# khugepaged.h real change: $objects objects compiled, $hits from ccache"
check "a real header change rebuilds what includes it" test "$objects" -ge 3
check "ccache's hits are counted" test -n "$hits"

# 4. the image without the shortcut: the comment commit again (another
# commit id, so not a store hit: the tree plus a note in Documentation),
# over the same build directory, with mm.h's mtime new as a checkout
# without the shortcut leaves it: the same image byte for byte
sed -i 's|^comment_only_files =.*|comment_only_files = rebuild|' "$lab/klab.conf"
cd "$T/linux"
git checkout -q "$c_comment" -- include/linux/khugepaged.h
echo "klab test" >> Documentation/admin-guide/README.rst
c_ref=$(commit "the comment commit again, built without the shortcut")
cd "$KLAB_SRCDIR"
touch "$lab"/worktrees/repo-*/include/linux/mm.h
build "$c_ref" && ok "the comment commit builds without the shortcut" || fail "reference build: $out"
echo "# without the shortcut: $objects objects compiled, $hits from ccache"
check "without the shortcut the mm.h comment rebuilds most of the kernel" test "$objects" -ge 500
check "the image with the shortcut is byte for byte the one without" cmp -s "$k_comment" "$kernel"
check "and so is the kernel it carries (identity)" test \
	"$(sed -n 's/^vmlinux sha256://p' "$(dirname "$k_comment")/identity")" = \
	"$(sed -n 's/^vmlinux sha256://p' "$(dirname "$kernel")/identity")"
finish
