/* Helpers shared by the unit tests. */
#ifndef TT_TESTUTIL_H
#define TT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tokentrace/analysis.h"
#include "tokentrace/trace.h"

/* A fresh empty directory under $TMPDIR (caller frees the string). */
char *tu_tmpdir(const char *tag);
/* rm -rf */
void tu_rmrf(const char *path);
/* Whole file in memory (caller frees); NULL on error. */
char *tu_read(const char *path, size_t *len);
int tu_write(const char *path, const void *data, size_t len);

/* Collects records from a trace read. */
struct tu_collect {
	size_t requests, scrapes, chunks;
	uint64_t tokens;
	int64_t first_send, last_end;
	uint32_t max_slot;
	char last_error[128];
};
int tu_on_request(void *ctx, const struct tt_request *r);
int tu_on_scrape(void *ctx, const struct tt_scrape *s);

/* A hand-made cell for the figures and status tests: a done decode cell
 * of C streams at context 8K whose recorded window is [10 s, 20 s) of 10 s
 * planned, the server's slots (0: unknown) and max_tokens (-1: the
 * manifest's default) as given, its analyzer created with o (NULL: the
 * defaults).  Aborts when the analyzer cannot be made. */
struct tu_cell {
	struct tt_manifest m;
	struct tt_cell_analyzer *a;
};
void tu_cell_init(struct tu_cell *c, int C, int slots, int64_t max_tokens,
		  const struct tt_analysis_opts *o);
void tu_cell_done(struct tu_cell *c);

#endif
