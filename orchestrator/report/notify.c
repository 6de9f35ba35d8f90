/* Notifications: compose a bisection's report (plain text for mail, JSON
 * for webhooks), keep it as a `notifications` row, deliver it through
 * libcurl (SMTP, HTTP POST) and retry failed deliveries with backoff. */
#include "report/notify.h"
#include "engine/revert.h"
#include "core/compare.h"
#include "engine/runcompare.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "job/job.h"
#include "core/stats.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "util/json.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- backoff ------------------------------------------------------------ */

int64_t notify_backoff(int attempts)
{
	static const int64_t wait_s[] = { 60, 5 * 60, 30 * 60, 2 * 3600, 6 * 3600, 12 * 3600, 24 * 3600 };

	if (attempts < 1)
		return 0;
	if (attempts >= NOTIFY_MAX_ATTEMPTS)
		return -1;
	if ((size_t)attempts > ARRAY_SIZE(wait_s))
		return wait_s[ARRAY_SIZE(wait_s) - 1];
	return wait_s[attempts - 1];
}

/* ---- text helpers --------------------------------------------------------- */

/* One line of untrusted text: control characters become spaces, bytes
 * that are not UTF-8 become U+FFFD, at most max bytes (0: no limit) cut
 * at a character boundary, with "..." when cut. */
static void add_line(struct strbuf *sb, const char *s, size_t max)
{
	size_t len, used = 0;

	if (!s)
		return;
	len = strlen(s);
	while (len) {
		uint32_t cp;
		size_t n = utf8_decode(s, len, &cp);

		if (max && used + (n ? n : 3) > max) {
			strbuf_addstr(sb, "...");
			return;
		}
		if (!n) {
			strbuf_addstr(sb, "\xef\xbf\xbd");
			used += 3;
			s++;
			len--;
			continue;
		}
		if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || cp == 0x2028 || cp == 0x2029)
			strbuf_addch(sb, ' ');
		else
			strbuf_add(sb, s, n);
		used += n;
		s += n;
		len -= n;
	}
}

static void add_argv(struct strbuf *sb, char **argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		strbuf_add_shell_word(sb, argv[i]);
	}
}

/* The JSON string of one line of untrusted text (as add_line cleans it
 * for the mail, so both say the same). */
static void json_add_line(struct strbuf *sb, const char *s)
{
	struct strbuf t = STRBUF_INIT;

	if (!s) {
		strbuf_addstr(sb, "null");
		return;
	}
	add_line(&t, s, 0);
	json_add_string(sb, t.buf);
	strbuf_release(&t);
}

/* The next member of a message's top-level object: its key, then the
 * caller's value. */
static void json_key(struct strbuf *sb, const char *key)
{
	strbuf_addf(sb, ",\n  \"%s\": ", key);
}

static void json_member(struct strbuf *sb, const char *key, const char *s)
{
	json_key(sb, key);
	json_add_string(sb, s);
}

/* A member whose value is untrusted text (json_add_line). */
static void json_member_line(struct strbuf *sb, const char *key, const char *s)
{
	json_key(sb, key);
	json_add_line(sb, s);
}

/* A member inside an inner object: ", \"key\": " and its value. */
static void json_field(struct strbuf *sb, const char *key, const char *s)
{
	strbuf_addf(sb, ", \"%s\": ", key);
	json_add_string(sb, s);
}

static void json_field_line(struct strbuf *sb, const char *key, const char *s)
{
	strbuf_addf(sb, ", \"%s\": ", key);
	json_add_line(sb, s);
}

static void json_field_number(struct strbuf *sb, const char *key, double v)
{
	strbuf_addf(sb, ", \"%s\": ", key);
	json_add_number(sb, v);
}

/* Every message opens with its event, klab's version and the host. */
static void json_open(struct strbuf *sb, const char *event, const char *host)
{
	strbuf_addf(sb, "{\n  \"event\": \"%s\",\n  \"klab\": ", event);
	json_add_string(sb, PACKAGE_VERSION);
	json_member_line(sb, "host", host);
}

/* Every text ends with the signature naming the lab's host. */
static void add_signature(struct strbuf *sb, const char *host)
{
	strbuf_addstr(sb, "-- \nklab on ");
	add_line(sb, host ? host : "localhost", 200);
	strbuf_addch(sb, '\n');
}

static void message_take(struct notify_message *m, struct strbuf *subject, struct strbuf *text,
			 struct strbuf *json)
{
	m->subject = strbuf_detach(subject, NULL);
	m->text = strbuf_detach(text, NULL);
	m->json = strbuf_detach(json, NULL);
}

/* ---- composing a bisection's report --------------------------------------- */

/* What the report tells: the result, BISECTION_ERROR ("failed") for a
 * failed bisection or one without a result. */
static enum bisection_result outcome_of(const struct notify_facts *f)
{
	if (f->state == BISECTION_FAILED || f->result == BISECTION_NO_RESULT)
		return BISECTION_ERROR;
	return f->result;
}

const char *notify_outcome(const struct notify_facts *f)
{
	enum bisection_result r = outcome_of(f);

	return r == BISECTION_ERROR ? "failed" : bisection_result_to_string(r);
}

static const struct notify_kpi *kpi_row(const struct notify_facts *f, const char *label)
{
	for (size_t i = 0; i < f->nr_kpis; i++)
		if (!strcmp(f->kpis[i].label, label) && f->kpis[i].n)
			return &f->kpis[i];
	return NULL;
}

/* %change of a row against the good end, as the bisection's report has it. */
static double kpi_change(const struct notify_facts *f, const struct notify_kpi *k)
{
	const struct notify_kpi *good = kpi_row(f, "good");

	if (!good || !k || !k->n)
		return NAN;
	return stats_change_percent(stats_median(good->vals, good->n), stats_median(k->vals, k->n));
}

/* The change the subject names: the culprit's, else the bad end's. */
static const struct notify_kpi *headline_kpi(const struct notify_facts *f)
{
	const struct notify_kpi *k = kpi_row(f, "culprit");

	return k ? k : kpi_row(f, "bad");
}

static const char *change_word(const struct notify_facts *f, double change)
{
	return change * (f->direction < 0 ? -1 : 1) < 0 ? "regression" : "improvement";
}

/* The last path component of the test command, for the subject. */
static const char *command_name(const struct notify_facts *f)
{
	const char *a, *slash;

	if (!f->argc)
		return "the test";
	a = f->argv[0];
	slash = strrchr(a, '/');
	return slash && slash[1] ? slash + 1 : a;
}

static const struct notify_step *culprit_step(const struct notify_facts *f)
{
	const struct notify_step *found = NULL;

	for (size_t i = 0; f->culprit && i < f->nr_step_list; i++)
		if (!strcmp(f->step_list[i].hash, f->culprit) && f->step_list[i].mark == BISECT_BAD)
			found = &f->step_list[i];
	return found;
}

/* "bisection 7: will-it-scale.per_process_ops " */
static void add_bisection_kpi(struct strbuf *sb, const struct notify_facts *f)
{
	strbuf_addf(sb, "bisection %lld: ", (long long)f->bisection_id);
	if (f->kpi) {
		add_line(sb, f->kpi, 100);
		strbuf_addch(sb, ' ');
	}
}

static void compose_subject(const struct notify_facts *f, struct strbuf *sb)
{
	enum bisection_result outcome = outcome_of(f);

	strbuf_addstr(sb, "[klab] ");
	if (outcome == BISECTION_CULPRIT && f->culprit) {
		strbuf_addf(sb, "%.12s ", f->culprit);
		add_line(sb, f->culprit_subject ? f->culprit_subject : "", 100);
		strbuf_addstr(sb, ": ");
		if (f->kind == BISECTION_JOB) {
			const struct notify_kpi *k = headline_kpi(f);
			double change = kpi_change(f, k);

			add_line(sb, f->kpi, 100);
			if (isfinite(change))
				strbuf_addf(sb, " %+.1f%% %s", change, change_word(f, change));
			else
				strbuf_addstr(sb, " regression");
		} else {
			const struct notify_step *s = culprit_step(f);

			add_line(sb, command_name(f), 60);
			if (s && s->exit_code >= 0)
				strbuf_addf(sb, " fails (exit %d)", s->exit_code);
			else
				strbuf_addstr(sb, " fails");
		}
	} else if (outcome == BISECTION_NOT_REPRODUCED) {
		add_bisection_kpi(sb, f);
		strbuf_addstr(sb, "regression not reproduced");
	} else if (outcome == BISECTION_UNCONFIRMED) {
		add_bisection_kpi(sb, f);
		strbuf_addstr(sb, "culprit NOT confirmed");
		if (f->suspect)
			strbuf_addf(sb, " (suspect %.12s)", f->suspect);
	} else if (outcome == BISECTION_SKIPPED_ONLY) {
		strbuf_addf(sb, "bisection %lld: only skipped commits left, %zu possible first bad commit%s",
			    (long long)f->bisection_id, f->nr_candidates, f->nr_candidates == 1 ? "" : "s");
	} else {
		strbuf_addf(sb, "bisection %lld failed: ", (long long)f->bisection_id);
		add_line(sb, f->message ? f->message : "unknown error", 120);
	}
}

