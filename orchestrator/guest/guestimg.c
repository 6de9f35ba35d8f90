/* The guest's initramfs: cpio newc written here (no cpio tool), not
 * compressed (under TCG the guest kernel took 0.88 s to inflate the
 * base's 12.8 MB of gzip and 0.30 s to unpack its 38.8 MB of cpio; a boot
 * about 0.6 s shorter in all), the base image content-addressed so it is
 * built once per set of inputs, and a small job part appended for each
 * job. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest/guestimg.h"
#include "lab/lab.h"
#include "job/monitor.h"
#include "job/suite.h"
#include "util/run-command.h"
#include "util/strbuf.h"
#include "util/util.h"

/* Bump when the layout of the base image (or of a programs part) changes. */
#define BASE_FORMAT "klab-initramfs-base 3"
#define PROGRAMS_FORMAT "klab-initramfs-programs 1"

/* The tool each fs: needs in the guest (the agent runs /usr/sbin/mkfs.<fs>). */
static const struct {
	const char *fs;
	struct suite_program mkfs;
} fs_tools[] = {
	{ "xfs", { "mkfs.xfs", "/usr/sbin/mkfs.xfs", "xfsprogs" } },
	{ "ext4", { "mkfs.ext4", "/usr/sbin/mkfs.ext4", "e2fsprogs" } },
	{ "btrfs", { "mkfs.btrfs", "/usr/sbin/mkfs.btrfs", "btrfs-progs" } },
};
#define IMG_MAX_INPUT (256u << 20)

static void blob_hex(const void *data, size_t len, char hex[41])
{
	git_oid oid;

	git_odb_hash(&oid, data, len, GIT_OBJECT_BLOB);
	git_oid_tostr(hex, 41, &oid);
}

/* ---- cpio newc (pure) ------------------------------------------------------ */

static void pad4(struct strbuf *out)
{
	while (out->len % 4)
		strbuf_addch(out, 0);
}

void cpio_add(struct strbuf *out, const char *name, unsigned mode, unsigned rdev_major,
	      unsigned rdev_minor, const void *data, size_t len)
{
	static unsigned ino = 1000;
	size_t namesize = strlen(name) + 1;
	int nlink = S_ISDIR(mode) ? 2 : 1;

	/* mtime 0 and fixed owners: the same inputs give the same bytes. */
	strbuf_addf(out, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08zX%08X", ino++, mode, 0u, 0u,
		    nlink, 0u, (unsigned)len, 0u, 0u, rdev_major, rdev_minor, namesize, 0u);
	strbuf_add(out, name, namesize);
	pad4(out);
	if (len) {
		strbuf_add(out, data, len);
		pad4(out);
	}
}

void cpio_trailer(struct strbuf *out)
{
	cpio_add(out, "TRAILER!!!", 0, 0, 0, NULL, 0);
}

/* ---- where things are ---------------------------------------------------- */

static char *exe_dir(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	return xstrdup(buf);
}

const char *guestimg_bindir(void)
{
	static char *dir;
	const char *env = getenv("KLAB_GUEST_BINDIR");
	char *exe, *cand;

	if (env && *env)
		return env;
	if (dir)
		return dir;
	exe = exe_dir();
	/* Running from the build tree: orchestrator/klab next to guests/. */
	if (exe) {
		cand = xstrfmt("%s/../guests", exe);
		char *agent = xstrfmt("%s/agent/klab-agent", cand);
		if (access(agent, X_OK) == 0) {
			dir = cand;
			free(agent);
			free(exe);
			return dir;
		}
		free(agent);
		free(cand);
		free(exe);
	}
	dir = xstrdup(KLAB_LIBEXECDIR);
	return dir;
}

/* A guest program: <bindir>/{agent,bench}/name in the build tree, or
 * <bindir>/name when installed or overridden. */
static int guest_program(const char *name, const char *sub, char **out)
{
	const char *dir = guestimg_bindir();
	char *p = xstrfmt("%s/%s/%s", dir, sub, name);

	if (access(p, R_OK) == 0) {
		*out = p;
		return 0;
	}
	free(p);
	p = xstrfmt("%s/%s", dir, name);
	if (access(p, R_OK) == 0) {
		*out = p;
		return 0;
	}
	free(p);
	return error("guest program '%s' not found in '%s' (build klab, or set KLAB_GUEST_BINDIR)", name, dir);
}

static int world_traversable(const char *path)
{
	char *p = xstrdup(path), *slash;
	struct stat st;
	int ok = 1;

	for (;;) {
		if (stat(p, &st) == 0 && !(st.st_mode & S_IXOTH))
			ok = 0;
		slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = 0;
	}
	free(p);
	return ok;
}

