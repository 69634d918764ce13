/* trend: many runs kept as their figures, put in order, cut into one series
 * per cell x figure, and each series' change points (docs/trend.md). */
#include "trend/trend_impl.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_impl.h"

void tt_trend_opts_init(struct tt_trend_opts *o)
{
	memset(o, 0, sizeof *o);
	o->alpha = 0.01;
	o->permutations = 199;
	o->seed = 1;
	o->min_size = 3;
	o->min_change = 2;
	o->tail = 90;
	o->order = TT_TREND_ORDER_START;
}

enum tt_code tt_trend_create(const struct tt_trend_opts *opts, struct tt_trend **out,
			     struct tt_error *err)
{
	struct tt_trend *t;
	struct tt_trend_opts o;

	*out = NULL;
	if (opts)
		o = *opts;
	else
		tt_trend_opts_init(&o);
	if (!(o.alpha > 0 && o.alpha < 0.5))
		return tt_error_set(err, TT_EARG, "trend: alpha %g is not in (0, 0.5)", o.alpha);
	if (o.permutations < 19 || o.permutations > 100000)
		return tt_error_set(err, TT_EARG, "trend: %u permutations is not in 19..100000",
				    o.permutations);
	if (o.alpha * (o.permutations + 1.0) < 1)
		return tt_error_set(err, TT_EARG, "trend: %u permutations cannot show a p-value "
				    "of %g (at least %.0f needed)", o.permutations, o.alpha,
				    ceil(1 / o.alpha - 1));
	if (o.min_size < 2)
		return tt_error_set(err, TT_EARG, "trend: a level needs at least 2 runs, not %u",
				    o.min_size);
	if (!(o.min_change >= 0) || !(o.tail > 50 && o.tail < 100))
		return tt_error_set(err, TT_EARG, "trend: min_change %g or tail %g out of range",
				    o.min_change, o.tail);
	if (o.order == TT_TREND_ORDER_KEY && !o.key[0])
		return tt_error_set(err, TT_EARG, "trend: ordering by key needs a key name");
	if (!(t = calloc(1, sizeof *t)))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	t->o = o;
	*out = t;
	return TT_OK;
}

void tt_trend_run_release(struct tt_trend_run *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->engine);
	free(r->engine_version);
	free(r->key);
	free(r->cells);
	memset(r, 0, sizeof *r);
}

void tt_trend_free(struct tt_trend *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_runs; i++)
		tt_trend_run_release(&t->runs[i]);
	free(t->runs);
	free(t);
}

size_t tt_trend_runs(const struct tt_trend *t)
{
	return t ? t->n_runs : 0;
}

void tt_trend_analysis_opts(const struct tt_trend *t, const struct tt_analysis_opts *base,
			    struct tt_analysis_opts *out)
{
	if (base)
		*out = *base;
	else
		tt_analysis_opts_init(out);
	if (out->n_quantiles == 0) {
		out->n_quantiles = 2;
		out->quantiles[0] = 90;
		out->quantiles[1] = 99;
	}
	if (out->n_quantiles > TT_MAX_QUANTILES)
		out->n_quantiles = TT_MAX_QUANTILES;
	for (size_t i = 0; i < out->n_quantiles; i++)
		if (out->quantiles[i] == t->o.tail)
			return;
	if (out->n_quantiles == TT_MAX_QUANTILES)
		out->n_quantiles--;
	out->quantiles[out->n_quantiles++] = t->o.tail;
}

static char *dup_or_null(const char *s, int *oom)
{
	char *d;

	if (!s)
		return NULL;
	if (!(d = strdup(s)))
		*oom = 1;
	return d;
}

/* The run's value of a key (docs/trend.md "Order"): a manifest member or a
 * note; NULL when it has none. */
