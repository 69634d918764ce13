/* The event loop: libcurl's multi handle driven through epoll, and a
 * blocking fetch built on it for the probes. */
#ifndef TT_CAPTURE_NET_LOOP_H
#define TT_CAPTURE_NET_LOOP_H

#include "tokentrace/error.h"
#include "xfer.h"

enum tt_code net_init(struct net *c, struct tt_error *err);
/* Frees every transfer put back, the multi handle and the timing state. */
void net_cleanup(struct net *c);
/* One turn of the loop: wait up to timeout_ms for activity, then run
 * libcurl and the done callbacks. */
void net_step(struct net *c, int timeout_ms);
/* Blocking helper for probes: GET or POST path, response into x->resp.
 * Returns the transfer (caller puts it back) or NULL with err set when no
 * response came. */
struct xfer *net_fetch(struct net *c, const char *path, const char *body, double timeout_s,
		       struct tt_error *err);

#endif
