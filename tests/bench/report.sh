#!/bin/sh
# Time `klab report` on a generated lab of 1000 job bisections x 20 steps
# x 5 runs (one KPI sample each, monitor counters on the confirmation
# pair): cold into an empty directory, again with nothing changed, and
# after one more bisection.  Prints figures; never fails on time
# (target: cold <= 5 s).  BISECTIONS, STEPS, RUNS override the sizes.
set -eu
: "${KLAB_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${KLAB:=$KLAB_SRCDIR/orchestrator/klab}"
NB=${BISECTIONS:-1000} NS=${STEPS:-20} NR=${RUNS:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/klab-bench-report.XXXXXX")
trap 'rm -rf "$T"' EXIT
lab="$T/lab"
"$KLAB" --state "$lab" init >/dev/null

# generate BISECTION ids FROM..TO (all in one transaction)
generate() {
	from=$1 to=$2
	cat <<SQL
BEGIN;
INSERT OR IGNORE INTO repos (id, path, created_at) VALUES (1, '/srv/linux', 1700000000);
CREATE TEMP TABLE b (id INTEGER PRIMARY KEY);
WITH RECURSIVE n(i) AS (SELECT $from UNION ALL SELECT i + 1 FROM n WHERE i < $to) INSERT INTO b SELECT i FROM n;
CREATE TEMP TABLE s (k INTEGER PRIMARY KEY);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $NS) INSERT INTO s SELECT i FROM n;
CREATE TEMP TABLE r (k INTEGER PRIMARY KEY);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $NR) INSERT INTO r SELECT i FROM n;
INSERT INTO commits (repo_id, hash, tree, subject, author, author_time, commit_time)
 SELECT 1, printf('%08x%032x', b.id, s.k), printf('%08x%032x', b.id, s.k + 1000),
        'mm: change ' || b.id || '.' || s.k || ' <&> "quoted"', 'Dev <dev@example.org>', 1700000000 + s.k, 1700000000 + s.k
 FROM b, s;
INSERT INTO bisections (id, repo_id, kind, state, result, bad, job_path, job_text, kpi, culprit, message, created_at, finished_at)
 SELECT id, 1, 'job', 'done', 'culprit', printf('%08x%032x', id, 2), 'jobs/will-it-scale-malloc1.yaml',
        'suite: will-it-scale' || char(10) || 'testcase: malloc1' || char(10), 'will-it-scale.per_process_ops',
        printf('%08x%032x', id, $NS), 'culprit confirmed', 1700000000 + id * 3600, 1700000000 + id * 3600 + 3000
 FROM b;
INSERT INTO bisection_goods (bisection_id, hash) SELECT id, printf('%08x%032x', id, 1) FROM b;
INSERT INTO steps (id, bisection_id, seq, hash, phase, status, verdict, reason, log_path, started_at, finished_at)
 SELECT b.id * 100 + s.k, b.id, s.k, printf('%08x%032x', b.id, s.k),
        CASE WHEN s.k <= 2 THEN 'reference' WHEN s.k > $NS - 2 THEN 'confirm' ELSE 'bisect' END,
        'done', CASE WHEN s.k % 2 = 1 THEN 'good' ELSE 'bad' END, 'like-x: position 0.5',
        '/nonexistent/log-' || b.id || '-' || s.k, 1700000000, 1700000100
 FROM b, s;
INSERT INTO verdicts (step_id, rule, p_good, p_bad, statistic, detail, created_at)
 SELECT b.id * 100 + s.k, 'like-good', 0.5, 0.01, 'n=5/5/5', 'like good: position 0.02' || char(10), 1700000000 FROM b, s;
INSERT INTO boots (id, step_id, accel, outcome, console_path, started_at)
 SELECT (b.id * 100 + s.k) * 10 + r.k, b.id * 100 + s.k, 'tcg', 'ok', '/nonexistent/console', 1700000000 FROM b, s, r;
INSERT INTO runs (id, boot_id, step_id, iteration, status, raw_path, started_at)
 SELECT (b.id * 100 + s.k) * 10 + r.k, (b.id * 100 + s.k) * 10 + r.k, b.id * 100 + s.k, r.k, 'ok', '/nonexistent/raw', 1700000000 FROM b, s, r;
INSERT INTO samples (run_id, metric, seq, value)
 SELECT (b.id * 100 + s.k) * 10 + r.k, 'will-it-scale.per_process_ops', 0,
        CASE WHEN s.k % 2 = 1 THEN 100000 ELSE 50000 END + ((b.id * 7 + s.k * 13 + r.k * 31) % 1000)
 FROM b, s, r;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
INSERT INTO monitor_stats (run_id, source, name, phase, value)
 SELECT (b.id * 100 + s.k) * 10 + r.k, 'vmstat', 'counter_' || n.i, 'delta', n.i * 1000 + s.k * 10 + r.k
 FROM b, s, r, n WHERE s.k > $NS - 2;
COMMIT;
SQL
}

t0=$(date +%s.%N)
generate 1 "$NB" | sqlite3 "$lab/klab.db"
t1=$(date +%s.%N)
size=$(du -m "$lab/klab.db" | cut -f1)
printf 'generated: %d bisections x %d steps x %d runs (%s MiB database) in %.1f s\n' "$NB" "$NS" "$NR" "$size" \
	"$(echo "$t1 - $t0" | bc)"

run() {
	label=$1
	s0=$(date +%s.%N)
	"$KLAB" --state "$lab" report -o "$T/out" >"$T/report.out"
	s1=$(date +%s.%N)
	printf '%-40s %6.2f s   %s\n' "$label" "$(echo "$s1 - $s0" | bc)" "$(head -1 "$T/report.out")"
}
run "cold (empty output directory)"
run "again, nothing changed"
generate $((NB + 1)) $((NB + 1)) | sqlite3 "$lab/klab.db"
run "after one new bisection"
printf 'output: %s MiB in %d files\n' "$(du -sm "$T/out" | cut -f1)" "$(find "$T/out" -type f | wc -l)"
