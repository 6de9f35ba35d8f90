/* klab host: the hypervisors a lab places its guests on (add, list,
 * remove).  What can be checked is checked when a host is added. */
#include "cmd/klab.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "guest/topology.h"
#include "guest/vm.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const host_usage[] = {
	"usage: klab host add NAME URI [--cpus LIST] [--max-guests N] [--accel auto|kvm|tcg]",
	"   or: klab host list",
	"   or: klab host remove NAME",
	"",
	"Register the libvirt hosts klab places guests on.  With hosts registered,",
	"'klab run' and job bisections (without --uri) pick a host whose CPUs fit",
	"the job's guest and wait while every host is full; a bisection keeps all",
	"its boots on one host.  Without hosts, klab uses libvirt_uri as before.",
	"",
	"  NAME              1-64 of [A-Za-z0-9._-], starting with a letter or digit",
	"  URI               a libvirt URI: qemu:///system, qemu+ssh://HOST/system,",
	"                    qemu+tcp://HOST[:PORT]/system; a URI with a server part",
	"                    gets kernels and initramfs through the storage pool",
	"                    'klab' (/var/lib/libvirt/images/klab on that host)",
	"  --cpus LIST       the host CPUs klab's guests may use, e.g. 2-31",
	"                    (default: all); every CPU must exist on the host",
	"  --max-guests N    klab guests at once on this host (default 1)",
	"  --accel A         auto (default: the lab's choice), kvm or tcg",
	"",
	"'list' connects to each host to say whether it answers and how many klab",
	"guests run on its CPUs.  'remove' keeps the host's boots and their",
	"history; placement no longer uses it.",
	NULL
};

enum { OPT_CPUS = 3000, OPT_MAX_GUESTS, OPT_ACCEL };

/* A URI as printed: credentials cut (strbuf_add_url_redacted).  Valid
 * until the next call. */
static const char *shown_uri(const char *uri)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	strbuf_add_url_redacted(&sb, uri, 1);
	return sb.buf;
}

static int usage_error(const char *msg)
{
	error("%s (see 'klab host --help')", msg);
	return EXIT_USAGE;
}

static int valid_host_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 64 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
			      (s[0] >= '0' && s[0] <= '9')))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
			return 0;
	return 1;
}

/* Every CPU of the list exists on the host. */
static int check_cpus(const char *list, const struct host_topology *t, const char *uri)
{
	unsigned char *set = NULL;
	size_t n = 0, j = 0;
	int ret = 0;

	if (cpulist_parse(list, &set, &n) < 0) {
		free(set);
		return error("--cpus '%s': not a CPU list (e.g. 0-3,8)", list);
	}
	for (size_t cpu = 0; cpu < n && !ret; cpu++) {
		if (!set[cpu])
			continue;
		while (j < t->nr_cpus && t->cpus[j].id < (int)cpu)
			j++;
		if (j == t->nr_cpus || t->cpus[j].id != (int)cpu)
			ret = error("--cpus '%s': CPU %zu does not exist on %s (it has %zu CPUs)", list, cpu, uri,
				    t->nr_cpus);
	}
	if (!ret) {
		size_t any = 0;
		for (size_t cpu = 0; cpu < n; cpu++)
			any += set[cpu];
		if (!any)
			ret = error("--cpus '%s': names no CPU", list);
	}
	free(set);
	return ret;
}

