/* The canvas: a cairo surface for PNG, SVG or PDF with one pango layout for
 * all text, and the few drawing primitives the charts share.  Every cairo
 * error is turned into TT_EDRAW with cairo's own words at tt__canvas_check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cairo-pdf.h>
#include <cairo-svg.h>

#include "chart/chart_impl.h"

const struct rgb tt__chart_palette[CHART_N_COLOURS] = {
	RGB_HEX(0x0072B2), /* blue */
	RGB_HEX(0xE69F00), /* orange */
	RGB_HEX(0x009E73), /* bluish green */
	RGB_HEX(0xD55E00), /* vermillion */
	RGB_HEX(0xCC79A7), /* reddish purple */
	RGB_HEX(0x56B4E9), /* sky blue */
	RGB_HEX(0x000000), /* black */
	RGB_HEX(0xF0E442), /* yellow */
};
const struct rgb tt__chart_ink = RGB_HEX(0x1A1A1A);
const struct rgb tt__chart_muted = RGB_HEX(0x5F6368);
const struct rgb tt__chart_grid = RGB_HEX(0xE3E5E8);

static cairo_status_t stream_write(void *closure, const unsigned char *data, unsigned int len)
{
	struct canvas *c = closure;
	if (tt_buf_append(c->out, data, len) != TT_OK) {
		c->stream_failed = 1;
		return CAIRO_STATUS_WRITE_ERROR;
	}
	return CAIRO_STATUS_SUCCESS;
}

double tt__chart_dpi_scale(double dpi)
{
	if (!(dpi > 0))
		return 1.0;
	return dpi / 96.0;
}

static enum tt_code surface_error(cairo_status_t st, const char *what, struct tt_error *err)
{
	return tt_error_set(err, TT_EDRAW, "cannot draw %s: %s", what,
			    cairo_status_to_string(st));
}

enum tt_code tt__canvas_open(struct canvas *c, enum tt_chart_format f, double w, double h, double dpi,
			 struct tt_buf *out, struct tt_error *err)
{
	enum tt_code rc = TT_OK;
	cairo_status_t st;
	cairo_font_options_t *fo = NULL;

	memset(c, 0, sizeof *c);
	c->format = f;
	c->out = out;
	c->out_start = out ? out->len : 0;
	if (!(w >= 16 && h >= 16 && w <= 20000 && h <= 20000)) {
		rc = tt_error_set(err, TT_EARG, "chart size %gx%g is out of range (16..20000)", w,
				  h);
		goto cleanup;
	}
	switch (f) {
	case TT_CHART_PNG: {
		/* PNG: width and height are pixels; dpi scales the drawing so the
		 * same layout gets sharper, not smaller. */
		double s = tt__chart_dpi_scale(dpi);
		int pw = (int)lround(w), ph = (int)lround(h);
		c->scale = s;
		c->w = w / s;
		c->h = h / s;
		c->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, pw, ph);
		break;
	}
	case TT_CHART_SVG:
		c->scale = 1.0;
		c->w = w;
		c->h = h;
		c->surface = cairo_svg_surface_create_for_stream(stream_write, c, w, h);
		cairo_svg_surface_restrict_to_version(c->surface, CAIRO_SVG_VERSION_1_1);
		cairo_svg_surface_set_document_unit(c->surface, CAIRO_SVG_UNIT_PX);
		break;
	case TT_CHART_PDF:
		c->scale = 0.75; /* CSS px to pt */
		c->w = w;
		c->h = h;
		c->surface = cairo_pdf_surface_create_for_stream(stream_write, c, w * 0.75,
								 h * 0.75);
		/* cairo stamps the time of now unless told otherwise. */
		cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_CREATE_DATE,
					       "2000-01-01T00:00:00Z");
		cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_CREATOR,
					       "tokentrace");
		break;
	default:
		rc = tt_error_set(err, TT_EARG, "unknown chart format %d", (int)f);
		goto cleanup;
	}
	st = cairo_surface_status(c->surface);
	if (st != CAIRO_STATUS_SUCCESS) {
		rc = surface_error(st, "a chart surface", err);
		goto cleanup;
	}
	c->cr = cairo_create(c->surface);
	if (c->scale != 1.0)
		cairo_scale(c->cr, c->scale, c->scale);
	tt__cv_rect(c, 0, 0, c->w, c->h, (struct rgb){1, 1, 1});

	c->layout = pango_cairo_create_layout(c->cr);
	c->font = pango_font_description_from_string("DejaVu Sans");
	if (!c->layout || !c->font) {
		rc = tt_error_set(err, TT_ENOMEM, "cannot create a text layout");
		goto cleanup;
	}
	/* Fixed font options: the same glyph positions on every machine and
	 * every output, whatever the desktop settings say. */
	fo = cairo_font_options_create();
	cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
	pango_cairo_context_set_font_options(pango_layout_get_context(c->layout), fo);
	pango_layout_context_changed(c->layout);
	rc = tt__canvas_check(c, "a chart", err);
