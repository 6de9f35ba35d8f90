#!/bin/sh
# The queue: klab submit (checked up front), klab worker (claims, leases,
# slots), status/log/cancel/retry, a worker killed with SIGKILL again and
# again (the bisection resumes, no step redone, same culprit), and 200
# submits at once.  Bisections here run a test command; t-perf-bisect and
# t-guest run the guests.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
make_linear_repo "$T/repo" 40 23
write_test_script "$T/test.sh"
culprit=$(git -C "$T/repo" log --format=%H --grep='^commit 23$')
# a slower test, and one that records its pid (cancel must stop it)
cat > "$T/slow.sh" <<EOF
#!/bin/sh
echo \$\$ >> "$T/slow.pids"
sleep \${SLOW:-1}
test ! -e broken
EOF
chmod +x "$T/slow.sh"

# ---- submit checks everything up front ---------------------------------------
out=$(k submit bisect --repo "$T/nowhere" --good main~39 --bad main -- "$T/test.sh" 2>&1); rc=$?
check "submit: missing repository refused" test "$rc" -ne 0
check "submit: one-line error" test "$(echo "$out" | wc -l)" -eq 1
out=$(k submit bisect --repo "$T/repo" --good nosuchrev --bad main -- "$T/test.sh" 2>&1); rc=$?
check "submit: unknown revision refused" test "$rc" -ne 0
out=$(k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/nosuchcmd" 2>&1); rc=$?
check "submit: missing test command refused" test "$rc" -ne 0
printf 'suite: stress-ng\ntestcase: [oops\n' > "$T/bad.yaml"
out=$(k submit run --job "$T/bad.yaml" --kernel /nonexistent 2>&1); rc=$?
check "submit run: bad job refused" test "$rc" -ne 0
case $out in *bad.yaml:*) ok "submit run: error names file:line";; *) fail "submit run error: $out";; esac
out=$(k submit frobnicate 2>&1); rc=$?
check "submit: unknown kind is a usage error" test "$rc" -eq 2
# what the guests need is checked before queueing, with klab run's own
# checks (guest_env_check): the kernel, the accelerator, the URI, sizes
# that do not fit the guest
job="$KLAB_SRCDIR/jobs/usemem-anon-w-seq.yaml"
python3 -c "
d = bytearray(2048); d[0x202:0x206] = b'HdrS'
open('$T/bzImage', 'wb').write(d)"
sed 's/^runtime: 10s$/runtime: 10s\nsize: 1t/' "$job" > "$T/huge.yaml"
submit_refused() {
	what=$1 want=$2; shift 2
	out=$(k "$@" 2>&1); rc=$?
	check "$what: refused" test "$rc" -ne 0
	case $out in
	*"
"*) fail "$what: more than one line: $out" ;;
	*"$want"*) ok "$what: says so" ;;
	*) fail "$what: $out" ;;
	esac
}
submit_refused "submit run --kernel /etc/hostname --accel foo" "accelerator 'foo'" \
	submit run --job "$job" --kernel /etc/hostname --accel foo
submit_refused "submit run --kernel /etc/hostname" "not an x86 bzImage" \
	submit run --job "$job" --kernel /etc/hostname
submit_refused "submit run --uri garbage" "libvirt URI 'garbage'" \
	submit run --job "$job" --kernel "$T/bzImage" --uri garbage
submit_refused "submit run: size 1t in a 2 GiB guest" "do not fit in the guest" \
	submit run --job "$T/huge.yaml" --kernel "$T/bzImage"
submit_refused "submit run --repo: size 1t" "do not fit in the guest" \
	submit run --job "$T/huge.yaml" --repo "$T/repo" --rev main
submit_refused "submit bisect --job: size 1t" "do not fit in the guest" \
	submit bisect --repo "$T/repo" --good main~39 --bad main --job "$T/huge.yaml"
submit_refused "bisect start --job --no-run: size 1t" "do not fit in the guest" \
	bisect start --repo "$T/repo" --good main~39 --bad main --job "$T/huge.yaml" --no-run
check "no bisection was created by refused ones" test "$(q 'SELECT count(*) FROM bisections')" -eq 0
check "nothing was queued by bad submits" test "$(q 'SELECT count(*) FROM queue_jobs')" -eq 0

