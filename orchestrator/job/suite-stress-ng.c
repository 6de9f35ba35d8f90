/* stress-ng: one stressor (the testcase) run by the Debian stress-ng
 * binary with --metrics; klab's metrics are its metrics table and its
 * "miscellaneous metrics" lines, under stress-ng.<stressor>. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

#define PROGRAM "/usr/bin/stress-ng"

/* options klab sets itself */
static const char *const reserved[] = { "timeout", "metrics", "metrics-brief", "yaml", "log-file" };

static const struct suite_kpi kpis[] = {
	{ "stress-ng.%s.ops_per_sec", 1 },
	{ "stress-ng.%s.ops_per_sec_usr_sys", 1 },
	{ NULL, 0 },
};

/* the metrics table's columns and the stressor's own miscellaneous
 * metrics, whose names only its output tells */
static const struct suite_metric metrics[] = {
	{ "stress-ng.%s.*", 0 },
	{ NULL, 0 },
};

/* a-z, 0-9 and '-', not starting with '-' (it becomes an option) */
static int stressor_name_ok(const char *s)
{
	return *s && *s != '-' && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(s);
}

static int check_testcase(const struct job *job, const char *path, int line)
{
	if (!stressor_name_ok(job->testcase))
		return error("%s:%d: testcase: expected a stress-ng stressor name (a-z, 0-9, '-') like mmapaddr, got '%s'",
			     path, line, job->testcase);
	return 0;
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	if (suite_listed(kv->key, reserved, ARRAY_SIZE(reserved)) || !strcmp(kv->key, job->testcase))
		return error("%s:%d: params: '%s' is an option klab sets itself", path, line, kv->key);
	return 0;
}

static char *default_kpi(const struct job *job)
{
	return xstrfmt("stress-ng.%s.ops_per_sec", job->testcase);
}

static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	if (!stressor_name_ok(job->testcase))
		return error("job '%s': '%s' is not a stress-ng stressor name", job->path, job->testcase);
	if (job_conf_line(sb, "argv", PROGRAM) < 0 ||
	    job_conf_argvf(sb, "--%s", job->testcase) < 0 ||
	    job_conf_argvf(sb, "%u", job_count_resolve(&job->nr_task, vcpus)) < 0 ||
	    job_conf_line(sb, "argv", "--timeout") < 0 || job_conf_argvf(sb, "%us", job->runtime_s) < 0 ||
	    job_conf_line(sb, "argv", "--metrics") < 0)
		return -1;
	for (size_t i = 0; i < job->nr_params; i++) {
		const struct job_kv *kv = &job->params[i];
		if (job_conf_argvf(sb, "--%s", kv->key) < 0 || (kv->value && job_conf_line(sb, "argv", kv->value) < 0))
			return -1;
	}
	return 0;
}

/*
 * stress-ng 0.15.06 with --metrics (or --metrics-brief, without the last
 * two columns):
 *
 *   stress-ng: metrc: [12997] stressor       bogo ops real time  usr time ...
 *   stress-ng: metrc: [12997] vm-splice        654903      3.00      1.65 ...
 *   stress-ng: metrc: [12997] miscellaneous metrics:
 *   stress-ng: metrc: [12997] vm-splice  7671.95 MB per sec vm-splice rate (geometic mean of 2 instances)
 *
 * Numbers may also be printed as 1.000e+00 (--sn).
 */
static const char *const sng_columns[] = {
	"ops", "real_time", "usr_time", "sys_time", "ops_per_sec", "ops_per_sec_usr_sys",
	"cpu_used_per_instance", "RSS_Max",
};

static void stress_ng_row(struct result_metrics *ml, const char *p)
{
	char *copy, *tok[RESULT_MAX_TOKENS];
	double v[ARRAY_SIZE(sng_columns)];
	size_t n = result_tokenize(p, &copy, tok);

	if ((n != 7 && n != 9) || !result_name_valid(tok[0]))
		goto cleanup;
	for (size_t i = 1; i < n; i++)
		if (result_parse_number(tok[i], &v[i - 1]) < 0)
			goto cleanup;
	for (size_t i = 0; i < n - 1; i++)
		result_add_metric(ml, xstrfmt("stress-ng.%s.%s", tok[0], sng_columns[i]), 0, v[i]);
cleanup:
	free(copy);
}

