/* tokentrace-sim: the server object main.c creates and the API layer
 * (api_*.c) works on: one thread, one libevent loop.  The engine
 * (engine.c) advances in steps on an absolute CLOCK_MONOTONIC timeline and
 * hands its tokens up through hooks; the API layer turns the tokens each
 * request has produced into SSE chunks when the loop gets to it, so a late
 * loop yields merged chunks but never a drifting schedule.  Header only. */
#ifndef TT_SIM_SERVER_H
#define TT_SIM_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "metrics.h"
#include "sim_config.h"
#include "sim_req.h"
#include "truth.h"

struct event_base;
struct event;
struct closing;
struct evhttp;
struct evbuffer;

struct sim_server {
	struct sim_config cfg;
	struct event_base *base;
	struct evhttp *http;
	struct event *flush_ev, *flush_pause_ev, *sigterm_ev, *sigint_ev, *runtime_ev;
	int port;
	struct engine eng;
	struct sim_metrics m;
	struct truth_log truth;
	uint64_t next_req_id;
	uint64_t rng;              /* fault draws (faults.c) */
	double start_unix;         /* for the _created samples */
	/* requests with tokens to send, a FIFO: api_request.c adds, the
	 * output pass (api_stream.c, stream_flush) takes from the head */
	struct sim_req **dirty;
	size_t dirty_head, ndirty, dirty_cap;
	uint64_t steps_since_flush; /* engine steps since the last output pass */
	struct sim_req **live;  /* every request not yet freed, for shutdown */
	size_t nlive, live_cap;
	int shutting_down;
	uint64_t cur_arrival_ns;   /* first byte of the request being handled */
	struct evbuffer *scratch;  /* reused to build rare bodies */
	char *ob;                  /* reused to build each chunk */
	size_t oblen, obcap;
	struct closing *closing;   /* connections to close silently (api_request.c) */
	uint64_t silent_closes;    /* connections closed so (/sim/stats) */
	uint64_t silent_dropped;   /* requests that came on one, unanswered */
};

#endif
