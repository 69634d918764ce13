/* tokentrace diff on runs with known answers (docs/diff.md "Validation").
 *
 * Two sources of runs: `tokentrace synth` (the library's synth: runs that
 * reproduce a profile, so a profile slowed by 10 % in some cells is a known
 * 10 % slowdown there), and a small batched-engine model written here, whose
 * only noise is sampling noise: every stream of a cell gets a token at each
 * engine step, step times are random, prefill times too.  Two runs of the
 * model with the same parameters differ by noise only, so how often a diff
 * of them says "faster" or "slower" is the false-positive rate, measured. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_impl.h" /* the side's runs, to check the variance formula */
#include "tokentrace/diff.h"
#include "tokentrace/profile.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"
#include "testutil.h"

#define MS 1000000LL
#define S 1000000000LL

/* ---- the batched-engine model ------------------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double urand(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Lognormal with median 1 and log-sd sigma. */
static double lognorm(struct rng *r, double sigma)
{
	double z = sqrt(-2 * log(urand(r))) * cos(2 * M_PI * urand(r));
	return exp(sigma * z);
}

#define N_CELLS 6
static const int64_t gen_ctx[N_CELLS] = {8192, 8192, 32768, 32768, 65536, 65536};
static const int gen_conc[N_CELLS] = {4, 16, 4, 16, 4, 16};

struct gen {
	double step_factor[N_CELLS]; /* 1: the base engine; 1/0.9: 10 % fewer tok/s */
	double window_s;
	int out_tokens;
};

static void gen_init(struct gen *g)
{
	for (int i = 0; i < N_CELLS; i++)
		g->step_factor[i] = 1;
	g->window_s = 20;
	g->out_tokens = 100;
}

/* One decode cell: C streams in a closed loop over shared engine steps. */
static void gen_cell(struct tt_trace_writer *w, struct rng *r, const struct gen *g, int cell,
		     int64_t t0, int64_t *ws, int64_t *we)
{
	int C = gen_conc[cell];
	double step_ms = 20 * (1 + (double)gen_ctx[cell] / 65536 * 0.5) * (1 + C / 16.0 * 0.3) *
			 g->step_factor[cell];
	size_t n_steps = 0, cap = 4096;
	int64_t *steps = malloc(cap * sizeof *steps), t = t0;
	struct tt_chunk *ch = malloc((size_t)g->out_tokens * sizeof *ch);
	struct tt_error err;

	assert_non_null(steps);
	assert_non_null(ch);
	*ws = t0 + 2 * S;
	*we = *ws + (int64_t)(g->window_s * S);
	while (t < *we + S) {
		t += (int64_t)(step_ms * MS * lognorm(r, 0.3));
		if (n_steps == cap) {
			cap *= 2;
			steps = realloc(steps, cap * sizeof *steps);
			assert_non_null(steps);
		}
		steps[n_steps++] = t;
	}
	for (int slot = 0; slot < C; slot++) {
		int64_t send = t0 + slot * 1000;
		size_t si = 0;
		for (uint32_t seq = 0; send < *we; seq++) {
			struct tt_request q;
			int64_t ready = send + (int64_t)((30 + (double)gen_ctx[cell] / 4096) * MS *
							  lognorm(r, 0.25));
			size_t n = 0;

			memset(&q, 0, sizeof q);
			q.slot = (uint32_t)slot;
			q.seq = seq;
			q.role = TT_ROLE_MEASURED;
			q.t_sched_ns = q.t_send_ns = send;
			q.http_status = 200;
			q.prompt_tokens = gen_ctx[cell];
			q.cached_tokens = -1;
			q.finish = TT_FINISH_LENGTH;
			while (si < n_steps && steps[si] < ready)
				si++;
			while (n < (size_t)g->out_tokens && si < n_steps) {
				if (steps[si] >= *we) {
					q.finish = TT_FINISH_CUT;
					break;
				}
				ch[n].t_ns = steps[si++];
				ch[n].tokens = 1;
				n++;
			}
			q.n_chunks = n;
			q.chunks = ch;
			q.t_end_ns = q.finish == TT_FINISH_CUT ? *we : ch[n - 1].t_ns + 200000;
			assert_int_equal(tt_trace_write_request(w, &q, &err), TT_OK);
			if (q.finish == TT_FINISH_CUT)
				break;
			send = q.t_end_ns + MS;
		}
	}
	free(steps);
	free(ch);
}

