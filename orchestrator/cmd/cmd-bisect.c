/* klab bisect: start / resume / list / show / log.  A bisection with a
 * test command, like `git bisect start` + `git bisect run`, but with
 * libgit2, in klab's own worktree, every step stored before the next;
 * or a job bisection.  The loop is bisect-run.c's; the testers are
 * bisect-command.c's and perfbisect.c's. */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "core/bisect.h"
#include "engine/bisect-run.h"
#include "kernel/kbuild.h"
#include "guest/guest.h"
#include "kernel/kernel.h"
#include "report/notify.h"
#include "engine/perfbisect.h"
#include "engine/revert.h"
#include "engine/runcompare.h"
#include "job/job.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const bisect_usage[] = {
	"usage: klab bisect start --repo PATH --good REV [--good REV...] --bad REV",
	"                         [--first-parent] [--paths P...] [--timeout SEC]",
	"                         [--build [--config BASE] [--fragment F...]",
	"                          [--no-default-fragments] [--config-option O...]",
	"                          [--allow-config-drift]]",
	"                         [--slots K] [--no-run] -- CMD [ARGS...]",
	"   or: klab bisect start --repo PATH --good REV --bad REV --job FILE",
	"                         [--kpi METRIC] [--slots K] [--no-revert-check]",
	"                         [--max-runs N]",
	"                         [config options] [--no-run]",
	"   or: klab bisect resume [--max-runs N] ID",
	"   or: klab bisect list",
	"   or: klab bisect show ID",
	"   or: klab bisect log ID",
	"",
	"start   create a bisection and run it to the end (--no-run: only create).",
	"        CMD runs with argv (no shell) in klab's own checkout of each",
	"        commit, never in your working tree; its exit code decides:",
	"        0 good, 125 skip, 1-127 bad, 128 or more (or a signal) stops",
	"        the bisection.  CMD sees KLAB_COMMIT, KLAB_BISECT_ID, KLAB_STEP",
	"        and KLAB_WORKTREE.  Its output goes to a log per step.",
	"  --repo PATH       the git repository (read only for klab)",
	"  --good REV        a good revision (repeatable)",
	"  --bad REV         the bad revision",
	"  --first-parent    follow only first parents (like git bisect --first-parent)",
	"  --paths P         only commits touching P count (repeatable; or list them",
	"                    after --paths until the next option)",
	"  --timeout SEC     a test running longer is killed and the commit skipped",
	"  --build           build each commit's kernel first (as 'klab build'; same",
	"                    config options); CMD then gets KLAB_KERNEL, KLAB_CONFIG,",
	"                    KLAB_SYSTEM_MAP and KLAB_BUILD_LOG.  A commit that does",
	"                    not build (or whose config drifts) is skipped with the",
	"                    compiler error as the reason; a failure of the machine",
	"                    (disk full, missing tool) stops the bisection.",
	"  --job FILE        a performance bisection: build each commit, boot it in",
	"                    guests running the job (klab-job(5)) and decide good or",
	"                    bad by statistics on the KPI: the good and bad ends are",
	"                    measured first (interleaved) and the bisection refused",
	"                    unless the regression reproduces; each commit gets runs",
	"                    until the rules decide (3 to 12, one by one); boot",
	"                    failures, panics and timeouts are skips with their",
	"                    reason; a commit whose kernel is byte for byte an",
	"                    end's takes that end's mark without a boot, and one",
	"                    that touches only files a built kernel's build never",
	"                    read (its .cmd files; no Kconfig, Makefile or script),",
	"                    or only comments of C files it read (klab.conf:",
	"                    comment_only_commits = skip|build), takes that",
	"                    commit's mark without a build; when the",
	"                    ends' runs trend (drift), commits are judged against",
	"                    the latest runs of each end and of the commits",
	"                    decided like it; the culprit and its parent are",
	"                    compared at the end (their step runs and fresh",
	"                    interleaved ones) directly: the culprit must be",
	"                    clearly worse, its runs apart from its parent's by",
	"                    ranks (Mann-Whitney p <= 0.01: 5 runs of each at the",
	"                    least), and carry the job's confirm_share (default",
	"                    half) of the ends' gap; if not, klab bisects the range",
	"                    once more with fresh references (pass 2), and a culprit",
	"                    that pass 2 does not confirm either ends the bisection",
	"                    'unconfirmed' (exit 4) without naming a culprit.",
	"                    A commit clearly apart from both ends (from 12 runs)",
	"                    means two changes: the range splits there and each",
	"                    half is bisected with it as one end; both culprits",
	"                    are confirmed against their own half and named with",
	"                    their share of the regression (exit 0 when either is",
	"                    confirmed); then each is reverted alone (below).",
	"                    A confirmed culprit gets a revert check: the bad end",
	"                    with the culprit reverted (a commit klab makes in its",
	"                    own worktree, never in your repository) is built and",
	"                    measured against the ends: 'revert restores good',",
	"                    'revert does not restore', 'revert does not apply'",
	"                    (conflicts), 'reverted kernel does not build' (or",
	"                    'could not be measured' when its guests fail).  It",
	"                    never changes the result or the exit status.",
	"  --no-revert-check  skip the revert check (kept by resume)",
	"  --max-runs N      the most runs of one commit and of each end (3 to 1000;",
	"                    default the job's max_runs, else 12; kept by resume)",
	"  --kpi METRIC      the metric that decides (default: the job's kpi)",
	"  --slots K         multisection: test K commits at once (1 to 4, default 1),",
	"                    splitting the range into K+1 parts, so about",
	"                    log_(K+1)(N) rounds instead of log2(N) steps; verdicts",
	"                    as with one slot.  A test command runs in K worktree",
	"                    copies at once; a job's kernels are built one after",
	"                    another, then K guests run their first runs at once",
	"                    (extra runs and fresh reference runs stay one by one).",
	"                    In a round where a good commit descends from a bad",
	"                    one, the first bad in topological order wins and that",
	"                    good verdict is not used.  Kept by resume.",
	"resume  continue a bisection that stopped (crash, kill, aborted test)",
	"  --max-runs N      raise a job bisection's cap of runs per commit and end",
	"                    (kept); one that ended 'not reproduced' goes on with",
	"                    the runs it has, measuring the ends further",
	"list    one line per bisection: id, state, result, culprit, steps, repository",
	"show    state, command, steps and culprit of one bisection; for a job,",
	"        what changed (as klab compare prints it): culprit against parent",
	"        (the profile from the profile runs), else bad end against good",
	"log     the bisection as a replayable 'git bisect' log",
	"",
	"Exit status: 0 first bad commit found (a job's: and confirmed), 3 only",
	"skipped commits left, 4 a job's culprit not confirmed (result",
	"'unconfirmed': parent and culprit re-measured, interleaved, do not differ",
	"clearly, or the culprit carries less than the job's confirm_share of the",
	"ends' gap; no culprit is named), 1 error or stopped, 2 usage.",
	NULL
};

