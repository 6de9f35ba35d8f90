#!/bin/sh
# klab notify against real peers on loopback (tests/integration/notify-peers.py):
# an SMTP sink with AUTH and an HTTP listener.  A real command bisection
# over a repository whose culprit has a hostile subject (CR, a "Bcc:"
# line, quotes, a backslash, non-ASCII) reports itself by mail and webhook
# when it ends;
# with the SMTP server down the notice stays pending with its error and
# the bisection is untouched, and a flush delivers it once the server is
# back; 'klab notify test' succeeds and fails as the server does.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

PY=${PYTHON3:-python3}
PEERS=$KLAB_SRCDIR/tests/integration/notify-peers.py
K() { "$KLAB" --state "$T/lab" "$@"; }
db() { sqlite3 "$T/lab/klab.db" "$1"; }

smtp_pid= http_pid= bad_http_pid=
stop_peers() {
	for p in $smtp_pid $http_pid $bad_http_pid; do kill "$p" 2>/dev/null; done
}
trap stop_peers EXIT

# start_peer KIND DIR ARGS...: sets peer_pid and peer_port
start_peer() {
	kind=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	rm -f "$dir/port"
	"$PY" "$PEERS" "$kind" "$dir" "$@" 2>>"$dir/stderr" &
	peer_pid=$!
	i=0
	while [ ! -s "$dir/port" ]; do
		i=$((i + 1))
		if [ "$i" -gt 100 ] || ! kill -0 "$peer_pid" 2>/dev/null; then
			echo "not ok - $kind peer did not start: $(cat "$dir/stderr" 2>/dev/null)"
			exit 1
		fi
		sleep 0.1
	done
	peer_port=$(cat "$dir/port")
}
stop_smtp() {
	kill "$smtp_pid"
	wait "$smtp_pid" 2>/dev/null
	smtp_pid=
}

start_peer smtp "$T/smtp" --user klabuser --password 's3cret pw'
smtp_pid=$peer_pid smtp_port=$peer_port
start_peer http "$T/http"
http_pid=$peer_pid http_port=$peer_port

K init >/dev/null
printf 's3cret pw\n' > "$T/password"
chmod 600 "$T/password"
cat >> "$T/lab/klab.conf" <<EOF
notify_mail_to = dev@example.org,  list@example.org
notify_mail_from = klab@example.org
smtp_url = smtp://127.0.0.1:$smtp_port
smtp_user = klabuser
smtp_password_file = $T/password
smtp_tls = try
notify_webhook = http://127.0.0.1:$http_port/hooks/klab?token=t0ken
notify_timeout = 5
EOF

# A linear history; commit 7 breaks the test and has a hostile subject
# (fast-import keeps the raw bytes; libgit2's summary keeps the CR).
hostile=$(printf 'mm: na\303\257ve \342\230\203 fix\rBcc: evil@x\r\nX-Evil: 1 "quote\\ \001end')
subject_of() { if [ "$1" -eq 7 ]; then printf '%s' "$hostile"; else echo "commit $1"; fi; }
make_linear_repo "$T/repo" 12 7 subject_of
write_test_script "$T/test.sh"
culprit=$(git -C "$T/repo" rev-parse main~5)
short=$(echo "$culprit" | cut -c1-12)

K bisect start --repo "$T/repo" --good main~11 --bad main -- "$T/test.sh" >"$T/bisect.out" 2>&1
check "the bisection finds the culprit" test "$(db "select culprit from bisections where id=1")" = "$culprit"

# ---- both peers up: the bisection's end sent one mail, one JSON document
# (klab bisect start and resume notify by themselves)
check "the bisection's end prints one line per target" test "$(grep -c ' sent$' "$T/bisect.out")" -eq 2
check "no warning" sh -c "! grep -q 'warning' '$T/bisect.out'"
check "the SMTP sink got one message" test "$(ls "$T/smtp" | grep -c '\.eml$')" -eq 1
check "the HTTP listener got one POST" test "$(ls "$T/http" | grep -c '\.json$')" -eq 1