/* A run of the model in dir (created). */
static void gen_run(const char *dir, const struct gen *g, uint64_t seed)
{
	struct tt_manifest m;
	struct tt_run_writer *rw;
	struct tt_error err;
	struct tt_trace_opts topts;
	struct rng r = {seed * 0x2545F4914F6CDD1DULL + 7};

	tt_manifest_init(&m);
	m.duration_s = g->window_s;
	m.max_tokens = g->out_tokens;
	m.seed = seed;
	assert_int_equal(tt_manifest_set_str(&m.tool_name, "test_diff model"), TT_OK);
	assert_int_equal(tt_manifest_set_str(&m.engine, "model"), TT_OK);
	assert_int_equal(tt_manifest_set_str(&m.model, "test"), TT_OK);
	for (int i = 0; i < N_CELLS; i++)
		assert_int_equal(tt_manifest_add_cell(&m, TT_PHASE_DECODE, gen_ctx[i], gen_conc[i],
						      NULL), TT_OK);
	assert_int_equal(tt_run_writer_create(dir, &m, &rw, &err), TT_OK);
	tt_manifest_release(&m);
	memset(&topts, 0, sizeof topts);
	topts.sync = 0;
	for (int i = 0; i < N_CELLS; i++) {
		struct tt_trace_writer *w;
		struct tt_cell_info *c = &tt_run_writer_manifest(rw)->cells[i];
		int64_t t0 = (int64_t)i * 40 * S, ws, we;
		assert_int_equal(tt_run_writer_open_cell(rw, (size_t)i, &topts, &w, &err), TT_OK);
		gen_cell(w, &r, g, i, t0, &ws, &we);
		assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);
		c->state = TT_CELL_DONE;
		c->start_ns = t0;
		c->ready_ns = c->window_start_ns = ws;
		c->window_end_ns = we;
		c->end_ns = we;
	}
	assert_int_equal(tt_run_writer_commit(rw, &err), TT_OK);
	tt_run_writer_free(rw);
}

/* ---- helpers -------------------------------------------------------------- */

/* Options without the run-to-run allowance: the model's and synth's runs
 * differ by sampling noise only (no drift between runs), and the tests that
 * use this check the within-run statistics (docs/diff.md "One run per
 * side" is tested with the allowance below). */
static const struct tt_diff_opts *within_only(void)
{
	static struct tt_diff_opts o;
	tt_diff_opts_init(&o);
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		o.run_allowance[f] = 0;
	return &o;
}

static void add_run(struct tt_diff_side *s, const char *dir)
{
	struct tt_run *run;
	struct tt_error err;

	if (tt_run_open(dir, &run, &err) != TT_OK)
		fail_msg("open '%s': %s", dir, err.msg);
	/* TT_WARN: damaged cells, kept and marked */
	if (tt_diff_side_add(s, run, NULL, &err) > TT_WARN)
		fail_msg("analyse '%s': %s", dir, err.msg);
	tt_run_free(run);
}

/* A diff of base runs vs candidate runs (NULL-terminated lists). */
static struct tt_diff *diff_of(const struct tt_diff_opts *o, const char *const *base,
			       const char *const *cand, struct tt_diff_side **sb,
			       struct tt_diff_side **sc)
{
	struct tt_diff *d;
	struct tt_error err;

	assert_int_equal(tt_diff_side_create(o, sb, &err), TT_OK);
	assert_int_equal(tt_diff_side_create(o, sc, &err), TT_OK);
	for (; *base; base++)
		add_run(*sb, *base);
	for (; *cand; cand++)
		add_run(*sc, *cand);
	assert_int_equal(tt_diff_compare(*sb, *sc, &d, &err), TT_OK);
	return d;
}

static void diff_done(struct tt_diff *d, struct tt_diff_side *sb, struct tt_diff_side *sc)
{
	tt_diff_free(d);
	tt_diff_side_free(sb);
	tt_diff_side_free(sc);
}

static const struct tt_diff_cell *cell_of(const struct tt_diff *d, enum tt_phase ph, int64_t ctx,
					  int conc)
{
	for (size_t i = 0; i < d->n_cells; i++)
		if (d->cells[i].phase == ph && d->cells[i].context == ctx &&
		    d->cells[i].concurrency == conc)
			return &d->cells[i];
	fail_msg("no cell %lld x %d in the diff", (long long)ctx, conc);
	return NULL;
}