static int usage_error(const char *msg)
{
	if (msg)
		error("%s (see 'klab bisect --help')", msg);
	else
		fprintf(stderr, "see 'klab bisect --help'\n");
	return EXIT_USAGE;
}

/* --max-runs N: the most runs of one commit (verdict.c's cap). */
static int parse_max_runs(const char *s, unsigned long *n)
{
	if (parse_uint(s, 1000, n) < 0 || *n < VERDICT_MIN_CAP)
		return error("--max-runs takes the most runs of one commit, %d to 1000 (default: the job's max_runs, "
			     "else 12)", VERDICT_MIN_CAP);
	return 0;
}

static int parse_id(const char *s, int64_t *id)
{
	unsigned long v;

	if (parse_uint(s, 1UL << 53, &v) < 0 || v == 0)
		return error("'%s' is not a bisection id (see 'klab bisect list')", s);
	*id = (int64_t)v;
	return 0;
}


/* ---- running a bisection ---------------------------------------------- */

/* The job tester for a job bisection: its job parsed, its line printed. */
static int job_tester_init(struct bisect_run *br, struct perf *perf)
{
	struct bisection *b = br->b;

	unsigned max_runs;

	if (perf_init(perf, br->lab, b->job_path, b->job_text, b->kpi) < 0)
		return -1;
	if (db_bisection_max_runs(br->lab->db, b->id, &max_runs) < 0 ||
	    (max_runs && verdict_policy_set_cap(&perf->pol, max_runs) < 0)) {
		perf_release(perf);
		return -1;
	}
	br->tester = &perf_tester;
	br->tester_data = perf;
	print_line("job %s: %s %s, KPI %s (%s is better)", b->job_path, perf->job.suite, perf->job.testcase,
		   perf->job.kpi, perf->job.direction > 0 ? "higher" : "lower");
	return 0;
}

/* The bisection's repository and a worktree of it no other klab process
 * uses (*wfd: its lock, held for this run), the steps' log directory. */
static int open_worktree(struct bisect_run *br, int *wfd)
{
	struct bisection *b = br->b;
	char *wt_dir;
	int ret = -1;

	*wfd = kernel_worktree_lock(br->lab, b->repo_id, &wt_dir);
	if (*wfd < 0)
		return -1;
	br->log_dir = xstrfmt("%s/logs/bisect-%lld", br->lab->state_dir, (long long)b->id);
	if (mkdir_p(br->log_dir, 0700) == 0 && gitrepo_open(&br->repo, b->repo_path) == 0 &&
	    worktree_open(&br->wt, br->repo, wt_dir) == 0)
		ret = 0;
	free(wt_dir);
	return ret;
}

/* Run (or continue) bisection b to its end.  dag/info: the range as
 * start loaded it (taken over), or NULL. */
static int run_bisection(struct lab *lab, struct bisection *b, struct bisect_dag *dag, struct range_info *info)
{
	static struct perf perf;
	struct bisect_run br;
	char *lock_name;
	int lock_fd, wfd = -1, job = 0, ret = EXIT_FAIL;

	if (bisect_run_init(&br, lab, b, dag, info) < 0) {
		bisect_run_release(&br);
		return EXIT_FAIL;
	}
	lock_name = xstrfmt("bisect-%lld", (long long)b->id);
	lock_fd = lab_lock(lab, lock_name);
	free(lock_name);
	if (lock_fd < 0) {
		bisect_run_release(&br);
		return EXIT_FAIL;
	}
	if (open_worktree(&br, &wfd) < 0 || bisect_run_open(&br) < 0)
		goto out;
	if (b->kind_id == BISECTION_JOB) {
		if (job_tester_init(&br, &perf) < 0)
			goto out;
		job = 1;
	}
	ret = bisect_run(&br);
	if (job)
		perf_release(&perf);
out:
	if (wfd >= 0)
		close(wfd);
	worktree_free(br.wt);
	gitrepo_free(br.repo);
	free(br.log_dir);
	bisect_run_release(&br);
	close(lock_fd);
	return ret;
}

/* Mail and webhook notices of a bisection that ended (culprit, skipped
 * only, not reproduced, failed); a stopped one goes on later.  Delivery
 * problems are recorded and retried, never this command's failure. */
static void notify_if_finished(struct lab *lab, int64_t id)
{
	struct bisection fin;

	if (db_bisection_load(lab->db, id, &fin) < 0)
		return;
	if (fin.state_id == BISECTION_DONE || fin.state_id == BISECTION_FAILED)
		notify_bisection(lab, id);
	bisection_release(&fin);
}

/* ---- start ------------------------------------------------------------ */

/* Create bisection b with its slots and its queue row. */
static int queue_bisection(struct lab *lab, struct bisection *b, int slots, int revert_check, unsigned max_runs,
			   int64_t *queue_id)
{
	char *cwd = getcwd(NULL, 0);
	int ret = -1;

	if (!cwd)
		cwd = xstrdup("/");
	/* one transaction: never a bisection without its queue row */
	if (db_begin(lab->db) < 0)
		goto out;
	if (db_bisection_create(lab->db, b) < 0 || (slots > 1 && db_bisection_set_slots(lab->db, b->id, slots) < 0) ||
	    (!revert_check && db_bisection_set_revert_check(lab->db, b->id, 0) < 0) ||
	    (max_runs && db_bisection_set_max_runs(lab->db, b->id, max_runs) < 0) ||
	    db_queue_add(lab->db, QUEUE_BISECT, &cwd, 1, b->id, user_name(), queue_id) < 0) {
		db_rollback(lab->db);
		goto out;
	}
	ret = db_commit(lab->db);
out:
	free(cwd);
	return ret;
}

