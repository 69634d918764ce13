/* Internal: strings from outside (a manifest, a trace, a server) made safe
 * to show anywhere: valid UTF-8, no control characters, bounded length. */
#ifndef TT_TEXT_CLEAN_H
#define TT_TEXT_CLEAN_H

#include <stddef.h>

/* The longest string a run may hand to the outputs (a model name of 10 MB
 * made the PDF take 24 s and 1.4 GB): longer ones are cut on a character
 * boundary and end in "..." . */
#define TT__MAX_SHOWN_STRING ((size_t)4 << 10)

/* Bytes of src[0..len) that need no change: valid UTF-8 without C0/C1
 * controls or DEL (keep_lines: LF and TAB allowed). */
int tt__text_is_clean(const char *src, size_t len, int keep_lines);

/* A clean copy (malloc, NUL-terminated) of src[0..len): an invalid UTF-8
 * byte and a control character each become U+FFFD, and the result is cut
 * to at most max bytes (plus "...").  NULL only when out of memory. */
char *tt__text_clean(const char *src, size_t len, size_t max, int keep_lines);

/* In place, same length: every byte of an invalid sequence or of a control
 * character (LF and TAB too) becomes '?'.  For strings whose storage is
 * laid out already (a trace's error and scrape strings). */
void tt__text_scrub(char *s, size_t len);

#endif