static char *path_in(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	assert_non_null(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* ---- the model: a known slowdown, and noise only -------------------------- */

static void test_model_slowdown_flagged(void **state)
{
	char *tmp = tu_tmpdir("diff-model"), *a = path_in(tmp, "a"), *b = path_in(tmp, "b");
	struct gen g0, g1;
	struct tt_diff_side *sb, *sc;
	struct tt_diff *d;

	(void)state;
	gen_init(&g0);
	gen_init(&g1);
	/* Cells 0 and 3: every engine step 1/0.9 as long, so 10 % fewer tok/s. */
	g1.step_factor[0] = g1.step_factor[3] = 1 / 0.9;
	gen_run(a, &g0, 1);
	gen_run(b, &g1, 2);
	{
		const char *base[] = {a, NULL}, *cand[] = {b, NULL};
		d = diff_of(within_only(), base, cand, &sb, &sc);
	}
	for (int i = 0; i < N_CELLS; i++) {
		const struct tt_diff_cell *c = cell_of(d, TT_PHASE_DECODE, gen_ctx[i], gen_conc[i]);
		const struct tt_diff_value *tot = &c->v[TT_DIFF_TOTAL], *tbt = &c->v[TT_DIFF_TBT_P50];
		if (i == 0 || i == 3) {
			assert_int_equal(tot->verdict, TT_VERDICT_SLOWER);
			assert_int_equal(tbt->verdict, TT_VERDICT_SLOWER);
			assert_true(tot->change_pct < -7 && tot->change_pct > -13);
			assert_true(tot->ci_lo_pct < -10 && tot->ci_hi_pct > -10);
			assert_int_equal(c->v[TT_DIFF_PER_REQUEST].verdict, TT_VERDICT_SLOWER);
		} else {
			for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
				if (c->v[f].applies)
					assert_true(c->v[f].verdict == TT_VERDICT_SAME);
		}
	}
	assert_int_equal(tt_diff_gate(d, TT_DIFF_TOTAL, 5), 2);
	assert_int_equal(tt_diff_gate(d, TT_DIFF_TOTAL, 15), 0);
	assert_int_equal(tt_diff_gate(d, TT_DIFF_TTFT_P50, 5), 0);
	diff_done(d, sb, sc);
	tu_rmrf(tmp);
	free(a);
	free(b);
	free(tmp);
}

/* Many pairs of runs that differ by noise only, judged without the minimum
 * change, so that only the statistics stand between noise and a verdict:
 * the share of diffs with any verdict must stay near alpha (5 %), and the
 * per-comparison intervals must not be too narrow. */
#define NOISE_PAIRS 100

static void test_model_noise_false_positive_rate(void **state)
{
	char *tmp = tu_tmpdir("diff-noise"), *a = path_in(tmp, "a"), *b = path_in(tmp, "b");
	struct tt_diff_opts o;
	struct gen g;
	size_t diffs_flagged = 0, comparisons = 0, flagged = 0, beyond95 = 0;
	size_t per_fig[TT_DIFF_FIGURE_COUNT_] = {0}, per_fig_n[TT_DIFF_FIGURE_COUNT_] = {0};

	(void)state;
	gen_init(&g);
	o = *within_only();
	o.min_change = 0;
	for (uint64_t seed = 1; seed <= NOISE_PAIRS; seed++) {
		struct tt_diff_side *sb, *sc;
		struct tt_diff *d;
		const char *base[] = {a, NULL}, *cand[] = {b, NULL};
		tu_rmrf(a);
		tu_rmrf(b);
		gen_run(a, &g, 1000 + seed);
		gen_run(b, &g, 2000 + seed);
		d = diff_of(&o, base, cand, &sb, &sc);
		diffs_flagged += d->n_faster + d->n_slower > 0;
		flagged += d->n_faster + d->n_slower;
		for (size_t i = 0; i < d->n_cells; i++)
			for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
				const struct tt_diff_value *v = &d->cells[i].v[f];
				if (!v->applies || v->verdict == TT_VERDICT_UNJUDGED)
					continue;
				comparisons++;
				per_fig_n[f]++;
				if (fabs(v->z) > 1.96) {
					beyond95++;
					per_fig[f]++;
				}
			}
		diff_done(d, sb, sc);
	}
	printf("noise only, %d pairs of runs, %zu comparisons judged:\n", NOISE_PAIRS, comparisons);
	printf("  diffs with any verdict (familywise, alpha 0.05): %zu of %d = %.3f\n",
	       diffs_flagged, NOISE_PAIRS, (double)diffs_flagged / NOISE_PAIRS);
	printf("  comparisons flagged: %zu of %zu = %.4f\n", flagged, comparisons,
	       (double)flagged / (double)comparisons);
	printf("  per comparison |z| > 1.96 (nominal 0.05): %zu = %.3f\n", beyond95,
	       (double)beyond95 / (double)comparisons);
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		if (per_fig_n[f])
			printf("    %-18s %.3f of %zu\n", tt_diff_figure_key((enum tt_diff_figure)f),
			       (double)per_fig[f] / (double)per_fig_n[f], per_fig_n[f]);
	assert_true(comparisons >= NOISE_PAIRS * 30);
	/* 100 diffs at a true 5 %: 5 expected; 11 or more has chance ~1 %. */
	assert_true(diffs_flagged <= 10);
	/* The unadjusted 95 % intervals hold the truth about 95 % of the time. */
	assert_true((double)beyond95 / (double)comparisons < 0.10);
	tu_rmrf(tmp);
	free(a);
	free(b);
	free(tmp);
}

/* The same with two runs on each side (replicates): the spread between
 * runs, pooled over the cells, takes over from the bootstrap's where it is
 * larger; the false-positive rate must still hold. */
#define REPLICATE_PAIRS 25

static void test_model_noise_replicates(void **state)
{
	char *tmp = tu_tmpdir("diff-noise-repl"), *p[4];
	struct tt_diff_opts o;
	struct gen g;
	size_t diffs_flagged = 0, comparisons = 0, beyond95 = 0;

	(void)state;
	for (int i = 0; i < 4; i++) {
		char name[8];
		snprintf(name, sizeof name, "r%d", i);
		p[i] = path_in(tmp, name);
	}
	gen_init(&g);
	tt_diff_opts_init(&o);
	o.min_change = 0;
	for (uint64_t seed = 1; seed <= REPLICATE_PAIRS; seed++) {
		struct tt_diff_side *sb, *sc;
		struct tt_diff *d;
		const char *base[] = {p[0], p[1], NULL}, *cand[] = {p[2], p[3], NULL};
		for (int i = 0; i < 4; i++) {
			tu_rmrf(p[i]);
			gen_run(p[i], &g, 5000 + seed * 10 + (uint64_t)i);
		}
		d = diff_of(&o, base, cand, &sb, &sc);
		diffs_flagged += d->n_faster + d->n_slower > 0;
		for (size_t i = 0; i < d->n_cells; i++)
			for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
				const struct tt_diff_value *v = &d->cells[i].v[f];
				if (!v->applies || v->verdict == TT_VERDICT_UNJUDGED)
					continue;
				comparisons++;
				beyond95 += fabs(v->z) > 1.96;
			}
		diff_done(d, sb, sc);
	}
	printf("noise only, 2 runs a side, %d diffs, %zu comparisons:\n", REPLICATE_PAIRS,
	       comparisons);
	printf("  diffs with any verdict: %zu of %d = %.3f\n", diffs_flagged, REPLICATE_PAIRS,
	       (double)diffs_flagged / REPLICATE_PAIRS);
	printf("  per comparison |z| > 1.96: %.3f\n", (double)beyond95 / (double)comparisons);
	assert_true(comparisons >= REPLICATE_PAIRS * 30);
	/* 25 diffs at a true 5 %: 4 or more has chance ~4 %. */
	assert_true(diffs_flagged <= 3);
	for (int i = 0; i < 4; i++)
		free(p[i]);
	tu_rmrf(tmp);
	free(tmp);
}