int bisect_queue(struct lab *lab, struct bisection *b, int64_t *queue_id)
{
	return queue_bisection(lab, b, 1, 1, 0, queue_id);
}

/* What `bisect start` was told, and what it made of it. */
struct start_args {
	const char *repo_arg, *bad_arg, *job_arg, *kpi_arg;
	const char **good_args, **path_args;
	size_t nr_good, alloc_good, nr_paths, alloc_paths;
	int no_run, first_parent, build, recipe_given;
	int revert_check;		/* 0: --no-revert-check */
	unsigned long timeout, slots, max_runs;	/* max_runs 0: the job's */
	int cmd;			/* argv index of the test command */
	struct recipe_opts ro;
	struct kbuild_recipe recipe;
	struct strbuf recipe_text;
	struct job job;
	int job_parsed;
	char *job_text, *job_abs, *cmd_path;
};

static void start_args_release(struct start_args *a)
{
	recipe_opts_release(&a->ro);
	kbuild_recipe_release(&a->recipe);
	strbuf_release(&a->recipe_text);
	FREE_MANY(a->good_args, a->path_args, a->cmd_path, a->job_text, a->job_abs);
	if (a->job_parsed)
		job_release(&a->job);
}

/* The options of start.  0 go on; 1 stop with *ret. */
static int start_parse(struct start_args *a, int argc, char **argv, int *ret)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "good", required_argument, NULL, 'g' },
		{ "bad", required_argument, NULL, 'b' },
		{ "first-parent", no_argument, NULL, 'f' },
		{ "paths", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "no-run", no_argument, NULL, 'n' },
		{ "build", no_argument, NULL, 'B' },
		{ "job", required_argument, NULL, 'J' },
		{ "kpi", required_argument, NULL, 'K' },
		{ "slots", required_argument, NULL, 'S' },
		{ "no-revert-check", no_argument, NULL, 'R' },
		{ "max-runs", required_argument, NULL, 'M' },
		RECIPE_OPTION_ROWS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			a->repo_arg = optarg;
			break;
		case 'g':
			ALLOC_GROW(a->good_args, a->nr_good + 1, a->alloc_good);
			a->good_args[a->nr_good++] = optarg;
			break;
		case 'b':
			if (a->bad_arg) {
				*ret = usage_error("only one --bad revision");
				return 1;
			}
			a->bad_arg = optarg;
			break;
		case 'f':
			a->first_parent = 1;
			break;
		case 'p':
			ALLOC_GROW(a->path_args, a->nr_paths + 1, a->alloc_paths);
			a->path_args[a->nr_paths++] = optarg;
			/* --paths a b c: take following words up to an option */
			while (optind < argc && argv[optind][0] != '-') {
				ALLOC_GROW(a->path_args, a->nr_paths + 1, a->alloc_paths);
				a->path_args[a->nr_paths++] = argv[optind++];
			}
			break;
		case 't':
			if (parse_uint(optarg, 30 * 86400, &a->timeout) < 0 || !a->timeout) {
				*ret = usage_error("--timeout takes a number of seconds (1 to 2592000)");
				return 1;
			}
			break;
		case 'n':
			a->no_run = 1;
			break;
		case 'R':
			a->revert_check = 0;
			break;
		case 'M':
			if (parse_max_runs(optarg, &a->max_runs) < 0) {
				*ret = EXIT_USAGE;
				return 1;
			}
			break;
		case 'B':
			a->build = 1;
			break;
		case 'J':
			a->job_arg = optarg;
			break;
		case 'K':
			a->kpi_arg = optarg;
			break;
		case 'S':
			/* each slot needs a worktree copy (or a guest) of its own */
			if (parse_uint(optarg, BISECT_MAX_SLOTS, &a->slots) < 0 || !a->slots) {
				char msg[96];
				snprintf(msg, sizeof(msg), "--slots takes 1 to %d (commits tested at once)", BISECT_MAX_SLOTS);
				*ret = usage_error(msg);
				return 1;
			}
			break;
		RECIPE_OPT_CASES:
			recipe_opts_add(&a->ro, c, optarg);
			a->recipe_given = 1;
			break;
		case 'h':
			print_usage(bisect_usage, 0);
			*ret = EXIT_OK;
			return 1;
		default:
			*ret = usage_error(NULL);
			return 1;
		}
	}
	a->cmd = optind;
	return 0;
}

/* --job FILE: the job parsed and read (a job bisection always builds,
 * with the job's fragments).  0 go on; 1 stop with *ret. */
static int start_job(struct start_args *a, int argc, int *ret)
{
	if (a->cmd < argc) {
		*ret = usage_error("start takes either --job or a test command, not both");
		return 1;
	}
	if (job_parse_file(&a->job, a->job_arg) < 0)
		return 1;
	a->job_parsed = 1;
	if (a->kpi_arg && check_kpi_option(&a->job, a->kpi_arg) < 0) {
		*ret = EXIT_USAGE;
		return 1;
	}
	if (read_file(a->job_arg, 64 << 10, &a->job_text, NULL) < 0 || !(a->job_abs = real_path(a->job_arg)))
		return 1;
	a->build = 1;
	for (size_t i = 0; i < a->job.nr_fragments; i++)
		recipe_opts_add(&a->ro, RECIPE_OPT_FRAGMENT, a->job.fragments[i]);
	return 0;
}

/* Everything about the arguments that needs no lab or repository.
 * 0 go on; 1 stop with *ret. */
