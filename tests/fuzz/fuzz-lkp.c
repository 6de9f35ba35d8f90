/* libFuzzer harness for orchestrator/job/lkp.c: the input is an LKP report
 * (a mail, hostile) and an lkp-tests job file at once.  Whatever parses
 * must keep the parsers' promises, and every job lkp_map makes of it
 * must be one klab's job parser accepts, free of control characters.
 * Built and run by run-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "job/lkp.h"
#include "util/strbuf.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what)
{
	fprintf(stderr, "fuzz-lkp: %s\n", what);
	abort();
}

static int hex_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 7 && n <= 40 && strspn(s, "0123456789abcdef") == n;
}

static void check_job(const struct lkp_klab_job *j)
{
	struct job job;

	for (const char *c = j->yaml; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\n')
			broken("a control character in a job");
	if (job_parse_buffer(&job, "fuzz.yaml", j->yaml, strlen(j->yaml)) < 0)
		broken("lkp_map made a job that job.c refuses");
	job_release(&job);
	if (!j->name || !*j->name || strchr(j->name, '/'))
		broken("a job name that is not a file name");
}

static void map_all(const char *suite, const struct lkp_params *p, const struct lkp_report *r)
{
	for (int a = 0; a < 2; a++) {
		struct lkp_map_in in = { .suite = suite, .params = p, .accel = a ? LKP_ACCEL_TCG : LKP_ACCEL_KVM,
					 .origin = "fuzz", .kbuild_source = "/nonexistent-tree" };
		struct lkp_klab_job j;
		struct strbuf sb = STRBUF_INIT;

		if (r) {
			in.kpi = r->kpi;
			in.change = r->change;
			in.improvement = r->improvement;
			in.direction = r->direction;
		}
		if (lkp_map(&j, &in) == 0) {
			check_job(&j);
			lkp_table_text(&sb, &j, "  ");
			lkp_table_json(&sb, &j);
			for (size_t i = 0; i < sb.len; i++)
				if ((unsigned char)sb.buf[i] < 0x20 && sb.buf[i] != '\n')
					broken("a control character in the mapping table");
			lkp_klab_job_release(&j);
		}
		strbuf_release(&sb);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lkp_report r;
	struct lkp_jobfile jf;
	int held = error_hold(1);
	char *suite = lkp_jobfile_suite((const char *)data, size);

	free(suite);
	if (lkp_report_parse(&r, "fuzz", (const char *)data, size) == 0) {
		struct strbuf sb = STRBUF_INIT;

		if (!hex_ok(r.commit) || (r.parent && !hex_ok(r.parent)))
			broken("a commit or parent that is not 7-40 hex digits");
		if (!r.suite || !r.kpi || !r.change || check_kpi(NULL, r.kpi, NULL) < 0)
			broken("a report without suite or with a bad KPI");
		if (r.change[0] != '-' && r.change[0] != '+')
			broken("an unsigned change");
		if (r.direction != (r.change[0] == '-' ? 1 : -1))
			broken("a direction that does not bisect the change");
		if (r.row && strcmp(r.row->metric, r.kpi))
			broken("the KPI's row is another metric");
		if (!r.nr_results || strcmp(r.results[0].kpi, r.kpi))
			broken("the report's own result is not the first");
		lkp_report_json(&sb, &r);
		strbuf_release(&sb);
		map_all(r.suite, &r.params, &r);
		for (size_t n = 2; n <= r.nr_results && n <= 4; n++) {
			if (lkp_report_select(&r, n) < 0)
				broken("a listed result cannot be picked");
			map_all(r.suite, &r.params, &r);
		}
		lkp_report_release(&r);
	} else if (r.commit || r.nr_rows || r.params.nr || r.nr_results) {
		broken("a failed parse left data");
	}
	if (lkp_jobfile_parse(&jf, "fuzz", (const char *)data, size) == 0) {
		if (!jf.suite || jf.nr_combos > LKP_MAX_COMBINATIONS)
			broken("a job file without suite or with too many combinations");
		for (size_t i = 0; i < jf.nr_combos && i < 8; i++)
			map_all(jf.suite, &jf.combos[i], NULL);
		lkp_jobfile_release(&jf);
	}
	error_hold(held);
	return 0;
}
