/* Marks a step inherits without booting: its kernel is byte for byte one
 * already decided (identical-kernel), or its commit cannot change a known
 * kernel by its sources (treesame-build). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/perfbisect-int.h"
#include "kernel/kbuild.h"
#include "kernel/kimage.h"
#include "kernel/ksources.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/strbuf.h"
#include "util/util.h"

/* One kernel: the same artifact (one tree), or two whose verified
 * identities name the same vmlinux and image (kimage.h): equal bytes of
 * two bzImages alone proved nothing when a cache gave one of them another
 * commit's payload. */
int perf_same_kernel(const char *a, const char *b)
{
	return !strcmp(a, b) || kimage_same_image(a, b);
}

/* A commit decided good or bad with kernel (made by build_id): of is
 * NULL when the kernel is its own build, else the commit whose kernel it
 * took unbuilt (treesame-build). */
void perf_remember_decided(struct perf *p, const char *hex, const char *kernel, int64_t build_id, const char *of,
			   enum bisect_mark mark)
{
	struct perf_decided *d;

	if (mark != BISECT_GOOD && mark != BISECT_BAD)
		return;
	ALLOC_GROW(p->decided, p->nr_decided + 1, p->alloc_decided);
	d = &p->decided[p->nr_decided++];
	d->kernel = xstrdup(kernel);
	d->build_id = build_id;
	memcpy(d->hex, hex, 41);
	memcpy(d->of, of ? of : "", of ? 41 : 1);
	d->mark = mark;
}

/* A step whose kernel image is byte for byte that of an end or of a
 * commit this run decided: the same kernel under the same job, so its
 * mark is inherited and nothing boots (klab's builds are reproducible:
 * fixed timestamp, user, host and build number; commits that touch no
 * file the config builds, as comments, documentation or drivers the
 * guest does not have, give the same image).  Only before the commit has
 * runs of its own (a multisection slot's runs decide as measured).
 * 1 inherited (out filled), 0 not. */
int perf_inherit_identical(struct bisect_run *r, const struct step *s, const char *kernel, int64_t build_id,
			   struct step_outcome *out)
{
	struct perf *p = perf_of(r);
	double *vals = NULL;
	size_t n = 0, nc = p->nr_decided + 2;
	int64_t t0 = now_ms();

	if (db_step_metric_values(r->lab->db, s->id, p->job.kpi, &vals, &n) < 0 || n) {
		free(vals);
		return 0;
	}
	for (size_t i = 0; i < nc; i++) {
		const char *other = i == 0 ? p->good_kernel : i == 1 ? p->bad_kernel : p->decided[i - 2].kernel;
		const char *hex = i < 2 ? perf_end_hex(r, i) : p->decided[i - 2].hex;
		enum bisect_mark mark = i == 0 ? BISECT_GOOD : i == 1 ? BISECT_BAD : p->decided[i - 2].mark;
		char *text;

		if (!other || !perf_same_kernel(kernel, other))
			continue;
		text = xstrfmt("%s: the kernel is byte for byte %.12s's (vmlinux and image, both verified), so it behaves as that one did (not booted)",
			       bisect_mark_to_string(mark), hex);
		db_verdict_store(r->lab->db, s->id, "identical-kernel", NAN, NAN, NULL, text);
		strbuf_addf(&out->reason, "identical-kernel: %s", text);
		out->result = mark;
		out->test_ms = now_ms() - t0;
		free(text);
		/* decided too, as perf_inherit_treesame's steps are: its own source
		 * set serves the commits near it (without it, treesame-build
		 * could only look as far as the ends, and on a range of comment
		 * and driver changes every step was built:
		 * tests/bench/treesame-range.sh) */
		perf_remember_decided(p, s->hash, kernel, build_id, NULL, mark);
		return 1;
	}
	return 0;
}

/* The end or decided commit whose kernel commit hex cannot differ from
 * (issue 19, ksources_kernel_serves): the trees differ in no file that
 * kernel's build read (its source set, stored beside its image) and in
 * nothing that matters to a build by name, and that kernel was made with
 * the bisection's recipe as it is now.  Decided commits are tried latest
 * first (the nearest), then the ends (a half's, after a split: perf_end_hex).  Its index (decided, then good 0
				       * and bad 1 after them) with touched filled, or -1: any doubt (no set,
				       * another recipe, a commit the repository lacks) is -1, build as always. */
