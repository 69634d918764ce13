/* tokentrace trend RUN... [options]
 *
 * A history of runs: every cell x figure as a series across the runs in
 * order, and the change points of each (docs/trend.md); exits 1 when the
 * gate (--fail-if-regressed) fails, 2 on errors, 3 when runs were skipped
 * or damaged. */
#define _GNU_SOURCE /* strverscmp */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"
#include "tokentrace/trend.h"
#include "tokentrace/units.h"

#include "cli_opts.h"
#include "commands.h"

enum {
	O_FORMAT = 1, O_OUTPUT, O_ORDER, O_KEY, O_ALPHA, O_PERMUTATIONS, O_SEED, O_MIN_SIZE,
	O_MIN_CHANGE, O_TAIL, O_FAIL_IF_REGRESSED, O_SKIP_FIRST, O_WINDOW, O_CATALOG, O_NO_CATALOG,
	O_QUIET
};

static const struct cli_opt options[] = {
	{O_FORMAT, 'f', "format", "F", "term (default on a terminal), md (default otherwise),\n"
				       "csv, json, html (a chart of each series that changed)", 0},
	{O_OUTPUT, 'o', "output", "FILE", "write to FILE instead of standard output", 0},
	{O_ORDER, 0, "order", "BY", "start (default: the runs' start times), key (--key),\n"
				   "or given (as named on the command line)", 0},
	{O_KEY, 0, "key", "NAME", "order by NAME: engine_version, engine, model, created,\n"
				 "tool_version or a run note (build, commit);\n"
				 "versions compare part by part (0.9 < 0.10)", 0},
	{O_ALPHA, 0, "alpha", "A", "significance of each change point's test (default 0.01)", 0},
	{O_PERMUTATIONS, 0, "permutations", "N", "permutations per test (default 199)", 0},
	{O_SEED, 0, "seed", "N", "permutation seed (default 1)", 0},
	{O_MIN_SIZE, 0, "min-size", "N", "fewest runs at a level, either side of a change\n"
					"(default 3)", 0},
	{O_MIN_CHANGE, 0, "min-change", "PCT", "do not report changes under PCT (default 2%)", 0},
	{O_TAIL, 0, "tail", "P", "tail percentile of TTFT and TBT (default 90)", 0},
	{O_FAIL_IF_REGRESSED, 0, "fail-if-regressed", "PCT",
	 "exit 1 when the newest run is at a level worse by\n"
	 "PCT (e.g. 5%) or more than the level before it", 0},
	{O_SKIP_FIRST, 0, "skip-first", "D", "start each decode window D later (e.g. 5s)", 0},
	{O_WINDOW, 0, "window", "D", "measure at most D of each window (e.g. 10s)", 0},
	{O_CATALOG, 0, "catalog", "FILE", "keep and reuse each run's figures in this SQLite\n"
					 "file (default: FOLDER/tokentrace-catalog.sqlite\n"
					 "when the runs are one folder)", 0},
	{O_NO_CATALOG, 0, "no-catalog", NULL, "analyse every run, use and write no catalog", 0},
	{O_QUIET, 'q', "quiet", NULL, "no summary line on standard error", 0},
	{CLI_OPT_HELP, 'h', "help", NULL, "show this help", 0},
};

static const struct cli_cmd trend_cmd = {
	"trend",
	"usage: tokentrace trend RUN... [options]\n"
	"\n"
	"A history of runs (directories, archives, other tools' files, or folders\n"
	"of them): every cell x figure as a series across the runs, and where its\n"
	"level changed, with the size and significance of each change and the run\n"
	"(and version) where the new level begins.  Method: docs/trend.md.\n"
	"\n",
	NULL,
	"\n"
	"Exit status: 0 done (and the gate passed); 1 --fail-if-regressed failed;\n"
	"2 error (usage, fewer than two runs read); 3 some runs could not be read\n"
	"or had damaged cells, or the catalog could not be used (each named on\n"
	"standard error; the rest is used, the answer is the same).\n",
	25, options, sizeof options / sizeof *options};

static int parse_whole(const char *s, double lo, double hi, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return end == s || *end || errno || *out != floor(*out) || *out < lo || *out > hi ? -1 : 0;
}

struct pathlist {
	char **v;
	size_t n, cap;
};

