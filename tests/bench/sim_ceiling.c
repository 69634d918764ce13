/* The simulator's own request-rate ceiling, with the cheapest client we can
 * write (run on demand; prints figures; tests/bench/README.md "Requests per
 * second").
 *
 * usage: sim_ceiling URL [CONNECTIONS [SECONDS [MAX_REQUESTS]]]
 *        defaults 256 connections, 10 s, 2,000,000 requests; at most 30 s
 *
 * CONNECTIONS keep-alive loopback connections each send the request
 * tokentrace-capture's open-loop cells send (POST /v1/completions, a
 * 16-token id prompt, max_tokens 4 with ignore_eos, streaming with usage)
 * again as soon as the previous answer has ended (its chunked body's last
 * chunk seen).  Nothing is parsed, timed or recorded: the client only
 * writes the request and reads until the body ends, with epoll, so almost
 * all the CPU goes to the server.  Closed loop: the rate is whatever the
 * server sustains with CONNECTIONS requests in flight.
 *
 * Prints one line: "requests N seconds S rate R req/s client_cpu_s C", the
 * client's user + sys CPU from getrusage.  Loopback only; bounded in time
 * and in requests. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
	int fd;
	char tail[8]; /* the last bytes read: the body ends "\r\n0\r\n\r\n" */
	size_t n_tail;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char req[1024];
static size_t req_len;

static int open_conn(const struct sockaddr_in *a)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (s < 0)
		return -1;
	if (connect(s, (const struct sockaddr *)a, sizeof *a)) {
		close(s);
		return -1;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return s;
}

static int send_req(int fd)
{
	size_t off = 0;
	while (off < req_len) {
		ssize_t w = write(fd, req + off, req_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* Whether the bytes read so far end the chunked body. */
static int body_ended(struct conn *c, const char *buf, size_t n)
{
	static const char end[] = "\r\n0\r\n\r\n";
	const size_t k = sizeof end - 1;
	char joined[16];
	size_t keep = c->n_tail;

	if (n >= k) {
		memcpy(c->tail, buf + n - k, k);
		c->n_tail = k;
		return !memcmp(buf + n - k, end, k);
	}
	memcpy(joined, c->tail, keep);
	memcpy(joined + keep, buf, n);
	keep += n;
	if (keep > k) {
		memmove(joined, joined + keep - k, k);
		keep = k;
	}
	memcpy(c->tail, joined, keep);
	c->n_tail = keep;
	return keep == k && !memcmp(joined, end, k);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a;
	const char *url = argc > 1 ? argv[1] : NULL, *hp;
	int conns = argc > 2 ? atoi(argv[2]) : 256;
	double secs = argc > 3 ? atof(argv[3]) : 10;
	long max_req = argc > 4 ? atol(argv[4]) : 2000000;
	char host[64];
	int port, ep;
	struct conn *cs;
	static const char body[] =
		"{\"model\":\"sim\",\"prompt\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"
		"\"max_tokens\":4,\"min_tokens\":4,\"ignore_eos\":true,\"temperature\":0,"
		"\"stream\":true,\"stream_options\":{\"include_usage\":true,"
		"\"continuous_usage_stats\":true}}";
	long done = 0;
	uint64_t t0, t1, end;
	struct rusage ru;
	static char buf[65536];

	if (!url || strncmp(url, "http://", 7) || conns < 1 || conns > 4096 || !(secs > 0) ||
	    secs > 30 || max_req < 1) {
		fprintf(stderr, "usage: sim_ceiling http://127.0.0.1:PORT [CONNECTIONS<=4096 "
				"[SECONDS<=30 [MAX_REQUESTS]]]\n");
		return 2;
	}
	hp = url + 7;
	if (sscanf(hp, "%63[^:]:%d", host, &port) != 2 || strcmp(host, "127.0.0.1")) {
		fprintf(stderr, "sim_ceiling: loopback only (http://127.0.0.1:PORT)\n");
		return 2;
	}
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, host, &a.sin_addr);
	req_len = (size_t)snprintf(req, sizeof req,
				   "POST /v1/completions HTTP/1.1\r\nHost: %s:%d\r\n"
				   "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
				   "Content-Length: %zu\r\n\r\n%s",
				   host, port, sizeof body - 1, body);
	ep = epoll_create1(0);
	cs = calloc((size_t)conns, sizeof *cs);
	if (ep < 0 || !cs)
		return 1;
	t0 = now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	for (int i = 0; i < conns; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		cs[i].fd = open_conn(&a);
		if (cs[i].fd < 0 || send_req(cs[i].fd) || epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev)) {
			fprintf(stderr, "sim_ceiling: cannot connect to %s: %s\n", url, strerror(errno));
			return 1;
		}
	}
	while (done < max_req) {
		struct epoll_event evs[256];
		uint64_t now = now_ns();
		int n;

		if (now >= end)
			break;
		n = epoll_wait(ep, evs, 256, (int)((end - now) / 1000000) + 1);
		for (int e = 0; e < n; e++) {
			struct conn *c = &cs[evs[e].data.u32];
			ssize_t got = read(c->fd, buf, sizeof buf);
			if (got <= 0) {
				fprintf(stderr, "sim_ceiling: the server closed a connection after %ld "
						"requests\n", done);
				return 1;
			}
			if (body_ended(c, buf, (size_t)got)) {
				done++;
				c->n_tail = 0;
				if (send_req(c->fd))
					return 1;
			}
		}
	}
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &ru);
	printf("requests %ld seconds %.3f rate %.1f req/s client_cpu_s %.3f\n", done,
	       (double)(t1 - t0) / 1e9, (double)done / ((double)(t1 - t0) / 1e9),
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		       ru.ru_stime.tv_usec / 1e6);
	for (int i = 0; i < conns; i++)
		close(cs[i].fd);
	free(cs);
	return 0;
}
