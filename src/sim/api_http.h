/* tokentrace-sim: the HTTP server, from listening to stopping (api_http.c). */
#ifndef TT_SIM_API_HTTP_H
#define TT_SIM_API_HTTP_H

#include <stddef.h>

#include "sim_server.h"

/* Listens on srv->cfg's host and port (srv->port says which), with the
 * engine (initialised) hooked to the output pass; 0, or -1 with a message
 * in err.  api_stop either way. */
int api_start(struct sim_server *srv, char *err, size_t errlen);
/* Ends every open request (SHUTDOWN in the truth log), closes the
 * listener and connections and frees what api_start made; before
 * engine_release.  Safe after a failed or missing api_start. */
void api_stop(struct sim_server *srv);

#endif
