/* Job files (YAML, lkp-tests style): what to run in the guest, for how
 * long, on which guest shape, and which metric is the KPI.  Parsed with
 * libyaml from a file or a buffer; the only other I/O is checking that
 * the kconfig fragments a job names exist.  Format: docs/klab-job.5. */
#ifndef KLAB_JOB_H
#define KLAB_JOB_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct job_kv {
	char *key;
	char *value;
};

/* A count that may be given as a percentage of the guest's vCPUs. */
struct job_count {
	int is_percent;		/* value is a percentage (1..1000) */
	unsigned value;		/* absolute count, or the percentage */
};

enum job_hugepages { JOB_HUGEPAGES_NONE, JOB_HUGEPAGES_2M, JOB_HUGEPAGES_1G };

struct job_guest {
	unsigned vcpus;		/* default 2 */
	unsigned numa_nodes;	/* default 1; vcpus and memory split evenly */
	uint64_t memory_mb;	/* default 2048 */
	enum job_hugepages hugepages;	/* backing of guest memory on the host */
	uint64_t swap_mb;	/* a swap disk of this size (0: none, the default) */
	/* the scratch disk fs: is made on (0: none; a job with fs: gets
	 * its suite's size, else JOB_DEFAULT_DISK_MB) */
	uint64_t disk_mb;
};

/* A host directory the job's guest sees read-only through 9p (a kbuild
 * job's toolchain and kernel tree); the agent mounts tag at guest_dir. */
struct job_share {
	char *host;		/* absolute, symlinks resolved */
	char *tag;		/* [a-z0-9_], domain.h's rule */
	char *guest_dir;	/* absolute guest path under /klab/ */
};
#define JOB_MAX_SHARES 4

/* The guest device of a job's swap disk (domain.c attaches it there). */
#define JOB_SWAP_DEVICE "/dev/vda"
/* A job's scratch disk: the serial the agent finds it by (domain.c sets
 * it), where it mounts the file system it makes there, and its size when
 * neither the job nor its suite says (a sparse file on the host). */
#define JOB_DISK_SERIAL "klab-disk"
#define JOB_DISK_DIR "/klab/disk"
#define JOB_DEFAULT_DISK_MB 4096

struct job {
	char *path;		/* as given (for messages) */
	char *hash;		/* git-style blob hash of the file's bytes (hex) */
	char *suite;		/* a suite of the registry (suite.h): stress-ng | will-it-scale | vm-scalability */
	char *testcase;		/* mmapaddr, vm-splice, malloc1, anon-w-seq, ... */
	char *mode;		/* one of the suite's modes (suite.h), its first by default; "process"
				 * for a suite without modes */
	struct job_count nr_task;	/* default 100% */
	struct job_count nr_threads;	/* usemem -t; default 1 */
	unsigned runtime_s;	/* default 10 */
	char *size;		/* usemem size as written (k/m/g/t suffix), or NULL */
	char *fs;		/* xfs | ext4 | btrfs: made on the scratch disk each boot, or NULL */
	char *kpi;		/* default per suite, e.g. stress-ng.<testcase>.ops_per_sec */
	char *default_kpi;	/* what job_default_kpi() returns (set by the parser) */
	int direction;		/* +1 higher is better (default), -1 lower is better */
	unsigned repeat;	/* default 3 */
	/* a bisection's culprit must carry this share of the ends' gap
	 * (0 < share <= 1, default 0.5) to be confirmed */
	double confirm_share;
	/* after a confirmed culprit, boots of parent and culprit each with
	 * the perf-profile monitor (evidence only; default 2, 0 = none) */
	unsigned profile_runs;
	/* the most runs of one commit (and of each end) a bisection takes
	 * before it calls a commit ambiguous or a regression not reproduced
	 * (3..1000; 0 = the default ladder's 12); `--max-runs` overrides */
	unsigned max_runs;
	/* 1 (default): a confirmed culprit's revert is built and measured
	 * (the revert check); 0 with `revert_check: no` (as
	 * --no-revert-check, for bisections a job starts: track's) */
	int revert_check;
	/* key as written: "vm.swappiness" or "kernel/mm/transparent_hugepage/enabled";
	 * thp.enabled/defrag are added here in that slashed form */
	struct job_kv *sysctl;
	size_t nr_sysctl;
	struct job_kv *params;	/* suite-specific extras (e.g. stress-ng options), in file order */
	size_t nr_params;
	char **fragments;	/* extra kernel config fragments (paths relative to the job file resolved) */
	size_t nr_fragments;
	struct job_guest guest;
	int aslr;		/* -1 unset, else 0..2 */
	int drop_caches;	/* -1 unset, else 0..3 */
	unsigned monitor_interval_s;	/* 0 = before/after only */
	/* bit i: the registry's monitor i runs (monitor.h; default
	 * monitor_default_set(): all but perf-profile) */
	unsigned monitors;
	/* read-only shares the suite asked for (none but for kbuild) */
	struct job_share *shares;
	size_t nr_shares;
};

