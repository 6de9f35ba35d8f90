/* Kernel builds: config recipe -> .config (with drift check) -> make
 * bzImage with ccache out of tree -> artifact store.  One build directory
 * per (repository, recipe), so consecutive commits build incrementally;
 * artifacts keyed by (tree id, recipe id) appear atomically. */
#include "kernel/kbuild.h"
#include "kernel/ksources.h"
#include "kernel/kimage.h"
#include "lab/lab.h"
#include "lab/db.h"
#include "lab/gitrepo.h"
#include "util/util.h"
#include "util/strbuf.h"
#include "util/run-command.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef KLAB_DATADIR
#define KLAB_DATADIR "/usr/local/share/klab"
#endif
#ifndef KLAB_ABS_SRCDIR
#define KLAB_ABS_SRCDIR ""
#endif

const char *const kbuild_make_env_fixed[] = {
	/* klab run by a make (make -s check, make bench) passed its flags
	 * down: an 's' there silences kbuild, whose "  CC" lines are the
	 * only count of what compiled (builds said "0 objects"); and kbuild
	 * honours KBUILD_VERBOSE from the environment */
	"MAKEFLAGS=", "KBUILD_VERBOSE=0", "LC_ALL=C", NULL
};

KLAB_ENUM_IMPL(kbuild_status, KBUILD_STATUS_LAST, "ok", "build-failed", "env-failed", "config-drift")

static const char *const kconfig_targets[] = { "tinyconfig", "defconfig", "allnoconfig", "kvm_guest.config" };

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_file_in(const char *dir, const char *name)
{
	char *p = xstrfmt("%s/%s", dir, name);
	int rc = is_file(p);

	free(p);
	return rc;
}

const char *kbuild_fragment_dir(void)
{
	static char *dir;
	const char *env;
	char exe[PATH_MAX];
	ssize_t n;

	if (dir)
		return dir;
	env = getenv("KLAB_DATADIR");
	if (env && *env) {
		dir = xstrfmt("%s/kconfig", env);
		return dir;
	}
	/* running from the build tree: <top>/orchestrator/klab */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			char *cand;
			*slash = '\0';
			cand = xstrfmt("%s/../guests/kconfig", exe);
			if (is_dir(cand)) {
				dir = cand;
				return dir;
			}
			free(cand);
		}
	}
	if (*KLAB_ABS_SRCDIR) {
		char *cand = xstrfmt("%s/guests/kconfig", KLAB_ABS_SRCDIR);
		if (is_dir(cand) && !is_dir(KLAB_DATADIR "/kconfig")) {
			dir = cand;
			return dir;
		}
		free(cand);
	}
	dir = xstrdup(KLAB_DATADIR "/kconfig");
	return dir;
}

int kbuild_resolve_fragment(const char *name, char **path)
{
	char *p;

	*path = NULL;
	if (strchr(name, '/')) {
		if (!is_file(name))
			return error("config fragment '%s' not found", name);
		*path = real_path(name);
		return *path ? 0 : -1;
	}
	p = xstrfmt("%s/%s%s", kbuild_fragment_dir(), name,
		    strlen(name) > 7 && !strcmp(name + strlen(name) - 7, ".config") ? "" : ".config");
	if (!is_file(p)) {
		error("config fragment '%s' not found (looked for %s)", name, p);
		free(p);
		return -1;
	}
	*path = p;
	return 0;
}

int kbuild_recipe_default(struct kbuild_recipe *r)
{
	static const char *const defaults[] = { "x86_64-base", "perf-guest" };

	memset(r, 0, sizeof(*r));
	r->base = xstrdup("tinyconfig");
	r->fragments = xcalloc(ARRAY_SIZE(defaults), sizeof(char *));
	for (size_t i = 0; i < ARRAY_SIZE(defaults); i++) {
		if (kbuild_resolve_fragment(defaults[i], &r->fragments[i]) < 0) {
			kbuild_recipe_release(r);
			return -1;
		}
		r->nr_fragments++;
	}
	return 0;
}

void kbuild_recipe_release(struct kbuild_recipe *r)
{
	free(r->base);
	strings_free(r->fragments, r->nr_fragments);
	strings_free(r->options, r->nr_options);
	memset(r, 0, sizeof(*r));
}

void kbuild_recipe_to_text(const struct kbuild_recipe *r, struct strbuf *out)
{
	strbuf_addf(out, "base %s\n", r->base);
	for (size_t i = 0; i < r->nr_fragments; i++)
		strbuf_addf(out, "fragment %s\n", r->fragments[i]);
	for (size_t i = 0; i < r->nr_options; i++)
		strbuf_addf(out, "option %s\n", r->options[i]);
	if (r->allow_drift)
		strbuf_addstr(out, "allow-drift\n");
}

int kbuild_recipe_from_text(struct kbuild_recipe *r, const char *text)
{
	const char *p = text;
	size_t af = 0, ao = 0;

	memset(r, 0, sizeof(*r));
	while (*p) {
		const char *eol = strchrnul(p, '\n');
		char *line = xstrndup(p, (size_t)(eol - p));

		if (!strncmp(line, "base ", 5)) {
			free(r->base);
			r->base = xstrdup(line + 5);
		} else if (!strncmp(line, "fragment ", 9)) {
			ALLOC_GROW(r->fragments, r->nr_fragments + 1, af);
			r->fragments[r->nr_fragments++] = xstrdup(line + 9);
		} else if (!strncmp(line, "option ", 7)) {
			ALLOC_GROW(r->options, r->nr_options + 1, ao);
			r->options[r->nr_options++] = xstrdup(line + 7);
		} else if (!strcmp(line, "allow-drift")) {
			r->allow_drift = 1;
		} else if (*line) {
			error("malformed build recipe line '%s'", line);
			free(line);
			kbuild_recipe_release(r);
			return -1;
		}
		free(line);
		p = *eol ? eol + 1 : eol;
	}
	if (!r->base)
		r->base = xstrdup("tinyconfig");
	return 0;
}

/* Parse one config line into name/value; 1 if it is a setting, 0 if
 * blank or an ordinary comment, -1 if malformed. */
