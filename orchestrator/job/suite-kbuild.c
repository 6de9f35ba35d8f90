/* kbuild: LKP's kernel-build benchmark (LKP's parameters: build_kconfig,
 * target, nr_task, runtime).  The guest builds a host kernel
 * tree with the host's own toolchain, both shared read-only (9p), into a
 * tmpfs build directory; klab's runner (guests/bench/kbuild-run.c) times
 * each build with wait4's rusage after one warm-up build; each measured
 * build starts, as LKP's, from an empty build directory (mrproper) and a
 * fresh config.  Debian's
 * /etc/alternatives (awk is a link into it) is shared read-only too. */
#include "job/suite.h"
#include "job/job.h"
#include "job/resultproto.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROGRAM "/usr/lib/klab/kbuild-run"
/* The guest's view: a root for the build (chroot) holding the shares. */
#define GUEST_ROOT "/klab/root"
#define DEFAULT_TOOLCHAIN "/usr"
#define ALTERNATIVES "/etc/alternatives"
#define DEFAULT_TARGET "vmlinux"
#define DEFAULT_BUILD_TIMEOUT_S 600
#define MIN_BUILD_TIMEOUT_S 10
#define MAX_BUILD_TIMEOUT_S 86400
#define MAX_TARGET 128
#define MAX_ITERATION 100000

#define DEFAULT_KCONFIG "defconfig"
#define MAX_KCONFIG 64

/* LKP's testcase is kbuild and its config target build_kconfig; a job
 * may also name the config target as its testcase (klab's older form). */
static const char *const testcases[] = { "kbuild", "tinyconfig", "allnoconfig", "defconfig" };
static const char *const params[] = {
	"build_kconfig", "target", "source", "toolchain", "warmup", "build-timeout", NULL,
};

static const struct suite_kpi kpis[] = {
	{ "kbuild.buildtime_per_iteration", -1 },
	{ "kbuild.real_time_per_iteration", -1 },
	{ "kbuild.user_time_per_iteration", -1 },
	{ "kbuild.sys_time_per_iteration", -1 },
	{ "kbuild.user_time", -1 },
	{ "kbuild.sys_time", -1 },
	{ NULL, 0 },
};

static const struct suite_metric metrics[] = {
	{ "kbuild.buildtime_per_iteration", 0 },
	{ "kbuild.real_time_per_iteration", 0 },
	{ "kbuild.user_time_per_iteration", 0 },
	{ "kbuild.sys_time_per_iteration", 0 },
	{ "kbuild.workload", 0 },
	{ "kbuild.user_time", 0 },
	{ "kbuild.sys_time", 0 },
	{ "kbuild.iterations", 0 },
	{ "kbuild.iteration_buildtime", 0 },
	{ "kbuild.iteration_user_time", 0 },
	{ "kbuild.iteration_sys_time", 0 },
	{ NULL, 0 },
};

static int check_testcase(const struct job *job, const char *path, int line)
{
	return suite_check_listed(job, testcases, ARRAY_SIZE(testcases), path, line);
}

