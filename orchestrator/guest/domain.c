/* Guest spec → libvirt domain XML text.  No libvirt calls: the text is
 * checked here and by golden files, and started elsewhere (vm.c). */
#include "guest/domain.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <stdlib.h>
#include <string.h>

KLAB_ENUM_IMPL(accel, ACCEL_LAST, "kvm", "tcg")

/* Length of the UTF-8 sequence at s if it is a character XML 1.0 allows
 * (not overlong, no surrogate, at most U+10FFFF, not U+FFFE/U+FFFF);
 * 0 if it is not. */
static size_t utf8_char(const unsigned char *s)
{
	unsigned cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

static int is_control(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f;
}

void strbuf_add_xml_escaped(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = 1;

		switch (*p) {
		case '&':
			strbuf_addstr(sb, "&amp;");
			break;
		case '<':
			strbuf_addstr(sb, "&lt;");
			break;
		case '>':
			strbuf_addstr(sb, "&gt;");
			break;
		case '\'':
			strbuf_addstr(sb, "&apos;");
			break;
		case '"':
			strbuf_addstr(sb, "&quot;");
			break;
		case '\t':
		case '\n':
			strbuf_addf(sb, "&#%d;", *p);
			break;
		default:
			if (is_control(*p) || !(n = utf8_char(p))) {
				strbuf_addstr(sb, "\xef\xbf\xbd");
				n = 1;
			} else {
				strbuf_add(sb, p, n);
			}
		}
		p += n;
	}
}

/* A value from the user: UTF-8 without control characters other than tab
 * and newline.  The value itself is not echoed: it may be what is wrong. */
static int check_text(const char *what, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n;

		if (is_control(*p))
			return error("%s has a control character (0x%02x) at byte %zu", what, *p,
				     (size_t)(p - (const unsigned char *)s));
		if (!(n = utf8_char(p)))
			return error("%s is not valid UTF-8 (byte %zu)", what, (size_t)(p - (const unsigned char *)s));
		p += n;
	}
	return 0;
}

static int check_path(const char *what, const char *path, int required)
{
	if (!path) {
		if (required)
			return error("guest has no %s", what);
		return 0;
	}
	if (path[0] != '/')
		return error("%s must be an absolute path", what);
	return check_text(what, path);
}

/* No empty, "." or ".." component after the leading '/', no trailing '/'. */
static int plain_path(const char *p)
{
	for (const char *c = p + 1; *c; ) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		c += n;
		if (*c == '/' && !*++c)
			return 0;	/* a trailing '/' */
	}
	return 1;
}

/* A share: absolute and plain (no ".", ".." or empty component, which
 * would make the path mean something else than it reads), a tag the
 * guest can name, read-only, each tag and directory once. */
static int check_shares(const struct domain_spec *spec)
{
	if (spec->nr_shares && !spec->shares)
		return error("guest has %zu shares but no list of them", spec->nr_shares);
	if (spec->nr_shares > DOMAIN_MAX_SHARES)
		return error("guest has %zu shared directories, at most %d", spec->nr_shares, DOMAIN_MAX_SHARES);
	for (size_t i = 0; i < spec->nr_shares; i++) {
		const struct domain_share *sh = &spec->shares[i];
		const char *t = sh->tag, *d = sh->source_dir;
		size_t tl = t ? strlen(t) : 0;

		if (!tl || tl > DOMAIN_SHARE_TAG_MAX || strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_") != tl)
			return error("share %zu: tag must be 1 to %d of a-z, 0-9 and '_'", i, DOMAIN_SHARE_TAG_MAX);
		if (check_path("shared directory", d, 1) < 0)
			return -1;
		if (!plain_path(d))
			return error("share '%s': the shared directory must be a plain absolute path", t);
		if (!strcmp(d, "/"))
			return error("share '%s': the host's root directory is never shared", t);
		if (!sh->readonly)
			return error("share '%s': klab shares host directories read-only only", t);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(spec->shares[j].tag, t) || !strcmp(spec->shares[j].source_dir, d))
				return error("share '%s': tag or directory given twice", t);
	}
	return 0;
}

