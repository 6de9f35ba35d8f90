#!/bin/sh
# klab compare and klab reproduce in real guests (TCG here, KVM where the
# host has it), on the demo history (tests/demo/make-kernel-history.sh)
# and its kernels from the shared store (tests/demo-kernels.sh): nothing
# is built.  compare: the demo's good end under two job variants (THP
# always and never, usemem's anon-w-seq), 3 runs each, interleaved, each
# variant's guests seeing its setting, the table and the JSON with the KPI
# row and the THP setting in the guests' vmstat (huge page faults on one side
# only).  reproduce: an LKP-format report naming
# the demo's planted commit and its parent says "reproduced" with the
# change measured, then (--bisect from two commits below the planted one,
# without the revert check and the profiled boots) bisects to the planted
# commit.
# Fails (never skips) when libvirt does not answer.
. "${KLAB_SRCDIR:-$(dirname "$0")/../..}/tests/lib.sh"
require_libvirt
demo_lab

demo_history "$T/linux"
parent=$(git -C "$T/linux" rev-parse "$planted^")

# ---- compare: one kernel, two job variants ------------------------------------
kpi=vm-scalability.throughput
sed -e 's/^runtime:.*/runtime: 3s/' "$KLAB_SRCDIR/jobs/usemem-anon-w-seq.yaml" > "$T/usemem.yaml"
k compare --job "$T/usemem.yaml" --repo "$T/linux" --rev demo-good \
	--set thp.enabled=always --set thp.enabled=never --runs 3 > "$T/compare.out" 2>&1
rc=$?
check "compare exits 0" test "$rc" -eq 0 || tail -40 "$T/compare.out"
ids=$(sed -n 's/^again without booting: klab compare --runset \([0-9]*\) --runset \([0-9]*\)$/\1 \2/p' "$T/compare.out")
# shellcheck disable=SC2086
set -- $ids
a=${1:-0} b=${2:-0}
check "compare prints the run sets to show again" test "$a" -gt 0 -a "$b" -gt 0
check "compare: 3 ok runs of each variant stored" \
	test "$(q "SELECT count(*) FROM runs r JOIN boots bo ON bo.id = r.boot_id WHERE bo.run_set_id = $a AND r.status = 'ok'"):$(q "SELECT count(*) FROM runs r JOIN boots bo ON bo.id = r.boot_id WHERE bo.run_set_id = $b AND r.status = 'ok'")" = 3:3
check "compare: the variants' boots interleaved" \
	test "$(q "SELECT group_concat(run_set_id, ',') FROM (SELECT run_set_id FROM boots WHERE run_set_id IN ($a, $b) ORDER BY id)")" = "$a,$b,$a,$b,$a,$b"
