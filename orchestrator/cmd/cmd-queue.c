/* klab status, log, cancel and retry: looking after the queue that
 * 'klab submit' fills and 'klab worker' (engine/worker.c) works off. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/klab.h"
#include "engine/worker.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"

#define LOG_CHUNK 65536

static const char *const status_forms[] = { "[ID] [--json]", NULL };
static const struct opt_usage status_usage = {
	"status", status_forms,
	"The queue: one line per job (id, kind, state, attempts, worker, age, what), or\n"
	"job ID in detail.",
	"QUEUE"
};
static const char *const joblog_forms[] = { "[-f] ID", NULL };
static const struct opt_usage joblog_usage = {
	"log", joblog_forms,
	"The output of queued job ID (an id from 'klab status') so far.",
	"QUEUE"
};
static const char *const id_forms[] = { "ID", NULL };
static const struct opt_usage cancel_usage = {
	"cancel", id_forms,
	"Stop queued or running job ID (an id from 'klab status'): a running job is\n"
	"stopped by its worker within seconds; its results are kept.",
	"QUEUE"
};
static const struct opt_usage retry_usage = {
	"retry", id_forms,
	"Queue failed or cancelled job ID (an id from 'klab status') again; a bisection\n"
	"continues from its last recorded step.",
	"QUEUE"
};

/* ---- status, log, cancel, retry ----------------------------------------- */

/* A bisection's progress and outcome, one line. */
static char *bisection_what(struct lab *lab, int64_t id)
{
	struct bisection b;
	struct step *steps = NULL;
	size_t nr = 0, done = 0;
	char *what;

	if (db_bisection_load(lab->db, id, &b) < 0)
		return xstrfmt("bisection %lld (gone)", (long long)id);
	if (db_steps_load(lab->db, b.id, &steps, &nr) == 0)
		for (size_t i = 0; i < nr; i++)
			done += steps[i].status_id == STEP_DONE;
	steps_release(steps, nr);
	what = xstrfmt("bisection %lld %s, %zu step%s%s%s%s%.12s", (long long)b.id, b.state, done, done == 1 ? "" : "s",
		       b.result ? ", " : "", b.result ? b.result : "", b.culprit ? " " : "", b.culprit ? b.culprit : "");
	bisection_release(&b);
	return what;
}

/* What the job is about, one line: the bisection's progress and outcome,
 * or the command line (a reproduction's, then the bisection it started). */
static char *job_what(struct lab *lab, const struct queue_job *j)
{
	struct strbuf sb = STRBUF_INIT;

	if (j->kind_id == QUEUE_BISECT)
		return bisection_what(lab, j->bisection_id);
	strbuf_addstr(&sb, j->kind_id == QUEUE_REPRODUCE ? "reproduce" : "run");
	/* as the shell would take it back */
	for (size_t i = 1; i < j->nr_args; i++) {
		strbuf_addch(&sb, ' ');
		strbuf_add_shell_word(&sb, j->args[i]);
	}
	if (j->kind_id == QUEUE_REPRODUCE && j->bisection_id) {
		char *b = bisection_what(lab, j->bisection_id);
		strbuf_addf(&sb, "; %s", b);
		free(b);
	}
	return strbuf_detach(&sb, NULL);
}

static void status_json(struct lab *lab, struct queue_job *jobs, size_t nr, int one)
{
	struct strbuf sb = STRBUF_INIT;

	if (!one)
		strbuf_addstr(&sb, "[\n");
	for (size_t i = 0; i < nr; i++) {
		struct queue_job *j = &jobs[i];
		char *what = job_what(lab, j);
		strbuf_addf(&sb, "%s{\"id\": %lld, \"kind\": ", one ? "" : "  ", (long long)j->id);
		json_add_string(&sb, j->kind);
		strbuf_addstr(&sb, ", \"state\": ");
		json_add_string(&sb, j->state);
		strbuf_addf(&sb, ", \"attempts\": %d, \"bisection\": ", j->attempts);
		if (j->bisection_id)
			strbuf_addf(&sb, "%lld", (long long)j->bisection_id);
		else
			strbuf_addstr(&sb, "null");
		strbuf_addstr(&sb, ", \"worker\": ");
		json_add_string(&sb, j->worker);
		strbuf_addstr(&sb, ", \"message\": ");
		json_add_string(&sb, j->message);
		strbuf_addstr(&sb, ", \"what\": ");
		json_add_string(&sb, what);
		strbuf_addstr(&sb, ", \"submitted_by\": ");
		json_add_string(&sb, j->submitted_by);
		strbuf_addf(&sb, ", \"created_at\": %lld, \"started_at\": %lld, \"finished_at\": %lld}%s\n",
			    (long long)j->created_at, (long long)j->started_at, (long long)j->finished_at,
			    !one && i + 1 < nr ? "," : "");
		free(what);
	}
	if (!one)
		strbuf_addstr(&sb, "]\n");
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
}

