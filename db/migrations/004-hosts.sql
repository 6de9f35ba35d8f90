-- Migration 4: `klab host remove` keeps the row (boots point at it), so a
-- removed host is marked, not deleted; listing and placement skip it.
ALTER TABLE hosts ADD COLUMN removed_at INTEGER;
