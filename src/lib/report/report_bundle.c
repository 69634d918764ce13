/* Every chart and both reports of a run in one go (tt_render_all): the
 * outputs share one chart_cache, so each raw trace is read once, and the
 * HTML embeds the chart files themselves (SVG or PNG) rather than drawing
 * them again. */
#include "tokentrace/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "chart/chart_impl.h"

static enum tt_code write_file(const char *dir, const char *name, const struct tt_buf *b,
			       struct tt_error *err)
{
	char path[4200];

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
		return tt_error_set(err, TT_EARG, "output directory name is too long");
	return tt_buf_write_file(b, path, err);
}

enum tt_code tt_render_all(const struct tt_report *r, struct tt_run *run, const char *dir,
			   enum tt_chart_format f, struct tt_error *err)
{
	return tt_render_all_sized(r, run, dir, f, NULL, err);
}

enum tt_code tt_render_all_sized(const struct tt_report *r, struct tt_run *run, const char *dir,
				 enum tt_chart_format f, const struct tt_chart_opts *size,
				 struct tt_error *err)
{
	static const char *const ext[] = {"png", "svg", "pdf"};
	struct chart_cache *cache = NULL;
	struct tt_buf charts[TT__CHART_SLOTS], out; /* by tt__chart_kind_slot */
	struct tt_chart_opts list[16];
	size_t n;
	enum tt_code rc = TT_OK;
	char skipped[600] = "";

	tt_buf_init(&out, 0);
	for (int k = 0; k < TT__CHART_SLOTS; k++)
		tt_buf_init(&charts[k], 0);
	if (!r || !dir || (unsigned)f > TT_CHART_PDF) {
		rc = tt_error_set(err, TT_EARG, "no report, directory or format to render");
		goto cleanup;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		rc = tt_error_set(err, TT_EIO, "cannot create '%s': %s", dir, strerror(errno));
		goto cleanup;
	}
	cache = tt__chart_cache_create(run, r->manifest.n_cells);
	if (!cache) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory rendering the charts");
		goto cleanup;
	}
	n = tt__report_chart_list(r, run, list, sizeof list / sizeof list[0]);
	for (size_t i = 0; i < n; i++) {
		int slot = tt__chart_kind_slot(list[i].kind);
		struct tt_buf *b;
		struct tt_error cerr;
		char name[64];
		enum tt_code crc;
		if (slot < 0)
			continue; /* not a kind: nothing the list makes */
		b = &charts[slot];
		list[i].format = f;
		if (size) {
			list[i].width = size->width;
			list[i].height = size->height;
			list[i].dpi = size->dpi;
			list[i].font_scale = size->font_scale;
			list[i].no_title = size->no_title;
		}
		tt_error_clear(&cerr);
		crc = tt__chart_render(r, run, &list[i], cache, b, NULL, &cerr);
		if (crc > TT_WARN && (cerr.kind == TT_ENOMEM || cerr.kind == TT_EIO)) {
			rc = tt_error_setv(err, crc, cerr.kind, "%s", cerr.msg);
			goto cleanup;
		}
		if (crc != TT_OK) {
			size_t l = strlen(skipped);
			snprintf(skipped + l, sizeof skipped - l, "%s%s (%.120s)", l ? "; " : "",
				 tt_chart_kind_name(list[i].kind), cerr.msg);
			continue;
		}
		snprintf(name, sizeof name, "%s.%s", tt_chart_kind_name(list[i].kind), ext[f]);
		rc = write_file(dir, name, b, err);
		if (rc != TT_OK)
			goto cleanup;
		if (f == TT_CHART_PDF)
			tt_buf_reset(b); /* the HTML embeds SVG or PNG, not PDF */
	}
	rc = tt__report_html(r, run, cache, f == TT_CHART_PDF ? NULL : charts, f, &out, err);
	if (rc == TT_OK)
		rc = write_file(dir, "report.html", &out, err);
	if (rc != TT_OK)
		goto cleanup;
	tt_buf_reset(&out);
	rc = tt__report_pdf(r, run, cache, &out, err);
	if (rc == TT_OK)
		rc = write_file(dir, "report.pdf", &out, err);
	if (rc == TT_OK && skipped[0])
		rc = tt_error_setv(err, TT_WARN, TT_ENOTFOUND, "charts left out: %s", skipped);
cleanup:
	tt__chart_cache_free(cache);
	for (int k = 0; k < TT__CHART_SLOTS; k++)
		tt_buf_release(&charts[k]);
	tt_buf_release(&out);
	return rc;
}
