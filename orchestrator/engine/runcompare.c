/* Stored run sets side by side (runcompare.h): the base against each
 * other set by compare.c's rule, as text or JSON, and klab reproduce's
 * verdict line. */
#include "engine/runcompare.h"
#include "guest/hostcheck.h"
#include "util/html.h"
#include "core/stats.h"
#include "job/suite.h"
#include "util/json.h"
#include "util/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct runcmp_set *runcmp_add_set(struct runcmp *c, const char *label)
{
	struct runcmp_set *s;

	c->sets = xrealloc(c->sets, (c->nr_sets + 1) * sizeof(*c->sets));
	s = &c->sets[c->nr_sets++];
	memset(s, 0, sizeof(*s));
	s->label = xstrdup(label);
	return s;
}

/* A set whose host fingerprint differs from the base's is compared all
 * the same (the accelerator is what refuses), but marked with what
 * differs: a kernel, microcode or QEMU change can move numbers too. */
static void mark_fingerprint(struct runcmp_set *s, const struct runcmp_set *base)
{
	struct strbuf what = STRBUF_INIT;

	if (!s->info.fingerprint || !base->info.fingerprint || !strcmp(s->info.fingerprint, base->info.fingerprint))
		return;
	host_fingerprint_diff(&what, base->info.fingerprint_text, s->info.fingerprint_text);
	s->fp_differs = what.len ? strbuf_detach(&what, NULL) : xstrdup("the fingerprint");
	strbuf_release(&what);
}

int runcmp_load(struct runcmp *c, sqlite3 *db, const int64_t *ids, const char *const *labels, size_t n,
		const char *kpi)
{
	memset(c, 0, sizeof(*c));
	c->direction = 1;
	for (size_t i = 0; i < n; i++) {
		struct db_run_set_info info;
		struct runcmp_set *s;
		char *label;
		int rc = db_run_set_get(db, ids[i], &info);

		if (rc <= 0) {
			if (rc == 0)
				error("no run set %lld (see the run ids klab run and klab compare print)",
				      (long long)ids[i]);
			goto fail;
		}
		label = labels && labels[i] ? xstrdup(labels[i]) : xstrfmt("run set %lld", (long long)ids[i]);
		s = runcmp_add_set(c, label);
		free(label);
		s->info = info;
		if (!c->kpi) {
			const struct suite *suite = suite_find(info.suite);
			int d;

			c->kpi = xstrdup(kpi ? kpi : info.kpi);
			d = suite ? suite_kpi_direction(suite, info.testcase, c->kpi) : 0;
			c->direction = d ? d : 1;
		} else if (strcmp(info.accel, c->sets[0].info.accel)) {
			error("run set %lld ran under %s, run set %lld under %s: runs under different accelerators "
			      "are never compared", (long long)c->sets[0].info.id, c->sets[0].info.accel,
			      (long long)info.id, info.accel);
			goto fail;
		}
		if (c->nr_sets > 1)
			mark_fingerprint(s, &c->sets[0]);
		if (db_run_set_metric_values(db, info.id, c->kpi, &s->kpi, &s->nr_kpi) < 0 ||
		    db_run_set_values(db, info.id, &s->vals, &s->nr_vals) < 0)
			goto fail;
		if (!s->nr_kpi) {
			error("run set %lld has no ok run with the KPI %s (%u of %u boots ok)", (long long)info.id,
			      c->kpi, info.nr_ok, info.repeat);
			goto fail;
		}
	}
	return 0;
fail:
	runcmp_release(c);
	return -1;
}

