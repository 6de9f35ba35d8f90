/* klab job import: an lkp-tests job file becomes one klab job file per
 * combination of its parameters that klab can run, each one checked by
 * klab's job parser, with what could not be mapped said. */
#include "cmd/klab.h"
#include "job/lkp.h"
#include "job/suite.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const job_usage[] = {
	"usage: klab job import LKP-JOB.yaml [--out-dir DIR] [--accel auto|kvm|tcg]",
	"",
	"Turn an lkp-tests job file (jobs/*.yaml of lkp-tests: its suite, the",
	"suite's map such as 'will-it-scale: { test: [...], mode: [...] }',",
	"nr_task / nr_threads, testtime / runtime, transparent_hugepage; a list",
	"is an axis, a later YAML document a variant of the first) into one klab",
	"job file per combination, named after the combination.  Each is checked",
	"by klab's job parser before it is written; a combination klab cannot run",
	"(a test its suite does not have) is skipped with the reason.",
	"",
	"  --out-dir DIR   where the jobs go (default: the current directory)",
	"  --accel A       the guests' accelerator the runtime is scaled for:",
	"                  tcg (a tenth of LKP's runtime, at least 5s), kvm",
	"                  (LKP's runtime) or auto (default: kvm when the CPU",
	"                  has vmx or svm and /dev/kvm exists)",
	"",
	"Test-machine parameters (tbox_group, rootfs, kconfig, compiler,",
	"cpufreq_governor, ucode, disk, ...) have no klab equivalent; each one",
	"is listed with the reason.",
	NULL
};

enum { OPT_OUT_DIR = 4000, OPT_ACCEL };

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

void lkp_print_notes(const struct lkp_klab_job *j, const char *indent)
{
	for (size_t i = 0; i < j->nr_mapped; i++)
		print_line("%smapped: %s", indent, j->mapped[i]);
	for (size_t i = 0; i < j->nr_unmapped; i++)
		print_line("%snot mapped: %s", indent, j->unmapped[i]);
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
	int c, ret = EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_OUT_DIR:
			out_dir = optarg;
			break;
		case OPT_ACCEL:
			accel_arg = optarg;
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
	if (lkp_jobfile_parse(&jf, path, buf, len) < 0 || !suite_get(jf.suite))
		goto out;
	print_line("%s: lkp-tests suite %s, %zu combination%s; accelerator %s (%s)", path, jf.suite, jf.nr_combos,
		   jf.nr_combos == 1 ? "" : "s", accel == LKP_ACCEL_KVM ? "kvm" : "tcg", why);
	for (size_t i = 0; i < jf.ignored.nr; i++)
		print_line("not mapped: %s: %s; klab has no equivalent", jf.ignored.v[i].key, jf.ignored.v[i].value);
	for (size_t i = 0; i < jf.nr_combos; i++) {
		struct lkp_klab_job j;
		char *dest;

		int held = error_hold(1), rc = lkp_map(&j, jf.suite, &jf.combos[i], NULL, accel, path, NULL);

		error_hold(held);
		if (rc < 0) {
			/* said once here, on stdout with the others */
			struct strbuf sb = STRBUF_INIT;
			for (size_t k = 0; k < jf.combos[i].nr && sb.len < 200; k++)
				strbuf_addf(&sb, " %s=%s", jf.combos[i].v[k].key, jf.combos[i].v[k].value);
			const char *reason = error_last(), *at = strstr(reason, ".yaml:");

			/* job.c's "NAME.yaml:LINE: " names a file never written */
			if (at && (at = strstr(at, ": ")))
				reason = at + 2;
			print_line("skipped combination %zu (%s): klab cannot run it: %s", i + 1, sb.len ? sb.buf + 1 : "",
				   reason);
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
		print_line("wrote %s", dest);
		lkp_print_notes(&j, "  ");
		ALLOC_GROW(written, nr_written + 1, alloc_written);
		written[nr_written++] = dest;
		lkp_klab_job_release(&j);
	}
	if (!nr_written) {
		error("%s: none of its %zu combination%s is a job klab can run", path, jf.nr_combos,
		      jf.nr_combos == 1 ? "" : "s");
		goto out;
	}
	print_line("%zu job%s written, %zu combination%s skipped", nr_written, nr_written == 1 ? "" : "s", skipped,
		   skipped == 1 ? "" : "s");
	ret = EXIT_OK;
out:
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
