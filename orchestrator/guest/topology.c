/* The host's CPUs and NUMA nodes from libvirt's capabilities XML, and the
 * pinning plan that puts a guest on them.  No I/O: text in, plan out. */
#include "guest/topology.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Digits only (no sign, no space), at most max. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -1;
	for (; *s; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (*s < '0' || *s > '9' || v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* One id of a CPU list at *p, advancing *p past its digits. */
static int parse_list_id(const char **p, size_t *out)
{
	size_t v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (size_t)(*s - '0');
		if (v >= TOPOLOGY_MAX_CPUS)
			return -1;
	}
	*p = s;
	*out = v;
	return 0;
}

int cpulist_parse(const char *s, unsigned char **out, size_t *n)
{
	unsigned char *set = NULL;
	size_t nr = 0;
	const char *p = s;

	*out = NULL;
	*n = 0;
	if (!*s)
		return error("empty CPU list");
	for (;;) {
		size_t a, b;

		if (parse_list_id(&p, &a) < 0)
			goto bad;
		b = a;
		if (*p == '-') {
			p++;
			if (parse_list_id(&p, &b) < 0 || b < a)
				goto bad;
		}
		if (b >= nr) {
			set = xrealloc(set, b + 1);
			memset(set + nr, 0, b + 1 - nr);
			nr = b + 1;
		}
		memset(set + a, 1, b - a + 1);
		if (!*p)
			break;
		if (*p++ != ',')
			goto bad;
	}
	*out = set;
	*n = nr;
	return 0;
bad:
	free(set);
	return error("malformed CPU list '%s' (expected e.g. '0-3,8', ids below %d)", s, TOPOLOGY_MAX_CPUS);
}

void cpulist_format(struct strbuf *out, const unsigned char *set, size_t n)
{
	int first = 1;

	for (size_t i = 0; i < n; i++) {
		size_t j = i;

		if (!set[i])
			continue;
		while (j + 1 < n && set[j + 1])
			j++;
		strbuf_addf(out, "%s%zu", first ? "" : ",", i);
		if (j > i)
			strbuf_addf(out, "-%zu", j);
		first = 0;
		i = j;
	}
}

/* ---- capabilities XML ------------------------------------------------- */

static int is_element(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

static xmlNode *child_element(const xmlNode *parent, const char *name)
{
	for (xmlNode *n = parent->children; n; n = n->next)
		if (is_element(n, name))
			return n;
	return NULL;
}

/* The attribute as a number; -1 with *present 0 when it is absent,
 * -1 with *present 1 when it is malformed. */
static int attr_u64(const xmlNode *n, const char *name, uint64_t max, uint64_t *out, int *present)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int ret;

	*present = v != NULL;
	if (!v)
		return -1;
	ret = parse_u64((const char *)v, max, out);
	xmlFree(v);
	return ret;
}

static int attr_id(const xmlNode *n, const char *name, int *out, int required, const char *where)
{
	uint64_t v;
	int present;

	if (attr_u64(n, name, TOPOLOGY_MAX_CPUS - 1, &v, &present) < 0) {
		if (!present && !required)
			return 0;
		return error("capabilities XML: %s has %s '%s'", where, present ? "a malformed" : "no", name);
	}
	*out = (int)v;
	return 0;
}

static int attr_is(const xmlNode *n, const char *name, const char *want, int absent_ok)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	int ok = v ? !strcmp((const char *)v, want) : absent_ok;

	xmlFree(v);
	return ok;
}

static int text_u64(const xmlNode *n, uint64_t *out)
{
	xmlChar *v = xmlNodeGetContent(n);
	int ret = parse_u64((const char *)v, UINT64_MAX, out);

	xmlFree(v);
	return ret;
}