static const char *age(int64_t t, char *buf, size_t len)
{
	return t ? fmt_duration((now_s() - t) * 1000, buf, len) : "-";
}

/* A job id operand: -1 after one error line. */
static int job_id(const char *s, int64_t *id)
{
	unsigned long v;
	int rc = opt_number(s, 1, INT64_MAX, &v);

	if (rc == -2)
		return error("job id %s is out of range (1 to %lld)", s, (long long)INT64_MAX);
	if (rc < 0)
		return error("'%s' is not a job id (a number from 'klab status')", s);
	*id = (int64_t)v;
	return 0;
}

int cmd_status(int argc, char **argv, const struct global_opts *g)
{
	struct queue_job *jobs = NULL;
	struct lab lab;
	int64_t id = 0;
	size_t nr = 0;
	int json = 0, ret = EXIT_FAIL;
	struct opt opts[] = {
		OPT_BOOL(0, "json", &json, "the same as a JSON document"),
		OPT_END()
	};

	argc = parse_options(argc, argv, &status_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc > 1)
		return usage_error(&status_usage, "status takes one job id at most (got '%s')", argv[1]);
	if (argc && job_id(argv[0], &id) < 0)
		return EXIT_USAGE;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (id) {
		jobs = xcalloc(1, sizeof(*jobs));
		if (db_queue_load(lab.db, id, jobs) < 0)
			goto out;
		nr = 1;
	} else if (db_queue_list(lab.db, &jobs, &nr) < 0) {
		goto out;
	}
	if (json) {
		status_json(&lab, jobs, nr, id != 0);
	} else if (id) {
		struct queue_job *j = jobs;
		char *what = job_what(&lab, j), b1[32];
		printf("job %lld: %s, %s\n", (long long)j->id, j->kind, j->state);
		printf("what:      ");
		print_clean(stdout, what);
		printf("\nsubmitted: %s ago by %s, from %s\n", age(j->created_at, b1, sizeof(b1)),
		       j->submitted_by ? j->submitted_by : "?", j->nr_args ? j->args[0] : "?");
		printf("attempts:  %d%s%s\n", j->attempts, j->worker ? ", worker " : "", j->worker ? j->worker : "");
		if (j->message) {
			printf("message:   ");
			print_clean(stdout, j->message);
			putchar('\n');
		}
		printf("log:       %s/logs/queue-%lld.log\n", lab.state_dir, (long long)j->id);
		free(what);
	} else {
		if (!nr)
			printf("the queue is empty\n");
		for (size_t i = 0; i < nr; i++) {
			char *what = job_what(&lab, &jobs[i]), b1[32];
			printf("%lld\t%s\t%s\t%d\t%s\t%s\t", (long long)jobs[i].id, jobs[i].kind, jobs[i].state,
			       jobs[i].attempts, jobs[i].worker ? jobs[i].worker : "-", age(jobs[i].created_at, b1, sizeof(b1)));
			print_clean(stdout, what);
			/* a reproduction's result is its verdict line */
			if (jobs[i].kind_id == QUEUE_REPRODUCE && jobs[i].message) {
				fputs(": ", stdout);
				print_clean(stdout, jobs[i].message);
			}
			putchar('\n');
			free(what);
		}
	}
	ret = EXIT_OK;
out:
	for (size_t i = 0; i < nr; i++)
		queue_job_release(&jobs[i]);
	free(jobs);
	lab_close(&lab);
	return ret;
}

/* The one ID operand of log, cancel and retry: without it, the usage on
 * stderr.  0, or the exit status. */
static int one_job(int argc, char **argv, const struct opt_usage *u, const struct opt *opts, int64_t *id)
{
	if (!argc) {
		usage_lines(stderr, u, opts);
		return EXIT_USAGE;
	}
	if (argc > 1)
		return usage_error(u, "%s takes one job id (got '%s' too)", u->name, argv[1]);
	return job_id(argv[0], id) < 0 ? EXIT_USAGE : 0;
}

