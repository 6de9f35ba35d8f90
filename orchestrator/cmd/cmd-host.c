/* klab host: the hypervisors a lab places its guests on (add, list,
 * remove).  What can be checked is checked when a host is added. */
#include "cmd/klab.h"
#include "lab/db.h"
#include "lab/lab.h"
#include "guest/hostcheck.h"
#include "guest/topology.h"
#include "guest/vm.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const add_forms[] = { "NAME URI [--cpus] [--max-guests] [--accel]", NULL };
static const struct opt_usage add_usage = {
	"host add", add_forms,
	"Register the libvirt host at URI (qemu:///system, qemu+ssh://HOST/system, ...)\n"
	"as NAME (1-64 of [A-Za-z0-9._-]); it is connected to and checked now.",
	"HOSTS"
};
static const struct opt_usage list_usage = {
	"host list", NULL,
	"The hosts, whether each answers and how many klab guests run on its CPUs.",
	"HOSTS"
};
static const char *const remove_forms[] = { "NAME", NULL };
static const struct opt_usage remove_usage = {
	"host remove", remove_forms,
	"Stop placing guests on host NAME; its boots keep their history.",
	"HOSTS"
};
static const char *const check_forms[] = { "[NAME] [--json]", NULL };
static const struct opt_usage check_usage = {
	"host check", check_forms,
	"What a host offers a performance lab, one fact a line with its consequence:\n"
	"whether KVM really runs guests, the PMU, NUMA nodes and distances, free huge\n"
	"pages, CPU governor and turbo, SMT, isolated CPUs, THP, memory.  Without NAME\n"
	"(or a local host), this machine's /proc and /sys; a remote host shows what its\n"
	"libvirt capabilities say.",
	"HOSTS"
};
static const struct opt_usage host_usage = {
	"host", NULL,
	"The libvirt hosts klab places guests on.  With hosts registered, 'klab run' and\n"
	"job bisections (without --uri) pick one whose CPUs fit the job's guest.",
	"HOSTS"
};

/* A URI as printed: credentials cut (strbuf_add_url_redacted).  Valid
 * until the next call. */
