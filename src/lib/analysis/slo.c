/* Service level objectives: parsing and judging requests ("M-slo" in
 * docs/metrics.md). */
#include "tokentrace/slo.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/slo_impl.h"
#include "core/c_locale.h"
#include "tokentrace/units.h"

void tt_slo_init(struct tt_slo *s)
{
	memset(s, 0, sizeof *s);
	s->tbt_pct = 99;
	s->attain = 0.9;
}

int tt_slo_active(const struct tt_slo *s)
{
	return s && (s->ttft_ms > 0 || s->tbt_ms > 0 || s->e2e_ms > 0);
}

/* "500ms", "0.5s", "500" (ms) -> ms; -1 on error. */
static double parse_ms(const char *v)
{
	char *end;
	double d;

	d = tt__strtod_c(v, &end);
	if (end != v && *end == '\0')
		return isfinite(d) && d > 0 ? d : -1;
	d = tt_parse_duration(v);
	return d > 0 ? d * 1e3 : -1;
}

static enum tt_code bad(struct tt_error *err, const char *part, const char *why)
{
	return tt_error_set(err, TT_EARG, "SLO '%s': %s", part, why);
}

enum tt_code tt_slo_parse(const char *text, struct tt_slo *out, struct tt_error *err)
{
	struct tt_slo s;
	char buf[256], *tok, *save = NULL;
	int seen[4] = {0, 0, 0, 0};

	if (!text || !*text)
		return tt_error_set(err, TT_EARG, "SLO: empty (e.g. ttft=500ms,tbt=50ms)");
	if (strlen(text) >= sizeof buf)
		return tt_error_set(err, TT_EARG, "SLO: too long");
	tt_slo_init(&s);
	memcpy(buf, text, strlen(text) + 1);
	/* ttft=100ms@p99 and e2e=..@pQ: a per-request bound met by Q % of the
	 * requests, which is attain=Q (M-slo); one attainment per set */
	double at_q = -1;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *val;
		int k;

		if (!eq)
			return bad(err, tok, "not key=value (keys: ttft, tbt, e2e, attain)");
		*eq = '\0';
		val = eq + 1;
		k = !strcmp(tok, "ttft") ? 0 : !strcmp(tok, "tbt") ? 1 : !strcmp(tok, "e2e") ? 2 :
		    !strcmp(tok, "attain") ? 3 : -1;
		*eq = '=';
		if (k < 0)
			return bad(err, tok, "unknown key (keys: ttft, tbt, e2e, attain)");
		if (seen[k]++)
			return bad(err, tok, "given twice");
		if (k == 3) {
			char *end;
			double a = tt__strtod_c(val, &end);
			if (end == val || (*end && strcmp(end, "%") != 0) || !(a > 0 && a <= 100))
				return bad(err, tok, "attain is a percentage in (0, 100], e.g. 90");
			s.attain = a / 100;
			continue;
		}
		if (k == 0 || k == 2) {
			char *at = strchr(val, '@');
			if (at) {
				char *end, *p = at + 1;
				double q;
				if (*p == 'p')
					p++;
				q = tt__strtod_c(p, &end);
				if (end == p || *end || !(q > 0 && q <= 100))
					return bad(err, tok, "the quantile after '@' is a percentile in "
							     "(0, 100], e.g. ttft=500ms@p99 (the share "
							     "of requests that must meet it: attain=99)");
				if (at_q > 0 && q != at_q)
					return bad(err, tok, "a second quantile: the set has one share of "
							     "requests that must meet every bound; write "
							     "it once as attain=Q");
				at_q = q;
				*at = '\0';
			}
		}
		if (k == 1) {
			char *at = strchr(val, '@');
			if (at) {
				char *end, *p = at + 1;
				double q;
				if (*p == 'p')
					p++;
				q = tt__strtod_c(p, &end);
				if (end == p || *end || !(q > 0 && q <= 100))
					return bad(err, tok, "the quantile after '@' is a percentile in "
							     "(0, 100], e.g. tbt=50ms@p90");
				s.tbt_pct = q;
				*at = '\0';
			}
		}
		{
			double ms = parse_ms(val);
			if (ms <= 0)
				return bad(err, tok, "not a positive duration (e.g. 500ms, 2s)");
			if (k == 0)
				s.ttft_ms = ms;
			else if (k == 1)
				s.tbt_ms = ms;
			else
				s.e2e_ms = ms;
		}
	}
	if (!tt_slo_active(&s))
		return tt_error_set(err, TT_EARG,
				    "SLO '%s': no bound given (ttft, tbt or e2e)", text);
	if (at_q > 0) {
		if (seen[3] && fabs(s.attain * 100 - at_q) > 1e-9)
			return tt_error_set(err, TT_EARG,
					    "SLO '%s': @p%g and attain=%g disagree: the share of "
					    "requests that must meet the bounds is given once",
					    text, at_q, s.attain * 100);
		s.attain = at_q / 100;
	}
	*out = s;
	return TT_OK;
}

