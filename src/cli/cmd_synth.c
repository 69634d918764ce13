/* tokentrace synth --profile CSV -o RUN [--seed N] [--scale K] [--multi-rate R]
 *                  [--error-rate R] [--max-tokens N] [--model NAME] [--level L] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/profile.h"
#include "tokentrace/synth.h"

#include "cli_opts.h"
#include "commands.h"

enum {
	O_PROFILE = 1, O_OUTPUT, O_SEED, O_SCALE, O_MULTI_RATE, O_ERROR_RATE, O_MAX_TOKENS,
	O_MODEL, O_NOTE, O_LEVEL, O_QUIET
};

static const struct cli_opt options[] = {
	{O_PROFILE, 0, "profile", "CSV", "profile to reproduce (e.g. fixtures/profiles/seed-matrix.csv)", 0},
	{O_OUTPUT, 'o', "output", "RUN", "run directory to create (must not exist or be empty)", 0},
	{O_SEED, 0, "seed", "N", "jitter seed (default 1)", 0},
	{O_SCALE, 0, "scale", "K", "make every window K times longer: K times the tokens (default 1)", 0},
	{O_MULTI_RATE, 0, "multi-rate", "R", "share of chunks carrying 2 tokens, 0..1 (default 0.05)", 0},
	{O_ERROR_RATE, 0, "error-rate", "R", "share of measured requests that fail mid-stream (default 0)", 0},
	{O_MAX_TOKENS, 0, "max-tokens", "N", "output tokens per request (default 4096)", 0},
	{O_MODEL, 0, "model", "NAME", "model name in the manifest (default synthetic-model)", 0},
	{O_NOTE, 0, "note", "KEY=VALUE", "a manifest note (gpu, vram, launch_command, ...); repeatable", 0},
	{O_LEVEL, 0, "level", "L", "zstd level for the traces (default 3)", 0},
	{O_QUIET, 'q', "quiet", NULL, "print nothing on success", 0},
	CLI_HELP_ENTRY,
};

static const struct cli_cmd synth_cmd = {
	"synth",
	"usage: tokentrace synth --profile CSV -o RUN [options]\n"
	"\n"
	"Write a synthetic run whose traces reproduce, under docs/metrics.md's\n"
	"definitions, the figures of a profile CSV (formats/profile-csv.md).\n"
	"\n",
	NULL,
	"\n"
	"Exit status: 0 written; 1 the profile could not be read or the run not\n"
	"written; 2 usage error.\n",
	22, options, sizeof options / sizeof *options};

int cmd_synth(int argc, char **argv)
{
	const char *profile = NULL, *out = NULL;
	struct tt_synth_opts o;
	struct tt_profile *p = NULL;
	struct tt_error err;
	uint64_t bytes = 0;
	int quiet = 0, id;
	struct cli_iter it;
	const char *v;
	double d;
	const char *notes[64];
	size_t n_notes = 0;

	tt_synth_opts_init(&o);
	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&synth_cmd, &it, &v)) != CLI_END) {
		const char *a = it.opt;

		switch (id) {
		case CLI_HELP:
			return 0;
		case CLI_BAD:
			return 2;
		case CLI_ARG:
			cli_error("synth: unexpected argument '%s' (see 'tokentrace synth --help')", v);
			return 2;
		case O_PROFILE:
			profile = v;
			break;
		case O_OUTPUT:
			out = v;
			break;
		case O_SEED:
			if (cli_number(a, v, 0, 9007199254740992.0, &d))
				return 2;
			o.seed = (uint64_t)d;
			break;
		case O_SCALE:
			if (cli_number(a, v, 0.01, 1000, &o.scale))
				return 2;
			break;
		case O_MULTI_RATE:
			if (cli_number(a, v, 0, 1, &o.multi_rate))
				return 2;
			break;
		case O_ERROR_RATE:
			if (cli_number(a, v, 0, 1, &o.error_rate))
				return 2;
			break;
		case O_MAX_TOKENS:
			if (cli_number(a, v, 2, 1e7, &d))
				return 2;
			o.max_tokens = (int64_t)d;
			break;
		case O_LEVEL:
			if (cli_number(a, v, 1, 22, &d))
				return 2;
			o.level = (int)d;
			break;
		case O_MODEL:
			o.model = v;
			break;
		case O_NOTE:
			if (n_notes == sizeof notes / sizeof *notes) {
				cli_error("at most %zu --note options", sizeof notes / sizeof *notes);
				return 2;
			}
			if (!strchr(v, '=') || v[0] == '=') {
				cli_error("--note: '%s' is not KEY=VALUE", v);
				return 2;
			}
			notes[n_notes++] = v;
			break;
		case O_QUIET:
			quiet = 1;
			break;
		}
	}
	if (!profile || !out) {
		cli_error("synth needs --profile CSV and -o RUN (see 'tokentrace synth --help')");
		return 2;
	}
	o.notes = notes;
	o.n_notes = n_notes;
	tt_error_clear(&err);
	if (tt_failed(tt_profile_load(profile, &p, &err))) {
		cli_error("%s", err.msg);
		return 1;
	}
	if (tt_failed(tt_synth_run(p, out, &o, &bytes, &err))) {
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
