/* Notifications: a finished bisection told by mail (SMTP) and by an HTTP
 * webhook (a JSON document), both through libcurl.  A `notifications`
 * row is written before any attempt and is the durable record; failed
 * deliveries are retried with backoff and never make the caller fail.
 *
 * A message is composed in two steps: the facts are read from the
 * database (notify.c), then turned into a subject, a plain-text report
 * and a JSON document by notify_compose_*, which are pure.  Another
 * event (tracking finding a regression) adds its own facts and composer
 * and reuses the rest: rows, delivery, retries. */
#ifndef KLAB_NOTIFY_H
#define KLAB_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

#include "lab/db.h"

struct lab;
struct strbuf;

/* A delivery is tried this many times, then the row is 'failed'. */
#define NOTIFY_MAX_ATTEMPTS 8

/* Compose the report of finished bisection `bisection_id` (culprit, only
 * skipped commits left, not reproduced, failed), record one row per
 * configured target (mail, webhook) in one transaction, then try to
 * deliver each of them once.  Returns 0 once the rows are recorded,
 * delivered or not (a failed delivery is stored and printed as one
 * warning line; 'klab notify flush' retries it), and 0 without rows when
 * no target is configured; -1 after error() when the bisection is
 * unknown or unfinished or the rows cannot be written.  A bisection's
 * own outcome never depends on this. */
int notify_bisection(struct lab *lab, int64_t bisection_id);
/* notify_bisection when the bisection has ended (done or failed; one
 * that stopped goes on later): what bisect start, resume and reproduce
 * --bisect do after a run.  Problems are recorded, never returned. */
void notify_bisection_if_ended(struct lab *lab, int64_t bisection_id);

/* Deliver the pending rows whose next try is due (with force: every
 * pending row).  A failure schedules the next try (notify_backoff) or,
 * after NOTIFY_MAX_ATTEMPTS, marks the row 'failed'; each is recorded
 * with its error and printed as one warning line.  Returns the number
 * of deliveries that failed, or -1 on a database error. */
int notify_flush(struct lab *lab, int force);

/* Send a test message now to the configured mail recipients and/or
 * webhook (not recorded); one line per target says how it went.
 * 0 when every target asked got it, -1 otherwise. */
int notify_test(struct lab *lab, int mail, int webhook);

/* ---- pure parts (unit-tested) ---- */

/* How a target is shown in messages and lists: the recipients, or a
 * webhook's scheme and host with "/..." for the rest (its path, query
 * and user info may hold a token). */
void notify_describe_target(struct strbuf *sb, const char *kind, const char *target);

/* Seconds to wait after the `attempts`-th failed delivery (1 min, 5 min,
 * 30 min, 2 h, 6 h, 12 h, 24 h), or -1 when the row should give up. */
int64_t notify_backoff(int attempts);

/* The KPI of one measured commit in a job bisection. */
struct notify_kpi {
	const char *label;	/* good, parent, culprit, bad; two changes: "parent 1", "culprit 1", ... */
	char hash[41];
	const double *vals;	/* the KPI of each ok run */
	size_t n;
};

/* A monitor stat that moved (compare.c): mean per run (a counter's delta,
 * a level after the run) at parent and culprit; "vmstat.thp_fault_alloc". */
struct notify_counter {
	const char *name;
	double parent, culprit;
};

/* A tested commit of a command bisection. */
struct notify_step {
	int seq;
	char hash[41];
	const char *phase, *verdict, *reason, *subject;	/* as stored */
	enum bisect_mark mark;	/* the verdict parsed */
	int exit_code;		/* -1: none */
};

/* What a bisection report says; strings may hold anything a repository
 * or a guest put there. */
struct revert_check;

