#!/bin/sh
# klab track without guests: add and its checks, fetch through libgit2
# from a file:// URL into refs/klab/track/NAME, the fetch records (first,
# unchanged, moved, history rewritten with the tested tip it compares
# with or none, branch deleted, remote gone), 'track run' doing nothing
# for a tip already tested, the user's refs, HEAD, index and files
# untouched throughout, remove, and valgrind on a fetch.  t-track.sh
# builds and boots the kernels.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
job="$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml"

make_linear_repo "$T/upstream" 6 99
git clone -q "$T/upstream" "$T/linux"
url="file://$T/upstream"
# the user's state: a local branch, a dirty file, a staged change
git -C "$T/linux" branch -q mywork main~2
echo "local edit" >> "$T/linux/value"
echo "staged" > "$T/linux/staged.txt"
git -C "$T/linux" add staged.txt
snapshot() {
	git -C "$T/linux" for-each-ref --format='%(refname) %(objectname)' | grep -v '^refs/klab/'
	git -C "$T/linux" symbolic-ref HEAD
	git -C "$T/linux" rev-parse HEAD
	GIT_OPTIONAL_LOCKS=0 git -C "$T/linux" status --porcelain --untracked-files=all
	sha1sum < "$T/linux/.git/index"
}
snapshot > "$T/user.before"

# ---- add checks everything up front -------------------------------------------
one_line_fail() {	# DESC EXPECTED-RC ARGS...
	desc=$1 want=$2; shift 2
	out=$(k track add "$@" 2>&1); rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then ok "$desc"
	else fail "$desc (rc $rc): $out"; fi
}
one_line_fail "add: unsafe name refused" 2 'a/b' --repo "$T/linux" --remote "$url" --branch main --job "$job"
one_line_fail "add: name with '..' refused" 2 'a..b' --repo "$T/linux" --remote "$url" --branch main --job "$job"
one_line_fail "add: missing repository refused" 1 nightly --repo "$T/nowhere" --remote "$url" --branch main --job "$job"
one_line_fail "add: a job that does not parse refused" 1 nightly --repo "$T/linux" --remote "$url" --branch main --job "$KLAB_SRCDIR/tests/data/jobs/syntax-error.yaml"
one_line_fail "add: missing job file refused" 1 nightly --repo "$T/linux" --remote "$url" --branch main --job "$T/nojob.yaml"
one_line_fail "add: bad branch name refused" 2 nightly --repo "$T/linux" --remote "$url" --branch 'a..b' --job "$job"
one_line_fail "add: unknown remote refused" 1 nightly --repo "$T/linux" --remote nosuchremote --branch main --job "$job"
one_line_fail "add: bad --notify refused" 2 nightly --repo "$T/linux" --remote "$url" --branch main --job "$job" --notify 'x@y.org, z@w.org'
one_line_fail "add: bad --threshold refused" 2 nightly --repo "$T/linux" --remote "$url" --branch main --job "$job" --threshold -3
one_line_fail "add: no job is a usage error" 2 nightly --repo "$T/linux" --remote "$url" --branch main
check "nothing recorded by refused adds" test "$(q 'SELECT count(*) FROM tracks')" -eq 0

out=$(k track add nightly --repo "$T/linux" --remote "$url" --branch main --job "$job" --threshold 7.5 --notify lkp@example.org); rc=$?
check "add exits 0" test "$rc" -eq 0
case $out in "track nightly: branch main of $url into $T/linux, 1 job, threshold 7.5%"*) ok "add says what it tracks";; *) fail "add: $out";; esac
one_line_fail "add: a taken name refused" 1 nightly --repo "$T/linux" --remote "$url" --branch main --job "$job"
check "the job is stored with its absolute path" test "$(q "SELECT job_path FROM track_jobs")" = "$(cd "$KLAB_SRCDIR/jobs" && pwd -P)/will-it-scale-malloc1.yaml"
k track add byname --repo "$T/linux" --remote origin --branch main --job "$job" >/dev/null
check "add: a configured remote by name" test "$(q "SELECT remote FROM tracks WHERE name = 'byname'")" = origin
for sub in add list show remove fetch run; do
	k track "$sub" --help > "$T/help.out" 2>&1 && grep -q "^usage: klab track $sub" "$T/help.out" ||
		fail "track $sub --help"
done
ok "every subcommand has --help"

# ---- fetch: first, unchanged, moved ---------------------------------------------
tip1=$(git -C "$T/upstream" rev-parse main)
out=$(k track fetch nightly); rc=$?
check "first fetch exits 0" test "$rc" -eq 0
check "first fetch says so" test "$out" = "nightly: first fetch, tip $(echo "$tip1" | cut -c1-12)"
check "tip fetched into refs/klab/track/nightly" test "$(git -C "$T/linux" rev-parse refs/klab/track/nightly)" = "$tip1"
check "no FETCH_HEAD written" test ! -e "$T/linux/.git/FETCH_HEAD"
out=$(k track fetch nightly); rc=$?
check "second fetch: unchanged" sh -c "[ $rc -eq 0 ] && [ '$out' = 'nightly: unchanged at $(echo "$tip1" | cut -c1-12)' ]"
check "fetches recorded: first, unchanged" \
	test "$(q "SELECT group_concat(outcome, ',') FROM track_fetches f JOIN tracks t ON t.id = f.track_id WHERE t.name = 'nightly'")" = "first,unchanged"

