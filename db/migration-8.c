/* generated from 008-profile-phase.sql by db/embed-sql.sh: do not edit */
const char klab_migration_8_sql[] =
	"-- Migration 8: the profile runs of a job bisection (issue 18).  After a\n"
	"-- confirmed culprit klab boots parent and culprit again with the\n"
	"-- perf-profile monitor (the job's profile_runs each, interleaved), so the\n"
	"-- profile is evidence beside the confirmation without perturbing the KPI\n"
	"-- that decided it.  Their boots hang off steps of the new phase\n"
	"-- 'profile' (no verdict: they decide nothing).\n"
	"PRAGMA writable_schema = ON;\n"
	"UPDATE sqlite_master\n"
	"   SET sql = replace(sql, '''confirm'', ''revert'')', '''confirm'', ''revert'', ''profile'')')\n"
	" WHERE type = 'table' AND name = 'steps';\n"
	"PRAGMA writable_schema = RESET;\n"
	"PRAGMA writable_schema = OFF;\n"
	"CREATE TABLE migration_8_bump (x);\n"
	"DROP TABLE migration_8_bump;\n"
;
