/* tokentrace-sim: options, start-up, the listen line and a clean stop.
 * Every flag is one row of the table below; --help is printed from it and
 * docs/sim.md lists the same rows. */
#include <errno.h>
#include <event2/event.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "api_http.h"
#include "engine.h"
#include "faults.h"
#include "metrics.h"
#include "sim_config.h"
#include "sim_server.h"
#include "truth.h"
#include "tokentrace/error.h"
#include "tokentrace/profile.h"
#include "tokentrace/units.h"

enum opt_kind { OPT_STR, OPT_INT, OPT_TOKENS, OPT_DOUBLE, OPT_FLAG, OPT_U64, OPT_FAULT, OPT_FLAVOR };

struct opt {
	const char *name, *arg, *help;
	enum opt_kind kind;
	size_t off;
	double lo, hi;
};

#define OFF(f) offsetof(struct sim_config, f)

static const struct opt opts[] = {
	{"host", "ADDR", "address to bind (default 127.0.0.1, loopback)", OPT_STR, OFF(host), 0, 0},
	{"port", "N", "TCP port; 0 picks a free one (default 8000)", OPT_INT, OFF(port), 0, 65535},
	{"model", "NAME", "served model name (default sim)", OPT_STR, OFF(model), 0, 0},
	{"api-key", "KEY", "require 'Authorization: Bearer KEY'", OPT_STR, OFF(api_key), 0, 0},
	{"api-key-generation-only", NULL,
	 "require --api-key on /v1/completions and /v1/chat/completions only", OPT_FLAG,
	 OFF(api_key_generation_only), 0, 0},
	{"flavor", "NAME", "vllm, sglang, llamacpp or tgi: metric names and routes (default vllm)",
	 OPT_FLAVOR, OFF(flavor), 0, 0},
	{"server-version", "V", "version string /version reports", OPT_STR, OFF(server_version), 0, 0},
	{"max-model-len", "TOKENS", "longest prompt + output (default 128000; 8K = 8192)",
	 OPT_TOKENS, OFF(max_model_len), 1, 1e9},
	{"kv-capacity", "TOKENS", "KV cache size in tokens (default 8912896 = 128*(64K+4K))",
	 OPT_TOKENS, OFF(kv_capacity), 16, 1e10},
	{"block-size", "N", "KV block size in tokens (default 16)", OPT_INT, OFF(block_size), 1, 1024},
	{"max-num-seqs", "N", "most requests running at once (default 256)", OPT_INT,
	 OFF(max_num_seqs), 1, 65536},
	{"max-num-batched-tokens", "N", "token budget per step (default 8192)", OPT_INT,
	 OFF(max_batched_tokens), 1, 1e7},
	{"stream-interval", "K", "send a chunk every K tokens (default 1)", OPT_INT,
	 OFF(stream_interval), 1, 1e6},
	{"merge", "N", "output loop runs once every N steps: N tokens per chunk (default 1)",
	 OPT_INT, OFF(merge_steps), 1, 1e6},
	{"no-prefix-caching", NULL, "disable the prefix cache", OPT_FLAG, OFF(prefix_caching), 0, 0},
	{"eos-after", "N", "output length without ignore_eos (default 256)", OPT_INT,
	 OFF(eos_after), 1, 1e9},
	{"reasoning", "N", "chat: stream the first N output tokens as reasoning (default 0)",
	 OPT_INT, OFF(reasoning), 0, 1e9},
	{"reasoning-field", "NAME", "delta member of the reasoning: reasoning_content (default) or "
	 "reasoning", OPT_STR, OFF(reasoning_field), 0, 0},
	{"spec-draft", "K", "speculative decoding: K draft tokens per step (default 0: off)",
	 OPT_INT, OFF(spec_draft), 0, 64},
	{"spec-accept", "P", "speculative decoding: each draft token accepted with probability P "
	 "(default 0.7; seeded by --seed)", OPT_DOUBLE, OFF(spec_accept), 0, 1},
	{"close-every", "N", "every Nth generation reply closes its connection (default 0: never)",
	 OPT_INT, OFF(close_every), 0, 1e9},
	{"silent-close", "N", "every Nth streamed reply says keep-alive, then its connection is "
	 "closed (default 1 with --flavor llamacpp, else 0)", OPT_INT, OFF(silent_close), 0, 1e9},
	{"step-base-ms", "MS", "parametric: fixed cost of a decode step (default 0.9)", OPT_DOUBLE,
	 OFF(step_base_ms), 0, 1e6},
	{"per-seq-ms", "MS", "parametric: cost per decoding sequence (default 0.02)", OPT_DOUBLE,
	 OFF(per_seq_ms), 0, 1e6},
	{"per-ctx-token-ns", "NS", "parametric: cost per context token held (default 2)",
	 OPT_DOUBLE, OFF(per_ctx_token_ns), 0, 1e9},
	{"prefill-tok-s", "R", "parametric: prefill rate, tokens/s (default 150000)", OPT_DOUBLE,
	 OFF(prefill_tok_s), 1, 1e12},
	{"profile", "CSV", "calibrate speed from a seed-matrix profile", OPT_STR,
	 OFF(profile_path), 0, 0},
	{"truth", "FILE", "write the ground-truth log (formats/sim-truth-log.md)", OPT_STR,
	 OFF(truth_path), 0, 0},
	{"fault", "SPEC", "inject a fault, KIND[:S]@rate=P|req=N|every=N[,after=T]; repeatable",
	 OPT_FAULT, 0, 0, 0},
	{"seed", "N", "seed for rate faults (default 1)", OPT_U64, OFF(seed), 0, 0},
	{"max-runtime", "S", "stop by itself after S seconds (default: never)", OPT_DOUBLE,
	 OFF(max_runtime_s), 0, 1e9},
	{"help", NULL, "print this help and exit", OPT_FLAG, 0, 0, 0},
	{"version", NULL, "print the version and exit", OPT_FLAG, 0, 0, 0},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: tokentrace-sim [options]\n"
		   "A simulated LLM inference server on loopback (docs/sim.md).\n"
		   "Prints 'tokentrace-sim listening on http://HOST:PORT' once it listens.\n\n");
	for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
		char left[64];
		snprintf(left, sizeof left, "--%s%s%s", opts[i].name, opts[i].arg ? " " : "",
			 opts[i].arg ? opts[i].arg : "");
		fprintf(f, "  %-32s %s\n", left, opts[i].help);
	}
}