static int parse_config_line(const char *line, char **name, char **value)
{
	const char *p = line, *eq;
	size_t n;

	*name = *value = NULL;
	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return 0;
	if (*p == '#') {
		/* "# CONFIG_X is not set" */
		const char *q = p + 1;
		while (*q == ' ')
			q++;
		if (strncmp(q, "CONFIG_", 7))
			return 0;
		n = strspn(q, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (strcmp(q + n, " is not set"))
			return 0;
		*name = xstrndup(q, n);
		return 1;
	}
	if (strncmp(p, "CONFIG_", 7))
		return -1;
	eq = strchr(p, '=');
	if (!eq)
		return -1;
	n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	if (p + n != eq || n <= 7)
		return -1;
	*name = xstrndup(p, n);
	*value = xstrdup(eq + 1);
	{
		/* trailing blanks are not part of the value */
		size_t len = strlen(*value);
		while (len && isspace((unsigned char)(*value)[len - 1]))
			(*value)[--len] = '\0';
		if (!len) {
			free(*name);
			free(*value);
			*name = *value = NULL;
			return -1;
		}
	}
	/* "=n" means not set, as in Kconfig */
	if (!strcmp(*value, "n")) {
		free(*value);
		*value = NULL;
	}
	return 1;
}

/* A value Kconfig writes: y, m, a decimal or 0x hex number, or a quoted
 * string (backslash escapes, no control characters).  Anything else (a
 * ';', a second word) is no config value. */
static int config_value_valid(const char *v)
{
	if (!v || !strcmp(v, "y") || !strcmp(v, "m"))
		return 1;	/* NULL: "=n" or "is not set" */
	if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
		return v[2] && strspn(v + 2, "0123456789abcdefABCDEF") == strlen(v + 2);
	if (*v == '-' || isdigit((unsigned char)*v)) {
		const char *d = *v == '-' ? v + 1 : v;
		return *d && strspn(d, "0123456789") == strlen(d);
	}
	if (*v != '"')
		return 0;
	for (v++; *v && *v != '"'; v++) {
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return 0;
		if (*v == '\\' && !*++v)
			return 0;
	}
	return *v == '"' && !v[1];
}

/* --config-option: CONFIG_ and upper-case letters, digits, '_' only. */
static int option_name_valid(const char *name)
{
	return !strncmp(name, "CONFIG_", 7) && name[7] &&
	       strspn(name + 7, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(name + 7);
}

static void add_setting(struct kconfig_setting **s, size_t *nr, size_t *alloc, char *name, char *value,
			char *origin)
{
	for (size_t i = 0; i < *nr; i++) {
		if (!strcmp((*s)[i].name, name)) {
			free((*s)[i].value);
			free((*s)[i].origin);
			free(name);
			(*s)[i].value = value;
			(*s)[i].origin = origin;
			return;
		}
	}
	ALLOC_GROW(*s, *nr + 1, *alloc);
	(*s)[*nr].name = name;
	(*s)[*nr].value = value;
	(*s)[*nr].origin = origin;
	(*nr)++;
}

void kconfig_settings_release(struct kconfig_setting *s, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		FREE_MANY(s[i].name, s[i].value, s[i].origin);
	free(s);
}

int kbuild_recipe_settings(const struct kbuild_recipe *r, struct kconfig_setting **out, size_t *nr)
{
	size_t alloc = 0;

	*out = NULL;
	*nr = 0;
	for (size_t f = 0; f < r->nr_fragments; f++) {
		char *text, *line, *save = NULL;
		int lineno = 0;

		if (read_file(r->fragments[f], 1 << 20, &text, NULL) < 0)
			goto fail;
		/* strtok_r would skip empty lines and shift numbers */
		for (line = text; line; line = save) {
			char *name, *value;
			int rc;

			save = strchr(line, '\n');
			if (save)
				*save++ = '\0';
			lineno++;
			rc = parse_config_line(line, &name, &value);
			if (rc > 0 && !config_value_valid(value)) {
				free(name);
				free(value);
				rc = -1;
			}
			if (rc < 0) {
				/* by number only: the file may be anything but a fragment */
				error("%s:%d: expected 'CONFIG_NAME=value' (y, m, n, a number or a \"string\"), "
				      "'# CONFIG_NAME is not set', a comment or a blank line", r->fragments[f], lineno);
				free(text);
				goto fail;
			}
			if (rc > 0)
				add_setting(out, nr, &alloc, name, value, xstrfmt("%s:%d", r->fragments[f], lineno));
		}
		free(text);
	}
	for (size_t i = 0; i < r->nr_options; i++) {
		char *name, *value;
		if (parse_config_line(r->options[i], &name, &value) != 1 || !option_name_valid(name) ||
		    !config_value_valid(value)) {
			if (name) {
				free(name);
				free(value);
			}
			error("--config-option '%s': expected CONFIG_NAME=VALUE (NAME of A-Z, 0-9, _; VALUE y, m, n, "
			      "a number, 0x hex or a \"string\") or '# CONFIG_NAME is not set'", r->options[i]);
			goto fail;
		}
		add_setting(out, nr, &alloc, name, value, xstrdup("--config-option"));
	}
	return 0;
fail:
	kconfig_settings_release(*out, *nr);
	*out = NULL;
	*nr = 0;
	return -1;
}

/* First line of `gcc --version`, cached. */
static const char *compiler_version(void)
{
	static struct strbuf v = STRBUF_INIT;
	static int done;

	if (!done) {
		static const char *const argv[] = { "gcc", "--version", NULL };
		char tmpl[] = "/tmp/klab-gcc.XXXXXX";
		int fd = mkstemp(tmpl);
		struct run_opts o = { .argv = argv, .output_path = tmpl };
		struct run_result r;
		char *text = NULL;

		done = 1;
		if (fd >= 0) {
			close(fd);
			if (run_command(&o, &r) == 0 && r.status == RUN_EXITED && r.exit_code == 0 &&
			    read_file(tmpl, 1 << 16, &text, NULL) == 0) {
				strbuf_add(&v, text, strcspn(text, "\n"));
			}
			free(text);
			unlink(tmpl);
		}
		if (!v.len)
			strbuf_addstr(&v, "unknown gcc");
	}
	return v.buf;
}

int kbuild_recipe_id(const struct kbuild_recipe *r, char id[41])
{
	struct strbuf sb = STRBUF_INIT;
	int ret = -1;

	/* 2: builds are reproducible (KBUILD_BUILD_VERSION fixed), so two
	 * builds of one tree give one image; an artifact of 1 may carry its
	 * build directory's link count ("#7") and differ from its twin,
	 * which would hide a no-op culprit and an inheritable step */
	strbuf_addstr(&sb, "klab-recipe 2\n");
	if (is_file(r->base) || strchr(r->base, '/')) {
		char *text;
		size_t len;
		char h[41];
		if (read_file(r->base, 16 << 20, &text, &len) < 0)
			goto out;
		blob_hash(text, len, h);
		free(text);
		strbuf_addf(&sb, "base-file %s\n", h);
	} else {
		strbuf_addf(&sb, "base %s\n", r->base);
	}
	for (size_t i = 0; i < r->nr_fragments; i++) {
		char *text;
		size_t len;
		char h[41];
		if (read_file(r->fragments[i], 1 << 20, &text, &len) < 0)
			goto out;
		blob_hash(text, len, h);
		free(text);
		strbuf_addf(&sb, "fragment %s\n", h);
	}
	for (size_t i = 0; i < r->nr_options; i++)
		strbuf_addf(&sb, "option %s\n", r->options[i]);
	/* it changes the outcome (a refused build vs a kernel) */
	if (r->allow_drift)
		strbuf_addstr(&sb, "allow-drift\n");
	strbuf_addf(&sb, "compiler %s\n", compiler_version());
	blob_hash(sb.buf, sb.len, id);
	ret = 0;
out:
	strbuf_release(&sb);
	return ret;
}

/* Value of a symbol in .config text: 1 found (value NULL = not set). */
static int config_lookup(const char *text, const char *name, char **value)
{
	size_t n = strlen(name);
	const char *p = text;

	*value = NULL;
	while (*p) {
		const char *eol = strchrnul(p, '\n');
		if (!strncmp(p, name, n) && p[n] == '=') {
			*value = xstrndup(p + n + 1, (size_t)(eol - p - n - 1));
			return 1;
		}
		if (!strncmp(p, "# ", 2) && !strncmp(p + 2, name, n) && !strncmp(p + 2 + n, " is not set", 11))
			return 1;
		p = *eol ? eol + 1 : eol;
	}
	return 0;
}

int kbuild_check_drift(const char *config_text, const struct kconfig_setting *s, size_t nr,
		       struct strbuf *report)
{
	int drift = 0;

	for (size_t i = 0; i < nr; i++) {
		char *got = NULL;
		int found = config_lookup(config_text, s[i].name, &got);
		int same = s[i].value ? (got && !strcmp(got, s[i].value)) : !got;

		if (!same) {
			drift++;
			if (!found)
				strbuf_addf(report, "%s: asked %s (%s), Kconfig dropped it (missing dependency or unknown symbol)\n",
					    s[i].name, s[i].value ? s[i].value : "n", s[i].origin);
			else
				strbuf_addf(report, "%s: asked %s (%s), got %s\n", s[i].name,
					    s[i].value ? s[i].value : "n", s[i].origin, got ? got : "n");
		}
		free(got);
	}
	return drift;
}

/* The deepest directory containing both a and b (made absolute), or NULL
 * when it would be "/" (too wide for ccache's base_dir). */
static char *common_dir(const char *a, const char *b)
{
	char *ra = real_path(a), *rb = real_path(b), *ret = NULL;
	size_t n = 0, last = 0;

	if (ra && rb) {
		while (ra[n] && ra[n] == rb[n]) {
			if (ra[n] == '/')
				last = n;
			n++;
		}
		/* a whole component matched at the end of either path */
		if ((!ra[n] && (rb[n] == '/' || !rb[n])) || (!rb[n] && ra[n] == '/'))
			last = n;
		if (last > 0)
			ret = xstrndup(ra, last);
	}
	free(ra);
	free(rb);
	return ret;
}

char *kbuild_build_dir(const char *src_dir, const char *recipe_id)
{
	return xstrfmt("%s/" KBUILD_DIR_PREFIX "%.12s", src_dir, recipe_id);
}

char *kbuild_build_lock_name(const char *src_dir, const char *recipe_id)
{
	const char *slash = strrchr(src_dir, '/');

	return xstrfmt("build-%s-%.12s", slash ? slash + 1 : src_dir, recipe_id);
}

void kbuild_result_release(struct kbuild_result *res)
{
	free(res->rebuilt_for);
	FREE_MANY(res->artifact_dir, res->bzimage, res->config, res->system_map, res->log, res->excerpt,
		  res->message);
	memset(res, 0, sizeof(*res));
}

static void fill_paths(struct kbuild_result *res, const char *dir)
{
	free(res->artifact_dir);
	res->artifact_dir = xstrdup(dir);
	res->bzimage = xstrfmt("%s/bzImage", dir);
	res->config = xstrfmt("%s/config", dir);
	res->system_map = xstrfmt("%s/System.map", dir);
	res->log = xstrfmt("%s/build.log", dir);
}

/* A stored kernel klab may boot: its identity says which kernel it is and
 * its bzImage is still the one built.  An entry made before klab verified
 * images, or damaged since, is not used: the caller builds the kernel
 * again, which replaces the entry; a line says why.  1 usable
 * (res->vmlinux_sha256 set), 0 not. */
static int artifact_usable(const char *dir, struct kbuild_result *res)
{
	struct kimage_identity id;
	char *why = NULL;
	int rc = kimage_check_artifact(dir, &why);

	if (rc == 1)
		warning("the kernel in '%s' was stored before klab verified images: building it again", dir);
	else if (rc == 2)
		warning("the kernel in '%s' is damaged (%s): building it again", dir, why);
	else if (rc < 0)
		warning("the kernel in '%s' cannot be checked: building it again", dir);
	free(why);
	if (rc || kimage_identity_read(dir, &id) < 0)
		return 0;
	memcpy(res->vmlinux_sha256, id.vmlinux_sha256, sizeof(res->vmlinux_sha256));
	return 1;
}

int kbuild_lookup(struct lab *lab, const char *tree, const char *recipe_id, struct kbuild_result *res)
{
	struct db_build b;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = db_build_find(lab->db, tree, recipe_id, &b);
	if (rc <= 0)
		return rc;
	memcpy(res->recipe_id, recipe_id, 41);
	res->build_id = b.id;
	res->duration_ms = b.duration_ms;
	res->objects = b.objects;
	if (b.config_hash)
		snprintf(res->config_hash, 41, "%s", b.config_hash);
	rc = 0;
	if (!strcmp(b.status, "ok") && b.artifact_dir) {
		char *bz = xstrfmt("%s/bzImage", b.artifact_dir);
		if (is_file(bz) && artifact_usable(b.artifact_dir, res)) {
			res->status = KBUILD_OK;
			fill_paths(res, b.artifact_dir);
			res->message = xstrdup("built before (artifact store)");
			rc = 1;
		}
		free(bz);
	} else if (!strcmp(b.status, "build-failed") || !strcmp(b.status, "config-drift")) {
		res->status = !strcmp(b.status, "build-failed") ? KBUILD_FAILED : KBUILD_DRIFT;
		res->excerpt = b.error_excerpt ? xstrdup(b.error_excerpt) : xstrdup("");
		res->message = xstrfmt("%s before (not retried)", b.status);
		res->log = b.log_path ? xstrdup(b.log_path) : NULL;
		rc = 1;
	}
	db_build_release(&b);
	if (rc)
		res->cache_hit = 1;
	return rc;
}

/* A kernel another lab built from the same tree and recipe into the shared
 * store (artifact_store): recorded as this lab's build, not rebuilt.  Its
 * entry appeared by rename, so it is whole; the recipe id hashes every
 * input file, so the same id means the same config.  1 taken, 0 none. */
static int adopt_shared(struct lab *lab, int64_t repo_id, const char *commit, const char *tree,
			const struct kbuild_recipe *recipe, const char *recipe_id, struct kbuild_result *res)
{
	struct strbuf recipe_text = STRBUF_INIT;
	char *dir, *bz, *cfg, *cfg_text = NULL;
	size_t len;
	int ret = 0;

	if (!lab->artifact_store)
		return 0;
	dir = xstrfmt("%s/%s-%s", lab->artifact_store, tree, recipe_id);
	bz = xstrfmt("%s/bzImage", dir);
	cfg = xstrfmt("%s/config", dir);
	if (!is_file(bz) || !is_file(cfg) || !artifact_usable(dir, res))
		goto out;
	ret = -1;
	if (read_file(cfg, 16 << 20, &cfg_text, &len) < 0)
		goto out;
	kbuild_recipe_to_text(recipe, &recipe_text);
	{
		char sha[65];

		memcpy(sha, res->vmlinux_sha256, sizeof(sha));
		memset(res, 0, sizeof(*res));
		memcpy(res->vmlinux_sha256, sha, sizeof(sha));
	}
	memcpy(res->recipe_id, recipe_id, 41);
	blob_hash(cfg_text, len, res->config_hash);
	if (db_build_begin(lab->db, repo_id, commit, tree, recipe_id, recipe_text.buf, &res->build_id) < 0 ||
	    db_build_finish(lab->db, res->build_id, "ok", dir, res->config_hash, cfg_text, NULL, NULL, 0, 0) < 0)
		goto out;
	res->status = KBUILD_OK;
	res->cache_hit = 1;
	fill_paths(res, dir);
	res->message = xstrdup("built before by another lab (shared artifact store)");
	ret = 1;
out:
	strbuf_release(&recipe_text);
	free(cfg_text);
	free(cfg);
	free(bz);
	free(dir);
	return ret;
}

int kbuild_find(struct lab *lab, int64_t repo_id, const char *commit, const char *tree,
		const struct kbuild_recipe *recipe, const char *recipe_id, struct kbuild_result *res)
{
	int rc = kbuild_lookup(lab, tree, recipe_id, res);

	if (rc != 0)
		return rc;
	return adopt_shared(lab, repo_id, commit, tree, recipe, recipe_id, res);
}

/* ---- the log ------------------------------------------------------------ */

static int is_error_line(const char *line)
{
	/* file:line[:col]: [fatal ]error: */
	const char *p = line;
	if (!*p || isspace((unsigned char)*p))
		return 0;
	while (*p && *p != ':' && !isspace((unsigned char)*p))
		p++;
	if (*p != ':' || !isdigit((unsigned char)p[1]))
		return strstr(line, "undefined reference to") != NULL ||
		       (strstr(line, "ld: ") && strstr(line, "error")) ;
	p++;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == ':' && isdigit((unsigned char)p[1])) {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p != ':')
		return 0;
	p++;
	while (*p == ' ')
		p++;
	return !strncmp(p, "error:", 6) || !strncmp(p, "fatal error:", 12);
}

void kbuild_scan_log(const char *log, struct strbuf *excerpt, int *env_failure)
{
	static const char *const env_patterns[] = {
		"No space left on device", "Disk quota exceeded", "Read-only file system",
		"Cannot allocate memory", "virtual memory exhausted", "Killed signal terminated program",
		": command not found", "ccache: not found", "gcc: not found", "make: not found",
		"No such file or directory: 'ccache'", "Too many open files",
	};
	const char *p = log;
	int found = 0;

	*env_failure = 0;
	while (*p) {
		const char *eol = strchrnul(p, '\n');
		size_t len = (size_t)(eol - p);
		char *line = xstrndup(p, len > 400 ? 400 : len);

		for (size_t i = 0; i < ARRAY_SIZE(env_patterns); i++)
			if (strstr(line, env_patterns[i])) {
				if (!*env_failure)
					strbuf_addf(excerpt, "%s\n", line);
				*env_failure = 1;
			}
		if (!*env_failure && found < 5 && is_error_line(line)) {
			strbuf_addf(excerpt, "%s\n", line);
			found++;
		}
		free(line);
		p = *eol ? eol + 1 : eol;
	}
	if (!found && !*env_failure) {
		/* no compiler message: keep the make error lines */
		p = log;
		while (*p && found < 5) {
			const char *eol = strchrnul(p, '\n');
			if (strstr(p, "***") && strstr(p, "***") < eol) {
				strbuf_add(excerpt, p, (size_t)(eol - p) > 400 ? 400 : (size_t)(eol - p));
				strbuf_addch(excerpt, '\n');
				found++;
			}
			p = *eol ? eol + 1 : eol;
		}
	}
	strbuf_rtrim(excerpt);
}

/* Compiler messages name files through the build dir's path to the
 * source: "../kernel/fork.c" (srctree ".."), or in an older layout's log
 * "../../worktrees/repo-1/kernel/fork.c": keep the part that is the
 * repository's path. */
static char *strip_src_prefix(const char *excerpt, const char *src_dir)
{
	const char *slash = strrchr(src_dir, '/');
	const char *tail = slash ? slash + 1 : src_dir;
	struct strbuf out = STRBUF_INIT;
	const char *p = excerpt;

	while (*p) {
		const char *eol = strchrnul(p, '\n'), *colon = memchr(p, ':', (size_t)(eol - p));
		const char *q = p, *hit = NULL;
		size_t tl = strlen(tail);

		/* the last "<tail>/" before the first colon */
		while (colon && (q = memmem(q, (size_t)(colon - q), tail, tl)) && q + tl < colon) {
			if (q[tl] == '/' && (q == p || q[-1] == '/'))
				hit = q + tl + 1;
			q += tl;
		}
		if (!hit && !strncmp(p, "../", 3) && colon && p + 3 < colon)
			hit = p + 3;
		if (hit)
			strbuf_add(&out, hit, (size_t)(eol - hit));
		else
			strbuf_add(&out, p, (size_t)(eol - p));
		if (*eol)
			strbuf_addch(&out, '\n');
		p = *eol ? eol + 1 : eol;
	}
	return strbuf_detach(&out, NULL);
}

/* ---- progress ----------------------------------------------------------- */

struct progress {
	const char *marker;	/* build-in-progress file: records make's group */
	const char *commit;
	enum kbuild_progress mode;
	const char *indent;
	const char *phase;
	int objects;
	int64_t start, last;
	int dirty;
};

static void progress_show(struct progress *pg, int force)
{
	int64_t now = now_ms();
	char dur[32];

	if (pg->mode == PROGRESS_QUIET)
		return;
	if (pg->mode == PROGRESS_TTY) {
		if (!force && now - pg->last < 250)
			return;
		fprintf(stderr, "\r%s[%s] %d objects, %s   ", pg->indent, pg->phase, pg->objects,
			fmt_duration(now - pg->start, dur, sizeof(dur)));
		pg->dirty = 1;
	} else {
		if (!force && now - pg->last < 30000)
			return;
		fprintf(stderr, "%s[%s] %d objects, %s\n", pg->indent, pg->phase, pg->objects,
			fmt_duration(now - pg->start, dur, sizeof(dur)));
	}
	pg->last = now;
}

static void progress_phase(struct progress *pg, const char *phase)
{
	if (pg->phase && !strcmp(pg->phase, phase))
		return;
	pg->phase = phase;
	progress_show(pg, 1);
}

static void progress_end(struct progress *pg)
{
	if (pg->mode == PROGRESS_TTY && pg->dirty)
		fprintf(stderr, "\n");
	pg->dirty = 0;
}

/* The marker names make's process group (the run-command supervisor
 * leads it) and when its leader started, so that a later build can tell
 * the group from whatever has the number by then. */
static void on_make_start(int pid, void *data)
{
	struct progress *pg = data;
	char *m = xstrfmt("commit %s\npid %ld\npgid %d\nstart %lld\n", pg->commit, (long)getpid(), pid,
			  process_start_time(pid, NULL));

	write_file_atomic(pg->marker, m, strlen(m));
	free(m);
}

int kbuild_reap_interrupted(const char *marker, const char *indent, const char *bd)
{
	char *text = NULL, *p;
	long pgid = 0, grp = 0;
	long long start = 0, leader;
	int killed = 0;

	if (read_file(marker, 4096, &text, NULL) < 0)
		return 0;
	fprintf(stderr, "%sklab: the previous build in %s was interrupted; make redoes what is incomplete\n",
		indent, bd);
	if ((p = strstr(text, "\npgid ")))
		pgid = strtol(p + 6, NULL, 10);
	if ((p = strstr(text, "\nstart ")))
		start = strtoll(p + 7, NULL, 10);
	free(text);
	if (pgid <= 1 || pgid != (long)(pid_t)pgid || start <= 0)
		return 0;	/* no start time (an older klab's marker): never kill */
	leader = process_start_time(pgid, &grp);
	if (leader) {
		/* the number is in use: by the build's group leader only if
		 * it started when that one did */
		if (leader != start || grp != pgid)
			return 0;
		if (kill(-(pid_t)pgid, SIGKILL) == 0)
			killed = 1;
	} else {
		/* The leader is gone; compilers may be left in its group.  A
		 * member of the build's group started after its leader. */
		DIR *d = opendir("/proc");
		struct dirent *de;

		while (d && (de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			long long st;

			if (*end || pid <= 1)
				continue;
			st = process_start_time(pid, &grp);
			if (st && grp == pgid && st >= start && kill((pid_t)pid, SIGKILL) == 0)
				killed++;
		}
		if (d)
			closedir(d);
	}
	if (killed)
		usleep(200000);
	return killed;
}

enum kbuild_line kbuild_line_kind(const char *line)
{
	if (!strncmp(line, "  CC ", 5) || !strncmp(line, "  AS ", 5))
		return KBUILD_LINE_OBJECT;
	if (!strncmp(line, "  LD      vmlinux", 17) || !strncmp(line, "  LD      .tmp_vmlinux", 22) ||
	    !strncmp(line, "  KSYMS", 7))
		return KBUILD_LINE_LINK;
	if (!strncmp(line, "  BUILD   arch/x86/boot/bzImage", 31))
		return KBUILD_LINE_IMAGE;
	return KBUILD_LINE_OTHER;
}

int kbuild_count_ccache_hits(const char *log)
{
	int hits = 0, hit = 0, source = 0;

	for (const char *p = log; *p;) {
		const char *eol = strchrnul(p, '\n');
		size_t n = (size_t)(eol - p);

		if (n && *p == '#') {
			hits += hit && source;
			hit = 0;
			/* "# <input>": kbuild's compiler probes (cc-option) compile
			 * /dev/null or read no file; they are not objects */
			source = n > 2 && p[1] == ' ' && !(n == 11 && !strncmp(p, "# /dev/null", 11));
		} else if ((n == 16 && !strncmp(p, "direct_cache_hit", 16)) ||
			   (n == 22 && !strncmp(p, "preprocessed_cache_hit", 22))) {
			hit = 1;
		}
		p = *eol ? eol + 1 : eol;
	}
	return hits + (hit && source);
}

int kbuild_count_objects(const char *output)
{
	int n = 0;

	for (const char *p = output; *p;) {
		const char *eol = strchrnul(p, '\n');
		char line[64];
		size_t len = (size_t)(eol - p) < sizeof(line) - 1 ? (size_t)(eol - p) : sizeof(line) - 1;

		memcpy(line, p, len);
		line[len] = '\0';
		n += kbuild_line_kind(line) == KBUILD_LINE_OBJECT;
		p = *eol ? eol + 1 : eol;
	}
	return n;
}

static void on_make_line(const char *line, size_t len, void *data)
{
	struct progress *pg = data;

	switch (kbuild_line_kind(line)) {
	case KBUILD_LINE_OBJECT:
		pg->objects++;
		if (!strcmp(pg->phase, "config") || !strcmp(pg->phase, "prepare"))
			progress_phase(pg, "compile");
		break;
	case KBUILD_LINE_LINK:
		progress_phase(pg, "link");
		break;
	case KBUILD_LINE_IMAGE:
		progress_phase(pg, "image");
		break;
	case KBUILD_LINE_OTHER:
		break;
	}
	progress_show(pg, 0);
	(void)len;
}

/* ---- building ----------------------------------------------------------- */

static int run_make(const char *src, const char *bd, const char *const *extra, const char *const *env,
		    const char *log, struct progress *pg, struct run_result *rr)
{
	const char *argv[32];
	char *c_arg = xstrfmt("-C%s", src), *o_arg = xstrfmt("O=%s", bd);
	struct run_opts o = { 0 };
	size_t n = 0;
	int ret;

	argv[n++] = "make";
	argv[n++] = c_arg;
	argv[n++] = o_arg;
	for (; *extra && n < ARRAY_SIZE(argv) - 1; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	o.argv = argv;
	o.env = env;
	o.output_path = log;
	if (pg) {
		o.on_line = on_make_line;
		o.on_line_data = pg;
		if (pg->marker)
			o.on_start = on_make_start;
	}
	{
		/* the exact command goes first in the log */
		FILE *f = fopen(log, "a");
		if (f) {
			fprintf(f, "klab:");
			for (const char *const *e = env; e && *e; e++)
				fprintf(f, " %s", *e);
			for (size_t i = 0; argv[i]; i++)
				fprintf(f, " '%s'", argv[i]);
			fprintf(f, "\n");
			fclose(f);
		}
	}
	ret = run_command(&o, rr);
	free(c_arg);
	free(o_arg);
	return ret;
}

/* Rewrite .config with the requested settings (each symbol once). */
static int apply_settings(const char *path, const struct kconfig_setting *s, size_t nr)
{
	char *text;
	struct strbuf out = STRBUF_INIT;
	const char *p;
	int ret;

	if (read_file(path, 16 << 20, &text, NULL) < 0)
		return -1;
	for (p = text; *p; ) {
		const char *eol = strchrnul(p, '\n');
		char *line = xstrndup(p, (size_t)(eol - p));
		char *name, *value;
		int keep = 1;

		if (parse_config_line(line, &name, &value) == 1) {
			for (size_t i = 0; i < nr; i++)
				if (!strcmp(s[i].name, name))
					keep = 0;
			free(name);
			free(value);
		}
		if (keep)
			strbuf_addf(&out, "%s\n", line);
		free(line);
		p = *eol ? eol + 1 : eol;
	}
	for (size_t i = 0; i < nr; i++) {
		if (s[i].value)
			strbuf_addf(&out, "%s=%s\n", s[i].name, s[i].value);
		else
			strbuf_addf(&out, "# %s is not set\n", s[i].name);
	}
	ret = write_file_atomic(path, out.buf, out.len);
	strbuf_release(&out);
	free(text);
	return ret;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	int in = -1, out = -1, ret = -1;
	char buf[1 << 16];
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		error("cannot open '%s': %s", from, strerror(errno));
		goto out;
	}
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		error("cannot create '%s': %s", to, strerror(errno));
		goto out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		/* a short write is followed by the one that says why (ENOSPC) */
		for (ssize_t done = 0, w; done < n; done += w) {
			w = write(out, buf + done, (size_t)(n - done));
			if (w < 0) {
				error("cannot write '%s': %s", to, strerror(errno));
				goto out;
			}
		}
	}
	if (n < 0 || fsync(out) < 0) {
		error("cannot copy '%s': %s", from, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && !ret)
		ret = error("cannot write '%s': %s", to, strerror(errno));
	return ret;
}

/* Temp dirs of a store that was killed half way (".tmp-KEY-PID" whose
 * PID no longer runs) never become entries: remove them. */
static void remove_stale_temps(const char *adir)
{
	DIR *d = opendir(adir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		long pid = name_owner_pid(de->d_name, ".tmp-");
		char *path;

		if (!pid || pid == (long)getpid() || !process_gone(pid))
			continue;
		path = xstrfmt("%s/%s", adir, de->d_name);
		remove_tree(path);
		free(path);
	}
	closedir(d);
}

/* The kernel's source set beside its image (ksources.h): a set klab
 * cannot make is left out, and a commit compared with this kernel is
 * then built, never skipped. */
static void store_sources(const char *bd, const char *src_dir, const char *dir)
{
	struct ksources set = KSOURCES_INIT;
	char *path = xstrfmt("%s/%s", dir, KSOURCES_FILE);
	int hold = error_hold(1);

	if (ksources_collect(&set, bd, src_dir) == 0)
		ksources_write(&set, path);
	error_hold(hold);
	ksources_release(&set);
	free(path);
}

/* An entry of the store klab may boot: its identity is there and its
 * bzImage is the one the identity names.  Quiet: callers say what they
 * do about an entry that is not. */
static int artifact_sound(const char *dir)
{
	char *why = NULL;
	int hold = error_hold(1), rc = kimage_check_artifact(dir, &why);

	error_hold(hold);
	free(why);
	return rc == 0;
}

/* Copy the results into artifacts/<key>: temp dir, fsync, rename. */
static int store_artifacts(const struct lab *lab, const char *bd, const char *src_dir, const char *key,
			   const char *log, const struct kimage_identity *id, char **final_out)
{
	char *adir = lab_artifact_dir(lab);
	char *final = xstrfmt("%s/%s", adir, key);
	char *tmp = xstrfmt("%s/.tmp-%s-%ld", adir, key, (long)getpid());
	static const char *const files[][2] = {
		{ "arch/x86/boot/bzImage", "bzImage" },
		{ ".config", "config" },
		{ "System.map", "System.map" },
	};
	int ret = -1;

	if (mkdir_p(adir, 0755) < 0)
		goto out;
	remove_stale_temps(adir);
	if (is_dir(tmp))
		remove_tree(tmp);
	if (mkdir(tmp, 0755) < 0) {
		error("cannot create '%s': %s", tmp, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *from = xstrfmt("%s/%s", bd, files[i][0]);
		char *to = xstrfmt("%s/%s", tmp, files[i][1]);
		int rc = copy_file(from, to, 0644);
		free(from);
		free(to);
		if (rc < 0)
			goto out;
	}
	{
		char *to = xstrfmt("%s/build.log", tmp);
		/* the log, like every log of the lab, is its owner's only */
		int rc = copy_file(log, to, 0600);
		free(to);
		if (rc < 0)
			goto out;
	}
	store_sources(bd, src_dir, tmp);
	if (kimage_identity_write(tmp, id) < 0)
		goto out;
	if (lab->artifact_store && is_dir(final) && artifact_sound(final)) {
		/* another lab stored the same tree and recipe meanwhile: its
		 * entry is whole (it came by rename) and may be booting now */
		remove_tree(tmp);
	} else {
		if (is_dir(final))
			remove_tree(final);	/* an old entry whose row said otherwise */
		if (rename(tmp, final) < 0) {
			error("cannot rename '%s' to '%s': %s", tmp, final, strerror(errno));
			goto out;
		}
	}
	{
		int dfd = open(adir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd);
			close(dfd);
		}
	}
	*final_out = final;
	final = NULL;
	ret = 0;
out:
	if (ret < 0 && is_dir(tmp))
		remove_tree(tmp);
	free(adir);
	free(final);
	free(tmp);
	return ret;
}

static enum kbuild_progress pick_progress(enum kbuild_progress p)
{
	if (p != PROGRESS_AUTO)
		return p;
	return isatty(2) ? PROGRESS_TTY : PROGRESS_LINES;
}

/* One build while kbuild_build runs it: what every step reads and what
 * the end releases. */
struct build {
	const struct kbuild_request *req;
	struct kbuild_result *res;
	struct lab *lab;
	struct kconfig_setting *settings;
	size_t nr_settings;
	struct strbuf recipe_text;
	struct progress pg;
	char *bd, *log, *marker, *cfg_path, *cfg_text, *stats_log, *icecc_log;
	char *env[24];
	int nenv, lock_fd, marker_written;
	int icecc_logged;	/* klab set ICECC_LOGFILE to icecc_log */
	int64_t start;
};

/* The build directory of this worktree and recipe, or the next copy
 * when a build runs in the first one, marked as in use by this build
 * (a marker left by a build klab died in is handled first). */
static int take_build_dir(struct build *b)
{
	const struct kbuild_request *req = b->req;
	char *lock_name, *m;
	int copy = 0, rc;

	/* a build of this worktree and config running elsewhere has the
	 * first directory: take the next copy (cold, but ccache helps) */
	lock_name = kbuild_build_lock_name(req->src_dir, b->res->recipe_id);
	b->lock_fd = lab_lock_copy(b->lab, lock_name, &copy);
	free(lock_name);
	if (b->lock_fd < 0)
		return -1;
	b->bd = kbuild_build_dir(req->src_dir, b->res->recipe_id);
	if (copy) {
		char *c = xstrfmt("%s.%d", b->bd, copy);
		free(b->bd);
		b->bd = c;
	}
	if (mkdir_p(b->bd, 0755) < 0)
		return -1;
	b->marker = xstrfmt("%s/.klab-building", b->bd);
	if (is_file(b->marker))
		kbuild_reap_interrupted(b->marker, req->indent ? req->indent : "", b->bd);
	m = xstrfmt("commit %s\npid %ld\n", req->commit, (long)getpid());
	rc = write_file_atomic(b->marker, m, strlen(m));
	free(m);
	if (rc < 0)
		return -1;
	b->marker_written = 1;
	return 0;
}

const char *kbuild_shim_dir(void)
{
	static char *dir;
	const char *env = getenv("KLAB_SHIM_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	if (dir)
		return dir;
	/* the build tree: orchestrator/klab beside orchestrator/shim/ */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash, *cand;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			cand = xstrfmt("%s/shim", exe);
			if (is_file_in(cand, "ccache")) {
				dir = cand;
				return dir;
			}
			free(cand);
		}
	}
	dir = xstrdup(KLAB_LIBEXECDIR "/shim");
	return dir;
}

/* klab's ccache shim (kernel/ccache-shim.c) first in make's PATH, so that
 * CC="ccache gcc" compiles a source that may .incbin another file in
 * ccache's preprocessor mode: depend mode cannot see the directive and
 * gave piggy.o of another kernel.  The compile lines stay the same, so a
 * build directory keeps its objects.  Without the shim (klab not
 * installed whole) the build runs without depend mode at all, never
 * unsafely: slower, and the build log says why. */
static void shim_env(struct build *b)
{
	const char *dir = kbuild_shim_dir();
	const char *path = getenv("PATH");
	char *real = NULL;

	if (!find_executable("ccache", &real)) {
		free(real);
		return;	/* make will say "ccache: not found": an environment failure */
	}
	if (is_file_in(dir, "ccache")) {
		b->env[b->nenv++] = xstrfmt("KLAB_REAL_CCACHE=%s", real);
		b->env[b->nenv++] = xstrfmt("PATH=%s:%s", dir, path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	} else {
		FILE *f = fopen(b->log, "a");

		for (int i = 0; i < b->nenv; i++)
			if (!strcmp(b->env[i], "CCACHE_DEPEND=1")) {
				free(b->env[i]);
				b->env[i] = b->env[--b->nenv];
			}
		b->env[b->nenv++] = xstrdup("CCACHE_NODEPEND=1");
		b->env[b->nenv++] = xstrdup("CCACHE_NODIRECT=1");
		if (f) {
			fprintf(f, "klab: ccache shim not found in %s: ccache runs in preprocessor mode only\n", dir);
			fclose(f);
		}
	}
	free(real);
}

/* compiler_wrapper is icecream's client ("icecc", or a path to it). */
static int wrapper_is_icecc(const char *wrapper)
{
	const char *base;

	if (!wrapper || !*wrapper)
		return 0;
	base = strrchr(wrapper, '/');
	return !strcmp(base ? base + 1 : wrapper, "icecc");
}

/* The environment make runs in: ccache's, and what makes the image the
 * same whenever it is built from the same tree and config. */
static void make_env(struct build *b)
{
	struct lab *lab = b->lab;
	char *base;

	if (!getenv("CCACHE_DIR")) {
		if (lab->ccache_dir)
			b->env[b->nenv++] = xstrfmt("CCACHE_DIR=%s", lab->ccache_dir);
		else
			b->env[b->nenv++] = xstrfmt("CCACHE_DIR=%s/ccache", lab->state_dir);
	}
	/* The build directory is a direct subdirectory of the checkout, so
	 * kbuild's srctree is ".." and compile lines name no worktree
	 * (-I../include, -fmacro-prefix-map=../=); ccache makes whatever
	 * absolute path under the checkout remains relative, and does not
	 * hash the directory it runs in (debug info's, where a recipe asks
	 * for it): every repository, worktree copy and lab with this
	 * ccache_dir shares the compiled objects of the same sources. */
	base = common_dir(b->req->src_dir, b->bd);
	b->env[b->nenv++] = xstrfmt("CCACHE_BASEDIR=%s", base ? base : b->req->src_dir);
	free(base);
	b->env[b->nenv++] = xstrdup("CCACHE_NOHASHDIR=1");
	/* Depend mode: a miss runs the compiler once and takes the headers
	 * from its -MMD output, instead of running the preprocessor first to
	 * look for a preprocessed hit (which klab's path-independent compile
	 * lines make rare: the hits are direct ones).  80 kernel objects,
	 * one by one: a miss cost 18% over plain gcc instead of 47%, a hit
	 * the same, and the direct hits of a cache filled either way serve
	 * the other; a whole cold build 470 s instead of 688 s.  The price:
	 * a comment-only change of a .c file is a miss, not a preprocessed
	 * hit (docs/architecture.md).  The user's CCACHE_(NO)DEPEND wins. */
	if (!getenv("CCACHE_DEPEND") && !getenv("CCACHE_NODEPEND"))
		b->env[b->nenv++] = xstrdup("CCACHE_DEPEND=1");
	/* one line a result for each compile: how many ccache gave */
	if (!getenv("CCACHE_STATSLOG"))
		b->env[b->nenv++] = xstrfmt("CCACHE_STATSLOG=%s", b->stats_log);
	shim_env(b);
	if (lab->compiler_wrapper && *lab->compiler_wrapper)
		b->env[b->nenv++] = xstrfmt("CCACHE_PREFIX=%s", lab->compiler_wrapper);
	/* icecream's client logs where each compile went: klab counts it,
	 * unless the user logs icecc's way already */
	b->res->icecc.used = wrapper_is_icecc(lab->compiler_wrapper);
	if (b->res->icecc.used && !getenv("ICECC_LOGFILE") && !getenv("ICECC_DEBUG")) {
		b->env[b->nenv++] = xstrfmt("ICECC_LOGFILE=%s", b->icecc_log);
		b->env[b->nenv++] = xstrdup("ICECC_DEBUG=debug");
		b->icecc_logged = 1;
	}
	/* a cache shared by machines: a miss here may be a hit another lab
	 * stored; a miss everywhere is stored in both */
	if (lab->ccache_remote && *lab->ccache_remote)
		b->env[b->nenv++] = xstrfmt("CCACHE_REMOTE_STORAGE=%s", lab->ccache_remote);
	b->env[b->nenv++] = xstrdup("KBUILD_BUILD_TIMESTAMP=Thu Jan  1 00:00:00 UTC 1970");
	b->env[b->nenv++] = xstrdup("KBUILD_BUILD_USER=klab");
	b->env[b->nenv++] = xstrdup("KBUILD_BUILD_HOST=klab");
	/* the "#N" of the version string, else each link of one build
	 * directory counts up and no two images are alike */
	b->env[b->nenv++] = xstrdup("KBUILD_BUILD_VERSION=1");
	for (size_t i = 0; kbuild_make_env_fixed[i]; i++)
		b->env[b->nenv++] = xstrdup(kbuild_make_env_fixed[i]);
}

static int build_make(struct build *b, const char *const *extra, struct progress *pg, struct run_result *rr)
{
	return run_make(b->req->src_dir, b->bd, extra, (const char *const *)b->env, b->log, pg, rr);
}

/* The build's error lines out of its log (at most max bytes read),
 * named by their path in the repository; *env_failure when the machine
 * failed rather than the commit. */
static char *log_excerpt(struct build *b, size_t max, int *env_failure, const struct run_result *rr)
{
	struct strbuf excerpt = STRBUF_INIT;
	char *text = NULL, *ret;

	read_file(b->log, max, &text, NULL);
	kbuild_scan_log(text ? text : "", &excerpt, env_failure);
	free(text);
	if (rr && rr->status == RUN_SIGNALED) {
		*env_failure = 1;
		strbuf_addf(&excerpt, "%smake killed by signal %d", excerpt.len ? "\n" : "", rr->signal);
	}
	ret = strip_src_prefix(excerpt.buf, b->req->src_dir);
	strbuf_release(&excerpt);
	return ret;
}

/* A config step that failed: the build ends as failed (or env-failed). */
static int config_failed(struct build *b)
{
	struct kbuild_result *res = b->res;
	int env_failure = 0;

	progress_end(&b->pg);
	res->excerpt = log_excerpt(b, 64 << 20, &env_failure, NULL);
	res->status = env_failure ? KBUILD_ENV_FAILED : KBUILD_FAILED;
	res->message = xstrdup("the kernel configuration step failed");
	res->log = xstrdup(b->log);
	res->duration_ms = now_ms() - b->start;
	return db_build_finish(b->lab->db, res->build_id, env_failure ? "env-failed" : "build-failed", NULL, NULL,
			       NULL, res->excerpt, b->log, res->duration_ms, 0);
}

/* make the base config (or copy the base file), apply the settings,
 * olddefconfig.  0 done, 1 make failed (see the log), -1 klab failed. */
static int make_config(struct build *b)
{
	const struct kbuild_recipe *recipe = b->req->recipe;
	const char *olddef[] = { "-s", "olddefconfig", NULL };
	struct run_result rr;
	int is_target = 0;

	for (size_t i = 0; i < ARRAY_SIZE(kconfig_targets); i++)
		if (!strcmp(recipe->base, kconfig_targets[i]))
			is_target = 1;
	if (is_target) {
		const char *extra[] = { "-s", recipe->base, NULL };
		if (build_make(b, extra, NULL, &rr) < 0)
			return -1;
		if (rr.status != RUN_EXITED || rr.exit_code)
			return 1;
	} else if (copy_file(recipe->base, b->cfg_path, 0644) < 0) {
		return -1;
	}
	if (apply_settings(b->cfg_path, b->settings, b->nr_settings) < 0)
		return -1;
	if (build_make(b, olddef, NULL, &rr) < 0)
		return -1;
	return rr.status != RUN_EXITED || rr.exit_code ? 1 : 0;
}

int kbuild_path_feeds_config(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "Kconfig", 7) || !strncmp(base, "Makefile", 8) || !strncmp(base, "Kbuild", 6))
		return 1;
	/* conf and merge_config.sh, Kconfig's $(shell) helpers; the targets'
	 * fragments (tinyconfig merges kernel/ and arch/x86/configs/tiny.config) */
	if (!strncmp(path, "scripts/", 8) || !strncmp(path, "kernel/configs/", 15))
		return 1;
	if (!strncmp(path, "arch/", 5)) {
		const char *arch_end = strchr(path + 5, '/');
		return arch_end && !strncmp(arch_end, "/configs/", 9);
	}
	return 0;
}

