/* GenAI-Perf profile_export.json: formats/import-genai-perf.md.  Every
 * request becomes a trace record: its send time, and each response's
 * arrival with the output tokens its raw SSE text carried, counted as our
 * capture counts them. */
#include "import/imp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/imp_sse.h"

struct req {
	struct tt_request r;
	struct tt_chunk *chunks;
	char error[256];
};

static void reqs_free(struct req *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].chunks);
	free(v);
}

/* Slots by time: requests in send order each take the slot that has been
 * free longest (the earliest end; a min-heap of the slots used so far), so
 * that no two requests of a slot overlap when at most conc are in flight
 * (GenAI-Perf's concurrency, or the most in flight of an open-loop run).
 * seq counts a slot's requests.  By file order, requests of one slot
 * overlapped.  -1: out of memory. */
struct slot {
	int64_t end;
	uint32_t id, n;
};

static const struct req *sort_base;

static int by_send(const void *a, const void *b)
{
	int64_t x = sort_base[*(const size_t *)a].r.t_send_ns, y = sort_base[*(const size_t *)b].r.t_send_ns;
	return (x > y) - (x < y);
}

static void sift_down(struct slot *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct slot t;
		if (l < n && h[l].end < h[m].end)
			m = l;
		if (l + 1 < n && h[l + 1].end < h[m].end)
			m = l + 1;
		if (m == i)
			return;
		t = h[i], h[i] = h[m], h[m] = t;
		i = m;
	}
}

static int assign_slots(struct req *v, size_t n, size_t conc)
{
	size_t *order = malloc((n ? n : 1) * sizeof *order), used = 0;
	struct slot *h = malloc((n < conc ? (n ? n : 1) : conc) * sizeof *h);

	if (!order || !h) {
		free(order);
		free(h);
		return -1;
	}
	for (size_t j = 0; j < n; j++)
		order[j] = j;
	sort_base = v;
	qsort(order, n, sizeof *order, by_send);
	for (size_t k = 0; k < n; k++) {
		struct req *q = &v[order[k]];
		int64_t end = q->r.t_end_ns;
		for (size_t c = 0; c < q->r.n_chunks; c++)
			if (q->chunks[c].t_ns > end)
				end = q->chunks[c].t_ns;
		if (used < conc && (used == 0 || h[0].end > q->r.t_send_ns)) {
			/* no slot free yet: a new one, sifted up */
			size_t i = used++;
			h[i].id = (uint32_t)i;
			h[i].n = 0;
			h[i].end = end;
			q->r.slot = h[i].id;
			q->r.seq = h[i].n++;
			while (i && h[(i - 1) / 2].end > h[i].end) {
				struct slot t = h[i];
				h[i] = h[(i - 1) / 2];
				h[(i - 1) / 2] = t;
				i = (i - 1) / 2;
			}
			continue;
		}
		q->r.slot = h[0].id;
		q->r.seq = h[0].n++;
		h[0].end = end;
		sift_down(h, used, 0);
	}
	free(order);
	free(h);
	return 0;
}

