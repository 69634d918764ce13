/* tokentrace-sim: the output pass: the tokens requests have produced as SSE
 * chunks or whole JSON bodies, and the mid-stream faults (api_stream.c). */
#ifndef TT_SIM_API_STREAM_H
#define TT_SIM_API_STREAM_H

#include "sim_server.h"

/* Sends what the dirty requests have produced, ending (and freeing) the
 * ones that are done.  Gives the loop back after ~25 us, re-arming
 * srv->flush_ev or srv->flush_pause_ev to go on. */
void stream_flush(struct sim_server *srv);

#endif