# ---- submit, worker --once, status, log ------------------------------------
out=$(k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/test.sh"); rc=$?
check "submit exits 0" test "$rc" -eq 0
case $out in "job 1 queued: bisection 1 "*) ok "submit prints the job id";; *) fail "submit: $out";; esac
k status > "$T/status.out"
check "status: queued" grep -q "^1	bisect	queued	0	-	" "$T/status.out"
k worker --once > "$T/worker.out" 2>&1; rc=$?
check "worker --once exits 0" test "$rc" -eq 0
check "job 1 done" test "$(q 'SELECT state FROM queue_jobs WHERE id = 1')" = done
check "bisection 1 found the culprit" test "$(q 'SELECT culprit FROM bisections WHERE id = 1')" = "$culprit"
k log 1 > "$T/log1.out"
check "log has the bisection's output" grep -q "$culprit is the first bad commit" "$T/log1.out"
check "log has the worker's lines" grep -q "^== .* attempt 1 by worker" "$T/log1.out"
k status --json > "$T/status.json"
check "status --json is valid JSON" python3 -m json.tool "$T/status.json" >/dev/null
check "status --json: job 1 done" python3 -c "
import json, sys
j = json.load(open('$T/status.json'))
sys.exit(0 if j[0]['state'] == 'done' and j[0]['bisection'] == 1 else 1)"
k status 1 > "$T/status1.out"
check "status ID: details" grep -q "^job 1: bisect, done" "$T/status1.out"
out=$(k status 99 2>&1); rc=$?
check "status of an unknown job: error" test "$rc" -ne 0
out=$(k retry 1 2>&1); rc=$?
check "retry of a done job refused" test "$rc" -ne 0

# ---- cancel a running job, then retry it ------------------------------------
k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/slow.sh" >/dev/null
SLOW=30 "$KLAB" --state "$lab" worker --lease 5 > "$T/worker2.out" 2>&1 &
wpid=$!
i=0
while [ "$(q 'SELECT state FROM queue_jobs WHERE id = 2')" != running ] || [ ! -s "$T/slow.pids" ]; do
	i=$((i + 1)); [ "$i" -lt 100 ] || break; sleep 0.2
done
t0=$(date +%s)
k cancel 2 > "$T/cancel.out"; rc=$?
check "cancel of a running job exits 0" test "$rc" -eq 0
i=0
while kill -0 "$(tail -n1 "$T/slow.pids")" 2>/dev/null; do
	i=$((i + 1)); [ "$i" -lt 150 ] || break; sleep 0.2
done
check "the running test was stopped promptly" test $(($(date +%s) - t0)) -lt 20
check "job 2 cancelled" test "$(q 'SELECT state FROM queue_jobs WHERE id = 2')" = cancelled
i=0
while [ "$(q 'SELECT state FROM bisections WHERE id = 2')" = running ]; do
	i=$((i + 1)); [ "$i" -lt 100 ] || break; sleep 0.2
done
check "bisection 2 stopped, not lost" test "$(q 'SELECT state FROM bisections WHERE id = 2')" = stopped
kill "$wpid"; wait "$wpid"
check "a worker stopped by SIGTERM says so" grep -q "stopped$" "$T/worker2.out"
k retry 2 > "$T/retry.out"; rc=$?
check "retry of a cancelled job exits 0" test "$rc" -eq 0
SLOW=0 k worker --once > "$T/worker3.out" 2>&1
check "retried job done" test "$(q 'SELECT state FROM queue_jobs WHERE id = 2')" = done
check "retried bisection found the culprit" test "$(q 'SELECT culprit FROM bisections WHERE id = 2')" = "$culprit"

# ---- SIGKILL the worker again and again ------------------------------------
k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/slow.sh" >/dev/null
kills=0
seed=${KLAB_TEST_SEED:-$$}
echo "# kill seed $seed"
while [ "$(q 'SELECT state FROM queue_jobs WHERE id = 3')" != done ] && [ "$kills" -lt 40 ]; do
	SLOW=1 "$KLAB" --state "$lab" worker --lease 3 >> "$T/worker4.out" 2>&1 &
	wpid=$!
	# a random moment within the next 2.5 s
	sleep "$(awk -v s="$seed" -v k="$kills" 'BEGIN { srand(s + k); printf "%.2f", 0.3 + rand() * 2.2 }')"
	if kill -9 "$wpid" 2>/dev/null; then
		kills=$((kills + 1))
	fi
	wait "$wpid" 2>/dev/null
	# the next worker takes over after the lease (3 s) runs out