static void add_field(struct strbuf *sb, const char *name, const char *value, size_t max)
{
	strbuf_addf(sb, "%-12s", name);
	add_line(sb, value, max);
	strbuf_addch(sb, '\n');
}

static void add_range(struct strbuf *sb, const struct notify_facts *f)
{
	strbuf_addf(sb, "%-12s", "range:");
	for (size_t i = 0; i < f->nr_goods; i++)
		strbuf_addf(sb, "good %.12s, ", f->goods[i]);
	strbuf_addf(sb, "bad %.12s%s\n", f->bad, f->first_parent ? " (first parent)" : "");
}

static void add_kpi_table(struct strbuf *sb, const struct notify_facts *f)
{
	strbuf_addstr(sb, "testcase:   ");
	add_line(sb, f->suite ? f->suite : "?", 60);
	strbuf_addch(sb, ' ');
	add_line(sb, f->testcase ? f->testcase : "?", 60);
	if (f->job_path) {
		strbuf_addstr(sb, " (");
		add_line(sb, f->job_path, 200);
		strbuf_addch(sb, ')');
	}
	strbuf_addstr(sb, "\nkpi:        ");
	add_line(sb, f->kpi ? f->kpi : "?", 100);
	strbuf_addf(sb, " (%s is better)\n\n", f->direction < 0 ? "lower" : "higher");
	int w = 8;

	for (size_t i = 0; i < f->nr_kpis; i++)
		if ((int)strlen(f->kpis[i].label) > w)
			w = (int)strlen(f->kpis[i].label);
	/* "±" is two bytes and one column: one more byte of padding */
	strbuf_addf(sb, "  %-*s %-12s  %19s  %9s  %4s\n", w, "", "commit", "median ±%stddev", "%change", "runs");
	for (size_t i = 0; i < f->nr_kpis; i++) {
		const struct notify_kpi *k = &f->kpis[i];
		char cell[64];
		double change = kpi_change(f, k);

		if (k->n)
			snprintf(cell, sizeof(cell), "%.6g ±%.0f%%", stats_median(k->vals, k->n),
				 stats_cv_percent(k->vals, k->n));
		else
			snprintf(cell, sizeof(cell), "-");
		strbuf_addf(sb, "  %-*s %-12.12s  %*s  ", w, k->label, k->hash, k->n ? 19 : 18, cell);
		if (isfinite(change))
			strbuf_addf(sb, "%+8.1f%%", change);
		else
			strbuf_addf(sb, "%9s", "-");
		strbuf_addf(sb, "  %4zu\n", k->n);
	}
	strbuf_addstr(sb, "  (%change against good)\n");
}

static void add_counters(struct strbuf *sb, const struct notify_facts *f)
{
	size_t shown = f->nr_counters < 25 ? f->nr_counters : 25;

	if (!f->nr_counters)
		return;
	strbuf_addf(sb, "\nmonitors per run, parent -> %s (real changes by LKP's rule, most significant first):\n",
		    f->suspect ? "suspect" : "culprit");
	strbuf_addf(sb, "  %14s %14s  %10s  %s\n", "parent", f->suspect ? "suspect" : "culprit", "%change", "stat");
	for (size_t i = 0; i < shown; i++) {
		const struct notify_counter *c = &f->counters[i];

		strbuf_addf(sb, "  %14.6g %14.6g  ", c->parent, c->culprit);
		if (compare_profile_section(c->name))
			strbuf_addf(sb, "%+9.1f ", c->culprit - c->parent);	/* a share: points, as LKP */
		else if (c->parent)
			strbuf_addf(sb, "%+9.1f%%", 100 * (c->culprit - c->parent) / fabs(c->parent));
		else
			strbuf_addf(sb, "%10s", "new");
		strbuf_addstr(sb, "  ");
		add_line(sb, c->name, 80);
		strbuf_addch(sb, '\n');
	}
	if (f->nr_counters > shown)
		strbuf_addf(sb, "  ... %zu more (klab bisect show %lld)\n", f->nr_counters - shown,
			    (long long)f->bisection_id);
	for (size_t i = 0; i < shown; i++)
		if (compare_profile_section(f->counters[i].name)) {
			strbuf_addstr(sb, "  (perf-profile rows: % of the samples in the profile runs, change in points)\n");
			break;
		}
}

static void add_step_table(struct strbuf *sb, const struct notify_facts *f)
{
	if (!f->nr_step_list)
		return;
	strbuf_addf(sb, "\n  %4s  %-12s  %-10s  %-7s  %4s  %s\n", "step", "commit", "phase", "verdict", "exit", "subject");
	for (size_t i = 0; i < f->nr_step_list; i++) {
		const struct notify_step *s = &f->step_list[i];

		strbuf_addf(sb, "  %4d  %.12s  %-10s  %-7s  ", s->seq, s->hash, s->phase ? s->phase : "",
			    s->verdict ? s->verdict : "-");
		if (s->exit_code >= 0)
			strbuf_addf(sb, "%4d  ", s->exit_code);
		else
			strbuf_addf(sb, "%4s  ", "-");
		add_line(sb, s->subject ? s->subject : "", 72);
		strbuf_addch(sb, '\n');
	}
}

/* How a reader gets the same result again: commands, one a line. */
static void reproduce_lines(const struct notify_facts *f, const char *indent, struct strbuf *sb)
{
	if (f->kind == BISECTION_JOB) {
		const char *revs[2] = { f->culprit, NULL };

		if (outcome_of(f) != BISECTION_CULPRIT) {
			revs[0] = f->nr_goods ? f->goods[0] : NULL;
			revs[1] = f->bad;
		}
		for (size_t i = 0; i < 2; i++) {
			if (!revs[i])
				continue;
			strbuf_addf(sb, "%sklab run --job ", indent);
			strbuf_add_shell_word(sb, f->job_path ? f->job_path : "JOB");
			strbuf_addstr(sb, " --repo ");
			strbuf_add_shell_word(sb, f->repo_path);
			strbuf_addf(sb, " --rev %.12s\n", revs[i]);
		}
	} else {
		strbuf_addf(sb, "%scd ", indent);
		strbuf_add_shell_word(sb, f->repo_path);
		strbuf_addf(sb, "\n%sgit bisect start%s %s", indent, f->first_parent ? " --first-parent" : "", f->bad);
		for (size_t i = 0; i < f->nr_goods; i++)
			strbuf_addf(sb, " %s", f->goods[i]);
		if (f->nr_paths) {
			strbuf_addstr(sb, " --");
			for (size_t i = 0; i < f->nr_paths; i++) {
				strbuf_addch(sb, ' ');
				strbuf_add_shell_word(sb, f->paths[i]);
			}
		}
		strbuf_addf(sb, "\n%sgit bisect run ", indent);
		add_argv(sb, f->argv, f->argc);
		strbuf_addch(sb, '\n');
	}
	strbuf_addf(sb, "%sklab bisect show %lld\n", indent, (long long)f->bisection_id);
}

/* Two change points: the split and each half's commit with its share. */
static void add_halves(struct strbuf *sb, const struct notify_facts *f)
{
	if (!f->split)
		return;
	strbuf_addf(sb, "%-12s%s (two changes: each half bisected with its own ends)\n", "split:", f->split);
	for (size_t i = 0; i < f->nr_halves; i++) {
		const struct notify_half *h = &f->halves[i];
		char name[16];

		snprintf(name, sizeof(name), "half %d:", h->half);
		if (!h->culprit) {
			strbuf_addf(sb, "%-12sno culprit (only skipped commits left)\n", name);
			continue;
		}
		strbuf_addf(sb, "%-12s%s %s", name, h->confirmed ? "culprit" : "suspect", h->culprit);
		if (!isnan(h->share))
			strbuf_addf(sb, " (%.0f%% of the regression)", h->share);
		strbuf_addf(sb, "%s\n", h->confirmed ? "" : " (NOT confirmed)");
		add_field(sb, "", h->subject ? h->subject : "", 400);
		if (h->revert) {
			struct strbuf line = STRBUF_INIT;

			strbuf_addstr(&line, "            ");
			revert_check_line(&line, h->revert);
			strbuf_addstr(&line, " (this culprit alone)");
			add_line(sb, line.buf, 600);
			strbuf_addch(sb, '\n');
			strbuf_release(&line);
		}
	}
}

