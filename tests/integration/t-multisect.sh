#!/bin/sh
# Multisection (bisect start --slots K): the same culprit as one slot and
# as git bisect run, about log3(N) rounds with two slots against log2(N)
# steps with one, the tests of a round overlapping in time in distinct
# worktrees, a round killed with SIGKILL and resumed without testing a
# finished commit again, the width kept by resume and by submit, and
# bad widths refused with one line.  Command mode only: cheap.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

N=40
CULPRIT=23
S="$T/lab"
make_linear_repo "$T/repo" $N $CULPRIT
"$KLAB" init --state "$S" >/dev/null || { fail "init"; finish; }

# The test: start and end times, step and worktree in a log of its own;
# commits whose value is a multiple of 3 take longer (SLOW seconds).
cat > "$T/t-ms-test.sh" <<'EOS'
#!/bin/sh
v=$(cat value)
log="$TIMES.$KLAB_BISECT_ID"
echo "start $KLAB_STEP $(date +%s%N) $KLAB_COMMIT $KLAB_WORKTREE" >> "$log"
# In bisection 2 (two slots) a test waits up to 5 s for a sibling to be
# running, so a loaded machine (CI, ASan) starting the second late still
# overlaps them; tests run one after another would not, and fail the check.
run="$TIMES.running.$KLAB_BISECT_ID"
if [ "${KLAB_BISECT_ID:-}" = 2 ]; then
	mkdir -p "$run"
	touch "$run/$KLAB_STEP"
	i=0
	while [ "$(ls "$run" | wc -l)" -lt 2 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
fi
if [ $((v % 3)) -eq 0 ]; then sleep "${SLOW:-0.4}"; else sleep 0.4; fi
echo "end $KLAB_STEP $(date +%s%N) $KLAB_COMMIT" >> "$log"
[ "${KLAB_BISECT_ID:-}" != 2 ] || rm -f "$run/$KLAB_STEP"
test ! -e broken
EOS
chmod +x "$T/t-ms-test.sh"
TIMES="$T/times"
export TIMES

bisect() { # bisect ID-VAR SLOTS: run a bisection of the whole range
	"$KLAB" --state "$S" bisect start --repo "$T/repo" --good main~$((N - 1)) --bad main --slots "$2" \
		-- "$T/t-ms-test.sh" > "$T/out.$2" 2>&1
}
culprit_of() { sqlite3 "$S/klab.db" "SELECT culprit FROM bisections WHERE id = $1"; }
want=$(git -C "$T/repo" rev-parse main~$((N - CULPRIT)))

# ---- one slot, two slots, git bisect run -----------------------------------
t0=$(date +%s%N); bisect id1 1; rc1=$?; t1=$(date +%s%N)
bisect id2 2; rc2=$?; t2=$(date +%s%N)
check "one slot finds the culprit" test "$rc1" = 0 -a "$(culprit_of 1)" = "$want"
check "two slots find the same culprit" test "$rc2" = 0 -a "$(culprit_of 2)" = "$want"
git clone -q "$T/repo" "$T/clone"
gitc=$(cd "$T/clone" && git bisect start main main~$((N - 1)) >/dev/null &&
       TIMES="$T/times.git" git bisect run "$T/t-ms-test.sh" 2>/dev/null | sed -n 's/ is the first bad commit$//p')
check "git bisect run agrees" test "$gitc" = "$want"

steps1=$(sqlite3 "$S/klab.db" "SELECT count(*) FROM steps WHERE bisection_id = 1 AND status = 'done'")
rounds2=$(sqlite3 "$S/klab.db" "SELECT count(DISTINCT round) FROM steps WHERE bisection_id = 2 AND status = 'done'")
steps2=$(sqlite3 "$S/klab.db" "SELECT count(*) FROM steps WHERE bisection_id = 2 AND status = 'done'")
# 39 candidates: ceil(log2 39) = 6 steps, ceil(log3 39) = 4 rounds
echo "# $((N - 1)) candidates: 1 slot $steps1 steps in $(( (t1 - t0) / 1000000 )) ms;" \
     "2 slots $rounds2 rounds ($steps2 steps) in $(( (t2 - t1) / 1000000 )) ms"
check "one slot: about log2(N) steps" test "$steps1" -ge 5 -a "$steps1" -le 6
check "two slots: about log3(N) rounds" test "$rounds2" -ge 3 -a "$rounds2" -le 4
check "show counts the rounds" grep -q "^rounds:     $rounds2\$" <<EOS
$("$KLAB" --state "$S" bisect show 2)
EOS
check "progress says which commits run at once" grep -q "^round [1]: testing [0-9a-f]\{12\}, [0-9a-f]\{12\} at once\$" "$T/out.2"

# Each round of two: the tests overlapped in time, in distinct worktrees.
sqlite3 -separator ' ' "$S/klab.db" "SELECT seq, round FROM steps WHERE bisection_id = 2 AND status = 'done'" \
	> "$T/rounds.2"
awk 'FILENAME == ARGV[1] { round[$1] = $2; n[$2]++; next }
     $1 == "start" { s[$2] = $3; wt[$2] = $5 }
     $1 == "end" { e[$2] = $3 }
     END {
	full = 0; bad = 0
	for (a in round) for (b in round) {
		if (a >= b || round[a] != round[b] || n[round[a]] != 2) continue
		full++
		if (!(s[a] < e[b] && s[b] < e[a])) { print "# round " round[a] ": no overlap"; bad++ }
		if (wt[a] == wt[b]) { print "# round " round[a] ": one worktree " wt[a]; bad++ }
	}
	print "# " full " full rounds checked"
	exit !(full >= 2 && bad == 0)
     }' "$T/rounds.2" "$TIMES.2" > "$T/overlap.out"
rc=$?
cat "$T/overlap.out"
check "each full round ran its two tests at once in distinct worktrees" test "$rc" = 0

# ---- three slots, killed mid-round, resumed --------------------------------
SLOW=3 "$KLAB" --state "$S" bisect start --repo "$T/repo" --good main~$((N - 1)) --bad main --slots 3 \
	-- "$T/t-ms-test.sh" > "$T/out.3" 2>&1 &
KPID=$!
# first round: commits 11, 21, 31: two end after 0.4 s, 21 after 3 s
count() { cat "$TIMES.3" 2>/dev/null | grep -c "^$1"; }
i=0
while [ "$(count end)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
kill -9 "$KPID"
wait "$KPID" 2>/dev/null
KPID=
sleep 0.5
started=$(count start)
ended=$(count end)
echo "# killed after $started tests started, $ended ended"
check "the kill landed mid-round (some tests finished, some not)" test "$ended" -ge 1 -a "$ended" -lt "$started"
# zombies do not count: PID 1 of some containers never reaps them
ps -eo stat,pid,args | grep "[t]-ms-test.sh" | grep -v "^Z" > "$T/ps.after"
check "the slots died with klab" test ! -s "$T/ps.after"
done_before=$(sqlite3 "$S/klab.db" "SELECT count(*) FROM steps WHERE bisection_id = 3 AND status = 'done'")
SLOW=0.4 "$KLAB" --state "$S" bisect resume 3 > "$T/out.3r" 2>&1
check "resumed multisection finishes" test $? = 0
check "resumed with three slots" grep -q "^round [0-9]*: testing .*, .*, .* at once" "$T/out.3r"
check "the resumed multisection names the same culprit" test "$(culprit_of 3)" = "$want"
check "the steps done before the kill are kept" \
	test "$(sqlite3 "$S/klab.db" "SELECT count(*) FROM steps WHERE bisection_id = 3 AND status = 'done'")" -gt "$done_before"
check "no commit has two finished steps" \
	test -z "$(sqlite3 "$S/klab.db" "SELECT hash FROM steps WHERE bisection_id = 3 AND status = 'done' GROUP BY hash HAVING count(*) > 1")"
check "no commit's test ran to its end twice" \
	test -z "$(awk '$1 == "end" { c[$4]++ } END { for (h in c) if (c[h] > 1) print h }' "$TIMES.3")"

# ---- the width is kept: resume, submit --------------------------------------
"$KLAB" --state "$S" bisect start --repo "$T/repo" --good main~$((N - 1)) --bad main --slots 2 --no-run \
	-- "$T/t-ms-test.sh" > /dev/null 2>&1
"$KLAB" --state "$S" bisect resume 4 > "$T/out.4" 2>&1
check "resume keeps the slots of start --no-run" grep -q "^round [1]: testing .*, .* at once" "$T/out.4"
"$KLAB" --state "$S" submit bisect --repo "$T/repo" --good main~$((N - 1)) --bad main --slots 3 \
	-- "$T/t-ms-test.sh" > /dev/null 2>&1
check "submit bisect --slots stores the slots" \
	test "$(sqlite3 "$S/klab.db" "SELECT slots FROM bisections ORDER BY id DESC LIMIT 1")" = 3
"$KLAB" --state "$S" worker --once > "$T/out.worker" 2>&1
check "a worker runs the queued multisection to the culprit" test "$(culprit_of 5)" = "$want"
check "the queued multisection ran in rounds of three" \
	test "$(sqlite3 "$S/klab.db" "SELECT max(n) FROM (SELECT count(*) AS n FROM steps WHERE bisection_id = 5 GROUP BY round)")" = 3

# ---- refused widths ----------------------------------------------------------
for k in 0 99 x; do
	"$KLAB" --state "$S" bisect start --repo "$T/repo" --good main~1 --bad main --slots $k -- true \
		> "$T/out.bad" 2> "$T/err.bad"
	rc=$?
	check "--slots $k refused with one line" test "$rc" = 2 -a "$(wc -l < "$T/err.bad")" = 1 -a ! -s "$T/out.bad"
done
cat "$T/err.bad" | sed 's/^/# /'

finish
