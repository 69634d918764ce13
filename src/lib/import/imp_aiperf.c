/* AIPerf profile_export.jsonl (per-request records), older schema
 * (metadata.timestamp_ns) and newer (metadata.request_start_ns,
 * request_end_ns, was_cancelled), and profile_export_raw.jsonl (every
 * response with its perf_ns time and raw text): formats/import-aiperf.md.
 * Each record becomes a trace record: from a records export, first chunk at
 * start + ttft, then one chunk per inter_chunk_latency gap; from a raw
 * export, one chunk per response, its tokens counted as our capture counts
 * them. */
#include "import/imp.h"
#include "import/imp_sse.h"

#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct rec {
	struct tt_request r;
	struct tt_chunk *chunks;
	/* The error text lives here; r.error is pointed at it only when the
	 * record is written, because the record array moves as it grows. */
	bool failed;
	char error[256];
	size_t line;  /* of the file, for messages */
};

static void recs_free(struct rec *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].chunks);
	free(v);
}

/* metrics.NAME.value as a number; absent: *found 0. */
static enum tt_code metric(struct tt__imp *im, const cJSON *metrics, const char *where,
			   const char *name, double *out, int *found, struct tt_error *err)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(metrics, name);
	char w[128];

	*found = 0;
	if (!m || cJSON_IsNull(m))
		return TT_OK;
	snprintf(w, sizeof w, "%s: metrics.%s", where, name);
	if (!cJSON_IsObject(m))
		return tt__imp_fail_err(im, err, w, "an object {value, unit} expected");
	return tt__imp_num(im, m, w, "value", 1, out, found, err);
}

static void outcome(const cJSON *o, const cJSON *md, struct rec *out);

static enum tt_code record(struct tt__imp *im, const cJSON *o, const char *where, struct rec *out,
			   struct tt_error *err)
{
	const cJSON *md, *metrics, *e, *icl = NULL;
	double start, end = NAN, ttft = NAN, lat = NAN, osl = NAN, isl = NAN, v;
	int found, f_start;
	size_t n = 0, j;
	int64_t t0, off;
	enum tt_code rc;
	char w[128];