static enum tt_code read_request(struct tt__imp *im, const cJSON *q, const char *where,
				 int64_t origin, struct req *out, struct tt_error *err)
{
	const cJSON *ts, *outs, *e, *o;
	double t;
	size_t n, j = 0;
	int64_t abs_ns;
	struct tt__imp_stream st;
	enum tt_code rc;
	char w[192];

	if (!cJSON_IsObject(q))
		return tt__imp_fail_err(im, err, where, "an object expected");
	if (tt_failed(rc = tt__imp_num(im, q, where, "timestamp", 1, &t, NULL, err)) ||
	    tt_failed(rc = tt__imp_member(im, q, where, "response_timestamps", cJSON_Array, 1, &ts, err)) ||
	    tt_failed(rc = tt__imp_member(im, q, where, "response_outputs", cJSON_Array, 1, &outs, err)))
		return rc;
	n = (size_t)cJSON_GetArraySize(ts);
	if ((size_t)cJSON_GetArraySize(outs) != n)
		return tt__imp_fail_err(im, err, where, "%zu response_timestamps but %d "
					"response_outputs", n, cJSON_GetArraySize(outs));
	if (n > TT_IMPORT_MAX_CHUNKS)
		return tt__imp_fail_err(im, err, where, "%zu responses: more than the 2^20 chunks a "
					"request of a run holds", n);
	/* Unix ns within +-4e18, the origin too: the difference is an int64. */
	if (tt_failed(rc = tt__imp_ns(im, where, "timestamp", t, 1, -TT_IMPORT_MAX_ABS_NS,
			     TT_IMPORT_MAX_ABS_NS, &abs_ns, err)))
		return rc;
	memset(out, 0, sizeof *out);
	out->chunks = calloc(n ? n : 1, sizeof *out->chunks);
	if (!out->chunks)
		return tt__imp_nomem(im, err);
	tt__imp_stream_init(&st);
	out->r.role = TT_ROLE_MEASURED;
	out->r.t_sched_ns = out->r.t_send_ns = abs_ns - origin;
	o = outs->child;
	cJSON_ArrayForEach(e, ts)
	{
		const cJSON *text;
		snprintf(w, sizeof w, "%s.response_timestamps[%zu]", where, j);
		if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
			return tt__imp_fail_err(im, err, w, "a number (ns) expected");
		if (tt_failed(rc = tt__imp_ns(im, w, "", e->valuedouble, 1, -TT_IMPORT_MAX_ABS_NS,
				     TT_IMPORT_MAX_ABS_NS, &abs_ns, err)))
			return rc;
		out->chunks[j].t_ns = abs_ns - origin;
		if (j && out->chunks[j].t_ns < out->chunks[j - 1].t_ns)
			return tt__imp_fail_err(im, err, w, "earlier than the response before it");
		text = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "response") : o;
		if (!cJSON_IsString(text)) {
			snprintf(w, sizeof w, "%s.response_outputs[%zu]", where, j);
			return tt__imp_fail_err(im, err, w, "a response text expected");
		}
		o = o->next;
		out->chunks[j].tokens =
			(uint32_t)tt__imp_stream_piece(&st, text->valuestring, strlen(text->valuestring));
		j++;
	}
	out->r.n_chunks = n;
	out->r.chunks = out->chunks;
	out->r.t_end_ns = n ? out->chunks[n - 1].t_ns : out->r.t_send_ns;
	out->r.prompt_tokens = st.st.prompt_tokens;
	out->r.cached_tokens = st.st.cached_tokens;
	out->r.http_status = 200;
	out->r.finish = st.finish != TT_FINISH_UNKNOWN ? st.finish : st.done ? TT_FINISH_STOP :
				       TT_FINISH_UNKNOWN;
	if (st.malformed && !st.error) {
		out->r.finish = TT_FINISH_ERROR;
		out->r.fail = TT_FAIL_MALFORMED;
		snprintf(out->error, sizeof out->error, "%ld malformed event%s in the response text",
			 st.malformed, st.malformed == 1 ? "" : "s");
		out->r.error = out->error;
	} else if (st.error || n == 0) {
		out->r.finish = TT_FINISH_ERROR;
		out->r.fail = n == 0 ? TT_FAIL_OTHER : TT_FAIL_ERROR_EVENT;
		snprintf(out->error, sizeof out->error, "%s",
			 st.error ? st.error_text : "no response recorded");
		out->r.error = out->error;
	}
	return TT_OK;
}

/* Most requests in flight at once (open-loop runs have no concurrency);
 * -1 out of memory. */
static long max_in_flight(const struct req *v, size_t n)
{
	double *send = malloc((n ? n : 1) * sizeof *send), *end = malloc((n ? n : 1) * sizeof *end);
	long best = -1;

	if (send && end) {
		for (size_t i = 0; i < n; i++) {
			send[i] = (double)v[i].r.t_send_ns;
			end[i] = (double)v[i].r.t_end_ns;
		}
		best = tt__imp_max_in_flight(send, end, n);
		if (best < 1)
			best = 1;
	}
	free(send);
	free(end);
	return best;
}

static enum tt_code experiment(struct tt__imp *im, const cJSON *x, size_t k, int64_t origin,
			       struct tt_error *err)
{
	char where[64], w[96];
	const cJSON *ex, *reqs, *wb, *q;
	const char *mode;
	double value = 0, psum = 0;
	long pn = 0;
	size_t n, j = 0, cell;
	struct req *v = NULL;
	struct tt_trace_writer *tw = NULL;
	double conc;
	int64_t ws = INT64_MAX, we = INT64_MIN;
	enum tt_code rc;

