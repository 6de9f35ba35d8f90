#!/bin/sh
# klab reproduce and klab job import, without guests: the sample LKP
# reports and lkp-tests job files of tests/data/lkp give the commits,
# test and KPI, jobs klab's own parser accepts (klab run --help-free
# check: 'klab bisect start' is never run), honest "not done yet" lines;
# bad input gives one line on stderr and a non-zero exit.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"

data="$KLAB_SRCDIR/tests/data/lkp"
cd "$T" || exit 1

# refused DESC ARGS...: exit != 0, exactly one line on stderr, no raw controls
refused() {
	desc=$1 want=$2; shift 2
	err=$("$KLAB" "$@" 2>&1 >/dev/null); rc=$?
	lines=$(printf '%s\n' "$err" | wc -l)
	if [ "$rc" -ne 0 ] && [ "$lines" -eq 1 ] && ! printf '%s' "$err" | LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" &&
	   printf '%s' "$err" | grep -qF -- "$want"; then
		ok "$desc"
	else
		fail "$desc (rc $rc, $lines lines): $err"
	fi
}

# the job parser klab runs with: 'klab run' parses --job before it looks
# at the kernel, so a missing kernel after a parsed job proves the job fine
job_accepted() {
	err=$("$KLAB" --state "$T/lab" run --job "$1" --kernel "$T/no-such-bzImage" 2>&1)
	case $err in
	*"no-such-bzImage"*) return 0;;
	*) echo "# $1: $err"; return 1;;
	esac
}
"$KLAB" init --state "$T/lab" >/dev/null
printf 'suite: will-it-scale\ntestcase: no_such_case1\n' > bad-job.yaml
if job_accepted bad-job.yaml >/dev/null; then fail "job_accepted takes a job klab refuses"; else ok "job_accepted refuses a bad job"; fi

# ---- reproduce ----------------------------------------------------------------
out=$("$KLAB" reproduce --accel tcg "$data/stress-ng-vm-splice.txt" 2>&1); rc=$?
check "reproduce stress-ng: exit 0" test "$rc" -eq 0
for want in "commit:   a308c71bf1e6e19cc2e4ced31853ee0fc7cb439a (\"mm/gup: Remove enfornced COW mechanism\")" \
	"parent:   1a0cf26323c80e2f" "suite:    stress-ng" "testcase: vm-splice" \
	"KPI:      stress-ng.vm-splice.ops_per_sec -95.6% in the report (3783006 -> 165530)" \
	"→ runtime: 5s (TCG guests run about 10x slower" \
	"tbox_group        lkp-csl-2sp5" "not mapped: the LKP test machine" "ucode             0x5002f01" \
	"verdict:  regression: klab bisects the KPI's fall (direction: 1)" \
	"wrote vm-splice-reproduce.yaml" "not measured: measuring needs --repo R" \
	"klab bisect start --repo REPO --good 1a0cf26323c80e2f --bad a308c71bf1e6e19cc2e4ced31853ee0fc7cb439a --job vm-splice-reproduce.yaml" \
	"klab run --job vm-splice-reproduce.yaml --repo REPO --rev 1a0cf26323c80e2f"; do
	case $out in *"$want"*) ok "reproduce stress-ng prints: $want";; *) fail "reproduce stress-ng lacks '$want': $out";; esac
done
check "reproduce stress-ng: klab's job parser accepts the job" job_accepted vm-splice-reproduce.yaml
check "reproduce stress-ng: runtime scaled in the job" grep -q '^runtime: 5s$' vm-splice-reproduce.yaml
"$KLAB" reproduce --bisect 1a0cf26323c80e2f "$data/stress-ng-vm-splice.txt" >"$T/bis.out" 2>&1; rc=$?
check "reproduce --bisect without --repo: a usage error" test "$rc" -eq 2
check "reproduce --bisect without --repo: says why" grep -q "^klab: error: --bisect needs --repo" "$T/bis.out"

out=$("$KLAB" reproduce --accel kvm --job-out "$T/m.yaml" - < "$data/will-it-scale-malloc1.mbox" 2>&1); rc=$?
check "reproduce a mail from stdin: exit 0" test "$rc" -eq 0
for want in "commit:   f35b5d7d676e59e401690b678cd3cfec5e785c23" "parent:   c7f7475ba4b5f8b5" \
	"KPI:      will-it-scale.per_process_ops -95.5% in the report (293049 -> 13142)" "testcase: malloc1" \
	"thp.enabled: always" "--repo REPO"; do
	case $out in *"$want"*) ok "reproduce mail prints: $want";; *) fail "reproduce mail lacks '$want': $out";; esac
