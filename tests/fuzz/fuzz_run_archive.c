/* Fuzz entry: arbitrary bytes as a run archive (tar, tar.gz, tar.zst, zip,
 * ...), through the whole reading path a user's command takes: the archive
 * reader (our gzip/zstd decoders, libarchive's formats), the manifest, every
 * cell's trace, the analysis and the CSV and JSON tables. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/render.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_request(void *ctx, const struct tt_request *r)
{
	(*(size_t *)ctx) += r->n_chunks;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	struct tt_analysis_opts ao;
	struct tt_run_visitor v = {0};
	struct tt_error err;
	size_t chunks = 0;
	FILE *f;

	if (!path[0])
		snprintf(path, sizeof path, "/tmp/tt-fuzz-archive-%ld.bin", (long)getpid());
	f = fopen(path, "wb");
	if (!f)
		return 0;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return 0;
	}
	fclose(f);
	if (tt_run_open(path, &run, &err) != TT_OK)
		goto done;
	v.ctx = &chunks;
	v.trace.on_request = count_request;
	(void)tt_run_read_all(run, &v, &err);
	tt_analysis_opts_init(&ao);
	if (tt_analyze(run, &ao, &rep, &err) <= TT_WARN) {
		struct tt_render_opts ro = {0};
		struct tt_buf b;
		tt_buf_init(&b, 0);
		(void)tt_render(rep, TT_FORMAT_CSV, &ro, &b, &err);
		tt_buf_reset(&b);
		(void)tt_render(rep, TT_FORMAT_JSON, &ro, &b, &err);
		tt_buf_release(&b);
	}
done:
	tt_report_free(rep);
	tt_run_free(run);
	unlink(path);
	return 0;
}
