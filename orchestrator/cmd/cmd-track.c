/* klab track: follow a branch, test each new tip with the track's jobs,
 * compare it with the last tested tip and queue a bisection for what got
 * worse.  Fetching (and its record) is separate from testing, so that
 * `klab track fetch` can run alone; the decisions are in track.c. */
#include "cmd/klab.h"
#include "cmd/opts.h"
#include "engine/bisect-start.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "job/job.h"
#include "kernel/kbuild.h"
#include "report/notify.h"
#include "guest/guest.h"
#include "guest/measure.h"
#include "kernel/kernel.h"
#include "core/stats.h"
#include "core/track.h"
#include "core/verdict.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const add_forms[] = {
	"NAME --repo --remote --branch --job... [--threshold] [--notify...] [config options]", NULL
};
static const struct opt_usage add_usage = {
	"track add", add_forms,
	"Track BRANCH of a remote in the repository at PATH, fetched into klab's own ref\n"
	"refs/klab/track/NAME: your branches, HEAD and index are never touched.  NAME:\n"
	"1-64 of [A-Za-z0-9._-]; each job's fragments join the config recipe.",
	"TRACK"
};
static const struct opt_usage list_usage = {
	"track list", NULL,
	"One line per track: name, branch and remote, jobs, the last tested tip and its\n"
	"status, the last fetch.",
	"TRACK"
};
static const char *const name_forms[] = { "NAME", NULL };
static const struct opt_usage show_usage = {
	"track show", name_forms,
	"The track, its jobs, its last fetch and every tested tip, newest first, with\n"
	"its status, the KPI of each job before and after and the bisection it started.",
	"TRACK"
};
static const struct opt_usage remove_usage = {
	"track remove", name_forms,
	"Forget the track, its tips and fetch records, and delete its ref\n"
	"refs/klab/track/NAME.  Measured runs and bisections are kept.",
	"TRACK"
};
static const char *const names_forms[] = { "[NAME...]", NULL };
static const struct opt_usage fetch_usage = {
	"track fetch", names_forms,
	"Fetch the branch of each track (all without NAME) and record whether its tip\n"
	"moved, stayed, was rewritten or could not be fetched.  Nothing is built or run.",
	"TRACK"
};
static const struct opt_usage run_usage = {
	"track run", names_forms,
	"What cron or the systemd timer runs: fetch each track (all without NAME); a new\n"
	"tip is built, its jobs run and compared with the last tested tip; a regression\n"
	"queues a bisection (run it with 'klab worker') and sends a notice.",
	"TRACK"
};
static const struct opt_usage track_usage = {
	"track", NULL,
	"Follow a branch, test each new tip and bisect what got worse.",
	"TRACK"
};

static char *track_ref(const char *name)
{
	return xstrfmt("refs/klab/track/%s", name);
}

static const char *fmt_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!t || !localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, len, "-");
	return buf;
}

/* A track's remote as printed: its credentials cut, as everywhere a URL
 * is shown.  Valid until the next call. */
static const char *shown_remote(const char *remote)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	strbuf_add_url_redacted(&sb, remote, 1);
	return sb.buf;
}

/* The track's --notify targets, one a line, as 'klab notify list' shows
 * them: a webhook by scheme and host only. */
static void print_targets(const char *indent, const char *targets)
{
	for (const char *p = targets; p && *p;) {
		const char *eol = strchrnul(p, '\n');
		char *t = xstrndup(p, (size_t)(eol - p));
		const char *kind = track_notify_kind(t);
		struct strbuf sb = STRBUF_INIT;

		notify_describe_target(&sb, kind ? kind : "webhook", t);
		print_line("%s%s", indent, sb.buf);
		strbuf_release(&sb);
		free(t);
		p = *eol ? eol + 1 : eol;
	}
}

/* ---- add ---------------------------------------------------------------- */

/* A remote as it will be used by cron: a configured remote's name and
 * URLs stay, a local path becomes absolute. */
static int resolve_remote(struct gitrepo *repo, const char *remote, char **out)
{
	const char *colon = strchr(remote, ':'), *slash = strchr(remote, '/');

	*out = NULL;
	if (!*remote || remote[0] == '-')
		return error("--remote '%s': not a remote, URL or path", remote);
	if (gitrepo_has_remote(repo, remote) || strstr(remote, "://")) {
		*out = xstrdup(remote);
		return 0;
	}
	if (access(remote, F_OK) == 0) {
		*out = real_path(remote);
		return *out ? 0 : -1;
	}
	/* scp-like user@host:path */
	if (colon && colon != remote && (!slash || colon < slash)) {
		*out = xstrdup(remote);
		return 0;
	}
	return error("--remote '%s': not a remote of the repository, a URL or an existing path", remote);
}

static int parse_threshold(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1000)
		return -1;
	*out = v;
	return 0;
}

/* What `track add` was given, checked before the database sees any of it. */
struct add_args {
	const char *name, *repo, *remote, *branch;
	struct opt_strings jobs;
	struct strbuf notify;
	struct recipe_opts ro;
	double threshold;
};

static void add_args_release(struct add_args *a)
{
	opt_strings_release(&a->jobs);
	strbuf_release(&a->notify);
	recipe_opts_release(&a->ro);
}

static int threshold_option(const struct opt *o, const char *arg)
{
	if (parse_threshold(arg, o->value) < 0) {
		usage_error(&add_usage, "--threshold takes a percentage from 0 to 1000, not '%s'", arg);
		return -1;
	}
	return 0;
}