static int push(struct pathlist *l, const char *p)
{
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		char **g = realloc(l->v, nc * sizeof *g);
		if (!g)
			return -1;
		l->v = g;
		l->cap = nc;
	}
	if (!(l->v[l->n] = strdup(p)))
		return -1;
	l->n++;
	return 0;
}

static int by_version(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* A folder that is not a run (no manifest.json) holds runs: its run
 * directories (with a manifest.json) and files, by name (hidden entries
 * and the catalog left out).  Other paths are runs themselves.  1: the
 * folder holds no run (warned, *skipped counted). */
static int expand(const char *path, struct pathlist *l, size_t *skipped)
{
	char p[4200];
	struct stat st;
	struct dirent *de;
	DIR *d;
	size_t first = l->n;

	snprintf(p, sizeof p, "%s/manifest.json", path);
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || stat(p, &st) == 0)
		return push(l, path);
	if (!(d = opendir(path))) {
		cli_error("trend: cannot read the folder '%s': %s", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || strstr(de->d_name, ".sqlite-") ||
		    (len > 7 && !strcmp(de->d_name + len - 7, ".sqlite")))
			continue;
		snprintf(p, sizeof p, "%s/%s", path, de->d_name);
		if (stat(p, &st) != 0 || (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)))
			continue;
		if (S_ISDIR(st.st_mode)) { /* only run directories */
			char m[4300];
			struct stat ms;
			snprintf(m, sizeof m, "%s/manifest.json", p);
			if (stat(m, &ms) != 0)
				continue;
		}
		if (push(l, p)) {
			closedir(d);
			cli_error("out of memory");
			return -1;
		}
	}
	closedir(d);
	if (l->n == first) {
		cli_warn("trend: '%s' left out: neither a run (no manifest.json) nor a folder "
			 "of runs", path);
		(*skipped)++;
		return 1;
	}
	qsort(l->v + first, l->n - first, sizeof *l->v, by_version);
	return 0;
}