static int check_name(const char *name)
{
	size_t plen = strlen(DOMAIN_NAME_PREFIX), len;

	if (!name)
		return error("guest has no name");
	len = strlen(name);
	if (strncmp(name, DOMAIN_NAME_PREFIX, plen) || len == plen || len > DOMAIN_NAME_MAX)
		return error("guest name must be '%s' and up to %zu letters, digits, '_', '.' or '-'",
			     DOMAIN_NAME_PREFIX, (size_t)DOMAIN_NAME_MAX - plen);
	for (size_t i = plen; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return error("guest name has a character other than letters, digits, '_', '.' "
				     "and '-' at byte %zu", i);
	}
	return 0;
}

static int check_uuid(const char *uuid)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (strlen(uuid) != sizeof(shape) - 1)
		goto bad;
	for (size_t i = 0; shape[i]; i++) {
		char c = uuid[i];

		if (shape[i] == '-' ? c != '-' :
		    !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			goto bad;
	}
	return 0;
bad:
	return error("guest uuid must look like %s (hexadecimal digits)", shape);
}

/* The plan is consistent, pinned when it must be, and its memory in
 * whole hugepages; *memory_mb is what the cells add up to. */
static int check_plan(const struct domain_spec *spec, uint64_t *memory_mb)
{
	const struct guest_plan *p = spec->plan;
	uint64_t page_mb = spec->hugepages == BACKING_1G ? 1024 : spec->hugepages == BACKING_2M ? 2 : 1;
	unsigned next = 0;

	if (!p || !p->vcpus || !p->nr_cells)
		return error("guest has no CPU plan");
	*memory_mb = 0;
	for (unsigned c = 0; c < p->nr_cells; c++) {
		uint64_t m = p->cell_memory_mb[c];

		if (p->cell_first_vcpu[c] != next || !p->cell_nr_vcpus[c] || p->cell_nr_vcpus[c] > p->vcpus - next)
			return error("guest cell %u does not follow on from the cells before it", c);
		next += p->cell_nr_vcpus[c];
		if (!m || m > UINT64_MAX / 1024 - *memory_mb)
			return error("guest cell %u has %llu MiB of memory", c, (unsigned long long)m);
		if (m % page_mb)
			return error("guest cell %u has %llu MiB, not a whole number of %s hugepages", c,
				     (unsigned long long)m, page_mb == 2 ? "2 MiB" : "1 GiB");
		*memory_mb += m;
		if (spec->pin && p->cell_host_node[c] < 0)
			return error("cannot pin guest cell %u: the plan binds it to no host node", c);
	}
	if (next != p->vcpus)
		return error("guest cells hold %u vCPUs, the plan %u", next, p->vcpus);
	for (unsigned i = 0; spec->pin && i < p->vcpus; i++)
		if (p->vcpu_pin[i] < 0)
			return error("cannot pin vCPU %u: the plan gives it no host CPU", i);
	for (size_t i = 0; spec->pin && i < p->nr_emulator_cpus; i++)
		if (p->emulator_cpus[i] < 0)
			return error("cannot pin the emulator: the plan gives it host CPU %d", p->emulator_cpus[i]);
	if (spec->memory_mb && spec->memory_mb != *memory_mb)
		return error("guest memory of %llu MiB differs from its cells' %llu MiB",
			     (unsigned long long)spec->memory_mb, (unsigned long long)*memory_mb);
	return 0;
}

static int check_spec(const struct domain_spec *spec, uint64_t *memory_mb)
{
	if (spec->accel != ACCEL_KVM && spec->accel != ACCEL_TCG)
		return error("unknown accelerator %d", (int)spec->accel);
	if (check_name(spec->name) < 0 || (spec->uuid && check_uuid(spec->uuid) < 0) ||
	    check_path("emulator", spec->emulator, 0) < 0 || check_path("kernel", spec->kernel, 1) < 0 ||
	    check_path("initrd", spec->initrd, 0) < 0 || check_path("swap disk", spec->swap_disk, 0) < 0 ||
	    check_path("scratch disk", spec->scratch_disk, 0) < 0 ||
	    (spec->cmdline && check_text("kernel command line", spec->cmdline) < 0))
		return -1;
	if (check_shares(spec) < 0)
		return -1;
	if (!spec->lab_id)
		return error("guest has no lab id");
	if (check_text("lab id", spec->lab_id) < 0)
		return -1;
	if (spec->owner_pid <= 0 || spec->created_s < 0)
		return error("guest owner pid %d or creation time %lld is not valid", spec->owner_pid,
			     (long long)spec->created_s);
	return check_plan(spec, memory_mb);
}

