#define _GNU_SOURCE /* memmem, accept4 */
/* A streaming server that does nothing but stream, for measuring
 * tokentrace-capture itself.
 *
 * usage: capture_firehose [--tokens-per-chunk K] [--tokens N] [--batch B]
 *                         [--rate R --truth FILE]
 *
 * Listens on 127.0.0.1 (a free port, printed as "listening on
 * http://127.0.0.1:PORT"), answers /v1/models, 404 on /metrics, and streams
 * every POST as an OpenAI completion of N tokens (default: the request's
 * max_tokens), K tokens per chunk with cumulative usage.
 *
 * Flat out (default): B events per write, as fast as the socket takes
 * them.  One thread, epoll, no model: it is never the bottleneck, so the
 * capture is; this measures the capture's token throughput.
 *
 * Paced (--rate R): every stream sends one chunk every K/R seconds, each
 * with its own write(), and the time taken just before that write() goes to
 * a ground-truth log in the simulator's format (formats/sim-truth-log.md,
 * read by capture_latency).  Unlike the simulator's truth, which is stamped
 * before its event loop gets round to writing, this is the moment the bytes
 * enter the kernel: what remains is the kernel's and the capture's delay. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
	int fd;
	uint64_t id;
	char rid[64];
	int64_t next_due;
	char in[1 << 16];
	size_t in_len;
	char *out;
	size_t out_len, out_off, out_cap;
	long tokens_left, emitted, total;
	int streaming;
};

static int k_per_chunk = 1, batch = 16;
static long fixed_tokens = 0;
static double rate = 0; /* tokens/s per stream; 0 = flat out */
static FILE *truth;
static uint64_t next_id = 1;
static struct conn *conns[65536];
static int maxfd; /* highest fd in use: the pacing scans stop there */

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void put_le(FILE *f, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		putc((int)((v >> (8 * i)) & 0xff), f);
}

static void out_add(struct conn *c, const char *s, size_t n)
{
	if (c->out_len + n > c->out_cap) {
		size_t nc = c->out_cap ? c->out_cap : 65536;
		while (nc < c->out_len + n)
			nc *= 2;
		c->out = realloc(c->out, nc);
		if (!c->out)
			abort();
		c->out_cap = nc;
	}
	memcpy(c->out + c->out_len, s, n);
	c->out_len += n;
}

/* One HTTP chunk holding up to `batch` SSE events. */
static void fill(struct conn *c)
{
	char ev[512], body[1 << 15], hdr[32];
	size_t bl = 0;
	int n = 0;

	while (c->tokens_left > 0 && n < (rate > 0 ? 1 : batch)) {
		long k = c->tokens_left < k_per_chunk ? c->tokens_left : k_per_chunk;
		int m;
		c->emitted += k;
		c->tokens_left -= k;
		m = snprintf(ev, sizeof ev,
			     "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"model\":\"fire\","
			     "\"choices\":[{\"index\":0,\"text\":\" a\",\"logprobs\":null,"
			     "\"finish_reason\":%s}],\"usage\":{\"prompt_tokens\":128,"
			     "\"completion_tokens\":%ld}}\n\n",
			     c->tokens_left ? "null" : "\"length\"", c->emitted);
		memcpy(body + bl, ev, (size_t)m);
		bl += (size_t)m;
		n++;
		if (truth) {
			/* stamped when queued; the paced loop writes it at once */
			int64_t t = mono_ns();
			putc(2, truth);
			put_le(truth, c->id, 8);
			put_le(truth, (uint64_t)t, 8);
			put_le(truth, (uint64_t)(c->emitted - k), 4);
			put_le(truth, (uint64_t)k, 4);
			for (long q = 0; q < k; q++)
				put_le(truth, (uint64_t)t, 8);
		}
	}
	if (c->tokens_left == 0 && c->streaming == 1) {
		static const char done[] = "data: [DONE]\n\n";
		memcpy(body + bl, done, sizeof done - 1);
		bl += sizeof done - 1;
		c->streaming = 2;
	}
	if (bl) {
		int h = snprintf(hdr, sizeof hdr, "%zx\r\n", bl);
		out_add(c, hdr, (size_t)h);
		out_add(c, body, bl);
		out_add(c, "\r\n", 2);
	}
	if (c->streaming == 2) {
		out_add(c, "0\r\n\r\n", 5);
		c->streaming = 0;
	}
}

static void respond_simple(struct conn *c, int status, const char *body)
{
	char h[256];
	int n = snprintf(h, sizeof h,
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\n\r\n",
			 status, status == 200 ? "OK" : "Not Found", strlen(body));
	out_add(c, h, (size_t)n);
	out_add(c, body, strlen(body));
}