static int start_check(struct start_args *a, int argc, char **argv, int *ret)
{
	if (!a->repo_arg || !a->bad_arg || !a->nr_good) {
		*ret = usage_error("start needs --repo, --bad and at least one --good");
		return 1;
	}
	/* what is stored as a name or path (or a KPI) is one line of text */
	if (check_no_controls("--repo", a->repo_arg) < 0 || check_no_controls("--job", a->job_arg) < 0 ||
	    check_no_controls("--kpi", a->kpi_arg) < 0) {
		*ret = EXIT_USAGE;
		return 1;
	}
	for (size_t i = 0; i < a->nr_paths; i++)
		if (check_no_controls("--paths", a->path_args[i]) < 0) {
			*ret = EXIT_USAGE;
			return 1;
		}
	if (a->job_arg) {
		if (start_job(a, argc, ret))
			return 1;
	} else if (a->kpi_arg || a->max_runs) {
		*ret = usage_error(a->kpi_arg ? "--kpi needs --job" : "--max-runs needs --job");
		return 1;
	} else if (a->cmd >= argc) {
		*ret = usage_error("start needs a test command after '--' (or --job FILE)");
		return 1;
	}
	if (a->job_parsed && a->slots > 1) {
		/* the slots' guests run at once, each pinned to CPUs of its own */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (cpus > 0 && (long)a->slots * (long)a->job.guest.vcpus > cpus)
			warning("--slots %lu runs %lu guests of %u vCPU%s at once; this host has %ld CPU%s, so a slot "
				"whose guest does not fit stops the bisection (use a job with fewer vCPUs, or fewer slots)",
				a->slots, a->slots, a->job.guest.vcpus, a->job.guest.vcpus == 1 ? "" : "s", cpus,
				cpus == 1 ? "" : "s");
	}
	if (a->recipe_given && !a->build) {
		*ret = usage_error("config options (--config, --fragment, ...) need --build");
		return 1;
	}
	if (a->build) {
		if (recipe_from_opts(&a->ro, &a->recipe) < 0)
			return 1;
		kbuild_recipe_to_text(&a->recipe, &a->recipe_text);
	}
	if (!a->job_arg && !find_executable(argv[a->cmd], &a->cmd_path)) {
		error("test command '%s' not found%s", argv[a->cmd],
		      strchr(argv[a->cmd], '/') ? " or not executable" : " in $PATH");
		return 1;
	}
	for (size_t i = 0; i < a->nr_paths; i++) {
		const char *p = a->path_args[i];
		if (!*p || p[0] == '/' || strstr(p, "..")) {
			error("--paths '%s': give a path relative to the repository top", p);
			return 1;
		}
	}
	return 0;
}

/* The revisions resolved into b and the range loaded (*dag_loaded), with
 * the mistakes a user makes with them refused.  -1 after error(). */
static int start_range(struct start_args *a, struct gitrepo *repo, struct bisection *b, struct bisect_dag *dag,
		       struct range_info *info, int *dag_loaded)
{
	if (gitrepo_resolve(repo, a->bad_arg, b->bad) < 0)
		return -1;
	b->goods = xcalloc(a->nr_good, 41);
	for (size_t i = 0; i < a->nr_good; i++) {
		if (gitrepo_resolve(repo, a->good_args[i], b->goods[b->nr_goods]) < 0)
			return -1;
		if (!strcmp(b->goods[b->nr_goods], b->bad))
			return error("good revision '%s' and bad revision '%s' are the same commit %.12s",
				     a->good_args[i], a->bad_arg, b->bad);
		if (!hash_listed(b->goods, b->nr_goods, b->goods[b->nr_goods]))
			b->nr_goods++;
	}
	/* One walk gives the range, and tells whether bad is in it. */
	if (gitrepo_load_dag_info(repo, b->bad, b->goods, b->nr_goods, a->first_parent, a->path_args, a->nr_paths,
				  dag, info) < 0)
		return -1;
	*dag_loaded = 1;
	if (!info->bad_is_candidate) {
		for (size_t i = 0; i < b->nr_goods; i++)
			if (gitrepo_is_ancestor(repo, b->bad, b->goods[i]) == 1)
				return error("bad revision '%s' is an ancestor of good revision %.12s: "
					     "did you swap --good and --bad?", a->bad_arg, b->goods[i]);
		return error("no candidate commits between the good and bad revisions");
	}
	if (a->nr_paths) {
		size_t touching = 0;
		for (size_t i = 0; i < dag->nr; i++)
			if (!(dag->commits[i].flags & BISECT_TREESAME))
				touching++;
		if (!touching)
			return error("no commit between the good and bad revisions touches the given paths");
	}
	return 0;
}

/* The rest of the row from the arguments. */
static void start_fill(struct start_args *a, int argc, char **argv, struct bisection *b)
{
	b->first_parent = a->first_parent;
	b->build = a->build;
	b->config = a->build ? a->recipe_text.buf : NULL;
	b->timeout_ms = (int64_t)a->timeout * 1000;
	b->paths = (char **)a->path_args;
	b->nr_paths = a->nr_paths;
	b->argv = argv + a->cmd;
	b->argc = (size_t)(argc - a->cmd);
	b->job_path = a->job_abs;
	b->job_text = a->job_text;
	b->kpi = a->job_parsed ? (char *)(a->kpi_arg ? a->kpi_arg : a->job.kpi) : NULL;
}

/* Store bisection b (with its slots, whether it checks a revert) and say
 * so.  -1 on error. */
static int start_create(struct lab *lab, struct bisection *b, const char *abs_repo, unsigned long slots,
			int revert_check, unsigned long max_runs)
{
	if (db_repo_id(lab->db, abs_repo, &b->repo_id) < 0)
		return -1;
	if (slots > 1) {
		/* the row and its slots together: a resume never sees one slot */
		if (db_begin(lab->db) < 0)
			return -1;
		if (db_bisection_create(lab->db, b) < 0 || db_bisection_set_slots(lab->db, b->id, (int)slots) < 0) {
			db_rollback(lab->db);
			return -1;
		}
		if (db_commit(lab->db) < 0)
			return -1;
	} else if (db_bisection_create(lab->db, b) < 0) {
		return -1;
	}
	if (!revert_check && db_bisection_set_revert_check(lab->db, b->id, 0) < 0)
		return -1;
	if (max_runs && db_bisection_set_max_runs(lab->db, b->id, (unsigned)max_runs) < 0)
		return -1;
	printf("bisection %lld: %s, bad %.12s, %zu good", (long long)b->id, abs_repo, b->bad, b->nr_goods);
	if (slots > 1)
		printf(", %lu slots", slots);
	printf("\n");
	return 0;
}

