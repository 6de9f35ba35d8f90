#!/bin/sh
# Crash/resume: klab is killed (SIGKILL) at random points of a bisection
# and resumed each time; the final answer and the number of steps are
# those of an uninterrupted run, the recorded step sequence is the same,
# and no commit is tested again once its step was recorded as done.
#
# Kills land at four kinds of moments (the schedule is seeded: set
# KLAB_CRASH_SEED to replay one; KLAB_CRASH_KILLS sets how many kills,
# default 12, at least 10 are required):
#   startup  the driver kills klab 0-5 ms after starting it (option
#            parsing, database open, worktree open, loading the range)
#   test     the test command kills klab while it runs (step row 'running')
#   after    a helper kills klab right after it reaped the test command
#            (recording the verdict, choosing and checking out the next)
#   random   the driver kills klab 20-600 ms after starting it
# POSIX sh; needs git, sqlite3, od, setsid.

. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools git sqlite3 od setsid
KILLS=${KLAB_CRASH_KILLS:-12}
[ "$KILLS" -ge 10 ] 2>/dev/null || KILLS=10
SEED=${KLAB_CRASH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}

T=$(cd "$T" && pwd -P)
KPID=
cleanup() {
	# only the klab this script started, by its id
	if [ -n "$KPID" ]; then
		kill -9 "$KPID" 2>/dev/null
		wait "$KPID" 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'cleanup; echo "not ok - interrupted; files kept in $T"; trap - EXIT; exit 1' INT TERM HUP

HOME=$T
export HOME

# ---- seeded pseudo-random numbers (LCG; state in $SEED, result in $R) ----
SEED=$((SEED % 2147483648))
SEED0=$SEED
rnd() { # rnd LO HI: $R in [LO, HI]
	SEED=$(( (SEED * 1103515245 + 12345) % 2147483648 ))
	R=$(( $1 + (SEED / 65536) % ($2 - $1 + 1) ))
}
msleep() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }

echo "# seed $SEED0 (KLAB_CRASH_SEED=$SEED0 replays the kill schedule), $KILLS kills"

# ---- the repository: 200 mainline commits, two merged side branches ----
# mainline i (1..200) writes counter=i and adds files/f<i>; the planted
# commit P adds BROKEN.  side-a forks at 60 (3 commits), merged by mainline
# 70; side-b forks at 130 (2 commits), merged by mainline 140.  The first
# commit adds 300 more files: checkouts take long enough to be killed in.
N=200
rnd 20 195
P=$R
case $P in 70|140) P=$((P + 1)) ;; esac
REPO=$T/repo
gen_stream() {
	t0=1700000000
	i=1
	while [ "$i" -le "$N" ]; do
		if [ "$i" -eq 65 ] || [ "$i" -eq 135 ]; then
			if [ "$i" -eq 65 ]; then s=a fork=60 n=3 base=1000; else s=b fork=130 n=2 base=2000; fi
			k=1
			while [ "$k" -le "$n" ]; do
				from=
				[ "$k" -eq 1 ] && from=$fork
				gen_commit "refs/heads/side-$s" $((base + k)) $((t0 + fork * 60 + k * 10)) "side-$s $k" "$from"
				gen_file "side-$s.txt" "side-$s $k"
				k=$((k + 1))
			done
		fi
		from= merge=
		[ "$i" -gt 1 ] && from=$((i - 1))
		[ "$i" -eq 70 ] && merge=1003
		[ "$i" -eq 140 ] && merge=2002
		subj="main $i"
		[ -n "$merge" ] && subj="main $i: merge side branch"
		[ "$i" -eq "$P" ] && subj="main $i: the planted regression"
		gen_commit refs/heads/main "$i" $((t0 + i * 60)) "$subj" "$from" "$merge"
		gen_file counter.txt "$i"
		gen_file "files/f$i" "$i"
		if [ "$i" -eq 1 ]; then
			j=1
			while [ "$j" -le 300 ]; do
				gen_file "static/d$((j % 25))/s$j.txt" "static $j"
				j=$((j + 1))
			done
		fi
		[ "$i" -eq 70 ] && gen_file side-a.txt "side-a 3"
		[ "$i" -eq 140 ] && gen_file side-b.txt "side-b 2"
		[ "$i" -eq "$P" ] && gen_file BROKEN "planted regression"
		i=$((i + 1))
	done
}
git init -q "$REPO" &&
	gen_stream | git -C "$REPO" fast-import --quiet --export-marks="$T/marks" &&
	git -C "$REPO" symbolic-ref HEAD refs/heads/main &&
	git -C "$REPO" reset -q --hard
