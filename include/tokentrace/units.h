/* tokentrace: parsing the units users type on command lines.
 * (Token counts: tt_parse_tokens / tt_format_tokens in profile.h.) */
#ifndef TOKENTRACE_UNITS_H
#define TOKENTRACE_UNITS_H

#ifdef __cplusplus
extern "C" {
#endif

/* "30s", "250ms", "1.5m", "2min", "1h", "30" (seconds) -> seconds;
 * -1 for anything else (negative, not finite, unknown suffix). */
double tt_parse_duration(const char *s);

#ifdef __cplusplus
}
#endif
#endif
