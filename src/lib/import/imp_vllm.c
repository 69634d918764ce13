/* vLLM `bench serve --save-result` JSON, with or without per-request detail
 * (--save-detailed): formats/import-vllm-bench.md.  With detail, every
 * request becomes a trace record (its chunks at send + TTFT + the gaps);
 * without, the cell carries the aggregates vLLM reported. */
#include "import/imp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum tt_code num_array(struct tt__imp *im, const cJSON *root, const char *key,
			      const cJSON **out, size_t n, struct tt_error *err)
{
	enum tt_code rc = tt__imp_member(im, root, "", key, cJSON_Array, 0, out, err);
	if (tt_failed(rc) || !*out)
		return rc;
	if ((size_t)cJSON_GetArraySize(*out) != n)
		return tt__imp_fail_err(im, err, key, "%d entries, but ttfts has %zu",
					cJSON_GetArraySize(*out), n);
	return TT_OK;
}

static enum tt_code elem_num(struct tt__imp *im, const cJSON *e, const char *key, size_t i,
			     double min, double *out, struct tt_error *err)
{
	if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < min) {
		char where[64];
		snprintf(where, sizeof where, "%s[%zu]", key, i);
		return tt__imp_fail_err(im, err, where, "a number >= %g expected", min);
	}
	*out = e->valuedouble;
	return TT_OK;
}

/* The next element of a parallel array (cJSON_GetArrayItem is linear:
 * indexing each array by i made 50k requests take a minute). */
static const cJSON *step(const cJSON **cur)
{
	const cJSON *e = *cur;
	if (e)
		*cur = e->next;
	return e;
}