	if (!cJSON_IsObject(o))
		return tt__imp_fail_err(im, err, where, "an object expected");
	if (tt_failed(rc = tt__imp_member(im, o, where, "metadata", cJSON_Object, 1, &md, err)) ||
	    tt_failed(rc = tt__imp_member(im, o, where, "metrics", cJSON_Object, 0, &metrics, err)))
		return rc;
	snprintf(w, sizeof w, "%s: metadata", where);
	/* Newer: request_start_ns / request_end_ns; older: timestamp_ns. */
	if (tt_failed(rc = tt__imp_num(im, md, w, "request_start_ns", 0, &start, &f_start, err)))
		return rc;
	if (!f_start && tt_failed(rc = tt__imp_num(im, md, w, "timestamp_ns", 1, &start, NULL, err)))
		return rc;
	if (tt_failed(rc = tt__imp_ns(im, w, f_start ? "request_start_ns" : "timestamp_ns", start, 1,
			     -TT_IMPORT_MAX_ABS_NS, TT_IMPORT_MAX_ABS_NS, &t0, err)))
		return rc;
	if (tt_failed(rc = tt__imp_num(im, md, w, "request_end_ns", 0, &v, &found, err)))
		return rc;
	if (found)
		end = v;
	/* "ttft" in older exports, "time_to_first_token" in newer ones. */
	if (tt_failed(rc = metric(im, metrics, where, "ttft", &v, &found, err)))
		return rc;
	if (!found && tt_failed(rc = metric(im, metrics, where, "time_to_first_token", &v, &found, err)))
		return rc;
	if (found)
		ttft = v;
	if (tt_failed(rc = metric(im, metrics, where, "request_latency", &v, &found, err)))
		return rc;
	if (found)
		lat = v;
	if (tt_failed(rc = metric(im, metrics, where, "output_sequence_length", &v, &found, err)))
		return rc;
	if (found)
		osl = v;
	if (!found) {
		double a = 0, b = 0;
		int fa, fb;
		if (tt_failed(rc = metric(im, metrics, where, "output_token_count", &a, &fa, err)) ||
		    tt_failed(rc = metric(im, metrics, where, "reasoning_token_count", &b, &fb, err)))
			return rc;
		if (fa || fb)
			osl = a + b;
	}
	if (tt_failed(rc = metric(im, metrics, where, "input_sequence_length", &v, &found, err)))
		return rc;
	if (found)
		isl = v;
	if (isfinite(isl) && tt_failed(rc = tt__imp_range(im, where, "metrics.input_sequence_length.value",
						 isl, 0, TT_IMPORT_MAX_TOKENS, "tokens", err)))
		return rc;
	e = metrics ? cJSON_GetObjectItemCaseSensitive(metrics, "inter_chunk_latency") : NULL;
	if (e && !cJSON_IsNull(e)) {
		snprintf(w, sizeof w, "%s: metrics.inter_chunk_latency", where);
		icl = cJSON_GetObjectItemCaseSensitive(e, "value");
		if (!cJSON_IsArray(icl))
			return tt__imp_fail_err(im, err, w, "{\"value\": [ms, ...]} expected");
	}
	memset(out, 0, sizeof *out);
	out->r.role = TT_ROLE_MEASURED;
	out->r.t_sched_ns = out->r.t_send_ns = t0;
	out->r.prompt_tokens = isfinite(isl) ? (int64_t)isl : -1;
	out->r.cached_tokens = -1;
	out->r.http_status = 200;
	if (isfinite(ttft)) {
		n = 1 + (icl ? (size_t)cJSON_GetArraySize(icl) : 0);
		if (n > TT_IMPORT_MAX_CHUNKS || (isfinite(osl) && (osl < 0 || osl > 1e9)))
			return tt__imp_fail_err(im, err, where, "%zu chunks or %g tokens: more than "
						"the 2^20 chunks (or 1e9 tokens) a request of a run "
						"holds", n, osl);
		if (!(out->chunks = calloc(n, sizeof *out->chunks)))
			return tt__imp_nomem(im, err);
		/* Offsets from the start, each sum checked (no overflow), then
		 * the start added: within +-4e18 + 2^60, still an int64. */
		if (tt_failed(rc = tt__imp_ns(im, where, "metrics.time_to_first_token.value", ttft, 1e6,
				     -TT_IMPORT_MAX_SPAN_NS, TT_IMPORT_MAX_SPAN_NS, &off, err)))
			return rc;
		out->chunks[0].t_ns = off;
		j = 1;
		cJSON_ArrayForEach(e, icl)
		{
			int64_t gap;
			snprintf(w, sizeof w, "%s: metrics.inter_chunk_latency.value[%zu]", where, j - 1);
			if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < 0)
				return tt__imp_fail_err(im, err, w, "a number of ms >= 0 expected");
			if (tt_failed(rc = tt__imp_ns(im, w, "", e->valuedouble, 1e6, 0, TT_IMPORT_MAX_SPAN_NS,
					     &gap, err)) ||
			    tt_failed(rc = tt__imp_add_ns(im, w, "", out->chunks[j - 1].t_ns, gap,
						 &out->chunks[j].t_ns, err)))
				return rc;
			j++;
		}
		for (j = 0; j < n; j++) {
			out->chunks[j].t_ns += t0;
			out->chunks[j].tokens = tt__imp_chunk_tokens(j, n, isfinite(osl) ? (long)osl : (long)n);
		}
	}
	out->r.n_chunks = n;
	out->r.chunks = out->chunks;
	if (isfinite(end)) {
		snprintf(w, sizeof w, "%s: metadata", where);
		if (tt_failed(rc = tt__imp_ns(im, w, "request_end_ns", end, 1, -TT_IMPORT_MAX_ABS_NS,
				     TT_IMPORT_MAX_ABS_NS, &out->r.t_end_ns, err)))
			return rc;
	} else if (isfinite(lat)) {
		if (tt_failed(rc = tt__imp_ns(im, where, "metrics.request_latency.value", lat, 1e6,
				     -TT_IMPORT_MAX_SPAN_NS, TT_IMPORT_MAX_SPAN_NS, &off, err)))
			return rc;
		out->r.t_end_ns = t0 + off;
	} else {
		out->r.t_end_ns = n ? out->chunks[n - 1].t_ns : t0;
	}
	/* The end is never before the last chunk (rounding of the gaps). */
	if (n && out->r.t_end_ns < out->chunks[n - 1].t_ns)
		out->r.t_end_ns = out->chunks[n - 1].t_ns;
	out->r.finish = TT_FINISH_STOP;
	outcome(o, md, out);
	return TT_OK;
}

