/* The agent's job.conf reader (jobconf.c), shared by the agent and its
 * fuzzer. */
#ifndef KLAB_AGENT_JOBCONF_H
#define KLAB_AGENT_JOBCONF_H

#include <stddef.h>

#define CONF_MAX		(64 * 1024)
#define CONF_LINE_MAX		4096	/* newline included */

struct setting {
	char *path;
	const char *value;	/* points into the conf buffer */
};

#define SHARE_TAG_MAX		31

/* "mount9p TAG DIR": a host directory the domain shares read-only. */
struct share {
	const char *tag;	/* [a-z0-9_], 1..SHARE_TAG_MAX */
	const char *dir;	/* absolute, under /klab/, no ".." */
};

struct job_conf {
	char *buf;		/* the file, NUL-terminated lines; the rest point into it */
	const char *name;
	struct setting *settings;
	size_t nr_settings;
	int drop_caches;	/* -1 = not given */
	unsigned timeout_s;
	unsigned monitor_s;
	char **argv;		/* NULL-terminated */
	size_t argc;
	char **env;		/* extra NAME=value, not terminated */
	size_t nr_env;
	const char *monitors;	/* the monitors to read, space-separated; NULL: all */
	const char *swap;	/* a device to make swap on and enable, or NULL */
	/* "fs SERIAL TYPE DIR": the disk of that serial, a fresh file
	 * system of TYPE (xfs, ext4, btrfs) made on it, mounted at DIR */
	struct {
		const char *serial, *type, *dir;
	} fs;
	struct share *shares;	/* 9p tags to mount read-only, in order */
	size_t nr_shares;
};

/* Parse the len bytes at jc->buf (which holds at least len + 1 bytes,
 * and is freed by jobconf_release; path only names it in messages).
 * The lines are NUL-terminated in place and the results point into it.
 * -1 after jobconf_fail(); unknown keys are jobconf_warn()ed. */
int jobconf_parse(struct job_conf *jc, const char *path, size_t len);
void jobconf_release(struct job_conf *jc);
/* 1 when the job wants the monitor of that name read (no monitors line:
 * every monitor of the default set). */
int jobconf_monitor_on(const struct job_conf *jc, const char *name);
/* 1 when the monitors line names it: for a monitor outside the default
 * set (perf-profile). */
int jobconf_monitor_named(const struct job_conf *jc, const char *name);

/* Provided by the program that links jobconf.c: a warning (the run goes
 * on) and an error (returns -1). */
void jobconf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int jobconf_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