done
# finish whatever is left, once the last killed worker's lease has run out
sleep 4
SLOW=0 k worker --once --lease 3 >> "$T/worker4.out" 2>&1
echo "# $kills kills"
check "killed at least 10 times" test "$kills" -ge 10
check "job 3 done after the kills" test "$(q 'SELECT state FROM queue_jobs WHERE id = 3')" = done
check "same culprit as without kills" test "$(q 'SELECT culprit FROM bisections WHERE id = 3')" = "$culprit"
check "no commit has two finished steps" \
	test "$(q "SELECT count(*) FROM (SELECT hash FROM steps WHERE bisection_id = 3 AND status = 'done' GROUP BY hash HAVING count(*) > 1)")" -eq 0
check "same steps as the uninterrupted bisection" \
	test "$(q "SELECT group_concat(hash || verdict, ',') FROM (SELECT hash, verdict FROM steps WHERE bisection_id = 3 AND status = 'done' ORDER BY seq)")" = \
	     "$(q "SELECT group_concat(hash || verdict, ',') FROM (SELECT hash, verdict FROM steps WHERE bisection_id = 1 AND status = 'done' ORDER BY seq)")"
check "attempts counted" test "$(q 'SELECT attempts FROM queue_jobs WHERE id = 3')" -ge 2
sleep 1
left=0
for p in $(cat "$T/slow.pids"); do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
check "no test process left behind" test "$left" -eq 0
check "integrity_check ok" test "$(q 'PRAGMA integrity_check')" = ok

# ---- two slots run two jobs at once (same repository: each its own
# worktree) ------------------------------------------------------------------
: > "$T/slow.pids"
k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/slow.sh" >/dev/null
k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/slow.sh" >/dev/null
SLOW=1 k worker --once --slots 2 > "$T/worker5.out" 2>&1
check "both jobs done" test "$(q "SELECT count(*) FROM queue_jobs WHERE id IN (4, 5) AND state = 'done'")" -eq 2
check "two worktrees of the repository" test -d "$lab/worktrees/repo-1.1"
check "they overlapped" test "$(q "SELECT (SELECT started_at FROM queue_jobs WHERE id = 5) < (SELECT finished_at FROM queue_jobs WHERE id = 4)")" -eq 1

# ---- six slots over six bisections of one repository: more jobs than
# worktree copies existed before; a job never fails for want of one -------
: > "$T/slow.pids"
for i in 1 2 3 4 5 6; do
	k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/slow.sh" >/dev/null
done
SLOW=1 k worker --once --slots 6 > "$T/worker6.out" 2>&1; rc=$?
check "worker --slots 6 exits 0" test "$rc" -eq 0
check "all six jobs done" test "$(q "SELECT count(*) FROM queue_jobs WHERE id BETWEEN 6 AND 11 AND state = 'done'")" -eq 6
check "all six found the culprit" \
	test "$(q "SELECT count(*) FROM bisections b JOIN queue_jobs j ON j.bisection_id = b.id WHERE j.id BETWEEN 6 AND 11 AND b.culprit = '$culprit'")" -eq 6
check "no 'in use' error" test "$(grep -c 'in use' "$T/worker6.out" "$lab"/logs/queue-*.log | awk -F: '{ s += $NF } END { print s }')" -eq 0
check "six worktrees of the repository" test -d "$lab/worktrees/repo-1.5"