static int feeds_config(const char *path, void *data)
{
	(void)data;
	return kbuild_path_feeds_config(path);
}

int kbuild_config_inputs_changed(struct gitrepo *repo, const char *from_hex, const char *to_hex)
{
	if (!strcmp(from_hex, to_hex))
		return 0;
	return gitrepo_diff_matches(repo, from_hex, to_hex, feeds_config, NULL);
}

/* What the build directory's .config was made from (.klab-config): the
 * commit, the recipe id, and the blob id of the .config make_config left
 * (so a .config anything rewrote since is not taken for it). */
static char *config_state_path(const struct build *b)
{
	return xstrfmt("%s/.klab-config", b->bd);
}

static int config_state_write(struct build *b)
{
	char *path = config_state_path(b);
	char *text = xstrfmt("commit %s\nrecipe %s\nconfig %s\n", b->req->commit, b->res->recipe_id,
			     b->res->config_hash);
	int rc = write_file_atomic_mode(path, text, strlen(text), 0600);

	free(text);
	free(path);
	return rc;
}

/* The build directory's .config serves this commit as it is when it was
 * made for the same recipe from a commit that differs from this one in
 * nothing the config step reads: 1 (b->cfg_text read, b->config_from
 * set), else 0 and the config step runs. */
static int config_reusable(struct build *b)
{
	char *path = config_state_path(b), *state = NULL, *cfg = NULL;
	char commit[41], recipe[41], hash[41], now[41];
	int ok = 0, hold, rc;

	if (!b->req->repo || !is_file(path) || !is_file(b->cfg_path) ||
	    read_file(path, 4096, &state, NULL) < 0 ||
	    sscanf(state, "commit %40s\nrecipe %40s\nconfig %40s", commit, recipe, hash) != 3 ||
	    strcmp(recipe, b->res->recipe_id) || read_file(b->cfg_path, 16 << 20, &cfg, NULL) < 0)
		goto out;
	blob_hash(cfg, strlen(cfg), now);
	if (strcmp(now, hash))
		goto out;
	/* a commit the repository lost (re-created): configure anew */
	hold = error_hold(1);
	rc = kbuild_config_inputs_changed(b->req->repo, commit, b->req->commit);
	error_hold(hold);
	if (rc != 0)
		goto out;
	b->cfg_text = cfg;
	cfg = NULL;
	snprintf(b->res->config_from, sizeof(b->res->config_from), "%s", commit);
	ok = 1;
out:
	free(cfg);
	free(state);
	free(path);
	return ok;
}

