/* klab bisect: start / resume / list / show / log / delete.  A bisection with a
 * test command, like `git bisect start` + `git bisect run`, but with
 * libgit2, in klab's own worktree, every step stored before the next;
 * or a job bisection.  Starting and running one is
 * engine/bisect-start.c's; this file is its command line and its
 * printing. */
#include "cmd/klab.h"
#include "cmd/opts.h"
#include "core/bisect.h"
#include "core/verdict.h"
#include "engine/bisect-start.h"
#include "engine/revert.h"
#include "engine/runcompare.h"
#include "kernel/kbuild.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "report/notify.h"
#include "util/run-command.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *const start_forms[] = {
	"--repo --good... --bad [--first-parent] [--paths...] [--timeout] [--build [config options]] [--slots] "
	"[--no-run] -- CMD [ARGS...]",
	"--repo --good... --bad --job [--kpi] [--max-runs] [--no-revert-check] [--slots] [config options] [--no-run]",
	NULL
};
static const struct opt_usage start_usage = {
	"bisect start", start_forms,
	"Create a bisection and run it to the end.  CMD runs with argv (no shell) in\n"
	"klab's own checkout of each commit: exit 0 good, 125 skip, 1-127 bad, 128 or\n"
	"more stops.  With --job, guests run the job and statistics on its KPI decide.",
	"BISECT, JOB BISECTION and EXIT STATUS"
};
static const char *const resume_forms[] = { "[--max-runs] ID", NULL };
static const struct opt_usage resume_usage = {
	"bisect resume", resume_forms,
	"Continue a bisection that stopped (crash, kill, aborted test).",
	"BISECT"
};
static const struct opt_usage list_usage = {
	"bisect list", NULL,
	"One line per bisection: id, state, result, culprit, steps, repository.",
	"BISECT"
};
static const char *const id_forms[] = { "ID", NULL };
static const struct opt_usage show_usage = {
	"bisect show", id_forms,
	"State, command, steps and culprit of bisection ID; for a job, what changed.",
	"BISECT"
};
static const struct opt_usage log_usage = {
	"bisect log", id_forms,
	"Bisection ID as a replayable 'git bisect' log.",
	"BISECT"
};
static const struct opt_usage delete_usage = {
	"bisect delete", id_forms,
	"Remove bisection ID, its steps, runs and logs (never a running one).",
	"BISECT"
};
static const struct opt_usage bisect_usage = {
	"bisect", NULL,
	"Find the commit that broke a test (git bisect run, natively), or a job's KPI.",
	"BISECT and JOB BISECTION"
};

#define MAX_RUNS_RANGE "the most runs of one commit, " STR(VERDICT_MIN_CAP) " to 1000 (default: the job's max_runs, else 12)"

static int parse_id(const char *s, int64_t *id)
{
	unsigned long v;
	int rc = opt_number(s, 1, 1UL << 53, &v);

	if (rc == -2)
		return error("bisection id %s is out of range (see 'klab bisect list')", s);
	if (rc < 0)
		return error("'%s' is not a bisection id (see 'klab bisect list')", s);
	*id = (int64_t)v;
	return 0;
}

/* ---- start ------------------------------------------------------------ */

/* What `bisect start` was told, and what it made of it. */
struct start_args {
	const char *repo, *bad, *job_arg, *kpi;
	struct opt_strings goods, paths;
	int no_run, first_parent, build, revert_check;
	unsigned long timeout, slots, max_runs;	/* max_runs 0: the job's */
	char **cmd;				/* the test command (operands) */
	size_t nr_cmd;
	struct recipe_opts ro;
	struct kbuild_recipe recipe;
	struct strbuf recipe_text;
	struct bisect_job job;
	char *cmd_path;
	char *abs_cmd;		/* a relative cmd[0] made absolute */
};

static void start_args_release(struct start_args *a)
{
	opt_strings_release(&a->goods);
	opt_strings_release(&a->paths);
	recipe_opts_release(&a->ro);
	kbuild_recipe_release(&a->recipe);
	strbuf_release(&a->recipe_text);
	bisect_job_release(&a->job);
	free(a->cmd_path);
	free(a->abs_cmd);
}

