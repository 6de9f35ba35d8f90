/* State directory, klab.conf and the database of one lab. */
#include "lab/lab.h"
#include "lab/db.h"
#include "util/util.h"
#include "util/strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static const char default_config[] =
	"# klab lab configuration: 'key = value' lines, '#' starts a comment.\n"
	"#\n"
	"# libvirt connection for guests (any libvirt URI).\n"
	"libvirt_uri = qemu:///system\n"
	"# parallel jobs for kernel builds (0 = number of CPUs).\n"
	"build_jobs = 0\n"
	"# ccache directory for kernel builds (empty = <state>/ccache).\n"
	"ccache_dir =\n"
	"# an artifact store shared with other labs of this machine, an absolute\n"
	"# path (empty = <state>/artifacts, this lab's own): a kernel another lab\n"
	"# built from the same tree and config is taken from it, not rebuilt.\n"
	"artifact_store =\n"
	"# distributed compilation: a wrapper ccache runs the compiler through,\n"
	"# e.g. distcc or icecc (empty = compile locally).\n"
	"compiler_wrapper =\n"
	"# a ccache shared by machines: ccache's remote storage, e.g.\n"
	"# redis://HOST:6379 (empty = this machine's ccache only).\n"
	"ccache_remote =\n"
	"# guest accelerator: auto (KVM only where the CPU has vmx/svm), kvm, tcg.\n"
	"accel = auto\n"
	"# host CPUs klab's guests may use, e.g. 2-31 (empty = all).\n"
	"guest_cpus =\n"
	"# job bisections: while a step's guests run, build the commits the next\n"
	"# step may test on the CPUs that hold none of the guests' vCPUs, at idle\n"
	"# priority: auto (where such CPUs exist) or no.  Off by default: on a\n"
	"# small host the builds disturb the guests' runs (more runs needed).\n"
	"speculative_builds = no\n"
	"# a run of several boots of one kernel: make each next guest (paused)\n"
	"# while the one before it boots, so that libvirt's start of about a\n"
	"# second is not between them: yes or no.\n"
	"guests_ahead = yes\n"
	"# a bisection's commit that changes only comments (and blanks) in the\n"
	"# sources of a kernel it knows makes that kernel: skip (take that\n"
	"# kernel's mark, no build, no boot) or build.\n"
	"comment_only_commits = skip\n"
	"# a checkout over another commit's build: a C file or header whose\n"
	"# change is comments only (every token at its line and column) keeps\n"
	"# its old mtime, so nothing that includes it is compiled again: keep\n"
	"# or rebuild.\n"
	"comment_only_files = keep\n"
	"#\n"
	"# Notifications when a bisection ends (klab notify --help).  Each one is\n"
	"# recorded before it is sent; failed deliveries are retried later by\n"
	"# 'klab notify flush'.\n"
	"# mail recipients, comma-separated (empty = no mail), e.g. a@example.org, b@example.org\n"
	"notify_mail_to =\n"
	"# sender address (empty = klab@<host name>).\n"
	"notify_mail_from =\n"
	"# SMTP server: smtp://host:port (STARTTLS as smtp_tls says) or smtps://host:port.\n"
	"smtp_url = smtp://localhost:25\n"
	"# SMTP authentication: user name (empty = none) and a file holding the password.\n"
	"smtp_user =\n"
	"smtp_password_file =\n"
	"# STARTTLS on smtp://: none, try (use it when offered) or required.\n"
	"smtp_tls = try\n"
	"# URL a JSON document is POSTed to (empty = no webhook), e.g. https://ci.example.org/hooks/klab\n"
	"notify_webhook =\n"
	"# seconds one delivery may take.\n"
	"notify_timeout = 30\n"
	"\n"
	"# The most a bisection step's log keeps (K, M, G; 0 = no limit): its head and tail,\n"
	"# a line between them saying how much was cut.\n"
	"log_limit = 8M\n"
	"\n"
	"# Seconds a boot waits for a hypervisor host whose libvirtd stopped answering\n"
	"# (restarted, its ssh gone) before the try fails; three tries, then the bisection\n"
	"# stops for 'klab bisect resume'.  0: no wait.\n"
	"host_wait = 120\n";

char *lab_default_state_dir(const char *override)
{
	const char *e;

	if (override && *override)
		return xstrdup(override);
	e = getenv("KLAB_STATE");
	if (e && *e)
		return xstrdup(e);
	e = getenv("XDG_STATE_HOME");
	if (e && *e)
		return xstrfmt("%s/klab", e);
	e = getenv("HOME");
	if (!e || !*e)
		e = "/";
	return xstrfmt("%s/.local/state/klab", e);
}

