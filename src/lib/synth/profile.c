/* Performance profiles: the interpolated speed model built from a profile
 * (include/tokentrace/profile.h); the CSV reader is profile_csv.c. */
#include "tokentrace/profile.h"
#include "synth/profile_impl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The measured grid is widened with virtual rows and columns so that every
 * query, inside or outside the measured range, is a plain interpolation in a
 * grid that has been made monotone once, at load time. */
#define MAX_BATCH_VIRTUAL 8192.0
#define MIN_CONTEXT_VIRTUAL 16.0
#define MAX_CONTEXT_VIRTUAL (64.0 * 1024 * 1024)

void tt_profile_free(struct tt_profile *p)
{
	if (!p)
		return;
	free(p->pts);
	free(p->ctx);
	free(p->bat);
	free(p->tbt);
	free(p->pctx);
	free(p->prate);
	free(p);
}

size_t tt_profile_count(const struct tt_profile *p)
{
	return p ? p->n : 0;
}

const struct tt_profile_point *tt_profile_at(const struct tt_profile *p, size_t i)
{
	return p && i < p->n ? &p->pts[i] : NULL;
}

const struct tt_profile_point *tt_profile_find(const struct tt_profile *p, enum tt_phase phase,
					       int64_t context, int concurrency)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct tt_profile_point *q = &p->pts[i];
		if (q->phase == phase && q->context == context && q->concurrency == concurrency)
			return q;
	}
	return NULL;
}

enum tt_code tt__profile_push(struct tt_profile *p, const struct tt_profile_point *pt,
			       struct tt_error *err)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct tt_profile_point *np = realloc(p->pts, cap * sizeof *np);
		if (!np)
			return tt_error_set(err, TT_ENOMEM, "out of memory reading profile");
		p->pts = np;
		p->cap = cap;
	}
	p->pts[p->n++] = *pt;
	return TT_OK;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorted unique values of v[0..n) in place; returns the new count. */
static size_t uniq(double *v, size_t n)
{
	size_t k = 0;
	qsort(v, n, sizeof *v, cmp_double);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	return k;
}

/* The most precise time between tokens a row offers: the seed's per-request
 * rate is the median of 1/ITL to four digits where tbt_ms is rounded to 0.1 ms,
 * so prefer it when the two agree. */
static double row_tbt(const struct tt_profile_point *q)
{
	double t = q->tbt_ms;
	if (q->per_request_tok_s > 0) {
		double t2 = 1000.0 / q->per_request_tok_s;
		if (!(t > 0) || fabs(t2 - t) <= 0.051 + 0.02 * t)
			return t2;
	}
	if (t > 0)
		return t;
	if (q->total_tok_s > 0 && q->concurrency > 0) {
		double active = q->avg_active > 0 ? q->avg_active : q->concurrency;
		return 1000.0 * active / q->total_tok_s;
	}
	return NAN;
}

static size_t find_index(const double *v, size_t n, double x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return i;
	return n;
}

/* Fills NaN cells of one row (stride s over n cells at coordinates x) by
 * log-log interpolation, or extrapolation with a slope clamped to [lo, hi]. */
static void fill_line(double *t, size_t stride, const double *x, size_t n, double lo, double hi)
{
	for (size_t i = 0; i < n; i++) {
		if (!isnan(t[i * stride]))
			continue;
		size_t a = n, b = n;
		for (size_t j = i; j-- > 0;)
			if (!isnan(t[j * stride])) {
				a = j;
				break;
			}
		for (size_t j = i + 1; j < n; j++)
			if (!isnan(t[j * stride])) {
				b = j;
				break;
			}
		if (a < n && b < n) {
			double w = log(x[i] / x[a]) / log(x[b] / x[a]);
			t[i * stride] = exp((1 - w) * log(t[a * stride]) + w * log(t[b * stride]));
			continue;
		}
		size_t k = a < n ? a : b;
		if (k == n)
			return; /* nothing known on this line */
		/* second known point on the same side, for a slope */
		size_t k2 = n;
		if (k == a) {
			for (size_t j = a; j-- > 0;)
				if (!isnan(t[j * stride])) {
					k2 = j;
					break;
				}
		} else {
			for (size_t j = b + 1; j < n; j++)
				if (!isnan(t[j * stride])) {
					k2 = j;
					break;
				}
		}
		double slope = 0.5 * (lo + hi);
		if (k2 < n)
			slope = log(t[k * stride] / t[k2 * stride]) / log(x[k] / x[k2]);
		if (slope < lo)
			slope = lo;
		if (slope > hi)
			slope = hi;
		t[i * stride] = t[k * stride] * pow(x[i] / x[k], slope);
	}
}

/* Never faster for more context; per stream never faster and in total never
 * slower for a bigger batch.  Alternating passes converge in a few rounds. */
