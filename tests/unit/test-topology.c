/* Unit tests of host topology parsing (real and synthetic libvirt
 * capabilities in tests/data/caps) and guest pinning plans, checked
 * against the .plan files in tests/data/topology; KLAB_REGENERATE=1 rewrites those. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libxml/parser.h>

#include "guest/topology.h"
#include "guest/vm.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "helpers.h"

#define SMALL "small-1socket-2cpu-1node"
#define MEDIUM "medium-2socket-32cpu-4node"
#define BIG "big-2socket-256cpu-8node"

/* ---- helpers ---------------------------------------------------------- */

static unsigned char *cpus(const char *list, size_t *n)
{
	unsigned char *set;

	assert_int_equal(cpulist_parse(list, &set, n), 0);
	return set;
}

static int sibling_of(const struct host_topology *t, int a, int b)
{
	const struct host_cpu *x = NULL, *y = NULL;

	for (size_t i = 0; i < t->nr_cpus; i++) {
		if (t->cpus[i].id == a)
			x = &t->cpus[i];
		if (t->cpus[i].id == b)
			y = &t->cpus[i];
	}
	assert_non_null(x);
	assert_non_null(y);
	return x->node == y->node && x->socket == y->socket && x->die == y->die && x->core == y->core;
}

static int node_of(const struct host_topology *t, int cpu)
{
	for (size_t i = 0; i < t->nr_cpus; i++)
		if (t->cpus[i].id == cpu)
			return t->cpus[i].node;
	fail_msg("no host CPU %d", cpu);
	return -1;
}

/* ---- capabilities ----------------------------------------------------- */

static void test_topology__parses_this_small_host(void **state)
{
	struct host_topology t;

	load_host(&t, SMALL);
	assert_string_equal(t.arch, "x86_64");
	assert_int_equal(t.has_vmx_or_svm, 0);	/* the real host: no vmx/svm flag */
	assert_int_equal(t.nr_cpus, 2);
	assert_int_equal(t.nr_nodes, 1);
	assert_int_equal(t.nodes[0].id, 0);
	assert_int_equal(t.nodes[0].memory_kb, 10315552);
	assert_int_equal(t.nodes[0].free_2m_pages, 0);
	assert_int_equal(t.cpus[1].id, 1);
	assert_int_equal(t.cpus[1].core, 1);
	assert_int_equal(t.cpus[1].node, 0);
	assert_string_equal(t.cpus[1].siblings, "1");
	topology_release(&t);
}

static void test_topology__parses_big_host_siblings_nodes_and_pages(void **state)
{
	struct host_topology t;

	load_host(&t, BIG);
	assert_int_equal(t.has_vmx_or_svm, 1);	/* svm */
	assert_int_equal(t.nr_cpus, 256);
	assert_int_equal(t.nr_nodes, 8);
	for (size_t i = 0; i < t.nr_cpus; i++)
		assert_int_equal(t.cpus[i].id, (int)i);	/* sorted by id */
	assert_string_equal(t.cpus[0].siblings, "0,128");
	assert_string_equal(t.cpus[128].siblings, "0,128");
	assert_int_equal(t.cpus[128].core, 0);
	assert_int_equal(t.cpus[128].node, 0);
	assert_int_equal(t.cpus[64].socket, 1);
	assert_int_equal(t.cpus[64].node, 4);
	assert_int_equal(t.cpus[255].node, 7);
	assert_int_equal(t.nodes[7].id, 7);
	assert_int_equal(t.nodes[1].memory_kb, 131596288);
	assert_int_equal(t.nodes[1].free_2m_pages, 1024);
	assert_int_equal(t.nodes[1].free_1g_pages, 0);
	topology_release(&t);
}