char *lab_path(const struct lab *lab, const char *sub)
{
	return xstrfmt("%s/%s", lab->state_dir, sub);
}

char *lab_artifact_dir(const struct lab *lab)
{
	return lab->artifact_store ? xstrdup(lab->artifact_store) : lab_path(lab, "artifacts");
}

static int parse_config(struct lab *lab)
{
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (read_file(lab->config_path, 1 << 20, &text, &len) < 0)
		return -1;
	ret = lab_config_parse(lab, lab->config_path, text, len);
	free(text);
	return ret;
}

/* Below this much free space the database cannot grow its WAL index
 * (32 KiB) and a page or two: every command would fail with "disk I/O
 * error", so say why instead. */
#define LAB_MIN_FREE (64 * 1024)

/* The lab's files others must not read: the database (its -wal and
 * -shm take its mode), the config (SMTP user, webhook URL) and the logs. */
#define LAB_DIR_MODE 0700
#define LAB_FILE_MODE 0600

/* Whether klab can write the lab: 0, or -1 with the reason (read-only
 * file system, no space left, no permission) and the path, reported
 * when `report` is set. */
static int lab_writable(const char *state_dir, const char *db_path, int report)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	struct statvfs vfs;

	if (statvfs(state_dir, &vfs) == 0) {
		if (vfs.f_flag & ST_RDONLY)
			return report ? error("the lab '%s' is on a read-only file system "
					      "(read-only commands such as 'klab bisect list' still work)",
					      state_dir) : -1;
		/* btrfs and others report no inode counts at all (f_files 0) */
		if ((unsigned long long)vfs.f_bavail * vfs.f_frsize < LAB_MIN_FREE ||
		    (vfs.f_files && vfs.f_favail == 0))
			return report ? error("no space left on device for the lab '%s' (%llu KiB free): "
					      "free some (klab gc) and run the command again", state_dir,
					      (unsigned long long)vfs.f_bavail * vfs.f_frsize / 1024) : -1;
	}
	if (access(state_dir, W_OK) != 0)
		return report ? error("cannot write to the lab '%s': %s", state_dir, strerror(errno)) : -1;
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		char *p = xstrfmt("%s%s", db_path, suffixes[i]);
		/* one call: SQLite removes -wal and -shm when another
		 * process closes the last connection, and a file that went
		 * between two calls is no reason to refuse (200 submits at
		 * once met that: "klab.db-shm: No such file or directory") */
		int bad = access(p, R_OK | W_OK) != 0 && errno != ENOENT;

		if (bad && report)
			error("cannot write to the lab's database '%s': %s", p, strerror(errno));
		free(p);
		if (bad)
			return -1;
	}
	return 0;
}

/* Owner only, if it is not already: a lab made before klab did this, or
 * a directory the user made for it. */
static int make_private(const char *path, unsigned mode)
{
	struct stat st;

	if (stat(path, &st) != 0 || (st.st_mode & 07777) == mode)
		return 0;
	if (chmod(path, mode) < 0)
		return error("cannot make '%s' private: %s", path, strerror(errno));
	printf("made '%s' private (mode %04o, was %04o)\n", path, mode, st.st_mode & 07777);
	return 0;
}

