/* llm-inference-bench (llm_decode_bench.py) result JSON, early schema (no
 * version) and 0.4.x: formats/import-llm-inference-bench.md.  The tool keeps
 * aggregates only, so every measured cell carries the figures it reported;
 * over-capacity cells it left out are rebuilt from its metadata. */
#include "import/imp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"

/* The newest version whose JSON we have read and documented. */
#define KNOWN_MAJOR 0
#define KNOWN_MINOR 4
#define KNOWN_PATCH 29

/* One figure: reported key, the tool's member, scale to our unit. */
static const struct {
	const char *key, *member;
	double scale;
} figures[] = {
	{"total_tok_s", "aggregate_tps", 1},
	{"per_request_tok_s_p50", "output_tps_per_user_p50", 1},
	{"per_request_tok_s_mean", "output_tps_per_user_avg", 1},
	{"per_request_tok_s_p90", "output_tps_per_user_p90", 1},
	{"per_request_tok_s_p99", "output_tps_per_user_p99", 1},
	{"ttft_ms_mean", "ttft_avg", 1e3},
	{"ttft_ms_p50", "ttft_p50", 1e3},
	{"ttft_ms_p90", "ttft_p90", 1e3},
	{"ttft_ms_p99", "ttft_p99", 1e3},
	{"tbt_ms_mean", "inter_token_latency_avg", 1e3},
	{"tbt_ms_p50", "inter_token_latency_p50", 1e3},
	{"tbt_ms_p90", "inter_token_latency_p90", 1e3},
	{"tbt_ms_p99", "inter_token_latency_p99", 1e3},
	{"avg_active", "avg_running_reqs", 1},
	{"running_mean", "avg_running_reqs", 1},
	{"waiting_mean", "avg_queue_reqs", 1},
	{"waiting_max", "max_queue_reqs", 1},
	{"waiting_share", "queue_fraction", 1},
	{"output_tokens", "client_output_tokens", 1},
	{"measured_s", "measurement_seconds", 1},
	{"requests", "request_count", 1},
	{"errors", "num_errors", 1},
};

/* Integers min..max (contexts up to 1e9 tokens, so that C x (context +
 * max_tokens) stays within int64; concurrency up to the reader's 1e6). */
static enum tt_code int_list(struct tt__imp *im, const cJSON *md, const char *key, int64_t min,
			     double max, int64_t **out, size_t *n, struct tt_error *err)
{
	const cJSON *a, *e;
	size_t i = 0;
	enum tt_code rc = tt__imp_member(im, md, "metadata", key, cJSON_Array, 1, &a, err);

	if (tt_failed(rc))
		return rc;
	cJSON_ArrayForEach(e, a)
	{
		if (!cJSON_IsNumber(e) || !(e->valuedouble >= (double)min && e->valuedouble <= max) ||
		    e->valuedouble != floor(e->valuedouble)) {
			char where[64];
			snprintf(where, sizeof where, "metadata.%s[%zu]", key, i);
			return tt__imp_fail_err(im, err, where, "an integer in %lld..%.0f expected",
						(long long)min, max);
		}
		if (tt_failed(rc = tt__imp_add_i64(im, out, n, (int64_t)e->valuedouble, err)))
			return rc;
		i++;
	}
	return TT_OK;
}

/* A version newer than the newest we know: say so, read what we know. */
static void check_version(struct tt__imp *im, const char *v)
{
	int a = 0, b = 0, c = 0;

	if (!v || sscanf(v, "%d.%d.%d", &a, &b, &c) < 2)
		return;
	if (a > KNOWN_MAJOR || (a == KNOWN_MAJOR && b > KNOWN_MINOR) ||
	    (a == KNOWN_MAJOR && b == KNOWN_MINOR && c > KNOWN_PATCH))
		snprintf(im->newer, sizeof im->newer,
			 "llm-inference-bench %s is newer than %d.%d.%d, the newest schema this "
			 "importer knows; only the members it knows were read",
			 v, KNOWN_MAJOR, KNOWN_MINOR, KNOWN_PATCH);
}

static enum tt_code read_metadata(struct tt__imp *im, const cJSON *md, struct tt_error *err)
{
	const char *s;
	double d;
	int found;
	enum tt_code rc;
	struct tt_manifest *m = im->m;
	static const char *const notes[][2] = {
		{"prefill_mode", "prefill_mode"}, {"decode_mode", "decode_mode"},
		{"timestamp", "source_timestamp"}, {"server", "source_server"}};

