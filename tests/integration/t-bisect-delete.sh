#!/bin/sh
# klab bisect delete (refused while the bisection runs) and a relative test
# command, resolved against the caller's directory before the bisection is
# stored (issue 42: './test.sh' used to be looked up in klab's worktree and
# left a bisection that nothing could finish or remove).
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

lab="$T/lab"
k init >/dev/null
make_linear_repo "$T/repo" 20 11
culprit=$(git -C "$T/repo" log --format=%H --grep='^commit 11$')
mkdir "$T/caller"
write_test_script "$T/caller/test.sh"

# ---- a relative command: the caller's file -----------------------------
out=$(cd "$T/caller" && "$KLAB" --state "$lab" bisect start --repo "$T/repo" --good main~19 --bad main -- ./test.sh 2>&1)
rc=$?
check "relative ./test.sh: the bisection succeeds" test "$rc" -eq 0
case $out in *"$culprit is the first bad commit"*) ok "relative ./test.sh: names the culprit" ;;
*) fail "relative ./test.sh: $out" ;; esac
check "relative ./test.sh: stored as the caller's absolute path" \
	test "$(q "SELECT arg FROM bisection_argv WHERE bisection_id = 1 ORDER BY idx LIMIT 1")" = "$T/caller/./test.sh"

before=$(q "SELECT count(*) FROM bisections")
out=$(cd "$T/caller" && "$KLAB" --state "$lab" bisect start --repo "$T/repo" --good main~19 --bad main -- ./missing.sh 2>&1)
rc=$?
check "relative ./missing.sh: refused" test "$rc" -ne 0
case $out in "klab: error: test command '$T/caller/./missing.sh' not found or not executable"*) ok "relative ./missing.sh: one klab: line naming the path" ;;
*) fail "relative ./missing.sh: $out" ;; esac
check "relative ./missing.sh: no bisection created" test "$(q "SELECT count(*) FROM bisections")" = "$before"

# ---- delete: a done bisection goes with all it stored --------------------
check "bisection 1 has a log directory" test -d "$lab/logs/bisect-1"
out=$(k bisect delete 1 2>&1)
rc=$?
check "delete 1: succeeds" test "$rc" -eq 0
case $out in "bisection 1 deleted (done, culprit)") ok "delete 1: says so" ;; *) fail "delete 1: $out" ;; esac
check "delete 1: its rows are gone" \
	test "$(q "SELECT (SELECT count(*) FROM bisections) + (SELECT count(*) FROM steps) + (SELECT count(*) FROM bisection_argv)")" -eq 0
check "delete 1: its logs are gone" test ! -e "$lab/logs/bisect-1"
check "delete 1: list is empty" test -z "$(k bisect list)"
out=$(k bisect delete 1 2>&1)
rc=$?
check "delete 1 again: refused" test "$rc" -ne 0
case $out in "klab: error: "*) ok "delete 1 again: a klab: error line" ;; *) fail "delete 1 again: $out" ;; esac

# ---- a running bisection is not deleted ----------------------------------
cat > "$T/caller/slow.sh" <<EOF
#!/bin/sh
while [ ! -e "$T/go" ]; do sleep 0.1; done
test ! -e broken
EOF
chmod +x "$T/caller/slow.sh"
"$KLAB" --state "$lab" bisect start --repo "$T/repo" --good main~19 --bad main -- "$T/caller/slow.sh" > "$T/slow.out" 2>&1 &
slow=$!
id=
i=0
while [ -z "$id" ] && [ $i -lt 300 ]; do
	id=$(q "SELECT id FROM bisections WHERE state = 'running'" 2>/dev/null)
	i=$((i + 1))
	sleep 0.1
done
check "a running bisection is there" test -n "$id"
out=$(k bisect delete "$id" 2>&1)
rc=$?
check "delete while running: refused" test "$rc" -ne 0
case $out in "klab: error: bisection $id is running"*) ok "delete while running: says it runs" ;; *) fail "delete while running: $out" ;; esac
check "delete while running: the bisection is kept" test "$(q "SELECT count(*) FROM bisections WHERE id = $id")" -eq 1
touch "$T/go"
wait "$slow"
check "the running bisection finished" grep -q "$culprit is the first bad commit" "$T/slow.out"
check "then it can be deleted" k bisect delete "$id"

# ---- a stopped one (the test said 200) is deleted too --------------------
printf '#!/bin/sh\nexit 200\n' > "$T/caller/stop.sh"
chmod +x "$T/caller/stop.sh"
(cd "$T/caller" && "$KLAB" --state "$lab" bisect start --repo "$T/repo" --good main~19 --bad main -- ./stop.sh) > /dev/null 2>&1
id=$(q "SELECT max(id) FROM bisections")
check "a stopped bisection" test "$(q "SELECT state FROM bisections WHERE id = $id")" = stopped
check "a stopped bisection is deleted" k bisect delete "$id"
check "nothing left" test "$(q "SELECT count(*) FROM bisections")" -eq 0
finish
