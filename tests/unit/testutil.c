#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *tu_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *p = malloc(4096);
	snprintf(p, 4096, "%s/tt-%s-XXXXXX", base, tag);
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

void tu_rmrf(const char *path)
{
	char cmd[4200];
	if (!path || strlen(path) < 8)
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", path);
}

char *tu_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *d;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	d = malloc((size_t)n + 1);
	if (fread(d, 1, (size_t)n, f) != (size_t)n) {
		free(d);
		fclose(f);
		return NULL;
	}
	d[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return d;
}

int tu_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	if (fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

int tu_on_request(void *ctx, const struct tt_request *r)
{
	struct tu_collect *c = ctx;
	if (c->requests == 0 || r->t_send_ns < c->first_send)
		c->first_send = r->t_send_ns;
	if (r->t_end_ns > c->last_end)
		c->last_end = r->t_end_ns;
	if (r->slot > c->max_slot)
		c->max_slot = r->slot;
	c->requests++;
	c->chunks += r->n_chunks;
	for (size_t i = 0; i < r->n_chunks; i++)
		c->tokens += r->chunks[i].tokens;
	if (r->error)
		snprintf(c->last_error, sizeof c->last_error, "%s", r->error);
	return 0;
}

int tu_on_scrape(void *ctx, const struct tt_scrape *s)
{
	struct tu_collect *c = ctx;
	(void)s;
	c->scrapes++;
	return 0;
}

void tu_cell_init(struct tu_cell *c, int C, int slots, int64_t max_tokens,
		  const struct tt_analysis_opts *o)
{
	const int64_t s = 1000000000LL;
	size_t idx;
	struct tt_error err;

	tt_manifest_init(&c->m);
	c->m.duration_s = 10;
	if (slots > 0)
		c->m.slots = slots;
	if (max_tokens >= 0)
		c->m.max_tokens = max_tokens;
	if (tt_failed(tt_manifest_add_cell(&c->m, TT_PHASE_DECODE, 8192, C, &idx)) ||
	    tt_failed(tt_manifest_set_str(&c->m.cells[idx].trace, "cells/x.ttz"))) {
		fprintf(stderr, "tu_cell_init: out of memory\n");
		abort();
	}
	c->m.cells[idx].state = TT_CELL_DONE;
	c->m.cells[idx].window_start_ns = 10 * s;
	c->m.cells[idx].window_end_ns = 20 * s;
	if (tt_failed(tt_cell_analyzer_create(&c->m, idx, o, &c->a, &err))) {
		fprintf(stderr, "tu_cell_init: %s\n", err.msg);
		abort();
	}
}

void tu_cell_done(struct tu_cell *c)
{
	tt_cell_analyzer_free(c->a);
	tt_manifest_release(&c->m);
}
