/* klab-netperf: klab's own small stand-in for netperf's loopback tests
 * (netperf is not in Debian): TCP_RR, TCP_CRR, TCP_STREAM, UDP_RR and
 * UDP_STREAM between N client processes and N servers over the guest's
 * loopback, each pair on a port of its own, as lkp-tests runs N netperf
 * clients against one netserver.  Not netperf: its numbers are klab's
 * and compare only with klab-netperf's. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_CLIENTS 1024
#define MAX_SECONDS 86400
#define MAX_SEND 65507		/* the largest UDP payload over IPv4 */
#define TCP_SEND 16384		/* a TCP_STREAM send, netperf's usual on loopback */
#define UDP_SEND 1024
#define MAX_TESTS 16

enum test { TCP_RR, TCP_CRR, TCP_STREAM, UDP_RR, UDP_STREAM };
static const char *const test_names[] = { "TCP_RR", "TCP_CRR", "TCP_STREAM", "UDP_RR", "UDP_STREAM" };

/* One a pair, shared between the processes. */
struct pair {
	uint16_t port;		/* the server's, once it listens */
	int ready;
	uint64_t sent, received;	/* bytes (STREAM) or transactions (RR) */
	double elapsed_s;
	int failed;
} __attribute__((aligned(64)));

struct options {
	enum test test;
	unsigned clients, runtime_s, send_size;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int fail(struct pair *p, const char *who, const char *what)
{
	fprintf(stderr, "klab-netperf: %s: %s: %s\n", who, what, strerror(errno));
	__atomic_store_n(&p->failed, 1, __ATOMIC_RELAXED);
	return -1;
}

static int is_udp(enum test t)
{
	return t == UDP_RR || t == UDP_STREAM;
}

static int is_stream(enum test t)
{
	return t == TCP_STREAM || t == UDP_STREAM;
}

/* The loopback device is down in a fresh guest (nothing configured it). */
static int loopback_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), ret = 0;

	if (fd < 0) {
		fprintf(stderr, "klab-netperf: no IPv4 sockets: %s (is CONFIG_INET in the kernel?)\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		fprintf(stderr, "klab-netperf: no loopback device: %s\n", strerror(errno));
		ret = -1;
	} else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
			fprintf(stderr, "klab-netperf: cannot bring the loopback device up: %s\n", strerror(errno));
			ret = -1;
		}
	}
	close(fd);
	return ret;
}