done
check "reproduce mail: klab's job parser accepts the job" job_accepted "$T/m.yaml"

out=$("$KLAB" reproduce --accel tcg --job-out "$T/q.yaml" "$data/will-it-scale-malloc1-quoted-crlf.txt" 2>&1)
case $out in *"(293049 -> 13142)"*) ok "reproduce a quoted CRLF reply";; *) fail "quoted CRLF reply: $out";; esac
out=$("$KLAB" reproduce --accel tcg --job-out "$T/v.yaml" "$data/vm-scalability-anon-w-seq.txt" 2>&1)
case $out in *"vm-scalability.throughput -23.1% in the report"*"size "*"8T"*"not mapped: LKP's total size"*) ok "reproduce the subject form";;
	*) fail "subject form: $out";; esac
check "reproduce vm-scalability: klab's job parser accepts the job" job_accepted "$T/v.yaml"

# --repo: the report's short ids become the repository's full ones; a
# commit the repository lacks, or a parent that is not an ancestor, is an error
make_linear_repo "$T/linux" 4 3
parent=$(git -C "$T/linux" rev-parse main~1) commit=$(git -C "$T/linux" rev-parse main)
short() { printf '%.12s' "$1"; }
report() { # FILE PARENT COMMIT
	printf '[mm] %s: will-it-scale.per_process_ops -95.5%% regression\n\ncommit: %s ("mm: planted")\nparent: %s\n' \
		"$(short "$3")" "$3" "$(short "$2")" > "$1"
	printf 'mode/nr_task/test/testcase:\n  process/100%%/malloc1/will-it-scale\n' >> "$1"
}
report demo.txt "$parent" "$commit"
out=$("$KLAB" reproduce --accel tcg --repo "$T/linux" --no-measure --job-out "$T/d.yaml" demo.txt 2>&1); rc=$?
case $rc:$out in
0:*"parent:   $parent"*"not measured (--no-measure)"*"klab bisect start --repo $T/linux --good $parent --bad $commit --job $T/d.yaml"*) ok "reproduce --repo prints full ids";;
*) fail "reproduce --repo (rc $rc): $out";;
esac
report gone.txt "$parent" 0123456789abcdef0123456789abcdef01234567
refused "reproduce --repo: a commit not in the repository" "is not a commit of '$T/linux'" reproduce --repo "$T/linux" --job-out "$T/g.yaml" gone.txt
report backwards.txt "$commit" "$parent"
refused "reproduce --repo: a parent that is not an ancestor" "is not an ancestor of its commit" reproduce --repo "$T/linux" --job-out "$T/g.yaml" backwards.txt
# --bisect GOOD is a revision of the repository, checked before anything
# is written, built, measured or stored
refused "reproduce --bisect: a GOOD that does not exist" "--bisect: 'nosuchrev' is not a revision of '$T/linux'" \
	--state "$T/lab" reproduce --accel tcg --repo "$T/linux" --bisect nosuchrev --job-out "$T/b.yaml" demo.txt
check "reproduce --bisect with a bad GOOD: no job written" test ! -e "$T/b.yaml"
check "reproduce --bisect with a bad GOOD: nothing stored in the lab" \
	test "$(sqlite3 "$T/lab/klab.db" "SELECT (SELECT count(*) FROM run_sets) + (SELECT count(*) FROM builds) + (SELECT count(*) FROM bisections) + (SELECT count(*) FROM queue_jobs)")" -eq 0
refused "reproduce --no-revert-check without --bisect" "--no-revert-check is a bisection's" \
	reproduce --accel tcg --repo "$T/linux" --no-revert-check --job-out "$T/b.yaml" demo.txt
refused "reproduce --profile-runs out of range" "--profile-runs takes a number from 0 to 10" \
	reproduce --accel tcg --profile-runs 11 demo.txt
