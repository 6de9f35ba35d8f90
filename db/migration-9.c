/* generated from 009-drift-max-runs.sql by db/embed-sql.sh: do not edit */
const char klab_migration_9_sql[] =
	"-- Migration 9: drift seen by a job bisection, and its run cap (issue 17).\n"
	"-- When the runs of the ends, taken in time order, share a significant\n"
	"-- trend, the host drifted while measuring: from then on every verdict uses\n"
	"-- time-local references and a reference run precedes every run of a\n"
	"-- commit.  The flag is stored so that a resumed bisection goes on the same\n"
	"-- way and `bisect show`, the report and the notice can say so;\n"
	"-- drift_percent is the trend, percent per run, when it was first seen.\n"
	"ALTER TABLE bisections ADD COLUMN drift INTEGER NOT NULL DEFAULT 0 CHECK (drift IN (0, 1));\n"
	"ALTER TABLE bisections ADD COLUMN drift_percent REAL;\n"
	"-- The most runs of one commit a bisection takes, when `--max-runs` set it\n"
	"-- (NULL: the job's max_runs or the default ladder).  `klab bisect resume\n"
	"-- --max-runs N ID` raises it, also to continue a bisection that ended\n"
	"-- not reproduced with the runs it took.\n"
	"ALTER TABLE bisections ADD COLUMN max_runs INTEGER CHECK (max_runs IS NULL OR max_runs BETWEEN 3 AND 1000);\n"
;