int guestimg_image_dir(const struct lab *lab, char **out)
{
	char *dir = lab_path(lab, "images");

	if (!world_traversable(lab->state_dir)) {
		free(dir);
		dir = xstrfmt("/var/tmp/klab-images-%u", (unsigned)getuid());
	}
	if (mkdir_p(dir, 0755) < 0) {
		free(dir);
		return -1;
	}
	chmod(dir, 0755);
	*out = dir;
	return 0;
}

/* ---- the base image ------------------------------------------------------ */

struct img_file {
	char *dest;		/* path inside the image, no leading '/' */
	char *src;		/* host file, or NULL for a symlink */
	char *link;		/* symlink target */
	unsigned mode;
	char *data;
	size_t len;
};

struct img {
	struct img_file *files;
	size_t nr, alloc;
};

static void img_add(struct img *img, const char *dest, const char *src, const char *link, unsigned mode)
{
	struct img_file *f;

	if (dest[0] == '/')
		dest++;
	for (size_t i = 0; i < img->nr; i++)
		if (!strcmp(img->files[i].dest, dest))
			return;
	if (img->nr == img->alloc) {
		img->alloc = img->alloc ? 2 * img->alloc : 32;
		img->files = xrealloc(img->files, img->alloc * sizeof(*img->files));
	}
	f = &img->files[img->nr++];
	memset(f, 0, sizeof(*f));
	f->dest = xstrdup(dest);
	f->src = src ? xstrdup(src) : NULL;
	f->link = link ? xstrdup(link) : NULL;
	f->mode = mode;
}

static void img_release(struct img *img)
{
	for (size_t i = 0; i < img->nr; i++)
		FREE_MANY(img->files[i].dest, img->files[i].src, img->files[i].link, img->files[i].data);
	free(img->files);
	memset(img, 0, sizeof(*img));
}

/* Forget the first n files. */
static void img_drop_first(struct img *img, size_t n)
{
	for (size_t i = 0; i < n && i < img->nr; i++) {
		free(img->files[i].dest);
		free(img->files[i].src);
		free(img->files[i].link);
		free(img->files[i].data);
	}
	n = n < img->nr ? n : img->nr;
	memmove(img->files, img->files + n, (img->nr - n) * sizeof(*img->files));
	img->nr -= n;
}

struct ldd_ctx {
	struct img *img;
	int bad;
};

/* "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)" or
 * "/lib64/ld-linux-x86-64.so.2 (0x...)"; "not found" is an error. */
static void ldd_line(const char *line, size_t len, void *data)
{
	struct ldd_ctx *ctx = data;
	char buf[1024], *p, *end;

	if (len >= sizeof(buf))
		return;
	memcpy(buf, line, len);
	buf[len] = 0;
	if (strstr(buf, "not found")) {
		ctx->bad = 1;
		return;
	}
	p = strstr(buf, "=> ");
	p = p ? p + 3 : buf;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '/')
		return;
	end = strchr(p, ' ');
	if (end)
		*end = 0;
	img_add(ctx->img, p, p, NULL, 0100755);
}

static int add_dynamic(struct img *img, const char *prog, const char *dest)
{
	const char *argv[] = { "ldd", prog, NULL };
	struct ldd_ctx ctx = { img, 0 };
	struct run_opts o = { .argv = argv, .output_path = "/dev/null", .timeout_ms = 30000,
			      .on_line = ldd_line, .on_line_data = &ctx };
	struct run_result rr;

	img_add(img, dest, prog, NULL, 0100755);
	if (run_command(&o, &rr) < 0)
		return -1;
	if (rr.status != RUN_EXITED || rr.exit_code != 0)
		return error("ldd '%s' failed: cannot list its libraries", prog);
	if (ctx.bad)
		return error("ldd '%s': a library is not found", prog);
	return 0;
}

/* True when an ELF file has no program interpreter (statically linked). */
static int elf_is_static(const char *data, size_t len)
{
	const Elf64_Ehdr *eh = (const void *)data;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	if (eh->e_phoff > len || eh->e_phnum > (len - eh->e_phoff) / sizeof(Elf64_Phdr))
		return 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const void *)(data + eh->e_phoff + i * sizeof(Elf64_Phdr));
		if (ph->p_type == PT_INTERP)
			return 0;
	}
	return 1;
}

