/* Unit tests of guest spec → libvirt domain XML: golden files in
 * tests/data/domain (KLAB_REGENERATE=1 rewrites them), every output
 * well-formed and its user values read back intact, bad specs refused. */
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
#include <libxml/tree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "guest/domain.h"
#include "guest/topology.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "helpers.h"

/* ---- helpers ---------------------------------------------------------- */

static xmlDocPtr parse_xml(const char *xml)
{
	xmlDocPtr doc = xmlReadMemory(xml, (int)strlen(xml), "domain.xml", NULL,
				      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);

	if (!doc)
		fail_msg("domain XML is not well-formed:\n%s", xml);
	return doc;
}

/* Text of the single node at XPath `expr` (klab: prefix bound). */
static char *xpath_text(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr obj;
	xmlChar *v;
	char *s;

	assert_non_null(ctx);
	assert_int_equal(xmlXPathRegisterNs(ctx, (const xmlChar *)"klab", (const xmlChar *)DOMAIN_METADATA_NS), 0);
	obj = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
	if (!obj || !obj->nodesetval || obj->nodesetval->nodeNr != 1)
		fail_msg("XPath %s does not name exactly one node", expr);
	v = xmlNodeGetContent(obj->nodesetval->nodeTab[0]);
	s = xstrdup((const char *)v);
	xmlFree(v);
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	return s;
}

static void assert_xpath(xmlDocPtr doc, const char *expr, const char *want)
{
	char *got = xpath_text(doc, expr);

	if (strcmp(got, want))
		fail_msg("%s is '%s', expected '%s'", expr, got, want);
	free(got);
}

static void assert_xpath_count(xmlDocPtr doc, const char *expr, int want)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr obj = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
	int n;

	assert_non_null(obj);
	n = obj->nodesetval ? obj->nodesetval->nodeNr : 0;
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	if (n != want)
		fail_msg("%d nodes match %s, expected %d", n, expr, want);
}

/* A spec every test starts from; plan set by the caller. */
static struct domain_spec base_spec(const struct guest_plan *p)
{
	return (struct domain_spec){
		.name = "klab-lab1-g1",
		.uuid = "6d1f5c0e-8d3a-4b59-9a51-2f4c8e0b7a01",
		.accel = ACCEL_TCG,
		.emulator = "/usr/bin/qemu-system-x86_64",
		.kernel = "/var/lib/klab/artifacts/0b1c2d3e-4f5a6b7c/bzImage",
		.initrd = "/var/lib/klab/images/job-17.cpio.gz",
		.cmdline = "console=ttyS0 panic=-1 quiet",
		.plan = p,
		.pin = 1,
		.lab_id = "lab1",
		.owner_pid = 4242,
		.created_s = 1764489600,
	};
}

/* Plan `shape` on a host from tests/data/caps (NULL: unpinned). */
static void plan_on(struct guest_plan *p, const char *host, unsigned vcpus, unsigned cells, uint64_t mb)
{
	struct guest_shape shape = { vcpus, cells, mb };
	struct host_topology t;

	if (!host) {
		assert_int_equal(guest_plan_unpinned(p, &shape), 0);
		return;
	}
	load_host(&t, host);
	assert_int_equal(topology_plan(p, &t, &shape, NULL, 0, NULL, 0), 0);
	topology_release(&t);
}

/* Domain XML of spec, checked against tests/data/domain/<file>.xml and
 * parsed back; caller frees the document. */
static xmlDocPtr check_domain(const struct domain_spec *spec, const char *file)
{
	struct strbuf sb = STRBUF_INIT;
	char *rel = xstrfmt("domain/%s.xml", file);
	xmlDocPtr doc;

	assert_int_equal(domain_xml(spec, &sb), 0);
	doc = parse_xml(sb.buf);
	check_golden(rel, sb.buf);
	free(rel);
	strbuf_release(&sb);
	/* what libvirt will read back is what the user gave */
	assert_xpath(doc, "/domain/name", spec->name);
	assert_xpath(doc, "/domain/os/kernel", spec->kernel);
	if (spec->cmdline)
		assert_xpath(doc, "/domain/os/cmdline", spec->cmdline);
	assert_xpath(doc, "/domain/metadata/klab:guest/klab:lab", spec->lab_id);
	assert_xpath(doc, "/domain/devices/channel/target/@name", DOMAIN_RESULT_CHANNEL);
	assert_xpath_count(doc, "/domain/devices/disk", !!spec->swap_disk + !!spec->scratch_disk);
	assert_xpath_count(doc, "/domain/devices/filesystem", (int)spec->nr_shares);
	/* every share is read-only, whatever else */
	assert_xpath_count(doc, "/domain/devices/filesystem[readonly]", (int)spec->nr_shares);
	assert_xpath_count(doc, "/domain/devices/interface|/domain/devices/graphics", 0);
	return doc;
}

