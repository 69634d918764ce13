/* Helpers shared by the unit tests. */
#ifndef TT_TESTUTIL_H
#define TT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

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

#endif