check "compare: each variant's guests saw its THP setting" \
	sh -c "[ \"\$(sqlite3 '$lab/klab.db' \"SELECT count(*) FROM boots WHERE run_set_id = $a AND guest_env LIKE '%thp_enabled=always%'\")\" -eq 3 ] &&
	       [ \"\$(sqlite3 '$lab/klab.db' \"SELECT count(*) FROM boots WHERE run_set_id = $b AND guest_env LIKE '%thp_enabled=never%'\")\" -eq 3 ]"
check "compare: a variant is a job of its own (job hashes differ)" \
	test "$(q "SELECT count(DISTINCT job_hash) FROM run_sets WHERE id IN ($a, $b)")" -eq 2
check "compare: both sides are the good end's commit" \
	test "$(q "SELECT count(*) FROM run_sets WHERE id IN ($a, $b) AND commit_hash = '$(git -C "$T/linux" rev-parse demo-good)'")" -eq 2
check "compare: the KPI heading" grep -q "^KPI $kpi (higher is better), accelerator " "$T/compare.out"
check "compare: the KPI line of B against A" grep -q "^B against A: $kpi " "$T/compare.out"
check "compare: LKP's table with the KPI row first" \
	sh -c "sed -n '/%stddev  *%change/{n;p;q}' '$T/compare.out' | grep -q ' $kpi\$'"

k compare --runset "$a" --runset "$b" --json > "$T/compare.json" 2>"$T/compare.err"
rc=$?
check "compare --runset --json exits 0, nothing on stderr" test "$rc" -eq 0 -a ! -s "$T/compare.err"
# Under TCG the throughput of THP always and never is within the noise
# (+5.9 % in one run, -0.8 % in a failed CI run, 2026-12-01); what the setting
# does for certain is in the guest's counters: huge page faults on one side
# only, and a fault per 4 KiB page on the other.
check "compare --json: the KPI row, and THP always against never in the guests' vmstat" python3 - "$T/compare.json" "$kpi" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
cmp = doc["comparisons"][0]
kpi = cmp["kpi"]
print("# always %.0f, never %.0f KB/s (%+.1f%%)" % (kpi["mean_a"], kpi["mean_b"], kpi["change_percent"]))
assert doc["kpi"] == sys.argv[2] and kpi["name"] == sys.argv[2], doc["kpi"]
assert [s["label"] for s in doc["sets"]] == ["run set %d" % s["run_set"] for s in doc["sets"]]
assert len(doc["sets"][0]["kpi_values"]) == 3 and len(doc["sets"][1]["kpi_values"]) == 3
assert kpi["mean_a"] > 0 and kpi["mean_b"] > 0, kpi
rows = {r["name"]: r for r in cmp["changed"]}
thp, pgf = rows["vmstat.thp_fault_alloc"], rows["vmstat.pgfault"]
print("# thp_fault_alloc %.0f -> %.0f, pgfault %.0f -> %.0f" % (thp["mean_a"], thp["mean_b"], pgf["mean_a"], pgf["mean_b"]))
assert thp["mean_a"] > 0 and thp["mean_b"] == 0, thp
assert pgf["mean_b"] > 10 * pgf["mean_a"], pgf
EOF
# the stored form again as text: nothing boots
boots=$(q "SELECT count(*) FROM boots")
k compare --runset "$a" --runset "$b" --html "$T/compare.html" > "$T/stored.out" 2>&1
rc=$?
check "compare --runset: the same comparison, no guest booted" \
	sh -c "[ $rc -eq 0 ] && grep -q '^B against A: $kpi ' '$T/stored.out' && [ \"\$(sqlite3 '$lab/klab.db' 'SELECT count(*) FROM boots')\" -eq $boots ]"

check "compare --html: the page with LKP's table" \
	sh -c "grep -q '<pre class=\"compare\">KPI $kpi' '$T/compare.html' && grep -q '%stddev' '$T/compare.html'"

# ---- reproduce: an LKP report on the demo's planted commit --------------------
{
	printf '[mm] %.12s: will-it-scale.per_process_ops -95.5%% regression\n\n' "$planted"
	printf 'commit: %s ("mm: align larger anonymous mappings on THP boundaries")\n' "$planted"
	printf 'parent: %.16s\n\n' "$parent"
	printf 'kconfig/mode/nr_task/test/testcase/testtime:\n'
	printf '  x86_64-rhel-8.3/process/100%%/malloc1/will-it-scale/30s\n'
} > "$T/report.txt"
# --bisect from two commits below the planted one: one bisect step (the
# whole demo range took three, CI time; t-perf-bisect bisects it)
k reproduce --accel tcg --repo "$T/linux" --runs 3 --job-out "$T/reproduce.yaml" \
	--bisect "$planted~2" --no-revert-check --profile-runs 0 "$T/report.txt" > "$T/reproduce.out" 2>&1
rc=$?
check "reproduce --bisect exits 0" test "$rc" -eq 0 || tail -40 "$T/reproduce.out"
check "reproduce wrote the job with THP always" grep -q '^  enabled: always$' "$T/reproduce.yaml"
check "reproduce says reproduced, with the report's figure" \
	grep -Eq '^reproduced: -9[0-9]\.[0-9]% \(report said -95\.5%\)$' "$T/reproduce.out"
check "reproduce stored parent and commit as two finished run sets" \
	test "$(q "SELECT count(*) FROM run_sets WHERE commit_hash IN ('$planted', '$parent') AND state = 'done'")" -eq 2
check "reproduce shows the comparison (what changed: thp_fault_alloc)" grep -q "thp_fault_alloc" "$T/reproduce.out"
check "reproduce keeps its lines (the commands to bisect)" \
	grep -q "klab bisect start --repo $T/linux --good $parent --bad $planted --job $T/reproduce.yaml --no-revert-check" "$T/reproduce.out"
check "reproduce --bisect: the job says profile_runs: 0" grep -q '^profile_runs: 0$' "$T/reproduce.yaml"
check "reproduce --bisect names the planted commit" grep -q "^$planted is the first bad commit\$" "$T/reproduce.out"
check "reproduce --bisect: stored as a confirmed culprit, the planted commit" \
	test "$(q "SELECT result || ' ' || culprit FROM bisections")" = "culprit $planted"
check "reproduce --bisect: no revert check, no profiled boots" \
	test "$(q "SELECT revert_check FROM bisections"):$(q "SELECT count(*) FROM steps WHERE phase IN ('revert', 'profile')")" = 0:0
check "integrity_check ok" test "$(q "PRAGMA integrity_check")" = ok
boots_summary
finish