/* Replicates bring the run-to-run spread into the verdict: one base run and
 * one candidate run 10 % apart are judged different; the same difference
 * between sides whose own runs spread by 16 % is not. */
static void test_replicates_add_variance(void **state)
{
	char *tmp = tu_tmpdir("diff-repl");
	char *p[6];
	struct gen g[6];
	const double f[6] = {1.0, 1.10, 0.92, 1.08, 1.02, 1.18};
	struct tt_diff_side *sb, *sc;
	struct tt_diff *d;

	(void)state;
	for (int i = 0; i < 6; i++) {
		char name[8];
		snprintf(name, sizeof name, "r%d", i);
		p[i] = path_in(tmp, name);
		gen_init(&g[i]);
		for (int c = 0; c < N_CELLS; c++)
			g[i].step_factor[c] = f[i];
		gen_run(p[i], &g[i], 100 + (uint64_t)i);
	}
	{
		const char *base[] = {p[0], NULL}, *cand[] = {p[1], NULL};
		d = diff_of(within_only(), base, cand, &sb, &sc);
		assert_true(d->n_slower >= N_CELLS); /* every cell's total tok/s at least */
		for (size_t i = 0; i < d->n_cells; i++)
			assert_int_equal(d->cells[i].v[TT_DIFF_TOTAL].verdict, TT_VERDICT_SLOWER);
		diff_done(d, sb, sc);
	}
	{
		const char *base[] = {p[2], p[3], NULL}, *cand[] = {p[4], p[5], NULL};
		d = diff_of(NULL, base, cand, &sb, &sc);
		assert_int_equal(tt_diff_side_runs(sb), 2);
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_value *v = &d->cells[i].v[TT_DIFF_TOTAL];
			assert_int_equal(v->verdict, TT_VERDICT_SAME);
			assert_true(v->change_pct < -6 && v->change_pct > -14);
			/* the spread between the runs, not the bootstrap's */
			assert_true(v->se_base > 0.05);
		}
		diff_done(d, sb, sc);
	}
	for (int i = 0; i < 6; i++)
		free(p[i]);
	tu_rmrf(tmp);
	free(tmp);
}

/* Same inputs and seed: the same numbers; the bootstrap seed changes the
 * intervals a little, never the figures. */
static void test_deterministic(void **state)
{
	char *tmp = tu_tmpdir("diff-det"), *a = path_in(tmp, "a"), *b = path_in(tmp, "b");
	struct gen g;
	struct tt_diff_opts o;
	struct tt_diff_side *s[6];
	struct tt_diff *d[3];
	const char *base[] = {a, NULL}, *cand[] = {b, NULL};

	(void)state;
	gen_init(&g);
	gen_run(a, &g, 5);
	gen_run(b, &g, 6);
	o = *within_only();
	d[0] = diff_of(&o, base, cand, &s[0], &s[1]);
	d[1] = diff_of(&o, base, cand, &s[2], &s[3]);
	o.seed = 99;
	d[2] = diff_of(&o, base, cand, &s[4], &s[5]);
	for (size_t i = 0; i < d[0]->n_cells; i++)
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
			const struct tt_diff_value *x = &d[0]->cells[i].v[f], *y = &d[1]->cells[i].v[f],
						   *z = &d[2]->cells[i].v[f];
			if (!x->applies || x->verdict == TT_VERDICT_UNJUDGED)
				continue;
			assert_true(x->z == y->z && x->ci_lo_pct == y->ci_lo_pct);
			assert_true(x->change_pct == z->change_pct);
			assert_true(fabs(x->se_base - z->se_base) < 0.3 * x->se_base + 1e-12);
		}
	for (int i = 0; i < 3; i++)
		diff_done(d[i], s[2 * i], s[2 * i + 1]);
	tu_rmrf(tmp);
	free(a);
	free(b);
	free(tmp);
}