/* A program klab builds (guests/<sub>/<name>) into the image at dest. */
static int add_guest_program(struct img *img, const char *name, const char *sub, const char *dest)
{
	char *p = NULL;

	if (guest_program(name, sub, &p) < 0)
		return -1;
	img_add(img, dest, p, NULL, 0100755);
	free(p);
	return 0;
}

/* A host program from PATH (or the sbin directories a user's PATH may
 * lack: mkfs.xfs) with its libraries. */
static int add_host_program(struct img *img, const struct suite_program *prog)
{
	static const char *const sbin[] = { "/usr/sbin", "/sbin" };
	char *path = NULL;
	int ret;

	for (size_t i = 0; !path && i < ARRAY_SIZE(sbin); i++) {
		char *p = xstrfmt("%s/%s", sbin[i], prog->name);

		if (access(p, X_OK) == 0)
			path = p;
		else
			free(p);
	}
	if (!path && find_executable(prog->name, &path) < 0)
		return error("%s not found: install the Debian package '%s'", prog->name, prog->package);
	ret = add_dynamic(img, path, prog->dest + 1);
	free(path);
	return ret;
}

/* A suite program klab builds (static: no libraries), into the base. */
static int add_klab_program(struct img *img, const struct suite_program *prog)
{
	return prog->package ? 0 : add_guest_program(img, prog->name, "bench", prog->dest + 1);
}

/* The base: the agent as /init, busybox, and every program klab builds
 * for a suite (small and static); the host programs a suite or a monitor
 * runs, with their libraries, go into a job's programs part. */
static int img_collect(struct img *img)
{
	size_t nr;
	const struct suite *const *suites = suite_all(&nr);

	if (add_guest_program(img, "klab-agent", "agent", "init") < 0)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		if (add_klab_program(img, &suites[i]->program) < 0)
			return -1;
		for (const struct suite_program *t = suites[i]->tools; t && t->name; t++)
			if (add_klab_program(img, t) < 0)
				return -1;
	}
	if (access("/bin/busybox", X_OK) < 0)
		return error("/bin/busybox not found: install the Debian package 'busybox-static'");
	img_add(img, "bin/busybox", "/bin/busybox", NULL, 0100755);
	img_add(img, "bin/sh", NULL, "busybox", 0120777);
	return 0;
}

