-- Migration 8: the profile runs of a job bisection (issue 18).  After a
-- confirmed culprit klab boots parent and culprit again with the
-- perf-profile monitor (the job's profile_runs each, interleaved), so the
-- profile is evidence beside the confirmation without perturbing the KPI
-- that decided it.  Their boots hang off steps of the new phase
-- 'profile' (no verdict: they decide nothing).
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''confirm'', ''revert'')', '''confirm'', ''revert'', ''profile'')')
 WHERE type = 'table' AND name = 'steps';
PRAGMA writable_schema = RESET;
PRAGMA writable_schema = OFF;
CREATE TABLE migration_8_bump (x);
DROP TABLE migration_8_bump;