static int notify_option(const struct opt *o, const char *arg)
{
	struct strbuf *sb = o->value;

	if (!track_notify_kind(arg))
		return error("--notify '%s': neither a mail address nor an http(s) URL", arg);
	strbuf_addf(sb, "%s%s", sb->len ? "\n" : "", arg);
	return 0;
}

/* -1 parsed, else the exit status (help printed, or a message). */
static int add_parse(int argc, char **argv, struct add_args *a)
{
	struct opt opts[] = {
		OPT_STRING(0, "repo", &a->repo, "PATH", "the repository tips are fetched into and built from"),
		OPT_STRING(0, "remote", &a->remote, "NAME|URL", "a remote of PATH, or a URL or path git understands"),
		OPT_STRING(0, "branch", &a->branch, "BRANCH", "the branch to follow"),
		OPT_LIST(0, "job", &a->jobs, "FILE", "a job run on every tip (repeatable; klab-job(5))"),
		OPT_CALLBACK(0, "threshold", &a->threshold, "PCT", "smallest KPI change that counts (default 5)",
			     threshold_option),
		OPT_CALLBACK(0, "notify", &a->notify, "ADDR|URL", "where notices go (repeatable; default klab.conf's)",
			     notify_option),
		OPT_RECIPE_ROWS(&a->ro),
		OPT_END()
	};

	argc = parse_options(argc, argv, &add_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc != 1)
		return usage_error(&add_usage, argc ? "add takes one NAME (got '%s' too)" : "add needs a NAME%s",
				   argc ? argv[1] : "");
	a->name = argv[0];
	return -1;
}

/* The values' own checks (no file, repository or database opened). */
static int add_check(const struct add_args *a)
{
	if (!track_name_valid(a->name)) {
		error("track name '%s': use 1-64 of [A-Za-z0-9._-], starting with a letter or digit", a->name);
		return EXIT_USAGE;
	}
	if (!a->repo || !a->remote || !a->branch || !a->jobs.nr)
		return usage_error(&add_usage, "add needs --repo, --remote, --branch and at least one --job");
	if (check_no_controls("--repo", a->repo) < 0 || check_no_controls("--remote", a->remote) < 0 ||
	    check_no_controls("--branch", a->branch) < 0)
		return EXIT_USAGE;
	for (size_t i = 0; i < a->jobs.nr; i++)
		if (check_no_controls("--job", a->jobs.v[i]) < 0)
			return EXIT_USAGE;
	if (!gitrepo_branch_name_valid(a->branch)) {
		error("--branch '%s': not a valid branch name", a->branch);
		return EXIT_USAGE;
	}
	return 0;
}

/* The track row from the arguments: repository, remote, jobs (each parsed
 * and made absolute) and recipe.  0 ok, -1 error printed. */
static int add_resolve(const struct add_args *a, struct db_track *t)
{
	struct strbuf recipe_text = STRBUF_INIT;
	struct kbuild_recipe recipe = { 0 };
	struct gitrepo *repo = NULL;
	size_t alloc_abs = 0;
	int ret = -1;

	if (gitrepo_open(&repo, a->repo) < 0)
		goto out;
	t->repo_path = real_path(gitrepo_path(repo));
	if (!t->repo_path || resolve_remote(repo, a->remote, &t->remote) < 0)
		goto out;
	for (size_t i = 0; i < a->jobs.nr; i++) {
		struct job job = { 0 };
		char *abs;
		if (job_parse_file(&job, a->jobs.v[i]) < 0)
			goto out;
		job_release(&job);
		abs = real_path(a->jobs.v[i]);
		if (!abs)
			goto out;
		ALLOC_GROW(t->jobs, t->nr_jobs + 1, alloc_abs);
		t->jobs[t->nr_jobs++] = abs;
	}
	if (recipe_from_opts(&a->ro, &recipe) < 0)
		goto out;
	kbuild_recipe_to_text(&recipe, &recipe_text);
	t->name = xstrdup(a->name);
	t->branch = xstrdup(a->branch);
	t->config = strbuf_detach(&recipe_text, NULL);
	t->threshold_pct = a->threshold;
	t->notify = a->notify.len ? xstrdup(a->notify.buf) : NULL;
	ret = 0;
out:
	strbuf_release(&recipe_text);
	kbuild_recipe_release(&recipe);
	gitrepo_free(repo);
	return ret;
}

static int track_add(int argc, char **argv, const struct global_opts *g)
{
	struct add_args a = { .notify = STRBUF_INIT, .threshold = 5.0 };
	struct db_track t = { 0 };
	struct lab lab;
	int ret, lab_opened = 0;
	int64_t id;

	if ((ret = add_parse(argc, argv, &a)) >= 0 || (ret = add_check(&a)))
		goto out;
	/* everything checked before the database sees anything */
	ret = EXIT_FAIL;
	if (add_resolve(&a, &t) < 0 || open_lab(g, &lab) < 0)
		goto out;
	lab_opened = 1;
	if (db_repo_id(lab.db, t.repo_path, &t.repo_id) < 0 || db_track_add(lab.db, &t, &id) < 0)
		goto out;
	print_line("track %s: branch %s of %s into %s, %zu job%s, threshold %.1f%%", t.name, t.branch,
		   shown_remote(t.remote), t.repo_path, t.nr_jobs, t.nr_jobs == 1 ? "" : "s", t.threshold_pct);
	printf("run it with 'klab track run %s' (or the klab-track timer / a cron line)\n", t.name);
	ret = EXIT_OK;
out:
	db_track_release(&t);
	add_args_release(&a);
	if (lab_opened)
		lab_close(&lab);
	return ret;
}

/* ---- list, show, remove --------------------------------------------------- */