/* The config step and its drift check.  0 configured: compile next; 1
 * the build ended here (config failed or drifted: res and its row
 * filled); -1 klab failed. */
static int config_step(struct build *b)
{
	struct kbuild_result *res = b->res;
	struct strbuf drift = STRBUF_INIT;
	int rc;

	b->cfg_path = xstrfmt("%s/.config", b->bd);
	if (config_reusable(b)) {
		FILE *f = fopen(b->log, "a");

		if (f) {
			fprintf(f, "klab: config step skipped: .config of %s reused (no Kconfig*, Makefile*, Kbuild*, "
				"scripts/, kernel/configs/ or arch/*/configs/ change since)\\n", res->config_from);
			fclose(f);
		}
		b->pg.phase = "config reused";
		progress_show(&b->pg, 1);
	} else {
		/* until the step is whole, the directory's .config is no one's */
		char *state = config_state_path(b);

		b->pg.phase = "config";
		progress_show(&b->pg, 1);
		unlink(state);
		free(state);
		rc = make_config(b);
		if (rc < 0)
			return -1;
		if (rc > 0)
			return config_failed(b) < 0 ? -1 : 1;
		if (read_file(b->cfg_path, 16 << 20, &b->cfg_text, NULL) < 0)
			return -1;
	}
	blob_hash(b->cfg_text, strlen(b->cfg_text), res->config_hash);
	/* the next commit starts from this one's (a reused one included);
	 * without the record (a full disk) it only configures again, and an
	 * old record left in place is still true of this .config */
	{
		int hold = error_hold(1);
		config_state_write(b);
		error_hold(hold);
	}
	if (kbuild_check_drift(b->cfg_text, b->settings, b->nr_settings, &drift) == 0 || b->req->recipe->allow_drift) {
		strbuf_release(&drift);
		return 0;
	}
	strbuf_rtrim(&drift);
	res->status = KBUILD_DRIFT;
	res->excerpt = strbuf_detach(&drift, NULL);
	res->message = xstrdup("the config differs from what was asked (--allow-config-drift to build anyway)");
	res->log = xstrdup(b->log);
	res->duration_ms = now_ms() - b->start;
	if (db_build_finish(b->lab->db, res->build_id, "config-drift", NULL, res->config_hash, b->cfg_text,
			    res->excerpt, b->log, res->duration_ms, 0) < 0)
		return -1;
	return 1;
}

