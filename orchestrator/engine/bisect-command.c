/* The test command tester of a bisection: check the commit out in klab's
 * worktree (a copy per multisection slot), build it if the bisection
 * builds, run CMD there; its exit code decides.  See bisect-run.h. */
#include "engine/bisect-run.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "kernel/kernel.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "util/run-command.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A round's worktree copies: the bisection's own serves the first slot. */
struct command_slots {
	char **wt_dir;
	int *wt_fd;
};

/* KLAB_* for the test command: the commit, bisection, step and worktree,
 * then the build's files when there is one.  NULL-terminated, caller
 * frees each. */
static void command_env(struct bisect_run *r, const struct step *s, const struct kernel_result *kr, char **env)
{
	int n = 0;

	env[n++] = xstrfmt("KLAB_COMMIT=%s", s->hash);
	env[n++] = xstrfmt("KLAB_BISECT_ID=%lld", (long long)r->b->id);
	env[n++] = xstrfmt("KLAB_STEP=%d", s->seq);
	env[n++] = xstrfmt("KLAB_WORKTREE=%s", worktree_path(r->wt));
	if (kr) {
		env[n++] = xstrfmt("KLAB_KERNEL=%s", kr->build.bzimage);
		env[n++] = xstrfmt("KLAB_CONFIG=%s", kr->build.config);
		env[n++] = xstrfmt("KLAB_SYSTEM_MAP=%s", kr->build.system_map);
		env[n++] = xstrfmt("KLAB_BUILD_LOG=%s", kr->build.log);
	}
	env[n] = NULL;
}

/* git bisect run's rules: 0 good, 125 skip, 1-127 bad, 128 or more (or a
 * signal) stops; a timeout skips. */
static void command_verdict(struct bisect_run *r, const struct run_result *rr, struct step_outcome *out)
{
	struct strbuf *reason = &out->reason;
	char dur[32];

	out->result = BISECT_UNMARKED;
	switch (rr->status) {
	case RUN_EXEC_FAILED:
		strbuf_addf(reason, "cannot run '%s': %s", r->b->argv[0], strerror(rr->errno_value));
		break;
	case RUN_CANCELLED:
		strbuf_addstr(reason, "cancelled");
		break;
	case RUN_SIGNALED:
		strbuf_addf(reason, "test command killed by signal %d (%s)", rr->signal, strsignal(rr->signal));
		break;
	case RUN_TIMEOUT:
		strbuf_addf(reason, "timeout after %s", fmt_duration(r->b->timeout_ms, dur, sizeof(dur)));
		out->result = BISECT_SKIP;
		break;
	case RUN_EXITED:
		out->exit_code = rr->exit_code;
		strbuf_addf(reason, "exit %d", rr->exit_code);
		if (rr->exit_code == 0)
			out->result = BISECT_GOOD;
		else if (rr->exit_code == 125)
			out->result = BISECT_SKIP;
		else if (rr->exit_code < 128)
			out->result = BISECT_BAD;
		else
			strbuf_addstr(reason, ": 128 or more stops the bisection");
		break;
	}
}

static void command_test(struct bisect_run *r, const struct step *s, struct step_outcome *out)
{
	struct kernel_result kr;
	struct run_opts ro = { 0 };
	struct run_result rr;
	char *env[9];
	int built = 0;
	int64_t t0 = now_ms();

	memset(&kr, 0, sizeof(kr));
	/* the test runs in the checkout: checked out even when the store
	 * has the kernel */
	if (worktree_checkout(r->wt, s->hash) < 0) {
		strbuf_addstr(&out->reason, "checkout failed");
		out->why = xstrfmt("klab could not check out %.12s", s->hash);
		return;
	}
	out->checkout_ms = now_ms() - t0;
	if (r->b->build) {
		int rc = bisect_run_step_kernel(r, s, 1, out, &kr);
		if (rc) {
			kernel_result_release(&kr);
			return;
		}
		built = 1;
	}
	command_env(r, s, built ? &kr : NULL, env);
	kernel_result_release(&kr);
	ro.argv = (const char *const *)r->b->argv;
	ro.dir = worktree_path(r->wt);
	ro.env = (const char *const *)env;
	ro.output_path = s->log_path;
	ro.timeout_ms = r->b->timeout_ms;
	if (run_command(&ro, &rr) < 0) {
		strbuf_addstr(&out->reason, "could not start the test command");
		goto out;
	}
	out->test_ms = rr.elapsed_ms;
	if (log_trim(s->log_path, r->lab->log_limit) > 0)
		printf("  the log of %.12s was over log_limit (%llu bytes): its head and tail kept\n", s->hash,
		       (unsigned long long)r->lab->log_limit);
	command_verdict(r, &rr, out);
	if (out->result == BISECT_UNMARKED) {
		out->error = xstrfmt("%s on %.12s (log: %s)", out->reason.buf, s->hash, s->log_path);
		out->why = xstrfmt("the test command did not give a verdict (%s)", out->reason.buf);
	}
out:
	for (int i = 0; env[i]; i++)
		free(env[i]);
}

static int command_round_prepare(struct bisect_run *r, char (*hex)[41], int n, int *fork_slot)
{
	struct command_slots *cs = xcalloc(1, sizeof(*cs));

	(void)hex;
	(void)fork_slot;
	cs->wt_dir = xcalloc(n, sizeof(char *));
	cs->wt_fd = xmalloc(n * sizeof(int));
	for (int i = 0; i < n; i++)
		cs->wt_fd[i] = -1;
	r->tester_data = cs;
	cs->wt_dir[0] = xstrdup(worktree_path(r->wt));
	for (int i = 1; i < n; i++) {
		cs->wt_fd[i] = kernel_worktree_lock(r->lab, r->b->repo_id, &cs->wt_dir[i]);
		if (cs->wt_fd[i] < 0) {
			free(r->why);
			r->why = xstrfmt("klab could not lock a worktree copy for slot %d", i + 1);
			return -1;
		}
	}
	return 0;
}

/* In the slot's child: a repository and worktree of its own. */
static int command_slot_test(struct bisect_run *r, int i, const struct step *s, struct step_outcome *out)
{
	struct command_slots *cs = r->tester_data;
	struct gitrepo *repo = NULL;
	struct worktree *wt = NULL;

	if (gitrepo_open(&repo, r->b->repo_path) < 0 || worktree_open(&wt, repo, cs->wt_dir[i]) < 0) {
		strbuf_addstr(&out->reason, "klab could not open the slot's worktree");
		return 0;
	}
	r->repo = repo;
	r->wt = wt;
	command_test(r, s, out);
	return 0;
}

static void command_round_release(struct bisect_run *r, int n)
{
	struct command_slots *cs = r->tester_data;

	if (!cs)
		return;
	for (int i = 0; i < n; i++) {
		if (cs->wt_fd[i] >= 0)
			close(cs->wt_fd[i]);
		free(cs->wt_dir[i]);
	}
	FREE_MANY(cs->wt_dir, cs->wt_fd, cs);
	r->tester_data = NULL;
}

const struct step_tester_ops command_tester = {
	.test_label = "test ",
	.test = command_test,
	.round_prepare = command_round_prepare,
	.slot_test = command_slot_test,
	.round_release = command_round_release,
};