/* The description as a name part: the trailing "(geometic mean of N
 * instances)" dropped, anything but [A-Za-z0-9+-] turned into one '_'
 * ("nanosecs per context switch (pipe method)" →
 * "nanosecs_per_context_switch_pipe_method"). */
static char *stress_ng_desc(const char *d)
{
	size_t len = strlen(d), j = 0;
	char *out;

	while (len && result_is_blank(d[len - 1]))
		len--;
	if (len && d[len - 1] == ')') {
		const char *open = NULL;

		for (size_t i = len - 1; i-- > 0;) {
			if (d[i] == '(') {
				open = d + i;
				break;
			}
		}
		if (open) {
			char *group = xstrndup(open, (size_t)(d + len - open));
			if (strstr(group, " mean of ") && strstr(group, " instance"))
				len = (size_t)(open - d);
			free(group);
		}
	}
	out = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)d[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || result_is_digit(c) || c == '+' || c == '-')
			out[j++] = (char)c;
		else if (j && out[j - 1] != '_')
			out[j++] = '_';
	}
	while (j && out[j - 1] == '_')
		j--;
	out[j] = '\0';
	return out;
}

/* LKP-style names: the stressor's own name repeated at the start of the
 * description, or as "<stressor> rate" at its end, is noise under
 * stress-ng.<stressor>. ("MB_per_sec_vm-splice_rate" → "MB_per_sec",
 * "vm-splice_calls_per_sec" → "calls_per_sec"; "context_switch" stays). */
static void drop_stressor_words(char *desc, const char *stressor)
{
	size_t sl = strlen(stressor), dl = strlen(desc);
	char *tail = xstrfmt("_%s_rate", stressor);
	size_t tl = strlen(tail);

	if (dl > tl && !strcmp(desc + dl - tl, tail)) {
		desc[dl - tl] = '\0';
		dl -= tl;
	}
	if (dl > sl + 1 && !strncmp(desc, stressor, sl) && desc[sl] == '_')
		memmove(desc, desc + sl + 1, dl - sl);
	free(tail);
}

static void stress_ng_misc(struct result_metrics *ml, const char *p)
{
	const char *name = p, *value, *desc;
	char *sname, *svalue, *sdesc;
	double v;

	while (*p && !result_is_blank(*p))
		p++;
	sname = xstrndup(name, (size_t)(p - name));
	value = p = result_skip_blanks(p);
	while (*p && !result_is_blank(*p))
		p++;
	svalue = xstrndup(value, (size_t)(p - value));
	desc = result_skip_blanks(p);
	sdesc = stress_ng_desc(desc);
	drop_stressor_words(sdesc, sname);
	if (result_name_valid(sname) && !result_parse_number(svalue, &v) && *sdesc)
		result_add_metric(ml, xstrfmt("stress-ng.%s.%s", sname, sdesc), 0, v);
	free(sname);
	free(svalue);
	free(sdesc);
}

static void parse_stress_ng(struct result_metrics *ml, char *const *lines, size_t nr)
{
	static const char prefix[] = "stress-ng: metrc:";
	int misc = 0;

	for (size_t i = 0; i < nr; i++) {
		const char *p = lines[i];

		if (!p || strncmp(p, prefix, sizeof(prefix) - 1))
			continue;
		p = result_skip_blanks(p + sizeof(prefix) - 1);
		/* [pid] */
		if (*p++ != '[' || !result_is_digit(*p))
			continue;
		while (result_is_digit(*p))
			p++;
		if (*p++ != ']' || !result_is_blank(*p))
			continue;
		p = result_skip_blanks(p);
		if (!strncmp(p, "stressor", 8) && result_is_blank(p[8])) {
			misc = 0;	/* a new table */
		} else if (!strncmp(p, "miscellaneous metrics:", 22) && !*result_skip_blanks(p + 22)) {
			misc = 1;
		} else if (misc) {
			stress_ng_misc(ml, p);
		} else {
			stress_ng_row(ml, p);
		}
	}
}


const struct suite suite_stress_ng = {
	.name = "stress-ng",
	.kpis = kpis,
	.metrics = metrics,
	.program = { "stress-ng", PROGRAM, "stress-ng" },
	.check_testcase = check_testcase,
	.check_param = check_param,
	.default_kpi = default_kpi,
	.agent_argv = agent_argv,
	.parse = parse_stress_ng,
};
