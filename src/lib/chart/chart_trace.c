/* Charts drawn from raw traces rather than figures: reading a cell for the
 * timeline (drawn in chart_timeline.c) and the distribution of time between
 * tokens per context at one concurrency (read and drawn here).  Both read
 * cells through tt_run_read_cell, one cell at a time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart/chart_impl.h"
#include "chart/chart_trace.h"
#include "analysis/window.h"
#include "tokentrace/units.h"
#include "tokentrace/gauges.h"

/* ---- timeline ------------------------------------------------------- */

static void tl_span(struct tl_data *d, int64_t t)
{
	if (t < 0)
		return;
	if (t < d->tmin)
		d->tmin = t;
	if (t > d->tmax)
		d->tmax = t;
}

/* A request's share of each bin it overlaps (overlap / bin width), O(1)
 * per request: partial first and last bins directly, the full bins between
 * as steps of diff summed at the end. */
static void tl_interval(struct tl_data *d, double a, double e)
{
	double bin = d->bin_s, lo = fmax(a, 0), hi = fmin(e, (double)d->nb * bin);
	long b0, b1;

	if (!(hi > lo))
		return;
	b0 = (long)floor(lo / bin);
	b1 = (long)floor(hi / bin);
	if (b0 >= (long)d->nb)
		b0 = (long)d->nb - 1;
	if (b1 >= (long)d->nb)
		b1 = (long)d->nb - 1;
	if (b0 == b1) {
		d->act[b0] += (hi - lo) / bin;
		return;
	}
	d->act[b0] += ((double)(b0 + 1) * bin - lo) / bin;
	d->act[b1] += (hi - (double)b1 * bin) / bin;
	if (b1 > b0 + 1) {
		d->diff[b0 + 1] += 1;
		d->diff[b1] -= 1;
	}
}

static int tl_request(void *ctx, const struct tt_request *r)
{
	struct tl_data *d = ctx;

	if (d->pass == 1) {
		tl_span(d, r->t_send_ns);
		tl_span(d, r->t_end_ns);
		return 0;
	}
	/* docs/metrics.md M-timeline: tokens per bin / bin width, every role. */
	for (size_t i = 0; i < r->n_chunks; i++) {
		double ts = (double)(r->chunks[i].t_ns - d->t0) / 1e9;
		long b = (long)floor(ts / d->bin_s);
		if (r->chunks[i].tokens && b >= 0 && (size_t)b < d->nb)
			d->tok[b] += r->chunks[i].tokens;
	}
	/* Requests in flight: time-average of each bin (overlap / bin). */
	tl_interval(d, (double)(r->t_send_ns - d->t0) / 1e9,
		    (double)((r->t_end_ns >= 0 ? r->t_end_ns : d->tmax) - d->t0) / 1e9);
	return 0;
}

static int tl_scrape(void *ctx, const struct tt_scrape *s)
{
	struct tl_data *d = ctx;
	struct tl_scrape x;
	memset(&x, 0, sizeof x);
	x.t = s->t_ns;
	{
		/* One name per quantity, read as the figures read it (M-gauges). */
		double v[TT_GAUGE_COUNT_];
		unsigned found = tt_scrape_gauges(s, d->engine, v);
		x.has_running = (found >> TT_GAUGE_RUNNING) & 1;
		x.has_waiting = (found >> TT_GAUGE_WAITING) & 1;
		x.has_kv = (found >> TT_GAUGE_KV) & 1;
		x.running = x.has_running ? v[TT_GAUGE_RUNNING] : 0;
		x.waiting = x.has_waiting ? v[TT_GAUGE_WAITING] : 0;
		x.kv = x.has_kv ? v[TT_GAUGE_KV] : 0;
	}
	if (!x.has_running && !x.has_waiting && !x.has_kv)
		return 0;
	if (d->pass == 1) {
		d->scrapes_seen++;
		return 0;
	}
	if (d->scrape_k++ % d->scrape_stride != 0 || d->n_scrapes >= d->cap_scrapes)
		return 0;
	d->scrapes[d->n_scrapes++] = x;
	return 0;
}

#define GAP_SUB_BITS 7
#define GAP_MIN_EXP (-14)
#define GAP_MAX_EXP 20
#define GAP_BINS (((GAP_MAX_EXP - GAP_MIN_EXP) << GAP_SUB_BITS) + 3) /* + zero, under, over */