struct notify_facts {
	const char *host;	/* the lab's host name */
	int64_t bisection_id;
	enum bisection_kind kind;
	enum bisection_state state;	/* done | failed */
	enum bisection_result result;
	const char *message;
	const char *repo_path;
	const char *bad;
	char (*goods)[41];
	size_t nr_goods;
	int first_parent;
	char **paths;		/* path limits */
	size_t nr_paths;
	int steps;		/* tested commits */
	const char *culprit;	/* NULL unless result is culprit */
	const char *culprit_subject, *culprit_author;
	/* result unconfirmed: the commit the bisection ended on, which its
	 * confirmation did not bear out (never a culprit) */
	const char *suspect, *suspect_subject;
	char (*candidates)[41];
	size_t nr_candidates;
	/* kind command */
	char **argv;
	size_t argc;
	const struct notify_step *step_list;
	size_t nr_step_list;
	/* kind job */
	const char *job_path, *suite, *testcase, *kpi;
	int direction;		/* +1 higher is better, -1 lower */
	/* good, parent, culprit (or suspect), bad: those measured; after a
	 * split each half's parent and culprit ("parent 1", "culprit 1",
	 * "parent 2", ...) between good and bad */
	struct notify_kpi kpis[6];
	size_t nr_kpis;
	const struct notify_counter *counters;	/* monitor stats that moved, most significant first */
	size_t nr_counters;
	/* the revert check (revert.h), NULL when none was stored */
	const struct revert_check *revert;
	/* the host drifted while measuring (the trend, percent per run) */
	int drift;
	double drift_percent;
	/* two change points (migration 11): the commit the range split at
	 * (NULL: no split) and what each half found */
	const char *split;
	const struct notify_half *halves;
	size_t nr_halves;
};

/* One half of a range split by two change points. */
struct notify_half {
	int half;		/* 1 or 2 */
	const char *culprit;	/* NULL: only skipped commits were left */
	const char *subject;
	int confirmed;
	double share;		/* parent -> culprit, % of the range's change; NAN unknown */
	const struct revert_check *revert;	/* its culprit reverted alone, NULL none */
};

struct notify_message {
	char *subject;		/* one line; raw (the mail header is made safe later) */
	char *text;		/* the plain-text report, '\n' line ends */
	char *json;		/* the webhook document */
};

/* The "outcome" a report names: culprit, skipped-only, not-reproduced,
 * unconfirmed, failed. */
const char *notify_outcome(const struct notify_facts *f);
void notify_compose_bisection(const struct notify_facts *f, struct notify_message *m);
/* The test message of 'klab notify test'. */
void notify_compose_test(const char *host, const char *state_dir, int64_t now, struct notify_message *m);
void notify_message_release(struct notify_message *m);

/* ---- tracking: a tip that regressed, or does not build or boot ---- */

/* One job of a tracked tip: its KPI at the compared tip and at the new one. */
struct notify_track_job {
	const char *job_path, *kpi;
	int direction;		/* +1 higher is better, -1 lower */
	const double *prev;	/* runs of the compared tip (n may be 0) */
	size_t np;
	const double *cur;	/* runs of the new tip */
	size_t nc;
	const char *change;	/* regression, improvement, no-change, inconclusive, no baseline */
	const char *text;	/* the verdict's line */
};

struct notify_track_facts {
	const char *host;
	const char *track, *repo_path, *remote, *branch;
	double threshold_pct;
	const char *status;	/* regression, improvement, build-failed, boot-failed, ... */
	const char *tip, *tip_subject, *tip_author;
	const char *compared_to;	/* NULL: nothing to compare with */
	const char *message;		/* one line: what happened */
	int64_t bisection_id, queue_job_id;	/* 0: none submitted */
	const struct notify_track_job *jobs;
	size_t nr_jobs;
};

/* Subject "[klab] track NAME: <kpi> -97.2% regression at <hash> <subject>"
 * (or "... <hash> does not build / boot"), the text and the JSON. */
void notify_compose_track(const struct notify_track_facts *f, struct notify_message *m);
/* Record one row per target and try each once, as notify_bisection does.
 * targets: the track's own, one per line (an address: mail, an http(s)
 * URL: webhook); NULL for the lab's notify_mail_to / notify_webhook.
 * 0 once recorded (or nothing to send), -1 when the rows cannot be written. */
int notify_track(struct lab *lab, const struct notify_track_facts *f, const char *targets);

/* An RFC 5322 message with CRLF line ends: Date (`date`, UTC), From, To,
 * Subject, Message-ID, MIME-Version and a UTF-8 text/plain body.  Header
 * values lose their control characters (no injected header can come
 * from a commit subject); non-ASCII subjects become RFC 2047 words; long
 * ones are folded.  Leading dots are left to libcurl's SMTP upload,
 * which doubles them. */
void notify_mail_format(struct strbuf *out, const char *from, const char *to, const char *subject,
			const char *text, int64_t date, const char *message_id);
/* "Name: value\r\n" folded and encoded as notify_mail_format does it. */
void notify_mail_header(struct strbuf *out, const char *name, const char *value);

#endif