/* An HTTP status from outside: 0 when not one (no cast of 1e300). */
static int http_status(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 999 ?
		       (int)v->valuedouble : 0;
}

/* The failure or cancellation of a record (both exports). */
static void outcome(const cJSON *o, const cJSON *md, struct rec *out)
{
	const cJSON *errobj = cJSON_GetObjectItemCaseSensitive(o, "error");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(errobj, "type");

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(md, "was_cancelled")) ||
	    (cJSON_IsString(type) && strstr(type->valuestring, "Cancel"))) {
		/* Cancelled on purpose (--request-cancellation-rate): not a failure. */
		out->r.finish = TT_FINISH_ABORTED;
		snprintf(out->error, sizeof out->error, "cancelled by AIPerf");
		out->failed = true;
	} else if (cJSON_IsObject(errobj)) {
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(errobj, "message"),
			    *code = cJSON_GetObjectItemCaseSensitive(errobj, "code");
		out->r.finish = TT_FINISH_ERROR;
		out->r.fail = cJSON_IsNumber(code) && code->valuedouble >= 400 ? TT_FAIL_HTTP :
										TT_FAIL_OTHER;
		out->r.http_status = http_status(code);
		snprintf(out->error, sizeof out->error, "%s",
			 cJSON_IsString(msg) ? msg->valuestring : "error");
		out->failed = true;
	}
}

/* A raw export record: metadata, start_perf_ns, status, responses[]. */
static enum tt_code raw_record(struct tt__imp *im, const cJSON *o, const char *where,
			       struct rec *out, struct tt_error *err)
{
	const cJSON *md, *resp, *e, *st;
	double start, perf0, v;
	int found;
	size_t n, j = 0;
	int64_t t0, off;
	struct tt__imp_stream s;
	enum tt_code rc;
	char w[160];

