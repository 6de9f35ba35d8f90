/* klab compare: two or more run sets side by side with LKP's rule and
 * layout — kernels of several commits under one job, one kernel under
 * job variants (--set), or run sets already stored (no guest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/klab.h"
#include "cmd/opts.h"
#include "engine/rev-kernel.h"
#include "engine/runcompare-print.h"
#include "lab/db.h"
#include "guest/guest.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "lab/lab.h"
#include "guest/measure.h"
#include "engine/runcompare.h"
#include "util/strbuf.h"
#include "util/util.h"

static const char *const compare_forms[] = {
	"--job --repo --rev --rev... [--runs] [--kpi] [--json] [--html] [guest options] [config options]",
	"--job --repo --rev --set --set... [options]",
	"--runset --runset... [--kpi] [--json] [--html]",
	NULL
};
static const struct opt_usage compare_usage = {
	"compare", compare_forms,
	"Measure sides interleaved (A B A B ...), N runs each, and compare them with LKP's\n"
	"rule, the first the base: commits, one commit's job variants, or stored run sets.",
	"COMPARE"
};

#define MAX_SIDES 16

struct side_arg {
	const char *text;	/* --rev REV or --set KEY=VAL,... as given */
	struct job job;
	int job_parsed;
	char *kernel;
	int64_t build_id;
	char hex[41];
};

/* The settings of one --set argument ("k=v,k=v"). */
static int parse_sets(const char *arg, struct job_set **sets, size_t *n)
{
	char *copy = xstrdup(arg), *save = NULL, *tok;
	int ret = 0;

	*sets = NULL;
	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		*sets = xrealloc(*sets, (*n + 1) * sizeof(**sets));
		if (job_set_parse(&(*sets)[*n], tok) < 0) {
			ret = -1;
			break;
		}
		if (!strcmp((*sets)[*n].key, "kconfig") || !strncmp((*sets)[*n].key, "kconfig.", 8)) {
			(*n)++;
			ret = error("--set %s: a variant with other kernel config fragments is another kernel: "
				    "compare two commits' builds with --rev instead", tok);
			break;
		}
		(*n)++;
	}
	if (!*n && !ret)
		ret = error("--set '%s': expected KEY=VALUE", arg);
	free(copy);
	if (ret < 0) {
		job_sets_release(*sets, *n);
		*sets = NULL;
		*n = 0;
	}
	return ret;
}

static int compare_stored(const struct global_opts *g, const int64_t *ids, size_t n, const char *kpi, int json,
			  const char *html)
{
	struct global_opts ro = *g;
	struct lab lab;
	int ret;

	/* nothing is written: a read-only lab will do */
	ro.access = LAB_READ;
	if (open_lab(&ro, &lab) < 0)
		return EXIT_FAIL;
	ret = runcmp_print(lab.db, ids, NULL, n, kpi, json, html) < 0 ? EXIT_FAIL : EXIT_OK;
	lab_close(&lab);
	return ret;
}

/* What `klab compare` was given. */
struct compare_args {
	const char *job_path, *repo, *kpi, *html, *revs[MAX_SIDES], *sets[MAX_SIDES];
	int64_t runset_ids[MAX_SIDES];
	size_t nr_revs, nr_sets, nr_runsets;
	unsigned long runs;
	int json;
	struct guest_env_opts geo;
	struct recipe_opts ro;
};

/* A side: --rev, --set or --runset (o->value: the arguments). */
static int add_side(const struct opt *o, const char *arg)
{
	struct compare_args *a = o->value;
	unsigned long v;
	int rc;

	if (a->nr_revs + a->nr_sets + a->nr_runsets >= MAX_SIDES)
		return error("compare takes at most %d sides", MAX_SIDES);
	if (!strcmp(o->long_name, "rev")) {
		a->revs[a->nr_revs++] = arg;
		return 0;
	}
	if (!strcmp(o->long_name, "set")) {
		a->sets[a->nr_sets++] = arg;
		return 0;
	}
	rc = opt_number(arg, 1, 1UL << 62, &v);
	if (rc < 0)
		return error("--runset takes a run set id (a positive number), got '%s'%s", arg,
			     rc == -2 ? ": out of range" : "");
	a->runset_ids[a->nr_runsets++] = (int64_t)v;
	return 0;
}