/* The revert check as a JSON object (after "key": ). */
static void json_revert(struct strbuf *sb, const struct revert_check *rc)
{
	int measured = rc->outcome == REVERT_RESTORES_GOOD || rc->outcome == REVERT_NO_RESTORE;

	strbuf_addstr(sb, "{\"outcome\": ");
	json_add_string(sb, revert_outcome_name(rc->outcome));
	json_field(sb, "text", revert_outcome_text(rc->outcome));
	strbuf_addstr(sb, ", \"commit\": ");
	if (rc->commit[0])
		json_add_string(sb, rc->commit);
	else
		strbuf_addstr(sb, "null");
	strbuf_addf(sb, ", \"runs\": %zu", measured ? rc->runs : 0);
	if (measured) {
		json_field_number(sb, "median", rc->median);
		json_field_number(sb, "stddev_percent", rc->cv_percent);
		json_field_number(sb, "good_median", rc->good_median);
		json_field_number(sb, "bad_median", rc->bad_median);
	}
	json_field_line(sb, "detail", rc->detail);
	strbuf_addch(sb, '}');
}

static void json_kpi(struct strbuf *sb, const struct notify_facts *f, const char *label);

static void json_halves(struct strbuf *sb, const struct notify_facts *f)
{
	if (!f->split)
		return;
	json_member(sb, "split", f->split);
	json_key(sb, "halves");
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < f->nr_halves; i++) {
		const struct notify_half *h = &f->halves[i];

		strbuf_addf(sb, "%s{\"half\": %d, \"hash\": ", i ? ", " : "", h->half);
		if (h->culprit)
			json_add_string(sb, h->culprit);
		else
			strbuf_addstr(sb, "null");
		json_field_line(sb, "subject", h->subject ? h->subject : "");
		strbuf_addf(sb, ", \"confirmed\": %s, \"share_percent\": ", h->confirmed ? "true" : "false");
		if (isnan(h->share))
			strbuf_addstr(sb, "null");
		else
			json_add_number(sb, h->share);
		if (h->culprit) {
			char label[32];

			snprintf(label, sizeof(label), "parent %d", h->half);
			strbuf_addstr(sb, ", \"parent\": ");
			json_kpi(sb, f, label);
			snprintf(label, sizeof(label), "%s %d", h->confirmed ? "culprit" : "suspect", h->half);
			strbuf_addf(sb, ", \"%s\": ", h->confirmed ? "culprit" : "suspect");
			json_kpi(sb, f, label);
		}
		if (h->revert) {
			strbuf_addstr(sb, ", \"revert_check\": ");
			json_revert(sb, h->revert);
		}
		strbuf_addch(sb, '}');
	}
	strbuf_addch(sb, ']');
}

static void compose_text(const struct notify_facts *f, const char *subject, struct strbuf *sb)
{
	/* the subject without its tag opens the report */
	strbuf_addstr(sb, subject + strlen("[klab] "));
	strbuf_addstr(sb, "\n\n");
	strbuf_addf(sb, "%-12s%lld (%s)\n", "bisection:", (long long)f->bisection_id,
		    bisection_kind_to_string(f->kind));
	if (f->culprit) {
		add_field(sb, "commit:", f->culprit, 0);
		add_field(sb, "subject:", f->culprit_subject ? f->culprit_subject : "", 400);
		if (f->culprit_author)
			add_field(sb, "author:", f->culprit_author, 200);
	}
	if (f->suspect) {
		strbuf_addf(sb, "%-12s%s (NOT confirmed: not named as the culprit)\n", "suspect:", f->suspect);
		add_field(sb, "subject:", f->suspect_subject ? f->suspect_subject : "", 400);
	}
	add_halves(sb, f);
	add_field(sb, "repository:", f->repo_path, 400);
	add_range(sb, f);
	if (f->kind == BISECTION_COMMAND) {
		strbuf_addf(sb, "%-12s", "test:");
		add_argv(sb, f->argv, f->argc);
		strbuf_addstr(sb, "   (exit 0 good, 125 skip, 1-127 bad)\n");
	}
	strbuf_addf(sb, "%-12s%d\n", "steps:", f->steps);
	add_field(sb, "outcome:", f->message ? f->message : notify_outcome(f), 400);
	if (outcome_of(f) == BISECTION_SKIPPED_ONLY) {
		strbuf_addstr(sb, "\nThe first bad commit could be any of:\n");
		for (size_t i = 0; i < f->nr_candidates; i++)
			strbuf_addf(sb, "  %s\n", f->candidates[i]);
	}
	if (f->kind == BISECTION_JOB && f->nr_kpis) {
		strbuf_addch(sb, '\n');
		add_kpi_table(sb, f);
		add_counters(sb, f);
	}
	if (f->drift)
		strbuf_addf(sb, "\ndrift: the host trended by %+.2f%% per run while measuring; verdicts used the "
			    "latest runs of each side (its end and the commits decided like it)\n", f->drift_percent);
	if (f->revert) {
		struct strbuf line = STRBUF_INIT;

		revert_check_line(&line, f->revert);
		strbuf_addch(sb, '\n');
		add_line(sb, line.buf, 600);
		strbuf_addch(sb, '\n');
		if (f->revert->commit[0])
			strbuf_addf(sb, "  (the bad end with the culprit reverted: klab's commit %.12s, not in your "
				    "repository)\n", f->revert->commit);
		strbuf_release(&line);
	} else if (f->kind == BISECTION_COMMAND) {
		add_step_table(sb, f);
	}
	strbuf_addstr(sb, "\nTo reproduce:\n\n");
	reproduce_lines(f, "  ", sb);
	strbuf_addch(sb, '\n');
	add_signature(sb, f->host);
}

static void json_kpi(struct strbuf *sb, const struct notify_facts *f, const char *label)
{
	const struct notify_kpi *k = kpi_row(f, label);

	if (!k) {
		strbuf_addstr(sb, "null");
		return;
	}
	strbuf_addstr(sb, "{\"hash\": ");
	json_add_string(sb, k->hash);
	json_field_number(sb, "median", stats_median(k->vals, k->n));
	json_field_number(sb, "stddev_percent", stats_cv_percent(k->vals, k->n));
	strbuf_addf(sb, ", \"runs\": %zu, \"change_percent\": ", k->n);
	json_add_number(sb, kpi_change(f, k));
	strbuf_addstr(sb, ", \"values\": ");
	json_add_numbers(sb, k->vals, k->n, ", ");
	strbuf_addch(sb, '}');
}

static void json_hashes(struct strbuf *sb, char (*h)[41], size_t n)
{
	strbuf_addch(sb, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			strbuf_addstr(sb, ", ");
		json_add_string(sb, h[i]);
	}
	strbuf_addch(sb, ']');
}

static void compose_json(const struct notify_facts *f, const char *subject, struct strbuf *sb)
{
	struct strbuf t = STRBUF_INIT;

	json_open(sb, "bisection", f->host);
	strbuf_addf(sb, ",\n  \"bisection\": %lld,\n  \"kind\": ", (long long)f->bisection_id);
	json_add_string(sb, bisection_kind_to_string(f->kind));
	json_member(sb, "outcome", notify_outcome(f));
	json_member(sb, "subject", subject);
	json_member_line(sb, "message", f->message);
	json_member(sb, "repository", f->repo_path);
	json_member(sb, "bad", f->bad);
	json_key(sb, "good");
	json_hashes(sb, f->goods, f->nr_goods);
	strbuf_addf(sb, ",\n  \"steps\": %d,\n  \"culprit\": ", f->steps);
	if (f->culprit) {
		strbuf_addstr(sb, "{\"hash\": ");
		json_add_string(sb, f->culprit);
		json_field_line(sb, "subject", f->culprit_subject ? f->culprit_subject : "");
		json_field_line(sb, "author", f->culprit_author);
		strbuf_addch(sb, '}');
	} else {
		strbuf_addstr(sb, "null");
	}
	if (f->suspect) {
		strbuf_addstr(sb, ",\n  \"suspect\": {\"hash\": ");
		json_add_string(sb, f->suspect);
		json_field_line(sb, "subject", f->suspect_subject ? f->suspect_subject : "");
		strbuf_addstr(sb, ", \"confirmed\": false}");
	}
	json_key(sb, "candidates");
	json_hashes(sb, f->candidates, f->nr_candidates);
	json_halves(sb, f);
	if (f->kind == BISECTION_JOB) {
		json_member(sb, "job", f->job_path);
		strbuf_addstr(sb, ",\n  \"kpi\": {\"name\": ");
		json_add_string(sb, f->kpi);
		strbuf_addf(sb, ", \"direction\": %d, \"suite\": ", f->direction < 0 ? -1 : 1);
		json_add_string(sb, f->suite);
		json_field(sb, "testcase", f->testcase);
		for (size_t i = 0; i < 4; i++) {
			static const char *const labels[] = { "good", "parent", "culprit", "bad" };
			strbuf_addf(sb, ",\n    \"%s\": ", labels[i]);
			json_kpi(sb, f, labels[i]);
		}
		if (f->suspect) {
			strbuf_addstr(sb, ",\n    \"suspect\": ");
			json_kpi(sb, f, "suspect");
		}
		strbuf_addstr(sb, "}");
	} else {
		const struct notify_step *s = culprit_step(f);

		strbuf_addstr(sb, ",\n  \"command\": [");
		for (size_t i = 0; i < f->argc; i++) {
			if (i)
				strbuf_addstr(sb, ", ");
			json_add_string(sb, f->argv[i]);
		}
		strbuf_addstr(sb, "],\n  \"culprit_exit_code\": ");
		if (s && s->exit_code >= 0)
			strbuf_addf(sb, "%d", s->exit_code);
		else
			strbuf_addstr(sb, "null");
	}
	if (f->revert) {
		strbuf_addstr(sb, ",\n  \"revert_check\": ");
		json_revert(sb, f->revert);
	}
	if (f->kind == BISECTION_JOB) {
		strbuf_addf(sb, ",\n  \"drift\": %s", f->drift ? "true" : "false");
		if (f->drift)
			json_field_number(sb, "drift_percent_per_run", f->drift_percent);
	}
	reproduce_lines(f, "", &t);
	json_member(sb, "reproduce", t.buf);
	strbuf_addstr(sb, "\n}\n");
	strbuf_release(&t);
}

