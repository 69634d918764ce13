/* tokentrace-capture: record a speed-test matrix from a live server.
 * docs/capture.md describes the procedure and every flag; the usage text
 * below follows it. */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "tokentrace/profile.h"
#include "tokentrace/units.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag++;
	if (stop_flag > 2)
		_exit(130); /* third Ctrl-C: the user really wants out */
}

static const char usage_text[] =
	"usage: tokentrace-capture URL -o RUN [options]\n"
	"       tokentrace-capture --resume RUN [URL] [options]\n"
	"\n"
	"Record a speed-test matrix from an OpenAI-compatible server into the run\n"
	"directory RUN (see docs/capture.md).\n"
	"\n"
	"Matrix:\n"
	"  --contexts LIST          decode contexts, tokens (K = 1024) [8K]\n"
	"  --concurrency LIST       simultaneous requests per decode cell [1]\n"
	"  --prefill-contexts LIST  extra prefill-only contexts []\n"
	"  --duration DUR           measurement window per decode cell [30s]\n"
	"  --max-tokens N           output tokens per request [4096]\n"
	"  --cells LIST             run only these cells (prefill-8K,decode-8Kx16,...)\n"
	"  --order context|concurrency  cell order [context]\n"
	"  --pause DUR              pause between cells [0]\n"
	"Requests:\n"
	"  --model NAME             model to request [first of /v1/models]\n"
	"  --endpoint completions|chat  API route [completions]\n"
	"  --prompt ids|text        prompt kind [ids on completions, text on chat]\n"
	"  --seed N                 prompt seed [random, recorded in the run]\n"
	"  --api-key KEY            bearer key [$TOKENTRACE_API_KEY]; never recorded\n"
	"  --request-timeout DUR    a stream silent this long has stalled [60s]\n"
	"  --cacert FILE            trust this CA bundle for https:// (PEM)\n"
	"  --insecure               https:// without checking the certificate\n"
	"Procedure:\n"
	"  --readiness DUR          steady state needed before the window [3s]\n"
	"  --readiness-timeout DUR  start the window anyway after this [60s]\n"
	"  --scrape-interval DUR    /metrics scrape period, 0 = off [250ms]\n"
	"Server facts:\n"
	"  --kv-capacity N          KV cache capacity in tokens [detected]\n"
	"  --server-log FILE        vLLM log with 'GPU KV cache size: N tokens'\n"
	"  --note KEY=VALUE         hardware and launch facts (repeatable)\n"
	"Output:\n"
	"  -o, --output RUN         run directory to create\n"
	"  --resume RUN             run the cells RUN has not finished\n"
	"  -q, --quiet              no progress line\n"
	"  -h, --help               this text\n"
	"  --version                print the version\n";

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see tokentrace-capture --help)\n");
	return 2;
}

/* "30s", "250ms", "2m", "1h", "1.5" (seconds).  -1 on error. */
static int parse_token_list(const char *s, int64_t **out, size_t *n)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int64_t *v = NULL;
	size_t k = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int64_t t = tt_parse_tokens(tok);
		int64_t *nv;
		if (t <= 0)
			goto bad;
		nv = realloc(v, (k + 1) * sizeof *v);
		if (!nv)
			goto bad;
		v = nv;
		v[k++] = t;
	}
	free(copy);
	free(*out);
	*out = v;
	*n = k;
	return 0;
bad:
	free(copy);
	free(v);
	return -1;
}

static int parse_int_list(const char *s, int **out, size_t *n)
{
	int64_t *v = NULL;
	size_t k = 0;
	int *iv;

	if (parse_token_list(s, &v, &k) != 0)
		return -1;
	iv = malloc((k ? k : 1) * sizeof *iv);
	if (!iv) {
		free(v);
		return -1;
	}
	for (size_t i = 0; i < k; i++) {
		if (v[i] > 100000) {
			free(v);
			free(iv);
			return -1;
		}
		iv[i] = (int)v[i];
	}
	free(v);
	free(*out);
	*out = iv;
	*n = k;
	return 0;
}