static int treesame_with(struct bisect_run *r, const char *hex, struct strbuf *touched)
{
	struct perf *p = perf_of(r);
	size_t nc = p->nr_decided + 2;
	char rid[41];
	int hold, found = -1;

	if (!r->b->build || !r->repo)
		return -1;
	hold = error_hold(1);
	if (kbuild_recipe_id(&r->recipe, rid) < 0)
		nc = 0;
	for (size_t k = 0; k < nc && found < 0; k++) {
		size_t i = k < p->nr_decided ? p->nr_decided - 1 - k : k;
		const char *kernel = i < p->nr_decided ? p->decided[i].kernel
				     : i == p->nr_decided ? p->good_kernel : p->bad_kernel;
		const char *from = i < p->nr_decided ? p->decided[i].hex : perf_end_hex(r, i > p->nr_decided);

		if (kernel && ksources_kernel_serves(r->repo, kernel, rid, from, hex, r->lab->comment_only_skip,
						     touched) == 1)
			found = (int)i;
	}
	error_hold(hold);
	return found;
}

/* Whether commit hex would take a known kernel's mark by its sources
 * (treesame_with), for callers that need no more than that: no build. */
int perf_inherits_by_sources(struct bisect_run *r, const char *hex)
{
	struct strbuf touched = STRBUF_INIT;
	int found = treesame_with(r, hex, &touched) >= 0;

	strbuf_release(&touched);
	return found;
}

/* A step whose commit cannot change an end's or a decided commit's
 * kernel (treesame_with) inherits that commit's mark, with no build and
 * no boot, and says so.  Only before the commit has runs of its own.  1
 * inherited (out filled), 0 not. */
int perf_inherit_treesame(struct bisect_run *r, const struct step *s, struct step_outcome *out)
{
	struct perf *p = perf_of(r);
	struct strbuf touched = STRBUF_INIT;
	double *vals = NULL;
	size_t n = 0;
	int64_t t0 = now_ms();
	int i;
	char from[41], *kernel, *text, *why;
	int64_t build_id;
	enum bisect_mark mark;

	if (!r->b->build || db_step_metric_values(r->lab->db, s->id, p->job.kpi, &vals, &n) < 0 || n ||
	    (i = treesame_with(r, s->hash, &touched)) < 0) {
		free(vals);
		strbuf_release(&touched);
		return 0;
	}
	if ((size_t)i < p->nr_decided) {
		memcpy(from, p->decided[i].hex, 41);
		kernel = xstrdup(p->decided[i].kernel);
		build_id = p->decided[i].build_id;
		mark = p->decided[i].mark;
	} else {
		memcpy(from, perf_end_hex(r, (size_t)i > p->nr_decided), 41);
		kernel = xstrdup((size_t)i == p->nr_decided ? p->good_kernel : p->bad_kernel);
		build_id = (size_t)i == p->nr_decided ? p->good_build : p->bad_build;
		mark = (size_t)i == p->nr_decided ? BISECT_GOOD : BISECT_BAD;
	}
	if (!touched.len)
		strbuf_addstr(&touched, "no file");
	/* ksources_same_kernel marks the sources it let pass for their comments */
	if (strstr(touched.buf, "comments only"))
		why = xstrfmt("changes only comments in the files the kernel of %.12s was made from, or files it "
			      "never read (%s)", from, touched.buf);
	else
		why = xstrfmt("touches only files the kernel of %.12s never read (%s)", from, touched.buf);
	printf("klab: %.12s %s: %s without a build\n", s->hash, why, bisect_mark_to_string(mark));
	text = xstrfmt("%s: %s, so its kernel is that one (not built, not booted)", bisect_mark_to_string(mark), why);
	db_verdict_store(r->lab->db, s->id, "treesame-build", NAN, NAN, NULL, text);
	strbuf_addf(&out->reason, "treesame-build: %s", text);
	out->result = mark;
	out->test_ms = now_ms() - t0;
	/* its kernel is that one: a later step may compare with it */
	perf_remember_decided(p, s->hash, kernel, build_id, from, mark);
	free(why);
	free(text);
	free(kernel);
	strbuf_release(&touched);
	return 1;
}
