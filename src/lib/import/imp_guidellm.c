/* GuideLLM benchmarks.json (0.5: metadata.version 1; older 0.3/0.4 request
 * stats with top-level times): formats/import-guidellm.md.  Each benchmark
 * of a sweep is a cell; each request a trace record with what GuideLLM
 * kept of it: send, first token, last token and end times, and the output
 * token count. */
#include "import/imp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN_SCHEMA 1

/* A time in Unix seconds: info.timings.NAME, else the request's OLD member. */
static double when(const cJSON *q, const char *name, const char *old)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(q, "info"),
						 "timings"), name);
	if (!cJSON_IsNumber(t) && old)
		t = cJSON_GetObjectItemCaseSensitive(q, old);
	return cJSON_IsNumber(t) && isfinite(t->valuedouble) ? t->valuedouble : NAN;
}

/* A time (Unix s) from the origin, in ns: refused outside +-4e9 s (the
 * origin is within it too, so the difference is an int64). */
static enum tt_code ns(struct tt__imp *im, const char *where, const char *member,
		       double unix_s, int64_t origin, int64_t *out, struct tt_error *err)
{
	int64_t t;
	enum tt_code rc = tt__imp_ns(im, where, member, unix_s, 1e9, -TT_IMPORT_MAX_ABS_NS,
				     TT_IMPORT_MAX_ABS_NS, &t, err);

	if (tt_failed(rc))
		return rc;
	*out = t - origin;
	return TT_OK;
}

struct sink {
	struct tt_trace_writer *tw;
	int64_t origin;
	int64_t last_end;    /* latest end of a measured request, ns */
	int64_t all_end;     /* latest end of any request, ns */
	int64_t first_send;  /* earliest send of any request, ns */
	int window;          /* the benchmark says its measured span: */
	double t0, t1;       /* start_time, end_time (Unix s) */
	size_t outside;      /* requests outside it (warm-up, cool-down) */
	int conc;
	size_t i, multi;
	double psum;
	long pn;
};

/* Is a request one of GuideLLM's measured ones?  GuideLLM's statistics
 * (`metrics`) cover the requests that end at or after the benchmark's
 * start_time and start at or before its end_time (its
 * GenerativeRequestsAccumulator.get_within_range): those of the warm-up
 * that end before it and those of the cool-down that start after it are
 * listed but not measured.  start: request_start; end: request_end, else
 * the last time known of the request. */
static int measured(const struct sink *s, double start, double end)
{
	if (!s->window)
		return 1;
	return end >= s->t0 && start <= s->t1;
}

static enum tt_code request(struct tt__imp *im, const cJSON *q, const char *where,
			    enum tt_finish finish, struct sink *s, struct tt_error *err)
{
	double start = when(q, "request_start", "start_time"), end = when(q, "request_end", "end_time");
	double first = when(q, "first_token_iteration", "first_token_time");
	double last = when(q, "last_token_iteration", "last_token_time");
	double out = NAN, in = NAN, v;
	int found, mine;
	struct tt_chunk ch[2];
	struct tt_request r;
	char error[256] = "";
	enum tt_code rc;
	const cJSON *info = cJSON_GetObjectItemCaseSensitive(q, "info"), *e;

