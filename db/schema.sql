-- klab lab database, schema version 1.
-- Applied in one transaction by `klab init` (and by any command that
-- opens a lab whose PRAGMA user_version is older).  Every table is here
-- from the start so later features add rows, not tables.  See db/README.md.

-- A git repository klab has worked on (the user's; klab never writes to it).
CREATE TABLE repos (
	id            INTEGER PRIMARY KEY,
	path          TEXT NOT NULL UNIQUE,          -- absolute path of the user's repository
	created_at    INTEGER NOT NULL
);

-- Facts about commits klab tested, kept so reports outlive the repository.
CREATE TABLE commits (
	id            INTEGER PRIMARY KEY,
	repo_id       INTEGER NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
	hash          TEXT NOT NULL,
	tree          TEXT NOT NULL,
	subject       TEXT NOT NULL,
	author        TEXT NOT NULL,
	author_time   INTEGER NOT NULL,
	commit_time   INTEGER NOT NULL,
	UNIQUE (repo_id, hash)
);

-- One bisection.  kind 'command' decides with a test command's exit code;
-- kind 'job' decides with a benchmark job and statistics.
CREATE TABLE bisections (
	id            INTEGER PRIMARY KEY,
	repo_id       INTEGER NOT NULL REFERENCES repos(id),
	kind          TEXT NOT NULL CHECK (kind IN ('command', 'job')),
	state         TEXT NOT NULL DEFAULT 'created'
	              CHECK (state IN ('created', 'running', 'stopped', 'done', 'failed')),
	-- how it ended: culprit found, only skipped commits left, regression
	-- not reproduced, or an error (message says which)
	result        TEXT CHECK (result IN ('culprit', 'skipped-only', 'not-reproduced', 'error')),
	bad           TEXT NOT NULL,                 -- the bad revision given, resolved to a hash
	first_parent  INTEGER NOT NULL DEFAULT 0,
	timeout_ms    INTEGER NOT NULL DEFAULT 0,    -- per-step test timeout, 0 = none
	build         INTEGER NOT NULL DEFAULT 0,    -- build each candidate first
	config        TEXT,                          -- kernel config recipe (builds)
	job_path      TEXT,                          -- job file (kind 'job')
	job_text      TEXT,                          -- its content when the bisection started
	kpi           TEXT,                          -- metric deciding good/bad (kind 'job')
	culprit       TEXT,                          -- first bad commit
	message       TEXT,                          -- last error or outcome, one line
	created_at    INTEGER NOT NULL,
	started_at    INTEGER,
	finished_at   INTEGER
);

CREATE TABLE bisection_goods (
	bisection_id  INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	hash          TEXT NOT NULL,
	PRIMARY KEY (bisection_id, hash)
);

-- Path limits (like `git bisect start -- PATHS`).
CREATE TABLE bisection_paths (
	bisection_id  INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	idx           INTEGER NOT NULL,
	path          TEXT NOT NULL,
	PRIMARY KEY (bisection_id, idx)
);

-- The test command's argv, one row per argument (no shell, no quoting).
CREATE TABLE bisection_argv (
	bisection_id  INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	idx           INTEGER NOT NULL,
	arg           TEXT NOT NULL,
	PRIMARY KEY (bisection_id, idx)
);

-- Possible culprits when only skipped commits are left.
CREATE TABLE bisection_candidates (
	bisection_id  INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	hash          TEXT NOT NULL,
	PRIMARY KEY (bisection_id, hash)
);

-- One tested commit.  A row is inserted as 'running' before the test
-- starts and becomes 'done' (with its verdict) in the same transaction
-- that records the result, before the next step is chosen: a crash
-- leaves at most one unfinished row, which resume runs again.
CREATE TABLE steps (
	id            INTEGER PRIMARY KEY,
	bisection_id  INTEGER NOT NULL REFERENCES bisections(id) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,              -- 1, 2, ... in the order tested
	hash          TEXT NOT NULL,
	phase         TEXT NOT NULL DEFAULT 'bisect' CHECK (phase IN ('merge-base', 'bisect', 'reference', 'confirm')),
	status        TEXT NOT NULL CHECK (status IN ('running', 'done', 'aborted')),
	verdict       TEXT CHECK (verdict IN ('good', 'bad', 'skip')),
	reason        TEXT,                          -- why: exit code, timeout, build error, statistics rule
	exit_code     INTEGER,
	attempts      INTEGER NOT NULL DEFAULT 1,    -- >1 when a crash interrupted an earlier try
	remaining     INTEGER,                       -- candidates left before this step
	log_path      TEXT,
	choose_ms     INTEGER,
	checkout_ms   INTEGER,
	test_ms       INTEGER,
	started_at    INTEGER NOT NULL,
	finished_at   INTEGER,
	UNIQUE (bisection_id, seq)
);
CREATE INDEX steps_by_hash ON steps (bisection_id, hash);

-- Kernel builds, keyed like the artifact store: (tree id, recipe id).
-- The recipe is the config as asked (base, fragments, options, compiler);
-- its id is known before building, so a cache hit costs one lookup.
CREATE TABLE builds (
	id            INTEGER PRIMARY KEY,
	repo_id       INTEGER REFERENCES repos(id),
	commit_hash   TEXT,                          -- the commit first built for this tree
	tree          TEXT NOT NULL,
	recipe_id     TEXT NOT NULL,
	recipe        TEXT NOT NULL,                 -- human-readable recipe
	status        TEXT NOT NULL CHECK (status IN ('running', 'ok', 'build-failed', 'env-failed', 'config-drift')),
	artifact_dir  TEXT,
	config_hash   TEXT,                          -- hash of the final .config
	config_text   TEXT,                          -- the final .config
	error_excerpt TEXT,                          -- first file:line: error lines, or the drift report
	log_path      TEXT,
	duration_ms   INTEGER,
	objects       INTEGER,                       -- objects compiled
	started_at    INTEGER NOT NULL,
	finished_at   INTEGER,
	UNIQUE (tree, recipe_id)
);

-- Hypervisors klab may place guests on (libvirt URIs).
CREATE TABLE hosts (
	id            INTEGER PRIMARY KEY,
	name          TEXT NOT NULL UNIQUE,
	uri           TEXT NOT NULL,
	cpus          TEXT,                          -- CPU list klab may use, e.g. "2-31"
	max_guests    INTEGER NOT NULL DEFAULT 1,
	accel         TEXT NOT NULL DEFAULT 'auto' CHECK (accel IN ('auto', 'kvm', 'tcg')),
	created_at    INTEGER NOT NULL
);

-- One guest boot of a built kernel.
CREATE TABLE boots (
	id            INTEGER PRIMARY KEY,
	build_id      INTEGER REFERENCES builds(id),
	host_id       INTEGER REFERENCES hosts(id),
	step_id       INTEGER REFERENCES steps(id),
	domain_name   TEXT,
	accel         TEXT CHECK (accel IN ('kvm', 'tcg')),
	vcpus         INTEGER,
	numa_nodes    INTEGER,
	memory_mb     INTEGER,
	pinning       TEXT,                          -- vCPU -> host CPU plan
	outcome       TEXT CHECK (outcome IN ('running', 'ok', 'boot-failed', 'panic', 'timeout', 'run-failed')),
	console_excerpt TEXT,
	console_path  TEXT,
	boot_ms       INTEGER,
	started_at    INTEGER NOT NULL,
	finished_at   INTEGER
);

-- One benchmark run inside a boot.
CREATE TABLE runs (
	id            INTEGER PRIMARY KEY,
	boot_id       INTEGER REFERENCES boots(id),
	step_id       INTEGER REFERENCES steps(id),
	job_path      TEXT,
	job_hash      TEXT,
	iteration     INTEGER NOT NULL DEFAULT 1,
	status        TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'timeout')),
	exit_code     INTEGER,
	raw_path      TEXT,                          -- the benchmark's raw output
	started_at    INTEGER NOT NULL,
	finished_at   INTEGER
);

