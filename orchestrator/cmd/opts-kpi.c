/* --kpi METRIC, as bisect start, run and compare check it (opts.h): by
 * the job file's rule, so both say the same about a bad metric. */
#include "cmd/opts.h"
#include "job/job.h"
#include "util/strbuf.h"
#include "util/util.h"

int check_kpi_option(const struct job *job, const char *kpi)
{
	struct strbuf why = STRBUF_INIT;
	int bad = check_kpi(job, kpi, &why) < 0;

	if (bad)
		error("--kpi '%s': expected %s", kpi, why.buf);
	strbuf_release(&why);
	return bad ? -1 : 0;
}