void notify_compose_bisection(const struct notify_facts *f, struct notify_message *m)
{
	struct strbuf subject = STRBUF_INIT, text = STRBUF_INIT, json = STRBUF_INIT;

	compose_subject(f, &subject);
	compose_text(f, subject.buf, &text);
	compose_json(f, subject.buf, &json);
	message_take(m, &subject, &text, &json);
}

void notify_compose_test(const char *host, const char *state_dir, int64_t now, struct notify_message *m)
{
	struct strbuf subject = STRBUF_INIT, text = STRBUF_INIT, json = STRBUF_INIT;

	strbuf_addstr(&subject, "[klab] test message from ");
	add_line(&subject, host, 200);
	strbuf_addstr(&text, "This is a test message from klab ('klab notify test').\n"
			     "Bisection results will reach you the same way.\n\nlab: ");
	add_line(&text, state_dir, 400);
	strbuf_addstr(&text, "\n\n");
	add_signature(&text, host);
	json_open(&json, "test", host);
	json_member(&json, "lab", state_dir);
	strbuf_addf(&json, ",\n  \"time\": %lld,\n  \"subject\": ", (long long)now);
	json_add_string(&json, subject.buf);
	strbuf_addstr(&json, "\n}\n");
	message_take(m, &subject, &text, &json);
}

void notify_message_release(struct notify_message *m)
{
	FREE_MANY(m->subject, m->text, m->json);
	memset(m, 0, sizeof(*m));
}

/* ---- the mail --------------------------------------------------------------- */

static void add_base64(struct strbuf *sb, const unsigned char *p, size_t n)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		strbuf_addch(sb, b64[(v >> 18) & 63]);
		strbuf_addch(sb, b64[(v >> 12) & 63]);
		strbuf_addch(sb, i + 1 < n ? b64[(v >> 6) & 63] : '=');
		strbuf_addch(sb, i + 2 < n ? b64[v & 63] : '=');
	}
}

void notify_mail_header(struct strbuf *out, const char *name, const char *value)
{
	struct strbuf v = STRBUF_INIT;
	size_t col, start = out->len;
	int ascii = 1;

	/* one line, no controls, valid UTF-8, bounded (RFC 5322: 998 per line) */
	add_line(&v, value ? value : "", 600);
	for (size_t i = 0; i < v.len; i++)
		if ((unsigned char)v.buf[i] >= 0x80)
			ascii = 0;
	/* "=?" could be read as an encoded word: encode such text too */
	if (strstr(v.buf, "=?"))
		ascii = 0;
	strbuf_addf(out, "%s:", name);
	col = out->len - start;
	if (ascii) {
		/* fold before words that would pass column 78 */
		const char *p = v.buf;
		int first = 1;
		while (*p) {
			const char *sp = p;
			size_t wlen;
			while (*sp == ' ')
				sp++;
			wlen = strcspn(sp, " ");
			if (!wlen)
				break;
			if (!first && col + 1 + wlen > 78) {
				strbuf_addstr(out, "\r\n");
				col = 0;
			}
			strbuf_addch(out, ' ');
			strbuf_add(out, sp, wlen);
			col += 1 + wlen;
			p = sp + wlen;
			first = 0;
		}
	} else {
		/* RFC 2047 B words of at most 39 bytes of whole characters */
		size_t i = 0;
		int first = 1;
		while (i < v.len) {
			size_t n = 0;
			uint32_t cp;
			while (i + n < v.len) {
				size_t c = utf8_decode(v.buf + i + n, v.len - i - n, &cp);
				if (!c)
					c = 1;	/* cannot happen: add_line made it UTF-8 */
				if (n + c > 39)
					break;
				n += c;
			}
			strbuf_addstr(out, first ? " " : "\r\n ");
			strbuf_addstr(out, "=?UTF-8?B?");
			add_base64(out, (const unsigned char *)v.buf + i, n);
			strbuf_addstr(out, "?=");
			i += n;
			first = 0;
		}
	}
	strbuf_addstr(out, "\r\n");
	strbuf_release(&v);
}

