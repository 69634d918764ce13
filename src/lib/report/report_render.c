/* The report in any format: the one entry point that dispatches to the text
 * renderers (text/) and to the HTML page and PDF document (this module). */
#include "tokentrace/report.h"

#include "text/render_impl.h"

enum tt_code tt_render(const struct tt_report *r, enum tt_format f,
		       const struct tt_render_opts *opts, struct tt_buf *out,
		       struct tt_error *err)
{
	static const struct tt_render_opts defaults = {0, 0};
	enum tt_code rc;

	if (!r || !out)
		return tt_error_set(err, TT_EARG, "render: no report or no output buffer");
	if (r->n_cells && !r->cells)
		return tt_error_set(err, TT_EARG, "render: report has %zu cells but no figures",
				    r->n_cells);
	if (!opts)
		opts = &defaults;
	switch (f) {
	case TT_FORMAT_TERM: rc = tt__render_term_text(r, opts, out, err); break;
	case TT_FORMAT_MD: rc = tt__render_md_text(r, out, err); break;
	case TT_FORMAT_CSV: rc = tt__render_csv_text(r, out, err); break;
	case TT_FORMAT_JSON: rc = tt__render_json_text(r, out, err); break;
	case TT_FORMAT_HTML:
		/* without the run: charts drawn from raw traces are left out */
		rc = tt_render_html(r, NULL, out, err);
		break;
	case TT_FORMAT_PDF:
		return tt_error_set(err, TT_EARG,
				    "render: format 'pdf' is made by tt_report_render or "
				    "tt_render_pdf (report.h), not tt_render");
	default:
		return tt_error_set(err, TT_EARG, "render: unknown format %d", (int)f);
	}
	if (rc == TT_OK && out->failed)
		rc = tt_error_set(err, TT_ENOMEM, "render: output buffer full or out of memory");
	return rc;
}

enum tt_code tt_report_render(const struct tt_report *r, struct tt_run *run, enum tt_format f,
			      const struct tt_render_opts *opts, struct tt_buf *out,
			      struct tt_error *err)
{
	enum tt_code rc;

	if (f == TT_FORMAT_PDF)
		rc = tt_render_pdf_buf(r, run, out, err);
	else if (f == TT_FORMAT_HTML)
		rc = tt_render_html(r, run, out, err);
	else
		return tt_render(r, f, opts, out, err);
	if (rc == TT_OK && out && out->failed)
		rc = tt_error_set(err, TT_ENOMEM, "render: output buffer full or out of memory");
	return rc;
}

enum tt_code tt_report_write(const struct tt_report *r, struct tt_run *run, enum tt_format f,
			     const struct tt_render_opts *opts, const char *path,
			     struct tt_error *err)
{
	struct tt_buf b;
	enum tt_code rc;

	if (!path)
		return tt_error_set(err, TT_EARG, "render: no path to write to");
	tt_buf_init(&b, 0);
	rc = tt_report_render(r, run, f, opts, &b, err);
	if (rc == TT_OK)
		rc = tt_buf_write_file(&b, path, err);
	tt_buf_release(&b);
	return rc;
}