int runcmp_add_step(struct runcmp *c, sqlite3 *db, const char *label, int64_t step_id, int64_t profile_step)
{
	struct runcmp_set *s = runcmp_add_set(c, label);
	struct db_mon_values *pv = NULL;
	size_t npv = 0, keep = 0;

	if (db_step_metric_values(db, step_id, c->kpi, &s->kpi, &s->nr_kpi) < 0 ||
	    db_step_mon_values(db, step_id, &s->vals, &s->nr_vals) < 0 ||
	    (profile_step && db_step_mon_values(db, profile_step, &pv, &npv) < 0))
		return -1;
	if (!profile_step)
		return 0;
	/* the profile from the profiled runs, the rest from these */
	for (size_t i = 0; i < s->nr_vals; i++) {
		if (compare_profile_section(s->vals[i].name)) {
			free(s->vals[i].name);
			free(s->vals[i].v);
		} else
			s->vals[keep++] = s->vals[i];
	}
	s->vals = xrealloc(s->vals, (keep + npv + 1) * sizeof(*s->vals));
	for (size_t i = 0; i < npv; i++) {
		if (compare_profile_section(pv[i].name)) {
			s->vals[keep++] = pv[i];
		} else {
			free(pv[i].name);
			free(pv[i].v);
		}
	}
	s->nr_vals = keep;
	free(pv);
	return 0;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct db_mon_values *)x)->name, ((const struct db_mon_values *)y)->name);
}

/* A benchmark's metrics and the profile move by 1%, the rest by 5%. */
static int is_perf(const char *name)
{
	const char *fam = compare_family(name);

	return !fam || !strcmp(fam, "profile");
}

/* How many profiled runs a side has: the most any of its perf-profile
 * rows was seen in (0: the side was not profiled). */
static size_t profiled_runs(const struct runcmp_set *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_vals; i++)
		if (compare_profile_section(s->vals[i].name) && s->vals[i].n > n)
			n = s->vals[i].n;
	return n;
}

/* A profile row's values on a side, padded with zeros to its profiled
 * runs (v may be NULL: the side lacks the row). */
static const double *profile_values(struct runcmp_pair *p, const double *v, size_t n, size_t runs, size_t *out_n)
{
	double *pad;

	*out_n = n;
	if (n >= runs)
		return v;
	pad = xcalloc(runs, sizeof(*pad));
	if (n)
		memcpy(pad, v, n * sizeof(*v));
	p->pads = xrealloc(p->pads, (p->nr_pads + 1) * sizeof(*p->pads));
	p->pads[p->nr_pads++] = pad;
	*out_n = runs;
	return pad;
}

void runcmp_compute(struct runcmp *c)
{
	const struct runcmp_set *base = &c->sets[0];
	size_t base_runs;

	if (c->nr_sets < 2)
		return;
	for (size_t k = 0; k < c->nr_sets; k++)
		if (c->sets[k].nr_vals)
			qsort(c->sets[k].vals, c->sets[k].nr_vals, sizeof(*c->sets[k].vals), by_name);
	base_runs = profiled_runs(base);
	c->pairs = xcalloc(c->nr_sets - 1, sizeof(*c->pairs));
	for (size_t k = 1; k < c->nr_sets; k++) {
		struct runcmp_pair *p = &c->pairs[k - 1];
		const struct runcmp_set *o = &c->sets[k];
		struct compare_stat kpi = { c->kpi, base->kpi, o->kpi, base->nr_kpi, o->nr_kpi, 1 };
		size_t i = 0, j = 0, other_runs = profiled_runs(o);
		/* profile rows are compared only when both sides were profiled */
		int profiled = base_runs && other_runs;

		p->other = k;
		p->kpi_changed = compare_stat_changed(&kpi, &p->kpi);
		p->stats = xcalloc(base->nr_vals + o->nr_vals + 1, sizeof(*p->stats));
		/* both sorted by name: the stats both sides have, and the
		 * profile rows either has */
		while (i < base->nr_vals || j < o->nr_vals) {
			const struct db_mon_values *x = i < base->nr_vals ? &base->vals[i] : NULL;
			const struct db_mon_values *y = j < o->nr_vals ? &o->vals[j] : NULL;
			int d = !x ? 1 : !y ? -1 : strcmp(x->name, y->name);
			const char *name = d <= 0 ? x->name : y->name;
			struct compare_stat *st = &p->stats[p->nr_stats];

			if (profiled && compare_profile_section(name)) {
				st->name = name;
				st->a = profile_values(p, d <= 0 ? x->v : NULL, d <= 0 ? x->n : 0, base_runs, &st->na);
				st->b = profile_values(p, d >= 0 ? y->v : NULL, d >= 0 ? y->n : 0, other_runs, &st->nb);
				st->perf = 1;
				p->nr_stats++;
			} else if (!d) {
				*st = (struct compare_stat){ name, x->v, y->v, x->n, y->n, is_perf(name) };
				p->nr_stats++;
			}
			i += d <= 0;
			j += d >= 0;
		}
		compare_sets(p->stats, p->nr_stats, &p->rows, &p->nr_rows);
	}
}