static void add_date(struct strbuf *out, int64_t t)
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
					      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strbuf_addf(out, "Date: %s, %d %s %04d %02d:%02d:%02d +0000\r\n", days[tm.tm_wday], tm.tm_mday,
		    months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

void notify_mail_format(struct strbuf *out, const char *from, const char *to, const char *subject,
			const char *text, int64_t date, const char *message_id)
{
	struct strbuf v = STRBUF_INIT;

	add_date(out, date);
	strbuf_addstr(&v, "klab <");
	strbuf_addstr(&v, from);
	strbuf_addch(&v, '>');
	notify_mail_header(out, "From", v.buf);
	notify_mail_header(out, "To", to);
	notify_mail_header(out, "Subject", subject);
	strbuf_reset(&v);
	strbuf_addf(&v, "<%s>", message_id);
	notify_mail_header(out, "Message-ID", v.buf);
	strbuf_addstr(out, "MIME-Version: 1.0\r\n"
			   "Content-Type: text/plain; charset=utf-8\r\n"
			   "Content-Transfer-Encoding: 8bit\r\n"
			   "Auto-Submitted: auto-generated\r\n");
	notify_mail_header(out, "X-Mailer", "klab " PACKAGE_VERSION);
	strbuf_addstr(out, "\r\n");
	/* CRLF line ends; a stray CR would end a line where the text did not */
	for (const char *p = text; *p; p++) {
		if (*p == '\n')
			strbuf_addstr(out, "\r\n");
		else
			strbuf_addch(out, *p == '\r' ? ' ' : *p);
	}
	if (out->len < 2 || strcmp(out->buf + out->len - 2, "\r\n"))
		strbuf_addstr(out, "\r\n");
	strbuf_release(&v);
}

/* ---- facts from the database ---------------------------------------------- */

/* This machine's name as mail wants it (Message-ID, default sender). */
static void host_name(char *buf, size_t len)
{
	if (gethostname(buf, len) < 0 || !*buf)
		snprintf(buf, len, "localhost");
	buf[len - 1] = '\0';
	for (char *p = buf; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-", *p))
			*p = '-';
}

/* A bisection's facts and the storage they point into. */
struct loaded {
	struct notify_facts f;
	struct bisection b;
	struct step *steps;
	size_t nr_steps;
	struct notify_step *nsteps;
	char *subject, *author;
	double *vals[6];
	struct runcmp cmp;	/* parent and culprit, the counters' names point into it */
	struct notify_counter *counters;
	struct job job;
	int have_job;
	char host[256];
	struct revert_check revert;
	/* two change points */
	char split[41];
	struct half_culprit *hc;
	size_t nr_hc;
	struct notify_half *halves;
	char **half_subjects;
	struct revert_check *half_reverts;
};

static void loaded_release(struct loaded *l)
{
	bisection_release(&l->b);
	steps_release(l->steps, l->nr_steps);
	FREE_MANY(l->nsteps, l->subject, l->author);
	for (size_t i = 0; i < ARRAY_SIZE(l->vals); i++)
		free(l->vals[i]);
	runcmp_release(&l->cmp);
	free(l->counters);
	if (l->have_job)
		job_release(&l->job);
	revert_check_release(&l->revert);
	strings_free(l->half_subjects, l->nr_hc);
	for (size_t i = 0; l->half_reverts && i < l->nr_hc; i++)
		revert_check_release(&l->half_reverts[i]);
	free(l->half_reverts);
	free(l->halves);
	half_culprits_release(l->hc, l->nr_hc);
}

/* The split and what each half found (migration 11), with subjects. */
static int load_halves(struct lab *lab, struct loaded *l)
{
	int has = 0;

	if (db_bisection_split(lab->db, l->b.id, l->split, &has) < 0)
		return -1;
	if (!has)
		return 0;
	if (db_half_culprits_load(lab->db, l->b.id, &l->hc, &l->nr_hc) < 0)
		return -1;
	l->halves = xcalloc(l->nr_hc + 1, sizeof(*l->halves));
	l->half_subjects = xcalloc(l->nr_hc + 1, sizeof(char *));
	l->half_reverts = xcalloc(l->nr_hc + 1, sizeof(*l->half_reverts));
	for (size_t i = 0; i < l->nr_hc; i++) {
		const struct half_culprit *c = &l->hc[i];
		char *author = NULL;
		int64_t t;
		int rv = db_half_revert(lab->db, l->b.id, c->half, &l->half_reverts[i]);

		if (rv < 0)
			return -1;
		l->halves[i] = (struct notify_half){ c->half, c->has_culprit ? c->culprit : NULL, NULL, c->confirmed,
						     c->share, rv > 0 ? &l->half_reverts[i] : NULL };
		if (c->has_culprit &&
		    db_commit_facts(lab->db, l->b.repo_id, c->culprit, &l->half_subjects[i], &author, &t) > 0)
			l->halves[i].subject = l->half_subjects[i];
		free(author);
	}
	l->f.split = l->split;
	l->f.halves = l->halves;
	l->f.nr_halves = l->nr_hc;
	return 0;
}

/* The latest finished step of `phase` at `hash` (or, with other, at
 * any other commit). */
static int64_t find_step(const struct loaded *l, enum step_phase phase, const char *hash, int other)
{
	int64_t id = 0;

	for (size_t i = 0; hash && i < l->nr_steps; i++) {
		const struct step *s = &l->steps[i];
		int same;

		if (s->status_id != STEP_DONE || s->phase_id != phase)
			continue;
		same = !strcmp(s->hash, hash);
		if (same != other)
			id = s->id;
	}
	return id;
}

/* The monitor stats that moved between the confirm steps at parent
 * (ids[1]) and culprit (ids[2]), the profile from the profile steps when
 * both ran (prof[0], prof[1]), paired and ranked as bisect show does
 * (runcompare.c). */
static int load_counters(struct lab *lab, struct loaded *l, const int64_t *ids, const int64_t *prof)
{
	const struct runcmp_pair *p;
	int both = prof[0] && prof[1];

	l->cmp.kpi = xstrdup(l->f.kpi);
	if (runcmp_add_step(&l->cmp, lab->db, "parent", ids[1], both ? prof[0] : 0) < 0 ||
	    runcmp_add_step(&l->cmp, lab->db, "culprit", ids[2], both ? prof[1] : 0) < 0)
		return -1;
	runcmp_compute(&l->cmp);
	p = &l->cmp.pairs[0];
	l->counters = xcalloc(p->nr_rows + 1, sizeof(*l->counters));
	for (size_t k = 0; k < p->nr_rows; k++)
		l->counters[k] = (struct notify_counter){ p->rows[k].name, p->rows[k].mean_a, p->rows[k].mean_b };
	l->f.counters = l->counters;
	l->f.nr_counters = p->nr_rows;
	return 0;
}

/* The hash of step `id` ("" none). */
static const char *step_hash(const struct loaded *l, int64_t id)
{
	for (size_t i = 0; id && i < l->nr_steps; i++)
		if (l->steps[i].id == id)
			return l->steps[i].hash;
	return NULL;
}

/* The confirm steps of `culprit` (pair[1]: the latest done one at it, in
 * half `half`, any half when -1) and of its parent (pair[0]: the latest
 * done one of the same pass and half at another commit before it); 0
 * where there is none. */
static void confirm_pair(const struct loaded *l, const char *culprit, int half, int64_t pair[2])
{
	size_t at = l->nr_steps;

	pair[0] = pair[1] = 0;
	for (size_t i = 0; i < l->nr_steps; i++) {
		const struct step *s = &l->steps[i];

		if (s->status_id == STEP_DONE && s->phase_id == STEP_PHASE_CONFIRM && !strcmp(s->hash, culprit) &&
		    (half < 0 || s->half == half))
			at = i;
	}
	if (at == l->nr_steps)
		return;
	pair[1] = l->steps[at].id;
	for (size_t i = 0; i < at; i++) {
		const struct step *s = &l->steps[i];

		if (s->status_id == STEP_DONE && s->phase_id == STEP_PHASE_CONFIRM && strcmp(s->hash, culprit) &&
		    s->pass == l->steps[at].pass && s->half == l->steps[at].half)
			pair[0] = s->id;
	}
}

/* One KPI row of the notice: the KPI of step `id`'s runs (none: no row). */
static int add_kpi(struct lab *lab, struct loaded *l, const char *label, int64_t id)
{
	struct notify_facts *f = &l->f;
	struct notify_kpi *k;
	const char *hash = step_hash(l, id);
	size_t n = 0;

	if (!id || f->nr_kpis >= ARRAY_SIZE(f->kpis))
		return 0;
	if (db_step_metric_values(lab->db, id, f->kpi, &l->vals[f->nr_kpis], &n) < 0)
		return -1;
	k = &f->kpis[f->nr_kpis];
	k->label = label;
	k->vals = l->vals[f->nr_kpis++];
	k->n = n;
	snprintf(k->hash, sizeof(k->hash), "%s", hash ? hash : "");
	return 0;
}

static const char *const pair_labels[2][3] = { { "parent 1", "culprit 1", "suspect 1" },
					       { "parent 2", "culprit 2", "suspect 2" } };

static int load_job_facts(struct lab *lab, struct loaded *l)
{
	struct notify_facts *f = &l->f;
	int64_t mon[2] = { 0, 0 };

	f->job_path = l->b.job_path;
	f->kpi = l->b.kpi;
	f->direction = 1;
	if (l->b.job_text && job_parse_buffer(&l->job, l->b.job_path ? l->b.job_path : "job", l->b.job_text,
					       strlen(l->b.job_text)) == 0) {
		l->have_job = 1;
		f->suite = l->job.suite;
		f->testcase = l->job.testcase;
		f->direction = l->job.direction;
		if (!f->kpi)
			f->kpi = l->job.kpi;
	}
	if (!f->kpi)
		return 0;
	if (add_kpi(lab, l, "good", find_step(l, STEP_PHASE_REFERENCE, l->b.nr_goods ? l->b.goods[0] : NULL, 0)) < 0)
		return -1;
	if (l->nr_hc) {
		/* two changes: each half's parent and culprit, the monitors of
		 * the first confirmed pair */
		for (size_t i = 0; i < l->nr_hc; i++) {
			const struct half_culprit *c = &l->hc[i];
			int64_t pair[2];

			if (!c->has_culprit)
				continue;
			confirm_pair(l, c->culprit, c->half, pair);
			if (add_kpi(lab, l, pair_labels[c->half - 1][0], pair[0]) < 0 ||
			    add_kpi(lab, l, pair_labels[c->half - 1][c->confirmed ? 1 : 2], pair[1]) < 0)
				return -1;
			if (c->confirmed && !mon[0] && pair[0] && pair[1])
				memcpy(mon, pair, sizeof(mon));
		}
	} else if (l->b.culprit) {
		confirm_pair(l, l->b.culprit, -1, mon);
		if (add_kpi(lab, l, "parent", mon[0]) < 0 || add_kpi(lab, l, f->suspect ? "suspect" : "culprit", mon[1]) < 0)
			return -1;
	}
	if (add_kpi(lab, l, "bad", find_step(l, STEP_PHASE_REFERENCE, l->b.bad, 0)) < 0)
		return -1;
	/* the monitors that moved, as the bisection's own report picks them */
	if (mon[0] && mon[1]) {
		const int64_t prof[2] = { find_step(l, STEP_PHASE_PROFILE, step_hash(l, mon[0]), 0),
					  find_step(l, STEP_PHASE_PROFILE, step_hash(l, mon[1]), 0) };
		const int64_t ids[3] = { 0, mon[0], mon[1] };

		if (load_counters(lab, l, ids, prof) < 0)
			return -1;
	}
	if (db_bisection_drift(lab->db, l->b.id, &f->drift, &f->drift_percent) < 0)
		return -1;
	switch (db_bisection_revert(lab->db, l->b.id, &l->revert)) {
	case -1:
		return -1;
	case 1:
		f->revert = &l->revert;
		break;
	}
	return 0;
}

static int load_facts(struct lab *lab, int64_t id, struct loaded *l)
{
	struct notify_facts *f = &l->f;
	int64_t author_time;

	memset(l, 0, sizeof(*l));
	if (db_bisection_load(lab->db, id, &l->b) < 0)
		return -1;
	if (l->b.state_id != BISECTION_DONE && l->b.state_id != BISECTION_FAILED)
		return error("bisection %lld has not finished (state %s): nothing to report yet", (long long)id,
			     l->b.state);
	if (db_steps_load(lab->db, id, &l->steps, &l->nr_steps) < 0)
		return -1;
	host_name(l->host, sizeof(l->host));
	f->host = l->host;
	f->bisection_id = l->b.id;
	f->kind = l->b.kind_id;
	f->state = l->b.state_id;
	f->result = l->b.result_id;
	f->message = l->b.message;
	f->repo_path = l->b.repo_path;
	f->bad = l->b.bad;
	f->goods = l->b.goods;
	f->nr_goods = l->b.nr_goods;
	f->first_parent = l->b.first_parent;
	f->candidates = l->b.candidates;
	f->nr_candidates = l->b.nr_candidates;
	f->paths = l->b.paths;
	f->nr_paths = l->b.nr_paths;
	f->argv = l->b.argv;
	f->argc = l->b.argc;
	l->nsteps = xcalloc(l->nr_steps + 1, sizeof(*l->nsteps));
	for (size_t i = 0; i < l->nr_steps; i++) {
		const struct step *s = &l->steps[i];
		struct notify_step *ns = &l->nsteps[i];

		if (s->status_id == STEP_DONE)
			f->steps++;
		ns->seq = s->seq;
		memcpy(ns->hash, s->hash, 41);
		ns->phase = s->phase;
		ns->verdict = s->verdict;
		ns->mark = s->mark;
		ns->reason = s->reason;
		ns->subject = s->subject;
		ns->exit_code = s->exit_code;
	}
	f->step_list = l->nsteps;
	f->nr_step_list = l->nr_steps;
	if (l->b.culprit && l->b.result_id == BISECTION_CULPRIT) {
		f->culprit = l->b.culprit;
		if (db_commit_facts(lab->db, l->b.repo_id, l->b.culprit, &l->subject, &l->author, &author_time) < 0)
			return -1;
		f->culprit_subject = l->subject;
		f->culprit_author = l->author;
	} else if (l->b.culprit && l->b.result_id == BISECTION_UNCONFIRMED) {
		f->suspect = l->b.culprit;
		if (db_commit_facts(lab->db, l->b.repo_id, l->b.culprit, &l->subject, &l->author, &author_time) < 0)
			return -1;
		f->suspect_subject = l->subject;
	}
	if (load_halves(lab, l) < 0)
		return -1;
	if (l->b.kind_id == BISECTION_JOB && load_job_facts(lab, l) < 0)
		return -1;
	return 0;
}

/* ---- delivery ---------------------------------------------------------------- */

static int curl_ready;

static int curl_setup(struct strbuf *err)
{
	CURLcode rc;

	if (curl_ready)
		return 0;
	rc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK) {
		strbuf_addf(err, "cannot initialize libcurl: %s", curl_easy_strerror(rc));
		return -1;
	}
	curl_ready = 1;
	atexit(curl_global_cleanup);
	return 0;
}

/* libcurl's error, once: its detailed buffer, else its code's text. */
static void curl_failure(struct strbuf *err, CURLcode rc, const char *errbuf)
{
	size_t start = err->len;

	add_line(err, *errbuf ? errbuf : curl_easy_strerror(rc), 300);
	while (err->len > start && err->buf[err->len - 1] == ' ')
		strbuf_setlen(err, err->len - 1);
}

/* "a@x, b@y" -> addresses, trimmed. */
static size_t split_addresses(const char *list, char ***out)
{
	size_t n = 0, alloc = 0;

	*out = NULL;
	while (*list) {
		const char *end = strchrnul(list, ','), *a = list, *b = end;

		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			ALLOC_GROW(*out, n + 1, alloc);
			(*out)[n++] = xstrndup(a, (size_t)(b - a));
		}
		list = *end ? end + 1 : end;
	}
	return n;
}