/* ---- synth: a profile slowed by 10 % in some cells -------------------------- */

static const char profile_base[] =
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"
	"avg_active,completed,output_tokens,measured_s\n"
	"prefill,8K,1,Valid,143100,,57,,,1,,\n"
	"decode,8K,1,Valid,959.9,972,47,1,1,,,4\n"
	"decode,8K,4,Valid,3419.6,866.9,54,1.2,4,,,4\n"
	"decode,32K,1,Valid,878.5,898,89,1.1,1,,,4\n"
	"decode,32K,4,Valid,2728.4,695.8,115,1.4,3.8,,,4\n"
	"decode,64K,4,Valid,2000,520,200,1.9,3.8,,,4\n";
/* 8K x 4 and 32K x 1: 10 % fewer tok/s, 1/0.9 the time between tokens;
 * 32K x 4 now queues; 64K x 4 was not measured, 64K x 8 is new. */
static const char profile_cand[] =
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"
	"avg_active,completed,output_tokens,measured_s\n"
	"prefill,8K,1,Valid,143100,,57,,,1,,\n"
	"decode,8K,1,Valid,959.9,972,47,1,1,,,4\n"
	"decode,8K,4,Valid,3077.64,780.21,54,1.3333,4,,,4\n"
	"decode,32K,1,Valid,790.65,808.2,89,1.2222,1,,,4\n"
	"decode,32K,4,Requests queued,2728.4,695.8,115,1.4,3.8,,,4\n"
	"decode,64K,8,Valid,3000,400,250,2.4,7.6,,,4\n";

static void synth_to(const char *text, const char *dir, uint64_t seed)
{
	struct tt_profile *p;
	struct tt_synth_opts o;
	struct tt_error err;

	assert_int_equal(tt_profile_parse(text, "test profile", &p, &err), TT_OK);
	tt_synth_opts_init(&o);
	o.seed = seed;
	if (tt_synth_run(p, dir, &o, NULL, &err) != TT_OK)
		fail_msg("synth '%s': %s", dir, err.msg);
	tt_profile_free(p);
}

static void test_synth_slowdown_and_matrix(void **state)
{
	char *tmp = tu_tmpdir("diff-synth"), *a = path_in(tmp, "a"), *b = path_in(tmp, "b");
	struct tt_diff_side *sb, *sc;
	struct tt_diff *d;
	const char *base[] = {a, NULL}, *cand[] = {b, NULL};
	const struct tt_diff_cell *c;

	(void)state;
	synth_to(profile_base, a, 1);
	synth_to(profile_cand, b, 2);
	d = diff_of(within_only(), base, cand, &sb, &sc);
	/* The slowed cells. */
	c = cell_of(d, TT_PHASE_DECODE, 8192, 4);
	assert_int_equal(c->v[TT_DIFF_TOTAL].verdict, TT_VERDICT_SLOWER);
	assert_true(fabs(c->v[TT_DIFF_TOTAL].change_pct + 10) < 1);
	assert_int_equal(c->v[TT_DIFF_TBT_P50].verdict, TT_VERDICT_SLOWER);
	c = cell_of(d, TT_PHASE_DECODE, 32768, 1);
	assert_int_equal(c->v[TT_DIFF_TOTAL].verdict, TT_VERDICT_SLOWER);
	assert_true(fabs(c->v[TT_DIFF_TOTAL].change_pct + 10) < 1);
	/* The unchanged ones: no verdict either way. */
	c = cell_of(d, TT_PHASE_DECODE, 8192, 1);
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		assert_true(c->v[f].verdict == TT_VERDICT_SAME ||
			    c->v[f].verdict == TT_VERDICT_UNJUDGED);
	/* A status change comes first; cells of one side are listed, last. */
	assert_int_equal(d->n_status_changed, 1);
	assert_true(d->cells[0].status_changed);
	assert_int_equal(d->cells[0].context, 32768);
	assert_int_equal(d->cells[0].base_status, TT_STATUS_VALID);
	assert_int_equal(d->cells[0].cand_status, TT_STATUS_QUEUED);
	assert_int_equal(d->n_base_only, 1);
	assert_int_equal(d->n_cand_only, 1);
	assert_int_equal(d->cells[d->n_cells - 2].presence, TT_DIFF_BASE_ONLY);
	assert_int_equal(d->cells[d->n_cells - 2].concurrency, 4);
	assert_int_equal(d->cells[d->n_cells - 1].presence, TT_DIFF_CAND_ONLY);
	assert_int_equal(d->cells[d->n_cells - 1].concurrency, 8);
	assert_int_equal(d->cells[d->n_cells - 1].v[TT_DIFF_TOTAL].verdict, TT_VERDICT_UNJUDGED);
	/* Prefill with one scout per side: a figure, but no interval. */
	c = cell_of(d, TT_PHASE_PREFILL, 8192, 1);
	assert_true(c->v[TT_DIFF_PREFILL].applies);
	assert_int_equal(c->v[TT_DIFF_PREFILL].verdict, TT_VERDICT_UNJUDGED);
	assert_non_null(strstr(c->v[TT_DIFF_PREFILL].note, "too few samples"));
	assert_false(c->v[TT_DIFF_TOTAL].applies);
	assert_int_equal(tt_diff_gate(d, TT_DIFF_TOTAL, 5), 2);
	assert_int_equal(tt_diff_gate(d, TT_DIFF_TOTAL, 10.5), 0);
	diff_done(d, sb, sc);
	tu_rmrf(tmp);
	free(a);
	free(b);
	free(tmp);
}