static void add_clean_label(struct strbuf *sb, const char *label)
{
	strbuf_add_clean(sb, label);
}

static void add_set_line(struct strbuf *sb, const struct runcmp_set *s, char letter)
{
	strbuf_addf(sb, "  %c  run set %lld: ", letter, (long long)s->info.id);
	add_clean_label(sb, s->label);
	if (s->info.commit_hash && strncmp(s->label, s->info.commit_hash, strlen(s->label)))
		strbuf_addf(sb, " (%.12s)", s->info.commit_hash);
	strbuf_addstr(sb, ", ");
	strbuf_add_clean(sb, s->info.suite ? s->info.suite : "?");
	strbuf_addch(sb, ' ');
	strbuf_add_clean(sb, s->info.testcase ? s->info.testcase : "?");
	strbuf_addf(sb, ", %zu run%s with the KPI", s->nr_kpi, s->nr_kpi == 1 ? "" : "s");
	if (s->fp_differs)
		strbuf_addf(sb, "; ! another host: its fingerprint differs from A's (%s)", s->fp_differs);
	strbuf_addch(sb, '\n');
}

static void add_figure(struct strbuf *sb, double mean, size_t n, double cv)
{
	strbuf_addf(sb, "%.6g", mean);
	if (n > 1)
		strbuf_addf(sb, " ±%.1f%%", cv);
}

/* A heading for LKP's columns: the letter and the label, cleaned, whole
 * up to COMPARE_LABEL_MAX (compare_format widens its columns to it); a
 * longer variant keeps its end ("...enabled=never" tells sides apart),
 * anything else its start. */
static char *column_label(const struct runcmp *c, const char *label, char letter)
{
	struct strbuf clean = STRBUF_INIT, sb = STRBUF_INIT;
	size_t room = COMPARE_LABEL_MAX - (c->by_label ? 0 : 2);

	strbuf_add_clean(&clean, label);
	if (!c->by_label)
		strbuf_addf(&sb, "%c:", letter);
	if (clean.len <= room) {
		strbuf_addstr(&sb, clean.buf);
	} else if (strchr(clean.buf, '=')) {
		const char *from = clean.buf + clean.len - (room - 3);

		while ((*from & 0xc0) == 0x80)	/* not inside a UTF-8 character */
			from++;
		strbuf_addf(&sb, "...%s", from);
	} else {
		size_t n = room - 3;

		while (n && (clean.buf[n] & 0xc0) == 0x80)
			n--;
		strbuf_addf(&sb, "%.*s...", (int)n, clean.buf);
	}
	strbuf_release(&clean);
	return strbuf_detach(&sb, NULL);
}

void runcmp_format_pair(struct strbuf *sb, const struct runcmp *c, size_t k, size_t max)
{
	const struct runcmp_pair *p = &c->pairs[k];
	const struct runcmp_set *a = &c->sets[0], *b = &c->sets[p->other];
	char lb = (char)('A' + (p->other < 26 ? p->other : 25));
	struct compare_row *table = xcalloc(p->nr_rows + 1, sizeof(*table));
	size_t nt = 0, others = 0;
	char *la, *lbl;

	if (c->by_label) {
		add_clean_label(sb, b->label);
		strbuf_addstr(sb, " against ");
		add_clean_label(sb, a->label);
		strbuf_addstr(sb, ": ");
	} else {
		strbuf_addf(sb, "%c against A: ", lb);
	}
	strbuf_add_clean(sb, c->kpi);
	strbuf_addch(sb, ' ');
	add_figure(sb, p->kpi.mean_a, p->kpi.na, p->kpi.cv_a);
	strbuf_addstr(sb, " -> ");
	add_figure(sb, p->kpi.mean_b, p->kpi.nb, p->kpi.cv_b);
	if (isfinite(p->kpi.change))
		strbuf_addf(sb, " (%+.1f%%)", p->kpi.change);
	strbuf_addf(sb, ", %s\n", p->kpi_changed ? "changed (the runs' ranges are apart)"
						 : "no change by LKP's rule (the runs' ranges overlap or the change is small)");
	/* the KPI first, changed or not; then what changed */
	table[nt++] = p->kpi;
	for (size_t i = 0; i < p->nr_rows; i++)
		if (strcmp(p->rows[i].name, c->kpi)) {
			table[nt++] = p->rows[i];
			others++;
		}
	if (others) {
		strbuf_addstr(sb, "what changed:\n");
		compare_summary(sb, table + 1, others, 3, "  ");
	}
	strbuf_addch(sb, '\n');
	la = column_label(c, a->label, 'A');
	lbl = column_label(c, b->label, lb);
	compare_format(sb, table, nt, la, lbl, max ? max + 1 : 0, "  ");
	strbuf_addf(sb, "  %zu of %zu stats changed\n", p->nr_rows, p->nr_stats);
	free(la);
	free(lbl);
	free(table);
}