check "test repository built (culprit planted at mainline commit $P)" test $? -eq 0
mark() { sed -n "s/^:$1 //p" "$T/marks"; }
PLANTED=$(mark "$P")
GOOD=$(mark 1)
BAD=$(mark "$N")
check "repository has two merges and 205 commits" \
	test "$(git -C "$REPO" rev-list --count main)" = 205 -a \
	"$(git -C "$REPO" rev-list --merges --count main)" = 2

# ---- the test command ----
# argv: DB LOG VIOLATIONS CONTROL.  CONTROL is a file the driver may
# create: "test MS" (kill klab MS ms into this test) or "after MS" (kill
# klab MS ms after klab reaped this test); the first test to see it takes it.
cat > "$T/test-cmd.sh" <<'EOS'
#!/bin/sh
db=$1 log=$2 viol=$3 ctl=$4
echo "start $KLAB_COMMIT $(pwd -P)" >> "$log"
n=$(sqlite3 -cmd '.timeout 10000' "$db" "select count(*) from steps where bisection_id=$KLAB_BISECT_ID and hash='$KLAB_COMMIT' and status='done'" 2>&1)
case $n in
0) ;;
[1-9]*) echo "VIOLATION $KLAB_COMMIT (step $KLAB_STEP) started again though recorded done $n time(s)" >> "$viol" ;;
*) echo "ERROR sqlite3 on $KLAB_COMMIT: $n" >> "$viol.err" ;;
esac
# the checkout is exactly the commit: HEAD, no changed, missing or stray
# files (read-only git: GIT_OPTIONAL_LOCKS=0 takes no index.lock)
head=$(git rev-parse HEAD 2>&1)
dirty=$(GIT_OPTIONAL_LOCKS=0 git status --porcelain --untracked-files=all 2>&1 | head -n 5)
if [ "$head" != "$KLAB_COMMIT" ] || [ -n "$dirty" ]; then
	echo "TREE $KLAB_COMMIT (step $KLAB_STEP): HEAD $head; status: $dirty" | tr '\n' ' ' >> "$viol.tree"
	echo >> "$viol.tree"
fi
mode= ms=0
if [ -f "$ctl" ] && mv "$ctl" "$ctl.$$" 2>/dev/null; then
	read mode ms < "$ctl.$$"
	rm -f "$ctl.$$"
fi
msleep() { sleep "$(($1 / 1000)).$(printf %03d $(($1 % 1000)))"; }
if [ "$mode" = test ]; then
	msleep "$ms"
	echo "kill-in-test $KLAB_COMMIT" >> "$log"
	# the parent is klab's supervisor of the test's process group; klab is its parent
	kill -9 "$(awk '{print $4}' /proc/$PPID/stat)"
	# klab's death kills this whole process group (its supervisor gets PR_SET_PDEATHSIG); never return a verdict
	exec sleep 10
fi
r=$(od -An -N2 -tu2 /dev/urandom)
msleep $((r % 201 + 100))
echo "ran $KLAB_COMMIT" >> "$log"
if [ "$mode" = after ]; then
	# out of klab's process group (klab kills it after the test): wait
	# until klab has reaped this process, then kill klab
	# (the handshake: until setsid() ran, the helper is still in the group)
	me=$$ klab=$(awk '{print $4}' /proc/$PPID/stat) delay=$((ms / 1000)).$(printf %03d $((ms % 1000)))
	rm -f "$ctl.ready"
	setsid sh -c ': > "$4"; while kill -0 "$1" 2>/dev/null; do :; done; [ "$3" = 0.000 ] || sleep "$3"; kill -9 "$2"' \
		sh "$me" "$klab" "$delay" "$ctl.ready" </dev/null >/dev/null 2>&1 &
	while [ ! -e "$ctl.ready" ]; do :; done
	rm -f "$ctl.ready"
fi
if [ -e BROKEN ]; then exit 1; fi
exit 0
EOS
chmod +x "$T/test-cmd.sh"

