#!/bin/sh
# Every command's documented synopsis is what works (no guests, fast):
# 'klab help --synopsis' prints each form from the option tables, and
# klab(1)'s SYNOPSIS is exactly its --man form (KLAB_REGENERATE=1
# rewrites it); every --help fits a screen (40 lines); and each form is
# run as the synopsis writes it, options after operands where it shows
# them so (klab job import FILE --out-dir D, klab reproduce REPORT
# --no-measure --job-out F, ...), and reaches the command itself (its own
# checks or its work), never an option-parsing error; and no command
# calls a function another command's file defines.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_tools git sqlite3

lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null
man="$KLAB_SRCDIR/docs/klab.1"
job="$KLAB_SRCDIR/jobs/stress-ng-mmapaddr.yaml"
report="$KLAB_SRCDIR/tests/data/lkp/stress-ng-vm-splice.txt"
lkpjob="$KLAB_SRCDIR/tests/data/lkp/lkp-will-it-scale.yaml"
make_linear_repo "$T/repo" 8 5
write_test_script "$T/test.sh"
mkdir "$T/jobs"

# ---- 1. the synopsis comes from the tables; the man page holds the same -------
"$KLAB" help --synopsis > "$T/syn.txt"; rc=$?
check "klab help --synopsis exits 0" test "$rc" -eq 0
check "every command has a synopsis line" test "$(wc -l < "$T/syn.txt")" -ge 30
"$KLAB" help --synopsis --man > "$T/syn.man"; rc=$?
check "klab help --synopsis --man exits 0" test "$rc" -eq 0
# the SYNOPSIS section: the lines between its .SH and the next .SH
sed -n '/^\.SH SYNOPSIS$/,/^\.SH /p' "$man" | sed '1d;$d' > "$T/man.block"
if [ -n "${KLAB_REGENERATE:-}" ] && ! cmp -s "$T/syn.man" "$T/man.block"; then
	awk -v new="$T/syn.man" '
		/^\.SH / && insyn { insyn = 0 }
		!insyn { print }
		/^\.SH SYNOPSIS$/ { insyn = 1; while ((getline l < new) > 0) print l }' "$man" > "$T/klab.1" &&
		cat "$T/klab.1" > "$man" && ok "KLAB_REGENERATE: docs/klab.1's SYNOPSIS rewritten" ||
		fail "KLAB_REGENERATE: could not rewrite $man"
	sed -n '/^\.SH SYNOPSIS$/,/^\.SH /p' "$man" | sed '1d;$d' > "$T/man.block"
fi
if cmp -s "$T/syn.man" "$T/man.block"; then
	ok "docs/klab.1's SYNOPSIS is 'klab help --synopsis --man' (no drift)"
else
	fail "docs/klab.1's SYNOPSIS differs from the tables (KLAB_REGENERATE=1 rewrites it): $(diff "$T/man.block" "$T/syn.man" | head -20)"
fi

# ---- 2. every --help fits a screen ------------------------------------------------
# the command path of a synopsis line: its words up to the first option,
# operand or bracket ("klab bisect start --repo ..." -> "bisect start")
path_of() {
	printf '%s\n' "$1" | awk '{ p = ""; for (i = 2; i <= NF; i++) { if ($i !~ /^[a-z]+$/) break; p = p (p ? " " : "") $i } print p }'
}
while IFS= read -r line; do path_of "$line"; done < "$T/syn.txt" | sort -u > "$T/paths"
long=0
while IFS= read -r p; do
	# shellcheck disable=SC2086
	n=$("$KLAB" $p --help | wc -l)
	if [ "$n" -gt 40 ]; then fail "klab $p --help is $n lines (at most 40; details go to klab(1))"; long=1; fi
done < "$T/paths"
# and the commands with subcommands
for p in bisect track notify host job tree submit; do
	n=$("$KLAB" $p --help | wc -l)
	if [ "$n" -gt 40 ]; then fail "klab $p --help is $n lines"; long=1; fi