out=$("$KLAB" reproduce --accel tcg --repo "$T/linux" --no-measure --profile-runs 0 --job-out "$T/p.yaml" demo.txt 2>&1); rc=$?
check "reproduce --profile-runs 0: exit 0" test "$rc" -eq 0
check "reproduce --profile-runs 0: the job says so" grep -q '^profile_runs: 0$' "$T/p.yaml"
check "reproduce --profile-runs 0: klab's job parser accepts the job" job_accepted "$T/p.yaml"

# an escape sequence in the report never reaches the terminal raw
printf 'commit: 0123456789abcdef ("evil \033[31m subject")\nparent: 1123456789abcdef\n[x] 0123456789: stress-ng.brk.ops_per_sec -5.0%% regression\ntestcase: stress-ng\n' > evil.txt
out=$("$KLAB" reproduce --accel tcg --job-out "$T/e.yaml" evil.txt 2>&1)
if printf '%s' "$out" | LC_ALL=C grep -q "$(printf '\033')"; then fail "an ESC from the report printed raw"; else ok "the report's ESC printed cleaned"; fi

refused "reproduce: garbage" "no commit" reproduce --accel tcg "$data/garbage.txt"
refused "reproduce: no parent and no --repo" "no parent commit: expected the comparison table's column heads or a line 'parent: <sha>' (with --repo R, the commit's first parent is taken)" \
	reproduce --accel tcg "$data/missing-parent.txt"
refused "reproduce: a report naming no test of a suite klab runs" "LKP netperf parameters name no test klab could run (expected 'test: NAME')" \
	reproduce --accel tcg --job-out "$T/n.yaml" "$data/unknown-suite.txt"
refused "reproduce: no such file" "nonexistent" reproduce "$T/nonexistent"
refused "reproduce: no report" "needs a report" reproduce
refused "reproduce: bad --accel" "--accel: expected auto, kvm or tcg" reproduce --accel fast "$data/garbage.txt"
refused "reproduce: a newline in --job-out" "control characters" reproduce --job-out "a$(printf '\nb')" "$data/garbage.txt"
check "no job written for a bad report" test ! -e "$T/n.yaml"

# ---- job import --------------------------------------------------------------------
mkdir -p jobs
out=$("$KLAB" job import --accel tcg --out-dir jobs "$data/lkp-will-it-scale.yaml" 2>"$T/import.err"); rc=$?
check "job import will-it-scale: exit 0" test "$rc" -eq 0
check "job import: skipped combinations are not errors on stderr" test ! -s "$T/import.err"
case $out in *"8 jobs written, 0 combinations skipped"*) ok "job import: all 8 combinations run";; *) fail "job import: $out";; esac
for f in will-it-scale-malloc1-process-100pct will-it-scale-brk1-thread-100pct will-it-scale-malloc1-process-50pct \
	will-it-scale-brk1-thread-50pct; do
	check "job import wrote $f.yaml and klab accepts it" job_accepted "jobs/$f.yaml"
done
out=$("$KLAB" job import --accel kvm --out-dir jobs "$data/lkp-vm-scalability.yaml" 2>/dev/null)
case $out in *"6 jobs written, 0 combinations skipped"*) ok "job import vm-scalability: the documents are variants";; *) fail "vm-scalability: $out";; esac
check "job import vm-scalability: KVM keeps the runtime" grep -q '^runtime: 300s$' jobs/vm-scalability-anon-w-seq-300s-always.yaml
out=$("$KLAB" job import --accel tcg --out-dir jobs "$data/lkp-stress-ng.yaml" 2>&1)
case $out in *"wrote jobs/stress-ng-vm-splice-100pct-60s.yaml"*"disk "*"1HDD"*"not mapped: klab's guests have no disk"*) ok "job import stress-ng";; *) fail "stress-ng import: $out";; esac
check "job import stress-ng: klab accepts the job" job_accepted jobs/stress-ng-mmapaddr-100pct-60s.yaml

