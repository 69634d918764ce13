/* Fuzz entry: arbitrary bytes imported as one foreign file (the format is
 * forced by TT_FUZZ_FORMAT, one program per importer), and what imports is
 * opened and analysed like any run.  The run is written to a private
 * temporary directory, removed after each input. */
#define _GNU_SOURCE /* nftw */
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tokentrace/analysis.h"
#include "tokentrace/import.h"

#ifndef TT_FUZZ_FORMAT
#define TT_FUZZ_FORMAT TT_IMPORT_AUTO
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char base[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

static void cleanup(void)
{
	if (base[0])
		nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tt_import_opts o = {.from = TT_FUZZ_FORMAT};
	struct tt_error err;
	struct tt_run *run = NULL;
	struct tt_report *rep = NULL;
	char dir[96];

	if (!base[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(base, sizeof base, "%s/tt-fuzz-import-XXXXXX", t && t[0] ? t : "/tmp");
		if (!mkdtemp(base))
			abort();
		atexit(cleanup);
	}
	snprintf(dir, sizeof dir, "%s/run", base);
	if (tt_import_memory(data, size, "fuzz-input", &o, dir, &err) <= TT_WARN) {
		/* Whatever imports, reads (issue 20.3): it opens, analyses, and
		 * no cell of it reads as damaged. */
		if (tt_run_open(dir, &run, &err) != TT_OK)
			abort();
		if (tt_analyze(run, NULL, &rep, &err) > TT_WARN)
			abort();
		for (size_t i = 0; i < rep->n_cells; i++)
			if (rep->cells[i].status == TT_STATUS_DAMAGED)
				abort();
		tt_report_free(rep);
		tt_run_free(run);
	}
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
