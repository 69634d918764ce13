/* A profile's state, shared by its CSV reader (profile_csv.c) and its
 * interpolated model (profile.c).  Internal to synth/. */
#ifndef TT_SYNTH_PROFILE_IMPL_H
#define TT_SYNTH_PROFILE_IMPL_H

#include <stddef.h>

#include "tokentrace/error.h"
#include "tokentrace/profile.h"

struct tt_profile {
	struct tt_profile_point *pts;
	size_t n, cap;
	/* decode model: tbt[ci * nb + bi] in ms, at ctx[ci] x bat[bi] */
	double *ctx, *bat, *tbt;
	size_t nc, nb;
	/* prefill model: rate[i] tok/s at pctx[i] */
	double *pctx, *prate;
	size_t np;
};

/* Append one row. */
enum tt_code tt__profile_push(struct tt_profile *p, const struct tt_profile_point *pt,
			      struct tt_error *err);
/* Build the decode and prefill models from the rows; name for messages. */
enum tt_code tt__profile_build(struct tt_profile *p, const char *name, struct tt_error *err);

#endif