	if (!cJSON_IsObject(q))
		return tt__imp_fail_err(im, err, where, "an object expected");
	if (!isfinite(start)) {
		if (isfinite(v = when(q, "request_start_time", "request_start_time")))
			start = v;
		else
			return tt__imp_fail_err(im, err, where, "no start time (info.timings."
						"request_start or start_time)");
	}
	if (tt_failed(rc = tt__imp_num(im, q, where, "output_tokens", 0, &v, &found, err)))
		return rc;
	if (found)
		out = v;
	if (tt_failed(rc = tt__imp_num(im, q, where, "prompt_tokens", 0, &v, &found, err)))
		return rc;
	if (found)
		in = v;
	if (!isfinite(end) && isfinite(v = when(q, "request_end_time", "request_end_time")))
		end = v;
	mine = measured(s, start, isfinite(end) ? end : isfinite(last) ? last : isfinite(first) ? first
									  : start);
	if (mine && isfinite(in))
		s->psum += in, s->pn++;
	if (isfinite(out) && tt_failed(rc = tt__imp_range(im, where, "output_tokens", out, 0, 1e9, "tokens",
						 err)))
		return rc;
	if (isfinite(in) && tt_failed(rc = tt__imp_range(im, where, "prompt_tokens", in, 0,
						TT_IMPORT_MAX_TOKENS, "tokens", err)))
		return rc;
	memset(&r, 0, sizeof r);
	r.slot = (uint32_t)(s->i % (size_t)s->conc);
	r.seq = (uint32_t)(s->i / (size_t)s->conc);
	/* Outside GuideLLM's measured span: kept as a warm-up request, which
	 * no figure counts (formats/run-v1.md 3.4, role 1). */
	r.role = mine ? TT_ROLE_MEASURED : TT_ROLE_WARMUP;
	s->outside += !mine;
	if (tt_failed(rc = ns(im, where, "request_start", start, s->origin, &r.t_send_ns, err)))
		return rc;
	r.t_sched_ns = r.t_send_ns;
	r.prompt_tokens = isfinite(in) ? (int64_t)in : -1;
	r.cached_tokens = -1;
	r.http_status = finish == TT_FINISH_ERROR ? 0 : 200;
	r.finish = finish;
	/* The first token alone at its time; the rest arrived by the last. */
	if (isfinite(first) && isfinite(out) && out >= 1) {
		if (tt_failed(rc = ns(im, where, "first_token_iteration", first, s->origin, &ch[0].t_ns, err)))
			return rc;
		ch[0].tokens = 1;
		r.n_chunks = 1;
		if (out > 1 && isfinite(last) && last >= first) {
			if (tt_failed(rc = ns(im, where, "last_token_iteration", last, s->origin, &ch[1].t_ns,
				     err)))
				return rc;
			ch[1].tokens = (uint32_t)(out - 1);
			r.n_chunks = 2;
			s->multi += out > 2;
		}
	}
	r.chunks = ch;
	if (isfinite(end)) {
		if (tt_failed(rc = ns(im, where, "request_end", end, s->origin, &r.t_end_ns, err)))
			return rc;
	} else {
		r.t_end_ns = r.n_chunks ? ch[r.n_chunks - 1].t_ns : r.t_send_ns;
	}
	if (r.n_chunks && r.t_end_ns < ch[r.n_chunks - 1].t_ns)
		r.t_end_ns = ch[r.n_chunks - 1].t_ns;
	if (finish == TT_FINISH_ERROR) {
		e = cJSON_GetObjectItemCaseSensitive(info, "error");
		if (!cJSON_IsString(e))
			e = cJSON_GetObjectItemCaseSensitive(q, "error");
		snprintf(error, sizeof error, "%s", cJSON_IsString(e) ? e->valuestring : "errored");
		r.fail = TT_FAIL_OTHER;
		r.error = error;
	}
	if (mine && r.t_end_ns > s->last_end)
		s->last_end = r.t_end_ns;
	if (r.t_end_ns > s->all_end)
		s->all_end = r.t_end_ns;
	if (r.t_send_ns < s->first_send)
		s->first_send = r.t_send_ns;
	s->i++;
	return tt__imp_write(im, s->tw, where, &r, err);
}

static const char *const groups[] = {"successful", "incomplete", "errored"};
static const enum tt_finish group_finish[] = {TT_FINISH_STOP, TT_FINISH_CUT, TT_FINISH_ERROR};

/* The cell's concurrency from the benchmark's strategy; 0 when it has none
 * (a rate), and *rate then says the rate. */