static void defaults(struct sim_config *c)
{
	memset(c, 0, sizeof *c);
	c->host = "127.0.0.1";
	c->port = 8000;
	c->model = "sim";
	c->flavor = FLAVOR_VLLM;
	c->max_model_len = 128000;
	c->kv_capacity = 128 * (65536 + 4096);
	c->block_size = 16;
	c->max_num_seqs = 256;
	c->max_batched_tokens = 8192;
	c->stream_interval = 1;
	c->merge_steps = 1;
	c->spec_accept = 0.7;
	c->prefix_caching = 1;
	c->eos_after = 256;
	c->silent_close = -1;
	c->step_base_ms = 0.9;
	c->per_seq_ms = 0.02;
	c->per_ctx_token_ns = 2.0;
	c->prefill_tok_s = 150000;
	c->seed = 1;
}

static int bad(const char *name, const char *val, const char *what)
{
	fprintf(stderr, "tokentrace-sim: error: --%s: '%s' is not %s\n", name, val, what);
	return -1;
}

static int set_opt(struct sim_config *c, const struct opt *o, const char *val)
{
	char *base = (char *)c, *end;
	switch (o->kind) {
	case OPT_STR:
		if (!*val)
			return bad(o->name, val, "a non-empty value");
		*(const char **)(base + o->off) = val;
		return 0;
	case OPT_INT: {
		errno = 0;
		long v = strtol(val, &end, 10);
		if (!*val || *end || errno || v < o->lo || v > o->hi) {
			char what[96];
			snprintf(what, sizeof what, "a whole number from %.0f to %.0f", o->lo, o->hi);
			return bad(o->name, val, what);
		}
		*(int *)(base + o->off) = (int)v;
		return 0;
	}
	case OPT_TOKENS: {
		int64_t v = tt_parse_tokens(val);
		if (v < o->lo || (double)v > o->hi)
			return bad(o->name, val, "a token count like 131072 or 128K");
		*(int64_t *)(base + o->off) = v;
		return 0;
	}
	case OPT_DOUBLE: {
		errno = 0;
		double v = strtod(val, &end);
		if (!*val || *end || errno || !(v >= o->lo) || v > o->hi) {
			char what[96];
			snprintf(what, sizeof what, "a number from %g to %g", o->lo, o->hi);
			return bad(o->name, val, what);
		}
		*(double *)(base + o->off) = v;
		return 0;
	}
	case OPT_U64: {
		errno = 0;
		unsigned long long v = strtoull(val, &end, 10);
		if (!*val || *end || errno || *val == '-')
			return bad(o->name, val, "a whole number");
		*(uint64_t *)(base + o->off) = v;
		return 0;
	}
	case OPT_FLAVOR:
		if (!strcmp(val, "vllm"))
			c->flavor = FLAVOR_VLLM;
		else if (!strcmp(val, "sglang"))
			c->flavor = FLAVOR_SGLANG;
		else if (!strcmp(val, "llamacpp"))
			c->flavor = FLAVOR_LLAMACPP;
		else if (!strcmp(val, "tgi"))
			c->flavor = FLAVOR_TGI;
		else
			return bad(o->name, val, "one of vllm, sglang, llamacpp, tgi");
		return 0;
	case OPT_FAULT: {
		char err[512];
		if (c->nfaults == SIM_MAX_FAULTS) {
			fprintf(stderr, "tokentrace-sim: error: --fault: at most %d faults\n",
				SIM_MAX_FAULTS);
			return -1;
		}
		if (fault_parse(val, &c->faults[c->nfaults], err, sizeof err)) {
			fprintf(stderr, "tokentrace-sim: error: --fault: %s\n", err);
			return -1;
		}
		c->nfaults++;
		return 0;
	}
	case OPT_FLAG:
		break;
	}
	return 0;
}

