#!/bin/sh
# Hostile and careless command-line input, without guests: control
# characters in every value klab stores are refused (one line, nothing
# stored); commit subjects with ESC/CR are printed cleaned; fragments
# resolve as documented and a file that is not a fragment is never
# quoted; config options and ids are strict; --kpi follows the job
# file's rule; argv with a newline is printed as bash $'...' that runs
# back to the same argv; credentials in URLs are never printed; every
# command's --help is on stdout with exit 0 and names each option its
# option table accepts; klab compare refuses a bad --set, --rev or
# --runset in one line.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
dbsum() { sqlite3 "$lab/klab.db" .dump | sha256sum; }
job="$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml"
make_linear_repo "$T/repo" 8 5
write_test_script "$T/test.sh"
nl=$(printf 'a\nb')
cr=$(printf 'a\rb')
esc=$(printf 'a\033[31mb')
url="file://$T/repo"
LF=$(printf '\n_'); LF=${LF%_}

# refused DESC ARGS...: exit != 0, exactly one line on stderr, that line
# free of raw control characters and naming control characters
refused() {
	desc=$1; shift
	err=$(k "$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ "$rc" -ne 0 ] && [ "$lines" -eq 1 ] && ! printf '%s' "$err" | LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" &&
	   printf '%s' "$err" | grep -q "control characters"; then
		ok "$desc"
	else
		fail "$desc (rc $rc, $lines lines): $err"
	fi
}

# ---- 1. control characters in stored values ------------------------------------
before=$(dbsum)
refused "track add --remote with a newline" track add t1 --repo "$T/repo" --remote "file:///x$nl" --branch main --job "$job"
refused "track add --remote with a CR" track add t1 --repo "$T/repo" --remote "$url$cr" --branch main --job "$job"
refused "track add --repo with ESC" track add t1 --repo "$T/repo$esc" --remote "$url" --branch main --job "$job"
refused "track add --branch with a newline" track add t1 --repo "$T/repo" --remote "$url" --branch "ma${nl}in" --job "$job"
refused "track add --job with a newline" track add t1 --repo "$T/repo" --remote "$url" --branch main --job "$job$nl"
refused "track add --fragment with a newline" track add t1 --repo "$T/repo" --remote "$url" --branch main --job "$job" --fragment "x$nl"
refused "bisect start --repo with a newline" bisect start --repo "$T/repo$nl" --good main~7 --bad main -- "$T/test.sh"
refused "bisect start --paths with a newline" bisect start --repo "$T/repo" --good main~7 --bad main --paths "value$nl" -- "$T/test.sh"
refused "bisect start --job with ESC" bisect start --repo "$T/repo" --good main~7 --bad main --job "$job$esc"
refused "bisect start --kpi with a newline" bisect start --repo "$T/repo" --good main~7 --bad main --job "$job" --kpi "stress-ng.x$nl"
refused "submit bisect --repo with a newline" submit bisect --repo "$T/repo$nl" --good main~7 --bad main -- "$T/test.sh"
refused "run --uri with a newline" run --job "$job" --kernel /nonexistent --uri "qemu:///system${nl}x"
refused "run --host with ESC" run --job "$job" --kernel /nonexistent --host "h$esc"
refused "run --kernel with a CR" run --job "$job" --kernel "/x$cr"
refused "host add URI with a newline" host add h1 "qemu:///system${nl}x"
refused "build --repo with a newline" build --repo "$T/repo$nl" --rev main
refused "build --config-option with a newline" build --repo "$T/repo" --rev main --config-option "CONFIG_A=y${nl}CONFIG_B=y"
refused "tree import --dest with a newline" tree import --tarball /nonexistent --dest "$T/d$nl"
check "nothing stored by any refused value" test "$(dbsum)" = "$before"
check "no track, host or bisection rows" test "$(q 'SELECT (SELECT count(*) FROM tracks) + (SELECT count(*) FROM hosts) + (SELECT count(*) FROM bisections)')" -eq 0
# --notify addresses were already strict; they stay so
err=$(k track add t1 --repo "$T/repo" --remote "$url" --branch main --job "$job" --notify "a@b.org$nl" 2>&1); rc=$?
check "track add --notify with a newline refused" test "$rc" -eq 2 -a "$(printf '%s\n' "$err" | wc -l)" -eq 1
# an error echoing argv never prints its CR/LF raw
err=$(k bisect start --repo "$T/repo" --good "x${cr}y" --bad main -- "$T/test.sh" 2>&1)
case $err in *"xa?by"*) ok "error echoes a CR in argv as '?'";; *) fail "CR echo: $err";; esac
check "error: no raw CR" sh -c '! printf "%s" "$1" | grep -q "$(printf "\r")"' sh "$err"

