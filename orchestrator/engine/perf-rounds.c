/* Multisection rounds for the job tester: a round's kernels built before
 * its children fork, each child's first runs, the parent's decision. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "kernel/kernel.h"
#include "util/strbuf.h"
#include "util/util.h"

/* Build a round's commit before its guests start: the children only
 * boot.  No kernel is not an error here: the parent's perf_test meets
 * the failure again (from the build records) and handles it as always. */
static void round_prebuild(struct bisect_run *r, const char *hex, char **kernel, int64_t *build_id)
{
	struct kernel_result kr;

	*kernel = NULL;
	if (perf_kernel_of(r, hex, kernel, build_id, &kr) == 0)
		printf("  %.12s built: %s\n", hex, kr.message);
	kernel_result_release(&kr);
}

/* A round's kernels, built here one after another (builds already use
 * every CPU); a commit without one gets no child, its step meets the
 * failure again in the parent. */
int perf_round_prepare(struct bisect_run *r, char (*hex)[41], int n, int *fork_slot)
{
	struct perf *p = perf_of(r);

	p->slot_kernel = xcalloc(n, sizeof(char *));
	p->slot_build = xcalloc(n, sizeof(int64_t));
	for (int i = 0; i < n; i++) {
		/* a commit that cannot change a known kernel gets no build and
		 * no child: the parent's perf_test inherits its mark */
		if (!perf_inherits_by_sources(r, hex[i]))
			round_prebuild(r, hex[i], &p->slot_kernel[i], &p->slot_build[i]);
		fork_slot[i] = p->slot_kernel[i] != NULL;
	}
	/* what the children must not share (the guests' libvirt
	 * connection) closed here, opened again when the parent next runs */
	if (p->mops->disconnect)
		p->mops->disconnect(p->mdata);
	return 0;
}

/* In slot i's child: the first runs of the ladder under the step; the
 * parent decides.  A guest failure is the step's skip here. */
int perf_slot_test(struct bisect_run *r, int i, const struct step *s, struct step_outcome *out)
{
	struct perf *p = perf_of(r);
	double *vals = NULL;
	size_t n = 0;
	char *why = NULL, label[64];
	int64_t t0 = now_ms();
	int rc;

	/* the parent closed its guests' connection before forking */
	if (p->mops->detach)
		p->mops->detach(p->mdata);
	snprintf(label, sizeof(label), "  %.12s ", s->hash);
	rc = perf_measure_to(p, p->slot_kernel[i], p->slot_build[i], s->id, label, p->pol.ladder[0], &vals, &n,
			     &why);
	if (rc > 0) {
		/* boot failure, panic, timeout: a skip, as perf_step does */
		out->result = BISECT_SKIP;
		strbuf_addstr(&out->reason, why);
		out->test_ms = now_ms() - t0;
	}
	if (p->mops->disconnect)
		p->mops->disconnect(p->mdata);
	free(vals);
	free(why);
	return rc > 0 ? 0 : rc == 0 ? 1 : -1;
}

/* The first runs are stored (or the commit did not build): the parent
 * decides as one slot would, with any extra runs. */
int perf_round_rest(struct bisect_run *r, int i, int child_ok)
{
	return child_ok || !perf_of(r)->slot_kernel[i];
}

void perf_round_release(struct bisect_run *r, int n)
{
	struct perf *p = perf_of(r);

	for (int i = 0; p->slot_kernel && i < n; i++)
		free(p->slot_kernel[i]);
	free(p->slot_kernel);
	free(p->slot_build);
	p->slot_kernel = NULL;
	p->slot_build = NULL;
}