static void test_topology__parses_four_node_host(void **state)
{
	struct host_topology t;

	load_host(&t, MEDIUM);
	assert_int_equal(t.has_vmx_or_svm, 1);	/* vmx */
	assert_int_equal(t.nr_cpus, 32);
	assert_int_equal(t.nr_nodes, 4);
	assert_int_equal(t.cpus[16].node, 0);
	assert_string_equal(t.cpus[16].siblings, "0,16");
	assert_int_equal(t.cpus[8].node, 2);
	assert_int_equal(t.nodes[2].free_1g_pages, 2);
	assert_int_equal(t.nodes[2].free_2m_pages, 512);
	topology_release(&t);
}

#define CAPS_HEAD "<capabilities><host><cpu><arch>x86_64</arch></cpu><topology><cells num='1'>"
#define CAPS_TAIL "</cells></topology></host></capabilities>"

static void test_topology__rejects_malformed_capabilities(void **state)
{
	static const char *const bad[] = {
		"",
		"not xml at all",
		"<capabilities><host><cpu><arch>x86_64</arch></cpu></host>",	/* unterminated */
		"<capabilities><host><cpu><arch>x86_64</arch></cpu></host></capabilities>",	/* no topology */
		"<domain><host/></domain>",
		"<capabilities><host><topology><cells/></topology></host></capabilities>",	/* no arch */
		CAPS_HEAD CAPS_TAIL,	/* no cell */
		CAPS_HEAD "<cell id='0'><memory unit='KiB'>1024</memory></cell>" CAPS_TAIL,	/* no CPU */
		CAPS_HEAD "<cell><cpus><cpu id='0'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='-1'><cpus><cpu id='0'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><cpus><cpu id='x'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><cpus><cpu id=' 1'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><cpus><cpu id='65536'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><cpus><cpu id='0' core_id='z'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><cpus><cpu id='0' siblings='0,,1'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><cpus><cpu id='0'/><cpu id='0'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><cpus><cpu id='0'/></cpus></cell><cell id='0'><cpus><cpu id='1'/></cpus></cell>"
			CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><memory unit='MiB'>1024</memory><cpus><cpu id='0'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><memory unit='KiB'>lots</memory><cpus><cpu id='0'/></cpus></cell>" CAPS_TAIL,
		CAPS_HEAD "<cell id='0'><pages unit='KiB' size='2048'>-1</pages><cpus><cpu id='0'/></cpus></cell>"
			CAPS_TAIL,
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct host_topology t;
		int ret;

		capture_stderr();
		ret = topology_parse(&t, bad[i], strlen(bad[i]));
		free(captured_stderr());
		if (ret != -1)
			fail_msg("accepted malformed capabilities #%zu: %s", i, bad[i]);
		assert_null(t.cpus);
		assert_null(t.arch);
	}
}

static void test_topology__minimal_capabilities_take_defaults(void **state)
{
	static const char xml[] = CAPS_HEAD "<cell id='3'><cpus><cpu id='5'/></cpus></cell>" CAPS_TAIL;
	struct host_topology t;

	assert_int_equal(topology_parse(&t, xml, strlen(xml)), 0);
	assert_int_equal(t.nr_cpus, 1);
	assert_int_equal(t.cpus[0].node, 3);
	assert_int_equal(t.cpus[0].core, -1);
	assert_int_equal(t.cpus[0].die, 0);
	assert_string_equal(t.cpus[0].siblings, "5");
	assert_int_equal(t.nodes[0].memory_kb, 0);
	topology_release(&t);
}