static enum tt_code detailed(struct tt__imp *im, const cJSON *root, size_t cell,
			     const cJSON *ttfts, struct tt_error *err)
{
	const cJSON *itls, *starts, *outs, *ins, *errs, *e;
	const cJSON *c_itl, *c_start, *c_ttft, *c_out, *c_in, *c_err;
	size_t n = (size_t)cJSON_GetArraySize(ttfts), i = 0, multi = 0;
	struct tt_trace_writer *tw = NULL;
	struct tt_chunk *chunks = NULL;
	size_t cap = 0;
	double t0 = INFINITY;
	int64_t ws = INT64_MAX, we = INT64_MIN;
	int conc = im->m->cells[cell].concurrency;
	enum tt_code rc;

	if (tt_failed(rc = num_array(im, root, "itls", &itls, n, err)) ||
	    tt_failed(rc = num_array(im, root, "start_times", &starts, n, err)) ||
	    tt_failed(rc = num_array(im, root, "output_lens", &outs, n, err)) ||
	    tt_failed(rc = num_array(im, root, "input_lens", &ins, n, err)) ||
	    tt_failed(rc = num_array(im, root, "errors", &errs, n, err)))
		return rc;
	if (!itls || !outs)
		return tt__imp_fail_err(im, err, "", "ttfts without itls and output_lens: per-request "
					"detail is incomplete");
	if (!starts)
		return TT_EOF; /* no send times: the aggregates are all we can use */
	/* Send times in perf_counter seconds: any origin, but within +-4e9 s
	 * (TT_IMPORT_MAX_ABS_NS), so that differences stay in range. */
	cJSON_ArrayForEach(e, starts)
	{
		double s;
		char where[48];
		if (tt_failed(rc = elem_num(im, e, "start_times", i, -4e9, &s, err)))
			return rc;
		snprintf(where, sizeof where, "start_times[%zu]", i++);
		if (tt_failed(rc = tt__imp_range(im, where, "", s, -4e9, 4e9, "s", err)))
			return rc;
		if (s < t0)
			t0 = s;
	}
	if (tt_failed(rc = tt__imp_trace(im, cell, &tw, err)))
		return rc;
	c_itl = itls->child;
	c_start = starts->child;
	c_ttft = ttfts->child;
	c_out = outs->child;
	c_in = ins ? ins->child : NULL;
	c_err = errs ? errs->child : NULL;
	for (i = 0; i < n; i++) {
		const cJSON *gaps = step(&c_itl), *g, *es = step(&c_err), *in_e = step(&c_in);
		double start, ttft, out, in = -1;
		const char *error = NULL;
		size_t nc, j = 0;
		struct tt_request r;
		int64_t t, off;
		char where[48];

		if (tt_failed(rc = elem_num(im, step(&c_start), "start_times", i, -4e9, &start, err)) ||
		    tt_failed(rc = elem_num(im, step(&c_ttft), "ttfts", i, 0, &ttft, err)) ||
		    tt_failed(rc = elem_num(im, step(&c_out), "output_lens", i, 0, &out, err)))
			goto cleanup;
		if (ins && tt_failed(rc = elem_num(im, in_e, "input_lens", i, 0, &in, err)))
			goto cleanup;
		snprintf(where, sizeof where, "input_lens[%zu]", i);
		if (ins && tt_failed(rc = tt__imp_range(im, where, "", in, 0, TT_IMPORT_MAX_TOKENS, "tokens",
					       err)))
			goto cleanup;
		if (cJSON_IsString(es) && es->valuestring[0])
			error = es->valuestring;
		snprintf(where, sizeof where, "itls[%zu]", i);
		if (!cJSON_IsArray(gaps)) {
			rc = tt__imp_fail_err(im, err, where, "an array of seconds expected");
			goto cleanup;
		}
		nc = error && ttft <= 0 ? 0 : (size_t)cJSON_GetArraySize(gaps) + 1;
		if (nc > TT_IMPORT_MAX_CHUNKS || out > 1e9) {
			rc = tt__imp_fail_err(im, err, where, "%zu chunks or %.0f tokens: more than the "
					      "2^20 chunks (or 1e9 tokens) a request of a run holds",
					      nc, out);
			goto cleanup;
		}
		if (nc > cap) {
			struct tt_chunk *c = realloc(chunks, nc * sizeof *c);
			if (!c) {
				rc = tt__imp_nomem(im, err);
				goto cleanup;
			}
			chunks = c;
			cap = nc;
		}
		memset(&r, 0, sizeof r);
		r.slot = (uint32_t)(i % (size_t)conc);
		r.seq = (uint32_t)(i / (size_t)conc);
		r.role = TT_ROLE_MEASURED;
		/* start - t0 is within 0..8e9 s: in range of the checks below. */
		snprintf(where, sizeof where, "start_times[%zu]", i);
		if (tt_failed(rc = tt__imp_ns(im, where, "", start - t0, 1e9, 0, TT_IMPORT_MAX_SPAN_NS,
				     &r.t_send_ns, err)))
			goto cleanup;
		r.t_sched_ns = r.t_send_ns;
		r.prompt_tokens = in >= 0 ? (int64_t)in : -1;
		r.cached_tokens = -1;
		snprintf(where, sizeof where, "ttfts[%zu]", i);
		if (tt_failed(rc = tt__imp_ns(im, where, "", ttft, 1e9, 0, TT_IMPORT_MAX_SPAN_NS, &off, err)) ||
		    tt_failed(rc = tt__imp_add_ns(im, where, "", r.t_send_ns, off, &t, err)))
			goto cleanup;
		snprintf(where, sizeof where, "itls[%zu]", i);
		if (nc) {
			chunks[0].t_ns = t;
			chunks[0].tokens = tt__imp_chunk_tokens(0, nc, (long)out);
			j = 1;
			cJSON_ArrayForEach(g, gaps)
			{
				double gap;
				if (tt_failed(rc = elem_num(im, g, where, j - 1, 0, &gap, err)) ||
				    tt_failed(rc = tt__imp_ns(im, where, "", gap, 1e9, 0, TT_IMPORT_MAX_SPAN_NS,
						     &off, err)) ||
				    tt_failed(rc = tt__imp_add_ns(im, where, "", t, off, &t, err)))
					goto cleanup;
				chunks[j].t_ns = t;
				chunks[j].tokens = tt__imp_chunk_tokens(j, nc, (long)out);
				multi += chunks[j].tokens > 1;
				j++;
			}
		}
		r.n_chunks = nc;
		r.chunks = chunks;
		r.t_end_ns = nc ? chunks[nc - 1].t_ns : r.t_send_ns;
		r.http_status = error ? 0 : 200;
		r.finish = error ? TT_FINISH_ERROR : TT_FINISH_STOP;
		r.fail = error ? TT_FAIL_OTHER : TT_FAIL_NONE;
		r.error = error;
		if (r.t_send_ns < ws)
			ws = r.t_send_ns;
		if (r.t_end_ns > we)
			we = r.t_end_ns;
		snprintf(where, sizeof where, "request %zu", i);
		if (tt_failed(rc = tt__imp_write(im, tw, where, &r, err)))
			goto cleanup;
	}
	rc = tt_trace_writer_close(tw, err);
	tw = NULL;
	if (tt_failed(rc))
		goto cleanup;
	{
		struct tt_cell_info *c = &im->m->cells[cell];
		/* The window is the whole benchmark: first send to last end
		 * (vLLM's duration), one trace time unit wider: stored times
		 * round up to it, and the last chunk must stay inside. */
		c->start_ns = c->window_start_ns = ws;
		c->window_end_ns = c->end_ns = we + 1000;
		if (multi)
			rc = tt__imp_note(im, "tokens_per_chunk",
					  "spread evenly: the file has token counts per request only "
					  "(formats/import-vllm-bench.md)", err);
	}
cleanup:
	if (tw)
		tt_trace_writer_close(tw, NULL);
	free(chunks);
	return rc;
}