static void make_monotone(struct tt_profile *p)
{
	for (int round = 0; round < 50; round++) {
		int changed = 0;
		for (size_t c = 0; c < p->nc; c++)
			for (size_t b = 1; b < p->nb; b++) {
				double prev = p->tbt[c * p->nb + b - 1];
				double *t = &p->tbt[c * p->nb + b];
				double hi = prev * p->bat[b] / p->bat[b - 1];
				if (*t < prev) {
					*t = prev;
					changed = 1;
				} else if (*t > hi * (1 + 1e-12)) {
					*t = hi;
					changed = 1;
				}
			}
		for (size_t c = 1; c < p->nc; c++)
			for (size_t b = 0; b < p->nb; b++) {
				double prev = p->tbt[(c - 1) * p->nb + b];
				double *t = &p->tbt[c * p->nb + b];
				if (*t < prev) {
					*t = prev;
					changed = 1;
				}
			}
		if (!changed)
			break;
	}
}

static enum tt_code build_decode_model(struct tt_profile *p, struct tt_error *err)
{
	size_t nd = 0;
	double *cs = NULL, *bs = NULL;
	enum tt_code rc = TT_OK;

	for (size_t i = 0; i < p->n; i++)
		if (p->pts[i].phase == TT_PHASE_DECODE && p->pts[i].context > 0 &&
		    p->pts[i].concurrency > 0)
			nd++;
	if (!nd)
		return TT_OK;
	cs = malloc(nd * sizeof *cs);
	bs = malloc(nd * sizeof *bs);
	if (!cs || !bs) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory building profile model");
		goto cleanup;
	}
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct tt_profile_point *q = &p->pts[i];
		if (q->phase == TT_PHASE_DECODE && q->context > 0 && q->concurrency > 0) {
			cs[k] = (double)q->context;
			bs[k] = q->concurrency;
			k++;
		}
	}
	size_t mc = uniq(cs, nd), mb = uniq(bs, nd);
	double cmin = cs[0], cmax = cs[mc - 1], bmax = bs[mb - 1];

	/* Virtual rows: halvings below the smallest context, doublings above the
	 * largest; virtual columns: doublings above the largest batch. */
	size_t below = 0, above = 0, right = 0;
	for (double c = cmin / 2; c >= MIN_CONTEXT_VIRTUAL; c /= 2)
		below++;
	for (double c = cmax * 2; c <= MAX_CONTEXT_VIRTUAL; c *= 2)
		above++;
	for (double b = bmax * 2; b <= MAX_BATCH_VIRTUAL; b *= 2)
		right++;
	p->nc = below + mc + above;
	p->nb = mb + right;
	p->ctx = malloc(p->nc * sizeof *p->ctx);
	p->bat = malloc(p->nb * sizeof *p->bat);
	p->tbt = malloc(p->nc * p->nb * sizeof *p->tbt);
	if (!p->ctx || !p->bat || !p->tbt) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory building profile model");
		goto cleanup;
	}
	for (size_t i = 0; i < below; i++)
		p->ctx[i] = cmin / pow(2, (double)(below - i));
	for (size_t i = 0; i < mc; i++)
		p->ctx[below + i] = cs[i];
	for (size_t i = 0; i < above; i++)
		p->ctx[below + mc + i] = cmax * pow(2, (double)(i + 1));
	for (size_t i = 0; i < mb; i++)
		p->bat[i] = bs[i];
	for (size_t i = 0; i < right; i++)
		p->bat[mb + i] = bmax * pow(2, (double)(i + 1));
	for (size_t i = 0; i < p->nc * p->nb; i++)
		p->tbt[i] = NAN;
	for (size_t i = 0; i < p->n; i++) {
		const struct tt_profile_point *q = &p->pts[i];
		if (q->phase != TT_PHASE_DECODE || q->context <= 0 || q->concurrency <= 0)
			continue;
		double t = row_tbt(q);
		if (!(t > 0))
			continue;
		size_t ci = find_index(p->ctx, p->nc, (double)q->context);
		size_t bi = find_index(p->bat, p->nb, q->concurrency);
		if (isnan(p->tbt[ci * p->nb + bi]))
			p->tbt[ci * p->nb + bi] = t;
	}
	/* Measured rows first: gaps and bigger batches along the batch axis
	 * (per-stream time grows at most in proportion to the batch). */
	for (size_t c = below; c < below + mc; c++)
		fill_line(&p->tbt[c * p->nb], 1, p->bat, p->nb, 0.0, 1.0);
	/* Rows with no measurement at all: from neighbouring contexts. */
	for (size_t b = 0; b < p->nb; b++) {
		double *col = &p->tbt[below * p->nb + b];
		fill_line(col, p->nb, &p->ctx[below], mc, 0.0, 1.0);
	}
	size_t bad = 0;
	for (size_t c = below; c < below + mc; c++)
		for (size_t b = 0; b < p->nb; b++)
			if (isnan(p->tbt[c * p->nb + b]))
				bad++;
	if (bad) {
		rc = tt_error_set(err, TT_EFORMAT,
				  "profile has decode rows but no usable time between tokens "
				  "(need tbt_ms, per_request_tok_s or total_tok_s)");
		goto cleanup;
	}
	make_monotone(p);

	/* Above the largest context: attention cost grows linearly with context,
	 * so continue the last measured segment linearly.  Slopes are made
	 * monotone in batch the same way as times, which keeps the result so. */
	size_t last = below + mc - 1;
	if (above) {
		double *slope = calloc(p->nb, sizeof *slope);
		if (!slope) {
			rc = tt_error_set(err, TT_ENOMEM, "out of memory building profile model");
			goto cleanup;
		}
		for (size_t b = 0; b < p->nb; b++) {
			if (mc >= 2)
				slope[b] = (p->tbt[last * p->nb + b] - p->tbt[(last - 1) * p->nb + b]) /
					   (p->ctx[last] - p->ctx[last - 1]);
			if (slope[b] < 0)
				slope[b] = 0;
			if (b > 0 && slope[b] < slope[b - 1])
				slope[b] = slope[b - 1];
			if (b > 0 && slope[b] > slope[b - 1] * p->bat[b] / p->bat[b - 1])
				slope[b] = slope[b - 1] * p->bat[b] / p->bat[b - 1];
		}
		for (size_t i = 0; i < above; i++)
			for (size_t b = 0; b < p->nb; b++) {
				size_t c = last + 1 + i;
				p->tbt[c * p->nb + b] = p->tbt[last * p->nb + b] +
							slope[b] * (p->ctx[c] - p->ctx[last]);
			}
		free(slope);
	}
	/* Below the smallest context: one factor for all batches (so the batch
	 * properties hold), the linear trend toward context 0, at least half. */
	if (below) {
		double lambda = 1.0;
		size_t first = below;
		for (size_t b = 0; b < p->nb && mc >= 2; b++) {
			double t0 = p->tbt[first * p->nb + b], t1 = p->tbt[(first + 1) * p->nb + b];
			double s = (t1 - t0) / (p->ctx[first + 1] - p->ctx[first]);
			double l = (t0 - s * p->ctx[first]) / t0;
			if (l < lambda)
				lambda = l;
		}
		if (lambda < 0.5)
			lambda = 0.5;
		for (size_t i = 0; i < below; i++) {
			double f = lambda + (1 - lambda) * p->ctx[i] / p->ctx[first];
			for (size_t b = 0; b < p->nb; b++)
				p->tbt[i * p->nb + b] = p->tbt[first * p->nb + b] * f;
		}
	}
	make_monotone(p);