# ---- 2. commit subjects with ESC, OSC and CR from 'bisect start' ----------------
git init -q "$T/evil"
for i in 1 2 3 4 5 6; do
	echo "$i" > "$T/evil/value"
	[ "$i" -ge 4 ] && echo yes > "$T/evil/broken"
	git -C "$T/evil" add -A
	git -C "$T/evil" commit -q -m "$(printf 'c%s \033[31mred\033]0;pwned\007 \rover' "$i")"
done
out=$(k bisect start --repo "$T/evil" --good HEAD~5 --bad HEAD -- "$T/test.sh" 2>&1); rc=$?
check "bisect over hostile subjects finds its culprit" test "$rc" -eq 0
check "no ESC reaches the terminal" sh -c '! printf "%s" "$1" | grep -q "$(printf "\033")"' sh "$out"
check "no BEL (OSC end) reaches the terminal" sh -c '! printf "%s" "$1" | grep -q "$(printf "\007")"' sh "$out"
check "no CR reaches the terminal" sh -c '! printf "%s" "$1" | grep -q "$(printf "\r")"' sh "$out"
case $out in *"c4 ?[31mred?]0;pwned? ?over"*) ok "subject printed with '?' for each control character";; *) fail "subject: $out";; esac

# ---- 3. fragment paths ------------------------------------------------------------
mkdir -p "$T/jobs" "$T/elsewhere"
echo "root:SECRET-CONTENT-1234" > "$T/secret.txt"
{ grep -v '^kpi:' "$job"; echo "kconfig: [ ../secret.txt ]"; } > "$T/jobs/j.yaml"
err=$(cd "$T/elsewhere" && k bisect start --repo "$T/repo" --good main~7 --bad main --job ../jobs/j.yaml --no-run 2>&1); rc=$?
check "job kconfig: a file that is not a fragment is refused" test "$rc" -ne 0
case $err in *"$T/secret.txt:1: expected"*) ok "job kconfig resolves relative to the job file, error by line number";; *) fail "job kconfig: $err";; esac
case $err in *SECRET*) fail "the error quotes the file: $err";; *) ok "the error quotes nothing of the file";; esac
err=$(cd "$T/elsewhere" && k build --repo "$T/repo" --rev main --fragment ../secret.txt 2>&1); rc=$?
case $err in *"$T/secret.txt:1: expected"*) ok "--fragment resolves relative to the current directory";; *) fail "--fragment: $err";; esac
case $err in *SECRET*) fail "--fragment error quotes the file: $err";; *) ok "--fragment error quotes nothing of the file";; esac
printf 'CONFIG_A=y\n\n# a comment\nCONFIG_B="x;y"\nCONFIG_C=y;rm -rf /\n' > "$T/elsewhere/f.config"
err=$(cd "$T/elsewhere" && k build --repo "$T/repo" --rev main --fragment ./f.config 2>&1)
case $err in *"f.config:5: expected"*) ok "a value with a ';' is a bad line, named by number";; *) fail "f.config: $err";; esac
case $err in *"rm -rf"*) fail "quoted: $err";; *) ok "the bad line is not quoted";; esac

# ---- 4. --config-option ------------------------------------------------------------
for bad in 'CONFIG_X=y;rm' 'CONFIG_X=y m' 'CONFIG_x=y' 'CONFIG_=y' 'CONFIG_X=' 'CONFIG_X="open' 'CONFIG_X=0xg1' 'KASAN=y' 'CONFIG_X=yes'; do
	err=$(k build --repo "$T/repo" --rev main --config-option "$bad" 2>&1); rc=$?
	case $rc:$err in [12]:*"--config-option '$bad': expected CONFIG_NAME=VALUE"*) ok "--config-option '$bad' refused";;
	*) fail "--config-option '$bad' (rc $rc): $err";; esac
done
# the good forms pass the check and fail later (this repository is no kernel tree)
for good in 'CONFIG_X=y' 'CONFIG_X=m' 'CONFIG_X=n' 'CONFIG_NR_CPUS=64' 'CONFIG_X=-1' 'CONFIG_X=0x1f' 'CONFIG_CMDLINE="a b;c"' '# CONFIG_X is not set'; do
	err=$(k build --repo "$T/repo" --rev main --no-default-fragments --config-option "$good" 2>&1)
	case $err in *"--config-option"*) fail "--config-option '$good' refused: $err";; *) ok "--config-option '$good' accepted";; esac
