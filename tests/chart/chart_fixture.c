#include "chart_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cairo.h>

#include "tokentrace/profile.h"
#include "tokentrace/synth.h"

#ifndef TT_FIXTURES
#error "TT_FIXTURES must name the fixtures directory"
#endif

static enum tt_status status_of(const char *s)
{
	if (strcmp(s, "Requests queued") == 0)
		return TT_STATUS_QUEUED;
	if (strcmp(s, "Over capacity") == 0)
		return TT_STATUS_OVER_CAPACITY;
	return TT_STATUS_VALID;
}

static void dist(struct tt_dist *d, double p50)
{
	memset(d, 0, sizeof *d);
	d->n = isnan(p50) ? 0 : 10;
	d->p50 = p50;
	d->min = d->max = d->mean = p50;
	d->q[0] = p50 * 0.8; /* p10 */
	d->q[1] = p50 * 1.4; /* p90 */
}

struct tt_report *cf_seed_report(const char *model)
{
	struct tt_profile *p = NULL;
	struct tt_error err;
	struct tt_report *r = calloc(1, sizeof *r);
	size_t n;

	if (!r)
		return NULL;
	if (tt_profile_load(TT_FIXTURES "/profiles/seed-matrix.csv", &p, &err) != TT_OK) {
		free(r);
		return NULL;
	}
	n = tt_profile_count(p);
	tt_manifest_init(&r->manifest);
	tt_manifest_set_str(&r->manifest.model, model ? model : "LiquidAI/LFM2.5-350M");
	tt_manifest_set_str(&r->manifest.served_model, "lfm");
	tt_manifest_set_str(&r->manifest.engine, "vllm");
	tt_manifest_set_str(&r->manifest.engine_version, "0.26.1rc1");
	tt_manifest_set_str(&r->manifest.created, "2026-12-02T13:00:00Z");
	tt_manifest_set_note(&r->manifest, "gpu", "H200 NVL");
	tt_manifest_set_note(&r->manifest, "quantization", "BF16");
	tt_analysis_opts_init(&r->opts);
	r->opts.n_quantiles = 2;
	r->opts.quantiles[0] = 10;
	r->opts.quantiles[1] = 90;
	snprintf(r->source, sizeof r->source, "seed-matrix.csv");
	r->cells = calloc(n, sizeof *r->cells);
	r->n_cells = n;
	for (size_t i = 0; i < n && r->cells; i++) {
		const struct tt_profile_point *pt = tt_profile_at(p, i);
		struct tt_cell_figures *c = &r->cells[i];
		size_t idx = 0;
		tt_manifest_add_cell(&r->manifest, pt->phase, pt->context, pt->concurrency, &idx);
		c->cell = idx;
		c->phase = pt->phase;
		c->context = pt->context;
		c->concurrency = pt->concurrency;
		c->status = status_of(pt->status);
		c->total_tok_s = pt->total_tok_s;
		dist(&c->per_request_tok_s, pt->per_request_tok_s);
		dist(&c->ttft_ms, pt->ttft_ms);
		dist(&c->tbt_ms, pt->tbt_ms);
		c->avg_active = pt->avg_active;
		c->avg_active_source = "server";
		c->completed = pt->completed;
		c->output_tokens = pt->output_tokens;
		c->measured_s = pt->measured_s;
		c->prompt_tokens = -1;
		if (c->phase == TT_PHASE_DECODE && c->context == 16384 && c->concurrency == 64)
			c->errors = 3;
		if (c->status == TT_STATUS_OVER_CAPACITY)
			r->manifest.cells[idx].state = TT_CELL_OVER_CAPACITY;
		else
			r->manifest.cells[idx].state = TT_CELL_DONE;
	}
	tt_profile_free(p);
	if (!r->cells) {
		cf_report_free(r);
		return NULL;
	}
	return r;
}

void cf_report_free(struct tt_report *r)
{
	if (!r)
		return;
	tt_manifest_release(&r->manifest);
	free(r->cells);
	free(r);
}

