-- Migration 11: two change points in one job bisection (issue 17).
-- A commit clearly apart from both ends (verdict rule `two-changes`)
-- means two changes: klab bisects (good, C] with C as the bad end, then
-- (C, bad] with C as the good end, and names a culprit for each.
-- split_commit is C (set once, by the first step that saw it); half the
-- part of the range being bisected: 0 the whole range, 1 or 2 a half.
-- Every step belongs to the half it ran in, as it belongs to its pass:
-- a resume replays the marks of the current half only.
ALTER TABLE bisections ADD COLUMN split_commit TEXT CHECK (split_commit IS NULL OR length(split_commit) = 40);
ALTER TABLE bisections ADD COLUMN half INTEGER NOT NULL DEFAULT 0 CHECK (half IN (0, 1, 2));
ALTER TABLE steps ADD COLUMN half INTEGER NOT NULL DEFAULT 0;
-- What each half found: its first bad commit (NULL: only skipped commits
-- were left in it), whether its confirmation (against the half's own
-- ends) passed, and its share: the parent -> culprit KPI change as a
-- percentage of the whole range's good -> bad change (NULL unknown).
-- Stored when the half ends, so a resumed bisection goes on with the
-- next half; bisections.culprit is the first confirmed one.
CREATE TABLE bisection_culprits (
	bisection_id  INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	half          INTEGER NOT NULL CHECK (half IN (1, 2)),
	culprit       TEXT CHECK (culprit IS NULL OR length(culprit) = 40),
	confirmed     INTEGER NOT NULL CHECK (confirmed IN (0, 1)),
	share         REAL,
	message       TEXT NOT NULL,
	PRIMARY KEY (bisection_id, half)
);