struct cdf_data {
	int64_t ws, we; /* the measured window; -1: none */
	uint64_t *bins; /* GAP_BINS token counts; bin 0 holds gaps of 0 */
	uint64_t tokens;
};

static int cdf_request(void *ctx, const struct tt_request *r);


void tt__tl_release(struct tl_read *t)
{
	free(t->d.tok);
	free(t->d.act);
	free(t->d.diff);
	free(t->d.scrapes);
	memset(t, 0, sizeof *t);
	t->cell = -1;
}

/* The timeline's cell is often one the CDF shows too (the highest
 * concurrency): with a cache, one read fills both. */
struct tl_both {
	struct tl_data *d;
	struct cdf_data cd;
	int with_gaps;
};

static int both_request(void *ctx, const struct tt_request *r)
{
	struct tl_both *b = ctx;
	if (b->with_gaps && b->d->pass == 1)
		cdf_request(&b->cd, r);
	return tl_request(b->d, r);
}

static int both_scrape(void *ctx, const struct tt_scrape *s)
{
	struct tl_both *b = ctx;
	return tl_scrape(b->d, s);
}

static double nice_bin(double span_s);

/* Between the passes: time 0 is the cell's start; the span covers
 * everything recorded, widened to the window and the end.  0 when out of
 * memory. */
static int tl_bins(struct tl_data *d, const struct tt_cell_info *ci)
{
	d->t0 = ci->start_ns >= 0 ? ci->start_ns : (d->tmin != INT64_MAX ? d->tmin : 0);
	tl_span(d, ci->window_start_ns);
	tl_span(d, ci->window_end_ns);
	if (ci->end_ns >= 0)
		tl_span(d, ci->end_ns);
	if (d->tmax <= d->t0)
		d->tmax = d->t0 + 1000000000;
	d->span_s = (double)(d->tmax - d->t0) / 1e9;
	d->bin_s = nice_bin(d->span_s);
	if (d->span_s / d->bin_s > TL_MAX_BINS)
		d->bin_s = d->span_s / TL_MAX_BINS; /* a span of hours or a forged time */
	d->nb = (size_t)ceil(d->span_s / d->bin_s);
	if (d->nb < 1)
		d->nb = 1;
	if (d->nb > TL_MAX_BINS)
		d->nb = TL_MAX_BINS;
	d->scrape_stride = d->scrapes_seen > TL_MAX_SCRAPES ?
				   (d->scrapes_seen + TL_MAX_SCRAPES - 1) / TL_MAX_SCRAPES : 1;
	d->cap_scrapes = d->scrapes_seen < TL_MAX_SCRAPES ? d->scrapes_seen : TL_MAX_SCRAPES;
	d->tok = calloc(d->nb, sizeof *d->tok);
	d->act = calloc(d->nb, sizeof *d->act);
	d->diff = calloc(d->nb + 1, sizeof *d->diff);
	d->scrapes = calloc(d->cap_scrapes + 1, sizeof *d->scrapes);
	return d->tok && d->act && d->diff && d->scrapes;
}

static void tl_finish(struct tl_data *d)
{
	double run = 0;
	for (size_t b = 0; b < d->nb; b++) {
		run += d->diff[b];
		d->act[b] += run;
	}
}