/* The options: -1 to go on, else the exit status. */
static int compare_parse(int argc, char **argv, struct compare_args *a)
{
	struct opt opts[] = {
		OPT_STRING(0, "job", &a->job_path, "FILE", "the job file (klab-job(5))"),
		OPT_STRING(0, "repo", &a->repo, "PATH", "the kernel repository"),
		OPT_CALLBACK(0, "rev", a, "REV", "a side's commit (two or more; one with --set)", add_side),
		OPT_CALLBACK(0, "set", a, "KEY=VAL[,...]", "a side's job variant: thp.enabled=never, runtime=20s",
			     add_side),
		OPT_CALLBACK(0, "runset", a, "ID", "a stored run set (two or more)", add_side),
		OPT_UINT(0, "runs", &a->runs, "N", "runs per side (default: the job's repeat)", 1, 100),
		OPT_STRING(0, "kpi", &a->kpi, "METRIC", "the metric to headline (default: the job's kpi)"),
		OPT_BOOL(0, "json", &a->json, "one JSON document instead of the table"),
		OPT_STRING(0, "html", &a->html, "FILE", "also write the comparison as a page"),
		OPT_GUEST_ROWS(&a->geo),
		OPT_RECIPE_ROWS(&a->ro),
		OPT_END()
	};

	argc = parse_options(argc, argv, &compare_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&compare_usage, "compare takes no arguments beyond its options (got '%s')", argv[0]);
	if (check_no_controls("--html", a->html) < 0 || (a->kpi && check_kpi_option(NULL, a->kpi) < 0))
		return EXIT_USAGE;
	return -1;
}

/* The measuring forms' checks (not --runset's): 0, or -1 said. */
static int compare_check(struct compare_args *a)
{
	if (!a->job_path || !a->repo || !a->nr_revs)
		return error("compare needs --job, --repo and --rev (or --runset IDs; see 'klab compare --help')");
	if (a->nr_sets ? a->nr_revs != 1 || a->nr_sets < 2 : a->nr_revs < 2)
		return error(a->nr_sets ? "--set compares variants of one job on one kernel: one --rev and two or more --set"
					: "compare needs two or more --rev (or one --rev and two or more --set)");
	if (check_no_controls("--job", a->job_path) < 0 || check_no_controls("--repo", a->repo) < 0 ||
	    guest_opts_check(&a->geo, "compare") < 0)
		return -1;
	for (size_t i = 0; i < a->nr_revs; i++)
		if (check_no_controls("--rev", a->revs[i]) < 0)
			return -1;
	if (a->json)
		a->geo.quiet = 1;
	return 0;
}

/* Side i's job: the file's, or the file with its --set applied; --runs
 * and --kpi on top.  0, or the exit code (message said). */
static int side_job(const struct compare_args *a, size_t i, const char *buf, size_t len, struct side_arg *s)
{
	s->text = a->nr_sets ? a->sets[i] : a->revs[i];
	if (a->nr_sets) {
		struct job_set *js;
		size_t njs;
		char *what;
		int rc;

		if (check_no_controls("--set", a->sets[i]) < 0 || parse_sets(a->sets[i], &js, &njs) < 0)
			return EXIT_USAGE;
		what = xstrfmt("--set %s", a->sets[i]);
		rc = job_parse_buffer_sets(&s->job, a->job_path, buf, len, js, njs, what);
		free(what);
		job_sets_release(js, njs);
		if (rc < 0)
			return EXIT_USAGE;
	} else if (job_parse_file(&s->job, a->job_path) < 0) {
		return EXIT_FAIL;
	}
	s->job_parsed = 1;
	if (a->runs)
		s->job.repeat = (unsigned)a->runs;
	if (a->kpi) {
		if (check_kpi_option(&s->job, a->kpi) < 0)
			return EXIT_USAGE;
		free(s->job.kpi);
		s->job.kpi = xstrdup(a->kpi);
	}
	return 0;
}

/* Every side's job, one KPI across them: 0, or the exit code. */
static int side_jobs(const struct compare_args *a, struct side_arg *sides, size_t nr_sides)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = 0;

	if (a->nr_sets && read_file(a->job_path, 1 << 20, &buf, &len) < 0)
		return EXIT_FAIL;
	for (size_t i = 0; i < nr_sides && !rc; i++)
		rc = side_job(a, i, buf, len, &sides[i]);
	free(buf);
	if (rc)
		return rc;
	/* one KPI across the sides, or there is nothing to compare */
	for (size_t i = 1; i < nr_sides; i++)
		if (strcmp(sides[i].job.kpi, sides[0].job.kpi)) {
			error("%s: the KPI would be %s, the first side's is %s: the sides must share one", sides[i].text,
			      sides[i].job.kpi, sides[0].job.kpi);
			return EXIT_USAGE;
		}
	return 0;
}

/* Every side's kernel (variants of one commit share it) and its row of
 * the measurement.  0, or -1 said. */
