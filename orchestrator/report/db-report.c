/* The report's reads: the whole lab in one read transaction, filled
 * into report.h's structures. */
#include "lab/db-int.h"
#include "job/monitor.h"
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every table is read in one pass (a handful of statements for the whole
 * lab, not a few per step), then joined in memory by id. */

struct step_ref {
	int64_t id;
	struct report_step *s;
};

static int cmp_step_ref(const void *a, const void *b)
{
	const struct step_ref *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

struct report_index {
	struct report *r;
	struct step_ref *steps;
	size_t nr_steps;
};

/* r->bisections is ordered by id, newest first. */
static struct report_bisection *find_bisection(struct report *r, int64_t id)
{
	size_t lo = 0, hi = r->nr_bisections;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->bisections[mid].id == id)
			return &r->bisections[mid];
		if (r->bisections[mid].id > id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct report_step *find_report_step(const struct report_index *x, int64_t id)
{
	struct step_ref key = { id, NULL }, *hit;

	if (!x->nr_steps)
		return NULL;
	hit = bsearch(&key, x->steps, x->nr_steps, sizeof(key), cmp_step_ref);
	return hit ? hit->s : NULL;
}

static void replace_str(char **dst, sqlite3_stmt *st, int col)
{
	free(*dst);
	*dst = col_strdup(st, col);
}

/* Run a statement and hand each row to fn; -1 after error() on failure. */
static int each_row(sqlite3 *db, const char *sql, int64_t bind1, int (*fn)(sqlite3_stmt *, void *), void *data,
		    const char *what)
{
	/* a statement without ?1 ignores it */
	sqlite3_stmt *st = stmt(db, sql, ARGS(arg_int(bind1)));
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (fn(st, data) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(db, what);
	return 0;
}

static int row_bisection(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	struct report_bisection *b;

	ALLOC_GROW(r->bisections, r->nr_bisections + 1, r->alloc_bisections);
	b = &r->bisections[r->nr_bisections++];
	memset(b, 0, sizeof(*b));
	READ_COLS(st, 0, COL(&b->id), COL(&b->repo), COL(&b->kind), COL(&b->state), COL(&b->result), COL(&b->message),
		  COL(&b->bad), COL(&b->job_path), COL(&b->job_text), COL(&b->kpi), COL(&b->config), COL(&b->build),
		  COL(&b->culprit), COL(&b->culprit_subject), COL(&b->culprit_author), COL(&b->culprit_time),
		  COL(&b->created_at), COL(&b->finished_at));
	b->kind_id = bisection_kind_from_string(b->kind);
	b->state_id = bisection_state_from_string(b->state);
	b->result_id = bisection_result_from_string(b->result);
	/* the revert check (migration 7); an unknown name reads as none */
	if (revert_outcome_from_name((const char *)sqlite3_column_text(st, 18), &b->revert.outcome) == 0) {
		col_hex(st, 19, b->revert.commit);
		b->revert.runs = (size_t)sqlite3_column_int64(st, 20);
		READ_COLS(st, 21, COL(&b->revert.median), COL(&b->revert.cv_percent), COL(&b->revert.good_median),
			  COL(&b->revert.bad_median), COL(&b->revert.detail));
	}
	/* drift seen (migration 10), two change points (migration 11) */
	READ_COLS(st, 26, COL(&b->drift), COL(&b->drift_percent), COL(&b->split));
	return 0;
}

/* What a half of a split bisection found (migration 11). */
static int row_half(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));
	struct report_half *h;

	if (!b)
		return 0;
	ALLOC_GROW(b->halves, b->nr_halves + 1, b->alloc_halves);
	h = &b->halves[b->nr_halves++];
	memset(h, 0, sizeof(*h));
	h->half = sqlite3_column_int(st, 1);
	h->has_culprit = sqlite3_column_type(st, 2) != SQLITE_NULL;
	col_hex(st, 2, h->culprit);
	h->confirmed = sqlite3_column_int(st, 3);
	h->share = sqlite3_column_type(st, 4) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 4);
	h->message = col_strdup(st, 5);
	h->subject = col_strdup(st, 6);
	if (col_revert(st, 7, &h->revert, b->id) < 0)
		memset(&h->revert, 0, sizeof(h->revert));
	return 0;
}

