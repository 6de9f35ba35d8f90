/* Starting a bisection (bisect-start.h): the request checked against the
 * repository, the row created (with its slots, cap and revert check, and
 * its queue row when a worker is to run it), and a bisection run to its
 * end with its lock, its worktree and its tester.  The loop itself is
 * bisect-run.c's; the testers are bisect-command.c's and perfbisect.c's. */
#include "engine/bisect-start.h"
#include "engine/bisect-run.h"
#include "engine/perfbisect.h"
#include "guest/guest.h"
#include "kernel/kernel.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "lab/lab.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void bisect_range_release(struct bisect_range *r)
{
	if (r->loaded)
		bisect_dag_release(&r->dag);
	free(r->info.good_below);
	memset(r, 0, sizeof(*r));
}

int bisect_job_load(struct bisect_job *bj, const char *file)
{
	memset(bj, 0, sizeof(*bj));
	if (job_parse_file(&bj->job, file) < 0)
		return -1;
	bj->parsed = 1;
	if (read_file(file, 64 << 10, &bj->text, NULL) < 0 || !(bj->path = real_path(file)))
		return -1;
	return 0;
}

void bisect_job_release(struct bisect_job *bj)
{
	if (bj->parsed)
		job_release(&bj->job);
	FREE_MANY(bj->path, bj->text);
	memset(bj, 0, sizeof(*bj));
}

/* ---- running ---------------------------------------------------------- */

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
static int run_loaded(struct lab *lab, struct bisection *b, struct bisect_dag *dag, struct range_info *info)
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

int bisection_run(struct lab *lab, int64_t id, struct bisect_range *range)
{
	struct bisection b;
	int ret;

	if (db_bisection_load(lab->db, id, &b) < 0)
		return EXIT_FAIL;
	if (range && range->loaded) {
		ret = run_loaded(lab, &b, &range->dag, &range->info);
	} else {
		ret = run_loaded(lab, &b, NULL, NULL);
	}
	bisection_release(&b);
	return ret;
}

/* ---- creating ----------------------------------------------------------- */