/* Parse a job file.  On error returns -1 after error("FILE:LINE: ...")
 * naming what was expected; *job is then empty. */
int job_parse_file(struct job *job, const char *path);
/* The same from a buffer; `name` is used in messages and as job->path. */
int job_parse_buffer(struct job *job, const char *name, const char *buf, size_t len);
void job_release(struct job *job);

/* A job variant: --set KEY=VALUE, any job key as the file writes it:
 * a top-level key (runtime=20s, kpi=...) or TOP.SUB under a map key
 * (thp.enabled=never, guest.vcpus=1, sysctl.vm.swappiness=10,
 * params.vm-bytes=64m).  The value replaces the file's or is added, and
 * the parser judges it as if written there. */
struct job_set {
	char *key, *value;
};
/* "KEY=VALUE" into *out (its strings the caller's: job_sets_release);
 * -1 after one error line when it is not of that form. */
int job_set_parse(struct job_set *out, const char *arg);
void job_sets_release(struct job_set *sets, size_t n);
/* The job of buf with sets[] applied.  The file's own errors first, then
 * a setting the parser refuses: "--set KEY=VALUE: <why>" (an unknown key
 * names the known ones); settings that clash together: "<what>: <why>".
 * job->hash covers the settings (a variant's runs are not the file's). */
int job_parse_buffer_sets(struct job *job, const char *name, const char *buf, size_t len,
			  const struct job_set *sets, size_t nr_sets, const char *what);

/* Resolve a count against the guest's vCPUs (at least 1). */
unsigned job_count_resolve(const struct job_count *c, unsigned vcpus);

/* Where a sysctl entry is written: 1 when its key is a slashed path under
 * kernel/mm/ (a sysfs file, /sys/<key>), 0 for /proc/sys. */
int job_sysctl_is_sysfs(const char *key);

/* The guest agent's configuration (docs/guest-protocol.md) for this job
 * on a guest with `vcpus` CPUs: sysctls/sysfs writes, timeout, and the
 * suite's argv. */
int job_agent_conf(const struct job *job, unsigned vcpus, struct strbuf *out);

/* The agent's timeout for the benchmark: runtime, the suite's warm-up
 * and a margin (the job.conf "timeout" line). */
int job_agent_timeout_s(const struct job *job, unsigned *out);

/* Every metric name the job's suite may produce has the prefix
 * "<suite>." ; the KPI must be one of the names the parser emits.
 * The default is the suite's (suite.h default_kpi): stress-ng.<testcase>.ops_per_sec,
 * will-it-scale.per_process_ops (per_thread_ops in thread mode),
 * vm-scalability.throughput.  NULL for a job that was not parsed. */
const char *job_default_kpi(const struct job *job);

/* For the suites (suite-*.c): the job file's duration ("20s", "5m", "1h"
 * or seconds, within min..max) and size ("256m": bytes with k/m/g/t,
 * powers of 1024, at most 1t) syntax; -1 when s is not one. */
int job_parse_duration(const char *s, uint64_t min, uint64_t max, unsigned *out);
int job_parse_bytes(const char *s, uint64_t *bytes);
/* "75%": a share from 1% to 100% (of the guest's memory plus swap). */
int job_parse_share(const char *s, unsigned *pct);
/* One job.conf directive "key value" (value one line of printable
 * text, else an error and nothing added); the same for an "argv" line
 * made by a format. */
int job_conf_line(struct strbuf *sb, const char *key, const char *value);
int job_conf_argvf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An "argv" line for each of n values in turn, the first error ending
 * it; JOB_CONF_ARGV(sb, "a", b, ...) for a list (util.h's ARRAY_SIZE).
 * And an option followed by its number ("--runtime", "10"). */
int job_conf_argv(struct strbuf *sb, const char *const *v, size_t n);
#define JOB_CONF_ARGV(sb, ...)                                        \
	job_conf_argv((sb), (const char *const[]){ __VA_ARGS__ },     \
		      ARRAY_SIZE(((const char *const[]){ __VA_ARGS__ })))
int job_conf_argv_uint(struct strbuf *sb, const char *opt, unsigned v);
/* For the suites' shares op: a host directory for the guest, read-only.
 * The directory must exist, and QEMU's user (not root: libvirt-qemu)
 * must reach it: world-traversable ancestors, world-readable itself.
 * -1 after error("<what>: ...") naming the path; what is "path:line:
 * params.x" or similar. */
int job_add_share(struct job *job, const char *what, const char *host, const char *tag, const char *guest_dir);
/* The checks of job_add_share alone (a suite's check_param): 0 or -1
 * after error("<what>: ..."). */
int job_check_share_dir(const char *what, const char *host);

/* The one rule for a KPI, in a job file and for every --kpi: a metric
 * name a result record may carry (at most 128 of [A-Za-z0-9_.:+()/-],
 * with a '.'); with a parsed job (NULL: the name only), also one of its
 * suite's, "<suite>.<metric>".  0, or -1 with what was expected added
 * to why (may be NULL). */
struct strbuf;
int check_kpi(const struct job *job, const char *kpi, struct strbuf *why);

#endif