/* The options of start (submit: of submit bisect).  -1 go on, else the
 * exit status (help printed, or a usage error said). */
static int start_parse(struct start_args *a, int argc, char **argv, const struct opt_usage *u)
{
	struct opt opts[] = {
		OPT_STRING(0, "repo", &a->repo, "PATH", "the git repository (read only for klab)"),
		OPT_LIST(0, "good", &a->goods, "REV", "a good revision (repeatable)"),
		OPT_STRING_F(0, "bad", &a->bad, "REV", "the bad revision", OPT_ONCE),
		OPT_BOOL(0, "first-parent", &a->first_parent, "follow only first parents"),
		OPT_LIST_F(0, "paths", &a->paths, "P", "only commits touching P count (repeatable; P Q ...)", OPT_GREEDY),
		OPT_UINT(0, "timeout", &a->timeout, "SEC", "a test running longer is killed, its commit skipped", 1,
			 30 * 86400),
		OPT_BOOL(0, "build", &a->build, "build each commit's kernel first (KLAB_KERNEL, ...)"),
		OPT_UINT(0, "slots", &a->slots, "K", "test K commits at once (1 to " STR(BISECT_MAX_SLOTS) ", default 1)",
			 1, BISECT_MAX_SLOTS),
		OPT_BOOL(0, "no-run", &a->no_run, "only create it ('klab bisect resume ID' runs it)"),
		OPT_GROUP("job bisection"),
		OPT_STRING(0, "job", &a->job_arg, "FILE", "measure each commit with this job (klab-job(5))"),
		OPT_STRING(0, "kpi", &a->kpi, "METRIC", "the metric that decides (default: the job's kpi)"),
		OPT_UINT_R(0, "max-runs", &a->max_runs, "N", "most runs of a commit and of each end (3 to 1000)",
			   VERDICT_MIN_CAP, 1000, MAX_RUNS_RANGE),
		OPT_SET_INT(0, "no-revert-check", &a->revert_check, "no revert check of the confirmed culprit", 0),
		OPT_RECIPE_ROWS(&a->ro),
		OPT_END()
	};

	/* the first operand is the test command: its options are its own */
	argc = parse_options(argc, argv, u, opts, PARSE_OPT_STOP_AT_NON_OPTION);
	if (argc < 0)
		return parse_options_exit(argc);
	a->cmd = argv;
	a->nr_cmd = (size_t)argc;
	return -1;
}

/* --job FILE: the job loaded (a job bisection always builds, with the
 * job's fragments).  0 go on, else the exit status. */
static int start_job(struct start_args *a, const struct opt_usage *u)
{
	if (a->nr_cmd)
		return usage_error(u, "start takes either --job or a test command, not both");
	if (bisect_job_load(&a->job, a->job_arg) < 0)
		return EXIT_FAIL;
	if (a->kpi && check_kpi_option(&a->job.job, a->kpi) < 0)
		return EXIT_USAGE;
	a->build = 1;
	for (size_t i = 0; i < a->job.job.nr_fragments; i++)
		opt_strings_add(&a->ro.fragments, a->job.job.fragments[i]);
	return 0;
}

/* The slots' guests run at once, each pinned to CPUs of its own. */
static void warn_slots(const struct start_args *a)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned vcpus = a->job.job.guest.vcpus;

	if (cpus > 0 && (long)a->slots * (long)vcpus > cpus)
		warning("--slots %lu runs %lu guests of %u vCPU%s at once; this host has %ld CPU%s, so a slot "
			"whose guest does not fit stops the bisection (use a job with fewer vCPUs, or fewer slots)",
			a->slots, a->slots, vcpus, vcpus == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s");
}

/* The values' own checks (no lab, no repository).  0 go on, else the
 * exit status. */
