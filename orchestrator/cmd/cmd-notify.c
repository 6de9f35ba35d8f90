/* klab notify: test / list / flush / send.  Mail and webhook notices of
 * finished bisections (notify.c does the work). */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "report/notify.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const notify_usage[] = {
	"usage: klab notify test [--mail] [--webhook]",
	"   or: klab notify list",
	"   or: klab notify flush [--force]",
	"   or: klab notify send BISECTION_ID",
	"",
	"Targets come from klab.conf: notify_mail_to (with notify_mail_from,",
	"smtp_url, smtp_user, smtp_password_file, smtp_tls) and notify_webhook.",
	"A notice is recorded before it is sent; one that cannot be delivered",
	"stays pending and is retried after 1 min, 5 min, 30 min, 2 h, 6 h,",
	"12 h and 24 h, then marked failed.",
	"",
	"test    send a test message now to every configured target (or only",
	"        --mail / --webhook); exit 1 unless each one got it",
	"list    one line per notice: id, kind, target, state, attempts, last",
	"        error, next try",
	"flush   retry the pending notices that are due (what cron or a worker",
	"        runs); --force: every pending notice now.  Exit 1 when one of",
	"        them still failed",
	"send    compose the report of a finished bisection and send it (again);",
	"        exit 0 once it is recorded, even when delivery has to wait",
	NULL
};

static int usage_error(const char *msg)
{
	error("%s (see 'klab notify --help')", msg);
	return EXIT_USAGE;
}

/* The options of test and flush: each row but --help sets its flag
 * itself; no operands (`no_args` says so).  -1 to go on, else the exit
 * code. */
static int parse_flags(int argc, char **argv, const struct option *opts, const char *no_args)
{
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 0)
			continue;
		return help_or_usage(c, notify_usage, "notify");
	}
	if (optind < argc)
		return usage_error(no_args);
	return -1;
}

static int no_target(const struct lab *lab)
{
	return error("no notification target: set notify_mail_to and/or notify_webhook in %s", lab->config_path);
}

static int cmd_test(int argc, char **argv, const struct global_opts *g)
{
	int mail = 0, webhook = 0, ret;
	const struct option opts[] = {
		{ "mail", no_argument, &mail, 1 },
		{ "webhook", no_argument, &webhook, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lab lab;

	if ((ret = parse_flags(argc, argv, opts, "notify test takes no arguments")) >= 0)
		return ret;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (!mail && !webhook) {
		mail = lab.notify_mail_to != NULL;
		webhook = lab.notify_webhook != NULL;
		if (!mail && !webhook) {
			no_target(&lab);
			lab_close(&lab);
			return EXIT_FAIL;
		}
	}
	ret = notify_test(&lab, mail, webhook) < 0 ? EXIT_FAIL : EXIT_OK;
	lab_close(&lab);
	return ret;
}

/* Untrusted text (errors from servers) on one line. */
static void print_one_line(const char *s)
{
	for (; s && *s; s++)
		putchar((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
}

static int cmd_list(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	struct db_notification *n;
	size_t nr;

	if (wants_help(argc, argv, notify_usage))
		return EXIT_OK;
	if (argc > 1)
		return usage_error("notify list takes no arguments");
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (db_notifications_list(lab.db, &n, &nr) < 0) {
		lab_close(&lab);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < nr; i++) {
		struct strbuf what = STRBUF_INIT;

		notify_describe_target(&what, n[i].kind, n[i].target);
		printf("%lld\t%s\t", (long long)n[i].id, n[i].kind);
		print_one_line(what.buf);
		strbuf_release(&what);
		printf("\t%s\t%d\t", n[i].state, n[i].attempts);
		print_one_line(n[i].last_error ? n[i].last_error : "-");
		if (!strcmp(n[i].state, "pending") && n[i].next_try_at) {
			int64_t wait = n[i].next_try_at - now_s();
			char dur[32];
			printf("\t%s", wait > 0 ? "next try in " : "due now");
			if (wait > 0)
				printf("%s", fmt_duration(wait * 1000, dur, sizeof(dur)));
		}
		printf("\n");
	}
	db_notifications_free(n, nr);
	lab_close(&lab);
	return EXIT_OK;
}

static int cmd_flush(int argc, char **argv, const struct global_opts *g)
{
	int force = 0, failed;
	const struct option opts[] = {
		{ "force", no_argument, &force, 1 },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lab lab;

	if ((failed = parse_flags(argc, argv, opts, "notify flush takes no arguments")) >= 0)
		return failed;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	failed = notify_flush(&lab, force);
	lab_close(&lab);
	return failed == 0 ? EXIT_OK : EXIT_FAIL;
}

static int cmd_send(int argc, char **argv, const struct global_opts *g)
{
	struct lab lab;
	unsigned long id;
	int ret;

	if (wants_help(argc, argv, notify_usage))
		return EXIT_OK;
	if (argc != 2)
		return usage_error("notify send takes a bisection id");
	if (parse_uint(argv[1], 1UL << 53, &id) < 0 || !id) {
		error("'%s' is not a bisection id (see 'klab bisect list')", argv[1]);
		return EXIT_USAGE;
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (!lab.notify_mail_to && !lab.notify_webhook) {
		no_target(&lab);
		lab_close(&lab);
		return EXIT_FAIL;
	}
	/* a notice that is recorded but not delivered is not a failure here:
	 * it is pending, and 'klab notify flush' sends it */
	ret = notify_bisection(&lab, (int64_t)id) < 0 ? EXIT_FAIL : EXIT_OK;
	lab_close(&lab);
	return ret;
}

int cmd_notify(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "test", cmd_test },
		{ "list", cmd_list },
		{ "flush", cmd_flush },
		{ "send", cmd_send },
	};

	return run_subcommand("notify", subs, ARRAY_SIZE(subs), notify_usage, argc, argv, g);
}
