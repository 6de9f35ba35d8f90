-- Migration 2: `klab run` — one job on one kernel, `repeat` boots — and
-- what each boot told about itself.
CREATE TABLE run_sets (
	id            INTEGER PRIMARY KEY,
	job_path      TEXT NOT NULL,
	job_hash      TEXT NOT NULL,
	suite         TEXT NOT NULL,
	testcase      TEXT NOT NULL,
	kpi           TEXT NOT NULL,
	kernel        TEXT NOT NULL,                 -- bzImage as booted (path)
	build_id      INTEGER REFERENCES builds(id), -- when klab built it
	commit_hash   TEXT,
	uri           TEXT NOT NULL,                 -- libvirt URI
	host          TEXT,                          -- libvirt's host name
	accel         TEXT NOT NULL CHECK (accel IN ('kvm', 'tcg')),
	repeat        INTEGER NOT NULL,
	state         TEXT NOT NULL CHECK (state IN ('running', 'done', 'failed')),
	created_at    INTEGER NOT NULL,
	finished_at   INTEGER
);

ALTER TABLE boots ADD COLUMN run_set_id INTEGER REFERENCES run_sets(id);
ALTER TABLE boots ADD COLUMN reason TEXT;              -- one line: why this outcome
ALTER TABLE boots ADD COLUMN kernel_release TEXT;      -- uname -r in the guest
ALTER TABLE boots ADD COLUMN guest_env TEXT;           -- "key=value" lines the agent reported
ALTER TABLE boots ADD COLUMN create_ms INTEGER;        -- virDomainCreateXML
ALTER TABLE boots ADD COLUMN first_output_ms INTEGER;  -- create → first benchmark output
CREATE INDEX boots_by_run_set ON boots (run_set_id);
CREATE INDEX runs_by_boot ON runs (boot_id);
