/* Unit tests of the pure parts of notify: reports composed from a
 * bisection's facts (golden files in tests/data/notify, KLAB_REGENERATE=1
 * rewrites them), JSON escaping of hostile text, mail headers that no
 * commit subject can break out of, and the retry schedule. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/notify.h"
#include "engine/revert.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"
/* helpers.h also brings the topology helpers, unused here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "helpers.h"
#pragma GCC diagnostic pop

/* ---- facts ------------------------------------------------------------- */

static char goods[1][41] = { "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d" };
static const double good_vals[] = { 9300, 9150, 9480 };
static const double parent_vals[] = { 9260, 9390, 9010 };
static const double culprit_vals[] = { 265, 259, 270 };
static const double bad_vals[] = { 262, 271, 255 };
static const struct notify_counter counters[] = {
	{ "vmstat.thp_fault_alloc", 12.5, 2751 },
	{ "vmstat.pgfault", 40125, 1204 },
};

/* What both bisections' facts have: lab1, done, one good, a culprit. */
static void culprit_facts(struct notify_facts *f, int64_t id, enum bisection_kind kind, const char *message,
			  const char *repo_path, const char *bad, const char *culprit)
{
	memset(f, 0, sizeof(*f));
	f->host = "lab1.example.org";
	f->bisection_id = id;
	f->kind = kind;
	f->state = BISECTION_DONE;
	f->result = BISECTION_CULPRIT;
	f->message = message;
	f->repo_path = repo_path;
	f->bad = bad;
	f->goods = goods;
	f->nr_goods = 1;
	f->culprit = culprit;
}

static void job_facts(struct notify_facts *f)
{
	culprit_facts(f, 7, BISECTION_JOB, "culprit 3f2a1b4c5d6e confirmed: parent like good, culprit like bad", "/srv/linux",
		      "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", "3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c");
	f->steps = 9;
	f->culprit_subject = "mm: align larger anonymous mappings on THP boundaries";
	f->culprit_author = "Rik van Riel <riel@surriel.com>";
	f->job_path = "jobs/will-it-scale-malloc1.yaml";
	f->suite = "will-it-scale";
	f->testcase = "malloc1";
	f->kpi = "will-it-scale.per_process_ops";
	f->direction = 1;
	f->kpis[0] = (struct notify_kpi){ "good", "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d", good_vals, 3 };
	f->kpis[1] = (struct notify_kpi){ "parent", "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d", parent_vals, 3 };
	f->kpis[2] = (struct notify_kpi){ "culprit", "3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c", culprit_vals, 3 };
	f->kpis[3] = (struct notify_kpi){ "bad", "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432", bad_vals, 3 };
	f->nr_kpis = 4;
	f->counters = counters;
	f->nr_counters = ARRAY_SIZE(counters);
}

static char *hostile_argv[] = { "./test.sh", "it's", NULL };
static char *hostile_paths[] = { "mm/", NULL };
static const struct notify_step hostile_steps[] = {
	{ 1, "c94b5d6bf0fd00000000000000000000000000aa", "bisect", "good", "exit 0", "commit 6", BISECT_GOOD, 0 },
	{ 2, "8d091288de46415f24853ba84eb9a96db928efc5", "bisect", "bad", "exit 1",
	  "fix\rBcc: evil@x \"quote\\ \xc3\xafn\xff", BISECT_BAD, 1 },
};

static void command_facts(struct notify_facts *f)
{
	culprit_facts(f, 3, BISECTION_COMMAND, "first bad commit 8d091288de46", "/home/me/my repo",
		      "df1be64934b24359ecf7d5e2f1a3681501eeb86a", "8d091288de46415f24853ba84eb9a96db928efc5");
	f->steps = 2;
	f->culprit_subject = "fix\rBcc: evil@x \"quote\\ \xc3\xafn\xff";
	f->culprit_author = "Mallory\r\nTo: <m@x>";
	f->argv = hostile_argv;
	f->argc = 2;
	f->paths = hostile_paths;
	f->nr_paths = 1;
	f->step_list = hostile_steps;
	f->nr_step_list = ARRAY_SIZE(hostile_steps);
}

