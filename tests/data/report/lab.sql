-- A fixed lab for tests/unit/test-report.c: a job bisection with its
-- reference runs, steps, verdicts, samples, monitor counters, the
-- confirmation pair and the profiled pair after it (perf-profile rows as
-- the demo range's: clear_page_erms 13.5% -> 90.4%); a command
-- bisection; a tracked branch; two run sets of klab compare; a host.
-- Text that came from outside is hostile on purpose.
INSERT INTO repos (id, path, created_at) VALUES (1, '/srv/linux & "friends"', 1700000000);

INSERT INTO commits (repo_id, hash, tree, subject, author, author_time, commit_time) VALUES
 (1, '1111111111111111111111111111111111111111', 'a111111111111111111111111111111111111111', 'v6.0 (good end)', 'Linus <torvalds@example.org>', 1700000100, 1700000100),
 (1, '2222222222222222222222222222222222222222', 'a222222222222222222222222222222222222222', 'mm: tidy up', 'Dev One <one@example.org>', 1700000200, 1700000200),
 (1, '3333333333333333333333333333333333333333', 'a333333333333333333333333333333333333333', 'x86: does not build', 'Dev Two <two@example.org>', 1700000300, 1700000300),
 (1, '4444444444444444444444444444444444444444', 'a444444444444444444444444444444444444444', 'mm: parent of the culprit', 'Dev Three <three@example.org>', 1700000400, 1700000400),
 (1, '5555555555555555555555555555555555555555', 'a555555555555555555555555555555555555555', '<script>alert(1)</script><img src=x onerror=alert(2)>', 'Mallory "O''Hara" & Co <m@example.org>', 1700000500, 1700000500),
 (1, '6666666666666666666666666666666666666666', 'a666666666666666666666666666666666666666', 'v6.1 (bad end)', 'Linus <torvalds@example.org>', 1700000600, 1700000600);

INSERT INTO bisections (id, repo_id, kind, state, result, bad, build, config, job_path, job_text, kpi, culprit, message, created_at, started_at, finished_at) VALUES
 (1, 1, 'job', 'done', 'culprit', '6666666666666666666666666666666666666666', 1, 'base tinyconfig
fragment x86_64-base.config', 'jobs/will-it-scale-malloc1.yaml', 'suite: will-it-scale
testcase: malloc1
kpi: will-it-scale.per_process_ops
# <b>not bold</b> & "quoted"
', 'will-it-scale.per_process_ops', '5555555555555555555555555555555555555555', 'culprit 555555555555 confirmed: parent like good, culprit like bad', 1700001000, 1700001000, 1700009000);
INSERT INTO bisection_goods (bisection_id, hash) VALUES (1, '1111111111111111111111111111111111111111');

INSERT INTO steps (id, bisection_id, seq, hash, phase, status, verdict, reason, exit_code, log_path, test_ms, started_at, finished_at) VALUES
 (1, 1, 1, '1111111111111111111111111111111111111111', 'reference', 'done', 'good', 'regression reproduced: -52.0%', NULL, NULL, 0, 1700001000, 1700002000),
 (2, 1, 2, '6666666666666666666666666666666666666666', 'reference', 'done', 'bad', 'regression reproduced: -52.0%', NULL, NULL, 0, 1700001000, 1700002000),
 (3, 1, 3, '2222222222222222222222222222222222222222', 'bisect', 'done', 'good', 'like-good: position 0.04', NULL, '/nonexistent/klab/3-bisect.log', 0, 1700002000, 1700003000),
 (4, 1, 4, '3333333333333333333333333333333333333333', 'bisect', 'done', 'skip', 'build failed: mm/mmap.c:12: error: expected '';'' before ''}''', NULL, '/nonexistent/klab/4-bisect.log', 0, 1700003000, 1700004000),
 (5, 1, 5, '5555555555555555555555555555555555555555', 'bisect', 'done', 'bad', 'like-bad: position 0.97', NULL, '/nonexistent/klab/5-bisect.log', 0, 1700004000, 1700005000),
 (6, 1, 6, '4444444444444444444444444444444444444444', 'confirm', 'done', 'good', 'like-good: position 0.02', NULL, NULL, 0, 1700005000, 1700006000),
 (7, 1, 7, '5555555555555555555555555555555555555555', 'confirm', 'done', 'bad', 'like-bad: position 1.01', NULL, NULL, 0, 1700005000, 1700006000),
 (8, 1, 8, '4444444444444444444444444444444444444444', 'profile', 'done', NULL, 'profile runs (perf-profile), no verdict', NULL, NULL, 0, 1700006000, 1700007000),
 (9, 1, 9, '5555555555555555555555555555555555555555', 'profile', 'done', NULL, 'profile runs (perf-profile), no verdict', NULL, NULL, 0, 1700006000, 1700007000);

INSERT INTO builds (id, repo_id, commit_hash, tree, recipe_id, recipe, status, error_excerpt, log_path, started_at, finished_at) VALUES
 (1, 1, '3333333333333333333333333333333333333333', 'a333333333333333333333333333333333333333', 'r1', 'base tinyconfig
fragment x86_64-base.config', 'build-failed', 'mm/mmap.c:12: error: expected '';'' before ''}'' token <here>', '/nonexistent/klab/build-3.log', 1700003000, 1700003100),
 (2, 1, '5555555555555555555555555555555555555555', 'a555555555555555555555555555555555555555', 'r1', 'base tinyconfig
fragment x86_64-base.config', 'ok', NULL, '/nonexistent/klab/build-5.log', 1700004000, 1700004100);

CREATE TEMP TABLE kpi (step_id INTEGER, k INTEGER, value REAL);
INSERT INTO kpi VALUES
 (1, 1, 101000), (1, 2, 99500), (1, 3, 100200), (1, 4, 98700), (1, 5, 100900),
 (2, 1, 48100), (2, 2, 47600), (2, 3, 49000), (2, 4, 48500), (2, 5, 47900),
 (3, 1, 99800), (3, 2, 100600),
 (5, 1, 48800), (5, 2, 47500), (5, 3, 48200),
 (6, 1, 100100), (6, 2, 99200), (6, 3, 101300),
 (7, 1, 47700), (7, 2, 48600), (7, 3, 48000),
 (8, 1, 99900), (8, 2, 100400),
 (9, 1, 47900), (9, 2, 48300);
INSERT INTO boots (id, step_id, build_id, accel, outcome, console_path, started_at, finished_at)
 SELECT step_id * 100 + k, step_id, NULL, 'tcg', 'ok', '/nonexistent/klab/console-' || step_id || '-' || k || '.log', 1700001000, 1700001060 FROM kpi;
INSERT INTO runs (id, boot_id, step_id, iteration, status, exit_code, raw_path, started_at, finished_at)
 SELECT step_id * 100 + k, step_id * 100 + k, step_id, k, 'ok', 0, '/nonexistent/klab/raw-' || step_id || '-' || k || '.txt', 1700001000, 1700001060 FROM kpi;
INSERT INTO samples (run_id, metric, seq, value)
 SELECT step_id * 100 + k, 'will-it-scale.per_process_ops', 0, value FROM kpi;
-- other metrics are not the KPI and stay out of the chart
INSERT INTO samples (run_id, metric, seq, value)
 SELECT step_id * 100 + k, 'will-it-scale.per_process_ops', 1, value * 2 FROM kpi;
INSERT INTO samples (run_id, metric, seq, value)
 SELECT step_id * 100 + k, 'will-it-scale.workload', 0, 7 FROM kpi;
-- a boot of step 5 that panicked before its runs counted
INSERT INTO boots (id, step_id, accel, outcome, reason, console_excerpt, console_path, started_at, finished_at) VALUES
 (590, 5, 'tcg', 'panic', 'Kernel panic - not syncing: <oops>', 'BUG: unable to handle page fault
Kernel panic - not syncing: Fatal exception & "more"', '/nonexistent/klab/console-5-panic.log', 1700004000, 1700004100);

CREATE TEMP TABLE mon (step_id INTEGER, source TEXT, name TEXT, phase TEXT, k INTEGER, value REAL);
INSERT INTO mon VALUES
 (6, 'vmstat', 'thp_fault_alloc', 'delta', 1, 2), (6, 'vmstat', 'thp_fault_alloc', 'delta', 2, 3), (6, 'vmstat', 'thp_fault_alloc', 'delta', 3, 2),
 (7, 'vmstat', 'thp_fault_alloc', 'delta', 1, 5120), (7, 'vmstat', 'thp_fault_alloc', 'delta', 2, 5300), (7, 'vmstat', 'thp_fault_alloc', 'delta', 3, 5050),
 (6, 'vmstat', 'pgfault', 'delta', 1, 1000000), (6, 'vmstat', 'pgfault', 'delta', 2, 1010000), (6, 'vmstat', 'pgfault', 'delta', 3, 990000),
 (7, 'vmstat', 'pgfault', 'delta', 1, 480000), (7, 'vmstat', 'pgfault', 'delta', 2, 470000), (7, 'vmstat', 'pgfault', 'delta', 3, 490000),
 (6, 'vmstat', 'nr_<evil>', 'delta', 1, 0), (7, 'vmstat', 'nr_<evil>', 'delta', 1, 0),
 (6, 'vmstat', 'pgfault', 'before', 1, 12345), (7, 'vmstat', 'pgfault', 'after', 1, 99999),
 (6, 'meminfo', 'AnonHugePages', 'after', 1, 0), (6, 'meminfo', 'AnonHugePages', 'after', 2, 0), (6, 'meminfo', 'AnonHugePages', 'after', 3, 2048),
 (7, 'meminfo', 'AnonHugePages', 'after', 1, 409600), (7, 'meminfo', 'AnonHugePages', 'after', 2, 413696), (7, 'meminfo', 'AnonHugePages', 'after', 3, 405504),
 -- the profiled pair: by significance the constant rcu_core 0.6 -> 1.2
 -- outranks clear_page_erms; by points it is last of the self rows.  The
 -- lock's row is under the agent's 0.5% floor in the culprit: no row.
 (8, 'perf-profile', 'self.cycles-pp.clear_page_erms', 'after', 1, 13.2), (8, 'perf-profile', 'self.cycles-pp.clear_page_erms', 'after', 2, 13.8),
 (9, 'perf-profile', 'self.cycles-pp.clear_page_erms', 'after', 1, 90.1), (9, 'perf-profile', 'self.cycles-pp.clear_page_erms', 'after', 2, 90.7),
 (8, 'perf-profile', 'self.cycles-pp.native_queued_spin_lock_slowpath', 'after', 1, 60.1), (8, 'perf-profile', 'self.cycles-pp.native_queued_spin_lock_slowpath', 'after', 2, 61.3),
 (8, 'perf-profile', 'self.cycles-pp.rcu_core', 'after', 1, 0.6), (8, 'perf-profile', 'self.cycles-pp.rcu_core', 'after', 2, 0.6),
 (9, 'perf-profile', 'self.cycles-pp.rcu_core', 'after', 1, 1.2), (9, 'perf-profile', 'self.cycles-pp.rcu_core', 'after', 2, 1.2),
 (8, 'perf-profile', 'self.cycles-pp.<evil>', 'after', 1, 5.0), (8, 'perf-profile', 'self.cycles-pp.<evil>', 'after', 2, 5.2),
 (9, 'perf-profile', 'self.cycles-pp.<evil>', 'after', 1, 1.0), (9, 'perf-profile', 'self.cycles-pp.<evil>', 'after', 2, 1.1),
 (8, 'perf-profile', 'children.cycles-pp.clear_huge_page', 'after', 1, 14.0), (8, 'perf-profile', 'children.cycles-pp.clear_huge_page', 'after', 2, 14.2),
 (9, 'perf-profile', 'children.cycles-pp.clear_huge_page', 'after', 1, 92.0), (9, 'perf-profile', 'children.cycles-pp.clear_huge_page', 'after', 2, 92.4),
 -- the profiled runs' own counters are not the confirm steps': left out
 (8, 'vmstat', 'thp_fault_alloc', 'delta', 1, 77777), (8, 'vmstat', 'thp_fault_alloc', 'delta', 2, 77777),
 (9, 'vmstat', 'thp_fault_alloc', 'delta', 1, 88888), (9, 'vmstat', 'thp_fault_alloc', 'delta', 2, 88888);
INSERT INTO monitor_stats (run_id, source, name, phase, value)
 SELECT step_id * 100 + k, source, name, phase, value FROM mon;

INSERT INTO verdicts (step_id, rule, p_good, p_bad, statistic, detail, created_at) VALUES
 (1, 'reproduced', 0.008, 0.008, 'n=5/5', 'regression reproduced: good 100200 ±1%, bad 48100 ±1% (-52.0%)
', 1700002000),
 (2, 'reproduced', 0.008, 0.008, 'n=5/5', 'regression reproduced: good 100200 ±1%, bad 48100 ±1% (-52.0%)
', 1700002000),
 (3, 'need-more', 0.5, 0.03, 'n=5/5/1', 'one run is not enough
', 1700002500),
 (3, 'like-good', 0.6, 0.02, 'n=5/5/2', 'like good: position 0.04 <within noise>
', 1700003000),
 (5, 'like-bad', 0.02, 0.7, 'n=5/5/3', 'like bad: position 0.97
', 1700005000),
 (6, 'like-good', 0.7, 0.02, 'n=5/5/3', 'like good: position 0.02
', 1700006000),
 (7, 'like-bad', 0.02, 0.8, 'n=5/5/3', 'like bad: position 1.01
', 1700006000);

-- A command bisection whose argv needs quoting; a step still running.
INSERT INTO bisections (id, repo_id, kind, state, result, bad, created_at, started_at, finished_at, message) VALUES
 (2, 1, 'command', 'stopped', NULL, '6666666666666666666666666666666666666666', 1700010000, 1700010000, NULL, 'the test command did not give a verdict (cannot run ''./t.sh'')');
INSERT INTO bisection_goods (bisection_id, hash) VALUES (2, '1111111111111111111111111111111111111111'), (2, '2222222222222222222222222222222222222222');
INSERT INTO bisection_argv (bisection_id, idx, arg) VALUES (2, 0, '/bin/sh'), (2, 1, '-c'), (2, 2, 'test ! -e broken && echo "it''s fine" > /dev/null');
INSERT INTO steps (id, bisection_id, seq, hash, phase, status, verdict, reason, exit_code, log_path, test_ms, started_at, finished_at) VALUES
 (20, 2, 1, '4444444444444444444444444444444444444444', 'bisect', 'done', 'good', 'exit 0', 0, '/nonexistent/klab/b2-1.log', 1234, 1700010000, 1700010002),
 (21, 2, 2, '5555555555555555555555555555555555555555', 'bisect', 'done', 'bad', 'exit 1', 1, '/nonexistent/klab/b2-2.log', 987, 1700010002, 1700010004),
 (22, 2, 3, '3333333333333333333333333333333333333333', 'bisect', 'running', NULL, NULL, NULL, NULL, 0, 1700010004, NULL);

-- A bisection from long before, for --since.
INSERT INTO bisections (id, repo_id, kind, state, result, bad, created_at) VALUES
 (3, 1, 'command', 'created', NULL, '6666666666666666666666666666666666666666', 1600000000);
INSERT INTO bisection_argv (bisection_id, idx, arg) VALUES (3, 0, 'true');

-- A tracked branch: three tips measured by `klab track run` (run sets of
-- the tip), one regression.
INSERT INTO tracks (id, name, repo_id, remote, branch, threshold_pct, created_at) VALUES
 (1, 'mm-unstable <nightly>', 1, 'origin', 'mm-unstable', 5.0, 1700000000);
INSERT INTO track_jobs (track_id, job_path) VALUES (1, 'jobs/will-it-scale-malloc1.yaml');
INSERT INTO track_tips (id, track_id, hash, status, compared_to, bisection_id, message, created_at) VALUES
 (1, 1, '2222222222222222222222222222222222222222', 'first', NULL, NULL, NULL, 1700000000),
 (2, 1, '4444444444444444444444444444444444444444', 'no-change', '2222222222222222222222222222222222222222', NULL, 'within 5%', 1700086400),
 (3, 1, '6666666666666666666666666666666666666666', 'regression', '4444444444444444444444444444444444444444', 1, 'will-it-scale.per_process_ops -52% <bisected>', 1700172800);
INSERT INTO run_sets (id, job_path, job_hash, suite, testcase, kpi, kernel, commit_hash, uri, accel, repeat, state, created_at, track_tip_id) VALUES
 (1, 'jobs/will-it-scale-malloc1.yaml', 'h', 'will-it-scale', 'malloc1', 'will-it-scale.per_process_ops', 'bzImage', '2222222222222222222222222222222222222222', 'qemu:///system', 'tcg', 3, 'done', 1700000000, 1),
 (2, 'jobs/will-it-scale-malloc1.yaml', 'h', 'will-it-scale', 'malloc1', 'will-it-scale.per_process_ops', 'bzImage', '4444444444444444444444444444444444444444', 'qemu:///system', 'tcg', 3, 'done', 1700086400, 2),
 (3, 'jobs/will-it-scale-malloc1.yaml', 'h', 'will-it-scale', 'malloc1', 'will-it-scale.per_process_ops', 'bzImage', '6666666666666666666666666666666666666666', 'qemu:///system', 'tcg', 3, 'done', 1700172800, 3);
CREATE TEMP TABLE tk (rs INTEGER, k INTEGER, value REAL);
INSERT INTO tk VALUES (1, 1, 99000), (1, 2, 101000), (1, 3, 100000), (2, 1, 100500), (2, 2, 99800), (2, 3, 98900),
 (3, 1, 48000), (3, 2, 49500), (3, 3, 47800);
INSERT INTO boots (id, run_set_id, accel, outcome, started_at) SELECT 1000 + rs * 10 + k, rs, 'tcg', 'ok', 1700000000 FROM tk;
INSERT INTO runs (id, boot_id, iteration, status, started_at) SELECT 1000 + rs * 10 + k, 1000 + rs * 10 + k, k, 'ok', 1700000000 FROM tk;
INSERT INTO samples (run_id, metric, seq, value) SELECT 1000 + rs * 10 + k, 'will-it-scale.per_process_ops', 0, value FROM tk;

-- klab compare of one commit under two job variants: two run sets of no
-- track, one boot of the second failed; a hostile job path.
INSERT INTO run_sets (id, job_path, job_hash, suite, testcase, kpi, kernel, commit_hash, uri, accel, repeat, state, created_at, track_tip_id) VALUES
 (4, 'jobs/thp <b>always</b>.yaml', 'h4', 'will-it-scale', 'malloc1', 'will-it-scale.per_process_ops', 'bzImage', '4444444444444444444444444444444444444444', 'qemu:///system', 'tcg', 3, 'done', 1700200000, NULL),
 (5, 'jobs/thp <b>always</b>.yaml', 'h5', 'will-it-scale', 'malloc1', 'will-it-scale.per_process_ops', 'bzImage', '4444444444444444444444444444444444444444', 'qemu:///system', 'tcg', 3, 'done', 1700200000, NULL);
CREATE TEMP TABLE ck (rs INTEGER, k INTEGER, value REAL);
INSERT INTO ck VALUES (4, 1, 120000), (4, 2, 121000), (4, 3, 119500), (5, 1, 98000), (5, 2, 97500);
INSERT INTO boots (id, run_set_id, accel, outcome, started_at) SELECT 2000 + rs * 10 + k, rs, 'tcg', 'ok', 1700200000 FROM ck;
INSERT INTO boots (id, run_set_id, accel, outcome, started_at) VALUES (2053, 5, 'tcg', 'panic', 1700200000);
INSERT INTO runs (id, boot_id, iteration, status, started_at) SELECT 2000 + rs * 10 + k, 2000 + rs * 10 + k, k, 'ok', 1700200000 FROM ck;
INSERT INTO samples (run_id, metric, seq, value) SELECT 2000 + rs * 10 + k, 'will-it-scale.per_process_ops', 0, value FROM ck;

INSERT INTO hosts (id, name, uri, cpus, max_guests, accel, created_at) VALUES
 (1, 'lab-1', 'qemu+ssh://lab-1/system?keyfile=/k&x="y"', '2-31', 4, 'kvm', 1700000000);
