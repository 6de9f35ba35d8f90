/* klab reproduce: an LKP regression report read (a file or stdin), its
 * commit, parent, test and KPI printed, a klab job written for it, then
 * the parent measured against the commit with klab compare's engine
 * (measure.c, interleaved) and judged by the bisection's reference rule:
 * "reproduced: -95.1% (report said -95.6%)" or "not reproduced: ...". */
#include "cmd/klab.h"
#include "cmd/opts.h"
#include "engine/bisect-start.h"
#include "engine/rev-kernel.h"
#include "engine/runcompare-print.h"
#include "report/notify.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "guest/guest.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "lab/lab.h"
#include "job/lkp.h"
#include "guest/measure.h"
#include "engine/runcompare.h"
#include "core/verdict.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const reproduce_forms[] = {
	"REPORT|- [--repo] [--job-out] [--result] [--json] [--accel] [--no-measure] [--runs] [--uri | --host] "
	"[--quiet] [--bisect [--no-revert-check]] [--profile-runs]",
	NULL
};
static const struct opt_usage reproduce_usage = {
	"reproduce", reproduce_forms,
	"Read an LKP report (a file, or - for stdin): its commit, parent, test and KPI.\n"
	"Write a klab job for it with its mapping table; with --repo measure the parent\n"
	"against the commit and judge the KPI; with --bisect GOOD then bisect.  'klab\n"
	"submit reproduce' checks it all up front and queues it.",
	"REPRODUCE"
};

#define NO_PROFILE_RUNS ((unsigned long)-1)

/* What reproduce was told. */
struct reproduce_args {
	const char *repo, *job_out, *accel_arg, *bisect_good, *path;
	unsigned long runs, profile_runs, result;
	int no_measure, no_revert_check, have_profile_runs, json;
	int64_t queue_job;	/* run by a worker: the job's id */
	struct guest_env_opts geo;
};

/* --bisect: the bisection the printed line describes, run here (in a
 * worker, linked to the queued job as soon as it exists), as 'klab
 * bisect start --job' runs it.  An exit status. */
static int bisect_report(const struct global_opts *g, const struct reproduce_args *a, const char *bad,
			 const char *job_file)
{
	struct recipe_opts ro = { 0 };
	struct kbuild_recipe recipe = { 0 };
	struct strbuf recipe_text = STRBUF_INIT;
	struct bisect_range range = { 0 };
	struct bisect_request rq = { 0 };
	struct bisect_job bj;
	struct lab lab;
	int64_t id;
	int ret = EXIT_FAIL;

	print_line("bisecting %s..%.12s with %s", a->bisect_good, bad, job_file);
	fflush(stdout);
	if (bisect_job_load(&bj, job_file) < 0 || recipe_for_job(&ro, &bj.job, &recipe) < 0 ||
	    open_lab(g, &lab) < 0)
		goto out;
	kbuild_recipe_to_text(&recipe, &recipe_text);
	rq.repo = a->repo;
	rq.bad = bad;
	rq.goods = &a->bisect_good;
	rq.nr_goods = 1;
	rq.recipe_text = recipe_text.buf;
	rq.job = &bj.job;
	rq.job_path = bj.path;
	rq.job_text = bj.text;
	rq.kpi = bj.job.kpi;
	rq.slots = 1;
	rq.revert_check = !a->no_revert_check;
	rq.queue_id = a->queue_job;
	if (bisect_create(&lab, &rq, &range, &id) == 0) {
		ret = bisection_run(&lab, id, &range);
		notify_bisection_if_ended(&lab, id);
	}
	bisect_range_release(&range);
	lab_close(&lab);
out:
	bisect_job_release(&bj);
	strbuf_release(&recipe_text);
	kbuild_recipe_release(&recipe);
	recipe_opts_release(&ro);
	return ret;
}

/* Run by a worker: what the job's row says about it (NULL: nothing yet;
 * then also no bisection: an earlier attempt's is not this one's). */
