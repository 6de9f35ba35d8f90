/* State directory, klab.conf and the database of one lab. */
#include "lab.h"
#include "db.h"
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
	"# guest accelerator: auto (KVM only where the CPU has vmx/svm), kvm, tcg.\n"
	"accel = auto\n"
	"# host CPUs klab's guests may use, e.g. 2-31 (empty = all).\n"
	"guest_cpus =\n"
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
	"notify_timeout = 30\n";

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

/* "a@x, b@y": addresses klab puts in SMTP commands and headers, so no
 * spaces, controls, quotes or brackets inside one. */
static int valid_mail_list(const char *list)
{
	int n = 0;

	while (*list) {
		const char *end = strchrnul(list, ',');
		const char *a = list, *b = end;
		int at = 0;

		while (a < b && isspace((unsigned char)*a))
			a++;
		while (b > a && isspace((unsigned char)b[-1]))
			b--;
		if (a == b)
			return 0;
		for (const char *p = a; p < b; p++) {
			if ((unsigned char)*p <= ' ' || *p == 0x7f || strchr("<>\"()[]\\;:", *p))
				return 0;
			at += *p == '@';
		}
		if (at != 1 || *a == '@' || b[-1] == '@')
			return 0;
		n++;
		list = *end ? end + 1 : end;
	}
	return n > 0;
}

static int has_prefix(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

static void set_optional(char **field, const char *val)
{
	free(*field);
	*field = *val ? xstrdup(val) : NULL;
}

static int parse_config(struct lab *lab)
{
	char *text = NULL, *line, *save = NULL;
	int lineno = 0, ret = 0;

	lab->libvirt_uri = xstrdup("qemu:///system");
	lab->accel = xstrdup("auto");
	lab->build_jobs = 0;
	lab->smtp_url = xstrdup("smtp://localhost:25");
	lab->smtp_tls = xstrdup("try");
	lab->notify_timeout = 30;
	if (read_file(lab->config_path, 1 << 20, &text, NULL) < 0)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq, *key, *val, *end;

		lineno++;
		while (isspace((unsigned char)*line))
			line++;
		if (!*line || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			ret = error("%s:%d: expected 'key = value'", lab->config_path, lineno);
			break;
		}
		*eq = '\0';
		key = line;
		val = eq + 1;
		for (end = eq; end > key && isspace((unsigned char)end[-1]); end--)
			end[-1] = '\0';
		while (isspace((unsigned char)*val))
			val++;
		for (end = val + strlen(val); end > val && isspace((unsigned char)end[-1]); end--)
			end[-1] = '\0';
		if (!strcmp(key, "libvirt_uri")) {
			free(lab->libvirt_uri);
			lab->libvirt_uri = xstrdup(val);
		} else if (!strcmp(key, "build_jobs")) {
			unsigned long v;
			if (parse_uint(val, 4096, &v) < 0) {
				ret = error("%s:%d: build_jobs must be a number from 0 to 4096", lab->config_path, lineno);
				break;
			}
			lab->build_jobs = (int)v;
		} else if (!strcmp(key, "ccache_dir")) {
			free(lab->ccache_dir);
	free(lab->artifact_store);
			lab->ccache_dir = *val ? xstrdup(val) : NULL;
		} else if (!strcmp(key, "artifact_store")) {
			if (*val && *val != '/') {
				ret = error("%s:%d: artifact_store must be an absolute path", lab->config_path, lineno);
				break;
			}
			free(lab->artifact_store);
			lab->artifact_store = *val ? xstrdup(val) : NULL;
		} else if (!strcmp(key, "accel")) {
			if (strcmp(val, "auto") && strcmp(val, "kvm") && strcmp(val, "tcg")) {
				ret = error("%s:%d: accel must be auto, kvm or tcg", lab->config_path, lineno);
				break;
			}
			free(lab->accel);
			lab->accel = xstrdup(val);
		} else if (!strcmp(key, "guest_cpus")) {
			free(lab->guest_cpus);
			lab->guest_cpus = *val ? xstrdup(val) : NULL;
		} else if (!strcmp(key, "compiler_wrapper")) {
			free(lab->compiler_wrapper);
			lab->compiler_wrapper = *val ? xstrdup(val) : NULL;
		} else if (!strcmp(key, "notify_mail_to")) {
			if (*val && !valid_mail_list(val)) {
				ret = error("%s:%d: notify_mail_to must be addresses like a@example.org, "
					    "separated by commas", lab->config_path, lineno);
				break;
			}
			set_optional(&lab->notify_mail_to, val);
		} else if (!strcmp(key, "notify_mail_from")) {
			if (*val && (!valid_mail_list(val) || strchr(val, ','))) {
				ret = error("%s:%d: notify_mail_from must be one address like klab@example.org",
					    lab->config_path, lineno);
				break;
			}
			set_optional(&lab->notify_mail_from, val);
		} else if (!strcmp(key, "smtp_url")) {
			if (*val && !has_prefix(val, "smtp://") && !has_prefix(val, "smtps://")) {
				ret = error("%s:%d: smtp_url must start with smtp:// or smtps://", lab->config_path, lineno);
				break;
			}
			set_optional(&lab->smtp_url, val);
		} else if (!strcmp(key, "smtp_user")) {
			set_optional(&lab->smtp_user, val);
		} else if (!strcmp(key, "smtp_password_file")) {
			set_optional(&lab->smtp_password_file, val);
		} else if (!strcmp(key, "smtp_tls")) {
			if (strcmp(val, "none") && strcmp(val, "try") && strcmp(val, "required")) {
				ret = error("%s:%d: smtp_tls must be none, try or required", lab->config_path, lineno);
				break;
			}
			free(lab->smtp_tls);
			lab->smtp_tls = xstrdup(val);
		} else if (!strcmp(key, "notify_webhook")) {
			if (*val && !has_prefix(val, "http://") && !has_prefix(val, "https://")) {
				ret = error("%s:%d: notify_webhook must start with http:// or https://",
					    lab->config_path, lineno);
				break;
			}
			set_optional(&lab->notify_webhook, val);
		} else if (!strcmp(key, "notify_timeout")) {
			unsigned long v;
			if (parse_uint(val, 3600, &v) < 0 || v == 0) {
				ret = error("%s:%d: notify_timeout must be a number of seconds from 1 to 3600",
					    lab->config_path, lineno);
				break;
			}
			lab->notify_timeout = (int)v;
		} else {
			ret = error("%s:%d: unknown key '%s'", lab->config_path, lineno, key);
			break;
		}
	}
	free(text);
	return ret;
}

