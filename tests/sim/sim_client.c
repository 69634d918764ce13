/* Test harness for tokentrace-sim; see sim_client.h. */
#include "sim_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int build_argv(const char **argv, size_t max, const char *const *args, int defaults)
{
	size_t k = 0;
	argv[k++] = TT_SIM_PATH;
	if (defaults) {
		argv[k++] = "--port";
		argv[k++] = "0";
		argv[k++] = "--max-runtime";
		argv[k++] = "120";
	}
	for (size_t i = 0; args && args[i] && k + 1 < max; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	return 0;
}

int sim_spawn(struct sim_proc *p, const char *const *args)
{
	const char *argv[64];
	int fds[2];
	char buf[120];
	size_t len = 0;

	memset(p, 0, sizeof *p);
	build_argv(argv, 64, args, 1);
	if (pipe(fds))
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		/* a test that fails half-way must not leave its simulator behind */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	uint64_t deadline = now_ns() + 10000000000ull;
	while (len + 1 < sizeof buf && !memchr(buf, '\n', len)) {
		struct pollfd pf = {fds[0], POLLIN, 0};
		int left = (int)((deadline - now_ns()) / 1000000);
		if (now_ns() >= deadline || poll(&pf, 1, left) <= 0)
			break;
		ssize_t got = read(fds[0], buf + len, sizeof buf - 1 - len);
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fds[0]);
	buf[len] = '\0';
	char *nl = strchr(buf, '\n');
	if (!nl) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		return -1;
	}
	*nl = '\0';
	snprintf(p->listen_line, sizeof p->listen_line, "%s", buf);
	if (sscanf(buf, "tokentrace-sim listening on http://127.0.0.1:%d", &p->port) != 1) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
		return -1;
	}
	snprintf(p->url, sizeof p->url, "http://127.0.0.1:%d", p->port);
	return 0;
}

int sim_terminate(struct sim_proc *p)
{
	int st;
	if (p->pid <= 0)
		return -1;
	kill(p->pid, SIGTERM);
	for (int i = 0; i < 1000; i++) {
		pid_t w = waitpid(p->pid, &st, WNOHANG);
		if (w == p->pid) {
			p->pid = 0;
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		usleep(10000);
	}
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &st, 0);
	p->pid = 0;
	return -1;
}

int sim_run_expect_exit(const char *const *args, char *err, size_t errlen)
{
	const char *argv[64];
	int fds[2], st;
	size_t len = 0;

	build_argv(argv, 64, args, 0);
	if (pipe(fds))
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		dup2(fds[1], 2);
		if (devnull >= 0)
			dup2(devnull, 1);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	uint64_t deadline = now_ns() + 5000000000ull;
	for (;;) {
		struct pollfd pf = {fds[0], POLLIN, 0};
		if (now_ns() >= deadline || poll(&pf, 1, 100) < 0)
			break;
		if (!(pf.revents & (POLLIN | POLLHUP)))
			continue;
		ssize_t got = read(fds[0], err + len, errlen - 1 - len);
		if (got <= 0)
			break;
		len += (size_t)got;
		if (len + 1 >= errlen)
			break;
	}
	err[len] = '\0';
	close(fds[0]);
	for (int i = 0; i < 500; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static size_t grow_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t nc = *cap ? *cap : 4096;
		while (nc < *len + n + 1)
			nc *= 2;
		char *nb = realloc(*buf, nc);
		if (!nb)
			return 0;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
	return n;
}

struct membuf {
	char *p;
	size_t len, cap;
};

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct membuf *m = arg;
	return grow_append(&m->p, &m->len, &m->cap, ptr, size * nmemb);
}

static struct curl_slist *make_headers(const char *const *headers, int json)
{
	struct curl_slist *h = NULL;
	if (json)
		h = curl_slist_append(h, "Content-Type: application/json");
	for (size_t i = 0; headers && headers[i]; i++)
		h = curl_slist_append(h, headers[i]);
	return h;
}