static int parse_cell_cpus(struct host_topology *t, size_t *alloc, const xmlNode *cpus, int node)
{
	for (xmlNode *n = cpus->children; n; n = n->next) {
		struct host_cpu c = { .node = node, .socket = -1, .core = -1 };
		xmlChar *sib;
		char where[64];

		if (!is_element(n, "cpu"))
			continue;
		snprintf(where, sizeof(where), "a <cpu> of cell %d", node);
		if (attr_id(n, "id", &c.id, 1, where) < 0)
			return -1;
		snprintf(where, sizeof(where), "<cpu id='%d'>", c.id);
		if (attr_id(n, "socket_id", &c.socket, 0, where) < 0 ||
		    attr_id(n, "die_id", &c.die, 0, where) < 0 ||
		    attr_id(n, "core_id", &c.core, 0, where) < 0)
			return -1;
		sib = xmlGetProp(n, (const xmlChar *)"siblings");
		if (sib) {
			unsigned char *set;
			size_t nr;

			if (cpulist_parse((const char *)sib, &set, &nr) < 0) {
				xmlFree(sib);
				return error("capabilities XML: %s has malformed siblings", where);
			}
			free(set);
			c.siblings = xstrdup((const char *)sib);
			xmlFree(sib);
		} else {
			c.siblings = xstrfmt("%d", c.id);
		}
		ALLOC_GROW(t->cpus, t->nr_cpus + 1, *alloc);
		t->cpus[t->nr_cpus++] = c;
	}
	return 0;
}