/* ---- progress ---------------------------------------------------------- */

static void fmt_dur(char *buf, size_t len, double s)
{
	if (s < 0 || !isfinite(s))
		snprintf(buf, len, "?");
	else if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

void progress_clear(struct cap *c)
{
	if (c->tty)
		fputs("\r\033[K", stderr);
}

void progress_tick(struct cap *c, int64_t now, double cell_elapsed_s)
{
	char el[16], eta[16];
	double dt;

	if (!c->tty || now < c->progress_next)
		return;
	c->progress_next = now + 250000000;
	dt = (double)(now - c->progress_t_prev) / 1e9;
	if (dt >= 1) {
		c->live_tok_s = (double)(c->tokens_total - c->progress_tokens_prev) / dt;
		c->progress_tokens_prev = c->tokens_total;
		c->progress_t_prev = now;
	}
	fmt_dur(el, sizeof el, (double)(now - c->run_start) / 1e9);
	fmt_dur(eta, sizeof eta, c->remaining_est_s - fmin(cell_elapsed_s, c->cell_est_s));
	fprintf(stderr, "\r\033[Kcell %zu/%zu %s %.0fs | elapsed %s ETA %s | %.0f tok/s | %d active | %lld errors",
		c->cell_i + 1, c->n_cells_run, c->cell_label, cell_elapsed_s, el, eta,
		c->live_tok_s, c->gen_active, (long long)c->errors_total);
	fflush(stderr);
}

/* ---- run setup --------------------------------------------------------- */

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
		for (size_t j = 0; rc == TT_OK && j < o->n_concurrency; j++)
			for (size_t i = 0; rc == TT_OK && i < o->n_contexts; i++)
				rc = add_cell(m, o, TT_PHASE_DECODE, o->contexts[i], o->concurrency[j]);
	} else {
		for (size_t i = 0; rc == TT_OK && i < o->n_contexts; i++) {
			rc = add_cell(m, o, TT_PHASE_PREFILL, o->contexts[i], 1);
			for (size_t j = 0; rc == TT_OK && j < o->n_concurrency; j++)
				rc = add_cell(m, o, TT_PHASE_DECODE, o->contexts[i], o->concurrency[j]);
		}
	}
	for (size_t i = 0; rc == TT_OK && i < o->n_prefill; i++)
		if (!has_ctx(o->contexts, o->n_contexts, o->prefill[i]))
			rc = add_cell(m, o, TT_PHASE_PREFILL, o->prefill[i], 1);
	return rc;
}

/* The first --cells item that names no cell of the full matrix, or NULL.
 * (A typo would otherwise silently shrink the run.) */
static char *unknown_cell(const struct cap_opts *o)
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
}

/* Settings of a run being resumed: the run's, so the cells match. */
static void settings_from_manifest(struct cap_opts *o, const struct tt_manifest *m)
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
}

static double estimate_cell_s(const struct cap *c, const struct tt_cell_info *ci)
{
	if (ci->phase == TT_PHASE_PREFILL)
		return 1;
	return c->o->duration_s + c->o->readiness_s + 2;
}

/* RUN/capture-info.json: facts about this capture process that are not
 * run facts.  The monotonic origin lets other logs of this machine (a
 * server's, the simulator's ground truth) line up with the traces to the
 * nanosecond, which wall clocks cannot.  Readers of runs ignore the file. */