done

# ---- 5. ids are digits only -------------------------------------------------------------
for id in " 1" "+1" "1 " "0x1" "-1" "1e0"; do
	err=$(k bisect resume "$id" 2>&1); rc=$?
	case $err in *"is not a bisection id"*) ok "bisect resume '$id' refused";; *) fail "bisect resume '$id' (rc $rc): $err";; esac
	err=$(k cancel "$id" 2>&1); rc=$?
	check "cancel '$id' is a usage error" test "$rc" -eq 2
done

# ---- 6. --kpi follows the job file's rule --------------------------------------------
for kpi in 'stress-ng.x;rm' 'stress-ng.ops per sec' 'stress-ng.' 'will-it-scale.per_process_ops'; do
	err=$(k bisect start --repo "$T/repo" --good main~7 --bad main --job "$job" --kpi "$kpi" --no-run 2>&1); rc=$?
	{ grep -v '^kpi:' "$job"; printf 'kpi: "%s"\n' "$kpi"; } > "$T/kpi.yaml"
	jerr=$(k bisect start --repo "$T/repo" --good main~7 --bad main --job "$T/kpi.yaml" --no-run 2>&1)
	# both name what a KPI must be, with the same words
	want=$(printf '%s' "$jerr" | sed -n 's/.*kpi: \(expected \)\{0,1\}\(a [^,]*\).*/\2/p')
	if [ "$rc" -eq 2 ] && [ -n "$want" ] && printf '%s' "$err" | grep -qF -- "$want"; then ok "--kpi '$kpi' refused as the job file refuses it"
	else fail "--kpi '$kpi' (rc $rc): $err / job file: $jerr"; fi
done
out=$(k bisect start --repo "$T/repo" --good main~7 --bad main --job "$job" --kpi stress-ng.mmapaddr.bogo_ops --no-run 2>&1); rc=$?
check "a good --kpi is accepted" test "$rc" -eq 0

# ---- 7. argv with control characters: $'...' that bash reads back ---------------------
out=$(k bisect start --repo "$T/repo" --good main~7 --bad main --no-run -- "$T/test.sh" "nl${LF}x" "it's" "tab$(printf '\t')x" 2>&1)
id=$(printf '%s\n' "$out" | sed -n 's/^bisection \([0-9]*\):.*/\1/p' | head -1)
line=$(k bisect log "$id" | sed -n 's/^# test command: //p')
case $line in *"\$'nl\\nx'"*) ok "a newline in argv is printed in \$'...' form";; *) fail "argv echo: $line";; esac
check "the printed test command is one line" test "$(k bisect log "$id" | grep -c '^# test command: ')" -eq 1
if command -v bash >/dev/null; then
	back=$(bash -c 'eval "set -- $1"; printf "%s\n" "$#"; printf "[%s]" "$@"' sh "$line")
	want=$(printf '4\n[%s][nl\nx][it'"'"'s][tab\tx]' "$T/test.sh")
	check "bash reads the printed command back to the same argv" test "$back" = "$want"
else
	ok "bash not installed: \$'...' read-back not checked"
fi
show=$(k bisect show "$id")
case $show in *"\$'nl\\nx'"*) ok "bisect show prints the same quoting";; *) fail "show: $show";; esac

# ---- 8. credentials in URLs are not printed -----------------------------------------------
k track add creds --repo "$T/repo" --remote "https://alice:hunter2@git.example.invalid/linux.git?private_token=TOK3N" \
	--branch main --job "$job" --notify "https://bob:pa55@hooks.example.invalid/services/T0/B0/S3CRET?token=TOK3N" > "$T/add.out" 2>&1
check "track add with credentialed URLs exits 0" test $? -eq 0
k track show creds > "$T/show.out" 2>&1
k track list > "$T/list.out" 2>&1
k report --output "$T/report" > /dev/null 2>&1
for f in "$T/add.out" "$T/show.out" "$T/list.out"; do
	if grep -q 'hunter2\|pa55\|TOK3N\|S3CRET\|alice\|bob' "$f"; then fail "$(basename "$f") prints a secret: $(cat "$f")"
	else ok "$(basename "$f") prints no secret"; fi
done
grep -q 'https://git.example.invalid/linux.git?\.\.\.' "$T/show.out" && ok "track show: remote without user info and query" ||
	fail "remote: $(cat "$T/show.out")"
