/* Shared by klab.c and the cmd-*.c files: global options and the
 * signature of a command. */
#ifndef KLAB_KLAB_H
#define KLAB_KLAB_H

struct lab;

struct global_opts {
	const char *state_dir;	/* --state, or NULL for the default */
};

/* Exit codes every command uses. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,		/* error, or bisection stopped */
	EXIT_USAGE = 2,
	EXIT_UNDECIDED = 3	/* only skipped commits left */
};

/* Open the lab named by the global options (message on failure). */
int open_lab(const struct global_opts *g, struct lab *lab);

/* Print a usage array to stdout (help) or stderr (error). */
void print_usage(const char *const *usage, int to_stderr);

int cmd_init(int argc, char **argv, const struct global_opts *g);
int cmd_bisect(int argc, char **argv, const struct global_opts *g);

#endif