/* Returns 0 to run, 1 to exit 0 (help, version), -1 on a bad command line. */
static int parse_args(struct sim_config *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		char name[64];
		size_t k;

		if (strncmp(a, "--", 2) || !a[2]) {
			fprintf(stderr, "tokentrace-sim: error: unexpected argument '%s' "
				"(options start with --; see --help)\n", a);
			return -1;
		}
		a += 2;
		const char *eq = strchr(a, '=');
		size_t nl = eq ? (size_t)(eq - a) : strlen(a);
		if (nl >= sizeof name)
			nl = sizeof name - 1;
		memcpy(name, a, nl);
		name[nl] = '\0';
		for (k = 0; k < sizeof opts / sizeof opts[0]; k++)
			if (!strcmp(opts[k].name, name))
				break;
		if (k == sizeof opts / sizeof opts[0]) {
			fprintf(stderr, "tokentrace-sim: error: unknown option '--%s' (see --help)\n",
				name);
			return -1;
		}
		const struct opt *o = &opts[k];
		if (o->kind == OPT_FLAG) {
			if (eq) {
				fprintf(stderr, "tokentrace-sim: error: --%s takes no value\n", name);
				return -1;
			}
			if (!strcmp(name, "help")) {
				usage(stdout);
				return 1;
			}
			if (!strcmp(name, "version")) {
				printf("tokentrace-sim %s\n", tt_version());
				return 1;
			}
			if (!strcmp(name, "no-prefix-caching"))
				c->prefix_caching = 0;
			if (!strcmp(name, "api-key-generation-only"))
				c->api_key_generation_only = 1;
			continue;
		}
		if (eq) {
			val = eq + 1;
		} else {
			if (i + 1 >= argc) {
				fprintf(stderr, "tokentrace-sim: error: --%s needs a value (%s)\n",
					name, o->arg);
				return -1;
			}
			val = argv[++i];
		}
		if (set_opt(c, o, val))
			return -1;
	}
	return 0;
}

static int check_config(struct sim_config *c)
{
	if (c->max_model_len > c->kv_capacity) {
		fprintf(stderr, "tokentrace-sim: error: --max-model-len %lld exceeds --kv-capacity "
			"%lld: one request could never fit\n", (long long)c->max_model_len,
			(long long)c->kv_capacity);
		return -1;
	}
	if (c->kv_capacity < c->block_size) {
		fprintf(stderr, "tokentrace-sim: error: --kv-capacity is smaller than one block\n");
		return -1;
	}
	for (const char *p = c->model; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr("._-/:@+", *p))) {
			fprintf(stderr, "tokentrace-sim: error: --model: '%s' has '%c'; use letters, "
				"digits and ._-/:@+\n", c->model, *p);
			return -1;
		}
	if (!c->reasoning_field)
		c->reasoning_field = "reasoning_content";
	if (strcmp(c->reasoning_field, "reasoning_content") && strcmp(c->reasoning_field, "reasoning")) {
		fprintf(stderr, "tokentrace-sim: error: --reasoning-field: '%s' is not "
			"reasoning_content or reasoning\n", c->reasoning_field);
		return -1;
	}
	if (c->silent_close < 0)
		c->silent_close = c->flavor == FLAVOR_LLAMACPP;
	if (!c->server_version)
		c->server_version = c->flavor == FLAVOR_SGLANG ? "0.5.3-sim" :
				    c->flavor == FLAVOR_LLAMACPP ? "b6000-sim" :
				    c->flavor == FLAVOR_TGI ? "3.3.0-sim" : "0.11.0-sim";
	return 0;
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	struct sim_server *srv = arg;
	(void)what;
	if (fd >= 0)
		fprintf(stderr, "tokentrace-sim: signal %d, stopping\n", (int)fd);
	else
		fprintf(stderr, "tokentrace-sim: --max-runtime reached, stopping\n");
	event_base_loopexit(srv->base, NULL);
}

