/* klab.conf: 'key = value' lines into the config fields of struct lab.
 * Apart from the file reading (lab.c) so that it can be fuzzed alone. */
#include "lab/lab.h"
#include "util/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* An optional value: "" unsets it. */
/* A URL ccache takes as remote storage: its schemes, printable, no
 * space or '|' (ccache separates several storages and their attributes
 * with them: one storage only, attributes in the URL not allowed). */
static int valid_remote_storage(const char *v)
{
	if (!has_prefix(v, "redis://") && !has_prefix(v, "redis+unix:") && !has_prefix(v, "http://"))
		return 0;
	if (strlen(v) > 512)
		return 0;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || *p == '|')
			return 0;
	return 1;
}

static void set_optional(char **field, const char *val)
{
	free(*field);
	*field = *val ? xstrdup(val) : NULL;
}

static void set_string(char **field, const char *val)
{
	free(*field);
	*field = xstrdup(val);
}

/* Whether val is one of the NULL-terminated names. */
static int one_of(const char *val, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(val, *names))
			return 1;
	return 0;
}

/* A size: digits, then nothing (bytes) or K, M, G (KiB, MiB, GiB, "iB"
 * optional), at most 1 GiB; 0 or -1. */
static int parse_size(const char *val, uint64_t *out)
{
	static const char *const units[] = { "", "K", "M", "G" };
	char digits[16];
	size_t n = strspn(val, "0123456789");
	unsigned long v;

	if (!n || n >= sizeof(digits))
		return -1;
	memcpy(digits, val, n);
	digits[n] = '\0';
	if (parse_uint(digits, 1UL << 30, &v) < 0)
		return -1;
	for (size_t u = 0; u < ARRAY_SIZE(units); u++) {
		size_t ul = strlen(units[u]);

		if (strncmp(val + n, units[u], ul) || (val[n + ul] && (!ul || strcmp(val + n + ul, "iB"))))
			continue;
		*out = (uint64_t)v << (10 * u);
		return *out <= (1ULL << 30) ? 0 : -1;
	}
	return -1;
}

static const char unknown_key[] = "unknown key";

/* Set one key's value: NULL, or what is wrong with it (unknown_key for a
 * key klab does not know). */
static const char *set_key(struct lab *lab, const char *key, const char *val)
{
	unsigned long v;

	if (!strcmp(key, "libvirt_uri")) {
		set_string(&lab->libvirt_uri, val);
	} else if (!strcmp(key, "build_jobs")) {
		if (parse_uint(val, 4096, &v) < 0)
			return "build_jobs must be a number from 0 to 4096";
		lab->build_jobs = (int)v;
	} else if (!strcmp(key, "ccache_dir")) {
		set_optional(&lab->ccache_dir, val);
	} else if (!strcmp(key, "artifact_store")) {
		if (*val && *val != '/')
			return "artifact_store must be an absolute path";
		set_optional(&lab->artifact_store, val);
	} else if (!strcmp(key, "accel")) {
		if (!one_of(val, (const char *const[]){ "auto", "kvm", "tcg", NULL }))
			return "accel must be auto, kvm or tcg";
		set_string(&lab->accel, val);
	} else if (!strcmp(key, "guest_cpus")) {
		set_optional(&lab->guest_cpus, val);
	} else if (!strcmp(key, "speculative_builds")) {
		if (!one_of(val, (const char *const[]){ "auto", "no", NULL }))
			return "speculative_builds must be auto or no";
		lab->speculative_builds = !strcmp(val, "auto");
	} else if (!strcmp(key, "guests_ahead")) {
		if (!one_of(val, (const char *const[]){ "yes", "no", NULL }))
			return "guests_ahead must be yes or no";
		lab->guests_ahead = !strcmp(val, "yes");
	} else if (!strcmp(key, "comment_only_commits")) {
		if (!one_of(val, (const char *const[]){ "skip", "build", NULL }))
			return "comment_only_commits must be skip or build";
		lab->comment_only_skip = !strcmp(val, "skip");
	} else if (!strcmp(key, "comment_only_files")) {
		if (!one_of(val, (const char *const[]){ "keep", "rebuild", NULL }))
			return "comment_only_files must be keep or rebuild";
		lab->comment_only_keep = !strcmp(val, "keep");
	} else if (!strcmp(key, "compiler_wrapper")) {
		set_optional(&lab->compiler_wrapper, val);
	} else if (!strcmp(key, "ccache_remote")) {
		if (*val && !valid_remote_storage(val))
			return "ccache_remote must be redis://HOST[:PORT], redis+unix:PATH or http://HOST[:PORT]/PATH "
			       "(ccache's remote storage; no spaces or '|')";
		set_optional(&lab->ccache_remote, val);
	} else if (!strcmp(key, "notify_mail_to")) {
		if (*val && !valid_mail_list(val))
			return "notify_mail_to must be addresses like a@example.org, separated by commas";
		set_optional(&lab->notify_mail_to, val);
	} else if (!strcmp(key, "notify_mail_from")) {
		if (*val && (!valid_mail_list(val) || strchr(val, ',')))
			return "notify_mail_from must be one address like klab@example.org";
		set_optional(&lab->notify_mail_from, val);
	} else if (!strcmp(key, "smtp_url")) {
		if (*val && !has_prefix(val, "smtp://") && !has_prefix(val, "smtps://"))
			return "smtp_url must start with smtp:// or smtps://";
		set_optional(&lab->smtp_url, val);
	} else if (!strcmp(key, "smtp_user")) {
		set_optional(&lab->smtp_user, val);
	} else if (!strcmp(key, "smtp_password_file")) {
		set_optional(&lab->smtp_password_file, val);
	} else if (!strcmp(key, "smtp_tls")) {
		if (!one_of(val, (const char *const[]){ "none", "try", "required", NULL }))
			return "smtp_tls must be none, try or required";
		set_string(&lab->smtp_tls, val);
	} else if (!strcmp(key, "notify_webhook")) {
		if (*val && !has_prefix(val, "http://") && !has_prefix(val, "https://"))
			return "notify_webhook must start with http:// or https://";
		set_optional(&lab->notify_webhook, val);
	} else if (!strcmp(key, "log_limit")) {
		if (parse_size(val, &lab->log_limit) < 0 || (lab->log_limit && lab->log_limit < 65536))
			return "log_limit must be a size from 64K to 1G (e.g. 8M), or 0 for no limit";
	} else if (!strcmp(key, "host_wait")) {
		if (parse_uint(val, 3600, &v) < 0)
			return "host_wait must be a number of seconds from 0 to 3600";
		lab->host_wait = (int)v;
	} else if (!strcmp(key, "notify_timeout")) {
		if (parse_uint(val, 3600, &v) < 0 || v == 0)
			return "notify_timeout must be a number of seconds from 1 to 3600";
		lab->notify_timeout = (int)v;
	} else {
		return unknown_key;
	}
	return NULL;
}

