/* Opening a run: a new one (the matrix, the manifest, the run directory)
 * or one being resumed (its own settings), with the server probed, the
 * network loop and the trace sink started; and closing it again. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run_open.h"
#include "capture.h"
#include "capture_opts.h"
#include "monotonic.h"
#include "net_loop.h"
#include "probe.h"
#include "sink.h"
#include "tokentrace/analysis.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"
#include "tokentrace/units.h"
#include "workload_replay.h"
#include "xfer.h"

/* Replace every occurrence of the API key in s by <redacted>. */
static char *scrub_key(const char *s, const char *key)
{
	char *r = tt_redact_secrets(s), *p;
	size_t kl = key ? strlen(key) : 0;

	if (!r || kl < 4)
		return r;
	while ((p = strstr(r, key))) {
		size_t n = strlen(r) + 16;
		char *nr = malloc(n);
		if (!nr) {
			free(r);
			return NULL;
		}
		snprintf(nr, n, "%.*s<redacted>%s", (int)(p - r), r, p + kl);
		free(r);
		r = nr;
	}
	return r;
}

static int cell_selected(const char *cells, const struct tt_cell_info *ci)
{
	char *copy, *save = NULL, *tok;
	int hit = 0;

	if (!cells)
		return 1;
	copy = strdup(cells);
	if (!copy)
		return 1;
	for (tok = strtok_r(copy, ",", &save); tok && !hit; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-'), *x;
		int64_t ctx;
		if (ci->phase == TT_PHASE_RATE) {
			/* open loop: the id, its context in either notation */
			char canon[96];
			tt_cell_id_canonical(tok, canon, sizeof canon);
			hit = strcmp(canon, ci->id) == 0;
			continue;
		}
		if (!dash)
			continue;
		*dash = '\0';
		x = strchr(dash + 1, 'x');
		if (x)
			*x = '\0';
		ctx = tt_parse_tokens(dash + 1);
		if (strcmp(tok, "prefill") == 0 && !x)
			hit = ci->phase == TT_PHASE_PREFILL && ctx == ci->context;
		else if (strcmp(tok, "decode") == 0 && x)
			hit = ci->phase == TT_PHASE_DECODE && ctx == ci->context &&
			      atoi(x + 1) == ci->concurrency;
	}
	free(copy);
	return hit;
}

