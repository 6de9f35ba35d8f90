/* The LKP rows job import and reproduce share (opts.h): --accel, the
 * accelerator LKP's runtimes are scaled for; what a kbuild job needs of
 * this host; and the mapping table of a job both print. */
#include "cmd/opts.h"
#include "job/lkp.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