/* Where icecream sent this build's compiles: its client's log, read once
 * (a whole kernel's, each compile some 15 KiB, is about 40 MiB), then
 * removed.  What cannot be counted is said, never guessed. */
static void explain_icecc(struct build *b)
{
	struct kbuild_icecc *ic = &b->res->icecc;
	char *text = NULL;
	size_t len = 0;

	if (!ic->used)
		return;
	if (!b->icecc_logged)
		ic->unknown = "ICECC_LOGFILE or ICECC_DEBUG is set in klab's environment: icecc logs there";
	else if (!is_file(b->icecc_log))
		ic->unknown = b->res->compiles.compiled ? "icecc wrote no log (not run, or not icecream's icecc)" : NULL;
	else if (read_file(b->icecc_log, 256 << 20, &text, &len) < 0)
		ic->unknown = "icecc's log is unreadable or over 256 MiB";
	else {
		icecc_log_parse(&ic->counts, text, len);
		if (!ic->counts.consistent)
			ic->unknown = "icecc's log counts more remote compiles than icecc calls";
	}
	free(text);
	unlink(b->icecc_log);
}

/* What the build compiled and why: the objects ccache gave (its stats
 * log, when klab set it), the changed files most objects depend on. */
static void explain_build(struct build *b)
{
	const struct kbuild_request *req = b->req;
	struct kbuild_result *res = b->res;
	char *text = NULL;
	int hold = error_hold(1);

	/* ccache's stats log of this build (klab's own, unless the user set
	 * CCACHE_STATSLOG), read once for both counts: 64 MiB at most, a
	 * whole kernel's is about 1 MiB */
	res->ccache_hits = -1;
	memset(&res->compiles, 0, sizeof(res->compiles));
	if (!getenv("CCACHE_STATSLOG") && is_file(b->stats_log) &&
	    read_file(b->stats_log, 64 << 20, &text, NULL) == 0) {
		res->ccache_hits = kbuild_count_ccache_hits(text);
		kbuild_compiles_parse(&res->compiles, text);
	} else if (!getenv("CCACHE_STATSLOG") && !res->objects) {
		res->ccache_hits = 0;	/* nothing compiled: no log */
	}
	free(text);
	explain_icecc(b);
	res->kept_files = req->kept_files;
	if (req->changed && req->changed->nr && res->objects) {
		size_t *counts = xcalloc(req->changed->nr, sizeof(*counts));
		struct strbuf sb = STRBUF_INIT;

		if (ksources_dependents(b->bd, req->src_dir, req->changed->paths, req->changed->nr, counts) == 0 &&
		    ksources_top(req->changed->paths, counts, req->changed->nr, 3, &sb))
			res->rebuilt_for = strbuf_detach(&sb, NULL);
		strbuf_release(&sb);
		free(counts);
	}
	error_hold(hold);
}