static int strategy(const cJSON *b, char *load, size_t n)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(b, "config"), "strategy");
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(st, "type_");
	const char *t = cJSON_IsString(type) ? type->valuestring : "unknown";
	static const char *const keys[] = {"streams", "max_concurrency"};

	if (!st)
		st = cJSON_GetObjectItemCaseSensitive(b, "args"); /* older: args.strategy */
	if (strcmp(t, "synchronous") == 0)
		return 1;
	if (strcmp(t, "concurrent") == 0)
		for (size_t k = 0; k < 2; k++) {
			const cJSON *c = cJSON_GetObjectItemCaseSensitive(st, keys[k]);
			if (cJSON_IsNumber(c) && c->valuedouble >= 1 && c->valuedouble <= 1e6)
				return (int)c->valuedouble;
		}
	{
		const cJSON *rate = cJSON_GetObjectItemCaseSensitive(st, "rate");
		if (cJSON_IsNumber(rate))
			snprintf(load, n, "%s at %g requests/s (open loop); concurrency is the most "
				 "in flight", t, rate->valuedouble);
		else
			snprintf(load, n, "%s (no concurrency); concurrency is the most in flight", t);
	}
	return 0;
}

/* Most requests in flight at once, from the groups' start and end times;
 * -1 out of memory. */
static long in_flight(const cJSON *reqs, size_t n, const struct sink *s)
{
	double *send = malloc((n ? n : 1) * sizeof *send), *end = malloc((n ? n : 1) * sizeof *end);
	size_t k = 0;
	long best = -1;

	if (send && end) {
		for (size_t g = 0; g < 3; g++) {
			const cJSON *a;
			cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(reqs, groups[g]))
			{
				if (k == n)
					break;
				send[k] = when(a, "request_start", "start_time");
				end[k] = when(a, "request_end", "end_time");
				if (isfinite(send[k]) && isfinite(end[k]) &&
				    !measured(s, send[k], end[k]))
					continue;
				k++;
			}
		}
		best = tt__imp_max_in_flight(send, end, k);
		if (best < 1)
			best = 1;
	}
	free(send);
	free(end);
	return best;
}

static enum tt_code benchmark(struct tt__imp *im, const cJSON *b, size_t k, struct tt_error *err)
{
	char where[48], w[96], load[160] = "";
	const cJSON *reqs, *q;
	double t0, t1;
	int found0, found1;
	long conc;
	size_t cell, n = 0;
	struct sink s;
	enum tt_code rc;

