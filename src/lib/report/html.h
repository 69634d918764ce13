/* HTML pieces shared by every page of ours (report_html_util.c).
 * Internal to report/ and the modules above it (diffview/). */
#ifndef TT_REPORT_HTML_H
#define TT_REPORT_HTML_H

#include <stddef.h>

#include "tokentrace/buf.h"

/* Escape for text and attribute values; invalid UTF-8 and control
 * characters become U+FFFD. */
void tt__html_esc(struct tt_buf *b, const char *s);
/* Escaped, with line breaks kept as <br>. */
void tt__html_esc_lines(struct tt_buf *b, const char *s);
/* d as base64 (for data: URIs). */
void tt__html_base64(struct tt_buf *b, const unsigned char *d, size_t n);
/* <!DOCTYPE> to <body>: charset, the Content-Security-Policy (no fetch, no
 * script; images only as data:, inline styles), viewport, generator,
 * title, and the styles (each may be NULL or ""). */
void tt__html_head(struct tt_buf *out, const char *title, const char *css1, const char *css2,
		   const char *css3);

#endif