/* submit: queue the bisection for a worker.  An exit code. */
static int start_submit(struct lab *lab, struct bisection *b, const char *abs_repo, unsigned long slots,
			int revert_check, unsigned long max_runs)
{
	int64_t qid;

	if (db_repo_id(lab->db, abs_repo, &b->repo_id) < 0 ||
	    queue_bisection(lab, b, (int)slots, revert_check, (unsigned)max_runs, &qid) < 0)
		return EXIT_FAIL;
	printf("job %lld queued: bisection %lld of %s, bad %.12s, %zu good", (long long)qid, (long long)b->id,
	       abs_repo, b->bad, b->nr_goods);
	if (slots > 1)
		printf(", %lu slots", slots);
	printf("\n");
	return EXIT_OK;
}

/* Run the bisection just created, from the range start loaded. */
static int start_run(struct lab *lab, int64_t id, struct bisect_dag *dag, struct range_info *info)
{
	struct bisection loaded;
	int ret;

	if (db_bisection_load(lab->db, id, &loaded) < 0)
		return EXIT_FAIL;
	ret = run_bisection(lab, &loaded, dag, info);
	bisection_release(&loaded);
	notify_if_finished(lab, id);
	return ret;
}

/* submit: create the bisection (everything checked as for start) and
 * queue it for a worker instead of running it. */
static int start(int argc, char **argv, const struct global_opts *g, int submit, int64_t queue_id)
{
	struct start_args a;
	struct bisect_dag dag;
	struct range_info info = { 0 };
	struct gitrepo *repo = NULL;
	struct bisection b;
	struct lab lab;
	char *abs_repo = NULL;
	int dag_loaded = 0, lab_opened = 0, ret = EXIT_FAIL;

	memset(&a, 0, sizeof(a));
	strbuf_init(&a.recipe_text, 0);
	a.slots = 1;
	a.revert_check = 1;
	memset(&b, 0, sizeof(b));
	if (start_parse(&a, argc, argv, &ret) || start_check(&a, argc, argv, &ret))
		goto out;

	/* Everything is checked before the database sees anything. */
	if (open_lab(g, &lab) < 0)
		goto out;
	lab_opened = 1;
	if (a.job_parsed) {
		/* the guests' side, as klab run checks it (the kernels come later) */
		struct guest_env_opts geo = { 0 };
		if (guest_env_check(&lab, &a.job, &geo) < 0)
			goto out;
	}
	if (gitrepo_open(&repo, a.repo_arg) < 0)
		goto out;
	abs_repo = real_path(gitrepo_path(repo));
	if (!abs_repo || start_range(&a, repo, &b, &dag, &info, &dag_loaded) < 0)
		goto out;
	start_fill(&a, argc, argv, &b);
	if (submit) {
		ret = start_submit(&lab, &b, abs_repo, a.slots, a.revert_check, a.max_runs);
		goto out;
	}
	if (start_create(&lab, &b, abs_repo, a.slots, a.revert_check, a.max_runs) < 0)
		goto out;
	/* at once, so the queue shows the bisection while it runs */
	if (queue_id && db_queue_set_bisection(lab.db, queue_id, b.id) < 0)
		goto out;
	if (a.no_run) {
		printf("created; run it with 'klab bisect resume %lld'\n", (long long)b.id);
		ret = EXIT_OK;
		goto out;
	}
	ret = start_run(&lab, b.id, &dag, &info);
out:
	if (dag_loaded)
		bisect_dag_release(&dag);
	free(info.good_below);
	free(b.goods);
	free(abs_repo);
	start_args_release(&a);
	gitrepo_free(repo);
	if (lab_opened)
		lab_close(&lab);
	return ret;
}

/* ---- resume, list, show, log --------------------------------------------- */

static int with_bisection(int argc, char **argv, const struct global_opts *g, const char *what,
			  struct lab *lab, struct bisection *b)
{
	int64_t id = 0;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_usage(bisect_usage, 0);
		return 1;
	}
	if (argc != 2) {
		error("usage: klab bisect %s ID", what);
		return -1;
	}
	if (parse_id(argv[1], &id) < 0 || open_lab(g, lab) < 0)
		return -1;
	if (db_bisection_load(lab->db, id, b) < 0) {
		lab_close(lab);
		return -1;
	}
	return 0;
}

/* "running" in the database but nobody holds the lock: the process died. */
static const char *live_state(struct lab *lab, const struct bisection *b)
{
	if (b->state_id == BISECTION_RUNNING) {
		char *name = xstrfmt("bisect-%lld", (long long)b->id);
		int fd = lab_try_lock(lab, name);

		free(name);
		if (fd >= 0) {
			close(fd);
			return "interrupted";
		}
	}
	return b->state;
}

static int count_done(struct lab *lab, int64_t id, int *done)
{
	struct step *steps;
	size_t nr;

	*done = 0;
	if (db_steps_load(lab->db, id, &steps, &nr) < 0)
		return -1;
	for (size_t i = 0; i < nr; i++)
		if (steps[i].status_id == STEP_DONE)
			(*done)++;
	steps_release(steps, nr);
	return 0;
}

/* resume --max-runs N: a higher cap, stored.  A bisection that ended
 * "not reproduced" (the ends could not be separated at the old cap) goes
 * on with the runs it took; 1 when it may run again. */
static int raise_cap(struct lab *lab, const struct bisection *b, unsigned long max_runs)
{
	if (b->kind_id != BISECTION_JOB)
		return error("--max-runs is for job bisections; bisection %lld runs a test command", (long long)b->id);
	if (db_bisection_set_max_runs(lab->db, b->id, (unsigned)max_runs) < 0)
		return -1;
	printf("bisection %lld: at most %lu runs of each commit and end\n", (long long)b->id, max_runs);
	return b->state_id == BISECTION_DONE && b->result_id == BISECTION_NOT_REPRODUCED;
}