# ---- reference run: uninterrupted ----
A=$T/lab-a
"$KLAB" --state "$A" init >/dev/null
check "klab init (reference lab)" test $? -eq 0
ref_start=$(date +%s)
"$KLAB" --state "$A" bisect start --repo "$REPO" --good "$GOOD" --bad "$BAD" -- \
	"$T/test-cmd.sh" "$A/klab.db" "$T/a.log" "$T/a.viol" "$T/none" > "$T/a.out" 2> "$T/a.err"
rc=$?
check "reference bisection exits 0" test "$rc" -eq 0
C0=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$T/a.out")
S0=$("$KLAB" --state "$A" bisect show 1 | sed -n 's/^steps: *//p')
check "reference run finds the planted commit ($C0)" test "$C0" = "$PLANTED"
check "reference run took a plausible number of steps ($S0)" test "${S0:-0}" -ge 6 -a "${S0:-0}" -le 10
check "reference run: no test started twice" test ! -s "$T/a.viol"
echo "# reference run: $S0 steps in $(( $(date +%s) - ref_start ))s"
sqlite3 "$A/klab.db" "select seq, hash, phase, verdict from steps where bisection_id=1 and status='done' order by seq" > "$T/a.steps"

# ---- crash run ----
B=$T/lab-b
DB=$B/klab.db
LOG=$T/b.log
VIOL=$T/b.viol
CTL=$T/control
: > "$LOG"
"$KLAB" --state "$B" init >/dev/null
check "klab init (crash lab)" test $? -eq 0

bisection_exists() {
	[ "$(sqlite3 -cmd '.timeout 10000' "$DB" "select count(*) from bisections where id=1" 2>/dev/null)" = 1 ]
}
done_steps() {
	n=$(sqlite3 -cmd '.timeout 10000' "$DB" "select count(*) from steps where bisection_id=1 and status='done'" 2>/dev/null)
	echo "${n:-0}"
}
lock_free() {
	command -v flock >/dev/null 2>&1 || return 0
	[ -e "$B/locks/bisect-1.lock" ] || return 0
	flock -n "$B/locks/bisect-1.lock" true
}
# run klab in the background as $KPID; its output goes to $T/b.it$iter.*
spawn() {
	if bisection_exists; then
		"$KLAB" --state "$B" bisect resume 1 > "$T/b.it$iter.out" 2> "$T/b.it$iter.err" &
	else
		"$KLAB" --state "$B" bisect start --repo "$REPO" --good "$GOOD" --bad "$BAD" -- \
			"$T/test-cmd.sh" "$DB" "$LOG" "$VIOL" "$CTL" > "$T/b.it$iter.out" 2> "$T/b.it$iter.err" &
	fi
	KPID=$!
}
# wait for $KPID (at most 20 s), set $rc
reap() {
	w=0
	while kill -0 "$KPID" 2>/dev/null && [ "$w" -lt 1000 ]; do
		sleep 0.02
		w=$((w + 1))
	done
	if [ "$w" -ge 1000 ]; then
		echo "# klab $KPID hangs: killing it"
		kill -9 "$KPID" 2>/dev/null
	fi
	wait "$KPID"
	rc=$?
	KPID=
}