static void check_report(const struct notify_facts *f, const char *name, const char *subject)
{
	struct notify_message m;
	char *txt = xstrfmt("notify/%s.txt", name), *json = xstrfmt("notify/%s.json", name);

	notify_compose_bisection(f, &m);
	assert_string_equal(m.subject, subject);
	check_golden(txt, m.text);
	check_golden(json, m.json);
	notify_message_release(&m);
	free(txt);
	free(json);
}

/* f's message: its text holds text, its JSON json. */
static void check_message(const struct notify_facts *f, const char *text, const char *json)
{
	struct notify_message m;

	notify_compose_bisection(f, &m);
	assert_contains(m.text, text);
	assert_contains(m.json, json);
	notify_message_release(&m);
}

/* ---- reports ------------------------------------------------------------ */

static void test_notify__job_culprit_report_has_the_kpi_table(void **state)
{
	struct notify_facts f;

	(void)state;
	job_facts(&f);
	check_report(&f, "job-culprit", "[klab] 3f2a1b4c5d6e mm: align larger anonymous mappings on THP boundaries: "
					 "will-it-scale.per_process_ops -97.2% regression");
}

/* The revert check in the text (its line, the commit klab made) and in
 * the JSON (outcome, commit, runs against the references); a check that
 * did not apply names its conflicts and has no commit or numbers. */
static void test_notify__job_report_carries_the_revert_check(void **state)
{
	struct notify_facts f;
	struct revert_check rc = { 0 };
	struct notify_message m;

	(void)state;
	job_facts(&f);
	revert_restored(&rc, "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a291817", 9280, 1.2, 9300, 262,
			"like-good: -0.22% from good, +3442% from bad");
	f.revert = &rc;
	check_report(&f, "job-revert", "[klab] 3f2a1b4c5d6e mm: align larger anonymous mappings on THP boundaries: "
				       "will-it-scale.per_process_ops -97.2% regression");
	rc.outcome = REVERT_NO_APPLY;
	rc.commit[0] = '\0';
	rc.detail = "conflicts in 2 files: mm/mmap.c, mm/huge_memory.c";
	notify_compose_bisection(&f, &m);
	assert_non_null(strstr(m.text, "revert check: revert does not apply (conflicts in 2 files: mm/mmap.c, "
					"mm/huge_memory.c)\n"));
	assert_null(strstr(m.text, "klab's commit"));
	assert_non_null(strstr(m.json, "\"revert_check\": {\"outcome\": \"does-not-apply\", \"text\": \"revert "
					"does not apply\", \"commit\": null, \"runs\": 0, \"detail\": "));
	notify_message_release(&m);
}

/* Two change points (issue 17): the split and both halves' commits with
 * their shares, in the text and the JSON; a half without a culprit and a
 * share not known say so. */
