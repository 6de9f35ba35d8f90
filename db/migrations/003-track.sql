-- Migration 3: `klab track` — which tracked tip a run set measured, how a
-- tip's test ended, and every fetch of a tracked branch (a fetch that
-- fails has no tip to record it on).
ALTER TABLE run_sets ADD COLUMN track_tip_id INTEGER REFERENCES track_tips(id) ON DELETE SET NULL;
CREATE INDEX run_sets_by_tip ON run_sets (track_tip_id);

ALTER TABLE track_tips ADD COLUMN queue_job_id INTEGER REFERENCES queue_jobs(id);  -- the bisection's job
ALTER TABLE track_tips ADD COLUMN kpi_text TEXT;       -- one line per job: KPI before -> after, verdict
ALTER TABLE track_tips ADD COLUMN finished_at INTEGER;

-- One row per fetch (`klab track fetch`, and the first thing `klab track run`
-- does): the tip before and after, and what happened.
--   unchanged  the branch is where it was
--   moved      it moved forward (the old tip is an ancestor of the new one)
--   rewritten  history was rewritten (force-push): the old tip is not an ancestor
--   first      the first fetch of this track
--   failed     remote gone, branch deleted, network, authentication: see message
CREATE TABLE track_fetches (
	id            INTEGER PRIMARY KEY,
	track_id      INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
	outcome       TEXT NOT NULL CHECK (outcome IN ('unchanged', 'moved', 'rewritten', 'first', 'failed')),
	old_tip       TEXT,
	new_tip       TEXT,
	message       TEXT,                          -- the error, or what a rewrite is compared against
	created_at    INTEGER NOT NULL
);
CREATE INDEX track_fetches_by_track ON track_fetches (track_id, id);
