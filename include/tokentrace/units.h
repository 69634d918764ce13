/* tokentrace: parsing and printing the units users type on command lines:
 * durations and token counts. */
#ifndef TOKENTRACE_UNITS_H
#define TOKENTRACE_UNITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "30s", "250ms", "1.5m", "2min", "1h", "30" (seconds) -> seconds;
 * -1 for anything else (negative, not finite, unknown suffix). */
double tt_parse_duration(const char *s);
/* The same text as whole nanoseconds, exactly (docs/metrics.md M-window,
 * "Durations"): DIGITS[.DIGITS][s|ms|m|min|h] read as a decimal number in
 * integers and truncated to whole ns; at most 18 decimals.  0, or -1 for
 * anything else (a sign, an exponent, an unknown suffix, past INT64_MAX ns). */
int tt_parse_duration_ns(const char *s, int64_t *ns);
/* Seconds given as a double (the library's options) to the nearest whole
 * ns; 0 for 0, negative or NaN.  tt_parse_duration_ns(t) / 1e9 comes back
 * exactly through it for any duration below 10^15 ns. */
int64_t tt_duration_ns_of_s(double s);

/* "8K" -> 8192, "125K" -> 128000, "1M" -> 1048576, "4096" -> 4096; -1 on error. */
int64_t tt_parse_tokens(const char *s);
/* Inverse for display: 8192 -> "8K", 128000 -> "125K", 1000 -> "1000". */
void tt_format_tokens(int64_t tokens, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