cleanup:
	free(cs);
	free(bs);
	return rc;
}

static enum tt_code build_prefill_model(struct tt_profile *p, struct tt_error *err)
{
	size_t np = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->pts[i].phase == TT_PHASE_PREFILL && p->pts[i].context > 0)
			np++;
	if (!np)
		return TT_OK;
	p->pctx = malloc(np * sizeof *p->pctx);
	p->prate = malloc(np * sizeof *p->prate);
	if (!p->pctx || !p->prate)
		return tt_error_set(err, TT_ENOMEM, "out of memory building profile model");
	/* insertion sort by context; the first row wins for duplicates */
	for (size_t i = 0; i < p->n; i++) {
		const struct tt_profile_point *q = &p->pts[i];
		if (q->phase != TT_PHASE_PREFILL || q->context <= 0)
			continue;
		double r = q->total_tok_s;
		if (!(r > 0) && q->ttft_ms > 0)
			r = (double)q->context / (q->ttft_ms / 1000.0);
		if (!(r > 0))
			continue;
		double c = (double)q->context;
		if (find_index(p->pctx, p->np, c) < p->np)
			continue;
		size_t j = p->np;
		while (j > 0 && p->pctx[j - 1] > c) {
			p->pctx[j] = p->pctx[j - 1];
			p->prate[j] = p->prate[j - 1];
			j--;
		}
		p->pctx[j] = c;
		p->prate[j] = r;
		p->np++;
	}
	return TT_OK;
}

enum tt_code tt__profile_build(struct tt_profile *p, const char *name, struct tt_error *err)
{
	enum tt_code rc = build_decode_model(p, err);

	if (tt_failed(rc)) {
		tt_error_prefix(err, "%s", name);
		return rc;
	}
	return build_prefill_model(p, err);
}