	snprintf(where, sizeof where, "benchmarks[%zu]", k);
	if (!cJSON_IsObject(b))
		return tt__imp_fail_err(im, err, where, "an object expected");
	if (tt_failed(rc = tt__imp_member(im, b, where, "requests", cJSON_Object, 1, &reqs, err)) ||
	    tt_failed(rc = tt__imp_num(im, b, where, "start_time", 0, &t0, &found0, err)) ||
	    tt_failed(rc = tt__imp_num(im, b, where, "end_time", 0, &t1, &found1, err)))
		return rc;
	for (size_t g = 0; g < 3; g++) {
		const cJSON *a;
		snprintf(w, sizeof w, "%s.requests", where);
		if (tt_failed(rc = tt__imp_member(im, reqs, w, groups[g], cJSON_Array, 0, &a, err)))
			return rc;
		n += a ? (size_t)cJSON_GetArraySize(a) : 0;
	}
	memset(&s, 0, sizeof s);
	s.last_end = s.all_end = INT64_MIN;
	s.first_send = INT64_MAX;
	s.window = found0 && found1 && t1 > t0;
	s.t0 = t0;
	s.t1 = t1;
	conc = strategy(b, load, sizeof load);
	if (!conc) {
		if ((conc = in_flight(reqs, n, &s)) < 0)
			return tt__imp_nomem(im, err);
		if (tt_failed(rc = tt__imp_note(im, "load", load, err)))
			return rc;
	}
	s.conc = (int)conc;
	s.origin = im->m->origin_unix_ns;
	/* The context: prompt tokens of the requests, known after reading
	 * them; a provisional cell is renamed below. */
	if (tt_failed(rc = tt__imp_cell(im, where, TT_PHASE_DECODE, (double)k, (double)conc, &cell, err)) ||
	    tt_failed(rc = tt__imp_trace(im, cell, &s.tw, err)))
		return rc;
	for (size_t g = 0; g < 3 && !tt_failed(rc); g++) {
		size_t j = 0;
		cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(reqs, groups[g]))
		{
			snprintf(w, sizeof w, "%s.requests.%s[%zu]", where, groups[g], j++);
			if (tt_failed(rc = request(im, q, w, group_finish[g], &s, err)))
				break;
		}
	}
	if (!tt_failed(rc) && s.i == 0) {
		/* a cell with an empty trace reads as damaged: refuse it here */
		snprintf(w, sizeof w, "%s.requests", where);
		rc = tt__imp_fail_err(im, err, w, "no request in successful, incomplete or errored");
	}
	if (tt_failed(rc)) {
		tt_trace_writer_close(s.tw, NULL);
		return rc;
	}
	if (tt_failed(rc = tt_trace_writer_close(s.tw, err)))
		return rc;
	{
		struct tt_cell_info *c;
		double mean = s.pn ? floor(s.psum / (double)s.pn + 0.5) : 0;
		int64_t ctx;
		char id[64];
		if (tt_failed(rc = tt__imp_range(im, where, "mean prompt_tokens", mean, 0,
					TT_IMPORT_MAX_CONTEXT, "tokens", err)))
			return rc;
		ctx = (int64_t)mean;
		snprintf(id, sizeof id, "decode-%lldx%ld", (long long)ctx, conc);
		/* (the provisional id may be this very id: benchmark 99 at
		 * concurrency 100 and 99 tokens of context) */
		if (tt__imp_find_cell(im, id) >= 0 && (size_t)tt__imp_find_cell(im, id) != cell)
			return tt__imp_fail_err(im, err, where, "a second benchmark at %lld tokens of "
						"context and concurrency %ld", (long long)ctx, conc);
		if (tt_failed(rc = tt__imp_rename_cell(im, cell, id, err)))
			return rc;
		c = &im->m->cells[cell];
		c->context = ctx;
		c->state = TT_CELL_DONE;
		/* GuideLLM's measured span, start_time to end_time, stretched to
		 * the last measured request's end (a request that started before
		 * end_time counts whole; end_time can also come before the last
		 * request's end: 48 us in the fixture), plus one trace unit:
		 * stored times round up to it.  The cell spans every request,
		 * warm-up and cool-down included. */
		if (s.window) {
			int64_t e, b0;
			if (tt_failed(rc = ns(im, where, "end_time", t1, s.origin, &e, err)) ||
			    tt_failed(rc = ns(im, where, "start_time", t0, s.origin, &b0, err)))
				return rc;
			if (e > TT_IMPORT_MAX_TRACE_NS || b0 < -TT_IMPORT_MAX_TRACE_NS)
				return tt__imp_fail_err(im, err, where, "start_time..end_time reaches "
							"beyond the +-2^60 ns (36 years) from the "
							"run's origin that a run holds");
			c->window_start_ns = b0;
			c->start_ns = s.first_send < b0 ? s.first_send : b0;
			c->window_end_ns = (s.last_end > e ? s.last_end : e) + 1000;
			c->end_ns = s.all_end + 1000 > c->window_end_ns ? s.all_end + 1000
									: c->window_end_ns;
		}
		if (s.outside && tt_failed(rc = tt__imp_note(im, "guidellm_measured",
				"requests outside a benchmark's start_time..end_time (GuideLLM's "
				"warm-up and cool-down) are kept as warm-up requests that no figure "
				"counts, as GuideLLM's own statistics leave them out", err)))
			return rc;
		if (tt_failed(rc = tt__imp_add_i64(im, &im->m->contexts, &im->m->n_contexts, ctx, err)) ||
		    tt_failed(rc = tt__imp_add_int(im, &im->m->concurrency, &im->m->n_concurrency, (int)conc,
					  err)))
			return rc;
		if (c->window_end_ns > c->window_start_ns && cell == im->first_cell)
			im->m->duration_s = (double)(c->window_end_ns - c->window_start_ns) / 1e9;
	}
	(void)n;
	return TT_OK;
}