-- Metrics a run produced (KPI and every other number the benchmark printed).
CREATE TABLE samples (
	id            INTEGER PRIMARY KEY,
	run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	metric        TEXT NOT NULL,                 -- LKP name, e.g. will-it-scale.per_process_ops
	seq           INTEGER NOT NULL DEFAULT 0,    -- per-second or per-task index
	value         REAL NOT NULL,
	UNIQUE (run_id, metric, seq)
);
CREATE INDEX samples_by_metric ON samples (metric);

-- Monitor snapshots (/proc/vmstat, /proc/meminfo, ...) before and after a run.
CREATE TABLE monitor_stats (
	id            INTEGER PRIMARY KEY,
	run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	source        TEXT NOT NULL,                 -- vmstat, meminfo, stat
	name          TEXT NOT NULL,
	phase         TEXT NOT NULL CHECK (phase IN ('before', 'after', 'delta')),
	value         REAL NOT NULL,
	UNIQUE (run_id, source, name, phase)
);

-- Verdict evidence for a step of a job bisection.
CREATE TABLE verdicts (
	id            INTEGER PRIMARY KEY,
	step_id       INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
	rule          TEXT NOT NULL,
	p_good        REAL,
	p_bad         REAL,
	statistic     TEXT,
	detail        TEXT,
	created_at    INTEGER NOT NULL
);