/* Noise-only synth pairs with the default options: diffs with any verdict
 * no more often than alpha (measured: 0 of 30). */
#define SYNTH_PAIRS 30
static void test_synth_noise_pairs(void **state)
{
	char *tmp = tu_tmpdir("diff-synth-noise"), *a = path_in(tmp, "a"), *b = path_in(tmp, "b");
	size_t flagged = 0, judged = 0, diffs_flagged = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= SYNTH_PAIRS; seed++) {
		struct tt_diff_side *sb, *sc;
		struct tt_diff *d;
		const char *base[] = {a, NULL}, *cand[] = {b, NULL};
		tu_rmrf(a);
		tu_rmrf(b);
		synth_to(profile_base, a, seed);
		synth_to(profile_base, b, seed + 100);
		d = diff_of(NULL, base, cand, &sb, &sc);
		flagged += d->n_faster + d->n_slower;
		diffs_flagged += d->n_faster + d->n_slower > 0;
		judged += d->n_tests;
		diff_done(d, sb, sc);
	}
	printf("synth noise pairs: %zu of %d diffs with a verdict; %zu of %zu comparisons\n",
	       diffs_flagged, SYNTH_PAIRS, flagged, judged);
	assert_true(judged >= SYNTH_PAIRS * 10);
	/* 30 diffs at a true 5 %: 1.5 expected; 4 or more has chance ~6 %. */
	assert_true(diffs_flagged <= 3);
	tu_rmrf(tmp);
	free(a);
	free(b);
	free(tmp);
}

/* A side whose run has figures but lost the samples of a cell (its trace
 * gone): the cell is judged "not run" and each figure says why not. */
static void test_missing_trace_unjudged(void **state)
{
	char *tmp = tu_tmpdir("diff-missing"), *a = path_in(tmp, "a"), *b = path_in(tmp, "b");
	char *gone;
	struct gen g;
	struct tt_diff_side *sb, *sc;
	struct tt_diff *d;
	const char *base[] = {a, NULL}, *cand[] = {b, NULL};
	const struct tt_diff_cell *c;
	struct tt_error err;
	struct tt_run *run;

	(void)state;
	gen_init(&g);
	gen_run(a, &g, 11);
	gen_run(b, &g, 12);
	gone = path_in(b, "cells/decode-8192x4.ttz");
	assert_int_equal(remove(gone), 0);
	assert_int_equal(tt_run_open(b, &run, &err), TT_OK);
	assert_int_equal(tt_diff_side_create(NULL, &sc, &err), TT_OK);
	assert_int_equal(tt_diff_side_add(sc, run, NULL, &err), TT_WARN); /* damaged, named */
	assert_non_null(strstr(err.msg, "decode-8192x4"));
	tt_run_free(run);
	tt_diff_side_free(sc);
	d = diff_of(NULL, base, cand, &sb, &sc);
	c = cell_of(d, TT_PHASE_DECODE, 8192, 4);
	assert_true(c->status_changed);
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		if (c->v[f].applies) {
			assert_int_equal(c->v[f].verdict, TT_VERDICT_UNJUDGED);
			assert_true(c->v[f].note[0] != '\0');
		}
	diff_done(d, sb, sc);
	free(gone);
	tu_rmrf(tmp);
	free(a);
	free(b);
	free(tmp);
}


/* ---- runs that drift: the unit of evidence is the run ------------------- */

/* A run of the model whose every engine step is exp(sigma z) as long, z
 * standard normal drawn from the run's seed: the whole run faster or slower,
 * as a busy machine makes it (docs/diff.md "One run per side"). */
static void gen_drift_run(const char *dir, double sigma, uint64_t seed)
{
	struct rng r = {seed * 0x9E3779B97F4A7C15ULL + 3};
	double z = sqrt(-2 * log(urand(&r))) * cos(2 * M_PI * urand(&r));
	struct gen g;

	gen_init(&g);
	for (int c = 0; c < N_CELLS; c++)
		g.step_factor[c] = exp(sigma * z);
	gen_run(dir, &g, seed);
}

/* The side's variance of a figure with replicates is the hierarchical
 * bootstrap's (runs, then time slices within runs): (S^2 + mean w) / n,
 * S^2 the between-run spread of the log figures pooled over the cells, w
 * each run's bootstrap variance (docs/diff.md "Replicates").  Checked
 * against the side's own numbers, for every cell and figure judged. */