	if (tt_failed(rc = tt__imp_member(im, o, where, "metadata", cJSON_Object, 1, &md, err)) ||
	    tt_failed(rc = tt__imp_num(im, o, where, "start_perf_ns", 1, &perf0, NULL, err)) ||
	    tt_failed(rc = tt__imp_member(im, o, where, "responses", cJSON_Array, 0, &resp, err)))
		return rc;
	snprintf(w, sizeof w, "%s: metadata", where);
	if (tt_failed(rc = tt__imp_num(im, md, w, "request_start_ns", 0, &start, &found, err)))
		return rc;
	if (!found && tt_failed(rc = tt__imp_num(im, md, w, "timestamp_ns", 1, &start, NULL, err)))
		return rc;
	if (tt_failed(rc = tt__imp_ns(im, w, found ? "request_start_ns" : "timestamp_ns", start, 1,
			     -TT_IMPORT_MAX_ABS_NS, TT_IMPORT_MAX_ABS_NS, &t0, err)))
		return rc;
	n = resp ? (size_t)cJSON_GetArraySize(resp) : 0;
	if (n > TT_IMPORT_MAX_CHUNKS)
		return tt__imp_fail_err(im, err, where, "%zu responses: more than the 2^20 chunks a "
					"request of a run holds", n);
	memset(out, 0, sizeof *out);
	if (n && !(out->chunks = calloc(n, sizeof *out->chunks)))
		return tt__imp_nomem(im, err);
	tt__imp_stream_init(&s);
	cJSON_ArrayForEach(e, resp)
	{
		const cJSON *text = cJSON_GetObjectItemCaseSensitive(e, "text");
		const cJSON *packets = cJSON_GetObjectItemCaseSensitive(e, "packets"), *pk;
		int64_t tokens = 0;

		snprintf(w, sizeof w, "%s: responses[%zu]", where, j);
		if (tt_failed(rc = tt__imp_num(im, e, w, "perf_ns", 1, &v, NULL, err)))
			return rc;
		/* From start_perf_ns: an offset, then the start added. */
		if (tt_failed(rc = tt__imp_ns(im, w, "perf_ns", v - perf0, 1, -TT_IMPORT_MAX_SPAN_NS,
				     TT_IMPORT_MAX_SPAN_NS, &off, err)))
			return rc;
		out->chunks[j].t_ns = t0 + off;
		if (j && out->chunks[j].t_ns < out->chunks[j - 1].t_ns)
			return tt__imp_fail_err(im, err, w, "perf_ns earlier than the response before");
		if (cJSON_IsString(text)) {
			const char *t = text->valuestring;
			size_t len = strlen(t);
			/* SSE text, or a whole body of a request that did not stream. */
			tokens = strstr(t, "data:") ? tt__imp_stream_piece(&s, t, len) :
						      tt__imp_stream_event(&s, t, len);
		} else if (cJSON_IsArray(packets)) {
			cJSON_ArrayForEach(pk, packets)
			{
				const cJSON *name = cJSON_GetObjectItemCaseSensitive(pk, "name");
				const cJSON *val = cJSON_GetObjectItemCaseSensitive(pk, "value");
				if (cJSON_IsString(name) && strcmp(name->valuestring, "data") == 0 &&
				    cJSON_IsString(val))
					tokens += tt__imp_stream_event(&s, val->valuestring,
								       strlen(val->valuestring));
			}
		} else {
			return tt__imp_fail_err(im, err, w, "a text or packets expected");
		}
		out->chunks[j].tokens = (uint32_t)(tokens > 0 ? tokens : 0);
		j++;
	}
	out->r.role = TT_ROLE_MEASURED;
	out->r.t_sched_ns = out->r.t_send_ns = t0;
	out->r.n_chunks = n;
	out->r.chunks = out->chunks;
	out->r.prompt_tokens = s.st.prompt_tokens;
	out->r.cached_tokens = s.st.cached_tokens;
	st = cJSON_GetObjectItemCaseSensitive(o, "status");
	out->r.http_status = http_status(st);
	snprintf(w, sizeof w, "%s: metadata", where);
	if (tt_failed(rc = tt__imp_num(im, md, w, "request_end_ns", 0, &v, &found, err)))
		return rc;
	if (found && tt_failed(rc = tt__imp_ns(im, w, "request_end_ns", v, 1, -TT_IMPORT_MAX_ABS_NS,
				      TT_IMPORT_MAX_ABS_NS, &out->r.t_end_ns, err)))
		return rc;
	if (!found)
		out->r.t_end_ns = n ? out->chunks[n - 1].t_ns : out->r.t_send_ns;
	if (n && out->r.t_end_ns < out->chunks[n - 1].t_ns)
		out->r.t_end_ns = out->chunks[n - 1].t_ns;
	out->r.finish = s.finish != TT_FINISH_UNKNOWN ? s.finish : TT_FINISH_STOP;
	if (s.error) {
		out->r.finish = TT_FINISH_ERROR;
		out->r.fail = TT_FAIL_ERROR_EVENT;
		snprintf(out->error, sizeof out->error, "%s", s.error_text);
		out->failed = true;
	} else if (s.malformed) {
		out->r.finish = TT_FINISH_ERROR;
		out->r.fail = TT_FAIL_MALFORMED;
		snprintf(out->error, sizeof out->error, "%ld malformed event%s in the responses",
			 s.malformed, s.malformed == 1 ? "" : "s");
		out->failed = true;
	} else if (out->r.http_status >= 400) {
		out->r.finish = TT_FINISH_ERROR;
		out->r.fail = TT_FAIL_HTTP;
	}
	outcome(o, md, out);
	return TT_OK;
}

/* Facts from AIPerf's own summary beside the records (FILE.jsonl ->
 * FILE_aiperf.json), when it is there: the concurrency asked for and the
 * model.  Nothing else is taken from it. */