grep -q 'https://hooks.example.invalid/\.\.\.' "$T/show.out" && ok "track show: webhook by scheme and host" ||
	fail "webhook: $(cat "$T/show.out")"
check "the report was written" test -d "$T/report"
if grep -rq 'hunter2\|pa55\|TOK3N\|S3CRET' "$T/report"; then fail "the report holds a secret"; else ok "the report holds no secret"; fi
err=$(k track fetch creds 2>&1)
case $err in *hunter2*|*TOK3N*) fail "a failed fetch prints the secret: $err";; *"git.example.invalid"*) ok "a failed fetch names the remote without its secrets";; *) fail "fetch: $err";; esac
check "the recorded fetch error holds no secret" test "$(q "SELECT count(*) FROM track_fetches WHERE message LIKE '%hunter2%' OR message LIKE '%TOK3N%'")" -eq 0
check "the stored remote is the full URL (fetch needs it)" test "$(q "SELECT remote FROM tracks WHERE name = 'creds'")" = "https://alice:hunter2@git.example.invalid/linux.git?private_token=TOK3N"

# ---- 9. --help: stdout, exit 0, every option of the option tables ---------------------------
for c in init bisect "bisect start" "bisect resume" "bisect list" "bisect show" "bisect log" build tree "tree import" gc \
	run submit "submit bisect" "submit run" "submit reproduce" worker status log cancel retry report notify "notify test" "notify list" \
	"notify flush" "notify send" track "track add" "track list" "track show" "track remove" "track run" "track fetch" \
	host "host add" "host list" "host remove" job "job import" reproduce compare; do
	for h in --help -h; do
		# shellcheck disable=SC2086
		out=$(k $c $h 2>"$T/help.err"); rc=$?
		if [ "$rc" -eq 0 ] && [ ! -s "$T/help.err" ] && printf '%s' "$out" | grep -q '^usage:'; then ok "klab $c $h: usage on stdout, exit 0"
		else fail "klab $c $h (rc $rc): $(cat "$T/help.err")"; fi
	done
done
for c in log cancel retry; do
	out=$(k $c 2>"$T/usage.err"); rc=$?
	if [ "$rc" -eq 2 ] && [ -z "$out" ] && grep -q "^usage: klab $c" "$T/usage.err"; then ok "klab $c without an id: usage on stderr, exit 2"
	else fail "klab $c without an id (rc $rc): $out $(cat "$T/usage.err")"; fi