static void test_hierarchical_variance(void **state)
{
	char *tmp = tu_tmpdir("diff-hier"), *p[6];
	struct tt_diff_side *sb, *sc;
	struct tt_diff *d;
	size_t checked = 0;

	(void)state;
	for (int i = 0; i < 6; i++) {
		char name[8];
		snprintf(name, sizeof name, "r%d", i);
		p[i] = path_in(tmp, name);
		gen_drift_run(p[i], 0.04, 700 + (uint64_t)i);
	}
	{
		const char *base[] = {p[0], p[1], p[2], NULL}, *cand[] = {p[3], p[4], p[5], NULL};
		d = diff_of(NULL, base, cand, &sb, &sc);
	}
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++) {
		double ss = 0, df = 0;
		/* S^2: every cell of the base, its 3 runs */
		for (size_t k = 0; k < sb->runs[0].rep->n_cells; k++) {
			double x[3], mean = 0;
			int ok = 1;
			for (int r = 0; r < 3; r++) {
				double v = tt__diff_figure_of(&sb->runs[r].rep->cells[k],
							      (enum tt_diff_figure)f, sb->runs[r].tail_q);
				ok &= v > 0 && isfinite(v);
				x[r] = log(v);
				mean += x[r] / 3;
			}
			if (!ok)
				continue;
			for (int r = 0; r < 3; r++)
				ss += (x[r] - mean) * (x[r] - mean);
			df += 2;
		}
		for (size_t k = 0; df > 0 && k < sb->runs[0].rep->n_cells; k++) {
			const struct tt_cell_figures *cf = &sb->runs[0].rep->cells[k];
			const struct tt_diff_cell *c = cell_of(d, cf->phase, cf->context, cf->concurrency);
			const struct tt_diff_value *v = &c->v[f];
			double w = 0, want;
			int n_w = 0;
			if (!v->applies || v->verdict == TT_VERDICT_UNJUDGED)
				continue;
			for (int r = 0; r < 3; r++)
				if (isfinite(sb->runs[r].boot[k][f].se)) {
					w += sb->runs[r].boot[k][f].se * sb->runs[r].boot[k][f].se;
					n_w++;
				}
			want = (ss / df + (n_w ? w / n_w : 0)) / 3;
			assert_int_equal(v->basis_base, TT_BASIS_REPLICATES);
			assert_false(v->allowance);
			if (fabs(v->se_base * v->se_base - want) > 1e-12 + 1e-9 * want)
				fail_msg("%s, cell %zu: se^2 %.10g, want (S^2 %.6g + w %.6g) / 3 = %.10g",
					 tt_diff_figure_key((enum tt_diff_figure)f), k,
					 v->se_base * v->se_base, ss / df, n_w ? w / n_w : 0, want);
			checked++;
		}
	}
	assert_true(checked >= N_CELLS * 4);
	diff_done(d, sb, sc);
	for (int i = 0; i < 6; i++)
		free(p[i]);
	tu_rmrf(tmp);
	free(tmp);
}

/* Runs whose whole speed drifts by a known 4 % (lognormal sigma 0.04) from
 * run to run, on top of their sampling noise.  A/A: base and candidate are
 * independent runs of the same engine.
 * - One run per side, within-run intervals only: most diffs cry wolf.
 * - One run per side with an allowance at least the drift: at most alpha.
 * - Three runs per side, hierarchical resampling: diffs with any verdict
 *   at most near alpha, and the side's variance near the truth (the drift
 *   plus the within-run noise, over 3 runs).
 * - Three runs per side drifting by 1 %, a true 10 % slowdown of every
 *   step: found. */
#define DRIFT_PAIRS 16

