/* Text reports: format names and what every renderer agrees on
 * (cell order, quantile keys, which figures a cell shows). */
#include "text/render_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/units.h"

static const char *const format_names[] = {"term", "md", "csv", "json", "html", "pdf"};

int tt_format_parse(const char *name)
{
	size_t i;

	if (!name)
		return -1;
	for (i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
		if (strcmp(name, format_names[i]) == 0)
			return (int)i;
	if (strcmp(name, "markdown") == 0)
		return TT_FORMAT_MD;
	return -1;
}

/* ---- shared by the renderers ------------------------------------------ */

/* The report's cell order (formats/report-json.md 5): prefill cells, then
 * decode cells, then open-loop (rate) cells; each by context, then decode
 * by concurrency and open-loop by rate (a sweep adds its cells in the
 * order it searched, not by rate). */
static int phase_rank(enum tt_phase p)
{
	return p == TT_PHASE_PREFILL ? 0 : p == TT_PHASE_DECODE ? 1 : 2;
}

static int cell_before(const struct tt_cell_figures *x, const struct tt_cell_figures *y)
{
	if (x->phase != y->phase)
		return phase_rank(x->phase) < phase_rank(y->phase);
	if (x->context != y->context)
		return x->context < y->context;
	if (x->phase == TT_PHASE_RATE)
		return x->rate < y->rate;
	return x->concurrency < y->concurrency;
}

size_t *tt__render_order(const struct tt_report *r)
{
	size_t *idx, i, j;

	if (!r->n_cells)
		return NULL;
	idx = malloc(r->n_cells * sizeof *idx);
	if (!idx)
		return NULL;
	/* Insertion sort: stable, no global context for a comparator, and a
	 * matrix has tens to hundreds of cells. */
	for (i = 0; i < r->n_cells; i++) {
		for (j = i; j > 0 && cell_before(&r->cells[i], &r->cells[idx[j - 1]]); j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	return idx;
}

size_t tt__render_quantiles(const struct tt_report *r, const double **q)
{
	static const double defaults[] = {90, 99};

	if (r->opts.n_quantiles == 0 || r->opts.n_quantiles > TT_MAX_QUANTILES) {
		*q = defaults;
		return 2;
	}
	*q = r->opts.quantiles;
	return r->opts.n_quantiles;
}

void tt__render_qkey(double q, char *buf, size_t len)
{
	char num[32];

	tt__fmt_exact(q, num, sizeof num);
	snprintf(buf, len, "p%s", num);
}

size_t tt__render_q_min_n(double p)
{
	if (p == 50)
		return 1;
	/* at least one sample beyond the percentile's rank on its side */
	return (size_t)ceil((p > 50 ? 100 / (100 - p) : 100 / p) - 1e-9);
}

double tt__render_q(const struct tt_dist *d, size_t i, double p)
{
	if (!d->n || i >= TT_MAX_QUANTILES || d->n < tt__render_q_min_n(p))
		return NAN;
	return d->q[i];
}

int tt__render_q_short(const struct tt_dist *d, double p, char *buf, size_t len)
{
	if (!d->n || d->n >= tt__render_q_min_n(p))
		return 0;
	/* no '<': markdown and HTML would escape it */
	snprintf(buf, len, "needs n\xe2\x89\xa5%zu", tt__render_q_min_n(p));
	return 1;
}

const char *tt__render_note(const struct tt_manifest *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n_notes; i++)
		if (m->notes[i].key && strcmp(m->notes[i].key, key) == 0)
			return m->notes[i].value && *m->notes[i].value ? m->notes[i].value : NULL;
	return NULL;
}

void tt__render_cell_id(const struct tt_report *r, const struct tt_cell_figures *c, char *buf,
		       size_t len)
{
	const struct tt_manifest *m = &r->manifest;

	if (c->cell < m->n_cells && m->cells && m->cells[c->cell].id) {
		snprintf(buf, len, "%s", m->cells[c->cell].id);
		return;
	}
	if (c->phase == TT_PHASE_PREFILL)
		snprintf(buf, len, "prefill-%lld", (long long)c->context);
	else
		snprintf(buf, len, "decode-%lldx%d", (long long)c->context, c->concurrency);
}

void tt__render_context(int64_t context, char *buf, size_t len)
{
	tt_format_tokens(context, buf, len);
}

int tt__render_output_lengths(const struct tt_manifest *m, char *buf, size_t len)
{
	buf[0] = '\0';
	if (m->output_max <= 0)
		return 0;
	if (m->n_output_bins)
		snprintf(buf, len, "from a histogram%s%s%s of %zu bins, %lld to %lld tokens",
			 m->output_hist_file ? " (" : "", m->output_hist_file ? m->output_hist_file : "",
			 m->output_hist_file ? ")" : "", m->n_output_bins, (long long)m->output_min,
			 (long long)m->output_max);
	else
		snprintf(buf, len, "uniform, %lld to %lld tokens", (long long)m->output_min,
			 (long long)m->output_max);
	return 1;
}

int tt__render_has_counts(const struct tt_cell_figures *c)
{
	if (c->status == TT_STATUS_OVER_CAPACITY)
		return 0;
	if (c->status == TT_STATUS_NOT_RUN && c->requests <= 0)
		return 0;
	return 1;
}

int tt__render_has_decode_figures(const struct tt_cell_figures *c)
{
	return c->phase == TT_PHASE_DECODE && tt__render_has_counts(c);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sorted distinct contexts (or concurrency levels) of cells in a phase; at
 * most cap of them (later new values are dropped once full). */
size_t tt__render_distinct(const struct tt_report *r, enum tt_phase phase, int want_conc,
			  int64_t *vals, size_t cap)
{
	size_t n = 0, i, j, k;

	/* Room for every cell: sort once (inserting one by one is quadratic,
	 * which a manifest of 100k cells turns into minutes). */
	if (cap >= r->n_cells) {
		for (i = 0; i < r->n_cells; i++)
			if (r->cells[i].phase == phase)
				vals[n++] = want_conc ? r->cells[i].concurrency : r->cells[i].context;
		if (n > 1)
			qsort(vals, n, sizeof *vals, cmp_i64);
		for (i = j = 0; i < n; i++)
			if (j == 0 || vals[j - 1] != vals[i])
				vals[j++] = vals[i];
		return j;
	}
	for (i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[i];
		int64_t v = want_conc ? c->concurrency : c->context;

		if (c->phase != phase)
			continue;
		for (j = 0; j < n && vals[j] < v; j++)
			;
		if ((j < n && vals[j] == v) || n == cap)
			continue;
		for (k = n; k > j; k--)
			vals[k] = vals[k - 1];
		vals[j] = v;
		n++;
	}
	return n;
}

static size_t find_i64(const int64_t *v, size_t n, int64_t x)
{
	const int64_t *p = bsearch(&x, v, n, sizeof *v, cmp_i64);
	return p ? (size_t)(p - v) : n;
}

const struct tt_cell_figures **tt__render_grid(const struct tt_report *r, const int64_t *ctxs,
					       size_t nctx, const int64_t *concs, size_t nconc)
{
	const struct tt_cell_figures **g;

	if (!nctx || !nconc || nctx > TT__RENDER_MAX_GRID / nconc)
		return NULL;
	g = calloc(nctx * nconc, sizeof *g);
	if (!g)
		return NULL;
	for (size_t i = 0; i < r->n_cells; i++) {
		const struct tt_cell_figures *c = &r->cells[i];
		size_t row, col;
		if (c->phase != TT_PHASE_DECODE)
			continue;
		row = find_i64(ctxs, nctx, c->context);
		col = find_i64(concs, nconc, c->concurrency);
		if (row < nctx && col < nconc && !g[row * nconc + col])
			g[row * nconc + col] = c;
	}
	return g;
}
