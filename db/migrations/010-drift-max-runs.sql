-- Migration 10: drift seen by a job bisection, and its run cap (issue 17).
-- When the runs of the ends, taken in time order, share a significant
-- trend, the host drifted while measuring: from then on every verdict uses
-- time-local references and a reference run precedes every run of a
-- commit.  The flag is stored so that a resumed bisection goes on the same
-- way and `bisect show`, the report and the notice can say so;
-- drift_percent is the trend, percent per run, when it was first seen.
ALTER TABLE bisections ADD COLUMN drift INTEGER NOT NULL DEFAULT 0 CHECK (drift IN (0, 1));
ALTER TABLE bisections ADD COLUMN drift_percent REAL;
-- The most runs of one commit a bisection takes, when `--max-runs` set it
-- (NULL: the job's max_runs or the default ladder).  `klab bisect resume
-- --max-runs N ID` raises it, also to continue a bisection that ended
-- not reproduced with the runs it took.
ALTER TABLE bisections ADD COLUMN max_runs INTEGER CHECK (max_runs IS NULL OR max_runs BETWEEN 3 AND 1000);
-- The pass of a job bisection: 1, or 2 after its culprit was not
-- confirmed, when klab bisects the range once more with fresh references
-- (issue 17).  Every step belongs to the pass it ran in: the replay, the
-- references and `klab bisect log` see the bisection's current pass,
-- `klab bisect show` all of them.
ALTER TABLE bisections ADD COLUMN pass INTEGER NOT NULL DEFAULT 1 CHECK (pass IN (1, 2));
ALTER TABLE steps ADD COLUMN pass INTEGER NOT NULL DEFAULT 1;