static int start_check_values(struct start_args *a, const struct opt_usage *u)
{
	if (!a->repo || !a->bad || !a->goods.nr)
		return usage_error(u, "start needs --repo, --bad and at least one --good");
	/* what is stored as a name or path (or a KPI) is one line of text */
	if (check_no_controls("--repo", a->repo) < 0 || check_no_controls("--job", a->job_arg) < 0 ||
	    check_no_controls("--kpi", a->kpi) < 0)
		return EXIT_USAGE;
	for (size_t i = 0; i < a->paths.nr; i++)
		if (check_no_controls("--paths", a->paths.v[i]) < 0)
			return EXIT_USAGE;
	if (!a->job_arg && (a->kpi || a->max_runs))
		return usage_error(u, a->kpi ? "--kpi needs --job" : "--max-runs needs --job");
	if (!a->job_arg && !a->nr_cmd)
		return usage_error(u, "start needs a test command after '--' (or --job FILE)");
	if (recipe_opts_given(&a->ro) && !a->build && !a->job_arg)
		return usage_error(u, "config options (--config, --fragment, ...) need --build");
	return 0;
}

/* A relative test command ("./test.sh", "tests/t.sh") names a file of
 * the caller's directory, as a shell would run it: made absolute here,
 * before the bisection is stored (the steps run in klab's worktree). */
static int start_abs_cmd(struct start_args *a)
{
	char *cwd = getcwd(NULL, 0);

	if (!cwd)
		return error("cannot read the current directory to find the test command '%s': %s", a->cmd[0],
			     strerror(errno));
	a->abs_cmd = xstrfmt("%s/%s", cwd, a->cmd[0]);
	free(cwd);
	a->cmd[0] = a->abs_cmd;
	return 0;
}

/* Everything about the arguments that needs no lab or repository.  0 go
 * on, else the exit status. */
static int start_check(struct start_args *a, const struct opt_usage *u)
{
	int rc = start_check_values(a, u);

	if (rc || (a->job_arg && (rc = start_job(a, u))))
		return rc;
	if (a->job_arg && a->slots > 1)
		warn_slots(a);
	if (a->build) {
		if (recipe_from_opts(&a->ro, &a->recipe) < 0)
			return EXIT_FAIL;
		kbuild_recipe_to_text(&a->recipe, &a->recipe_text);
	}
	if (!a->job_arg && strchr(a->cmd[0], '/') && a->cmd[0][0] != '/' && start_abs_cmd(a) < 0)
		return EXIT_FAIL;
	if (!a->job_arg && !find_executable(a->cmd[0], &a->cmd_path)) {
		error("test command '%s' not found%s", a->cmd[0],
		      strchr(a->cmd[0], '/') ? " or not executable" : " in $PATH");
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < a->paths.nr; i++) {
		const char *p = a->paths.v[i];
		if (!*p || p[0] == '/' || strstr(p, "..")) {
			error("--paths '%s': give a path relative to the repository top", p);
			return EXIT_FAIL;
		}
	}
	return 0;
}

static void start_request(const struct start_args *a, struct bisect_request *rq)
{
	memset(rq, 0, sizeof(*rq));
	rq->repo = a->repo;
	rq->bad = a->bad;
	rq->goods = a->goods.v;
	rq->nr_goods = a->goods.nr;
	rq->first_parent = a->first_parent;
	rq->paths = a->paths.v;
	rq->nr_paths = a->paths.nr;
	rq->timeout_ms = (int64_t)a->timeout * 1000;
	rq->recipe_text = a->build ? a->recipe_text.buf : NULL;
	rq->argv = a->cmd;
	rq->argc = a->nr_cmd;
	if (a->job_arg) {
		rq->job = &a->job.job;
		rq->job_path = a->job.path;
		rq->job_text = a->job.text;
		rq->kpi = a->kpi ? a->kpi : a->job.job.kpi;
		rq->argc = 0;
	}
	rq->slots = (unsigned)a->slots;
	rq->max_runs = (unsigned)a->max_runs;
	rq->revert_check = a->revert_check;
}