-- Work submitted from the CLI, claimed by workers.
CREATE TABLE queue_jobs (
	id            INTEGER PRIMARY KEY,
	kind          TEXT NOT NULL CHECK (kind IN ('bisect', 'run', 'track')),
	args          TEXT NOT NULL,                 -- argv, NUL-separated
	state         TEXT NOT NULL DEFAULT 'queued'
	              CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	bisection_id  INTEGER REFERENCES bisections(id),
	worker        TEXT,
	lease_until   INTEGER,
	attempts      INTEGER NOT NULL DEFAULT 0,
	message       TEXT,
	submitted_by  TEXT,
	created_at    INTEGER NOT NULL,
	started_at    INTEGER,
	finished_at   INTEGER
);
CREATE INDEX queue_by_state ON queue_jobs (state, id);

-- Branches followed nightly.
CREATE TABLE tracks (
	id            INTEGER PRIMARY KEY,
	name          TEXT NOT NULL UNIQUE,
	repo_id       INTEGER NOT NULL REFERENCES repos(id),
	remote        TEXT NOT NULL,
	branch        TEXT NOT NULL,
	config        TEXT,
	threshold_pct REAL NOT NULL DEFAULT 5.0,
	notify        TEXT,
	created_at    INTEGER NOT NULL
);

CREATE TABLE track_jobs (
	track_id      INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
	job_path      TEXT NOT NULL,
	PRIMARY KEY (track_id, job_path)
);

-- Each tip of a tracked branch that was tested.
CREATE TABLE track_tips (
	id            INTEGER PRIMARY KEY,
	track_id      INTEGER NOT NULL REFERENCES tracks(id) ON DELETE CASCADE,
	hash          TEXT NOT NULL,
	status        TEXT NOT NULL CHECK (status IN ('running', 'no-change', 'regression', 'improvement',
	                                              'build-failed', 'boot-failed', 'fetch-failed', 'first')),
	compared_to   TEXT,
	bisection_id  INTEGER REFERENCES bisections(id),
	message       TEXT,
	created_at    INTEGER NOT NULL,
	UNIQUE (track_id, hash)
);

-- Outgoing mail and webhooks, kept until delivered.
CREATE TABLE notifications (
	id            INTEGER PRIMARY KEY,
	kind          TEXT NOT NULL CHECK (kind IN ('mail', 'webhook')),
	target        TEXT NOT NULL,
	subject       TEXT,
	body          TEXT NOT NULL,
	state         TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
	attempts      INTEGER NOT NULL DEFAULT 0,
	next_try_at   INTEGER,
	last_error    TEXT,
	bisection_id  INTEGER REFERENCES bisections(id),
	created_at    INTEGER NOT NULL
);