static int track_list(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	char **names = NULL;
	size_t nr = 0;
	int ret = EXIT_FAIL;

	struct opt opts[] = { OPT_END() };

	argc = parse_options(argc, argv, &list_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&list_usage, "list takes no arguments (got '%s')", argv[0]);
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (db_track_names(lab.db, &names, &nr) < 0)
		goto out;
	if (!nr)
		printf("no tracks (add one with 'klab track add')\n");
	for (size_t i = 0; i < nr; i++) {
		struct db_track t;
		struct db_track_tip *tips = NULL;
		struct db_track_fetch f;
		size_t nt = 0;
		int hf;

		if (db_track_load(lab.db, names[i], &t) != 1)
			goto out;
		if (db_track_tips(lab.db, t.id, &tips, &nt) < 0 || (hf = db_track_last_fetch(lab.db, t.id, &f)) < 0) {
			db_track_release(&t);
			goto out;
		}
		printf("%s\t%s of %s\t%zu job%s\t", t.name, t.branch, shown_remote(t.remote), t.nr_jobs, t.nr_jobs == 1 ? "" : "s");
		if (nt)
			printf("tip %.12s %s", tips[0].hash, tips[0].status);
		else
			printf("no tip tested");
		if (hf)
			printf("\tfetch %s%s", f.outcome, !strcmp(f.outcome, "failed") ? " (see 'klab track show')" : "");
		printf("\n");
		if (hf)
			db_track_fetch_release(&f);
		db_track_tips_free(tips, nt);
		db_track_release(&t);
	}
	ret = EXIT_OK;
out:
	strings_free(names, nr);
	lab_close(&lab);
	return ret;
}

/* show and remove: the one NAME they take, the lab opened and that track
 * loaded into *t; -1 to go on, else the exit code (all closed). */
static int open_named_track(int argc, char **argv, const struct global_opts *g, const struct opt_usage *u,
			    struct lab *lab, struct db_track *t)
{
	struct opt opts[] = { OPT_END() };
	int rc;

	argc = parse_options(argc, argv, u, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc != 1)
		return usage_error(u, "%s takes one NAME", u->name);
	if (open_lab(g, lab) < 0)
		return EXIT_FAIL;
	rc = db_track_load(lab->db, argv[0], t);
	if (rc > 0)
		return -1;
	if (!rc)
		error("no track named '%s' (see 'klab track list')", argv[0]);
	lab_close(lab);
	return EXIT_FAIL;
}

static int track_show(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct db_track t;
	struct db_track_tip *tips = NULL;
	struct db_track_fetch f;
	size_t nt = 0;
	char when[32];
	int hf = 0, ret;

	ret = open_named_track(argc, argv, g, &show_usage, &lab, &t);
	if (ret >= 0)
		return ret;
	ret = EXIT_FAIL;
	if (db_track_tips(lab.db, t.id, &tips, &nt) < 0 || (hf = db_track_last_fetch(lab.db, t.id, &f)) < 0)
		goto out;
	printf("track:      %s\n", t.name);
	print_line("repository: %s (fetched into refs/klab/track/%s)", t.repo_path, t.name);
	print_line("branch:     %s of %s", t.branch, shown_remote(t.remote));
	printf("threshold:  %.1f%%\n", t.threshold_pct);
	for (size_t i = 0; i < t.nr_jobs; i++)
		print_line("job:        %s", t.jobs[i]);
	if (t.notify) {
		printf("notify:\n");
		print_targets("            ", t.notify);
	}
	if (hf) {
		printf("last fetch: %s %s", fmt_time(f.created_at, when, sizeof(when)), f.outcome);
		if (f.new_tip[0])
			printf(" %.12s", f.new_tip);
		printf("\n");
		if (f.message)
			print_lines("            ", f.message);
	} else {
		printf("last fetch: never\n");
	}
	printf("\n%zu tested tip%s, newest first:\n", nt, nt == 1 ? "" : "s");
	for (size_t i = 0; i < nt; i++) {
		const struct db_track_tip *tp = &tips[i];
		printf("%s  %.12s  %-12s", fmt_time(tp->created_at, when, sizeof(when)), tp->hash, tp->status);
		if (tp->compared_to)
			printf(" vs %.12s", tp->compared_to);
		if (tp->subject) {
			printf("  ");
			print_lines("", tp->subject);
		} else {
			printf("\n");
		}
		if (tp->message)
			print_lines("    ", tp->message);
		if (tp->kpi_text)
			print_lines("    ", tp->kpi_text);
		if (tp->bisection_id)
			printf("    bisection %lld (queue job %lld): klab bisect show %lld\n", (long long)tp->bisection_id,
			       (long long)tp->queue_job_id, (long long)tp->bisection_id);
	}
	ret = EXIT_OK;
out:
	if (hf > 0)
		db_track_fetch_release(&f);
	db_track_tips_free(tips, nt);
	db_track_release(&t);
	lab_close(&lab);
	return ret;
}

static int track_remove(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct db_track t;
	struct gitrepo *repo = NULL;
	char *ref;
	int ret;

	ret = open_named_track(argc, argv, g, &remove_usage, &lab, &t);
	if (ret >= 0)
		return ret;
	ret = EXIT_FAIL;
	if (db_track_remove(lab.db, t.name) < 0)
		goto out;
	/* the ref goes too, if the repository is still there */
	ref = track_ref(t.name);
	if (gitrepo_open(&repo, t.repo_path) == 0)
		gitrepo_ref_delete(repo, ref);
	free(ref);
	printf("track %s removed (its runs and bisections are kept)\n", t.name);
	ret = EXIT_OK;
out:
	gitrepo_free(repo);
	db_track_release(&t);
	lab_close(&lab);
	return ret;
}