/* Everything is checked before the database sees anything; submit:
 * queued for a worker instead of run. */
static int start(int argc, char **argv, const struct global_opts *g, int submit)
{
	struct opt_usage u = start_usage;
	struct start_args a;
	struct bisect_request rq;
	struct bisect_range range = { 0 };
	struct lab lab;
	int64_t id;
	int ret;

	memset(&a, 0, sizeof(a));
	strbuf_init(&a.recipe_text, 0);
	a.slots = 1;
	a.revert_check = 1;
	if (submit)
		u.name = "submit bisect";
	if ((ret = start_parse(&a, argc, argv, &u)) >= 0 || (ret = start_check(&a, &u))) {
		start_args_release(&a);
		return ret;
	}
	if (open_lab(g, &lab) < 0) {
		start_args_release(&a);
		return EXIT_FAIL;
	}
	start_request(&a, &rq);
	ret = EXIT_FAIL;
	if (submit) {
		ret = bisect_queue_request(&lab, &rq) < 0 ? EXIT_FAIL : EXIT_OK;
	} else if (bisect_create(&lab, &rq, &range, &id) == 0) {
		if (a.no_run) {
			printf("created; run it with 'klab bisect resume %lld'\n", (long long)id);
			ret = EXIT_OK;
		} else {
			ret = bisection_run(&lab, id, &range);
			notify_bisection_if_ended(&lab, id);
		}
	}
	bisect_range_release(&range);
	start_args_release(&a);
	lab_close(&lab);
	return ret;
}

static int cmd_start(int argc, char **argv, const struct global_opts *g)
{
	return start(argc, argv, g, 0);
}

int bisect_submit(int argc, char **argv, const struct global_opts *g)
{
	return start(argc, argv, g, 1);
}

/* ---- resume, list, show, log --------------------------------------------- */

/* The one ID operand of resume, show and log (argc/argv: the operands),
 * the lab opened and the bisection loaded.  -1 to go on, else the exit
 * status. */
static int with_bisection(int argc, char **argv, const struct opt_usage *u, const struct global_opts *g,
			  struct lab *lab, struct bisection *b)
{
	int64_t id = 0;

	if (argc != 1)
		return usage_error(u, argc ? "%s takes one bisection id (got '%s' too)" : "%s needs a bisection id%s",
				   u->name, argc ? argv[1] : "");
	if (parse_id(argv[0], &id) < 0)
		return EXIT_USAGE;
	if (open_lab(g, lab) < 0)
		return EXIT_FAIL;
	if (db_bisection_load(lab->db, id, b) < 0) {
		lab_close(lab);
		return EXIT_FAIL;
	}
	return -1;
}

/* Parse an ID-only subcommand's options (none) and load the bisection. */
static int id_command(int argc, char **argv, const struct opt_usage *u, const struct global_opts *g,
		      struct lab *lab, struct bisection *b)
{
	struct opt opts[] = { OPT_END() };