done
check "every command's --help is at most 40 lines" test "$long" -eq 0

# ---- 3. each form, as the synopsis writes it -----------------------------------
# A mistake of the option parser (or of an operand count) says one of these.
parse_errors="unknown option|ambiguous option|needs a value|takes no value|only one --|\(got more\)|too\)|takes no arguments|is not a [a-z]* subcommand|needs a subcommand|no command given"

# form KEY WANT-RC PATTERN -- ARGS...: runs klab ARGS in $T; passes when the
# exit status is WANT-RC ("any": whatever the command decided), the output
# matches PATTERN (the command's own words) and no parse error was said
form() {
	key=$1 want=$2 pat=$3; shift 4
	out=$(cd "$T" && "$KLAB" "$@" 2>&1); rc=$?
	if printf '%s' "$out" | grep -Eq "$parse_errors"; then
		fail "$key: an option-parsing error: $(printf '%s' "$out" | grep -E "$parse_errors" | head -1)"
	elif [ "$want" != any ] && [ "$rc" -ne "$want" ]; then
		fail "$key: exit $rc, not $want: $(printf '%s' "$out" | tail -3)"
	elif [ -n "$pat" ] && ! printf '%s' "$out" | grep -Eq -- "$pat"; then
		fail "$key: output does not say '$pat': $(printf '%s' "$out" | tail -3)"
	else
		ok "$key: reaches the command (exit $rc)"
	fi
	echo "$key" >> "$T/exercised"
}
: > "$T/exercised"
S="--state $lab"

form "#1" 0 '^\[' -- $S status --json
form "init#1" 0 "created lab in" -- init --state "$T/lab2"
form "bisect start#1" 0 "created; run it" -- $S bisect start --repo "$T/repo" --good main~7 --bad main --first-parent \
	--paths value --timeout 60 --build --no-default-fragments --config-option CONFIG_X=y --slots 1 --no-run -- "$T/test.sh"
form "bisect start#2" 0 "created; run it" -- $S bisect start --repo "$T/repo" --good main~7 --bad main --job "$job" \
	--kpi stress-ng.mmapaddr.bogo_ops --max-runs 5 --no-revert-check --slots 1 --no-default-fragments --no-run
form "bisect resume#1" 1 "is for job bisections" -- $S bisect resume 1 --max-runs 6
form "bisect list#1" 0 "^1	" -- $S bisect list
form "bisect show#1" 0 "^bisection: +1 " -- $S bisect show 1
form "bisect log#1" 0 "^git bisect start" -- $S bisect log 1
form "build#1" 1 "cannot open repository" -- $S build --repo "$T/nowhere" --rev main --no-default-fragments \
	--config-option CONFIG_X=y -j 2 --quiet
form "tree import#1" 1 "nonexistent" -- $S tree import --tarball "$T/nonexistent.tar.xz" --dest "$T/tree"
form "gc#1" 0 "would remove" -- $S gc --keep-last 5 --max-size 1G --verify --dry-run
form "run#1" 1 "not an x86 bzImage" -- $S run --job "$job" --kernel /etc/hostname --repeat 1 \
	--kpi stress-ng.mmapaddr.bogo_ops --no-pin --quiet --no-default-fragments
form "submit bisect#1" 0 "^job [0-9]+ queued: bisection" -- $S submit bisect --repo "$T/repo" --good main~7 --bad main \
	-- "$T/test.sh"
form "submit run#1" 1 "not an x86 bzImage" -- $S submit run --job "$job" --kernel /etc/hostname
form "submit reproduce#1" 0 "^job [0-9]+ queued: reproduce" -- $S submit reproduce "$report" --no-measure \
	--job-out "$T/jobs/queued.yaml"