static const char small_profile[] =
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"
	"avg_active,completed,output_tokens,measured_s\n"
	"prefill,8K,1,Valid,143100,,57,,,1,,\n"
	"prefill,16K,1,Valid,140100,,116,,,1,,\n"
	"decode,8K,1,Valid,959.9,972,47,1,1,7,28796,30\n"
	"decode,8K,4,Valid,3419.6,866.9,54,1.2,4,28,102590,30\n"
	"decode,8K,16,Valid,10300,652.1,60,1.5,15.7,80,309008,30\n"
	"decode,16K,1,Valid,928.8,944.6,70,1.1,1,7,27864,30\n"
	"decode,16K,4,Requests queued,3144,798.6,84,1.3,3.9,24,94323,30\n"
	"decode,16K,16,Over capacity,,,,,,,,\n";

char *cf_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *d = malloc(4096);
	if (!d)
		return NULL;
	snprintf(d, 4096, "%s/tt-chart-%s-XXXXXX", base && *base ? base : "/tmp", tag);
	if (!mkdtemp(d)) {
		free(d);
		return NULL;
	}
	return d;
}

void cf_rmrf(const char *path)
{
	char cmd[4200];
	if (!path || !*path || strcmp(path, "/") == 0)
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", path);
}

struct tt_run *cf_small_run(const char *model, char **dir_out)
{
	struct tt_profile *p = NULL;
	struct tt_synth_opts o;
	struct tt_error err;
	struct tt_run *run = NULL;
	char *dir = cf_tmpdir("run"), path[4200];

	if (!dir)
		return NULL;
	if (tt_profile_parse(small_profile, "small-profile", &p, &err) != TT_OK) {
		fprintf(stderr, "profile: %s\n", err.msg);
		goto fail;
	}
	tt_synth_opts_init(&o);
	o.scale = 0.2; /* 6 s windows: enough tokens, fast to write */
	o.model = model;
	snprintf(path, sizeof path, "%s/run", dir);
	if (tt_synth_run(p, path, &o, NULL, &err) != TT_OK) {
		fprintf(stderr, "synth: %s\n", err.msg);
		goto fail;
	}
	if (tt_run_open(path, &run, &err) > TT_WARN) {
		fprintf(stderr, "open: %s\n", err.msg);
		goto fail;
	}
	tt_profile_free(p);
	*dir_out = dir;
	return run;
fail:
	tt_profile_free(p);
	cf_rmrf(dir);
	free(dir);
	return NULL;
}

struct tt_report *cf_analyze(struct tt_run *run)
{
	struct tt_analysis_opts ao;
	struct tt_report *r = NULL;
	struct tt_error err;
	tt_analysis_opts_init(&ao);
	tt_chart_analysis_opts(&ao);
	if (tt_analyze(run, &ao, &r, &err) > TT_WARN) {
		fprintf(stderr, "analyze: %s\n", err.msg);
		return NULL;
	}
	return r;
}

char *cf_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *d = NULL;
	long n;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		d = malloc((size_t)n + 1);
		if (d && fread(d, 1, (size_t)n, f) == (size_t)n) {
			d[n] = '\0';
			if (len)
				*len = (size_t)n;
		} else {
			free(d);
			d = NULL;
		}
	}
	fclose(f);
	return d;
}

int cf_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;
	if (!f)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

char *cf_run_cmd(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	struct tt_buf b;
	char chunk[4096];
	size_t n;
	int st;
	if (!p)
		return NULL;
	tt_buf_init(&b, 0);
	while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
		tt_buf_append(&b, chunk, n);
	st = pclose(p);
	if (st != 0 || b.failed) {
		tt_buf_release(&b);
		return NULL;
	}
	tt_buf_append(&b, "", 0);
	return tt_buf_steal(&b, NULL);
}

int cf_have_program(const char *name)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* ---- PNG ------------------------------------------------------------ */

