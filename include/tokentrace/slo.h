/* tokentrace: service level objectives and goodput (docs/metrics.md
 * "M-slo", "M-goodput").
 *
 * An SLO set bounds, per request, the time to first token, the time between
 * tokens at a chosen quantile of the request's own per-token gaps, and the
 * end-to-end latency.  A request meets the SLOs when every bound that is
 * set holds (value <= bound).  A cell meets them when at least `attain` of
 * its judged requests do.  The closed-loop report uses this per cell; an
 * open-loop analysis can judge its requests with the same judge. */
#ifndef TOKENTRACE_SLO_H
#define TOKENTRACE_SLO_H

#include <stddef.h>

#include "tokentrace/error.h"
#include "tokentrace/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tt_slo {
	double ttft_ms;  /* bound on send -> first token; <= 0: none */
	double tbt_ms;   /* bound on the request's tbt_pct quantile of per-token gaps; <= 0: none */
	double e2e_ms;   /* bound on send -> end; <= 0: none */
	double tbt_pct;  /* quantile of the request's gaps, in percent (default 99) */
	double attain;   /* share of judged requests that must meet, 0..1 (default 0.9) */
};

/* No bound set; tbt_pct 99, attain 0.9. */
void tt_slo_init(struct tt_slo *s);
/* Whether any bound is set. */
int tt_slo_active(const struct tt_slo *s);

/* Parse "ttft=500ms,tbt=50ms[@p90],e2e=20s,attain=95" (keys in any order,
 * each at most once; durations as tt_parse_duration takes them, plain
 * numbers are ms; attain in percent (0, 100]).  On error *s is unchanged and
 * err names the part that is wrong. */
enum tt_code tt_slo_parse(const char *text, struct tt_slo *s, struct tt_error *err);
/* The canonical text of an SLO set, "ttft=500ms,tbt=50ms@p99,attain=90"
 * ("" when none is set). */
void tt_slo_format(const struct tt_slo *s, char *buf, size_t len);

/* One request judged against the SLOs. */
struct tt_slo_verdict {
	double ttft_ms;  /* NaN: no token-bearing chunk */
	double tbt_ms;   /* the request's tbt_pct quantile of per-token gaps; NaN: no gap */
	double e2e_ms;
	long tokens;     /* output tokens of the request */
	int meets;       /* every bound that is set holds; a failed request never meets */
};

/* A judge keeps scratch space for the per-request quantile, so judging
 * millions of requests allocates only as the longest request needs. */
struct tt_slo_judge;
enum tt_code tt_slo_judge_create(const struct tt_slo *s, struct tt_slo_judge **out,
				 struct tt_error *err);
/* Judge one request (M-slo).  Returns TT_OK, or TT_FAILED with kind
 * TT_ENOMEM when the scratch space could not grow (v is then not set). */
enum tt_code tt_slo_judge_request(struct tt_slo_judge *j, const struct tt_request *r,
				  struct tt_slo_verdict *v);
void tt_slo_judge_free(struct tt_slo_judge *j);

#ifdef __cplusplus
}
#endif
#endif