	argc = parse_options(argc, argv, u, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	return with_bisection(argc, argv, u, g, lab, b);
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
	int ret, reopen = 0;
	struct opt opts[] = {
		OPT_UINT_R(0, "max-runs", &max_runs, "N", "raise a job bisection's cap of runs (kept)", VERDICT_MIN_CAP,
			   1000, MAX_RUNS_RANGE),
		OPT_END()
	};

	argc = parse_options(argc, argv, &resume_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if ((ret = with_bisection(argc, argv, &resume_usage, g, &lab, &b)) >= 0)
		return ret;
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
		error("bisection %lld failed: %s", (long long)b.id, b.message ? b.message : "");
		ret = EXIT_FAIL;
	} else {
		if (reopen)
			printf("bisection %lld: not reproduced at the old cap; measuring the ends further\n",
			       (long long)b.id);
		ret = bisection_run(&lab, b.id, NULL);
		notify_bisection_if_ended(&lab, b.id);
	}
out:
	bisection_release(&b);
	lab_close(&lab);
	return ret;
}

static int cmd_list(int argc, char **argv, const struct global_opts *g)
{
	struct opt opts[] = { OPT_END() };
	struct lab lab;
	int64_t *ids;
	size_t nr;

	argc = parse_options(argc, argv, &list_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&list_usage, "list takes no arguments (got '%s')", argv[0]);
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

/* What bisection b is: its state, ends, command or job, recipe. */
static void print_what_it_is(struct lab *lab, const struct bisection *b)
{
	printf("bisection:  %lld (%s)\n", (long long)b->id, b->kind);
	print_line("repository: %s", b->repo_path);
	printf("state:      %s\n", live_state(lab, b));
	printf("result:     %s\n", b->result ? b->result : "-");
	if (b->message) {
		printf("message:    ");
		print_clean(stdout, b->message);
		printf("\n");
	}
	printf("bad:        %s\n", b->bad);
	for (size_t i = 0; i < b->nr_goods; i++)
		printf("good:       %s\n", b->goods[i]);
	if (b->first_parent)
		printf("first-parent: yes\n");
	for (size_t i = 0; i < b->nr_paths; i++)
		print_line("path:       %s", b->paths[i]);
	if (b->job_path) {
		printf("job:        ");
		print_clean(stdout, b->job_path);
		printf("\nkpi:        ");
		print_clean(stdout, b->kpi ? b->kpi : "");
		printf("\n");
	} else {
		printf("command:    ");
		print_argv(stdout, b->argv, b->argc);
		printf("\n");
	}
	if (b->timeout_ms)
		printf("timeout:    %llds\n", (long long)(b->timeout_ms / 1000));
	if (b->build) {
		const char *p = b->config ? b->config : "";
		printf("build:      yes\n");
		while (*p) {
			const char *eol = strchrnul(p, '\n');
			printf("  recipe:   %.*s\n", (int)(eol - p), p);
			p = *eol ? eol + 1 : eol;
		}
	}
}

/* Subjects come from repositories: print them without control bytes. */
static int cmd_show(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0;
	int done = 0, passes = 1;
	int rc = id_command(argc, argv, &show_usage, g, &lab, &b);

	if (rc >= 0)
		return rc;
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
	print_what_it_is(&lab, &b);
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
	int rc = id_command(argc, argv, &log_usage, g, &lab, &b);

	if (rc >= 0)
		return rc;
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

/* Refused while its process runs (it holds the bisection's lock, which
 * delete holds in turn while it removes): a stopped, failed, done or
 * interrupted one goes, with its log directory. */
static int cmd_delete(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct bisection b;
	char *name, *logs;
	int ret, fd;

	if ((ret = id_command(argc, argv, &delete_usage, g, &lab, &b)) >= 0)
		return ret;
	name = xstrfmt("bisect-%lld", (long long)b.id);
	fd = lab_try_lock(&lab, name);
	ret = EXIT_FAIL;
	if (fd < 0) {
		error("bisection %lld is running (its process holds it): stop it first, then delete it",
		      (long long)b.id);
		goto out;
	}
	logs = xstrfmt("%s/logs/bisect-%lld", lab.state_dir, (long long)b.id);
	if (db_bisection_delete(lab.db, b.id) == 0) {
		if (access(logs, F_OK) == 0)
			remove_tree(logs);
		printf("bisection %lld deleted (%s, %s)\n", (long long)b.id, b.state, b.result ? b.result : "no result");
		ret = EXIT_OK;
	}
	free(logs);
	close(fd);
out:
	free(name);
	bisection_release(&b);
	lab_close(&lab);
	return ret;
}

int cmd_bisect(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "start", cmd_start, NULL },
		{ "resume", cmd_resume, NULL },
		{ "list", cmd_list, NULL },
		{ "show", cmd_show, NULL },
		{ "log", cmd_log, NULL },
		{ "delete", cmd_delete, NULL },
	};

	return run_subcommand(&bisect_usage, subs, ARRAY_SIZE(subs), argc, argv, g);
}