done
# Each option table in the sources (util/parse-options.h rows), with the
# command whose --help must list it.  A table in a function this list does
# not name fails the test.
cmd_of() {
	case $1 in
	main) echo "";; start_parse) echo "bisect start";; cmd_resume) echo "bisect resume";; cmd_build) echo build;;
	cmd_gc) echo gc;; host_add) echo "host add";; host_check) echo "host check";; cmd_init) echo init;; cmd_test) echo "notify test";;
	cmd_flush) echo "notify flush";; cmd_worker) echo worker;; cmd_report) echo report;; run_parse) echo run;;
	add_parse) echo "track add";; tree_import_cmd) echo "tree import";; job_import) echo "job import";;
	reproduce_parse) echo reproduce;; compare_parse) echo compare;; cmd_status) echo status;; cmd_joblog) echo log;;
	cmd_help) echo help;;
	*) echo "?";;
	esac
}
awk '/^[a-z].*\(/ && !/;$/ { fn = $0; sub(/\(.*/, "", fn); n = split(fn, a, " "); fn = a[n]; sub(/^\*/, "", fn) }
     /struct opt [a-z_]+\[\] = \{/ { if (!/\};/) inopt = 1; next }
     inopt && /OPT_END\(\)/ { inopt = 0; next }
     inopt && /OPT_RECIPE_ROWS/ { print fn, "config"; print fn, "fragment"; print fn, "config-option";
                                  print fn, "no-default-fragments"; print fn, "allow-config-drift"; next }
     inopt && /OPT_GUEST_ROWS/ { print fn, "uri"; print fn, "host"; print fn, "accel"; print fn, "no-pin";
                                 print fn, "cmdline"; print fn, "boot-timeout"; print fn, "run-timeout";
                                 print fn, "quiet"; next }
     inopt && /OPT_GUEST_URI/ { print fn, "uri"; next }
     inopt && /OPT_GUEST_HOST/ { print fn, "host"; next }
     inopt && /OPT_GUEST_QUIET/ { print fn, "quiet"; next }
     inopt && match($0, /OPT_[A-Z_]+\(([0-9]|\x27.\x27), "[a-z0-9-]+"/) {
             row = substr($0, RSTART, RLENGTH); sub(/.*, "/, "", row); sub(/"$/, "", row); print fn, row }' \
	"$KLAB_SRCDIR"/orchestrator/cmd/*.c > "$T/options"
check "option tables found in the sources" test "$(wc -l < "$T/options")" -gt 50
missing=0
while read -r fn opt; do
	c=$(cmd_of "$fn")
	if [ "$c" = "?" ]; then fail "option table in $fn(): add its command to cmd_of"; missing=1; continue; fi
	[ "$opt" = queue-job ] && continue	# the worker's, hidden
	# shellcheck disable=SC2086
	if ! k $c --help | grep -q -- "--$opt\([^a-z-]\|$\)"; then fail "klab $c --help does not list --$opt"; missing=1; fi
done < "$T/options"
check "every long option is in its command's --help" test "$missing" -eq 0

# ---- 10. klab compare: --set, --rev and --runset ------------------------------------------
refused "compare: a control character in a --set" compare --job "$job" --repo "$T/repo" --rev main \
	--set "thp.enabled=never" --set "thp.enabled=$esc"
refused "compare: a control character in a --rev" compare --job "$job" --repo "$T/repo" --rev main --rev "$esc"
# one_line_usage DESC WANT ARGS...: exit 2, one line on stderr that says WANT
one_line_usage() {
	desc=$1 want=$2; shift 2
	err=$(k "$@" 2>&1 >/dev/null); rc=$?
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && printf '%s' "$err" | grep -qF -- "$want"; then
		ok "$desc"
	else
		fail "$desc (rc $rc): $err"
	fi
}
sum=$(dbsum)
one_line_usage "compare: an unknown --set key names the known ones" "--set nosuch=1: unknown key 'nosuch' (known keys:" \
	compare --job "$job" --repo "$T/repo" --rev main --set thp.enabled=never --set nosuch=1
one_line_usage "compare: a bad --set value says what is expected" "--set thp.enabled=sometimes: thp.enabled: expected one of" \
	compare --job "$job" --repo "$T/repo" --rev main --set thp.enabled=never --set thp.enabled=sometimes
one_line_usage "compare: --set without one --rev" "one --rev and two or more --set" \
	compare --job "$job" --repo "$T/repo" --rev main --rev main~1 --set thp.enabled=never --set thp.enabled=always
one_line_usage "compare: one --runset" "two or more run sets" compare --runset 1
one_line_usage "compare: a --runset that is not an id" "--runset takes a run set id" compare --runset 1x --runset 2
err=$(k compare --runset 98 --runset 99 2>&1); rc=$?
case $rc:$err in 1:*"no run set 98"*) ok "compare: a run set that does not exist";; *) fail "compare --runset 98 (rc $rc): $err";; esac
check "compare's refusals stored nothing" test "$(dbsum)" = "$sum"

# ---- the messages of issue 42 ---------------------------------------------------
# one_error DESC EXPECTED-START ARGS...: exit != 0, one stderr line that
# starts so, no raw control character or U+202E in it
one_error() {
	desc=$1 want=$2; shift 2
	err=$("$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	case $err in
	"$want"*)
		if [ "$rc" -ne 0 ] && [ "$lines" -eq 1 ] && ! printf '%s' "$err" | LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]\|\342\200\256')"; then
			ok "$desc"
		else
			fail "$desc (rc $rc, $lines lines): $err"
		fi ;;
	*) fail "$desc (rc $rc): $err" ;;
	esac
}
rlo=$(printf '\342\200\256')
one_error "--state with a newline refused" "klab: error: --state" "$KLAB" --state "$T/x${LF}y" init
check "--state with a newline made no directory" test ! -e "$T/x${LF}y"
one_error "U+202E in a revision never echoed raw" "klab: error: unknown revision" \
	k bisect start --repo "$T/repo" --good "main${rlo}~1" --bad main -- "$T/test.sh"
one_error "status with a huge number says it is out of range" "klab: error: job id 99999999999999999999 is out of range" \
	k status 99999999999999999999
one_error "notify send names the missing bisection" "klab: error: no bisection 999" k notify send 999
one_error "bisect start --frob: a klab: line" "klab: error: unknown option '--frob'" k bisect start --frob
one_error "bisect delete of a huge number says it is out of range" "klab: error: bisection id 99999999999999999999 is out of range" \
	k bisect delete 99999999999999999999

finish