static int row_good(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b) {
		ALLOC_GROW(b->goods, b->nr_goods + 1, b->alloc_goods);
		col_hex(st, 1, b->goods[b->nr_goods++]);
	}
	return 0;
}

static int row_arg(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b) {
		ALLOC_GROW(b->argv, b->argc + 1, b->alloc_argv);
		b->argv[b->argc++] = col_strdup(st, 1);
	}
	return 0;
}

static int row_candidate(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b) {
		ALLOC_GROW(b->candidates, b->nr_candidates + 1, b->alloc_candidates);
		b->candidates[b->nr_candidates++] = col_strdup(st, 1);
	}
	return 0;
}

static int row_step(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));
	struct report_step *s;

	if (!b)
		return 0;
	ALLOC_GROW(b->steps, b->nr_steps + 1, b->alloc_steps);
	s = &b->steps[b->nr_steps++];
	memset(s, 0, sizeof(*s));
	READ_COLS(st, 1, COL(&s->id), COL(&s->seq), COL(&s->hash), COL(&s->phase), COL(&s->status), COL(&s->verdict),
		  COL(&s->reason), COL(&s->exit_code), COL(&s->test_ms), COL(&s->log.src), COL(&s->subject));
	s->phase_id = step_phase_from_string(s->phase);
	s->status_id = step_status_from_string(s->status);
	s->mark = bisect_mark_from_string(s->verdict);
	return 0;
}

static int row_verdict(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));

	if (s) {
		replace_str(&s->rule, st, 1);
		replace_str(&s->evidence, st, 2);
	}
	return 0;
}

static int row_kpi(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));

	if (s) {
		ALLOC_GROW(s->kpi, s->nr_kpi + 1, s->alloc_kpi);
		s->kpi[s->nr_kpi++] = sqlite3_column_double(st, 1);
	}
	return 0;
}

static int row_run(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));
	const unsigned char *status = sqlite3_column_text(st, 1);

	if (s) {
		s->runs++;
		if (status && !strcmp((const char *)status, "ok"))
			s->runs_ok++;
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			replace_str(&s->raw.src, st, 2);
	}
	return 0;
}

static int row_boot(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));
	const unsigned char *outcome = sqlite3_column_text(st, 1);
	int ok = outcome && !strcmp((const char *)outcome, "ok");

	if (!s)
		return 0;
	s->boots++;
	s->boots_ok += ok;
	/* keep the first failure; else follow the last boot */
	if (s->boot_outcome && strcmp(s->boot_outcome, "ok") && strcmp(s->boot_outcome, "running"))
		return 0;
	replace_str(&s->boot_outcome, st, 1);
	replace_str(&s->boot_reason, st, 2);
	replace_str(&s->console_excerpt, st, 3);
	replace_str(&s->console.src, st, 4);
	return 0;
}

static int row_build(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));

	if (s) {
		replace_str(&s->build_status, st, 1);
		replace_str(&s->build_excerpt, st, 2);
		replace_str(&s->build_log.src, st, 3);
	}
	return 0;
}

/* A monitor's per-run value as db_step_mon_values takes it: a counter's
 * delta, a level's value after the run (the registry says which). */