printf 'suite: will-it-scale\nwill-it-scale:\n  test: [no_such_case1, no_such_case2]\n' > none.yaml
printf 'suite: will-it-scale\nwill-it-scale:\n  test: [malloc1, no_such_case1]\n' > some.yaml
out=$("$KLAB" job import --accel tcg --out-dir jobs some.yaml 2>&1)
case $out in *"1 job written, 1 combination skipped"*"klab cannot run it: "*"got 'no_such_case1'"*|*"klab cannot run it: "*"got 'no_such_case1'"*"1 job written, 1 combination skipped"*) ok "job import says why a testcase is skipped";; *) fail "testcase skip: $out";; esac
refused "job import: no combination klab runs" "none of its 2 combinations is a job klab can run" job import --out-dir jobs none.yaml
printf 'suite: aim7\ntest: [a]\n' > aim7.yaml
refused "job import: an LKP suite klab does not run, with why" "klab cannot run LKP's aim7: AIM7 (reaim) is not packaged in Debian" job import aim7.yaml
printf 'suite: no-such-suite\ntest: [a]\n' > nosuite.yaml
refused "job import: a suite nobody knows" "unknown suite 'no-such-suite' (klab runs:" job import nosuite.yaml
printf 'suite: x\nt: [a, b\n' > bad.yaml
refused "job import: YAML syntax error" "YAML syntax error" job import bad.yaml
refused "job import: --out-dir not a directory" "not a directory" job import --out-dir "$T/nodir" bad.yaml
refused "job import: unknown subcommand" "is not a job subcommand" job export x
refused "job import: no file" "needs an LKP job file" job import

# ---- what LKP posts ------------------------------------------------------------------
# the headline names the KPI, an improvement is bisected as such, the
# "In addition to that" results are listed and --result picks one
out=$("$KLAB" reproduce --accel tcg --job-out "$T/s.yaml" "$data/schedpolicy-improvement.mbox" 2>&1); rc=$?
check "reproduce an improvement: exit 0" test "$rc" -eq 0
for want in "KPI:      stress-ng.schedpolicy.ops_per_sec +50.3% in the report (7089967 -> 10657401)" \
	"verdict:  improvement: klab bisects the KPI's rise (direction: -1), the change the report names" \
	"results:  3 in the report (--result N picks one):" \
	" 2 stress-ng stress-ng.schedmix.ops_per_sec +194.5% improvement: cpufreq_governor=performance nr_threads=100% test=schedmix testtime=60s" \
	"change            +50.3% improvement  → direction: -1"; do
	case $out in *"$want"*) ok "reproduce an improvement prints: $want";; *) fail "improvement lacks '$want': $out";; esac
done
check "reproduce an improvement: the job bisects the rise" grep -q '^direction: -1$' "$T/s.yaml"
check "reproduce an improvement: klab's job parser accepts the job" job_accepted "$T/s.yaml"
out=$("$KLAB" reproduce --accel tcg --result 3 --job-out "$T/r3.yaml" "$data/schedpolicy-improvement.mbox" 2>&1); rc=$?
case $rc:$out in 0:*"*3 will-it-scale will-it-scale.per_thread_ops -4.1% regression"*"mode     "*"(not given)"*"→ mode: thread (the KPI will-it-scale.per_thread_ops is a thread-mode metric)"*) ok "reproduce --result 3: the third result, its mode from its KPI";;
	*) fail "reproduce --result 3 (rc $rc): $out";; esac
check "reproduce --result 3: mode thread in the job" grep -q '^mode: thread$' "$T/r3.yaml"
refused "reproduce --result beyond the report's" "the report has 3 results: --result takes 1 (the headline's) to 3" \
	reproduce --accel tcg --result 4 --job-out "$T/r4.yaml" "$data/schedpolicy-improvement.mbox"
refused "reproduce --result 0" "--result takes the number of one of the report's results" reproduce --result 0 "$data/garbage.txt"

# a patch under review, quoted in a reply
out=$("$KLAB" reproduce --accel tcg --job-out "$T/k.yaml" "$data/kbuild-patch-quoted.txt" 2>&1)
for want in "patch:    the commit is the kernel test robot's build of a patch under review, not a commit of its base tree" \
	"          base: https://git.kernel.org/cgit/linux/kernel/git/tj/cgroup.git for-next" \
	"          patch: https://lore.kernel.org/linux-mm/20220425020926.1264611-1-longman@redhat.com" \
	"          to build it: git fetch https://github.com/intel-lab-lkp/linux Waiman-Long/cgroup-cpuset-Remove-redundant-cpu-node-masks-setup-in-cpuset_init_smp/20220425-101126"; do
	case $out in *"$want"*) ok "reproduce a patch report prints: $want";; *) fail "patch report lacks '$want': $out";; esac