static int host_add(int argc, char **argv, const struct global_opts *g)
{
	static const struct option opts[] = {
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "max-guests", required_argument, NULL, OPT_MAX_GUESTS },
		{ "accel", required_argument, NULL, OPT_ACCEL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct db_host h = { 0 };
	struct host_topology topo = { 0 };
	struct vm_conn vc = { 0 };
	struct lab lab;
	enum accel_choice choice;
	enum accel accel;
	const char *why;
	unsigned long max = 1;
	char *caps = NULL;
	int c, ret = EXIT_FAIL, lab_opened = 0, connected = 0;
	int64_t id;

	h.accel = "auto";
	/* getopt permutes: NAME and URI may come before or after options */
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_CPUS:
			h.cpus = optarg;
			break;
		case OPT_MAX_GUESTS:
			if (parse_uint(optarg, 1024, &max) < 0 || !max)
				return usage_error("--max-guests takes a number from 1 to 1024");
			break;
		case OPT_ACCEL:
			if (accel_choice_parse(optarg, &choice) < 0)
				return EXIT_USAGE;
			h.accel = optarg;
			break;
		case 'h':
			print_usage(host_usage, 0);
			return EXIT_OK;
		default:
			return usage_error("unknown option");
		}
	}
	if (argc - optind != 2)
		return usage_error("add takes a NAME and a URI");
	h.name = argv[optind];
	h.uri = argv[optind + 1];
	h.max_guests = (unsigned)max;
	if (!valid_host_name(h.name))
		return usage_error("host name: 1-64 of [A-Za-z0-9._-], starting with a letter or digit");
	if (check_no_controls("URI", h.uri) < 0)
		return EXIT_USAGE;
	if (!*h.uri || strchr(h.uri, ' '))
		return usage_error("URI: a libvirt URI such as qemu:///system");
	if (h.cpus) {
		unsigned char *set = NULL;
		size_t n;
		int bad = cpulist_parse(h.cpus, &set, &n) < 0;
		free(set);
		if (bad)	/* cpulist_parse said why */
			return EXIT_USAGE;
	}
	if (accel_choice_parse(h.accel, &choice) < 0)
		return EXIT_USAGE;

	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	lab_opened = 1;
	if (vm_connect(&vc, h.uri) < 0)
		goto out;
	connected = 1;
	if (vm_capabilities(&vc, &caps) < 0 || topology_parse(&topo, caps, strlen(caps)) < 0)
		goto out;
	if (h.cpus && check_cpus(h.cpus, &topo, h.uri) < 0)
		goto out;
	if (vm_choose_accel(&topo, choice, &accel, &why) < 0)
		goto out;
	if (db_host_add(lab.db, &h, &id) < 0)
		goto out;
	printf("host %s: %s (%s), %zu CPUs in %zu NUMA node%s, klab uses %s, up to %u guest%s, accelerator %s (%s)%s\n",
	       h.name, shown_uri(h.uri), vc.hostname, topo.nr_cpus, topo.nr_nodes, topo.nr_nodes == 1 ? "" : "s",
	       h.cpus ? h.cpus : "all", h.max_guests, h.max_guests == 1 ? "" : "s", accel_name(accel), why,
	       vm_uri_is_remote(h.uri) ? "; remote: images go through storage pool 'klab'" : "");
	ret = EXIT_OK;
out:
	free(caps);
	topology_release(&topo);
	if (connected)
		vm_disconnect(&vc);
	if (lab_opened)
		lab_close(&lab);
	return ret;
}

static int host_list(int argc, char **argv, const struct global_opts *g)
{
	struct db_host *hosts = NULL;
	struct lab lab;
	size_t nr = 0;
	int ret = EXIT_FAIL;

	if (argc > 1) {
		if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
			print_usage(host_usage, 0);
			return EXIT_OK;
		}
		return usage_error("list takes no arguments");
	}
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	if (db_hosts_list(lab.db, &hosts, &nr) < 0)
		goto out;
	if (!nr) {
		printf("no hosts: guests run at libvirt_uri (%s)\n", lab.libvirt_uri);
		ret = EXIT_OK;
		goto out;
	}
	printf("%-16s %-36s %-10s %-5s %-5s %-9s %s\n", "NAME", "URI", "CPUS", "MAX", "ACCEL", "ANSWERS", "GUESTS");
	for (size_t i = 0; i < nr; i++) {
		struct vm_conn vc;
		unsigned char *within = NULL, *busy = NULL;
		size_t nr_within = 0, nr_busy = 0;
		int count = -1, up = 0;

		if (hosts[i].cpus)
			cpulist_parse(hosts[i].cpus, &within, &nr_within);
		if (vm_connect(&vc, hosts[i].uri) == 0) {
			up = 1;
			if (vm_klab_guests(&vc, within, nr_within, &busy, &nr_busy, &count) < 0)
				count = -1;
			vm_disconnect(&vc);
		}
		printf("%-16s %-36s %-10s %-5u %-5s %-9s ", hosts[i].name, shown_uri(hosts[i].uri),
		       hosts[i].cpus ? hosts[i].cpus : "all", hosts[i].max_guests, hosts[i].accel, up ? "yes" : "no");
		if (count >= 0)
			printf("%d\n", count);
		else
			printf("?\n");
		free(within);
		free(busy);
	}
	ret = EXIT_OK;
out:
	db_hosts_free(hosts, nr);
	lab_close(&lab);
	return ret;
}

static int host_remove(int argc, char **argv, const struct global_opts *g)
{
	struct db_host h;
	struct lab lab;
	int64_t boots = 0;
	int rc, ret = EXIT_FAIL;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_usage(host_usage, 0);
		return EXIT_OK;
	}
	if (argc != 2)
		return usage_error("remove takes one NAME");
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	rc = db_host_find(lab.db, argv[1], &h);
	if (rc == 0)
		error("no host named '%s' (see 'klab host list')", argv[1]);
	if (rc <= 0)
		goto out;
	if (db_host_boots(lab.db, h.id, &boots) == 0 && db_host_remove(lab.db, argv[1]) > 0) {
		printf("host %s removed; its %lld boot%s keep their history\n", h.name, (long long)boots,
		       boots == 1 ? "" : "s");
		ret = EXIT_OK;
	}
	db_host_release(&h);
out:
	lab_close(&lab);
	return ret;
}

int cmd_host(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "add", host_add },
		{ "list", host_list },
		{ "remove", host_remove },
	};

	return run_subcommand("host", subs, ARRAY_SIZE(subs), host_usage, argc, argv, g);
}