landed=0 iter=0 inuse=0 early_done=0 unexpected=0
k_startup=0 k_test=0 k_after=0 k_random=0
w_before=0 w_test=0 w_between=0
sched=
crash_start=$(date +%s)
while [ "$landed" -lt "$KILLS" ]; do
	iter=$((iter + 1))
	if [ "$iter" -gt $((KILLS * 4 + 20)) ]; then
		fail "gave up after $iter attempts to kill klab"
		break
	fi
	n=0
	w=0
	while ! lock_free && [ "$w" -lt 250 ]; do sleep 0.02; w=$((w + 1)); done
	bisection_exists && n=$(done_steps)
	# choose how to kill this run
	if [ "$iter" -eq 1 ]; then
		mode=first	# the start itself, 50-600 ms in
	else
		if [ -z "$sched" ]; then
			# a round: every kind, 'after' twice, in random order ('after'
			# first in the first round, while steps are left for it)
			sched="startup test after after random"
			round=
			[ "$iter" -eq 2 ] && { round=after; sched="startup test after random"; }
			while [ -n "$sched" ]; do
				set -- $sched
				rnd 1 $#
				eval pick=\${$R}
				round="$round $pick"
				rest= i=1
				for x in $sched; do
					[ "$i" -eq "$R" ] || rest="$rest $x"
					i=$((i + 1))
				done
				sched=${rest# }
			done
			sched=${round# }
		fi
		set -- $sched
		mode=$1
		shift
		sched="$*"
		# never let a kill-free stretch finish the bisection early: the
		# 'after' kill needs a later step, 'random' may run up to 5 steps
		[ "$mode" = after ] && [ "$n" -ge $((S0 - 1)) ] && mode=test
		[ "$mode" = random ] && [ $((n + 5)) -ge "$S0" ] && mode=test
		# all steps recorded (the last kill came before 'done'): only an
		# immediate kill can still land
		[ "$n" -ge "$S0" ] && mode=startup
	fi
	rm -f "$CTL"
	case $mode in
	test) rnd 0 60; echo "test $R" > "$CTL" ;;
	after) rnd 0 10; echo "after $R" > "$CTL" ;;
	esac
	starts0=$(grep -c '^start' "$LOG")
	spawn
	case $mode in
	first) rnd 50 600; msleep "$R"; kill -9 "$KPID" 2>/dev/null ;;
	startup) if [ "$n" -ge "$S0" ]; then R=0; else rnd 0 5; fi
		[ "$R" -gt 0 ] && msleep "$R"; kill -9 "$KPID" 2>/dev/null ;;
	random) rnd 20 600; msleep "$R"; kill -9 "$KPID" 2>/dev/null ;;
	esac
	reap
	rm -f "$CTL"
	if [ "$rc" -eq 137 ]; then
		landed=$((landed + 1))
		case $mode in
		first|random) k_random=$((k_random + 1)) ;;
		startup) k_startup=$((k_startup + 1)) ;;
		test) k_test=$((k_test + 1)) ;;
		after) k_after=$((k_after + 1)) ;;
		esac
		# where did it land?  judged from the test log
		starts1=$(grep -c '^start' "$LOG")
		last=$(tail -n 1 "$LOG" | cut -d' ' -f1)
		if [ "$starts1" -eq "$starts0" ]; then
			where=before-any-test w_before=$((w_before + 1))
		elif [ "$last" = ran ]; then
			where=between-steps w_between=$((w_between + 1))
		else
			where=during-a-test w_test=$((w_test + 1))
		fi
		echo "# kill $landed ($mode): $where, $(done_steps) steps done"
	elif [ "$rc" -eq 0 ]; then
		early_done=1
		echo "# run $iter ($mode) finished before the kill"
		break
	elif grep -q 'in use by another klab process' "$T/b.it$iter.err"; then
		inuse=$((inuse + 1))
		sleep 0.05
	else
		unexpected=$((unexpected + 1))
		echo "# run $iter ($mode) exited $rc: $(cat "$T/b.it$iter.err")"
		[ "$unexpected" -ge 3 ] && break
	fi
done
check "klab was killed $landed times (at least $KILLS) without finishing early" \
	test "$landed" -ge "$KILLS" -a "$early_done" -eq 0
check "no killed run left klab unable to resume (unexpected exits: $unexpected)" test "$unexpected" -eq 0
echo "# kills by kind: startup $k_startup, in-test $k_test, after-test $k_after, random $k_random; 'in use' retries $inuse"
check "some kills landed before any test of the run started ($w_before)" test "$w_before" -ge 1
check "some kills landed during a test ($w_test)" test "$w_test" -ge 1
check "some kills landed between a test's end and the next test ($w_between)" test "$w_between" -ge 1

# the final resume, not killed
w=0
while ! lock_free && [ "$w" -lt 250 ]; do sleep 0.02; w=$((w + 1)); done
iter=final
rc=1
for try in 1 2 3 4 5 6 7 8 9 10; do
	spawn
	reap
	grep -q 'in use by another klab process' "$T/b.itfinal.err" || break
	sleep 0.1
done
check "final resume exits 0" test "$rc" -eq 0
grep -q "^$C0 is the first bad commit\$" "$T/b.itfinal.out"
check "final resume prints '$C0 is the first bad commit'" test $? -eq 0
echo "# crash run: $(( $(date +%s) - crash_start ))s"

show=$("$KLAB" --state "$B" bisect show 1)
check "show: state done" test "$(echo "$show" | sed -n 's/^state: *//p')" = done
check "show: culprit is the reference culprit" \
	test "$(echo "$show" | sed -n 's/^culprit: *\([0-9a-f]*\).*/\1/p')" = "$C0"