/* The call whose counters were seen (local, remote, miss) into c. */
static void count_call(struct kbuild_compiles *c, int *local, int *remote, int *miss)
{
	if (*local || *remote || *miss) {
		c->calls++;
		c->local_hits += *local && !*remote;
		c->remote_hits += *remote;
		c->compiled += *miss && !*local && !*remote;
	}
	*local = *remote = *miss = 0;
}

void kbuild_compiles_parse(struct kbuild_compiles *c, const char *text)
{
	int local = 0, remote = 0, miss = 0;

	memset(c, 0, sizeof(*c));
	for (const char *p = text; *p; ) {
		size_t n = strcspn(p, "\n");

		/* a call ends at the next "# FILE" line or at the end */
		if (p[0] == '#')
			count_call(c, &local, &remote, &miss);
		else if (n == 17 && !strncmp(p, "local_storage_hit", n))
			local = 1;
		else if (n == 18 && !strncmp(p, "remote_storage_hit", n))
			remote = 1;
		else if (n == 10 && !strncmp(p, "cache_miss", n))
			miss = 1;
		p += n + (p[n] ? 1 : 0);
	}
	count_call(c, &local, &remote, &miss);
}

/* make bzImage; res->status from how it ended. */
static int compile_step(struct build *b)
{
	const struct kbuild_request *req = b->req;
	struct kbuild_result *res = b->res;
	struct run_result rr;
	int jobs = req->jobs > 0 ? req->jobs : b->lab->build_jobs > 0 ? b->lab->build_jobs
								       : (int)sysconf(_SC_NPROCESSORS_ONLN);
	char *jobs_arg = xstrfmt("-j%d", jobs > 0 ? jobs : 1);
	const char *extra[] = { jobs_arg, "CC=ccache gcc", "bzImage", NULL };
	int rc, env_failure = 0;

	progress_phase(&b->pg, "prepare");
	unlink(b->stats_log);
	unlink(b->icecc_log);
	rc = build_make(b, extra, &b->pg, &rr);
	free(jobs_arg);
	if (rc < 0)
		return -1;
	progress_end(&b->pg);
	res->objects = b->pg.objects;
	explain_build(b);
	res->duration_ms = now_ms() - b->start;
	if (rr.status == RUN_EXEC_FAILED) {
		res->status = KBUILD_ENV_FAILED;
		res->message = xstrfmt("cannot run make: %s", strerror(rr.errno_value));
		res->excerpt = xstrdup(res->message);
	} else if (rr.status != RUN_EXITED || rr.exit_code) {
		res->excerpt = log_excerpt(b, 256 << 20, &env_failure, &rr);
		res->status = env_failure ? KBUILD_ENV_FAILED : KBUILD_FAILED;
		res->message = xstrdup(env_failure ? "the build failed for a reason outside the commit"
						   : "the commit does not build");
	} else {
		res->status = KBUILD_OK;
	}
	res->log = xstrdup(b->log);
	return 0;
}