static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static ssize_t full(int fd, char *buf, size_t len, int out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? send(fd, buf + done, len - done, MSG_NOSIGNAL) : recv(fd, buf + done, len - done, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* ---- the server of one pair: echoes requests, swallows streams ---- */

static void serve_tcp_conn(const struct options *o, struct pair *p, int c, char *buf)
{
	int one = 1;

	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (;;) {
		ssize_t n = is_stream(o->test) ? recv(c, buf, MAX_SEND, 0) : full(c, buf, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		__atomic_store_n(&p->received, p->received + (uint64_t)n, __ATOMIC_RELAXED);
		if (!is_stream(o->test) && full(c, buf, 1, 1) != 1)
			break;
	}
	close(c);
}

static int server(const struct options *o, struct pair *p)
{
	static char buf[MAX_SEND];
	struct sockaddr_in a = loopback(0);
	socklen_t len = sizeof(a);
	int one = 1, fd = socket(AF_INET, is_udp(o->test) ? SOCK_DGRAM : SOCK_STREAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(fd, (struct sockaddr *)&a, &len) < 0 ||
	    (!is_udp(o->test) && listen(fd, 128) < 0)) {
		return fail(p, "server", "listen on the loopback");
	}
	__atomic_store_n(&p->port, ntohs(a.sin_port), __ATOMIC_RELAXED);
	__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
	for (;;) {
		if (is_udp(o->test)) {
			struct sockaddr_in from;
			socklen_t fl = sizeof(from);
			ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

			if (n < 0)
				continue;
			__atomic_store_n(&p->received, p->received + (o->test == UDP_RR ? 1 : (uint64_t)n),
					 __ATOMIC_RELAXED);
			if (o->test == UDP_RR)
				sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
		} else {
			int c = accept(fd, NULL, NULL);

			if (c >= 0)
				serve_tcp_conn(o, p, c, buf);
		}
	}
}

/* ---- the client of one pair, for the runtime ---- */

static int tcp_connect(uint16_t port)
{
	struct sockaddr_in a = loopback(port);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int client(const struct options *o, struct pair *p)
{
	static char buf[MAX_SEND];
	int64_t start = now_ns(), end = start + (int64_t)o->runtime_s * 1000000000;
	uint64_t done = 0;
	int fd = -1;

	if (o->test == TCP_RR || o->test == TCP_STREAM) {
		fd = tcp_connect(p->port);
		if (fd < 0)
			return fail(p, "client", "connect");
	} else if (is_udp(o->test)) {
		struct sockaddr_in a = loopback(p->port);
		struct timeval tv = { 1, 0 };

		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			return fail(p, "client", "UDP socket");
		/* a lost datagram must not hang UDP_RR */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	while (now_ns() < end) {
		/* a batch between clock reads */
		for (int i = 0; i < 16; i++) {
			switch (o->test) {
			case TCP_RR:
				if (full(fd, buf, 1, 1) != 1 || full(fd, buf, 1, 0) != 1)
					return fail(p, "client", "TCP request/response");
				done++;
				break;
			case TCP_CRR: {
				int c = tcp_connect(p->port);

				if (c < 0 || full(c, buf, 1, 1) != 1 || full(c, buf, 1, 0) != 1) {
					if (c >= 0)
						close(c);
					return fail(p, "client", "TCP connect/request/response");
				}
				close(c);
				done++;
				break;
			}
			case TCP_STREAM:
				if (full(fd, buf, o->send_size, 1) != (ssize_t)o->send_size)
					return fail(p, "client", "TCP send");
				done += o->send_size;
				break;
			case UDP_RR:
				if (send(fd, buf, 1, 0) != 1)
					return fail(p, "client", "UDP send");
				/* a lost request or answer: the next one goes */
				if (recv(fd, buf, 1, 0) == 1)
					done++;
				break;
			case UDP_STREAM:
				/* loopback drops what the receiver cannot take:
				 * counted at both ends, as netperf does */
				if (send(fd, buf, o->send_size, 0) == (ssize_t)o->send_size)
					done += o->send_size;
				else if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED)
					return fail(p, "client", "UDP send");
				break;
			}
		}
	}
	p->elapsed_s = (double)(now_ns() - start) / 1e9;
	__atomic_store_n(&p->sent, done, __ATOMIC_RELEASE);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* ---- the pairs, started and reported ---- */

static pid_t spawn(int (*fn)(const struct options *, struct pair *), const struct options *o, struct pair *p)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fn(o, p) < 0 ? 1 : 0);
	}
	return pid;
}

static int run(const struct options *o)
{
	struct pair *pairs;
	pid_t *servers, *clients;
	int failed = 0;

	pairs = mmap(NULL, o->clients * sizeof(*pairs), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	servers = calloc(o->clients, sizeof(*servers));
	clients = calloc(o->clients, sizeof(*clients));
	if (pairs == MAP_FAILED || !servers || !clients) {
		fprintf(stderr, "klab-netperf: out of memory\n");
		return -1;
	}
	for (unsigned i = 0; i < o->clients; i++) {
		int64_t deadline = now_ns() + 10 * (int64_t)1000000000;

		servers[i] = spawn(server, o, &pairs[i]);
		if (servers[i] < 0) {
			fprintf(stderr, "klab-netperf: fork: %s\n", strerror(errno));
			failed = 1;
			goto out;
		}
		while (!__atomic_load_n(&pairs[i].ready, __ATOMIC_ACQUIRE)) {
			if (pairs[i].failed || now_ns() > deadline) {
				fprintf(stderr, "klab-netperf: server %u did not start\n", i);
				failed = 1;
				goto out;
			}
			usleep(1000);
		}
	}
	for (unsigned i = 0; i < o->clients; i++) {
		clients[i] = spawn(client, o, &pairs[i]);
		if (clients[i] < 0) {
			fprintf(stderr, "klab-netperf: fork: %s\n", strerror(errno));
			failed = 1;
			goto out;
		}
	}
	for (unsigned i = 0; i < o->clients; i++) {
		int status;

		while (waitpid(clients[i], &status, 0) < 0 && errno == EINTR)
			;
		clients[i] = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	}
	/* what is still in flight to a stream's server */
	usleep(100000);
	for (unsigned i = 0; !failed && i < o->clients; i++) {
		const struct pair *p = &pairs[i];
		uint64_t sent = __atomic_load_n(&p->sent, __ATOMIC_ACQUIRE);
		uint64_t recvd = __atomic_load_n(&p->received, __ATOMIC_RELAXED);
		double t = p->elapsed_s > 0 ? p->elapsed_s : 1;

		if (is_stream(o->test))
			printf("client:%u elapsed:%.3f send_Mbps:%.2f recv_Mbps:%.2f bytes:%llu\n", i, t,
			       (double)sent * 8 / 1e6 / t, (double)recvd * 8 / 1e6 / t, (unsigned long long)sent);
		else
			printf("client:%u elapsed:%.3f tps:%.2f transactions:%llu\n", i, t, (double)sent / t,
			       (unsigned long long)sent);
	}
out:
	for (unsigned i = 0; i < o->clients; i++) {
		if (clients[i] > 0)
			kill(clients[i], SIGKILL);
		if (servers[i] > 0)
			kill(servers[i], SIGKILL);
	}
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return failed ? -1 : 0;
}

static const char usage[] =
	"usage: klab-netperf --test TEST... [--clients N] [--runtime SECS] [--send-size BYTES]\n"
	"\n"
	"klab's loopback stand-in for netperf (not netperf): N clients, each\n"
	"against a server of its own on 127.0.0.1, for SECS seconds.\n"
	"\n"
	"    --test TEST        TCP_RR, TCP_CRR, TCP_STREAM, UDP_RR or UDP_STREAM; given\n"
	"                       again, the tests run one after another\n"
	"    --clients N        client/server pairs (default 1)\n"
	"    --runtime SECS     seconds (default 10)\n"
	"    --send-size BYTES  a STREAM test's send (default 16384 TCP, 1024 UDP)\n";

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "test", required_argument, NULL, 't' },
		{ "clients", required_argument, NULL, 'c' },
		{ "runtime", required_argument, NULL, 'r' },
		{ "send-size", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { .clients = 1, .runtime_s = 10 };
	enum test tests[MAX_TESTS];
	unsigned nr_tests = 0, send_size;
	int c, failed = 0;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case 't': {
			int found = 0;

			for (size_t i = 0; i < sizeof(test_names) / sizeof(test_names[0]); i++)
				if (!strcmp(optarg, test_names[i]) && nr_tests < MAX_TESTS) {
					tests[nr_tests++] = (enum test)i;
					found = 1;
				}
			if (!found) {
				fprintf(stderr, "klab-netperf: unknown test '%s' (or more than %d)\n", optarg, MAX_TESTS);
				goto usage;
			}
			break;
		}
		case 'c':
			if (parse_uint(optarg, 1, MAX_CLIENTS, &o.clients) < 0) {
				fprintf(stderr, "klab-netperf: --clients wants 1 to %d, not '%s'\n", MAX_CLIENTS, optarg);
				goto usage;
			}
			break;
		case 'r':
			if (parse_uint(optarg, 1, MAX_SECONDS, &o.runtime_s) < 0) {
				fprintf(stderr, "klab-netperf: bad --runtime '%s'\n", optarg);
				goto usage;
			}
			break;
		case 's':
			if (parse_uint(optarg, 1, MAX_SEND, &o.send_size) < 0) {
				fprintf(stderr, "klab-netperf: --send-size wants 1 to %d, not '%s'\n", MAX_SEND, optarg);
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
	if (optind != argc || !nr_tests) {
		fprintf(stderr, "klab-netperf: --test is required\n");
		goto usage;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (loopback_up() < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	send_size = o.send_size;
	for (unsigned i = 0; i < nr_tests; i++) {
		o.test = tests[i];
		o.send_size = send_size ? send_size : o.test == UDP_STREAM ? UDP_SEND : TCP_SEND;
		printf("klab-netperf: test=%s clients=%u runtime=%u send_size=%u (klab's loopback stand-in, not netperf)\n",
		       test_names[o.test], o.clients, o.runtime_s, is_stream(o.test) ? o.send_size : 1);
		if (run(&o) < 0)
			failed = 1;
	}
	return failed;

usage:
	fputs(usage, stderr);
	return 2;
}