int bisection_queue(struct lab *lab, struct bisection *b, unsigned slots, int revert_check, unsigned max_runs,
		    int64_t *queue_id)
{
	char *cwd = getcwd(NULL, 0);
	int ret = -1;

	if (!cwd)
		cwd = xstrdup("/");
	/* one transaction: never a bisection without its queue row */
	if (db_begin(lab->db) < 0)
		goto out;
	if (db_bisection_create(lab->db, b) < 0 || (slots > 1 && db_bisection_set_slots(lab->db, b->id, (int)slots) < 0) ||
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

/* The revisions resolved into b and the range loaded, with the mistakes
 * a user makes with them refused.  -1 after error(). */
static int load_range(const struct bisect_request *rq, struct gitrepo *repo, struct bisection *b,
		      struct bisect_range *r)
{
	if (gitrepo_resolve(repo, rq->bad, b->bad) < 0)
		return -1;
	b->goods = xcalloc(rq->nr_goods, 41);
	for (size_t i = 0; i < rq->nr_goods; i++) {
		if (gitrepo_resolve(repo, rq->goods[i], b->goods[b->nr_goods]) < 0)
			return -1;
		if (!strcmp(b->goods[b->nr_goods], b->bad))
			return error("good revision '%s' and bad revision '%s' are the same commit %.12s",
				     rq->goods[i], rq->bad, b->bad);
		if (!hash_listed(b->goods, b->nr_goods, b->goods[b->nr_goods]))
			b->nr_goods++;
	}
	/* One walk gives the range, and tells whether bad is in it. */
	if (gitrepo_load_dag_info(repo, b->bad, b->goods, b->nr_goods, rq->first_parent, rq->paths, rq->nr_paths,
				  &r->dag, &r->info) < 0)
		return -1;
	r->loaded = 1;
	if (!r->info.bad_is_candidate) {
		for (size_t i = 0; i < b->nr_goods; i++)
			if (gitrepo_is_ancestor(repo, b->bad, b->goods[i]) == 1)
				return error("bad revision '%s' is an ancestor of good revision %.12s: "
					     "did you swap --good and --bad?", rq->bad, b->goods[i]);
		return error("no candidate commits between the good and bad revisions");
	}
	if (rq->nr_paths) {
		size_t touching = 0;
		for (size_t i = 0; i < r->dag.nr; i++)
			if (!(r->dag.commits[i].flags & BISECT_TREESAME))
				touching++;
		if (!touching)
			return error("no commit between the good and bad revisions touches the given paths");
	}
	return 0;
}

/* The row from the request (pointers into rq: b lives as long as it). */
static void fill_row(const struct bisect_request *rq, struct bisection *b)
{
	b->first_parent = rq->first_parent;
	b->build = rq->recipe_text != NULL;
	b->config = (char *)rq->recipe_text;
	b->timeout_ms = rq->timeout_ms;
	b->paths = (char **)rq->paths;
	b->nr_paths = rq->nr_paths;
	b->argv = rq->argv;
	b->argc = rq->argc;
	b->job_path = (char *)rq->job_path;
	b->job_text = (char *)rq->job_text;
	b->kpi = rq->job ? (char *)rq->kpi : NULL;
}

/* Everything checked: the guests of a job (as klab run checks them; the
 * kernels come later), the repository, its range.  b filled, repo_id
 * set; *abs_repo the repository's absolute path. */
static int check_request(struct lab *lab, const struct bisect_request *rq, struct bisect_range *r,
			 struct bisection *b, char **abs_repo)
{
	struct gitrepo *repo = NULL;
	int ret = -1;

	memset(b, 0, sizeof(*b));
	*abs_repo = NULL;
	if (rq->job) {
		struct guest_env_opts geo = { 0 };
		if (guest_env_check(lab, rq->job, &geo) < 0)
			return -1;
	}
	if (gitrepo_open(&repo, rq->repo) < 0)
		return -1;
	*abs_repo = real_path(gitrepo_path(repo));
	if (*abs_repo && load_range(rq, repo, b, r) == 0 && db_repo_id(lab->db, *abs_repo, &b->repo_id) == 0) {
		fill_row(rq, b);
		ret = 0;
	}
	gitrepo_free(repo);
	return ret;
}

/* "bisection N: REPO, bad ...", or "job Q queued: bisection N of REPO, ..." */
static void print_created(int64_t qid, const struct bisection *b, const char *abs_repo, unsigned slots)
{
	if (qid)
		printf("job %lld queued: bisection %lld of %s", (long long)qid, (long long)b->id, abs_repo);
	else
		printf("bisection %lld: %s", (long long)b->id, abs_repo);
	printf(", bad %.12s, %zu good", b->bad, b->nr_goods);
	if (slots > 1)
		printf(", %u slots", slots);
	printf("\n");
}

/* Create b with its slots (the row and its slots together: a resume
 * never sees one slot), cap and revert check. */
static int create_row(struct lab *lab, const struct bisect_request *rq, struct bisection *b)
{
	if (rq->slots > 1) {
		if (db_begin(lab->db) < 0)
			return -1;
		if (db_bisection_create(lab->db, b) < 0 || db_bisection_set_slots(lab->db, b->id, (int)rq->slots) < 0) {
			db_rollback(lab->db);
			return -1;
		}
		if (db_commit(lab->db) < 0)
			return -1;
	} else if (db_bisection_create(lab->db, b) < 0) {
		return -1;
	}
	if (!rq->revert_check && db_bisection_set_revert_check(lab->db, b->id, 0) < 0)
		return -1;
	if (rq->max_runs && db_bisection_set_max_runs(lab->db, b->id, rq->max_runs) < 0)
		return -1;
	return 0;
}

int bisect_create(struct lab *lab, const struct bisect_request *rq, struct bisect_range *range, int64_t *id)
{
	struct bisection b;
	char *abs_repo;
	int ret = -1;

	memset(range, 0, sizeof(*range));
	if (check_request(lab, rq, range, &b, &abs_repo) == 0 && create_row(lab, rq, &b) == 0) {
		print_created(0, &b, abs_repo, rq->slots);
		*id = b.id;
		/* at once, so the queue shows the bisection while it runs */
		ret = rq->queue_id ? db_queue_set_bisection(lab->db, rq->queue_id, b.id) : 0;
	}
	free(b.goods);
	free(abs_repo);
	return ret;
}

int bisect_queue_request(struct lab *lab, const struct bisect_request *rq)
{
	struct bisect_range range;
	struct bisection b;
	char *abs_repo;
	int64_t qid;
	int ret = -1;

	memset(&range, 0, sizeof(range));
	if (check_request(lab, rq, &range, &b, &abs_repo) == 0 &&
	    bisection_queue(lab, &b, rq->slots, rq->revert_check, rq->max_runs, &qid) == 0) {
		print_created(qid, &b, abs_repo, rq->slots);
		ret = 0;
	}
	bisect_range_release(&range);
	free(b.goods);
	free(abs_repo);
	return ret;
}
