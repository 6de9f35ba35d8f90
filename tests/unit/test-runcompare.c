/* Unit tests of klab compare's and klab reproduce's pure and database
 * parts: --set variants of a job, stored run sets compared on a real lab
 * database, the JSON and text of hostile names, reproduce's verdict line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab/db.h"
#include "job/job.h"
#include "engine/runcompare.h"
#include "core/verdict.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "helpers.h"

static const char job_text[] =
	"suite: will-it-scale\n"
	"testcase: malloc1\n"
	"mode: process\n"
	"runtime: 10s\n"
	"thp:\n"
	"  enabled: always\n"
	"guest: { vcpus: 2, numa_nodes: 2, memory: 1G }\n"
	"repeat: 3\n";

static struct job_set set_of(const char *arg)
{
	struct job_set s;

	assert_int_equal(job_set_parse(&s, arg), 0);
	return s;
}

static void test_set__replaces_adds_and_changes_the_hash(void **state)
{
	struct job plain, j;
	struct job_set sets[4];

	(void)state;
	sets[0] = set_of("thp.enabled=never");
	sets[1] = set_of("runtime=3s");
	sets[2] = set_of("sysctl.vm.swappiness=10");
	sets[3] = set_of("guest.vcpus=4");
	assert_int_equal(job_parse_buffer(&plain, "m.yaml", job_text, strlen(job_text)), 0);
	assert_int_equal(job_parse_buffer_sets(&j, "m.yaml", job_text, strlen(job_text), sets, 4, "--set x"), 0);
	/* replaced where the file has it, added where it has not */
	assert_string_equal(sysctl_of(&j, "kernel/mm/transparent_hugepage/enabled"), "never");
	assert_string_equal(sysctl_of(&plain, "kernel/mm/transparent_hugepage/enabled"), "always");
	assert_string_equal(sysctl_of(&j, "vm.swappiness"), "10");
	assert_int_equal(j.runtime_s, 3);
	assert_int_equal(j.guest.vcpus, 4);
	assert_int_equal(j.guest.numa_nodes, 2);	/* the rest of the flow map kept */
	assert_int_equal(j.guest.memory_mb, 1024);
	assert_string_equal(j.path, "m.yaml");
	/* a variant's runs never pool with the file's */
	assert_string_not_equal(j.hash, plain.hash);
	job_release(&j);
	/* ... and the same variant is the same job */
	assert_int_equal(job_parse_buffer_sets(&j, "m.yaml", job_text, strlen(job_text), sets, 4, "--set x"), 0);
	{
		struct job again;
		assert_int_equal(job_parse_buffer_sets(&again, "m.yaml", job_text, strlen(job_text), sets, 4, "--set x"), 0);
		assert_string_equal(j.hash, again.hash);
		job_release(&again);
	}
	job_release(&j);
	job_release(&plain);
	for (int i = 0; i < 4; i++) {
		free(sets[i].key);
		free(sets[i].value);
	}
}

/* The message a refused setting leaves, without the file's place. */
static const char *refused(const char *arg)
{
	struct job_set s = set_of(arg);
	struct job j;
	int held = error_hold(1), rc;

	rc = job_parse_buffer_sets(&j, "m.yaml", job_text, strlen(job_text), &s, 1, "--set x");
	error_hold(held);
	assert_int_equal(rc, -1);
	free(s.key);
	free(s.value);
	return error_last();
}

static void test_set__unknown_keys_and_bad_values_name_the_set(void **state)
{
	const char *msg;

	(void)state;
	msg = refused("nosuch=1");
	assert_non_null(strstr(msg, "--set nosuch=1: unknown key 'nosuch' (known keys: suite,"));
	msg = refused("thp.enabled=sometimes");
	assert_string_equal(msg, "--set thp.enabled=sometimes: thp.enabled: expected one of always, madvise or never, "
				 "got 'sometimes'");
	msg = refused("thp.foo=1");
	assert_non_null(strstr(msg, "--set thp.foo=1: thp: unknown key 'foo'"));
	msg = refused("guest.vcpus=0");
	assert_non_null(strstr(msg, "--set guest.vcpus=0: guest.vcpus: expected"));
	/* a scalar key given a sub-key: the key's own message */
	msg = refused("runtime.x=1");
	assert_non_null(strstr(msg, "runtime: expected a duration"));
	assert_null(strstr(msg, "m.yaml:"));
}