form "worker#1" 0 "stopped" -- $S worker --once --slots 1 --lease 3
form "status#1" 0 '"id": 1,' -- $S status 1 --json
form "log#1" 0 "attempt 1" -- $S log 1 -f
form "cancel#1" 1 "no queued job 99" -- $S cancel 99
form "retry#1" 1 "no queued job 99" -- $S retry 99
form "report#1" 0 "index.html" -- $S report -o "$T/report" --since 2020-01-01
form "notify test#1" 1 "notify_mail_to is not set" -- $S notify test --mail
form "notify list#1" 0 "" -- $S notify list
form "notify flush#1" 0 "" -- $S notify flush --force
form "notify send#1" 1 "no notification target" -- $S notify send 1
form "track add#1" 0 "^track t1: branch main" -- $S track add t1 --repo "$T/repo" --remote "file://$T/repo" \
	--branch main --job "$job" --threshold 5 --notify lkp@example.org --no-default-fragments
form "track list#1" 0 "^t1	" -- $S track list
form "track show#1" 0 "^track: +t1" -- $S track show t1
form "track fetch#1" 0 "" -- $S track fetch t1
form "track run#1" 1 "no track named 'nosuch'" -- $S track run nosuch
form "track remove#1" 0 "" -- $S track remove t1
# a host is connected to when added: libvirtd may be down here, which
# the command says itself
form "host add#1" any "host h1|libvirt|connect" -- $S host add h1 qemu:///system --cpus 0 --max-guests 1 --accel tcg
form "host list#1" 0 "" -- $S host list
form "host check#1" any '"name": "kvm"|no host named' -- $S host check h1 --json
form "host remove#1" any "host h1 removed|no host named" -- $S host remove h1
form "job import#1" 0 "jobs? written" -- $S job import "$lkpjob" --out-dir "$T/jobs" --accel tcg
form "compare#1" 1 "cannot open repository" -- $S compare --job "$job" --repo "$T/nowhere" --rev main~1 --rev main \
	--runs 1 --kpi stress-ng.mmapaddr.bogo_ops --json --html "$T/c.html" --no-pin --quiet --no-default-fragments
form "compare#2" 1 "cannot open repository" -- $S compare --job "$job" --repo "$T/nowhere" --rev main \
	--set thp.enabled=never --set thp.enabled=always --runs 1
form "compare#3" 1 "no run set" -- $S compare --runset 98 --runset 99 --kpi stress-ng.mmapaddr.bogo_ops --json
form "reproduce#1" 0 "wrote $T/jobs/r.yaml" -- $S reproduce "$report" --no-measure --job-out "$T/jobs/r.yaml" \
	--accel tcg --runs 1 --quiet --profile-runs 2
form "help#1" 0 "^usage: klab bisect start" -- help bisect start
form "help#2" 0 "^\.B klab bisect start" -- help --synopsis --man
check "reproduce wrote the job where --job-out, after the report, said" test -s "$T/jobs/r.yaml"
check "job import wrote into --out-dir, after the file" test -n "$(ls "$T"/jobs/*malloc1*.yaml 2>/dev/null)"
# the operands after '--' are the test command's, even when they look like klab's
form "bisect start -- CMD --repo" 0 "created; run it" -- $S bisect start --repo "$T/repo" --good main~7 --bad main \
	--no-run -- "$T/test.sh" --repo --no-run
check "the test command kept its own --repo and --no-run" test "$(sqlite3 "$lab/klab.db" \
	"SELECT group_concat(arg, ' ') FROM (SELECT arg FROM bisection_argv WHERE idx > 0 AND bisection_id = \
	 (SELECT max(id) FROM bisections) ORDER BY idx)")" = "--repo --no-run"
form "bisect delete#1" 0 "^bisection [0-9]+ deleted" -- $S bisect delete 1

# every form of 'klab help --synopsis' was run above
: > "$T/seen"
while IFS= read -r line; do
	p=$(path_of "$line")
	n=$(($(grep -c "^$p#" < "$T/seen") + 1))
	echo "$p#$n" >> "$T/seen"
	grep -qx "$p#$n" "$T/exercised" || echo "$line"