static int cmd_resume(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	unsigned long max_runs = 0;
	int rc, ret, reopen = 0;

	if (argc == 4 && !strcmp(argv[1], "--max-runs")) {
		if (parse_max_runs(argv[2], &max_runs) < 0)
			return EXIT_USAGE;
		argv[2] = argv[0];
		argc -= 2;
		argv += 2;
	}
	rc = with_bisection(argc, argv, g, "resume", &lab, &b);
	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_FAIL;
	if (max_runs) {
		reopen = raise_cap(&lab, &b, max_runs);
		if (reopen < 0) {
			ret = EXIT_FAIL;
			goto out;
		}
	}
	if (b.state_id == BISECTION_DONE && !reopen) {
		print_line("bisection %lld is already done: %s", (long long)b.id, b.message ? b.message : "");
		ret = b.result_id == BISECTION_CULPRIT ? EXIT_OK : EXIT_UNDECIDED;
		if (b.result_id == BISECTION_UNCONFIRMED)
			ret = EXIT_UNCONFIRMED;
	} else if (b.state_id == BISECTION_FAILED) {
		ret = error("bisection %lld failed: %s", (long long)b.id, b.message ? b.message : "");
		ret = EXIT_FAIL;
	} else {
		if (reopen)
			printf("bisection %lld: not reproduced at the old cap; measuring the ends further\n",
			       (long long)b.id);
		ret = run_bisection(&lab, &b, NULL, NULL);
		notify_if_finished(&lab, b.id);
	}
out:
	bisection_release(&b);
	lab_close(&lab);
	return ret;
}

static int cmd_list(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	int64_t *ids;
	size_t nr;

	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			print_usage(bisect_usage, 0);
			return EXIT_OK;
		}
		return usage_error("list takes no arguments");
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (db_bisection_ids(lab.db, &ids, &nr) < 0) {
		lab_close(&lab);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < nr; i++) {
		struct bisection b;
		int done;

		if (db_bisection_load(lab.db, ids[i], &b) < 0 || count_done(&lab, ids[i], &done) < 0)
			continue;
		printf("%lld\t%s\t%s\t%.12s\t%d steps\t%s\n", (long long)b.id, live_state(&lab, &b),
		       b.result ? b.result : "-", b.culprit ? b.culprit : "-", done, b.repo_path);
		bisection_release(&b);
	}
	free(ids);
	lab_close(&lab);
	return EXIT_OK;
}

static void print_argv(FILE *f, char **argv, size_t argc)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < argc; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		strbuf_add_shell_word(&sb, argv[i]);
	}
	fputs(sb.buf, f);
	strbuf_release(&sb);
}

/* A multisection's slots and rounds: which steps ran at the same time. */
static void print_rounds(struct lab *lab, const struct bisection *b, const struct step *steps, size_t nr)
{
	int64_t *ids = NULL;
	int *rounds = NULL, slots = 1, last = 0;
	size_t nr_rounds = 0;

	if (db_bisection_slots(lab->db, b->id, &slots) < 0 ||
	    db_step_rounds(lab->db, b->id, &ids, &rounds, &nr_rounds) < 0)
		return;
	if (slots > 1)
		printf("slots:      %d\n", slots);
	for (size_t i = 0; i < nr_rounds; i++)
		if (rounds[i] > last)
			last = rounds[i];
	if (nr_rounds)
		printf("rounds:     %d\n", last);
	/* a line a round: "  round R: step 4 good, step 5 bad" */
	for (int r = 1; r <= last; r++) {
		int any = 0;
		for (size_t i = 0; i < nr_rounds; i++) {
			if (rounds[i] != r)
				continue;
			for (size_t j = 0; j < nr; j++) {
				if (steps[j].id != ids[i])
					continue;
				if (!any)
					printf("  round %d:", r);
				printf("%s step %d %s", any ? "," : "", steps[j].seq,
				       steps[j].verdict ? steps[j].verdict : steps[j].status);
				any = 1;
			}
		}
		if (any)
			printf("\n");
	}
	free(ids);
	free(rounds);
}

/* The evidence of each statistical verdict of a job bisection: a step's
 * KPI values, then its verdicts' texts (control bytes as '?'). */
static void print_evidence(struct lab *lab, const struct bisection *b, const struct step *steps, size_t nr)
{
	for (size_t i = 0; b->job_path && i < nr; i++) {
		char **ev = NULL;
		size_t nev = 0;
		double *vals = NULL;
		size_t nv = 0;
		if (db_step_verdicts(lab->db, steps[i].id, &ev, &nev) < 0)
			continue;
		db_step_metric_values(lab->db, steps[i].id, b->kpi ? b->kpi : "", &vals, &nv);
		if (nev || nv) {
			printf("\nstep %d (%s %.12s):", steps[i].seq, steps[i].phase, steps[i].hash);
			for (size_t k = 0; k < nv; k++)
				printf(" %g", vals[k]);
			printf("\n");
		}
		for (size_t k = 0; k < nev; k++) {
			printf("  ");
			for (const char *p = ev[k]; *p; p++) {
				putchar(*p == '\n' && p[1] ? '\n' : (unsigned char)*p >= 32 || *p == '\n' ? *p : '?');
				if (*p == '\n' && p[1])
					printf("  ");
			}
			free(ev[k]);
		}
		free(ev);
		free(vals);
	}
}

/* The latest finished step of `phase` at `hash` (other: at any other
 * commit); -1 when none. */
static ssize_t latest_step(const struct step *steps, size_t nr, enum step_phase phase, const char *hash, int other)
{
	ssize_t found = -1;

	for (size_t i = 0; hash && i < nr; i++)
		if (steps[i].phase_id == phase && steps[i].status_id == STEP_DONE &&
		    (strcmp(steps[i].hash, hash) != 0) == other)
			found = (ssize_t)i;
	return found;
}

/* What changed (issue 18), as klab compare prints it (runcompare.c):
 * parent against culprit from the confirm steps, the profile from the
 * profile steps; while there is no confirmed pair, the good end against
 * the bad one (the reference steps). */