enum tt_code tt__import_guidellm(struct tt__imp *im, const cJSON *root, struct tt_error *err)
{
	const cJSON *bs, *b, *md, *args;
	const char *s;
	double ver = 0, origin = INFINITY;
	int found;
	size_t k = 0;
	enum tt_code rc;

	if (!root || !cJSON_IsObject(root))
		return tt__imp_fail_err(im, err, "", "a JSON object expected");
	im->src.tool = "GuideLLM";
	if (tt_failed(rc = tt__imp_member(im, root, "", "benchmarks", cJSON_Array, 1, &bs, err)) ||
	    tt_failed(rc = tt__imp_member(im, root, "", "metadata", cJSON_Object, 0, &md, err)) ||
	    tt_failed(rc = tt__imp_member(im, root, "", "args", cJSON_Object, 0, &args, err)))
		return rc;
	if (md) {
		if (tt_failed(rc = tt__imp_str(im, md, "metadata", "guidellm_version", 0, &s, err)) ||
		    tt_failed(rc = tt__imp_num(im, md, "metadata", "version", 0, &ver, &found, err)))
			return rc;
		im->src.tool_version = (char *)s;
		if (found && ver > KNOWN_SCHEMA)
			snprintf(im->newer, sizeof im->newer,
				 "GuideLLM report schema %g is newer than %d, the newest this importer "
				 "knows; only the members it knows were read", ver, KNOWN_SCHEMA);
	}
	if (args) {
		if (tt_failed(rc = tt__imp_str(im, args, "args", "model", 0, &s, err)) ||
		    tt_failed(rc = tt__imp_set(im, &im->m->model, s, err)) ||
		    tt_failed(rc = tt__imp_set(im, &im->m->served_model, s, err)) ||
		    tt_failed(rc = tt__imp_str(im, args, "args", "target", 0, &s, err)) ||
		    tt_failed(rc = tt__imp_note(im, "source_server", s, err)) ||
		    tt_failed(rc = tt__imp_str(im, args, "args", "request_format", 0, &s, err)))
			return rc;
		if (tt_failed(rc = tt__imp_endpoint(im, s, err)))
			return rc;
	}
	/* The origin: the earliest benchmark start or request start (Unix s). */
	cJSON_ArrayForEach(b, bs)
	{
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(b, "start_time");
		const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(b, "requests");
		if (cJSON_IsNumber(st) && st->valuedouble < origin)
			origin = st->valuedouble;
		for (size_t g = 0; g < 3; g++) {
			const cJSON *q;
			cJSON_ArrayForEach(q, cJSON_GetObjectItemCaseSensitive(reqs, groups[g]))
			{
				double t = when(q, "request_start", "start_time");
				if (t < origin)
					origin = t;
			}
		}
	}
	if (im->m->origin_unix_ns == 0 && isfinite(origin) && origin > 0 && origin < 4e9)
		im->m->origin_unix_ns = (int64_t)llround(origin * 1e9);
	cJSON_ArrayForEach(b, bs)
	{
		if (tt_failed(rc = benchmark(im, b, k++, err)))
			return rc;
	}
	if (k == 0)
		return tt__imp_fail_err(im, err, "benchmarks", "no benchmark");
	return tt__imp_note(im, "tokens_per_chunk",
			    "GuideLLM keeps first and last token times only: the first token is "
			    "one chunk, the others one chunk at the last token time", err);
}