static int summary_concurrency(struct tt__imp *im, struct tt_error *err)
{
	char path[4096];
	size_t n = strlen(im->file);
	FILE *f;
	struct stat st;
	char *text = NULL;
	long len;
	cJSON *root;
	const cJSON *c;
	int conc = 0;

	if (n < 6 || strcmp(im->file + n - 6, ".jsonl") != 0 || n + 16 > sizeof path)
		return 0;
	snprintf(path, sizeof path, "%.*s_aiperf.json", (int)(n - 6), im->file);
	/* The summary beside the records: a regular file only (never wait on
	 * a FIFO or read a device). */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(f = fopen(path, "rb")))
		return 0;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && len < (64 << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)len + 1)) &&
	    fread(text, 1, (size_t)len, f) == (size_t)len) {
		if ((root = cJSON_ParseWithLength(text, (size_t)len))) {
			const cJSON *ic = cJSON_GetObjectItemCaseSensitive(root, "input_config");
			const cJSON *lg = cJSON_GetObjectItemCaseSensitive(ic, "loadgen");
			const cJSON *ep = cJSON_GetObjectItemCaseSensitive(ic, "endpoint");
			const cJSON *models = cJSON_GetObjectItemCaseSensitive(ep, "model_names");
			c = cJSON_GetObjectItemCaseSensitive(lg, "concurrency");
			if (cJSON_IsNumber(c) && c->valuedouble >= 1 && c->valuedouble <= 1e6)
				conc = (int)c->valuedouble;
			if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ep, "type")))
				tt__imp_endpoint(im, cJSON_GetObjectItemCaseSensitive(ep, "type")->valuestring,
						 err);
			if (cJSON_IsString(cJSON_GetArrayItem(models, 0)))
				tt__imp_set(im, &im->m->model, cJSON_GetArrayItem(models, 0)->valuestring,
					    err);
			{
				const char *base = strrchr(path, '/');
				tt__imp_note(im, "aiperf_summary", base ? base + 1 : path, err);
			}
			cJSON_Delete(root);
		}
	}
	free(text);
	fclose(f);
	return conc;
}