static void test_topology__doctype_and_entities_are_refused(void **state)
{
	static const char *const bad[] = {
		/* billion laughs */
		"<?xml version='1.0'?><!DOCTYPE l [<!ENTITY a 'aaaaaaaaaa'>"
		"<!ENTITY b '&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;'><!ENTITY c '&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;'>"
		"<!ENTITY d '&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;'><!ENTITY e '&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;'>"
		"<!ENTITY f '&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;'><!ENTITY g '&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;'>]>"
		"<capabilities><host><cpu><arch>&g;</arch></cpu></host></capabilities>",
		/* an external entity must not be read (a FIFO or /dev/zero would hang us) */
		"<?xml version='1.0'?><!DOCTYPE c [<!ENTITY x SYSTEM 'file:///dev/zero'>]>"
		"<capabilities><host><cpu><arch>&x;</arch></cpu></host></capabilities>",
		"<!DOCTYPE capabilities SYSTEM 'http://192.0.2.1/caps.dtd'>" CAPS_HEAD
		"<cell id='0'><cpus><cpu id='0'/></cpus></cell>" CAPS_TAIL,
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct host_topology t;

		capture_stderr();
		assert_int_equal(topology_parse(&t, bad[i], strlen(bad[i])), -1);
		free(captured_stderr());
	}
}

static void test_topology__oversized_capabilities_refused_unread(void **state)
{
	struct host_topology t;
	char *msg;

	capture_stderr();
	/* the length is checked before the text is touched */
	assert_int_equal(topology_parse(&t, "<capabilities/>", (size_t)TOPOLOGY_MAX_CAPS_XML + 1), -1);
	msg = captured_stderr();
	assert_string_equal(msg, "error: capabilities XML is 8388609 bytes, more than the 8388608 accepted");
	free(msg);
}

/* ---- CPU lists -------------------------------------------------------- */

static void test_cpulist__parses_ranges_and_singles(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char *set;
	size_t n;

	set = cpus("0-3,8,10-11", &n);
	assert_int_equal(n, 12);
	assert_memory_equal(set, "\1\1\1\1\0\0\0\0\1\0\1\1", 12);
	cpulist_format(&sb, set, n);
	assert_string_equal(sb.buf, "0-3,8,10-11");
	free(set);

	strbuf_reset(&sb);
	set = cpus("5,1,2,3,3,65535", &n);	/* unsorted, repeated, largest id */
	assert_int_equal(n, 65536);
	cpulist_format(&sb, set, n);
	assert_string_equal(sb.buf, "1-3,5,65535");
	free(set);
	strbuf_release(&sb);
}

static void test_cpulist__rejects_garbage(void **state)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "a", "1,,2", ",1", "1,", "1-", "-1", "3-1", "1-2-3", "0x3", "+1", "65536",
		"0-99999999999999999999", "1;2",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		unsigned char *set = (unsigned char *)"x";
		size_t n = 7;

		capture_stderr();
		if (cpulist_parse(bad[i], &set, &n) != -1)
			fail_msg("accepted CPU list '%s'", bad[i]);
		free(captured_stderr());
		assert_null(set);
		assert_int_equal(n, 0);
	}
}

/* ---- plans against golden files --------------------------------------- */

struct guest {
	struct guest_shape shape;
	const char *allowed;		/* NULL: all */
};

struct scenario {
	const char *file;		/* tests/data/topology/<file>.plan */
	const char *host;
	const char *busy;		/* NULL: none */
	int unpinned;
	struct guest guests[4];		/* planned in turn, each busy for the next */
};