cleanup:
	if (fo)
		cairo_font_options_destroy(fo);
	if (rc != TT_OK)
		tt__canvas_release(c);
	return rc;
}

void tt__canvas_set_date(struct canvas *c, const char *iso8601)
{
	if (c->format == TT_CHART_PDF && iso8601 && *iso8601) {
		cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_CREATE_DATE,
					       iso8601);
		cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_MOD_DATE, iso8601);
	}
}

void tt__canvas_set_title(struct canvas *c, const char *title)
{
	if (c->format == TT_CHART_PDF && title && g_utf8_validate(title, -1, NULL))
		cairo_pdf_surface_set_metadata(c->surface, CAIRO_PDF_METADATA_TITLE, title);
}

void tt__canvas_next_page(struct canvas *c)
{
	cairo_show_page(c->cr);
	tt__cv_rect(c, 0, 0, c->w, c->h, (struct rgb){1, 1, 1});
}

enum tt_code tt__canvas_check(struct canvas *c, const char *what, struct tt_error *err)
{
	cairo_status_t st = c->cr ? cairo_status(c->cr) : CAIRO_STATUS_NO_MEMORY;
	if (st == CAIRO_STATUS_SUCCESS)
		return TT_OK;
	if (c->stream_failed)
		return tt_error_set(err, TT_ENOMEM, "cannot write %s: output buffer is full",
				    what);
	return surface_error(st, what, err);
}

/* cairo names SVG groups after a process-wide surface counter
 * ("surface17"), so a second chart in one process would differ from the
 * first.  Number them by first appearance instead. */
static enum tt_code svg_normalise_ids(struct tt_buf *b, size_t start, struct tt_error *err)
{
	static const char key[] = "surface";
	unsigned long seen[64];
	size_t n_seen = 0, i = start;
	struct tt_buf o;
	enum tt_code rc = TT_OK;

	tt_buf_init(&o, b->max);
	while (i < b->len) {
		char *hit = strstr(b->data + i, key);
		size_t at, d;
		if (!hit) {
			tt_buf_append(&o, b->data + i, b->len - i);
			break;
		}
		at = (size_t)(hit - b->data) + sizeof key - 1;
		tt_buf_append(&o, b->data + i, at - i);
		for (d = at; d < b->len && b->data[d] >= '0' && b->data[d] <= '9'; d++)
			;
		if (d > at && d - at < 12) {
			unsigned long v = strtoul(b->data + at, NULL, 10);
			size_t k;
			for (k = 0; k < n_seen && seen[k] != v; k++)
				;
			if (k == n_seen && n_seen < sizeof seen / sizeof seen[0])
				seen[n_seen++] = v;
			tt_buf_printf(&o, "%zu", k + 1);
		} else {
			tt_buf_append(&o, b->data + at, d - at);
		}
		i = d;
	}
	if (o.failed) {
		rc = tt_error_set(err, TT_ENOMEM, "cannot write a chart: output buffer is full");
	} else {
		b->len = start;
		b->data[start] = '\0';
		if (tt_buf_append(b, o.data, o.len) != TT_OK)
			rc = tt_error_set(err, TT_ENOMEM,
					  "cannot write a chart: output buffer is full");
	}
	tt_buf_release(&o);
	return rc;
}

enum tt_code tt__canvas_finish(struct canvas *c, struct tt_error *err)
{
	enum tt_code rc = tt__canvas_check(c, "a chart", err);
	cairo_status_t st;
	if (rc != TT_OK)
		return rc;
	if (c->format == TT_CHART_PNG) {
		size_t start = c->out->len;
		rc = tt__chart_png_encode(c->surface, c->out, err);
		if (rc != TT_OK) {
			c->out->len = start;
			return rc;
		}
		st = CAIRO_STATUS_SUCCESS;
	} else {
		cairo_surface_finish(c->surface);
		st = cairo_surface_status(c->surface);
	}
	if (c->stream_failed)
		return tt_error_set(err, TT_ENOMEM, "cannot write a chart: output buffer is full");
	if (st != CAIRO_STATUS_SUCCESS)
		return surface_error(st, "a chart", err);
	if (c->format == TT_CHART_SVG)
		return svg_normalise_ids(c->out, c->out_start, err);
	return TT_OK;
}

