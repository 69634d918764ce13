/* Summary-only files: GenAI-Perf's profile_export_genai_perf.json and
 * AIPerf's profile_export_aiperf.json (formats/import-genai-perf.md and
 * formats/import-aiperf.md, "The summary alone").  Each is one aggregate
 * cell: the figures the tool computed, as it computed them, where its
 * definition is ours; no trace. */
#include "import/imp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One figure: our key, the tool's metric, its statistic. */
struct pick {
	const char *key, *metric, *stat;
};

/* Where the tools' definitions are ours (check_summary.py holds them
 * against a full import of the same run): TTFT (send to first token), output
 * tok/s (output tokens over the benchmark's duration), AIPerf's per-user
 * rate; the mean inter-token latency (the tools' per-request mean, weighted
 * alike when requests are of similar length).  Their ITL percentiles are
 * over per-request means, ours over tokens: not read. */
static const struct pick genai[] = {
	{"ttft_ms_mean", "time_to_first_token", "avg"}, {"ttft_ms_p50", "time_to_first_token", "p50"},
	{"ttft_ms_p90", "time_to_first_token", "p90"},  {"ttft_ms_p99", "time_to_first_token", "p99"},
	{"tbt_ms_mean", "inter_token_latency", "avg"},  {"total_tok_s", "output_token_throughput", "avg"},
};
static const struct pick aiperf[] = {
	{"ttft_ms_mean", "ttft", "avg"},
	{"ttft_ms_p50", "ttft", "p50"},
	{"ttft_ms_p90", "ttft", "p90"},
	{"ttft_ms_p99", "ttft", "p99"},
	{"tbt_ms_mean", "inter_token_latency", "avg"},
	{"total_tok_s", "output_token_throughput", "avg"},
	{"per_request_tok_s_mean", "output_token_throughput_per_user", "avg"},
	{"per_request_tok_s_p50", "output_token_throughput_per_user", "p50"},
	{"per_request_tok_s_p90", "output_token_throughput_per_user", "p90"},
	{"completed", "request_count", "avg"},
	{"errors", "error_request_count", "avg"},
	{"output_tokens", "total_osl", "avg"},
	{"measured_s", "benchmark_duration", "avg"},
};

/* metrics.METRIC.STAT, a number when present (a JSON null: absent). */
static enum tt_code stat(struct tt__imp *im, const cJSON *metrics, const char *mwhere,
			 const char *metric, const char *st, double *v, int *found,
			 struct tt_error *err)
{
	const cJSON *m;
	char where[96];
	enum tt_code rc;

	*found = 0;
	if (tt_failed(rc = tt__imp_member(im, metrics, mwhere, metric, cJSON_Object, 0, &m, err)) || !m)
		return rc;
	snprintf(where, sizeof where, "%s%s%s", mwhere, mwhere[0] ? "." : "", metric);
	return tt__imp_num(im, m, where, st, 0, v, found, err);
}

enum tt_code tt__imp_summary(struct tt__imp *im, const cJSON *root, int is_aiperf,
			     struct tt_error *err)
{
	const struct pick *p = is_aiperf ? aiperf : genai;
	size_t np = is_aiperf ? sizeof aiperf / sizeof *aiperf : sizeof genai / sizeof *genai;
	const char *mwhere = is_aiperf ? "records" : "";
	const cJSON *metrics = root, *ic, *c;
	double isl = 0, conc = 1, v, done = 0, failed = 0;
	int found, seen = 0;
	size_t cell;
	enum tt_code rc;

	if (is_aiperf &&
	    tt_failed(rc = tt__imp_member(im, root, "", "records", cJSON_Object, 1, &metrics, err)))
		return rc;
	if (tt_failed(rc = tt__imp_member(im, root, "", "input_config", cJSON_Object, 0, &ic, err)))
		return rc;
	/* The concurrency: GenAI-Perf input_config.concurrency, AIPerf
	 * input_config.loadgen.concurrency; else 1 (noted). */
	c = is_aiperf ? cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(ic, "loadgen"), "concurrency")
		      : cJSON_GetObjectItemCaseSensitive(ic, "concurrency");
	if (cJSON_IsNumber(c))
		conc = c->valuedouble;
	else if (tt_failed(rc = tt__imp_note(im, "load", "the summary names no concurrency: 1 "
					     "assumed", err)))
		return rc;
	if (tt_failed(rc = tt__imp_range(im, is_aiperf ? "input_config.loadgen" : "input_config",
					 "concurrency", conc, 1, TT_IMPORT_MAX_CONCURRENCY, "requests",
					 err)))
		return rc;
	/* The context: the mean input sequence length. */
	if (tt_failed(rc = stat(im, metrics, mwhere, "input_sequence_length", "avg", &isl, &found, err)))
		return rc;
	if (found && tt_failed(rc = tt__imp_range(im, mwhere, "input_sequence_length.avg", isl, 0,
						  TT_IMPORT_MAX_CONTEXT, "tokens", err)))
		return rc;
	isl = found ? floor(isl + 0.5) : 0;
	if (tt_failed(rc = tt__imp_cell(im, "input_sequence_length", TT_PHASE_DECODE, isl, floor(conc),
					&cell, err)))
		return rc;
	im->m->cells[cell].state = TT_CELL_DONE;
	if (tt_failed(rc = tt__imp_add_i64(im, &im->m->contexts, &im->m->n_contexts, (int64_t)isl, err)) ||
	    tt_failed(rc = tt__imp_add_int(im, &im->m->concurrency, &im->m->n_concurrency, (int)conc, err)))
		return rc;
	for (size_t k = 0; k < np; k++) {
		char member[96];
		if (tt_failed(rc = stat(im, metrics, mwhere, p[k].metric, p[k].stat, &v, &found, err)))
			return rc;
		if (!found)
			continue;
		snprintf(member, sizeof member, "%s%s%s.%s", mwhere, mwhere[0] ? "." : "", p[k].metric,
			 p[k].stat);
		if (tt_failed(rc = tt__imp_report_member(im, cell, p[k].key, member, v, err)))
			return rc;
		seen++;
	}
	if (!seen)
		return tt__imp_fail_err(im, err, mwhere, "a summary with none of the figures read "
					"(%s.%s, ...)", p[0].metric, p[0].stat);
	if (tt_cell_reported(&im->m->cells[cell], "completed", &done)) {
		tt_cell_reported(&im->m->cells[cell], "errors", &failed);
		if (tt_failed(rc = tt__imp_report(im, cell, "requests", done + failed, err)))
			return rc;
	}
	if (tt_failed(rc = stat(im, metrics, mwhere, "benchmark_duration", "avg", &v, &found, err)))
		return rc;
	if (found && im->m->n_cells == im->first_cell + 1)
		im->m->duration_s = v;
	return tt__imp_note(im, "summary_only",
			    is_aiperf ? "AIPerf's summary alone: its own figures, no per-request "
					"times (no timeline, no TBT distribution); its inter-token "
					"latency is a per-request mean, so only its mean is read"
				      : "GenAI-Perf's summary alone: its own figures, no per-request "
					"times (no timeline, no TBT distribution); its output tokens "
					"are counted by its tokenizer, so its ITL and tok/s differ "
					"from the server's count (formats/import-genai-perf.md)",
			    err);
}