/* ---- golden files ----------------------------------------------------- */

static void test_domain__tcg_2vcpu_2cell_pinned_on_small_host(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	plan_on(&p, "small-1socket-2cpu-1node", 2, 2, 2048);
	spec = base_spec(&p);
	doc = check_domain(&spec, "tcg-2vcpu-2cell-pinned-small");
	assert_xpath(doc, "/domain/@type", "qemu");
	assert_xpath(doc, "/domain/cpu/@mode", "maximum");
	assert_xpath(doc, "/domain/cpu/topology/@sockets", "2");
	assert_xpath_count(doc, "/domain/cputune/vcpupin", 2);
	assert_xpath_count(doc, "/domain/cputune/emulatorpin", 0);	/* no CPU left for it */
	assert_xpath(doc, "/domain/numatune/memory/@nodeset", "0");
	assert_xpath_count(doc, "/domain/memoryBacking", 0);
	xmlFreeDoc(doc);
	guest_plan_release(&p);
}

static void test_domain__kvm_8vcpu_2cell_2m_hugepages_on_big_host(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	plan_on(&p, "big-2socket-256cpu-8node", 8, 2, 8192);
	spec = base_spec(&p);
	spec.accel = ACCEL_KVM;
	spec.hugepages = BACKING_2M;
	spec.memory_mb = 8192;
	doc = check_domain(&spec, "kvm-8vcpu-2cell-hugepages2m-big");
	assert_xpath(doc, "/domain/@type", "kvm");
	assert_xpath(doc, "/domain/cpu/@mode", "host-passthrough");
	assert_xpath(doc, "/domain/memoryBacking/hugepages/page/@size", "2048");
	assert_xpath(doc, "/domain/numatune/memory/@nodeset", "0-1");
	assert_xpath(doc, "/domain/numatune/memnode[@cellid='1']/@nodeset", "1");
	assert_xpath(doc, "/domain/cputune/emulatorpin/@cpuset", "128");
	xmlFreeDoc(doc);
	guest_plan_release(&p);
}

/* a job's swap: one raw file as virtio vda, nothing else */
static void test_domain__swap_disk_is_one_virtio_disk(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	(void)state;
	plan_on(&p, "small-1socket-2cpu-1node", 2, 1, 1024);
	spec = base_spec(&p);
	spec.memory_mb = 1024;
	spec.swap_disk = "/var/lib/klab/images/swap-klab-1-2.img";
	doc = check_domain(&spec, "tcg-swap-disk");
	assert_xpath(doc, "/domain/devices/disk/source/@file", spec.swap_disk);
	assert_xpath(doc, "/domain/devices/disk/target/@dev", "vda");
	assert_xpath(doc, "/domain/devices/disk/target/@bus", "virtio");
	assert_xpath(doc, "/domain/devices/disk/driver/@type", "raw");
	xmlFreeDoc(doc);
	guest_plan_release(&p);
	/* a relative path is refused before libvirt sees it */
	plan_on(&p, "small-1socket-2cpu-1node", 2, 1, 1024);
	spec = base_spec(&p);
	spec.memory_mb = 1024;
	spec.swap_disk = "swap.img";
	{
		struct strbuf sb = STRBUF_INIT;
		assert_int_equal(domain_xml(&spec, &sb), -1);
		strbuf_release(&sb);
	}
	guest_plan_release(&p);
}

/* a job's fs: a scratch disk after the swap disk (or first), found in
 * the guest by its serial */