	if (tt_failed(rc = tt__imp_str(im, md, "metadata", "version", 0, &s, err)))
		return rc;
	im->src.tool = "llm-inference-bench";
	/* The tool streams from /v1/chat/completions (REFERENCE section 1). */
	if (tt_failed(rc = tt__imp_set(im, &im->m->endpoint, "chat", err)))
		return rc;
	im->src.tool_version = (char *)s;
	check_version(im, s);
	if (tt_failed(rc = tt__imp_str(im, md, "metadata", "engine", 0, &s, err)) ||
	    tt_failed(rc = tt__imp_set(im, &m->engine, s, err)) ||
	    tt_failed(rc = tt__imp_str(im, md, "metadata", "model", 0, &s, err)) ||
	    tt_failed(rc = tt__imp_set(im, &m->model, s, err)) ||
	    tt_failed(rc = tt__imp_set(im, &m->served_model, s, err)))
		return rc;
	for (size_t i = 0; i < sizeof notes / sizeof *notes; i++)
		if (tt_failed(rc = tt__imp_str(im, md, "metadata", notes[i][0], 0, &s, err)) ||
		    tt_failed(rc = tt__imp_note(im, notes[i][1], s, err)))
			return rc;
	if (tt_failed(rc = tt__imp_num(im, md, "metadata", "duration_per_test", 0, &d, &found, err)))
		return rc;
	if (found)
		m->duration_s = d;
	if (tt_failed(rc = tt__imp_num(im, md, "metadata", "max_tokens", 0, &d, &found, err)))
		return rc;
	/* Bounded so that C x (context + max_tokens) stays far within int64. */
	if (found && tt_failed(rc = tt__imp_range(im, "metadata", "max_tokens", d, 0, TT_IMPORT_MAX_TOKENS,
					 "tokens", err)))
		return rc;
	if (found)
		m->max_tokens = (int64_t)d;
	if (tt_failed(rc = tt__imp_num(im, md, "metadata", "max_total_tokens", 0, &d, &found, err)))
		return rc;
	if (found && tt_failed(rc = tt__imp_range(im, "metadata", "max_total_tokens", d, 0, 1e18, "tokens",
					 err)))
		return rc;
	if (found && d > 0 && m->kv_capacity_tokens < 0) {
		m->kv_capacity_tokens = (int64_t)d;
		if (tt_manifest_set_str(&m->kv_capacity_source, "import"))
			return tt__imp_nomem(im, err);
	}
	if (tt_failed(rc = int_list(im, md, "context_lengths", 0, 1e9, &m->contexts, &m->n_contexts, err)))
		return rc;
	{
		int64_t *conc = NULL;
		size_t n = 0;
		rc = int_list(im, md, "concurrency_levels", 1, TT_IMPORT_MAX_CONCURRENCY, &conc, &n, err);
		for (size_t i = 0; !tt_failed(rc) && i < n; i++)
			rc = tt__imp_add_int(im, &m->concurrency, &m->n_concurrency, (int)conc[i], err);
		free(conc);
	}
	return rc;
}

static enum tt_code read_prefill(struct tt__imp *im, const cJSON *root, struct tt_error *err)
{
	const cJSON *p, *e;
	enum tt_code rc = tt__imp_member(im, root, "", "prefill", cJSON_Object, 0, &p, err);

	cJSON_ArrayForEach(e, p)
	{
		char where[96], *end;
		double ttft = NAN, rate = NAN;
		int f1 = 0, f2 = 0;
		long long ctx = strtoll(e->string, &end, 10);
		size_t idx;

		snprintf(where, sizeof where, "prefill.%s", e->string);
		if (*end || ctx < 0 || end == e->string || ctx > (long long)TT_IMPORT_MAX_CONTEXT)
			return tt__imp_fail_err(im, err, where, "a context length (integer in 0..1e15) "
						"expected as the key");
		if (!cJSON_IsObject(e))
			return tt__imp_fail_err(im, err, where, "an object expected");
		if (tt_failed(rc = tt__imp_num(im, e, where, "ttft_seconds", 0, &ttft, &f1, err)) ||
		    tt_failed(rc = tt__imp_num(im, e, where, "tok_per_sec", 0, &rate, &f2, err)))
			return rc;
		if (tt_failed(rc = tt__imp_cell(im, where, TT_PHASE_PREFILL, (double)ctx, 1, &idx, err)))
			return rc;
		im->m->cells[idx].state = TT_CELL_DONE;
		if ((f1 && tt_failed(rc = tt__imp_report(im, idx, "ttft_ms_p50", ttft * 1e3, err))) ||
		    (f2 && tt_failed(rc = tt__imp_report(im, idx, "total_tok_s", rate, err))))
			return rc;
		if (tt_failed(rc = tt__imp_add_i64(im, &im->m->prefill_contexts, &im->m->n_prefill_contexts,
					  ctx, err)))
			return rc;
	}
	return rc;
}

