/* trend: change points of one series by E-Divisive means (docs/trend.md
 * "Method").
 *
 * Matteson and James, "A Nonparametric Approach for Multiple Change Point
 * Analysis of Multivariate Data" (JASA 2014), with the exponent alpha = 1 and
 * the end of each split fixed at the end of its segment, as in Hunter /
 * Apache Otava: for a segment split into A (m values) and B (k values),
 *
 *   E = 2/(mk) sum|a-b| - 1/C(m,2) sum_{i<j}|a_i-a_j| - 1/C(k,2) sum_{i<j}|b_i-b_j|
 *   Q = mk/(m+k) E
 *
 * The best split of a segment maximises Q; the segment whose best Q is
 * largest is tested by permuting its values (seeded) and counting
 * permutations whose best Q is at least as large: p = (count + 1) /
 * (permutations + 1).  A split with p <= alpha is kept and both parts are
 * searched again; the first split that is not significant ends the search. */
#include "trend/trend_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: a seeded stream per series, so a series' answer does not
 * depend on which other series were analysed or in which order. */
static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias. */
static size_t below(uint64_t *s, size_t n)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % n, r;
	do
		r = mix(s);
	while (r >= lim);
	return (size_t)(r % n);
}

/* The best split of y[0..L): *tau (the first index of B) and its Q; -1
 * when no split leaves min values on both sides.  O(L^2): moving one value
 * from B to A changes the within sums by its distances to the others. */
static double best_split(const double *y, size_t L, size_t min, size_t *tau)
{
	double total = 0, sa = 0, sb, best = -1;

	if (L < 2 * min)
		return -1;
	for (size_t i = 0; i < L; i++)
		for (size_t j = i + 1; j < L; j++)
			total += fabs(y[i] - y[j]);
	sb = total;
	/* A = y[0..t), B = y[t..L) */
	for (size_t t = 1; t < L; t++) {
		double to_a = 0, to_b = 0;
		size_t m = t, k = L - t;

		for (size_t i = 0; i < t - 1; i++)
			to_a += fabs(y[i] - y[t - 1]);
		for (size_t j = t; j < L; j++)
			to_b += fabs(y[t - 1] - y[j]);
		sa += to_a;
		sb -= to_b;
		if (m < min || k < min)
			continue;
		{
			double between = total - sa - sb;
			double e = 2.0 * between / ((double)m * (double)k) -
				   sa / ((double)m * (double)(m - 1) / 2.0) -
				   sb / ((double)k * (double)(k - 1) / 2.0);
			double q = (double)m * (double)k / (double)(m + k) * e;
			if (q > best) {
				best = q;
				*tau = t;
			}
		}
	}
	return best;
}

struct seg {
	size_t s, e;    /* [s, e) */
	double q;       /* its best split's Q, -1 none */
	size_t tau;     /* absolute index */
	int done;       /* tested and not significant */
};

enum tt_code tt_trend_changes(const double *x, size_t n, const struct tt_trend_opts *o,
			      uint64_t stream, size_t **idx, double **p, size_t *n_idx,
			      size_t *tests, struct tt_error *err)
{
	struct seg *seg = NULL;
	size_t n_seg = 0, n_cp = 0, min;
	size_t *cp = NULL;
	double *cpp = NULL, *perm = NULL;
	uint64_t rng = o->seed ^ (stream * 0xD1B54A32D192ED03ULL);
	enum tt_code rc = TT_OK;

	*idx = NULL;
	if (p)
		*p = NULL;
	*n_idx = 0;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return tt_error_set(err, TT_EARG, "change points: value %zu of %zu is not a "
					    "finite number", i + 1, n);
	min = o->min_size < 2 ? 2 : o->min_size;
	/* at most one change per min values: segments and change points */
	seg = calloc(n / min + 2, sizeof *seg);
	cp = malloc((n / min + 1) * sizeof *cp);
	cpp = malloc((n / min + 1) * sizeof *cpp);
	perm = malloc((n ? n : 1) * sizeof *perm);
	if (!seg || !cp || !cpp || !perm) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory finding change points of %zu "
				  "values", n);
		goto cleanup;
	}
	seg[0].s = 0;
	seg[0].e = n;
	seg[0].q = best_split(x, n, min, &seg[0].tau);
	n_seg = 1;
	for (;;) {
		struct seg *b = NULL;
		size_t L, count = 0, stop;
		double pv;

		for (size_t i = 0; i < n_seg; i++)
			if (!seg[i].done && seg[i].q > 0 && (!b || seg[i].q > b->q))
				b = &seg[i];
		if (!b)
			break;
		L = b->e - b->s;
		memcpy(perm, x + b->s, L * sizeof *perm);
		/* count + 1 > alpha (R + 1) decides "not significant": stop there */
		stop = (size_t)floor(o->alpha * (o->permutations + 1.0));
		for (size_t r = 0; r < o->permutations; r++) {
			size_t t;
			for (size_t i = L - 1; i > 0; i--) {
				size_t j = below(&rng, i + 1);
				double v = perm[i];
				perm[i] = perm[j];
				perm[j] = v;
			}
			/* a relative 1e-12: the same split summed in another order */
			if (best_split(perm, L, min, &t) >= b->q * (1 - 1e-12) &&
			    ++count + 1 > stop)
				break;
		}
		if (tests)
			(*tests)++;
		if (count + 1 > stop) {
			b->done = 1;
			break; /* the largest remaining split is not significant */
		}
		pv = (double)(count + 1) / (o->permutations + 1.0);
		{
			size_t tau = b->s + b->tau, e = b->e;
			/* the left part stays in b, the right part is new */
			b->e = tau;
			b->q = best_split(x + b->s, b->e - b->s, min, &b->tau);
			seg[n_seg].s = tau;
			seg[n_seg].e = e;
			seg[n_seg].q = best_split(x + tau, e - tau, min, &seg[n_seg].tau);
			n_seg++;
			cp[n_cp] = tau;
			cpp[n_cp] = pv;
			n_cp++;
		}
	}
	/* increasing order, p-values alongside */
	for (size_t i = 1; i < n_cp; i++)
		for (size_t j = i; j > 0 && cp[j - 1] > cp[j]; j--) {
			size_t ti = cp[j];
			double tp = cpp[j];
			cp[j] = cp[j - 1];
			cpp[j] = cpp[j - 1];
			cp[j - 1] = ti;
			cpp[j - 1] = tp;
		}
	*idx = cp;
	*n_idx = n_cp;
	cp = NULL;
	if (p) {
		*p = cpp;
		cpp = NULL;
	}
cleanup:
	free(seg);
	free(cp);
	free(cpp);
	free(perm);
	return rc;
}