# what klab stored as the culprit's subject: the raw CR is still there
if "$PY" - "$T/lab/klab.db" "$culprit" <<'EOF'
import sqlite3, sys
s = sqlite3.connect(sys.argv[1]).execute("select subject from commits where hash = ?", (sys.argv[2],)).fetchone()[0]
assert "\rBcc: evil@x" in s and '"quote\\' in s and "\x01" in s, repr(s)
EOF
then ok "the stored subject keeps the hostile bytes (CR, quote, backslash, control)"; else fail "stored subject"; fi

if "$PY" - "$T/smtp/msg-1" "$culprit" "$T/lab/klab.db" >"$T/mailcheck.out" 2>&1 <<'EOF'
import email, email.header, email.policy, re, sqlite3, sys
base, culprit, dbpath = sys.argv[1], sys.argv[2], sys.argv[3]
raw = open(base + ".raw", "rb").read()
env = open(base + ".env").read().split("\n")
assert b"\n" not in raw.replace(b"\r\n", b""), "bare LF or CR in the message"
assert b"\r" not in raw.replace(b"\r\n", b""), "bare CR in the message"
assert all(len(l) <= 998 for l in raw.split(b"\r\n")), "line over 998 octets"
assert "from <klab@example.org>" in env, env
assert "rcpt <dev@example.org>" in env and "rcpt <list@example.org>" in env, env
assert "auth klabuser" in env, "no AUTH PLAIN with smtp_user/smtp_password_file"
msg = email.message_from_bytes(open(base + ".eml", "rb").read(), policy=email.policy.default)
names = sorted(k.lower() for k in msg.keys())
assert names == sorted(["date", "from", "to", "subject", "message-id", "mime-version", "content-type",
                        "content-transfer-encoding", "auto-submitted", "x-mailer"]), names
assert msg["From"] == "klab <klab@example.org>", msg["From"]
assert msg["To"] == "dev@example.org, list@example.org", msg["To"]
assert re.fullmatch(r"<klab\.\d+\.\d+@[A-Za-z0-9.-]+>", msg["Message-ID"]), msg["Message-ID"]
assert msg.get_content_type() == "text/plain" and msg.get_content_charset() == "utf-8"
subject = str(msg["Subject"])
hostile = sqlite3.connect(dbpath).execute("select subject from commits where hash = ?", (culprit,)).fetchone()[0]
clean = re.sub(r"[\x00-\x1f\x7f]", " ", hostile)
want = "[klab] %s %s: test.sh fails (exit 1)" % (culprit[:12], clean)
assert subject == want, "subject %r != %r" % (subject, want)
body = msg.get_content().replace("\r\n", "\n")
assert ("commit:     %s\n" % culprit) in body, body
assert "subject:    " + clean in body, body
assert "git bisect run " in body and "test.sh" in body, body
print("mail ok:", subject)
EOF
then ok "mail: envelope, auth, headers, RFC 2047 subject, no injected header, CRLF"; else fail "mail: $(cat "$T/mailcheck.out")"; fi

check "the webhook document is valid JSON" "$PY" -m json.tool "$T/http/post-1.json" >/dev/null
if "$PY" - "$T/http/post-1" "$culprit" "$T/lab/klab.db" >"$T/jsoncheck.out" 2>&1 <<'EOF'
import json, re, sqlite3, sys
base, culprit, dbpath = sys.argv[1], sys.argv[2], sys.argv[3]
doc = json.load(open(base + ".json", encoding="utf-8"))
hdr = open(base + ".hdr").read()
assert hdr.startswith("POST /hooks/klab?token=t0ken "), hdr
assert re.search(r"(?mi)^content-type: application/json\s*$", hdr), hdr
hostile = sqlite3.connect(dbpath).execute("select subject from commits where hash = ?", (culprit,)).fetchone()[0]
clean = re.sub(r"[\x00-\x1f\x7f]", " ", hostile)
assert doc["event"] == "bisection" and doc["bisection"] == 1 and doc["kind"] == "command", doc
assert doc["outcome"] == "culprit", doc["outcome"]
assert doc["culprit"]["hash"] == culprit, doc["culprit"]
assert doc["culprit"]["subject"] == clean, (doc["culprit"]["subject"], clean)
assert doc["culprit"]["author"] == "klab test <test@klab.invalid>", doc["culprit"]
assert doc["culprit_exit_code"] == 1 and doc["command"][-1].endswith("test.sh"), doc
assert "git bisect run" in doc["reproduce"], doc["reproduce"]
print("json ok")
EOF
then ok "webhook: POST with application/json, culprit hash, hostile subject intact, outcome"; else fail "json: $(cat "$T/jsoncheck.out")"; fi