int cmd_trend(int argc, char **argv)
{
	const char *out = NULL, *fmt = NULL, *order = NULL, *catalog = NULL;
	char default_catalog[4200];
	struct tt_trend_catalog *cat = NULL;
	int no_catalog = 0, cat_warned = 0;
	size_t from_catalog = 0;
	struct tt_analysis_opts ao;
	struct tt_trend_opts to;
	struct tt_trend *t = NULL;
	struct tt_trend_result *res = NULL;
	struct tt_render_opts ro;
	struct pathlist args = {0}, runs = {0};
	struct tt_error err;
	struct tt_buf buf;
	double gate = -1;
	int f, status = 2, quiet = 0, id;
	size_t skipped = 0, damaged = 0;
	struct cli_iter it;
	const char *v;

	tt_analysis_opts_init(&ao);
	tt_trend_opts_init(&to);
	tt_buf_init(&buf, 0);
	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&trend_cmd, &it, &v)) != CLI_END) {
		double x;

		switch (id) {
		case CLI_HELP:
			status = 0;
			goto cleanup;
		case CLI_BAD:
			goto cleanup;
		case CLI_ARG:
			if (push(&args, v)) {
				cli_error("out of memory");
				goto cleanup;
			}
			break;
		case O_QUIET:
			quiet = 1;
			break;
		case O_CATALOG:
			catalog = v;
			break;
		case O_NO_CATALOG:
			no_catalog = 1;
			break;
		case O_FORMAT:
			fmt = v;
			break;
		case O_OUTPUT:
			out = v;
			break;
		case O_ORDER:
			order = v;
			if (!strcmp(v, "start"))
				to.order = TT_TREND_ORDER_START;
			else if (!strcmp(v, "given"))
				to.order = TT_TREND_ORDER_GIVEN;
			else if (!strcmp(v, "key"))
				to.order = TT_TREND_ORDER_KEY;
			else {
				cli_error("--order: '%s' is not start, key or given", v);
				goto cleanup;
			}
			break;
		case O_KEY:
			if (!v[0] || strlen(v) >= sizeof to.key) {
				cli_error("--key: '%s' is not a key name of 1 to %zu bytes", v,
					  sizeof to.key - 1);
				goto cleanup;
			}
			snprintf(to.key, sizeof to.key, "%s", v);
			break;
		case O_ALPHA:
			if (cli_number("--alpha", v, 1e-6, 0.5, &x))
				goto cleanup;
			if (!(x < 0.5)) {
				cli_error("--alpha: '%s' is not a rate in (0, 0.5), e.g. 0.01", v);
				goto cleanup;
			}
			to.alpha = x;
			break;
		case O_PERMUTATIONS:
			if (parse_whole(v, 19, 100000, &x)) {
				cli_error("--permutations: '%s' is not a whole number in 19..100000", v);
				goto cleanup;
			}
			to.permutations = (unsigned)x;
			break;
		case O_SEED: {
			char *end;
			errno = 0;
			to.seed = strtoull(v, &end, 10);
			if (end == v || *end || errno || v[0] == '-') {
				cli_error("--seed: '%s' is not a whole number", v);
				goto cleanup;
			}
			break;
		}
		case O_MIN_SIZE:
			if (parse_whole(v, 2, 1000, &x)) {
				cli_error("--min-size: '%s' is not a whole number in 2..1000", v);
				goto cleanup;
			}
			to.min_size = (unsigned)x;
			break;
		case O_MIN_CHANGE:
			if ((to.min_change = cli_pct(v)) < 0) {
				cli_error("--min-change: '%s' is not a percentage (e.g. 2%%)", v);
				goto cleanup;
			}
			break;
		case O_TAIL:
			if (cli_number("--tail", v, 50, 100, &x))
				goto cleanup;
			if (!(x > 50 && x < 100)) {
				cli_error("--tail: '%s' is not a percentile in (50, 100), e.g. 90", v);
				goto cleanup;
			}
			to.tail = x;
			break;
		case O_FAIL_IF_REGRESSED:
			if ((gate = cli_pct(v)) < 0) {
				cli_error("--fail-if-regressed: '%s' is not a percentage (e.g. 5%%)", v);
				goto cleanup;
			}
			break;
		case O_SKIP_FIRST:
			if (cli_duration("--skip-first", v, "5s", &ao.skip_first_s))
				goto cleanup;
			break;
		case O_WINDOW:
			if ((ao.window_s = tt_parse_duration(v)) <= 0) {
				cli_error("--window: '%s' is not a positive duration (e.g. 10s)", v);
				goto cleanup;
			}
			break;
		}
	}
	if (to.key[0] && !order)
		to.order = TT_TREND_ORDER_KEY;
	if (to.order == TT_TREND_ORDER_KEY && !to.key[0]) {
		cli_error("--order key needs --key NAME (e.g. --key engine_version)");
		goto cleanup;
	}
	if (to.key[0] && to.order != TT_TREND_ORDER_KEY) {
		cli_error("--key names the order's key: it goes with --order key, not --order %s",
			  order);
		goto cleanup;
	}
	if (catalog && no_catalog) {
		cli_error("--catalog and --no-catalog: choose one");
		goto cleanup;
	}
	if (!args.n) {
		cli_error("trend needs runs (see 'tokentrace trend --help')");
		goto cleanup;
	}
	if (!fmt)
		fmt = !out && isatty(STDOUT_FILENO) ? "term" : "md";
	f = tt_format_parse(fmt);
	if (f < 0 || f == TT_FORMAT_PDF) {
		cli_error("%s format '%s' for trend (term, md, csv, json, html)",
			  f == TT_FORMAT_PDF ? "not yet a" : "unknown", fmt);
		goto cleanup;
	}
	for (size_t i = 0; i < args.n; i++)
		if (expand(args.v[i], &runs, &skipped) < 0)
			goto cleanup;
	tt_error_clear(&err);
	if (tt_failed(tt_trend_create(&to, &t, &err))) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	/* the catalog: named, or beside the runs of the one folder given */
	if (!catalog && !no_catalog && args.n == 1 && (runs.n != 1 || strcmp(runs.v[0], args.v[0]))) {
		snprintf(default_catalog, sizeof default_catalog, "%s/tokentrace-catalog.sqlite",
			 args.v[0]);
		catalog = default_catalog;
	}
	if (catalog && !no_catalog && tt_failed(tt_trend_catalog_open(catalog, &cat, &err))) {
		/* the answer is the same without it: only slower */
		cli_warn("trend: catalog not used: %s", err.msg);
		cat_warned = 1;
	}
	for (size_t i = 0; i < runs.n; i++) {
		struct tt_run *run = NULL;
		struct tt_report *rep = NULL;
		struct tt_analysis_opts o;
		enum tt_code rc;
		int warned = 0;
		char hash[65];

		hash[0] = 0;
		tt_error_clear(&err);
		if (cat && !tt_failed(tt_trend_catalog_hash(cat, runs.v[i], hash, &err))) {
			rc = tt_trend_catalog_lookup(cat, t, hash, runs.v[i], &ao, &err);
			if (rc == TT_OK) {
				from_catalog++;
				continue;
			}
			if (tt_failed(rc)) {
				cli_error("trend: run '%s': %s", runs.v[i], err.msg);
				goto cleanup;
			}
		} else {
			hash[0] = 0; /* not hashed: cli_open_run names the problem */
		}
		/* a run that cannot be read is left out of the history, named */
		if (cli_open_run(runs.v[i], "trend: run", &run, &warned)) {
			skipped++;
			continue;
		}
		tt_error_clear(&err);
		tt_trend_analysis_opts(t, &ao, &o);
		rc = tt_analyze(run, &o, &rep, &err);
		tt_run_free(run);
		if (!tt_failed(rc)) {
			struct tt_error e2;
			tt_error_clear(&e2);
			if (tt_failed(tt_trend_add_report(t, rep, runs.v[i], &e2))) {
				err = e2;
				rc = TT_FAILED;
			} else if (rc == TT_OK && !warned && cat && hash[0] &&
				   tt_failed(tt_trend_catalog_store(cat, t, hash, rep, &ao, &e2))) {
				/* only clean runs are stored: a damaged one is
				 * analysed (and warned about) every time */
				cli_warn("trend: run '%s' not stored: %s", runs.v[i], e2.msg);
				cat_warned = 1;
			}
		}
		tt_report_free(rep);
		if (rc == TT_FATAL || (tt_failed(rc) && err.kind == TT_ENOMEM)) {
			cli_error("trend: run '%s': %s", runs.v[i], err.msg);
			goto cleanup;
		}
		if (tt_failed(rc)) {
			cli_warn("trend: run '%s' left out: %s", runs.v[i], err.msg);
			skipped++;
			continue;
		}
		if (rc == TT_WARN || warned) {
			if (rc == TT_WARN)
				cli_warn("trend: run '%s': %s", runs.v[i], err.msg);
			damaged++;
		}
	}
	if (tt_trend_runs(t) < 2) {
		cli_error("trend needs at least two runs it can read, got %zu of %zu",
			  tt_trend_runs(t), runs.n);
		goto cleanup;
	}
	if (tt_failed(tt_trend_analyze(t, &res, &err))) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	memset(&ro, 0, sizeof ro);
	if (tt_failed(tt_trend_render(res, (enum tt_format)f, &ro, &buf, &err))) {
		cli_error("%s", err.msg);
		goto cleanup;
	}
	if (cli_write_out(out, buf.data ? buf.data : "", buf.len))
		goto cleanup;
	{
		size_t regr = 0, failed = gate >= 0 ? tt_trend_gate(res, gate) : 0;
		for (size_t i = 0; i < res->n_changes; i++)
			regr += res->changes[i].regression != 0;
		if (!quiet) {
			fprintf(stderr, "trend: %zu runs, %zu change point%s (%zu regression%s)",
				res->n_runs, res->n_changes, res->n_changes == 1 ? "" : "s", regr,
				regr == 1 ? "" : "s");
			if (cat)
				fprintf(stderr, "; %zu from the catalog", from_catalog);
			if (skipped || damaged)
				fprintf(stderr, "; %zu run%s left out, %zu with damaged cells",
					skipped, skipped == 1 ? "" : "s", damaged);
			if (gate >= 0)
				fprintf(stderr, "; gate %s: %zu series regressed by %g %% or more at "
					"the newest level", failed ? "FAILED" : "passed", failed, gate);
			fputc('\n', stderr);
		}
		status = failed ? 1 : skipped || damaged || cat_warned ? 3 : 0;
	}
cleanup:
	tt_buf_release(&buf);
	tt_trend_result_free(res);
	tt_trend_free(t);
	tt_trend_catalog_close(cat);
	for (size_t i = 0; i < args.n; i++)
		free(args.v[i]);
	for (size_t i = 0; i < runs.n; i++)
		free(runs.v[i]);
	free(args.v);
	free(runs.v);
	return status;
}
