/* klab notify: test / list / flush / send.  Mail and webhook notices of
 * finished bisections (notify.c does the work). */
#include "cmd/klab.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "report/notify.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const test_forms[] = { "[--mail] [--webhook]", NULL };
static const struct opt_usage test_usage = {
	"notify test", test_forms,
	"Send a test message now to every configured target (or only --mail or\n"
	"--webhook); exit 1 unless each one got it.",
	"NOTIFY"
};
static const struct opt_usage list_usage = {
	"notify list", NULL,
	"One line per notice: id, kind, target, state, attempts, last error, next try.",
	"NOTIFY"
};
static const char *const flush_forms[] = { "[--force]", NULL };
static const struct opt_usage flush_usage = {
	"notify flush", flush_forms,
	"Retry the pending notices that are due (what cron or a worker runs); exit 1\n"
	"when one of them still failed.",
	"NOTIFY"
};
static const char *const send_forms[] = { "BISECTION_ID", NULL };
static const struct opt_usage send_usage = {
	"notify send", send_forms,
	"Compose the report of a finished bisection and send it (again); exit 0 once it\n"
	"is recorded, even when delivery has to wait.",
	"NOTIFY"
};
static const struct opt_usage notify_usage = {
	"notify", NULL,
	"Mail and webhook notices of finished bisections, to the targets klab.conf names\n"
	"(notify_mail_to, notify_webhook).  A notice is recorded before it is sent; one\n"
	"not delivered is retried after 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h.",
	"NOTIFY"
};

/* Parse options (no operands): -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, const struct opt_usage *u, const struct opt *opts)
{
	argc = parse_options(argc, argv, u, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(u, "%s takes no arguments (got '%s')", u->name, argv[0]);
	return -1;
}

static int no_target(const struct lab *lab)
{
	return error("no notification target: set notify_mail_to and/or notify_webhook in %s", lab->config_path);
}

static int cmd_test(int argc, char **argv, const struct global_opts *g)
{
	int mail = 0, webhook = 0, ret;
	struct opt opts[] = {
		OPT_BOOL(0, "mail", &mail, "only the mail targets"),
		OPT_BOOL(0, "webhook", &webhook, "only the webhook"),
		OPT_END()
	};
	struct lab lab;

	if ((ret = parse_flags(argc, argv, &test_usage, opts)) >= 0)
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
	struct opt opts[] = { OPT_END() };
	int ret;

	if ((ret = parse_flags(argc, argv, &list_usage, opts)) >= 0)
		return ret;
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
	struct opt opts[] = {
		OPT_BOOL(0, "force", &force, "every pending notice now, due or not"),
		OPT_END()
	};
	struct lab lab;

	if ((failed = parse_flags(argc, argv, &flush_usage, opts)) >= 0)
		return failed;
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	failed = notify_flush(&lab, force);
	lab_close(&lab);
	return failed == 0 ? EXIT_OK : EXIT_FAIL;
}

static int cmd_send(int argc, char **argv, const struct global_opts *g)
{
	struct bisection b;
	struct lab lab;
	unsigned long id;
	int ret;
	struct opt opts[] = { OPT_END() };

	argc = parse_options(argc, argv, &send_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc != 1)
		return usage_error(&send_usage, "notify send takes a bisection id");
	ret = opt_number(argv[0], 1, 1UL << 53, &id);
	if (ret < 0) {
		error(ret == -2 ? "bisection id %s is out of range (see 'klab bisect list')"
				: "'%s' is not a bisection id (see 'klab bisect list')", argv[0]);
		return EXIT_USAGE;
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	/* the bisection first: a missing one is the mistake to name */
	if (db_bisection_load(lab.db, (int64_t)id, &b) < 0) {
		lab_close(&lab);
		return EXIT_FAIL;
	}
	bisection_release(&b);
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
		{ "test", cmd_test, NULL },
		{ "list", cmd_list, NULL },
		{ "flush", cmd_flush, NULL },
		{ "send", cmd_send, NULL },
	};

	return run_subcommand(&notify_usage, subs, ARRAY_SIZE(subs), argc, argv, g);
}
