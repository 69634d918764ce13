/* Opening or resuming a run, and closing it (run_open.c). */
#ifndef TT_CAPTURE_RUN_OPEN_H
#define TT_CAPTURE_RUN_OPEN_H

#include "capture.h"

struct cap_opts;

/* The first --cells item that names no cell of the full matrix (malloc'd),
 * or NULL.  (A typo would otherwise silently shrink the run.) */
char *run_unknown_cell(const struct cap_opts *o);
/* Open c->o's run: resume it or create it, after starting the network
 * loop and the sink and probing the server at url_arg (NULL on resume:
 * the run's own).  Returns 0, or the exit status (message printed). */
int run_open(struct cap *c, const char *url_arg);
/* RUN/capture-info.json: this capture's facts (origin, chunk times). */
void run_write_capture_info(const struct cap *c);
/* Stop the loop and the sink, free the run; c can be half open. */
void run_close(struct cap *c);

/* --redo on a resume: mark the finished cells to measure again (c->redo).
 * 0, or the exit status (message printed). */
int run_redo(struct cap *c);

#endif