void runcmp_format(struct strbuf *sb, const struct runcmp *c, size_t max)
{
	strbuf_addstr(sb, "KPI ");
	strbuf_add_clean(sb, c->kpi ? c->kpi : "?");
	strbuf_addf(sb, " (%s is better)", c->direction > 0 ? "higher" : "lower");
	if (c->nr_sets && c->sets[0].info.accel)
		strbuf_addf(sb, ", accelerator %s", c->sets[0].info.accel);
	strbuf_addstr(sb, ":\n");
	for (size_t k = 0; k < c->nr_sets; k++)
		add_set_line(sb, &c->sets[k], (char)('A' + (k < 26 ? k : 25)));
	for (size_t k = 0; c->pairs && k + 1 < c->nr_sets; k++) {
		strbuf_addch(sb, '\n');
		runcmp_format_pair(sb, c, k, max);
	}
}

/* ,"key":"text" (the first field of an object without its comma);
 * keys are klab's, values escaped */
static void json_str(struct strbuf *sb, const char *key, const char *v, int first)
{
	strbuf_addf(sb, "%s\"%s\":", first ? "" : ",", key);
	json_add_string(sb, v);
}

static void json_num(struct strbuf *sb, const char *key, double v)
{
	strbuf_addf(sb, ",\"%s\":", key);
	json_add_number(sb, v);
}

static void json_row(struct strbuf *sb, const struct compare_row *r)
{
	strbuf_addch(sb, '{');
	json_str(sb, "name", r->name, 1);
	json_str(sb, "family", compare_family(r->name), 0);
	strbuf_addf(sb, ",\"runs_a\":%zu,\"runs_b\":%zu", r->na, r->nb);
	json_num(sb, "mean_a", r->mean_a);
	json_num(sb, "stddev_percent_a", r->cv_a);
	json_num(sb, "mean_b", r->mean_b);
	json_num(sb, "stddev_percent_b", r->cv_b);
	json_num(sb, "change_percent", r->change);
	json_num(sb, "difference", r->delta);
	json_num(sb, "score", r->score);
	strbuf_addch(sb, '}');
}

