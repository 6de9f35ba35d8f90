-- Migration 7: the revert check of a job bisection (issue 17).  After a
-- confirmed culprit klab builds the bad end with the culprit reverted (a
-- commit in klab's own worktree object store, never the user's) and
-- measures it against the references.  Stored with the bisection: whether
-- the check is on (`--no-revert-check` turns it off), its outcome, the
-- revert commit, and its runs' KPI summary against the references; the
-- runs themselves are boots of a step of the new phase 'revert'.
ALTER TABLE bisections ADD COLUMN revert_check INTEGER NOT NULL DEFAULT 1 CHECK (revert_check IN (0, 1));
ALTER TABLE bisections ADD COLUMN revert_outcome TEXT
	CHECK (revert_outcome IN ('restores-good', 'does-not-restore', 'does-not-apply', 'does-not-build',
	                          'not-measured'));
ALTER TABLE bisections ADD COLUMN revert_commit TEXT;
ALTER TABLE bisections ADD COLUMN revert_runs INTEGER;
ALTER TABLE bisections ADD COLUMN revert_median REAL;
ALTER TABLE bisections ADD COLUMN revert_cv REAL;
ALTER TABLE bisections ADD COLUMN revert_good_median REAL;
ALTER TABLE bisections ADD COLUMN revert_bad_median REAL;
ALTER TABLE bisections ADD COLUMN revert_detail TEXT;
-- steps.phase gains 'revert': the CHECK is loosened in the table's text,
-- as migration 6 did for bisections.result (a rebuild would cascade).
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''reference'', ''confirm'')', '''reference'', ''confirm'', ''revert'')')
 WHERE type = 'table' AND name = 'steps';
PRAGMA writable_schema = RESET;
PRAGMA writable_schema = OFF;
CREATE TABLE migration_7_bump (x);
DROP TABLE migration_7_bump;
