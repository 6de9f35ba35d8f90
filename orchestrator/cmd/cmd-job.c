/* klab job import: an lkp-tests job file becomes one klab job file per
 * combination of its parameters that klab can run, each one checked by
 * klab's job parser, with what could not be mapped said. */
#include "cmd/klab.h"
#include "job/lkp.h"
#include "job/suite.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const job_usage[] = {
	"usage: klab job import LKP-JOB.yaml [--out-dir DIR] [--accel auto|kvm|tcg] [--json]",
	"",
	"Turn an lkp-tests job file (jobs/*.yaml of lkp-tests: its suite, the",
	"suite's map such as 'will-it-scale: { test: [...], mode: [...] }',",
	"nr_task / nr_threads, testtime / runtime, transparent_hugepage; a list",
	"is an axis, a later YAML document a variant of the first) into one klab",
	"job file per combination, named after the combination.  Each is checked",
	"by klab's job parser before it is written; a combination klab cannot run",
	"(a test its suite does not have) is skipped with the reason.  Each job",
	"written comes with its mapping table: every LKP parameter, the klab job",
	"key it set, or why it has none.  A suite klab cannot run (aim7, aim9,",
	"unixbench, lmbench3, fsmark, phoronix-test-suite) is refused with why.",
	"",
	"  --out-dir DIR   where the jobs go (default: the current directory)",
	"  --accel A       the guests' accelerator the runtime is scaled for:",
	"                  tcg (a tenth of LKP's runtime, at least 5s), kvm",
	"                  (LKP's runtime) or auto (default: kvm when the CPU",
	"                  has vmx or svm and /dev/kvm exists)",
	"  --json          one JSON document on stdout: the jobs written with their",
	"                  mapping tables, the combinations skipped and why",
	"",
	"A kbuild job builds the kernel tree KLAB_KBUILD_SOURCE names (default",
	"/usr/src/linux-source-6.1, as klab's own kbuild job) with klab's",
	"kbuild.config fragment (9p, through which the guest reads the tree).",
	"",
	"Test-machine parameters (tbox_group, rootfs, kconfig, compiler,",
	"cpufreq_governor, ucode, disk, ...) have no klab equivalent; each one",
	"is listed with the reason.",
	NULL
};

enum { OPT_OUT_DIR = 4000, OPT_ACCEL, OPT_JSON };

static int cpu_has_virt(void)
{
	char *info;
	int yes;

	if (read_file("/proc/cpuinfo", 4 << 20, &info, NULL) < 0)
		return 0;
	yes = strstr(info, " vmx") || strstr(info, " svm");
	free(info);
	return yes;
}

int lkp_accel_option(const char *arg, enum lkp_accel *out, const char **why)
{
	if (!arg || !strcmp(arg, "auto")) {
		int kvm = cpu_has_virt() && access("/dev/kvm", F_OK) == 0;

		*out = kvm ? LKP_ACCEL_KVM : LKP_ACCEL_TCG;
		*why = kvm ? "auto: the CPU has vmx/svm and /dev/kvm exists"
			   : "auto: no vmx/svm or no /dev/kvm here, so guests run under TCG";
		return 0;
	}
	if (!strcmp(arg, "kvm") || !strcmp(arg, "tcg")) {
		*out = !strcmp(arg, "kvm") ? LKP_ACCEL_KVM : LKP_ACCEL_TCG;
		*why = "--accel";
		return 0;
	}
	return error("--accel: expected auto, kvm or tcg, got '%s'", arg);
}

void lkp_print_table(const struct lkp_klab_job *j, const char *indent)
{
	struct strbuf sb = STRBUF_INIT;

	lkp_table_text(&sb, j, indent);
	fputs(sb.buf, stdout);
	strbuf_release(&sb);
}

static int is_regular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void lkp_host_paths(struct lkp_map_in *in)
{
	static char *config;
	const char *env = getenv("KLAB_KBUILD_SOURCE"), *data = getenv("KLAB_DATADIR");

	in->kbuild_source = env && *env ? env : "/usr/src/linux-source-6.1";
	if (!config) {
		/* beside klab's own kbuild job: installed, else the source tree's */
		char *cand[3] = { data && *data ? xstrfmt("%s/jobs/kbuild.config", data) : NULL,
				  xstrdup(KLAB_DATADIR "/jobs/kbuild.config"),
				  xstrfmt("%s/jobs/kbuild.config", KLAB_ABS_SRCDIR) };

		for (size_t i = 0; i < ARRAY_SIZE(cand); i++) {
			if (!config && cand[i] && is_regular(cand[i]))
				config = cand[i];
			else
				free(cand[i]);
		}
	}
	in->kbuild_config = config;
}

