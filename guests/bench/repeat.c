/* repeat: run a benchmark again and again until a runtime has passed (at
 * least once) or for a number of iterations, as lkp-tests' run_for_time
 * and run_for_iterations do for hackbench and perf bench: each run after
 * an "Iterations: N" line, its output passed through. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_SECONDS 86400
#define MAX_ITERATIONS 1000000

static int64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* One run of argv: 0 when it exited 0, else -1 after a message. */
static int run_once(char **argv)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "repeat: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "repeat: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "repeat: wait: %s\n", strerror(errno));
			return -1;
		}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	if (WIFSIGNALED(status))
		fprintf(stderr, "repeat: %s died of signal %d\n", argv[0], WTERMSIG(status));
	else
		fprintf(stderr, "repeat: %s exited with status %d\n", argv[0], WEXITSTATUS(status));
	return -1;
}

static const char usage[] =
	"usage: repeat (--runtime SECS | --iterations N) -- PROGRAM [ARG...]\n"
	"\n"
	"Run PROGRAM until SECS have passed (at least once), or N times, each\n"
	"run after a line 'Iterations: I'; stop at the first run that fails.\n";

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "runtime", required_argument, NULL, 'r' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned runtime = 0, iterations = 0;
	int64_t start;
	int c;

	while ((c = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_uint(optarg, 1, MAX_SECONDS, &runtime) < 0) {
				fprintf(stderr, "repeat: bad --runtime '%s'\n", optarg);
				goto usage;
			}
			break;
		case 'i':
			if (parse_uint(optarg, 1, MAX_ITERATIONS, &iterations) < 0) {
				fprintf(stderr, "repeat: bad --iterations '%s'\n", optarg);
				goto usage;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			goto usage;
		}
	}
	if (optind >= argc || !!runtime == !!iterations) {
		fprintf(stderr, "repeat: a program and one of --runtime and --iterations are required\n");
		goto usage;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	start = now_s();
	for (unsigned i = 1;; i++) {
		printf("Iterations: %u\n", i);
		if (run_once(argv + optind) < 0)
			return 1;
		if (iterations ? i >= iterations : now_s() - start >= (int64_t)runtime)
			break;
	}
	return 0;

usage:
	fputs(usage, stderr);
	return 2;
}
