/* klab run: one job on one kernel, `repeat` boots, every sample stored,
 * and an LKP-style summary (mean ± %stddev per metric). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/klab.h"
#include "cmd/opts.h"
#include "engine/rev-kernel.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "lab/lab.h"
#include "guest/guest.h"
#include "guest/measure.h"
#include "kernel/kernel.h"
#include "core/stats.h"
#include "util/strbuf.h"
#include "util/util.h"

static const char *const run_forms[] = {
	"--job (--kernel | --repo --rev) [--repeat] [--kpi] [guest options] [config options]", NULL
};
static const struct opt_usage run_usage = {
	"run", run_forms,
	"Boot the kernel in libvirt guests shaped as the job says (vCPUs pinned, NUMA\n"
	"cells bound), run the job's benchmark once per boot, store every sample and\n"
	"print each metric's mean and %stddev.  --repo/--rev builds the commit first.",
	"RUN"
};

struct metric_row {
	char *name;
	double *per_run;	/* one value per successful run (mean over its seqs) */
	size_t n;
	int series;		/* more than one seq in a run */
};

struct summary {
	struct metric_row *rows;
	size_t nr, alloc;
};

static struct metric_row *summary_row(struct summary *s, const char *name)
{
	for (size_t i = 0; i < s->nr; i++)
		if (!strcmp(s->rows[i].name, name))
			return &s->rows[i];
	ALLOC_GROW(s->rows, s->nr + 1, s->alloc);
	memset(&s->rows[s->nr], 0, sizeof(s->rows[0]));
	s->rows[s->nr].name = xstrdup(name);
	return &s->rows[s->nr++];
}

/* One run's metrics: each name's value is the mean over its seqs (the
 * per-second or per-task series). */
static void summary_add(struct summary *s, const struct result_metric *m, size_t n, size_t run_index)
{
	for (size_t i = 0; i < n; i++) {
		struct metric_row *row = summary_row(s, m[i].name);
		double sum = 0;
		size_t cnt = 0;
		if (row->n > run_index)
			continue;	/* already folded for this run */
		for (size_t j = i; j < n; j++)
			if (!strcmp(m[j].name, m[i].name)) {
				sum += m[j].value;
				cnt++;
			}
		if (cnt > 1)
			row->series = 1;
		row->per_run = xrealloc(row->per_run, (run_index + 1) * sizeof(double));
		/* a metric absent from an earlier run: pad with NAN, skipped below */
		for (size_t k = row->n; k < run_index; k++)
			row->per_run[k] = NAN;
		row->per_run[run_index] = sum / (double)cnt;
		row->n = run_index + 1;
	}
}

static void summary_release(struct summary *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		free(s->rows[i].name);
		free(s->rows[i].per_run);
	}
	free(s->rows);
}

static int cmp_rows(const void *a, const void *b)
{
	return strcmp(((const struct metric_row *)a)->name, ((const struct metric_row *)b)->name);
}

static void print_row(const struct metric_row *row, const char *kpi)
{
	double v[1024];
	size_t n = 0;

	for (size_t i = 0; i < row->n && n < 1024; i++)
		if (!isnan(row->per_run[i]))
			v[n++] = row->per_run[i];
	if (!n)
		return;
	printf("%16.6g %s%4.0f%%  %-3zu %s%s%s\n", stats_mean(v, n), n > 1 ? "±" : " ",
	       stats_cv_percent(v, n), n, row->name, row->series ? " (mean of series)" : "",
	       !strcmp(row->name, kpi) ? "   <- KPI" : "");
}

static int build_kernel(struct lab *lab, const char *repo_arg, const char *rev, struct recipe_opts *ro,
			const struct job *job, int quiet, char **bzimage, int64_t *build_id, char hex[41])
{
	struct kbuild_recipe recipe = { 0 };
	int ret = -1;

	if (recipe_for_job(ro, job, &recipe) < 0)
		return -1;
	ret = rev_kernel(lab, repo_arg, rev, &recipe, quiet, bzimage, build_id, hex);
	kbuild_recipe_release(&recipe);
	return ret;
}

/* What `klab run` prints around run_job_on_kernel's boots. */
static void run_started(const struct job_run *jr, void *data)
{
	const struct job *job = jr->job;
	const struct guest_env *ge = jr->ge;

	(void)data;
	printf("run %lld: %s %s, %u boot%s, kernel %s\n", (long long)jr->run_set_id, job->suite, job->testcase,
	       jr->boots, jr->boots == 1 ? "" : "s", jr->geo->kernel);
	printf("guest: %u vCPU%s, %u NUMA node%s, %llu MiB, %s; accelerator %s (%s)\n", job->guest.vcpus,
	       job->guest.vcpus == 1 ? "" : "s", job->guest.numa_nodes, job->guest.numa_nodes == 1 ? "" : "s",
	       (unsigned long long)job->guest.memory_mb, guest_env_pinned(ge) ? "pinned" : "unpinned",
	       accel_name(guest_env_accel(ge)), guest_env_accel_why(ge));
	printf("initramfs %s (%s)\n", guest_env_initrd(ge), guest_env_base_hit(ge) ? "cached base" : "base built now");
	if (guest_env_host_name(ge))
		printf("host %s (%s)\n", guest_env_host_name(ge), guest_env_uri(ge));
	fflush(stdout);
}