static void queue_note(const struct global_opts *g, int64_t queue_job, const char *text)
{
	struct lab lab;

	if (!queue_job || open_lab(g, &lab) < 0)
		return;
	if (db_queue_note(lab.db, queue_job, text) == 1 && !text)
		db_queue_set_bisection(lab.db, queue_job, 0);
	lab_close(&lab);
}

/* The whole of stdin, at most max bytes (one more is an error). */
static int read_stdin(size_t max, char **out, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];

	for (;;) {
		ssize_t n = read(0, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			strbuf_release(&sb);
			return error("cannot read the report from stdin: %s", strerror(errno));
		}
		if (!n)
			break;
		strbuf_add(&sb, chunk, (size_t)n);
		if (sb.len > max) {
			strbuf_release(&sb);
			return error("stdin: a report is at most %zu bytes", max);
		}
	}
	*out = strbuf_detach(&sb, len);
	return 0;
}

static void add_word(struct strbuf *sb, const char *w)
{
	strbuf_addch(sb, ' ');
	strbuf_add_shell_word(sb, w);
}

/* "klab run" of the job on one commit, as bash reads it back */
static void print_run_line(const char *job, const char *repo, const char *rev)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "  klab run --job");
	add_word(&sb, job);
	strbuf_addstr(&sb, " --repo");
	add_word(&sb, repo ? repo : "REPO");
	strbuf_addf(&sb, " --rev %s", rev);
	print_line("%s", sb.buf);
	strbuf_release(&sb);
}

/* The report's commits in R, as full ids: both must be there, the
 * parent an ancestor of the commit (a report without one: the commit's
 * first parent, *from_repo set); and --bisect's GOOD (NULL: none) a
 * revision of R. */
static int check_in_repo(const char *path, struct lkp_report *r, const char *good, int *from_repo)
{
	struct gitrepo *repo = NULL;
	char parent[41], commit[41], good_hex[41], *first = NULL, *url = NULL, *branch = NULL;
	int held, ret = -1, anc;

	if (gitrepo_open(&repo, path) < 0)
		return -1;
	held = error_hold(1);
	if (gitrepo_resolve(repo, r->commit, commit) < 0) {
		error_hold(held);
		if (r->patch && lkp_patch_fetch(r, &url, &branch) == 0)
			error("the report's commit %s is the kernel test robot's build of a patch under review, not in '%s': "
			      "fetch it first (git fetch %s %s)", r->commit, path, url, branch);
		else
			error("the report's commit %s is not a commit of '%s' (fetch it first?)", r->commit, path);
		goto out;
	}
	if (!r->parent) {
		first = xstrfmt("%s^1", commit);
		if (gitrepo_resolve(repo, first, parent) < 0) {
			error_hold(held);
			error("the report names no parent and its commit %s has none in '%s'", r->commit, path);
			goto out;
		}
		*from_repo = 1;
	} else if (gitrepo_resolve(repo, r->parent, parent) < 0) {
		error_hold(held);
		error("the report's parent %s is not a commit of '%s' (fetch it first?)", r->parent, path);
		goto out;
	}
	if (good && gitrepo_resolve(repo, good, good_hex) < 0) {
		error_hold(held);
		error("--bisect: '%s' is not a revision of '%s'", good, path);
		goto out;
	}
	anc = gitrepo_is_ancestor(repo, parent, commit);
	error_hold(held);
	if (anc <= 0) {
		error("the report's parent %s is not an ancestor of its commit %s in '%s'", r->parent, r->commit, path);
		goto out;
	}
	free(r->commit);
	free(r->parent);
	r->commit = xstrdup(commit);
	r->parent = xstrdup(parent);
	ret = 0;
out:
	FREE_MANY(first, url, branch);
	gitrepo_free(repo);
	return ret;
}

/* Parent against commit with klab compare's engine, until the reference
 * rule decides.  EXIT_OK reproduced, EXIT_FAIL not (or an error). */