/* ---- fetch ------------------------------------------------------------------ */

struct ancestry {
	struct gitrepo *repo;
	const char *tip;
};

static int is_ancestor_of_tip(const char *hash, void *data)
{
	struct ancestry *a = data;
	char hex[41];

	/* a commit gone from the repository (gc after a force-push) is no ancestor */
	if (gitrepo_resolve(a->repo, hash, hex) < 0)
		return -1;
	return gitrepo_is_ancestor(a->repo, hash, a->tip);
}

/* The tested tip `tip` is compared with: index in tips[] or -1, and a
 * message when history was rewritten or there is no tested ancestor. */
static int choose_base(struct gitrepo *repo, const struct db_track_tip *tips, size_t nt, const char *tip,
		       char **message)
{
	struct track_tip_ref *refs = xcalloc(nt + 1, sizeof(*refs));
	struct ancestry a = { repo, tip };
	size_t rewritten, measured = 0;
	int base;

	for (size_t i = 0; i < nt; i++) {
		refs[i].hash = tips[i].hash;
		refs[i].status = tips[i].status;
		measured += track_status_measured(tips[i].status) && strcmp(tips[i].hash, tip);
	}
	base = track_choose_base(refs, nt, is_ancestor_of_tip, &a, &rewritten);
	free(refs);
	*message = NULL;
	if (base >= 0 && rewritten)
		*message = xstrfmt("history rewritten: compared with %.12s, the newest tested tip that is still an "
				   "ancestor (%zu newer tested tip%s not)", tips[base].hash, rewritten,
				   rewritten == 1 ? " is" : "s are");
	else if (base < 0 && measured)
		*message = xstrfmt("history rewritten: none of the %zu tested tip%s is an ancestor of %.12s; "
				   "it becomes a new baseline", measured, measured == 1 ? "" : "s", tip);
	return base;
}

/* Fetch a track's branch into its ref and record how it went: 0 with
 * the tip in tip[], -1 when it could not be fetched (recorded). */
static int fetch_track(struct lab *lab, const struct db_track *t, struct gitrepo *repo, char tip[41])
{
	char *ref = track_ref(t->name), old[41], *msg = NULL;
	const char *outcome;
	int ret = -1;

	tip[0] = '\0';
	if (gitrepo_fetch_branch(repo, t->remote, t->branch, ref, old, tip) < 0) {
		db_track_fetch_record(lab->db, t->id, "failed", old, NULL, error_last());
		printf("%s: fetch failed, recorded; the last tested tip stays the base\n", t->name);
		goto out;
	}
	if (!old[0]) {
		outcome = "first";
		printf("%s: first fetch, tip %.12s\n", t->name, tip);
	} else if (!strcmp(old, tip)) {
		outcome = "unchanged";
		printf("%s: unchanged at %.12s\n", t->name, tip);
	} else if (gitrepo_is_ancestor(repo, old, tip) == 1) {
		outcome = "moved";
		printf("%s: moved %.12s..%.12s\n", t->name, old, tip);
	} else {
		struct db_track_tip *tips = NULL;
		size_t nt = 0;

		outcome = "rewritten";
		if (db_track_tips(lab->db, t->id, &tips, &nt) < 0)
			goto out;
		choose_base(repo, tips, nt, tip, &msg);
		if (!msg)
			msg = xstrdup(nt ? "history rewritten; the tested tips were not measured (build or boot failed)"
					 : "history rewritten; no tip tested yet");
		printf("%s: history rewritten (force-push): was %.12s, now %.12s\n  %s\n", t->name, old, tip, msg);
		db_track_tips_free(tips, nt);
	}
	if (db_track_fetch_record(lab->db, t->id, outcome, old, tip, msg) < 0)
		goto out;
	ret = 0;
out:
	free(msg);
	free(ref);
	return ret;
}

/* The tracks named on the command line, or all. */
static int load_names(struct lab *lab, int argc, char **argv, char ***names, size_t *nr)
{
	if (argc > 0) {
		*names = xcalloc((size_t)argc, sizeof(char *));
		*nr = 0;
		for (int i = 0; i < argc; i++)
			(*names)[(*nr)++] = xstrdup(argv[i]);
		return 0;
	}
	return db_track_names(lab->db, names, nr);
}

/* ---- run: test a tip ---------------------------------------------------------- */

/* What a tip's test learnt about one job. */
struct job_outcome {
	struct job job;
	int parsed;
	char *recipe_text;	/* the track's recipe with the job's fragments */
	double *prev, *cur;
	size_t np, nc;
	struct track_cmp cmp;
	int compared;
	const char *change;	/* track_change_name(), or "no baseline" */
};

static void job_outcome_release(struct job_outcome *o)
{
	if (o->parsed)
		job_release(&o->job);
	FREE_MANY(o->recipe_text, o->prev, o->cur);
	memset(o, 0, sizeof(*o));
}

struct tip_run {
	struct lab *lab;
	const struct db_track *t;
	struct gitrepo *repo;
	const char *hash;
	int64_t tip_id;
	const char *base;	/* the compared tip, or NULL */
	int64_t base_id;
	struct job_outcome *jobs;
	size_t nr_jobs;
};

static void on_boot(const struct job_run *jr, unsigned i, const struct guest_result *gr, void *data)
{
	double kpi = guest_result_kpi(gr, jr->job->kpi);

	(void)data;
	printf("  boot %u/%u: %s", i, jr->boots, vm_outcome_name(gr->outcome));
	if (!isnan(kpi))
		printf(", %s %.6g", jr->job->kpi, kpi);
	if (gr->outcome != VM_OK && gr->reason) {
		printf(": ");
		print_clean(stdout, gr->reason);
	}
	printf("\n");
	fflush(stdout);
}

