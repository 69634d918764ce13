/* tokentrace: performance profiles in the seed-matrix CSV format.
 *
 * A profile is the table of a measured speed-test matrix, one row per cell:
 *   phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,
 *   tbt_ms,avg_active,completed,output_tokens,measured_s
 * (formats/profile-csv.md).  Contexts are written as tokens, "8K" (K = 1024,
 * so 8K = 8192 and 125K = 128000) or a plain number.  Empty fields are NaN
 * (numbers) or -1 (counts).  Used by `tokentrace synth` and `tokentrace-sim`. */
#ifndef TOKENTRACE_PROFILE_H
#define TOKENTRACE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/error.h"
#include "tokentrace/run.h"   /* enum tt_phase */
#include "tokentrace/units.h" /* tt_parse_tokens, tt_format_tokens */

#ifdef __cplusplus
extern "C" {
#endif

struct tt_profile_point {
	enum tt_phase phase;
	int64_t context;        /* tokens */
	int concurrency;
	char status[32];        /* as written: "Valid", "Requests queued", "Over capacity", ... */
	double total_tok_s;     /* prefill rows: prompt tok/s */
	double per_request_tok_s;
	double ttft_ms;
	double tbt_ms;
	double avg_active;
	long completed;
	long output_tokens;
	double measured_s;
};

struct tt_profile;

/* Parse a profile CSV.  On success *out owns the profile (tt_profile_free). */
enum tt_code tt_profile_load(const char *path, struct tt_profile **out, struct tt_error *err);
/* Same from a NUL-terminated buffer; name is used in messages. */
enum tt_code tt_profile_parse(const char *text, const char *name, struct tt_profile **out,
			      struct tt_error *err);
void tt_profile_free(struct tt_profile *p);

size_t tt_profile_count(const struct tt_profile *p);
/* i < count; pointer owned by the profile. */
const struct tt_profile_point *tt_profile_at(const struct tt_profile *p, size_t i);
/* Exact row for (phase, context, concurrency) or NULL.  Prefill rows have concurrency 1. */
const struct tt_profile_point *tt_profile_find(const struct tt_profile *p, enum tt_phase phase,
					       int64_t context, int concurrency);

/* Interpolated model, monotone in context and batch (never faster for more
 * context, never slower in total for more batch within the measured range):
 * time between tokens in ms for a batch of `batch` decoding streams each
 * holding about `context` tokens; and prefill rate in prompt tokens/s. */
double tt_profile_tbt_ms(const struct tt_profile *p, int64_t context, double batch);
double tt_profile_prefill_tok_s(const struct tt_profile *p, int64_t context);
/* Measured decode TTFT in ms at (context, batch), interpolated in log space
 * between the measured rows (clamped at the ends); NaN if none has TTFT.
 * In a closed loop this is the turnover each new request costs its stream. */
double tt_profile_ttft_ms(const struct tt_profile *p, int64_t context, double batch);

/* tt_parse_tokens, tt_format_tokens: see tokentrace/units.h. */

#ifdef __cplusplus
}
#endif
#endif