enum tt_code tt__canvas_isolate(const struct canvas *page, struct canvas *sub,
				struct tt_error *err)
{
	cairo_font_options_t *fo;

	*sub = *page;
	sub->surface = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
	sub->cr = NULL;
	sub->layout = NULL;
	sub->font = NULL;
	if (cairo_surface_status(sub->surface) != CAIRO_STATUS_SUCCESS)
		goto nomem;
	sub->cr = cairo_create(sub->surface);
	/* The page's transformation (its scale), so layout units agree. */
	{
		cairo_matrix_t m;
		cairo_get_matrix(page->cr, &m);
		cairo_set_matrix(sub->cr, &m);
	}
	sub->layout = pango_cairo_create_layout(sub->cr);
	sub->font = pango_font_description_copy(page->font);
	if (!sub->layout || !sub->font || cairo_status(sub->cr) != CAIRO_STATUS_SUCCESS)
		goto nomem;
	fo = cairo_font_options_create();
	cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
	cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_antialias(fo, CAIRO_ANTIALIAS_GRAY);
	pango_cairo_context_set_font_options(pango_layout_get_context(sub->layout), fo);
	cairo_font_options_destroy(fo);
	pango_layout_context_changed(sub->layout);
	return TT_OK;
nomem:
	tt__canvas_release(sub);
	return tt_error_set(err, TT_ENOMEM, "out of memory drawing a chart");
}

void tt__canvas_release(struct canvas *c)
{
	if (c->font)
		pango_font_description_free(c->font);
	if (c->layout)
		g_object_unref(c->layout);
	if (c->cr)
		cairo_destroy(c->cr);
	if (c->surface)
		cairo_surface_destroy(c->surface);
	c->font = NULL;
	c->layout = NULL;
	c->cr = NULL;
	c->surface = NULL;
}

/* ---- text ----------------------------------------------------------- */

struct tstyle tt__tstyle_make(double size, int bold, struct rgb col, double ax, double ay)
{
	struct tstyle st = {size, bold, col, ax, ay, 0, 0, 0, 0};
	return st;
}

static tt__text_hook_fn text_hook;
static void *text_hook_arg;

void tt__chart_set_text_hook(tt__text_hook_fn fn, void *arg)
{
	text_hook = fn;
	text_hook_arg = arg;
}

static double font_scale(const struct canvas *c)
{
	return c->font_scale > 0 ? c->font_scale : 1.0;
}

