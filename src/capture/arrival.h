/* Arrival timing: when the bytes of a response reached this machine
 * (docs/capture.md, "Timestamps").  Kernel receive stamps read with a
 * non-consuming peek right before libcurl reads a socket, the byte counts
 * that tie them to the bytes libcurl hands over, and the end-of-request
 * checks (TCP_INFO, wall-clock steps) that fall back to later times. */
#ifndef TT_CAPTURE_ARRIVAL_H
#define TT_CAPTURE_ARRIVAL_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/trace.h"

/* What a socket held when we looked, before libcurl read it: the kernel's
 * receive stamp of the newest of those bytes (SO_TIMESTAMPNS, read with a
 * non-consuming MSG_PEEK|MSG_TRUNC), else the moment we looked.  Either way
 * every one of those bytes had arrived by then.  `covered` counts down as
 * libcurl hands the socket's bytes over (raw: headers + undecoded body), so
 * bytes that arrived after the look never get the earlier time. */
struct fd_stamp {
	uint64_t wake;
	uint64_t id;    /* this look's number (timing.looks): pieces that share it
			 * share its stamp */
	int64_t t;
	int64_t looked; /* when we looked (t's fallback, see struct req_timing) */
	size_t covered;
	int kernel;     /* t is the kernel's receive stamp */
	void *user;     /* the transfer on this socket (xfer.c: set when its
			 * request goes out, to settle it before a close) */
};

/* How chunk arrival times were taken (docs/capture.md, "Timestamps"). */
enum stamp_src { STAMP_KERNEL, STAMP_WAKE, STAMP_CALLBACK, STAMP_N };

/* A chunk's other upper bounds of arrival: when we looked (valid while
 * the byte count holds) and when libcurl's callback ran (always valid). */
struct chunk_fallback {
	int64_t looked, callback;
};

/* The arrival of a piece of bytes: its time t, taken as src says, and its
 * fallbacks (equal to t for a piece timed by the callback). */
struct arrival {
	int64_t t;
	uint64_t id;    /* the look (or callback) the time came from: chunks with
			 * one id got one stamp (TT_TIMING_SHARED) */
	enum stamp_src src;
	struct chunk_fallback fb;
};
enum { FALLBACK_NONE, FALLBACK_LOOKED, FALLBACK_CALLBACK };

/* The timing state of one capture: every socket's last look, the loop's
 * wakes, the wall-clock mapping, and what was counted. */
struct timing {
	struct fd_stamp *stamps;    /* by socket: bytes waiting at the last wake */
	size_t n_stamps;
	uint64_t wake;              /* counts epoll wakes (net_loop.c) */
	int cur_fd;                 /* socket libcurl is acting on; -1 none */
	uint64_t void_wake;         /* no byte count holds in this wake */
	int clock_fd;               /* wall-clock step detector (timerfd) */
	uint64_t clock_steps;       /* steps seen (clock_stepped) */
	int64_t real_off;           /* CLOCK_REALTIME - MONOTONIC (real_offset) */
	int real_off_known;         /* real_off holds (until a wall-clock step) */
	uint64_t real_off_tried;    /* wake of the last try */
	int *port_fd;               /* local end (local_key) -> socket; -1 none */
	int64_t stamps_by_src[STAMP_N]; /* chunks recorded, by how timed */
	int64_t settled_ooo, settled_miscount, settled_unknown, settled_clock; /* requests */
	uint64_t looks;             /* numbers looks and callback pieces (arrival.id) */
	int sched_fd;               /* /proc/thread-self/schedstat of the loop's
				     * thread; -1 unknown */
	/* arrival_cpu_wait at the last three wakes with work (net_step),
	 * newest first; -1 unknown.  A socket read at wake k had no data
	 * when wake k-1 gathered its ready sockets, so the wait that can have
	 * delayed its read lies after wake k-2's sample. */
	int64_t wait_wake[3];
};

/* The timing state of one request.  A kernel stamp is the receive time of
 * the newest packet among the bytes; after a lost packet the kernel queues
 * later packets until the retransmission arrives, and their stamps are
 * older than the moment the bytes could be read.  So each chunk also keeps
 * its fallbacks, and a request that fails the checks at its end is
 * recorded with those (arrival_settle). */
struct req_timing {
	int fd;                 /* the connection's socket (from its local port,
				 * in arrival_request_sent); -1 not known */
	/* raw body (plain http, generation): libcurl hands over the bytes as
	 * they came off the socket (see struct fd_stamp) */
	int raw;
	int64_t by_src[STAMP_N]; /* this request's chunks by how timed; added
				  * to the capture's when recorded */
	/* The byte counting is checked too: libcurl must have handed over, raw,
	 * exactly the bytes the kernel says the connection read meanwhile. */
	uint32_t ooo0;          /* connection's out-of-order packets at the send */
	uint64_t read0;         /* connection's bytes read by then */
	uint64_t fed;           /* raw bytes libcurl handed over since */
	int counts_known;       /* ooo0 and read0 were read (local_key's socket) */
	int local_key;          /* local end of its connection (local_key) */
	uint64_t steps0;        /* wall-clock steps seen by the send */
	int settled;            /* arrival_settle ran */
	int use_fallback;       /* settled: FALLBACK_LOOKED (out of order) or
				 * FALLBACK_CALLBACK (miscounted, unknown) */
};

/* The calling thread's run delay so far (ns it was runnable but waiting
 * for a CPU: /proc/thread-self/schedstat, opened by arrival_init on the
 * loop's thread); -1 unknown. */
int64_t arrival_cpu_wait(struct timing *c);
/* Wall-clock steps noticed so far (checks for a new one first). */
uint64_t arrival_clock_steps(struct timing *c);
/* Arm the wall-clock step detector; cur_fd and clock_fd start at -1.
 * Called on the thread that runs the loop. */
void arrival_init(struct timing *c);
void arrival_release(struct timing *c);
/* A connection's local end as a number: its port, plus 65536 for IPv6
 * (an IPv4 and an IPv6 connection may share a port); -1 unknown. */
int local_key(int ipv6, int port);
/* Ask the kernel to stamp what socket fd receives (SO_TIMESTAMPNS). */
void arrival_stamp_socket(int fd);
/* libcurl watches socket s (is_new: not seen since it was registered):
 * room for its stamp, and its local end mapped to it. */
void arrival_socket(struct timing *c, int s, int is_new);
/* A request goes out on the connection with local end `key`: find its
 * socket, note `user` on it, read the connection's counts. */
void arrival_request_sent(struct timing *c, struct req_timing *x, int key, void *user);
/* Right before libcurl reads socket fd: how many bytes it holds, and the
 * kernel's receive stamp of the newest of them (struct fd_stamp). */
void peek_socket(struct timing *c, int fd);
/* The arrival of the next n bytes libcurl hands over for a request, as they
 * came off its socket: the first *n_early of them arrived as *early says;
 * the rest, if any, by the time returned (the callback's: now). */
int64_t piece_time(struct timing *c, struct req_timing *x, size_t n, struct arrival *early,
		   size_t *n_early);
/* At the end of a generation request, while its connection is still open:
 * check it, and move its chunks to their fallback times if it fails. */
void arrival_settle(struct timing *c, struct req_timing *x, struct tt_chunk *chunks,
		    const struct chunk_fallback *fallback, size_t n_chunks);

#endif
