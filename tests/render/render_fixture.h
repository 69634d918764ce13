/* A report built by hand for the renderer tests: seed-like prefill and
 * decode cells, one Requests queued, one Over capacity, one with NaN
 * figures, one missing matrix cell, and run strings that need escaping. */
#ifndef TT_TEST_RENDER_FIXTURE_H
#define TT_TEST_RENDER_FIXTURE_H

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/render.h"
#include "tokentrace/report.h"

enum {
	FX_PREFILL_8K = 0,
	FX_PREFILL_120K,
	FX_D8K_1,
	FX_D8K_2,
	FX_D8K_16,
	FX_D8K_32,
	FX_D8K_64,
	FX_D120K_1,
	FX_D120K_2,  /* Requests queued */
	FX_D120K_16, /* Too few samples, NaN TBT */
	FX_D120K_32, /* Over capacity */
	FX_N_CELLS
};

/* Fill *r (static storage inside; do not tt_report_free it). */
void fx_report(struct tt_report *r);
/* Render r in format f into a NUL-terminated string (free()); fails the test on error. */
char *fx_render(const struct tt_report *r, enum tt_format f, int color, int width);
/* Fail the test, showing the text, unless needle occurs in text. */
void fx_contains(const char *text, const char *needle);
void fx_lacks(const char *text, const char *needle);

#endif