void runcmp_json(struct strbuf *sb, const struct runcmp *c)
{
	strbuf_addch(sb, '{');
	json_str(sb, "kpi", c->kpi, 1);
	strbuf_addf(sb, ",\"direction\":%d", c->direction);
	json_str(sb, "accel", c->nr_sets ? c->sets[0].info.accel : NULL, 0);
	strbuf_addstr(sb, ",\"sets\":[");
	for (size_t k = 0; k < c->nr_sets; k++) {
		const struct runcmp_set *s = &c->sets[k];

		strbuf_addstr(sb, k ? ",{" : "{");
		json_str(sb, "label", s->label, 1);
		strbuf_addf(sb, ",\"run_set\":%lld", (long long)s->info.id);
		json_str(sb, "commit", s->info.commit_hash, 0);
		json_str(sb, "suite", s->info.suite, 0);
		json_str(sb, "testcase", s->info.testcase, 0);
		json_str(sb, "job_hash", s->info.job_hash, 0);
		json_str(sb, "fingerprint", s->info.fingerprint, 0);
		json_str(sb, "fingerprint_differs", s->fp_differs, 0);
		strbuf_addstr(sb, ",\"kpi_values\":");
		json_add_numbers(sb, s->kpi, s->nr_kpi, ",");
		strbuf_addch(sb, '}');
	}
	strbuf_addstr(sb, "],\"comparisons\":[");
	for (size_t k = 0; c->pairs && k + 1 < c->nr_sets; k++) {
		const struct runcmp_pair *p = &c->pairs[k];

		strbuf_addf(sb, "%s{\"base\":0,\"other\":%zu,\"kpi_changed\":%s,\"kpi\":", k ? "," : "", p->other,
			    p->kpi_changed ? "true" : "false");
		json_row(sb, &p->kpi);
		strbuf_addf(sb, ",\"stats\":%zu,\"changed\":[", p->nr_stats);
		for (size_t i = 0; i < p->nr_rows; i++) {
			if (i)
				strbuf_addch(sb, ',');
			json_row(sb, &p->rows[i]);
		}
		strbuf_addstr(sb, "]}");
	}
	strbuf_addstr(sb, "]}\n");
}

void runcmp_html(struct strbuf *out, const struct runcmp *c)
{
	struct strbuf text = STRBUF_INIT, title = STRBUF_INIT, body = STRBUF_INIT;

	runcmp_format(&text, c, 0);
	strbuf_addstr(&title, "klab compare: ");
	strbuf_add_clean(&title, c->kpi ? c->kpi : "?");
	for (size_t k = 0; k < c->nr_sets && k < 4; k++) {
		strbuf_addstr(&title, k ? " vs " : ", ");
		strbuf_add_clean(&title, c->sets[k].label);
	}
	strbuf_addstr(&body, "<h1>");
	html_esc(&body, title.buf);
	strbuf_addstr(&body, "</h1>\n<pre class=\"compare\">");
	html_esc(&body, text.buf);
	strbuf_addstr(&body, "</pre>\n");
	html_page(out, title.buf, body.buf);
	strbuf_release(&text);
	strbuf_release(&title);
	strbuf_release(&body);
}

void runcmp_release(struct runcmp *c)
{
	for (size_t k = 0; c->pairs && k + 1 < c->nr_sets; k++) {
		free(c->pairs[k].stats);
		free(c->pairs[k].rows);
		for (size_t i = 0; i < c->pairs[k].nr_pads; i++)
			free(c->pairs[k].pads[i]);
		free(c->pairs[k].pads);
	}
	free(c->pairs);
	for (size_t k = 0; k < c->nr_sets; k++) {
		struct runcmp_set *s = &c->sets[k];
		free(s->label);
		free(s->fp_differs);
		db_run_set_info_release(&s->info);
		db_mon_values_free(s->vals, s->nr_vals);
		free(s->kpi);
	}
	free(c->sets);
	free(c->kpi);
	memset(c, 0, sizeof(*c));
}

int runcmp_reproduce(struct verdict *v, struct strbuf *line, const struct verdict_policy *pol,
		     const double *parent, size_t np, const double *commit, size_t nc, int direction,
		     const char *reported)
{
	static const char prefix[] = "regression not reproduced: ";
	const char *why;

	if (verdict_reproduce(v, pol, parent, np, commit, nc, direction) < 0)
		return -1;
	if (v->kind == VERDICT_NEED_MORE) {
		strbuf_add_clean(line, v->text);
		return 0;
	}
	strbuf_addf(line, "%s: %+.1f%%", v->kind == VERDICT_REPRODUCED ? "reproduced" : "not reproduced",
		    v->change_percent);
	if (reported) {
		strbuf_addstr(line, " (report said ");
		strbuf_add_clean(line, reported);
		strbuf_addch(line, ')');
	}
	if (v->kind != VERDICT_REPRODUCED) {
		why = strncmp(v->text, prefix, sizeof(prefix) - 1) ? v->text : v->text + sizeof(prefix) - 1;
		strbuf_addstr(line, ": ");
		strbuf_add_clean(line, why);
	}
	return 0;
}