static void run_booted(const struct job_run *jr, unsigned i, const struct guest_result *gr, void *data)
{
	struct summary *sum = data;
	char b1[32], b2[32];
	int has_kpi = !isnan(guest_result_kpi(gr, jr->job->kpi));

	printf("boot %u/%u: %-10s agent after %s, run %s, %zu metrics, %zu /proc values; pinning %s%s%s\n", i,
	       jr->boots, vm_outcome_name(gr->outcome),
	       gr->hello_ms >= 0 ? fmt_duration(gr->hello_ms, b1, sizeof(b1)) : "-",
	       fmt_duration(gr->total_ms, b2, sizeof(b2)), gr->nr_metrics, gr->nr_mons,
	       gr->pinning ? gr->pinning : "?", gr->kernel_release ? "; kernel " : "",
	       gr->kernel_release ? gr->kernel_release : "");
	if (gr->outcome != VM_OK) {
		print_line("  %s", gr->reason);
		if (gr->excerpt) {
			printf("  console excerpt (%s):\n", gr->console_path);
			print_lines("    | ", gr->excerpt);
		}
	} else {
		summary_add(sum, gr->metrics, gr->nr_metrics, jr->nr_ok - 1);
		if (!has_kpi)
			printf("  the KPI %s is not among this run's metrics\n", jr->job->kpi);
	}
	if (gr->dropped)
		printf("  %zu malformed or oversized guest record(s) ignored\n", gr->dropped);
	fflush(stdout);
}

/* Check what a queued run needs now, so a worker does not find out hours
 * later: beyond run_main's checks (the job, the guest: guest_env_check),
 * the revision resolvable and the config options valid.  Then queue the
 * arguments. */
static int submit_checked(struct lab *lab, int argc, char **argv, const char *kernel_arg, const char *repo_arg,
			  const char *rev, struct recipe_opts *ro, const struct job *job)
{
	struct kbuild_recipe recipe = { 0 };
	char **args;
	int64_t qid;
	int ret = EXIT_FAIL;

	if (!kernel_arg) {
		struct gitrepo *repo = NULL;
		char hex[41];
		int rc = gitrepo_open(&repo, repo_arg) < 0 || gitrepo_resolve(repo, rev, hex) < 0 ? -1 : 0;
		gitrepo_free(repo);
		if (rc < 0)
			return EXIT_FAIL;
		if (recipe_for_job(ro, job, &recipe) < 0)
			return EXIT_FAIL;
		kbuild_recipe_release(&recipe);
	}
	/* args[0]: where relative paths are resolved; then run's own, as given */
	args = xcalloc((size_t)argc + 1, sizeof(char *));
	args[0] = getcwd(NULL, 0);
	if (!args[0]) {
		free(args);
		error("cannot read the current directory: %s", strerror(errno));
		return EXIT_FAIL;
	}
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	if (db_queue_add(lab->db, QUEUE_RUN, args, (size_t)argc, 0, user_name(), &qid) == 0) {
		printf("job %lld queued: %s %s, %u boot%s\n", (long long)qid, job->suite, job->testcase, job->repeat,
		       job->repeat == 1 ? "" : "s");
		ret = EXIT_OK;
	}
	free(args[0]);
	free(args);
	return ret;
}

/* What `klab run` was given. */
struct run_args {
	const char *job_path, *kernel_arg, *repo_arg, *rev, *kpi;
	unsigned long repeat;
	struct guest_env_opts geo;
	struct recipe_opts ro;
};