static const char *key_of(const struct tt_manifest *m, const char *key)
{
	if (!strcmp(key, "engine_version"))
		return m->engine_version;
	if (!strcmp(key, "engine"))
		return m->engine;
	if (!strcmp(key, "model"))
		return m->model;
	if (!strcmp(key, "created"))
		return m->created;
	if (!strcmp(key, "tool_version"))
		return m->tool_version;
	return tt_manifest_note(m, key);
}

enum tt_code tt_trend_run_from_report(const struct tt_trend *t, const struct tt_report *rep,
				      const char *path, struct tt_trend_run *out,
				      struct tt_error *err)
{
	const struct tt_manifest *m = &rep->manifest;
	size_t tail_q = TT_MAX_QUANTILES;
	int oom = 0;

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < rep->opts.n_quantiles && i < TT_MAX_QUANTILES; i++)
		if (rep->opts.quantiles[i] == t->o.tail) {
			tail_q = i;
			break;
		}
	out->path = dup_or_null(path ? path : rep->source, &oom);
	out->engine = dup_or_null(m->engine, &oom);
	out->engine_version = dup_or_null(m->engine_version, &oom);
	out->key = t->o.key[0] ? dup_or_null(key_of(m, t->o.key), &oom) : NULL;
	out->start_unix_ns = m->origin_unix_ns > 0 ? m->origin_unix_ns : 0;
	out->imported = m->n_sources > 0;
	out->cells = calloc(rep->n_cells ? rep->n_cells : 1, sizeof *out->cells);
	if (oom || !out->cells) {
		tt_trend_run_release(out);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < rep->n_cells; i++) {
		const struct tt_cell_figures *c = &rep->cells[i];
		struct tt_trend_cell *tc = &out->cells[out->n_cells];

		if (c->cell >= m->n_cells || !m->cells[c->cell].id)
			continue;
		snprintf(tc->id, sizeof tc->id, "%s", m->cells[c->cell].id);
		tc->phase = c->phase;
		tc->status = c->status;
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
			tc->v[f] = tt__diff_figure_of(c, (enum tt_diff_figure)f, tail_q);
		out->n_cells++;
	}
	return TT_OK;
}

static enum tt_code grow(struct tt_trend *t, struct tt_error *err)
{
	if (t->n_runs == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 16;
		struct tt_trend_run *g = realloc(t->runs, nc * sizeof *g);
		if (!g)
			return tt_error_set(err, TT_ENOMEM, "out of memory");
		t->runs = g;
		t->cap = nc;
	}
	return TT_OK;
}

enum tt_code tt_trend_add_report(struct tt_trend *t, const struct tt_report *rep,
				 const char *path, struct tt_error *err)
{
	if (tt_failed(grow(t, err)))
		return TT_FAILED;
	if (tt_failed(tt_trend_run_from_report(t, rep, path, &t->runs[t->n_runs], err)))
		return TT_FAILED;
	t->n_runs++;
	return TT_OK;
}

enum tt_code tt_trend_add_figures(struct tt_trend *t, const struct tt_trend_run *r,
				  struct tt_error *err)
{
	struct tt_trend_run *d;
	int oom = 0;