enum tt_code tt__tl_load(struct tt_run *run, const struct tt_analysis_opts *o,
			    const struct tt_cell_info *ci, long cell, struct tl_read *t,
			    struct gap_bins *g, struct tt_error *err)
{
	struct tt_trace_visitor v;
	struct tt_error rerr;
	struct tl_both both;
	tt__tl_release(t);
	t->d.engine = tt_run_manifest(run)->engine;
	t->d.tmin = INT64_MAX;
	t->d.tmax = INT64_MIN;
	memset(&both, 0, sizeof both);
	both.d = &t->d;
	if (g && !g->loaded) {
		if (!g->bins)
			g->bins = calloc(GAP_BINS, sizeof *g->bins);
		if (g->bins) {
			memset(g->bins, 0, GAP_BINS * sizeof *g->bins);
			tt__measured_window(o, ci, &both.cd.ws, &both.cd.we);
			both.cd.bins = g->bins;
			both.with_gaps = 1;
		}
	}
	v.ctx = &both;
	v.on_request = both_request;
	v.on_scrape = both_scrape;
	tt_error_clear(&rerr);
	t->d.pass = 1;
	t->rc = tt_run_read_cell(run, (size_t)cell, &v, &rerr);
	if (t->rc <= TT_WARN && tl_bins(&t->d, ci)) {
		struct tt_error e2;
		both.with_gaps = 0;
		t->d.pass = 2;
		tt_error_clear(&e2);
		(void)tt_run_read_cell(run, (size_t)cell, &v, &e2);
		tl_finish(&t->d);
	} else if (t->rc <= TT_WARN) {
		t->d.oom = 1;
	}
	if (both.with_gaps && t->rc <= TT_WARN && !t->d.oom) {
		g->tokens = both.cd.tokens;
		g->rc = t->rc;
		g->loaded = 1;
	}
	if (t->d.oom) {
		tt__tl_release(t);
		return tt_error_set(err, TT_ENOMEM, "out of memory reading cell '%s'", ci->id);
	}
	if (t->rc > TT_WARN) {
		enum tt_code rc = tt_error_setv(err, t->rc, rerr.kind, "cell '%s': %s", ci->id, rerr.msg);
		tt__tl_release(t);
		return rc;
	}
	snprintf(t->msg, sizeof t->msg, "%.500s", t->rc == TT_WARN ? rerr.msg : "");
	t->cell = cell;
	return TT_OK;
}

struct chart_cache *tt__chart_cache_create(struct tt_run *run, size_t n_cells)
{
	struct chart_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->run = run;
	c->tl.cell = -1;
	c->n_cells = n_cells;
	c->gaps = calloc(n_cells ? n_cells : 1, sizeof *c->gaps);
	if (!c->gaps) {
		free(c);
		return NULL;
	}
	return c;
}

void tt__chart_cache_free(struct chart_cache *c)
{
	if (!c)
		return;
	tt__tl_release(&c->tl);
	for (size_t i = 0; i < c->n_cells; i++)
		free(c->gaps[i].bins);
	free(c->gaps);
	free(c);
}

static double nice_bin(double span_s)
{
	static const double steps[] = {0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60};
	double want = span_s / 150;
	for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
		if (steps[i] >= want)
			return steps[i];
	return 60;
}

/* ---- distribution of time between tokens ----------------------------- */

/* Gaps go into log-spaced bins, 128 per doubling (0.54 % wide), from 2^-14
 * ms (61 ns) to 2^20 ms: a chart cannot show finer detail, and sorting
 * millions of gaps would cost more than the whole analysis.  The bin is
 * read off the double's exponent and top mantissa bits (HdrHistogram's
 * trick), so no logarithm is taken per token. */
static uint64_t gap_key(double ms)
{
	uint64_t u;
	memcpy(&u, &ms, sizeof u);
	return u >> (52 - GAP_SUB_BITS);
}

static size_t gap_bin(double ms)
{
	static const double lo = 0x1p-14, hi = 0x1p20;
	if (!(ms > 0))
		return 0;
	if (ms < lo)
		return 1;
	if (ms >= hi)
		return GAP_BINS - 1;
	return 2 + (size_t)(gap_key(ms) - gap_key(lo));
}

/* The value a bin stands for: its middle (under and over: the bounds). */
static double bin_value(size_t i)
{
	uint64_t u;
	double v;
	if (i == 0)
		return 0;
	if (i == 1)
		return 0x1p-14;
	if (i >= GAP_BINS - 1)
		return 0x1p20;
	u = (gap_key(0x1p-14) + (i - 2)) << (52 - GAP_SUB_BITS);
	u |= (uint64_t)1 << (52 - GAP_SUB_BITS - 1);
	memcpy(&v, &u, sizeof v);
	return v;
}

static int cdf_request(void *ctx, const struct tt_request *r)
{
	struct cdf_data *d = ctx;
	int64_t ws = d->ws, we = d->we, prev = -1;
	/* as the figures: only measured requests, only a cell with a window */
	if (r->role != TT_ROLE_MEASURED || ws < 0)
		return 0;
	for (size_t i = 0; i < r->n_chunks; i++) {
		const struct tt_chunk *ch = &r->chunks[i];
		if (ch->tokens == 0)
			continue;
		/* As the figures define it: a chunk in the window with a token
		 * chunk before it; a k-token chunk spreads its gap over k tokens. */
		if (ch->t_ns >= ws && ch->t_ns < we && prev >= 0) {
			double ms = (double)(ch->t_ns - prev) / 1e6 / ch->tokens;
			d->bins[gap_bin(ms)] += ch->tokens;
			d->tokens += ch->tokens;
		}
		prev = ch->t_ns;
	}
	return 0;
}

