/* tokentrace dump RUN [--cell ID] [--scrapes]: the raw records of a run as
 * JSON lines, one request (or scrape) per line, times in ns from the origin. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tokentrace/run.h"

#include "cli_opts.h"
#include "commands.h"

enum { O_CELL = 1, O_SCRAPES };

static const struct cli_opt options[] = {
	{O_CELL, 0, "cell", "ID", "only this cell, e.g. decode-8192x16", 0},
	{O_SCRAPES, 0, "scrapes", NULL, "print the /metrics scrapes too", 0},
	CLI_HELP_ENTRY,
};

static const struct cli_cmd dump_cmd = {
	"dump",
	"usage: tokentrace dump RUN [--cell ID] [--scrapes]\n"
	"\n"
	"Print the raw records of a run's traces as JSON lines: one request per\n"
	"line with every chunk's arrival time (ns from the run's origin) and token\n"
	"count; with --scrapes, the /metrics scrapes too.\n"
	"\n",
	NULL,
	"\n"
	"Exit status: 0 all printed; 3 damaged cells skipped (the intact records\n"
	"printed); 1 the run could not be read or has no such cell; 2 usage error.\n",
	22, options, sizeof options / sizeof *options};

struct dump {
	const char *cell;
	int scrapes;
	const struct tt_manifest *m;
};

static void begin_cell(void *ctx, size_t cell)
{
	struct dump *d = ctx;
	d->cell = d->m->cells[cell].id;
}

/* Damage in the run (a trace missing, malformed, cut short) is exit 3: the
 * intact records were printed.  Anything else (memory, I/O) is 1. */
static int damage_only(enum tt_code rc, const struct tt_error *err)
{
	return rc == TT_WARN || (rc > TT_WARN && (err->kind == TT_ENOTFOUND ||
						  err->kind == TT_EFORMAT || err->kind == TT_ETRUNC));
}

static void put_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static int on_request(void *ctx, const struct tt_request *r)
{
	const struct dump *d = ctx;
	printf("{\"cell\":\"%s\",\"type\":\"request\",\"slot\":%u,\"seq\":%u,\"role\":\"%s\","
	       "\"sched\":%lld,\"send\":%lld,\"end\":%lld,\"http\":%d,\"prompt_tokens\":%lld,"
	       "\"cached_tokens\":%lld,\"finish\":\"%s\",\"fail\":\"%s\",\"error\":",
	       d->cell, r->slot, r->seq, tt_role_name(r->role), (long long)r->t_sched_ns,
	       (long long)r->t_send_ns, (long long)r->t_end_ns, r->http_status,
	       (long long)r->prompt_tokens, (long long)r->cached_tokens, tt_finish_name(r->finish),
	       tt_fail_name(r->fail));
	if (r->error)
		put_json_string(r->error);
	else
		fputs("null", stdout);
	fputs(",\"chunks\":[", stdout);
	for (size_t i = 0; i < r->n_chunks; i++)
		printf("%s[%lld,%u]", i ? "," : "", (long long)r->chunks[i].t_ns, r->chunks[i].tokens);
	/* run-v1 3.5: which text each chunk carried, when recorded */
	fputs("],\"chunk_text\":", stdout);
	if (r->chunk_text) {
		static const char *const names[] = {"\"none\"", "\"answer\"", "\"reasoning\"",
						    "\"both\""};
		putchar('[');
		for (size_t i = 0; i < r->n_chunks; i++)
			printf("%s%s", i ? "," : "", names[r->chunk_text[i] & 3]);
		putchar(']');
	} else {
		fputs("null", stdout);
	}
	/* run-v1 3.5 "Capture timing": only when recorded (trace minor 2) */
	if (r->timing_recorded) {
		fputs(",\"timing\":{\"cpu_wait_first_ns\":", stdout);
		r->cpu_wait_first_ns >= 0 ? printf("%lld", (long long)r->cpu_wait_first_ns)
					  : fputs("null", stdout);
		fputs(",\"cpu_wait_last_ns\":", stdout);
		r->cpu_wait_last_ns >= 0 ? printf("%lld", (long long)r->cpu_wait_last_ns)
					 : fputs("null", stdout);
		fputs(",\"cpu_wait_ns\":", stdout);
		r->cpu_wait_ns >= 0 ? printf("%lld", (long long)r->cpu_wait_ns) : fputs("null", stdout);
		printf(",\"clock_steps\":%u,\"chunks\":[", r->clock_steps);
		for (size_t i = 0; i < r->n_chunks; i++)
			printf("%s%u", i ? "," : "", r->chunk_timing ? r->chunk_timing[i] : 0u);
		fputs("]}", stdout);
	}
	/* run-v1 3.5 "Workload": only for a replayed workload (trace minor 3) */
	if (r->workload_recorded) {
		printf(",\"workload\":{\"line\":%u,\"prompt_asked\":%lld,\"output_asked\":%lld,"
		       "\"session\":%u,\"turn\":%u,\"blocks\":[",
		       r->wl_line, (long long)r->prompt_asked, (long long)r->output_asked,
		       r->session, r->turn);
		for (size_t i = 0; i < r->n_blocks; i++)
			printf("%s%u", i ? "," : "", r->blocks[i]);
		fputs("]}", stdout);
	}
	fputs("}\n", stdout);
	return ferror(stdout) ? 1 : 0;
}

