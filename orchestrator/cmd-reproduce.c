/* klab reproduce: an LKP regression report read (a file or stdin), its
 * commit, parent, test and KPI printed, a klab job written for it, and
 * the commands that measure it next.  Measuring in guests from here is
 * not built yet; the command says so instead of pretending. */
#include "klab.h"
#include "gitrepo.h"
#include "lkp.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const reproduce_usage[] = {
	"usage: klab reproduce REPORT [--repo R] [--job-out FILE] [--accel auto|kvm|tcg]",
	"",
	"Read an LKP regression report (a file, or - for stdin; a mail with its",
	"headers, '> ' quoting, CRLF lines and wrapped lines is fine): the",
	"commit and its parent, the suite, testcase and parameters of its axis",
	"line, and the KPI with the change the report gives.  Write a klab job",
	"for it (checked by klab's job parser), say what could not be mapped and",
	"why, and print the klab commands that measure the parent against the",
	"commit and bisect between them.",
	"",
	"Not built yet: reproduce does not boot guests itself; run the printed",
	"'klab run' and 'klab bisect start' lines (or 'klab submit') to measure.",
	"",
	"  --repo R        the kernel repository: the report's commit and parent",
	"                  must be in it (printed as full ids), and the printed",
	"                  commands name it",
	"  --job-out FILE  where the job goes (default: ./<testcase>-reproduce.yaml)",
	"  --accel A       the guests' accelerator the runtime is scaled for:",
	"                  tcg (a tenth of the report's runtime, at least 5s),",
	"                  kvm (the report's) or auto (default: kvm when the CPU",
	"                  has vmx or svm and /dev/kvm exists)",
	NULL
};

enum { OPT_REPO = 4100, OPT_JOB_OUT, OPT_ACCEL };

/* The whole of stdin, at most max bytes (one more is an error). */
static int read_stdin(size_t max, char **out, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];

	for (;;) {
		ssize_t n = read(0, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			strbuf_release(&sb);
			return error("cannot read the report from stdin: %s", strerror(errno));
		}
		if (!n)
			break;
		strbuf_add(&sb, chunk, (size_t)n);
		if (sb.len > max) {
			strbuf_release(&sb);
			return error("stdin: a report is at most %zu bytes", max);
		}
	}
	*out = strbuf_detach(&sb, len);
	return 0;
}

static void add_word(struct strbuf *sb, const char *w)
{
	strbuf_addch(sb, ' ');
	strbuf_add_shell_word(sb, w);
}

/* "klab run" of the job on one commit, as bash reads it back */
static void print_run_line(const char *job, const char *repo, const char *rev)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "  klab run --job");
	add_word(&sb, job);
	strbuf_addstr(&sb, " --repo");
	add_word(&sb, repo ? repo : "REPO");
	strbuf_addf(&sb, " --rev %s", rev);
	print_line("%s", sb.buf);
	strbuf_release(&sb);
}

/* The report's commits in R, as full ids: both must be there, the
 * parent an ancestor of the commit. */
static int check_in_repo(const char *path, struct lkp_report *r)
{
	struct gitrepo *repo = NULL;
	char parent[41], commit[41];
	int held, ret = -1, anc;

	if (gitrepo_open(&repo, path) < 0)
		return -1;
	held = error_hold(1);
	if (gitrepo_resolve(repo, r->commit, commit) < 0) {
		error_hold(held);
		error("the report's commit %s is not a commit of '%s' (fetch it first?)", r->commit, path);
		goto out;
	}
	if (gitrepo_resolve(repo, r->parent, parent) < 0) {
		error_hold(held);
		error("the report's parent %s is not a commit of '%s' (fetch it first?)", r->parent, path);
		goto out;
	}
	anc = gitrepo_is_ancestor(repo, parent, commit);
	error_hold(held);
	if (anc <= 0) {
		error("the report's parent %s is not an ancestor of its commit %s in '%s'", r->parent, r->commit, path);
		goto out;
	}
	free(r->commit);
	free(r->parent);
	r->commit = xstrdup(commit);
	r->parent = xstrdup(parent);
	ret = 0;
out:
	gitrepo_free(repo);
	return ret;
}

