/* tokentrace: reports as text tables: format names, options and the number
 * style every renderer shares (formats/report-json.md for the JSON schema).
 * tt_render, which renders any format, is in tokentrace/report.h. */
#ifndef TOKENTRACE_RENDER_H
#define TOKENTRACE_RENDER_H

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tt_format {
	TT_FORMAT_TERM = 0, /* aligned tables for a terminal */
	TT_FORMAT_MD = 1,   /* the seed report's markdown layout */
	TT_FORMAT_CSV = 2,
	TT_FORMAT_JSON = 3,
	TT_FORMAT_HTML = 4, /* self-contained page with inline SVG charts */
	TT_FORMAT_PDF = 5   /* multi-page: facts, tables, charts */
};
/* "term", "md", "csv", "json", "html", "pdf" -> format; -1 if unknown. */
int tt_format_parse(const char *name);

struct tt_render_opts {
	int color;          /* term: ANSI colour */
	int width;          /* term: columns available (0 = 120) */
};

/* Number style of the seed report, shared by every renderer:
 * tt_fmt_rate(143100) "143.1K", (1819.2) "1,819.2", (15000) "15K";
 * tt_fmt_ms(1036) "1,036 ms"; tt_fmt_int(28796) "28,796"; tt_fmt_fixed1(1.04) "1.0". */
void tt_fmt_rate(double v, char *buf, size_t len);
void tt_fmt_ms(double v, char *buf, size_t len);
void tt_fmt_int(double v, char *buf, size_t len);
void tt_fmt_fixed1(double v, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
