/* tokentrace-sim: the one clock every module reads (CLOCK_MONOTONIC, ns). */
#ifndef TT_SIM_CLOCK_H
#define TT_SIM_CLOCK_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC: the engine's step timeline, arrival and
 * emit times and the truth log are all on this clock. */
uint64_t sim_now_ns(void);

#endif
