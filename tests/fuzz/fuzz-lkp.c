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

static void map_all(const char *suite, const struct lkp_params *p, const char *kpi)
{
	for (int a = 0; a < 2; a++) {
		struct lkp_klab_job j;

		if (lkp_map(&j, suite, p, kpi, a ? LKP_ACCEL_TCG : LKP_ACCEL_KVM, "fuzz", NULL) == 0) {
			check_job(&j);
			lkp_klab_job_release(&j);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lkp_report r;
	struct lkp_jobfile jf;
	int held = error_hold(1);

	if (lkp_report_parse(&r, "fuzz", (const char *)data, size) == 0) {
		if (!hex_ok(r.commit) || !hex_ok(r.parent))
			broken("a commit or parent that is not 7-40 hex digits");
		if (!r.suite || !r.kpi || !r.change || check_kpi(NULL, r.kpi, NULL) < 0)
			broken("a report without suite or with a bad KPI");
		if (r.row && strcmp(r.row->metric, r.kpi))
			broken("the KPI's row is another metric");
		map_all(r.suite, &r.params, r.kpi);
		lkp_report_release(&r);
	} else if (r.commit || r.nr_rows || r.params.nr) {
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