static void write_capture_info(const struct cap *c)
{
	char path[4200];
	FILE *f;
	const int64_t *k = c->stamps_by_src;

	snprintf(path, sizeof path, "%s/capture-info.json", tt_run_writer_dir(c->run));
	f = fopen(path, "w");
	if (!f)
		return; /* optional: the run is complete without it */
	/* how the chunks' arrival times were taken (docs/capture.md,
	 * "Timestamps"); all zero until the run's end rewrites the file */
	fprintf(f, "{\n\t\"origin_monotonic_ns\": %lld,\n\t\"libcurl\": \"%s\",\n"
		   "\t\"chunk_times\": {\"kernel\": %lld, \"wake\": %lld, \"callback\": %lld},\n"
		   "\t\"requests_off_kernel_times\": {\"out_of_order\": %lld, \"miscounted\": %lld, "
		   "\"unknown\": %lld, \"clock_step\": %lld}\n}\n",
		(long long)c->origin, curl_version_info(CURLVERSION_NOW)->version,
		(long long)k[STAMP_KERNEL], (long long)k[STAMP_WAKE], (long long)k[STAMP_CALLBACK],
		(long long)c->settled_ooo, (long long)c->settled_miscount,
		(long long)c->settled_unknown, (long long)c->settled_clock);
	fclose(f);
}