/* Split "key = value" in place, both trimmed; NULL when there is no '='. */
static char *split_key_value(char *line, char **val)
{
	char *eq = strchr(line, '='), *end;

	if (!eq)
		return NULL;
	*eq = '\0';
	for (end = eq; end > line && isspace((unsigned char)end[-1]); end--)
		end[-1] = '\0';
	*val = eq + 1;
	while (isspace((unsigned char)**val))
		(*val)++;
	for (end = *val + strlen(*val); end > *val && isspace((unsigned char)end[-1]); end--)
		end[-1] = '\0';
	return line;
}

int lab_config_parse(struct lab *lab, const char *name, const char *text, size_t len)
{
	char *copy, *line, *next;
	int lineno = 0, ret = 0;

	lab->libvirt_uri = xstrdup("qemu:///system");
	lab->accel = xstrdup("auto");
	lab->build_jobs = 0;
	lab->speculative_builds = 0;
	lab->guests_ahead = 1;
	lab->comment_only_skip = 1;
	lab->comment_only_keep = 1;
	lab->smtp_url = xstrdup("smtp://localhost:25");
	lab->smtp_tls = xstrdup("try");
	lab->notify_timeout = 30;
	lab->log_limit = 8u << 20;
	lab->host_wait = 120;
	if (memchr(text, '\0', len))
		return error("%s: contains a NUL byte (not a text file)", name);
	copy = xstrndup(text, len);
	/* line by line, blank ones counted: messages say file:line */
	for (line = copy; *line; line = next) {
		const char *bad;
		char *key, *val;

		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		lineno++;
		while (isspace((unsigned char)*line))
			line++;
		if (!*line || *line == '#')
			continue;
		key = split_key_value(line, &val);
		if (!key) {
			ret = error("%s:%d: expected 'key = value'", name, lineno);
			break;
		}
		bad = set_key(lab, key, val);
		if (bad == unknown_key) {
			ret = error("%s:%d: unknown key '%s'", name, lineno, key);
			break;
		}
		if (bad) {
			ret = error("%s:%d: %s", name, lineno, bad);
			break;
		}
	}
	free(copy);
	return ret;
}

void lab_config_release(struct lab *lab)
{
	FREE_MANY(lab->libvirt_uri, lab->ccache_dir, lab->artifact_store, lab->compiler_wrapper, lab->ccache_remote,
		  lab->accel,
		  lab->guest_cpus, lab->notify_mail_to, lab->notify_mail_from, lab->smtp_url, lab->smtp_user,
		  lab->smtp_password_file, lab->smtp_tls, lab->notify_webhook);
	lab->libvirt_uri = lab->ccache_dir = lab->compiler_wrapper = lab->ccache_remote = lab->accel = NULL;
	lab->guest_cpus = NULL;
	lab->notify_mail_to = lab->notify_mail_from = lab->smtp_url = lab->smtp_user = NULL;
	lab->smtp_password_file = lab->smtp_tls = lab->notify_webhook = lab->artifact_store = NULL;
}