static int side_kernels(struct lab *lab, const struct compare_args *a, const struct kbuild_recipe *recipe,
			struct side_arg *sides, struct measure_side *ms, size_t nr_sides)
{
	for (size_t i = 0; i < nr_sides; i++) {
		struct side_arg *s = &sides[i];
		const char *rev = a->nr_sets ? a->revs[0] : s->text;
		size_t j;

		for (j = 0; j < i && strcmp(a->nr_sets ? a->revs[0] : sides[j].text, rev); j++)
			;
		if (j < i) {
			s->kernel = xstrdup(sides[j].kernel);
			s->build_id = sides[j].build_id;
			memcpy(s->hex, sides[j].hex, sizeof(s->hex));
		} else if (rev_kernel(lab, a->repo, rev, recipe, a->geo.quiet, &s->kernel, &s->build_id, s->hex) < 0) {
			return -1;
		}
		ms[i].label = s->text;
		ms[i].job = &s->job;
		ms[i].kernel = s->kernel;
		ms[i].build_id = s->build_id;
		ms[i].commit_hash = s->hex;
	}
	/* sides of one job file share a guest environment */
	if (!a->nr_sets)
		for (size_t i = 1; i < nr_sides; i++)
			ms[i].job = ms[0].job;
	return 0;
}

/* The sides booted in turn, then the comparison printed: the exit code. */
static int measure_and_print(struct lab *lab, const struct compare_args *a, struct side_arg *sides,
			     struct measure_side *ms, size_t nr_sides, unsigned runs)
{
	struct measure m = { 0 };
	int64_t ids[MAX_SIDES];
	const char *labels[MAX_SIDES];
	char *why = NULL;
	int rc;

	if (!a->geo.quiet)
		printf("compare: %zu sides, %u runs each, interleaved\n", nr_sides, runs);
	if (measure_begin(&m, lab, ms, nr_sides, &a->geo, runs) < 0) {
		measure_end(&m);
		return EXIT_FAIL;
	}
	rc = measure_to(&m, runs, &why);
	measure_end(&m);
	if (rc) {
		if (rc > 0)
			error("the comparison stopped: %s (the runs so far are stored)", why);
		free(why);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < nr_sides; i++) {
		ids[i] = ms[i].run_set_id;
		labels[i] = sides[i].text;
	}
	if (!a->geo.quiet)
		fputc('\n', stdout);
	return runcmp_print(lab->db, ids, labels, nr_sides, a->kpi, a->json, a->html) < 0 ? EXIT_FAIL : EXIT_OK;
}

int cmd_compare(int argc, char **argv, const struct global_opts *g)
{
	struct compare_args a = { 0 };
	struct side_arg sides[MAX_SIDES];
	struct measure_side ms[MAX_SIDES];
	struct kbuild_recipe recipe = { 0 };
	struct job base = { 0 };
	struct lab lab;
	size_t nr_sides = 0;
	int ret, lab_opened = 0, base_parsed = 0, recipe_made = 0;

	memset(sides, 0, sizeof(sides));
	memset(ms, 0, sizeof(ms));
	if ((ret = compare_parse(argc, argv, &a)) >= 0)
		goto out;
	ret = EXIT_USAGE;
	if (a.nr_runsets) {
		if (a.nr_revs || a.nr_sets || a.job_path || a.repo) {
			error("--runset compares stored run sets: no --job, --repo, --rev or --set with it");
			goto out;
		}
		if (a.nr_runsets < 2) {
			error("compare needs two or more run sets (see 'klab compare --help')");
			goto out;
		}
		ret = compare_stored(g, a.runset_ids, a.nr_runsets, a.kpi, a.json, a.html);
		goto out;
	}
	if (compare_check(&a) < 0)
		goto out;

	/* the jobs: the file's, or one variant per --set */
	ret = EXIT_FAIL;
	if (job_parse_file(&base, a.job_path) < 0)
		goto out;
	base_parsed = 1;
	nr_sides = a.nr_sets ? a.nr_sets : a.nr_revs;
	if ((ret = side_jobs(&a, sides, nr_sides)))
		goto out;
	ret = EXIT_FAIL;
	if (!a.runs)
		a.runs = base.repeat;

	if (open_lab(g, &lab) < 0)
		goto out;
	lab_opened = 1;
	if (guest_opts_check_host(&lab, &a.geo) < 0)
		goto out;
	/* what the guests need, checked before anything is built */
	for (size_t i = 0; i < nr_sides; i++)
		if (guest_env_check(&lab, &sides[i].job, &a.geo) < 0)
			goto out;
	/* one recipe (the job's fragments: a variant never changes them) */
	if (recipe_for_job(&a.ro, &base, &recipe) < 0)
		goto out;
	recipe_made = 1;
	if (side_kernels(&lab, &a, &recipe, sides, ms, nr_sides) < 0)
		goto out;
	ret = measure_and_print(&lab, &a, sides, ms, nr_sides, (unsigned)a.runs);
out:
	measure_sides_release(ms, nr_sides);
	for (size_t i = 0; i < nr_sides; i++) {
		if (sides[i].job_parsed)
			job_release(&sides[i].job);
		free(sides[i].kernel);
	}
	if (base_parsed)
		job_release(&base);
	if (recipe_made)
		kbuild_recipe_release(&recipe);
	recipe_opts_release(&a.ro);
	if (lab_opened)
		lab_close(&lab);
	return ret;
}