static const struct scenario scenarios[] = {
	{ "small-1vcpu", SMALL, NULL, 0, { { { 1, 1, 512 } } } },
	{ "small-2vcpu-2cell", SMALL, NULL, 0, { { { 2, 2, 2048 } } } },
	{ "small-2vcpu-2cell-unpinned", SMALL, NULL, 1, { { { 2, 2, 2048 } } } },
	{ "small-3vcpu-too-large", SMALL, NULL, 0, { { { 3, 1, 1024 } } } },
	{ "small-second-guest-does-not-fit", SMALL, NULL, 0, { { { 1, 1, 512 } }, { { 2, 1, 512 } } } },
	{ "big-8vcpu-2cell", BIG, NULL, 0, { { { 8, 2, 8192 } } } },
	{ "big-40vcpu-2cell-uses-siblings", BIG, NULL, 0, { { { 40, 2, 16384 } } } },
	{ "big-concurrent-guests", BIG, NULL, 0,
	  { { { 8, 2, 8192 } }, { { 8, 2, 8192 } }, { { 16, 4, 16384 } }, { { 4, 1, 4096 } } } },
	{ "big-busy-node0-and-allowed", BIG, "0-15", 0, { { { 4, 1, 4096 }, "0-31,128-159" } } },
	{ "medium-4vcpu-4cell", MEDIUM, NULL, 0, { { { 4, 4, 4096 } } } },
	{ "medium-allowed-2-31", MEDIUM, NULL, 0, { { { 4, 1, 2048 }, "2-31" }, { { 6, 2, 2048 }, "2-31" } } },
	{ "medium-8cell-more-than-nodes", MEDIUM, NULL, 0, { { { 8, 8, 8192 } } } },
	{ "medium-12vcpu-1cell-split", MEDIUM, NULL, 0, { { { 12, 1, 4096 } } } },
	{ "medium-3vcpu-2cell-uneven", MEDIUM, NULL, 0, { { { 3, 2, 2049 } } } },
	{ "medium-too-large-40vcpu", MEDIUM, "8-11", 0, { { { 40, 2, 4096 }, "2-31" } } },
};

static void run_scenario(const struct scenario *sc)
{
	struct host_topology t;
	struct strbuf out = STRBUF_INIT;
	unsigned char *busy = NULL;
	size_t nr_busy = 0;
	char *rel;

	load_host(&t, sc->host);
	strbuf_addf(&out, "# host %s, busy %s\n", sc->host, sc->busy ? sc->busy : "none");
	if (sc->busy)
		busy = cpus(sc->busy, &nr_busy);
	for (size_t g = 0; g < ARRAY_SIZE(sc->guests) && sc->guests[g].shape.vcpus; g++) {
		const struct guest *guest = &sc->guests[g];
		unsigned char *allowed = NULL;
		size_t nr_allowed = 0;
		struct guest_plan p;
		int ret;

		if (guest->allowed)
			allowed = cpus(guest->allowed, &nr_allowed);
		strbuf_addf(&out, "# guest %zu: %u vCPU%s, %u cell%s, %llu MiB, allowed %s\n", g + 1,
			    guest->shape.vcpus, guest->shape.vcpus == 1 ? "" : "s", guest->shape.numa_nodes,
			    guest->shape.numa_nodes == 1 ? "" : "s", (unsigned long long)guest->shape.memory_mb,
			    guest->allowed ? guest->allowed : "all");
		capture_stderr();
		if (sc->unpinned)
			ret = guest_plan_unpinned(&p, &guest->shape);
		else
			ret = topology_plan(&p, &t, &guest->shape, allowed, nr_allowed, busy, nr_busy);
		if (ret == 0) {
			char *d = guest_plan_describe(&p);

			free(captured_stderr());
			strbuf_addf(&out, "%s\n", d);
			free(d);
			guest_plan_mark_busy(&p, &busy, &nr_busy);
			guest_plan_release(&p);
		} else {
			char *msg = captured_stderr();

			strbuf_addf(&out, "%s\n", msg);
			free(msg);
		}
		free(allowed);
	}
	rel = xstrfmt("topology/%s.plan", sc->file);
	check_golden(rel, out.buf);
	free(rel);
	free(busy);
	strbuf_release(&out);
	topology_release(&t);
}

static void test_topology__plans_match_golden_files(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++)
		run_scenario(&scenarios[i]);
}

/* ---- plan properties -------------------------------------------------- */

static void assert_plan_disjoint_from(const struct guest_plan *p, const unsigned char *busy, size_t nr_busy)
{
	unsigned char *mine = NULL;
	size_t n = 0;

	guest_plan_mark_busy(p, &mine, &n);
	for (size_t i = 0; i < n && i < nr_busy; i++)
		if (mine[i] && busy[i])
			fail_msg("host CPU %zu given to two guests", i);
	free(mine);
}