/* Finish the tip with a status, notify for what needs a person, print. */
static int finish_tip(struct tip_run *r, const char *status, const char *message, const char *kpi_text,
		      int64_t bisection_id, int64_t queue_id)
{
	struct notify_track_job *nj = xcalloc(r->nr_jobs + 1, sizeof(*nj));
	struct notify_track_facts f = { 0 };
	char *subject = NULL, *author = NULL, *remote_shown = NULL;
	int64_t author_time;

	if (db_track_tip_finish(r->lab->db, r->tip_id, status, message, kpi_text, bisection_id, queue_id) < 0) {
		free(nj);
		return -1;
	}
	print_line("%s: tip %.12s: %s%s%s", r->t->name, r->hash, status, message ? ": " : "", message ? message : "");
	if (strcmp(status, "regression") && strcmp(status, "build-failed") && strcmp(status, "boot-failed")) {
		free(nj);
		return 0;
	}
	for (size_t i = 0; i < r->nr_jobs; i++) {
		const struct job_outcome *o = &r->jobs[i];
		nj[i].job_path = r->t->jobs[i];
		nj[i].kpi = o->parsed ? o->job.kpi : "?";
		nj[i].direction = o->parsed ? o->job.direction : 1;
		nj[i].prev = o->prev;
		nj[i].np = o->np;
		nj[i].cur = o->cur;
		nj[i].nc = o->nc;
		nj[i].change = o->change ? o->change : "not measured";
		nj[i].text = o->compared ? o->cmp.text : NULL;
	}
	db_commit_facts(r->lab->db, r->t->repo_id, r->hash, &subject, &author, &author_time);
	f.track = r->t->name;
	f.repo_path = r->t->repo_path;
	f.remote = remote_shown = xstrdup(shown_remote(r->t->remote));
	f.branch = r->t->branch;
	f.threshold_pct = r->t->threshold_pct;
	f.status = status;
	f.tip = r->hash;
	f.tip_subject = subject;
	f.tip_author = author;
	f.compared_to = r->base;
	f.message = message;
	f.bisection_id = bisection_id;
	f.queue_job_id = queue_id;
	f.jobs = nj;
	f.nr_jobs = r->nr_jobs;
	/* a notice that cannot be sent is kept and retried, never a failure here */
	notify_track(r->lab, &f, r->t->notify);
	free(remote_shown);
	free(subject);
	free(author);
	free(nj);
	return 0;
}

/* Build the tip for one job: 0 built (bzimage, build id), 1 the tip does
 * not build (recorded), -1 klab failed. */
static int build_for_job(struct tip_run *r, struct job_outcome *o, char **bzimage, int64_t *build_id)
{
	struct kbuild_recipe recipe = { 0 };
	struct kernel_result kr = { 0 };
	struct strbuf text = STRBUF_INIT;
	char hex[41];
	int rc, ret = -1;

	strbuf_addstr(&text, r->t->config ? r->t->config : "");
	for (size_t i = 0; i < o->job.nr_fragments; i++)
		strbuf_addf(&text, "fragment %s\n", o->job.fragments[i]);
	o->recipe_text = strbuf_detach(&text, NULL);
	if (kbuild_recipe_from_text(&recipe, o->recipe_text) < 0)
		return -1;
	rc = kernel_for_rev(r->lab, r->t->repo_path, r->hash, &recipe, 0, hex, &kr);
	if (rc == 0) {
		*bzimage = xstrdup(kr.kernel);
		*build_id = kr.build_id;
		ret = 0;
	} else if (rc < 0 && kr.message) {
		error("the build of %.12s failed for a reason of this machine, not the tip's: %s", r->hash,
		      kr.build.message ? kr.build.message : "see the build log");
	} else if (rc > 0) {
		char *msg = xstrfmt("%s: %s", o->job.path,
				    kr.build.message ? kr.build.message : "the kernel does not build");
		ret = finish_tip(r, "build-failed", msg, NULL, 0, 0) < 0 ? -1 : 1;
		free(msg);
	}
	kernel_result_release(&kr);
	kbuild_recipe_release(&recipe);
	return ret;
}

/* The KPI values of the boots of one fresh check, as they come. */
struct fresh_values {
	double *v;
	size_t n, alloc;
};

static void on_fresh_boot(const struct job_run *jr, unsigned i, const struct guest_result *gr, void *data)
{
	struct fresh_values *fv = data;
	double kpi = guest_result_kpi(gr, jr->job->kpi);

	on_boot(jr, i, gr, NULL);
	if (gr->outcome != VM_OK || isnan(kpi))
		return;
	ALLOC_GROW(fv->v, fv->n + 1, fv->alloc);
	fv->v[fv->n++] = kpi;
}

/* One boot of a kernel for the fresh check, its runs stored under its tip:
 * 0, -1 after error() (a boot that fails here booted before). */
static int fresh_boot(struct tip_run *r, struct job_outcome *o, const char *hash, int64_t tip_id,
		      const char *bzimage, int64_t build_id, struct fresh_values *fv)
{
	struct guest_env_opts geo = { 0 };
	struct job_run jr = { 0 };
	size_t had = fv->n;
	int ret = 0;

	geo.kernel = bzimage;
	geo.quiet = 1;
	jr.job = &o->job;
	jr.geo = &geo;
	jr.build_id = build_id;
	jr.commit_hash = hash;
	jr.track_tip_id = tip_id;
	jr.boots = 1;
	jr.stop_on_failure = 1;
	jr.booted = on_fresh_boot;
	jr.data = fv;
	printf("%s: %.12s: fresh run\n", r->t->name, hash);
	if (run_job_on_kernel(r->lab, &jr) < 0)
		ret = -1;
	else if (jr.failure_reason || fv->n == had)
		ret = error("%.12s did not give %s in the fresh check of %.12s: %s", hash, o->job.kpi, r->hash,
			    jr.failure_reason ? jr.failure_reason : "the KPI was not produced");
	job_run_release(&jr);
	return ret;
}

