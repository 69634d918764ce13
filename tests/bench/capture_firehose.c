#define _GNU_SOURCE /* memmem, accept4 */
/* A streaming server that does nothing but stream, for measuring how many
 * tokens one tokentrace-capture process can take in.
 *
 * usage: capture_firehose [--tokens-per-chunk K] [--tokens N] [--batch B]
 *
 * Listens on 127.0.0.1 (a free port, printed as "listening on
 * http://127.0.0.1:PORT"), answers /v1/models, 404 on /metrics, and streams
 * every POST as an OpenAI completion of N tokens (default: the request's
 * max_tokens), K tokens per chunk with cumulative usage, B events per
 * write, as fast as the socket takes them.  One thread, epoll, no model:
 * unlike the simulator it is never the bottleneck, so the capture is. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

struct conn {
	int fd;
	char in[1 << 16];
	size_t in_len;
	char *out;
	size_t out_len, out_off, out_cap;
	long tokens_left, emitted, total;
	int streaming;
};

static int k_per_chunk = 1, batch = 16;
static long fixed_tokens = 0;

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

	while (c->tokens_left > 0 && n < batch) {
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
			out_add(c, h, sizeof h - 1);
			c->tokens_left = n > 0 ? n : 1;
			c->emitted = 0;
			c->streaming = 1;
		} else if (strncmp(c->in, "GET /v1/models", 14) == 0) {
			respond_simple(c, 200, "{\"object\":\"list\",\"data\":[{\"id\":\"fire\",\"max_model_len\":1000000}]}");
		} else {
			respond_simple(c, 404, "{\"error\":\"not found\"}");
		}
		memmove(c->in, c->in + total, c->in_len - total);
		c->in_len -= total;
	}
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
	}
	if (k_per_chunk < 1)
		k_per_chunk = 1;
	if (batch < 1 || batch > 40)
		batch = 16;
	signal(SIGPIPE, SIG_IGN);
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
	for (;;) {
		int n = epoll_wait(ep, evs, 256, 1000);
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (!c) {
				int fd;
				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct epoll_event e;
					c = calloc(1, sizeof *c);
					c->fd = fd;
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
					close(c->fd);
					free(c->out);
					free(c);
					continue;
				}
				on_input(c);
			}
			/* write until the socket is full (edge-triggered) */
			for (;;) {
				ssize_t w;
				if (c->out_off == c->out_len) {
					c->out_off = c->out_len = 0;
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
}
