/* klab host check and host fingerprints: the facts of a host that decide
 * whether performance numbers from it mean anything, read with bounded
 * reads from /proc and /sys, each said with its consequence. */
#include "guest/hostcheck.h"
#include "guest/topology.h"
#include "util/alloc.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The first max bytes of a file, NUL-terminated, quietly: a missing
 * file is a fact (no cpufreq, no SMT control), not an error.  -1 when it
 * cannot be opened or read. */
static int read_head(const char *path, size_t max, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	size_t n = 0;

	*out = NULL;
	if (fd < 0)
		return -1;
	buf = xmalloc(max + 1);
	while (n < max) {
		ssize_t r = read(fd, buf + n, max - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			close(fd);
			return -1;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	return 0;
}

/* A /proc or /sys file's first line under root, cleaned (no control
 * characters), at most 4 KiB read; NULL when it cannot be read. */
static char *read_line(const char *root, const char *path)
{
	char *full = xstrfmt("%s%s", root, path), *data = NULL;
	struct strbuf sb = STRBUF_INIT;

	if (read_head(full, 4096, &data) < 0) {
		free(full);
		return NULL;
	}
	free(full);
	data[strcspn(data, "\n")] = '\0';
	strbuf_add_clean(&sb, data);
	free(data);
	strbuf_rtrim(&sb);
	return strbuf_detach(&sb, NULL);
}

/* The value of "key : value" in a /proc file of such lines (cpuinfo,
 * meminfo), first occurrence; NULL when absent. */
static char *read_field(const char *root, const char *path, const char *key)
{
	char *full = xstrfmt("%s%s", root, path), *data = NULL, *ret = NULL;
	size_t klen = strlen(key);

	/* the first CPU's block of cpuinfo, meminfo whole: 64 KiB holds both */
	if (read_head(full, 65536, &data) == 0) {
		for (char *line = data; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			char *end = strchr(line, '\n'), *v;

			if (strncmp(line, key, klen) || (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':'))
				continue;
			if (end)
				*end = '\0';
			v = strchr(line, ':');
			if (!v)
				continue;
			v++;
			while (*v == ' ' || *v == '\t')
				v++;
			struct strbuf sb = STRBUF_INIT;
			strbuf_add_clean(&sb, v);
			strbuf_rtrim(&sb);
			ret = strbuf_detach(&sb, NULL);
			break;
		}
	}
	free(data);
	free(full);
	return ret;
}

static int has_flag(const char *flags, const char *flag)
{
	size_t n = strlen(flag);

	for (const char *p = flags; p && (p = strstr(p, flag)); p += n)
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

static void add_fact(struct host_check *hc, const char *name, enum fact_level level, char *value,
		     const char *fmt, ...) KLAB_PRINTF(5, 6);
static void add_fact(struct host_check *hc, const char *name, enum fact_level level, char *value,
		     const char *fmt, ...)
{
	struct host_fact *f;
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(hc->facts, hc->nr + 1, hc->alloc);
	f = &hc->facts[hc->nr++];
	f->name = name;
	f->value = value;
	f->consequence = strbuf_detach(&sb, NULL);
	f->level = level;
}

static int file_exists(const char *root, const char *path)
{
	char *full = xstrfmt("%s%s", root, path);
	int ok = access(full, F_OK) == 0;

	free(full);
	return ok;
}

/* KVM usable means hardware virtualization in the CPU: an openable
 * /dev/kvm inside a guest without nested VT-x/AMD-V crawls and dies with
 * emulation failures (ENVIRONMENT.md). */
static void fact_kvm(struct host_check *hc, const char *root, const struct host_topology *topo)
{
	char *flags = read_field(root, "/proc/cpuinfo", "flags");
	int hw = has_flag(flags, "vmx") || has_flag(flags, "svm"), nested = has_flag(flags, "hypervisor");
	int dev = file_exists(root, "/dev/kvm");
	int domain = topo ? topo->has_kvm_domain : -1;

	if (hw && dev && domain != 0)
		add_fact(hc, "kvm", FACT_OK, xstrdup("usable"),
			 "the CPU has %s and /dev/kvm is there: guests run under KVM",
			 has_flag(flags, "vmx") ? "vmx" : "svm");
	else
		add_fact(hc, "kvm", FACT_BAD, xstrdup("not usable"),
			 "%s%s%s: guests run under TCG (about 10x slower), and TCG runs are never compared with "
			 "KVM runs",
			 hw ? "/dev/kvm is missing" : "the CPU has no vmx or svm flag",
			 !hw && dev ? " (/dev/kvm opens, but a guest under it dies of emulation failures)" : "",
			 nested ? "; this host is itself a virtual machine ('hypervisor' flag)" : "");
	free(flags);
}

/* perf-profile wants hardware counters; without them only cpu-clock
 * samples (timer based, no cycles or cache events). */
static void fact_pmu(struct host_check *hc, const char *root)
{
	struct perf_event_attr attr;
	int fd = -1;

	if (!*root) {
		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.disabled = 1;
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	} else if (file_exists(root, "/sys/bus/event_source/devices/cpu")) {
		fd = 0;	/* a test tree: the PMU's directory stands for it */
	}
	if (fd >= 0) {
		if (fd > 0)
			close(fd);
		add_fact(hc, "pmu", FACT_OK, xstrdup("cycles"),
			 "hardware counters: perf-profile samples cycles");
	} else {
		add_fact(hc, "pmu", FACT_WARN, xstrdup("only cpu-clock"),
			 "no hardware counters%s: perf-profile samples the timer (cpu-clock), no cycles or cache "
			 "events", file_exists(root, "/sys/bus/event_source/devices/cpu") ? "" : " (no 'cpu' PMU)");
	}
}

static void fact_numa(struct host_check *hc, const char *root)
{
	struct strbuf v = STRBUF_INIT;
	char *online = read_line(root, "/sys/devices/system/node/online");
	unsigned char *set = NULL;
	size_t n = 0, nodes = 0;

	if (!online || cpulist_parse(online, &set, &n) < 0) {
		free(online);
		free(set);
		add_fact(hc, "numa", FACT_WARN, xstrdup("unknown"), "no NUMA information in /sys");
		return;
	}
	for (size_t i = 0; i < n && i < 64; i++) {
		char path[80], *dist;

		if (!set[i])
			continue;
		nodes++;
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%zu/distance", i);
		dist = read_line(root, path);
		strbuf_addf(&v, "%snode%zu [%s]", v.len ? ", " : "", i, dist ? dist : "?");
		free(dist);
	}
	{
		char *shown = xstrfmt("%zu node%s: %s", nodes, nodes == 1 ? "" : "s", v.buf);

		if (nodes > 1)
			add_fact(hc, "numa", FACT_OK, shown,
				 "guests can have NUMA cells bound to host nodes (remote access costs as the "
				 "distances say)");
		else
			add_fact(hc, "numa", FACT_WARN, shown,
				 "one node: a guest's NUMA cells share its memory; NUMA effects cannot be measured "
				 "here");
	}
	free(online);
	free(set);
	strbuf_release(&v);
}

static void fact_hugepages(struct host_check *hc, const char *root)
{
	static const char *const sizes[] = { "2048kB", "1048576kB" };
	struct strbuf v = STRBUF_INIT;
	unsigned long free_total = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		char path[96], *fr, *nr;

		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%s/free_hugepages", sizes[i]);
		fr = read_line(root, path);
		snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%s/nr_hugepages", sizes[i]);
		nr = read_line(root, path);
		if (fr && nr) {
			strbuf_addf(&v, "%s%s free of %s (%s)", v.len ? ", " : "", fr, nr,
				    i ? "1 GiB" : "2 MiB");
			free_total += strtoul(fr, NULL, 10);
		}
		free(fr);
		free(nr);
	}
	if (!v.len)
		strbuf_addstr(&v, "none configured");
	if (free_total)
		add_fact(hc, "hugepages", FACT_OK, strbuf_detach(&v, NULL),
			 "guest memory can be backed by reserved huge pages");
	else
		add_fact(hc, "hugepages", FACT_WARN, strbuf_detach(&v, NULL),
			 "guest memory comes from ordinary pages (host THP at best): the host's own "
			 "fragmentation can show in guest numbers");
	strbuf_release(&v);
}

static void fact_governor(struct host_check *hc, const char *root)
{
	char *gov = read_line(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	char *no_turbo = read_line(root, "/sys/devices/system/cpu/intel_pstate/no_turbo");
	char *boost = read_line(root, "/sys/devices/system/cpu/cpufreq/boost");

	if (!gov)
		add_fact(hc, "governor", FACT_WARN, xstrdup("none (no cpufreq)"),
			 "the clock is not the host's to set (a virtual machine, or no driver): speed can drift "
			 "with the machine's other load");
	else if (!strcmp(gov, "performance"))
		add_fact(hc, "governor", FACT_OK, gov, "CPUs stay at their top clock");
	else
		add_fact(hc, "governor", FACT_WARN, gov,
			 "the clock follows load: set 'performance' for steadier numbers");
	if (no_turbo || boost) {
		int on = no_turbo ? !strcmp(no_turbo, "0") : !strcmp(boost, "1");

		add_fact(hc, "turbo", on ? FACT_WARN : FACT_OK, xstrdup(on ? "on" : "off"),
			 on ? "the clock rises with thermal headroom: numbers drift with temperature and load"
			    : "no turbo: the clock does not depend on temperature");
	} else {
		add_fact(hc, "turbo", FACT_WARN, xstrdup("unknown"),
			 "neither intel_pstate/no_turbo nor cpufreq/boost: whether the clock boosts is not known");
	}
	free(no_turbo);
	free(boost);
}

static void fact_smt(struct host_check *hc, const char *root)
{
	char *active = read_line(root, "/sys/devices/system/cpu/smt/active");
	char *control = read_line(root, "/sys/devices/system/cpu/smt/control");

	if (active && !strcmp(active, "1"))
		add_fact(hc, "smt", FACT_WARN, xstrfmt("on (%s)", control ? control : "?"),
			 "sibling threads share a core: klab gives each vCPU a core of its own while whole cores "
			 "remain");
	else
		add_fact(hc, "smt", FACT_OK, xstrfmt("off (%s)", control ? control : "unknown"),
			 "one thread per core: vCPUs never share a core with another guest's");
	free(active);
	free(control);
}

static void fact_isolation(struct host_check *hc, const char *root)
{
	char *iso = read_line(root, "/sys/devices/system/cpu/isolated");
	char *nohz = read_line(root, "/sys/devices/system/cpu/nohz_full");
	int any = (iso && *iso) || (nohz && *nohz && strcmp(nohz, "(null)"));

	add_fact(hc, "isolcpus", any ? FACT_OK : FACT_WARN,
		 xstrfmt("isolated %s, nohz_full %s", iso && *iso ? iso : "none",
			 nohz && *nohz && strcmp(nohz, "(null)") ? nohz : "none"),
		 any ? "set guest_cpus to the isolated CPUs: the host's scheduler and ticks stay off them"
		     : "no CPU is kept from the host's own tasks: they share the guests' CPUs");
	free(iso);
	free(nohz);
}

static void fact_thp(struct host_check *hc, const char *root)
{
	char *en = read_line(root, "/sys/kernel/mm/transparent_hugepage/enabled");
	char *df = read_line(root, "/sys/kernel/mm/transparent_hugepage/defrag");

	add_fact(hc, "thp", FACT_OK, xstrfmt("enabled %s, defrag %s", en ? en : "?", df ? df : "?"),
		 "the host backs guest memory by these rules: keep them the same across compared runs");
	free(en);
	free(df);
}

static void fact_memory(struct host_check *hc, const char *root)
{
	char *total = read_field(root, "/proc/meminfo", "MemTotal");
	char *avail = read_field(root, "/proc/meminfo", "MemAvailable");
	unsigned long long av = avail ? strtoull(avail, NULL, 10) : 0;

	add_fact(hc, "memory", av >= (2ull << 20) ? FACT_OK : FACT_WARN,
		 xstrfmt("%s total, %s available", total ? total : "?", avail ? avail : "?"),
		 av >= (2ull << 20) ? "room for guests (each takes its memory_mb)"
				    : "under 2 GiB available: guests may not start");
	free(total);
	free(avail);
}

static void fact_cpu(struct host_check *hc, const char *root)
{
	char *model = read_field(root, "/proc/cpuinfo", "model name");
	char *mc = read_field(root, "/proc/cpuinfo", "microcode");
	long n = 0;
	char *online = read_line(root, "/sys/devices/system/cpu/online");
	unsigned char *set = NULL;
	size_t nr = 0;

	if (online && cpulist_parse(online, &set, &nr) == 0)
		for (size_t i = 0; i < nr; i++)
			n += set[i];
	add_fact(hc, "cpu", FACT_OK, xstrfmt("%s, microcode %s, %ld online", model ? model : "?", mc ? mc : "?", n),
		 "part of the host fingerprint: runs on another model or microcode are not compared as alike");
	free(model);
	free(mc);
	free(online);
	free(set);
}

void host_check_local(struct host_check *hc, const char *root, const struct host_topology *topo)
{
	struct utsname u;

	memset(hc, 0, sizeof(*hc));
	fact_kvm(hc, root, topo);
	fact_cpu(hc, root);
	if (!*root && uname(&u) == 0)
		add_fact(hc, "kernel", FACT_OK, xstrfmt("%.64s", u.release),
			 "part of the host fingerprint");
	fact_pmu(hc, root);
	fact_numa(hc, root);
	fact_hugepages(hc, root);
	fact_governor(hc, root);
	fact_smt(hc, root);
	fact_isolation(hc, root);
	fact_thp(hc, root);
	fact_memory(hc, root);
}

void host_check_remote(struct host_check *hc, const struct host_topology *topo)
{
	uint64_t free_2m = 0, free_1g = 0, mem = 0;

	memset(hc, 0, sizeof(*hc));
	if (topo->has_vmx_or_svm && topo->has_kvm_domain)
		add_fact(hc, "kvm", FACT_OK, xstrdup("usable"),
			 "libvirt offers KVM and the CPU has vmx/svm: guests run under KVM");
	else
		add_fact(hc, "kvm", FACT_BAD, xstrdup("not usable"), "%s: guests run under TCG (about 10x slower)",
			 topo->has_vmx_or_svm ? "libvirt offers no kvm domain" : "the CPU has no vmx or svm flag");
	add_fact(hc, "cpu", FACT_OK, xstrfmt("%s, microcode %s, %zu CPUs", topo->cpu_model ? topo->cpu_model : "?",
					       topo->microcode ? topo->microcode : "?", topo->nr_cpus),
		 "part of the host fingerprint");
	for (size_t i = 0; i < topo->nr_nodes; i++) {
		free_2m += topo->nodes[i].free_2m_pages;
		free_1g += topo->nodes[i].free_1g_pages;
		mem += topo->nodes[i].memory_kb;
	}
	add_fact(hc, "numa", topo->nr_nodes > 1 ? FACT_OK : FACT_WARN,
		 xstrfmt("%zu node%s", topo->nr_nodes, topo->nr_nodes == 1 ? "" : "s"),
		 topo->nr_nodes > 1 ? "guests can have NUMA cells bound to host nodes"
				    : "one node: NUMA effects cannot be measured there");
	add_fact(hc, "hugepages", free_2m + free_1g ? FACT_OK : FACT_WARN,
		 xstrfmt("%llu of 2 MiB, %llu of 1 GiB", (unsigned long long)free_2m, (unsigned long long)free_1g),
		 "as libvirt counts them (reserved, per node)");
	add_fact(hc, "memory", FACT_OK, xstrfmt("%llu kB", (unsigned long long)mem), "in the host's NUMA cells");
	add_fact(hc, "other", FACT_WARN, xstrdup("not read"),
		 "PMU, governor, turbo, SMT, isolated CPUs and THP are in the host's /sys: run 'klab host check' "
		 "there");
}

void host_check_release(struct host_check *hc)
{
	for (size_t i = 0; i < hc->nr; i++) {
		free(hc->facts[i].value);
		free(hc->facts[i].consequence);
	}
	free(hc->facts);
	memset(hc, 0, sizeof(*hc));
}

static const char *level_name(enum fact_level l)
{
	return l == FACT_OK ? "ok" : l == FACT_WARN ? "warn" : "bad";
}

void host_check_format(struct strbuf *sb, const struct host_check *hc)
{
	for (size_t i = 0; i < hc->nr; i++) {
		const struct host_fact *f = &hc->facts[i];

		strbuf_addf(sb, "%-2s %-10s %s: %s\n", f->level == FACT_OK ? "" : f->level == FACT_WARN ? "!" : "!!",
			    f->name, f->value, f->consequence);
	}
}

void host_check_json(struct strbuf *sb, const char *host, const struct host_check *hc)
{
	strbuf_addstr(sb, "{\"host\": ");
	json_add_string(sb, host);
	strbuf_addstr(sb, ", \"facts\": [");
	for (size_t i = 0; i < hc->nr; i++) {
		const struct host_fact *f = &hc->facts[i];

		strbuf_addstr(sb, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
		json_add_string(sb, f->name);
		strbuf_addstr(sb, ", \"value\": ");
		json_add_string(sb, f->value);
		strbuf_addf(sb, ", \"level\": \"%s\", \"consequence\": ", level_name(f->level));
		json_add_string(sb, f->consequence);
		strbuf_addch(sb, '}');
	}
	strbuf_addstr(sb, "\n]}\n");
}

static void fp_version(struct strbuf *sb, const char *key, unsigned long v)
{
	if (v)
		strbuf_addf(sb, "%s=%lu.%lu.%lu\n", key, v / 1000000, v / 1000 % 1000, v % 1000);
	else
		strbuf_addf(sb, "%s=?\n", key);
}

void host_fingerprint_make(struct host_fingerprint *fp, const struct fingerprint_in *in)
{
	struct strbuf sb = STRBUF_INIT;
	const struct host_topology *t = in->topo;

	if (in->root) {
		char *model = read_field(in->root, "/proc/cpuinfo", "model name");
		char *mc = read_field(in->root, "/proc/cpuinfo", "microcode");
		char *gov = read_line(in->root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
		char *smt = read_line(in->root, "/sys/devices/system/cpu/smt/active");
		struct utsname u;

		strbuf_addf(&sb, "cpu=%.128s\nmicrocode=%.32s\n", model ? model : "?", mc ? mc : "?");
		strbuf_addf(&sb, "kernel=%.64s\n", !*in->root && uname(&u) == 0 ? u.release : "?");
		strbuf_addf(&sb, "governor=%.32s\nsmt=%s\n", gov ? gov : "none", smt ? smt : "?");
		free(model);
		free(mc);
		free(gov);
		free(smt);
	} else {
		strbuf_addf(&sb, "cpu=%s\nmicrocode=%s\nkernel=?\ngovernor=?\nsmt=?\n",
			    t && t->cpu_model ? t->cpu_model : "?", t && t->microcode ? t->microcode : "?");
	}
	strbuf_addf(&sb, "accel=%s\n", in->accel ? in->accel : "?");
	strbuf_addf(&sb, "guest=%u vCPUs, %u nodes, %llu MiB\n", in->vcpus, in->numa_nodes ? in->numa_nodes : 1,
		    in->memory_mb);
	fp_version(&sb, "qemu", in->qemu_version);
	fp_version(&sb, "libvirt", in->libvirt_version);
	blob_hash(sb.buf, sb.len, fp->hash);
	fp->text = strbuf_detach(&sb, NULL);
}

void host_fingerprint_release(struct host_fingerprint *fp)
{
	free(fp->text);
	fp->text = NULL;
}

/* The value of key in a fingerprint text (pointer into it, up to '\n'),
 * its length in *n; NULL when absent. */
static const char *fp_value(const char *text, const char *key, size_t *n)
{
	size_t k = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, k) && p[k] == '=') {
			*n = strcspn(p + k + 1, "\n");
			return p + k + 1;
		}
	return NULL;
}

void host_fingerprint_diff(struct strbuf *out, const char *a, const char *b)
{
	static const char *const keys[] = { "cpu", "microcode", "kernel", "governor", "smt",
					    "accel", "guest", "qemu", "libvirt" };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		size_t na = 0, nb = 0;
		const char *va = fp_value(a ? a : "", keys[i], &na), *vb = fp_value(b ? b : "", keys[i], &nb);

		if (!va != !vb || (va && (na != nb || memcmp(va, vb, na))))
			strbuf_addf(out, "%s%s", out->len ? ", " : "", keys[i]);
	}
}