/* The tool's own status rule (REFERENCE: "Requests queued" when the waiting
 * gauge was ever above 0, fewer than 0.95 x C ran on average at C > 1, or
 * readiness timed out), with errors first as in docs/metrics.md.  why gets the
 * evidence. */
static double member_num(const cJSON *r, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, k);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *status_of(const cJSON *r, int conc, char *why, size_t n)
{
	double errors = member_num(r, "num_errors"), maxq = member_num(r, "max_queue_reqs");
	double running = member_num(r, "avg_running_reqs");

	why[0] = '\0';
	if (errors > 0) {
		snprintf(why, n, "llm-inference-bench counted %.0f failed request%s", errors,
			 errors == 1 ? "" : "s");
		return "errors";
	}
	if (maxq > 0) {
		snprintf(why, n, "llm-inference-bench saw up to %.0f request%s waiting", maxq,
			 maxq == 1 ? "" : "s");
		return "requests_queued";
	}
	/* Not at C = 1: the seed report prints 120K x 1 Valid with 0.9 running
	 * on average (one stream is out of the running gauge for its TTFT
	 * between requests, docs/sim.md 4.7), so the tool does not apply the
	 * rule to a single stream. */
	if (conc > 1 && running < 0.95 * conc) {
		snprintf(why, n, "llm-inference-bench saw %.1f of %d request%s running on average",
			 running, conc, conc == 1 ? "" : "s");
		return "requests_queued";
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "warmup_timed_out")) ||
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "underfilled"))) {
		snprintf(why, n, "llm-inference-bench: readiness timed out or streams underfilled");
		return "requests_queued";
	}
	return "valid";
}

static enum tt_code read_result(struct tt__imp *im, const cJSON *r, size_t i, size_t *cell,
				struct tt_error *err)
{
	char where[48];
	double conc, ctx, v;
	int found;
	enum tt_code rc;
	struct tt_cell_info *c;

	snprintf(where, sizeof where, "results[%zu]", i);
	if (!cJSON_IsObject(r))
		return tt__imp_fail_err(im, err, where, "an object expected");
	if (tt_failed(rc = tt__imp_num(im, r, where, "concurrency", 1, &conc, NULL, err)) ||
	    tt_failed(rc = tt__imp_num(im, r, where, "context_tokens", 1, &ctx, NULL, err)))
		return rc;
	if (conc < 1 || conc > 1e6 || conc != floor(conc))
		return tt__imp_fail_err(im, err, where, "concurrency %g is not an integer in 1..1000000",
					conc);
	if (ctx < 0 || ctx > 1e12 || ctx != floor(ctx))
		return tt__imp_fail_err(im, err, where, "context_tokens %g is not a non-negative "
					"integer", ctx);
	if (tt_failed(rc = tt__imp_num(im, r, where, "aggregate_tps", 1, &v, NULL, err)))
		return rc;
	if (tt_failed(rc = tt__imp_cell(im, where, TT_PHASE_DECODE, ctx, conc, cell, err)))
		return rc;
	c = &im->m->cells[*cell];
	c->state = TT_CELL_DONE;
	for (size_t k = 0; k < sizeof figures / sizeof *figures; k++) {
		if (tt_failed(rc = tt__imp_num(im, r, where, figures[k].member, 0, &v, &found, err)))
			return rc;
		char m[160];
		snprintf(m, sizeof m, "%s.%s", where, figures[k].member);
		if (found && tt_failed(rc = tt__imp_report_member(im, *cell, figures[k].key, m,
								  v * figures[k].scale, err)))
			return rc;
	}
	/* Early schema: per_request_avg_tps is aggregate / C, the mean stream rate. */
	if (!tt_cell_reported(c, "per_request_tok_s_mean", NULL)) {
		if (tt_failed(rc = tt__imp_num(im, r, where, "per_request_avg_tps", 0, &v, &found, err)))
			return rc;
		if (found && tt_failed(rc = tt__imp_report(im, *cell, "per_request_tok_s_mean", v, err)))
			return rc;
	}
	/* Completed in the window; the early schema has only num_completed. */
	if (tt_failed(rc = tt__imp_num(im, r, where, "completed_request_count", 0, &v, &found, err)))
		return rc;
	if (!found && tt_failed(rc = tt__imp_num(im, r, where, "num_completed", 0, &v, &found, err)))
		return rc;
	if (found && tt_failed(rc = tt__imp_report(im, *cell, "completed", v, err)))
		return rc;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "warmup_timed_out")))
		c->ready_timed_out = 1;
	{
		char why[160];
		const char *st = status_of(r, (int)conc, why, sizeof why);
		if (tt_manifest_set_str(&c->reported_status, st) ||
		    (why[0] && tt_manifest_set_str(&c->reason, why)))
			return tt__imp_nomem(im, err);
	}
	return TT_OK;
}

