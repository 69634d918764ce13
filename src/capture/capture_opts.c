/* tokentrace-capture's options: the table every option is one row of, the
 * parser and the --help text generated from it (docs/capture.md,
 * "Options", lists the same rows; a test compares the two). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture_opts.h"
#include "tokentrace/error.h"
#include "tokentrace/run.h"
#include "tokentrace/units.h"
#include "tokentrace/slo.h"

enum opt_kind {
	OPT_STR,        /* const char * */
	OPT_FLAG,       /* int, set to 1 (a value after '=' is ignored) */
	OPT_TOKEN_LIST, /* int64_t * and its count */
	OPT_INT_LIST,   /* int * and its count */
	OPT_DURATION,   /* double seconds */
	OPT_TOKENS,     /* int64_t */
	OPT_CHOICE,     /* const char *, one of choices */
	OPT_PROMPT,     /* ids|token_ids -> "token_ids", text */
	OPT_SEED,       /* uint64_t, and seed_given */
	OPT_API_KEY,    /* copied, then blanked in argv */
	OPT_FILE,       /* const char *, a file we can read */
	OPT_NOTE,       /* appended to notes */
	OPT_HELP,
	OPT_VERSION,
	OPT_RATES,      /* double * and its count: "1,2,4/s" */
	OPT_NUMBER,     /* double > 0 */
	OPT_RANGE,      /* out_min:out_max tokens */
	OPT_SLO,        /* const char *, as tt_slo_parse reads it */
};

struct opt {
	const char *group;  /* heading printed before this row, or NULL */
	char short_name;    /* -o, -q, -h; 0 none */
	const char *name, *arg, *help;
	enum opt_kind kind;
	size_t off, off_n;  /* field in struct cap_opts (and its count) */
	int strict;         /* lists: not empty; durations, tokens: > 0 */
	const char *hint;   /* after "bad --NAME 'V'" */
	const char *choices[3];
};

#define OFF(f) offsetof(struct cap_opts, f)

