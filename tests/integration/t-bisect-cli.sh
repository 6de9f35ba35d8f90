#!/bin/sh
# klab bisect start/list/show/log/resume on a real repository, with a
# skip, a timeout, --no-run and --paths.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

"$KLAB" --state "$T/lab" init >/dev/null
make_linear_repo "$T/repo" 40 23
write_test_script "$T/test.sh"
culprit=$(git -C "$T/repo" log --format=%H --grep='^commit 23$')

out=$("$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~39 --bad main -- "$T/test.sh"); rc=$?
check "bisection succeeds" test "$rc" -eq 0
case $out in *"$culprit is the first bad commit"*) ok "names the culprit";; *) fail "culprit in: $out";; esac
case $out in *"Bisecting: "*"revisions left to test after this (roughly"*) ok "git-style progress";; *) fail "progress";; esac
show=$("$KLAB" --state "$T/lab" bisect show 1)
echo "$show" | grep -q "^culprit:    $culprit commit 23\$" && ok "show: culprit" || fail "show culprit: $show"
echo "$show" | grep -q '^state:      done$' && ok "show: state" || fail "show state"
steps=$(echo "$show" | sed -n 's/^steps: *//p')
check "show: 5 or 6 steps for 39 candidates" test "$steps" -ge 5 -a "$steps" -le 6
check "every step is a row" test "$(sqlite3 "$T/lab/klab.db" "select count(*) from steps where bisection_id=1 and status='done'")" = "$steps"
check "every step has a log" test "$(ls "$T/lab/logs/bisect-1" | wc -l)" -eq "$steps"
list=$("$KLAB" --state "$T/lab" bisect list)
echo "$list" | grep -q "^1	done	culprit	$(echo "$culprit" | cut -c1-12)	$steps steps	$T/repo\$" && ok "list line" || fail "list: $list"
log=$("$KLAB" --state "$T/lab" bisect log 1)
echo "$log" | grep -q "^git bisect start $(git -C "$T/repo" rev-parse main) $(git -C "$T/repo" rev-parse main~39)\$" && ok "log: start line" || fail "log: $log"
check "log: one verdict line per step" test "$(echo "$log" | grep -c '^git bisect \(good\|bad\|skip\) ')" -eq "$steps"
echo "$log" | grep -q "^# first bad commit: \[$culprit\]" && ok "log: culprit" || fail "log culprit"

# replay klab's log in git: git reaches the same culprit
git clone -q "$T/repo" "$T/replay"
echo "$log" | grep '^git bisect' > "$T/replay.log"
(cd "$T/replay" && git bisect replay "$T/replay.log" >"$T/replay.out" 2>&1)
grep -q "$culprit is the first bad commit" "$T/replay.out" && ok "git bisect replay of klab's log agrees" || fail "replay: $(cat "$T/replay.out")"

# resume of a finished bisection is a no-op that reports it
out=$("$KLAB" --state "$T/lab" bisect resume 1); rc=$?
check "resume of a done bisection exits 0" test "$rc" -eq 0
case $out in *"already done"*) ok "resume says it is done";; *) fail "resume: $out";; esac

# --no-run creates, resume runs
out=$("$KLAB" --state "$T/lab" bisect start --no-run --repo "$T/repo" --good main~39 --bad main -- "$T/test.sh")
case $out in *"bisection 2:"*"created"*) ok "--no-run creates";; *) fail "--no-run: $out";; esac
check "--no-run runs nothing" test "$(sqlite3 "$T/lab/klab.db" "select count(*) from steps where bisection_id=2")" = 0
"$KLAB" --state "$T/lab" bisect resume 2 >/dev/null; check "resume runs it" test $? -eq 0
check "resumed bisection has the culprit" test "$(sqlite3 "$T/lab/klab.db" "select culprit from bisections where id=2")" = "$culprit"

# skips: the first commit git would test does not build (exit 125)
write_test_script "$T/skip.sh" 20
out=$("$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~39 --bad main -- "$T/skip.sh"); rc=$?
check "a skipped neighbour still finds the culprit" test "$rc" -eq 0
case $out in *"$culprit is the first bad commit"*) ok "culprit with skip";; *) fail "skip: $out";; esac