int lab_init(const char *state_dir, int *created)
{
	static const char *const subdirs[] = { "logs", "worktrees", "locks", "artifacts", "builds", "trees" };
	char *cfg = xstrfmt("%s/klab.conf", state_dir);
	char *dbp = xstrfmt("%s/klab.db", state_dir);
	sqlite3 *db = NULL;
	struct stat st;
	int ret = -1;

	*created = stat(dbp, &st) != 0;
	if (mkdir_p(state_dir, 0755) < 0)
		goto cleanup;
	for (size_t i = 0; i < ARRAY_SIZE(subdirs); i++) {
		char *d = xstrfmt("%s/%s", state_dir, subdirs[i]);
		int rc = mkdir_p(d, 0755);
		free(d);
		if (rc < 0)
			goto cleanup;
	}
	if (stat(cfg, &st) != 0 && write_file_atomic(cfg, default_config, strlen(default_config)) < 0)
		goto cleanup;
	if (db_open(&db, dbp, 1) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	db_close(db);
	free(cfg);
	free(dbp);
	return ret;
}

int lab_open(struct lab *lab, const char *state_dir)
{
	struct stat st;

	memset(lab, 0, sizeof(*lab));
	lab->state_dir = xstrdup(state_dir);
	lab->db_path = xstrfmt("%s/klab.db", state_dir);
	lab->config_path = xstrfmt("%s/klab.conf", state_dir);
	if (stat(lab->db_path, &st) != 0) {
		/* a lab that lost its database is not a new lab: 'klab init'
		 * would hand out its bisections' numbers and logs again */
		char *logs = xstrfmt("%s/logs", state_dir);
		if (!stat(lab->config_path, &st) || !stat(logs, &st))
			error("database '%s' is missing from an existing lab: restore it or remove the lab",
			      lab->db_path);
		else
			error("no lab at '%s': run 'klab init' (or pass --state DIR / set KLAB_STATE)", state_dir);
		free(logs);
		goto fail;
	}
	if (parse_config(lab) < 0)
		goto fail;
	if (db_open(&lab->db, lab->db_path, 0) < 0)
		goto fail;
	return 0;
fail:
	lab_close(lab);
	return -1;
}

void lab_close(struct lab *lab)
{
	db_close(lab->db);
	free(lab->state_dir);
	free(lab->db_path);
	free(lab->config_path);
	free(lab->libvirt_uri);
	free(lab->ccache_dir);
	free(lab->compiler_wrapper);
	free(lab->accel);
	free(lab->guest_cpus);
	free(lab->notify_mail_to);
	free(lab->notify_mail_from);
	free(lab->smtp_url);
	free(lab->smtp_user);
	free(lab->smtp_password_file);
	free(lab->smtp_tls);
	free(lab->notify_webhook);
	memset(lab, 0, sizeof(*lab));
}

int lab_try_lock(const struct lab *lab, const char *name)
{
	char *path = xstrfmt("%s/locks/%s.lock", lab->state_dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

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

	if (mkdir_p(dir, 0755) < 0)
		goto cleanup;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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
