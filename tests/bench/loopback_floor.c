#define _GNU_SOURCE /* memmem */
/* The machine's floor for the capture timing benchmark: how late can ANY
 * receiver on this machine see a streamed chunk, doing nothing but read it?
 *
 * usage: loopback_floor recv PORT STREAMS SECONDS OBS [--busy] [--cpu N]
 *                              [--max-tokens N]
 *        loopback_floor report OBS TRUTH
 *
 * `recv` opens STREAMS connections to capture_firehose (paced, with
 * --truth) or tokentrace-sim (--truth), asks each for one completion of
 * N tokens (default 100000000; ignore_eos, continuous usage, a 128-token
 * prompt unique per stream) and, for SECONDS, does only
 * this: epoll_wait, recvmsg, clock_gettime.  Every read keeps two times:
 * CLOCK_MONOTONIC right after recvmsg returned (what a user-space receiver
 * can know at best) and the kernel's receive stamp of the first byte read
 * (SO_TIMESTAMPNS: when the packet reached the socket layer, before any
 * process ran).  The bytes are parsed only after the window, so the loop
 * costs one syscall per read and nothing else.  --busy polls instead of
 * sleeping in epoll_wait (no wake-up latency, one core burnt); --cpu pins
 * the process.
 *
 * `report` matches every chunk with the firehose's truth log
 * (formats/sim-truth-log.md; the moment just before the sender's write())
 * and prints three distributions:
 *   kernel - emission : the kernel's loopback delivery (no process involved)
 *   user - emission   : what the best user-space receiver records
 *   user - kernel     : the receiver's own delay (wake-up, its queue)
 * These are the limit tokentrace-capture's figure is compared with
 * (tests/bench/capture_bench.sh prints both). */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sim_client.h" /* truth_read */

static int64_t ns_of(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

struct rd { /* one recvmsg */
	size_t end;   /* stream offset just past the bytes read */
	int64_t user; /* CLOCK_MONOTONIC after recvmsg */
	int64_t kern; /* kernel receive stamp, mapped to CLOCK_MONOTONIC; 0 = none */
};

struct conn {
	int fd;
	char *buf;
	size_t len, cap;
	struct rd *rds;
	size_t nrd, caprd;
};

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t nc = *cap ? *cap : 4096;
	while (nc < need)
		nc *= 2;
	p = realloc(p, nc * elem);
	if (!p)
		die("realloc");
	*cap = nc;
	return p;
}

/* REALTIME - MONOTONIC, taken as the tightest bracket of several samples. */
static int64_t realtime_offset(void)
{
	int64_t best = 0, width = INT64_MAX;
	for (int i = 0; i < 64; i++) {
		int64_t a = ns_of(CLOCK_MONOTONIC), r = ns_of(CLOCK_REALTIME), b = ns_of(CLOCK_MONOTONIC);
		if (b - a < width) {
			width = b - a;
			best = r - (a + (b - a) / 2);
		}
	}
	return best;
}

