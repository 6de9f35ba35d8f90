/* klab's `ccache`, first in make's PATH during a kernel build: it runs the
 * real ccache (KLAB_REAL_CCACHE), in preprocessor mode for any compile
 * whose object may embed another file, and unchanged for the rest.
 *
 * Why: `.incbin "file"` puts a file's bytes into an object without the
 * compiler knowing.  ccache's preprocessor mode sees the directive and
 * does not cache such a compile; its depend and direct modes (4.7, which
 * klab's builds use) hash only the source and its headers.  The kernel's
 * arch/x86/boot/compressed/piggy.S holds nothing of the compressed kernel
 * but its two sizes, so two kernels whose sizes agreed got the same
 * piggy.o from the cache, and a bzImage carried another commit's kernel.
 * A direct-mode entry made in depend mode also serves a later plain
 * compile, so both modes are turned off for these compiles.
 *
 * Which compiles: every assembler source (the kernel's .incbin users are
 * .S files, a few dozen per build: preprocessor mode costs little there),
 * and a C source whose own text names incbin (kernel/configs.c and
 * kernel/kheaders.c put it in inline asm).  A C header hiding .incbin in a
 * macro is not seen here (6.1's tree has none); klab's post-build check
 * of the image's payload (kbuild.c) is the net below this one.
 *
 * No library, no allocation beyond the source read: it runs once per
 * compile. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* C sources larger than this are compiled in preprocessor mode unread. */
#define MAX_SOURCE (64 << 20)

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* 1 when the file names incbin anywhere (or cannot be read whole). */
static int names_incbin(const char *path)
{
	struct stat st;
	char *text;
	ssize_t got = 0;
	int fd, found = 1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;	/* the compiler will say what is wrong with it */
	if (fstat(fd, &st) < 0 || st.st_size > MAX_SOURCE)
		goto out;
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		goto out;
	while (got < st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)(st.st_size - got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	if (got == st.st_size) {
		text[got] = '\0';
		/* memmem: the text may hold NUL bytes */
		found = memmem(text, (size_t)got, "incbin", 6) != NULL;
	}
	free(text);
out:
	close(fd);
	return found;
}

/* 1 when this compile must not use depend or direct mode. */
static int needs_preprocessor_mode(int argc, char **argv)
{
	int assembler = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-x") && i + 1 < argc && !strncmp(argv[i + 1], "assembler", 9))
			assembler = 1;
		if (!strncmp(a, "-xassembler", 11))
			assembler = 1;
		if (a[0] == '-')
			continue;
		if (ends_with(a, ".S") || ends_with(a, ".s") || ends_with(a, ".sx"))
			return 1;
		if (ends_with(a, ".c") && names_incbin(a))
			return 1;
	}
	return assembler;
}

int main(int argc, char **argv)
{
	const char *real = getenv("KLAB_REAL_CCACHE");

	if (!real || !*real) {
		fprintf(stderr, "klab: ccache shim: KLAB_REAL_CCACHE is not set (klab sets it for kernel builds)\n");
		return 127;
	}
	if (needs_preprocessor_mode(argc, argv)) {
		unsetenv("CCACHE_DEPEND");
		unsetenv("CCACHE_DIRECT");
		setenv("CCACHE_NODEPEND", "1", 1);
		setenv("CCACHE_NODIRECT", "1", 1);
	}
	argv[0] = (char *)real;
	execv(real, argv);
	fprintf(stderr, "klab: ccache shim: cannot run '%s': %s\n", real, strerror(errno));
	return 127;
}
