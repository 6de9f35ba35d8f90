/* The lab: its state directory, config file and database, found the
 * same way by every command. */
#ifndef KLAB_LAB_H
#define KLAB_LAB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct lab {
	char *state_dir;
	char *db_path;
	char *config_path;
	sqlite3 *db;
	/* config values (klab.conf) */
	char *libvirt_uri;
	int build_jobs;
	char *ccache_dir;	/* NULL: <state>/ccache */
	char *artifact_store;	/* shared with other labs; NULL: <state>/artifacts */
	char *compiler_wrapper;	/* e.g. distcc or icecc (CCACHE_PREFIX) */
	char *ccache_remote;	/* ccache's remote storage shared by labs, redis://HOST:PORT (CCACHE_REMOTE_STORAGE) */
	char *accel;		/* auto | kvm | tcg */
	char *guest_cpus;	/* CPU list guests may use, NULL = all */
	int speculative_builds;	/* build the next step's commits beside the guests (default 0: no) */
	int guests_ahead;	/* make the next guest while one boots (default 1: yes; guest.c) */
	int comment_only_skip;	/* a bisection's comment-only commits inherit, unbuilt (default 1) */
	int comment_only_keep;	/* a checkout keeps comment-only files' mtimes (default 1; kernel/kkeep.h) */
	/* notifications (notify.c); NULL = off */
	char *notify_mail_to;	/* "a@x, b@y" */
	char *notify_mail_from;	/* NULL: klab@<host name> */
	char *smtp_url;		/* smtp://host:port or smtps://host:port */
	char *smtp_user;	/* NULL: no authentication */
	char *smtp_password_file;	/* read when sending, never logged */
	char *smtp_tls;		/* none | try | required (STARTTLS) */
	char *notify_webhook;	/* http(s) URL the JSON document is posted to */
	int notify_timeout;	/* seconds one delivery may take */
	uint64_t log_limit;	/* bytes a step's log keeps, head and tail (0: no limit; default 8 MiB) */
	int host_wait;		/* seconds a boot waits for a libvirtd that stopped answering (default 120) */
};

/* The state directory: override (--state), else $KLAB_STATE, else
 * $XDG_STATE_HOME/klab, else ~/.local/state/klab.  Caller frees. */
char *lab_default_state_dir(const char *override);

/* Create the lab (idempotent): directory, config, database, all the
 * owner's only (0700, files 0600); an existing lab's directory, database
 * and config are made so, with a line saying it. */
int lab_init(const char *state_dir, int *created);
/* Open an existing lab; a missing one gets a message saying how to
 * create it. */
int lab_open(struct lab *lab, const char *state_dir);
/* The same for a command that only reads: on a lab klab cannot write
 * (read-only file system, full, no permission) the database is opened
 * read-only instead of refusing. */
int lab_open_read(struct lab *lab, const char *state_dir);
void lab_close(struct lab *lab);

/* Set the config fields of lab to their defaults, then to the values of
 * a klab.conf text (len bytes, not NUL-terminated); name is used in
 * messages ("name:line: ...").  -1 after error() on the first bad line;
 * the fields set so far are kept, lab_config_release frees them. */
int lab_config_parse(struct lab *lab, const char *name, const char *text, size_t len);
void lab_config_release(struct lab *lab);

/* <state>/<sub...> (caller frees). */
char *lab_path(const struct lab *lab, const char *sub);
/* The artifact store: klab.conf's artifact_store (shared with other labs)
 * or <state>/artifacts.  Caller frees. */
char *lab_artifact_dir(const struct lab *lab);

/* Take an exclusive lock named `name` under <state>/locks; returns the
 * fd (kept open while held) or -1 with a message if another process has
 * it.  The kernel drops it when the process dies, even by kill -9. */
int lab_lock(const struct lab *lab, const char *name);
/* The same without a message: fd, or -1 if held or on error. */
int lab_try_lock(const struct lab *lab, const char *name);
/* The first free of the locks NAME, NAME.1, NAME.2, ..., for what klab
 * keeps several copies of so that concurrent jobs on one repository do
 * not wait for each other (worktrees, build directories): as many copies
 * as processes use them at once.  fd, *copy its number (0: NAME itself);
 * -1 with a message only when a lock file cannot be opened. */
int lab_lock_copy(const struct lab *lab, const char *name, int *copy);

#endif