/* <name>value</name> at the given indent, value escaped. */
static void add_element(struct strbuf *sb, int indent, const char *name, const char *value)
{
	strbuf_addf(sb, "%*s<%s>", indent, "", name);
	strbuf_add_xml_escaped(sb, value);
	strbuf_addf(sb, "</%s>\n", name);
}

static void add_ids(struct strbuf *sb, const int *ids, size_t n)
{
	int max = 0;
	unsigned char *set;

	for (size_t i = 0; i < n; i++)
		if (ids[i] > max)
			max = ids[i];
	set = xcalloc((size_t)max + 1, 1);
	for (size_t i = 0; i < n; i++)
		set[ids[i]] = 1;
	cpulist_format(sb, set, (size_t)max + 1);
	free(set);
}

static void add_cputune(struct strbuf *sb, const struct guest_plan *p)
{
	strbuf_addstr(sb, "  <cputune>\n");
	for (unsigned i = 0; i < p->vcpus; i++)
		strbuf_addf(sb, "    <vcpupin vcpu='%u' cpuset='%d'/>\n", i, p->vcpu_pin[i]);
	if (p->nr_emulator_cpus) {
		strbuf_addstr(sb, "    <emulatorpin cpuset='");
		add_ids(sb, p->emulator_cpus, p->nr_emulator_cpus);
		strbuf_addstr(sb, "'/>\n");
	}
	strbuf_addstr(sb, "  </cputune>\n");
}

static void add_numatune(struct strbuf *sb, const struct guest_plan *p)
{
	strbuf_addstr(sb, "  <numatune>\n    <memory mode='strict' nodeset='");
	add_ids(sb, p->cell_host_node, p->nr_cells);
	strbuf_addstr(sb, "'/>\n");
	for (unsigned c = 0; c < p->nr_cells; c++)
		strbuf_addf(sb, "    <memnode cellid='%u' mode='strict' nodeset='%d'/>\n", c, p->cell_host_node[c]);
	strbuf_addstr(sb, "  </numatune>\n");
}

static void add_cpu(struct strbuf *sb, const struct domain_spec *spec)
{
	const struct guest_plan *p = spec->plan;
	unsigned sockets = p->nr_cells, cores = p->vcpus / p->nr_cells;

	/* one socket per cell keeps QEMU's sockets aligned with the NUMA
	 * cells; uneven cells cannot be, so they share one socket */
	if (p->vcpus % p->nr_cells) {
		sockets = 1;
		cores = p->vcpus;
	}
	if (spec->accel == ACCEL_KVM)
		strbuf_addstr(sb, "  <cpu mode='host-passthrough' check='none' migratable='off'>\n");
	else
		strbuf_addstr(sb, "  <cpu mode='maximum' check='none'>\n");
	strbuf_addf(sb, "    <topology sockets='%u' dies='1' cores='%u' threads='1'/>\n", sockets, cores);
	strbuf_addstr(sb, "    <numa>\n");
	for (unsigned c = 0; c < p->nr_cells; c++) {
		unsigned a = p->cell_first_vcpu[c], b = a + p->cell_nr_vcpus[c] - 1;

		strbuf_addf(sb, "      <cell id='%u' cpus='%u", c, a);
		if (b > a)
			strbuf_addf(sb, "-%u", b);
		strbuf_addf(sb, "' memory='%llu' unit='MiB'/>\n", (unsigned long long)p->cell_memory_mb[c]);
	}
	strbuf_addstr(sb, "    </numa>\n  </cpu>\n");
}