static int do_recv(int argc, char **argv)
{
	int port = atoi(argv[2]), n = atoi(argv[3]), busy = 0, one = 1, ep;
	long max_tokens = 100000000;
	double secs = atof(argv[4]);
	const char *obs = argv[5];
	struct conn *cs;
	int64_t off, t_end;
	FILE *f;

	for (int i = 6; i < argc; i++) {
		if (!strcmp(argv[i], "--busy"))
			busy = 1;
		else if (!strcmp(argv[i], "--max-tokens") && i + 1 < argc)
			max_tokens = atol(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
			cpu_set_t set;
			CPU_ZERO(&set);
			CPU_SET(atoi(argv[++i]), &set);
			if (sched_setaffinity(0, sizeof set, &set))
				die("sched_setaffinity");
		}
	}
	if (n < 1 || n > 4096 || secs <= 0)
		return fprintf(stderr, "loopback_floor: bad STREAMS or SECONDS\n"), 2;
	cs = calloc((size_t)n, sizeof *cs);
	ep = epoll_create1(0);
	if (!cs || ep < 0)
		die("setup");
	for (int i = 0; i < n; i++) {
		struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
		char req[2048], body[1536];
		int bl = snprintf(body, sizeof body, "{\"prompt\":[");
		int rl;
		for (int t = 0; t < 128; t++) /* unique per stream: no shared prefix */
			bl += snprintf(body + bl, sizeof body - (size_t)bl, "%s%d", t ? "," : "",
				       1000 + (i * 131 + t * 7) % 30000);
		bl += snprintf(body + bl, sizeof body - (size_t)bl,
			       "],\"max_tokens\":%ld,\"temperature\":0,\"ignore_eos\":true,"
			       "\"stream\":true,\"stream_options\":{\"include_usage\":true,"
			       "\"continuous_usage_stats\":true}}",
			       max_tokens);
		rl = snprintf(req, sizeof req,
				  "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
				  "X-Request-Id: floor-%d\r\nContent-Type: application/json\r\n"
				  "Content-Length: %d\r\n\r\n%s",
				  i, bl, body);
		struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		cs[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		if (cs[i].fd < 0 || connect(cs[i].fd, (struct sockaddr *)&sa, sizeof sa))
			die("connect");
		setsockopt(cs[i].fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (setsockopt(cs[i].fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one))
			die("SO_TIMESTAMPNS");
		if (write(cs[i].fd, req, (size_t)rl) != rl)
			die("write");
		epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &e);
	}
	off = realtime_offset();
	t_end = ns_of(CLOCK_MONOTONIC) + (int64_t)(secs * 1e9);
	for (;;) {
		struct epoll_event evs[4096];
		int k = epoll_wait(ep, evs, n, busy ? 0 : 50);
		if (k < 0 && errno != EINTR)
			die("epoll_wait");
		for (int j = 0; j < k; j++) {
			struct conn *c = &cs[evs[j].data.u32];
			char cbuf[CMSG_SPACE(sizeof(struct timespec))];
			struct iovec iov;
			struct msghdr mh = {0};
			ssize_t r;
			int64_t now;

			c->buf = grow(c->buf, &c->cap, c->len + 65536, 1);
			iov.iov_base = c->buf + c->len;
			iov.iov_len = 65536;
			mh.msg_iov = &iov;
			mh.msg_iovlen = 1;
			mh.msg_control = cbuf;
			mh.msg_controllen = sizeof cbuf;
			r = recvmsg(c->fd, &mh, MSG_DONTWAIT);
			now = ns_of(CLOCK_MONOTONIC);
			if (r <= 0) {
				if (r == 0 || errno != EAGAIN)
					die("recvmsg: the firehose went away");
				continue;
			}
			c->len += (size_t)r;
			c->rds = grow(c->rds, &c->caprd, c->nrd + 1, sizeof *c->rds);
			c->rds[c->nrd] = (struct rd){c->len, now, 0};
			for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
				if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
					struct timespec ts;
					memcpy(&ts, CMSG_DATA(cm), sizeof ts);
					c->rds[c->nrd].kern = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - off;
				}
			c->nrd++;
		}
		if (ns_of(CLOCK_MONOTONIC) >= t_end)
			break;
	}
	/* Parse after the window: one line per chunk,
	 * "floor-I FIRST_TOKEN_INDEX USER_NS KERNEL_NS". */
	f = fopen(obs, "w");
	if (!f)
		die(obs);
	for (int i = 0; i < n; i++) {
		struct conn *c = &cs[i];
		size_t p = 0, ri = 0;
		long prev = 0;
		close(c->fd);
		for (;;) {
			char *q = memmem(c->buf + p, c->len - p, "\"completion_tokens\":", 20);
			char *e;
			long tok;
			size_t ev_end;
			if (!q)
				break;
			tok = strtol(q + 20, NULL, 10);
			e = memmem(q, c->len - (size_t)(q - c->buf), "\n\n", 2);
			if (!e)
				break; /* cut by the window's end */
			ev_end = (size_t)(e - c->buf) + 2;
			while (ri < c->nrd && c->rds[ri].end < ev_end)
				ri++;
			if (ri == c->nrd)
				break;
			fprintf(f, "floor-%d %ld %" PRId64 " %" PRId64 "\n", i, prev, c->rds[ri].user,
				c->rds[ri].kern);
			prev = tok;
			p = ev_end;
		}
		free(c->buf);
		free(c->rds);
	}
	free(cs);
	if (fclose(f))
		die(obs);
	return 0;
}