# two new commits upstream: objects come through the file:// transport
for i in 7 8; do
	echo "$i" > "$T/upstream/value"
	git -C "$T/upstream" commit -qam "commit $i"
done
tip2=$(git -C "$T/upstream" rev-parse main)
check "new tip not in the clone yet" sh -c "! git -C '$T/linux' cat-file -e '$tip2' 2>/dev/null"
out=$(k track fetch nightly); rc=$?
check "fetch after a push: moved" sh -c "[ $rc -eq 0 ] && echo '$out' | grep -q '^nightly: moved $(echo "$tip1" | cut -c1-12)..$(echo "$tip2" | cut -c1-12)$'"
check "new commits downloaded" git -C "$T/linux" cat-file -e "$tip2"
check "ref moved" test "$(git -C "$T/linux" rev-parse refs/klab/track/nightly)" = "$tip2"

# ---- a tip already tested: run does nothing ------------------------------------------
# (t-track.sh tests tips with real guests; here the tips are recorded as
# tested so that nothing is built)
tid=$(q "SELECT id FROM tracks WHERE name = 'nightly'")
now=$(date +%s)
q "INSERT INTO track_tips (track_id, hash, status, created_at) VALUES ($tid, '$tip1', 'first', $now);
   INSERT INTO track_tips (track_id, hash, status, compared_to, created_at) VALUES ($tid, '$tip2', 'no-change', '$tip1', $now)"
out=$(k track run nightly 2>&1); rc=$?
check "run for a tested tip exits 0" test "$rc" -eq 0
case $out in *"tip $(echo "$tip2" | cut -c1-12) already tested: no-change"*) ok "run says the tip is already tested";; *) fail "run: $out";; esac
check "run built nothing" test "$(q 'SELECT count(*) FROM builds')" -eq 0
check "run added no tip" test "$(q "SELECT count(*) FROM track_tips WHERE track_id = $tid")" -eq 2
out=$(k track run nightly 2>&1); rc=$?
check "second run: the same, nothing done" sh -c "[ $rc -eq 0 ] && [ $(q 'SELECT count(*) FROM builds') -eq 0 ]"

# ---- force-push: compare with the newest tested tip that is still an ancestor ----------
git -C "$T/upstream" reset -q --hard "$tip1"
echo rewritten > "$T/upstream/value"
git -C "$T/upstream" commit -qam "commit 7, rewritten"
tip3=$(git -C "$T/upstream" rev-parse main)
out=$(k track fetch nightly); rc=$?
check "fetch after a force-push exits 0" test "$rc" -eq 0
check "fetch says history was rewritten" sh -c "echo '$out' | grep -q 'history rewritten (force-push): was $(echo "$tip2" | cut -c1-12), now $(echo "$tip3" | cut -c1-12)'"
check "the record names the tip it compares with" \
	test "$(q "SELECT outcome || ': ' || message FROM track_fetches WHERE track_id = $tid ORDER BY id DESC LIMIT 1")" = \
	"rewritten: history rewritten: compared with $(echo "$tip1" | cut -c1-12), the newest tested tip that is still an ancestor (1 newer tested tip is not)"
k track show nightly > "$T/show.out"
check "show prints the last fetch and its message" grep -q "compared with $(echo "$tip1" | cut -c1-12)" "$T/show.out"
check "show lists the tested tips" sh -c "grep -q '$(echo "$tip2" | cut -c1-12)  no-change' '$T/show.out' && grep -q '$(echo "$tip1" | cut -c1-12)  first' '$T/show.out'"

# an unrelated history: no tested tip is an ancestor
git -C "$T/upstream" checkout -q --orphan fresh
git -C "$T/upstream" commit -qm "a new beginning"
git -C "$T/upstream" branch -q -M fresh main
tip4=$(git -C "$T/upstream" rev-parse main)
out=$(k track fetch nightly); rc=$?
check "unrelated history: fetch exits 0" test "$rc" -eq 0
check "unrelated history: no tested tip is an ancestor, a new baseline" \
	test "$(q "SELECT message FROM track_fetches WHERE track_id = $tid ORDER BY id DESC LIMIT 1")" = \
	"history rewritten: none of the 2 tested tips is an ancestor of $(echo "$tip4" | cut -c1-12); it becomes a new baseline"

# ---- the branch deleted upstream -------------------------------------------------------
git -C "$T/upstream" branch -q -m main renamed
out=$(k track fetch nightly 2>"$T/err"); rc=$?
check "branch deleted: fetch exits 1" test "$rc" -eq 1
check "branch deleted: one clear error line" sh -c "[ \$(wc -l < '$T/err') -eq 1 ] && grep -q \"branch 'main' not found at '$url' (deleted or renamed?)\" '$T/err'"
check "branch deleted: recorded as failed with the reason" \
	test "$(q "SELECT outcome FROM track_fetches WHERE track_id = $tid AND message LIKE '%not found%' ORDER BY id DESC LIMIT 1")" = failed
