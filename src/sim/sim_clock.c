/* The simulator's clock: CLOCK_MONOTONIC in nanoseconds. */
#include "sim_clock.h"

#include <time.h>

uint64_t sim_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