done < "$T/syn.txt" > "$T/unexercised"
if [ -s "$T/unexercised" ]; then
	fail "synopsis forms no invocation here runs: $(cat "$T/unexercised")"
else
	ok "every synopsis form was run as written"
fi

# ---- 4. CLI error lines: klab:, ranges, control characters ---------------------
err=$("$KLAB" $S bisect start --frob 2>&1); rc=$?
check "an unknown option: exit 2" test "$rc" -eq 2
check "an unknown option: one 'klab: error:' line naming the command's help" \
	test "$err" = "klab: error: unknown option '--frob' (see 'klab bisect start --help')"
err=$("$KLAB" $S status 99999999999999999999 2>&1); rc=$?
case $rc:$err in 2:"klab: error: job id 99999999999999999999 is out of range"*) ok "status: a number out of range says so";;
*) fail "status 9999...: rc $rc: $err";; esac
err=$("$KLAB" $S bisect show 99999999999999999999 2>&1); rc=$?
case $rc:$err in 2:*"out of range"*) ok "bisect show: a number out of range says so";; *) fail "bisect show: $err";; esac
err=$("$KLAB" $S run --job "$job" --kernel /x --repeat 99999999999999999999 2>&1); rc=$?
case $rc:$err in 2:*"--repeat takes a number from 1 to 1000: 99999999999999999999 is out of range"*)
	ok "an option's number out of range says so";; *) fail "run --repeat: $err";; esac
rlo=$(printf 'x\342\200\256y')
err=$("$KLAB" $S bisect start --repo "$T/repo" --good "$rlo" --bad main -- "$T/test.sh" 2>&1)
case $err in *"x?y"*) ok "a bidi override in an echoed revision is shown as '?'";; *) fail "bidi echo: $err";; esac
if printf '%s' "$err" | grep -q "$(printf '\342\200\256')"; then fail "a raw U+202E reached the terminal"; else ok "no raw U+202E"; fi
err=$("$KLAB" $S bisect start --repo "$T/repo$rlo" --good main~7 --bad main -- "$T/test.sh" 2>&1); rc=$?
case $rc:$err in 2:*"control characters"*) ok "a bidi override in a stored path is refused";; *) fail "--repo bidi: $err";; esac
nlstate=$(printf '%s/x\ny' "$T")
err=$("$KLAB" --state "$nlstate" init 2>&1); rc=$?
check "--state with a newline: exit 2" test "$rc" -eq 2
check "--state with a newline: nothing created" test ! -e "$T/x
y"
case $err in "klab: error: --state '$T/x?y': control characters"*) ok "--state with a newline: one line, escaped";;
*) fail "--state newline: $err";; esac
err=$(KLAB_STATE="$nlstate" "$KLAB" status 2>&1); rc=$?
check "KLAB_STATE with a newline refused too" test "$rc" -eq 2
err=$("$KLAB" $S notify send 999 2>&1); rc=$?
case $err in *"no bisection 999"*) ok "notify send: a missing bisection is named before the config";; *) fail "notify send 999: $err";; esac

# ---- 5. commands are thin: no cmd-*.c calls a function another defines ----------
shared=0
for f in "$KLAB_SRCDIR"/orchestrator/cmd/cmd-*.c; do
	for fn in $(sed -n 's/^\(int\|void\|char \*\|const char \*\) *\([a-z_0-9]*\)(.*/\2/p' "$f"); do
		for other in "$KLAB_SRCDIR"/orchestrator/cmd/cmd-*.c; do
			[ "$other" = "$f" ] && continue
			if grep -qw "$fn" "$other"; then
				fail "$(basename "$other") uses $fn, defined in $(basename "$f"): shared code goes in a module"
				shared=1
			fi
		done
	done
done
check "no command calls another command's functions" test "$shared" -eq 0
check "the check saw the commands' entry points" sh -c "grep -q '^int cmd_bisect(' '$KLAB_SRCDIR/orchestrator/cmd/cmd-bisect.c'"

finish
