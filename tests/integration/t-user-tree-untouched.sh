#!/bin/sh
# The user's checkout is byte-for-byte unchanged by bisections: HEAD,
# index, working tree (dirty: a modified file, a staged change, untracked
# and ignored files), refs (loose and packed), reflogs, stash, config and
# every other file under .git, with their modes, sizes and mtimes, and
# `git status`.  The test command runs in klab's own worktree under the
# state directory, and klab runs no git program (checked with strace when
# it can trace here).
# POSIX sh; needs git, sha256sum, GNU find (-printf); strace is optional.

. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools git sha256sum find
T=$(cd "$T" && pwd -P)
HOME=$T
export HOME

# ---- the repository ----
# main: 40 commits (counter.txt, notes.txt); main 23 adds BROKEN; topic
# forks at main 30 (2 commits) and main 35 merges it.  feature forks at
# main 15 (6 commits); feature 4 adds BROKEN.  Tags: v1.0 (annotated, main
# 10), v2.0 (lightweight, main 30).
REPO=$T/repo
gen_stream() {
	t0=1700000000
	i=1
	while [ "$i" -le 40 ]; do
		if [ "$i" -eq 16 ]; then
			k=1
			while [ "$k" -le 6 ]; do
				from=
				[ "$k" -eq 1 ] && from=15
				gen_commit refs/heads/feature $((100 + k)) $((t0 + 15 * 60 + k * 5)) "feature $k" "$from"
				gen_file feature.txt "feature $k"
				[ "$k" -eq 4 ] && gen_file BROKEN "feature regression"
				k=$((k + 1))
			done
		fi
		if [ "$i" -eq 31 ]; then
			gen_commit refs/heads/topic 201 $((t0 + 30 * 60 + 5)) "topic 1" 30
			gen_file topic.txt "topic 1"
			gen_commit refs/heads/topic 202 $((t0 + 30 * 60 + 10)) "topic 2"
			gen_file topic.txt "topic 2"
		fi
		from= merge=
		[ "$i" -gt 1 ] && from=$((i - 1))
		[ "$i" -eq 35 ] && merge=202
		gen_commit refs/heads/main "$i" $((t0 + i * 60)) "main $i" "$from" "$merge"
		gen_file counter.txt "$i"
		[ $((i % 5)) -eq 0 ] && gen_file notes.txt "notes at $i"
		[ "$i" -eq 35 ] && gen_file topic.txt "topic 2"
		[ "$i" -eq 23 ] && gen_file BROKEN "main regression"
		if [ "$i" -eq 10 ]; then
			printf 'tag v1.0\nfrom :10\ntagger klab test <test@klab.invalid> %s +0000\ndata <<EOM\nversion 1.0\nEOM\n' \
				$((t0 + 600))
		fi
		i=$((i + 1))
	done
}
(
	set -e
	git init -q "$REPO"
	cd "$REPO"
	gen_stream | git fast-import --quiet --export-marks="$T/marks"
	git symbolic-ref HEAD refs/heads/main
	git reset -q --hard
	git tag v2.0 main~5
	# some refs packed, some loose; objects packed, then loose ones on top
	git pack-refs --all
	git repack -adq
	git branch work main~3
	git checkout -q work
	git checkout -q main
	# a stash
	echo "stashed change" >> counter.txt
	git stash push -q -m "a stash"
	# dirty: a modified tracked file, a staged change, untracked and ignored files
	echo "staged change" >> notes.txt
	git add notes.txt
	echo "unstaged change" >> counter.txt
	echo "untracked" > untracked.txt
	mkdir -p build/sub
	echo "object" > build/sub/out.o
	echo "build/" >> .git/info/exclude
	git config user.useConfigOnly true
) > "$T/setup.log" 2>&1
check "test repository built (dirty checkout of main, stash, tags, packed refs)" test $? -eq 0
mark() { sed -n "s/^:$1 //p" "$T/marks"; }
CULPRIT_MAIN=$(mark 23)
CULPRIT_FEATURE=$(mark 104)
st=$(cd "$REPO" && git status --porcelain)
if echo "$st" | grep -qx 'M  notes.txt' && echo "$st" | grep -qx ' M counter.txt'; then
	ok "checkout is dirty: a staged change (index differs from HEAD) and an unstaged one"
else
	fail "checkout is dirty: $st"