int http_do(const struct sim_proc *p, const char *path, const char *body,
	    const char *const *headers, struct http_reply *out)
{
	char url[512];
	struct membuf b = {NULL, 0, 0}, hb = {NULL, 0, 0};
	CURL *c = curl_easy_init();
	struct curl_slist *h = make_headers(headers, body != NULL);
	int rc;

	memset(out, 0, sizeof *out);
	if (!c)
		return -1;
	snprintf(url, sizeof url, "%s%s", p->url, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &hb);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (h)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	rc = (int)curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	out->body = b.p ? b.p : calloc(1, 1);
	out->len = b.len;
	out->headers = hb.p ? hb.p : calloc(1, 1);
	out->hlen = hb.len;
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return rc;
}

void http_reply_free(struct http_reply *r)
{
	free(r->body);
	free(r->headers);
	r->body = r->headers = NULL;
}

double prom_value(const char *text, const char *name)
{
	size_t nl = strlen(name);
	double sum = 0;
	int found = 0;
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		if (*line != '#' && !strncmp(line, name, nl) && (line[nl] == '{' || line[nl] == ' ')) {
			const char *v = line[nl] == '{' ? strchr(line + nl, '}') : line + nl;
			if (v) {
				sum += strtod(v + 1, NULL);
				found = 1;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return found ? sum : NAN;
}

double metric_now(const struct sim_proc *p, const char *name)
{
	struct http_reply r;
	double v = NAN;
	if (http_do(p, "/metrics", NULL, NULL, &r) == 0 && r.status == 200)
		v = prom_value(r.body, name);
	http_reply_free(&r);
	return v;
}

static void add_event(struct stream_result *r, const char *data, size_t n, uint64_t t)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 256;
		struct sse_event *ne = realloc(r->ev, cap * sizeof *ne);
		if (!ne)
			return;
		r->ev = ne;
		r->cap = cap;
	}
	struct sse_event *e = &r->ev[r->n++];
	e->t_ns = t;
	e->completion_tokens = -1;
	e->data = NULL;
	/* usage.completion_tokens without a JSON parser: the loads are large */
	const char *k = NULL;
	for (size_t i = 0; i + 19 < n; i++)
		if (data[i] == '"' && !memcmp(data + i, "\"completion_tokens\":", 20)) {
			k = data + i + 20;
			break;
		}
	if (k)
		e->completion_tokens = strtol(k, NULL, 10);
	if (r->keep) {
		e->data = malloc(n + 1);
		if (e->data) {
			memcpy(e->data, data, n);
			e->data[n] = '\0';
		}
	}
}

/* Splits complete events ("...\n\n") off the pending bytes. */
static size_t on_stream(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct stream_result *r = arg;
	size_t n = size * nmemb;
	uint64_t t = now_ns();
	if (!r->t_first_byte)
		r->t_first_byte = t;
	if (r->keep)
		grow_append(&r->raw, &r->rawlen, &r->rawcap, ptr, n);
	grow_append(&r->pending, &r->plen, &r->pcap, ptr, n);
	size_t start = 0;
	for (size_t i = 0; i + 1 < r->plen; i++) {
		if (r->pending[i] == '\n' && r->pending[i + 1] == '\n') {
			const char *ev = r->pending + start;
			size_t len = i - start;
			if (len >= 5 && !memcmp(ev, "data:", 5)) {
				ev += 5;
				len -= 5;
				if (len && *ev == ' ') {
					ev++;
					len--;
				}
				add_event(r, ev, len, t);
			}
			start = i + 2;
			i++;
		}
	}
	memmove(r->pending, r->pending + start, r->plen - start);
	r->plen -= start;
	return n;
}

static size_t on_stream_header(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct stream_result *r = arg;
	size_t n = size * nmemb, cap = r->headers ? r->hlen + 1 : 0;
	if (!r->t_first_byte)
		r->t_first_byte = now_ns();
	return grow_append(&r->headers, &r->hlen, &cap, ptr, n);
}