static char *join_addresses(const char *list)
{
	struct strbuf sb = STRBUF_INIT;
	char **a;
	size_t n = split_addresses(list, &a);

	for (size_t i = 0; i < n; i++) {
		strbuf_addstr(&sb, i ? ", " : "");
		strbuf_addstr(&sb, a[i]);
		free(a[i]);
	}
	free(a);
	return strbuf_detach(&sb, NULL);
}

/* The password from smtp_password_file: its first line. */
static char *read_password(const char *path, struct strbuf *err)
{
	char buf[1024];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *pw;

	if (fd < 0) {
		strbuf_addf(err, "cannot open smtp_password_file '%s': %s", path, strerror(errno));
		return NULL;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		strbuf_addf(err, "cannot read smtp_password_file '%s': %s", path, strerror(errno));
		return NULL;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	pw = xstrdup(buf);
	explicit_bzero(buf, sizeof(buf));
	return pw;
}

struct upload {
	const char *p;
	size_t left;
};

static size_t upload_read(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct upload *u = arg;
	size_t n = size * nmemb;

	if (n > u->left)
		n = u->left;
	memcpy(buf, u->p, n);
	u->p += n;
	u->left -= n;
	return n;
}

/* Keep the start of a response for the error message. */
static size_t response_keep(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct strbuf *sb = arg;
	size_t n = size * nmemb;

	if (sb->len < 300)
		strbuf_add(sb, ptr, n < 300 - sb->len ? n : 300 - sb->len);
	return n;
}

static void common_options(struct lab *lab, CURL *c, char *errbuf)
{
	long timeout = lab->notify_timeout > 0 ? lab->notify_timeout : 30;

	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, timeout < 10 ? timeout : 10L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "klab/" PACKAGE_VERSION);
}

/* One message to every recipient of `to` ("a@x, b@y"). */
static int send_mail(struct lab *lab, const char *from, const char *to, const char *msg, struct strbuf *err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *rcpt = NULL;
	struct upload up = { msg, strlen(msg) };
	char **addrs = NULL, *mail_from = NULL, *password = NULL;
	size_t n = 0;
	CURL *c = NULL;
	CURLcode rc;
	int ret = -1;

	if (curl_setup(err) < 0)
		return -1;
	if (!lab->smtp_url) {
		strbuf_addf(err, "smtp_url is not set in %s", lab->config_path);
		return -1;
	}
	n = split_addresses(to, &addrs);
	if (!n) {
		strbuf_addstr(err, "no recipient");
		goto out;
	}
	if (lab->smtp_user && lab->smtp_password_file && !(password = read_password(lab->smtp_password_file, err)))
		goto out;
	c = curl_easy_init();
	if (!c) {
		strbuf_addstr(err, "cannot create a libcurl handle");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char *a = xstrfmt("<%s>", addrs[i]);
		rcpt = curl_slist_append(rcpt, a);
		free(a);
	}
	mail_from = xstrfmt("<%s>", from);
	common_options(lab, c, errbuf);
	curl_easy_setopt(c, CURLOPT_URL, lab->smtp_url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_SMTP | CURLPROTO_SMTPS));
#endif
	curl_easy_setopt(c, CURLOPT_USE_SSL, !strcmp(lab->smtp_tls, "required") ? (long)CURLUSESSL_ALL
					     : !strcmp(lab->smtp_tls, "try") ? (long)CURLUSESSL_TRY
									     : (long)CURLUSESSL_NONE);
	if (lab->smtp_user) {
		curl_easy_setopt(c, CURLOPT_USERNAME, lab->smtp_user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, password ? password : "");
	}
	curl_easy_setopt(c, CURLOPT_MAIL_FROM, mail_from);
	curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, upload_read);
	curl_easy_setopt(c, CURLOPT_READDATA, &up);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		curl_failure(err, rc, errbuf);
		goto out;
	}
	ret = 0;
out:
	if (c)
		curl_easy_cleanup(c);
	curl_slist_free_all(rcpt);
	strings_free(addrs, n);
	free(mail_from);
	if (password) {
		explicit_bzero(password, strlen(password));
		free(password);
	}
	return ret;
}

/* POST the document; any 2xx answer means it arrived. */
static int send_webhook(struct lab *lab, const char *url, const char *json, struct strbuf *err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL;
	struct strbuf response = STRBUF_INIT;
	CURL *c;
	CURLcode rc;
	long status = 0;
	int ret = -1;

	if (curl_setup(err) < 0)
		return -1;
	c = curl_easy_init();
	if (!c) {
		strbuf_addstr(err, "cannot create a libcurl handle");
		return -1;
	}
	headers = curl_slist_append(headers, "Content-Type: application/json");
	/* no "Expect: 100-continue" round trip for a small document */
	headers = curl_slist_append(headers, "Expect:");
	common_options(lab, c, errbuf);
	curl_easy_setopt(c, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(json));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, response_keep);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
	rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		curl_failure(err, rc, errbuf);
		goto out;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status < 200 || status > 299) {
		strbuf_addf(err, "HTTP status %ld", status);
		if (response.len) {
			strbuf_addstr(err, ": ");
			add_line(err, response.buf, 200);
		}
		goto out;
	}
	ret = 0;
out:
	curl_slist_free_all(headers);
	curl_easy_cleanup(c);
	strbuf_release(&response);
	return ret;
}

/* The sender: notify_mail_from, else klab@<host name>. */
static char *mail_from(struct lab *lab, const char *host)
{
	return lab->notify_mail_from ? xstrdup(lab->notify_mail_from) : xstrfmt("klab@%s", host);
}