static void test_set__malformed_arguments_are_refused(void **state)
{
	static const char *const bad[] = { "", "=1", "runtime", ".x=1", "thp.=1", "a b=1", "x;y=1" };
	struct job_set s;
	int held = error_hold(1);

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(job_set_parse(&s, bad[i]), -1);
	assert_int_equal(job_set_parse(&s, "params.vm-bytes=a\033[31m"), -1);
	assert_non_null(strstr(error_last(), "one line"));
	error_hold(held);
	/* an empty value is a bare option */
	assert_int_equal(job_set_parse(&s, "params.vm-keep="), 0);
	assert_string_equal(s.key, "params.vm-keep");
	assert_string_equal(s.value, "");
	free(s.key);
	free(s.value);
}

/* ---- stored run sets on a real lab database ------------------------------ */

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	make_test_dir(tmpdir, sizeof(tmpdir), "runcompare");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_test_dir(tmpdir);
	return 0;
}

/* A run set of three ok runs (and one failed run that must not count):
 * the KPI, a per-second series, and two vmstat counters. */
static int64_t add_run_set(sqlite3 *db, const char *accel, const char *commit, double kpi, double thp)
{
	struct db_run_set rs = { "jobs/m.yaml", "h", "will-it-scale", "malloc1", "will-it-scale.per_process_ops",
				 "/bzImage", 0, commit, "qemu:///system", NULL, accel, 3, 0 };
	int64_t id, boot_id, run_id;

	assert_int_equal(db_run_set_create(db, &rs, &id), 0);
	for (int i = 0; i < 4; i++) {
		struct db_boot boot = { .run_set_id = id, .domain_name = "klab-1-1", .accel = accel };
		const struct db_sample samples[] = {
			{ "will-it-scale.per_process_ops", 0, kpi + 10 * i },
			{ "will-it-scale.ops_per_sec", 1, 2 * kpi },
			{ "will-it-scale.ops_per_sec", 2, 4 * kpi },	/* a series: its mean per run */
		};
		const struct db_mon mons[] = {
			{ "vmstat", "thp_fault_alloc", "delta", thp + i },
			{ "vmstat", "pgfault", "delta", 1000.0 + 300 * i },	/* noise */
		};
		struct db_run r = { .boot_id = 0, .job_path = "j", .job_hash = "h", .iteration = (unsigned)i + 1,
				    .status = i == 3 ? "failed" : "ok", .exit_code = 0, .samples = samples,
				    .nr_samples = ARRAY_SIZE(samples), .mons = mons, .nr_mons = ARRAY_SIZE(mons) };

		assert_int_equal(db_boot_begin(db, &boot, &boot_id), 0);
		r.boot_id = boot_id;
		assert_int_equal(db_run_store(db, &r, &run_id), 0);
	}
	assert_int_equal(db_run_set_finish(db, id, "done"), 0);
	return id;
}

static const struct compare_row *row_named(const struct runcmp_pair *p, const char *name)
{
	for (size_t i = 0; i < p->nr_rows; i++)
		if (!strcmp(p->rows[i].name, name))
			return &p->rows[i];
	return NULL;
}

static void test_runsets__stored_sets_compare_with_the_kpi_first(void **state)
{
	char *path = xstrfmt("%s/lab.db", tmpdir);
	const char *const labels[] = { "demo-good", NULL };
	struct strbuf sb = STRBUF_INIT, js = STRBUF_INIT;
	struct runcmp c;
	sqlite3 *db;
	int64_t ids[2];

	(void)state;
	assert_int_equal(db_open(&db, path, 1), 0);
	ids[0] = add_run_set(db, "tcg", "1111111111111111111111111111111111111111", 120000, 2);
	ids[1] = add_run_set(db, "tcg", "2222222222222222222222222222222222222222", 6000, 1180);
	assert_int_equal(runcmp_load(&c, db, ids, labels, 2, NULL), 0);
	assert_string_equal(c.kpi, "will-it-scale.per_process_ops");
	assert_int_equal(c.direction, 1);
	assert_int_equal(c.sets[0].nr_kpi, 3);	/* the failed run is not a sample */
	assert_string_equal(c.sets[1].label, "run set 2");
	runcmp_compute(&c);
	assert_true(c.pairs[0].kpi_changed);
	assert_true(c.pairs[0].kpi.change < -94 && c.pairs[0].kpi.change > -96);
	assert_non_null(row_named(&c.pairs[0], "vmstat.thp_fault_alloc"));
	assert_null(row_named(&c.pairs[0], "vmstat.pgfault"));	/* ranges overlap */
	{
		const struct compare_row *series = row_named(&c.pairs[0], "will-it-scale.ops_per_sec");
		assert_non_null(series);
		assert_true(fabs(series->mean_a - 3 * 120000) < 1e-6);
	}
	assert_int_equal(c.pairs[0].nr_stats, 4);

	runcmp_format(&sb, &c, 0);
	assert_contains_all(sb.buf,
			    "KPI will-it-scale.per_process_ops (higher is better), accelerator tcg:",
			    "  A  run set 1: demo-good (111111111111), will-it-scale malloc1, 3 runs",
			    "B against A: will-it-scale.per_process_ops 120010",
			    "what changed:\n  vmstat     vmstat.thp_fault_alloc 3 -> 1181");
	/* LKP's table: the KPI is its first row */
	{
		const char *head = strstr(sb.buf, "%stddev  %change");
		assert_non_null(head);
		assert_true(strstr(head, "will-it-scale.per_process_ops") < strstr(head, "vmstat.thp_fault_alloc"));
	}
	runcmp_json(&js, &c);
	assert_contains_all(js.buf,
			    "\"kpi\":\"will-it-scale.per_process_ops\"",
			    "\"label\":\"demo-good\",\"run_set\":1,",
			    "\"kpi_changed\":true,\"kpi\":{\"name\":\"will-it-scale.per_process_ops\"",
			    "\"kpi_values\":[120000,120010,120020]");
	strbuf_release(&sb);
	strbuf_release(&js);
	runcmp_release(&c);
	db_close(db);
	free(path);
}