/* The image carries this build's kernel (kimage.h), or the build ends
 * as an environment failure naming why: never an artifact.  piggy.o goes,
 * so that the next build compiles it again.  0, or -1 klab failed. */
static int verify_image(struct build *b, struct kimage_identity *id)
{
	struct kbuild_result *res = b->res;
	char *why = NULL;
	int rc = kimage_verify_build(b->bd, id, &why);

	if (rc < 0)
		return -1;
	if (rc == 0)
		return 0;
	{
		char *piggy = xstrfmt("%s/arch/x86/boot/compressed/piggy.o", b->bd);
		unlink(piggy);
		free(piggy);
	}
	res->status = KBUILD_ENV_FAILED;
	res->message = xstrdup("the image does not carry this build's kernel");
	res->excerpt = why;
	free(res->log);		/* compile_step's, the same path */
	res->log = xstrdup(b->log);
	return 0;
}

/* A compiled kernel into the store, and the build's row finished. */
static int record_build(struct build *b)
{
	const struct kbuild_request *req = b->req;
	struct kbuild_result *res = b->res;
	struct kimage_identity id;
	char *final = NULL;
	int ret = -1;

	if (res->status == KBUILD_OK && verify_image(b, &id) < 0)
		return -1;
	if (res->status == KBUILD_OK) {
		char *key = xstrfmt("%s-%s", req->tree, res->recipe_id);
		int rc = store_artifacts(b->lab, b->bd, req->src_dir, key, b->log, &id, &final);

		free(key);
		if (rc < 0) {
			/* the machine failed (a full disk), not the commit: built
			 * again next time; the row says so if it still can */
			db_build_finish(b->lab->db, res->build_id, "env-failed", NULL, res->config_hash, b->cfg_text,
					"klab could not store the artifacts", b->log, res->duration_ms, res->objects);
			return -1;
		}
		free(res->log);
		res->log = NULL;
		fill_paths(res, final);
		memcpy(res->vmlinux_sha256, id.vmlinux_sha256, sizeof(res->vmlinux_sha256));
		res->message = *res->config_from ? xstrfmt("built %d objects (config of %.12s reused)", res->objects,
							   res->config_from)
						 : xstrfmt("built %d objects", res->objects);
	}
	if (db_build_finish(b->lab->db, res->build_id,
			    res->status == KBUILD_OK ? "ok" : res->status == KBUILD_FAILED ? "build-failed" : "env-failed",
			    final, res->config_hash, b->cfg_text, res->excerpt, res->log, res->duration_ms,
			    res->objects) == 0)
		ret = 0;
	free(final);
	return ret;
}