/*
 * A change against the compared tip's stored runs holds only against fresh
 * runs of both: the compared tip was measured a run of `klab track` ago, on
 * a host that may have drifted since (another load, another thermal state;
 * a comment-only tip measured -30% in CI beside a kernel build), and an
 * outlier among its runs asks for more runs of it, not of the new tip.  As
 * a bisection's confirmation does (issue 17: time-local references), boot
 * the compared tip and the new one in turn, job.repeat times each and more
 * while the comparison asks (up to the policy's cap), and decide on those
 * runs alone.  Every fresh run is stored under its tip.  0 (o->cmp,
 * o->prev and o->cur are the fresh comparison's), -1 klab failed.
 */
static int recheck_fresh(struct tip_run *r, struct job_outcome *o, const char *bzimage, int64_t build_id,
			 unsigned cap)
{
	struct kbuild_recipe recipe = { 0 };
	struct kernel_result kr = { 0 };
	struct fresh_values base = { 0 }, tip = { 0 };
	struct track_cmp stored = o->cmp;
	char hex[41];
	unsigned want = o->job.repeat ? o->job.repeat : 3;
	size_t len;
	int ret = -1;

	printf("%s: %.12s: %s against the stored runs of %.12s; fresh runs of both, interleaved\n", r->t->name,
	       r->hash, track_change_name(stored.change), r->base);
	if (kbuild_recipe_from_text(&recipe, o->recipe_text) < 0)
		goto out;
	if (kernel_for_rev(r->lab, r->t->repo_path, r->base, &recipe, 1, hex, &kr) != 0) {
		error("the compared tip %.12s no longer gives a kernel for the fresh runs: %s", r->base,
		      kr.build.message ? kr.build.message : "see the build log");
		goto out;
	}
	for (;;) {
		while (base.n < want || tip.n < want)
			if ((base.n < want && fresh_boot(r, o, r->base, r->base_id, kr.kernel, kr.build_id, &base) < 0) ||
			    (tip.n < want && fresh_boot(r, o, r->hash, r->tip_id, bzimage, build_id, &tip) < 0))
				goto out;
		if (track_compare(&o->cmp, base.v, base.n, tip.v, tip.n, o->job.direction, r->t->threshold_pct) < 0)
			goto out;
		if (o->cmp.change != TRACK_INCONCLUSIVE || want >= cap)
			break;
		want = o->cmp.next_runs > want ? o->cmp.next_runs : want + 1;
		if (want > cap)
			want = cap;
		printf("%s: %.12s: %s; %u fresh runs of each\n", r->t->name, r->hash, o->cmp.text, want);
	}
	len = strlen(o->cmp.text);
	if (o->cmp.change != stored.change)
		/* the stored runs alone said otherwise: say how far they are off */
		snprintf(o->cmp.text + len, sizeof(o->cmp.text) - len,
			 "; from fresh runs of both, interleaved: the stored runs of %.12s said %s (%+.2f%%), "
			 "and its fresh runs are %+.2f%% from them", r->base, track_change_name(stored.change),
			 stored.change_percent, stats_change_percent(stored.median_prev, o->cmp.median_prev));
	else
		snprintf(o->cmp.text + len, sizeof(o->cmp.text) - len, "; fresh runs of both, interleaved");
	free(o->prev);
	free(o->cur);
	o->prev = base.v;
	o->np = base.n;
	o->cur = tip.v;
	o->nc = tip.n;
	base.v = tip.v = NULL;
	ret = 0;
out:
	free(base.v);
	free(tip.v);
	kernel_result_release(&kr);
	kbuild_recipe_release(&recipe);
	return ret;
}

/* Run one job on the tip until its comparison is decided: 0 done, 1 the
 * tip does not boot or run (recorded), -1 klab failed. */
