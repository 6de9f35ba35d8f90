/* libvirt lifecycle of klab's guests.  One boot: create the transient
 * domain paused (so no console byte is lost), open the console and the
 * result channel as libvirt streams (a remote host works the same), resume,
 * then run libvirt's event loop until the guest powers off or a deadline
 * passes, and destroy.  VIR_DOMAIN_START_AUTODESTROY ties the domain to
 * our connection: if klab dies, libvirtd destroys it. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest/vm.h"
#include "guest/domain.h"
#include "util/strbuf.h"
#include "util/util.h"
#include "util/run-command.h"

#define CONSOLE_FILE_MAX (32u << 20)	/* bytes of console kept on disk */
#define CONSOLE_TAIL_MAX (256u << 10)	/* bytes kept in memory for excerpts */
#define POWEROFF_GRACE_MS 15000		/* after done, the guest powers off by itself */
#define PANIC_GRACE_MS 3000		/* after a panic line, let the trace finish */
#define DRAIN_MS 1500			/* after the domain stopped, streams end */

static int event_loop_ready;

static void quiet_libvirt(void *data, virErrorPtr err)
{
	(void)data;
	(void)err;	/* reported by us, with context, through virt_error() */
}

static int virt_error(const char *what)
{
	const char *msg = virGetLastErrorMessage();

	return error("libvirt: %s: %s", what, msg ? msg : "unknown error");
}

static int connect_uri(struct vm_conn *c, const char *uri, int report);

int vm_connect(struct vm_conn *c, const char *uri)
{
	return connect_uri(c, uri, 1);
}

/* libvirt initialised and its default event loop registered, once (in
 * the main thread: vm_connect_timed's thread never races it). */
static int libvirt_init(void)
{
	if (event_loop_ready)
		return 0;
	virSetErrorFunc(NULL, quiet_libvirt);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0)
		return virt_error("cannot initialise");
	event_loop_ready = 1;
	return 0;
}

static int connect_failed(const char *uri, const char *why)
{
	return error("cannot connect to libvirt at '%s': %s (is libvirtd running? ./bootstrap services starts it)",
		     uri, why ? why : "unknown error");
}

static int connect_uri(struct vm_conn *c, const char *uri, int report)
{
	memset(c, 0, sizeof(*c));
	/* A write to libvirtd's socket after it hung up must be an error we
	 * report, not a SIGPIPE that kills klab mid-run (programs klab starts
	 * get SIGPIPE back: run_command resets it). */
	signal(SIGPIPE, SIG_IGN);
	if (libvirt_init() < 0)
		return -1;
	c->conn = virConnectOpenAuth(uri, virConnectAuthPtrDefault, 0);
	if (!c->conn && !report)
		return -1;
	if (!c->conn)
		return connect_failed(uri, virGetLastErrorMessage());
	/* A dead peer is noticed within ~15 s instead of hanging a run. */
	virConnectSetKeepAlive(c->conn, 5, 3);
	c->uri = xstrdup(uri);
	c->hostname = virConnectGetHostname(c->conn);
	if (!c->hostname)
		c->hostname = xstrdup("?");
	return 0;
}

/* A connection opened in a thread of its own (vm_connect_timed): a
 * libvirtd that accepts and never answers (stopped, hung) blocks the
 * thread, not the command; abandoned, the thread frees the job if its
 * open ever returns.  While one is pending for a URI, no other open of
 * that URI starts (placement and reconnects retry every few seconds:
 * each would leave a thread blocked). */
struct open_job {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int done, abandoned, rc;
	struct vm_conn c;
	char *uri;
	char *why;		/* libvirt's message on failure (thread-local there) */
	struct open_job *next;	/* in `pending` while abandoned and blocked */
};

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct open_job *pending;

static int uri_pending(const char *uri)
{
	int found = 0;

	pthread_mutex_lock(&pending_lock);
	for (struct open_job *j = pending; j && !found; j = j->next)
		found = !strcmp(j->uri, uri);
	pthread_mutex_unlock(&pending_lock);
	return found;
}

static void pending_remove(struct open_job *j)
{
	pthread_mutex_lock(&pending_lock);
	for (struct open_job **p = &pending; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			break;
		}
	pthread_mutex_unlock(&pending_lock);
}

static void open_job_free(struct open_job *j)
{
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->cv);
	free(j->uri);
	free(j->why);
	free(j);
}

static void *open_thread(void *arg)
{
	struct open_job *j = arg;
	unsigned long ver;
	int rc = connect_uri(&j->c, j->uri, 0), abandoned;

	/* the open may come back before libvirtd has said a word */
	if (!rc && virConnectGetLibVersion(j->c.conn, &ver) < 0) {
		vm_disconnect(&j->c);
		rc = -1;
	}
	if (rc < 0)
		j->why = xstrdup(virGetLastErrorMessage());
	pthread_mutex_lock(&j->lock);
	j->rc = rc;
	j->done = 1;
	abandoned = j->abandoned;
	pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->lock);
	if (abandoned) {
		pending_remove(j);
		vm_disconnect(&j->c);
		open_job_free(j);
	}
	return NULL;
}