static int row_stat(sqlite3_stmt *st, void *data)
{
	struct report_step *s = find_report_step(data, sqlite3_column_int64(st, 0));
	const char *source = (const char *)sqlite3_column_text(st, 1);
	const char *stat = (const char *)sqlite3_column_text(st, 2);
	const char *phase = (const char *)sqlite3_column_text(st, 3);
	const struct monitor *mon = source ? monitor_find(source) : NULL;
	struct report_stat *m;
	char *name;

	if (!s || !mon || !stat || !phase || strcmp(phase, mon->counters ? "delta" : "after"))
		return 0;
	name = xstrfmt("%s.%s", source, stat);
	/* rows come sorted by step and name */
	m = s->nr_stats ? &s->stats[s->nr_stats - 1] : NULL;
	if (!m || strcmp(m->name, name)) {
		ALLOC_GROW(s->stats, s->nr_stats + 1, s->alloc_stats);
		m = &s->stats[s->nr_stats++];
		memset(m, 0, sizeof(*m));
		m->name = name;
	} else {
		free(name);
	}
	ALLOC_GROW(m->v, m->n + 1, m->alloc);
	m->v[m->n++] = sqlite3_column_double(st, 4);
	return 0;
}

static int row_host(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	struct report_host *h;

	ALLOC_GROW(r->hosts, r->nr_hosts + 1, r->alloc_hosts);
	h = &r->hosts[r->nr_hosts++];
	READ_COLS(st, 0, COL(&h->name), COL(&h->uri), COL(&h->cpus), COL(&h->max_guests), COL(&h->accel));
	return 0;
}

static int row_run_set(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	struct report_run_set *rs;

	ALLOC_GROW(r->run_sets, r->nr_run_sets + 1, r->alloc_run_sets);
	rs = &r->run_sets[r->nr_run_sets++];
	memset(rs, 0, sizeof(*rs));
	READ_COLS(st, 0, COL(&rs->id), COL(&rs->job_path), COL(&rs->suite), COL(&rs->testcase), COL(&rs->kpi),
		  COL(&rs->commit), COL(&rs->accel), COL(&rs->state), COL(&rs->repeat), COL(&rs->created_at));
	return 0;
}