list=$(K notify list)
check "notify list: two rows sent after one attempt" test "$(echo "$list" | grep -c '	sent	1	-$')" -eq 2
if grep -rq 's3cret' "$T/send.out" "$T/send.err" "$T/lab/klab.db" "$T/lab/klab.db-wal" 2>/dev/null; then
	fail "the SMTP password leaked into output or the database"
else
	ok "the SMTP password is in no output and not in the database"
fi

# ---- the SMTP server down: recorded, pending, results intact
stop_smtp
K notify send 1 >"$T/send2.out" 2>"$T/send2.err"; rc=$?
check "send with the mail server down still exits 0" test "$rc" -eq 0
check "one warning line for the failed mail" test "$(wc -l < "$T/send2.err")" -eq 1
grep -q "^klab: warning: notification 3 (mail to dev@example.org, list@example.org) not sent: .*next try in" "$T/send2.err" &&
	ok "the warning names the row, the target, the error and the next try" || fail "warning: $(cat "$T/send2.err")"
check "the mail row is pending after 1 attempt" test "$(db "select state || ' ' || attempts from notifications where id=3")" = "pending 1"
check "its last_error is recorded" test -n "$(db "select last_error from notifications where id=3")"
check "its next try is about a minute away" test "$(db "select next_try_at - strftime('%s','now') between 50 and 61 from notifications where id=3")" = 1
check "the webhook row of the same report was sent" test "$(db "select state from notifications where id=4")" = sent
check "the bisection's result is intact" test "$(db "select state || ' ' || result || ' ' || culprit from bisections where id=1")" = "done culprit $culprit"
K bisect show 1 | grep -q "^culprit:    $culprit " && ok "bisect show still names the culprit" || fail "bisect show"
K notify list | grep -q "^3	mail	dev@example.org, list@example.org	pending	1	.*	next try in " &&
	ok "notify list shows the pending row, its error and next try" || fail "list: $(K notify list)"
K notify flush >/dev/null 2>&1
check "flush leaves a row that is not due yet" test "$(db "select attempts from notifications where id=3")" = 1

# ---- the server back on the same port: flush --force delivers it
start_peer smtp "$T/smtp" --user klabuser --password 's3cret pw' --port "$smtp_port"
smtp_pid=$peer_pid
check "the sink is back on the same port" test "$peer_port" = "$smtp_port"
K notify flush --force >"$T/flush.out" 2>&1; rc=$?
check "flush --force exits 0" test "$rc" -eq 0
grep -q "^notification 3: mail to dev@example.org, list@example.org sent$" "$T/flush.out" &&
	ok "flush delivers the pending mail" || fail "flush: $(cat "$T/flush.out")"
check "the row is sent after 2 attempts, error cleared" test "$(db "select state || ' ' || attempts || ' ' || coalesce(last_error, '-') from notifications where id=3")" = "sent 2 -"
check "the second message arrived" test -f "$T/smtp/msg-2.eml"
check "the retried mail has the subject of the first" test "$(grep -c '^Subject:' "$T/smtp/msg-2.eml")" -eq 1

# ---- klab notify test
K notify test >"$T/test.out" 2>&1; rc=$?
check "notify test succeeds with both peers up" test "$rc" -eq 0
check "notify test: one line per target" test "$(wc -l < "$T/test.out")" -eq 2
grep -q "^Subject: \[klab\] test message from " "$T/smtp/msg-3.eml" && ok "the test mail arrived" || fail "test mail"
check "the test webhook arrived" "$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["event"] == "test"' "$T/http/post-3.json"
stop_smtp
K notify test --mail >"$T/test2.out" 2>"$T/test2.err"; rc=$?
check "notify test --mail fails with the server down" test "$rc" -ne 0
check "... in one line" test "$(wc -l < "$T/test2.err")" -eq 1 -a ! -s "$T/test2.out"
grep -q "^klab: error: notify test: mail to dev@example.org, list@example.org not sent: " "$T/test2.err" &&
	ok "... naming the target and the error" || fail "test2: $(cat "$T/test2.err")"

