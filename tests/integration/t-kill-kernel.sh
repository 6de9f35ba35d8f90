#!/bin/sh
# Crash safety across a real kernel bisection: the demo scenario (8
# commits on the imported 6.1 tree, the THP-alignment regression planted)
# queued and run by `klab worker`, which is killed with SIGKILL 20 times
# at random moments — aimed in turn at a guest (boot or benchmark run)
# and the rest (checkout, verdict, database writes) — and restarted each
# time.  The kernels come built from the shared artifact store
# (tests/demo-kernels.sh), so the soak spends its time on guests; a kill
# during a build is t-kernel-build.sh's.  Afterwards: the planted commit
# is the culprit, no finished step was done twice, every stored run has
# its KPI sample once, no boot is left 'running', no libvirt domain and no
# half-copied artifact is left, no klab process of this lab runs, and
# PRAGMA integrity_check is ok.  Fails (never skips) when libvirt does
# not answer.  KLAB_TEST_SEED fixes the moments.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
demo_lab

demo_history "$T/linux"
sed -e 's/^runtime:.*/runtime: 3s/' "$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml" > "$T/malloc1.yaml"
# no profile runs after the confirmation: t-perf-bisect checks them (CI time)
echo 'profile_runs: 0' >> "$T/malloc1.yaml"
k submit bisect --repo "$T/linux" --good demo-good --bad demo-bad --job "$T/malloc1.yaml" --no-revert-check \
	> "$T/submit.out" 2>&1
check "submitted" grep -q "^job 1 queued" "$T/submit.out"

# What the worker's job is doing now: 'build' while a make runs under it,
# 'guest' while one of its klab domains exists, 'other' otherwise.
phase_now() {
	w=$1
	procs=$(ps -eo pid=,ppid=,comm= | awk -v root="$w" '
		{ parent[$1] = $2; name[$1] = $3 }
		END {
			in_tree[root] = 1
			do { grew = 0
				for (p in parent) if (!(p in in_tree) && (parent[p] in in_tree)) { in_tree[p] = 1; grew = 1 }
			} while (grew)
			for (p in in_tree) printf "%s:%s\n", p, name[p]
		}')
	if echo "$procs" | grep -q ':make$'; then
		echo build
		return
	fi
	for p in $(echo "$procs" | cut -d: -f1); do
		if virsh -q -c "$URI" list --name 2>/dev/null | grep -q "^klab-$p-"; then
			echo guest
			return
		fi
	done
	echo other
}

seed=${KLAB_TEST_SEED:-$$}
echo "# kill seed $seed"
kills=0 nb=0 ng=0 no=0 killed_pids=
done_state() { q "SELECT state FROM queue_jobs WHERE id = 1"; }
while [ "$kills" -lt 20 ] && [ "$(done_state)" != done ]; do
	"$KLAB" --state "$lab" worker --lease 3 >> "$T/worker.out" 2>&1 &
	wpid=$!
	# aim in turn at a guest, the rest, a guest (a step boots several
	# guests).  Wait for that phase (a guest up to 15 min, the rest 20 s;
	# when it does not come, the kill lands wherever the worker is), then a
	# random moment in it
	case $((kills % 3)) in
	0|2) want=guest limit=4500 ;;
	*) want=other limit=100 ;;
	esac
	n=0
	while [ "$n" -lt "$limit" ] && [ "$(phase_now "$wpid")" != "$want" ] && [ "$(done_state)" != done ]; do
		sleep 0.2
		n=$((n + 1))
	done
	sleep "$(awk -v s="$seed" -v k="$kills" -v w="$want" 'BEGIN {
		srand(s + k); m = w == "other" ? 0.3 : 4; printf "%.2f", rand() * m }')"
	got=$(phase_now "$wpid")
	if kill -9 "$wpid" 2>/dev/null; then
		killed_pids="$killed_pids $wpid"
		kills=$((kills + 1))
		case $got in build) nb=$((nb + 1)) ;; guest) ng=$((ng + 1)) ;; *) no=$((no + 1)) ;; esac
		echo "# kill $kills: aimed at $want, hit $got ($(date +%T))"
	fi
	wait "$wpid" 2>/dev/null
done
echo "# $kills kills: $nb during a build, $ng during a guest, $no elsewhere"
# the rest without interruption, once the last lease has run out
sleep 4
k worker --once --lease 3 >> "$T/worker.out" 2>&1
check "killed 20 times" test "$kills" -eq 20
check "kills hit guests and the rest" test "$ng" -gt 0 -a "$no" -gt 0
check "no kernel was built here: each came from the shared store" \
	test "$(q "SELECT count(*) FROM builds WHERE status != 'ok' OR artifact_dir NOT LIKE '$KSTORE/%'")" -eq 0
check "job done after the kills" test "$(done_state)" = done ||
	{ tail -n 30 "$T/worker.out"; tail -n 30 "$lab/logs/queue-1.log"; }
check "culprit is the planted commit" test "$(q "SELECT culprit FROM bisections WHERE id = 1")" = "$planted"
check "the job was resumed (attempts counted)" test "$(q 'SELECT attempts FROM queue_jobs WHERE id = 1')" -ge 2
check "no finished step done twice" \
	test "$(q "SELECT count(*) FROM (SELECT hash, phase FROM steps WHERE bisection_id = 1 AND status = 'done'
		   GROUP BY hash, phase HAVING count(*) > 1)")" -eq 0
check "no run stored twice" \
	test "$(q "SELECT count(*) FROM (SELECT step_id, iteration FROM runs WHERE status = 'ok'
		   GROUP BY step_id, iteration HAVING count(*) > 1)")" -eq 0
check "every stored run has its KPI sample, once" \
	test "$(q "SELECT count(*) FROM runs r WHERE r.status = 'ok' AND (SELECT count(*) FROM samples s
		   WHERE s.run_id = r.id AND s.metric = 'will-it-scale.per_process_ops' AND s.seq = 0) != 1")" -eq 0
check "no boot left 'running'" test "$(q "SELECT count(*) FROM boots WHERE outcome = 'running'")" -eq 0
check "boots cut short are marked interrupted" \
	test "$(q "SELECT count(*) FROM boots WHERE outcome IS NULL AND reason NOT LIKE 'interrupted:%'")" -eq 0
left=0
for d in $(virsh -q -c "$URI" list --all --name 2>/dev/null | grep '^klab-'); do
	virsh -q -c "$URI" dumpxml "$d" 2>/dev/null | grep -qF "$lab" && left=$((left + 1))
done
check "no libvirt domain of this lab left" test "$left" -eq 0
# a store's temp dir is .tmp-KEY-PID: none of a killed worker's is left
half=0
for p in $killed_pids; do
	ls -A "$KSTORE" "$lab/artifacts" 2>/dev/null | grep -q "^\.tmp-.*-$p\$" && half=$((half + 1))
done
check "no half-copied artifact left" test "$half" -eq 0
bad_art=0 arts=0
for a in $(q "SELECT DISTINCT artifact_dir FROM builds WHERE status = 'ok'"); do
	arts=$((arts + 1))
	[ -f "$a/bzImage" ] && [ -f "$a/config" ] || bad_art=$((bad_art + 1))
done
check "every artifact complete" test "$bad_art" -eq 0
check "every ok build has its artifact" \
	test "$(q "SELECT count(*) FROM builds WHERE status = 'ok'")" -eq "$arts"
check "no klab process of this lab left" test -z "$(pgrep -f -- "--state $lab")"
check "integrity_check ok" test "$(q 'PRAGMA integrity_check')" = ok
boots_summary
finish
