/* What klab made of an LKP report or job file, for people and programs:
 * the mapping table (each LKP parameter, the job key it set or why none)
 * as terminal lines and as JSON, and a report's facts as JSON.  'klab
 * reproduce' and 'klab job import' print the same table through these. */
#include "job/lkp.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <string.h>

/* column widths beyond which a long name or value is not padded */
#define MAX_PARAM_WIDTH 20
#define MAX_VALUE_WIDTH 28

static size_t width(const struct lkp_klab_job *j, int value, size_t max)
{
	size_t w = 0;

	for (size_t i = 0; i < j->nr_rows; i++) {
		size_t n = strlen(value ? j->rows[i].value : j->rows[i].param);
		if (n > w && n <= max)
			w = n;
	}
	return w;
}

static void pad(struct strbuf *sb, const char *s, size_t w)
{
	size_t n = strlen(s);

	strbuf_add_clean(sb, s);
	for (; n < w; n++)
		strbuf_addch(sb, ' ');
}

void lkp_table_text(struct strbuf *sb, const struct lkp_klab_job *j, const char *indent)
{
	size_t wp = width(j, 0, MAX_PARAM_WIDTH), wv = width(j, 1, MAX_VALUE_WIDTH);

	for (size_t i = 0; i < j->nr_rows; i++) {
		const struct lkp_map_row *r = &j->rows[i];

		strbuf_addstr(sb, indent);
		pad(sb, r->param, wp);
		strbuf_addstr(sb, "  ");
		pad(sb, r->value, wv);
		if (r->key) {
			strbuf_addstr(sb, "  \xe2\x86\x92 ");
			strbuf_add_clean(sb, r->key);
			strbuf_addstr(sb, ": ");
			strbuf_add_clean(sb, r->job_value ? r->job_value : "");
			if (r->why) {
				strbuf_addstr(sb, " (");
				strbuf_add_clean(sb, r->why);
				strbuf_addch(sb, ')');
			}
		} else {
			strbuf_addstr(sb, "  not mapped: ");
			strbuf_add_clean(sb, r->why ? r->why : "no klab equivalent");
		}
		strbuf_addch(sb, '\n');
	}
}

static void member(struct strbuf *sb, const char *key, const char *value, int first)
{
	strbuf_addf(sb, "%s\"%s\":", first ? "" : ",", key);
	json_add_string(sb, value);
}

void lkp_table_json(struct strbuf *sb, const struct lkp_klab_job *j)
{
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < j->nr_rows; i++) {
		const struct lkp_map_row *r = &j->rows[i];

		strbuf_addstr(sb, i ? ",{" : "{");
		member(sb, "parameter", r->param, 1);
		member(sb, "value", r->value, 0);
		member(sb, "key", r->key, 0);
		member(sb, "job_value", r->job_value, 0);
		member(sb, "why", r->why, 0);
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
}

void lkp_params_json(struct strbuf *sb, const struct lkp_params *p)
{
	int first = 1;

	strbuf_addch(sb, '{');
	for (size_t i = 0; i < p->nr; i++) {
		/* a key twice is LKP's mistake; JSON readers keep one */
		if (lkp_param(p, p->v[i].key) != p->v[i].value)
			continue;
		strbuf_addstr(sb, first ? "" : ",");
		json_add_string(sb, p->v[i].key);
		strbuf_addch(sb, ':');
		json_add_string(sb, p->v[i].value);
		first = 0;
	}
	strbuf_addch(sb, '}');
}

static void result_json(struct strbuf *sb, const struct lkp_result *x, size_t n, int selected)
{
	strbuf_addf(sb, "{\"n\":%zu,\"selected\":%s", n, selected ? "true" : "false");
	member(sb, "suite", x->suite, 0);
	strbuf_addstr(sb, ",\"params\":");
	lkp_params_json(sb, &x->params);
	member(sb, "kpi", x->kpi, 0);
	member(sb, "change", x->change, 0);
	member(sb, "verdict", x->improvement ? "improvement" : "regression", 0);
	member(sb, "machine", x->machine, 0);
	strbuf_addch(sb, '}');
}

void lkp_report_json(struct strbuf *sb, const struct lkp_report *r)
{
	strbuf_addch(sb, '{');
	member(sb, "commit", r->commit, 1);
	member(sb, "subject", r->subject, 0);
	member(sb, "parent", r->parent, 0);
	member(sb, "suite", r->suite, 0);
	strbuf_addstr(sb, ",\"params\":");
	lkp_params_json(sb, &r->params);
	member(sb, "kpi", r->kpi, 0);
	member(sb, "change", r->change, 0);
	member(sb, "verdict", r->improvement ? "improvement" : "regression", 0);
	strbuf_addf(sb, ",\"direction\":%d", r->direction);
	if (r->row) {
		strbuf_addstr(sb, ",\"row\":{");
		member(sb, "base", r->row->base, 1);
		member(sb, "head", r->row->head, 0);
		strbuf_addch(sb, '}');
	} else {
		strbuf_addstr(sb, ",\"row\":null");
	}
	if (r->patch) {
		strbuf_addstr(sb, ",\"patch\":{");
		member(sb, "url", r->patch_url, 1);
		member(sb, "base", r->patch_base, 0);
		member(sb, "link", r->patch_link, 0);
		strbuf_addch(sb, '}');
	} else {
		strbuf_addstr(sb, ",\"patch\":null");
	}
	strbuf_addstr(sb, ",\"results\":[");
	for (size_t i = 0; i < r->nr_results; i++) {
		if (i)
			strbuf_addch(sb, ',');
		result_json(sb, &r->results[i], i + 1, i == r->selected);
	}
	strbuf_addstr(sb, "]}");
}