static void test_notify__job_report_names_both_culprits_of_two_changes(void **state)
{
	struct notify_facts f;
	struct notify_message m;
	struct notify_half halves[2] = {
		{ 1, "3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c", "mm: align larger anonymous mappings on THP boundaries",
		  1, 45.4 },
		{ 2, "5e6f708192a3b4c3f2a1b4c5d6e7f8091a2b3c4d", "mm: clear huge pages one by one", 1, 54.6 },
	};

	static const double mid_vals[] = { 5600, 5480, 5710 };
	struct revert_check rv[2] = {
		{ REVERT_NO_RESTORE, "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a", 5, 1230, 2.1, 10400, 290,
		  "apart-from-good: apart from good" },
		{ REVERT_NO_RESTORE, "8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b8b", 5, 5600, 1.8, 10400, 290,
		  "apart-from-good: apart from good" },
	};

	(void)state;
	job_facts(&f);
	f.message = "two changes, split at 4a5b6c7d8e9f: half 1 culprit 3f2a1b4c5d6e (45% of the regression); "
		    "half 2 culprit 5e6f708192a3 (55% of the regression)";
	f.split = "4a5b6c7d8e9f00112233445566778899aabbccdd";
	halves[0].revert = &rv[0];
	halves[1].revert = &rv[1];
	f.halves = halves;
	f.nr_halves = 2;
	/* each half's parent and culprit between the ends, as notify.c
	 * loads them */
	f.kpis[5] = f.kpis[3];
	f.kpis[1].label = "parent 1";
	f.kpis[2].label = "culprit 1";
	f.kpis[2].vals = mid_vals;
	f.kpis[3] = (struct notify_kpi){ "parent 2", "4a5b6c7d8e9f00112233445566778899aabbccdd", mid_vals, 3 };
	f.kpis[4] = (struct notify_kpi){ "culprit 2", "5e6f708192a3b4c3f2a1b4c5d6e7f8091a2b3c4d", culprit_vals, 3 };
	f.nr_kpis = 6;
	/* the whole regression heads the subject, not one half's step */
	check_report(&f, "job-two-changes", "[klab] 3f2a1b4c5d6e mm: align larger anonymous mappings on THP boundaries: "
					    "will-it-scale.per_process_ops -97.2% regression");
	notify_compose_bisection(&f, &m);
	assert_contains_all(m.text,
			    "split:      4a5b6c7d8e9f00112233445566778899aabbccdd (two changes",
			    "half 1:     culprit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c (45% of the "
			    "regression)\n",
			    "half 2:     culprit 5e6f708192a3b4c3f2a1b4c5d6e7f8091a2b3c4d (55% of the "
			    "regression)\n            mm: clear huge pages one by one\n");
	assert_non_null(strstr(m.json, "\"halves\": [{\"half\": 1, \"hash\": \"3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c\""));
	assert_contains_all(m.json,
			    "\"confirmed\": true, \"share_percent\": 54.6, \"parent\": {\"hash\": "
			    "\"4a5b6c7d8e9f00112233445566778899aabbccdd\"",
			    "\"revert_check\": {\"outcome\": \"does-not-restore\"");
	/* each half's culprit row, and its revert alone: does not restore */
	assert_contains_all(m.text, "  culprit 2 5e6f708192a3",
			    "            revert check: revert does not restore (5600 ±2% vs good 10400, bad "
			    "290; 5 runs; it recovers 53% of the gap) (this culprit alone)\n");
	notify_message_release(&m);

	halves[1].culprit = NULL;
	halves[1].subject = NULL;
	halves[1].confirmed = 0;
	halves[1].share = NAN;
	halves[1].revert = NULL;
	check_message(&f, "half 2:     no culprit (only skipped commits left)\n",
		      "{\"half\": 2, \"hash\": null, \"subject\": \"\", \"confirmed\": false, \"share_percent\": null}");
}

/* Drift seen by the bisection (issue 17): said in the text and the JSON. */
static void test_notify__job_report_says_the_host_drifted(void **state)
{
	struct notify_facts f;

	(void)state;
	job_facts(&f);
	f.drift = 1;
	f.drift_percent = -0.75;
	check_message(&f, "\ndrift: the host trended by -0.75% per run while measuring",
		      "\"drift\": true, \"drift_percent_per_run\": -0.75");
}

static void test_notify__job_without_confirmation_names_the_bad_end(void **state)
{
	struct notify_facts f;

	(void)state;
	job_facts(&f);
	f.kpis[1] = f.kpis[3];	/* good and bad only */
	f.nr_kpis = 2;
	f.nr_counters = 0;
	f.direction = -1;	/* lower is better: a drop is an improvement */
	{
		struct notify_message m;
		notify_compose_bisection(&f, &m);
		assert_string_equal(m.subject, "[klab] 3f2a1b4c5d6e mm: align larger anonymous mappings on THP "
					       "boundaries: will-it-scale.per_process_ops -97.2% improvement");
		assert_non_null(strstr(m.json, "\"parent\": null"));
		notify_message_release(&m);
	}
}

static void test_notify__command_culprit_report_with_hostile_subject(void **state)
{
	struct notify_facts f;

	(void)state;
	command_facts(&f);
	check_report(&f, "command-culprit",
		     "[klab] 8d091288de46 fix Bcc: evil@x \"quote\\ \xc3\xafn\xef\xbf\xbd: test.sh fails (exit 1)");
}