static void test_runsets__other_accelerators_and_missing_sets_are_refused(void **state)
{
	char *path = xstrfmt("%s/lab2.db", tmpdir);
	struct runcmp c;
	sqlite3 *db;
	int64_t ids[2];
	int held;

	(void)state;
	assert_int_equal(db_open(&db, path, 1), 0);
	ids[0] = add_run_set(db, "tcg", NULL, 100, 1);
	ids[1] = add_run_set(db, "kvm", NULL, 100, 1);
	held = error_hold(1);
	assert_int_equal(runcmp_load(&c, db, ids, NULL, 2, NULL), -1);
	assert_non_null(strstr(error_last(), "different accelerators are never compared"));
	ids[1] = 99;
	assert_int_equal(runcmp_load(&c, db, ids, NULL, 2, NULL), -1);
	assert_non_null(strstr(error_last(), "no run set 99"));
	ids[1] = ids[0];
	assert_int_equal(runcmp_load(&c, db, ids, NULL, 2, "will-it-scale.nosuch"), -1);
	assert_non_null(strstr(error_last(), "has no ok run with the KPI will-it-scale.nosuch"));
	error_hold(held);
	db_close(db);
	free(path);
}

/* ---- hostile names and values ------------------------------------------------ */

/* A hand-made set's KPI values, v[0..n). */
static void set_kpi(struct runcmp_set *s, const double *v, size_t n)
{
	s->kpi = xmalloc(n * sizeof(*v));
	memcpy(s->kpi, v, n * sizeof(*v));
	s->nr_kpi = n;
}

/* A hand-made set's values of the counter name, v[0..n). */
static void add_vals(struct runcmp_set *s, const char *name, const double *v, size_t n)
{
	s->vals = xrealloc(s->vals, (s->nr_vals + 1) * sizeof(*s->vals));
	s->vals[s->nr_vals].name = xstrdup(name);
	s->vals[s->nr_vals].v = xmalloc(n * sizeof(*v));
	memcpy(s->vals[s->nr_vals].v, v, n * sizeof(*v));
	s->vals[s->nr_vals++].n = n;
}