/* Is there text on a line after the first line that has any? */
static int several_lines(const char *p, size_t len)
{
	const char *end = p + len, *nl;

	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	if (!(nl = memchr(p, '\n', (size_t)(end - p))))
		return 0;
	for (p = nl; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			return 1;
	return 0;
}

enum tt_code tt__import_aiperf(struct tt__imp *im, const cJSON *root, struct tt_error *err)
{
	const char *p = im->data, *end = im->data + im->len;
	struct rec *v = NULL;
	size_t n = 0, cap = 0, line = 0, cell;
	int64_t origin = INT64_MAX, ws = INT64_MAX, we = INT64_MIN;
	double psum = 0;
	long pn = 0, conc;
	struct tt_trace_writer *tw = NULL;
	enum tt_code rc = TT_OK;

	im->src.tool = "AIPerf";
	if (root && cJSON_IsObject(root) && cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "records"))) {
		/* Its summary (profile_export_aiperf.json): the figures alone. */
		const cJSON *ep = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(root, "input_config"), "endpoint");
		const cJSON *model = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ep, "model_names"), 0);
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(ep, "type");
		if (tt_failed(rc = tt__imp_endpoint(im, cJSON_IsString(type) ? type->valuestring : NULL,
						    err)) ||
		    tt_failed(rc = tt__imp_set(im, &im->m->model,
					       cJSON_IsString(model) ? model->valuestring : NULL, err)))
			return rc;
		return tt__imp_summary(im, root, 1, err);
	}
	if (root && several_lines(im->data, im->len))
		return tt__imp_fail_err(im, err, "", "one JSON value over several lines "
					"(pretty-printed): AIPerf writes its records one JSON "
					"object per line (profile_export.jsonl), and its summary "
					"(profile_export_aiperf.json) has `records`; this is "
					"neither");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end;
		char where[32];
		cJSON *o;

		line++;
		snprintf(where, sizeof where, "line %zu", line);
		while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p == e) {
			p = nl ? nl + 1 : end;
			continue;
		}
		if (tt_failed(rc = tt__imp_parse(im, p, (size_t)(e - p), where, &o, err)))
			goto cleanup;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct rec *nv = realloc(v, nc * sizeof *nv);
			if (!nv) {
				cJSON_Delete(o);
				rc = tt__imp_nomem(im, err);
				goto cleanup;
			}
			v = nv;
			cap = nc;
		}
		memset(&v[n], 0, sizeof v[n]);
		rc = cJSON_GetObjectItemCaseSensitive(o, "start_perf_ns") ?
			     raw_record(im, o, where, &v[n], err) : record(im, o, where, &v[n], err);
		cJSON_Delete(o);
		if (tt_failed(rc)) {
			free(v[n].chunks); /* the record that failed is not counted in n */
			goto cleanup;
		}
		if (v[n].r.t_send_ns < origin)
			origin = v[n].r.t_send_ns;
		v[n].line = line;
		n++;
		p = nl ? nl + 1 : end;
	}
	if (n == 0) {
		rc = tt__imp_fail_err(im, err, "", "no record");
		goto cleanup;
	}
	/* Trace times from the earliest request (Unix ns, the run's origin). */
	if (im->m->origin_unix_ns == 0)
		im->m->origin_unix_ns = origin;
	origin = im->m->origin_unix_ns;
	for (size_t i = 0; i < n; i++) {
		struct tt_request *r = &v[i].r;
		r->t_sched_ns -= origin;
		r->t_send_ns -= origin;
		r->t_end_ns -= origin;
		for (size_t j = 0; j < r->n_chunks; j++)
			v[i].chunks[j].t_ns -= origin;
		if (r->prompt_tokens >= 0)
			psum += (double)r->prompt_tokens, pn++;
		if (r->t_send_ns < ws)
			ws = r->t_send_ns;
		if (r->t_end_ns > we)
			we = r->t_end_ns;
	}
	conc = summary_concurrency(im, err);
	if (conc < 1) {
		/* The records do not say: the most requests in flight at once. */
		double *send = malloc(n * sizeof *send), *stop = malloc(n * sizeof *stop);
		if (send && stop) {
			for (size_t i = 0; i < n; i++) {
				send[i] = (double)v[i].r.t_send_ns;
				stop[i] = (double)v[i].r.t_end_ns;
			}
			conc = tt__imp_max_in_flight(send, stop, n);
		}
		free(send);
		free(stop);
		if (!send || !stop) {
			rc = tt__imp_nomem(im, err);
			goto cleanup;
		}
		if (conc < 1)
			conc = 1;
		if (tt_failed(rc = tt__imp_note(im, "load", "concurrency not recorded: the most requests in "
				       "flight at once", err)))
			goto cleanup;
	}
	{
		double ctx = pn ? floor(psum / (double)pn + 0.5) : 0;
		if (tt_failed(rc = tt__imp_cell(im, "", TT_PHASE_DECODE, ctx, (double)conc, &cell, err)) ||
		    tt_failed(rc = tt__imp_add_i64(im, &im->m->contexts, &im->m->n_contexts, (int64_t)ctx, err)) ||
		    tt_failed(rc = tt__imp_add_int(im, &im->m->concurrency, &im->m->n_concurrency, (int)conc, err)))
			goto cleanup;
	}
	if (tt_failed(rc = tt__imp_trace(im, cell, &tw, err)))
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		v[i].r.slot = (uint32_t)(i % (size_t)conc);
		v[i].r.seq = (uint32_t)(i / (size_t)conc);
		char where[32];
		v[i].r.error = v[i].failed ? v[i].error : NULL;
		snprintf(where, sizeof where, "line %zu", v[i].line);
		if (tt_failed(rc = tt__imp_write(im, tw, where, &v[i].r, err)))
			goto cleanup;
	}
	rc = tt_trace_writer_close(tw, err);
	tw = NULL;
	if (tt_failed(rc))
		goto cleanup;
	/* The window: AIPerf's benchmark duration, first request to last end
	 * (one trace time unit wider: stored times round up to it, and the
	 * last chunk must stay inside). */
	im->m->cells[cell].state = TT_CELL_DONE;
	im->m->cells[cell].start_ns = im->m->cells[cell].window_start_ns = ws;
	im->m->cells[cell].window_end_ns = im->m->cells[cell].end_ns = we + 1000;
	if (im->m->n_cells == im->first_cell + 1)
		im->m->duration_s = (double)(we + 1000 - ws) / 1e9;
cleanup:
	if (tw)
		tt_trace_writer_close(tw, NULL);
	recs_free(v, n);
	return rc;
}
