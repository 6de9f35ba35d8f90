/* Tracking's decisions: names, the base a tip is compared with, and
 * regression / improvement / no change from two sample sets. */
#include "core/track.h"
#include "util/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int track_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > 64 || !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", name[0]))
		return 0;
	for (const char *p = name; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
			return 0;
	if (strstr(name, "..") || name[len - 1] == '.' || (len >= 5 && !strcmp(name + len - 5, ".lock")))
		return 0;
	return 1;
}

const char *track_notify_kind(const char *t)
{
	const char *at;

	for (const char *p = t; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == ',' || *p == '<' || *p == '>')
			return NULL;
	if (!strncmp(t, "http://", 7) || !strncmp(t, "https://", 8))
		return strlen(t) > (t[4] == 's' ? 8u : 7u) ? "webhook" : NULL;
	at = strchr(t, '@');
	if (at && at != t && at[1] && !strchr(at + 1, '@') && strchr(at + 1, '.') && !strchr(t, '/'))
		return "mail";
	return NULL;
}

int track_status_measured(const char *status)
{
	return !strcmp(status, "first") || !strcmp(status, "no-change") || !strcmp(status, "regression") ||
	       !strcmp(status, "improvement");
}

KLAB_ENUM_IMPL(track_change, TRACK_CHANGE_LAST, "no-change", "regression", "improvement", "inconclusive")

int track_compare(struct track_cmp *out, const double *prev, size_t np, const double *cur, size_t nc,
		  int direction, double threshold_pct)
{
	struct verdict_policy p;
	struct verdict worse, better;

	memset(out, 0, sizeof(*out));
	if (!(threshold_pct >= 0) || threshold_pct > 1000)
		return error("threshold %g%% is out of range (0 to 1000)", threshold_pct);
	verdict_policy_init(&p);
	p.min_change_percent = threshold_pct;
	/* the same test twice: "is the new tip worse", then "is it better" */
	if (verdict_reproduce(&worse, &p, prev, np, cur, nc, direction) < 0 ||
	    verdict_reproduce(&better, &p, prev, np, cur, nc, -direction) < 0)
		return -1;
	out->median_prev = worse.median_good;
	out->median_cur = worse.median_bad;
	out->change_percent = worse.change_percent;
	if (worse.kind == VERDICT_REPRODUCED) {
		out->change = TRACK_REGRESSION;
		out->rule = worse.rule;
		snprintf(out->text, sizeof(out->text), "regression: %.6g -> %.6g (%+.2f%%), %.1f standard errors",
			 out->median_prev, out->median_cur, out->change_percent, worse.z_gap);
	} else if (better.kind == VERDICT_REPRODUCED) {
		out->change = TRACK_IMPROVEMENT;
		out->rule = "improvement";
		snprintf(out->text, sizeof(out->text), "improvement: %.6g -> %.6g (%+.2f%%), %.1f standard errors",
			 out->median_prev, out->median_cur, out->change_percent, better.z_gap);
	} else if (worse.kind == VERDICT_NEED_MORE || better.kind == VERDICT_NEED_MORE) {
		const struct verdict *v = worse.kind == VERDICT_NEED_MORE ? &worse : &better;
		out->change = TRACK_INCONCLUSIVE;
		out->rule = v->rule;
		out->next_runs = v->next_runs;
		snprintf(out->text, sizeof(out->text), "inconclusive: %.6g -> %.6g (%+.2f%%): %.160s", out->median_prev,
			 out->median_cur, out->change_percent, v->text);
	} else {
		out->change = TRACK_NO_CHANGE;
		out->rule = worse.rule;
		snprintf(out->text, sizeof(out->text), "no change: %.6g -> %.6g (%+.2f%%)%s", out->median_prev,
			 out->median_cur, out->change_percent,
			 fabs(out->change_percent) >= threshold_pct ? ", not significant" : ", within the threshold");
	}
	return 0;
}

const char *track_tip_status(const enum track_change *changes, size_t n, int have_base)
{
	int improved = 0;

	if (!have_base)
		return "first";
	for (size_t i = 0; i < n; i++) {
		if (changes[i] == TRACK_REGRESSION)
			return "regression";
		if (changes[i] == TRACK_IMPROVEMENT)
			improved = 1;
	}
	return improved ? "improvement" : "no-change";
}

int track_choose_base(const struct track_tip_ref *tips, size_t n, int (*is_ancestor)(const char *hash, void *data),
		      void *data, size_t *rewritten)
{
	*rewritten = 0;
	for (size_t i = 0; i < n; i++) {
		if (!track_status_measured(tips[i].status))
			continue;
		if (is_ancestor(tips[i].hash, data) == 1)
			return (int)i;
		(*rewritten)++;
	}
	return -1;
}