/* Parse as many complete requests as are buffered. */
static void on_input(struct conn *c)
{
	for (;;) {
		char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
		size_t head, clen = 0, total;
		char *cl;

		if (!end || c->streaming)
			return;
		head = (size_t)(end - c->in) + 4;
		cl = memmem(c->in, head, "Content-Length:", 15);
		if (!cl)
			cl = memmem(c->in, head, "content-length:", 15);
		if (cl)
			clen = (size_t)strtoul(cl + 15, NULL, 10);
		total = head + clen;
		if (c->in_len < total)
			return;
		if (strncmp(c->in, "POST ", 5) == 0) {
			char *mt = memmem(c->in + head, clen, "\"max_tokens\":", 13);
			long n = fixed_tokens ? fixed_tokens : mt ? strtol(mt + 13, NULL, 10) : 256;
			static const char h[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
						"Transfer-Encoding: chunked\r\n\r\n";
			char *rid = memmem(c->in, head, "X-Request-Id:", 13);
			out_add(c, h, sizeof h - 1);
			c->tokens_left = n > 0 ? n : 1;
			c->emitted = 0;
			c->streaming = 1;
			c->id = next_id++;
			c->rid[0] = '\0';
			if (rid) {
				size_t k = 0;
				rid += 13;
				while (*rid == ' ')
					rid++;
				while (k + 1 < sizeof c->rid && rid[k] != '\r')
					k++;
				memcpy(c->rid, rid, k);
				c->rid[k] = '\0';
			}
			c->next_due = mono_ns() + (rate > 0 ? (int64_t)(k_per_chunk / rate * 1e9) : 0);
			if (truth) {
				size_t k = strlen(c->rid);
				putc(1, truth);
				put_le(truth, c->id, 8);
				put_le(truth, (uint64_t)mono_ns(), 8);
				put_le(truth, 128, 4);
				put_le(truth, (uint64_t)c->tokens_left, 4);
				put_le(truth, k, 2);
				fwrite(c->rid, 1, k, truth);
			}
		} else if (strncmp(c->in, "GET /v1/models", 14) == 0) {
			respond_simple(c, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"fire\",\"max_model_len\":1000000}]}");
		} else {
			respond_simple(c, 404, "{\"error\":\"not found\"}");
		}
		memmove(c->in, c->in + total, c->in_len - total);
		c->in_len -= total;
	}
}

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* Paced mode: write one chunk for every stream whose time has come. */
static void pace(void)
{
	int64_t now = mono_ns(), step = (int64_t)(k_per_chunk / rate * 1e9);

	for (int fd = 0; fd <= maxfd; fd++) {
		struct conn *c = conns[fd];
		if (!c || !c->streaming || c->next_due > now || c->out_off != c->out_len)
			continue;
		c->out_off = c->out_len = 0;
		fill(c);
		{
			ssize_t w = write(c->fd, c->out, c->out_len);
			if (w > 0)
				c->out_off = (size_t)w;
		}
		c->next_due += step;
		if (c->next_due < now - 10 * step)
			c->next_due = now + step; /* fell far behind: do not burst */
	}
}

static int next_wait_ms(void)
{
	int64_t now = mono_ns(), best = now + 1000000000;

	if (rate <= 0)
		return 1000;
	for (int fd = 0; fd <= maxfd; fd++)
		if (conns[fd] && conns[fd]->streaming && conns[fd]->next_due < best)
			best = conns[fd]->next_due;
	return best <= now ? 0 : (int)((best - now) / 1000000);
}

int main(int argc, char **argv)
{
	int lfd, ep, one = 1;
	struct sockaddr_in sa;
	socklen_t sl = sizeof sa;
	struct epoll_event evs[256];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--tokens-per-chunk"))
			k_per_chunk = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--tokens"))
			fixed_tokens = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "--batch"))
			batch = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--rate"))
			rate = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--truth")) {
			truth = fopen(argv[i + 1], "wb");
			if (!truth) {
				perror(argv[i + 1]);
				return 1;
			}
			setvbuf(truth, NULL, _IOFBF, 1 << 20);
			fwrite("TTSIMTR1\1\0\0\0\0\0\0\0", 1, 16, truth);
		}
	}
	if (k_per_chunk < 1)
		k_per_chunk = 1;
	if (batch < 1 || batch > 40)
		batch = 16;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 1024)) {
		perror("capture_firehose: bind");
		return 1;
	}
	getsockname(lfd, (struct sockaddr *)&sa, &sl);
	printf("capture_firehose listening on http://127.0.0.1:%d\n", ntohs(sa.sin_port));
	fflush(stdout);
	ep = epoll_create1(0);
	{
		struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
		epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);
	}
	while (!stop) {
		int n = epoll_wait(ep, evs, 256, next_wait_ms());
		if (rate > 0)
			pace();
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (!c) {
				int fd;
				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct epoll_event e;
					c = calloc(1, sizeof *c);
					c->fd = fd;
					if (fd < 65536)
						conns[fd] = c;
					if (fd > maxfd && fd < 65536)
						maxfd = fd;
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					e.events = EPOLLIN | EPOLLOUT | EPOLLET;
					e.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
				}
				continue;
			}
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
				ssize_t r;
				while ((r = read(c->fd, c->in + c->in_len, sizeof c->in - c->in_len)) > 0)
					c->in_len += (size_t)r;
				if (r == 0 || (r < 0 && errno != EAGAIN)) {
					if (c->fd < 65536)
						conns[c->fd] = NULL;
					close(c->fd);
					free(c->out);
					free(c);
					continue;
				}
				on_input(c);
			}
			/* write until the socket is full (edge-triggered); paced
			 * streams get their chunks from pace() only */
			for (;;) {
				ssize_t w;
				if (c->out_off == c->out_len) {
					c->out_off = c->out_len = 0;
					if (c->streaming && rate > 0)
						break;
					if (c->streaming)
						fill(c);
					else
						on_input(c);
					if (c->out_len == 0)
						break;
				}
				w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
				if (w <= 0)
					break;
				c->out_off += (size_t)w;
			}
		}
	}
	if (truth)
		fclose(truth);
	return 0;
}