void notify_describe_target(struct strbuf *sb, const char *kind, const char *target)
{
	if (!strcmp(kind, "mail"))
		add_line(sb, target, 200);
	else
		strbuf_add_url_redacted(sb, target, 0);
}

/* "mail to a@x" or "webhook https://host/...": a target in messages. */
static void describe(struct strbuf *sb, const char *kind, const char *target)
{
	strbuf_addstr(sb, !strcmp(kind, "mail") ? "mail to " : "webhook ");
	notify_describe_target(sb, kind, target);
}

static int send_row(struct lab *lab, const struct db_notification *n, struct strbuf *err)
{
	char host[256];

	host_name(host, sizeof(host));
	if (!strcmp(n->kind, "mail")) {
		struct strbuf msg = STRBUF_INIT;
		char *from = mail_from(lab, host);
		/* the same Message-ID on every retry: a duplicate is recognizable */
		char *mid = xstrfmt("klab.%lld.%lld@%s", (long long)n->id, (long long)n->created_at, host);
		int rc;

		notify_mail_format(&msg, from, n->target, n->subject ? n->subject : "[klab]", n->body,
				   n->created_at, mid);
		rc = send_mail(lab, from, n->target, msg.buf, err);
		strbuf_release(&msg);
		free(from);
		free(mid);
		return rc;
	}
	return send_webhook(lab, n->target, n->body, err);
}

/* One attempt at row `id`: 0 sent (or no longer pending), 1 failed and
 * recorded, -1 database error. */
static int deliver_row(struct lab *lab, int64_t id)
{
	struct db_notification n;
	struct strbuf err = STRBUF_INIT, what = STRBUF_INIT;
	int ret = -1;

	if (db_notification_load(lab->db, id, &n) < 0)
		return -1;
	if (strcmp(n.state, "pending")) {
		ret = 0;
		goto out;
	}
	describe(&what, n.kind, n.target);
	if (send_row(lab, &n, &err) == 0) {
		if (db_notification_attempt(lab->db, id, "sent", n.attempts + 1, 0, NULL) < 0)
			goto out;
		printf("notification %lld: %s sent\n", (long long)id, what.buf);
		ret = 0;
	} else {
		int attempts = n.attempts + 1;
		int64_t wait = notify_backoff(attempts);
		char dur[32];

		if (db_notification_attempt(lab->db, id, wait < 0 ? "failed" : "pending", attempts,
					    wait < 0 ? 0 : now_s() + wait, err.buf) < 0)
			goto out;
		if (wait < 0)
			warning("notification %lld (%s) not sent: %s; given up after %d attempts", (long long)id,
				what.buf, err.buf, attempts);
		else
			warning("notification %lld (%s) not sent: %s; next try in %s ('klab notify flush')",
				(long long)id, what.buf, err.buf, fmt_duration(wait * 1000, dur, sizeof(dur)));
		ret = 1;
	}
out:
	db_notification_release(&n);
	strbuf_release(&err);
	strbuf_release(&what);
	return ret;
}

/* Deliver rows under the lab's notify lock, so that two klab processes
 * never send the same row twice.  Returns the failures, or -1. */
static int deliver_rows(struct lab *lab, const int64_t *ids, size_t nr)
{
	int failed = 0, lock;

	if (!nr)
		return 0;
	lock = lab_try_lock(lab, "notify");
	if (lock < 0) {
		printf("notify: another klab process is delivering; 'klab notify flush' sends what it leaves\n");
		return 0;
	}
	for (size_t i = 0; i < nr; i++) {
		int rc = deliver_row(lab, ids[i]);
		if (rc < 0) {
			failed = -1;
			break;
		}
		failed += rc;
	}
	close(lock);
	return failed;
}

int notify_flush(struct lab *lab, int force)
{
	int64_t *ids;
	size_t nr;
	int ret;

	if (db_notifications_due(lab->db, now_s(), force, &ids, &nr) < 0)
		return -1;
	ret = deliver_rows(lab, ids, nr);
	free(ids);
	return ret;
}

/* The rows one notice makes, one per target, added in one transaction
 * before any is sent: they are the record. */
struct notice_rows {
	const struct notify_message *m;
	int64_t bisection_id;
	int64_t *ids;
	size_t nr, alloc;
};

/* One row to `target`: a mail carries the text, a webhook the JSON. */
static int add_row(struct lab *lab, struct notice_rows *r, const char *kind, const char *target, const char *body)
{
	ALLOC_GROW(r->ids, r->nr + 1, r->alloc);
	if (db_notification_add(lab->db, kind, target, r->m->subject, body, r->bisection_id, &r->ids[r->nr]) < 0)
		return -1;
	r->nr++;
	return 0;
}

/* The lab's targets: one mail to all of notify_mail_to, one webhook. */
static int add_lab_rows(struct lab *lab, struct notice_rows *r)
{
	if (lab->notify_mail_to) {
		char *to = join_addresses(lab->notify_mail_to);
		int rc = add_row(lab, r, "mail", to, r->m->text);
		free(to);
		if (rc < 0)
			return -1;
	}
	if (lab->notify_webhook && add_row(lab, r, "webhook", lab->notify_webhook, r->m->json) < 0)
		return -1;
	return 0;
}

/* End the rows' transaction: committed when every row was added (ok),
 * then each delivered; else rolled back.  Frees the ids. */
static int finish_rows(struct lab *lab, struct notice_rows *r, int ok)
{
	int ret = -1;

	if (ok && db_commit(lab->db) == 0)
		ret = deliver_rows(lab, r->ids, r->nr) < 0 ? -1 : 0;
	else
		db_rollback(lab->db);
	free(r->ids);
	r->ids = NULL;
	return ret;
}

int notify_bisection(struct lab *lab, int64_t bisection_id)
{
	struct loaded l;
	struct notify_message m = { 0 };
	struct notice_rows r = { .m = &m, .bisection_id = bisection_id };
	int ret = -1;

	if (!lab->notify_mail_to && !lab->notify_webhook)
		return 0;
	if (load_facts(lab, bisection_id, &l) < 0)
		goto out;
	notify_compose_bisection(&l.f, &m);
	if (db_begin(lab->db) == 0)
		ret = finish_rows(lab, &r, add_lab_rows(lab, &r) == 0);
out:
	notify_message_release(&m);
	loaded_release(&l);
	return ret;
}

void notify_bisection_if_ended(struct lab *lab, int64_t bisection_id)
{
	struct bisection fin;

	if (db_bisection_load(lab->db, bisection_id, &fin) < 0)
		return;
	if (fin.state_id == BISECTION_DONE || fin.state_id == BISECTION_FAILED)
		notify_bisection(lab, bisection_id);
	bisection_release(&fin);
}

/* ---- tracking ---------------------------------------------------------------- */

/* A job's %change from the compared tip to the new one (both measured). */
static double track_job_change(const struct notify_track_job *j)
{
	return stats_change_percent(stats_median(j->prev, j->np), stats_median(j->cur, j->nc));
}

static const struct notify_track_job *track_headline(const struct notify_track_facts *f)
{
	const struct notify_track_job *best = NULL;
	double best_change = 0;

	for (size_t i = 0; i < f->nr_jobs; i++) {
		const struct notify_track_job *j = &f->jobs[i];
		double c;
		if (strcmp(j->change, f->status) || !j->np || !j->nc)
			continue;
		c = fabs(track_job_change(j));
		if (!best || c > best_change) {
			best = j;
			best_change = c;
		}
	}
	return best;
}

static void track_subject(const struct notify_track_facts *f, struct strbuf *sb)
{
	const struct notify_track_job *j = track_headline(f);

	strbuf_addstr(sb, "[klab] track ");
	add_line(sb, f->track, 64);
	strbuf_addstr(sb, ": ");
	if (j) {
		add_line(sb, j->kpi, 100);
		strbuf_addf(sb, " %+.1f%% %s at ", track_job_change(j), f->status);
	}
	strbuf_addf(sb, "%.12s ", f->tip);
	add_line(sb, f->tip_subject ? f->tip_subject : "", 120);
	if (!j) {
		if (!strcmp(f->status, "build-failed"))
			strbuf_addstr(sb, ": does not build");
		else if (!strcmp(f->status, "boot-failed"))
			strbuf_addstr(sb, ": does not boot or run");
		else {
			strbuf_addstr(sb, ": ");
			strbuf_addstr(sb, f->status);
		}
	}
}

/* One row a job: its KPI, before and after with their spread, the
 * change and the verdict, its job file and the verdict's line. */
