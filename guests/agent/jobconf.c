/* The agent's reader of /klab/job.conf (docs/guest-protocol.md): lines of
 * "key value" into struct job_conf.  Apart from agent.c so that a fuzzer
 * can link it; it does no I/O of its own. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobconf.h"
#include "../bench/bench.h"

static int has_dotdot(const char *path)
{
	const char *p;

	for (p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return 1;
	return 0;
}

static int tag_ok(const char *t)
{
	size_t n = strlen(t);

	return n && n <= SHARE_TAG_MAX && strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* A virtio disk's serial as klab names it: at most 20 bytes (virtio-blk's
 * limit) of [a-z0-9_-]. */
static int serial_ok(const char *t)
{
	size_t n = strlen(t);

	return n && n <= 20 && strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

/* Split "key value..." at the first space; both must be non-empty. */
static int split_pair(char *s, char **value)
{
	char *sp;

	if (!s || !(sp = strchr(s, ' ')) || sp == s || !sp[1])
		return -1;
	*sp = '\0';
	*value = sp + 1;
	return 0;
}

/* Takes path (NULL: the allocation that made it failed). */
static int add_setting(struct job_conf *jc, char *path, const char *value)
{
	if (!path)
		return jobconf_fail("out of memory");
	jc->settings[jc->nr_settings].path = path;
	jc->settings[jc->nr_settings].value = value;
	jc->nr_settings++;
	return 0;
}

static char *sysctl_path(const char *key)
{
	char *path, *p;

	if (asprintf(&path, "/proc/sys/%s", key) < 0)
		return NULL;
	/* "vm.swappiness" → vm/swappiness; a key with '/' is a path already
	 * (and may contain dots, like an interface name) */
	if (!strchr(key, '/'))
		for (p = path + strlen("/proc/sys/"); *p; p++)
			if (*p == '.')
				*p = '/';
	return path;
}

static int parse_line(struct job_conf *jc, char *line, int lineno)
{
	char *key = line, *value = NULL, *arg, *sp;
	unsigned v;

	sp = strchr(line, ' ');
	if (sp) {
		*sp = '\0';
		value = sp + 1;
	}

	if (!strcmp(key, "version")) {
		if (parse_uint(value, 0, UINT_MAX, &v) < 0 || v != 1)
			return jobconf_fail("job.conf:%d: unsupported version '%s'", lineno, value ? value : "");
	} else if (!strcmp(key, "name")) {
		jc->name = value ? value : "";
	} else if (!strcmp(key, "sysctl")) {
		if (split_pair(value, &arg) < 0 || value[0] == '/' || has_dotdot(value))
			return jobconf_fail("job.conf:%d: expected 'sysctl <key> <value>'", lineno);
		return add_setting(jc, sysctl_path(value), arg);
	} else if (!strcmp(key, "sysfs")) {
		if (split_pair(value, &arg) < 0 || strncmp(value, "/sys/", 5) || has_dotdot(value))
			return jobconf_fail("job.conf:%d: expected 'sysfs </sys/path> <value>'", lineno);
		return add_setting(jc, strdup(value), arg);
	} else if (!strcmp(key, "aslr")) {
		if (parse_uint(value, 0, 2, &v) < 0)
			return jobconf_fail("job.conf:%d: aslr must be 0, 1 or 2", lineno);
		return add_setting(jc, strdup("/proc/sys/kernel/randomize_va_space"), value);
	} else if (!strcmp(key, "drop_caches")) {
		if (parse_uint(value, 0, 3, &v) < 0)
			return jobconf_fail("job.conf:%d: drop_caches must be 0 to 3", lineno);
		jc->drop_caches = (int)v;
	} else if (!strcmp(key, "timeout")) {
		if (parse_uint(value, 0, 30 * 86400, &jc->timeout_s) < 0)
			return jobconf_fail("job.conf:%d: bad timeout '%s'", lineno, value ? value : "");
	} else if (!strcmp(key, "monitor_interval")) {
		if (parse_uint(value, 0, 86400, &jc->monitor_s) < 0)
			return jobconf_fail("job.conf:%d: bad monitor_interval '%s'", lineno, value ? value : "");
	} else if (!strcmp(key, "monitors")) {
		if (!value || jc->monitors)
			return jobconf_fail("job.conf:%d: expected one 'monitors NAME...' or 'monitors none'", lineno);
		jc->monitors = value;
	} else if (!strcmp(key, "swap")) {
		if (!value || strncmp(value, "/dev/", 5) || has_dotdot(value) || strchr(value, ' ') || jc->swap)
			return jobconf_fail("job.conf:%d: expected one 'swap /dev/<device>'", lineno);
		jc->swap = value;
	} else if (!strcmp(key, "fs")) {
		char *type, *dir;

		/* the host names the disk, the type and where; the mkfs is the
		 * agent's own choice of program */
		if (jc->fs.serial || split_pair(value, &type) < 0 || split_pair(type, &dir) < 0 || !serial_ok(value) ||
		    (strcmp(type, "xfs") && strcmp(type, "ext4") && strcmp(type, "btrfs")) || strncmp(dir, "/klab/", 6) ||
		    has_dotdot(dir) || strchr(dir, ' ') || strstr(dir, "//"))
			return jobconf_fail("job.conf:%d: expected one 'fs <serial> xfs|ext4|btrfs /klab/<dir>'", lineno);
		jc->fs.serial = value;
		jc->fs.type = type;
		jc->fs.dir = dir;
	} else if (!strcmp(key, "mount9p")) {
		/* the host names the tag and where it goes; the options are
		 * the agent's own: read-only, whatever the host wrote */
		if (split_pair(value, &arg) < 0 || !tag_ok(value) || strncmp(arg, "/klab/", 6) ||
		    has_dotdot(arg) || strchr(arg, ' ') || strstr(arg, "//"))
			return jobconf_fail("job.conf:%d: expected 'mount9p <tag> /klab/<dir>'", lineno);
		jc->shares[jc->nr_shares].tag = value;
		jc->shares[jc->nr_shares].dir = arg;
		jc->nr_shares++;
	} else if (!strcmp(key, "argv")) {
		if (!value)
			return jobconf_fail("job.conf:%d: argv without a value", lineno);
		jc->argv[jc->argc++] = value;
	} else if (!strcmp(key, "env")) {
		if (!value || !strchr(value, '=') || value[0] == '=')
			return jobconf_fail("job.conf:%d: expected 'env NAME=value'", lineno);
		jc->env[jc->nr_env++] = value;
	} else {
		jobconf_warn("job.conf:%d: unknown key '%s' ignored", lineno, key);
	}
	return 0;
}

int jobconf_parse(struct job_conf *jc, const char *path, size_t len)
{
	size_t nr_lines = 1;
	char *line, *end;
	int lineno = 0;

	if (len > CONF_MAX)
		return jobconf_fail("%s is larger than %d bytes", path, CONF_MAX);
	if (memchr(jc->buf, '\0', len))
		return jobconf_fail("%s contains a NUL byte", path);

	/* Each line holds at most one of everything: size the arrays once. */
	for (line = jc->buf; (line = memchr(line, '\n', len - (size_t)(line - jc->buf))); line++)
		nr_lines++;
	jc->settings = calloc(nr_lines, sizeof(*jc->settings));
	jc->argv = calloc(nr_lines + 1, sizeof(*jc->argv));
	jc->env = calloc(nr_lines, sizeof(*jc->env));
	jc->shares = calloc(nr_lines, sizeof(*jc->shares));
	if (!jc->settings || !jc->argv || !jc->env || !jc->shares)
		return jobconf_fail("out of memory");

	end = jc->buf + len;
	for (line = jc->buf; line < end; ) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t line_len = nl ? (size_t)(nl - line) : (size_t)(end - line);

		lineno++;
		if (line_len > CONF_LINE_MAX - 1)
			return jobconf_fail("job.conf:%d: line longer than %d bytes", lineno, CONF_LINE_MAX);
		line[line_len] = '\0';
		if (line[0] && line[0] != '#' && parse_line(jc, line, lineno) < 0)
			return -1;
		line += line_len + 1;
	}
	if (!jc->argc)
		return jobconf_fail("job.conf: no argv, nothing to run");
	return 0;
}

int jobconf_monitor_on(const struct job_conf *jc, const char *name)
{
	return !jc->monitors || jobconf_monitor_named(jc, name);
}

int jobconf_monitor_named(const struct job_conf *jc, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (!jc->monitors)
		return 0;
	for (p = jc->monitors; (p = strstr(p, name)); p += n)
		if ((p == jc->monitors || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

void jobconf_release(struct job_conf *jc)
{
	size_t i;

	for (i = 0; i < jc->nr_settings; i++)
		free(jc->settings[i].path);
	free(jc->settings);
	free(jc->argv);
	free(jc->env);
	free(jc->shares);
	free(jc->buf);
}