int lab_init(const char *state_dir, int *created)
{
	static const char *const subdirs[] = { "logs", "worktrees", "locks", "artifacts", "builds", "trees" };
	static const char *const privates[] = { "klab.db", "klab.db-wal", "klab.db-shm", "klab.conf" };
	char *cfg = xstrfmt("%s/klab.conf", state_dir);
	char *dbp = xstrfmt("%s/klab.db", state_dir);
	sqlite3 *db = NULL;
	struct stat st;
	int ret = -1;
	/* what init creates is the owner's alone (SQLite gives -wal and -shm
	 * the database's mode, whatever the umask of later commands) */
	mode_t old_umask = umask(077);

	*created = stat(dbp, &st) != 0;
	if (mkdir_p(state_dir, LAB_DIR_MODE) < 0 || make_private(state_dir, LAB_DIR_MODE) < 0)
		goto cleanup;
	if (lab_writable(state_dir, dbp, 1) < 0)
		goto cleanup;
	for (size_t i = 0; i < ARRAY_SIZE(subdirs); i++) {
		char *d = xstrfmt("%s/%s", state_dir, subdirs[i]);
		int rc = mkdir_p(d, LAB_DIR_MODE);
		free(d);
		if (rc < 0)
			goto cleanup;
	}
	if (stat(cfg, &st) != 0 && write_file_atomic(cfg, default_config, strlen(default_config)) < 0)
		goto cleanup;
	for (size_t i = 0; i < ARRAY_SIZE(privates); i++) {
		char *f = xstrfmt("%s/%s", state_dir, privates[i]);
		int rc = make_private(f, LAB_FILE_MODE);
		free(f);
		if (rc < 0)
			goto cleanup;
	}
	if (db_open(&db, dbp, 1) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	umask(old_umask);
	db_close(db);
	free(cfg);
	free(dbp);
	return ret;
}

static int lab_open_as(struct lab *lab, const char *state_dir_arg, int writer)
{
	struct stat st;
	/* absolute: builds and guests run in other directories (a relative
	 * --state once made the config merge write the build directory's
	 * .config under the worktree) */
	char *abs = realpath(state_dir_arg, NULL);
	const char *state_dir = abs ? abs : state_dir_arg;

	memset(lab, 0, sizeof(*lab));
	lab->state_dir = xstrdup(state_dir);
	free(abs);
	state_dir = lab->state_dir;
	lab->db_path = xstrfmt("%s/klab.db", state_dir);
	lab->config_path = xstrfmt("%s/klab.conf", state_dir);
	if (stat(lab->db_path, &st) != 0) {
		/* a lab that lost its database is not a new lab: 'klab init'
		 * would hand out its bisections' numbers and logs again */
		int e = errno;
		char *logs = xstrfmt("%s/logs", state_dir);
		if (e != ENOENT)
			error("cannot read the lab's database '%s': %s", lab->db_path, strerror(e));
		else if (!stat(lab->config_path, &st) || !stat(logs, &st))
			error("database '%s' is missing from an existing lab: restore it or remove the lab",
			      lab->db_path);
		else
			error("no lab at '%s': run 'klab init' (or pass --state DIR / set KLAB_STATE)", state_dir);
		free(logs);
		goto fail;
	}
	if (parse_config(lab) < 0)
		goto fail;
	if (stat(state_dir, &st) == 0 && (st.st_mode & 077))
		warning("the lab '%s' is open to other users (mode %04o); its database and logs may hold "
			"credentials: 'klab init' makes it private", state_dir, st.st_mode & 07777);
	if (lab_writable(state_dir, lab->db_path, writer) < 0) {
		if (writer)
			goto fail;
		if (access(lab->db_path, R_OK) != 0) {
			error("cannot read the lab's database '%s': %s", lab->db_path, strerror(errno));
			goto fail;
		}
		if (db_open_ro(&lab->db, lab->db_path) < 0)
			goto fail;
		return 0;
	}
	if (db_open(&lab->db, lab->db_path, 0) < 0)
		goto fail;
	return 0;
fail:
	lab_close(lab);
	return -1;
}

int lab_open(struct lab *lab, const char *state_dir)
{
	return lab_open_as(lab, state_dir, 1);
}

int lab_open_read(struct lab *lab, const char *state_dir)
{
	return lab_open_as(lab, state_dir, 0);
}

void lab_close(struct lab *lab)
{
	db_close(lab->db);
	free(lab->state_dir);
	free(lab->db_path);
	free(lab->config_path);
	lab_config_release(lab);
	memset(lab, 0, sizeof(*lab));
}

int lab_try_lock(const struct lab *lab, const char *name)
{
	char *path = xstrfmt("%s/locks/%s.lock", lab->state_dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, LAB_FILE_MODE);

	/* a read-only lab: an existing lock file still tells whether it is held */
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int lab_lock(const struct lab *lab, const char *name)
{
	char *dir = lab_path(lab, "locks");
	char *path = xstrfmt("%s/%s.lock", dir, name);
	int fd = -1;

	if (mkdir_p(dir, LAB_DIR_MODE) < 0)
		goto cleanup;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, LAB_FILE_MODE);
	if (fd < 0) {
		error("cannot open lock '%s': %s", path, strerror(errno));
		goto cleanup;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			error("%s is in use by another klab process", name);
		else
			error("cannot lock '%s': %s", path, strerror(errno));
		close(fd);
		fd = -1;
	}
cleanup:
	free(dir);
	free(path);
	return fd;
}

int lab_lock_copy(const struct lab *lab, const char *name, int *copy)
{
	/* No fixed number of copies: each one is held by a running klab
	 * process, so there are never more than processes that use the
	 * resource at once, and a job never fails for want of one. */
	for (int k = 0;; k++) {
		char *path = k ? xstrfmt("%s/locks/%s.%d.lock", lab->state_dir, name, k)
			       : xstrfmt("%s/locks/%s.lock", lab->state_dir, name);
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0) {
			error("cannot open lock '%s': %s", path, strerror(errno));
			free(path);
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			free(path);
			*copy = k;
			return fd;
		}
		if (errno != EWOULDBLOCK) {
			error("cannot lock '%s': %s", path, strerror(errno));
			close(fd);
			free(path);
			return -1;
		}
		close(fd);
		free(path);
	}
}