static void test_notify__not_reproduced_report(void **state)
{
	struct notify_facts f;

	(void)state;
	job_facts(&f);
	f.result = BISECTION_NOT_REPRODUCED;
	f.message = "regression not reproduced: bad is within the noise of good";
	f.culprit = f.culprit_subject = f.culprit_author = NULL;
	f.kpis[1] = f.kpis[0];
	f.kpis[1].label = "bad";	/* as measured: bad like good */
	memcpy(f.kpis[1].hash, f.bad, 41);
	f.nr_kpis = 2;
	f.nr_counters = 0;
	f.steps = 2;
	check_report(&f, "not-reproduced", "[klab] bisection 7: will-it-scale.per_process_ops regression not reproduced");
}

/* A failed confirmation: the commit the bisection ended on is a suspect
 * with its evidence, never the culprit (issue 17). */
static void test_notify__unconfirmed_report_names_a_suspect_not_a_culprit(void **state)
{
	struct notify_facts f;
	struct notify_message m;

	(void)state;
	job_facts(&f);
	f.result = BISECTION_UNCONFIRMED;
	f.message = "culprit 3f2a1b4c5d6e NOT confirmed: parent 9000, culprit 8100 (-10.00%, 9.1 standard errors, "
		    "4.60 needed); 10% of the ends' gap (good 9300, bad 265), 50% needed";
	f.suspect = f.culprit;
	f.suspect_subject = f.culprit_subject;
	f.culprit = f.culprit_subject = f.culprit_author = NULL;
	f.kpis[2].label = "suspect";
	check_report(&f, "unconfirmed", "[klab] bisection 7: will-it-scale.per_process_ops culprit NOT confirmed "
					"(suspect 3f2a1b4c5d6e)");
	notify_compose_bisection(&f, &m);
	assert_null(strstr(m.text, "culprit:"));
	assert_non_null(strstr(m.text, "suspect:    3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c (NOT confirmed"));
	assert_non_null(strstr(m.text, "10% of the ends' gap"));
	assert_contains_all(m.json,
			    "\"outcome\": \"unconfirmed\"",
			    "\"culprit\": null",
			    "\"confirmed\": false");
	notify_message_release(&m);
}

static void test_notify__failed_and_skipped_subjects(void **state)
{
	struct notify_facts f;
	struct notify_message m;
	static char cands[2][41] = { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" };

	(void)state;
	command_facts(&f);
	f.state = BISECTION_FAILED;
	f.result = BISECTION_ERROR;
	f.culprit = NULL;
	f.message = "cannot load the commit range\nX-Injected: 1";
	notify_compose_bisection(&f, &m);
	assert_string_equal(m.subject, "[klab] bisection 3 failed: cannot load the commit range X-Injected: 1");
	assert_non_null(strstr(m.json, "\"outcome\": \"failed\""));
	assert_non_null(strstr(m.json, "\"culprit\": null"));
	notify_message_release(&m);

	f.state = BISECTION_DONE;
	f.result = BISECTION_SKIPPED_ONLY;
	f.candidates = cands;
	f.nr_candidates = 2;
	f.message = "only skipped commits left: 2 possible first bad commits";
	notify_compose_bisection(&f, &m);
	assert_string_equal(m.subject, "[klab] bisection 3: only skipped commits left, 2 possible first bad commits");
	assert_non_null(strstr(m.text, "could be any of:\n  aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
				       "  bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n"));
	assert_non_null(strstr(m.json, "\"candidates\": [\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", "));
	notify_message_release(&m);
}

/* ---- JSON ----------------------------------------------------------------- */

static void test_notify__json_escapes_hostile_strings(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "he said \"hi\"\\", "\"he said \\\"hi\\\"\\\\\"" },
		{ "\x01\x1f\x7f\t\n\r\b\f", "\"\\u0001\\u001f\\u007f\\t\\n\\r\\b\\f\"" },
		{ "na\xc3\xafve \xe2\x98\x83 \xf0\x9f\x98\x80", "\"na\xc3\xafve \xe2\x98\x83 \xf0\x9f\x98\x80\"" },
		{ "\xc0\x80", "\"\\ufffd\\ufffd\"" },			/* overlong NUL */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },	/* surrogate */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },	/* above U+10FFFF */
		{ "ab\xe2\x98", "\"ab\\ufffd\\ufffd\"" },		/* truncated */
		{ "\x80x\xff", "\"\\ufffdx\\ufffd\"" },			/* stray bytes */
		{ "a\xe2\x80\xa8" "b\xe2\x80\xa9", "\"a\\u2028b\\u2029\"" },	/* JavaScript line ends */
		{ "</script>", "\"</script>\"" },
		{ "", "\"\"" },
	};
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		strbuf_reset(&sb);
		json_add_string(&sb, cases[i].in);
		assert_string_equal(sb.buf, cases[i].out);
	}
	strbuf_reset(&sb);
	json_add_string(&sb, NULL);
	json_add_number(&sb, NAN);
	json_add_number(&sb, INFINITY);
	strbuf_addch(&sb, ' ');
	json_add_number(&sb, 9300);
	strbuf_addch(&sb, ' ');
	json_add_number(&sb, -2.5);
	strbuf_addch(&sb, ' ');
	json_add_number(&sb, 1e300);
	assert_string_equal(sb.buf, "nullnullnull 9300 -2.5 1e+300");
	strbuf_release(&sb);
}