static void combination_text(struct strbuf *sb, const struct lkp_params *p)
{
	for (size_t k = 0; k < p->nr && sb->len < 200; k++)
		strbuf_addf(sb, "%s%s=%s", k ? " " : "", p->v[k].key, p->v[k].value);
}

/* DIR/NAME.yaml, or NAME-2.yaml ... when this run wrote that name already. */
static char *job_path(const char *dir, const char *name, char **written, size_t nr)
{
	for (unsigned k = 1;; k++) {
		char *p = k == 1 ? xstrfmt("%s/%s.yaml", dir, name) : xstrfmt("%s/%s-%u.yaml", dir, name, k);
		int taken = 0;

		for (size_t i = 0; i < nr && !taken; i++)
			taken = !strcmp(written[i], p);
		if (!taken)
			return p;
		free(p);
	}
}

static int job_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "out-dir", required_argument, NULL, OPT_OUT_DIR },
		{ "accel", required_argument, NULL, OPT_ACCEL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out_dir = ".", *accel_arg = NULL, *why, *path;
	struct lkp_jobfile jf = { 0 };
	enum lkp_accel accel;
	char **written = NULL;
	size_t nr_written = 0, alloc_written = 0, skipped = 0;
	char *buf = NULL;
	size_t len;
	struct stat st;
	struct strbuf js = STRBUF_INIT, jskip = STRBUF_INIT;
	const char *refused;
	int c, held, rc, json = 0, ret = EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_OUT_DIR:
			out_dir = optarg;
			break;
		case OPT_ACCEL:
			accel_arg = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case 'h':
		default:
			return help_or_usage(c, job_usage, "job");
		}
	}
	if (optind + 1 != argc) {
		error(optind < argc ? "job import takes one LKP job file (got more)" : "job import needs an LKP job file");
		return EXIT_USAGE;
	}
	path = argv[optind];
	if (check_no_controls("LKP-JOB", path) < 0 || check_no_controls("--out-dir", out_dir) < 0)
		return EXIT_USAGE;
	if (lkp_accel_option(accel_arg, &accel, &why) < 0)
		return EXIT_USAGE;
	if (stat(out_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error("--out-dir '%s': not a directory", out_dir);
		return EXIT_FAIL;
	}
	if (read_file(path, LKP_MAX_JOBFILE, &buf, &len) < 0)
		return EXIT_FAIL;
	held = error_hold(1);
	rc = lkp_jobfile_parse(&jf, path, buf, len);
	error_hold(held);
	if (rc < 0) {
		/* a suite klab cannot run says so before its file's syntax */
		char *suite = lkp_jobfile_suite(buf, len);

		if ((refused = lkp_suite_refused(suite)))
			error("%s: klab cannot run LKP's %s: %s", path, suite, refused);
		else
			error("%s", error_last());
		free(suite);
		goto out;
	}
	refused = lkp_suite_refused(jf.suite);
	held = error_hold(1);
	rc = refused ? -1 : suite_get(jf.suite) ? 0 : -1;
	error_hold(held);
	if (rc < 0) {
		/* said once for the whole file */
		char *reason = refused ? xstrfmt("klab cannot run LKP's %s: %s", jf.suite, refused) : xstrdup(error_last());

		if (json) {
			strbuf_addstr(&js, "{\"file\":");
			json_add_string(&js, path);
			strbuf_addstr(&js, ",\"suite\":");
			json_add_string(&js, jf.suite);
			strbuf_addf(&js, ",\"combinations\":%zu,\"refused\":", jf.nr_combos);
			json_add_string(&js, reason);
			strbuf_addstr(&js, ",\"jobs\":[],\"skipped\":[]}\n");
			fputs(js.buf, stdout);
		}
		error("%s: %s", path, reason);
		free(reason);
		goto out;
	}
	if (json) {
		strbuf_addstr(&js, "{\"file\":");
		json_add_string(&js, path);
		strbuf_addstr(&js, ",\"suite\":");
		json_add_string(&js, jf.suite);
		strbuf_addf(&js, ",\"accelerator\":\"%s\",\"combinations\":%zu,\"ignored\":",
			    accel == LKP_ACCEL_KVM ? "kvm" : "tcg", jf.nr_combos);
		lkp_params_json(&js, &jf.ignored);
		strbuf_addstr(&js, ",\"jobs\":[");
	} else {
		print_line("%s: lkp-tests suite %s, %zu combination%s; accelerator %s (%s)", path, jf.suite, jf.nr_combos,
			   jf.nr_combos == 1 ? "" : "s", accel == LKP_ACCEL_KVM ? "kvm" : "tcg", why);
		for (size_t i = 0; i < jf.ignored.nr; i++)
			print_line("not mapped: %s: %s; klab has no equivalent", jf.ignored.v[i].key, jf.ignored.v[i].value);
	}
	for (size_t i = 0; i < jf.nr_combos; i++) {
		struct lkp_map_in in = { .suite = jf.suite, .params = &jf.combos[i], .accel = accel, .origin = path };
		struct lkp_klab_job j;
		char *dest;

		lkp_host_paths(&in);
		held = error_hold(1);
		rc = lkp_map(&j, &in);
		error_hold(held);
		if (rc < 0) {
			/* said once here, on stdout with the others */
			struct strbuf sb = STRBUF_INIT;
			const char *reason = error_last(), *at = strstr(reason, ".yaml:");

			/* job.c's "NAME.yaml:LINE: " names a file never written */
			if (at && (at = strstr(at, ": ")))
				reason = at + 2;
			combination_text(&sb, &jf.combos[i]);
			if (json) {
				strbuf_addf(&jskip, "%s{\"n\":%zu,\"combination\":", skipped ? "," : "", i + 1);
				lkp_params_json(&jskip, &jf.combos[i]);
				strbuf_addstr(&jskip, ",\"why\":");
				json_add_string(&jskip, reason);
				strbuf_addch(&jskip, '}');
			} else {
				print_line("skipped combination %zu (%s): klab cannot run it: %s", i + 1, sb.buf, reason);
			}
			strbuf_release(&sb);
			skipped++;
			continue;
		}
		dest = job_path(out_dir, j.name, written, nr_written);
		if (write_file_atomic(dest, j.yaml, strlen(j.yaml)) < 0) {
			free(dest);
			lkp_klab_job_release(&j);
			goto out;
		}
		if (json) {
			strbuf_addstr(&js, nr_written ? ",{\"path\":" : "{\"path\":");
			json_add_string(&js, dest);
			strbuf_addstr(&js, ",\"suite\":");
			json_add_string(&js, j.suite);
			strbuf_addstr(&js, ",\"testcase\":");
			json_add_string(&js, j.testcase);
			strbuf_addstr(&js, ",\"combination\":");
			lkp_params_json(&js, &jf.combos[i]);
			strbuf_addstr(&js, ",\"mapping\":");
			lkp_table_json(&js, &j);
			strbuf_addch(&js, '}');
		} else {
			print_line("wrote %s", dest);
			lkp_print_table(&j, "  ");
		}
		ALLOC_GROW(written, nr_written + 1, alloc_written);
		written[nr_written++] = dest;
		lkp_klab_job_release(&j);
	}
	if (json) {
		strbuf_addf(&js, "],\"skipped\":[%s]}\n", jskip.buf);
		fputs(js.buf, stdout);
	}
	if (!nr_written) {
		error("%s: none of its %zu combination%s is a job klab can run", path, jf.nr_combos,
		      jf.nr_combos == 1 ? "" : "s");
		goto out;
	}
	if (!json)
		print_line("%zu job%s written, %zu combination%s skipped", nr_written, nr_written == 1 ? "" : "s", skipped,
			   skipped == 1 ? "" : "s");
	ret = EXIT_OK;
out:
	strbuf_release(&js);
	strbuf_release(&jskip);
	strings_free(written, nr_written);
	lkp_jobfile_release(&jf);
	free(buf);
	return ret;
}

int cmd_job(int argc, char **argv, const struct global_opts *g)
{
	(void)g;
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_usage(job_usage, 0);
		return EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "import")) {
		if (argc >= 2)
			error("'%s' is not a job subcommand (see 'klab job --help')", argv[1]);
		else
			print_usage(job_usage, 1);
		return EXIT_USAGE;
	}
	return job_import(argc - 1, argv + 1);
}