static void print_what_changed(struct lab *lab, const struct bisection *b, const struct step *steps, size_t nr)
{
	struct runcmp c = { 0 };
	struct strbuf sb = STRBUF_INIT;
	const char *la = "parent", *lb = b->result_id == BISECTION_UNCONFIRMED ? "suspect" : "culprit";
	ssize_t a = -1, z = -1, pa = -1, pz = -1;

	if (!b->job_path)
		return;
	if (b->culprit) {
		a = latest_step(steps, nr, STEP_PHASE_CONFIRM, b->culprit, 1);
		z = latest_step(steps, nr, STEP_PHASE_CONFIRM, b->culprit, 0);
		pa = latest_step(steps, nr, STEP_PHASE_PROFILE, b->culprit, 1);
		pz = latest_step(steps, nr, STEP_PHASE_PROFILE, b->culprit, 0);
	}
	if (a < 0 || z < 0) {
		la = "good";
		lb = "bad";
		a = b->nr_goods ? latest_step(steps, nr, STEP_PHASE_REFERENCE, b->goods[0], 0) : -1;
		z = latest_step(steps, nr, STEP_PHASE_REFERENCE, b->bad, 0);
		pa = pz = -1;
	}
	if (a < 0 || z < 0)
		return;
	if (pa < 0 || pz < 0)
		pa = pz = -1;
	c.kpi = xstrdup(b->kpi ? b->kpi : "");
	c.direction = 1;
	c.by_label = 1;
	if (runcmp_add_step(&c, lab->db, la, steps[a].id, pa < 0 ? 0 : steps[pa].id) < 0 ||
	    runcmp_add_step(&c, lab->db, lb, steps[z].id, pz < 0 ? 0 : steps[pz].id) < 0)
		goto out;
	runcmp_compute(&c);
	printf("\nmonitors, %s %.12s -> %s %.12s (steps %d and %d", la, steps[a].hash, lb, steps[z].hash,
	       steps[a].seq, steps[z].seq);
	if (pa >= 0)
		printf(", the profile from steps %d and %d", steps[pa].seq, steps[pz].seq);
	printf("):\n");
	runcmp_format_pair(&sb, &c, 0, 25);
	fputs(sb.buf, stdout);
out:
	strbuf_release(&sb);
	runcmp_release(&c);
}

/* Two change points (migration 11): the split commit and what each half
 * found, with its share of the regression and its message. */
static void print_halves(struct lab *lab, const struct bisection *b)
{
	struct half_culprit *c = NULL;
	size_t nr = 0;
	char split[41];
	int has = 0;

	if (db_bisection_split(lab->db, b->id, split, &has) < 0 || !has)
		return;
	printf("split:      %s (clearly apart from both ends: two changes, each half bisected with its own ends)\n",
	       split);
	if (db_half_culprits_load(lab->db, b->id, &c, &nr) < 0)
		return;
	for (size_t i = 0; i < nr; i++) {
		printf("half %d:     ", c[i].half);
		if (!c[i].has_culprit) {
			printf("no culprit (only skipped commits left)\n");
		} else {
			char *subj = db_commit_subject(lab->db, b->repo_id, c[i].culprit);

			printf("%s %s ", c[i].confirmed ? "culprit" : "suspect", c[i].culprit);
			print_clean(stdout, subj ? subj : "");
			if (!isnan(c[i].share))
				printf(" (%.0f%% of the regression)", c[i].share);
			printf("%s\n", c[i].confirmed ? "" : " (NOT confirmed)");
			free(subj);
		}
		printf("            ");
		print_clean(stdout, c[i].message ? c[i].message : "");
		printf("\n");
		if (c[i].has_culprit && c[i].confirmed)
			revert_check_print_half(lab, b->id, c[i].half);
	}
	half_culprits_release(c, nr);
}

/* Subjects come from repositories: print them without control bytes. */
static int cmd_show(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0;
	int done = 0, passes = 1;
	int rc = with_bisection(argc, argv, g, "show", &lab, &b);

	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_FAIL;
	/* every pass: pass 1's steps stay after an unconfirmed culprit */
	if (db_steps_load_all(lab.db, b.id, &steps, &nr) < 0) {
		bisection_release(&b);
		lab_close(&lab);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < nr; i++) {
		if (steps[i].status_id == STEP_DONE)
			done++;
		if (steps[i].pass > passes)
			passes = steps[i].pass;
	}
	printf("bisection:  %lld (%s)\n", (long long)b.id, b.kind);
	print_line("repository: %s", b.repo_path);
	printf("state:      %s\n", live_state(&lab, &b));
	printf("result:     %s\n", b.result ? b.result : "-");
	if (b.message) {
		printf("message:    ");
		print_clean(stdout, b.message);
		printf("\n");
	}
	printf("bad:        %s\n", b.bad);
	for (size_t i = 0; i < b.nr_goods; i++)
		printf("good:       %s\n", b.goods[i]);
	if (b.first_parent)
		printf("first-parent: yes\n");
	for (size_t i = 0; i < b.nr_paths; i++)
		print_line("path:       %s", b.paths[i]);
	if (b.job_path) {
		printf("job:        ");
		print_clean(stdout, b.job_path);
		printf("\nkpi:        ");
		print_clean(stdout, b.kpi ? b.kpi : "");
		printf("\n");
	} else {
		printf("command:    ");
		print_argv(stdout, b.argv, b.argc);
		printf("\n");
	}
	if (b.timeout_ms)
		printf("timeout:    %llds\n", (long long)(b.timeout_ms / 1000));
	if (b.build) {
		const char *p = b.config ? b.config : "";
		printf("build:      yes\n");
		while (*p) {
			const char *eol = strchrnul(p, '\n');
			printf("  recipe:   %.*s\n", (int)(eol - p), p);
			p = *eol ? eol + 1 : eol;
		}
	}
	printf("steps:      %d\n", done);
	if (passes > 1)
		printf("pass:       2 (pass 1's culprit was not confirmed: the range once more with fresh "
		       "references; pass 1's steps are marked 1:)\n");
	print_rounds(&lab, &b, steps, nr);
	if (b.culprit) {
		char *subj = db_commit_subject(lab.db, b.repo_id, b.culprit);
		int unconfirmed = b.result_id == BISECTION_UNCONFIRMED;

		/* a failed confirmation names a suspect, never a culprit */
		printf("%s %s ", unconfirmed ? "suspect:   " : "culprit:   ", b.culprit);
		print_clean(stdout, subj ? subj : "");
		printf("%s\n", unconfirmed ? " (NOT confirmed: see the confirm steps below)" : "");
		free(subj);
	}
	for (size_t i = 0; i < b.nr_candidates; i++)
		printf("candidate:  %s\n", b.candidates[i]);
	print_halves(&lab, &b);
	if (b.job_path) {
		int drift;
		double pct;
		if (db_bisection_drift(lab.db, b.id, &drift, &pct) == 0 && drift)
			printf("drift:      seen: the host trended by %+.2f%% per run; verdicts used time-local "
			       "references\n", pct);
		revert_check_print(&lab, b.id);
	}
	if (nr) {
		printf("\n%4s  %-12s  %-10s  %-7s  %-28s  %8s  %s\n", "step", "commit", "phase", "verdict",
		       "reason", "test", "subject");
		for (size_t i = 0; i < nr; i++) {
			char dur[32];
			struct step *s = &steps[i];
			char phase[32], half[8] = "";

			/* a half's steps: h1: or h2: */
			if (s->half)
				snprintf(half, sizeof(half), "h%d:", s->half);
			snprintf(phase, sizeof(phase), "%s%s%s", passes > 1 && s->pass == 1 ? "1:" : "", half, s->phase);
			printf("%4d  %.12s  %-10s  %-7s  %-28.28s  %8s  ", s->seq, s->hash, phase,
			       s->verdict ? s->verdict : s->status, s->reason ? s->reason : "",
			       fmt_duration(s->test_ms, dur, sizeof(dur)));
			print_clean(stdout, s->subject ? s->subject : "");
			printf("\n");
		}
		print_evidence(&lab, &b, steps, nr);
		print_what_changed(&lab, &b, steps, nr);
		printf("\nlogs: %s/logs/bisect-%lld/\n", lab.state_dir, (long long)b.id);
	}
	steps_release(steps, nr);
	bisection_release(&b);
	lab_close(&lab);
	return EXIT_OK;
}