# a webhook that answers 500 is a failure with the status
start_peer http "$T/http500" --status 500
bad_http_pid=$peer_pid
sed -i "s|^notify_webhook = .*|notify_webhook = http://user:pw@127.0.0.1:$peer_port/hook|" "$T/lab/klab.conf"
K notify test --webhook 2>"$T/test3.err"; rc=$?
check "notify test --webhook fails on HTTP 500" test "$rc" -ne 0
grep -q "webhook http://127.0.0.1:$peer_port/... not sent: HTTP status 500" "$T/test3.err" &&
	ok "... with the status, and without the URL's user info or path" || fail "test3: $(cat "$T/test3.err")"

# STARTTLS required but the server offers none: refused, not sent in clear
start_peer smtp "$T/smtp" --user klabuser --password 's3cret pw' --port "$smtp_port"
smtp_pid=$peer_pid
echo "smtp_tls = required" >> "$T/lab/klab.conf"
K notify test --mail 2>"$T/tls.err"; rc=$?
check "smtp_tls = required refuses a server without STARTTLS" test "$rc" -ne 0
check "... and nothing was delivered in clear" test ! -f "$T/smtp/msg-4.eml"
sed -i '$d' "$T/lab/klab.conf"

# backoff: a row at its last attempt becomes failed
stop_smtp
db "update notifications set state='pending', attempts=7, next_try_at=0 where id=1"
K notify flush 2>"$T/flush2.err"; rc=$?
check "flush exits 1 when a delivery failed" test "$rc" -eq 1
check "after 8 attempts the row is failed" test "$(db "select state || ' ' || attempts from notifications where id=1")" = "failed 8"
grep -q "given up after 8 attempts" "$T/flush2.err" && ok "the warning says it gave up" || fail "flush2: $(cat "$T/flush2.err")"

# an unfinished bisection has nothing to report
K bisect start --no-run --repo "$T/repo" --good main~11 --bad main -- "$T/test.sh" >/dev/null
K notify send 2 2>"$T/send3.err"; rc=$?
check "notify send of an unfinished bisection fails" test "$rc" -eq 1
grep -q "has not finished" "$T/send3.err" && ok "... saying so" || fail "send3: $(cat "$T/send3.err")"

# valgrind once on a whole send (composition, SMTP and HTTP through libcurl)
start_peer smtp "$T/smtp" --user klabuser --password 's3cret pw' --port "$smtp_port"
smtp_pid=$peer_pid
sed -i "s|^notify_webhook = .*|notify_webhook = http://127.0.0.1:$http_port/hooks/klab|" "$T/lab/klab.conf"
K notify list | grep -q "^2	webhook	http://127.0.0.1:$http_port/...	sent	1	-$" &&
	ok "notify list names a webhook by scheme and host only" || fail "list: $(K notify list)"
# A job bisection's report from the database: reference, confirm steps,
# their runs, samples and vmstat deltas written as klab writes them (no
# guest here; t-perf-bisect runs the real thing).
g=$(git -C "$T/repo" rev-parse main~11) p=$(git -C "$T/repo" rev-parse main~6) b=$(git -C "$T/repo" rev-parse main)
db "insert into bisections (id, repo_id, kind, state, result, bad, job_path, job_text, kpi, culprit, message, created_at)
    values (9, 1, 'job', 'done', 'culprit', '$b', 'jobs/will-it-scale-malloc1.yaml',
            cast(readfile('$KLAB_SRCDIR/jobs/will-it-scale-malloc1.yaml') as text), 'will-it-scale.per_process_ops',
            '$culprit', 'culprit $short confirmed: parent like good, culprit like bad', 1);
    insert into bisection_goods values (9, '$g');"