static int img_read(struct img *img)
{
	for (size_t i = 0; i < img->nr; i++) {
		struct img_file *f = &img->files[i];
		if (f->link) {
			f->data = xstrdup(f->link);
			f->len = strlen(f->link);
			continue;
		}
		if (read_file(f->src, IMG_MAX_INPUT, &f->data, &f->len) < 0)
			return -1;
	}
	for (size_t i = 0; i < img->nr; i++)
		if (!strcmp(img->files[i].dest, "bin/busybox") && !elf_is_static(img->files[i].data, img->files[i].len))
			return error("/bin/busybox is dynamically linked: install 'busybox-static' instead of 'busybox'");
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every parent directory of every file, sorted, plus (base) the mount points. */
static void img_dirs(const struct img *img, int base, char ***out, size_t *nr)
{
	static const char *const fixed[] = { "dev", "proc", "sys", "tmp", "run", "klab" };
	size_t nr_fixed = base ? sizeof(fixed) / sizeof(fixed[0]) : 0;
	char **dirs = NULL;
	size_t n = 0, alloc = 0;

	for (size_t i = 0; i < img->nr + nr_fixed; i++) {
		char *p = xstrdup(i < img->nr ? img->files[i].dest : fixed[i - img->nr]);
		char *slash;
		if (i < img->nr) {
			slash = strrchr(p, '/');
			if (!slash) {
				free(p);
				continue;
			}
			*slash = 0;
		}
		for (;;) {
			int seen = 0;
			for (size_t j = 0; j < n; j++)
				if (!strcmp(dirs[j], p))
					seen = 1;
			if (!seen) {
				if (n == alloc) {
					alloc = alloc ? 2 * alloc : 16;
					dirs = xrealloc(dirs, alloc * sizeof(*dirs));
				}
				dirs[n++] = xstrdup(p);
			}
			slash = strrchr(p, '/');
			if (!slash)
				break;
			*slash = 0;
		}
		free(p);
	}
	qsort(dirs, n, sizeof(*dirs), cmp_str);
	*out = dirs;
	*nr = n;
}

static int write_image(const char *path, const struct strbuf *cpio)
{
	if (write_file_atomic(path, cpio->buf, cpio->len) < 0)
		return -1;
	chmod(path, 0644);
	return 0;
}

/* The manifest names every input by what stat() says of it (device,
 * inode, size, mtime in ns): reading and hashing ~60 MB of stress-ng's
 * libraries on every run costs seconds, and any change to a file moves
 * its mtime. */
static int img_manifest(const struct img *img, const char *format, struct strbuf *manifest)
{
	strbuf_addf(manifest, "%s\n", format);
	for (size_t i = 0; i < img->nr; i++) {
		const struct img_file *f = &img->files[i];
		struct stat st;
		if (f->link) {
			strbuf_addf(manifest, "%s %o -> %s\n", f->dest, f->mode, f->link);
			continue;
		}
		if (stat(f->src, &st) < 0)
			return error("cannot stat '%s': %s", f->src, strerror(errno));
		strbuf_addf(manifest, "%s %o %s %llu:%llu %lld %lld.%09ld\n", f->dest, f->mode, f->src,
			    (unsigned long long)st.st_dev, (unsigned long long)st.st_ino, (long long)st.st_size,
			    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	}
	return 0;
}

/* The collected files as one cpio archive at *path, named
 * <image_dir>/<name>-<hash of the manifest>.cpio; built only when no
 * such file is there (*hit). */
static int img_build(struct img *img, const char *image_dir, const char *name, int base, char **path, int *hit)
{
	const char *format = base ? BASE_FORMAT : PROGRAMS_FORMAT;
	struct strbuf manifest = STRBUF_INIT, cpio = STRBUF_INIT;
	char **dirs = NULL;
	size_t nr_dirs = 0;
	char hex[41];
	int ret = -1;

	if (img_manifest(img, format, &manifest) < 0)
		goto cleanup;
	blob_hex(manifest.buf, manifest.len, hex);
	*path = xstrfmt("%s/%s-%.16s.cpio", image_dir, name, hex);
	if (access(*path, R_OK) == 0) {
		*hit = 1;
		ret = 0;
		goto cleanup;
	}
	if (img_read(img) < 0)
		goto cleanup;
	img_dirs(img, base, &dirs, &nr_dirs);
	for (size_t i = 0; i < nr_dirs; i++)
		cpio_add(&cpio, dirs[i], 040755, 0, 0, NULL, 0);
	/* The kernel opens /dev/console before /init runs and mounts devtmpfs. */
	if (base)
		cpio_add(&cpio, "dev/console", 020600, 5, 1, NULL, 0);
	for (size_t i = 0; i < img->nr; i++)
		cpio_add(&cpio, img->files[i].dest, img->files[i].mode, 0, 0, img->files[i].data, img->files[i].len);
	cpio_trailer(&cpio);
	if (write_image(*path, &cpio) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	strings_free(dirs, nr_dirs);
	strbuf_release(&manifest);
	strbuf_release(&cpio);
	if (ret < 0) {
		free(*path);
		*path = NULL;
	}
	return ret;
}

int guestimg_base(const char *image_dir, char **path, int *hit)
{
	struct img img = { 0 };
	int ret = -1;

	*path = NULL;
	*hit = 0;
	if (img_collect(&img) == 0)
		ret = img_build(&img, image_dir, "initramfs-base", 1, path, hit);
	img_release(&img);
	return ret;
}

/* The host programs of a job: its suite's, its fs: tool, its monitors'. */
static int collect_programs(struct img *img, const char *suite_name, const char *fs, unsigned monitors)
{
	const struct suite *suite = suite_name ? suite_get(suite_name) : NULL;

	if (suite_name && !suite)
		return -1;
	if (suite) {
		if (suite->program.package && add_host_program(img, &suite->program) < 0)
			return -1;
		for (const struct suite_program *t = suite->tools; t && t->name; t++)
			if (t->package && add_host_program(img, t) < 0)
				return -1;
	}
	if (fs) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(fs_tools) && strcmp(fs_tools[i].fs, fs); i++)
			;
		if (i == ARRAY_SIZE(fs_tools))
			return error("no tool makes a '%s' file system", fs);
		if (add_host_program(img, &fs_tools[i].mkfs) < 0)
			return -1;
	}
	for (size_t i = 0; i < monitor_count(); i++) {
		const struct monitor *m = monitor_at(i);

		if ((monitors & (1u << i)) && m->program.name && add_host_program(img, &m->program) < 0)
			return -1;
	}
	return 0;
}

int guestimg_programs(const char *image_dir, const char *suite, const char *fs, unsigned monitors, char **path,
		      int *hit)
{
	struct img img = { 0 };
	size_t nr_base;
	int ret = -1;

	*path = NULL;
	*hit = 0;
	/* what the base has (the agent, busybox) is not carried twice: img_add
	 * keeps the first of each path */
	if (img_collect(&img) < 0)
		goto cleanup;
	nr_base = img.nr;
	if (collect_programs(&img, suite, fs, monitors) < 0)
		goto cleanup;
	img_drop_first(&img, nr_base);
	ret = img.nr ? img_build(&img, image_dir, "initramfs-programs", 0, path, hit) : 0;
cleanup:
	img_release(&img);
	return ret;
}

/* out = the file a, the file b (NULL: none) and the bytes c */
static int copy_concat(const char *out, const char *a, const char *b, const char *c_data, size_t c_len)
{
	char *data = NULL;
	size_t len = 0;
	struct strbuf sb = STRBUF_INIT;
	int ret = -1;

	if (read_file(a, IMG_MAX_INPUT, &data, &len) < 0)
		goto cleanup;
	strbuf_add(&sb, data, len);
	free(data);
	data = NULL;
	if (b) {
		if (read_file(b, IMG_MAX_INPUT, &data, &len) < 0)
			goto cleanup;
		strbuf_add(&sb, data, len);
	}
	strbuf_add(&sb, c_data, c_len);
	if (write_file_atomic(out, sb.buf, sb.len) < 0)
		goto cleanup;
	chmod(out, 0644);
	ret = 0;
cleanup:
	free(data);
	strbuf_release(&sb);
	return ret;
}

/* "<dir>/<prefix><16 hex>.cpio" → the 16 hex */
static const char *part_hash(const char *path, const char *prefix)
{
	const char *name = strrchr(path, '/');

	name = name ? name + 1 : path;
	return !strncmp(name, prefix, strlen(prefix)) ? name + strlen(prefix) : name;
}

int guestimg_initrd(const char *image_dir, const char *base_path, const char *programs_path, const char *conf,
		    size_t conf_len, char **path)
{
	struct strbuf cpio = STRBUF_INIT;
	char hex[41];
	int ret = -1;

	blob_hex(conf, conf_len, hex);
	/* initramfs-base-<16>.cpio → initrd-<16>-<job 16>.img, and with
	 * initramfs-programs-<p 16>.cpio initrd-<16>-<p 16>-<job 16>.img */
	if (programs_path)
		*path = xstrfmt("%s/initrd-%.16s-%.16s-%.16s.img", image_dir, part_hash(base_path, "initramfs-base-"),
				part_hash(programs_path, "initramfs-programs-"), hex);
	else
		*path = xstrfmt("%s/initrd-%.16s-%.16s.img", image_dir, part_hash(base_path, "initramfs-base-"), hex);
	if (access(*path, R_OK) == 0)
		return 0;
	cpio_add(&cpio, "klab", 040755, 0, 0, NULL, 0);
	cpio_add(&cpio, "klab/job.conf", 0100644, 0, 0, conf, conf_len);
	cpio_trailer(&cpio);
	if (copy_concat(*path, base_path, programs_path, cpio.buf, cpio.len) < 0)
		goto cleanup;
	ret = 0;
cleanup:
	strbuf_release(&cpio);
	if (ret < 0) {
		free(*path);
		*path = NULL;
	}
	return ret;
}

static int is_bzimage(const char *data, size_t len)
{
	return len >= 1024 && !memcmp(data + 0x202, "HdrS", 4);
}

static int not_bzimage(const char *kernel)
{
	return error("'%s' is not an x86 bzImage (no 'HdrS' boot header)", kernel);
}

int guestimg_check_kernel(const char *kernel)
{
	char head[1024];
	ssize_t n;
	int fd = open(kernel, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return error("cannot open kernel '%s': %s", kernel, strerror(errno));
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n < 0)
		return error("cannot read kernel '%s': %s", kernel, strerror(errno));
	return is_bzimage(head, (size_t)n) ? 0 : not_bzimage(kernel);
}

int guestimg_stage_kernel(const char *image_dir, const char *kernel, char **path)
{
	char *data = NULL;
	size_t len = 0;
	char hex[41];

	*path = NULL;
	if (read_file(kernel, IMG_MAX_INPUT, &data, &len) < 0)
		return -1;
	if (!is_bzimage(data, len)) {
		free(data);
		return not_bzimage(kernel);
	}
	blob_hex(data, len, hex);
	*path = xstrfmt("%s/bzImage-%.16s", image_dir, hex);
	if (access(*path, R_OK) != 0) {
		if (write_file_atomic(*path, data, len) < 0) {
			free(data);
			free(*path);
			*path = NULL;
			return -1;
		}
		chmod(*path, 0644);
	}
	free(data);
	return 0;
}