static int has_ctx(const int64_t *v, size_t n, int64_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static enum tt_code add_cell(struct tt_manifest *m, const struct cap_opts *o, enum tt_phase ph,
			     int64_t ctx, int conc)
{
	size_t idx;
	enum tt_code rc = tt_manifest_add_cell(m, ph, ctx, conc, &idx);
	if (rc != TT_OK)
		return rc;
	if (tt_manifest_find_cell(m, m->cells[idx].id) != (long)idx ||
	    !cell_selected(o->cells, &m->cells[idx])) {
		/* A duplicate or not asked for: drop it again. */
		free(m->cells[idx].id);
		m->n_cells--;
	}
	return TT_OK;
}

static enum tt_code build_matrix(struct tt_manifest *m, const struct cap_opts *o)
{
	enum tt_code rc = TT_OK;

	if (o->order && strcmp(o->order, "concurrency") == 0) {
		for (size_t i = 0; rc == TT_OK && i < o->n_contexts; i++)
			rc = add_cell(m, o, TT_PHASE_PREFILL, o->contexts[i], 1);
		for (size_t j = 0; rc == TT_OK && !o->n_rates && j < o->n_concurrency; j++)
			for (size_t i = 0; rc == TT_OK && i < o->n_contexts; i++)
				rc = add_cell(m, o, TT_PHASE_DECODE, o->contexts[i], o->concurrency[j]);
	} else {
		for (size_t i = 0; rc == TT_OK && i < o->n_contexts; i++) {
			rc = add_cell(m, o, TT_PHASE_PREFILL, o->contexts[i], 1);
			for (size_t j = 0; rc == TT_OK && !o->n_rates && j < o->n_concurrency; j++)
				rc = add_cell(m, o, TT_PHASE_DECODE, o->contexts[i], o->concurrency[j]);
		}
	}
	for (size_t i = 0; rc == TT_OK && i < o->n_prefill; i++)
		if (!has_ctx(o->contexts, o->n_contexts, o->prefill[i]))
			rc = add_cell(m, o, TT_PHASE_PREFILL, o->prefill[i], 1);
	/* Open loop: (context, rate) cells after the others, in the order a
	 * manifest lists them (formats/run-v1.md 2.4). */
	for (size_t i = 0; rc == TT_OK && i < o->n_contexts; i++)
		for (size_t j = 0; rc == TT_OK && j < o->n_rates; j++) {
			size_t idx;
			rc = tt_manifest_add_rate_cell(m, o->contexts[i], o->rates[j], &idx);
			if (rc == TT_OK && (tt_manifest_find_cell(m, m->cells[idx].id) != (long)idx ||
					    !cell_selected(o->cells, &m->cells[idx]))) {
				free(m->cells[idx].id);
				m->n_cells--;
			}
		}
	return rc;
}

/* The first --cells item that names no cell of the full matrix, or NULL.
 * (A typo would otherwise silently shrink the run.) */
char *run_unknown_cell(const struct cap_opts *o)
{
	struct cap_opts all = *o;
	struct tt_manifest full;
	char *copy, *save = NULL, *tok, *bad = NULL;

	if (!o->cells)
		return NULL;
	all.cells = NULL;
	tt_manifest_init(&full);
	copy = strdup(o->cells);
	if (!copy || build_matrix(&full, &all) != TT_OK) {
		free(copy);
		tt_manifest_release(&full);
		return NULL;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
		int hit = 0;
		for (size_t i = 0; i < full.n_cells && !hit; i++)
			hit = cell_selected(tok, &full.cells[i]);
		if (!hit)
			bad = strdup(tok);
	}
	free(copy);
	tt_manifest_release(&full);
	return bad;
}

/* Base URL: scheme checked, no trailing '/' or '/v1', no credentials. */
/* The URL as it may be shown: the scheme and host kept, a user:password@
 * and anything from '?' or '#' on replaced by <redacted> (a refused URL
 * is named in the message, and must not carry the secret there). */
static void shown_url(const char *in, char *out, size_t len)
{
	const char *rest = strstr(in, "://"), *host, *at, *end;
	size_t n;

	rest = rest ? rest + 3 : in;
	end = rest + strcspn(rest, "/?#");
	at = memchr(rest, '@', (size_t)(end - rest));
	host = at ? at + 1 : rest;
	n = (size_t)(rest - in);
	snprintf(out, len, "%.*s%s%.*s%s", (int)(n < 16 ? n : 16), in, at ? "<redacted>@" : "",
		 (int)(end - host < 200 ? end - host : 200), host,
		 in[strcspn(in, "?#")] ? "/...<redacted>" : (*end ? "/..." : ""));
	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

static int clean_url(const char *in, char *out, size_t len)
{
	const char *rest, *at, *slash;
	size_t n;

	if (strncmp(in, "http://", 7) == 0)
		rest = in + 7;
	else if (strncmp(in, "https://", 8) == 0)
		rest = in + 8;
	else
		return -1;
	if (!*rest || *rest == '/')
		return -1;
	/* A query string or fragment (?api_key=...) would be glued before
	 * every route ("...?api_key=KEY/v1/models") and stored in the run. */
	if (strpbrk(in, "?#"))
		return -1;
	slash = strchr(rest, '/');
	at = strchr(rest, '@');
	if (at && (!slash || at < slash))
		return -1; /* credentials in the URL would end up in the run */
	n = strlen(in);
	while (n && in[n - 1] == '/')
		n--;
	if (n >= 3 && strncmp(in + n - 3, "/v1", 3) == 0)
		n -= 3;
	if (n >= len)
		return -1;
	memcpy(out, in, n);
	out[n] = '\0';
	return 0;
}

static void settings_to_manifest(struct tt_manifest *m, const struct cap_opts *o, int text)
{
	tt_manifest_set_str(&m->endpoint, o->endpoint);
	m->contexts = malloc((o->n_contexts ? o->n_contexts : 1) * sizeof *m->contexts);
	m->concurrency = malloc((o->n_concurrency ? o->n_concurrency : 1) * sizeof *m->concurrency);
	m->prefill_contexts = malloc((o->n_prefill ? o->n_prefill : 1) * sizeof *m->prefill_contexts);
	if (m->contexts && o->n_contexts) {
		memcpy(m->contexts, o->contexts, o->n_contexts * sizeof *m->contexts);
		m->n_contexts = o->n_contexts;
	}
	if (m->concurrency && o->n_concurrency) {
		memcpy(m->concurrency, o->concurrency, o->n_concurrency * sizeof *m->concurrency);
		m->n_concurrency = o->n_concurrency;
	}
	if (m->prefill_contexts && o->n_prefill) {
		memcpy(m->prefill_contexts, o->prefill, o->n_prefill * sizeof *m->prefill_contexts);
		m->n_prefill_contexts = o->n_prefill;
	}
	m->duration_s = o->duration_s;
	m->max_tokens = o->max_tokens;
	tt_manifest_set_str(&m->prompt_kind, text ? "text" : "token_ids");
	m->seed = o->seed;
	m->scrape_interval_s = o->scrape_s;
	m->readiness_s = o->readiness_s;
	m->readiness_timeout_s = o->readiness_timeout_s;
	if (o->n_rates) {
		m->rates = malloc(o->n_rates * sizeof *m->rates);
		if (m->rates) {
			memcpy(m->rates, o->rates, o->n_rates * sizeof *m->rates);
			m->n_rates = o->n_rates;
		}
		tt_manifest_set_str(&m->arrivals, o->arrivals);
		m->burstiness = o->burstiness;
		m->warmup_s = o->warmup_s;
		m->drain_s = o->drain_s;
		m->output_min = o->out_min;
		m->output_max = o->out_max;
		if (o->n_out_bins) {
			m->output_bins = malloc(o->n_out_bins * sizeof *m->output_bins);
			if (m->output_bins) {
				memcpy(m->output_bins, o->out_bins,
				       o->n_out_bins * sizeof *m->output_bins);
				m->n_output_bins = o->n_out_bins;
			}
			tt_manifest_set_str(&m->output_hist_file, o->out_hist_file);
		}
		/* recorded, so a resume carries on the same sweep or search */
		m->rate_sweep = o->rate_sweep;
		tt_manifest_set_str(&m->slo, o->slo);
	}
}

/* An option given with --resume that says otherwise than the run: the
 * run's settings are the ones a resume uses, so a different value would
 * silently not be what the user asked (2: message printed). */
static int contradicts(const char *opt, const char *given, const char *recorded)
{
	fprintf(stderr, "tokentrace-capture: error: --resume: --%s %s contradicts the run, which "
			"was captured with %s; resume without --%s (the run's own settings are "
			"used) or start a new run with -o\n", opt, given, recorded, opt);
	return 2;
}

static int same_i64(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
	return na == nb && (!na || !memcmp(a, b, na * sizeof *a));
}

static int same_f64(const double *a, size_t na, const double *b, size_t nb)
{
	if (na != nb)
		return 0;
	for (size_t i = 0; i < na; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static void list_text(char *buf, size_t len, const int64_t *iv, const double *dv, size_t n)
{
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && k + 24 < len; i++)
		k += iv ? (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "," : "", (long long)iv[i])
			: (size_t)snprintf(buf + k, len - k, "%s%g", i ? "," : "", dv[i]);
	if (!n)
		snprintf(buf, len, "none");
}

/* Each option given on the command line of a resume against the value the
 * run recorded (formats/run-v1.md 2.1, 2.4). */
static int check_resume_opts(const struct cap_opts *o, const struct tt_manifest *m)
{
	char a[256], b[256];

	/* A run before format 1.3 recorded neither: the user's word stands. */
	int recorded = m->format_minor >= 3;

	if (recorded && opts_given(o, "rate-sweep") && o->rate_sweep && !m->rate_sweep)
		return contradicts("rate-sweep", "(a rate sweep)", "no rate sweep");
	if (recorded && opts_given(o, "slo") && (!m->slo || strcmp(o->slo, m->slo))) {
		snprintf(a, sizeof a, "'%s'", o->slo);
		snprintf(b, sizeof b, m->slo ? "--slo '%s'" : "no SLO search", m->slo);
		return contradicts("slo", a, b);
	}
	if (opts_given(o, "rates") && !same_f64(o->rates, o->n_rates, m->rates, m->n_rates)) {
		list_text(a, sizeof a, NULL, o->rates, o->n_rates);
		list_text(b, sizeof b, NULL, m->rates, m->n_rates);
		return contradicts("rates", a, b);
	}
	if (opts_given(o, "contexts") &&
	    !same_i64(o->contexts, o->n_contexts, m->contexts, m->n_contexts)) {
		list_text(a, sizeof a, o->contexts, NULL, o->n_contexts);
		list_text(b, sizeof b, m->contexts, NULL, m->n_contexts);
		return contradicts("contexts", a, b);
	}
	if (opts_given(o, "arrivals") && strcmp(o->arrivals, m->arrivals ? m->arrivals : "constant"))
		return contradicts("arrivals", o->arrivals, m->arrivals ? m->arrivals : "constant");
#define SAME_NUM(name, ov, mv, fmt) \
	if (opts_given(o, name) && (ov) != (mv)) { \
		snprintf(a, sizeof a, fmt, ov); \
		snprintf(b, sizeof b, "--" name " " fmt, mv); \
		return contradicts(name, a, b); \
	}
	SAME_NUM("burstiness", o->burstiness, m->burstiness, "%g")
	SAME_NUM("warmup", o->warmup_s, m->warmup_s, "%gs")
	SAME_NUM("drain", o->drain_s, m->drain_s, "%gs")
	SAME_NUM("duration", o->duration_s, m->duration_s, "%gs")
	SAME_NUM("max-tokens", (long long)o->max_tokens, (long long)m->max_tokens, "%lld")
	SAME_NUM("seed", (unsigned long long)o->seed, (unsigned long long)m->seed, "%llu")
#undef SAME_NUM
	if (opts_given(o, "output-tokens")) {
		int same = o->out_min == m->output_min && o->out_max == m->output_max &&
			   o->n_out_bins == m->n_output_bins;
		for (size_t i = 0; same && i < o->n_out_bins; i++)
			same = o->out_bins[i].min == m->output_bins[i].min &&
			       o->out_bins[i].max == m->output_bins[i].max &&
			       o->out_bins[i].weight == m->output_bins[i].weight;
		if (!same) {
			if (o->n_out_bins)
				snprintf(a, sizeof a, "@%s (%zu bins)", o->out_hist_file, o->n_out_bins);
			else
				snprintf(a, sizeof a, "%lld:%lld", (long long)o->out_min,
					 (long long)o->out_max);
			if (m->n_output_bins)
				snprintf(b, sizeof b, "a histogram of %zu bins%s%s", m->n_output_bins,
					 m->output_hist_file ? " from " : "",
					 m->output_hist_file ? m->output_hist_file : "");
			else if (m->output_max > 0)
				snprintf(b, sizeof b, "--output-tokens %lld:%lld",
					 (long long)m->output_min, (long long)m->output_max);
			else
				snprintf(b, sizeof b, "every request asking --max-tokens");
			return contradicts("output-tokens", a, b);
		}
	}
	return 0;
}

/* Settings of a run being resumed: the run's, so the cells match and a
 * sweep or an SLO search carries on where it stopped.  Returns 0, 1 out
 * of memory. */
static int settings_from_manifest(struct cap_opts *o, const struct tt_manifest *m)
{
	o->endpoint = m->endpoint ? m->endpoint : "completions";
	o->duration_s = m->duration_s;
	o->max_tokens = m->max_tokens;
	o->seed = m->seed;
	o->seed_given = 1;
	o->scrape_s = m->scrape_interval_s;
	o->readiness_s = m->readiness_s;
	o->readiness_timeout_s = m->readiness_timeout_s;
	o->prompt_kind = m->prompt_kind;
	o->model = m->served_model ? m->served_model : m->model;
	if (m->arrivals)
		o->arrivals = m->arrivals;
	o->burstiness = m->burstiness;
	o->warmup_s = m->warmup_s;
	o->drain_s = m->drain_s;
	o->out_min = m->output_min;
	o->out_max = m->output_max;
	free(o->out_bins);
	o->out_bins = NULL;
	o->n_out_bins = 0;
	if (m->n_output_bins) {
		o->out_bins = malloc(m->n_output_bins * sizeof *o->out_bins);
		if (!o->out_bins)
			return 1;
		memcpy(o->out_bins, m->output_bins, m->n_output_bins * sizeof *o->out_bins);
		o->n_out_bins = m->n_output_bins;
		o->out_hist_file = m->output_hist_file;
	}
	if (m->format_minor >= 3) {
		o->rate_sweep = m->rate_sweep;
		o->slo = m->slo;
	} /* else a run before 1.3: --rate-sweep and --slo as given this time */
	/* the sweep walks the run's contexts from its lowest rate */
	free(o->contexts);
	free(o->rates);
	o->contexts = malloc((m->n_contexts + 1) * sizeof *o->contexts);
	o->rates = malloc((m->n_rates + 1) * sizeof *o->rates);
	o->n_contexts = o->n_rates = 0;
	if (!o->contexts || !o->rates)
		return 1;
	if (m->n_contexts)
		memcpy(o->contexts, m->contexts, m->n_contexts * sizeof *o->contexts);
	if (m->n_rates)
		memcpy(o->rates, m->rates, m->n_rates * sizeof *o->rates);
	o->n_contexts = m->n_contexts;
	o->n_rates = m->n_rates;
	return 0;
}

/* RUN/capture-info.json: facts about this capture process that are not
 * run facts.  The monotonic origin lets other logs of this machine (a
 * server's, the simulator's ground truth) line up with the traces to the
 * nanosecond, which wall clocks cannot.  Readers of runs ignore the file. */
void run_write_capture_info(const struct cap *c)
{
	char path[4200], tmp[4220];
	FILE *f;
	const int64_t *k = c->net.tm.stamps_by_src;
	int bad;

	/* Written aside and renamed: on a full disk the old file stays whole
	 * (an empty capture-info.json was left before). */
	snprintf(path, sizeof path, "%s/capture-info.json", tt_run_writer_dir(c->run));
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return; /* optional: the run is complete without it */
	/* how the chunks' arrival times were taken (docs/capture.md,
	 * "Timestamps"); all zero until the run's end rewrites the file */
	fprintf(f, "{\n\t\"origin_monotonic_ns\": %lld,\n\t\"libcurl\": \"%s\",\n"
		   "\t\"chunk_times\": {\"kernel\": %lld, \"wake\": %lld, \"callback\": %lld},\n"
		   "\t\"requests_off_kernel_times\": {\"out_of_order\": %lld, \"miscounted\": %lld, "
		   "\"unknown\": %lld, \"clock_step\": %lld}\n}\n",
		(long long)c->net.origin, curl_version_info(CURLVERSION_NOW)->version,
		(long long)k[STAMP_KERNEL], (long long)k[STAMP_WAKE], (long long)k[STAMP_CALLBACK],
		(long long)c->net.tm.settled_ooo, (long long)c->net.tm.settled_miscount,
		(long long)c->net.tm.settled_unknown, (long long)c->net.tm.settled_clock);
	bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path) != 0)
		unlink(tmp);
}

static void rfc3339(int64_t unix_ns, char *buf, size_t len)
{
	time_t t = (time_t)(unix_ns / 1000000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A new run: its manifest (settings, notes, the matrix) and directory. */
static int create_run(struct cap *c, struct tt_manifest *m, const struct timespec *wall, int text)
{
	struct cap_opts *o = c->o;
	struct tt_error err;
	enum tt_code rc;
	char created[40];

	m->origin_unix_ns = (int64_t)wall->tv_sec * 1000000000 + wall->tv_nsec;
	rfc3339(m->origin_unix_ns, created, sizeof created);
	tt_manifest_set_str(&m->created, created);
	tt_manifest_set_str(&m->tool_name, "tokentrace-capture");
	tt_manifest_set_str(&m->tool_version, tt_version());
	tt_manifest_set_str(&m->server_url, c->net.url);
	settings_to_manifest(m, o, text);
	for (size_t i = 0; i < o->n_notes; i++) {
		char *kv = strdup(o->notes[i]), *val;
		if (!kv)
			return 1;
		val = strchr(kv, '=');
		*val++ = '\0';
		{
			char *clean = scrub_key(val, o->api_key);
			tt_manifest_set_note(m, kv, clean ? clean : "<redacted>");
			free(clean);
		}
		free(kv);
	}
	if (o->insecure && c->net.tls)
		tt_manifest_set_note(m, "tls_insecure",
				     "certificate and host name not checked (--insecure)");
	if ((c->wl ? workload_manifest(c, m) : build_matrix(m, o)) != TT_OK) {
		fprintf(stderr, "tokentrace-capture: error: out of memory\n");
		return 1;
	}
	if (m->n_cells == 0) {
		fprintf(stderr, "tokentrace-capture: error: --cells '%s' matches no cell of the matrix\n",
			o->cells ? o->cells : "");
		return 2;
	}
	rc = tt_run_writer_create(o->out, m, &c->run, &err);
	if (rc != TT_OK) {
		fprintf(stderr, "tokentrace-capture: error: %s\n", err.msg);
		return 1;
	}
	run_write_capture_info(c);
	c->info_written = 1;
	return 0;
}

/* probe_models keeps the listed model (the first, when the one asked for
 * is not listed) beside the name sent: they differ only when --model names
 * no model of /v1/models.  A server that ignores the name (llama.cpp) then
 * answers with its own model under the name asked for.  The names shown
 * are the run's copies, cleaned as every manifest string is (no control
 * characters: a name is the user's or the server's bytes). */
static void warn_unlisted_model(struct cap *c)
{
	const struct tt_manifest *wm = tt_run_writer_manifest(c->run);

	if (!c->o->model || !c->made.model || !strcmp(c->made.model, c->o->model))
		return;
	fprintf(stderr,
		"tokentrace-capture: warning: --model '%s' is not a model '%s/v1/models' lists "
		"(its first is '%s'); a server that ignores the name answers with its own "
		"model, and the run records '%s'\n",
		wm->served_model ? wm->served_model : "?", c->net.url,
		wm->model ? wm->model : "?", wm->served_model ? wm->served_model : "?");
}

int run_open(struct cap *c, const char *url_arg)
{
	struct cap_opts *o = c->o;
	struct tt_error err;
	enum tt_code rc;
	int status, text;
	struct timespec wall;

	/* The trace is read whole, and refused if malformed, before the
	 * server hears from us. */
	if (o->trace || o->shared_prefix) {
		rc = workload_open(c, &err);
		if (tt_failed(rc)) {
			fprintf(stderr, "tokentrace-capture: error: %s\n", err.msg);
			return err.kind == TT_EFORMAT ? 2 : 1;
		}
	}
	if (o->resume) {
		const struct tt_manifest *rm;
		rc = tt_run_writer_resume(o->resume, &c->run, &err);
		if (rc != TT_OK) {
			fprintf(stderr, "tokentrace-capture: error: %s\n", err.msg);
			return 1;
		}
		rm = tt_run_writer_manifest(c->run);
		if (rm->workload) {
			fprintf(stderr, "tokentrace-capture: error: --resume: '%s' replayed a trace, "
					"which is not resumed; replay it again with -o\n", o->resume);
			return 2;
		}
		status = check_resume_opts(o, rm);
		if (status)
			return status;
		if (settings_from_manifest(o, rm)) {
			fprintf(stderr, "tokentrace-capture: error: out of memory\n");
			return 1;
		}
		if (!url_arg)
			url_arg = rm->server_url;
		if (!url_arg) {
			fprintf(stderr, "tokentrace-capture: error: run '%s' names no server; give its URL\n", o->resume);
			return 1;
		}
		o->kv_capacity = rm->kv_capacity_tokens;
	}
	if (clean_url(url_arg, c->net.url, sizeof c->net.url) != 0) {
		char shown[300];
		shown_url(url_arg, shown, sizeof shown);
		fprintf(stderr, "tokentrace-capture: error: bad URL '%s': expected http://HOST:PORT "
				"or https://HOST:PORT (no user:password@, no ?query: give a key with "
				"--api-key)\n", shown);
		return 2;
	}
	c->net.tls = strncmp(c->net.url, "https://", 8) == 0;
	/* Behind a proxy (libcurl reads these), the socket's bytes may be a
	 * tunnel's, not the body's: chunk times then come from the callback. */
	c->net.raw_ok = !c->net.tls;
	c->net.no_proxy_env = 1;
	{
		static const char *const proxy_env[] = {"http_proxy", "https_proxy", "HTTPS_PROXY",
							"all_proxy", "ALL_PROXY"};
		for (size_t i = 0; i < sizeof proxy_env / sizeof *proxy_env; i++) {
			const char *v = getenv(proxy_env[i]);
			if (v && *v)
				c->net.raw_ok = c->net.no_proxy_env = 0;
		}
	}
	if (o->api_key) {
		if (strlen(o->api_key) > 512 || strpbrk(o->api_key, "\r\n")) {
			fprintf(stderr, "tokentrace-capture: error: the API key is too long or holds a line break\n");
			return 2;
		}
		snprintf(c->net.auth, sizeof c->net.auth, "Authorization: Bearer %s", o->api_key);
	}
	if (!o->seed_given) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		o->seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^
			 ((uint64_t)getpid() << 32);
		o->seed &= (1ull << 53) - 1; /* exact in the manifest's JSON number */
	}

	rc = net_init(&c->net, &err);
	if (rc == TT_OK)
		rc = sink_start(&c->net.sink, &err);
	if (rc != TT_OK) {
		fprintf(stderr, "tokentrace-capture: error: %s\n", err.msg);
		return 1;
	}

	/* Server facts. */
	rc = probe_server(c, o->resume ? &c->probed : &c->made, &err);
	if (rc != TT_OK) {
		fprintf(stderr, "tokentrace-capture: error: %s\n", err.msg);
		return 1;
	}
	if (o->resume) {
		c->model = tt_run_writer_manifest(c->run)->served_model;
		if (!c->model)
			c->model = c->probed.served_model;
	} else {
		c->model = c->made.served_model;
	}
	text = o->prompt_kind ? strcmp(o->prompt_kind, "text") == 0
			     : (strcmp(o->endpoint, "chat") == 0 || c->engine == TT_ENGINE_TGI);
	c->prompt_text = text;

	clock_gettime(CLOCK_REALTIME, &wall);
	c->net.origin = now_ns();
	if (o->resume) {
		/* Keep the run's time axis: trace time 0 is still the first
		 * capture's origin, reached through the wall clock. */
		int64_t wall_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
		c->net.origin -= wall_ns - tt_run_writer_manifest(c->run)->origin_unix_ns;
	} else {
		status = create_run(c, &c->made, &wall, text);
		if (status)
			return 1;
		warn_unlisted_model(c);
	}
	return 0;
}

/* --redo LIST on a resume (docs/capture.md "Stopping and resuming"):
 * cells measured already to measure again.  An item is a state a resume
 * redoes anyway (failed, interrupted), a status key of docs/metrics.md
 * M-status (errors, requests_queued, ...: the run is analysed as the
 * report would), or a cell id in the notation --cells takes. */
int run_redo(struct cap *c)
{
	const char *list = c->o->redo;
	struct tt_manifest *m = tt_run_writer_manifest(c->run);
	struct tt_report *rep = NULL;
	char *copy, *save = NULL, *tok;
	int status = 0;
	size_t n = 0;

	if (!list)
		return 0;
	c->redo = calloc(m->n_cells + 1, 1);
	copy = strdup(list);
	if (!c->redo || !copy) {
		free(copy);
		fprintf(stderr, "tokentrace-capture: error: out of memory\n");
		return 1;
	}
	c->n_redo = m->n_cells;
	for (tok = strtok_r(copy, ",", &save); tok && !status; tok = strtok_r(NULL, ",", &save)) {
		int key = -1;
		long idx;

		if (!strcmp(tok, "failed") || !strcmp(tok, "interrupted"))
			continue; /* a resume measures those again anyway */
		for (int k = 0; k < TT_STATUS_COUNT_ && key < 0; k++)
			if (!strcmp(tok, tt_status_key((enum tt_status)k)))
				key = k;
		if (key >= 0) {
			if (!rep) {
				struct tt_run *run = NULL;
				struct tt_analysis_opts ao;
				struct tt_error err;
				enum tt_code rc;
				tt_analysis_opts_init(&ao);
				rc = tt_run_open(tt_run_writer_dir(c->run), &run, &err);
				if (rc == TT_OK)
					rc = tt_analyze(run, &ao, &rep, &err);
				tt_run_free(run);
				if (tt_failed(rc)) {
					fprintf(stderr, "tokentrace-capture: error: --redo %s: cannot "
							"analyse '%s': %s\n", tok,
						tt_run_writer_dir(c->run), err.msg);
					status = 1;
					break;
				}
			}
			/* errors: every cell with failed requests, also one whose
			 * status shows a worse finding first (Client overloaded,
			 * Damaged trace): its errors are what is to be redone */
			for (size_t i = 0; i < rep->n_cells && i < m->n_cells; i++)
				if (m->cells[i].state == TT_CELL_DONE &&
				    (rep->cells[i].status == (enum tt_status)key ||
				     (key == TT_STATUS_ERRORS && rep->cells[i].errors > 0)) &&
				    !c->redo[i]) {
					c->redo[i] = 1;
					n++;
				}
			continue;
		}
		idx = tt_manifest_find_cell(m, tok);
		if (idx < 0) {
			status = usage_error("--redo: '%s' is neither failed, interrupted, a status key "
					     "(errors, requests_queued, window_cut_short, "
					     "too_few_samples, short_outputs, ...) nor a cell of '%s'",
					     tok, tt_run_writer_dir(c->run));
			break;
		}
		n += !c->redo[idx];
		c->redo[idx] = 1;
	}
	free(copy);
	tt_report_free(rep);
	if (!status && !c->o->quiet)
		fprintf(stderr, "tokentrace-capture: --redo %s: %zu finished cell%s to measure "
				"again\n", list, n, n == 1 ? "" : "s");
	return status;
}

void run_close(struct cap *c)
{
	/* Transfers first (they hold bodies), then the sink, then the run. */
	if (c->net.multi) {
		scrape_stop(c);
		net_cleanup(&c->net);
	}
	sink_stop(c->net.sink);
	tt_run_writer_free(c->run);
	free(c->redo);
	c->redo = NULL;
	tt_manifest_release(&c->made);
	tt_manifest_release(&c->probed);
	workload_close(c);
	memset(c->net.auth, 0, sizeof c->net.auth);
}