step=0
add_step() { # PHASE HASH VERDICT VALUES... (one run per value; thp_fault_alloc grows with the culprit)
	phase=$1 hash=$2 verdict=$3
	shift 3
	step=$((step + 1))
	db "insert into steps (id, bisection_id, seq, hash, phase, status, verdict, started_at)
	    values ($((900 + step)), 9, $step, '$hash', '$phase', 'done', '$verdict', 1)"
	for v in "$@"; do
		thp=12; [ "$v" -lt 1000 ] && thp=2750
		db "insert into boots (step_id, outcome, started_at) values ($((900 + step)), 'ok', 1);
		    insert into runs (boot_id, step_id, status, started_at) values (last_insert_rowid(), $((900 + step)), 'ok', 1);
		    insert into samples (run_id, metric, seq, value) values (last_insert_rowid(), 'will-it-scale.per_process_ops', 0, $v);
		    insert into monitor_stats (run_id, source, name, phase, value)
		      select max(id), 'vmstat', 'thp_fault_alloc', 'delta', $thp from runs;"
	done
}
add_step reference "$g" good 9300 9150 9480
add_step reference "$b" bad 262 271 255
add_step bisect "$culprit" bad 260 266
add_step confirm "$p" good 9260 9390 9010
add_step confirm "$culprit" bad 265 259 270
K notify send 9 >/dev/null 2>&1
check "job report: a mail and a document" test -f "$T/smtp/msg-4.eml" -a -f "$T/http/post-4.json"
grep -q "^Subject: .*=?UTF-8?B?" "$T/smtp/msg-4.eml" && ok "job report: encoded subject" || fail "job subject"
if "$PY" - "$T/smtp/msg-4.eml" "$T/http/post-4.json" "$short" "$p" >"$T/jobcheck.out" 2>&1 <<'EOF'
import email, email.policy, json, re, sys
msg = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=email.policy.default)
short, parent = sys.argv[3], sys.argv[4]
subject = str(msg["Subject"])
assert subject.startswith("[klab] %s " % short), subject
assert subject.endswith(": will-it-scale.per_process_ops -97.2% regression"), subject
body = msg.get_content().replace("\r\n", "\n")
assert re.search(r"(?m)^  good +[0-9a-f]{12} +9300 ±2% +\+0\.0% +3$", body), body
assert re.search(r"(?m)^  parent +" + parent[:12] + r" +9260 ±2% +-0\.4% +3$", body), body
assert re.search(r"(?m)^  culprit +" + short + r" +265 ±2% +-97\.2% +3$", body), body
assert re.search(r"(?m)^  bad +[0-9a-f]{12} +262 ±3% +-97\.2% +3$", body), body
assert re.search(r"(?m)^ +12 +2750 +\+22816\.7% +vmstat\.thp_fault_alloc$", body), body
assert "testcase:   will-it-scale malloc1 (jobs/will-it-scale-malloc1.yaml)" in body, body
assert "klab run --job jobs/will-it-scale-malloc1.yaml --repo " in body, body
doc = json.load(open(sys.argv[2]))
k = doc["kpi"]
assert doc["kind"] == "job" and doc["outcome"] == "culprit" and doc["bisection"] == 9, doc
assert k["name"] == "will-it-scale.per_process_ops" and k["direction"] == 1, k
assert k["suite"] == "will-it-scale" and k["testcase"] == "malloc1", k
assert k["culprit"]["median"] == 265 and k["culprit"]["runs"] == 3, k["culprit"]
assert k["parent"]["hash"] == parent and k["good"]["median"] == 9300, k
assert abs(k["bad"]["change_percent"] - (262 - 9300) / 9300 * 100) < 1e-6, k["bad"]
print("job ok")
EOF
then ok "job report: KPI at good/parent/culprit/bad, vmstat counter, reproduce, JSON kpi"; else fail "job: $(cat "$T/jobcheck.out")"; fi

if ! command -v valgrind >/dev/null 2>&1; then
	fail "valgrind is not installed (./bootstrap deps installs it)"
elif ldd "$KLAB" 2>/dev/null | grep -q libasan; then
	ok "valgrind skipped: this klab is built with ASan, which checks the same"
	K notify send 1 >/dev/null 2>&1 || fail "send under ASan"
else
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		"$KLAB" --state "$T/lab" notify send 1 >"$T/vg.out" 2>"$T/vg.err"; rc=$?
	check "valgrind: klab notify send has no memory errors or leaks" test "$rc" -eq 0
	[ "$rc" -eq 0 ] || cat "$T/vg.err"
	check "valgrind: both targets sent" test "$(grep -c ' sent$' "$T/vg.out")" -eq 2
fi

finish
