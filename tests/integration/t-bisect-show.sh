#!/bin/sh
# klab bisect show on a finished job bisection (the report's fixed lab,
# tests/data/report/lab.sql): the monitor table of parent and culprit as
# klab compare prints it, the profile from the profile steps ranked by
# points, and the good and bad ends while no confirm pair exists.
# Guest-free: needs sqlite3 only.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

if ! command -v sqlite3 >/dev/null 2>&1; then
	echo "not ok - sqlite3 is missing: install it (./bootstrap deps)"
	exit 1
fi
lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
sqlite3 "$lab/klab.db" <"$KLAB_SRCDIR/tests/data/report/lab.sql"
"$KLAB" --state "$lab" bisect show 1 >"$T/show.out" 2>&1; rc=$?
check "bisect show exits 0" test "$rc" -eq 0
check "the monitor table names its steps" \
	grep -qx "monitors, parent 444444444444 -> culprit 555555555555 (steps 6 and 7, the profile from steps 8 and 9):" "$T/show.out"
check "the KPI line, culprit against parent" \
	grep -q "^culprit against parent: will-it-scale.per_process_ops 100200 ±1.1% -> 48100 ±1.0% (-52.0%), changed" "$T/show.out"
# "what changed": the profile's first row is clear_page_erms, in points
check "what changed leads with clear_page_erms in points" \
	grep -qx "  profile    perf-profile.self.cycles-pp.clear_page_erms 13.5 -> 90.4 (+76.9 points)" "$T/show.out"
check "LKP's table: parent and culprit columns" grep -qx "        parent %stddev  %change       culprit %stddev name" "$T/show.out"
check "a counter from the confirm steps" grep -q " 2.333 ± 25% +220900.0%  *5157 ±  3%   vmstat.thp_fault_alloc\$" "$T/show.out"
check "not the profile steps' own counters" sh -c "! grep -q -e 77777 -e 88888 '$T/show.out'"
first=$(sed -n '/^  perf-profile.self: /{n;p;q}' "$T/show.out")
check "the self section's first row is clear_page_erms (+76.9 points)" \
	sh -c "echo '$first' | grep -q '+76.9  *90.4  *perf-profile.self.cycles-pp.clear_page_erms\$'"
check "a row the culprit lacks counts from 0" grep -q -- "-60.7  *0  *perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath\$" "$T/show.out"
check "the profile's sections come after the counters" \
	sh -c "[ \$(grep -n 'vmstat.pgfault\$' '$T/show.out' | cut -d: -f1) -lt \$(grep -n '^  perf-profile.self: ' '$T/show.out' | cut -d: -f1) ]"
check "no control or markup issue: the hostile name is printed as text" grep -q "perf-profile.self.cycles-pp.<evil>\$" "$T/show.out"

# the notice of the same bisection (mail to an SMTP sink on loopback)
# ranks its monitors the same way: the profile's rows in points
PY=${PYTHON3:-python3}
mkdir -p "$T/smtp"
"$PY" "$KLAB_SRCDIR/tests/integration/notify-peers.py" smtp "$T/smtp" 2>"$T/smtp/stderr" &
smtp_pid=$!
trap 'kill $smtp_pid 2>/dev/null' EXIT
i=0
while [ ! -s "$T/smtp/port" ] && [ "$i" -lt 100 ]; do i=$((i + 1)); sleep 0.1; done
printf 'notify_mail_to = dev@example.org\nnotify_mail_from = klab@example.org\nsmtp_url = smtp://127.0.0.1:%s\nnotify_timeout = 5\n' \
	"$(cat "$T/smtp/port")" >>"$lab/klab.conf"
"$KLAB" --state "$lab" notify send 1 >"$T/send.out" 2>&1
check "the notice: clear_page_erms with its change in points" \
	grep -q "^ *13.5 *90.4 *+76.9   perf-profile.self.cycles-pp.clear_page_erms" "$T/smtp/msg-1.eml"
check "the notice says the profile rows are points" grep -q "^  (perf-profile rows: % of the samples in the profile runs, change in points)" "$T/smtp/msg-1.eml"
check "the notice: counters keep their %change" grep -q "^ *2.33333 *5156.67 *+220900.0%  vmstat.thp_fault_alloc" "$T/smtp/msg-1.eml"
kill $smtp_pid 2>/dev/null

