-- Migration 9: queued reproductions (issue 21).  'klab submit reproduce'
-- stores a report's reproduction as a queue job of its own kind; the
-- worker runs 'klab reproduce' and the job keeps the verdict line in its
-- message and, with --bisect, the bisection it started in bisection_id.
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''bisect'', ''run'', ''track'')', '''bisect'', ''run'', ''track'', ''reproduce'')')
 WHERE type = 'table' AND name = 'queue_jobs';
PRAGMA writable_schema = RESET;
PRAGMA writable_schema = OFF;
CREATE TABLE migration_9_bump (x);
DROP TABLE migration_9_bump;
