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

/* Scratch of best_split, allocated once per series. */
struct scratch {
	struct vi { double v; size_t i; } *vi;
	size_t *rank;
	double *sall, *bcnt, *bsum;
};

static int cmp_vi(const void *a, const void *b)
{
	const struct vi *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* The best split of y[0..L): *tau (the first index of B) and its Q; -1
 * when no split leaves min values on both sides.  Moving y[t-1] from B to A
 * adds its distances to A's values to A's within sum and removes its
 * distances to B's from B's.  Both come from a Fenwick tree over the
 * values' ranks (count and sum of A's values up to a rank) and each
 * value's distance to all values (sorted prefix sums): O(L log L), where
 * the sums themselves were O(L^2) (1,000 runs: 3 ms a split). */
static double best_split(const double *y, size_t L, size_t min, size_t *tau,
			 struct scratch *w)
{
	double total = 0, sa = 0, sb, best = -1, pre = 0, all = 0, sum_a = 0;
	size_t cnt_a = 0;

	if (L < 2 * min)
		return -1;
	for (size_t i = 0; i < L; i++) {
		w->vi[i].v = y[i];
		w->vi[i].i = i;
		all += y[i];
	}
	qsort(w->vi, L, sizeof *w->vi, cmp_vi);
	if (w->vi[0].v == w->vi[L - 1].v)
		return -1; /* all equal: no split (not one of round-off) */
	/* sall[i] = sum_j |y_i - y_j|; rank i (1-based) of each value */
	for (size_t k = 0; k < L; k++) {
		double v = w->vi[k].v;
		size_t i = w->vi[k].i;
		w->rank[i] = k + 1;
		w->sall[i] = ((double)k * v - pre) + ((all - pre - v) - (double)(L - k - 1) * v);
		pre += v;
		total += w->sall[i];
		w->bcnt[k + 1] = 0;
		w->bsum[k + 1] = 0;
	}
	total /= 2;
	sb = total;
	/* A = y[0..t), B = y[t..L) */
	for (size_t t = 1; t < L; t++) {
		size_t e = t - 1, m = t, k = L - t;
		double v = y[e], c_le = 0, s_le = 0, to_a, to_b;

		for (size_t r = w->rank[e]; r > 0; r -= r & (~r + 1)) {
			c_le += w->bcnt[r];
			s_le += w->bsum[r];
		}
		to_a = (c_le * v - s_le) + ((sum_a - s_le) - ((double)cnt_a - c_le) * v);
		to_b = w->sall[e] - to_a;
		for (size_t r = w->rank[e]; r <= L; r += r & (~r + 1)) {
			w->bcnt[r] += 1;
			w->bsum[r] += v;
		}
		cnt_a++;
		sum_a += v;
		sa += to_a;
		sb -= to_b;
		if (m < min || k < min)
			continue;
		{
			double between = total - sa - sb;
			double en = 2.0 * between / ((double)m * (double)k) -
				    sa / ((double)m * (double)(m - 1) / 2.0) -
				    sb / ((double)k * (double)(k - 1) / 2.0);
			double q = (double)m * (double)k / (double)(m + k) * en;
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
	struct scratch w = {0};
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
	w.vi = malloc((n + 1) * sizeof *w.vi);
	w.rank = malloc((n + 1) * sizeof *w.rank);
	w.sall = malloc((n + 1) * sizeof *w.sall);
	w.bcnt = malloc((n + 1) * sizeof *w.bcnt);
	w.bsum = malloc((n + 1) * sizeof *w.bsum);
	if (!seg || !cp || !cpp || !perm || !w.vi || !w.rank || !w.sall || !w.bcnt || !w.bsum) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory finding change points of %zu "
				  "values", n);
		goto cleanup;
	}
	seg[0].s = 0;
	seg[0].e = n;
	seg[0].q = best_split(x, n, min, &seg[0].tau, &w);
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
			if (best_split(perm, L, min, &t, &w) >= b->q * (1 - 1e-12) &&
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
			b->q = best_split(x + b->s, b->e - b->s, min, &b->tau, &w);
			seg[n_seg].s = tau;
			seg[n_seg].e = e;
			seg[n_seg].q = best_split(x + tau, e - tau, min, &seg[n_seg].tau, &w);
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
	free(w.vi);
	free(w.rank);
	free(w.sall);
	free(w.bcnt);
	free(w.bsum);
	return rc;
}