int cmd_reproduce(int argc, char **argv, const struct global_opts *g)
{
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, OPT_REPO },
		{ "job-out", required_argument, NULL, OPT_JOB_OUT },
		{ "accel", required_argument, NULL, OPT_ACCEL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *repo = NULL, *job_out = NULL, *accel_arg = NULL, *why, *path;
	struct lkp_report r = { 0 };
	struct lkp_klab_job j = { 0 };
	struct strbuf sb = STRBUF_INIT;
	enum lkp_accel accel;
	char *buf = NULL, *dest = NULL;
	size_t len;
	int c, ret = EXIT_FAIL;

	(void)g;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_REPO:
			repo = optarg;
			break;
		case OPT_JOB_OUT:
			job_out = optarg;
			break;
		case OPT_ACCEL:
			accel_arg = optarg;
			break;
		case 'h':
			print_usage(reproduce_usage, 0);
			return EXIT_OK;
		default:
			fprintf(stderr, "see 'klab reproduce --help'\n");
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		error(optind < argc ? "reproduce takes one report (got more)" : "reproduce needs a report (a file or -)");
		return EXIT_USAGE;
	}
	path = argv[optind];
	if (check_no_controls("REPORT", path) < 0 || check_no_controls("--repo", repo) < 0 ||
	    check_no_controls("--job-out", job_out) < 0)
		return EXIT_USAGE;
	if (lkp_accel_option(accel_arg, &accel, &why) < 0)
		return EXIT_USAGE;
	if (!strcmp(path, "-") ? read_stdin(LKP_MAX_REPORT, &buf, &len) < 0
			       : read_file(path, LKP_MAX_REPORT, &buf, &len) < 0)
		return EXIT_FAIL;
	if (lkp_report_parse(&r, !strcmp(path, "-") ? "stdin" : path, buf, len) < 0 ||
	    (repo && check_in_repo(repo, &r) < 0))
		goto out;

	if (r.subject)
		print_line("commit:   %s (\"%s\")", r.commit, r.subject);
	else
		print_line("commit:   %s", r.commit);
	print_line("parent:   %s", r.parent);
	for (size_t i = 0; i < r.params.nr && sb.len < 400; i++)
		strbuf_addf(&sb, "%s%s=%s", i ? " " : "", r.params.v[i].key, r.params.v[i].value);
	print_line("suite:    %s", r.suite);
	if (sb.len)
		print_line("params:   %s", sb.buf);
	if (r.row)
		print_line("KPI:      %s %s in the report (%s -> %s)", r.kpi, r.change, r.row->base, r.row->head);
	else
		print_line("KPI:      %s %s in the report", r.kpi, r.change);
	print_line("accel:    %s (%s)", accel == LKP_ACCEL_KVM ? "kvm" : "tcg", why);

	if (lkp_map(&j, r.suite, &r.params, r.kpi, accel, path, job_out) < 0)
		goto out;
	print_line("testcase: %s", j.testcase);
	lkp_print_notes(&j, "");
	dest = job_out ? xstrdup(job_out) : xstrfmt("%s-reproduce.yaml", j.testcase);
	if (write_file_atomic(dest, j.yaml, strlen(j.yaml)) < 0)
		goto out;
	print_line("wrote %s (checked by klab's job parser)", dest);

	print_line("not done yet: reproduce does not measure the parent against the commit in guests; run:");
	print_run_line(dest, repo, r.parent);
	print_run_line(dest, repo, r.commit);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "  klab bisect start --repo");
	add_word(&sb, repo ? repo : "REPO");
	strbuf_addf(&sb, " --good %s --bad %s --job", r.parent, r.commit);
	add_word(&sb, dest);
	print_line("%s", sb.buf);
	ret = EXIT_OK;
out:
	strbuf_release(&sb);
	lkp_klab_job_release(&j);
	lkp_report_release(&r);
	free(buf);
	free(dest);
	return ret;
}