/* Position of x among sorted v[0..n) in log space: index i and weight w so
 * that x sits between v[i] and v[i+1]; clamped to the ends. */
static void locate(const double *v, size_t n, double x, size_t *i, double *w)
{
	if (n == 1 || x <= v[0]) {
		*i = 0;
		*w = 0;
		return;
	}
	if (x >= v[n - 1]) {
		*i = n - 2;
		*w = 1;
		return;
	}
	size_t lo = 0, hi = n - 1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (v[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	*i = lo;
	*w = log(x / v[lo]) / log(v[lo + 1] / v[lo]);
}

double tt_profile_tbt_ms(const struct tt_profile *p, int64_t context, double batch)
{
	if (!p || !p->nc)
		return NAN;
	double c = context > 0 ? (double)context : 1.0;
	double b = batch >= 1 ? batch : 1.0;
	double scale = 1.0;
	/* beyond the widened grid: per-stream time grows with batch and context
	 * in proportion (total throughput flat), which stays monotone */
	if (b > p->bat[p->nb - 1]) {
		scale *= b / p->bat[p->nb - 1];
		b = p->bat[p->nb - 1];
	}
	if (c > p->ctx[p->nc - 1]) {
		scale *= c / p->ctx[p->nc - 1];
		c = p->ctx[p->nc - 1];
	}
	size_t ci, bi;
	double wc, wb;
	locate(p->ctx, p->nc, c, &ci, &wc);
	locate(p->bat, p->nb, b, &bi, &wb);
	size_t c1 = p->nc > 1 ? ci + 1 : ci, b1 = p->nb > 1 ? bi + 1 : bi;
	double t00 = log(p->tbt[ci * p->nb + bi]), t01 = log(p->tbt[ci * p->nb + b1]);
	double t10 = log(p->tbt[c1 * p->nb + bi]), t11 = log(p->tbt[c1 * p->nb + b1]);
	double t0 = (1 - wb) * t00 + wb * t01, t1 = (1 - wb) * t10 + wb * t11;
	return exp((1 - wc) * t0 + wc * t1) * scale;
}

double tt_profile_prefill_tok_s(const struct tt_profile *p, int64_t context)
{
	if (!p || !p->np)
		return NAN;
	double c = context > 0 ? (double)context : 1.0;
	if (p->np == 1 || c <= p->pctx[0])
		return p->prate[0];
	if (c >= p->pctx[p->np - 1])
		return p->prate[p->np - 1];
	size_t i;
	double w;
	locate(p->pctx, p->np, c, &i, &w);
	return exp((1 - w) * log(p->prate[i]) + w * log(p->prate[i + 1]));
}

/* TTFT at one measured context, interpolated over log(concurrency). */
static double ttft_at(const struct tt_profile *p, int64_t context, double b)
{
	double lo_b = -1, lo_t = NAN, hi_b = -1, hi_t = NAN;

	for (size_t i = 0; i < p->n; i++) {
		const struct tt_profile_point *q = &p->pts[i];
		double qb = q->concurrency;
		if (q->phase != TT_PHASE_DECODE || q->context != context || !(q->ttft_ms > 0))
			continue;
		if (qb <= b && qb > lo_b) {
			lo_b = qb;
			lo_t = q->ttft_ms;
		}
		if (qb >= b && (hi_b < 0 || qb < hi_b)) {
			hi_b = qb;
			hi_t = q->ttft_ms;
		}
	}
	if (lo_b < 0)
		return hi_t;
	if (hi_b < 0 || hi_b == lo_b)
		return lo_t;
	{
		double w = log(b / lo_b) / log(hi_b / lo_b);
		return exp((1 - w) * log(lo_t) + w * log(hi_t));
	}
}

double tt_profile_ttft_ms(const struct tt_profile *p, int64_t context, double batch)
{
	int64_t lo = -1, hi = -1;
	double b = batch >= 1 ? batch : 1, tl, th, w;

	if (!p)
		return NAN;
	for (size_t i = 0; i < p->n; i++) {
		const struct tt_profile_point *q = &p->pts[i];
		if (q->phase != TT_PHASE_DECODE || !(q->ttft_ms > 0))
			continue;
		if (q->context <= context && q->context > lo)
			lo = q->context;
		if (q->context >= context && (hi < 0 || q->context < hi))
			hi = q->context;
	}
	if (lo < 0 && hi < 0)
		return NAN;
	if (lo < 0)
		return ttft_at(p, hi, b);
	if (hi < 0 || hi == lo)
		return ttft_at(p, lo, b);
	tl = ttft_at(p, lo, b);
	th = ttft_at(p, hi, b);
	w = log((double)context / (double)lo) / log((double)hi / (double)lo);
	return exp((1 - w) * log(tl) + w * log(th));
}
