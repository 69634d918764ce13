/* Arrival timing (docs/capture.md, "Timestamps"): right before libcurl
 * reads a readable socket, it is asked, without consuming anything, how many
 * bytes it holds and when the newest of them arrived (the kernel's receive
 * stamp).  Bytes libcurl then hands over from that socket carry that time
 * as long as they are within the bytes counted; anything beyond carries the
 * time the write callback ran.  None is earlier than the packet carrying
 * the bytes reached this machine.  At a request's end its connection's
 * TCP_INFO and the wall clock decide whether the stamps stand. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "arrival.h"
#include "monotonic.h"
#include "tcpinfo.h"

#define LOCAL_KEYS (2 * 65536)
int local_key(int ipv6, int port)
{
	return port > 0 && port < 65536 ? port + (ipv6 ? 65536 : 0) : -1;
}

static int local_key_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return local_key(0, ntohs(((struct sockaddr_in *)&ss)->sin_port));
	if (ss.ss_family == AF_INET6)
		return local_key(1, ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	return -1;
}

/* Has the wall clock been set (stepped) since we last asked?  A timerfd on
 * CLOCK_REALTIME armed with TFD_TIMER_CANCEL_ON_SET is cancelled by every
 * step, leap seconds included.  Unknown counts as stepped.  Each step
 * counts in c->clock_steps: a request during which it grew cannot trust
 * its wall-clock-mapped kernel stamps (arrival_settle). */
static int clock_stepped(struct timing *c)
{
	struct itimerspec its;
	uint64_t ticks;

	if (c->clock_fd >= 0 && read(c->clock_fd, &ticks, sizeof ticks) < 0 && errno == EAGAIN)
		return 0;
	if (c->clock_fd < 0)
		c->clock_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->clock_fd < 0)
		return 1;
	memset(&its, 0, sizeof its);
	clock_gettime(CLOCK_REALTIME, &its.it_value);
	its.it_value.tv_sec += 10L * 365 * 86400; /* never fires */
	if (timerfd_settime(c->clock_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) != 0) {
		close(c->clock_fd);
		c->clock_fd = -1;
		return 1;
	}
	c->real_off_known = 0; /* the offset is from before */
	c->clock_steps++;
	return 1;
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, for mapping the kernel's receive
 * stamps (wall clock) onto ours.  The two clocks run at one rate (NTP
 * slews both), so the offset holds until the wall clock is stepped
 * (clock_stepped forgets it; a request spanning a step is settled with
 * callback times).  Read between two monotonic readings and kept only when
 * they are at most 1 us apart: a read interrupted in the middle would be
 * off by the interruption.  At most one try (4 readings) per wake; 0 while
 * unknown: the bytes then get the time we looked. */
static int real_offset(struct timing *c)
{
	if (c->real_off_known || c->real_off_tried == c->wake)
		return c->real_off_known;
	c->real_off_tried = c->wake;
	for (int i = 0; i < 4; i++) {
		struct timespec rt;
		int64_t a = now_ns(), b;
		clock_gettime(CLOCK_REALTIME, &rt);
		b = now_ns();
		if (b - a <= 1000) {
			/* against the later monotonic reading: the offset can only
			 * come out low, so mapped stamps only late (by < 1 us) */
			c->real_off = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec - b;
			c->real_off_known = 1;
			break;
		}
	}
	return c->real_off_known;
}

/* Right before libcurl reads socket fd: how many bytes it holds, and the
 * kernel's receive stamp of the newest of them (struct fd_stamp).  Done
 * per socket, not for all at the wake: the stamp does not depend on when
 * we look, and looking late counts in the bytes that came meanwhile. */