#define CDF_MAX_CTX 16
#define CDF_POINTS 400

static int default_cdf_concurrency(const struct tt_report *r)
{
	int best = 0;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *f = &r->cells[i];
		if (f->phase == TT_PHASE_DECODE && tt__chart_cell_has_value(f) && f->tbt_ms.n > 0 &&
		    f->concurrency > best)
			best = f->concurrency;
	}
	return best;
}

/* Value at cumulative share q of the binned gaps. */
static double binned_q(const uint64_t *bins, uint64_t total, double q)
{
	double want = q * (double)total, acc = 0;
	for (size_t i = 0; i < GAP_BINS; i++) {
		acc += (double)bins[i];
		if (bins[i] && acc >= want)
			return bin_value(i);
	}
	return NAN;
}

/* Bin the gaps of one cell, or take them from the cache. */
static enum tt_code gaps_load(struct tt_run *run, const struct tt_analysis_opts *o,
			      const struct tt_manifest *m, size_t cell, struct gap_bins *g,
			      struct tt_error *err)
{
	struct cdf_data cd;
	struct tt_trace_visitor v;
	struct tt_error rerr;
	if (g->loaded)
		return TT_OK;
	if (!g->bins)
		g->bins = calloc(GAP_BINS, sizeof *g->bins);
	if (!g->bins)
		return tt_error_set(err, TT_ENOMEM, "out of memory reading cell '%s'",
				    m->cells[cell].id);
	memset(g->bins, 0, GAP_BINS * sizeof *g->bins);
	tt__measured_window(o, &m->cells[cell], &cd.ws, &cd.we);
	cd.bins = g->bins;
	cd.tokens = 0;
	v.ctx = &cd;
	v.on_request = cdf_request;
	v.on_scrape = NULL;
	tt_error_clear(&rerr);
	g->rc = tt_run_read_cell(run, cell, &v, &rerr);
	if (g->rc > TT_WARN)
		return tt_error_setv(err, g->rc, rerr.kind, "cell '%s': %s", m->cells[cell].id,
				     rerr.msg);
	g->tokens = cd.tokens;
	g->loaded = 1;
	return TT_OK;
}

enum tt_code tt__chart_draw_tbt_cdf(struct canvas *c, double x, double y, double w, double h,
				const struct tt_report *r, struct tt_run *run, int concurrency,
				struct chart_cache *cache, struct tt_chart_info *info,
				struct tt_error *err)
{
	const struct tt_manifest *m = &r->manifest;
	struct gap_bins local;
	double px[CDF_MAX_CTX][CDF_POINTS + 2], py[CDF_MAX_CTX][CDF_POINTS + 2];
	struct series s[CDF_MAX_CTX];
	struct legend_item items[CDF_MAX_CTX];
	char names[CDF_MAX_CTX][24];
	int64_t ctx[CDF_MAX_CTX];
	size_t nctx, nser = 0;
	double xmin = INFINITY, xmax = -INFINITY, top, foot_h, legend_w;
	char title[256], sub[600], foot[1024];
	struct panel p;
	enum tt_code rc = TT_OK;
	uint64_t all_tokens = 0;
	int damaged = 0;

