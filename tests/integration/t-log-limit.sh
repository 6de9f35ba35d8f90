#!/bin/sh
# A test command that prints 20 MB a step: each step's log keeps its head
# and tail under log_limit (default 8M), a line saying what was cut, and
# the bisection's verdicts are those of the uncut test (issue 42: 50 MB a
# step used to leave all of it in logs/).
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

lab="$T/lab"
k init >/dev/null
make_linear_repo "$T/repo" 8 5
culprit=$(git -C "$T/repo" log --format=%H --grep='^commit 5$')
cat > "$T/loud.sh" <<'SH'
#!/bin/sh
echo "first line of $(cat value)"
i=0
while [ $i -lt 20 ]; do
	head -c 1000000 /dev/zero | tr '\0' 'x'
	i=$((i + 1))
done
echo
echo "last line of $(cat value)"
test ! -e broken
SH
chmod +x "$T/loud.sh"
out=$(k bisect start --repo "$T/repo" --good main~7 --bad main -- "$T/loud.sh" 2>&1); rc=$?
check "the bisection succeeds" test "$rc" -eq 0
case $out in *"$culprit is the first bad commit"*) ok "names the culprit" ;; *) fail "culprit: $out" ;; esac
case $out in *"was over log_limit (8388608 bytes): its head and tail kept"*) ok "a step says its log was cut" ;;
*) fail "no line about the cut: $out" ;; esac
n=0 big=0 marked=0 ends=0
for f in "$lab"/logs/bisect-1/*.log; do
	n=$((n + 1))
	[ "$(wc -c < "$f")" -le 8388608 ] || big=$((big + 1))
	grep -q "^\[klab: [0-9]* bytes of this log cut here: it keeps its first 4194304 and last [0-9]* bytes (log_limit = 8388608 in klab.conf)\]$" "$f" &&
		marked=$((marked + 1))
	head -n 1 "$f" | grep -q "^first line of " && tail -n 1 "$f" | grep -q "^last line of " && ends=$((ends + 1))
done
check "every step has a log" test "$n" -ge 3
check "no log over 8 MiB" test "$big" -eq 0
check "every log says what was cut" test "$marked" -eq "$n"
check "every log keeps its first and last lines" test "$ends" -eq "$n"
check "logs/ holds at most 8 MiB a step" test "$(du -sk "$lab/logs" | cut -f1)" -le $((n * 8192 + 64))

# a smaller log_limit is taken from klab.conf; 0 keeps everything
echo 'log_limit = 64K' >> "$lab/klab.conf"
k bisect start --repo "$T/repo" --good main~7 --bad main -- "$T/loud.sh" >/dev/null 2>&1
check "log_limit = 64K: every log at most 64 KiB" \
	test -z "$(find "$lab/logs/bisect-2" -name '*.log' -size +64k)"
echo 'log_limit = 0' >> "$lab/klab.conf"
k bisect start --repo "$T/repo" --good main~7 --bad main -- "$T/loud.sh" >/dev/null 2>&1
check "log_limit = 0: the logs are whole" \
	test "$(find "$lab/logs/bisect-3" -name '*.log' -size -19000k | wc -l)" -eq 0
echo 'log_limit = 1K' >> "$lab/klab.conf"
err=$(k bisect list 2>&1); rc=$?
case $rc:$err in 1:"klab: error: "*"log_limit must be a size from 64K to 1G"*) ok "log_limit = 1K refused, one line" ;;
*) fail "log_limit = 1K: rc $rc: $err" ;; esac
finish