	if (tt_failed(grow(t, err)))
		return TT_FAILED;
	d = &t->runs[t->n_runs];
	memset(d, 0, sizeof *d);
	d->path = dup_or_null(r->path, &oom);
	d->engine = dup_or_null(r->engine, &oom);
	d->engine_version = dup_or_null(r->engine_version, &oom);
	d->key = dup_or_null(r->key, &oom);
	d->start_unix_ns = r->start_unix_ns;
	d->imported = r->imported;
	d->cells = malloc((r->n_cells ? r->n_cells : 1) * sizeof *d->cells);
	if (oom || !d->cells) {
		tt_trend_run_release(d);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	if (r->n_cells)
		memcpy(d->cells, r->cells, r->n_cells * sizeof *d->cells);
	d->n_cells = r->n_cells;
	t->n_runs++;
	return TT_OK;
}

enum tt_code tt_trend_add_run(struct tt_trend *t, struct tt_run *run, const char *path,
			      const struct tt_analysis_opts *ao, struct tt_error *err)
{
	struct tt_analysis_opts o;
	struct tt_report *rep = NULL;
	enum tt_code rc, arc;

	tt_trend_analysis_opts(t, ao, &o);
	arc = tt_analyze(run, &o, &rep, err);
	if (tt_failed(arc))
		return arc;
	rc = tt_trend_add_report(t, rep, path ? path : tt_run_path(run), err);
	tt_report_free(rep);
	return tt_failed(rc) ? rc : arc;
}

/* ---- order -------------------------------------------------------------- */

int tt__trend_vercmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *ea, *eb;
			size_t la, lb;
			int c;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (ea = a; isdigit((unsigned char)*ea); ea++)
				;
			for (eb = b; isdigit((unsigned char)*eb); eb++)
				;
			la = (size_t)(ea - a);
			lb = (size_t)(eb - b);
			if (la != lb)
				return la < lb ? -1 : 1;
			if ((c = memcmp(a, b, la)) != 0)
				return c < 0 ? -1 : 1;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

struct order_item {
	struct tt_trend_run *r;
	size_t given;
	enum tt_trend_order order; /* the same in every item: qsort has no context */
};

static int cmp_runs(const void *pa, const void *pb)
{
	const struct order_item *a = pa, *b = pb;

	if (a->order == TT_TREND_ORDER_KEY) {
		if (!a->r->key != !b->r->key)
			return a->r->key ? -1 : 1;
		if (a->r->key) {
			int c = tt__trend_vercmp(a->r->key, b->r->key);
			if (c)
				return c;
		}
	}
	if (a->order != TT_TREND_ORDER_GIVEN) {
		/* runs without a start time go last; start breaks a key's ties */
		if (!a->r->start_unix_ns != !b->r->start_unix_ns)
			return a->r->start_unix_ns ? -1 : 1;
		if (a->r->start_unix_ns != b->r->start_unix_ns)
			return a->r->start_unix_ns < b->r->start_unix_ns ? -1 : 1;
	}
	return a->given < b->given ? -1 : a->given > b->given;
}

static enum tt_code order_runs(struct tt_trend *t, struct tt_error *err)
{
	struct order_item *v;
	struct tt_trend_run *sorted;

	if (t->n_runs < 2)
		return TT_OK;
	v = malloc(t->n_runs * sizeof *v);
	sorted = malloc(t->n_runs * sizeof *sorted);
	if (!v || !sorted) {
		free(v);
		free(sorted);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->n_runs; i++) {
		v[i].r = &t->runs[i];
		v[i].given = i;
		v[i].order = t->o.order;
	}
	qsort(v, t->n_runs, sizeof *v, cmp_runs);
	for (size_t i = 0; i < t->n_runs; i++)
		sorted[i] = *v[i].r;
	free(t->runs);
	free(v);
	t->runs = sorted;
	t->cap = t->n_runs;
	return TT_OK;
}

/* ---- series and changes ------------------------------------------------ */

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001B3ULL;
	return h;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (sorted in place). */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void tt_trend_result_free(struct tt_trend_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_series; i++) {
		free(r->series[i].run);
		free(r->series[i].value);
	}
	free(r->series);
	free(r->changes);
	free(r);
}

/* The cells of the history: ids in first-seen order over the ordered runs. */
struct cellset {
	char (*id)[64];
	enum tt_phase *phase;
	size_t n, cap;
};

static long cellset_find(const struct cellset *cs, const char *id, size_t hint)
{
	if (hint < cs->n && !strcmp(cs->id[hint], id))
		return (long)hint;
	for (size_t i = 0; i < cs->n; i++)
		if (!strcmp(cs->id[i], id))
			return (long)i;
	return -1;
}