void peek_socket(struct timing *c, int fd)
{
	union { /* aligned for the cmsghdr read from it */
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {NULL, INT_MAX / 2};
	struct msghdr mh;
	ssize_t r;
	struct fd_stamp *st;

	if (fd < 0 || (size_t)fd >= c->n_stamps)
		return;
	memset(&mh, 0, sizeof mh);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof cbuf.buf;
	/* counts the bytes without copying or consuming them */
	r = recvmsg(fd, &mh, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	if (r <= 0)
		return;
	st = &c->stamps[fd];
	st->wake = c->wake;
	st->id = ++c->looks;
	st->covered = (size_t)r;
	st->t = st->looked = now_ns();
	st->kernel = 0;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		struct timespec ts;
		int64_t k;
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		if (!real_offset(c))
			continue;
		memcpy(&ts, CMSG_DATA(cm), sizeof ts);
		k = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - c->real_off;
		/* no later than we looked, and at most 1 s old; a wall-clock
		 * step during the request is caught at its end (settle) */
		if (k <= st->t && k > st->t - 1000000000) {
			st->t = k;
			st->kernel = 1;
		}
	}
}

/* The arrival of the next n bytes libcurl hands over for x, as they came
 * off its socket (see struct fd_stamp): the first *n_early of them arrived
 * as *early says; the rest, if any, by the time returned (the callback's:
 * now).  Pieces that are not raw socket bytes (TLS, decoded bodies) are
 * all "the rest".  Times are CLOCK_MONOTONIC. */
int64_t piece_time(struct timing *c, struct req_timing *x, size_t n, struct arrival *early,
		   size_t *n_early)
{
	int64_t t = now_ns();

	*n_early = 0;
	if (x->raw)
		x->fed += n; /* header lines and undecoded body: socket bytes */
	/* Only while libcurl acts on this transfer's own socket.  It also runs
	 * other transfers inside one socket action (expired timers); what they
	 * read off their own sockets then was not counted off, so those counts
	 * are void for the rest of the wake. */
	if (x->fd >= 0 && (size_t)x->fd < c->n_stamps) {
		struct fd_stamp *st = &c->stamps[x->fd];
		if (x->fd == c->cur_fd && st->wake == c->wake && c->void_wake != c->wake && x->raw &&
		    st->covered > 0) {
			*n_early = n < st->covered ? n : st->covered;
			st->covered -= *n_early;
			early->src = st->kernel ? STAMP_KERNEL : STAMP_WAKE;
			early->id = st->id;
			early->t = st->t < t ? st->t : t;
			early->fb.looked = st->looked < t ? st->looked : t;
			early->fb.callback = t;
		} else {
			st->covered = 0;
		}
	} else if (x->fd < 0) {
		c->void_wake = c->wake; /* a socket we cannot name was read */
	}
	return t;
}

/* At the end of a request, while its connection is still open (see
 * closesocket_cb in xfer.c for a connection libcurl closes first): if the
 * connection received packets out of order since the request went out (or
 * that cannot be known), its kernel-stamped chunks take the time we looked
 * instead (see struct req_timing). */
void arrival_settle(struct timing *c, struct req_timing *x, struct tt_chunk *chunks,
		    const struct chunk_fallback *fallback, size_t n_chunks)
{
	struct tcp_counts tc;
	int64_t prev = INT64_MIN;

	/* Once per request, whenever counted bytes were handed over: an event
	 * still to come (tt_sse_end in gen_record, xfer.c) keeps its stamp
	 * only if the request passed. */
	if (!x->raw || x->settled || !x->fed)
		return;
	x->settled = 1;
	/* A wrong or unknown count voids the looked times too (they rest on
	 * it): the callback's times are bounds whatever happened. */
	(void)clock_stepped(c);
	if (c->clock_steps != x->steps0) {
		c->settled_clock++;
		x->use_fallback = FALLBACK_CALLBACK;
	} else if (!x->counts_known || x->fd < 0 || local_key_of(x->fd) != x->local_key ||
		   tcp_counts(x->fd, &tc) != 0) {
		c->settled_unknown++;
		x->use_fallback = FALLBACK_CALLBACK;
	} else if (tc.bytes_read - x->read0 != x->fed) {
		c->settled_miscount++;
		x->use_fallback = FALLBACK_CALLBACK;
	} else if (tc.ooo_packets != x->ooo0) {
		c->settled_ooo++;
		x->use_fallback = FALLBACK_LOOKED;
	} else {
		return;
	}
	for (size_t i = 0; i < n_chunks; i++) {
		int64_t t = x->use_fallback == FALLBACK_LOOKED ? fallback[i].looked
							       : fallback[i].callback;
		if (t < prev)
			t = prev;
		chunks[i].t_ns = prev = t;
	}
	{ /* the chunks moved now count as timed by their fallback */
		int64_t moved = x->by_src[STAMP_KERNEL];
		x->by_src[STAMP_KERNEL] = 0;
		if (x->use_fallback == FALLBACK_CALLBACK) {
			moved += x->by_src[STAMP_WAKE];
			x->by_src[STAMP_WAKE] = 0;
		}
		x->by_src[x->use_fallback == FALLBACK_LOOKED ? STAMP_WAKE : STAMP_CALLBACK] += moved;
	}
}

int64_t arrival_cpu_wait(struct timing *c)
{
	char buf[96];
	ssize_t n;
	unsigned long long run, wait;

	if (c->sched_fd < 0)
		return -1;
	/* "<ns on the CPU> <ns runnable, waiting for it> <times run>" */
	n = pread(c->sched_fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2 || wait > INT64_MAX)
		return -1;
	return (int64_t)wait;
}

uint64_t arrival_clock_steps(struct timing *c)
{
	(void)clock_stepped(c);
	return c->clock_steps;
}

void arrival_init(struct timing *c)
{
	c->cur_fd = -1;
	c->clock_fd = -1;
	(void)clock_stepped(c); /* arms the step detector */
	/* this thread's own, read with pread at each request's send, first
	 * chunk and end (about 2 us each) */
	c->sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (c->sched_fd >= 0 && arrival_cpu_wait(c) < 0) {
		close(c->sched_fd);
		c->sched_fd = -1;
	}
}

void arrival_release(struct timing *c)
{
	free(c->stamps);
	c->stamps = NULL;
	free(c->port_fd);
	c->port_fd = NULL;
	if (c->clock_fd >= 0)
		close(c->clock_fd);
	c->clock_fd = -1;
	if (c->sched_fd >= 0)
		close(c->sched_fd);
	c->sched_fd = -1;
	c->n_stamps = 0;
}

/* Every connection asks the kernel to stamp what it receives. */
void arrival_stamp_socket(int fd)
{
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

void arrival_socket(struct timing *c, int s, int is_new)
{
	if ((size_t)s >= c->n_stamps && s < 1 << 20) {
		size_t nn = ((size_t)s + 1) * 2;
		struct fd_stamp *ns = realloc(c->stamps, nn * sizeof *ns);
		if (ns) {
			memset(ns + c->n_stamps, 0, (nn - c->n_stamps) * sizeof *ns);
			c->stamps = ns;
			c->n_stamps = nn;
		}
	}
	if (is_new) {
		/* A new socket (maybe on a reused number), or a kept-alive
		 * connection taken up again (its `user` stays: closesocket_cb
		 * and xfer_detach clear it).  Local end -> socket, for
		 * arrival_request_sent (connect() has bound it). */
		int key = local_key_of(s);
		if ((size_t)s < c->n_stamps)
			c->stamps[s].covered = 0;
		if (!c->port_fd) {
			c->port_fd = malloc(LOCAL_KEYS * sizeof *c->port_fd);
			if (c->port_fd)
				memset(c->port_fd, 0xff, LOCAL_KEYS * sizeof *c->port_fd); /* all -1 */
		}
		if (c->port_fd && key >= 0)
			c->port_fd[key] = s;
	}
}

void arrival_request_sent(struct timing *c, struct req_timing *x, int key, void *user)
{
	/* which socket the transfer runs on: libcurl says only the address */
	x->fd = key >= 0 && c->port_fd ? c->port_fd[key] : -1;
	x->local_key = key;
	if (x->fd >= 0 && (size_t)x->fd < c->n_stamps) {
		c->stamps[x->fd].covered = 0; /* nothing of this answer was there */
		c->stamps[x->fd].user = user;  /* for closesocket_cb */
	}
	x->fed = 0;
	x->counts_known = 0;
	(void)clock_stepped(c);
	x->steps0 = c->clock_steps;
	if (x->fd >= 0) {
		struct tcp_counts tc;
		if (tcp_counts(x->fd, &tc) == 0) {
			x->ooo0 = tc.ooo_packets;
			x->read0 = tc.bytes_read;
			x->counts_known = 1;
		}
	}
}
