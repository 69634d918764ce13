/* tokentrace-capture's options: one table (capture_opts.c) from which the
 * command line is parsed and --help is printed; docs/capture.md lists the
 * same options. */
#ifndef TT_CAPTURE_OPTS_H
#define TT_CAPTURE_OPTS_H

#include <stddef.h>
#include <stdint.h>

struct tt_length_bin;

/* --repeat at most: as many runs as a side of a diff takes (TT_DIFF_MAX_RUNS). */
#define CAP_REPEAT_MAX 64

struct cap_opts {
	const char *url;          /* base URL, no trailing slash */
	const char *out;          /* run directory */
	const char *resume;       /* run directory to continue */
	const char *redo;         /* --redo: cells of the resumed run to measure
				   * again (failed, interrupted, a status key, a
				   * cell id; comma-separated); NULL none */
	const char *model;        /* NULL: first of /v1/models */
	const char *api_key;      /* never written anywhere */
	char *key_copy;           /* owned copy of --api-key (the argument is
				   * blanked); wiped by opts_release */
	const char *cacert;       /* CA bundle for https, or NULL: the system's */
	int insecure;             /* https without certificate checks */
	const char *endpoint;     /* "completions" or "chat" */
	const char *prompt_kind;  /* "token_ids", "text" or NULL (auto) */
	const char *cells;        /* subset, comma-separated ids; NULL all */
	const char *order;        /* "context" or "concurrency" */
	const char *server_log;
	int64_t *contexts; size_t n_contexts;
	int *concurrency; size_t n_concurrency;
	int64_t *prefill; size_t n_prefill;
	int64_t prefill_repeats;  /* cold scouts per prefill cell (>= 1) */
	double duration_s;
	int64_t max_tokens;
	uint64_t seed;
	int seed_given;
	double scrape_s;
	double readiness_s;
	double readiness_timeout_s;
	double request_timeout_s;
	double pause_s;
	int64_t repeat;           /* --repeat: the matrix measured this many times,
				   * into RUN/rep-1 .. RUN/rep-N (1: RUN itself) */
	int64_t kv_capacity;      /* -1: detect */
	int quiet;
	char **notes; size_t n_notes; /* "key=value" as given */
	/* open loop (docs/capture.md "Open-loop load") */
	double *rates; size_t n_rates; /* requests/s; replaces the decode cells */
	const char *arrivals;     /* "constant", "poisson", "gamma" */
	double burstiness;        /* gamma shape */
	int64_t out_min, out_max; /* --output-tokens A:B; 0, 0 none (with a
				   * histogram: the range of its bins) */
	struct tt_length_bin *out_bins; /* --output-tokens @FILE (owned); NULL none */
	size_t n_out_bins;
	const char *out_hist_file; /* that FILE's name without directories */
	double warmup_s;          /* schedule before each window */
	double drain_s;           /* after the window */
	int rate_sweep;           /* --rate-sweep */
	const char *slo;          /* --slo: search the highest rate meeting it,
				   * canonical (tt_slo_format) */
	char slo_buf[160];        /* ... held here */
	uint64_t given;           /* bit i: option i of the table was given */
	int no_realtime;          /* --no-realtime: keep the normal priority */
	/* a replayed workload (docs/workloads.md) */
	const char *trace;        /* --trace FILE; NULL none */
	const char *trace_format; /* "auto", "mooncake", "azure" */
	double trace_start_s;     /* slice start, trace time */
	double trace_duration_s;  /* slice length; 0: to the end */
	double speedup;           /* trace times divided by this */
	int64_t output_cap;       /* outputs above this asked as this; 0 none */
	const char *shared_prefix; /* --shared-prefix GROUPS:LEN as given; NULL none */
	int64_t sp_groups, sp_tokens; /* ... parsed */
};

/* The defaults (docs/capture.md, "Options"). */
void opts_init(struct cap_opts *o);
/* Parse the command line into o; *url is the URL argument or NULL.
 * Returns -1 to go on, else the exit status: 0 after --help or --version,
 * 2 for a bad command line (message printed), 1 out of memory. */
int opts_parse(struct cap_opts *o, int argc, char **argv, const char **url);
/* Print "error: ..." and the --help hint; returns 2. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
int usage_error(const char *fmt, ...);
void opts_release(struct cap_opts *o);
/* Whether the option --name was on the command line. */
int opts_given(const struct cap_opts *o, const char *name);

#endif