static const char *shown_uri(const char *uri)
{
	static struct strbuf sb = STRBUF_INIT;

	strbuf_reset(&sb);
	strbuf_add_url_redacted(&sb, uri, 1);
	return sb.buf;
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
	struct db_host h = { 0 };
	struct host_topology topo = { 0 };
	struct vm_conn vc = { 0 };
	struct lab lab;
	enum accel_choice choice;
	enum accel accel;
	const char *why;
	unsigned long max = 1;
	const char *cpus = NULL, *accel_arg = "auto";
	char *caps = NULL;
	int ret = EXIT_FAIL, lab_opened = 0, connected = 0;
	int64_t id;
	struct opt opts[] = {
		OPT_STRING(0, "cpus", &cpus, "LIST", "the host CPUs klab's guests may use, e.g. 2-31 (default all)"),
		OPT_UINT(0, "max-guests", &max, "N", "klab guests at once on this host (default 1)", 1, 1024),
		OPT_STRING(0, "accel", &accel_arg, "auto|kvm|tcg", "the accelerator (default auto: the lab's choice)"),
		OPT_END()
	};

	argc = parse_options(argc, argv, &add_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc != 2)
		return usage_error(&add_usage, "add takes a NAME and a URI");
	/* the row points into argv: db_host_add copies, nothing frees it */
	h.name = argv[0];
	h.uri = argv[1];
	h.cpus = (char *)cpus;
	h.accel = (char *)accel_arg;
	h.max_guests = (unsigned)max;
	if (!valid_host_name(h.name))
		return usage_error(&add_usage, "host name: 1-64 of [A-Za-z0-9._-], starting with a letter or digit");
	if (check_no_controls("URI", h.uri) < 0)
		return EXIT_USAGE;
	if (!*h.uri || strchr(h.uri, ' '))
		return usage_error(&add_usage, "URI: a libvirt URI such as qemu:///system");
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
	if (vm_connect_timed(&vc, h.uri, HOST_ANSWER_S, 1) < 0)
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
	struct opt opts[] = { OPT_END() };

	argc = parse_options(argc, argv, &list_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc)
		return usage_error(&list_usage, "list takes no arguments (got '%s')", argv[0]);
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
		if (vm_connect_timed(&vc, hosts[i].uri, HOST_ANSWER_S, 0) == 0) {
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
	struct opt opts[] = { OPT_END() };

	argc = parse_options(argc, argv, &remove_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc != 1)
		return usage_error(&remove_usage, "remove takes one NAME");
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	rc = db_host_find(lab.db, argv[0], &h);
	if (rc == 0)
		error("no host named '%s' (see 'klab host list')", argv[0]);
	if (rc <= 0)
		goto out;
	if (db_host_boots(lab.db, h.id, &boots) == 0 && db_host_remove(lab.db, argv[0]) > 0) {
		printf("host %s removed; its %lld boot%s keep their history\n", h.name, (long long)boots,
		       boots == 1 ? "" : "s");
		ret = EXIT_OK;
	}
	db_host_release(&h);
out:
	lab_close(&lab);
	return ret;
}

/* The facts of the host at uri, local (this machine's /proc and /sys,
 * without asking libvirtd: a hung or stopped one must not keep the facts
 * from being said) or remote (its capabilities). */
static int check_facts(struct host_check *hc, const char *uri)
{
	struct host_topology topo = { 0 };
	struct vm_conn vc;
	char *caps = NULL;
	int connected, have_topo = 0;

	if (!vm_uri_is_remote(uri)) {
		host_check_local(hc, "", NULL);
		return 0;
	}
	connected = vm_connect_timed(&vc, uri, HOST_ANSWER_S, 0) == 0;

	if (connected && vm_capabilities(&vc, &caps) == 0 && topology_parse(&topo, caps, strlen(caps)) == 0)
		have_topo = 1;
	free(caps);
	if (connected)
		vm_disconnect(&vc);
	if (have_topo) {
		host_check_remote(hc, &topo);
	} else {
		topology_release(&topo);
		return error("cannot read the capabilities of '%s': is its libvirtd reachable? "
			     "('klab host list' says whether it answers)", shown_uri(uri));
	}
	topology_release(&topo);
	return 0;
}

static int host_check(int argc, char **argv, const struct global_opts *g)
{
	struct host_check hc = { 0 };
	struct strbuf out = STRBUF_INIT;
	struct db_host h = { 0 };
	struct lab lab;
	const char *uri, *name = "this machine";
	int json = 0, ret = EXIT_FAIL, found = 0;
	struct opt opts[] = {
		OPT_BOOL(0, "json", &json, "one JSON document instead of lines"),
		OPT_END()
	};

	argc = parse_options(argc, argv, &check_usage, opts, 0);
	if (argc < 0)
		return parse_options_exit(argc);
	if (argc > 1)
		return usage_error(&check_usage, "check takes at most one NAME");
	if (open_lab(g, &lab) < 0)
		return EXIT_FAIL;
	uri = lab.libvirt_uri;
	if (argc == 1) {
		int rc = db_host_find(lab.db, argv[0], &h);

		if (rc == 0)
			error("no host named '%s' (see 'klab host list')", argv[0]);
		if (rc <= 0)
			goto out;
		found = 1;
		uri = h.uri;
		name = h.name;
	}
	if (check_facts(&hc, uri) < 0)
		goto out;
	if (json) {
		host_check_json(&out, name, &hc);
	} else {
		strbuf_addf(&out, "host %s (%s):\n", name, shown_uri(uri));
		host_check_format(&out, &hc);
	}
	fputs(out.buf, stdout);
	ret = EXIT_OK;
out:
	strbuf_release(&out);
	host_check_release(&hc);
	if (found)
		db_host_release(&h);
	lab_close(&lab);
	return ret;
}

int cmd_host(int argc, char **argv, const struct global_opts *g)
{
	static const struct subcommand subs[] = {
		{ "add", host_add, NULL },
		{ "check", host_check, NULL },
		{ "list", host_list, NULL },
		{ "remove", host_remove, NULL },
	};

	return run_subcommand(&host_usage, subs, ARRAY_SIZE(subs), argc, argv, g);
}