/* ---- mail --------------------------------------------------------------- */

/* Lines end in CRLF only: no bare CR or LF. */
static void assert_crlf(const char *h)
{
	for (const char *p = h; *p; p++) {
		if (*p == '\r')
			assert_true(p[1] == '\n');
		if (*p == '\n')
			assert_true(p > h && p[-1] == '\r');
	}
}

static void assert_one_header_line(const char *h)
{
	/* every CRLF but the last is followed by folding white space */
	for (const char *p = strstr(h, "\r\n"); p; p = strstr(p + 2, "\r\n"))
		if (p[2])
			assert_true(p[2] == ' ');
	assert_crlf(h);
}

static void test_notify__header_injection_stripped(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	notify_mail_header(&sb, "Subject", "fix\r\nBcc: evil@x\rTo: x@y\n\x01" "end");
	assert_string_equal(sb.buf, "Subject: fix Bcc: evil@x To: x@y end\r\n");
	assert_one_header_line(sb.buf);

	strbuf_reset(&sb);
	notify_mail_header(&sb, "Subject", "na\xc3\xafve");
	assert_string_equal(sb.buf, "Subject: =?UTF-8?B?bmHDr3Zl?=\r\n");

	/* text that looks like an encoded word is encoded itself */
	strbuf_reset(&sb);
	notify_mail_header(&sb, "Subject", "[klab] bisection 3 failed: =?x?= trick");
	assert_string_equal(sb.buf, "Subject: =?UTF-8?B?W2tsYWJdIGJpc2VjdGlvbiAzIGZhaWxlZDogPT94Pz0gdHJpY2s=?=\r\n");

	/* invalid UTF-8 with newlines: one header, encoded, U+FFFD for the bytes */
	strbuf_reset(&sb);
	notify_mail_header(&sb, "Subject", "\xff\r\nBcc: evil@x");
	assert_string_equal(sb.buf, "Subject: =?UTF-8?B?77+9ICBCY2M6IGV2aWxAeA==?=\r\n");
	strbuf_release(&sb);
}

static void test_notify__long_headers_are_folded(void **state)
{
	struct strbuf sb = STRBUF_INIT, in = STRBUF_INIT, unfolded = STRBUF_INIT;

	(void)state;
	for (int i = 0; i < 40; i++)
		strbuf_addf(&in, "%sword%d", i ? " " : "", i);
	notify_mail_header(&sb, "Subject", in.buf);
	assert_one_header_line(sb.buf);
	for (const char *p = sb.buf; *p;) {
		const char *eol = strstr(p, "\r\n");
		assert_true(eol - p <= 78);
		strbuf_add(&unfolded, p, (size_t)(eol - p));
		p = eol + 2;
	}
	assert_string_equal(unfolded.buf + strlen("Subject: "), in.buf);

	/* non-ASCII: encoded words of whole characters, each line short */
	strbuf_reset(&sb);
	strbuf_reset(&in);
	for (int i = 0; i < 40; i++)
		strbuf_addstr(&in, "\xe2\x98\x83\xc3\xaf");
	notify_mail_header(&sb, "Subject", in.buf);
	assert_one_header_line(sb.buf);
	for (const char *p = sb.buf; *p;) {
		const char *eol = strstr(p, "\r\n");
		assert_true(eol - p <= 78);
		p = eol + 2;
	}
	strbuf_release(&sb);
	strbuf_release(&in);
	strbuf_release(&unfolded);
}