check "branch deleted: the ref keeps the last fetched tip" test "$(git -C "$T/linux" rev-parse refs/klab/track/nightly)" = "$tip4"
k track list > "$T/list.out"
check "list shows the failed fetch" grep -q "^nightly	main of $url	1 job	tip .* no-change	fetch failed" "$T/list.out"
git -C "$T/upstream" branch -q -m renamed main

# ---- the remote gone ---------------------------------------------------------------------
mv "$T/upstream" "$T/upstream.gone"
out=$(k track fetch nightly 2>"$T/err"); rc=$?
check "remote gone: fetch exits 1" test "$rc" -eq 1
check "remote gone: clear error" grep -q "cannot reach remote '$url'" "$T/err"
check "remote gone: recorded" test "$(q "SELECT outcome FROM track_fetches WHERE track_id = $tid ORDER BY id DESC LIMIT 1")" = failed
out=$(k track run 2>"$T/err"); rc=$?
check "remote gone: run of every track exits 1, no crash" test "$rc" -eq 1
check "remote gone: run built nothing" test "$(q 'SELECT count(*) FROM builds')" -eq 0
k track show nightly > "$T/show2.out"
check "show: the failure and why" sh -c "grep -q '^last fetch: .* failed' '$T/show2.out' && grep -q 'cannot reach remote' '$T/show2.out'"
mv "$T/upstream.gone" "$T/upstream"

# ---- a tip that does not build: recorded, notified, not tested twice -------------------------
# (this repository has no kernel: the configuration step fails at once)
k track add broken --repo "$T/linux" --remote "$url" --branch main --job "$job" --notify http://127.0.0.1:9/hook >/dev/null
out=$(k track run broken 2>&1); rc=$?
check "a tip that does not build: run exits 0" test "$rc" -eq 0 || echo "$out"
bid=$(q "SELECT id FROM tracks WHERE name = 'broken'")
check "... recorded as build-failed with the reason" \
	test "$(q "SELECT status || ': ' || message FROM track_tips WHERE track_id = $bid")" = \
	"build-failed: $(cd "$KLAB_SRCDIR/jobs" && pwd -P)/will-it-scale-malloc1.yaml: the kernel configuration step failed"
check "... a notice recorded for the track's webhook (down: pending)" \
	test "$(q "SELECT count(*) FROM notifications WHERE kind = 'webhook' AND state = 'pending' AND target = 'http://127.0.0.1:9/hook' AND subject LIKE '[klab] track broken: % does not build'")" -eq 1
out=$(k track run broken 2>&1); rc=$?
check "... the second run does nothing" sh -c "[ $rc -eq 0 ] && echo '$out' | grep -q 'already tested: build-failed' && [ $(q "SELECT count(*) FROM track_tips WHERE track_id = $bid") -eq 1 ]"

# ---- the user's repository ---------------------------------------------------------------
snapshot > "$T/user.after"
check "user's refs, HEAD, index and files untouched" cmp -s "$T/user.before" "$T/user.after" ||
	diff "$T/user.before" "$T/user.after"
# (byname was only ever fetched while the remote was gone)
check "klab's refs only under refs/klab/track/" \
	test "$(git -C "$T/linux" for-each-ref --format='%(refname)' refs/klab)" = "refs/klab/track/broken
refs/klab/track/nightly"

# ---- valgrind on a fetch -------------------------------------------------------------------
if ! command -v valgrind >/dev/null 2>&1; then
	fail "valgrind is not installed (./bootstrap deps installs it)"
elif ldd "$KLAB" 2>/dev/null | grep -q libasan; then
	ok "valgrind skipped: this klab is built with ASan, which checks the same"
else
	echo 9 > "$T/upstream/value"
	git -C "$T/upstream" commit -qam "commit 9"
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		"$KLAB" --state "$lab" track fetch nightly byname >"$T/vg.out" 2>"$T/vg.err"; rc=$?
	check "valgrind: klab track fetch has no memory errors or leaks" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || cat "$T/vg.err"
fi

# ---- remove ----------------------------------------------------------------------------------
out=$(k track remove nightly); rc=$?
check "remove exits 0" test "$rc" -eq 0
check "remove deletes the ref" sh -c "! git -C '$T/linux' rev-parse -q --verify refs/klab/track/nightly"
check "remove forgets tips and fetches" test "$(q "SELECT count(*) FROM track_tips WHERE track_id = $tid") $(q "SELECT count(*) FROM track_fetches WHERE track_id = $tid")" = "0 0"
out=$(k track show nightly 2>&1); rc=$?
check "show of a removed track: exit 1, one line" sh -c "[ $rc -eq 1 ] && [ \$(echo '$out' | wc -l) -eq 1 ]"
check "integrity_check ok" test "$(q "PRAGMA integrity_check")" = ok
finish