fi
check "checkout has an untracked file and a stash" \
	test -n "$(cd "$REPO" && git ls-files --others --exclude-standard)" -a \
	-n "$(cd "$REPO" && git stash list)"
# settle the index once (stat data), before the first snapshot
(cd "$REPO" && git update-index -q --refresh) >/dev/null 2>&1

# ---- snapshot: everything observable about the checkout ----
snapshot() {
	(
		cd "$REPO" || exit 1
		echo "== ls -a .git"
		ls -a .git
		echo "== .git: every path, type, mode, size, mtime"
		LC_ALL=C find .git -printf '%p %y %m %s %T@\n' | LC_ALL=C sort
		echo "== .git: every file's sha256"
		LC_ALL=C find .git -type f -print | LC_ALL=C sort | while IFS= read -r f; do sha256sum "$f"; done
		echo "== working tree: every path, type, mode, size, mtime"
		LC_ALL=C find . -path ./.git -prune -o -printf '%p %y %m %s %T@\n' | LC_ALL=C sort
		echo "== working tree: every file's sha256"
		LC_ALL=C find . -path ./.git -prune -o -type f -print | LC_ALL=C sort |
			while IFS= read -r f; do sha256sum "$f"; done
		# read-only git commands: no index refresh written
		echo "== git status"
		GIT_OPTIONAL_LOCKS=0 git status --porcelain=v2 --branch --untracked-files=all --ignored
		echo "== refs"
		GIT_OPTIONAL_LOCKS=0 git for-each-ref --format='%(refname) %(objectname)'
		echo "== HEAD"
		GIT_OPTIONAL_LOCKS=0 git symbolic-ref HEAD
		echo "== stash"
		GIT_OPTIONAL_LOCKS=0 git stash list
	)
}
snapshot > "$T/before" 2>> "$T/snapshot.err"
# a control: taking the snapshot itself changes nothing
snapshot > "$T/before2" 2>> "$T/snapshot.err"
check "the snapshot is stable (taking it changes nothing)" cmp -s "$T/before" "$T/before2"
check "snapshot covers .git/HEAD, index, packed-refs, reflogs, stash" \
	sh -c 'grep -q "^[0-9a-f]*  .git/HEAD$" "$1" && grep -q "  .git/index$" "$1" &&
		grep -q "  .git/packed-refs$" "$1" && grep -q "  .git/logs/HEAD$" "$1" &&
		grep -q "  .git/logs/refs/stash$" "$1" && grep -q "  .git/refs/stash$" "$1" &&
		grep -q "  ./untracked.txt$" "$1" && grep -q "  ./build/sub/out.o$" "$1"' sh "$T/before"

# ---- the test command: records where it ran, good unless BROKEN ----
cat > "$T/test-cmd.sh" <<'EOS'
#!/bin/sh
# builtins only: the only program this runs is its own shell
echo "$(pwd -P) $KLAB_WORKTREE $KLAB_COMMIT" >> "$1"
if [ -e BROKEN ]; then exit 1; fi
exit 0
EOS
chmod +x "$T/test-cmd.sh"

LAB=$T/lab
"$KLAB" --state "$LAB" init > /dev/null
check "klab init" test $? -eq 0
LABREAL=$(cd "$LAB" && pwd -P)

use_strace=
if command -v strace >/dev/null 2>&1; then
	if strace -f -qq -e trace=execve -o /dev/null true >/dev/null 2>&1; then
		use_strace=1
	else
		echo "# strace cannot trace here (ptrace not permitted?): the no-git-process check is not run"
	fi
else
	echo "# strace is not installed: the no-git-process check is not run"
fi
run_klab() { # TRACEFILE ARGS...: klab ARGS, under strace when possible
	tf=$1; shift
	if [ -n "$use_strace" ]; then
		# LeakSanitizer cannot run under ptrace (an --enable-asan build)
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			strace -f -qq -e trace=execve -o "$tf" "$KLAB" "$@"
	else
		"$KLAB" "$@"
	fi
}

# bisection 1: main, good v1.0~9 (the root), bad main, over the merge
run_klab "$T/trace1" --state "$LAB" bisect start --repo "$REPO" --good 'v1.0~9' --bad main -- \
	"$T/test-cmd.sh" "$T/where1" > "$T/out1" 2> "$T/err1"