static void test_json__hostile_names_and_values_are_escaped(void **state)
{
	static const char evil[] = "vmstat.x\"}],\\\033[31m\n\xe2\x80\xa8\xff";
	const double a[] = { 1, 1, 1 }, b[] = { 900, 901, 902 };
	const double ka[] = { NAN, 2, 3 }, kb[] = { INFINITY, 5, 6 };
	struct strbuf sb = STRBUF_INIT;
	struct runcmp c = { 0 };
	struct runcmp_set *s;

	(void)state;
	c.kpi = xstrdup("will-it-scale.\"ops\"");
	c.direction = 1;
	for (int k = 0; k < 2; k++) {
		s = runcmp_add_set(&c, k ? "thp.enabled=\"never\"\033]0;x\a" : "base");
		s->info.id = k + 1;
		s->info.accel = xstrdup("tcg");
		s->info.suite = xstrdup("will-it-scale\n");
		set_kpi(s, k ? kb : ka, 3);
		add_vals(s, evil, k ? b : a, 3);
	}
	runcmp_compute(&c);
	assert_int_equal(c.pairs[0].nr_rows, 1);
	runcmp_json(&sb, &c);
	assert_contains_all(sb.buf,
			    "\"name\":\"vmstat.x\\\"}],\\\\\\u001b[31m\\n\\u2028\\ufffd\"",
			    "\"label\":\"thp.enabled=\\\"never\\\"\\u001b]0;x\\u0007\"",
			    "\"kpi_values\":[null,2,3]",
			    "[null,5,6]");
	for (size_t i = 0; i + 1 < sb.len; i++)
		assert_false((unsigned char)sb.buf[i] < 0x20);
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	strbuf_reset(&sb);
	/* and the text never carries a control character to the terminal */
	runcmp_format(&sb, &c, 0);
	for (size_t i = 0; i < sb.len; i++)
		assert_false(sb.buf[i] == '\033' || sb.buf[i] == '\a');
	strbuf_reset(&sb);
	/* nor the page markup of its own */
	runcmp_html(&sb, &c);
	assert_contains_all(sb.buf, "<pre class=\"compare\">", "vmstat.x&quot;}],\\?[31m");
	assert_contains_none(sb.buf, "x\"}]", "\033");
	strbuf_release(&sb);
	runcmp_release(&c);
}

/* ---- profile rows and headings ---------------------------------------------- */

/* The agent drops shares under 0.5%: a symbol that appears in the culprit
 * has no row in the parent, and must be compared from 0, not dropped. */
static void test_profile__a_row_one_side_lacks_counts_as_zero(void **state)
{
	const double ka[] = { 165000, 166000 }, kb[] = { 7400, 7466 };
	const double cp_a[] = { 13.2, 13.8 }, cp_b[] = { 90.1, 90.7 };
	const double lock_a[] = { 60.1, 61.3 }, once[] = { 2.0 };
	const double thp_a[] = { 0, 0 }, thp_b[] = { 1180, 1186 };
	struct strbuf sb = STRBUF_INIT;
	struct runcmp c = { 0 };
	const struct compare_row *r;

	(void)state;
	c.kpi = xstrdup("will-it-scale.per_process_ops");
	c.direction = 1;
	c.by_label = 1;
	for (int k = 0; k < 2; k++) {
		struct runcmp_set *s = runcmp_add_set(&c, k ? "culprit" : "parent");

		set_kpi(s, k ? kb : ka, 2);
		/* sorted by name, as the database gives them */
		add_vals(s, "perf-profile.self.cycles-pp.clear_page_erms", k ? cp_b : cp_a, 2);
		if (k)
			add_vals(s, "perf-profile.self.cycles-pp.clear_huge_page", once, 1);	/* one run of two */
		else
			add_vals(s, "perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath", lock_a, 2);
		add_vals(s, "vmstat.thp_fault_alloc", k ? thp_b : thp_a, 2);
	}
	/* (runcmp_compute sorts each side's values by name itself) */
	runcmp_compute(&c);
	assert_int_equal(c.pairs[0].nr_stats, 4);
	r = row_named(&c.pairs[0], "perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath");
	assert_non_null(r);
	assert_int_equal(r->nb, 2);
	assert_true(fabs(r->mean_b) < 1e-12 && fabs(r->delta + 60.7) < 1e-9);
	/* 2.0 in one run, under 0.5 in the other: not apart from 0 -> dropped */
	assert_null(row_named(&c.pairs[0], "perf-profile.self.cycles-pp.clear_huge_page"));
	runcmp_format_pair(&sb, &c, 0, 25);
	printf("%s", sb.buf);
	assert_contains_all(sb.buf,
			    "culprit against parent: will-it-scale.per_process_ops 165500",
			    /* the profile's largest change in points leads its section */
			    "first\n          13.5 ±  3%     +76.9           90.4         "
			    "perf-profile.self.cycles-pp.clear_page_erms\n",
			    "what changed:\n  profile    perf-profile.self.cycles-pp.clear_page_erms "
			    "13.5 -> 90.4 (+76.9 points)\n",
			    "      parent %stddev  %change       culprit %stddev name\n");
	strbuf_release(&sb);
	runcmp_release(&c);
}