static int measure_report(const struct global_opts *g, const char *repo, const char *job_path,
			  const struct lkp_report *r, struct guest_env_opts *geo, unsigned long runs, int64_t queue_job)
{
	struct measure_side ms[2];
	struct measure m = { 0 };
	struct recipe_opts ro = { 0 };
	struct kbuild_recipe recipe = { 0 };
	struct verdict_policy pol;
	struct verdict v;
	struct strbuf line = STRBUF_INIT;
	struct job job;
	struct lab lab;
	char *kernel[2] = { NULL, NULL }, hex[2][41], *why = NULL;
	const char *revs[2] = { r->parent, r->commit }, *labels[2] = { "parent", "commit" };
	int64_t build[2] = { 0, 0 };
	unsigned want;
	int ret = EXIT_FAIL, measuring = 0, recipe_made = 0;

	memset(ms, 0, sizeof(ms));
	if (job_parse_file(&job, job_path) < 0)
		return EXIT_FAIL;
	if (open_lab(g, &lab) < 0) {
		job_release(&job);
		return EXIT_FAIL;
	}
	if (runs)
		job.repeat = (unsigned)runs;
	if (guest_opts_check_host(&lab, geo) < 0 || guest_env_check(&lab, &job, geo) < 0 ||
	    recipe_for_job(&ro, &job, &recipe) < 0)
		goto out;
	recipe_made = 1;
	for (int i = 0; i < 2; i++) {
		if (rev_kernel(&lab, repo, revs[i], &recipe, geo->quiet, &kernel[i], &build[i], hex[i]) < 0)
			goto out;
		ms[i].label = labels[i];
		ms[i].job = &job;
		ms[i].kernel = kernel[i];
		ms[i].build_id = build[i];
		ms[i].commit_hash = hex[i];
	}
	verdict_policy_init(&pol);
	pol.confirm_share = job.confirm_share;
	want = job.repeat;
	print_line("measuring: parent %.12s against commit %.12s, %u runs each, interleaved", hex[0], hex[1], want);
	measuring = 1;
	if (measure_begin(&m, &lab, ms, 2, geo, want) < 0)
		goto out;
	for (;;) {
		int rc = measure_to(&m, want, &why);

		if (rc) {
			if (rc > 0)
				error("cannot measure: %s (the runs so far are stored)", why);
			goto out;
		}
		strbuf_reset(&line);
		if (runcmp_reproduce(&v, &line, &pol, ms[0].kpi, ms[0].nr_kpi, ms[1].kpi, ms[1].nr_kpi, job.direction,
				     r->change) < 0)
			goto out;
		if (v.kind != VERDICT_NEED_MORE || v.next_runs <= want)
			break;
		print_line("  %s", line.buf);
		want = v.next_runs;
	}
	measure_end(&m);
	measuring = 0;
	fputc('\n', stdout);
	{
		int64_t ids[2] = { ms[0].run_set_id, ms[1].run_set_id };
		if (runcmp_print(lab.db, ids, labels, 2, job.kpi, 0, NULL) < 0)
			goto out;
	}
	if (v.kind == VERDICT_NEED_MORE) {
		char *l = xstrfmt("not reproduced: still undecided at the cap (%s)", line.buf);
		strbuf_reset(&line);
		strbuf_addstr(&line, l);
		free(l);
	}
	print_line("%s", line.buf);
	if (queue_job)
		db_queue_note(lab.db, queue_job, line.buf);
	ret = v.kind == VERDICT_REPRODUCED ? EXIT_OK : EXIT_FAIL;
out:
	if (measuring)
		measure_end(&m);
	measure_sides_release(ms, 2);
	free(kernel[0]);
	free(kernel[1]);
	free(why);
	strbuf_release(&line);
	if (recipe_made)
		kbuild_recipe_release(&recipe);
	recipe_opts_release(&ro);
	job_release(&job);
	lab_close(&lab);
	return ret;
}

/* What the report says: commit, parent, test, KPI, the other results,
 * a patch under review, and the accelerator. */