void tt_slo_format(const struct tt_slo *s, char *buf, size_t len)
{
	char a[64] = "", b[96] = "", c[64] = "", d[64] = "", q[32];
	char num[32];

	if (!len)
		return;
	buf[0] = '\0';
	if (!tt_slo_active(s))
		return;
	if (s->ttft_ms > 0) {
		tt__snprintf_c(num, sizeof num, "%.15g", s->ttft_ms);
		snprintf(a, sizeof a, "ttft=%sms,", num);
	}
	if (s->tbt_ms > 0) {
		tt__snprintf_c(num, sizeof num, "%.15g", s->tbt_ms);
		tt__snprintf_c(q, sizeof q, "%.15g", s->tbt_pct);
		snprintf(b, sizeof b, "tbt=%sms@p%s,", num, q);
	}
	if (s->e2e_ms > 0) {
		tt__snprintf_c(num, sizeof num, "%.15g", s->e2e_ms);
		snprintf(c, sizeof c, "e2e=%sms,", num);
	}
	tt__snprintf_c(d, sizeof d, "attain=%.15g", s->attain * 100);
	snprintf(buf, len, "%s%s%s%s", a, b, c, d);
}

struct tt_slo_judge {
	struct tt_slo slo;
	int64_t *gaps;
	size_t cap;
};

enum tt_code tt_slo_judge_create(const struct tt_slo *s, struct tt_slo_judge **out,
				 struct tt_error *err)
{
	struct tt_slo_judge *j = calloc(1, sizeof *j);

	if (!j)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	if (s)
		j->slo = *s;
	else
		tt_slo_init(&j->slo);
	*out = j;
	return TT_OK;
}

void tt_slo_judge_free(struct tt_slo_judge *j)
{
	if (!j)
		return;
	free(j->gaps);
	free(j);
}

/* Move the k-th smallest of v[0..n) to v[k], smaller ones before it and
 * larger ones after (Hoare's selection; linear on average: a request's
 * gaps are judged once, and sorting them cost 10x the rest of the
 * analysis). */