int stream_many(const struct sim_proc *p, const char *path, const char *const *bodies, size_t n,
		int keep, double max_s, tick_fn tick, void *arg, struct stream_result *out)
{
	char url[512];
	CURLM *m = curl_multi_init();
	CURL **h = calloc(n, sizeof *h);
	struct curl_slist *hdr = make_headers(NULL, 1);
	uint64_t t0 = now_ns();
	int running = 0;

	if (!m || !h)
		return -1;
	snprintf(url, sizeof url, "%s%s", p->url, path);
	curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].keep = keep;
		out[i].t_start = now_ns();
		h[i] = curl_easy_init();
		curl_easy_setopt(h[i], CURLOPT_URL, url);
		curl_easy_setopt(h[i], CURLOPT_POSTFIELDS, bodies[i]);
		curl_easy_setopt(h[i], CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h[i], CURLOPT_WRITEFUNCTION, on_stream);
		curl_easy_setopt(h[i], CURLOPT_WRITEDATA, &out[i]);
		curl_easy_setopt(h[i], CURLOPT_HEADERFUNCTION, on_stream_header);
		curl_easy_setopt(h[i], CURLOPT_HEADERDATA, &out[i]);
		curl_easy_setopt(h[i], CURLOPT_PRIVATE, &out[i]);
		curl_easy_setopt(h[i], CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(h[i], CURLOPT_FORBID_REUSE, 1L);
		curl_easy_setopt(h[i], CURLOPT_BUFFERSIZE, 512L * 1024);
		out[i].curl_code = -1;
		curl_multi_add_handle(m, h[i]);
	}
	uint64_t last_tick = 0;
	do {
		int nfds;
		curl_multi_perform(m, &running);
		CURLMsg *msg;
		int left;
		while ((msg = curl_multi_info_read(m, &left))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			struct stream_result *r;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			r->curl_code = (int)msg->data.result;
			r->t_end = now_ns();
			curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &r->status);
		}
		uint64_t t = now_ns();
		if ((double)(t - t0) / 1e9 > max_s)
			break;
		if (tick && t - last_tick > 10000000u) {
			last_tick = t;
			if (tick(arg, (double)(t - t0) / 1e9))
				break;
		}
		if (running)
			curl_multi_poll(m, NULL, 0, 10, &nfds);
	} while (running);
	for (size_t i = 0; i < n; i++) {
		if (out[i].curl_code < 0) {
			out[i].t_end = now_ns();
			curl_easy_getinfo(h[i], CURLINFO_RESPONSE_CODE, &out[i].status);
		}
		curl_multi_remove_handle(m, h[i]);
		curl_easy_cleanup(h[i]);
	}
	curl_slist_free_all(hdr);
	curl_multi_cleanup(m);
	free(h);
	return 0;
}

void stream_result_free(struct stream_result *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->ev[i].data);
	free(r->ev);
	free(r->raw);
	free(r->pending);
	free(r->headers);
	memset(r, 0, sizeof *r);
}

char *body_token_prompt(long context, int salt, long max_tokens, int stream, const char *extra)
{
	size_t cap = (size_t)context * 8 + 512, len = 0;
	char *b = malloc(cap);
	if (!b)
		return NULL;
	len += (size_t)snprintf(b + len, cap - len, "{\"model\":\"sim\",\"prompt\":[");
	for (long i = 0; i < context; i++)
		len += (size_t)snprintf(b + len, cap - len, i ? ",%ld" : "%ld",
					(i * 7919 + salt * 104729) % 60000);
	snprintf(b + len, cap - len, "],\"max_tokens\":%ld,\"stream\":%s%s%s}", max_tokens,
		 stream ? "true" : "false", extra ? "," : "", extra ? extra : "");
	return b;
}

static int rd(const unsigned char *b, size_t len, size_t *pos, size_t n, uint64_t *v)
{
	if (*pos + n > len)
		return -1;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v |= (uint64_t)b[*pos + i] << (8 * i);
	*pos += n;
	return 0;
}