static void print_facts(const struct lkp_report *r, enum lkp_accel accel, const char *why, int parent_from_repo)
{
	struct strbuf sb = STRBUF_INIT;
	char *url, *branch;

	if (r->subject)
		print_line("commit:   %s (\"%s\")", r->commit, r->subject);
	else
		print_line("commit:   %s", r->commit);
	if (parent_from_repo)
		print_line("parent:   %s (the commit's first parent in --repo: the report names none)", r->parent);
	else
		print_line("parent:   %s", r->parent);
	if (r->patch) {
		print_line("patch:    the commit is the kernel test robot's build of a patch under review, not a commit of its base tree");
		if (r->patch_base)
			print_line("          base: %s", r->patch_base);
		if (r->patch_link)
			print_line("          patch: %s", r->patch_link);
		if (lkp_patch_fetch(r, &url, &branch) == 0) {
			print_line("          to build it: git fetch %s %s", url, branch);
			free(url);
			free(branch);
		}
	}
	for (size_t i = 0; i < r->params.nr && sb.len < 400; i++)
		strbuf_addf(&sb, "%s%s=%s", i ? " " : "", r->params.v[i].key, r->params.v[i].value);
	print_line("suite:    %s", r->suite);
	if (sb.len)
		print_line("params:   %s", sb.buf);
	if (r->row)
		print_line("KPI:      %s %s in the report (%s -> %s)", r->kpi, r->change, r->row->base, r->row->head);
	else
		print_line("KPI:      %s %s in the report", r->kpi, r->change);
	print_line("verdict:  %s: klab bisects the KPI's %s (direction: %d)%s", r->improvement ? "improvement" : "regression",
		   r->direction < 0 ? "rise" : "fall", r->direction,
		   r->improvement ? ", the change the report names" : "");
	if (r->nr_results > 1) {
		print_line("results:  %zu in the report (--result N picks one):", r->nr_results);
		for (size_t i = 0; i < r->nr_results; i++) {
			const struct lkp_result *x = &r->results[i];

			strbuf_reset(&sb);
			for (size_t k = 0; i && k < x->params.nr && sb.len < 200; k++)
				strbuf_addf(&sb, " %s=%s", x->params.v[k].key, x->params.v[k].value);
			print_line("  %c%zu %s %s %s %s%s%s", i == r->selected ? '*' : ' ', i + 1, x->suite, x->kpi, x->change,
				   x->improvement ? "improvement" : "regression", i ? ":" : " (the headline's)", sb.buf);
		}
	}
	print_line("accel:    %s (%s)", accel == LKP_ACCEL_KVM ? "kvm" : "tcg", why);
	strbuf_release(&sb);
}

/* The commands that measure and bisect by hand. */
static void print_commands(const char *dest, const char *repo, const struct lkp_report *r, int no_revert_check)
{
	struct strbuf sb = STRBUF_INIT;

	print_run_line(dest, repo, r->parent);
	print_run_line(dest, repo, r->commit);
	strbuf_addstr(&sb, "  klab bisect start --repo");
	add_word(&sb, repo ? repo : "REPO");
	strbuf_addf(&sb, " --good %s --bad %s --job", r->parent, r->commit);
	add_word(&sb, dest);
	if (no_revert_check)
		strbuf_addstr(&sb, " --no-revert-check");
	print_line("%s", sb.buf);
	strbuf_release(&sb);
}

/* submit: what 'reproduce' would need when it runs, checked now (the lab,
 * the guests and the kernel recipe when it measures), then the queue row:
 * the submitter's directory, then reproduce's own arguments. */