int vm_connect_timed(struct vm_conn *c, const char *uri, int timeout_s, int report)
{
	struct open_job *j;
	struct timespec until;
	pthread_condattr_t ca;
	pthread_t th;
	int done, rc;

	memset(c, 0, sizeof(*c));
	if (uri_pending(uri))
		return report ? error("libvirtd at '%s' still does not answer (stopped or hung?)", uri) : -1;
	if (libvirt_init() < 0)
		return -1;
	j = xcalloc(1, sizeof(*j));
	pthread_mutex_init(&j->lock, NULL);
	/* a deadline on the monotonic clock: a clock step cannot stretch it */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&j->cv, &ca);
	pthread_condattr_destroy(&ca);
	j->uri = xstrdup(uri);
	if (pthread_create(&th, NULL, open_thread, j) != 0) {
		open_job_free(j);
		return error("cannot start a thread to connect to '%s'", uri);
	}
	pthread_detach(th);
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_s;
	pthread_mutex_lock(&j->lock);
	while (!j->done && pthread_cond_timedwait(&j->cv, &j->lock, &until) == 0)
		;
	done = j->done;
	if (!done) {
		j->abandoned = 1;
		pthread_mutex_lock(&pending_lock);
		j->next = pending;
		pending = j;
		pthread_mutex_unlock(&pending_lock);
	}
	pthread_mutex_unlock(&j->lock);
	if (!done)
		return report ? error("libvirtd at '%s' accepts connections but does not answer within %d s "
				      "(stopped or hung?)", uri, timeout_s)
			      : -1;
	rc = j->rc;
	*c = j->c;
	if (rc < 0 && report)
		connect_failed(uri, j->why);
	open_job_free(j);
	return rc;
}

int vm_ensure_connected(struct vm_conn *c)
{
	char *uri;
	int ret, wait_s = c->wait_s;
	unsigned long ver;

	/* virConnectIsAlive only knows what the last call found: ask. */
	if (c->conn && virConnectIsAlive(c->conn) == 1 && virConnectGetLibVersion(c->conn, &ver) == 0)
		return 0;
	if (!c->uri)
		return error("no libvirt connection to make again");
	/* Keepalive needs the event loop, which only runs during boots: a
	 * long build between two boots lets libvirtd drop the connection. */
	uri = xstrdup(c->uri);
	vm_disconnect(c);
	ret = vm_connect_timed(c, uri, HOST_ANSWER_S, 0);
	if (ret < 0) {
		/* libvirtd restarting (killed, upgraded): a bounded wait */
		int64_t until = now_ms() + (int64_t)wait_s * 1000;

		warning("libvirtd at '%s' does not answer: waiting up to %d s for it (host_wait)", uri, wait_s);
		while (ret < 0 && now_ms() < until) {
			sleep(2);
			ret = vm_connect_timed(c, uri, HOST_ANSWER_S, 0);
		}
		if (ret < 0)
			ret = vm_connect_timed(c, uri, HOST_ANSWER_S, 1);	/* says why */
		else
			warning("reconnected to libvirtd at '%s'", uri);
	}
	/* a failed connect leaves c empty: keep where it was, for the next
	 * try (a host gone for good crashed the retry on a NULL uri) */
	if (ret < 0 && !c->uri)
		c->uri = xstrdup(uri);
	c->wait_s = wait_s;
	free(uri);
	return ret;
}

void vm_disconnect(struct vm_conn *c)
{
	if (c->conn)
		virConnectClose(c->conn);
	free(c->uri);
	free(c->hostname);
	memset(c, 0, sizeof(*c));
}

int vm_capabilities(struct vm_conn *c, char **xml)
{
	*xml = virConnectGetCapabilities(c->conn);
	if (!*xml)
		return virt_error("cannot read the host's capabilities");
	return 0;
}

void vm_versions(struct vm_conn *c, unsigned long *qemu, unsigned long *libvirt)
{
	*qemu = *libvirt = 0;
	if (virConnectGetVersion(c->conn, qemu) < 0)
		*qemu = 0;
	if (virConnectGetLibVersion(c->conn, libvirt) < 0)
		*libvirt = 0;
}

int accel_choice_parse(const char *s, enum accel_choice *out)
{
	if (!strcmp(s, "auto"))
		*out = ACCEL_AUTO;
	else if (!strcmp(s, "kvm"))
		*out = ACCEL_FORCE_KVM;
	else if (!strcmp(s, "tcg"))
		*out = ACCEL_FORCE_TCG;
	else
		return error("accelerator '%s': expected auto, kvm or tcg", s);
	return 0;
}

int vm_choose_accel(const struct host_topology *t, enum accel_choice choice, enum accel *out, const char **why)
{
	int kvm_domain = t->has_kvm_domain, hw = t->has_vmx_or_svm;

	switch (choice) {
	case ACCEL_FORCE_TCG:
		*out = ACCEL_TCG;
		*why = "forced by the lab config";
		return 0;
	case ACCEL_FORCE_KVM:
		if (!kvm_domain)
			return error("accelerator kvm forced, but this host's libvirt offers no kvm domains");
		*out = ACCEL_KVM;
		*why = "forced by the lab config";
		return 0;
	case ACCEL_AUTO:
		break;
	}
	if (kvm_domain && hw) {
		*out = ACCEL_KVM;
		*why = "host CPU has hardware virtualization";
	} else {
		*out = ACCEL_TCG;
		*why = kvm_domain ? "no vmx/svm on the host CPU: its /dev/kvm is not usable"
				  : "libvirt offers no kvm domains here";
	}
	return 0;
}

