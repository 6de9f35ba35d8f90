/* klab job import: an lkp-tests job file becomes one klab job file per
 * combination of its parameters that klab can run, each one checked by
 * klab's job parser, with what could not be mapped said. */
#include "cmd/klab.h"
#include "cmd/opts.h"
#include "job/lkp.h"
#include "job/suite.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const import_forms[] = { "LKP-JOB.yaml [--out-dir] [--accel] [--json]", NULL };
static const struct opt_usage import_usage = {
	"job import", import_forms,
	"Turn an lkp-tests job file into one klab job file per combination of its\n"
	"parameters, each checked by klab's job parser and printed with its mapping\n"
	"table (every LKP parameter, the job key it set or why none).",
	"JOB IMPORT"
};
static const struct opt_usage job_usage = {
	"job", NULL,
	"Jobs from lkp-tests' job files.",
	"JOB IMPORT"
};

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

/* One import: what it was told and what it wrote. */
struct import {
	const char *path, *out_dir, *why;
	enum lkp_accel accel;
	int json;
	struct lkp_jobfile jf;
	struct strbuf js, jskip;	/* --json: the document, its skipped list */
	char **written;
	size_t nr_written, alloc_written, skipped;
};

/* The file's suite klab runs: 0; or -1 after one error line (a suite
 * klab cannot run says so before its file's syntax; with --json the
 * document says why too). */
static int import_suite(struct import *im, const char *buf, size_t len)
{
	const char *refused;
	char *reason;
	int held = error_hold(1), rc = lkp_jobfile_parse(&im->jf, im->path, buf, len);

	error_hold(held);
	if (rc < 0) {
		char *suite = lkp_jobfile_suite(buf, len);

		if ((refused = lkp_suite_refused(suite)))
			error("%s: klab cannot run LKP's %s: %s", im->path, suite, refused);
		else
			error("%s", error_last());
		free(suite);
		return -1;
	}
	refused = lkp_suite_refused(im->jf.suite);
	held = error_hold(1);
	rc = refused ? -1 : suite_get(im->jf.suite) ? 0 : -1;
	error_hold(held);
	if (!rc)
		return 0;
	/* said once for the whole file */
	reason = refused ? xstrfmt("klab cannot run LKP's %s: %s", im->jf.suite, refused) : xstrdup(error_last());
	if (im->json) {
		strbuf_addstr(&im->js, "{\"file\":");
		json_add_string(&im->js, im->path);
		strbuf_addstr(&im->js, ",\"suite\":");
		json_add_string(&im->js, im->jf.suite);
		strbuf_addf(&im->js, ",\"combinations\":%zu,\"refused\":", im->jf.nr_combos);
		json_add_string(&im->js, reason);
		strbuf_addstr(&im->js, ",\"jobs\":[],\"skipped\":[]}\n");
		fputs(im->js.buf, stdout);
	}
	error("%s: %s", im->path, reason);
	free(reason);
	return -1;
}

/* The first lines: the file, its suite, what has no klab equivalent. */
static void import_head(struct import *im)
{
	const struct lkp_jobfile *jf = &im->jf;
	const char *accel = im->accel == LKP_ACCEL_KVM ? "kvm" : "tcg";

	if (im->json) {
		strbuf_addstr(&im->js, "{\"file\":");
		json_add_string(&im->js, im->path);
		strbuf_addstr(&im->js, ",\"suite\":");
		json_add_string(&im->js, jf->suite);
		strbuf_addf(&im->js, ",\"accelerator\":\"%s\",\"combinations\":%zu,\"ignored\":", accel, jf->nr_combos);
		lkp_params_json(&im->js, &jf->ignored);
		strbuf_addstr(&im->js, ",\"jobs\":[");
		return;
	}
	print_line("%s: lkp-tests suite %s, %zu combination%s; accelerator %s (%s)", im->path, jf->suite, jf->nr_combos,
		   jf->nr_combos == 1 ? "" : "s", accel, im->why);
	for (size_t i = 0; i < jf->ignored.nr; i++)
		print_line("not mapped: %s: %s; klab has no equivalent", jf->ignored.v[i].key, jf->ignored.v[i].value);
}

/* Combination i that klab cannot run: said once, with the others. */
static void import_skip(struct import *im, size_t i)
{
	struct strbuf sb = STRBUF_INIT;
	const char *reason = error_last(), *at = strstr(reason, ".yaml:");

	/* job.c's "NAME.yaml:LINE: " names a file never written */
	if (at && (at = strstr(at, ": ")))
		reason = at + 2;
	combination_text(&sb, &im->jf.combos[i]);
	if (im->json) {
		strbuf_addf(&im->jskip, "%s{\"n\":%zu,\"combination\":", im->skipped ? "," : "", i + 1);
		lkp_params_json(&im->jskip, &im->jf.combos[i]);
		strbuf_addstr(&im->jskip, ",\"why\":");
		json_add_string(&im->jskip, reason);
		strbuf_addch(&im->jskip, '}');
	} else {
		print_line("skipped combination %zu (%s): klab cannot run it: %s", i + 1, sb.buf, reason);
	}
	strbuf_release(&sb);
	im->skipped++;
}