static void test_domain__scratch_disk_has_the_serial_the_agent_looks_for(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	(void)state;
	plan_on(&p, "small-1socket-2cpu-1node", 2, 1, 1024);
	spec = base_spec(&p);
	spec.memory_mb = 1024;
	spec.swap_disk = "/var/lib/klab/images/swap-klab-1-2.img";
	spec.scratch_disk = "/var/lib/klab/images/disk-klab-1-2.img";
	doc = check_domain(&spec, "tcg-swap-and-scratch-disk");
	assert_xpath(doc, "/domain/devices/disk[2]/source/@file", spec.scratch_disk);
	assert_xpath(doc, "/domain/devices/disk[2]/target/@dev", "vdb");
	assert_xpath(doc, "/domain/devices/disk[2]/serial", DOMAIN_SCRATCH_SERIAL);
	assert_xpath(doc, "/domain/devices/disk[1]/target/@dev", "vda");
	xmlFreeDoc(doc);
	spec.swap_disk = NULL;
	doc = check_domain(&spec, "tcg-scratch-disk");
	assert_xpath(doc, "/domain/devices/disk/target/@dev", "vda");
	assert_xpath(doc, "/domain/devices/disk/serial", "klab-disk");
	xmlFreeDoc(doc);
	guest_plan_release(&p);
	/* a relative path is refused before libvirt sees it */
	plan_on(&p, "small-1socket-2cpu-1node", 2, 1, 1024);
	spec = base_spec(&p);
	spec.memory_mb = 1024;
	spec.scratch_disk = "disk.img";
	{
		struct strbuf sb = STRBUF_INIT;
		capture_stderr();
		assert_int_equal(domain_xml(&spec, &sb), -1);
		free(captured_stderr());
		strbuf_release(&sb);
	}
	guest_plan_release(&p);
}

/* a kbuild job's toolchain and tree: read-only 9p shares, nothing else
 * changes (no memoryBacking: 9p needs no shared memory) */
static void test_domain__shares_are_readonly_9p_filesystems(void **state)
{
	static const struct domain_share shares[] = {
		{ "/usr", "usr", 1 },
		{ "/srv/linux & <co>", "src", 1 },
	};
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	(void)state;
	plan_on(&p, "small-1socket-2cpu-1node", 2, 2, 2048);
	spec = base_spec(&p);
	spec.shares = shares;
	spec.nr_shares = ARRAY_SIZE(shares);
	doc = check_domain(&spec, "tcg-9p-shares");
	assert_xpath(doc, "/domain/devices/filesystem[1]/@type", "mount");
	assert_xpath(doc, "/domain/devices/filesystem[1]/@accessmode", "squash");
	assert_xpath(doc, "/domain/devices/filesystem[1]/driver/@type", "path");
	assert_xpath(doc, "/domain/devices/filesystem[1]/source/@dir", "/usr");
	assert_xpath(doc, "/domain/devices/filesystem[1]/target/@dir", "usr");
	assert_xpath(doc, "/domain/devices/filesystem[2]/source/@dir", "/srv/linux & <co>");
	assert_xpath_count(doc, "/domain/memoryBacking", 0);
	xmlFreeDoc(doc);
	guest_plan_release(&p);
}

static void test_domain__tcg_1vcpu_unpinned(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	plan_on(&p, NULL, 1, 1, 512);
	spec = base_spec(&p);
	spec.pin = 0;
	spec.uuid = NULL;
	spec.emulator = NULL;
	spec.initrd = NULL;
	spec.cmdline = NULL;
	doc = check_domain(&spec, "tcg-1vcpu-unpinned");
	assert_xpath_count(doc, "/domain/cputune|/domain/numatune|/domain/uuid|/domain/os/initrd", 0);
	assert_xpath(doc, "/domain/cpu/topology/@cores", "1");
	xmlFreeDoc(doc);
	guest_plan_release(&p);
}

static void test_domain__kvm_4vcpu_4cell_1g_hugepages_on_four_node_host(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	plan_on(&p, "medium-2socket-32cpu-4node", 4, 4, 4096);
	spec = base_spec(&p);
	spec.accel = ACCEL_KVM;
	spec.hugepages = BACKING_1G;
	doc = check_domain(&spec, "kvm-4vcpu-4cell-hugepages1g-medium");
	assert_xpath(doc, "/domain/numatune/memory/@nodeset", "0-3");
	assert_xpath(doc, "/domain/memoryBacking/hugepages/page/@size", "1048576");
	assert_xpath(doc, "/domain/cpu/topology/@sockets", "4");
	assert_xpath(doc, "/domain/cpu/numa/cell[@id='3']/@cpus", "3");
	xmlFreeDoc(doc);
	guest_plan_release(&p);
}