rc=$?
check "bisection 1 (main) exits 0" test "$rc" -eq 0
check "bisection 1 finds main 23 ($CULPRIT_MAIN)" grep -q "^$CULPRIT_MAIN is the first bad commit\$" "$T/out1"
# bisection 2: feature, good the annotated tag, bad the (unchecked-out) branch
run_klab "$T/trace2" --state "$LAB" bisect start --repo "$REPO" --good v1.0 --bad feature -- \
	"$T/test-cmd.sh" "$T/where2" > "$T/out2" 2> "$T/err2"
rc=$?
check "bisection 2 (feature) exits 0" test "$rc" -eq 0
check "bisection 2 finds feature 4 ($CULPRIT_FEATURE)" grep -q "^$CULPRIT_FEATURE is the first bad commit\$" "$T/out2"
# bisection 3: main again, --first-parent, good given as a branch name
run_klab "$T/trace3" --state "$LAB" bisect start --repo "$REPO" --first-parent --good 'work~30' --bad main -- \
	"$T/test-cmd.sh" "$T/where3" > "$T/out3" 2> "$T/err3"
rc=$?
check "bisection 3 (--first-parent) exits 0" test "$rc" -eq 0
check "bisection 3 finds main 23" grep -q "^$CULPRIT_MAIN is the first bad commit\$" "$T/out3"
# the read-only commands too
"$KLAB" --state "$LAB" bisect resume 1 > /dev/null 2>&1
"$KLAB" --state "$LAB" bisect show 1 > /dev/null 2>&1
"$KLAB" --state "$LAB" bisect log 2 > /dev/null 2>&1
"$KLAB" --state "$LAB" bisect list > /dev/null 2>&1

snapshot > "$T/after" 2>> "$T/snapshot.err"
if cmp -s "$T/before" "$T/after"; then
	ok "the user's checkout is unchanged: .git (HEAD, index, refs, packed-refs, reflogs, stash, config, objects), working tree, git status"
else
	fail "the user's checkout changed:"
	diff -u "$T/before" "$T/after" | sed 's/^/#   /'
fi
check "no BISECT_* file, worktrees/ or *.lock in the user's .git" \
	test -z "$(ls -a "$REPO/.git" | grep -e '^BISECT_' -e '^worktrees$' -e '\.lock$')"
# a control: the snapshot does see a change as small as one mtime
touch -d @1700000000 "$REPO/.git/index"
snapshot > "$T/control" 2>> "$T/snapshot.err"
check "control: the snapshot detects an index whose mtime changed" test -n "$(diff "$T/after" "$T/control")"

# where the test command ran
cat "$T/where1" "$T/where2" "$T/where3" > "$T/where" 2>/dev/null
nruns=$(wc -l < "$T/where")
steps=0
for id in 1 2 3; do
	steps=$((steps + $("$KLAB" --state "$LAB" bisect show "$id" | sed -n 's/^steps: *//p')))
done
check "the test command ran once per step ($nruns runs, $steps steps)" test "$nruns" -eq "$steps" -a "$nruns" -gt 0
outside=$(awk -v lab="$LABREAL/worktrees/" 'index($1, lab) != 1 || index($2, lab) != 1' "$T/where")
check "every run's cwd (and KLAB_WORKTREE) is under the state dir's worktrees/" test -z "$outside"
[ -n "$outside" ] && echo "$outside" | sed 's/^/#   ran in: /'
check "no run happened in the user's repository" test -z "$(grep -F "$REPO" "$T/where")"
check "cwd is KLAB_WORKTREE for every run" test -z "$(awk '$1 != $2' "$T/where")"

# no git program: only klab and the test command were executed
if [ -n "$use_strace" ]; then
	cat "$T/trace1" "$T/trace2" "$T/trace3" | sed -n 's/^[0-9]* *execve("\([^"]*\)".*/\1/p' | sort | uniq -c > "$T/execs"
	sed 's/^/#   exec: /' "$T/execs"
	gits=$(awk '{ n = split($2, p, "/"); b = p[n] } b == "git" || b ~ /^git-/' "$T/execs")
	check "klab executed no git program" test -z "$gits"
	others=$(awk -v k="$KLAB" -v t="$T/test-cmd.sh" '$2 != k && $2 != t' "$T/execs")
	check "klab executed only itself and the test command" test -z "$others"
	tests_run=$(awk -v t="$T/test-cmd.sh" '$2 == t { print $1 }' "$T/execs")
	check "the test command was executed once per step" test "${tests_run:-0}" -eq "$steps"
fi

finish