static void test_drift_between_runs(void **state)
{
	char *tmp = tu_tmpdir("diff-drift"), *p[6];
	struct tt_diff_opts o0 = *within_only(), oa = *within_only();
	size_t flagged_within = 0, flagged_allow = 0, flagged_hier = 0, total_n = 0, beyond = 0;
	size_t found = 0;
	double var_sum = 0, w_sum = 0, df_sum = 0;

	(void)state;
	for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
		oa.run_allowance[f] = 5;
	for (int i = 0; i < 6; i++) {
		char name[8];
		snprintf(name, sizeof name, "r%d", i);
		p[i] = path_in(tmp, name);
	}
	for (uint64_t pair = 0; pair < DRIFT_PAIRS; pair++) {
		struct tt_diff_side *sb, *sc;
		struct tt_diff *d;
		for (int i = 0; i < 6; i++) {
			tu_rmrf(p[i]);
			gen_drift_run(p[i], 0.04, 9000 + pair * 10 + (uint64_t)i);
		}
		{
			const char *base[] = {p[0], NULL}, *cand[] = {p[3], NULL};
			d = diff_of(&o0, base, cand, &sb, &sc);
			flagged_within += d->n_faster + d->n_slower > 0;
			diff_done(d, sb, sc);
			d = diff_of(&oa, base, cand, &sb, &sc);
			flagged_allow += d->n_faster + d->n_slower > 0;
			assert_true(d->n_allowance > 0);
			diff_done(d, sb, sc);
		}
		{
			const char *base[] = {p[0], p[1], p[2], NULL}, *cand[] = {p[3], p[4], p[5], NULL};
			d = diff_of(NULL, base, cand, &sb, &sc);
			flagged_hier += d->n_faster + d->n_slower > 0;
			assert_int_equal(d->n_allowance, 0);
			for (size_t i = 0; i < d->n_cells; i++) {
				const struct tt_diff_value *v = &d->cells[i].v[TT_DIFF_TOTAL];
				if (!v->applies || v->verdict == TT_VERDICT_UNJUDGED)
					continue;
				total_n++;
				beyond += fabs(v->z) > v->crit;
				var_sum += v->se_base * v->se_base;
				df_sum += v->df;
				/* the base runs' own bootstrap variance of the cell */
				for (int r = 0; r < 3; r++) {
					const struct tt__run_boot *rb = &sb->runs[r];
					for (size_t k = 0; k < rb->rep->n_cells; k++)
						if (rb->rep->cells[k].context == d->cells[i].context &&
						    rb->rep->cells[k].concurrency == d->cells[i].concurrency &&
						    rb->rep->cells[k].phase == d->cells[i].phase)
							w_sum += rb->boot[k][TT_DIFF_TOTAL].se *
								 rb->boot[k][TT_DIFF_TOTAL].se / 3;
				}
			}
			diff_done(d, sb, sc);
		}
	}
	/* a true 10 % slowdown, three runs a side whose runs drift by 1 %:
	 * every cell's TBT slower (a 4 % drift with 2 degrees of freedom a side
	 * hides 10 % at the diff's Bonferroni level) */
	for (int i = 0; i < 3; i++) {
		tu_rmrf(p[i]);
		gen_drift_run(p[i], 0.01, 9900 + (uint64_t)i);
	}
	for (int i = 3; i < 6; i++) {
		struct gen g;
		struct rng r = {(uint64_t)(9900 + i) * 0x9E3779B97F4A7C15ULL + 3};
		double z = sqrt(-2 * log(urand(&r))) * cos(2 * M_PI * urand(&r));
		tu_rmrf(p[i]);
		gen_init(&g);
		for (int c = 0; c < N_CELLS; c++)
			g.step_factor[c] = exp(0.01 * z) / 0.9;
		gen_run(p[i], &g, 9900 + (uint64_t)i);
	}
	{
		struct tt_diff_side *sb, *sc;
		struct tt_diff *d;
		const char *base[] = {p[0], p[1], p[2], NULL}, *cand[] = {p[3], p[4], p[5], NULL};
		d = diff_of(NULL, base, cand, &sb, &sc);
		for (size_t i = 0; i < d->n_cells; i++) {
			const struct tt_diff_value *v = &d->cells[i].v[TT_DIFF_TBT_P50];
			found += v->verdict == TT_VERDICT_SLOWER;
			printf("  slowdown: TBT p50 %+.1f %%, z %.2f, critical %.2f, df %.1f\n",
			       v->change_pct, v->z, v->crit, v->df);
		}
		diff_done(d, sb, sc);
	}
	printf("drift 4 %% between runs, %d A/A pairs: diffs with a verdict: one run a side "
	       "%zu (within-run only), %zu (allowance 5 %%); three runs a side %zu; "
	       "total tok/s beyond the critical value with three runs: %zu of %zu; 10 %% slowdown found in "
	       "%zu of %d cells\n", DRIFT_PAIRS, flagged_within, flagged_allow, flagged_hier,
	       beyond, total_n, found, N_CELLS);
	/* within-run intervals alone cannot hold alpha when runs drift */
	assert_true(flagged_within >= DRIFT_PAIRS / 2);
	/* 16 diffs at a true 5 %: 0.8 expected; 3 or more has chance ~5 % */
	assert_true(flagged_allow <= 2);
	assert_true(flagged_hier <= 2);
	assert_true(total_n >= DRIFT_PAIRS * N_CELLS);
	/* the intervals hold the drift: the hierarchical variance of a side's
	 * total tok/s, averaged over the pairs, is near its truth
	 * (sigma^2 + within) / 3, not the within-run part alone */
	{
		double mean_var = var_sum / (double)total_n, truth = (0.04 * 0.04 + w_sum / (double)total_n) / 3;
		printf("  mean side variance of ln total tok/s %.3g, truth %.3g, within-run part %.3g\n",
		       mean_var, truth, w_sum / (double)total_n / 3);
		assert_true(mean_var > 0.6 * truth && mean_var < 2 * truth);
		/* the drift is the whole run's: the evidence is 2 runs' worth a
		 * side (df 2 + 2), not 2 per cell (6 cells: 24) */
		printf("  mean degrees of freedom of total tok/s: %.1f\n", df_sum / (double)total_n);
		assert_true(df_sum / (double)total_n < 8);
	}
	assert_true(found >= N_CELLS - 1);
	for (int i = 0; i < 6; i++)
		free(p[i]);
	tu_rmrf(tmp);
	free(tmp);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_slowdown_flagged),
		cmocka_unit_test(test_model_noise_false_positive_rate),
		cmocka_unit_test(test_model_noise_replicates),
		cmocka_unit_test(test_replicates_add_variance),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_synth_slowdown_and_matrix),
		cmocka_unit_test(test_synth_noise_pairs),
		cmocka_unit_test(test_missing_trace_unjudged),
		cmocka_unit_test(test_hierarchical_variance),
		cmocka_unit_test(test_drift_between_runs),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