/* klab compare's headings: a variant's whole name, its column widened */
static void test_format__headings_carry_the_whole_variant_name(void **state)
{
	const double ka[] = { 1000, 1001 }, kb[] = { 500, 501 };
	struct strbuf sb = STRBUF_INIT;
	struct runcmp c = { 0 };
	const char *head;

	(void)state;
	c.kpi = xstrdup("will-it-scale.per_process_ops");
	c.direction = 1;
	for (int k = 0; k < 3; k++) {
		static const char *const labels[] = { "thp.defrag=always", "thp.defrag=never",
						      "sysctl.vm.compaction_proactiveness=100" };
		struct runcmp_set *s = runcmp_add_set(&c, labels[k]);

		s->info.id = k + 1;
		set_kpi(s, k ? kb : ka, 2);
	}
	runcmp_compute(&c);
	runcmp_format(&sb, &c, 0);
	printf("%s", sb.buf);
	head = strstr(sb.buf, "\n  A:thp.defrag=always %stddev  %change   B:thp.defrag=never %stddev name\n");
	assert_non_null(head);
	/* the value columns as wide as the heading */
	assert_non_null(strstr(head, "\n                 1000           -50.0%                500.5         "
				     "will-it-scale.per_process_ops\n"));
	/* 32 at most: a longer variant keeps its end */
	assert_non_null(strstr(sb.buf, "  C:...ompaction_proactiveness=100 %stddev name\n"));
	strbuf_reset(&sb);
	/* never cut inside a UTF-8 character: "é" is 2 bytes at the cut */
	free(c.sets[2].label);
	c.sets[2].label = xstrdup("sysctl.x=\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
				  "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	runcmp_format(&sb, &c, 0);
	head = strstr(sb.buf, "C:...");
	assert_non_null(head);
	assert_int_equal((unsigned char)head[5], 0xc3);
	strbuf_release(&sb);
	runcmp_release(&c);
}

/* ---- klab reproduce's verdict line ------------------------------------------- */

static void test_reproduce__verdict_line_says_reproduced_or_not(void **state)
{
	const double parent[] = { 120000, 121000, 120500, 120800, 120300 };
	const double commit[] = { 6000, 6100, 6050, 6080, 6020 };
	const double same[] = { 120400, 120900, 120200, 120700, 120600 };
	struct verdict_policy pol;
	struct strbuf sb = STRBUF_INIT;
	struct verdict v;

	(void)state;
	verdict_policy_init(&pol);
	assert_int_equal(runcmp_reproduce(&v, &sb, &pol, parent, 5, commit, 5, 1, "-95.6%"), 0);
	assert_int_equal(v.kind, VERDICT_REPRODUCED);
	assert_string_equal(sb.buf, "reproduced: -95.0% (report said -95.6%)");
	strbuf_reset(&sb);
	assert_int_equal(runcmp_reproduce(&v, &sb, &pol, parent, 5, same, 5, 1, "-95.6%"), 0);
	assert_int_equal(v.kind, VERDICT_NOT_REPRODUCED);
	assert_true(!strncmp(sb.buf, "not reproduced: +0.", 19) || !strncmp(sb.buf, "not reproduced: -0.", 19));
	assert_non_null(strstr(sb.buf, " (report said -95.6%): "));
	assert_null(strstr(sb.buf, "regression not reproduced"));
	strbuf_reset(&sb);
	/* the commit is better: not the regression the report names */
	assert_int_equal(runcmp_reproduce(&v, &sb, &pol, commit, 5, parent, 5, 1, NULL), 0);
	assert_int_equal(v.kind, VERDICT_NOT_REPRODUCED);
	assert_non_null(strstr(sb.buf, "not reproduced: +1"));
	assert_non_null(strstr(sb.buf, "the bad end is better"));
	strbuf_reset(&sb);
	/* lower is better: a rise is the regression */
	assert_int_equal(runcmp_reproduce(&v, &sb, &pol, commit, 5, parent, 5, -1, "+1880%"), 0);
	assert_int_equal(v.kind, VERDICT_REPRODUCED);
	strbuf_reset(&sb);
	/* a hostile reported change is cleaned */
	assert_int_equal(runcmp_reproduce(&v, &sb, &pol, parent, 5, commit, 5, 1, "-9\0335%"), 0);
	assert_null(strchr(sb.buf, '\033'));
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set__replaces_adds_and_changes_the_hash),
		cmocka_unit_test(test_set__unknown_keys_and_bad_values_name_the_set),
		cmocka_unit_test(test_set__malformed_arguments_are_refused),
		cmocka_unit_test_setup_teardown(test_runsets__stored_sets_compare_with_the_kpi_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runsets__other_accelerators_and_missing_sets_are_refused, setup,
						teardown),
		cmocka_unit_test(test_json__hostile_names_and_values_are_escaped),
		cmocka_unit_test(test_reproduce__verdict_line_says_reproduced_or_not),
		cmocka_unit_test(test_profile__a_row_one_side_lacks_counts_as_zero),
		cmocka_unit_test(test_format__headings_carry_the_whole_variant_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