static int submit_reproduce(const struct global_opts *g, int argc, char **argv, struct reproduce_args *a,
			    const struct lkp_report *r, const struct lkp_klab_job *j)
{
	struct recipe_opts ro = { 0 };
	struct kbuild_recipe recipe = { 0 };
	struct job job;
	struct lab lab;
	char **args = NULL;
	int64_t qid;
	int ret = EXIT_FAIL;

	if (job_parse_buffer(&job, "the job", j->yaml, strlen(j->yaml)) < 0)
		return EXIT_FAIL;
	if (open_lab(g, &lab) < 0) {
		job_release(&job);
		return EXIT_FAIL;
	}
	if (a->repo && !a->no_measure) {
		if (guest_opts_check_host(&lab, &a->geo) < 0 || guest_env_check(&lab, &job, &a->geo) < 0 ||
		    recipe_for_job(&ro, &job, &recipe) < 0)
			goto out;
		kbuild_recipe_release(&recipe);
	}
	args = xcalloc((size_t)argc + 1, sizeof(char *));
	args[0] = getcwd(NULL, 0);
	if (!args[0]) {
		error("cannot read the current directory: %s", strerror(errno));
		goto out;
	}
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	if (db_queue_add(lab.db, QUEUE_REPRODUCE, args, (size_t)argc, 0, user_name(), &qid) == 0) {
		print_line("job %lld queued: reproduce %.12s (%s %s)%s", (long long)qid, r->commit, job.suite,
			   job.testcase, a->bisect_good ? ", then bisect" : "");
		ret = EXIT_OK;
	}
out:
	if (args)
		free(args[0]);
	free(args);
	recipe_opts_release(&ro);
	job_release(&job);
	lab_close(&lab);
	return ret;
}