# a failed confirmation names a suspect, never a culprit
sqlite3 "$lab/klab.db" "UPDATE bisections SET result = 'unconfirmed' WHERE id = 1"
"$KLAB" --state "$lab" bisect show 1 >"$T/suspect.out" 2>&1
check "unconfirmed: suspect against parent" grep -q "^suspect against parent: " "$T/suspect.out"
check "unconfirmed: no culprit column" sh -c "! grep -q ' culprit %stddev' '$T/suspect.out'"

# no confirm pair (a bisection stopped before it): the good and bad ends
sqlite3 "$lab/klab.db" "DELETE FROM steps WHERE phase IN ('confirm', 'profile') AND bisection_id = 1"
"$KLAB" --state "$lab" bisect show 1 >"$T/ends.out" 2>&1
check "without a confirm pair: good against bad" \
	grep -qx "monitors, good 111111111111 -> bad 666666666666 (steps 1 and 2):" "$T/ends.out"
check "the ends' KPI line" grep -q "^bad against good: will-it-scale.per_process_ops 100060 ±1.0% -> 48220 ±1.1% (-51.8%), changed" "$T/ends.out"

# a command bisection has no monitors: no table
"$KLAB" --state "$lab" bisect show 2 >"$T/cmd.out" 2>&1
check "a command bisection: no monitor table" sh -c "! grep -q '^monitors, ' '$T/cmd.out'"

# two change points (migration 11): split at 333333333333, a culprit in
# each half with its share; the steps of each half marked h1: / h2:
c2=2222222222222222222222222222222222222222
c3=3333333333333333333333333333333333333333
c5=5555555555555555555555555555555555555555
sqlite3 "$lab/klab.db" "UPDATE bisections SET result = 'culprit', culprit = '$c2', split_commit = '$c3', half = 2 WHERE id = 1;
UPDATE steps SET half = 1 WHERE id = 3; UPDATE steps SET half = 2 WHERE id = 5;
INSERT INTO bisection_culprits (bisection_id, half, culprit, confirmed, share, message) VALUES
 (1, 1, '$c2', 1, 45.2, 'culprit 222222222222 confirmed: parent like good; revert check not run: one of two changes'),
 (1, 2, '$c5', 0, NULL, 'culprit 555555555555 NOT confirmed: parent like bad')"
"$KLAB" --state "$lab" bisect show 1 >"$T/two.out" 2>&1; rc=$?
check "two changes: bisect show exits 0" test "$rc" -eq 0
check "two changes: the split commit" grep -q "^split:      $c3 (clearly apart from both ends" "$T/two.out"
check "two changes: half 1's culprit with its share" grep -q "^half 1:     culprit $c2 .* (45% of the regression)\$" "$T/two.out"
check "two changes: half 1's message" grep -q "^            culprit 222222222222 confirmed: parent like good; revert check not run" "$T/two.out"
check "two changes: half 2's suspect, not confirmed" grep -q "^half 2:     suspect $c5 .*(NOT confirmed)\$" "$T/two.out"
check "two changes: half 1's step marked h1:" grep -q "^   3  222222222222  h1:bisect " "$T/two.out"
check "two changes: half 2's step marked h2:" grep -q "^   5  555555555555  h2:bisect " "$T/two.out"
"$KLAB" --state "$lab" bisect log 1 >"$T/two.log" 2>&1; rc=$?
check "two changes: bisect log exits 0" test "$rc" -eq 0
check "two changes: half 1 replays with the split commit bad" grep -qx "git bisect bad $c3" "$T/two.log"
check "two changes: half 2 is written as comments" grep -qx "# git bisect start 6666666666666666666666666666666666666666 $c3" "$T/two.log"
check "two changes: half 2's mark commented" grep -qx "# git bisect bad $c5" "$T/two.log"
check "two changes: half 1's mark replays" grep -qx "git bisect good $c2" "$T/two.log"
check "two changes: both first bad commits" grep -qx "# half 2: first bad commit (NOT confirmed): \[$c5\]" "$T/two.log"
finish