	memset(&local, 0, sizeof local);
	if (concurrency <= 0)
		concurrency = default_cdf_concurrency(r);
	if (concurrency <= 0)
		return tt_error_set(err, TT_ENOTFOUND,
				    "the run has no decode cell with time between tokens");
	nctx = tt__chart_decode_contexts(r, ctx, CDF_MAX_CTX);
	for (size_t i = 0; i < nctx; i++) {
		const struct tt_cell_figures *f =
			tt__chart_find_cell(r, TT_PHASE_DECODE, ctx[i], concurrency);
		struct gap_bins *cd;
		if (!f || f->cell >= m->n_cells || !m->cells[f->cell].trace ||
		    !tt__chart_cell_has_value(f))
			continue;
		if (cache && cache->run == run && f->cell < cache->n_cells) {
			cd = &cache->gaps[f->cell];
		} else {
			cd = &local;
			local.loaded = 0;
		}
		rc = gaps_load(run, &r->opts, m, f->cell, cd, err);
		if (rc != TT_OK)
			goto cleanup;
		damaged |= cd->rc == TT_WARN;
		if (cd->tokens == 0)
			continue; /* its bins are reused by the next context */
		xmin = fmin(xmin, binned_q(cd->bins, cd->tokens, 0.001));
		xmax = fmax(xmax, binned_q(cd->bins, cd->tokens, 0.999));
		all_tokens += cd->tokens;
		tt__fmt_tokens(ctx[i], names[nser], sizeof names[nser]);
		/* Evenly spaced shares: the curve is exact (to a bin) at every
		 * share a reader can see. */
		{
			size_t np = 0, j = 0;
			double acc = (double)cd->bins[0];
			for (int q = 0; q <= CDF_POINTS; q++) {
				double want = (double)q / CDF_POINTS * (double)cd->tokens;
				while (j + 1 < GAP_BINS && (acc < want || cd->bins[j] == 0)) {
					j++;
					acc += (double)cd->bins[j];
				}
				px[nser][np] = bin_value(j);
				py[nser][np] = (double)q / CDF_POINTS;
				np++;
			}
			s[nser] = (struct series){.name = names[nser], .n = np, .x = px[nser],
						  .y = py[nser], .colour = (int)i,
						  .shape = -1, .line_w = 2.2};
		}
		items[nser] = (struct legend_item){names[nser], (int)i, -1, 0};
		nser++;
	}
	if (nser == 0) {
		rc = tt_error_set(err, TT_ENOTFOUND,
				  "no decode cell at concurrency %d has tokens in its window",
				  concurrency);
		goto cleanup;
	}
	snprintf(title, sizeof title, "Time between tokens at %d request%s at once", concurrency,
		 concurrency == 1 ? "" : "s");
	tt__chart_subtitle(m, sub, sizeof sub);
	top = tt__chart_header(c, x + 20, y + 16, w - 40, title, sub);
	snprintf(foot, sizeof foot,
		 "Share of output tokens whose gap is at most the value. Each token counts "
		 "once: a chunk with k tokens spreads its gap over k tokens. Measured requests, "
		 "chunks in the window; %llu tokens; log scale.%s",
		 (unsigned long long)all_tokens,
		 damaged ? " Damaged parts of some traces were skipped." : "");
	{
		struct tstyle fs = tt__tstyle_make(11, 0, tt__chart_muted, 0, 0);
		foot_h = tt__cv_paragraph(c, 0, 0, w - 40, foot, &fs, 0);
	}
	legend_w = tt__legend_draw(c, 0, 0, "Context", items, nser, 0);
	memset(&p, 0, sizeof p);
	p.show_xticks = 1;
	p.xlabel = "Time between tokens";
	p.ylabel = "Share of tokens";
	p.series = s;
	p.n_series = nser;
	if (!(xmin > 0))
		xmin = xmax > 0 ? xmax / 100 : 0.01;
	tt__axis_fit(&p.x, AXIS_LOG10, UNIT_MS, xmin, xmax, 0);
	tt__axis_fit(&p.y, AXIS_LINEAR, UNIT_PERCENT, 0, 1, 1);
	p.y.hi = 1.02;
	while (p.y.n_ticks > 0 && p.y.ticks[p.y.n_ticks - 1] > 1.0001)
		p.y.n_ticks--;
	tt__panel_layout(c, &p, x + 20, y + top + 14, w - 40 - legend_w - 24,
		     h - top - 14 - foot_h - 20);
	/* Points beyond the axis ends are pinned to them, not dropped, so the
	 * curves still reach 0 % and 100 %. */
	for (size_t k = 0; k < nser; k++)
		for (size_t i = 0; i < s[k].n; i++)
			px[k][i] = fmin(fmax(px[k][i], p.x.lo), p.x.hi);
	tt__panel_draw(c, &p);
	tt__legend_draw(c, x + w - 20 - legend_w, p.y.p1, "Context", items, nser, 1);
	tt__chart_footnote(c, x + 20, y + h - foot_h - 12, w - 40, foot);
	if (info) {
		tt__chart_info_from_panel(info, c, &p);
		info->n_series = nser;
	}
	rc = tt__canvas_check(c, "the time-between-tokens distribution", err);
cleanup:
	free(local.bins);
	return rc;
}
