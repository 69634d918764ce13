/* tokentrace synth --profile CSV -o RUN [--seed N] [--scale K] [--multi-rate R]
 *                  [--error-rate R] [--max-tokens N] [--model NAME] [--level L] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/profile.h"
#include "tokentrace/synth.h"

#include "commands.h"

static const char usage_text[] =
	"usage: tokentrace synth --profile CSV -o RUN [options]\n"
	"\n"
	"Write a synthetic run whose traces reproduce, under docs/metrics.md's\n"
	"definitions, the figures of a profile CSV (formats/profile-csv.md).\n"
	"\n"
	"  --profile CSV       profile to reproduce (e.g. fixtures/profiles/seed-matrix.csv)\n"
	"  -o, --output RUN    run directory to create (must not exist or be empty)\n"
	"  --seed N            jitter seed (default 1)\n"
	"  --scale K           make every window K times longer: K times the tokens (default 1)\n"
	"  --multi-rate R      share of chunks carrying 2 tokens, 0..1 (default 0.05)\n"
	"  --error-rate R      share of measured requests that fail mid-stream (default 0)\n"
	"  --max-tokens N      output tokens per request (default 4096)\n"
	"  --model NAME        model name in the manifest (default synthetic-model)\n"
	"  --note KEY=VALUE    a manifest note (gpu, vram, launch_command, ...); repeatable\n"
	"  --level L           zstd level for the traces (default 3)\n"
	"  -q, --quiet         print nothing on success\n"
	"  -h, --help          show this help\n"
	"\n"
	"Exit status: 0 written; 1 the profile could not be read or the run not\n"
	"written; 2 usage error.\n";

static int parse_double(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	double d;

	if (!v) {
		cli_error("option '%s' needs a value", opt);
		return -1;
	}
	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno || d < lo || d > hi) {
		cli_error("option '%s': '%s' is not a number in [%g, %g]", opt, v, lo, hi);
		return -1;
	}
	*out = d;
	return 0;
}

int cmd_synth(int argc, char **argv)
{
	const char *profile = NULL, *out = NULL;
	struct tt_synth_opts o;
	struct tt_profile *p = NULL;
	struct tt_error err;
	uint64_t bytes = 0;
	int quiet = 0;
	double d;
	const char *notes[64];
	size_t n_notes = 0;

	tt_synth_opts_init(&o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (!strcmp(a, "--profile")) {
			if (!v)
				goto missing;
			profile = v;
			i++;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (!v)
				goto missing;
			out = v;
			i++;
		} else if (!strcmp(a, "--seed")) {
			if (parse_double(a, v, 0, 9007199254740992.0, &d))
				return 2;
			o.seed = (uint64_t)d;
			i++;
		} else if (!strcmp(a, "--scale")) {
			if (parse_double(a, v, 0.01, 1000, &o.scale))
				return 2;
			i++;
		} else if (!strcmp(a, "--multi-rate")) {
			if (parse_double(a, v, 0, 1, &o.multi_rate))
				return 2;
			i++;
		} else if (!strcmp(a, "--error-rate")) {
			if (parse_double(a, v, 0, 1, &o.error_rate))
				return 2;
			i++;
		} else if (!strcmp(a, "--max-tokens")) {
			if (parse_double(a, v, 2, 1e7, &d))
				return 2;
			o.max_tokens = (int64_t)d;
			i++;
		} else if (!strcmp(a, "--level")) {
			if (parse_double(a, v, 1, 22, &d))
				return 2;
			o.level = (int)d;
			i++;
		} else if (!strcmp(a, "--model")) {
			if (!v)
				goto missing;
			o.model = v;
			i++;
		} else if (!strcmp(a, "--note")) {
			if (!v)
				goto missing;
			if (n_notes == sizeof notes / sizeof *notes) {
				cli_error("at most %zu --note options", sizeof notes / sizeof *notes);
				return 2;
			}
			if (!strchr(v, '=') || v[0] == '=') {
				cli_error("--note: '%s' is not KEY=VALUE", v);
				return 2;
			}
			notes[n_notes++] = v;
			i++;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			quiet = 1;
		} else {
			cli_error("synth: unknown option '%s' (see 'tokentrace synth --help')", a);
			return 2;
		}
		continue;
missing:
		cli_error("option '%s' needs a value", a);
		return 2;
	}
	if (!profile || !out) {
		cli_error("synth needs --profile CSV and -o RUN (see 'tokentrace synth --help')");
		return 2;
	}
	o.notes = notes;
	o.n_notes = n_notes;
	tt_error_clear(&err);
	if (tt_profile_load(profile, &p, &err)) {
		cli_error("%s", err.msg);
		return 1;
	}
	if (tt_synth_run(p, out, &o, &bytes, &err)) {
		cli_error("%s", err.msg);
		tt_profile_free(p);
		return 1;
	}
	tt_profile_free(p);
	if (!quiet)
		fprintf(stderr, "tokentrace: wrote synthetic run '%s' (%.1f MB of traces)\n", out,
			(double)bytes / 1e6);
	return 0;
}