check "show: steps equal the reference run ($S0)" test "$(echo "$show" | sed -n 's/^steps: *//p')" = "$S0"
check "database: bisection 1 is done with the reference culprit" \
	test "$(sqlite3 "$DB" "select state || ' ' || result || ' ' || culprit from bisections where id=1")" = "done culprit $C0"
check "no test ran again after its step was recorded done" test ! -s "$VIOL"
[ -s "$VIOL" ] && sed 's/^/#   /' "$VIOL"
check "the test command could always read the database" test ! -s "$VIOL.err"
[ -s "$VIOL.err" ] && sed 's/^/#   /' "$VIOL.err"
check "every test saw a clean checkout of its commit" test ! -s "$VIOL.tree" -a ! -s "$T/a.viol.tree"
[ -s "$VIOL.tree" ] && sed 's/^/#   /' "$VIOL.tree"
check "PRAGMA integrity_check: ok" test "$(sqlite3 "$DB" 'PRAGMA integrity_check')" = ok
check "PRAGMA foreign_key_check: no rows" test -z "$(sqlite3 "$DB" 'PRAGMA foreign_key_check')"
dups=$(sqlite3 "$DB" "select hash, count(*) from steps where bisection_id=1 and status='done' group by hash having count(*) > 1")
check "no commit has two done steps" test -z "$dups"
check "every step row is done (no running/aborted rows left)" \
	test "$(sqlite3 "$DB" "select count(*) from steps where bisection_id=1 and status != 'done'")" = 0
sqlite3 "$DB" "select seq, hash, phase, verdict from steps where bisection_id=1 and status='done' order by seq" > "$T/b.steps"
check "the recorded steps (seq, commit, phase, verdict) equal the reference run's" cmp -s "$T/a.steps" "$T/b.steps"
retried=$(sqlite3 "$DB" "select count(*) from steps where bisection_id=1 and attempts > 1")
check "steps killed during their test were retried in the same row ($retried rows with attempts > 1)" \
	test "$retried" -ge 1
ran=$(grep -c '^ran' "$LOG")
echo "# crash run: $(grep -c '^start' "$LOG") test starts, $ran completed, for $S0 steps"

# ---- kills inside the worktree's index or HEAD update ----
# libgit2 writes .git/index and .git/HEAD of klab's checkout through
# index.lock / HEAD.lock (create, write, rename); a kill in between leaves
# the lock file behind.  The window is short, so random kills rarely hit
# it: place those leftovers by hand after a kill.  klab holds the worktree
# flock while it works in the checkout, so such a lock is stale and resume
# must not stop on it.
B=$T/lab-c
DB=$B/klab.db
LOG=$T/c.log
VIOL=$T/c.viol
: > "$LOG"
"$KLAB" --state "$B" init >/dev/null
iter=c0
echo "test 0" > "$CTL"
spawn
reap
rm -f "$CTL"
check "lock leftovers: klab killed during its first test" test "$rc" -eq 137
wt=$(sed -n 's/^start [0-9a-f]* //p' "$LOG" | head -n 1)
if [ -n "$wt" ] && [ -d "$wt/.git" ]; then
	for lock in index.lock HEAD.lock; do
		iter=c-$lock
		: > "$wt/.git/$lock"
		echo "test 0" > "$CTL"
		spawn
		reap
		rm -f "$CTL"
		if [ "$rc" -eq 137 ]; then
			ok "resume after a kill that left .git/$lock in klab's checkout reaches the test"
		else
			fail "resume after a kill that left .git/$lock in klab's checkout: exit $rc: $(head -n 1 "$T/b.it$iter.err")"
		fi
		rm -f "$wt/.git/$lock"	# whatever klab did, go on without it
	done
else
	fail "lock leftovers: the test command ran in a git checkout ('$wt')"
fi
iter=c-final
spawn
reap
check "lock leftovers: the final resume exits 0" test "$rc" -eq 0
check "lock leftovers: same culprit and number of steps as the reference run" \
	test "$(sqlite3 "$DB" "select state || ' ' || culprit || ' ' || (select count(*) from steps where bisection_id=1 and status='done') from bisections where id=1")" = "done $C0 $S0"
check "lock leftovers: no test ran again after its step was recorded, every checkout clean" \
	test ! -s "$VIOL" -a ! -s "$VIOL.tree" -a ! -s "$VIOL.err"

trap - EXIT
cleanup
finish " (seed $SEED0)"