static const struct {
	const char *key, *member;
} aggregates[] = {
	{"total_tok_s", "output_throughput"},
	{"ttft_ms_mean", "mean_ttft_ms"},
	{"ttft_ms_p50", "median_ttft_ms"},
	{"ttft_ms_p90", "p90_ttft_ms"},
	{"ttft_ms_p95", "p95_ttft_ms"},
	{"ttft_ms_p99", "p99_ttft_ms"},
	{"tbt_ms_mean", "mean_tpot_ms"},
	{"tbt_ms_p50", "median_tpot_ms"},
	{"tbt_ms_p90", "p90_tpot_ms"},
	{"tbt_ms_p95", "p95_tpot_ms"},
	{"tbt_ms_p99", "p99_tpot_ms"},
	{"output_tokens", "total_output_tokens"},
	{"measured_s", "duration"},
	{"completed", "completed"},
	{"errors", "failed"},
};

static enum tt_code reported(struct tt__imp *im, const cJSON *root, size_t cell,
			     struct tt_error *err)
{
	double v, done = 0, failed = 0;
	int found;
	enum tt_code rc;

	for (size_t k = 0; k < sizeof aggregates / sizeof *aggregates; k++) {
		if (tt_failed(rc = tt__imp_num(im, root, "", aggregates[k].member, 0, &v, &found, err)))
			return rc;
		if (found && tt_failed(rc = tt__imp_report_member(im, cell, aggregates[k].key,
								  aggregates[k].member, v, err)))
			return rc;
	}
	tt_cell_reported(&im->m->cells[cell], "completed", &done);
	tt_cell_reported(&im->m->cells[cell], "errors", &failed);
	if (tt_failed(rc = tt__imp_report(im, cell, "requests", done + failed, err)))
		return rc;
	return tt_manifest_set_str(&im->m->cells[cell].reported_status,
				   failed > 0 ? "errors" : "valid") ? tt__imp_nomem(im, err) : TT_OK;
}

enum tt_code tt__import_vllm(struct tt__imp *im, const cJSON *root, struct tt_error *err)
{
	const char *s;
	const cJSON *ttfts, *mc;
	double conc = 0, in = 0, done = 0, v, ctx;
	int found;
	size_t cell;
	enum tt_code rc;

