-- Migration 12: the revert check of each culprit of two changes (issue
-- 17).  After a split bisection, klab reverts each half's confirmed
-- culprit alone on the range's bad end and measures it against the
-- range's ends: with two changes neither revert alone should restore
-- good, and klab says so.  The result is stored with the half, in the
-- columns migration 7 gave the bisection for a single culprit; the runs
-- are boots of a 'revert' step of that half.
ALTER TABLE bisection_culprits ADD COLUMN revert_outcome TEXT
	CHECK (revert_outcome IN ('restores-good', 'does-not-restore', 'does-not-apply', 'does-not-build',
	                          'not-measured'));
ALTER TABLE bisection_culprits ADD COLUMN revert_commit TEXT;
ALTER TABLE bisection_culprits ADD COLUMN revert_runs INTEGER;
ALTER TABLE bisection_culprits ADD COLUMN revert_median REAL;
ALTER TABLE bisection_culprits ADD COLUMN revert_cv REAL;
ALTER TABLE bisection_culprits ADD COLUMN revert_good_median REAL;
ALTER TABLE bisection_culprits ADD COLUMN revert_bad_median REAL;
ALTER TABLE bisection_culprits ADD COLUMN revert_detail TEXT;