static void select_kth(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (hi > lo) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		int64_t a = v[lo], b = v[mid], c = v[hi], pivot;
		/* median of three */
		pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				int64_t t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* M-slo: per-token gaps of the request spread as M-tbt spreads them (a
 * k-token chunk gives k samples of gap/k, truncated to whole ns), the
 * request's tbt_pct quantile by M-pct, exactly (no histogram). */
static enum tt_code request_tbt(struct tt_slo_judge *j, const struct tt_request *r,
				double *out_ms)
{
	size_t n = 0, need = 0, lo;
	int64_t prev = -1, x_lo, x_hi;
	double rank, frac;

	for (size_t i = 0; i < r->n_chunks; i++)
		need += r->chunks[i].tokens;
	if (need > j->cap) {
		int64_t *g = realloc(j->gaps, need * sizeof *g);
		if (!g)
			return TT_FAILED;
		j->gaps = g;
		j->cap = need;
	}
	for (size_t i = 0; i < r->n_chunks; i++) {
		uint32_t k = r->chunks[i].tokens;
		int64_t t = r->chunks[i].t_ns;
		if (k == 0)
			continue;
		if (prev >= 0) {
			int64_t g = k == 1 ? t - prev : (t - prev) / (int64_t)k;
			if (g > 0) /* as M-tbt: samples <= 0 are dropped */
				for (uint32_t x = 0; x < k; x++)
					j->gaps[n++] = g;
		}
		prev = t;
	}
	if (n == 0) {
		*out_ms = NAN;
		return TT_OK;
	}
	/* M-pct: x_lo + frac (x_lo+1 - x_lo) at rank p/100 (n-1) */
	rank = j->slo.tbt_pct >= 100 ? (double)(n - 1) : j->slo.tbt_pct / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	if (lo >= n)
		lo = n - 1;
	frac = rank - (double)lo;
	select_kth(j->gaps, n, lo);
	x_lo = j->gaps[lo];
	x_hi = x_lo;
	if (lo + 1 < n) {
		x_hi = j->gaps[lo + 1];
		for (size_t i = lo + 2; i < n; i++)
			if (j->gaps[i] < x_hi)
				x_hi = j->gaps[i];
	}
	*out_ms = ((double)x_lo + ((double)x_hi - (double)x_lo) * frac) / 1e6;
	return TT_OK;
}

/* What decides the TBT bound, gathered gap by gap.  With c of a request's n
 * per-token gaps above the bound, sorted ascending the quantile's two
 * neighbours x_lo, x_lo+1 (M-pct) are both within it when lo + 1 < n - c,
 * x_lo is above it when lo >= n - c, and otherwise x_lo is the largest gap
 * within the bound and x_lo+1 the smallest above it: no gap is kept. */
void tt__slo_acc_init(const struct tt_slo *s, struct tt__slo_acc *a)
{
	a->bound = s->tbt_ms > 0 ? (int64_t)floor(s->tbt_ms * 1e6) : INT64_MAX;
	a->n = a->c = 0;
	a->max_le = -1;
	a->min_gt = INT64_MAX;
}

int tt__slo_decide(const struct tt_slo *s, const struct tt_request *r, int64_t first,
		   const struct tt__slo_acc *a)
{
	int meets = r->finish != TT_FINISH_ERROR;
	double rank;
	size_t lo;

	/* a request without a token misses a TTFT bound (it never came) */
	if (s->ttft_ms > 0 && !(first >= 0 && (double)(first - r->t_send_ns) / 1e6 <= s->ttft_ms))
		meets = 0;
	if (s->e2e_ms > 0 && !((double)(r->t_end_ns - r->t_send_ns) / 1e6 <= s->e2e_ms))
		meets = 0;
	/* no gap (one token-bearing chunk), or none above the bound: nothing missed */
	if (!meets || s->tbt_ms <= 0 || a->n == 0 || a->c == 0)
		return meets;
	rank = s->tbt_pct >= 100 ? (double)(a->n - 1) : s->tbt_pct / 100.0 * (double)(a->n - 1);
	lo = (size_t)rank;
	if (lo + 1 < a->n - a->c)
		return 1;
	if (lo >= a->n - a->c)
		return 0;
	/* x_lo = max_le, x_lo+1 = min_gt: interpolate as M-pct does */
	return (double)a->max_le + ((double)a->min_gt - (double)a->max_le) * (rank - (double)lo) <=
	       s->tbt_ms * 1e6;
}

int tt__slo_meets(const struct tt_slo *s, const struct tt_request *r, long *tokens)
{
	struct tt__slo_acc acc;
	int64_t prev = -1, first = -1;
	long tok = 0;

	tt__slo_acc_init(s, &acc);
	for (size_t i = 0; i < r->n_chunks; i++) {
		uint32_t k = r->chunks[i].tokens;
		int64_t t = r->chunks[i].t_ns;
		if (k == 0)
			continue;
		tok += k;
		if (prev >= 0)
			tt__slo_acc_gap(&acc, k == 1 ? t - prev : (t - prev) / (int64_t)k, k);
		else
			first = t;
		prev = t;
	}
	*tokens = tok;
	return tt__slo_decide(s, r, first, &acc);
}

enum tt_code tt_slo_judge_request(struct tt_slo_judge *j, const struct tt_request *r,
				  struct tt_slo_verdict *v)
{
	const struct tt_slo *s = &j->slo;
	struct tt_slo_verdict x;
	int64_t first = -1;

	memset(&x, 0, sizeof x);
	for (size_t i = 0; i < r->n_chunks; i++) {
		if (r->chunks[i].tokens == 0)
			continue;
		if (first < 0)
			first = r->chunks[i].t_ns;
		x.tokens += r->chunks[i].tokens;
	}
	x.ttft_ms = first >= 0 ? (double)(first - r->t_send_ns) / 1e6 : NAN;
	x.e2e_ms = (double)(r->t_end_ns - r->t_send_ns) / 1e6;
	x.tbt_ms = NAN;
	if (s->tbt_ms > 0 && request_tbt(j, r, &x.tbt_ms))
		return TT_FAILED;
	/* decided exactly as the analysis decides it (in whole ns, one pass),
	 * not from the rounded values above */
	x.meets = tt__slo_meets(s, r, &x.tokens);
	*v = x;
	return TT_OK;
}