static void test_notify__mail_format_golden(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	/* 2026-11-30 11:50:48 UTC; a stray CR, a leading dot (libcurl
	 * dot-stuffs on upload), no final newline */
	notify_mail_format(&sb, "klab@example.org", "dev@example.org, list@example.org",
			   "[klab] 8d091288de46 na\xc3\xafve fix: test.sh fails (exit 1)",
			   "first line\nstray\rCR\n.leading dot\n\nlast", 1796039448, "klab.1.1796039448@lab1");
	check_golden("notify/mail.eml", sb.buf);
	assert_crlf(sb.buf);
	strbuf_reset(&sb);
	notify_mail_format(&sb, "a@b", "c@d", "s", "t\n", 0, "m@h");
	assert_non_null(strstr(sb.buf, "Date: Thu, 1 Jan 1970 00:00:00 +0000\r\n"));
	strbuf_release(&sb);
}

static void test_notify__test_message(void **state)
{
	struct notify_message m;

	(void)state;
	notify_compose_test("lab1", "/var/lib/klab \"x\"", 1796039448, &m);
	assert_string_equal(m.subject, "[klab] test message from lab1");
	assert_non_null(strstr(m.json, "\"event\": \"test\""));
	assert_non_null(strstr(m.json, "\"lab\": \"/var/lib/klab \\\"x\\\"\""));
	notify_message_release(&m);
}

static void test_notify__webhook_named_without_its_token(void **state)
{
	static const struct {
		const char *kind, *target, *shown;
	} cases[] = {
		{ "webhook", "https://hooks.example.org/services/T0/B1/s3cret", "https://hooks.example.org/..." },
		{ "webhook", "http://user:pw@127.0.0.1:8080?token=x", "http://127.0.0.1:8080/..." },
		{ "webhook", "https://ci.example.org", "https://ci.example.org" },
		{ "mail", "a@x, b@y", "a@x, b@y" },
		{ "mail", "a@x\r\nBcc: e@x", "a@x  Bcc: e@x" },
	};
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		strbuf_reset(&sb);
		notify_describe_target(&sb, cases[i].kind, cases[i].target);
		assert_string_equal(sb.buf, cases[i].shown);
	}
	strbuf_release(&sb);
}

/* ---- retries ------------------------------------------------------------ */

static void test_notify__backoff_schedule(void **state)
{
	static const int64_t want[] = { 60, 300, 1800, 7200, 21600, 43200, 86400 };

	(void)state;
	assert_int_equal(NOTIFY_MAX_ATTEMPTS, 8);
	for (int i = 1; i < NOTIFY_MAX_ATTEMPTS; i++)
		assert_int_equal(notify_backoff(i), want[i - 1]);
	assert_int_equal(notify_backoff(NOTIFY_MAX_ATTEMPTS), -1);
	assert_int_equal(notify_backoff(NOTIFY_MAX_ATTEMPTS + 5), -1);
	assert_int_equal(notify_backoff(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify__job_culprit_report_has_the_kpi_table),
		cmocka_unit_test(test_notify__job_report_carries_the_revert_check),
		cmocka_unit_test(test_notify__job_report_says_the_host_drifted),
		cmocka_unit_test(test_notify__job_without_confirmation_names_the_bad_end),
		cmocka_unit_test(test_notify__command_culprit_report_with_hostile_subject),
		cmocka_unit_test(test_notify__not_reproduced_report),
		cmocka_unit_test(test_notify__unconfirmed_report_names_a_suspect_not_a_culprit),
		cmocka_unit_test(test_notify__failed_and_skipped_subjects),
		cmocka_unit_test(test_notify__json_escapes_hostile_strings),
		cmocka_unit_test(test_notify__header_injection_stripped),
		cmocka_unit_test(test_notify__long_headers_are_folded),
		cmocka_unit_test(test_notify__mail_format_golden),
		cmocka_unit_test(test_notify__job_report_names_both_culprits_of_two_changes),
		cmocka_unit_test(test_notify__test_message),
		cmocka_unit_test(test_notify__webhook_named_without_its_token),
		cmocka_unit_test(test_notify__backoff_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