/* The job's log; -f follows it until the job has ended. */
int cmd_joblog(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	int follow = 0, fd = -1, ret = EXIT_FAIL;
	int64_t id;
	char *path = NULL, *buf = NULL;
	struct opt opts[] = {
		OPT_BOOL('f', "follow", &follow, "follow it until the job has ended"),
		OPT_END()
	};

	argc = parse_options(argc, argv, &joblog_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if ((ret = one_job(argc, argv, &joblog_usage, opts, &id)))
		return ret;
	ret = EXIT_FAIL;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	{
		struct queue_job j;
		if (db_queue_load(lab.db, id, &j) < 0)
			goto out;
		queue_job_release(&j);
	}
	path = worker_log_path(&lab, id);
	buf = xmalloc(LOG_CHUNK);
	for (;;) {
		ssize_t n;
		int ended = 0;

		if (fd < 0)
			fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && !follow) {
			printf("job %lld has no log yet (it has not started)\n", (long long)id);
			break;
		}
		while (fd >= 0 && (n = read(fd, buf, LOG_CHUNK)) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		fflush(stdout);
		if (!follow)
			break;
		{
			struct queue_job j;
			if (db_queue_load(lab.db, id, &j) < 0)
				goto out;
			ended = j.state_id != QUEUE_QUEUED && j.state_id != QUEUE_RUNNING;
			queue_job_release(&j);
		}
		if (ended) {
			/* what was written before the end was recorded */
			while (fd >= 0 && (n = read(fd, buf, LOG_CHUNK)) > 0)
				fwrite(buf, 1, (size_t)n, stdout);
			break;
		}
		usleep(300000);
	}
	ret = EXIT_OK;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
	lab_close(&lab);
	return ret;
}

/* cancel and retry: help, the one job id, the lab and the job's row,
 * then act(lab, id, job), which gives the exit code. */
static int on_one_job(int argc, char **argv, const struct global_opts *g, const struct opt_usage *u,
		      int (*act)(struct lab *, int64_t, const struct queue_job *))
{
	struct opt opts[] = { OPT_END() };
	struct lab lab;
	struct queue_job j;
	int64_t id;
	int ret;

	argc = parse_options(argc, argv, u, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if ((ret = one_job(argc, argv, u, opts, &id)))
		return ret;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	ret = EXIT_FAIL;
	if (db_queue_load(lab.db, id, &j) == 0) {
		ret = act(&lab, id, &j);
		queue_job_release(&j);
	}
	lab_close(&lab);
	return ret;
}

static int cancel_job(struct lab *lab, int64_t id, const struct queue_job *j)
{
	int rc = db_queue_cancel(lab->db, id);

	if (rc == 1 && j->state_id == QUEUE_RUNNING) {
		printf("job %lld cancelled: its worker stops it within a few seconds; results so far are kept\n",
		       (long long)id);
		return EXIT_OK;
	} else if (rc == 1) {
		if (j->bisection_id)
			db_bisection_enter(lab->db, j->bisection_id, BISECTION_STOPPED, BISECTION_NO_RESULT, NULL,
					   "cancelled before it ran; 'klab retry' queues it again");
		printf("job %lld cancelled before it ran\n", (long long)id);
		return EXIT_OK;
	} else if (rc == 0) {
		error("job %lld has already ended (%s)", (long long)id, j->state);
	}
	return EXIT_FAIL;
}

int cmd_cancel(int argc, char **argv, const struct global_opts *g)
{
	return on_one_job(argc, argv, g, &cancel_usage, cancel_job);
}

static int retry_job(struct lab *lab, int64_t id, const struct queue_job *j)
{
	int rc = db_queue_retry(lab->db, id);

	if (rc == 1) {
		printf("job %lld queued again%s\n", (long long)id,
		       j->bisection_id ? ": the bisection continues from its last recorded step" : "");
		return EXIT_OK;
	} else if (rc == 0) {
		error("job %lld is %s: only failed or cancelled jobs can be retried", (long long)id, j->state);
	}
	return EXIT_FAIL;
}

int cmd_retry(int argc, char **argv, const struct global_opts *g)
{
	return on_one_job(argc, argv, g, &retry_usage, retry_job);
}
