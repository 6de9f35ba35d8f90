/* A bisection step's verdict ladder: a commit's runs until the verdict
 * rules decide, each extra run after a fresh reference run, and the
 * fresh runs that must confirm a commit between the ends before the range
 * splits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "core/verdict.h"
#include "util/strbuf.h"
#include "util/util.h"

/* A commit's runs up to `next` (all of them in vals/t/n, in time order):
 * the first ladder[0] in one go, then one by one, each after a fresh
 * reference run (good and bad in turn); under drift (side_age) one by
 * one, an end running first when its side has none among the last
 * side_age runs.  0; 1 when the guest failed (boot failure, panic,
 * timeout: not a performance verdict; why in reason); -1 on error. */
static int step_runs_to(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
			size_t next, double **vals, double **t, size_t *n, struct strbuf *reason)
{
	struct perf *p = perf_of(r);
	int rc, sides = p->drift && p->pol.side_age;
	char *why = NULL;

	do {
		size_t upto = next;
		/* a reference run's next boot is this commit's: its guest is
		 * made ahead */
		p->next_kernel = kernel;
		if (sides) {
			for (int k = 0; k < 2; k++)
				if (perf_side_stale(p, k, 1, p->pol.side_age))
					perf_reference_run_of(r, k);
			upto = *n + 1;
		} else if (p->drift || *n >= p->pol.ladder[0]) {
			perf_reference_run_turn(r);
			upto = *n + 1;
		}
		p->next_kernel = NULL;
		free(*vals);
		free(*t);
		*vals = *t = NULL;
		free(why);
		rc = perf_measure_timed(p, kernel, build_id, s->id, "  ", upto, vals, t, n, &why);
	} while (!rc && *n < next);
	if (rc && why)	/* rc < 0 with a why: the environment failed */
		strbuf_addstr(reason, why);
	free(why);
	return rc;
}

/* The references a commit is judged against: the ends' runs, under
 * drift (side_age) each side's, its end's and the decided commits'
 * (side[] holds them). */
static void step_refs(struct perf *p, struct runs_buf side[2], struct verdict_runs *G, struct verdict_runs *B)
{
	*G = perf_good_runs(p);
	*B = perf_bad_runs(p);
	if (p->drift && p->pol.side_age) {
		perf_side_refs(p, 0, &side[0]);
		perf_side_refs(p, 1, &side[1]);
		*G = (struct verdict_runs){ side[0].v, side[0].t, side[0].n };
		*B = (struct verdict_runs){ side[1].v, side[1].t, side[1].n };
	}
}

/* A commit's runs until the rules decide (verdict_classify_timed): the
 * first runs in one go and extra runs one by one, each after a fresh
 * reference run (good and bad in turn).  Under drift the runs go one by
 * one, judged against each side's latest runs (its end's and those of
 * the commits decided like it), an end running again first when its side
 * has none among the last pol.side_age runs (with side_age 0: a
 * reference run before every run).  References that look stale (the
 * commit clearly outside both ends) get one fresh run of each end, once.
 * A skip when the guest fails (with its reason) or the cap is reached,
 * and when the commit is between the ends (*between: two changes, the
 * loop splits). */
enum bisect_mark perf_step(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
			   struct strbuf *reason, int *between)
{
	struct perf *p = perf_of(r);
	struct verdict v;
	struct runs_buf side[2] = { { 0 } };
	double *vals = NULL, *t = NULL;
	size_t n = 0, want = p->pol.ladder[0];
	int refreshed = 0;
	enum bisect_mark res = BISECT_UNMARKED;

	if (!kernel) {
		strbuf_addstr(reason, "no kernel to boot");
		return BISECT_UNMARKED;
	}
	for (;;) {
		/* a step resumed after a crash has its runs: `next` from them */
		size_t next = n >= want ? n + 1 : want;
		struct verdict_runs G, B, C;
		int rc;

		rc = step_runs_to(r, s, kernel, build_id, next, &vals, &t, &n, reason);
		if (rc) {
			if (rc > 0)
				res = BISECT_SKIP;
			goto out;
		}
		step_refs(p, side, &G, &B);
		C = (struct verdict_runs){ vals, t, n };
		if (verdict_classify_timed(&v, &p->pol, &G, &B, &C, p->drift, p->job.direction) < 0)
			goto out;
		if (v.stale && !v.drift && !refreshed) {
			refreshed = 1;
			printf("  %s: the ends may have moved since they were measured; a fresh run of each\n", v.text);
			perf_reference_run_turn(r);
			perf_reference_run_turn(r);
			continue;
		}
		perf_note_drift(r, &v);
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= n)
			break;
		if (p->drift && p->pol.side_age)
			printf("  %s: %u runs needed, an end's run first when its side has none recent\n", v.text,
			       v.next_runs);
		else
			printf("  %s: %u runs needed, each after a fresh reference run\n", v.text, v.next_runs);
		want = v.next_runs;
	}
	if (v.kind == VERDICT_BETWEEN && !p->half && p->pol.between_fresh) {
		/* two changes are a strong claim: fresh runs of the commit
		 * must say "between" on their own before the range splits */
		size_t n0 = n, fresh = p->pol.between_fresh;
		struct verdict_runs G, B, F;
		int rc;

		printf("  %s: %zu fresh runs must say so too before the range splits\n", v.text, fresh);
		for (;;) {
			rc = step_runs_to(r, s, kernel, build_id, n0 + fresh, &vals, &t, &n, reason);
			if (rc) {
				if (rc > 0)
					res = BISECT_SKIP;
				goto out;
			}
			step_refs(p, side, &G, &B);
			F = (struct verdict_runs){ vals + n0, t + n0, n - n0 };
			if (verdict_between_fresh(&v, &p->pol, &G, &B, &F, p->drift, p->job.direction) < 0)
				goto out;
			perf_note_drift(r, &v);
			/* it asks only for more runs than it has, up to the cap */
			if (v.kind != VERDICT_NEED_MORE)
				break;
			printf("  %s: %u fresh runs\n", v.text, v.next_runs);
			fresh = v.next_runs;
		}
	}
	perf_store_verdict(r, s->id, &v);
	strbuf_addf(reason, "%s: %s", v.rule, v.text);
	res = verdict_mark(v.kind);
	/* its runs join its side's references (used under drift) */
	if (res == BISECT_GOOD || res == BISECT_BAD)
		perf_side_add(p, res == BISECT_BAD, vals, t, n);
	/* a skip; the loop splits the range there (the whole range only) */
	*between = v.kind == VERDICT_BETWEEN;
out:
	runs_buf_release(&side[0]);
	runs_buf_release(&side[1]);
	free(vals);
	free(t);
	return res;
}