static int cmd_log(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0;
	char split[41];
	int has_split = 0, half = 0;
	int rc = with_bisection(argc, argv, g, "log", &lab, &b);

	if (rc)
		return rc > 0 ? EXIT_OK : EXIT_FAIL;
	if (db_steps_load(lab.db, b.id, &steps, &nr) < 0 || db_bisection_split(lab.db, b.id, split, &has_split) < 0) {
		bisection_release(&b);
		lab_close(&lab);
		return EXIT_FAIL;
	}
	print_line("# klab bisection %lld of %s", (long long)b.id, b.repo_path);
	printf("# test command: ");
	print_argv(stdout, b.argv, b.argc);
	printf("\ngit bisect start%s", b.first_parent ? " --first-parent" : "");
	printf(" %s", b.bad);
	for (size_t i = 0; i < b.nr_goods; i++)
		printf(" %s", b.goods[i]);
	if (b.nr_paths) {
		printf(" --");
		for (size_t i = 0; i < b.nr_paths; i++) {
			printf(" ");
			print_argv(stdout, &b.paths[i], 1);
		}
	}
	printf("\n");
	for (size_t i = 0; i < nr; i++) {
		struct step *s = &steps[i];
		if (has_split && s->half != half) {
			/* half 1 replays as the range with the split commit bad;
			 * half 2 is a bisection of its own, written as comments */
			half = s->half;
			if (half == 1)
				printf("# two changes: the range splits at [%s]; half 1 bisects up to it\n"
				       "git bisect bad %s\n", split, split);
			else if (half == 2)
				printf("# half 2 bisects from the split commit to bad, a bisection of its own:\n"
				       "# git bisect start %s %s\n", b.bad, split);
		}
		printf("# step %d (%s): [%s] ", s->seq, s->phase, s->hash);
		print_clean(stdout, s->subject ? s->subject : "");
		printf("\n");
		if (s->phase_id == STEP_PHASE_REVERT) {
			/* klab's own commit: git bisect cannot replay it */
			print_line("# revert check: %s: %s", s->verdict ? s->verdict : s->status, s->reason ? s->reason : "");
		} else if (s->phase_id == STEP_PHASE_PROFILE) {
			/* evidence, not a verdict: nothing to replay */
			print_line("# profile runs: %s", s->reason ? s->reason : s->status);
		} else if (s->status_id == STEP_DONE) {
			print_line("# %s: %s; log %s", s->verdict, s->reason ? s->reason : "", s->log_path ? s->log_path : "");
			printf("%sgit bisect %s %s\n", half == 2 ? "# " : "", s->verdict, s->hash);
		} else {
			print_line("# %s: %s", s->status, s->reason ? s->reason : "not finished");
		}
	}
	if (b.culprit)
		printf("# first bad commit: [%s]\n", b.culprit);
	if (has_split) {
		struct half_culprit *c = NULL;
		size_t nc = 0;

		if (db_half_culprits_load(lab.db, b.id, &c, &nc) == 0)
			for (size_t i = 0; i < nc; i++)
				if (c[i].has_culprit)
					printf("# half %d: first bad commit%s: [%s]\n", c[i].half,
					       c[i].confirmed ? "" : " (NOT confirmed)", c[i].culprit);
		half_culprits_release(c, nc);
	}
	for (size_t i = 0; i < b.nr_candidates; i++)
		printf("# possible first bad commit: [%s]\n", b.candidates[i]);
	steps_release(steps, nr);
	bisection_release(&b);
	lab_close(&lab);
	return EXIT_OK;
}

static int cmd_start(int argc, char **argv, const struct global_opts *g)
{
	return start(argc, argv, g, 0, 0);
}

int bisect_start_for(int argc, char **argv, const struct global_opts *g, int64_t queue_id)
{
	return start(argc, argv, g, 0, queue_id);
}

int bisect_submit(int argc, char **argv, const struct global_opts *g)
{
	return start(argc, argv, g, 1, 0);
}

int cmd_bisect(int argc, char **argv, const struct global_opts *g)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **, const struct global_opts *);
	} subs[] = {
		{ "start", cmd_start },
		{ "resume", cmd_resume },
		{ "list", cmd_list },
		{ "show", cmd_show },
		{ "log", cmd_log },
	};

	if (argc < 2)
		return usage_error("bisect needs a subcommand");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(bisect_usage, 0);
		return EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
		if (!strcmp(argv[1], subs[i].name))
			return subs[i].fn(argc - 1, argv + 1, g);
	error("'%s' is not a bisect subcommand", argv[1]);
	return usage_error(NULL);
}
