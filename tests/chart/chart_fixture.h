/* Shared by the chart tests: a report of the seed matrix built by hand
 * (from fixtures/profiles/seed-matrix.csv, no traces), small synthetic runs,
 * and reading pixels back from PNG output. */
#ifndef TT_CHART_FIXTURE_H
#define TT_CHART_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_cmocka.h" /* tt_cmocka_main: each case its own ctest */

#include "tokentrace/analysis.h"
#include "tokentrace/buf.h"
#include "tokentrace/chart.h"
#include "tokentrace/report.h"
#include "tokentrace/run.h"

/* The seed's 46 cells as figures; the 16K x 64 cell is given 3 errors, and
 * quantiles are {10, 90} with bands around the medians.  model may be NULL. */
struct tt_report *cf_seed_report(const char *model);
void cf_report_free(struct tt_report *r);

/* A small synthetic run (prefill 8K and 16K; decode 8K and 16K x 1, 4, 16,
 * one cell Requests queued, one Over capacity) in a fresh directory.
 * *dir is the directory (free() it; remove it with cf_rmrf). */
struct tt_run *cf_small_run(const char *model, char **dir);
/* Analyse a run with the chart quantiles (10, 90 besides the defaults). */
struct tt_report *cf_analyze(struct tt_run *run);
void cf_rmrf(const char *path);
char *cf_tmpdir(const char *tag);
char *cf_read(const char *path, size_t *len);
int cf_write(const char *path, const void *data, size_t len);
/* Output of a shell command (caller frees), NULL if it could not run or
 * exited non-zero. */
char *cf_run_cmd(const char *cmd);
int cf_have_program(const char *name);

/* Decoded PNG. */
struct cf_image {
	int w, h, stride;
	unsigned char *px; /* cairo RGB24: B G R x per pixel */
	void *surface;
};
int cf_png_decode(const struct tt_buf *png, struct cf_image *img);
int cf_png_load(const char *path, struct cf_image *img);
void cf_image_free(struct cf_image *img);
void cf_pixel(const struct cf_image *img, int x, int y, int *r, int *g, int *b);
/* Pixels within radius of (x, y) whose colour is within tol of (r, g, b). */
int cf_count_near(const struct cf_image *img, int x, int y, int radius, int r, int g, int b,
		  int tol);
/* Pixels of the whole image within tol of (r, g, b). */
long cf_count_colour(const struct cf_image *img, int r, int g, int b, int tol);
/* Pixels that are not white. */
long cf_count_ink(const struct cf_image *img);

/* Screen position of a data value, from what the chart says it drew. */
double cf_map_x(const struct tt_chart_info *in, double v);
double cf_map_y(const struct tt_chart_info *in, double v);

#endif