struct reader {
	const unsigned char *d;
	size_t len, pos;
};

static cairo_status_t read_cb(void *closure, unsigned char *data, unsigned int len)
{
	struct reader *r = closure;
	if (r->pos + len > r->len)
		return CAIRO_STATUS_READ_ERROR;
	memcpy(data, r->d + r->pos, len);
	r->pos += len;
	return CAIRO_STATUS_SUCCESS;
}

static int from_surface(cairo_surface_t *s, struct cf_image *img)
{
	memset(img, 0, sizeof *img);
	if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(s);
		return -1;
	}
	cairo_surface_flush(s);
	img->surface = s;
	img->w = cairo_image_surface_get_width(s);
	img->h = cairo_image_surface_get_height(s);
	img->stride = cairo_image_surface_get_stride(s);
	img->px = cairo_image_surface_get_data(s);
	return 0;
}

int cf_png_decode(const struct tt_buf *png, struct cf_image *img)
{
	struct reader r = {(const unsigned char *)png->data, png->len, 0};
	return from_surface(cairo_image_surface_create_from_png_stream(read_cb, &r), img);
}

int cf_png_load(const char *path, struct cf_image *img)
{
	return from_surface(cairo_image_surface_create_from_png(path), img);
}

void cf_image_free(struct cf_image *img)
{
	if (img->surface)
		cairo_surface_destroy(img->surface);
	memset(img, 0, sizeof *img);
}

void cf_pixel(const struct cf_image *img, int x, int y, int *r, int *g, int *b)
{
	const unsigned char *p;
	if (x < 0 || y < 0 || x >= img->w || y >= img->h) {
		*r = *g = *b = -1000;
		return;
	}
	p = img->px + (size_t)y * (size_t)img->stride + (size_t)x * 4;
	/* cairo ARGB32/RGB24 are native-endian 32-bit words */
	{
		uint32_t v;
		memcpy(&v, p, 4);
		*r = (int)(v >> 16 & 0xff);
		*g = (int)(v >> 8 & 0xff);
		*b = (int)(v & 0xff);
	}
}

static int close_to(int r, int g, int b, int R, int G, int B, int tol)
{
	return abs(r - R) <= tol && abs(g - G) <= tol && abs(b - B) <= tol;
}

int cf_count_near(const struct cf_image *img, int x, int y, int radius, int R, int G, int B,
		  int tol)
{
	int n = 0;
	for (int dy = -radius; dy <= radius; dy++)
		for (int dx = -radius; dx <= radius; dx++) {
			int r, g, b;
			cf_pixel(img, x + dx, y + dy, &r, &g, &b);
			n += close_to(r, g, b, R, G, B, tol);
		}
	return n;
}

long cf_count_colour(const struct cf_image *img, int R, int G, int B, int tol)
{
	long n = 0;
	for (int y = 0; y < img->h; y++)
		for (int x = 0; x < img->w; x++) {
			int r, g, b;
			cf_pixel(img, x, y, &r, &g, &b);
			n += close_to(r, g, b, R, G, B, tol);
		}
	return n;
}

long cf_count_ink(const struct cf_image *img)
{
	return (long)img->w * img->h - cf_count_colour(img, 255, 255, 255, 0);
}

static double scale_f(int s, double v)
{
	return s == 2 ? log2(v) : s == 10 ? log10(v) : v;
}

double cf_map_x(const struct tt_chart_info *in, double v)
{
	double a = scale_f(in->x_scale, in->x_lo), b = scale_f(in->x_scale, in->x_hi);
	return in->plot_x + (scale_f(in->x_scale, v) - a) / (b - a) * in->plot_w;
}

double cf_map_y(const struct tt_chart_info *in, double v)
{
	double a = scale_f(in->y_scale, in->y_lo), b = scale_f(in->y_scale, in->y_hi);
	return in->plot_y + in->plot_h - (scale_f(in->y_scale, v) - a) / (b - a) * in->plot_h;
}