int truth_read(const char *path, struct truth *t)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t len = 0, cap = 0, pos = 16;
	int rc = -1;

	memset(t, 0, sizeof *t);
	if (!f)
		return -1;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			unsigned char *nb = realloc(b, cap);
			if (!nb)
				goto cleanup;
			b = nb;
		}
		size_t got = fread(b + len, 1, cap - len, f);
		if (!got)
			break;
		len += got;
	}
	if (len < 16 || memcmp(b, "TTSIMTR1", 8))
		goto cleanup;
	while (pos < len) {
		uint64_t type = 0, v;
		if (rd(b, len, &pos, 1, &type))
			goto cleanup;
		if (type == 1) {
			struct truth_req q;
			memset(&q, 0, sizeof q);
			uint64_t cl;
			if (rd(b, len, &pos, 8, &q.id) || rd(b, len, &pos, 8, &q.arrival_ns) ||
			    rd(b, len, &pos, 4, &v))
				goto cleanup;
			q.prompt_tokens = (uint32_t)v;
			if (rd(b, len, &pos, 4, &v) || rd(b, len, &pos, 2, &cl) || pos + cl > len)
				goto cleanup;
			q.target_len = (uint32_t)v;
			memcpy(q.client_id, b + pos, cl < 95 ? cl : 95);
			pos += cl;
			struct truth_req *nr = realloc(t->reqs, (t->nreqs + 1) * sizeof *nr);
			if (!nr)
				goto cleanup;
			t->reqs = nr;
			t->reqs[t->nreqs++] = q;
		} else if (type == 2) {
			struct truth_chunk c;
			if (rd(b, len, &pos, 8, &c.id) || rd(b, len, &pos, 8, &c.emit_ns) ||
			    rd(b, len, &pos, 4, &v))
				goto cleanup;
			c.first = (uint32_t)v;
			if (rd(b, len, &pos, 4, &v))
				goto cleanup;
			c.count = (uint32_t)v;
			c.model_ns = malloc((c.count ? c.count : 1) * sizeof *c.model_ns);
			for (uint32_t i = 0; i < c.count; i++)
				if (rd(b, len, &pos, 8, &c.model_ns[i])) {
					free(c.model_ns);
					goto cleanup;
				}
			struct truth_chunk *nc = realloc(t->chunks, (t->nchunks + 1) * sizeof *nc);
			if (!nc) {
				free(c.model_ns);
				goto cleanup;
			}
			t->chunks = nc;
			t->chunks[t->nchunks++] = c;
		} else if (type == 3) {
			uint64_t id, ns, comp, cached, pre, out, st;
			if (rd(b, len, &pos, 8, &id) || rd(b, len, &pos, 8, &ns) ||
			    rd(b, len, &pos, 4, &comp) || rd(b, len, &pos, 4, &cached) ||
			    rd(b, len, &pos, 4, &pre) || rd(b, len, &pos, 1, &out) ||
			    rd(b, len, &pos, 2, &st))
				goto cleanup;
			for (size_t i = 0; i < t->nreqs; i++)
				if (t->reqs[i].id == id) {
					t->reqs[i].end_ns = ns;
					t->reqs[i].completion = (uint32_t)comp;
					t->reqs[i].cached = (uint32_t)cached;
					t->reqs[i].preemptions = (uint32_t)pre;
					t->reqs[i].outcome = (int)out;
					t->reqs[i].status = (int)st;
					t->reqs[i].ended = 1;
				}
		} else if (type == 4) { /* version 2: QUEUE, before the END */
			uint64_t id, admit, passed;
			if (rd(b, len, &pos, 8, &id) || rd(b, len, &pos, 8, &admit) ||
			    rd(b, len, &pos, 4, &passed))
				goto cleanup;
			for (size_t i = 0; i < t->nreqs; i++)
				if (t->reqs[i].id == id) {
					t->reqs[i].admit_ns = admit;
					t->reqs[i].passed_steps = (uint32_t)passed;
				}
		} else {
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	free(b);
	fclose(f);
	return rc;
}

void truth_free(struct truth *t)
{
	for (size_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i].model_ns);
	free(t->chunks);
	free(t->reqs);
	memset(t, 0, sizeof *t);
}

const struct truth_req *truth_find(const struct truth *t, uint64_t id)
{
	for (size_t i = 0; i < t->nreqs; i++)
		if (t->reqs[i].id == id)
			return &t->reqs[i];
	return NULL;
}

struct sim_proc sim_start_ok(const char *const *args)
{
	struct sim_proc p;
	assert_int_equal(sim_spawn(&p, args), 0);
	return p;
}

void sim_stop_ok(struct sim_proc *p)
{
	assert_int_equal(sim_terminate(p), 0);
}

int truth_chunk_cmp(const void *a, const void *b)
{
	const struct truth_chunk *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

void truth_sort_chunks(struct truth *t)
{
	qsort(t->chunks, t->nchunks, sizeof *t->chunks, truth_chunk_cmp);
}
