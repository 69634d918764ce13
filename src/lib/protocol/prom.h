/* tokentrace: Prometheus text exposition parser (formats/prometheus-subset.md).
 *
 * Reads what inference servers serve on /metrics: lines of
 *   name{label="value",...} value [timestamp]
 * `# HELP` / `# TYPE` and other comments are skipped, `_created` series are
 * dropped (they are timestamps, not measurements), values may be `nan`,
 * `+Inf`, `-Inf` or any C float (`1e+06`).  Label text is kept exactly as
 * the server wrote it, without the braces, so a scrape can be stored as is
 * (struct tt_sample, trace.h). */
#ifndef TOKENTRACE_PROM_H
#define TOKENTRACE_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"
#include "tokentrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Not part of the shared library's API: the programs link the static
 * library, and libtokentrace.so keeps these local (issue 21.5). */
#pragma GCC visibility push(hidden)

/* A parsed scrape.  samples[i].name and .labels point into storage owned by
 * the struct; they stay valid until tt_prom_free. */
struct tt_prom {
	struct tt_sample *samples;
	size_t n_samples;
	size_t n_bad_lines; /* lines that were not comments and did not parse */
	char *store_;       /* private */
};

/* Parse text (len bytes, need not be NUL-terminated).  Lines that do not
 * parse are skipped and counted; the result is TT_WARN when there were any
 * (err names the first, by line number), TT_OK otherwise.  On TT_OK or
 * TT_WARN *out owns a new struct (tt_prom_free); on error *out is untouched. */
enum tt_code tt_prom_parse(const char *text, size_t len, struct tt_prom **out,
			   struct tt_error *err);
/* Free a parse result; p may be NULL. */
void tt_prom_free(struct tt_prom *p);

/* Sum of the values of every series named `name` (all label sets).  NaN
 * values are skipped.  Returns NaN when no series has that name. */
double tt_prom_sum(const struct tt_sample *samples, size_t n, const char *name);

/* First series named `name`, or NULL. */
const struct tt_sample *tt_prom_find(const struct tt_sample *samples, size_t n,
				     const char *name);

/* Value of label `key` in a label text such as `a="1",b="x\"y"`, unescaped
 * (\\, \", \n) into buf (NUL-terminated, cut to len - 1 bytes).  Returns 1
 * when the label exists, 0 when not (buf then ""). */
int tt_prom_label(const char *labels, const char *key, char *buf, size_t len);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