	snprintf(where, sizeof where, "experiments[%zu]", k);
	if (tt_failed(rc = tt__imp_member(im, x, where, "experiment", cJSON_Object, 1, &ex, err)) ||
	    tt_failed(rc = tt__imp_member(im, x, where, "requests", cJSON_Array, 1, &reqs, err)) ||
	    tt_failed(rc = tt__imp_member(im, x, where, "window_boundaries", cJSON_Array, 0, &wb, err)))
		return rc;
	snprintf(w, sizeof w, "%s.experiment", where);
	if (tt_failed(rc = tt__imp_str(im, ex, w, "mode", 1, &mode, err)) ||
	    tt_failed(rc = tt__imp_num(im, ex, w, "value", 1, &value, NULL, err)))
		return rc;
	n = (size_t)cJSON_GetArraySize(reqs);
	if (!(v = calloc(n ? n : 1, sizeof *v)))
		return tt__imp_nomem(im, err);
	cJSON_ArrayForEach(q, reqs)
	{
		snprintf(w, sizeof w, "%s.requests[%zu]", where, j);
		if (tt_failed(rc = read_request(im, q, w, origin, &v[j], err)))
			goto cleanup;
		if (v[j].r.prompt_tokens >= 0)
			psum += (double)v[j].r.prompt_tokens, pn++;
		if (v[j].r.t_send_ns < ws)
			ws = v[j].r.t_send_ns;
		if (v[j].r.t_end_ns > we)
			we = v[j].r.t_end_ns;
		j++;
	}
	if (strcmp(mode, "concurrency") == 0) {
		snprintf(w, sizeof w, "%s.experiment", where);
		if (tt_failed(rc = tt__imp_range(im, w, "value", value, 1, TT_IMPORT_MAX_CONCURRENCY,
					"requests (concurrency)", err)))
			goto cleanup;
		conc = floor(value);
	} else {
		char note[96];
		if ((conc = (double)max_in_flight(v, n)) < 0) {
			rc = tt__imp_nomem(im, err);
			goto cleanup;
		}
		snprintf(note, sizeof note, "%s %g (open loop); concurrency is the most in flight",
			 mode, value);
		if (tt_failed(rc = tt__imp_note(im, "load", note, err)))
			goto cleanup;
	}
	{
		double ctx = pn ? floor(psum / (double)pn + 0.5) : 0;
		if (tt_failed(rc = tt__imp_cell(im, where, TT_PHASE_DECODE, ctx, conc, &cell, err)) ||
		    tt_failed(rc = tt__imp_add_i64(im, &im->m->contexts, &im->m->n_contexts, (int64_t)ctx, err)) ||
		    tt_failed(rc = tt__imp_add_int(im, &im->m->concurrency, &im->m->n_concurrency, (int)conc,
					  err)))
			goto cleanup;
	}
	/* GenAI-Perf's measurement windows, first to last boundary. */
	if (wb && cJSON_GetArraySize(wb) >= 2) {
		const cJSON *a = cJSON_GetArrayItem(wb, 0), *b = cJSON_GetArrayItem(wb, cJSON_GetArraySize(wb) - 1);
		int64_t wa, wb_ns;
		snprintf(w, sizeof w, "%s.window_boundaries", where);
		if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b) || b->valuedouble <= a->valuedouble) {
			rc = tt__imp_fail_err(im, err, w, "increasing numbers (ns) expected");
			goto cleanup;
		}
		if (tt_failed(rc = tt__imp_ns(im, w, "", a->valuedouble, 1, -TT_IMPORT_MAX_ABS_NS,
				     TT_IMPORT_MAX_ABS_NS, &wa, err)) ||
		    tt_failed(rc = tt__imp_ns(im, w, "", b->valuedouble, 1, -TT_IMPORT_MAX_ABS_NS,
				     TT_IMPORT_MAX_ABS_NS, &wb_ns, err)))
			goto cleanup;
		ws = wa - origin;
		we = wb_ns - origin;
	}
	if (tt_failed(rc = tt__imp_trace(im, cell, &tw, err)))
		goto cleanup;
	if (assign_slots(v, n, (size_t)conc) < 0) {
		rc = tt__imp_nomem(im, err);
		goto cleanup;
	}
	for (j = 0; j < n; j++) {
		snprintf(w, sizeof w, "%s.requests[%zu]", where, j);
		if (tt_failed(rc = tt__imp_write(im, tw, w, &v[j].r, err)))
			goto cleanup;
	}
	rc = tt_trace_writer_close(tw, err);
	tw = NULL;
	if (tt_failed(rc))
		goto cleanup;
	im->m->cells[cell].state = TT_CELL_DONE;
	if (n) {
		im->m->cells[cell].start_ns = im->m->cells[cell].window_start_ns = ws;
		im->m->cells[cell].window_end_ns = im->m->cells[cell].end_ns = we;
	}
	if (im->m->cells[cell].window_end_ns > im->m->cells[cell].window_start_ns &&
	    im->m->n_cells == im->first_cell + 1)
		im->m->duration_s = (double)(we - ws) / 1e9;
cleanup:
	if (tw)
		tt_trace_writer_close(tw, NULL);
	reqs_free(v, n);
	return rc;
}

/* max_tokens and the model of the first request's payload, for
 * settings.max_tokens and model.id. */
static enum tt_code max_tokens_of(struct tt__imp *im, const cJSON *reqs, struct tt_error *err)
{
	const cJSON *q = cJSON_GetArrayItem(reqs, 0), *in, *p;
	cJSON *pl;
	enum tt_code rc;