/* ---- report ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static void print_dist(const char *name, int64_t *v, size_t n)
{
	if (!n) {
		printf("%-19s (none)\n", name);
		return;
	}
	qsort(v, n, sizeof *v, cmp_i64);
#define Q(p) ((double)v[(size_t)((double)(n - 1) * (p))] / 1e3)
	printf("%-19s min %.1f us  p50 %.1f us  p90 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us\n",
	       name, (double)v[0] / 1e3, Q(0.5), Q(0.9), Q(0.99), Q(0.999), (double)v[n - 1] / 1e3);
#undef Q
}

/* The truth log is read by the simulator tests' reader (truth_read). */
static int do_report(char **argv)
{
	FILE *o = fopen(argv[2], "r");
	struct truth tr;
	size_t n = 0, cap = 0, unmatched = 0, nk = 0;
	uint64_t *ids = NULL; /* floor index -> sim id + 1 (0: unknown) */
	size_t nid = 0;
	int64_t *d_k = NULL, *d_u = NULL, *d_uk = NULL;
	char rid[64];
	long first;
	int64_t user, kern;

	if (!o)
		die("report: open");
	if (truth_read(argv[3], &tr) != 0)
		return fprintf(stderr, "loopback_floor: cannot read truth log %s\n", argv[3]), 1;
	for (size_t i = 0; i < tr.nreqs; i++) {
		const char *cid = tr.reqs[i].client_id;
		if (strncmp(cid, "floor-", 6) == 0) {
			size_t k = (size_t)strtoul(cid + 6, NULL, 10), c0 = nid;
			ids = grow(ids, &c0, k + 1, sizeof *ids);
			for (size_t j = nid; j < c0; j++)
				ids[j] = 0;
			nid = c0;
			ids[k] = tr.reqs[i].id + 1;
		}
	}
	truth_sort_chunks(&tr);
	while (fscanf(o, "%63s %ld %" SCNd64 " %" SCNd64, rid, &first, &user, &kern) == 4) {
		size_t k = (size_t)strtoul(rid + 6, NULL, 10);
		struct truth_chunk key, *m;
		if (k >= nid || !ids[k]) {
			unmatched++;
			continue;
		}
		memset(&key, 0, sizeof key);
		key.id = ids[k] - 1;
		key.first = (uint32_t)first;
		m = bsearch(&key, tr.chunks, tr.nchunks, sizeof *tr.chunks, truth_chunk_cmp);
		if (!m) {
			unmatched++;
			continue;
		}
		if (n == cap) {
			size_t c0 = cap;
			d_u = grow(d_u, &c0, n + 1, sizeof *d_u);
			c0 = cap;
			d_k = grow(d_k, &c0, n + 1, sizeof *d_k);
			c0 = cap;
			d_uk = grow(d_uk, &c0, n + 1, sizeof *d_uk);
			cap = c0;
		}
		d_u[n] = user - (int64_t)m->emit_ns;
		if (kern) {
			d_k[nk] = kern - (int64_t)m->emit_ns;
			d_uk[nk++] = user - kern;
		}
		n++;
	}
	fclose(o);
	printf("chunks matched      %zu (unmatched %zu; with a kernel stamp %zu)\n", n, unmatched, nk);
	print_dist("kernel - emission", d_k, nk);
	print_dist("user - emission", d_u, n);
	print_dist("user - kernel", d_uk, nk);
	truth_free(&tr);
	free(ids);
	free(d_k);
	free(d_u);
	free(d_uk);
	return n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "recv"))
		return do_recv(argc, argv);
	if (argc == 4 && !strcmp(argv[1], "report"))
		return do_report(argv);
	fprintf(stderr, "usage: loopback_floor recv PORT STREAMS SECONDS OBS [--busy] [--cpu N]\n"
			"       loopback_floor report OBS TRUTH\n");
	return 2;
}