static void set_text_family(struct canvas *c, const char *s, double size, int bold, int mono)
{
	pango_font_description_set_family_static(c->font, mono ? "DejaVu Sans Mono" : "DejaVu Sans");
	pango_font_description_set_absolute_size(c->font, size * font_scale(c) * PANGO_SCALE);
	pango_font_description_set_weight(c->font, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
	pango_layout_set_font_description(c->layout, c->font);
	if (!s)
		s = "";
	/* Run strings can hold anything; pango would warn on stderr. */
	if (g_utf8_validate(s, -1, NULL)) {
		pango_layout_set_text(c->layout, s, -1);
	} else {
		gchar *v = g_utf8_make_valid(s, -1);
		pango_layout_set_text(c->layout, v, -1);
		g_free(v);
	}
}

static void set_text(struct canvas *c, const char *s, double size, int bold)
{
	set_text_family(c, s, size, bold, 0);
}

static void logical_size(struct canvas *c, double *w, double *h)
{
	PangoRectangle lr;
	pango_layout_get_extents(c->layout, NULL, &lr);
	*w = (double)lr.width / PANGO_SCALE;
	*h = (double)lr.height / PANGO_SCALE;
}

/* Report the layout about to be drawn at the current point (the cairo
 * transformation in force) to the test hook. */
static void report_text(struct canvas *c, const char *s, double size)
{
	struct tt__text_record t;
	PangoRectangle ink;
	double cx, cy, xs[4], ys[4];

	if (!text_hook)
		return;
	pango_layout_get_extents(c->layout, &ink, NULL);
	cairo_get_current_point(c->cr, &cx, &cy);
	xs[0] = xs[3] = cx + (double)ink.x / PANGO_SCALE;
	xs[1] = xs[2] = xs[0] + (double)ink.width / PANGO_SCALE;
	ys[0] = ys[1] = cy + (double)ink.y / PANGO_SCALE;
	ys[2] = ys[3] = ys[0] + (double)ink.height / PANGO_SCALE;
	memset(&t, 0, sizeof t);
	t.text = s ? s : "";
	t.x0 = t.y0 = INFINITY;
	t.x1 = t.y1 = -INFINITY;
	for (int i = 0; i < 4; i++) {
		double dx = xs[i], dy = ys[i];
		cairo_user_to_device(c->cr, &dx, &dy);
		t.x0 = fmin(t.x0, dx);
		t.x1 = fmax(t.x1, dx);
		t.y0 = fmin(t.y0, dy);
		t.y1 = fmax(t.y1, dy);
	}
	if (ink.width == 0 || ink.height == 0)
		t.x0 = t.x1 = t.y0 = t.y1 = 0; /* blank: nothing drawn */
	t.canvas_w = c->w * c->scale;
	t.canvas_h = c->h * c->scale;
	t.elided = pango_layout_is_ellipsized(c->layout);
	t.size = size * font_scale(c);
	text_hook(&t, text_hook_arg);
}

void tt__cv_measure(struct canvas *c, const char *s, double size, int bold, double *w, double *h)
{
	double tw, th;
	pango_layout_set_width(c->layout, -1);
	pango_layout_set_ellipsize(c->layout, PANGO_ELLIPSIZE_NONE);
	set_text(c, s, size, bold);
	logical_size(c, &tw, &th);
	if (w)
		*w = tw;
	if (h)
		*h = th;
}

/* Put s into the layout as st says; *tw, *th its logical size and *size
 * the font size used (before the canvas's font scale). */
static void layout_text(struct canvas *c, const char *s, const struct tstyle *st, double *tw,
			double *th, double *size)
{
	double sz = st->size;
	pango_layout_set_width(c->layout, -1);
	pango_layout_set_ellipsize(c->layout, PANGO_ELLIPSIZE_NONE);
	pango_layout_set_alignment(c->layout, PANGO_ALIGN_LEFT);
	set_text_family(c, s, sz, st->bold, st->mono);
	logical_size(c, tw, th);
	if (st->max_w > 0 && *tw > st->max_w) {
		if (st->fit) {
			/* shrink, then wrap what still does not fit */
			double k = 1;
			/* glyph positions are rounded, so width is not quite
			 * linear in size: a few steps */
			for (int step = 0; step < 4 && *tw > st->max_w && k > TT__TEXT_MIN_SHRINK;
			     step++) {
				k *= st->max_w / *tw * 0.998;
				if (k < TT__TEXT_MIN_SHRINK)
					k = TT__TEXT_MIN_SHRINK;
				sz = st->size * k;
				set_text_family(c, s, sz, st->bold, st->mono);
				logical_size(c, tw, th);
			}
			if (*tw > st->max_w) {
				pango_layout_set_width(c->layout, (int)(st->max_w * PANGO_SCALE));
				/* a turned axis title breaks at words only */
				pango_layout_set_wrap(c->layout, st->angle != 0 ? PANGO_WRAP_WORD
									: PANGO_WRAP_WORD_CHAR);
				pango_layout_set_alignment(c->layout,
							   st->ax < 0.25   ? PANGO_ALIGN_LEFT
							   : st->ax > 0.75 ? PANGO_ALIGN_RIGHT
									   : PANGO_ALIGN_CENTER);
				logical_size(c, tw, th);
			}
		} else {
			pango_layout_set_width(c->layout, (int)(st->max_w * PANGO_SCALE));
			pango_layout_set_ellipsize(c->layout, PANGO_ELLIPSIZE_END);
			logical_size(c, tw, th);
		}
		if (*tw > st->max_w)
			*tw = st->max_w;
	}
	*size = sz;
}

void tt__cv_text_size(struct canvas *c, const char *s, const struct tstyle *st, double *w,
		      double *h)
{
	double tw, th, sz;
	layout_text(c, s, st, &tw, &th, &sz);
	pango_layout_set_width(c->layout, -1);
	if (w)
		*w = tw;
	if (h)
		*h = th;
}

void tt__cv_text(struct canvas *c, double x, double y, const char *s, const struct tstyle *st)
{
	double tw, th, sz;
	layout_text(c, s, st, &tw, &th, &sz);
	cairo_save(c->cr);
	cairo_translate(c->cr, x, y);
	if (st->angle != 0)
		cairo_rotate(c->cr, st->angle);
	cairo_move_to(c->cr, -st->ax * tw, -st->ay * th);
	cairo_set_source_rgb(c->cr, st->col.r, st->col.g, st->col.b);
	pango_cairo_update_layout(c->cr, c->layout);
	report_text(c, s, sz);
	pango_cairo_show_layout(c->cr, c->layout);
	cairo_restore(c->cr);
	pango_layout_set_width(c->layout, -1);
}

double tt__cv_paragraph(struct canvas *c, double x, double y, double w, const char *s,
		    const struct tstyle *st, int draw)
{
	double tw, th;
	pango_layout_set_width(c->layout, (int)(w * PANGO_SCALE));
	pango_layout_set_ellipsize(c->layout, PANGO_ELLIPSIZE_NONE);
	pango_layout_set_wrap(c->layout, PANGO_WRAP_WORD_CHAR);
	set_text_family(c, s, st->size, st->bold, st->mono);
	logical_size(c, &tw, &th);
	if (draw) {
		cairo_save(c->cr);
		cairo_move_to(c->cr, x, y);
		cairo_set_source_rgb(c->cr, st->col.r, st->col.g, st->col.b);
		pango_cairo_update_layout(c->cr, c->layout);
		report_text(c, s, st->size);
		pango_cairo_show_layout(c->cr, c->layout);
		cairo_restore(c->cr);
	}
	pango_layout_set_width(c->layout, -1);
	return th;
}

/* ---- shapes --------------------------------------------------------- */

void tt__cv_set(struct canvas *c, struct rgb col, double alpha)
{
	if (alpha >= 1)
		cairo_set_source_rgb(c->cr, col.r, col.g, col.b);
	else
		cairo_set_source_rgba(c->cr, col.r, col.g, col.b, alpha);
}

void tt__cv_rect(struct canvas *c, double x, double y, double w, double h, struct rgb col)
{
	cairo_rectangle(c->cr, x, y, w, h);
	tt__cv_set(c, col, 1);
	cairo_fill(c->cr);
}

void tt__cv_line(struct canvas *c, double x0, double y0, double x1, double y1, double width,
	     struct rgb col)
{
	cairo_move_to(c->cr, x0, y0);
	cairo_line_to(c->cr, x1, y1);
	cairo_set_line_width(c->cr, width);
	tt__cv_set(c, col, 1);
	cairo_stroke(c->cr);
}

static void polygon(cairo_t *cr, double x, double y, double r, int n, double turn)
{
	for (int i = 0; i < n; i++) {
		double a = turn + 2 * M_PI * i / n;
		double px = x + r * cos(a), py = y + r * sin(a);
		if (i == 0)
			cairo_move_to(cr, px, py);
		else
			cairo_line_to(cr, px, py);
	}
	cairo_close_path(cr);
}

void tt__cv_marker(struct canvas *c, int shape, double x, double y, double r, struct rgb col,
	       int filled)
{
	cairo_t *cr = c->cr;
	cairo_new_path(cr);
	switch (((shape % 6) + 6) % 6) {
	case 0:
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		break;
	case 1:
		cairo_rectangle(cr, x - r * 0.88, y - r * 0.88, r * 1.76, r * 1.76);
		break;
	case 2:
		polygon(cr, x, y + r * 0.15, r * 1.2, 3, -M_PI / 2);
		break;
	case 3:
		polygon(cr, x, y, r * 1.2, 4, 0);
		break;
	case 4:
		polygon(cr, x, y - r * 0.15, r * 1.2, 3, M_PI / 2);
		break;
	default:
		polygon(cr, x, y, r * 1.1, 6, 0);
		break;
	}
	if (filled) {
		tt__cv_set(c, col, 1);
		cairo_fill_preserve(cr);
		/* A white rim keeps overlapping markers apart. */
		cairo_set_line_width(cr, 1.0);
		cairo_set_source_rgb(cr, 1, 1, 1);
		cairo_stroke(cr);
	} else {
		cairo_set_source_rgb(cr, 1, 1, 1);
		cairo_fill_preserve(cr);
		cairo_set_line_width(cr, 1.6);
		tt__cv_set(c, col, 1);
		cairo_stroke(cr);
	}
}

void tt__cv_hatch(struct canvas *c, double x, double y, double w, double h, double step,
	      struct rgb col)
{
	cairo_t *cr = c->cr;
	cairo_save(cr);
	cairo_rectangle(cr, x, y, w, h);
	cairo_clip(cr);
	cairo_set_line_width(cr, 1.0);
	tt__cv_set(c, col, 1);
	for (double d = -h; d < w; d += step) {
		cairo_move_to(cr, x + d, y + h);
		cairo_line_to(cr, x + d + h, y);
	}
	cairo_stroke(cr);
	cairo_restore(cr);
}