static int measure_job(struct tip_run *r, struct job_outcome *o)
{
	struct verdict_policy policy;
	char *bzimage = NULL;
	int64_t build_id = 0;
	unsigned want = o->job.repeat;
	char accel[8];
	int rc, ret = -1;

	verdict_policy_init(&policy);
	rc = build_for_job(r, o, &bzimage, &build_id);
	if (rc != 0)
		return rc;
	size_t last = 0;
	int ran = 0;

	for (;;) {
		size_t have;

		free(o->cur);
		o->cur = NULL;
		/* runs stored by an interrupted run of this tip count */
		if (db_track_tip_values(r->lab->db, r->tip_id, o->job.path, o->job.hash, o->job.kpi, NULL, &o->cur,
					&o->nc) < 0)
			goto out;
		have = o->nc;
		if (ran && have <= last) {
			error("the runs of %s on %.12s were stored without the KPI %s", o->job.path, r->hash, o->job.kpi);
			goto out;
		}
		last = have;
		ran = 0;
		if (have < want) {
			struct guest_env_opts geo = { 0 };
			struct job_run jr = { 0 };

			geo.kernel = bzimage;
			geo.quiet = 1;
			jr.job = &o->job;
			jr.geo = &geo;
			jr.build_id = build_id;
			jr.commit_hash = r->hash;
			jr.track_tip_id = r->tip_id;
			jr.boots = want - (unsigned)have;
			jr.stop_on_failure = 1;
			jr.booted = on_boot;
			printf("%s: %.12s: %s %s, %u boot%s (%zu stored)\n", r->t->name, r->hash, o->job.suite,
			       o->job.testcase, jr.boots, jr.boots == 1 ? "" : "s", have);
			if (run_job_on_kernel(r->lab, &jr) < 0) {
				job_run_release(&jr);
				goto out;
			}
			if (jr.failure_reason || jr.nr_kpi < jr.nr_ok) {
				char *msg = xstrfmt("%s: %s", o->job.path,
						    jr.failure_reason ? jr.failure_reason : "the KPI was not produced");
				if (jr.failure_reason)
					o->change = vm_outcome_name(jr.failure);
				rc = finish_tip(r, "boot-failed", msg, NULL, 0, 0);
				free(msg);
				job_run_release(&jr);
				ret = rc < 0 ? -1 : 1;
				goto out;
			}
			job_run_release(&jr);
			ran = 1;
			continue;
		}
		/* compare under one accelerator: the one this tip ran under last */
		if (db_track_tip_accel(r->lab->db, r->tip_id, o->job.path, accel) < 0)
			goto out;
		free(o->cur);
		o->cur = NULL;
		if (db_track_tip_values(r->lab->db, r->tip_id, o->job.path, o->job.hash, o->job.kpi,
					accel[0] ? accel : NULL, &o->cur, &o->nc) < 0)
			goto out;
		free(o->prev);
		o->prev = NULL;
		o->np = 0;
		if (r->base_id && db_track_tip_values(r->lab->db, r->base_id, o->job.path, o->job.hash, o->job.kpi,
						      accel[0] ? accel : NULL, &o->prev, &o->np) < 0)
			goto out;
		if (!o->np || !o->nc) {
			o->change = "no baseline";
			break;
		}
		if (track_compare(&o->cmp, o->prev, o->np, o->cur, o->nc, o->job.direction, r->t->threshold_pct) < 0)
			goto out;
		o->compared = 1;
		/* anything but "no change" holds only against fresh runs of both */
		if (o->cmp.change != TRACK_NO_CHANGE && recheck_fresh(r, o, bzimage, build_id,
								     verdict_policy_cap(&policy)) < 0)
			goto out;
		o->change = track_change_name(o->cmp.change);
		break;
	}
	ret = 0;
out:
	free(bzimage);
	return ret;
}

/* A bisection between the compared tip (good) and this one (bad) for the
 * job that regressed most, queued for a worker. */
static int submit_bisection(struct tip_run *r, const struct job_outcome *o, int64_t *bisection_id, int64_t *queue_id)
{
	struct bisection b;
	char goods[1][41];
	char *job_text = NULL;
	int ret = -1;

	memset(&b, 0, sizeof(b));
	if (read_file(o->job.path, 64 << 10, &job_text, NULL) < 0)
		return -1;
	snprintf(goods[0], 41, "%s", r->base);
	snprintf(b.bad, sizeof(b.bad), "%s", r->hash);
	b.repo_id = r->t->repo_id;
	b.goods = goods;
	b.nr_goods = 1;
	b.build = 1;
	b.config = o->recipe_text;
	b.job_path = o->job.path;
	b.job_text = job_text;
	b.kpi = o->job.kpi;
	if (bisection_queue(r->lab, &b, 1, 1, 0, queue_id) == 0) {
		*bisection_id = b.id;
		ret = 0;
	}
	free(job_text);
	return ret;
}

