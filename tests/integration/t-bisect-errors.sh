#!/bin/sh
# Bad input to klab bisect: one clear line, exit != 0, database unchanged.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

"$KLAB" --state "$T/lab" init >/dev/null
make_linear_repo "$T/repo" 10 5
write_test_script "$T/test.sh"
mkdir "$T/notrepo"
git -C "$T/repo" branch side main~5
dbsum() { sqlite3 "$T/lab/klab.db" .dump | sha256sum; }
before=$(dbsum)

# expect_error DESCRIPTION PATTERN ARGS...
expect_error() {
	desc=$1 pat=$2; shift 2
	err=$("$KLAB" --state "$T/lab" bisect start "$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$err" | grep -c .)
	if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -q -- "$pat" && [ "$lines" -le 2 ]; then
		ok "$desc: $err"
	else
		fail "$desc (rc=$rc): $err"
	fi
}

expect_error "not a repository" "is not a git repository" --repo "$T/notrepo" --good main~9 --bad main -- "$T/test.sh"
expect_error "missing repository" "cannot open repository" --repo "$T/missing" --good main~9 --bad main -- "$T/test.sh"
expect_error "unknown good revision" "unknown revision 'nosuch'" --repo "$T/repo" --good nosuch --bad main -- "$T/test.sh"
expect_error "unknown bad revision" "unknown revision 'v9.9'" --repo "$T/repo" --good main~9 --bad v9.9 -- "$T/test.sh"
expect_error "good == bad" "are the same commit" --repo "$T/repo" --good main --bad main -- "$T/test.sh"
expect_error "good == bad by another name" "are the same commit" --repo "$T/repo" --good side --bad main~5 -- "$T/test.sh"
expect_error "bad is an ancestor of good" "is an ancestor of good revision" --repo "$T/repo" --good main --bad main~3 -- "$T/test.sh"
expect_error "command not found" "test command 'no-such-klab-cmd' not found" --repo "$T/repo" --good main~9 --bad main -- no-such-klab-cmd
expect_error "command not executable" "not found or not executable" --repo "$T/repo" --good main~9 --bad main -- /etc/passwd
expect_error "no command" "needs a test command" --repo "$T/repo" --good main~9 --bad main
expect_error "no good" "at least one --good" --repo "$T/repo" --bad main -- "$T/test.sh"
expect_error "two bads" "only one --bad" --repo "$T/repo" --good main~9 --bad main --bad main~1 -- "$T/test.sh"
expect_error "bad timeout" "--timeout takes" --repo "$T/repo" --good main~9 --bad main --timeout -5 -- "$T/test.sh"
expect_error "paths touched by nothing" "touches the given paths" --repo "$T/repo" --good main~9 --bad main --paths nothing/here -- "$T/test.sh"
expect_error "absolute path" "relative to the repository" --repo "$T/repo" --good main~9 --bad main --paths /etc -- "$T/test.sh"
expect_error "option-looking revision" "unknown revision" --repo "$T/repo" --good=--all --bad main -- "$T/test.sh"
expect_error "a cap below the ladder" "--max-runs takes the most runs of one commit, 3 to 1000" --repo "$T/repo" --good main~9 --bad main --max-runs 2 -- "$T/test.sh"
expect_error "a cap without a job" "--max-runs needs --job" --repo "$T/repo" --good main~9 --bad main --max-runs 40 -- "$T/test.sh"
check "database unchanged by all of the above" test "$(dbsum)" = "$before"

for sub in "show 99" "resume 99" "log 99"; do
	err=$("$KLAB" --state "$T/lab" bisect $sub 2>&1); rc=$?
	if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -q "no bisection 99"; then ok "bisect $sub: $err"; else fail "bisect $sub: $err"; fi
done
err=$("$KLAB" --state "$T/lab" bisect show abc 2>&1); rc=$?
check "non-numeric id refused" test "$rc" -ne 0
"$KLAB" --state "$T/lab" bisect frobnicate >/dev/null 2>&1; check "unknown subcommand exits 2" test $? -eq 2
check "database still unchanged" test "$(dbsum)" = "$before"

# a second klab on the same bisection is refused while the first runs
cat > "$T/slow.sh" <<'EOS'
#!/bin/sh
sleep 2
test ! -e broken
EOS
chmod +x "$T/slow.sh"
"$KLAB" --state "$T/lab" bisect start --repo "$T/repo" --good main~9 --bad main -- "$T/slow.sh" >/dev/null 2>&1 &
pid=$!
sleep 1
err=$("$KLAB" --state "$T/lab" bisect resume 1 2>&1); rc=$?
if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -q "in use by another klab process"; then ok "concurrent resume refused"; else fail "concurrent resume: $err"; fi
kill -9 "$pid"; wait "$pid" 2>/dev/null
"$KLAB" --state "$T/lab" bisect list | grep -q "^1	interrupted	" && ok "a killed bisection lists as interrupted" || fail "list after kill: $("$KLAB" --state "$T/lab" bisect list)"
# a run cap is for job bisections: refused for a test command's, nothing stored
err=$("$KLAB" --state "$T/lab" bisect resume --max-runs 40 1 2>&1); rc=$?
if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -q "is for job bisections" && [ "$(sqlite3 "$T/lab/klab.db" "SELECT coalesce(max_runs, 0) FROM bisections WHERE id = 1")" = 0 ]; then
	ok "resume --max-runs of a command bisection refused: $err"
else
	fail "resume --max-runs of a command bisection (rc=$rc): $err"
fi
finish