static int cellset_add(struct cellset *cs, const struct tt_trend_cell *c)
{
	if (cs->n == cs->cap) {
		size_t nc = cs->cap ? cs->cap * 2 : 32;
		char (*gi)[64] = realloc(cs->id, nc * sizeof *gi);
		enum tt_phase *gp;
		if (!gi)
			return -1;
		cs->id = gi;
		if (!(gp = realloc(cs->phase, nc * sizeof *gp)))
			return -1;
		cs->phase = gp;
		cs->cap = nc;
	}
	memcpy(cs->id[cs->n], c->id, sizeof c->id);
	cs->phase[cs->n] = c->phase;
	cs->n++;
	return 0;
}

/* The figures that apply to a phase (tt__diff_figure_of gives NaN to the
 * others): a decode cell has six, a prefill row one. */
static int figure_applies(enum tt_phase ph, int f)
{
	if (ph == TT_PHASE_PREFILL)
		return f == TT_DIFF_PREFILL;
	if (ph == TT_PHASE_DECODE)
		return f != TT_DIFF_PREFILL;
	return 0;
}

static enum tt_code find_changes(struct tt_trend_result *res, struct tt_error *err)
{
	const struct tt_trend_opts *o = &res->opts;
	size_t cap = 0;

	for (size_t s = 0; s < res->n_series; s++) {
		struct tt_trend_series *se = &res->series[s];
		size_t *idx = NULL, n_idx = 0;
		double *p = NULL, *tmp;
		uint64_t stream = fnv(se->cell, 0xCBF29CE484222325ULL) ^ (uint64_t)(se->figure + 1);

		se->first_change = res->n_changes;
		if (tt_failed(tt_trend_changes(se->value, se->n, o, stream, &idx, &p, &n_idx,
					       &res->tests, err)))
			return TT_FAILED;
		if (!(tmp = malloc((se->n ? se->n : 1) * sizeof *tmp))) {
			free(idx);
			free(p);
			return tt_error_set(err, TT_ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < n_idx; k++) {
			size_t lo = k ? idx[k - 1] : 0, at = idx[k];
			size_t hi = k + 1 < n_idx ? idx[k + 1] : se->n;
			struct tt_trend_change c;

			memset(&c, 0, sizeof c);
			memcpy(tmp, se->value + lo, (at - lo) * sizeof *tmp);
			c.before = median(tmp, at - lo);
			memcpy(tmp, se->value + at, (hi - at) * sizeof *tmp);
			c.after = median(tmp, hi - at);
			c.change_pct = (c.after - c.before) / c.before * 100;
			if (!(fabs(c.change_pct) >= o->min_change))
				continue;
			c.series = s;
			c.point = at;
			c.run = se->run[at];
			c.p_value = p[k];
			c.regression = tt_diff_figure_higher_better(se->figure) ? c.after < c.before
										 : c.after > c.before;
			if (res->n_changes == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct tt_trend_change *g = realloc(res->changes, nc * sizeof *g);
				if (!g) {
					free(idx);
					free(p);
					free(tmp);
					return tt_error_set(err, TT_ENOMEM, "out of memory");
				}
				res->changes = g;
				cap = nc;
			}
			res->changes[res->n_changes++] = c;
		}
		se->n_changes = res->n_changes - se->first_change;
		free(idx);
		free(p);
		free(tmp);
	}
	return TT_OK;
}

enum tt_code tt_trend_analyze(struct tt_trend *t, struct tt_trend_result **out,
			      struct tt_error *err)
{
	struct tt_trend_result *res;
	struct cellset cs;
	long *at = NULL; /* at[run * n_cells + cell]: the run's cell index, -1 */
	enum tt_code rc = TT_FAILED;

