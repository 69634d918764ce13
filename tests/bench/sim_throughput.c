/* tokentrace-sim throughput benchmark (run on demand; prints figures).
 *
 * usage: sim_throughput [STREAMS [SECONDS [extra simulator flags...]]]
 * environment: TT_BENCH_RATE=tokens/s asked (default 1000000),
 *              TT_BENCH_PIN=0 to leave placement to the scheduler,
 *              TT_BENCH_RT=1 to run the simulator SCHED_FIFO (needs root)
 *
 * 1. Measures what one core can push through loopback: one write() per
 *    SSE-sized chunk, and 64 KiB writes (the ceiling for merged chunks).
 * 2. Starts tokentrace-sim (one thread) pinned to CPU 0, unless
 *    TT_BENCH_PIN=0, with a parametric step time that
 *    asks for 1,000,000 tokens/s over STREAMS streams (default 256), drains
 *    the streams from CPU 1 with plain sockets, and reports the tokens/s
 *    the simulator emitted, tokens per chunk, step lateness p50/p99/max
 *    against the model's schedule, and the simulator's CPU seconds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_BYTES 230 /* a one-token vLLM completions chunk with usage */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int pinning = 1;
static double rate = 1e6; /* tokens/s the model asks for (TT_BENCH_RATE) */

static void pin(int cpu)
{
	cpu_set_t set;
	if (!pinning)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

static int listen_any(int *port)
{
	struct sockaddr_in a;
	socklen_t l = sizeof a;
	int s = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) || listen(s, 1024) ||
	    getsockname(s, (struct sockaddr *)&a, &l))
		return -1;
	*port = ntohs(a.sin_port);
	return s;
}

static int connect_port(int port)
{
	struct sockaddr_in a;
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a)) {
		if (s >= 0)
			close(s);
		return -1;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return s;
}

/* One core writing `size`-byte messages, one write() each, for `secs`;
 * the reader drains on the other core.  Returns messages per second. */