/* Combination i mapped, written and said.  -1 when it cannot be written. */
static int import_one(struct import *im, size_t i)
{
	struct lkp_map_in in = { .suite = im->jf.suite, .params = &im->jf.combos[i], .accel = im->accel,
				 .origin = im->path };
	struct lkp_klab_job j;
	char *dest;
	int held, rc;

	lkp_host_paths(&in);
	held = error_hold(1);
	rc = lkp_map(&j, &in);
	error_hold(held);
	if (rc < 0) {
		import_skip(im, i);
		return 0;
	}
	dest = job_path(im->out_dir, j.name, im->written, im->nr_written);
	if (write_file_atomic(dest, j.yaml, strlen(j.yaml)) < 0) {
		free(dest);
		lkp_klab_job_release(&j);
		return -1;
	}
	if (im->json) {
		strbuf_addstr(&im->js, im->nr_written ? ",{\"path\":" : "{\"path\":");
		json_add_string(&im->js, dest);
		strbuf_addstr(&im->js, ",\"suite\":");
		json_add_string(&im->js, j.suite);
		strbuf_addstr(&im->js, ",\"testcase\":");
		json_add_string(&im->js, j.testcase);
		strbuf_addstr(&im->js, ",\"combination\":");
		lkp_params_json(&im->js, &im->jf.combos[i]);
		strbuf_addstr(&im->js, ",\"mapping\":");
		lkp_table_json(&im->js, &j);
		strbuf_addch(&im->js, '}');
	} else {
		print_line("wrote %s", dest);
		lkp_print_table(&j, "  ");
	}
	ALLOC_GROW(im->written, im->nr_written + 1, im->alloc_written);
	im->written[im->nr_written++] = dest;
	lkp_klab_job_release(&j);
	return 0;
}

/* Every combination of the file read into buf.  An exit status. */
static int import_all(struct import *im, const char *buf, size_t len)
{
	if (import_suite(im, buf, len) < 0)
		return EXIT_FAIL;
	import_head(im);
	for (size_t i = 0; i < im->jf.nr_combos; i++)
		if (import_one(im, i) < 0)
			return EXIT_FAIL;
	if (im->json) {
		strbuf_addf(&im->js, "],\"skipped\":[%s]}\n", im->jskip.buf);
		fputs(im->js.buf, stdout);
	}
	if (!im->nr_written) {
		error("%s: none of its %zu combination%s is a job klab can run", im->path, im->jf.nr_combos,
		      im->jf.nr_combos == 1 ? "" : "s");
		return EXIT_FAIL;
	}
	if (!im->json)
		print_line("%zu job%s written, %zu combination%s skipped", im->nr_written, im->nr_written == 1 ? "" : "s",
			   im->skipped, im->skipped == 1 ? "" : "s");
	return EXIT_OK;
}

static int job_import(int argc, char **argv, const struct global_opts *g)
{
	const char *accel_arg = NULL;
	struct import im = { .out_dir = ".", .js = STRBUF_INIT, .jskip = STRBUF_INIT };
	char *buf = NULL;
	size_t len;
	struct stat st;
	int ret = EXIT_FAIL;
	struct opt opts[] = {
		OPT_STRING(0, "out-dir", &im.out_dir, "DIR", "where the jobs go (default: the current directory)"),
		OPT_STRING(0, "accel", &accel_arg, "auto|kvm|tcg", "the accelerator the runtime is scaled for"),
		OPT_BOOL(0, "json", &im.json, "one JSON document: the jobs, their tables, what was skipped"),
		OPT_END()
	};

	(void)g;
	argc = parse_options(argc, argv, &import_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc != 1)
		return usage_error(&import_usage, argc ? "job import takes one LKP job file (got '%s' too)"
						       : "job import needs an LKP job file%s", argc ? argv[1] : "");
	im.path = argv[0];
	if (check_no_controls("LKP-JOB", im.path) < 0 || check_no_controls("--out-dir", im.out_dir) < 0 ||
	    lkp_accel_option(accel_arg, &im.accel, &im.why) < 0)
		return EXIT_USAGE;
	if (stat(im.out_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		error("--out-dir '%s': not a directory", im.out_dir);
		return EXIT_FAIL;
	}
	if (read_file(im.path, LKP_MAX_JOBFILE, &buf, &len) == 0)
		ret = import_all(&im, buf, len);
	strbuf_release(&im.js);
	strbuf_release(&im.jskip);
	strings_free(im.written, im.nr_written);
	lkp_jobfile_release(&im.jf);
	free(buf);
	return ret;
}

int cmd_job(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "import", job_import, NULL },
	};

	return run_subcommand(&job_usage, subs, ARRAY_SIZE(subs), argc, argv, g);
}
