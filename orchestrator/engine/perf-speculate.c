/* The job tester's speculative builds (speculate.h): the commits the next
 * step may test, built on the CPUs the step's guests leave free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "engine/speculate.h"
#include "core/stats.h"
#include "kernel/kernel.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

static void spec_go(struct bisect_run *r, char (*hex)[41], const char *const *as, int n, const unsigned char *cpus,
		    size_t nr_cpus, const char *why_order);

/* what r->next[i] is, in the lines */
static const char *const spec_if[2] = { "if good", "if bad" };

/* In the builder: its own database connection (the parent's stays the
 * parent's, as a round's children do). */
static int spec_setup(void *data)
{
	struct bisect_run *r = data;
	sqlite3 *db;

	if (db_open(&db, r->lab->db_path, 0) < 0)
		return -1;
	r->lab->db = db;
	return 0;
}

static void spec_build(void *data, const char *hex, int jobs)
{
	struct bisect_run *r = data;
	struct kernel_request rq = bisect_run_kernel_request(r, hex);
	struct kernel_result kr;

	rq.jobs = jobs;
	rq.progress = PROGRESS_LINES;
	rq.indent = "";
	perf_kernel(perf_of(r), &rq, 0, &kr);
	printf("klab: %.12s: %s\n", hex, kr.message ? kr.message : "klab could not build it");
	kernel_result_release(&kr);
}

/* While step s's guests run on `kernel`: the commits the next step may
 * test (r->next) built on the CPUs that hold no vCPU of them. */
void perf_speculate_next(struct bisect_run *r, const struct step *s, const char *kernel)
{
	struct perf *p = perf_of(r);
	char hex[2][41];
	const char *why = NULL, *as[2];
	unsigned char *vcpus = NULL, *spare = NULL;
	size_t nr_vcpus = 0, nr_spare = 0, n_spare = 0;
	int n = 0, rc;

	/* (spec_off: the job's shape leaves no CPU on this host) */
	if (!r->b->build || r->slots > 1 || !p->lab->speculative_builds || p->spec.pid || p->spec_off ||
	    !p->mops->vcpu_cpus)
		return;
	for (int i = 0; i < 2; i++) {
		/* the reference phase: the first step's commit, either way */
		if (i == 1 && !strcmp(r->next[0], r->next[1]))
			as[0] = "the first step";

		/* a commit the next step would inherit by its sources needs
		 * no build */
		if (r->next[i][0] && (n == 0 || strcmp(hex[0], r->next[i])) && !perf_inherits_by_sources(r, r->next[i])) {
			memcpy(hex[n], r->next[i], 41);
			as[n++] = spec_if[i];
		}
	}
	if (!n || p->mops->use(p->mdata, kernel, s->id) != 0)
		return;
	/* the job's shape on this host first: off for good, said once */
	rc = p->mops->vcpu_cpus(p->mdata, 0, &vcpus, &nr_vcpus, &why);
	if (rc == 0 && !(n_spare = speculate_spare_cpus(vcpus, nr_vcpus, &spare, &nr_spare)))
		why = "no CPU outside the guests' vCPUs";
	if (rc != 0 || !n_spare) {
		printf("  speculative builds: off (%s)\n", why ? why : "the guests' CPUs are not known");
		p->spec_off = 1;
		goto out;
	}
	/* then beside the other klab guests running now: never on theirs */
	FREE_MANY(vcpus, spare);
	vcpus = spare = NULL;
	rc = p->mops->vcpu_cpus(p->mdata, 1, &vcpus, &nr_vcpus, &why);
	if (rc == 0 && !(n_spare = speculate_spare_cpus(vcpus, nr_vcpus, &spare, &nr_spare)))
		why = "other klab guests use the spare CPUs now";
	if (rc != 0 || !n_spare) {
		printf("  speculative builds: none for this step (%s)\n", why ? why : "the guests' CPUs are not known");
		goto out;
	}
	if (n == 2) {
		/* a step: its first run says which successor is likelier */
		perf_spec_drop(p);
		p->spec_wait.r = r;
		p->spec_wait.step = s->id;
		memcpy(p->spec_wait.hex, hex, sizeof(hex));
		p->spec_wait.cpus = spare;
		p->spec_wait.nr_cpus = nr_spare;
		spare = NULL;
		goto out;
	}
	spec_go(r, hex, as, n, spare, nr_spare, NULL);
out:
	free(vcpus);
	free(spare);
}

/* Start the builder for hex[0..n) (as: what each is) and say so. */
static void spec_go(struct bisect_run *r, char (*hex)[41], const char *const *as, int n, const unsigned char *cpus,
		    size_t nr_cpus, const char *why_order)
{
	struct perf *p = perf_of(r);
	const struct speculate_ops ops = { spec_setup, spec_build, r };
	char *log = xstrfmt("%s/speculative-builds.log", r->log_dir);

	if (speculate_start(&p->spec, (const char (*)[41])hex, n, cpus, nr_cpus, log, &ops) == 0) {
		printf("  speculative build%s while the guests run: %.12s (%s)", n > 1 ? "s" : "", hex[0], as[0]);
		if (n > 1)
			printf(", %.12s (%s)", hex[1], as[1]);
		printf(" on CPU %s at idle priority%s%s (%s)\n", p->spec.cpus, why_order ? "; " : "",
		       why_order ? why_order : "", log);
	}
	free(log);
}

void perf_spec_drop(struct perf *p)
{
	free(p->spec_wait.cpus);
	memset(&p->spec_wait, 0, sizeof(p->spec_wait));
}

/* A run of step_id stored: if it is the step whose successors wait, build
 * them, the likelier first (speculate_bad_first against the ends). */
void perf_spec_first_run(struct perf *p, int64_t step_id, double v)
{
	struct spec_pending *w = &p->spec_wait;
	char hex[2][41];
	const char *as[2];
	int bad;

	if (!w->r || w->step != step_id)
		return;
	bad = speculate_bad_first(v, stats_median(p->good, p->ng), stats_median(p->bad, p->nb));
	memcpy(hex[0], w->hex[bad], 41);
	memcpy(hex[1], w->hex[!bad], 41);
	as[0] = spec_if[bad];
	as[1] = spec_if[!bad];
	spec_go(w->r, hex, as, 2, w->cpus, w->nr_cpus, bad ? "run 1 is nearer bad" : "run 1 is nearer good");
	perf_spec_drop(p);
}

/* The job tester's settle: the builder waited for or stopped. */
void perf_settle(struct bisect_run *r, const char *hex)
{
	struct perf *p = perf_of(r);
	struct strbuf line = STRBUF_INIT;

	/* successors still waiting for their step's first run: not needed */
	perf_spec_drop(p);
	if (!p->spec.pid)
		return;
	/* a commit the step inherits by its sources is never built: no wait */
	if (hex && perf_inherits_by_sources(r, hex))
		hex = NULL;
	speculate_settle(&p->spec, hex, &line);
	if (line.len)
		printf("  %s\n", line.buf);
	strbuf_release(&line);
}