static int is_klab_domain(virDomainPtr d)
{
	const char *name = virDomainGetName(d);

	return name && !strncmp(name, DOMAIN_NAME_PREFIX, strlen(DOMAIN_NAME_PREFIX));
}

/* A spare not yet claimed: paused, named so (VM_SPARE_SUFFIX). */
static int is_paused_spare(virDomainPtr d, const virDomainInfo *info)
{
	const char *name = virDomainGetName(d);
	size_t n = name ? strlen(name) : 0, k = strlen(VM_SPARE_SUFFIX);

	return info->state == VIR_DOMAIN_PAUSED && n > k && !strcmp(name + n - k, VM_SPARE_SUFFIX);
}

static void set_bits_from_map(unsigned char *map, int maplen, int nr_cpus, unsigned char *busy)
{
	for (int cpu = 0; cpu < nr_cpus && cpu / 8 < maplen; cpu++)
		if (VIR_CPU_USABLE(map, maplen, 0, cpu))
			busy[cpu] = 1;
}

/* A map naming every host CPU means "not pinned": it claims nothing. */
static int map_is_all(const unsigned char *map, int nr_cpus)
{
	for (int cpu = 0; cpu < nr_cpus; cpu++)
		if (!(map[cpu / 8] & (1 << (cpu % 8))))
			return 0;
	return 1;
}