	*out = NULL;
	memset(&cs, 0, sizeof cs);
	if (!(res = calloc(1, sizeof *res)))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	res->opts = t->o;
	if (tt_failed(order_runs(t, err)))
		goto cleanup;
	res->runs = t->runs;
	res->n_runs = t->n_runs;
	for (size_t i = 0; i < t->n_runs; i++) {
		if (t->o.order == TT_TREND_ORDER_KEY && !t->runs[i].key)
			res->no_key++;
		if (t->o.order != TT_TREND_ORDER_GIVEN && !t->runs[i].start_unix_ns)
			res->no_start++;
		for (size_t c = 0; c < t->runs[i].n_cells; c++)
			if (cellset_find(&cs, t->runs[i].cells[c].id, c) < 0 &&
			    cellset_add(&cs, &t->runs[i].cells[c])) {
				rc = tt_error_set(err, TT_ENOMEM, "out of memory");
				goto cleanup;
			}
	}
	if (cs.n && t->n_runs) {
		if (!(at = malloc(t->n_runs * cs.n * sizeof *at))) {
			rc = tt_error_set(err, TT_ENOMEM, "out of memory");
			goto cleanup;
		}
		for (size_t i = 0; i < t->n_runs * cs.n; i++)
			at[i] = -1;
		for (size_t i = 0; i < t->n_runs; i++)
			for (size_t c = 0; c < t->runs[i].n_cells; c++) {
				long k = cellset_find(&cs, t->runs[i].cells[c].id, c);
				if (k >= 0 && at[i * cs.n + (size_t)k] < 0)
					at[i * cs.n + (size_t)k] = (long)c;
			}
		for (size_t k = 0; k < cs.n; k++)
			for (size_t i = 0; i < t->n_runs; i++)
				if (at[i * cs.n + k] < 0) {
					res->partial_cells++;
					break;
				}
	}
	res->series = calloc(cs.n * TT_DIFF_FIGURE_COUNT_ + 1, sizeof *res->series);
	if (!res->series) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory");
		goto cleanup;
	}
	for (size_t k = 0; k < cs.n; k++)
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			struct tt_trend_series *se = &res->series[res->n_series];

			if (!figure_applies(cs.phase[k], f))
				continue;
			memcpy(se->cell, cs.id[k], sizeof se->cell);
			se->figure = (enum tt_diff_figure)f;
			se->run = malloc(t->n_runs * sizeof *se->run + 1);
			se->value = malloc(t->n_runs * sizeof *se->value + 1);
			if (!se->run || !se->value) {
				res->n_series++; /* freed with the result */
				rc = tt_error_set(err, TT_ENOMEM, "out of memory");
				goto cleanup;
			}
			/* M-total, M-ttft ...: a rate or a time, positive where
			 * measured; NaN or 0 is a cell without it */
			for (size_t i = 0; i < t->n_runs; i++) {
				long c = at[i * cs.n + k];
				double v;
				if (c < 0)
					continue;
				v = t->runs[i].cells[c].v[f];
				if (!(isfinite(v) && v > 0))
					continue;
				se->run[se->n] = i;
				se->value[se->n++] = v;
			}
			if (se->n == 0) {
				free(se->run);
				free(se->value);
				memset(se, 0, sizeof *se);
				continue;
			}
			res->n_series++;
		}
	if (tt_failed(find_changes(res, err)))
		goto cleanup;
	*out = res;
	res = NULL;
	rc = TT_OK;
cleanup:
	free(at);
	free(cs.id);
	free(cs.phase);
	tt_trend_result_free(res);
	return rc;
}

size_t tt_trend_gate(const struct tt_trend_result *r, double pct)
{
	size_t n = 0;

	/* the newest run is at the level the series' last change began */
	for (size_t s = 0; s < r->n_series; s++) {
		const struct tt_trend_series *se = &r->series[s];
		const struct tt_trend_change *c;
		if (!se->n_changes)
			continue;
		c = &r->changes[se->first_change + se->n_changes - 1];
		if (c->regression && fabs(c->change_pct) >= pct)
			n++;
	}
	return n;
}