static const struct opt opts[] = {
	{"Matrix", 0, "contexts", "LIST", "decode contexts, tokens (K = 1024) [8K]",
	 OPT_TOKEN_LIST, OFF(contexts), OFF(n_contexts), 1, " (expected e.g. 8K,16K,32K)", {0}},
	{NULL, 0, "concurrency", "LIST", "simultaneous requests per decode cell [1]",
	 OPT_INT_LIST, OFF(concurrency), OFF(n_concurrency), 1, " (expected e.g. 1,2,4,8)", {0}},
	{NULL, 0, "prefill-contexts", "LIST", "extra prefill-only contexts []",
	 OPT_TOKEN_LIST, OFF(prefill), OFF(n_prefill), 0, " (expected e.g. 125K)", {0}},
	{NULL, 0, "prefill-repeats", "N", "cold scouts per prefill cell, reported as their median [1]",
	 OPT_TOKENS, OFF(prefill_repeats), 0, 0, " (expected a count, e.g. 5)", {0}},
	{NULL, 0, "duration", "DUR", "measurement window per decode cell [30s]",
	 OPT_DURATION, OFF(duration_s), 0, 1, " (expected e.g. 30s)", {0}},
	{NULL, 0, "max-tokens", "N", "output tokens per request [4096]",
	 OPT_TOKENS, OFF(max_tokens), 0, 1, "", {0}},
	{NULL, 0, "cells", "LIST", "run only these cells (prefill-8K,decode-8Kx16,...)",
	 OPT_STR, OFF(cells), 0, 0, "", {0}},
	{NULL, 0, "order", "context|concurrency", "cell order [context]",
	 OPT_CHOICE, OFF(order), 0, 0, " (context or concurrency)", {"context", "concurrency", NULL}},
	{NULL, 0, "pause", "DUR", "pause between cells [0]",
	 OPT_DURATION, OFF(pause_s), 0, 0, "", {0}},
	{NULL, 0, "repeat", "N", "measure the matrix N times into RUN/rep-1..N, cell by cell [1]",
	 OPT_TOKENS, OFF(repeat), 0, 0, " (expected a count, e.g. 3)", {0}},
	{"Open loop", 0, "rates", "LIST", "requests/s per open-loop cell, instead of --concurrency",
	 OPT_RATES, OFF(rates), OFF(n_rates), 1, " (expected e.g. 1,2,4,8/s)", {0}},
	{NULL, 0, "arrivals", "constant|poisson|gamma", "gaps between requests [constant]",
	 OPT_CHOICE, OFF(arrivals), 0, 0, " (constant, poisson or gamma)",
	 {"constant", "poisson", "gamma"}},
	{NULL, 0, "burstiness", "K", "gamma shape: 1 Poisson, < 1 burstier [1]",
	 OPT_NUMBER, OFF(burstiness), 0, 1, " (expected a number > 0)", {0}},
	{NULL, 0, "output-tokens", "MIN:MAX|@FILE", "output tokens per request: uniform, or from a histogram",
	 OPT_RANGE, 0, 0, 0, " (expected e.g. 128:1024 or @lengths.csv)", {0}},
	{NULL, 0, "warmup", "DUR", "open-loop load before each window [5s]",
	 OPT_DURATION, OFF(warmup_s), 0, 0, "", {0}},
	{NULL, 0, "drain", "DUR", "after the window, running requests may end [10s]",
	 OPT_DURATION, OFF(drain_s), 0, 0, "", {0}},
	{NULL, 0, "rate-sweep", NULL, "find the saturation rate, then rates below it",
	 OPT_FLAG, OFF(rate_sweep), 0, 0, "", {0}},
	{NULL, 0, "slo", "LIST", "search the highest rate meeting these SLOs",
	 OPT_SLO, OFF(slo), 0, 0, " (expected e.g. ttft=500ms,tbt=50ms,attain=90 or ttft=500ms@p90)", {0}},
	{"Workload", 0, "trace", "FILE", "replay this request trace (Mooncake JSONL, Azure CSV)",
	 OPT_FILE, OFF(trace), 0, 0, "", {0}},
	{NULL, 0, "trace-format", "auto|mooncake|azure", "the trace's format [auto]",
	 OPT_CHOICE, OFF(trace_format), 0, 0, " (auto, mooncake or azure)",
	 {"auto", "mooncake", "azure"}},
	{NULL, 0, "trace-start", "DUR", "replay from this trace time [0]",
	 OPT_DURATION, OFF(trace_start_s), 0, 0, "", {0}},
	{NULL, 0, "trace-duration", "DUR", "replay this much trace time [all]",
	 OPT_DURATION, OFF(trace_duration_s), 0, 0, "", {0}},
	{NULL, 0, "speedup", "X", "trace times divided by X [1]",
	 OPT_NUMBER, OFF(speedup), 0, 1, " (expected a number > 0, e.g. 2)", {0}},
	{NULL, 0, "output-cap", "N", "ask at most N output tokens per replayed request",
	 OPT_TOKENS, OFF(output_cap), 0, 1, "", {0}},
	{NULL, 0, "shared-prefix", "GROUPS:LEN", "open loop: requests in a group share a LEN-token prefix",
	 OPT_STR, OFF(shared_prefix), 0, 0, "", {0}},
	{"Requests", 0, "model", "NAME", "model to request [first of /v1/models]",
	 OPT_STR, OFF(model), 0, 0, "", {0}},
	{NULL, 0, "endpoint", "completions|chat", "API route [completions]",
	 OPT_CHOICE, OFF(endpoint), 0, 0, " (completions or chat)", {"completions", "chat", NULL}},
	{NULL, 0, "prompt", "ids|text", "prompt kind [ids on completions, text on chat]",
	 OPT_PROMPT, OFF(prompt_kind), 0, 0, " (ids or text)", {0}},
	{NULL, 0, "seed", "N", "prompt seed [random, recorded in the run]",
	 OPT_SEED, OFF(seed), 0, 0, "", {0}},
	{NULL, 0, "api-key", "KEY", "bearer key [$TOKENTRACE_API_KEY]; never recorded",
	 OPT_API_KEY, 0, 0, 0, "", {0}},
	{NULL, 0, "request-timeout", "DUR", "a stream silent this long has stalled [60s]",
	 OPT_DURATION, OFF(request_timeout_s), 0, 1, "", {0}},
	{NULL, 0, "cacert", "FILE", "trust this CA bundle for https:// (PEM)",
	 OPT_FILE, OFF(cacert), 0, 0, "", {0}},
	{NULL, 0, "insecure", NULL, "https:// without checking the certificate",
	 OPT_FLAG, OFF(insecure), 0, 0, "", {0}},
	{"Procedure", 0, "readiness", "DUR", "steady state needed before the window [3s]",
	 OPT_DURATION, OFF(readiness_s), 0, 0, "", {0}},
	{NULL, 0, "readiness-timeout", "DUR", "start the window anyway after this [60s]",
	 OPT_DURATION, OFF(readiness_timeout_s), 0, 0, "", {0}},
	{NULL, 0, "scrape-interval", "DUR", "/metrics scrape period, 0 = off [250ms]",
	 OPT_DURATION, OFF(scrape_s), 0, 0, "", {0}},
	{NULL, 0, "no-realtime", NULL, "stay at normal priority (no SCHED_FIFO)",
	 OPT_FLAG, OFF(no_realtime), 0, 0, "", {0}},
	{"Server facts", 0, "kv-capacity", "N", "KV cache capacity in tokens [detected]",
	 OPT_TOKENS, OFF(kv_capacity), 0, 0, "", {0}},
	{NULL, 0, "server-log", "FILE", "vLLM log with 'GPU KV cache size: N tokens'",
	 OPT_STR, OFF(server_log), 0, 0, "", {0}},
	{NULL, 0, "note", "KEY=VALUE", "hardware and launch facts (repeatable)",
	 OPT_NOTE, 0, 0, 0, " (expected key=value)", {0}},
	{"Output", 'o', "output", "RUN", "run directory to create",
	 OPT_STR, OFF(out), 0, 0, "", {0}},
	{NULL, 0, "resume", "RUN", "run the cells RUN has not finished",
	 OPT_STR, OFF(resume), 0, 0, "", {0}},
	{NULL, 0, "redo", "LIST", "with --resume: measure these again too (errors,...,cell ids)",
	 OPT_STR, OFF(redo), 0, 0, "", {0}},
	{NULL, 'q', "quiet", NULL, "no progress line", OPT_FLAG, OFF(quiet), 0, 0, "", {0}},
	{NULL, 'h', "help", NULL, "this text", OPT_HELP, 0, 0, 0, "", {0}},
	{NULL, 0, "version", NULL, "print the version", OPT_VERSION, 0, 0, 0, "", {0}},
};
#define N_OPTS (sizeof opts / sizeof opts[0])
_Static_assert(N_OPTS <= 64, "struct cap_opts' given holds a bit per option");

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tokentrace-capture: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n(see tokentrace-capture --help)\n");
	return 2;
}