static int parse_cell(struct host_topology *t, size_t *cpus_alloc, const xmlNode *cell, struct host_node *node)
{
	xmlNode *mem = child_element(cell, "memory");
	xmlNode *cpus = child_element(cell, "cpus");
	char where[64];

	if (attr_id(cell, "id", &node->id, 1, "a <cell>") < 0)
		return -1;
	snprintf(where, sizeof(where), "<cell id='%d'>", node->id);
	if (mem && (!attr_is(mem, "unit", "KiB", 1) || text_u64(mem, &node->memory_kb) < 0))
		return error("capabilities XML: %s has a malformed <memory> (expected KiB)", where);
	for (xmlNode *n = cell->children; n; n = n->next) {
		uint64_t size, count;
		int present;

		if (!is_element(n, "pages"))
			continue;
		if (!attr_is(n, "unit", "KiB", 1) || attr_u64(n, "size", UINT64_MAX, &size, &present) < 0 ||
		    text_u64(n, &count) < 0)
			return error("capabilities XML: %s has a malformed <pages>", where);
		if (size == 2048)
			node->free_2m_pages = count;
		else if (size == 1048576)
			node->free_1g_pages = count;
	}
	return cpus ? parse_cell_cpus(t, cpus_alloc, cpus, node->id) : 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct host_cpu *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int cmp_node(const void *a, const void *b)
{
	const struct host_node *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* <guest><arch name='x86_64'><domain type='kvm'/>: libvirt can run KVM
 * guests of the host's architecture here (whether KVM works is another
 * question: see vm_choose_accel). */
static void parse_guests(struct host_topology *t, const xmlNode *root)
{
	for (xmlNode *g = root->children; g; g = g->next) {
		xmlNode *arch;
		if (!is_element(g, "guest") || !(arch = child_element(g, "arch")) || !attr_is(arch, "name", t->arch, 0))
			continue;
		for (xmlNode *d = arch->children; d; d = d->next)
			if (is_element(d, "domain") && attr_is(d, "type", "kvm", 0))
				t->has_kvm_domain = 1;
	}
}

/* The CPU's vendor, model and microcode, for host fingerprints (text
 * bounded: libvirt's own strings, cut at 128 bytes and cleaned). */
static void parse_cpu_identity(struct host_topology *t, const xmlNode *cpu)
{
	struct strbuf sb = STRBUF_INIT;
	xmlNode *vendor = child_element(cpu, "vendor"), *model = child_element(cpu, "model"),
		*mc = child_element(cpu, "microcode");
	xmlChar *v = vendor ? xmlNodeGetContent(vendor) : NULL, *m = model ? xmlNodeGetContent(model) : NULL;
	xmlChar *ver = mc ? xmlGetProp(mc, (const xmlChar *)"version") : NULL;

	if (v || m) {
		char buf[260];

		snprintf(buf, sizeof(buf), "%.128s%s%.128s", v ? (const char *)v : "", v && m ? " " : "",
			 m ? (const char *)m : "");
		strbuf_add_clean(&sb, buf);
		t->cpu_model = strbuf_detach(&sb, NULL);
	}
	if (ver) {
		char buf[64];

		snprintf(buf, sizeof(buf), "%.32s", (const char *)ver);
		strbuf_add_clean(&sb, buf);
		t->microcode = strbuf_detach(&sb, NULL);
	}
	xmlFree(v);
	xmlFree(m);
	xmlFree(ver);
	strbuf_release(&sb);
}

static int parse_host(struct host_topology *t, const xmlNode *root)
{
	xmlNode *host, *cpu, *arch, *topo, *cells;
	size_t cpus_alloc = 0, nodes_alloc = 0;
	xmlChar *text;

	if (!is_element(root, "capabilities"))
		return error("capabilities XML: root element is <%s>, not <capabilities>", (const char *)root->name);
	if (!(host = child_element(root, "host")) || !(cpu = child_element(host, "cpu")) ||
	    !(arch = child_element(cpu, "arch")))
		return error("capabilities XML has no <host><cpu><arch>");
	text = xmlNodeGetContent(arch);
	t->arch = xstrdup(text ? (const char *)text : "");
	xmlFree(text);
	parse_cpu_identity(t, cpu);
	for (xmlNode *n = cpu->children; n; n = n->next)
		if (is_element(n, "feature") && (attr_is(n, "name", "vmx", 0) || attr_is(n, "name", "svm", 0)))
			t->has_vmx_or_svm = 1;

	if (!(topo = child_element(host, "topology")) || !(cells = child_element(topo, "cells")))
		return error("capabilities XML has no <host><topology><cells>");
	for (xmlNode *n = cells->children; n; n = n->next) {
		if (!is_element(n, "cell"))
			continue;
		ALLOC_GROW(t->nodes, t->nr_nodes + 1, nodes_alloc);
		memset(&t->nodes[t->nr_nodes], 0, sizeof(t->nodes[0]));
		t->nr_nodes++;
		if (parse_cell(t, &cpus_alloc, n, &t->nodes[t->nr_nodes - 1]) < 0)
			return -1;
	}
	if (!t->nr_nodes)
		return error("capabilities XML lists no NUMA cell");
	if (!t->nr_cpus)
		return error("capabilities XML lists no host CPU");

	qsort(t->nodes, t->nr_nodes, sizeof(*t->nodes), cmp_node);
	for (size_t i = 1; i < t->nr_nodes; i++)
		if (t->nodes[i].id == t->nodes[i - 1].id)
			return error("capabilities XML lists cell %d twice", t->nodes[i].id);
	qsort(t->cpus, t->nr_cpus, sizeof(*t->cpus), cmp_cpu);
	for (size_t i = 1; i < t->nr_cpus; i++)
		if (t->cpus[i].id == t->cpus[i - 1].id)
			return error("capabilities XML lists CPU %d twice", t->cpus[i].id);
	return 0;
}

int topology_parse(struct host_topology *t, const char *caps_xml, size_t len)
{
	xmlParserCtxtPtr ctxt;
	xmlDocPtr doc;
	int ret = -1;

	memset(t, 0, sizeof(*t));
	if (len > TOPOLOGY_MAX_CAPS_XML)
		return error("capabilities XML is %zu bytes, more than the %u accepted", len, TOPOLOGY_MAX_CAPS_XML);
	xmlInitParser();
	ctxt = xmlNewParserCtxt();
	if (!ctxt)
		return error("cannot create an XML parser");
	/* No XML_PARSE_NOENT (entities stay unexpanded), no DTD loading or
	 * validation, no network; libxml2 keeps its default size limits. */
	doc = xmlCtxtReadMemory(ctxt, caps_xml ? caps_xml : "", (int)len, "capabilities.xml", NULL,
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *e = xmlCtxtGetLastError(ctxt);
		char *msg = xstrdup(e && e->message ? e->message : "cannot parse");

		msg[strcspn(msg, "\n")] = '\0';
		error("malformed capabilities XML (line %d): %s", e ? e->line : 0, msg);
		free(msg);
		goto cleanup;
	}
	/* libvirt never writes a DOCTYPE; one here means the text is not
	 * libvirt's, and its entities are not worth interpreting. */
	if (doc->intSubset || doc->extSubset) {
		error("capabilities XML has a DOCTYPE (libvirt never writes one)");
		goto cleanup;
	}
	ret = parse_host(t, xmlDocGetRootElement(doc));
	if (ret == 0)
		parse_guests(t, xmlDocGetRootElement(doc));
cleanup:
	if (ret < 0)
		topology_release(t);
	xmlFreeDoc(doc);
	xmlFreeParserCtxt(ctxt);
	return ret;
}

void topology_release(struct host_topology *t)
{
	free(t->arch);
	free(t->cpu_model);
	free(t->microcode);
	for (size_t i = 0; i < t->nr_cpus; i++)
		free(t->cpus[i].siblings);
	free(t->cpus);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

/* ---- planning --------------------------------------------------------- */

enum cpu_state { CPU_FREE, CPU_MINE, CPU_OTHER };

/* One plan in the making.  CPUs are indexes into t->cpus, nodes indexes
 * into t->nodes; a "core" is a group of hyperthread siblings. */
struct planner {
	const struct host_topology *t;
	unsigned char *state;		/* enum cpu_state per CPU */
	size_t *node_of;		/* node index of each CPU */
	size_t *core_of;		/* core index of each CPU */
	unsigned *core_mine, *core_other;	/* per core: CPUs this guest took / others hold */
	unsigned *node_free;		/* per node: CPUs still free */
	unsigned char *node_used;	/* per node: holds a cell of this guest */
};

struct core_key {
	size_t cpu;
	size_t node;
	int socket, die, core;
};

static int cmp_core_key(const void *a, const void *b)
{
	const struct core_key *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (x->die != y->die)
		return x->die < y->die ? -1 : 1;
	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static void planner_release(struct planner *pl)
{
	FREE_MANY(pl->state, pl->node_of, pl->core_of, pl->core_mine, pl->core_other, pl->node_free, pl->node_used);
}

static int find_node(const struct host_topology *t, int id, size_t *out)
{
	size_t lo = 0, hi = t->nr_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->nodes[mid].id == id) {
			*out = mid;
			return 0;
		}
		if (t->nodes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int planner_init(struct planner *pl, const struct host_topology *t, const unsigned char *allowed,
			size_t nr_allowed, const unsigned char *busy, size_t nr_busy)
{
	size_t n = t->nr_cpus, nr_cores = 0;
	struct core_key *keys = xcalloc(n, sizeof(*keys));

	pl->t = t;
	pl->state = xcalloc(n, 1);
	pl->node_of = xcalloc(n, sizeof(*pl->node_of));
	pl->core_of = xcalloc(n, sizeof(*pl->core_of));
	pl->core_mine = xcalloc(n, sizeof(*pl->core_mine));
	pl->core_other = xcalloc(n, sizeof(*pl->core_other));
	pl->node_free = xcalloc(t->nr_nodes, sizeof(*pl->node_free));
	pl->node_used = xcalloc(t->nr_nodes, 1);

	for (size_t i = 0; i < n; i++) {
		const struct host_cpu *c = &t->cpus[i];
		size_t id = (size_t)c->id;
		int ok = (!allowed || (id < nr_allowed && allowed[id])) && !(busy && id < nr_busy && busy[id]);

		if (find_node(t, c->node, &pl->node_of[i]) < 0) {
			free(keys);
			return error("host CPU %d is in node %d, which the host does not list", c->id, c->node);
		}
		pl->state[i] = ok ? CPU_FREE : CPU_OTHER;
		if (ok)
			pl->node_free[pl->node_of[i]]++;
		keys[i] = (struct core_key){ i, pl->node_of[i], c->socket, c->die, c->core };
	}

	/* Siblings share (node, socket, die, core); a CPU without a core id
	 * is a core of its own. */
	qsort(keys, n, sizeof(*keys), cmp_core_key);
	for (size_t i = 0; i < n; i++) {
		const struct core_key *k = &keys[i], *prev = i ? &keys[i - 1] : NULL;

		if (!prev || k->core < 0 || prev->node != k->node || prev->socket != k->socket ||
		    prev->die != k->die || prev->core != k->core)
			nr_cores++;
		pl->core_of[k->cpu] = nr_cores - 1;
		if (pl->state[k->cpu] == CPU_OTHER)
			pl->core_other[nr_cores - 1]++;
	}
	free(keys);
	return 0;
}

/*
 * Which free CPU of a node the next vCPU gets.  For measurements, a vCPU
 * that shares a core with nothing is worth most: first a core whose
 * threads are all free, so a small guest's vCPUs spread over distinct
 * physical cores; when the node has no whole free core left, a sibling of
 * one of the guest's own vCPUs (the guest then competes with itself,
 * which repeats from run to run); last a core that another guest, or a
 * CPU outside the allowed list, already uses.  Lowest CPU id breaks ties.
 *
 * The emulator threads are mostly idle during a benchmark, so they go the
 * other way round: a sibling of the guest's own vCPU first, which keeps
 * the guest's noise inside its own cores and leaves whole cores to the
 * next guest.
 */
static int cpu_rank(const struct planner *pl, size_t cpu, int emulator)
{
	size_t core = pl->core_of[cpu];

	if (pl->core_other[core])
		return 2;
	if (pl->core_mine[core])
		return emulator ? 0 : 1;
	return emulator ? 1 : 0;
}

static long pick_cpu(const struct planner *pl, size_t node, int emulator)
{
	long best = -1;
	int best_rank = 3;

	for (size_t i = 0; i < pl->t->nr_cpus; i++) {
		int rank;

		if (pl->node_of[i] != node || pl->state[i] != CPU_FREE)
			continue;
		rank = cpu_rank(pl, i, emulator);
		if (rank < best_rank) {
			best = (long)i;
			best_rank = rank;
		}
	}
	return best;
}

static void take_cpu(struct planner *pl, size_t cpu)
{
	pl->state[cpu] = CPU_MINE;
	pl->core_mine[pl->core_of[cpu]]++;
	pl->node_free[pl->node_of[cpu]]--;
}

/*
 * Which node the next cell (or the rest of a cell that did not fit) goes
 * to: a node this guest does not use yet and that holds the whole cell,
 * else any node that holds it (more cells than nodes: cells share), else
 * the node with the most free CPUs (the cell is split).  Among equals the
 * node with the most free CPUs, so concurrent guests spread over the host
 * instead of piling onto node 0; then the lowest id.
 */
static long pick_node(const struct planner *pl, unsigned need)
{
	for (int pass = 0; pass < 3; pass++) {
		long best = -1;

		for (size_t i = 0; i < pl->t->nr_nodes; i++) {
			unsigned f = pl->node_free[i];

			if (!f || (pass < 2 && f < need) || (pass == 0 && pl->node_used[i]))
				continue;
			if (best < 0 || f > pl->node_free[best])
				best = (long)i;
		}
		if (best >= 0)
			return best;
	}
	return -1;
}

/* Cells, vCPU ranges and memory of the shape, nothing pinned. */
static int plan_shape(struct guest_plan *p, const struct guest_shape *shape)
{
	unsigned cells = shape->numa_nodes ? shape->numa_nodes : 1, first = 0;

	memset(p, 0, sizeof(*p));
	if (!shape->vcpus || shape->vcpus > TOPOLOGY_MAX_CPUS)
		return error("guest needs between 1 and %d vCPUs, not %u", TOPOLOGY_MAX_CPUS, shape->vcpus);
	if (cells > shape->vcpus)
		return error("guest has %u NUMA nodes but only %u vCPU%s (each node needs one)", cells,
			     shape->vcpus, shape->vcpus == 1 ? "" : "s");
	if (shape->memory_mb < cells)
		return error("guest memory of %llu MiB cannot be split over %u NUMA nodes",
			     (unsigned long long)shape->memory_mb, cells);

	p->vcpus = shape->vcpus;
	p->vcpu_pin = xmalloc(p->vcpus * sizeof(*p->vcpu_pin));
	for (unsigned i = 0; i < p->vcpus; i++)
		p->vcpu_pin[i] = -1;
	p->nr_cells = cells;
	p->cell_first_vcpu = xcalloc(cells, sizeof(*p->cell_first_vcpu));
	p->cell_nr_vcpus = xcalloc(cells, sizeof(*p->cell_nr_vcpus));
	p->cell_memory_mb = xcalloc(cells, sizeof(*p->cell_memory_mb));
	p->cell_host_node = xcalloc(cells, sizeof(*p->cell_host_node));
	for (unsigned c = 0; c < cells; c++) {
		p->cell_first_vcpu[c] = first;
		p->cell_nr_vcpus[c] = shape->vcpus / cells + (c < shape->vcpus % cells);
		p->cell_memory_mb[c] = shape->memory_mb / cells + (c < shape->memory_mb % cells);
		p->cell_host_node[c] = -1;
		first += p->cell_nr_vcpus[c];
	}
	return 0;
}

int guest_plan_unpinned(struct guest_plan *p, const struct guest_shape *shape)
{
	return plan_shape(p, shape);
}

static int not_enough_cpus(const struct planner *pl, const struct guest_shape *shape, unsigned nr_free,
			   const unsigned char *allowed, size_t nr_allowed)
{
	const struct host_topology *t = pl->t;
	size_t max = (size_t)t->cpus[t->nr_cpus - 1].id + 1;
	unsigned char *in = xcalloc(max, 1), *taken = xcalloc(max, 1);
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	for (size_t i = 0; i < t->nr_cpus; i++) {
		size_t id = (size_t)t->cpus[i].id;

		in[id] = !allowed || (id < nr_allowed && allowed[id]);
		taken[id] = in[id] && pl->state[i] == CPU_OTHER;
	}
	cpulist_format(&a, in, max);
	cpulist_format(&b, taken, max);
	error("guest needs %u vCPU%s, host has %u free CPU%s (%s allowed, %s busy)", shape->vcpus,
	      shape->vcpus == 1 ? "" : "s", nr_free, nr_free == 1 ? "" : "s", a.len ? a.buf : "none",
	      b.len ? b.buf : "none");
	strbuf_release(&a);
	strbuf_release(&b);
	free(in);
	free(taken);
	return -1;
}

int topology_plan(struct guest_plan *p, const struct host_topology *t, const struct guest_shape *shape,
		  const unsigned char *allowed, size_t nr_allowed, const unsigned char *busy, size_t nr_busy)
{
	struct planner pl = { 0 };
	unsigned nr_free = 0, vcpu = 0;
	size_t first_node = 0;
	long emu;
	int ret = -1;

	if (plan_shape(p, shape) < 0)
		return -1;
	if (!t->nr_cpus || !t->nr_nodes) {
		error("host topology lists no CPUs");
		goto cleanup;
	}
	if (planner_init(&pl, t, allowed, nr_allowed, busy, nr_busy) < 0)
		goto cleanup;
	for (size_t i = 0; i < t->nr_nodes; i++)
		nr_free += pl.node_free[i];
	if (nr_free < shape->vcpus) {
		not_enough_cpus(&pl, shape, nr_free, allowed, nr_allowed);
		goto cleanup;
	}

	for (unsigned c = 0; c < p->nr_cells; c++) {
		unsigned need = p->cell_nr_vcpus[c];

		while (need) {
			/* cannot fail: enough CPUs are free in total */
			size_t node = (size_t)pick_node(&pl, need);
			unsigned k = pl.node_free[node] < need ? pl.node_free[node] : need;

			if (p->cell_host_node[c] < 0) {
				p->cell_host_node[c] = t->nodes[node].id;
				if (c == 0)
					first_node = node;
			}
			pl.node_used[node] = 1;
			for (unsigned j = 0; j < k; j++) {
				size_t cpu = (size_t)pick_cpu(&pl, node, 0);

				take_cpu(&pl, cpu);
				p->vcpu_pin[vcpu++] = t->cpus[cpu].id;
			}
			need -= k;
		}
	}

	emu = pick_cpu(&pl, first_node, 1);
	if (emu >= 0) {
		take_cpu(&pl, (size_t)emu);
		p->emulator_cpus = xmalloc(sizeof(*p->emulator_cpus));
		p->emulator_cpus[0] = t->cpus[emu].id;
		p->nr_emulator_cpus = 1;
	}
	ret = 0;
cleanup:
	planner_release(&pl);
	if (ret < 0)
		guest_plan_release(p);
	return ret;
}

void guest_plan_release(struct guest_plan *p)
{
	FREE_MANY(p->vcpu_pin, p->emulator_cpus, p->cell_first_vcpu, p->cell_nr_vcpus, p->cell_memory_mb,
		  p->cell_host_node);
	memset(p, 0, sizeof(*p));
}

void cpu_bitmap_set(unsigned char **set, size_t *n, int cpu)
{
	size_t id = (size_t)cpu;

	if (cpu < 0)
		return;
	if (id >= *n) {
		*set = xrealloc(*set, id + 1);
		memset(*set + *n, 0, id + 1 - *n);
		*n = id + 1;
	}
	(*set)[id] = 1;
}

void guest_plan_mark_busy(const struct guest_plan *p, unsigned char **busy, size_t *nr_busy)
{
	for (unsigned i = 0; i < p->vcpus; i++)
		cpu_bitmap_set(busy, nr_busy, p->vcpu_pin[i]);
	for (size_t i = 0; i < p->nr_emulator_cpus; i++)
		cpu_bitmap_set(busy, nr_busy, p->emulator_cpus[i]);
}

/* Where a plan puts something: fmt with the host CPU or node, or "any"
 * for none (-1). */
static void add_place(struct strbuf *sb, const char *fmt, int where)
{
	if (where < 0)
		strbuf_addstr(sb, "any");
	else
		strbuf_addf(sb, fmt, where);
}

char *guest_plan_describe(const struct guest_plan *p)
{
	struct strbuf sb = STRBUF_INIT;

	for (unsigned i = 0; i < p->vcpus; i++) {
		strbuf_addf(&sb, "%svcpu%u=", i ? "," : "", i);
		add_place(&sb, "%d", p->vcpu_pin[i]);
	}
	strbuf_addstr(&sb, ";emulator=");
	if (!p->nr_emulator_cpus)
		strbuf_addstr(&sb, "any");
	for (size_t i = 0; i < p->nr_emulator_cpus; i++)
		strbuf_addf(&sb, "%s%d", i ? "," : "", p->emulator_cpus[i]);
	strbuf_addch(&sb, ';');
	for (unsigned c = 0; c < p->nr_cells; c++) {
		strbuf_addf(&sb, "%scell%u=", c ? "," : "", c);
		add_place(&sb, "node%d", p->cell_host_node[c]);
		strbuf_addf(&sb, ":%lluM", (unsigned long long)p->cell_memory_mb[c]);
	}
	return strbuf_detach(&sb, NULL);
}