static void test_domain__uneven_cells_share_one_socket(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	plan_on(&p, "medium-2socket-32cpu-4node", 3, 2, 2048);
	spec = base_spec(&p);
	doc = check_domain(&spec, "tcg-3vcpu-2cell-uneven-medium");
	assert_xpath(doc, "/domain/cpu/topology/@sockets", "1");
	assert_xpath(doc, "/domain/cpu/topology/@cores", "3");
	assert_xpath(doc, "/domain/cpu/numa/cell[@id='0']/@cpus", "0-1");
	assert_xpath(doc, "/domain/cpu/numa/cell[@id='1']/@cpus", "2");
	xmlFreeDoc(doc);
	guest_plan_release(&p);
}

static void test_domain__hostile_values_are_escaped(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;
	xmlDocPtr doc;

	plan_on(&p, "small-1socket-2cpu-1node", 1, 1, 256);
	spec = base_spec(&p);
	spec.kernel = "/srv/it's <a> \"kernel\" & more/bzImage";
	spec.initrd = "/srv/]]><!-- x -->/initrd";
	spec.emulator = "/opt/q&a/qemu";
	spec.cmdline = "console=ttyS0 klab.job='</cmdline><kernel>/etc/shadow</kernel>' a=\"&amp;\"\tb=1\nc=2";
	spec.lab_id = "lab\"/><x y='1";
	doc = check_domain(&spec, "hostile-values-escaped");
	assert_xpath(doc, "/domain/os/initrd", spec.initrd);
	assert_xpath(doc, "/domain/devices/emulator", spec.emulator);
	assert_xpath_count(doc, "/domain/os/kernel", 1);
	xmlFreeDoc(doc);
	guest_plan_release(&p);
}

/* ---- refusals --------------------------------------------------------- */

/* domain_xml(spec) fails with `msg` and leaves the buffer alone. */
static void assert_refused(const struct domain_spec *spec, const char *msg)
{
	struct strbuf sb = STRBUF_INIT;
	char *got;
	int ret;

	strbuf_addstr(&sb, "before");
	capture_stderr();
	ret = domain_xml(spec, &sb);
	got = captured_stderr();
	if (ret != -1)
		fail_msg("accepted a spec that should fail with: %s", msg);
	if (strcmp(got, msg))
		fail_msg("message '%s', expected '%s'", got, msg);
	assert_string_equal(sb.buf, "before");
	free(got);
	strbuf_release(&sb);
}

static void test_domain__bad_names_refused(void **state)
{
	static const char *const bad[] = {
		"foo", "klab-", "KLAB-x", "lab-x", "klab-" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	static const char *const bad_char[] = {
		"klab-a&b", "klab-a b", "klab-a/b", "klab-a\nb", "klab-\xc3\xa4", "klab-a'b", "klab-<x>",
	};
	struct guest_plan p;
	struct domain_spec spec;
	struct strbuf sb = STRBUF_INIT;

	plan_on(&p, NULL, 1, 1, 512);
	spec = base_spec(&p);
	spec.pin = 0;
	spec.name = NULL;
	assert_refused(&spec, "error: guest has no name");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		spec.name = bad[i];
		assert_refused(&spec, "error: guest name must be 'klab-' and up to 59 letters, digits, '_', '.' or '-'");
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad_char); i++) {
		char *msg = xstrfmt("error: guest name has a character other than letters, digits, '_', '.' and '-' "
				    "at byte %zu", strcspn(bad_char[i] + 5, "&/ \n\xc3'<") + 5);

		spec.name = bad_char[i];
		assert_refused(&spec, msg);
		free(msg);
	}
	/* the longest name allowed, and every allowed character */
	spec.name = "klab-" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	assert_int_equal(strlen(spec.name), DOMAIN_NAME_MAX);
	assert_int_equal(domain_xml(&spec, &sb), 0);
	spec.name = "klab-AZaz09_.-";
	assert_int_equal(domain_xml(&spec, &sb), 0);
	strbuf_release(&sb);
	guest_plan_release(&p);
}