static void build_release(struct build *b)
{
	/* No make runs once we are here, whatever became of the build: the
	 * marker only tells a later build that klab died during this one. */
	if (b->marker_written)
		unlink(b->marker);
	progress_end(&b->pg);
	for (int i = 0; i < b->nenv; i++)
		free(b->env[i]);
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	kconfig_settings_release(b->settings, b->nr_settings);
	strbuf_release(&b->recipe_text);
	FREE_MANY(b->bd, b->log, b->marker, b->cfg_path, b->cfg_text, b->stats_log, b->icecc_log);
}

int kbuild_build(const struct kbuild_request *req, struct kbuild_result *res)
{
	struct build b = { .req = req, .res = res, .lab = req->lab, .lock_fd = -1,
			   .recipe_text = STRBUF_INIT, .start = now_ms() };
	int ret = -1, rc;

	memset(res, 0, sizeof(*res));
	snprintf(res->recipe_id, sizeof(res->recipe_id), "%s", req->recipe_id);
	if (kbuild_recipe_settings(req->recipe, &b.settings, &b.nr_settings) < 0)
		goto out;
	kbuild_recipe_to_text(req->recipe, &b.recipe_text);
	if (take_build_dir(&b) < 0)
		goto out;
	if (db_build_begin(b.lab->db, req->repo_id, req->commit, req->tree, res->recipe_id, b.recipe_text.buf,
			   &res->build_id) < 0)
		goto out;
	b.log = xstrfmt("%s/build.log", b.bd);
	b.stats_log = xstrfmt("%s/.klab-ccache-stats", b.bd);
	b.icecc_log = xstrfmt("%s/.klab-icecc-log", b.bd);
	/* 0600 as run_command's logs: the log names the lab's paths */
	if (write_file_atomic_mode(b.log, "", 0, 0600) < 0)
		goto out;
	b.pg.marker = b.marker;
	b.pg.commit = req->commit;
	b.pg.mode = pick_progress(req->progress);
	b.pg.indent = req->indent ? req->indent : "";
	b.pg.start = b.start;
	make_env(&b);

	rc = config_step(&b);
	if (rc == 0)
		rc = compile_step(&b);
	/* every outcome's log kept as a step's is (log_limit), after its
	 * error excerpt was read and before the store copies it: a tree
	 * whose warnings fill gigabytes must not fill the lab */
	if (log_trim(b.log, b.lab->log_limit) > 0)
		warning("the build log was over log_limit (%llu bytes): its head and tail kept",
			(unsigned long long)b.lab->log_limit);
	if (rc == 0)
		rc = record_build(&b);
	ret = rc < 0 ? -1 : 0;
out:
	build_release(&b);
	return ret;
}