static void track_job_table(struct strbuf *sb, const struct notify_track_facts *f)
{
	strbuf_addf(sb, "\n  %-40s %19s %19s %9s  %s\n", "job / kpi", "before ±%stddev", "after ±%stddev",
		    "%change", "verdict");
	for (size_t i = 0; i < f->nr_jobs; i++) {
		const struct notify_track_job *j = &f->jobs[i];
		char before[64] = "-", after[64] = "-", change[32] = "-";
		if (j->np)
			snprintf(before, sizeof(before), "%.6g ±%.0f%%", stats_median(j->prev, j->np),
				 stats_cv_percent(j->prev, j->np));
		if (j->nc)
			snprintf(after, sizeof(after), "%.6g ±%.0f%%", stats_median(j->cur, j->nc),
				 stats_cv_percent(j->cur, j->nc));
		if (j->np && j->nc)
			snprintf(change, sizeof(change), "%+.1f%%", track_job_change(j));
		strbuf_addstr(sb, "  ");
		add_line(sb, j->kpi, 40);
		strbuf_addf(sb, "\n    %-38.38s %*s %*s %9s  %s\n", "", j->np ? 20 : 19, before, j->nc ? 20 : 19,
			    after, change, j->change);
		strbuf_addstr(sb, "    ");
		add_line(sb, j->job_path, 300);
		strbuf_addch(sb, '\n');
		if (j->text) {
			strbuf_addstr(sb, "    ");
			add_line(sb, j->text, 300);
			strbuf_addch(sb, '\n');
		}
	}
}

static void track_text(const struct notify_track_facts *f, const char *subject, struct strbuf *sb)
{
	strbuf_addstr(sb, subject + strlen("[klab] "));
	strbuf_addstr(sb, "\n\n");
	add_field(sb, "track:", f->track, 64);
	add_field(sb, "repository:", f->repo_path, 400);
	strbuf_addf(sb, "%-12s", "branch:");
	add_line(sb, f->branch, 200);
	strbuf_addstr(sb, " of ");
	add_line(sb, f->remote, 400);
	strbuf_addch(sb, '\n');
	add_field(sb, "tip:", f->tip, 0);
	add_field(sb, "subject:", f->tip_subject ? f->tip_subject : "", 400);
	if (f->tip_author)
		add_field(sb, "author:", f->tip_author, 200);
	add_field(sb, "compared to:", f->compared_to ? f->compared_to : "nothing (a new baseline)", 0);
	add_field(sb, "status:", f->status, 0);
	if (f->message)
		add_field(sb, "message:", f->message, 400);
	strbuf_addf(sb, "%-12s%.1f%%\n", "threshold:", f->threshold_pct);
	if (f->nr_jobs)
		track_job_table(sb, f);
	if (f->bisection_id)
		strbuf_addf(sb, "\nBisection %lld (queue job %lld) between %.12s (good) and %.12s (bad) is queued;\n"
				"'klab worker' runs it, 'klab bisect show %lld' follows it.\n",
			    (long long)f->bisection_id, (long long)f->queue_job_id,
			    f->compared_to ? f->compared_to : "?", f->tip, (long long)f->bisection_id);
	strbuf_addstr(sb, "\nklab track show ");
	add_line(sb, f->track, 64);
	strbuf_addstr(sb, "\n\n");
	add_signature(sb, f->host);
}

static void track_json(const struct notify_track_facts *f, const char *subject, struct strbuf *sb)
{
	json_open(sb, "track", f->host);
	json_member(sb, "track", f->track);
	json_member(sb, "status", f->status);
	json_member(sb, "subject", subject);
	json_member_line(sb, "message", f->message);
	json_member(sb, "repository", f->repo_path);
	json_member(sb, "remote", f->remote);
	json_member(sb, "branch", f->branch);
	strbuf_addstr(sb, ",\n  \"tip\": {\"hash\": ");
	json_add_string(sb, f->tip);
	json_field_line(sb, "subject", f->tip_subject ? f->tip_subject : "");
	json_field_line(sb, "author", f->tip_author);
	strbuf_addstr(sb, "},\n  \"compared_to\": ");
	json_add_string(sb, f->compared_to);
	json_key(sb, "threshold_percent");
	json_add_number(sb, f->threshold_pct);
	json_key(sb, "bisection");
	if (f->bisection_id)
		strbuf_addf(sb, "%lld", (long long)f->bisection_id);
	else
		strbuf_addstr(sb, "null");
	strbuf_addstr(sb, ",\n  \"jobs\": [");
	for (size_t i = 0; i < f->nr_jobs; i++) {
		const struct notify_track_job *j = &f->jobs[i];
		strbuf_addstr(sb, i ? ",\n    {\"job\": " : "\n    {\"job\": ");
		json_add_string(sb, j->job_path);
		json_field(sb, "kpi", j->kpi);
		strbuf_addf(sb, ", \"direction\": %d, \"change\": ", j->direction < 0 ? -1 : 1);
		json_add_string(sb, j->change);
		json_field_number(sb, "before", j->np ? stats_median(j->prev, j->np) : NAN);
		json_field_number(sb, "after", j->nc ? stats_median(j->cur, j->nc) : NAN);
		json_field_number(sb, "change_percent", j->np && j->nc ? track_job_change(j) : NAN);
		strbuf_addf(sb, ", \"runs_before\": %zu, \"runs_after\": %zu}", j->np, j->nc);
	}
	strbuf_addstr(sb, "]\n}\n");
}

void notify_compose_track(const struct notify_track_facts *f, struct notify_message *m)
{
	struct strbuf subject = STRBUF_INIT, text = STRBUF_INIT, json = STRBUF_INIT;

	track_subject(f, &subject);
	track_text(f, subject.buf, &text);
	track_json(f, subject.buf, &json);
	message_take(m, &subject, &text, &json);
}

/* A track's --notify targets, one a line: each http(s) URL a webhook
 * row, the addresses one mail row to them all. */
static int add_target_rows(struct lab *lab, struct notice_rows *r, const char *targets)
{
	struct strbuf mail = STRBUF_INIT;
	int ret = 0;

	for (const char *p = targets; *p && !ret;) {
		const char *eol = strchrnul(p, '\n');
		char *t = xstrndup(p, (size_t)(eol - p));
		p = *eol ? eol + 1 : eol;
		if (!strncmp(t, "http://", 7) || !strncmp(t, "https://", 8)) {
			ret = add_row(lab, r, "webhook", t, r->m->json);
		} else if (*t) {
			if (mail.len)
				strbuf_addstr(&mail, ", ");
			strbuf_addstr(&mail, t);
		}
		free(t);
	}
	if (!ret && mail.len)
		ret = add_row(lab, r, "mail", mail.buf, r->m->text);
	strbuf_release(&mail);
	return ret;
}

int notify_track(struct lab *lab, const struct notify_track_facts *f, const char *targets)
{
	struct notify_message m = { 0 };
	struct notify_track_facts facts = *f;
	struct notice_rows r = { .m = &m, .bisection_id = f->bisection_id };
	char host[256];
	int ret = -1;

	if (!targets && !lab->notify_mail_to && !lab->notify_webhook)
		return 0;
	host_name(host, sizeof(host));
	if (!facts.host)
		facts.host = host;
	notify_compose_track(&facts, &m);
	if (db_begin(lab->db) == 0)
		ret = finish_rows(lab, &r, (targets ? add_target_rows(lab, &r, targets) : add_lab_rows(lab, &r)) == 0);
	notify_message_release(&m);
	return ret;
}

int notify_test(struct lab *lab, int mail, int webhook)
{
	struct notify_message m = { 0 };
	char host[256];
	int ret = 0;

	if (mail && !lab->notify_mail_to)
		return error("notify_mail_to is not set in %s", lab->config_path);
	if (webhook && !lab->notify_webhook)
		return error("notify_webhook is not set in %s", lab->config_path);
	host_name(host, sizeof(host));
	notify_compose_test(host, lab->state_dir, now_s(), &m);
	if (mail) {
		struct strbuf msg = STRBUF_INIT, err = STRBUF_INIT, what = STRBUF_INIT;
		char *from = mail_from(lab, host), *to = join_addresses(lab->notify_mail_to);
		char *mid = xstrfmt("klab.test.%lld.%d@%s", (long long)now_s(), (int)getpid(), host);

		describe(&what, "mail", to);
		notify_mail_format(&msg, from, to, m.subject, m.text, now_s(), mid);
		if (send_mail(lab, from, to, msg.buf, &err) == 0)
			printf("notify test: %s sent through %s\n", what.buf, lab->smtp_url);
		else
			ret = error("notify test: %s not sent: %s", what.buf, err.buf);
		strbuf_release(&msg);
		strbuf_release(&err);
		strbuf_release(&what);
		free(from);
		free(to);
		free(mid);
	}
	if (webhook) {
		struct strbuf err = STRBUF_INIT, what = STRBUF_INIT;

		describe(&what, "webhook", lab->notify_webhook);
		if (send_webhook(lab, lab->notify_webhook, m.json, &err) == 0)
			printf("notify test: %s answered 2xx\n", what.buf);
		else
			ret = error("notify test: %s not sent: %s", what.buf, err.buf);
		strbuf_release(&err);
		strbuf_release(&what);
	}
	notify_message_release(&m);
	return ret;
}