/* Parse the options (argv rearranged): -1 to go on, else the exit status. */
static int run_parse(int argc, char **argv, const struct opt_usage *u, struct run_args *a)
{
	struct guest_env_opts *geo = &a->geo;
	struct opt opts[] = {
		OPT_STRING(0, "job", &a->job_path, "FILE", "the job file (klab-job(5); jobs/ has examples)"),
		OPT_STRING(0, "kernel", &a->kernel_arg, "BZIMAGE", "boot this kernel image"),
		OPT_STRING(0, "repo", &a->repo_arg, "PATH", "build and boot a commit of this repository ..."),
		OPT_STRING(0, "rev", &a->rev, "REV", "... this one"),
		OPT_UINT(0, "repeat", &a->repeat, "N", "boots (default: the job's repeat)", 1, 1000),
		OPT_STRING(0, "kpi", &a->kpi, "METRIC", "the metric to headline (default: the job's kpi)"),
		OPT_GUEST_ROWS(geo),
		OPT_RECIPE_ROWS(&a->ro),
		OPT_END()
	};

	argc = parse_options(argc, argv, u, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (!a->job_path || argc || !a->kernel_arg == !(a->repo_arg || a->rev) ||
	    (!a->kernel_arg && (!a->repo_arg || !a->rev)))
		return usage_error(u, "run needs --job and either --kernel or --repo with --rev");
	/* names, paths and URIs that are stored and printed: one line each */
	if (check_no_controls("--job", a->job_path) < 0 || check_no_controls("--kernel", a->kernel_arg) < 0 ||
	    check_no_controls("--repo", a->repo_arg) < 0 || guest_opts_check(geo, "run") < 0)
		return EXIT_USAGE;
	return -1;
}

/* The job file with --repeat and --kpi applied: 0, or the exit code. */
static int run_job_load(struct job *job, const struct run_args *a)
{
	if (job_parse_file(job, a->job_path) < 0)
		return EXIT_FAIL;
	if (a->repeat)
		job->repeat = (unsigned)a->repeat;
	if (!a->kpi)
		return 0;
	if (check_kpi_option(job, a->kpi) < 0) {
		job_release(job);
		return EXIT_USAGE;
	}
	free(job->kpi);
	job->kpi = xstrdup(a->kpi);
	return 0;
}

/* The boots' summary: one line, then the KPI's row and every other. */
static void print_summary(struct summary *sum, const struct job *job, const struct job_run *jr)
{
	printf("\n%u of %u boots ok; accelerator %s; guest %u vCPUs / %u nodes / %llu MiB\n", jr->nr_ok,
	       job->repeat, accel_name(guest_env_accel(jr->ge)), job->guest.vcpus, job->guest.numa_nodes,
	       (unsigned long long)job->guest.memory_mb);
	if (!jr->nr_ok)
		return;
	printf("%16s %6s  %-3s %s\n", "mean", "%stddev", "n", "metric");
	qsort(sum->rows, sum->nr, sizeof(sum->rows[0]), cmp_rows);
	for (size_t i = 0; i < sum->nr; i++)
		if (!strcmp(sum->rows[i].name, job->kpi))
			print_row(&sum->rows[i], job->kpi);
	for (size_t i = 0; i < sum->nr; i++)
		if (strcmp(sum->rows[i].name, job->kpi))
			print_row(&sum->rows[i], job->kpi);
}

/* submit: check everything and queue the run instead of running it. */
static int run_main(int argc, char **argv, const struct global_opts *g, int submit)
{
	struct run_args a = { 0 };
	struct guest_env_opts *geo = &a.geo;
	struct job job = { 0 };
	struct job_run jr = { 0 };
	struct summary sum = { 0 };
	struct lab lab;
	char hex[41] = "", *kernel = NULL;
	int64_t build_id = 0;
	int ret = EXIT_FAIL, lab_opened = 0, job_parsed = 0;
	struct opt_usage u = run_usage;
	/* what is queued is the arguments as given: parsing rearranges argv */
	char **given = xcalloc((size_t)argc + 1, sizeof(char *));

	memcpy(given, argv, (size_t)argc * sizeof(char *));
	if (submit)
		u.name = "submit run";
	if ((ret = run_parse(argc, argv, &u, &a)) >= 0)
		goto out;
	if ((ret = run_job_load(&job, &a)))
		goto out;
	job_parsed = 1;
	ret = EXIT_FAIL;
	if (open_lab(g, &lab) < 0)
		goto out;
	lab_opened = 1;
	if (guest_opts_check_host(&lab, geo) < 0)
		goto out;
	/* what the guests need, checked before anything is built or queued */
	geo->kernel = a.kernel_arg;
	if (guest_env_check(&lab, &job, geo) < 0)
		goto out;
	geo->kernel = NULL;
	if (submit) {
		ret = submit_checked(&lab, argc, given, a.kernel_arg, a.repo_arg, a.rev, &a.ro, &job);
		goto out;
	}

	if (a.kernel_arg) {
		if (!(kernel = real_path(a.kernel_arg)))
			goto out;
	} else if (build_kernel(&lab, a.repo_arg, a.rev, &a.ro, &job, geo->quiet, &kernel, &build_id, hex) < 0) {
		goto out;
	}

	geo->kernel = kernel;
	jr.job = &job;
	jr.geo = geo;
	jr.build_id = build_id;
	jr.commit_hash = hex[0] ? hex : NULL;
	jr.boots = job.repeat;
	jr.started = run_started;
	jr.booted = run_booted;
	jr.data = &sum;
	if (run_job_on_kernel(&lab, &jr) < 0)
		goto out;
	print_summary(&sum, &job, &jr);
	if (jr.nr_ok && !jr.nr_kpi) {
		error("the KPI '%s' was not produced; the metrics above can be chosen with --kpi", job.kpi);
		goto out;
	}
	ret = jr.nr_ok == job.repeat && jr.nr_kpi == jr.nr_ok ? EXIT_OK : EXIT_FAIL;
out:
	summary_release(&sum);
	job_run_release(&jr);
	if (job_parsed)
		job_release(&job);
	recipe_opts_release(&a.ro);
	free(kernel);
	free(given);
	if (lab_opened)
		lab_close(&lab);
	return ret;
}

int cmd_run(int argc, char **argv, const struct global_opts *g)
{
	return run_main(argc, argv, g, 0);
}

int run_submit(int argc, char **argv, const struct global_opts *g)
{
	return run_main(argc, argv, g, 1);
}