static void test_domain__control_characters_and_bad_utf8_refused(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;

	plan_on(&p, NULL, 1, 1, 512);
	spec = base_spec(&p);
	spec.pin = 0;
	spec.cmdline = "console=ttyS0 \x1b[2J";
	assert_refused(&spec, "error: kernel command line has a control character (0x1b) at byte 14");
	spec.cmdline = "a\rb";
	assert_refused(&spec, "error: kernel command line has a control character (0x0d) at byte 1");
	spec.cmdline = "a\x7f";
	assert_refused(&spec, "error: kernel command line has a control character (0x7f) at byte 1");
	spec.cmdline = "caf\xc3";
	assert_refused(&spec, "error: kernel command line is not valid UTF-8 (byte 3)");
	spec.cmdline = "\xc0\xaf";	/* overlong '/' */
	assert_refused(&spec, "error: kernel command line is not valid UTF-8 (byte 0)");
	spec.cmdline = "\xed\xa0\x80";	/* a surrogate */
	assert_refused(&spec, "error: kernel command line is not valid UTF-8 (byte 0)");
	spec.cmdline = NULL;
	spec.kernel = "/boot/\x01vmlinuz";
	assert_refused(&spec, "error: kernel has a control character (0x01) at byte 6");
	spec.kernel = "bzImage";
	assert_refused(&spec, "error: kernel must be an absolute path");
	spec.kernel = NULL;
	assert_refused(&spec, "error: guest has no kernel");
	spec = base_spec(&p);
	spec.pin = 0;
	spec.initrd = "initrd.gz";
	assert_refused(&spec, "error: initrd must be an absolute path");
	spec.initrd = NULL;
	spec.emulator = "/usr/bin/qemu\x02";
	assert_refused(&spec, "error: emulator has a control character (0x02) at byte 13");
	spec.emulator = NULL;
	spec.lab_id = "lab\x03";
	assert_refused(&spec, "error: lab id has a control character (0x03) at byte 3");
	spec.lab_id = NULL;
	assert_refused(&spec, "error: guest has no lab id");
	guest_plan_release(&p);
}

static void test_domain__bad_uuid_refused(void **state)
{
	static const char *const bad[] = {
		"", "6d1f5c0e8d3a4b599a512f4c8e0b7a01", "6d1f5c0e-8d3a-4b59-9a51-2f4c8e0b7a0g",
		"6d1f5c0e-8d3a-4b59-9a51-2f4c8e0b7a011", "6d1f5c0e-8d3a-4b59-9a51'2f4c8e0b7a01",
	};
	struct guest_plan p;
	struct domain_spec spec;

	plan_on(&p, NULL, 1, 1, 512);
	spec = base_spec(&p);
	spec.pin = 0;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		spec.uuid = bad[i];
		assert_refused(&spec, "error: guest uuid must look like xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx "
				      "(hexadecimal digits)");
	}
	guest_plan_release(&p);
}

static void test_domain__pinning_needs_a_pinned_plan(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;

	plan_on(&p, NULL, 2, 1, 512);
	spec = base_spec(&p);
	assert_refused(&spec, "error: cannot pin guest cell 0: the plan binds it to no host node");
	p.cell_host_node[0] = 0;
	assert_refused(&spec, "error: cannot pin vCPU 0: the plan gives it no host CPU");
	spec.plan = NULL;
	assert_refused(&spec, "error: guest has no CPU plan");
	guest_plan_release(&p);
}

static void test_domain__hugepages_need_whole_pages_per_cell(void **state)
{
	struct guest_plan p;
	struct domain_spec spec;

	plan_on(&p, NULL, 2, 2, 2050);	/* 1025 MiB per cell */
	spec = base_spec(&p);
	spec.pin = 0;
	spec.hugepages = BACKING_2M;
	assert_refused(&spec, "error: guest cell 0 has 1025 MiB, not a whole number of 2 MiB hugepages");
	guest_plan_release(&p);

	plan_on(&p, NULL, 2, 2, 3072);	/* 1536 MiB per cell */
	spec.plan = &p;
	spec.hugepages = BACKING_1G;
	assert_refused(&spec, "error: guest cell 0 has 1536 MiB, not a whole number of 1 GiB hugepages");
	spec.hugepages = BACKING_2M;
	spec.memory_mb = 4096;
	assert_refused(&spec, "error: guest memory of 4096 MiB differs from its cells' 3072 MiB");
	guest_plan_release(&p);
}