static void test_topology__concurrent_guests_never_share_a_cpu(void **state)
{
	static const char *const hosts[] = { SMALL, MEDIUM, BIG };
	static const struct guest_shape shapes[] = {
		{ 1, 1, 512 }, { 2, 2, 1024 }, { 3, 2, 1024 }, { 8, 2, 4096 }, { 5, 5, 5120 }, { 16, 4, 4096 },
		{ 7, 1, 1024 }, { 2, 1, 1024 },
	};

	for (size_t h = 0; h < ARRAY_SIZE(hosts); h++) {
		struct host_topology t;
		unsigned char *busy = NULL;
		size_t nr_busy = 0, guests = 0, used = 0;

		load_host(&t, hosts[h]);
		/* keep starting guests of varied shapes until one no longer fits,
		 * then the smallest until the host is full */
		for (size_t s = 0;; s++) {
			const struct guest_shape *shape = &shapes[s < 64 ? s % ARRAY_SIZE(shapes) : 0];
			struct guest_plan p;
			char *msg;
			int ret;

			capture_stderr();
			ret = topology_plan(&p, &t, shape, NULL, 0, busy, nr_busy);
			msg = captured_stderr();
			if (ret < 0) {
				assert_non_null(strstr(msg, "error: guest needs"));
				free(msg);
				if (s >= 64)
					break;
				s = 63;
				continue;
			}
			free(msg);
			assert_int_equal(p.vcpus, shape->vcpus);
			assert_plan_disjoint_from(&p, busy, nr_busy);
			guest_plan_mark_busy(&p, &busy, &nr_busy);
			used += p.vcpus + p.nr_emulator_cpus;
			guests++;
			guest_plan_release(&p);
		}
		/* every CPU went to some guest, each exactly once */
		assert_int_equal(used, t.nr_cpus);
		assert_true(guests >= 1);
		free(busy);
		topology_release(&t);
	}
}

static void test_topology__too_large_guest_says_needed_and_free(void **state)
{
	struct guest_shape shape = { 4, 1, 1024 };
	struct host_topology t;
	struct guest_plan p;
	unsigned char *allowed, *busy;
	size_t nr_allowed, nr_busy;
	char *msg;

	load_host(&t, SMALL);
	capture_stderr();
	assert_int_equal(topology_plan(&p, &t, &shape, NULL, 0, NULL, 0), -1);
	msg = captured_stderr();
	assert_string_equal(msg, "error: guest needs 4 vCPUs, host has 2 free CPUs (0-1 allowed, none busy)");
	free(msg);

	shape.vcpus = 2;
	busy = cpus("1", &nr_busy);
	capture_stderr();
	assert_int_equal(topology_plan(&p, &t, &shape, NULL, 0, busy, nr_busy), -1);
	msg = captured_stderr();
	assert_string_equal(msg, "error: guest needs 2 vCPUs, host has 1 free CPU (0-1 allowed, 1 busy)");
	free(msg);
	free(busy);

	allowed = cpus("7-9", &nr_allowed);	/* not on this host */
	capture_stderr();
	assert_int_equal(topology_plan(&p, &t, &shape, allowed, nr_allowed, NULL, 0), -1);
	msg = captured_stderr();
	assert_string_equal(msg, "error: guest needs 2 vCPUs, host has 0 free CPUs (none allowed, none busy)");
	free(msg);
	free(allowed);
	topology_release(&t);
}

static void test_topology__rejects_impossible_shapes(void **state)
{
	static const struct guest_shape bad[] = {
		{ 0, 1, 1024 }, { 2, 3, 1024 }, { 2, 2, 1 }, { 1, 1, 0 }, { TOPOLOGY_MAX_CPUS + 1, 1, 1024 },
	};
	struct host_topology t;

	load_host(&t, BIG);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct guest_plan p;

		capture_stderr();
		if (topology_plan(&p, &t, &bad[i], NULL, 0, NULL, 0) != -1)
			fail_msg("planned impossible shape #%zu", i);
		free(captured_stderr());
		assert_null(p.vcpu_pin);
	}
	topology_release(&t);
}