done

# a suite klab cannot run: one line, with why
refused "job import: a suite klab cannot run, before its template" "klab cannot run LKP's aim7: AIM7 (reaim) is not packaged in Debian" \
	job import --out-dir jobs "$data/lkp-aim7-templated.yaml"

# no parent in the report: --repo's first parent, said so
printf '[mm] %s: will-it-scale.per_process_ops -95.5%% regression\n\ncommit: %s ("mm: planted")\n' "$(short "$commit")" "$commit" > noparent.txt
printf 'mode/nr_task/test/testcase:\n  process/100%%/malloc1/will-it-scale\n' >> noparent.txt
out=$("$KLAB" reproduce --accel tcg --repo "$T/linux" --no-measure --job-out "$T/np.yaml" noparent.txt 2>&1); rc=$?
case $rc:$out in 0:*"parent:   $parent (the commit's first parent in --repo: the report names none)"*"--good $parent --bad $commit"*) ok "reproduce: no parent in the report, --repo's first parent";;
	*) fail "no parent with --repo (rc $rc): $out";; esac

# --json: the same facts and table as one document, for both commands
"$KLAB" reproduce --accel tcg --json --job-out "$T/js.yaml" "$data/schedpolicy-improvement.mbox" > js.out 2> js.err; rc=$?
check "reproduce --json: exit 0, nothing on stderr" test "$rc" -eq 0 -a ! -s js.err
check "reproduce --json: one JSON document with the report, results and mapping" "${PYTHON3:-python3}" -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["report"]
assert r["commit"] == "436f3eed5c69c1048a5754df6e3dbb291e5cccbd" and r["kpi"] == "stress-ng.schedpolicy.ops_per_sec"
assert r["direction"] == -1 and r["verdict"] == "improvement" and len(r["results"]) == 3
assert d["job"]["testcase"] == "schedpolicy" and d["job"]["path"] == sys.argv[2]
rows = {m["parameter"]: m for m in d["job"]["mapping"]}
assert rows["nr_threads"]["key"] == "nr_task" and rows["compiler"]["key"] is None and rows["compiler"]["why"]
' js.out "$T/js.yaml"
check "reproduce --json: the job is written" job_accepted "$T/js.yaml"
refused "reproduce --json takes no --bisect" "--json prints what was read and the job written, and measures nothing" \
	reproduce --json --repo "$T/linux" --bisect "$parent" demo.txt
mkdir -p jj
"$KLAB" job import --accel tcg --json --out-dir jj "$data/lkp-will-it-scale.yaml" > ji.out 2> ji.err; rc=$?
check "job import --json: exit 0, nothing on stderr" test "$rc" -eq 0 -a ! -s ji.err
check "job import --json: jobs with their tables, skipped combinations with why" "${PYTHON3:-python3}" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["suite"] == "will-it-scale" and d["combinations"] == 8
assert len(d["jobs"]) == 8 and len(d["skipped"]) == 0
assert all(j["mapping"] for j in d["jobs"])
' ji.out
"$KLAB" job import --accel tcg --json --out-dir jj some.yaml > js2.out 2>/dev/null
check "job import --json: a skipped combination with why" "${PYTHON3:-python3}" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["jobs"]) == 1 and len(d["skipped"]) == 1
assert "got '"'"'no_such_case1'"'"'" in d["skipped"][0]["why"], d["skipped"][0]
' js2.out
"$KLAB" job import --json --out-dir jj "$data/lkp-aim7-templated.yaml" > ja.out 2> ja.err; rc=$?
check "job import --json of a suite klab cannot run: exit 1, one line on stderr" test "$rc" -eq 1 -a "$(grep -c . ja.err)" -eq 1

# ---- help ----------------------------------------------------------------------------
for cmd in "job" "job import" "reproduce"; do
	# shellcheck disable=SC2086
	out=$("$KLAB" $cmd --help 2>/dev/null); rc=$?
	case $rc:$out in 0:usage:*) ok "klab $cmd --help on stdout, exit 0";; *) fail "klab $cmd --help: rc $rc";; esac
done
case $("$KLAB" --help) in *"reproduce"*"an LKP regression report"*) ok "reproduce in the command list";; *) fail "command list";; esac

finish
