-- Migration 6: a job bisection whose culprit failed its confirmation
-- ends with result 'unconfirmed' (issue 17), never as a culprit; the
-- commit stays in `culprit` as the suspect the evidence is about.
-- SQLite cannot change a CHECK in place, and rebuilding the table would
-- cascade (every child table REFERENCES bisections ON DELETE CASCADE).
-- A looser CHECK leaves every stored row valid and the file format
-- unchanged, so the table's text is edited instead (the procedure of
-- sqlite.org/lang_altertable.html for removing constraints): RESET
-- reloads this connection's schema, the table created and dropped bumps
-- the schema cookie so other connections reload theirs.
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''not-reproduced'', ''error'')', '''not-reproduced'', ''unconfirmed'', ''error'')')
 WHERE type = 'table' AND name = 'bisections';
PRAGMA writable_schema = RESET;
PRAGMA writable_schema = OFF;
CREATE TABLE migration_6_bump (x);
DROP TABLE migration_6_bump;