static void test_topology__cells_go_to_distinct_nodes_with_their_own_cpus(void **state)
{
	struct guest_shape shape = { 4, 4, 4096 };
	struct host_topology t;
	struct guest_plan p;

	load_host(&t, MEDIUM);
	assert_int_equal(topology_plan(&p, &t, &shape, NULL, 0, NULL, 0), 0);
	for (unsigned c = 0; c < p.nr_cells; c++) {
		assert_int_equal(p.cell_memory_mb[c], 1024);
		assert_int_equal(p.cell_nr_vcpus[c], 1);
		assert_int_equal(node_of(&t, p.vcpu_pin[p.cell_first_vcpu[c]]), p.cell_host_node[c]);
		for (unsigned d = 0; d < c; d++)
			assert_int_not_equal(p.cell_host_node[c], p.cell_host_node[d]);
	}
	guest_plan_release(&p);
	topology_release(&t);
}

static void test_topology__vcpus_take_distinct_cores_before_siblings(void **state)
{
	struct guest_shape shape = { 6, 1, 1024 };	/* a node has 4 cores, 8 CPUs */
	struct host_topology t;
	struct guest_plan p;

	load_host(&t, MEDIUM);
	assert_int_equal(topology_plan(&p, &t, &shape, NULL, 0, NULL, 0), 0);
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = 0; j < i; j++)
			assert_false(sibling_of(&t, p.vcpu_pin[i], p.vcpu_pin[j]));
	/* then siblings of the guest's own vCPUs */
	assert_true(sibling_of(&t, p.vcpu_pin[4], p.vcpu_pin[0]));
	assert_true(sibling_of(&t, p.vcpu_pin[5], p.vcpu_pin[1]));
	/* the emulator shares the guest's own last core, not a new one */
	assert_int_equal(p.nr_emulator_cpus, 1);
	assert_true(sibling_of(&t, p.emulator_cpus[0], p.vcpu_pin[2]));
	guest_plan_release(&p);
	topology_release(&t);
}

static void test_topology__guest_avoids_cores_another_guest_uses(void **state)
{
	/* node 0 of the 4-node host only: cores {0,16} {1,17} {2,18} {3,19};
	 * another guest holds CPU 0, so core 0 is the last choice */
	struct guest_shape shape = { 4, 1, 1024 };
	struct host_topology t;
	struct guest_plan p;
	unsigned char *allowed, *busy;
	size_t nr_allowed, nr_busy;
	char *d;

	load_host(&t, MEDIUM);
	allowed = cpus("0-3,16-19", &nr_allowed);
	busy = cpus("0", &nr_busy);
	assert_int_equal(topology_plan(&p, &t, &shape, allowed, nr_allowed, busy, nr_busy), 0);
	d = guest_plan_describe(&p);
	assert_string_equal(d, "vcpu0=1,vcpu1=2,vcpu2=3,vcpu3=17;emulator=18;cell0=node0:1024M");
	free(d);
	guest_plan_release(&p);
	free(allowed);
	free(busy);
	topology_release(&t);
}

static void test_topology__emulator_unpinned_when_no_cpu_is_left(void **state)
{
	struct guest_shape shape = { 2, 1, 1024 };
	struct host_topology t;
	struct guest_plan p;

	load_host(&t, SMALL);
	assert_int_equal(topology_plan(&p, &t, &shape, NULL, 0, NULL, 0), 0);
	assert_int_equal(p.nr_emulator_cpus, 0);
	assert_null(p.emulator_cpus);
	guest_plan_release(&p);
	topology_release(&t);
}