# ---- a reproduction: checked at submit, run by the worker --------------------
# (--no-measure: the worker's side without guests; t-compare measures
# and bisects in guests)
parent=$(git -C "$T/repo" rev-parse "$culprit^")
mkdir "$T/rep"
{
	printf '[mm] %.12s: will-it-scale.per_process_ops -95.5%% regression\n\n' "$culprit"
	printf 'commit: %s ("mm: planted")\nparent: %.12s\n\n' "$culprit" "$parent"
	printf 'mode/nr_task/test/testcase:\n  process/100%%/malloc1/will-it-scale\n'
} > "$T/rep/report.txt"
printf 'nothing here\n' > "$T/rep/garbage.txt"
before=$(q 'SELECT count(*) FROM queue_jobs')
submit_refused "submit reproduce: a report without a commit" "no commit: expected a line like" \
	submit reproduce --accel tcg "$T/rep/garbage.txt"
submit_refused "submit reproduce: stdin" "give a file, not stdin" submit reproduce --accel tcg -
submit_refused "submit reproduce --bisect: a GOOD that does not exist" "--bisect: 'nosuchrev' is not a revision" \
	submit reproduce --accel tcg --repo "$T/repo" --bisect nosuchrev "$T/rep/report.txt"
submit_refused "submit reproduce --uri garbage (the guests checked)" "libvirt URI 'garbage'" \
	submit reproduce --accel tcg --repo "$T/repo" --uri garbage "$T/rep/report.txt"
submit_refused "submit reproduce --queue-job" "--queue-job is the worker's" \
	submit reproduce --queue-job 1 "$T/rep/report.txt"
check "nothing was queued by bad reproduce submits" test "$(q 'SELECT count(*) FROM queue_jobs')" -eq "$before"
out=$(cd "$T/rep" && k submit reproduce --accel tcg --repo "$T/repo" --no-measure --job-out r.yaml report.txt); rc=$?
rid=$(printf '%s' "$out" | sed -n 's/^job \([0-9]*\) queued: reproduce .*/\1/p')
check "submit reproduce exits 0 and prints the job id" test "$rc" -eq 0 -a -n "$rid"
check "submit reproduce writes no job yet" test ! -e "$T/rep/r.yaml"
check "status: the reproduction queued" sh -c "'$KLAB' --state '$lab' status | grep -q '^$rid	reproduce	queued	0	-	.*	reproduce --accel tcg --repo $T/repo --no-measure --job-out r.yaml report.txt\$'"
k worker --once > "$T/worker7.out" 2>&1; rc=$?
check "worker runs the reproduction: exit 0" test "$rc" -eq 0
check "the reproduction is done, its result its message" \
	test "$(q "SELECT state || ': ' || message FROM queue_jobs WHERE id = $rid")" = "done: not measured (--no-measure): wrote r.yaml"
check "the worker wrote the job in the submitter's directory" grep -q '^testcase: .malloc1.$' "$T/rep/r.yaml"
check "status lists the reproduction with its result" \
	sh -c "'$KLAB' --state '$lab' status | grep -q '^$rid	reproduce	done	1	.*report.txt: not measured (--no-measure): wrote r.yaml\$'"
check "status ID shows it" sh -c "'$KLAB' --state '$lab' status $rid | grep -q '^job $rid: reproduce, done\$'"
check "the log has reproduce's lines" grep -q "^commit:   $culprit" "$lab/logs/queue-$rid.log"

# ---- 200 submits at once -----------------------------------------------------
mkdir "$T/many"
i=0
while [ "$i" -lt 200 ]; do
	( k submit bisect --repo "$T/repo" --good main~39 --bad main -- "$T/test.sh" > "$T/many/$i.out" 2>&1
	  echo $? > "$T/many/$i.rc" ) &
	i=$((i + 1))
done
wait
check "200 submits exit 0" test "$(cat "$T"/many/*.rc | grep -c '^0$')" -eq 200
check "no 'database is locked'" test "$(cat "$T"/many/*.out | grep -c 'locked')" -eq 0
check "200 jobs queued" test "$(q "SELECT count(*) FROM queue_jobs WHERE state = 'queued'")" -eq 200
check "200 distinct job ids printed" test "$(sed -n 's/^job \([0-9]*\) queued.*/\1/p' "$T"/many/*.out | sort -u | wc -l)" -eq 200
check "200 distinct bisections" test "$(q "SELECT count(DISTINCT bisection_id) FROM queue_jobs WHERE state = 'queued'")" -eq 200
check "integrity_check ok after the storm" test "$(q 'PRAGMA integrity_check')" = ok
finish