/* r->run_sets is ordered by id, newest first. */
static int row_run_set_kpi(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	int64_t id = sqlite3_column_int64(st, 0);
	size_t lo = 0, hi = r->nr_run_sets;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct report_run_set *rs = &r->run_sets[mid];

		if (rs->id == id) {
			ALLOC_GROW(rs->kpi_values, rs->nr_kpi + 1, rs->alloc_kpi);
			rs->kpi_values[rs->nr_kpi++] = sqlite3_column_double(st, 1);
			return 0;
		}
		if (rs->id > id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static int row_track(sqlite3_stmt *st, void *data)
{
	struct report *r = data;
	struct report_track *t;

	ALLOC_GROW(r->tracks, r->nr_tracks + 1, r->alloc_tracks);
	t = &r->tracks[r->nr_tracks++];
	memset(t, 0, sizeof(*t));
	READ_COLS(st, 0, COL(&t->id), COL(&t->name), COL(&t->repo), COL(&t->remote), COL(&t->branch),
		  COL(&t->threshold_pct));
	return 0;
}

static struct report_track *find_track(struct report *r, int64_t id)
{
	for (size_t i = 0; i < r->nr_tracks; i++)
		if (r->tracks[i].id == id)
			return &r->tracks[i];
	return NULL;
}

static int row_tip(sqlite3_stmt *st, void *data)
{
	struct report_track *t = find_track(data, sqlite3_column_int64(st, 0));
	struct report_tip *tip;

	if (!t)
		return 0;
	ALLOC_GROW(t->tips, t->nr_tips + 1, t->alloc_tips);
	tip = &t->tips[t->nr_tips++];
	memset(tip, 0, sizeof(*tip));
	READ_COLS(st, 1, COL(&tip->id), COL(&tip->hash), COL(&tip->status), COL(&tip->compared_to),
		  COL(&tip->bisection_id), COL(&tip->message), COL(&tip->created_at), COL(&tip->subject));
	return 0;
}

/* A tip's KPI: the runs of `klab run` sets on that commit with one of the
 * track's jobs, their KPI as the run set named it. */
static int row_tip_kpi(sqlite3_stmt *st, void *data)
{
	struct report_track *t = find_track(data, sqlite3_column_int64(st, 0));
	int64_t tip_id = sqlite3_column_int64(st, 1);
	const char *job = (const char *)sqlite3_column_text(st, 2), *kpi = (const char *)sqlite3_column_text(st, 3);
	struct report_series *se = NULL;
	size_t k;

	if (!t || !job || !kpi)
		return 0;
	for (k = 0; k < t->nr_tips && t->tips[k].id != tip_id; k++)
		;
	if (k == t->nr_tips)
		return 0;
	for (size_t i = 0; i < t->nr_series; i++)
		if (!strcmp(t->series[i].job_path, job) && !strcmp(t->series[i].kpi, kpi))
			se = &t->series[i];
	if (!se) {
		ALLOC_GROW(t->series, t->nr_series + 1, t->alloc_series);
		se = &t->series[t->nr_series++];
		se->job_path = xstrdup(job);
		se->kpi = xstrdup(kpi);
		se->values = xcalloc(t->nr_tips, sizeof(*se->values));
		se->nr_values = xcalloc(t->nr_tips, sizeof(*se->nr_values));
	}
	se->values[k] = xrealloc(se->values[k], (se->nr_values[k] + 1) * sizeof(double));
	se->values[k][se->nr_values[k]++] = sqlite3_column_double(st, 4);
	return 0;
}

/* The culprit's full message and changed files, where the commits table
 * has such columns (later schema versions may add them). */
static int commits_has_column(sqlite3 *db, const char *name)
{
	sqlite3_stmt *st = stmt(db, "SELECT 1 FROM pragma_table_info('commits') WHERE name = ?1",
				ARGS(arg_text(name)));
	int has = st && sqlite3_step(st) == SQLITE_ROW;

	sqlite3_finalize(st);
	return has;
}

static int row_culprit_message(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b)
		replace_str(&b->culprit_message, st, 1);
	return 0;
}

static int row_culprit_files(sqlite3_stmt *st, void *data)
{
	struct report_bisection *b = find_bisection(data, sqlite3_column_int64(st, 0));

	if (b)
		replace_str(&b->culprit_files, st, 1);
	return 0;
}

int db_report_load(sqlite3 *db, int64_t since, struct report *r)
{
	struct report_index x = { r, NULL, 0 };
	size_t alloc = 0;
	int ret = -1;

	memset(r, 0, sizeof(*r));
	/* one snapshot: a bisection running meanwhile cannot tear the report */
	if (exec(db, "BEGIN") < 0)
		return -1;
	if (each_row(db, "SELECT b.id, r.path, b.kind, b.state, b.result, b.message, b.bad, b.job_path, b.job_text, "
			 "b.kpi, b.config, b.build, b.culprit, c.subject, c.author, coalesce(c.author_time, 0), "
			 "b.created_at, coalesce(b.finished_at, 0), b.revert_outcome, b.revert_commit, b.revert_runs, "
			 "b.revert_median, b.revert_cv, b.revert_good_median, b.revert_bad_median, b.revert_detail, "
			 "b.drift, coalesce(b.drift_percent, 0), b.split_commit "
			 "FROM bisections b JOIN repos r ON r.id = b.repo_id "
			 "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = b.culprit "
			 "WHERE b.created_at >= ?1 ORDER BY b.id DESC",
		     since, row_bisection, r, "cannot read bisections") < 0 ||
	    each_row(db, "SELECT bisection_id, hash FROM bisection_goods ORDER BY bisection_id, rowid", 0, row_good, r,
		     "cannot read good revisions") < 0 ||
	    each_row(db, "SELECT bisection_id, arg FROM bisection_argv ORDER BY bisection_id, idx", 0, row_arg, r,
		     "cannot read test commands") < 0 ||
	    each_row(db, "SELECT bisection_id, hash FROM bisection_candidates ORDER BY bisection_id, rowid", 0,
		     row_candidate, r, "cannot read candidates") < 0 ||
	    each_row(db, "SELECT h.bisection_id, h.half, h.culprit, h.confirmed, h.share, h.message, c.subject, "
			 "h.revert_outcome, h.revert_commit, h.revert_runs, h.revert_median, h.revert_cv, "
			 "h.revert_good_median, h.revert_bad_median, h.revert_detail "
			 "FROM bisection_culprits h JOIN bisections b ON b.id = h.bisection_id "
			 "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = h.culprit "
			 "ORDER BY h.bisection_id, h.half", 0, row_half, r, "cannot read the culprits of halves") < 0 ||
	    each_row(db, "SELECT s.bisection_id, s.id, s.seq, s.hash, s.phase, s.status, s.verdict, s.reason, "
			 "coalesce(s.exit_code, -1), coalesce(s.test_ms, 0), s.log_path, c.subject "
			 "FROM steps s JOIN bisections b ON b.id = s.bisection_id "
			 "LEFT JOIN commits c ON c.repo_id = b.repo_id AND c.hash = s.hash "
			 "WHERE b.created_at >= ?1 ORDER BY s.bisection_id, s.seq",
		     since, row_step, r, "cannot read steps") < 0)
		goto out;
	if (commits_has_column(db, "message") &&
	    each_row(db, "SELECT b.id, c.message FROM bisections b JOIN commits c ON c.repo_id = b.repo_id "
			 "AND c.hash = b.culprit WHERE b.created_at >= ?1",
		     since, row_culprit_message, r, "cannot read commit messages") < 0)
		goto out;
	if (commits_has_column(db, "files") &&
	    each_row(db, "SELECT b.id, c.files FROM bisections b JOIN commits c ON c.repo_id = b.repo_id "
			 "AND c.hash = b.culprit WHERE b.created_at >= ?1",
		     since, row_culprit_files, r, "cannot read changed files") < 0)
		goto out;

	for (size_t i = 0; i < r->nr_bisections; i++)
		for (size_t k = 0; k < r->bisections[i].nr_steps; k++) {
			ALLOC_GROW(x.steps, x.nr_steps + 1, alloc);
			x.steps[x.nr_steps].id = r->bisections[i].steps[k].id;
			x.steps[x.nr_steps++].s = &r->bisections[i].steps[k];
		}
	if (x.nr_steps)
		qsort(x.steps, x.nr_steps, sizeof(*x.steps), cmp_step_ref);

	if (each_row(db, "SELECT step_id, rule, detail FROM verdicts ORDER BY step_id, id", 0, row_verdict, &x,
		     "cannot read verdicts") < 0 ||
	    each_row(db, "SELECT bo.step_id, sa.value FROM boots bo JOIN steps st ON st.id = bo.step_id "
			 "JOIN bisections b ON b.id = st.bisection_id JOIN runs r ON r.boot_id = bo.id "
			 "JOIN samples sa ON sa.run_id = r.id AND sa.metric = b.kpi AND sa.seq = 0 "
			 "WHERE r.status = 'ok' AND b.created_at >= ?1 ORDER BY bo.step_id, r.id",
		     since, row_kpi, &x, "cannot read samples") < 0 ||
	    each_row(db, "SELECT bo.step_id, r.status, r.raw_path FROM runs r JOIN boots bo ON bo.id = r.boot_id "
			 "WHERE bo.step_id IS NOT NULL ORDER BY bo.step_id, r.id",
		     0, row_run, &x, "cannot read runs") < 0 ||
	    each_row(db, "SELECT step_id, outcome, reason, console_excerpt, console_path FROM boots "
			 "WHERE step_id IS NOT NULL ORDER BY step_id, id",
		     0, row_boot, &x, "cannot read boots") < 0 ||
	    each_row(db, "SELECT st.id, bu.status, bu.error_excerpt, bu.log_path FROM steps st "
			 "JOIN bisections b ON b.id = st.bisection_id "
			 "JOIN commits c ON c.repo_id = b.repo_id AND c.hash = st.hash "
			 "JOIN builds bu ON bu.tree = c.tree AND bu.recipe = b.config "
			 "WHERE b.created_at >= ?1 ORDER BY st.id, bu.id",
		     since, row_build, &x, "cannot read builds") < 0 ||
	    each_row(db, "SELECT bo.step_id, m.source, m.name, m.phase, m.value FROM steps st "
			 "JOIN boots bo ON bo.step_id = st.id JOIN runs r ON r.boot_id = bo.id "
			 "JOIN monitor_stats m ON m.run_id = r.id "
			 "WHERE st.phase IN ('confirm', 'profile') AND r.status = 'ok' "
			 "AND m.phase IN ('delta', 'after') "
			 "ORDER BY bo.step_id, m.source || '.' || m.name, r.id",
		     0, row_stat, &x, "cannot read monitor values") < 0)
		goto out;

	if (each_row(db, "SELECT t.id, t.name, r.path, t.remote, t.branch, t.threshold_pct FROM tracks t "
			 "JOIN repos r ON r.id = t.repo_id ORDER BY t.name",
		     0, row_track, r, "cannot read tracks") < 0 ||
	    each_row(db, "SELECT tt.track_id, tt.id, tt.hash, tt.status, tt.compared_to, "
			 "coalesce(tt.bisection_id, 0), tt.message, tt.created_at, c.subject "
			 "FROM track_tips tt JOIN tracks t ON t.id = tt.track_id "
			 "LEFT JOIN commits c ON c.repo_id = t.repo_id AND c.hash = tt.hash "
			 "WHERE tt.created_at >= ?1 ORDER BY tt.track_id, tt.created_at, tt.id",
		     since, row_tip, r, "cannot read tracked tips") < 0 ||
	    each_row(db, "SELECT tt.track_id, tt.id, rs.job_path, rs.kpi, sa.value FROM track_tips tt "
			 "JOIN run_sets rs ON rs.track_tip_id = tt.id "
			 "JOIN boots bo ON bo.run_set_id = rs.id JOIN runs r ON r.boot_id = bo.id "
			 "JOIN samples sa ON sa.run_id = r.id AND sa.metric = rs.kpi AND sa.seq = 0 "
			 "WHERE r.status = 'ok' AND tt.created_at >= ?1 ORDER BY tt.track_id, rs.job_path, rs.kpi, r.id",
		     since, row_tip_kpi, r, "cannot read the tracked KPI") < 0 ||
	    each_row(db, "SELECT name, uri, cpus, max_guests, accel FROM hosts ORDER BY name", 0, row_host, r,
		     "cannot read hosts") < 0 ||
	    each_row(db, "SELECT id, job_path, suite, testcase, kpi, commit_hash, accel, state, repeat, created_at "
			 "FROM run_sets WHERE track_tip_id IS NULL AND created_at >= ?1 ORDER BY id DESC",
		     since, row_run_set, r, "cannot read run sets") < 0 ||
	    each_row(db, "SELECT rs.id, sa.value FROM run_sets rs "
			 "JOIN boots bo ON bo.run_set_id = rs.id JOIN runs r ON r.boot_id = bo.id "
			 "JOIN samples sa ON sa.run_id = r.id AND sa.metric = rs.kpi AND sa.seq = 0 "
			 "WHERE r.status = 'ok' AND rs.track_tip_id IS NULL AND rs.created_at >= ?1 ORDER BY rs.id, r.id",
		     since, row_run_set_kpi, r, "cannot read the run sets' KPI") < 0)
		goto out;
	ret = 0;
out:
	free(x.steps);
	exec(db, "COMMIT");
	if (ret < 0)
		report_release(r);
	return ret;
}