static void test_topology__unpinned_plan_splits_cells_evenly(void **state)
{
	struct guest_shape shape = { 5, 2, 1025 };
	struct guest_plan p;
	char *d;

	assert_int_equal(guest_plan_unpinned(&p, &shape), 0);
	assert_int_equal(p.cell_nr_vcpus[0], 3);
	assert_int_equal(p.cell_nr_vcpus[1], 2);
	assert_int_equal(p.cell_first_vcpu[1], 3);
	d = guest_plan_describe(&p);
	assert_string_equal(d, "vcpu0=any,vcpu1=any,vcpu2=any,vcpu3=any,vcpu4=any;emulator=any;"
			       "cell0=any:513M,cell1=any:512M");
	free(d);
	guest_plan_release(&p);
	guest_plan_release(&p);	/* released twice is harmless */
}

static int teardown(void **state)
{
	xmlCleanupParser();
	return 0;
}

/* The accelerator: KVM only with a kvm domain and vmx/svm (this host's
 * real capabilities have neither: TCG); forcing either way. */
static void test_topology__accel_auto_needs_kvm_domain_and_vmx_or_svm(void **state)
{
	struct host_topology small = { 0 }, medium = { 0 };
	enum accel a;
	const char *why;

	(void)state;
	load_host(&small, SMALL);
	load_host(&medium, MEDIUM);
	assert_false(small.has_kvm_domain);
	assert_false(small.has_vmx_or_svm);
	assert_true(medium.has_kvm_domain);
	assert_true(medium.has_vmx_or_svm);
	assert_int_equal(vm_choose_accel(&small, ACCEL_AUTO, &a, &why), 0);
	assert_int_equal(a, ACCEL_TCG);
	assert_int_equal(vm_choose_accel(&medium, ACCEL_AUTO, &a, &why), 0);
	assert_int_equal(a, ACCEL_KVM);
	assert_int_equal(vm_choose_accel(&medium, ACCEL_FORCE_TCG, &a, &why), 0);
	assert_int_equal(a, ACCEL_TCG);
	capture_stderr();
	assert_int_equal(vm_choose_accel(&small, ACCEL_FORCE_KVM, &a, &why), -1);
	free(captured_stderr());
	/* a kvm domain without vmx/svm (these build machines' nested case) */
	medium.has_vmx_or_svm = 0;
	assert_int_equal(vm_choose_accel(&medium, ACCEL_AUTO, &a, &why), 0);
	assert_int_equal(a, ACCEL_TCG);
	topology_release(&small);
	topology_release(&medium);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topology__parses_this_small_host),
		cmocka_unit_test(test_topology__accel_auto_needs_kvm_domain_and_vmx_or_svm),
		cmocka_unit_test(test_topology__parses_big_host_siblings_nodes_and_pages),
		cmocka_unit_test(test_topology__parses_four_node_host),
		cmocka_unit_test(test_topology__rejects_malformed_capabilities),
		cmocka_unit_test(test_topology__minimal_capabilities_take_defaults),
		cmocka_unit_test(test_topology__doctype_and_entities_are_refused),
		cmocka_unit_test(test_topology__oversized_capabilities_refused_unread),
		cmocka_unit_test(test_cpulist__parses_ranges_and_singles),
		cmocka_unit_test(test_cpulist__rejects_garbage),
		cmocka_unit_test(test_topology__plans_match_golden_files),
		cmocka_unit_test(test_topology__concurrent_guests_never_share_a_cpu),
		cmocka_unit_test(test_topology__too_large_guest_says_needed_and_free),
		cmocka_unit_test(test_topology__rejects_impossible_shapes),
		cmocka_unit_test(test_topology__cells_go_to_distinct_nodes_with_their_own_cpus),
		cmocka_unit_test(test_topology__vcpus_take_distinct_cores_before_siblings),
		cmocka_unit_test(test_topology__guest_avoids_cores_another_guest_uses),
		cmocka_unit_test(test_topology__emulator_unpinned_when_no_cpu_is_left),
		cmocka_unit_test(test_topology__unpinned_plan_splits_cells_evenly),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