/* The options (argv rearranged).  -1 go on, else the exit status. */
static int reproduce_parse(struct reproduce_args *a, int argc, char **argv, const struct opt_usage *u, int submit)
{
	unsigned long queue_job = 0;
	struct opt opts[] = {
		OPT_STRING(0, "repo", &a->repo, "R", "the kernel repository: measure (it holds both commits)"),
		OPT_STRING(0, "job-out", &a->job_out, "FILE", "where the job goes (default ./TESTCASE-reproduce.yaml)"),
		OPT_UINT_R(0, "result", &a->result, "N", "the report's Nth result (1: the headline's)", 1, 1000,
			   "the number of one of the report's results (1: the headline's)"),
		OPT_BOOL(0, "json", &a->json, "one JSON document: report, results, job, mapping"),
		OPT_STRING(0, "accel", &a->accel_arg, "auto|kvm|tcg", "the accelerator the runtime is scaled for"),
		OPT_BOOL(0, "no-measure", &a->no_measure, "only the job and the commands: no build, no guest"),
		OPT_UINT(0, "runs", &a->runs, "N", "first runs per side (default: the job's repeat)", 1, 100),
		OPT_GUEST_URI(&a->geo),
		OPT_GUEST_HOST(&a->geo),
		OPT_GUEST_QUIET(&a->geo),
		OPT_STRING(0, "bisect", &a->bisect_good, "GOOD", "then bisect GOOD..commit (needs --repo)"),
		OPT_BOOL(0, "no-revert-check", &a->no_revert_check, "the bisection skips the revert check"),
		OPT_UINT(0, "profile-runs", &a->profile_runs, "N", "profile_runs: N in the job written (default 2)", 0,
			 10),
		OPT_UINT_X(0, "queue-job", &queue_job, "ID", "the queued job (the worker's)", 1, INT64_MAX,
			   "a job id (a number from 'klab status')", OPT_HIDDEN),
		OPT_END()
	};

	a->profile_runs = NO_PROFILE_RUNS;
	argc = parse_options(argc, argv, u, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	a->have_profile_runs = a->profile_runs != NO_PROFILE_RUNS;
	if (queue_job && submit)
		return usage_error(u, "--queue-job is the worker's, not submit's");
	a->queue_job = (int64_t)queue_job;
	if (argc != 1)
		return usage_error(u, argc ? "reproduce takes one report (got '%s' too)" : "reproduce needs a report (a file or -)%s",
				   argc ? argv[1] : "");
	a->path = argv[0];
	if (a->bisect_good && !a->repo) {
		error("--bisect needs --repo (the kernel repository to bisect in)");
		return EXIT_USAGE;
	}
	if (a->json && a->bisect_good) {
		error("--json prints what was read and the job written, and measures nothing: it takes no --bisect");
		return EXIT_USAGE;
	}
	if (a->no_revert_check && !a->bisect_good) {
		error("--no-revert-check is a bisection's: it needs --bisect GOOD");
		return EXIT_USAGE;
	}
	if (submit && !strcmp(a->path, "-")) {
		error("submit reproduce: a queued reproduction reads its report when it runs: give a file, not stdin");
		return EXIT_USAGE;
	}
	if (check_no_controls("REPORT", a->path) < 0 || check_no_controls("--repo", a->repo) < 0 ||
	    check_no_controls("--bisect", a->bisect_good) < 0 || check_no_controls("--job-out", a->job_out) < 0 ||
	    guest_opts_check(&a->geo, "reproduce") < 0)
		return EXIT_USAGE;
	return -1;
}

/* The report read (a file or stdin), its result chosen, its commits in
 * --repo.  -1 after error(). */
static int read_report(const struct reproduce_args *a, struct lkp_report *r, char **buf, int *parent_from_repo)
{
	const char *name = !strcmp(a->path, "-") ? "stdin" : a->path;
	size_t len;

	if (!strcmp(a->path, "-") ? read_stdin(LKP_MAX_REPORT, buf, &len) < 0
				  : read_file(a->path, LKP_MAX_REPORT, buf, &len) < 0)
		return -1;
	if (lkp_report_parse(r, name, *buf, len) < 0 || (a->result && lkp_report_select(r, a->result) < 0))
		return -1;
	if (!r->parent && !a->repo)
		return error("%s: no parent commit: expected the comparison table's column heads or a line 'parent: <sha>' "
			     "(with --repo R, the commit's first parent is taken)", name);
	if (a->repo && check_in_repo(a->repo, r, a->bisect_good, parent_from_repo) < 0)
		return -1;
	return 0;
}

/* The klab job for the report's chosen result.  -1 after error(). */
static int map_report(const struct reproduce_args *a, const struct lkp_report *r, enum lkp_accel accel,
		      struct lkp_klab_job *j)
{
	struct lkp_map_in in = { 0 };

	in.suite = r->suite;
	in.params = &r->params;
	in.kpi = r->kpi;
	in.change = r->change;
	in.improvement = r->improvement;
	in.direction = r->direction;
	in.accel = accel;
	in.origin = a->path;
	in.name = a->job_out;
	lkp_host_paths(&in);
	if (lkp_map(j, &in) < 0)
		return -1;
	if (a->have_profile_runs) {
		char *y = xstrfmt("%sprofile_runs: %lu\n", j->yaml, a->profile_runs);
		free(j->yaml);
		j->yaml = y;
	}
	return 0;
}

/* --json: the report, the job written at dest and its mapping table. */
static void print_json(const struct lkp_report *r, const struct lkp_klab_job *j, const char *dest,
		       enum lkp_accel accel, int parent_from_repo)
{
	struct strbuf js = STRBUF_INIT;

	strbuf_addstr(&js, "{\"report\":");
	lkp_report_json(&js, r);
	strbuf_addf(&js, ",\"parent_from\":\"%s\",\"accelerator\":\"%s\",\"job\":{\"path\":",
		    parent_from_repo ? "repository" : "report", accel == LKP_ACCEL_KVM ? "kvm" : "tcg");
	json_add_string(&js, dest);
	strbuf_addstr(&js, ",\"suite\":");
	json_add_string(&js, j->suite);
	strbuf_addstr(&js, ",\"testcase\":");
	json_add_string(&js, j->testcase);
	strbuf_addstr(&js, ",\"mapping\":");
	lkp_table_json(&js, j);
	strbuf_addstr(&js, "}}\n");
	fputs(js.buf, stdout);
	strbuf_release(&js);
}

/* The job at dest written: what to run by hand, then the measurement
 * (with --repo) and the bisection (with --bisect).  An exit status. */
static int measure_and_bisect(const struct global_opts *g, struct reproduce_args *a, const struct lkp_report *r,
			      const char *dest)
{
	int ret = EXIT_OK;

	if (a->no_measure)
		print_line("not measured (--no-measure); to measure and bisect, run:");
	else if (!a->repo)
		print_line("not measured: measuring needs --repo R (the kernel repository); to measure and bisect, run:");
	else
		print_line("by hand, and to bisect:");
	print_commands(dest, a->repo, r, a->no_revert_check);
	if (!a->no_measure && a->repo) {
		/* the guests run under the accelerator the runtime was scaled for */
		if (a->accel_arg && strcmp(a->accel_arg, "auto"))
			a->geo.accel = a->accel_arg;
		fputc('\n', stdout);
		ret = measure_report(g, a->repo, dest, r, &a->geo, a->runs, a->queue_job);
	} else if (a->queue_job) {
		char *note = xstrfmt("not measured (%s): wrote %s", a->no_measure ? "--no-measure" : "no --repo", dest);
		queue_note(g, a->queue_job, note);
		free(note);
	}
	if (a->bisect_good) {
		fputc('\n', stdout);
		if (ret == EXIT_OK)
			ret = bisect_report(g, a, r->commit, dest);
		else
			print_line("not bisected: the change did not reproduce here (the line above bisects anyway)");
	}
	return ret;
}

static int reproduce_main(int argc, char **argv, const struct global_opts *g, int submit)
{
	struct reproduce_args a;
	const char *why;
	struct lkp_report r = { 0 };
	struct lkp_klab_job j = { 0 };
	enum lkp_accel accel;
	int parent_from_repo = 0, ret;
	char *buf = NULL, *dest = NULL;
	struct opt_usage u = reproduce_usage;
	/* what is queued is the arguments as given: parsing rearranges argv */
	char **given = xcalloc((size_t)argc + 1, sizeof(char *));

	memcpy(given, argv, (size_t)argc * sizeof(char *));
	memset(&a, 0, sizeof(a));
	if (submit)
		u.name = "submit reproduce";
	if ((ret = reproduce_parse(&a, argc, argv, &u, submit)) >= 0)
		goto out;
	ret = EXIT_USAGE;
	if (lkp_accel_option(a.accel_arg, &accel, &why) < 0)
		goto out;
	ret = EXIT_FAIL;
	/* a worker's earlier attempt said nothing that still holds */
	queue_note(g, a.queue_job, NULL);
	if (read_report(&a, &r, &buf, &parent_from_repo) < 0)
		goto out;
	if (!submit && !a.json)
		print_facts(&r, accel, why, parent_from_repo);
	if (map_report(&a, &r, accel, &j) < 0)
		goto out;
	if (submit) {
		ret = submit_reproduce(g, argc, given, &a, &r, &j);
		goto out;
	}
	dest = a.job_out ? xstrdup(a.job_out) : xstrfmt("%s-reproduce.yaml", j.testcase);
	if (!a.json) {
		print_line("testcase: %s", j.testcase);
		print_line("mapping (LKP parameter, value, the klab job key it set or why none):");
		lkp_print_table(&j, "  ");
	}
	if (write_file_atomic(dest, j.yaml, strlen(j.yaml)) < 0)
		goto out;
	if (a.json) {
		print_json(&r, &j, dest, accel, parent_from_repo);
		ret = EXIT_OK;
		goto out;
	}
	print_line("wrote %s (checked by klab's job parser)", dest);
	ret = measure_and_bisect(g, &a, &r, dest);
out:
	lkp_klab_job_release(&j);
	lkp_report_release(&r);
	free(buf);
	free(dest);
	free(given);
	return ret;
}

int cmd_reproduce(int argc, char **argv, const struct global_opts *g)
{
	return reproduce_main(argc, argv, g, 0);
}

int reproduce_submit(int argc, char **argv, const struct global_opts *g)
{
	return reproduce_main(argc, argv, g, 1);
}