	if (!root || !cJSON_IsObject(root))
		return tt__imp_fail_err(im, err, "", "a JSON object expected");
	im->src.tool = "vllm bench serve";
	if (tt_failed(rc = tt__imp_str(im, root, "", "model_id", 0, &s, err)) ||
	    tt_failed(rc = tt__imp_set(im, &im->m->model, s, err)) ||
	    tt_failed(rc = tt__imp_set(im, &im->m->served_model, s, err)) ||
	    tt_failed(rc = tt__imp_str(im, root, "", "backend", 0, &s, err)) ||
	    tt_failed(rc = tt__imp_note(im, "backend", s, err)) ||
	    tt_failed(rc = tt__imp_endpoint(im, s && strstr(s, "chat") ? s : NULL, err)) ||
	    tt_failed(rc = tt__imp_str(im, root, "", "endpoint_type", 0, &s, err)) ||
	    tt_failed(rc = tt__imp_endpoint(im, s && strstr(s, "chat") ? s : NULL, err)) ||
	    tt_failed(rc = tt__imp_str(im, root, "", "date", 0, &s, err)) ||
	    tt_failed(rc = tt__imp_note(im, "source_timestamp", s, err)) ||
	    tt_failed(rc = tt__imp_set(im, &im->m->engine, "vllm", err)))
		return rc;
	/* Concurrency: --max-concurrency; a rate-driven run (null) has none, so
	 * the cell takes the most requests vLLM saw at once, else num_prompts. */
	mc = cJSON_GetObjectItemCaseSensitive(root, "max_concurrency");
	if (mc && !cJSON_IsNull(mc) && !cJSON_IsNumber(mc))
		return tt__imp_fail_err(im, err, "max_concurrency", "a number or null expected");
	if (cJSON_IsNumber(mc))
		conc = mc->valuedouble;
	if (conc < 1 && tt_failed(rc = tt__imp_num(im, root, "", "max_concurrent_requests", 0, &conc, &found,
					  err)))
		return rc;
	if (conc < 1 && tt_failed(rc = tt__imp_num(im, root, "", "num_prompts", 0, &conc, &found, err)))
		return rc;
	if (conc < 1)
		conc = 1;
	if (tt_failed(rc = tt__imp_range(im, "", "max_concurrency", conc, 1, TT_IMPORT_MAX_CONCURRENCY,
				"requests", err)))
		return rc;
	conc = floor(conc);
	{
		const cJSON *rr = cJSON_GetObjectItemCaseSensitive(root, "request_rate");
		char rate[64];
		if (cJSON_IsNumber(rr))
			snprintf(rate, sizeof rate, "%g requests/s", rr->valuedouble);
		else
			snprintf(rate, sizeof rate, "%s", cJSON_IsString(rr) ? rr->valuestring : "unknown");
		if (!cJSON_IsNumber(mc) && tt_failed(rc = tt__imp_note(im, "load", "request rate (open loop); "
							    "concurrency is the most in flight", err)))
			return rc;
		if (tt_failed(rc = tt__imp_note(im, "request_rate", rate, err)))
			return rc;
	}
	/* Context: the mean prompt length (vLLM's random dataset uses one length). */
	if (tt_failed(rc = tt__imp_num(im, root, "", "total_input_tokens", 0, &in, &found, err)) ||
	    tt_failed(rc = tt__imp_num(im, root, "", "completed", 1, &done, NULL, err)))
		return rc;
	ctx = done > 0 ? floor(in / done + 0.5) : 0;
	if (tt_failed(rc = tt__imp_cell(im, "total_input_tokens / completed", TT_PHASE_DECODE, ctx, conc,
			       &cell, err)))
		return rc;
	im->m->cells[cell].state = TT_CELL_DONE;
	if (tt_failed(rc = tt__imp_add_i64(im, &im->m->contexts, &im->m->n_contexts, (int64_t)ctx, err)) ||
	    tt_failed(rc = tt__imp_add_int(im, &im->m->concurrency, &im->m->n_concurrency, (int)conc, err)))
		return rc;
	if (tt_failed(rc = tt__imp_num(im, root, "", "duration", 0, &v, &found, err)))
		return rc;
	if (found && im->m->n_cells == im->first_cell + 1)
		im->m->duration_s = v;
	if (tt_failed(rc = tt__imp_member(im, root, "", "ttfts", cJSON_Array, 0, &ttfts, err)))
		return rc;
	if (ttfts) {
		rc = detailed(im, root, cell, ttfts, err);
		if (rc != TT_EOF)
			return rc;
	}
	return reported(im, root, cell, err);
}