int vm_klab_guests(struct vm_conn *c, const unsigned char *within, size_t nr_within, unsigned char **busy_out,
		   size_t *nr, int *count)
{
	virDomainPtr *doms = NULL;
	int n, nr_cpus = virNodeGetCPUMap(c->conn, NULL, NULL, 0);
	unsigned char *busy;

	if (nr_cpus <= 0)
		return virt_error("cannot count the host's CPUs");
	n = virConnectListAllDomains(c->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (n < 0)
		return virt_error("cannot list domains");
	busy = xcalloc(nr_cpus, 1);
	*count = 0;
	for (int i = 0; i < n; i++) {
		virDomainInfo info;
		int maplen = VIR_CPU_MAPLEN(nr_cpus);
		if (is_klab_domain(doms[i]) && virDomainGetInfo(doms[i], &info) == 0 && info.nrVirtCpu > 0 &&
		    !is_paused_spare(doms[i], &info)) {
			unsigned char *maps = xcalloc(info.nrVirtCpu, maplen);
			unsigned char *mine = xcalloc(nr_cpus, 1);
			int got = virDomainGetVcpuPinInfo(doms[i], info.nrVirtCpu, maps, maplen, VIR_DOMAIN_AFFECT_LIVE);
			int unpinned = got <= 0, counted = 0;
			for (int v = 0; v < got; v++) {
				if (map_is_all(maps + v * maplen, nr_cpus))
					unpinned = 1;
				else
					set_bits_from_map(maps + v * maplen, maplen, nr_cpus, mine);
			}
			/* an unpinned guest runs anywhere: it counts on every CPU set */
			for (int cpu = 0; cpu < nr_cpus; cpu++) {
				if (!mine[cpu])
					continue;
				busy[cpu] = 1;
				if (!within || ((size_t)cpu < nr_within && within[cpu]))
					counted = 1;
			}
			if (counted || unpinned)
				(*count)++;
			free(mine);
			free(maps);
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	*busy_out = busy;
	*nr = nr_cpus;
	return 0;
}

int vm_busy_cpus(struct vm_conn *c, unsigned char **busy_out, size_t *nr)
{
	int count;

	return vm_klab_guests(c, NULL, 0, busy_out, nr, &count);
}

int vm_uri_check(const char *uri)
{
	const char *p = uri;

	if (isalpha((unsigned char)*p))
		while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.' || *p == '_')
			p++;
	if (p == uri || strncmp(p, "://", 3) || strpbrk(uri, " \t\r\n"))
		return error("libvirt URI '%s': expected DRIVER[+TRANSPORT]://[HOST]/PATH, e.g. qemu:///system", uri);
	return 0;
}

int vm_uri_is_remote(const char *uri)
{
	const char *p = strstr(uri, "://");

	/* a server part ("qemu+tcp://host/system") names another libvirtd */
	return p && p[3] && p[3] != '/';
}

/* The storage pool klab uploads to, defined, built and started if needed. */
static virStoragePoolPtr pool_ensure(virConnectPtr conn, const char *name, const char *target)
{
	virStoragePoolPtr pool = virStoragePoolLookupByName(conn, name);
	struct strbuf xml = STRBUF_INIT;

	if (!pool) {
		strbuf_addstr(&xml, "<pool type='dir'><name>");
		strbuf_add_xml_escaped(&xml, name);
		strbuf_addstr(&xml, "</name><target><path>");
		strbuf_add_xml_escaped(&xml, target);
		strbuf_addstr(&xml, "</path><permissions><mode>0755</mode></permissions></target></pool>");
		pool = virStoragePoolDefineXML(conn, xml.buf, 0);
		strbuf_release(&xml);
		if (!pool)	/* another klab may have defined it meanwhile */
			pool = virStoragePoolLookupByName(conn, name);
		if (!pool)
			return NULL;
		/* builds the directory; an existing one is fine */
		virStoragePoolBuild(pool, 0);
		virStoragePoolSetAutostart(pool, 1);
	}
	if (virStoragePoolIsActive(pool) != 1 && virStoragePoolCreate(pool, 0) < 0 &&
	    virStoragePoolIsActive(pool) != 1) {
		virStoragePoolFree(pool);
		return NULL;
	}
	return pool;
}

/* Send data to a fresh volume; 0 or -1 with libvirt's error set. */
static int volume_upload(virConnectPtr conn, virStorageVolPtr vol, const char *data, size_t len)
{
	virStreamPtr st = virStreamNew(conn, 0);
	size_t off = 0;

	if (!st)
		return -1;
	if (virStorageVolUpload(vol, st, 0, len, 0) < 0) {
		virStreamFree(st);
		return -1;
	}
	while (off < len) {
		size_t chunk = len - off > (256u << 10) ? (256u << 10) : len - off;
		int n = virStreamSend(st, data + off, chunk);
		if (n <= 0) {
			virStreamAbort(st);
			virStreamFree(st);
			return -1;
		}
		off += (size_t)n;
	}
	if (virStreamFinish(st) < 0) {
		virStreamFree(st);
		return -1;
	}
	virStreamFree(st);
	return 0;
}

int vm_upload_file(struct vm_conn *c, const char *pool_name, const char *pool_target, const char *path,
		   const char *vol_name, size_t max, char **remote_path, int *uploaded)
{
	virStoragePoolPtr pool = NULL;
	virStorageVolPtr vol = NULL;
	virStorageVolInfo info;
	struct strbuf xml = STRBUF_INIT;
	char *data = NULL, *p;
	size_t len = 0;
	int ret = -1;

	*remote_path = NULL;
	*uploaded = 0;
	if (read_file(path, max, &data, &len) < 0)
		return -1;
	pool = pool_ensure(c->conn, pool_name, pool_target);
	if (!pool) {
		error("cannot upload '%s' to pool %s on %s: %s", path, pool_name, c->uri, virGetLastErrorMessage());
		goto cleanup;
	}
	vol = virStorageVolLookupByName(pool, vol_name);
	/* A volume of the right size, fully written, is this file (its name
	 * is the content's hash); anything else is an interrupted upload. */
	if (vol && (virStorageVolGetInfo(vol, &info) < 0 || info.capacity != len || info.allocation < len)) {
		virStorageVolDelete(vol, 0);
		virStorageVolFree(vol);
		vol = NULL;
	}
	if (!vol) {
		strbuf_addstr(&xml, "<volume><name>");
		strbuf_add_xml_escaped(&xml, vol_name);
		strbuf_addf(&xml, "</name><capacity unit='bytes'>%zu</capacity><allocation unit='bytes'>0</allocation>"
				  "<target><format type='raw'/><permissions><mode>0644</mode></permissions></target>"
				  "</volume>", len);
		vol = virStorageVolCreateXML(pool, xml.buf, 0);
		if (!vol || volume_upload(c->conn, vol, data, len) < 0) {
			error("cannot upload '%s' to pool %s on %s: %s", path, pool_name, c->uri,
			      virGetLastErrorMessage());
			if (vol)
				virStorageVolDelete(vol, 0);
			goto cleanup;
		}
		*uploaded = 1;
	}
	p = virStorageVolGetPath(vol);
	if (!p) {
		error("cannot upload '%s' to pool %s on %s: no path for volume %s: %s", path, pool_name, c->uri,
		      vol_name, virGetLastErrorMessage());
		goto cleanup;
	}
	*remote_path = xstrdup(p);
	free(p);
	ret = 0;
cleanup:
	if (vol)
		virStorageVolFree(vol);
	if (pool)
		virStoragePoolFree(pool);
	strbuf_release(&xml);
	free(data);
	return ret;
}

/* The text of <…:name>…</…:name> (or <name>) in metadata XML. */
static char *meta_field(const char *xml, const char *name)
{
	char *open1 = xstrfmt(":%s>", name), *open2 = xstrfmt("<%s>", name);
	const char *p = strstr(xml, open1), *end;
	char *out = NULL;

	if (p)
		p += strlen(open1);
	else if ((p = strstr(xml, open2)))
		p += strlen(open2);
	if (p && (end = strchr(p, '<')))
		out = xstrndup(p, end - p);
	free(open1);
	free(open2);
	return out;
}

int vm_clean_orphans(struct vm_conn *c, const char *lab_id)
{
	virDomainPtr *doms = NULL;
	int n, cleaned = 0;

	n = virConnectListAllDomains(c->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
	if (n < 0)
		return virt_error("cannot list domains");
	for (int i = 0; i < n; i++) {
		char *meta = NULL, *lab = NULL, *pid_s = NULL;
		long pid;
		if (!is_klab_domain(doms[i]))
			goto next;
		meta = virDomainGetMetadata(doms[i], VIR_DOMAIN_METADATA_ELEMENT, DOMAIN_METADATA_NS,
					    VIR_DOMAIN_AFFECT_LIVE);
		if (!meta)
			goto next;
		lab = meta_field(meta, "lab");
		pid_s = meta_field(meta, "owner-pid");
		if (!lab || strcmp(lab, lab_id) || !pid_s)
			goto next;
		pid = strtol(pid_s, NULL, 10);
		if (pid > 0 && !process_gone(pid))
			goto next;	/* its klab still runs */
		if (virDomainDestroy(doms[i]) == 0) {
			warning("destroyed orphaned guest '%s' (its klab process %ld is gone)",
				virDomainGetName(doms[i]), pid);
			cleaned++;
		}
next:
		free(meta);
		free(lab);
		free(pid_s);
		virDomainFree(doms[i]);
	}
	free(doms);
	return cleaned;
}

KLAB_ENUM_IMPL(vm_outcome, VM_OUTCOME_LAST, "ok", "boot-failed", "panic", "timeout", "run-failed",
		"infrastructure", "error")

const char *vm_outcome_fault(enum vm_outcome o)
{
	if (o == VM_OK || o == VM_ERROR)
		return NULL;
	return o == VM_INFRA ? "infrastructure" : "kernel";
}

/* ---- panic detection (pure) ---------------------------------------------- */

static const char *const panic_markers[] = {
	"------------[ cut here ]------------",
	"BUG: ",
	"Oops: ",
	"general protection fault",
	"Kernel panic - not syncing",
};

static const char *memmem_str(const char *hay, size_t len, const char *needle)
{
	return memmem(hay, len, needle, strlen(needle));
}

char *vm_panic_excerpt(const char *console, size_t len)
{
	const char *first = NULL, *panic = memmem_str(console, len, "Kernel panic - not syncing");
	const char *start, *end;
	size_t lines = 0;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sizeof(panic_markers) / sizeof(panic_markers[0]); i++) {
		const char *p = memmem_str(console, len, panic_markers[i]);
		if (p && (!first || p < first))
			first = p;
	}
	if (!first)
		return NULL;
	/* An oops alone may be survivable; a panic or a BUG/oops is reported
	 * from its first line, plus a little context before a bare panic. */
	start = first;
	while (start > console && start[-1] != '\n')
		start--;
	if (first == panic)
		for (int back = 0; back < 10 && start > console; back++) {
			start--;
			while (start > console && start[-1] != '\n')
				start--;
		}
	end = start;
	while (end < console + len && lines < 80 && (size_t)(end - start) < 8192) {
		if (*end == '\n')
			lines++;
		end++;
	}
	for (const char *p = start; p < end; p++) {
		unsigned char ch = *p;
		if (ch == '\r')
			continue;
		strbuf_addch(&sb, (ch == '\n' || ch == '\t' || (ch >= 32 && ch < 127)) ? ch : '?');
	}
	return strbuf_detach(&sb, NULL);
}

/* ---- one boot ------------------------------------------------------------ */

struct stream_ctx {
	struct boot *boot;
	virStreamPtr st;
	int open;
	int is_console;
};

struct boot {
	struct vm_run *r;
	const struct vm_run_opts *o;
	int64_t t0;
	int console_fd;
	size_t console_written;
	struct strbuf tail;		/* console tail kept in memory */
	int panic_seen;
	int64_t panic_at;
	int stopped, crashed;
	int stop_detail;		/* VIR_DOMAIN_EVENT_STOPPED_* */
	int lost;			/* the connection to libvirtd was lost */
	int64_t stopped_at;
	struct stream_ctx console, channel;
};

static void console_data(struct boot *b, const char *buf, size_t n)
{
	if (b->console_fd >= 0 && b->console_written < CONSOLE_FILE_MAX) {
		size_t w = n;
		if (w > CONSOLE_FILE_MAX - b->console_written)
			w = CONSOLE_FILE_MAX - b->console_written;
		if (write(b->console_fd, buf, w) == (ssize_t)w)
			b->console_written += w;
	}
	strbuf_add(&b->tail, buf, n);
	if (b->tail.len > CONSOLE_TAIL_MAX) {
		size_t drop = b->tail.len - CONSOLE_TAIL_MAX / 2;
		memmove(b->tail.buf, b->tail.buf + drop, b->tail.len - drop);
		strbuf_setlen(&b->tail, b->tail.len - drop);
	}
	if (!b->panic_seen && (memmem_str(b->tail.buf, b->tail.len, "Kernel panic - not syncing") ||
			       memmem_str(b->tail.buf, b->tail.len, "Attempted to kill init"))) {
		b->panic_seen = 1;
		b->panic_at = now_ms();
	}
}

static void channel_data(struct boot *b, const char *buf, size_t n)
{
	struct vm_run *r = b->r;
	int had_hello = r->result.hello, had_done = r->result.done;
	size_t had_out = r->result.nr_out;

	result_feed(&r->result, buf, n);
	/* everything before done has arrived: the agent may power off (it
	 * waits for this a few seconds at most); a failed send only costs
	 * it that wait */
	if (!had_done && r->result.done && b->channel.open)
		virStreamSend(b->channel.st, "KLAB1 ack\n", 10);
	if (!had_hello && r->result.hello) {
		r->hello_ms = now_ms() - b->t0;
		if (b->o->on_phase)
			b->o->on_phase("running", r->hello_ms, b->o->data);
	}
	if (!had_out && r->result.nr_out && r->first_output_ms < 0)
		r->first_output_ms = now_ms() - b->t0;
}

static void stream_close(struct stream_ctx *s, int ok)
{
	if (!s->open)
		return;
	virStreamEventRemoveCallback(s->st);
	if (ok)
		virStreamFinish(s->st);
	else
		virStreamAbort(s->st);
	s->open = 0;
}

static void stream_cb(virStreamPtr st, int events, void *opaque)
{
	struct stream_ctx *s = opaque;
	char buf[16384];

	(void)events;
	for (;;) {
		int n = virStreamRecv(st, buf, sizeof(buf));
		if (n == -2)
			return;	/* nothing more now */
		if (n <= 0) {
			stream_close(s, n == 0);
			return;
		}
		if (s->is_console)
			console_data(s->boot, buf, n);
		else
			channel_data(s->boot, buf, n);
	}
}

static int stream_open(struct boot *b, struct stream_ctx *s, virDomainPtr dom, int console)
{
	virConnectPtr conn = virDomainGetConnect(dom);

	s->boot = b;
	s->is_console = console;
	s->st = virStreamNew(conn, VIR_STREAM_NONBLOCK);
	if (!s->st)
		return virt_error("cannot create a stream");
	if (console ? virDomainOpenConsole(dom, NULL, s->st, VIR_DOMAIN_CONSOLE_FORCE)
		    : virDomainOpenChannel(dom, DOMAIN_RESULT_CHANNEL, s->st, VIR_DOMAIN_CHANNEL_FORCE))
		return virt_error(console ? "cannot open the guest's console" : "cannot open the result channel");
	if (virStreamEventAddCallback(s->st, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR |
					     VIR_STREAM_EVENT_HANGUP, stream_cb, s, NULL) < 0)
		return virt_error("cannot watch a stream");
	s->open = 1;
	return 0;
}

static int lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct boot *b = opaque;

	(void)conn;
	(void)dom;
	if (event == VIR_DOMAIN_EVENT_CRASHED)
		b->crashed = 1;
	if (event == VIR_DOMAIN_EVENT_STOPPED) {
		if (detail == VIR_DOMAIN_EVENT_STOPPED_CRASHED)
			b->crashed = 1;
		if (!b->stopped) {
			b->stopped_at = now_ms();
			b->stop_detail = detail;
		}
		b->stopped = 1;
	}
	return 0;
}

static void tick_cb(int timer, void *opaque)
{
	(void)timer;
	(void)opaque;	/* wakes the loop so deadlines are checked */
}

static char *describe_pinning(virDomainPtr dom)
{
	virConnectPtr conn = virDomainGetConnect(dom);
	int nr_cpus = virNodeGetCPUMap(conn, NULL, NULL, 0), maplen, got;
	virDomainInfo info;
	unsigned char *maps;
	struct strbuf sb = STRBUF_INIT;

	if (nr_cpus <= 0 || virDomainGetInfo(dom, &info) < 0)
		return xstrdup("?");
	maplen = VIR_CPU_MAPLEN(nr_cpus);
	maps = xcalloc(info.nrVirtCpu, maplen);
	got = virDomainGetVcpuPinInfo(dom, info.nrVirtCpu, maps, maplen, VIR_DOMAIN_AFFECT_LIVE);
	for (int v = 0; v < got; v++) {
		int first = 1;
		strbuf_addf(&sb, "%s%d:", v ? "," : "", v);
		for (int cpu = 0; cpu < nr_cpus; cpu++)
			if (VIR_CPU_USABLE(maps, maplen, v, cpu)) {
				strbuf_addf(&sb, "%s%d", first ? "" : "+", cpu);
				first = 0;
			}
	}
	free(maps);
	return strbuf_detach(&sb, NULL);
}

/* The host's part ended the guest: the connection lost, or QEMU gone
 * (killed, crashed: libvirt's STOPPED_FAILED, its monitor closed without
 * a shutdown; "reason=crashed" in libvirt's log) with no panic on the
 * console and none from the guest's panic device (a guest panic is
 * VIR_DOMAIN_EVENT_CRASHED, then STOPPED_CRASHED).  A guest that resets
 * (a triple fault: on_reboot destroy) or powers off stays the kernel's. */
static int infra_fault(struct boot *b)
{
	struct vm_run *r = b->r;
	const char *how;

	if (b->panic_seen || b->crashed || r->result.done)
		return 0;	/* the kernel's, or a whole result */
	if (b->lost) {
		how = "the connection to libvirtd was lost";
	} else if (b->stopped && b->stop_detail == VIR_DOMAIN_EVENT_STOPPED_FAILED) {
		how = "libvirt: the emulator failed";
	} else {
		return 0;
	}
	r->outcome = VM_INFRA;
	r->reason = b->lost ? xstrfmt("infrastructure: %s", how)
			    : xstrfmt("infrastructure: QEMU ended without a guest panic (%s)", how);
	return 1;
}

static void classify(struct boot *b, int boot_timed_out, int run_timed_out)
{
	struct vm_run *r = b->r;
	struct result *res = &r->result;

	if (infra_fault(b))
		return;
	if (b->panic_seen || b->crashed) {
		r->outcome = VM_PANIC;
		r->excerpt = vm_panic_excerpt(b->tail.buf, b->tail.len);
		r->reason = xstrdup(r->excerpt && strstr(r->excerpt, "Kernel panic") ? "kernel panic"
							: "the guest crashed");
		if (r->excerpt) {
			const char *p = strstr(r->excerpt, "Kernel panic - not syncing");
			if (p) {
				const char *nl = strchr(p, '\n');
				free(r->reason);
				r->reason = xstrndup(p, nl ? (size_t)(nl - p) : strlen(p));
			}
		}
		return;
	}
	if (!res->hello) {
		r->outcome = VM_BOOT_FAILED;
		r->reason = boot_timed_out
			? xstrfmt("the agent did not start within %lld s", (long long)b->o->boot_timeout_ms / 1000)
			: xstrdup("the guest stopped before the agent started");
		/* The console's end says why (no init, a hang, …). */
		size_t keep = b->tail.len > 4096 ? 4096 : b->tail.len;
		r->excerpt = xstrndup(b->tail.buf + b->tail.len - keep, keep);
		return;
	}
	if (run_timed_out) {
		r->outcome = VM_TIMEOUT;
		r->reason = xstrfmt("no result within %lld s of the agent starting",
				    (long long)b->o->run_timeout_ms / 1000);
		return;
	}
	if (!res->done) {
		r->outcome = VM_RUN_FAILED;
		r->reason = xstrdup("the guest stopped without a 'done' record");
		return;
	}
	switch (res->exit_status) {
	case RESULT_EXIT_EXITED:
		if (res->exit_code == 0 && res->done_ok) {
			r->outcome = VM_OK;
			r->reason = xstrdup("ok");
		} else {
			r->outcome = VM_RUN_FAILED;
			r->reason = res->exit_code ? xstrfmt("the benchmark exited with status %d", res->exit_code)
						   : xstrdup("the agent reported an error (see its warnings)");
		}
		return;
	case RESULT_EXIT_TIMEOUT:
		r->outcome = VM_TIMEOUT;
		r->reason = xstrdup("the benchmark did not finish within the job's timeout (killed in the guest)");
		return;
	case RESULT_EXIT_SIGNALED:
		r->outcome = VM_RUN_FAILED;
		r->reason = xstrfmt("the benchmark was killed by signal %d", res->exit_code);
		return;
	case RESULT_EXIT_EXEC_FAILED:
		r->outcome = VM_RUN_FAILED;
		r->reason = xstrfmt("the benchmark could not be started in the guest (%s)", strerror(res->exit_code));
		return;
	case RESULT_EXIT_NONE:
		break;
	}
	r->outcome = VM_RUN_FAILED;
	r->reason = xstrdup("the agent did not run the benchmark (see its warnings)");
}

int vm_create_paused(struct vm_conn *c, const char *xml, void **dom, int64_t *ms, char **why)
{
	int64_t t0 = now_ms();
	virDomainPtr d = virDomainCreateXML(c->conn, xml, VIR_DOMAIN_START_PAUSED | VIR_DOMAIN_START_AUTODESTROY);

	*ms = now_ms() - t0;
	*dom = d;
	*why = NULL;
	if (!d) {
		const char *msg = virGetLastErrorMessage();
		*why = xstrdup(msg ? msg : "unknown error");
		return -1;
	}
	return 0;
}

int vm_destroy_leftover(struct vm_conn *c, const char *name)
{
	virDomainPtr d;

	if (vm_ensure_connected(c) < 0)
		return -1;
	d = virDomainLookupByName(c->conn, name);
	if (!d)
		return 0;	/* gone with its QEMU */
	if (virDomainIsActive(d) == 1) {
		warning("the guest %s outlived its boot: destroyed", name);
		if (virDomainDestroy(d) < 0)
			virt_error("cannot destroy the guest");
	}
	virDomainFree(d);
	return 0;
}

int vm_spare_usable(void *dom)
{
	virDomainInfo info;

	return dom && virDomainIsActive(dom) == 1 && virDomainGetInfo(dom, &info) == 0 &&
	       info.state == VIR_DOMAIN_PAUSED;
}

void vm_spare_destroy(void *dom)
{
	if (!dom)
		return;
	if (virDomainIsActive(dom) == 1)
		virDomainDestroy(dom);
	virDomainFree(dom);
}

/* The running guest's events until it stops, panics, times out or
 * powers off after its result, then what is buffered drained and the
 * run classified.  -1 when libvirt failed (reported). */
static int watch(struct boot *b, struct vm_conn *c)
{
	const struct vm_run_opts *o = b->o;
	struct vm_run *r = b->r;
	int boot_timed_out = 0, run_timed_out = 0;
	int64_t done_at = -1;

	for (;;) {
		int64_t now;
		if (virEventRunDefaultImpl() < 0) {
			virt_error("event loop failed");
			return -1;
		}
		now = now_ms();
		if (b->stopped) {
			/* The domain is gone; its streams end soon after. */
			if ((!b->console.open && !b->channel.open) || now - b->stopped_at > DRAIN_MS)
				break;
			continue;
		}
		if (!virConnectIsAlive(c->conn)) {
			/* the host's fault: classified, tried again by the caller */
			b->lost = 1;
			break;
		}
		if (b->panic_seen && now - b->panic_at > PANIC_GRACE_MS)
			break;
		if (!r->result.hello && now - b->t0 > o->boot_timeout_ms) {
			boot_timed_out = 1;
			break;
		}
		if (r->result.hello && !r->result.done && now - b->t0 - r->hello_ms > o->run_timeout_ms) {
			run_timed_out = 1;
			break;
		}
		if (r->result.done && done_at < 0)
			done_at = now;
		if (done_at >= 0 && now - done_at > POWEROFF_GRACE_MS)
			break;	/* said done but did not power off: still a result */
	}
	r->total_ms = now_ms() - b->t0;
	/* Drain what is buffered before destroying. */
	if (!b->stopped) {
		int64_t until = now_ms() + 200;
		while (now_ms() < until && (b->console.open || b->channel.open))
			virEventRunDefaultImpl();
	}
	result_finish(&r->result);
	classify(b, boot_timed_out, run_timed_out);
	return 0;
}

int vm_boot_and_run(struct vm_conn *c, const struct vm_run_opts *o, struct vm_run *r)
{
	struct boot b;
	virDomainPtr dom = NULL;
	int cb_id = -1, timer = -1, ret = -1;

	memset(r, 0, sizeof(*r));
	memset(&b, 0, sizeof(b));
	result_init(&r->result);
	r->outcome = VM_ERROR;
	r->hello_ms = r->first_output_ms = -1;
	b.r = r;
	b.o = o;
	strbuf_init(&b.tail, 0);
	b.console_fd = open(o->console_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (b.console_fd < 0)
		return error("cannot write '%s': %s", o->console_path, strerror(errno));

	b.t0 = now_ms();
	if (o->on_phase)
		o->on_phase(o->spare ? "booting (its guest made ahead)" : "booting", 0, o->data);
	/* Paused first: the streams are attached before the guest prints.
	 * A spare was made so ahead of time (create_ms 0: none on this path). */
	if (o->spare) {
		dom = o->spare;
	} else {
		char *why = NULL;
		void *made = NULL;

		if (vm_create_paused(c, o->xml, &made, &r->create_ms, &why) < 0) {
			if (o->on_created)
				o->on_created(o->data);
			error("libvirt: cannot create the guest: %s", why);
			free(why);
			goto cleanup;
		}
		dom = made;
	}
	r->domain_name = xstrdup(virDomainGetName(dom));
	if (o->on_created && !o->spare)
		o->on_created(o->data);
	cb_id = virConnectDomainEventRegisterAny(c->conn, dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						 VIR_DOMAIN_EVENT_CALLBACK(lifecycle_cb), &b, NULL);
	if (cb_id < 0) {
		virt_error("cannot watch the guest's lifecycle");
		goto cleanup;
	}
	if (stream_open(&b, &b.console, dom, 1) < 0 || stream_open(&b, &b.channel, dom, 0) < 0)
		goto cleanup;
	r->pinning = describe_pinning(dom);
	timer = virEventAddTimeout(100, tick_cb, NULL, NULL);
	if (virDomainResume(dom) < 0) {
		virt_error("cannot start the guest's CPUs");
		goto cleanup;
	}
	if (o->on_created && o->spare)
		o->on_created(o->data);
	if (o->on_resumed)
		o->on_resumed(o->data);
	if (watch(&b, c) < 0)
		goto cleanup;
	ret = 0;

cleanup:
	stream_close(&b.console, 0);
	stream_close(&b.channel, 0);
	if (b.console.st)
		virStreamFree(b.console.st);
	if (b.channel.st)
		virStreamFree(b.channel.st);
	if (timer >= 0)
		virEventRemoveTimeout(timer);
	if (cb_id >= 0)
		virConnectDomainEventDeregisterAny(c->conn, cb_id);
	if (dom) {
		/* Whatever happened, the guest does not outlive the run. */
		if (virDomainIsActive(dom) == 1 && virDomainDestroy(dom) < 0)
			virt_error("cannot destroy the guest");
		virDomainFree(dom);
	}
	if (b.console_fd >= 0)
		close(b.console_fd);
	strbuf_release(&b.tail);
	if (ret < 0)
		r->outcome = VM_ERROR;
	return ret;
}

void vm_run_release(struct vm_run *r)
{
	FREE_MANY(r->reason, r->excerpt, r->pinning, r->domain_name);
	result_release(&r->result);
	memset(r, 0, sizeof(*r));
}
