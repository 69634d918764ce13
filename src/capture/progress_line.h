/* The live progress line on the terminal (docs/capture.md, "Options"). */
#ifndef TT_CAPTURE_PROGRESS_LINE_H
#define TT_CAPTURE_PROGRESS_LINE_H

#include <stdint.h>

#include "capture.h"

/* Redraw the line, at most every 250 ms, when on a terminal. */
void progress_tick(struct cap *c, int64_t now, double cell_elapsed_s);
/* Enter a phase ("warm-up", "readiness", "measuring", "drain", "scout")
 * at cell time cell_elapsed_s, planned to last len_s (0: open-ended). */
void progress_phase(struct cap *c, const char *phase, double cell_elapsed_s, double len_s);
/* The ETA the line shows: never negative. */
double progress_eta_s(const struct cap *c, double cell_elapsed_s);
/* Erase it before other output. */
void progress_clear(struct cap *c);

#endif