/* A make config target: defconfig, allyesconfig, tinyconfig, ... */
static int kconfig_ok(const char *t)
{
	size_t n = t ? strlen(t) : 0;

	return n > 6 && n <= MAX_KCONFIG && !strcmp(t + n - 6, "config") &&
	       strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* A make target: vmlinux, a directory (kernel/, mm/) or an object
 * (mm/memory.o); a word make cannot take as an option or a variable. */
static int target_ok(const char *t)
{
	size_t n = t ? strlen(t) : 0;

	if (!n || n > MAX_TARGET || t[0] == '-' || t[0] == '/' || t[0] == '.' ||
	    strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_/.-") != n || strstr(t, "..") || strstr(t, "//"))
		return 0;
	return 1;
}

static const char *param(const struct job *job, const char *key)
{
	for (size_t i = 0; i < job->nr_params; i++)
		if (!strcmp(job->params[i].key, key))
			return job->params[i].value;
	return NULL;
}

static int parse_build_timeout(const char *s, unsigned *out)
{
	return job_parse_duration(s, MIN_BUILD_TIMEOUT_S, MAX_BUILD_TIMEOUT_S, out);
}

/* A directory with a file in it (a kernel tree's Makefile, a toolchain's
 * bin/make). */
static int has_file(const char *dir, const char *file)
{
	char *p = xstrfmt("%s/%s", dir, file);
	struct stat st;
	int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);

	free(p);
	return ok;
}

/* A toolchain is a /usr the guest runs: make and gcc in its bin/. */
static int check_toolchain(const char *what, const char *dir)
{
	if (job_check_share_dir(what, dir) < 0)
		return -1;
	if (!has_file(dir, "bin/make") || !has_file(dir, "bin/gcc"))
		return error("%s: '%s' has no bin/make and bin/gcc (the toolchain is a /usr the guest runs)", what,
			     dir);
	return 0;
}

/* params.warmup: yes (LKP's warm-up build first) or no; true and false as
 * revert_check takes them. */
static int warmup_off(const char *v)
{
	return !strcmp(v, "no") || !strcmp(v, "false");
}

static int check_param(const struct job *job, const struct job_kv *kv, const char *path, int line)
{
	char *what = xstrfmt("%s:%d: params.%s", path, line, kv->key);
	unsigned t;
	int ret = -1;

	if (!strcmp(kv->key, "source")) {
		if (job_check_share_dir(what, kv->value) < 0)
			goto out;
		if (!has_file(kv->value, "Makefile") || !has_file(kv->value, "Kconfig")) {
			error("%s: '%s' is not a kernel source tree (no Makefile and Kconfig)", what, kv->value);
			goto out;
		}
	} else if (!strcmp(kv->key, "toolchain")) {
		if (check_toolchain(what, kv->value) < 0)
			goto out;
	} else if (!strcmp(kv->key, "target")) {
		if (!target_ok(kv->value)) {
			error("%s: expected a make target like vmlinux, kernel/ or mm/memory.o, got '%s'", what,
			      kv->value ? kv->value : "");
			goto out;
		}
	} else if (!strcmp(kv->key, "warmup")) {
		if (!kv->value || (strcmp(kv->value, "yes") && strcmp(kv->value, "true") && !warmup_off(kv->value))) {
			error("%s: expected yes or no, got '%s'", what, kv->value ? kv->value : "");
			goto out;
		}
	} else if (!strcmp(kv->key, "build_kconfig")) {
		if (!kconfig_ok(kv->value)) {
			error("%s: expected a config target like defconfig, allyesconfig or tinyconfig, got '%s'", what,
			      kv->value ? kv->value : "");
			goto out;
		}
		if (strcmp(job->testcase, "kbuild") && strcmp(job->testcase, kv->value)) {
			error("%s: the testcase names the config target %s already", what, job->testcase);
			goto out;
		}
	} else if (!strcmp(kv->key, "build-timeout")) {
		if (!kv->value || parse_build_timeout(kv->value, &t) < 0) {
			error("%s: expected a duration like 10m (10s to 24h), got '%s'", what, kv->value ? kv->value : "");
			goto out;
		}
	} else {
		error("%s:%d: params: kbuild has no option '%s'", path, line, kv->key);
		goto out;
	}
	ret = 0;
out:
	free(what);
	return ret;
}

static int shares(struct job *job, const char *path, int line)
{
	const char *source = param(job, "source"), *toolchain = param(job, "toolchain");
	struct stat st;
	char *what;
	int ret;

	if (!source)
		return error("%s:%d: params.source: missing (the kernel tree the guest builds, shared read-only)",
			     path, line);
	what = xstrfmt("%s:%d: params.toolchain", path, line);
	/* the default is checked as a given one is */
	ret = toolchain ? 0 : check_toolchain(what, DEFAULT_TOOLCHAIN);
	if (!ret)
		ret = job_add_share(job, what, toolchain ? toolchain : DEFAULT_TOOLCHAIN, "usr", GUEST_ROOT "/usr");
	free(what);
	if (ret < 0)
		return -1;
	what = xstrfmt("%s:%d: params.source", path, line);
	ret = job_add_share(job, what, source, "src", GUEST_ROOT "/src");
	free(what);
	if (ret < 0)
		return -1;
	/* Debian's awk, cc, c++ in /usr/bin are links into /etc/alternatives
	 * (kbuild runs awk): the links alone, read-only as the rest */
	if (stat(ALTERNATIVES, &st) == 0 && S_ISDIR(st.st_mode)) {
		what = xstrfmt("%s:%d: the toolchain's %s", path, line, ALTERNATIVES);
		ret = job_add_share(job, what, ALTERNATIVES, "alternatives", GUEST_ROOT ALTERNATIVES);
		free(what);
	}
	return ret;
}

static char *default_kpi(const struct job *job)
{
	(void)job;
	return xstrdup("kbuild.buildtime_per_iteration");
}

static int build_timeout_s(const struct job *job, unsigned *out)
{
	const char *s = param(job, "build-timeout");

	*out = DEFAULT_BUILD_TIMEOUT_S;
	if (s && parse_build_timeout(s, out) < 0)
		return error("job '%s': params.build-timeout is not a duration", job->path);
	return 0;
}

/* The first config, the warm-up build, and the last measured iteration's
 * config and build, which may start just before the runtime ends: each at
 * most one build timeout. */
static int warmup_s(const struct job *job, unsigned *out)
{
	unsigned t;

	if (build_timeout_s(job, &t) < 0)
		return -1;
	*out = 4 * t;
	return 0;
}

/* The config target: build_kconfig, a testcase naming one, or LKP's
 * default. */
static const char *kconfig(const struct job *job)
{
	const char *k = param(job, "build_kconfig");

	if (k)
		return k;
	return strcmp(job->testcase, "kbuild") ? job->testcase : DEFAULT_KCONFIG;
}

static int agent_argv(const struct job *job, unsigned vcpus, struct strbuf *sb)
{
	const char *target = param(job, "target"), *warmup = param(job, "warmup");
	unsigned timeout;

	if (!suite_listed(job->testcase, testcases, ARRAY_SIZE(testcases)) || !kconfig_ok(kconfig(job)))
		return error("job '%s': kbuild has no config target '%s'", job->path, kconfig(job));
	if (job->nr_shares < 2)
		return error("job '%s': a kbuild job needs its toolchain and source shares", job->path);
	if (build_timeout_s(job, &timeout) < 0)
		return -1;
	if (!target)
		target = DEFAULT_TARGET;
	if (!target_ok(target))
		return error("job '%s': params.target '%s' is not a make target", job->path, target);
	if (JOB_CONF_ARGV(sb, PROGRAM, "--root", GUEST_ROOT, "--config", kconfig(job), "--target", target) < 0 ||
	    job_conf_argv_uint(sb, "--jobs", job_count_resolve(&job->nr_task, vcpus)) < 0 ||
	    job_conf_argv_uint(sb, "--runtime", job->runtime_s) < 0)
		return -1;
	if (job_conf_argv_uint(sb, "--build-timeout", timeout) < 0)
		return -1;
	return warmup && warmup_off(warmup) ? JOB_CONF_ARGV(sb, "--no-warmup") : 0;
}

/*
 * klab's kbuild runner (its own lines; make's are forwarded with "| "):
 *
 *   kbuild: config=tinyconfig target=mm/ jobs=2 runtime=10
 *   config: real=20.40
 *   warmup: real=83.21 user=150.20 sys=20.10
 *   mrproper: real=0.05
 *   config: real=9.81
 *   iteration:1 real=61.50 user=110.33 sys=12.01
 *   iterations:1
 *
 * Only iteration lines after the header count; the headline metrics are
 * made from them once duplicates are gone (derive).
 */
static void parse_kbuild(struct result_metrics *ml, char *const *lines, size_t nr)
{
	int header = 0;

	for (size_t i = 0; i < nr; i++) {
		char *copy, *tok[RESULT_MAX_TOKENS];
		const char *it, *real, *user, *sys;
		double v[3];
		int64_t seq;
		size_t n;

		if (!lines[i])
			continue;
		n = result_tokenize(lines[i], &copy, tok);
		if (!header) {
			header = n >= 1 && n <= RESULT_MAX_TOKENS && !strcmp(tok[0], "kbuild:");
		} else if (n == 4 && (it = result_key_value(tok[0], "iteration", ':')) &&
			   (real = result_key_value(tok[1], "real", '=')) &&
			   (user = result_key_value(tok[2], "user", '=')) &&
			   (sys = result_key_value(tok[3], "sys", '='))) {
			if (!result_parse_int64(it, &seq) && seq >= 1 && seq <= MAX_ITERATION &&
			    !result_parse_number(real, &v[0]) && !result_parse_number(user, &v[1]) &&
			    !result_parse_number(sys, &v[2]) && v[0] > 0 && v[1] >= 0 && v[2] >= 0) {
				result_add_metric(ml, xstrdup("kbuild.iteration_buildtime"), seq, v[0]);
				result_add_metric(ml, xstrdup("kbuild.iteration_user_time"), seq, v[1]);
				result_add_metric(ml, xstrdup("kbuild.iteration_sys_time"), seq, v[2]);
			}
		}
		free(copy);
	}
}

/* The means per measured build, LKP's kbuild metrics (and klab's older
 * names of the same means); LKP's workload is the number of builds. */
static void kbuild_derive(struct result_metrics *ml)
{
	static const struct {
		const char *series, *mean;
	} m[] = {
		{ "kbuild.iteration_buildtime", "kbuild.buildtime_per_iteration" },
		{ "kbuild.iteration_buildtime", "kbuild.real_time_per_iteration" },
		{ "kbuild.iteration_user_time", "kbuild.user_time_per_iteration" },
		{ "kbuild.iteration_sys_time", "kbuild.sys_time_per_iteration" },
		{ "kbuild.iteration_user_time", "kbuild.user_time" },
		{ "kbuild.iteration_sys_time", "kbuild.sys_time" },
	};
	size_t count = 0;

	for (size_t k = 0; k < ARRAY_SIZE(m); k++) {
		size_t n;
		double sum = result_metric_sum(ml, m[k].series, &n);

		if (n)
			result_add_metric(ml, xstrdup(m[k].mean), 0, sum / (double)n);
		if (!k)
			count = n;
	}
	if (count) {
		result_add_metric(ml, xstrdup("kbuild.iterations"), 0, (double)count);
		result_add_metric(ml, xstrdup("kbuild.workload"), 0, (double)count);
	}
}

/* The runner's "kbuild: first error: <make's or the compiler's line>",
 * else its first "kbuild: error: ..." (a timeout, make that exited). */
static char *kbuild_failure(char *const *lines, size_t nr)
{
	static const char first[] = "kbuild: first error: ", any[] = "kbuild: error: ";
	const char *last = NULL;

	for (size_t i = 0; i < nr; i++) {
		if (!lines[i])
			continue;
		if (!strncmp(lines[i], first, sizeof(first) - 1))
			return xstrdup(lines[i] + sizeof(first) - 1);
		if (!last && !strncmp(lines[i], any, sizeof(any) - 1))
			last = lines[i] + sizeof(any) - 1;
	}
	return last ? xstrdup(last) : NULL;
}

const struct suite suite_kbuild = {
	.name = "kbuild",
	.keys = 0,
	.params = params,
	.testcase_is_suite = 1,
	.kpis = kpis,
	.metrics = metrics,
	.program = { "kbuild-run", PROGRAM, NULL },
	.check_testcase = check_testcase,
	.check_param = check_param,
	.default_kpi = default_kpi,
	.warmup_s = warmup_s,
	.shares = shares,
	.agent_argv = agent_argv,
	.parse = parse_kbuild,
	.derive = kbuild_derive,
	.failure = kbuild_failure,
};