static double loopback_rate(size_t size, double secs, double *mbps)
{
	int port, ls = listen_any(&port);
	if (ls < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		pin(0);
		int s = connect_port(port);
		char *buf = calloc(1, size);
		uint64_t end = now_ns() + (uint64_t)(secs * 1e9), n = 0;
		while (s >= 0 && buf && now_ns() < end) {
			for (int i = 0; i < 64; i++)
				if (write(s, buf, size) < 0)
					_exit(1);
			n += 64;
		}
		_exit(0);
	}
	pin(1);
	int c = accept(ls, NULL, NULL);
	static char rbuf[1 << 20];
	uint64_t bytes = 0, t0 = now_ns();
	for (;;) {
		ssize_t got = read(c, rbuf, sizeof rbuf);
		if (got <= 0)
			break;
		bytes += (uint64_t)got;
	}
	double dt = (double)(now_ns() - t0) / 1e9;
	waitpid(pid, NULL, 0);
	close(c);
	close(ls);
	*mbps = (double)bytes / dt / 1e6;
	return (double)bytes / (double)size / dt;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The floor under any step lateness here: a bare loop sleeping on a timerfd
 * to absolute deadlines `period_ns` apart, on CPU 0 (as the simulator),
 * 1 ns timer slack, no work at all. */
static void timer_floor(uint64_t period_ns, int n)
{
	uint64_t *lat = calloc((size_t)n, sizeof *lat);
	int fd = timerfd_create(CLOCK_MONOTONIC, 0), within = 0;
	pid_t pid;
	if (!lat || fd < 0)
		return;
	pid = fork();
	if (pid == 0) {
		pin(0);
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
		uint64_t t = now_ns() + period_ns;
		for (int i = 0; i < n; i++) {
			struct itimerspec its = {{0, 0}, {(time_t)(t / 1000000000u),
							  (long)(t % 1000000000u)}};
			uint64_t x;
			timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
			if (read(fd, &x, sizeof x) < 0)
				_exit(1);
			lat[i] = now_ns() - t;
			t += period_ns;
		}
		qsort(lat, (size_t)n, sizeof *lat, cmp_u64);
		for (int i = 0; i < n; i++)
			within += lat[i] < 100000;
		printf("timer floor, CPU 0, bare timerfd every %.3f ms: lateness p50 %.0f us, "
		       "p99 %.0f us, max %.0f us, %.2f%% within 100 us\n", (double)period_ns / 1e6,
		       (double)lat[n / 2] / 1e3, (double)lat[n * 99 / 100] / 1e3,
		       (double)lat[n - 1] / 1e3, 100.0 * within / n);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	close(fd);
	free(lat);
}

struct sim {
	pid_t pid;
	int port;
};

static int start_sim(struct sim *s, char **extra, int nextra, int streams)
{
	int fds[2];
	char buf[256];
	size_t len = 0;
	if (pipe(fds))
		return -1;
	s->pid = fork();
	if (s->pid == 0) {
		const char *argv[64];
		int k = 0;
		pin(0);
		if (getenv("TT_BENCH_RT")) {
			/* real-time priority: shows the simulator's own lateness on a
			 * machine where other work would otherwise preempt it */
			struct sched_param sp = {.sched_priority = 10};
			if (sched_setscheduler(0, SCHED_FIFO, &sp))
				perror("sched_setscheduler");
		}
		dup2(fds[1], 1);
		close(fds[0]);
		argv[k++] = TT_SIM_PATH;
		argv[k++] = "--port";
		argv[k++] = "0";
		argv[k++] = "--max-runtime";
		argv[k++] = "300";
		argv[k++] = "--max-num-seqs";
		static char seqs[16];
		snprintf(seqs, sizeof seqs, "%d", streams);
		argv[k++] = seqs;
		/* streams x tokens per step / step time = 1,000,000 tokens/s */
		static char step[32];
		snprintf(step, sizeof step, "%.6f", streams * 1000.0 / rate);
		argv[k++] = "--step-base-ms";
		argv[k++] = step;
		argv[k++] = "--per-seq-ms";
		argv[k++] = "0";
		argv[k++] = "--per-ctx-token-ns";
		argv[k++] = "0";
		argv[k++] = "--max-model-len";
		argv[k++] = "4M";
		argv[k++] = "--kv-capacity";
		argv[k++] = "64M";
		for (int i = 0; i < nextra && k < 62; i++)
			argv[k++] = extra[i];
		argv[k] = NULL;
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while (len + 1 < sizeof buf) {
		ssize_t got = read(fds[0], buf + len, sizeof buf - 1 - len);
		if (got <= 0)
			break;
		len += (size_t)got;
		if (memchr(buf, '\n', len))
			break;
	}
	buf[len] = '\0';
	close(fds[0]);
	return sscanf(buf, "tokentrace-sim listening on http://127.0.0.1:%d", &s->port) == 1 ? 0 : -1;
}

/* GET path; returns the body in buf. */
static int http_get(int port, const char *path, char *buf, size_t cap)
{
	int s = connect_port(port);
	char req[256];
	size_t len = 0;
	if (s < 0)
		return -1;
	snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
	if (write(s, req, strlen(req)) < 0) {
		close(s);
		return -1;
	}
	for (;;) {
		ssize_t got = read(s, buf + len, cap - 1 - len);
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	buf[len] = '\0';
	close(s);
	char *body = strstr(buf, "\r\n\r\n");
	if (body)
		memmove(buf, body + 4, strlen(body + 4) + 1);
	return 0;
}

static double json_num(const char *j, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(j, k);
	return p ? strtod(p + strlen(k), NULL) : -1;
}

static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long ut = 0, st = 0;
	/* fields 14 and 15 (utime, stime) after the command name */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int main(int argc, char **argv)
{
	int streams = argc > 1 ? atoi(argv[1]) : 256;
	double secs = argc > 2 ? atof(argv[2]) : 5.0;
	double mb1, mb2;
	struct sim sim;
	static char buf[1 << 16];

	if (streams < 1 || streams > 4096 || !(secs > 0)) {
		fprintf(stderr, "usage: sim_throughput [STREAMS [SECONDS [sim flags...]]]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/* On a machine shared with other work, a pinned simulator waits for its
	 * core while another is idle: TT_BENCH_PIN=0 lets the scheduler place
	 * it (it is one thread, so it still uses at most one core). */
	const char *pe = getenv("TT_BENCH_PIN");
	pinning = !pe || strcmp(pe, "0");
	const char *re = getenv("TT_BENCH_RATE");
	if (re && atof(re) > 0)
		rate = atof(re);
	double small = loopback_rate(CHUNK_BYTES, 1.0, &mb1);
	loopback_rate(65536, 1.0, &mb2);
	timer_floor((uint64_t)(streams * 1e9 / rate), 4000);
	printf("loopback, one core writing: %.0f writes/s of %d B (%.0f MB/s); %.0f MB/s in 64 KiB writes\n",
	       small, CHUNK_BYTES, mb1, mb2);

	if (start_sim(&sim, argv + 3, argc > 3 ? argc - 3 : 0, streams)) {
		fprintf(stderr, "error: cannot start %s\n", TT_SIM_PATH);
		return 1;
	}
	pin(1);
	int ep = epoll_create1(0);
	const char *body = "{\"prompt\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17],"
			   "\"max_tokens\":3000000,\"ignore_eos\":true,\"stream\":true,"
			   "\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}}";
	int *fds = calloc((size_t)streams, sizeof *fds);
	for (int i = 0; i < streams; i++) {
		char req[1024];
		fds[i] = connect_port(sim.port);
		snprintf(req, sizeof req, "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
			 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
			 strlen(body), body);
		if (fds[i] < 0 || write(fds[i], req, strlen(req)) < 0) {
			fprintf(stderr, "error: cannot open stream %d\n", i);
			return 1;
		}
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
		struct epoll_event ev = {EPOLLIN, {.fd = fds[i]}};
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	uint64_t t_start = now_ns(), bytes = 0, t_w0 = 0, t_w1;
	double warm = 1.0, cpu0 = 0, self0 = 0, tok0 = 0, chunks0 = 0, steps0 = 0;
	char stats[4096];
	int phase = 0;
	for (;;) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 5);
		for (int i = 0; i < n; i++) {
			for (;;) {
				ssize_t got = read(evs[i].data.fd, buf, sizeof buf);
				if (got <= 0)
					break;
				bytes += (uint64_t)got;
			}
		}
		uint64_t t = now_ns();
		if (phase == 0 && (double)(t - t_start) / 1e9 >= warm) {
			http_get(sim.port, "/sim/stats?reset=1", stats, sizeof stats);
			tok0 = json_num(stats, "emitted_tokens");
			chunks0 = json_num(stats, "chunks");
			steps0 = json_num(stats, "steps");
			cpu0 = proc_cpu_s(sim.pid);
			self0 = proc_cpu_s(getpid());
			t_w0 = now_ns();
			phase = 1;
		} else if (phase == 1 && (double)(t - t_w0) / 1e9 >= secs) {
			break;
		}
	}
	http_get(sim.port, "/sim/stats", stats, sizeof stats);
	t_w1 = now_ns();
	double cpu1 = proc_cpu_s(sim.pid);
	double self1 = proc_cpu_s(getpid());
	double dt = (double)(t_w1 - t_w0) / 1e9;
	double tok = json_num(stats, "emitted_tokens") - tok0;
	double chunks = json_num(stats, "chunks") - chunks0;
	double steps = json_num(stats, "steps") - steps0;
	kill(sim.pid, SIGTERM);
	for (int i = 0; i < streams; i++)
		close(fds[i]);
	free(fds);
	close(ep);
	int st;
	struct rusage ru;
	wait4(sim.pid, &st, 0, &ru);
	double cpu_total = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			   (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;

	printf("simulator: %d streams, model asks %.0f tok/s (step %.3f ms), window %.1f s, %s\n",
	       streams, rate, streams * 1000.0 / rate, dt, pinning ? "pinned to CPU 0" : "not pinned");
	printf("  emitted   %.0f tokens/s in %.0f chunks/s (%.1f tokens per chunk), %.0f steps/s\n",
	       tok / dt, chunks / dt, chunks > 0 ? tok / chunks : 0, steps / dt);
	printf("  lateness  p50 %.0f us, p99 %.0f us, max %.0f us, %.2f%% of steps within 100 us "
	       "(step end vs the model's schedule)\n",
	       json_num(stats, "lateness_p50_us"), json_num(stats, "lateness_p99_us"),
	       json_num(stats, "lateness_max_us"), 100 * json_num(stats, "lateness_within_100us"));
	printf("  cpu       %.2f s in the window (%.0f%% of one core); %.2f s over the whole run "
	       "(getrusage), exit %d\n", cpu1 - cpu0, 100 * (cpu1 - cpu0) / dt, cpu_total,
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	printf("  client    received %.0f MB/s, used %.0f%% of its core\n",
	       (double)bytes / ((double)(t_w1 - t_start) / 1e9) / 1e6, 100 * (self1 - self0) / dt);
	printf("  ratio     %.2f of the asked rate; %.2f of the loopback limit for one write per chunk "
	       "(%.0f chunks/s)\n", tok / dt / rate, chunks / dt / small, small);
	return 0;
}
