-- Migration 14: faults of the host are not the kernel's (issue 42).  A
-- guest whose QEMU process ended with no panic on its console, or whose
-- libvirt connection was lost, is an infrastructure fault: its boot's
-- outcome is 'infrastructure' (never 'panic'), the run is tried again and
-- never becomes a skip, good or bad.  Every failed run row says whose
-- fault it was in `fault`: 'kernel' (boot failure, panic, timeout, a
-- benchmark that failed in the guest) or 'infrastructure'; NULL for an
-- ok run and for the rows stored before this migration.  The boots CHECK
-- is loosened by editing the table's text (see migration 6).
ALTER TABLE runs ADD COLUMN fault TEXT CHECK (fault IN ('kernel', 'infrastructure'));
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''timeout'', ''run-failed'')', '''timeout'', ''run-failed'', ''infrastructure'')')
 WHERE type = 'table' AND name = 'boots';
PRAGMA writable_schema = RESET;
PRAGMA writable_schema = OFF;
CREATE TABLE migration_14_bump (x);
DROP TABLE migration_14_bump;