static void rfc3339(int64_t unix_ns, char *buf, size_t len)
{
	time_t t = (time_t)(unix_ns / 1000000000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int main(int argc, char **argv)
{
	struct cap_opts o;
	struct cap c;
	struct tt_manifest m, probe_m;
	struct tt_error err;
	struct sigaction sa;
	const char *url_arg = NULL;
	enum tt_code rc;
	int status = 1, text, info_written = 0;
	size_t done = 0, over = 0, failed = 0, interrupted = 0;
	struct timespec wall;
	char created[40];
	char *key_copy = NULL;

	memset(&o, 0, sizeof o);
	memset(&c, 0, sizeof c);
	tt_manifest_init(&m);
	tt_manifest_init(&probe_m);
	o.endpoint = "completions";
	o.order = "context";
	o.duration_s = 30;
	o.max_tokens = 4096;
	o.scrape_s = 0.25;
	o.readiness_s = 3;
	o.readiness_timeout_s = 60;
	o.request_timeout_s = 60;
	o.kv_capacity = -1;
	parse_token_list("8K", &o.contexts, &o.n_contexts);
	parse_int_list("1", &o.concurrency, &o.n_concurrency);

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = NULL;
		char *eq = NULL;
		char name[64];

#define VAL()                                                                   \
	do {                                                                    \
		if (eq) {                                                       \
			v = eq + 1;                                             \
		} else {                                                        \
			if (i + 1 >= argc) {                                    \
				status = usage_error("'%s' needs a value", a);  \
				goto cleanup;                                   \
			}                                                       \
			v = argv[++i];                                          \
		}                                                               \
	} while (0)
		if (a[0] != '-' || strcmp(a, "-") == 0) {
			if (url_arg) {
				status = usage_error("unexpected argument '%s'", a);
				goto cleanup;
			}
			url_arg = a;
			continue;
		}
		snprintf(name, sizeof name, "%s", a);
		if (strncmp(a, "--", 2) == 0 && (eq = strchr(a, '='))) {
			size_t k = (size_t)(eq - a);
			if (k < sizeof name)
				name[k] = '\0';
		}
		if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
			fputs(usage_text, stdout);
			status = 0;
			goto cleanup;
		} else if (!strcmp(name, "--version")) {
			printf("tokentrace-capture %s\n", tt_version());
			status = 0;
			goto cleanup;
		} else if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
			VAL();
			o.out = v;
		} else if (!strcmp(name, "--resume")) {
			VAL();
			o.resume = v;
		} else if (!strcmp(name, "--contexts")) {
			VAL();
			if (parse_token_list(v, &o.contexts, &o.n_contexts) || !o.n_contexts) {
				status = usage_error("bad --contexts '%s' (expected e.g. 8K,16K,32K)", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--concurrency")) {
			VAL();
			if (parse_int_list(v, &o.concurrency, &o.n_concurrency) || !o.n_concurrency) {
				status = usage_error("bad --concurrency '%s' (expected e.g. 1,2,4,8)", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--prefill-contexts")) {
			VAL();
			if (parse_token_list(v, &o.prefill, &o.n_prefill)) {
				status = usage_error("bad --prefill-contexts '%s' (expected e.g. 125K)", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--duration")) {
			VAL();
			o.duration_s = tt_parse_duration(v);
			if (o.duration_s <= 0) {
				status = usage_error("bad --duration '%s' (expected e.g. 30s)", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--max-tokens")) {
			VAL();
			o.max_tokens = tt_parse_tokens(v);
			if (o.max_tokens <= 0 || o.max_tokens > 9999999999LL) {
				status = usage_error("bad --max-tokens '%s'", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--cells")) {
			VAL();
			o.cells = v;
		} else if (!strcmp(name, "--order")) {
			VAL();
			if (strcmp(v, "context") && strcmp(v, "concurrency")) {
				status = usage_error("bad --order '%s' (context or concurrency)", v);
				goto cleanup;
			}
			o.order = v;
		} else if (!strcmp(name, "--pause")) {
			VAL();
			o.pause_s = tt_parse_duration(v);
			if (o.pause_s < 0) {
				status = usage_error("bad --pause '%s'", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--model")) {
			VAL();
			o.model = v;
		} else if (!strcmp(name, "--endpoint")) {
			VAL();
			if (strcmp(v, "completions") && strcmp(v, "chat")) {
				status = usage_error("bad --endpoint '%s' (completions or chat)", v);
				goto cleanup;
			}
			o.endpoint = v;
		} else if (!strcmp(name, "--prompt")) {
			VAL();
			if (!strcmp(v, "ids") || !strcmp(v, "token_ids"))
				o.prompt_kind = "token_ids";
			else if (!strcmp(v, "text"))
				o.prompt_kind = "text";
			else {
				status = usage_error("bad --prompt '%s' (ids or text)", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--seed")) {
			char *end = NULL;
			VAL();
			errno = 0;
			o.seed = strtoull(v, &end, 0);
			if (!*v || *end || errno) {
				status = usage_error("bad --seed '%s'", v);
				goto cleanup;
			}
			o.seed_given = 1;
		} else if (!strcmp(name, "--api-key")) {
			VAL();
			/* Keep a copy and blank the argument, so the key does not
			 * stay readable in /proc/PID/cmdline for the whole run. */
			free(key_copy);
			key_copy = strdup(v);
			if (!key_copy)
				goto cleanup;
			memset((char *)v, '*', strlen(v));
			o.api_key = key_copy;
		} else if (!strcmp(name, "--cacert")) {
			FILE *f;
			VAL();
			f = fopen(v, "r");
			if (!f) {
				status = usage_error("cannot read --cacert '%s': %s", v, strerror(errno));
				goto cleanup;
			}
			fclose(f);
			o.cacert = v;
		} else if (!strcmp(name, "--insecure")) {
			o.insecure = 1;
		} else if (!strcmp(name, "--request-timeout")) {
			VAL();
			o.request_timeout_s = tt_parse_duration(v);
			if (o.request_timeout_s <= 0) {
				status = usage_error("bad --request-timeout '%s'", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--readiness")) {
			VAL();
			o.readiness_s = tt_parse_duration(v);
			if (o.readiness_s < 0) {
				status = usage_error("bad --readiness '%s'", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--readiness-timeout")) {
			VAL();
			o.readiness_timeout_s = tt_parse_duration(v);
			if (o.readiness_timeout_s < 0) {
				status = usage_error("bad --readiness-timeout '%s'", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--scrape-interval")) {
			VAL();
			o.scrape_s = tt_parse_duration(v);
			if (o.scrape_s < 0) {
				status = usage_error("bad --scrape-interval '%s'", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--kv-capacity")) {
			VAL();
			o.kv_capacity = tt_parse_tokens(v);
			if (o.kv_capacity <= 0) {
				status = usage_error("bad --kv-capacity '%s'", v);
				goto cleanup;
			}
		} else if (!strcmp(name, "--server-log")) {
			VAL();
			o.server_log = v;
		} else if (!strcmp(name, "--note")) {
			char **nn;
			VAL();
			if (!strchr(v, '=') || v[0] == '=') {
				status = usage_error("bad --note '%s' (expected key=value)", v);
				goto cleanup;
			}
			nn = realloc(o.notes, (o.n_notes + 1) * sizeof *nn);
			if (!nn)
				goto cleanup;
			o.notes = nn;
			o.notes[o.n_notes++] = (char *)v;
		} else if (!strcmp(name, "-q") || !strcmp(name, "--quiet")) {
			o.quiet = 1;
		} else {
			status = usage_error("unknown option '%s'", a);
			goto cleanup;
		}
#undef VAL
	}
	if (!o.api_key)
		o.api_key = getenv("TOKENTRACE_API_KEY");
	if (o.api_key && !*o.api_key)
		o.api_key = NULL;
	if (o.resume && o.out) {
		status = usage_error("give either -o or --resume, not both");
		goto cleanup;
	}
	if (!o.resume && !o.out) {
		status = usage_error("no run directory: give -o RUN (or --resume RUN)");
		goto cleanup;
	}
	if (!o.resume && !url_arg) {
		status = usage_error("no server URL (e.g. http://127.0.0.1:8000)");
		goto cleanup;
	}
	if (o.prompt_kind && !strcmp(o.prompt_kind, "token_ids") && !strcmp(o.endpoint, "chat")) {
		status = usage_error("--prompt ids needs --endpoint completions (chat takes text)");
		goto cleanup;
	}
	if (!o.resume) {
		char *bad = unknown_cell(&o);
		if (bad) {
			status = usage_error("--cells: '%s' is not a cell of the matrix "
					     "(ids look like prefill-8K or decode-8Kx16)", bad);
			free(bad);
			goto cleanup;
		}
	}

	c.o = &o;
	c.stop = &stop_flag;
	c.last_running = c.last_waiting = NAN;
	c.tty = !o.quiet && isatty(2);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (o.resume) {
		const struct tt_manifest *rm;
		rc = tt_run_writer_resume(o.resume, &c.run, &err);
		if (rc != TT_OK) {
			fprintf(stderr, "error: %s\n", err.msg);
			goto cleanup;
		}
		rm = tt_run_writer_manifest(c.run);
		settings_from_manifest(&o, rm);
		if (!url_arg)
			url_arg = rm->server_url;
		if (!url_arg) {
			fprintf(stderr, "error: run '%s' names no server; give its URL\n", o.resume);
			goto cleanup;
		}
		o.kv_capacity = rm->kv_capacity_tokens;
	}
	if (clean_url(url_arg, c.url, sizeof c.url) != 0) {
		fprintf(stderr, "error: bad URL '%s': expected http://HOST:PORT or https://HOST:PORT "
				"(no user:password@)\n", url_arg);
		status = 2;
		goto cleanup;
	}
	c.tls = strncmp(c.url, "https://", 8) == 0;
	/* Behind a proxy (libcurl reads these), the socket's bytes may be a
	 * tunnel's, not the body's: chunk times then come from the callback. */
	c.raw_ok = !c.tls;
	{
		static const char *const proxy_env[] = {"http_proxy", "https_proxy", "HTTPS_PROXY",
							"all_proxy", "ALL_PROXY"};
		for (size_t i = 0; i < sizeof proxy_env / sizeof *proxy_env; i++) {
			const char *v = getenv(proxy_env[i]);
			if (v && *v)
				c.raw_ok = 0;
		}
	}
	if (o.api_key) {
		if (strlen(o.api_key) > 512 || strpbrk(o.api_key, "\r\n")) {
			fprintf(stderr, "error: the API key is too long or holds a line break\n");
			status = 2;
			goto cleanup;
		}
		snprintf(c.auth, sizeof c.auth, "Authorization: Bearer %s", o.api_key);
	}
	if (!o.seed_given) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		o.seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^
			 ((uint64_t)getpid() << 32);
		o.seed &= (1ull << 53) - 1; /* exact in the manifest's JSON number */
	}

	rc = net_init(&c, &err);
	if (rc == TT_OK)
		rc = sink_start(&c.sink, &err);
	if (rc != TT_OK) {
		fprintf(stderr, "error: %s\n", err.msg);
		goto cleanup;
	}

	/* Server facts. */
	rc = probe_server(&c, o.resume ? &probe_m : &m, &err);
	if (rc != TT_OK) {
		fprintf(stderr, "error: %s\n", err.msg);
		goto cleanup;
	}
	if (o.resume) {
		c.model = tt_run_writer_manifest(c.run)->served_model;
		if (!c.model)
			c.model = probe_m.served_model;
	} else {
		c.model = m.served_model;
	}
	text = o.prompt_kind ? strcmp(o.prompt_kind, "text") == 0
			     : (strcmp(o.endpoint, "chat") == 0 || c.engine == TT_ENGINE_TGI);
	c.prompt_text = text;

	clock_gettime(CLOCK_REALTIME, &wall);
	c.origin = now_ns();
	if (o.resume) {
		/* Keep the run's time axis: trace time 0 is still the first
		 * capture's origin, reached through the wall clock. */
		int64_t wall_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
		c.origin -= wall_ns - tt_run_writer_manifest(c.run)->origin_unix_ns;
	} else {
		m.origin_unix_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
		rfc3339(m.origin_unix_ns, created, sizeof created);
		tt_manifest_set_str(&m.created, created);
		tt_manifest_set_str(&m.tool_name, "tokentrace-capture");
		tt_manifest_set_str(&m.tool_version, tt_version());
		tt_manifest_set_str(&m.server_url, c.url);
		settings_to_manifest(&m, &o, text);
		for (size_t i = 0; i < o.n_notes; i++) {
			char *kv = strdup(o.notes[i]), *val;
			if (!kv)
				goto cleanup;
			val = strchr(kv, '=');
			*val++ = '\0';
			{
				char *clean = scrub_key(val, o.api_key);
				tt_manifest_set_note(&m, kv, clean ? clean : "<redacted>");
				free(clean);
			}
			free(kv);
		}
		if (o.insecure && c.tls)
			tt_manifest_set_note(&m, "tls_insecure",
					     "certificate and host name not checked (--insecure)");
		if (build_matrix(&m, &o) != TT_OK) {
			fprintf(stderr, "error: out of memory\n");
			goto cleanup;
		}
		if (m.n_cells == 0) {
			fprintf(stderr, "error: --cells '%s' matches no cell of the matrix\n",
				o.cells ? o.cells : "");
			status = 2;
			goto cleanup;
		}
		rc = tt_run_writer_create(o.out, &m, &c.run, &err);
		if (rc != TT_OK) {
			fprintf(stderr, "error: %s\n", err.msg);
			goto cleanup;
		}
		write_capture_info(&c);
		info_written = 1;
	}

	{
		struct tt_manifest *wm = tt_run_writer_manifest(c.run);
		size_t todo = 0;
		double est = 0;

		for (size_t i = 0; i < wm->n_cells; i++) {
			enum tt_cell_state st = wm->cells[i].state;
			if (st == TT_CELL_PENDING || st == TT_CELL_RUNNING || st == TT_CELL_INTERRUPTED) {
				todo++;
				est += estimate_cell_s(&c, &wm->cells[i]);
			}
		}
		c.n_cells_run = todo;
		c.run_start = c.progress_t_prev = now_ns();
		c.next_scrape = now_ns();
		if (!o.quiet)
			fprintf(stderr, "tokentrace-capture: %s %s, model '%s', KV capacity %s%lld (%s), %zu cell(s) to run into '%s'\n",
				tt_engine_name(c.engine), c.has_metrics ? "with /metrics" : "without /metrics",
				c.model ? c.model : "?", wm->kv_capacity_tokens > 0 ? "" : "unknown ",
				(long long)(wm->kv_capacity_tokens > 0 ? wm->kv_capacity_tokens : 0),
				wm->kv_capacity_source ? wm->kv_capacity_source : "unknown", todo,
				tt_run_writer_dir(c.run));
		c.cell_i = 0;
		c.remaining_est_s = est;
		for (size_t i = 0; i < wm->n_cells; i++) {
			struct tt_cell_info *ci = &wm->cells[i];
			enum tt_cell_state st = ci->state;

			if (st != TT_CELL_PENDING && st != TT_CELL_RUNNING && st != TT_CELL_INTERRUPTED)
				continue;
			if (stop_flag)
				break;
			snprintf(c.cell_label, sizeof c.cell_label, "%s", ci->id);
			c.cell_est_s = estimate_cell_s(&c, ci);
			rc = cell_run(&c, i, &err);
			wm = tt_run_writer_manifest(c.run);
			ci = &wm->cells[i];
			c.remaining_est_s -= c.cell_est_s;
			c.cell_i++;
			if (rc == TT_EOF)
				break;
			if (rc != TT_OK) {
				progress_clear(&c);
				fprintf(stderr, "error: %s\n", err.msg);
				goto cleanup;
			}
			if (ci->state == TT_CELL_FAILED && !o.quiet) {
				progress_clear(&c);
				fprintf(stderr, "warning: cell '%s' failed: %s\n", ci->id,
					ci->reason ? ci->reason : "?");
			}
			if (o.pause_s > 0 && c.cell_i < c.n_cells_run) {
				int64_t until = now_ns() + (int64_t)(o.pause_s * 1e9);
				while (now_ns() < until && !stop_flag)
					net_step(&c, 20);
			}
		}
		progress_clear(&c);
		if (info_written)
			write_capture_info(&c);
		for (size_t i = 0; i < wm->n_cells; i++) {
			switch (wm->cells[i].state) {
			case TT_CELL_DONE: done++; break;
			case TT_CELL_OVER_CAPACITY: over++; break;
			case TT_CELL_FAILED: failed++; break;
			case TT_CELL_INTERRUPTED: interrupted++; break;
			default: break;
			}
		}
		if (!o.quiet)
			fprintf(stderr, "tokentrace-capture: %zu of %zu cells done, %zu over capacity, %zu failed, %zu interrupted; %lld output tokens, %lld failed requests, %.1f s; run in '%s'\n",
				done, wm->n_cells, over, failed, interrupted,
				(long long)c.tokens_total, (long long)c.errors_total,
				(double)(now_ns() - c.run_start) / 1e9, tt_run_writer_dir(c.run));
		if (stop_flag) {
			if (!o.quiet)
				fprintf(stderr, "tokentrace-capture: stopped; continue with --resume %s\n",
					tt_run_writer_dir(c.run));
			status = 130;
		} else {
			status = 0;
		}
	}

cleanup:
	/* Transfers first (they hold bodies), then the sink, then the run. */
	if (c.multi)
		net_cleanup(&c);
	sink_stop(c.sink);
	tt_run_writer_free(c.run);
	tt_manifest_release(&m);
	tt_manifest_release(&probe_m);
	free(o.contexts);
	free(o.concurrency);
	free(o.prefill);
	free(o.notes);
	if (key_copy) {
		memset(key_copy, 0, strlen(key_copy));
		free(key_copy);
	}
	memset(c.auth, 0, sizeof c.auth);
	return status;
}