static int test_tip(struct lab *lab, const struct db_track *t, struct gitrepo *repo, const char *hash)
{
	struct tip_run r = { lab, t, repo, hash, 0, NULL, 0, NULL, 0 };
	struct db_track_tip *tips = NULL;
	struct strbuf kpi_text = STRBUF_INIT;
	enum track_change *changes = NULL;
	struct commit_info ci;
	char *message = NULL;
	int64_t bisection_id = 0, queue_id = 0;
	size_t nt = 0, compared = 0;
	int ret = -1, rc;
	const char *status;
	const struct job_outcome *worst = NULL;

	if (db_track_tips(lab->db, t->id, &tips, &nt) < 0)
		return -1;
	for (size_t i = 0; i < nt; i++)
		if (!strcmp(tips[i].hash, hash)) {
			if (strcmp(tips[i].status, "running")) {
				printf("%s: tip %.12s already tested: %s\n", t->name, hash, tips[i].status);
				ret = 0;
				goto out;
			}
			r.tip_id = tips[i].id;
			r.base = tips[i].compared_to;
			printf("%s: continuing tip %.12s (interrupted earlier)\n", t->name, hash);
		}
	if (!r.tip_id) {
		int base = choose_base(repo, tips, nt, hash, &message);

		r.base = base >= 0 ? tips[base].hash : NULL;
		if (gitrepo_commit_info(repo, hash, &ci) < 0)
			goto out;
		rc = db_commit_store(lab->db, t->repo_id, &ci);
		commit_info_release(&ci);
		if (rc < 0 || db_track_tip_begin(lab->db, t->id, hash, r.base, message, &r.tip_id) < 0)
			goto out;
		printf("%s: testing tip %.12s%s%.12s\n", t->name, hash, r.base ? " against " : " (a baseline)",
		       r.base ? r.base : "");
		if (message)
			printf("  %s\n", message);
	}
	for (size_t i = 0; r.base && i < nt; i++)
		if (!strcmp(tips[i].hash, r.base))
			r.base_id = tips[i].id;

	r.jobs = xcalloc(t->nr_jobs + 1, sizeof(*r.jobs));
	r.nr_jobs = t->nr_jobs;
	changes = xcalloc(t->nr_jobs + 1, sizeof(*changes));
	for (size_t i = 0; i < t->nr_jobs; i++) {
		struct job_outcome *o = &r.jobs[i];

		if (job_parse_file(&o->job, t->jobs[i]) < 0)
			goto out;
		o->parsed = 1;
		rc = measure_job(&r, o);
		if (rc < 0)
			goto out;
		if (rc > 0) {
			ret = 0;	/* the tip's failure is recorded */
			goto out;
		}
		changes[i] = o->compared ? o->cmp.change : TRACK_NO_CHANGE;
		compared += o->compared;
		strbuf_addf(&kpi_text, "%s: %s", o->job.kpi, o->compared ? o->cmp.text : "no baseline to compare with");
		if (o->nc)
			strbuf_addf(&kpi_text, " [%zu runs vs %zu]", o->nc, o->np);
		strbuf_addf(&kpi_text, " (%s)\n", o->job.path);
		if (o->compared && o->cmp.change == TRACK_REGRESSION &&
		    (!worst || fabs(o->cmp.change_percent) > fabs(worst->cmp.change_percent)))
			worst = o;
	}
	if (kpi_text.len)
		strbuf_setlen(&kpi_text, kpi_text.len - 1);
	status = track_tip_status(changes, t->nr_jobs, compared > 0);
	if (worst) {
		if (submit_bisection(&r, worst, &bisection_id, &queue_id) < 0)
			warning("%s: the bisection of %.12s..%.12s could not be queued", t->name, r.base, hash);
		else
			printf("%s: bisection %lld queued as job %lld: %.12s (good) .. %.12s (bad), %s\n", t->name,
			       (long long)bisection_id, (long long)queue_id, r.base, hash, worst->job.kpi);
	}
	ret = finish_tip(&r, status, message, kpi_text.buf, bisection_id, queue_id);
	if (ret == 0)
		print_lines("  ", kpi_text.buf);
out:
	for (size_t i = 0; i < r.nr_jobs; i++)
		job_outcome_release(&r.jobs[i]);
	free(r.jobs);
	free(changes);
	free(message);
	strbuf_release(&kpi_text);
	db_track_tips_free(tips, nt);
	return ret;
}

/* ---- fetch and run: per track ------------------------------------------------ */

/* Fetch one track and, with test, test its tips: a `running` one left
 * by an interrupted run first, then the fetched tip.  0 or -1. */
static int handle_track(struct lab *lab, const char *name, int test)
{
	struct db_track t;
	struct gitrepo *repo = NULL;
	char tip[41] = "", *lock_name;
	int lock, rc, ret = -1, fetched;

	if (!track_name_valid(name))
		return error("no track named '%s' (see 'klab track list')", name);
	rc = db_track_load(lab->db, name, &t);
	if (rc <= 0)
		return rc == 0 ? error("no track named '%s' (see 'klab track list')", name) : -1;
	lock_name = xstrfmt("track-%s", name);
	lock = lab_lock(lab, lock_name);
	free(lock_name);
	if (lock < 0)
		goto out_track;
	if (gitrepo_open(&repo, t.repo_path) < 0) {
		db_track_fetch_record(lab->db, t.id, "failed", NULL, NULL, error_last());
		goto out;
	}
	fetched = fetch_track(lab, &t, repo, tip) == 0;
	ret = fetched ? 0 : -1;
	if (test) {
		struct db_track_tip *tips = NULL;
		size_t nt = 0;

		if (db_track_tips(lab->db, t.id, &tips, &nt) < 0) {
			ret = -1;
			goto out;
		}
		for (size_t i = nt; i-- > 0;)
			if (!strcmp(tips[i].status, "running") && strcmp(tips[i].hash, tip) &&
			    test_tip(lab, &t, repo, tips[i].hash) < 0)
				ret = -1;
		db_track_tips_free(tips, nt);
		if (fetched && test_tip(lab, &t, repo, tip) < 0)
			ret = -1;
	}
out:
	gitrepo_free(repo);
	close(lock);
out_track:
	db_track_release(&t);
	return ret;
}

static int fetch_or_run(int argc, char **argv, const struct global_opts *g, int test)
{
	struct lab lab;
	char **names = NULL;
	size_t nr = 0;
	int ret = EXIT_OK;

	struct opt opts[] = { OPT_END() };

	argc = parse_options(argc, argv, test ? &run_usage : &fetch_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (load_names(&lab, argc, argv, &names, &nr) < 0) {
		lab_close(&lab);
		return EXIT_FAIL;
	}
	if (!nr)
		printf("no tracks (add one with 'klab track add')\n");
	/* one track's failure does not keep the others from their night */
	for (size_t i = 0; i < nr; i++)
		if (handle_track(&lab, names[i], test) < 0)
			ret = EXIT_FAIL;
	strings_free(names, nr);
	lab_close(&lab);
	return ret;
}

static int track_fetch(int argc, char **argv, const struct global_opts *g)
{
	return fetch_or_run(argc, argv, g, 0);
}

static int track_run(int argc, char **argv, const struct global_opts *g)
{
	return fetch_or_run(argc, argv, g, 1);
}

int cmd_track(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "add", track_add, NULL },
		{ "list", track_list, NULL },
		{ "show", track_show, NULL },
		{ "remove", track_remove, NULL },
		{ "fetch", track_fetch, NULL },
		{ "run", track_run, NULL },
	};

	return run_subcommand(&track_usage, subs, ARRAY_SIZE(subs), argc, argv, g);
}
