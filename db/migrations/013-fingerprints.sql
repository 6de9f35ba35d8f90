-- Migration 13: a host fingerprint on every run (issue 43).  The facts of
-- the host that decide whether two runs compare: CPU model and microcode,
-- host kernel, governor, SMT, accelerator, the guest's shape, QEMU and
-- libvirt versions, as "key=value" lines; stored once, keyed by the git
-- blob id of that text.  Run sets, boots and runs name theirs; a row from
-- before this migration has none (NULL: unknown, never "alike").
CREATE TABLE fingerprints (
	hash          TEXT PRIMARY KEY,              -- git blob id of text
	text          TEXT NOT NULL,
	created_at    INTEGER NOT NULL
);
ALTER TABLE run_sets ADD COLUMN fingerprint TEXT REFERENCES fingerprints(hash);
ALTER TABLE boots ADD COLUMN fingerprint TEXT REFERENCES fingerprints(hash);
ALTER TABLE runs ADD COLUMN fingerprint TEXT REFERENCES fingerprints(hash);
