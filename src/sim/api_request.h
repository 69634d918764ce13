/* tokentrace-sim: a generation request's life on the server side: the list
 * of live requests, the queue of requests with tokens to send, the engine's
 * hooks that fill it, the end of a request's HTTP side (normal, reset, or
 * the client gone) and freeing it. */
#ifndef TT_SIM_API_REQUEST_H
#define TT_SIM_API_REQUEST_H

#include <stdint.h>

#include "sim_req.h"
#include "sim_server.h"

struct evhttp_request;
struct evhttp_connection;

/* Points srv->eng's hooks here: each token is queued on its request and the
 * request marked dirty; the output pass runs after every --merge steps or
 * when a request finished. */
void api_request_hook_engine(struct sim_server *srv);
/* Lists r as live (until req_free); 0, or -1 when out of memory. */
int api_request_add(struct sim_server *srv, struct sim_req *r);
/* Gives r its HTTP request and frees r when the client goes away. */
void api_request_attach(struct sim_req *r, struct evhttp_request *http);
/* Queues r for the next output pass (once). */
void api_mark_dirty(struct sim_server *srv, struct sim_req *r);
/* Ends the HTTP side of r normally (the last byte has been queued). */
void api_finish_http(struct sim_req *r);
/* Ends the HTTP side of r with RST instead of FIN. */
void api_reset_connection(struct sim_req *r);
/* llama-server's silent close: its reply said keep-alive, but the
 * connection is closed when the client sends its next request on it (that
 * request unanswered, the socket reset, as a server that closed first) or
 * after SILENT_CLOSE_IDLE_MS of quiet, once the reply has left. */
void api_silent_close(struct sim_server *srv, struct evhttp_connection *evcon);
/* 1 when http came on a connection being closed silently: it is dropped
 * with its connection (the caller answers nothing). */
int api_silent_close_drop(struct sim_server *srv, struct evhttp_request *http);
/* Frees r (NULL is fine); its HTTP side must already be finished or
 * detached.  Takes it out of the engine if still queued or running. */
void req_free(struct sim_req *r);
/* At shutdown: a SHUTDOWN record for every live request and its HTTP side
 * detached (before evhttp_free), then, after it, every one freed. */
void api_request_detach_all(struct sim_server *srv, uint64_t now);
void api_request_free_all(struct sim_server *srv);

#endif