static int on_scrape(void *ctx, const struct tt_scrape *s)
{
	const struct dump *d = ctx;
	if (!d->scrapes)
		return 0;
	printf("{\"cell\":\"%s\",\"type\":\"scrape\",\"t\":%lld,\"samples\":[", d->cell,
	       (long long)s->t_ns);
	for (size_t i = 0; i < s->n_samples; i++) {
		printf("%s[", i ? "," : "");
		put_json_string(s->samples[i].name);
		putchar(',');
		put_json_string(s->samples[i].labels);
		/* JSON has no NaN or infinity: Prometheus's spellings, as strings. */
		if (isnan(s->samples[i].value))
			fputs(",\"NaN\"]", stdout);
		else if (isinf(s->samples[i].value))
			fputs(s->samples[i].value > 0 ? ",\"+Inf\"]" : ",\"-Inf\"]", stdout);
		else
			printf(",%.17g]", s->samples[i].value);
	}
	fputs("]}\n", stdout);
	return ferror(stdout) ? 1 : 0;
}

int cmd_dump(int argc, char **argv)
{
	const char *path = NULL, *only = NULL;
	struct dump d = {NULL, 0, NULL};
	struct tt_run *run = NULL;
	struct tt_error err;
	const struct tt_manifest *m;
	struct tt_trace_visitor v = {&d, on_request, on_scrape};
	int status = 0, found = 0, warned = 0, id;
	struct cli_iter it;
	const char *val;

	cli_iter_init(&it, argc, argv);
	while ((id = cli_next(&dump_cmd, &it, &val)) != CLI_END) {
		if (id == CLI_HELP)
			return 0;
		if (id == CLI_BAD)
			return 2;
		if (id == O_SCRAPES) {
			d.scrapes = 1;
		} else if (id == O_CELL) {
			only = val;
		} else if (!path) {
			path = val;
		} else {
			cli_error("dump takes one run");
			return 2;
		}
	}
	if (!path) {
		cli_error("dump needs a run (see 'tokentrace dump --help')");
		return 2;
	}
	if (cli_open_run(path, NULL, &run, &warned))
		return 1;
	if (warned)
		status = 3;
	m = tt_run_manifest(run);
	d.m = m;
	if (!only) {
		/* One pass over the run (an archive is read once, not once per
		 * cell: 2,000 cells took 87 s). */
		struct tt_run_visitor rv;
		enum tt_code rc;
		memset(&rv, 0, sizeof rv);
		rv.ctx = &d;
		rv.trace = v;
		rv.begin_cell = begin_cell;
		tt_error_clear(&err);
		rc = tt_run_read_all(run, &rv, &err);
		if (rc != TT_OK && rc != TT_EOF) {
			if (damage_only(rc, &err)) {
				cli_warn("%s", err.msg);
				status = 3;
			} else {
				cli_error("%s", err.msg);
				status = 1;
			}
		}
	}
	for (size_t i = 0; only && i < m->n_cells; i++) {
		enum tt_code rc;
		/* one cell-id syntax: decode-8Kx64 as the capture takes it */
		if (tt_manifest_find_cell(m, only) != (long)i)
			continue;
		found = 1;
		if (!m->cells[i].trace)
			continue;
		d.cell = m->cells[i].id;
		tt_error_clear(&err);
		rc = tt_run_read_cell(run, i, &v, &err);
		if (rc != TT_OK && rc != TT_EOF) {
			if (damage_only(rc, &err)) {
				cli_warn("%s", err.msg);
				status = 3;
			} else {
				cli_error("%s", err.msg);
				status = 1;
			}
		}
	}
	if (only && !found) {
		cli_error("run '%s' has no cell '%s'", path, only);
		status = 1;
	}
	tt_run_free(run);
	if (fflush(stdout) != 0)
		status = 1;
	return status;
}