static void usage(FILE *f)
{
	fputs("usage: tokentrace-capture URL -o RUN [options]\n"
	      "       tokentrace-capture --resume RUN [URL] [options]\n"
	      "\n"
	      "Record a speed-test matrix from an OpenAI-compatible server into the run\n"
	      "directory RUN (see docs/capture.md).\n"
	      "\n", f);
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt *p = &opts[i];
		char left[64];
		size_t n = 0;

		if (p->group)
			fprintf(f, "%s:\n", p->group);
		if (p->short_name)
			n = (size_t)snprintf(left, sizeof left, "-%c, ", p->short_name);
		snprintf(left + n, sizeof left - n, "--%s%s%s", p->name, p->arg ? " " : "",
			 p->arg ? p->arg : "");
		/* the help column, or two spaces after a long left side */
		fprintf(f, strlen(left) < 24 ? "  %-24s %s\n" : "  %s  %s\n", left, p->help);
	}
}

/* "8K,16K,32K": token counts, each > 0.  -1 on error (*out untouched). */
/* A comma-separated list, each item parsed by `item` into an element of
 * `size` bytes.  -1 on error (*out untouched). */
static int parse_list(const char *s, size_t size, int (*item)(const char *tok, void *dst),
		      void **out, size_t *n)
{
	char *copy = strdup(s), *save = NULL, *tok;
	char *v = NULL;
	size_t k = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *nv = realloc(v, (k + 1) * size);
		if (!nv)
			goto bad;
		v = nv;
		if (item(tok, v + k * size) != 0)
			goto bad;
		k++;
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

/* "8K", "131072": a token count > 0 (tt_parse_tokens). */
static int token_item(const char *tok, void *dst)
{
	int64_t t = tt_parse_tokens(tok);
	if (t <= 0)
		return -1;
	memcpy(dst, &t, sizeof t);
	return 0;
}

static int parse_token_list(const char *s, int64_t **out, size_t *n)
{
	void *v = *out;
	if (parse_list(s, sizeof **out, token_item, &v, n) != 0)
		return -1;
	*out = v;
	return 0;
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

/* One rate of "1,2,4/s", "0.5,1": requests per second > 0, at most 1e7,
 * "/s" allowed after it (so after the list's last item too). */
static int rate_item(const char *tok, void *dst)
{
	char *end = NULL;
	double r = strtod(tok, &end);
	if (end == tok || !(r > 0) || r > 1e7 || (*end && strcmp(end, "/s")))
		return -1;
	memcpy(dst, &r, sizeof r);
	return 0;
}

static int parse_rate_list(const char *s, double **out, size_t *n)
{
	void *v = *out;
	if (parse_list(s, sizeof **out, rate_item, &v, n) != 0)
		return -1;
	*out = v;
	return 0;
}

void opts_init(struct cap_opts *o)
{
	memset(o, 0, sizeof *o);
	o->endpoint = "completions";
	o->order = "context";
	o->duration_s = 30;
	o->max_tokens = 4096;
	o->prefill_repeats = 1;
	o->repeat = 1;
	o->scrape_s = 0.25;
	o->readiness_s = 3;
	o->readiness_timeout_s = 60;
	o->request_timeout_s = 60;
	o->kv_capacity = -1;
	o->arrivals = "constant";
	o->burstiness = 1;
	o->warmup_s = 5;
	o->drain_s = 10;
	o->trace_format = "auto";
	o->speedup = 1;
	parse_token_list("8K", &o->contexts, &o->n_contexts);
	parse_int_list("1", &o->concurrency, &o->n_concurrency);
}

void opts_release(struct cap_opts *o)
{
	free(o->contexts);
	free(o->concurrency);
	free(o->prefill);
	free(o->notes);
	free(o->rates);
	o->rates = NULL;
	free(o->out_bins);
	o->out_bins = NULL;
	if (o->key_copy) {
		memset(o->key_copy, 0, strlen(o->key_copy));
		free(o->key_copy);
	}
	o->contexts = NULL;
	o->concurrency = NULL;
	o->prefill = NULL;
	o->notes = NULL;
	o->key_copy = NULL;
}

/* Store value v of option p.  Returns -1 when stored, else the exit status
 * (2: bad value, message printed; 1: out of memory). */
static int set_opt(struct cap_opts *o, const struct opt *p, const char *v)
{
	char *base = (char *)o;
	int bad = 0;

	switch (p->kind) {
	case OPT_STR:
		*(const char **)(base + p->off) = v;
		break;
	case OPT_TOKEN_LIST: {
		size_t *n = (size_t *)(base + p->off_n);
		bad = parse_token_list(v, (int64_t **)(base + p->off), n) || (p->strict && !*n);
		break;
	}
	case OPT_INT_LIST: {
		size_t *n = (size_t *)(base + p->off_n);
		bad = parse_int_list(v, (int **)(base + p->off), n) || (p->strict && !*n);
		break;
	}
	case OPT_DURATION: {
		double *d = (double *)(base + p->off);
		*d = tt_parse_duration(v);
		bad = p->strict ? *d <= 0 : *d < 0;
		break;
	}
	case OPT_TOKENS: {
		int64_t *t = (int64_t *)(base + p->off);
		*t = tt_parse_tokens(v);
		/* max_tokens is written in a fixed-width field of 10 digits */
		bad = *t <= 0 || (p->strict && *t > 9999999999LL);
		break;
	}
	case OPT_CHOICE:
		bad = 1;
		for (int k = 0; p->choices[k]; k++)
			if (!strcmp(v, p->choices[k])) {
				*(const char **)(base + p->off) = v;
				bad = 0;
			}
		break;
	case OPT_PROMPT:
		if (!strcmp(v, "ids") || !strcmp(v, "token_ids"))
			o->prompt_kind = "token_ids";
		else if (!strcmp(v, "text"))
			o->prompt_kind = "text";
		else
			bad = 1;
		break;
	case OPT_SEED: {
		char *end = NULL;
		errno = 0;
		o->seed = strtoull(v, &end, 0);
		if (!*v || *end || errno)
			bad = 1;
		else
			o->seed_given = 1;
		break;
	}
	case OPT_API_KEY:
		/* Keep a copy and blank the argument, so the key does not
		 * stay readable in /proc/PID/cmdline for the whole run. */
		free(o->key_copy);
		o->key_copy = strdup(v);
		if (!o->key_copy)
			return 1;
		memset((char *)v, '*', strlen(v));
		o->api_key = o->key_copy;
		break;
	case OPT_FILE: {
		FILE *f = fopen(v, "r");
		if (!f)
			return usage_error("cannot read --%s '%s': %s", p->name, v, strerror(errno));
		fclose(f);
		*(const char **)(base + p->off) = v;
		break;
	}
	case OPT_NOTE: {
		char **nn;
		if (!strchr(v, '=') || v[0] == '=') {
			bad = 1;
			break;
		}
		nn = realloc(o->notes, (o->n_notes + 1) * sizeof *nn);
		if (!nn)
			return 1;
		o->notes = nn;
		o->notes[o->n_notes++] = (char *)v;
		break;
	}
	case OPT_RATES: {
		size_t *n = (size_t *)(base + p->off_n);
		bad = parse_rate_list(v, (double **)(base + p->off), n) || !*n;
		break;
	}
	case OPT_NUMBER: {
		char *end = NULL;
		double *d = (double *)(base + p->off);
		*d = strtod(v, &end);
		bad = end == v || *end || !(*d > 0) || *d > 1e6;
		break;
	}
	case OPT_RANGE: {
		const char *colon = strchr(v, ':');
		if (v[0] == '@') {
			/* a histogram file (formats/length-hist-v1.md) */
			struct tt_length_bin *b = NULL;
			size_t nb = 0;
			struct tt_error e;
			const char *slash = strrchr(v + 1, '/');
			enum tt_code rc = tt_length_hist_load(v + 1, &b, &nb, &e);
			if (rc != TT_OK)
				return e.kind == TT_ENOMEM ? 1
							   : usage_error("bad --%s '%s': %s", p->name,
									 v, e.msg);
			free(o->out_bins);
			o->out_bins = b;
			o->n_out_bins = nb;
			o->out_hist_file = slash ? slash + 1 : v + 1;
			o->out_min = b[0].min;
			o->out_max = b[0].max;
			for (size_t i = 1; i < nb; i++) {
				if (b[i].min < o->out_min)
					o->out_min = b[i].min;
				if (b[i].max > o->out_max)
					o->out_max = b[i].max;
			}
			break;
		}
		int64_t lo, hi;
		char first[32];
		if (!colon || (size_t)(colon - v) >= sizeof first) {
			bad = 1;
			break;
		}
		snprintf(first, sizeof first, "%.*s", (int)(colon - v), v);
		lo = tt_parse_tokens(first);
		hi = tt_parse_tokens(colon + 1);
		bad = lo <= 0 || hi < lo || hi > 9999999999LL;
		if (!bad) {
			o->out_min = lo;
			o->out_max = hi;
			free(o->out_bins);
			o->out_bins = NULL;
			o->n_out_bins = 0;
			o->out_hist_file = NULL;
		}
		break;
	}
	case OPT_SLO: {
		struct tt_slo slo;
		struct tt_error e;
		tt_slo_init(&slo);
		if (tt_slo_parse(v, &slo, &e) != TT_OK)
			return usage_error("bad --%s '%s': %s", p->name, v, e.msg);
		if (!tt_slo_active(&slo))
			return usage_error("bad --%s '%s': no bound set", p->name, v);
		/* canonical, so a resumed run compares it with the recorded one */
		tt_slo_format(&slo, o->slo_buf, sizeof o->slo_buf);
		*(const char **)(base + p->off) = o->slo_buf;
		break;
	}
	case OPT_FLAG:
	case OPT_HELP:
	case OPT_VERSION:
		break;
	}
	if (bad)
		return usage_error("bad --%s '%s'%s", p->name, v, p->hint);
	return -1;
}

/* The checks between options, after all are read. */
/* A replay (docs/workloads.md) is its own schedule: the options that make
 * the matrix's schedule would be silently ignored beside it. */
static int check_workload_opts(struct cap_opts *o)
{
	static const char *const matrix[] = {"rates", "concurrency", "contexts",
					     "prefill-contexts", "rate-sweep", "slo", "arrivals",
					     "burstiness", "output-tokens", "warmup", "duration",
					     "repeat", "cells", "max-tokens"};
	static const char *const slice[] = {"trace-format", "trace-start", "trace-duration",
					    "speedup", "output-cap"};

	if (o->shared_prefix) {
		const char *colon = strchr(o->shared_prefix, ':');
		char *end = NULL;
		long long g = colon ? strtoll(o->shared_prefix, &end, 10) : 0;
		int64_t len = colon ? tt_parse_tokens(colon + 1) : -1;
		if (!colon || end != colon || g < 1 || g > 4000 || len < 512 || len % 512)
			return usage_error("bad --shared-prefix '%s' (expected GROUPS:LEN, 1 to 4000 "
					   "groups of a prefix in whole 512-token blocks, e.g. 8:2K)",
					   o->shared_prefix);
		if (o->trace || o->resume)
			return usage_error("--shared-prefix makes its own workload: not with --trace "
					   "or --resume");
		if (o->n_rates != 1 || o->n_contexts != 1 || o->contexts[0] <= len)
			return usage_error("--shared-prefix needs one --rates and one --contexts "
					   "longer than the prefix (e.g. --contexts 4K --rates 8/s)");
		if ((o->prompt_kind && strcmp(o->prompt_kind, "token_ids")) ||
		    !strcmp(o->endpoint, "chat") || o->rate_sweep || o->slo || o->repeat > 1 ||
		    o->n_prefill)
			return usage_error("--shared-prefix builds token-id prompts on --endpoint "
					   "completions, one cell: no --prompt text, chat, "
					   "--rate-sweep, --slo, --repeat or --prefill-contexts");
		o->sp_groups = g;
		o->sp_tokens = len;
	}
	if (!o->trace) {
		for (size_t i = 0; i < sizeof slice / sizeof *slice; i++)
			if (opts_given(o, slice[i]))
				return usage_error("--%s applies to a replay: give --trace FILE",
						   slice[i]);
		return -1;
	}
	if (o->resume)
		return usage_error("--trace starts a new run: a replay is not resumed (give -o RUN)");
	for (size_t i = 0; i < sizeof matrix / sizeof *matrix; i++)
		if (opts_given(o, matrix[i]))
			return usage_error("--%s does not combine with --trace: the trace gives "
					   "every request's time and lengths", matrix[i]);
	if ((o->prompt_kind && strcmp(o->prompt_kind, "token_ids")) || !strcmp(o->endpoint, "chat"))
		return usage_error("--trace builds token-id prompts (equal block ids, equal "
				   "tokens): it needs --endpoint completions and --prompt ids");
	return -1;
}

static int check_opts(struct cap_opts *o, const char *url)
{
	if (!o->api_key)
		o->api_key = getenv("TOKENTRACE_API_KEY");
	if (o->api_key && !*o->api_key)
		o->api_key = NULL;
	if (o->resume && o->out)
		return usage_error("give either -o or --resume, not both");
	if (!o->resume && !o->out)
		return usage_error("no run directory: give -o RUN (or --resume RUN)");
	if (o->redo && !o->resume)
		return usage_error("--redo measures cells of a run again: it needs --resume RUN");
	if (o->redo && !*o->redo)
		return usage_error("--redo: empty (e.g. --redo failed,errors)");
	if ((o->rate_sweep || o->slo) && !o->n_rates && !o->resume)
		return usage_error("--rate-sweep and --slo search rates: give --rates to start from "
				   "(e.g. --rates 1/s)");
	if (o->repeat > CAP_REPEAT_MAX)
		return usage_error("--repeat %lld: at most %d repeats", (long long)o->repeat,
				   CAP_REPEAT_MAX);
	if (o->repeat > 1 && (o->rate_sweep || o->slo))
		return usage_error("--repeat measures a fixed matrix: it does not combine with "
				   "--rate-sweep or --slo, whose rates depend on what was measured");
	if (!o->resume && !url)
		return usage_error("no server URL (e.g. http://127.0.0.1:8000)");
	if (o->prompt_kind && !strcmp(o->prompt_kind, "token_ids") && !strcmp(o->endpoint, "chat"))
		return usage_error("--prompt ids needs --endpoint completions (chat takes text)");
	return check_workload_opts(o);
}

int opts_given(const struct cap_opts *o, const char *name)
{
	for (size_t k = 0; k < N_OPTS; k++)
		if (!strcmp(opts[k].name, name))
			return (o->given >> k) & 1;
	return 0;
}

int opts_parse(struct cap_opts *o, int argc, char **argv, const char **url)
{
	*url = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		char *eq = NULL;
		char name[64];
		const struct opt *p = NULL;
		int st;

		if (a[0] != '-' || strcmp(a, "-") == 0) {
			if (*url)
				return usage_error("unexpected argument '%s'", a);
			*url = a;
			continue;
		}
		snprintf(name, sizeof name, "%s", a);
		if (strncmp(a, "--", 2) == 0 && (eq = strchr(a, '='))) {
			size_t k = (size_t)(eq - a);
			if (k < sizeof name)
				name[k] = '\0';
		}
		for (size_t k = 0; k < N_OPTS && !p; k++)
			if ((name[0] == '-' && name[1] == '-' && !strcmp(name + 2, opts[k].name)) ||
			    (opts[k].short_name && name[0] == '-' && name[1] == opts[k].short_name &&
			     !name[2]))
				p = &opts[k];
		if (!p)
			return usage_error("unknown option '%s'", a);
		o->given |= 1ull << (p - opts);
		if (p->kind == OPT_HELP) {
			usage(stdout);
			return 0;
		}
		if (p->kind == OPT_VERSION) {
			printf("tokentrace-capture %s (writes run format %d.%d)\n", tt_version(),
			       TT_RUN_FORMAT_MAJOR, TT_RUN_FORMAT_MINOR_NEWEST);
			return 0;
		}
		if (p->kind == OPT_FLAG) {
			*(int *)((char *)o + p->off) = 1;
			continue;
		}
		if (eq) {
			v = eq + 1;
		} else {
			if (i + 1 >= argc)
				return usage_error("'%s' needs a value", a);
			v = argv[++i];
		}
		st = set_opt(o, p, v);
		if (st >= 0)
			return st;
	}
	return check_opts(o, *url);
}