static void add_devices(struct strbuf *sb, const struct domain_spec *spec)
{
	strbuf_addstr(sb, "  <devices>\n");
	if (spec->emulator)
		add_element(sb, 4, "emulator", spec->emulator);
	if (spec->swap_disk) {
		strbuf_addstr(sb, "    <disk type='file' device='disk'>\n"
				  "      <driver name='qemu' type='raw' cache='unsafe'/>\n"
				  "      <source file='");
		strbuf_add_xml_escaped(sb, spec->swap_disk);
		strbuf_addstr(sb, "'/>\n"
				  "      <target dev='vda' bus='virtio'/>\n"
				  "    </disk>\n");
	}
	if (spec->scratch_disk) {
		strbuf_addstr(sb, "    <disk type='file' device='disk'>\n"
				  "      <driver name='qemu' type='raw' cache='unsafe'/>\n"
				  "      <source file='");
		strbuf_add_xml_escaped(sb, spec->scratch_disk);
		strbuf_addf(sb, "'/>\n"
				"      <target dev='%s' bus='virtio'/>\n"
				"      <serial>" DOMAIN_SCRATCH_SERIAL "</serial>\n"
				"    </disk>\n",
			    spec->swap_disk ? "vdb" : "vda");
	}
	for (size_t i = 0; i < spec->nr_shares; i++) {
		strbuf_addstr(sb, "    <filesystem type='mount' accessmode='squash'>\n"
				  "      <driver type='path'/>\n"
				  "      <source dir='");
		strbuf_add_xml_escaped(sb, spec->shares[i].source_dir);
		strbuf_addstr(sb, "'/>\n      <target dir='");
		strbuf_add_xml_escaped(sb, spec->shares[i].tag);
		strbuf_addstr(sb, "'/>\n"
				  "      <readonly/>\n"
				  "    </filesystem>\n");
	}
	strbuf_addstr(sb,
		      "    <controller type='usb' model='none'/>\n"
		      "    <controller type='virtio-serial' index='0'/>\n"
		      "    <serial type='pty'>\n"
		      "      <target port='0'/>\n"
		      "    </serial>\n"
		      "    <console type='pty'>\n"
		      "      <target type='serial' port='0'/>\n"
		      "    </console>\n"
		      "    <channel type='unix'>\n"
		      "      <source mode='bind'/>\n"
		      "      <target type='virtio' name='" DOMAIN_RESULT_CHANNEL "'/>\n"
		      "    </channel>\n"
		      "    <memballoon model='none'/>\n"
		      "    <panic model='isa'>\n"
		      "      <address type='isa' iobase='0x505'/>\n"
		      "    </panic>\n"
		      "  </devices>\n");
}

int domain_xml(const struct domain_spec *spec, struct strbuf *out)
{
	const struct guest_plan *p = spec->plan;
	struct strbuf sb = STRBUF_INIT;
	uint64_t memory_mb = 0;

	if (check_spec(spec, &memory_mb) < 0)
		return -1;

	strbuf_addf(&sb, "<domain type='%s'>\n", spec->accel == ACCEL_KVM ? "kvm" : "qemu");
	add_element(&sb, 2, "name", spec->name);
	if (spec->uuid)
		add_element(&sb, 2, "uuid", spec->uuid);
	strbuf_addstr(&sb, "  <metadata>\n    <klab:guest xmlns:klab='" DOMAIN_METADATA_NS "'>\n");
	add_element(&sb, 6, "klab:lab", spec->lab_id);
	strbuf_addf(&sb, "      <klab:owner-pid>%d</klab:owner-pid>\n", spec->owner_pid);
	strbuf_addf(&sb, "      <klab:created>%lld</klab:created>\n", (long long)spec->created_s);
	strbuf_addstr(&sb, "    </klab:guest>\n  </metadata>\n");
	strbuf_addf(&sb, "  <memory unit='MiB'>%llu</memory>\n", (unsigned long long)memory_mb);
	if (spec->hugepages != BACKING_NONE)
		strbuf_addf(&sb,
			    "  <memoryBacking>\n"
			    "    <hugepages>\n"
			    "      <page size='%s' unit='KiB'/>\n"
			    "    </hugepages>\n"
			    "  </memoryBacking>\n",
			    spec->hugepages == BACKING_1G ? "1048576" : "2048");
	strbuf_addf(&sb, "  <vcpu placement='static'>%u</vcpu>\n", p->vcpus);
	if (spec->pin) {
		add_cputune(&sb, p);
		add_numatune(&sb, p);
	}

	strbuf_addstr(&sb, "  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n");
	add_element(&sb, 4, "kernel", spec->kernel);
	if (spec->initrd)
		add_element(&sb, 4, "initrd", spec->initrd);
	if (spec->cmdline)
		add_element(&sb, 4, "cmdline", spec->cmdline);
	strbuf_addstr(&sb, "  </os>\n  <features>\n    <acpi/>\n    <apic/>\n  </features>\n");
	add_cpu(&sb, spec);
	strbuf_addstr(&sb,
		      "  <clock offset='utc'/>\n"
		      "  <on_poweroff>destroy</on_poweroff>\n"
		      "  <on_reboot>destroy</on_reboot>\n"
		      "  <on_crash>destroy</on_crash>\n");
	add_devices(&sb, spec);
	strbuf_addstr(&sb, "</domain>\n");

	strbuf_add(out, sb.buf, sb.len);
	strbuf_release(&sb);
	return 0;
}