static void test_domain__bad_shares_refused(void **state)
{
	static const struct {
		struct domain_share share;
		const char *msg;
	} bad[] = {
		{ { "usr", "usr", 1 }, "error: shared directory must be an absolute path" },
		{ { "/usr/../etc", "usr", 1 }, "error: share 'usr': the shared directory must be a plain absolute path" },
		{ { "/usr/./lib", "usr", 1 }, "error: share 'usr': the shared directory must be a plain absolute path" },
		{ { "/usr//lib", "usr", 1 }, "error: share 'usr': the shared directory must be a plain absolute path" },
		{ { "/usr/", "usr", 1 }, "error: share 'usr': the shared directory must be a plain absolute path" },
		{ { "/usr/..", "usr", 1 }, "error: share 'usr': the shared directory must be a plain absolute path" },
		{ { "/", "root", 1 }, "error: share 'root': the host's root directory is never shared" },
		{ { "/usr", "Usr", 1 }, "error: share 0: tag must be 1 to 31 of a-z, 0-9 and '_'" },
		{ { "/usr", "u-s", 1 }, "error: share 0: tag must be 1 to 31 of a-z, 0-9 and '_'" },
		{ { "/usr", "", 1 }, "error: share 0: tag must be 1 to 31 of a-z, 0-9 and '_'" },
		{ { "/usr", NULL, 1 }, "error: share 0: tag must be 1 to 31 of a-z, 0-9 and '_'" },
		{ { "/usr", "abcdefghijklmnopqrstuvwxyz012345", 1 }, "error: share 0: tag must be 1 to 31 of a-z, 0-9 and '_'" },
		{ { "/usr\x01", "usr", 1 }, "error: shared directory has a control character (0x01) at byte 4" },
		{ { "/usr", "usr", 0 }, "error: share 'usr': klab shares host directories read-only only" },
	};
	struct domain_share two[2] = { { "/usr", "usr", 1 }, { "/srv", "usr", 1 } };
	struct guest_plan p;
	struct domain_spec spec;

	(void)state;
	plan_on(&p, "small-1socket-2cpu-1node", 2, 1, 1024);
	spec = base_spec(&p);
	spec.memory_mb = 1024;
	spec.nr_shares = 1;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		spec.shares = &bad[i].share;
		assert_refused(&spec, bad[i].msg);
	}
	spec.shares = two;
	spec.nr_shares = 2;
	assert_refused(&spec, "error: share 'usr': tag or directory given twice");
	two[1].tag = "src";
	two[1].source_dir = "/usr";
	assert_refused(&spec, "error: share 'src': tag or directory given twice");
	spec.shares = NULL;
	assert_refused(&spec, "error: guest has 2 shares but no list of them");
	guest_plan_release(&p);
}

static void test_domain__escaping_replaces_what_xml_cannot_hold(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_xml_escaped(&sb, "<a href=\"x\">'&'</a>");
	assert_string_equal(sb.buf, "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;");
	strbuf_reset(&sb);
	strbuf_add_xml_escaped(&sb, "t\tn\nc\x01" "d\x7f" "bad\xff" "cut\xe2\x82" "ok\xe2\x82\xac");
	assert_string_equal(sb.buf, "t&#9;n&#10;c\xef\xbf\xbd" "d\xef\xbf\xbd" "bad\xef\xbf\xbd"
				    "cut\xef\xbf\xbd\xef\xbf\xbd" "ok\xe2\x82\xac");
	strbuf_release(&sb);
}

static void test_domain__accel_names(void **state)
{
	assert_string_equal(accel_name(ACCEL_KVM), "kvm");
	assert_string_equal(accel_name(ACCEL_TCG), "tcg");
}

static int teardown(void **state)
{
	xmlCleanupParser();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_domain__tcg_2vcpu_2cell_pinned_on_small_host),
		cmocka_unit_test(test_domain__kvm_8vcpu_2cell_2m_hugepages_on_big_host),
		cmocka_unit_test(test_domain__tcg_1vcpu_unpinned),
		cmocka_unit_test(test_domain__swap_disk_is_one_virtio_disk),
		cmocka_unit_test(test_domain__scratch_disk_has_the_serial_the_agent_looks_for),
		cmocka_unit_test(test_domain__shares_are_readonly_9p_filesystems),
		cmocka_unit_test(test_domain__bad_shares_refused),
		cmocka_unit_test(test_domain__kvm_4vcpu_4cell_1g_hugepages_on_four_node_host),
		cmocka_unit_test(test_domain__uneven_cells_share_one_socket),
		cmocka_unit_test(test_domain__hostile_values_are_escaped),
		cmocka_unit_test(test_domain__bad_names_refused),
		cmocka_unit_test(test_domain__control_characters_and_bad_utf8_refused),
		cmocka_unit_test(test_domain__bad_uuid_refused),
		cmocka_unit_test(test_domain__pinning_needs_a_pinned_plan),
		cmocka_unit_test(test_domain__hugepages_need_whole_pages_per_cell),
		cmocka_unit_test(test_domain__escaping_replaces_what_xml_cannot_hold),
		cmocka_unit_test(test_domain__accel_names),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