	if (!(in = cJSON_GetObjectItemCaseSensitive(q, "request_inputs")) ||
	    !cJSON_IsString(p = cJSON_GetObjectItemCaseSensitive(in, "payload")))
		return TT_OK;
	if ((pl = cJSON_Parse(p->valuestring))) {
		const cJSON *mt = cJSON_GetObjectItemCaseSensitive(pl, "max_tokens");
		const cJSON *model = cJSON_GetObjectItemCaseSensitive(pl, "model");
		/* every request names its model: the first one's is the run's */
		if (cJSON_IsString(model) &&
		    (tt_failed(rc = tt__imp_set(im, &im->m->model, model->valuestring, err)) ||
		     tt_failed(rc = tt__imp_set(im, &im->m->served_model, model->valuestring, err)))) {
			cJSON_Delete(pl);
			return rc;
		}
		if (cJSON_IsNumber(mt) && mt->valuedouble > 0 && mt->valuedouble <= TT_IMPORT_MAX_TOKENS)
			im->m->max_tokens = (int64_t)mt->valuedouble;
		cJSON_Delete(pl);
	}
	return TT_OK;
}

enum tt_code tt__import_genai_perf(struct tt__imp *im, const cJSON *root, struct tt_error *err)
{
	const cJSON *xs, *x, *q;
	const char *s;
	double origin = INFINITY;
	size_t k = 0;
	enum tt_code rc;

	if (!root || !cJSON_IsObject(root))
		return tt__imp_fail_err(im, err, "", "a JSON object expected");
	im->src.tool = "GenAI-Perf";
	/* Its summary (profile_export_genai_perf.json): the figures alone. */
	if (!cJSON_GetObjectItemCaseSensitive(root, "experiments") &&
	    cJSON_GetObjectItemCaseSensitive(root, "time_to_first_token")) {
		const cJSON *ic = cJSON_GetObjectItemCaseSensitive(root, "input_config");
		const cJSON *model = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ic, "model"), 0);
		if (tt_failed(rc = tt__imp_str(im, ic, "input_config", "endpoint", 0, &s, err)) ||
		    tt_failed(rc = tt__imp_endpoint(im, s, err)) ||
		    tt_failed(rc = tt__imp_set(im, &im->m->model,
					       cJSON_IsString(model) ? model->valuestring : NULL, err)))
			return rc;
		return tt__imp_summary(im, root, 0, err);
	}
	if (tt_failed(rc = tt__imp_member(im, root, "", "experiments", cJSON_Array, 1, &xs, err)) ||
	    tt_failed(rc = tt__imp_str(im, root, "", "version", 0, &s, err)))
		return rc;
	im->src.tool_version = (char *)s;
	if (tt_failed(rc = tt__imp_str(im, root, "", "endpoint", 0, &s, err)))
		return rc;
	if (tt_failed(rc = tt__imp_endpoint(im, s, err)))
		return rc;
	if (tt_failed(rc = tt__imp_str(im, root, "", "service_kind", 0, &s, err)) ||
	    tt_failed(rc = tt__imp_note(im, "service_kind", s, err)))
		return rc;
	/* The run's origin: the earliest request or window boundary (Unix ns):
	 * trace times of a manifest are not negative. */
	cJSON_ArrayForEach(x, xs)
	{
		const cJSON *b0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(x,
										       "window_boundaries"), 0);
		if (cJSON_IsNumber(b0) && b0->valuedouble < origin)
			origin = b0->valuedouble;
		cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(x, "requests"))
		{
			const cJSON *t = cJSON_GetObjectItemCaseSensitive(q, "timestamp");
			if (cJSON_IsNumber(t) && t->valuedouble < origin)
				origin = t->valuedouble;
		}
	}
	if (!isfinite(origin) || origin < 0 || origin > TT_IMPORT_MAX_ABS_NS)
		origin = 0;
	if (im->m->origin_unix_ns == 0)
		im->m->origin_unix_ns = (int64_t)origin;
	cJSON_ArrayForEach(x, xs)
	{
		if (!cJSON_IsObject(x)) {
			char where[48];
			snprintf(where, sizeof where, "experiments[%zu]", k);
			return tt__imp_fail_err(im, err, where, "an object expected");
		}
		if (k == 0 &&
		    tt_failed(rc = max_tokens_of(im, cJSON_GetObjectItemCaseSensitive(x, "requests"), err)))
			return rc;
		if (tt_failed(rc = experiment(im, x, k++, im->m->origin_unix_ns, err)))
			return rc;
	}
	if (k == 0)
		return tt__imp_fail_err(im, err, "experiments", "no experiment");
	return TT_OK;
}