int main(int argc, char **argv)
{
	struct sim_server *srv = calloc(1, sizeof *srv);
	struct event_config *ecfg = NULL;
	char err[1024];
	int rc = 2, pr;

	if (!srv) {
		fprintf(stderr, "tokentrace-sim: error: out of memory\n");
		return 1;
	}
	defaults(&srv->cfg);
	pr = parse_args(&srv->cfg, argc, argv);
	if (pr) {
		rc = pr > 0 ? 0 : 2;
		goto cleanup;
	}
	if (check_config(&srv->cfg))
		goto cleanup;
	if (srv->cfg.profile_path) {
		struct tt_error terr;
		if (tt_failed(tt_profile_load(srv->cfg.profile_path, &srv->cfg.profile, &terr))) {
			fprintf(stderr, "tokentrace-sim: error: --profile: %s\n", terr.msg);
			goto cleanup;
		}
	}
	rc = 1;
	signal(SIGPIPE, SIG_IGN);
#ifdef PR_SET_TIMERSLACK
	/* the kernel's default 50 us of timer slack would be step lateness */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
	srv->rng = srv->cfg.seed * 0x9E3779B97F4A7C15ULL + 1;
	srv->start_unix = (double)time(NULL);
	metrics_init(&srv->m, srv->cfg.flavor);
	ecfg = event_config_new();
	if (ecfg) {
		/* sub-millisecond steps need timerfd, not epoll's ms timeout */
		struct timeval slice = {0, 25};
		event_config_set_flag(ecfg, EVENT_BASE_FLAG_PRECISE_TIMER);
		event_config_set_max_dispatch_interval(ecfg, &slice, -1, 1);
		srv->base = event_base_new_with_config(ecfg);
	}
	if (!srv->base || event_base_priority_init(srv->base, 2)) {
		fprintf(stderr, "tokentrace-sim: error: cannot create the event loop\n");
		goto cleanup;
	}
	if (truth_open(&srv->truth, srv->cfg.truth_path, err, sizeof err) ||
	    engine_init(&srv->eng, &srv->cfg, srv->base, err, sizeof err) ||
	    api_start(srv, err, sizeof err)) {
		fprintf(stderr, "tokentrace-sim: error: %s\n", err);
		goto cleanup;
	}
	srv->sigterm_ev = evsignal_new(srv->base, SIGTERM, on_stop, srv);
	srv->sigint_ev = evsignal_new(srv->base, SIGINT, on_stop, srv);
	if (!srv->sigterm_ev || !srv->sigint_ev || evsignal_add(srv->sigterm_ev, NULL) ||
	    evsignal_add(srv->sigint_ev, NULL)) {
		fprintf(stderr, "tokentrace-sim: error: cannot install signal handlers\n");
		goto cleanup;
	}
	if (srv->cfg.max_runtime_s > 0) {
		double s = srv->cfg.max_runtime_s;
		struct timeval tv = {(time_t)s, (suseconds_t)((s - floor(s)) * 1e6)};
		srv->runtime_ev = evtimer_new(srv->base, on_stop, srv);
		if (!srv->runtime_ev || evtimer_add(srv->runtime_ev, &tv)) {
			fprintf(stderr, "tokentrace-sim: error: cannot arm --max-runtime\n");
			goto cleanup;
		}
	}
	/* an IPv6 address goes in brackets in a URL (RFC 3986) */
	if (strchr(srv->cfg.host, ':'))
		printf("tokentrace-sim listening on http://[%s]:%d\n", srv->cfg.host, srv->port);
	else
		printf("tokentrace-sim listening on http://%s:%d\n", srv->cfg.host, srv->port);
	fflush(stdout);
	if (event_base_dispatch(srv->base) < 0) {
		fprintf(stderr, "tokentrace-sim: error: event loop failed\n");
		goto cleanup;
	}
	rc = 0;
cleanup:
	{
		/* A second SIGTERM (or Ctrl-C) during the shutdown must not kill
		 * the process before the truth log is flushed: once the signal
		 * events are freed, libevent restores the default action. */
		sigset_t stop;
		sigemptyset(&stop);
		sigaddset(&stop, SIGTERM);
		sigaddset(&stop, SIGINT);
		sigprocmask(SIG_BLOCK, &stop, NULL);
	}
	api_stop(srv);
	truth_close(&srv->truth);
	engine_release(&srv->eng);
	metrics_release(&srv->m);
	if (srv->sigterm_ev)
		event_free(srv->sigterm_ev);
	if (srv->sigint_ev)
		event_free(srv->sigint_ev);
	if (srv->runtime_ev)
		event_free(srv->runtime_ev);
	if (srv->base)
		event_base_free(srv->base);
	if (ecfg)
		event_config_free(ecfg);
	tt_profile_free(srv->cfg.profile);
	free(srv);
	return rc;
}