# the culprit itself skipped: "could be any of" (as git says)
write_test_script "$T/skip2.sh" 23
out=$("$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~39 --bad main -- "$T/skip2.sh"); rc=$?
check "only skipped left exits 3" test "$rc" -eq 3
case $out in *"could be any of"*"$culprit"*) ok "lists the possible culprits";; *) fail "skip2: $out";; esac
id=$(sqlite3 "$T/lab/klab.db" "select max(id) from bisections")
check "candidates stored" test "$(sqlite3 "$T/lab/klab.db" "select count(*) from bisection_candidates where bisection_id=$id")" = 2

# timeout: a hanging test is killed and the commit skipped
cat > "$T/hang.sh" <<EOS
#!/bin/sh
[ "\$(cat value)" = 20 ] && sleep 60
test ! -e broken
EOS
chmod +x "$T/hang.sh"
out=$("$KLAB" --state "$T/lab" bisect start --timeout 1 --repo "$T/repo" --good main~39 --bad main -- "$T/hang.sh"); rc=$?
check "timeout: bisection completes" test "$rc" -eq 0
id=$(sqlite3 "$T/lab/klab.db" "select max(id) from bisections")
r=$(sqlite3 "$T/lab/klab.db" "select verdict || ':' || reason from steps where bisection_id=$id and reason like 'timeout%'")
case $r in "skip:timeout after 1.00s") ok "timeout recorded as skip";; *) fail "timeout step: '$r'";; esac

# the command gets its environment and runs in klab's worktree
cat > "$T/env.sh" <<EOS
#!/bin/sh
echo "\$KLAB_COMMIT \$KLAB_BISECT_ID \$KLAB_STEP \$KLAB_WORKTREE \$(pwd)" >> "$T/env.out"
test ! -e broken
EOS
chmod +x "$T/env.sh"
"$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~39 --bad main -- "$T/env.sh" >/dev/null
first=$(head -n1 "$T/env.out")
set -- $first
check "KLAB_COMMIT is a full hash" test "${#1}" -eq 40
check "KLAB_WORKTREE is the cwd, under the lab" test "$4" = "$5" -a "${4#$T/lab/worktrees/}" != "$4"
check "KLAB_STEP starts at 1" test "$3" = 1

# exit >= 128 stops the bisection; resume continues after fixing
cat > "$T/abort.sh" <<EOS
#!/bin/sh
[ -e "$T/allow" ] || exit 200
test ! -e broken
EOS
chmod +x "$T/abort.sh"
out=$("$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~39 --bad main -- "$T/abort.sh" 2>&1); rc=$?
check "exit 200 stops with exit 1" test "$rc" -eq 1
case $out in *"exit 200"*"klab bisect resume"*) ok "stop says why and how to resume";; *) fail "abort: $out";; esac
id=$(sqlite3 "$T/lab/klab.db" "select max(id) from bisections")
check "stopped state" test "$(sqlite3 "$T/lab/klab.db" "select state from bisections where id=$id")" = stopped
touch "$T/allow"
out=$("$KLAB" --state "$T/lab" bisect resume "$id"); rc=$?
check "resume after a stop finds the culprit" test "$rc" -eq 0
check "the aborted step was retried, not duplicated" test "$(sqlite3 "$T/lab/klab.db" "select max(attempts) from steps where bisection_id=$id")" = 2

# --paths: only commits touching 'broken' count
out=$("$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~39 --bad main --paths broken -- "$T/test.sh"); rc=$?
check "--paths bisection succeeds" test "$rc" -eq 0
case $out in *"$culprit is the first bad commit"*) ok "--paths culprit";; *) fail "--paths: $out";; esac
id=$(sqlite3 "$T/lab/klab.db" "select max(id) from bisections")
# as git does: the one commit touching the path is tested once
check "--paths tests only the commit touching the path" test "$(sqlite3 "$T/lab/klab.db" "select count(*) from steps where bisection_id=$id")" = 1

# the repository is re-created at the same path (new hashes): klab's
# worktree recovers instead of failing on a HEAD it cannot read
rm -rf "$T/repo"
make_linear_repo "$T/repo" 30 11
git -C "$T/repo" commit -q --allow-empty -m "new history"
culprit2=$(git -C "$T/repo" log --format=%H --grep='^commit 11$')
out=$("$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~30 --bad main -- "$T/test.sh" 2>&1); rc=$?
check "re-created repository: bisection succeeds" test "$rc" -eq 0
case $out in *"$culprit2 is the first bad commit"*) ok "re-created repository: culprit";; *) fail "re-created: $out";; esac

finish
