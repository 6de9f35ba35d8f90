/* Unit tests of the speculative builder's process handling (speculate.c):
 * real forks, pipes and signals.  The "build" here is a stand-in that
 * writes marker files and sleeps (named so: the kernel builds themselves
 * are t-speculate.sh's, on real guests); what is tested is which commit
 * the parent waits for, which it stops, and that a stopped builder is
 * gone before the parent goes on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/speculate.h"
#include "util/strbuf.h"
#include "util/util.h"

static char dir[] = "/tmp/klab-test-speculate.XXXXXX";
static int expected_jobs;	/* the CPUs this process may use */

static int exists(const char *name)
{
	char *p = xstrfmt("%s/%s", dir, name);
	int r = access(p, F_OK) == 0;

	free(p);
	return r;
}

static void touch(const char *name)
{
	char *p = xstrfmt("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	if (f)
		fclose(f);
	free(p);
}

/* STAND-IN build: "<hex>.started", a pause (hex[0] '1': short, else
 * long), "<hex>.done"; also records the CPUs and the policy it ran with. */
static void fake_build(void *data, const char *hex, int jobs)
{
	char name[80];
	cpu_set_t set;

	(void)data;
	snprintf(name, sizeof(name), "%.8s.started", hex);
	touch(name);
	snprintf(name, sizeof(name), "%.8s.jobs-match-cpus", hex);
	if (jobs == expected_jobs)
		touch(name);
	snprintf(name, sizeof(name), "%.8s.idle", hex);
	if (sched_getscheduler(0) == SCHED_IDLE)
		touch(name);
	if (hex[0] == '1') {
		/* the parent waits for this one: it is given every CPU and
		 * the normal policy while it runs */
		for (int i = 0; i < 250 && sched_getscheduler(0) == SCHED_IDLE; i++)
			usleep(20 * 1000);
		if (sched_getscheduler(0) == SCHED_OTHER && sched_getaffinity(0, sizeof(set), &set) == 0 &&
		    CPU_COUNT(&set) == expected_jobs)
			touch("boosted");
	} else {
		usleep(60 * 1000 * 1000);
	}
	snprintf(name, sizeof(name), "%.8s.done", hex);
	touch(name);
}

static const struct speculate_ops ops = { NULL, fake_build, NULL };

static void hexes(char (*h)[41], char a, char b)
{
	memset(h[0], a, 40);
	h[0][40] = 0;
	memset(h[1], b, 40);
	h[1][40] = 0;
}

static int all_cpus(unsigned char **cpus, size_t *nr)
{
	return (int)speculate_spare_cpus(NULL, 0, cpus, nr);
}

static void start(struct speculation *sp, char (*h)[41])
{
	unsigned char *cpus;
	size_t nr;
	char *log = xstrfmt("%s/builder.log", dir);

	assert_true(all_cpus(&cpus, &nr) >= 1);
	assert_int_equal(speculate_start(sp, (const char (*)[41])h, 2, cpus, nr, log, &ops), 0);
	free(cpus);
	free(log);
}

/* Wait (bounded) for a marker the builder writes. */
static void await(const char *name)
{
	for (int i = 0; i < 500 && !exists(name); i++)
		usleep(20 * 1000);
	assert_true(exists(name));
}

static void test_speculate__spare_cpus_leave_out_the_busy_ones(void **state)
{
	unsigned char *all, *spare, busy[1] = { 1 };
	size_t nr_all, nr_spare;
	int n = all_cpus(&all, &nr_all);

	assert_true(n >= 1);
	assert_int_equal(speculate_spare_cpus(busy, 1, &spare, &nr_spare), (size_t)(n - (nr_all > 0 && all[0])));
	assert_true(nr_spare == 0 || !spare[0]);
	free(all);
	free(spare);
}

/* The next step wants the commit being built: the parent waits for it,
 * then stops the builder before it finishes the other. */
static void test_speculate__waits_for_the_wanted_commit_and_stops_the_other(void **state)
{
	struct speculation sp;
	struct strbuf line = STRBUF_INIT;
	char h[2][41];
	pid_t pid;

	hexes(h, '1', '2');
	start(&sp, h);
	pid = sp.pid;
	assert_int_equal(speculate_settle(&sp, h[0], &line), 1);
	assert_true(exists("11111111.done"));
	assert_false(exists("22222222.done"));
	assert_int_equal(sp.pid, 0);
	assert_true(kill(pid, 0) < 0 && errno == ESRCH);
	assert_non_null(strstr(line.buf, "speculative build of 111111111111 ready"));
	assert_true(exists("boosted"));
	assert_non_null(strstr(line.buf, "on every CPU"));
	strbuf_release(&line);
}

/* The builder is on the other commit (a long one): stopped at once, the
 * parent builds the one it wants itself. */
static void test_speculate__stops_a_builder_busy_with_the_other_commit(void **state)
{
	struct speculation sp;
	struct strbuf line = STRBUF_INIT;
	char h[2][41];
	pid_t pid;

	hexes(h, '3', '4');
	start(&sp, h);
	pid = sp.pid;
	await("33333333.started");
	/* confined while nobody waits: idle policy, one make job per CPU of
	 * klab's (they share the spare ones) */
	await("33333333.idle");
	assert_true(exists("33333333.jobs-match-cpus"));
	assert_int_equal(speculate_settle(&sp, h[1], &line), 0);
	assert_false(exists("33333333.done"));
	assert_false(exists("44444444.started"));
	assert_true(kill(pid, 0) < 0 && errno == ESRCH);
	assert_non_null(strstr(line.buf, "stopped before it was done"));
	strbuf_release(&line);
}

/* Neither commit is next (the step was skipped), or the loop ended. */
static void test_speculate__stops_when_neither_commit_is_next(void **state)
{
	struct speculation sp;
	struct strbuf line = STRBUF_INIT;
	char h[2][41], other[41];

	hexes(h, '5', '6');
	memset(other, '7', 40);
	other[40] = 0;
	start(&sp, h);
	await("55555555.started");
	assert_int_equal(speculate_settle(&sp, other, &line), 0);
	assert_non_null(strstr(line.buf, "the next step is neither of them"));
	strbuf_release(&line);
	start(&sp, h);
	assert_int_equal(speculate_settle(&sp, NULL, NULL), 0);
	assert_int_equal(sp.pid, 0);
	/* nothing running: nothing to settle */
	assert_int_equal(speculate_settle(&sp, h[0], &line), 0);
	assert_int_equal((int)line.len, 0);
}

/* A step's first run orders its successors: nearer the bad end on the log
 * scale, the after-a-bad-verdict commit first; either direction of KPI. */
static void test_speculate__first_run_orders_the_successors(void **state)
{
	assert_int_equal(speculate_bad_first(350, 11000, 340), 1);	/* higher is better */
	assert_int_equal(speculate_bad_first(9000, 11000, 340), 0);
	assert_int_equal(speculate_bad_first(1900, 11000, 340), 1);	/* log midpoint ~1934 */
	assert_int_equal(speculate_bad_first(2000, 11000, 340), 0);
	assert_int_equal(speculate_bad_first(150, 130, 160), 1);	/* lower is better */
	assert_int_equal(speculate_bad_first(131, 130, 160), 0);
	assert_int_equal(speculate_bad_first(0, 130, 160), 0);	/* not positive: keep the order */
	assert_int_equal(speculate_bad_first(140, -1, 160), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_speculate__first_run_orders_the_successors),
		cmocka_unit_test(test_speculate__spare_cpus_leave_out_the_busy_ones),
		cmocka_unit_test(test_speculate__waits_for_the_wanted_commit_and_stops_the_other),
		cmocka_unit_test(test_speculate__stops_a_builder_busy_with_the_other_commit),
		cmocka_unit_test(test_speculate__stops_when_neither_commit_is_next),
	};
	int rc;

	if (!mkdtemp(dir))
		return 1;
	{
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) < 0)
			return 1;
		expected_jobs = CPU_COUNT(&set);
	}
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	{
		char *cmd[] = { "rm", "-rf", dir, NULL };
		pid_t p = fork();
		if (p == 0) {
			execvp(cmd[0], cmd);
			_exit(127);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	return rc;
}