/* A cell of the matrix the file has no result for: over capacity when the
 * metadata's KV budget says so (the tool skips those), else not run. */
static enum tt_code rebuild_cell(struct tt__imp *im, int64_t ctx, int conc, struct tt_error *err)
{
	struct tt_manifest *m = im->m;
	int64_t need = (int64_t)conc * (ctx + m->max_tokens);
	size_t idx;
	char reason[160];
	enum tt_code rc = tt__imp_cell(im, "metadata", TT_PHASE_DECODE, (double)ctx, conc, &idx, err);

	if (tt_failed(rc))
		return rc;
	if (m->kv_capacity_tokens > 0 && need > m->kv_capacity_tokens) {
		m->cells[idx].state = TT_CELL_OVER_CAPACITY;
		m->cells[idx].kv_need_tokens = need;
		snprintf(reason, sizeof reason, "%d x (%lld + %lld) = %lld > %lld KV tokens", conc,
			 (long long)ctx, (long long)m->max_tokens, (long long)need,
			 (long long)m->kv_capacity_tokens);
	} else {
		m->cells[idx].state = TT_CELL_PENDING;
		snprintf(reason, sizeof reason, "not in the imported file%s",
			 m->kv_capacity_tokens > 0 ? " (it fits the KV budget)" :
						    " (no KV budget recorded to tell why)");
	}
	return tt_manifest_set_str(&m->cells[idx].reason, reason) ? tt__imp_nomem(im, err) : TT_OK;
}

enum tt_code tt__import_lib_json(struct tt__imp *im, const cJSON *root, struct tt_error *err)
{
	const cJSON *md, *results, *r;
	enum tt_code rc;
	size_t n_results, i = 0, first;
	int64_t *ctxs = NULL;
	size_t n_ctx = 0;
	int *conc = NULL;
	size_t n_conc = 0;

	if (!root || !cJSON_IsObject(root))
		return tt__imp_fail_err(im, err, "", "a JSON object expected");
	if (tt_failed(rc = tt__imp_member(im, root, "", "metadata", cJSON_Object, 1, &md, err)) ||
	    tt_failed(rc = tt__imp_member(im, root, "", "results", cJSON_Array, 1, &results, err)))
		return rc;
	/* This file's matrix, before merging into the run's settings. */
	{
		int64_t *c64 = NULL;
		size_t n64 = 0;
		if (tt_failed(rc = int_list(im, md, "context_lengths", 0, 1e9, &ctxs, &n_ctx, err)) ||
		    tt_failed(rc = int_list(im, md, "concurrency_levels", 1, TT_IMPORT_MAX_CONCURRENCY, &c64, &n64, err))) {
			free(c64);
			goto cleanup;
		}
		conc = calloc(n64 ? n64 : 1, sizeof *conc);
		for (size_t k = 0; conc && k < n64; k++)
			conc[n_conc++] = (int)c64[k];
		free(c64);
		if (!conc) {
			rc = tt__imp_nomem(im, err);
			goto cleanup;
		}
	}
	/* The matrix before any cell of it: a few KB can ask for millions. */
	if ((double)n_ctx * (double)n_conc > TT_IMPORT_MAX_CELLS) {
		rc = tt__imp_fail_err(im, err, "metadata", "%zu contexts x %zu concurrency levels = "
				      "%.0f cells: more than the %d a run holds", n_ctx, n_conc,
				      (double)n_ctx * (double)n_conc, TT_IMPORT_MAX_CELLS);
		goto cleanup;
	}
	if (tt_failed(rc = read_metadata(im, md, err)) || tt_failed(rc = read_prefill(im, root, err)))
		goto cleanup;
	first = im->m->n_cells;
	n_results = (size_t)cJSON_GetArraySize(results);
	cJSON_ArrayForEach(r, results)
	{
		size_t cell;
		if (tt_failed(rc = read_result(im, r, i++, &cell, err)))
			goto cleanup;
	}
	for (size_t a = 0; a < n_ctx; a++)
		for (size_t b = 0; b < n_conc; b++) {
			char id[64];
			snprintf(id, sizeof id, "decode-%lldx%d", (long long)ctxs[a], conc[b]);
			if (tt__imp_find_cell(im, id) < 0 &&
			    tt_failed(rc = rebuild_cell(im, ctxs[a], conc[b], err)))
				goto cleanup;
		}
	(void)first;
	(void)n_results;
	rc = TT_OK;
cleanup:
	free(ctxs);
	free(conc);
	return rc;
}
