/* The capture's clock: CLOCK_MONOTONIC in nanoseconds, for every time the
 * capture takes (docs/capture.md, "Timestamps"). */
#ifndef TT_CAPTURE_MONOTONIC_H
#define TT_CAPTURE_MONOTONIC_H

#include <stdint.h>
#include <time.h>

static inline int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
