/* PNG output.  cairo's own writer compresses with libpng's defaults (zlib
 * level 6, every filter tried on every row), which costs more than drawing
 * the chart.  Charts are mostly flat colour: zlib level 1 with the Up
 * filter gives files about 10 % larger at a fraction of the time.  The deflate stream comes from libarchive's
 * gzip filter (the library links libarchive already, zlib only through it):
 * the gzip wrapper is taken off and the zlib wrapper PNG wants put on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "chart/chart_impl.h"

/* CRC-32 table, built per image (2K steps) rather than once into a global:
 * no shared state, so encoding is safe from several threads. */
struct crc {
	uint32_t t[256];
};

static void crc_init(struct crc *k)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int i = 0; i < 8; i++)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		k->t[n] = c;
	}
}

static uint32_t crc32_update(const struct crc *k, uint32_t crc, const unsigned char *d, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = k->t[(crc ^ d[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t adler32(const unsigned char *d, size_t n)
{
	uint32_t a = 1, b = 0;
	while (n > 0) {
		/* 5552: the most bytes before the sums can overflow 32 bits */
		size_t k = n < 5552 ? n : 5552;
		n -= k;
		while (k--) {
			a += *d++;
			b += a;
		}
		a %= 65521;
		b %= 65521;
	}
	return b << 16 | a;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void chunk(struct tt_buf *out, const struct crc *k, const char *type,
		  const unsigned char *data, size_t len)
{
	unsigned char hdr[8], crc[4];
	uint32_t c;
	put32(hdr, (uint32_t)len);
	memcpy(hdr + 4, type, 4);
	c = crc32_update(k, 0, hdr + 4, 4);
	c = crc32_update(k, c, data, len);
	put32(crc, c);
	tt_buf_append(out, hdr, 8);
	if (len)
		tt_buf_append(out, data, len);
	tt_buf_append(out, crc, 4);
}

static la_ssize_t gz_write(struct archive *a, void *ctx, const void *buf, size_t len)
{
	(void)a;
	return tt_buf_append(ctx, buf, len) == TT_OK ? (la_ssize_t)len : -1;
}

/* Raw deflate of data at zlib level 1, into out. */
static enum tt_code deflate_fast(const unsigned char *data, size_t len, struct tt_buf *gz,
				 const unsigned char **deflated, size_t *dlen, struct tt_error *err)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	enum tt_code rc = TT_OK;
	const unsigned char *p;
	size_t off;

	if (!a || !e) {
		rc = tt_error_set(err, TT_ENOMEM, "cannot compress a PNG: out of memory");
		goto cleanup;
	}
	if (archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "compression-level", "1") != ARCHIVE_OK ||
	    archive_write_set_format_raw(a) != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(a, 0) != ARCHIVE_OK ||
	    archive_write_open(a, gz, NULL, gz_write, NULL) != ARCHIVE_OK) {
		rc = tt_error_set(err, TT_EDRAW, "cannot compress a PNG: %s",
				  archive_error_string(a) ? archive_error_string(a) : "libarchive");
		goto cleanup;
	}
	archive_entry_set_pathname(e, "png");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_size(e, (la_int64_t)len);
	if (archive_write_header(a, e) != ARCHIVE_OK ||
	    archive_write_data(a, data, len) != (la_ssize_t)len ||
	    archive_write_close(a) != ARCHIVE_OK) {
		rc = tt_error_set(err, gz->failed ? TT_ENOMEM : TT_EDRAW,
				  "cannot compress a PNG: %s",
				  archive_error_string(a) ? archive_error_string(a) : "write failed");
		goto cleanup;
	}
	/* gzip (RFC 1952): 10-byte header, optional fields, deflate, CRC32 and
	 * size (8 bytes). */
	p = (const unsigned char *)gz->data;
	if (gz->len < 18 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8) {
		rc = tt_error_set(err, TT_EINTERNAL, "cannot compress a PNG: not a gzip stream");
		goto cleanup;
	}
	off = 10;
	if (p[3] & 4)
		off += 2 + (size_t)(p[10] | p[11] << 8);
	for (int flag = 8; flag <= 16; flag <<= 1)
		if (p[3] & flag) {
			while (off < gz->len && p[off])
				off++;
			off++;
		}
	if (p[3] & 2)
		off += 2;
	if (off + 8 > gz->len) {
		rc = tt_error_set(err, TT_EINTERNAL, "cannot compress a PNG: short gzip stream");
		goto cleanup;
	}
	*deflated = p + off;
	*dlen = gz->len - off - 8;
cleanup:
	if (e)
		archive_entry_free(e);
	if (a)
		archive_write_free(a);
	return rc;
}

enum tt_code tt__chart_png_encode(cairo_surface_t *s, struct tt_buf *out, struct tt_error *err)
{
	static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
	int stride = cairo_image_surface_get_stride(s);
	const unsigned char *px;
	size_t row = (size_t)w * 3 + 1, raw_len = row * (size_t)h;
	unsigned char *raw = NULL, *prev, *cur, ihdr[13];
	const unsigned char *deflated = NULL;
	size_t dlen = 0;
	struct tt_buf gz, idat;
	struct crc crc;
	enum tt_code rc;

	tt_buf_init(&gz, 0);
	tt_buf_init(&idat, 0);
	crc_init(&crc);
	cairo_surface_flush(s);
	px = cairo_image_surface_get_data(s);
	raw = malloc(raw_len);
	prev = calloc(1, (size_t)w * 3);
	cur = malloc((size_t)w * 3);
	if (!px || !raw || !prev || !cur) {
		rc = tt_error_set(err, TT_ENOMEM, "cannot write a PNG: out of memory");
		goto cleanup;
	}
	/* Filter Up on every row (Sub on the first): charts are flat colour and
	 * straight lines, so either filter leaves runs of zeros; choosing per
	 * row gained under 1 % in size for a third of the encode time. */
	for (int y = 0; y < h; y++) {
		const uint32_t *src = (const uint32_t *)(const void *)(px + (size_t)y * (size_t)stride);
		unsigned char *dst = raw + (size_t)y * row;
		unsigned char *t;
		for (int x = 0; x < w; x++) {
			uint32_t v = src[x]; /* cairo RGB24: 0x00RRGGBB in native order */
			cur[3 * x] = (unsigned char)(v >> 16);
			cur[3 * x + 1] = (unsigned char)(v >> 8);
			cur[3 * x + 2] = (unsigned char)v;
		}
		if (y == 0) {
			dst[0] = 1;
			for (size_t i = 0; i < (size_t)w * 3; i++)
				dst[1 + i] = (unsigned char)(cur[i] - (i >= 3 ? cur[i - 3] : 0));
		} else {
			dst[0] = 2;
			for (size_t i = 0; i < (size_t)w * 3; i++)
				dst[1 + i] = (unsigned char)(cur[i] - prev[i]);
		}
		t = prev;
		prev = cur;
		cur = t;
	}
	rc = deflate_fast(raw, raw_len, &gz, &deflated, &dlen, err);
	if (rc != TT_OK)
		goto cleanup;
	{
		/* zlib (RFC 1950): CMF 0x78 (deflate, 32K window), FLG 0x01 (level
		 * hint "fastest", check bits), data, Adler-32 */
		static const unsigned char zhdr[2] = {0x78, 0x01};
		unsigned char ad[4];
		put32(ad, adler32(raw, raw_len));
		tt_buf_append(&idat, zhdr, 2);
		tt_buf_append(&idat, deflated, dlen);
		tt_buf_append(&idat, ad, 4);
	}
	put32(ihdr, (uint32_t)w);
	put32(ihdr + 4, (uint32_t)h);
	ihdr[8] = 8;  /* bits per sample */
	ihdr[9] = 2;  /* truecolour */
	ihdr[10] = 0; /* deflate */
	ihdr[11] = 0; /* adaptive filtering */
	ihdr[12] = 0; /* no interlace */
	tt_buf_append(out, sig, sizeof sig);
	chunk(out, &crc, "IHDR", ihdr, sizeof ihdr);
	chunk(out, &crc, "IDAT", (const unsigned char *)idat.data, idat.len);
	chunk(out, &crc, "IEND", NULL, 0);
	if (idat.failed || out->failed)
		rc = tt_error_set(err, TT_ENOMEM, "cannot write a chart: output buffer is full");
cleanup:
	free(raw);
	free(prev);
	free(cur);
	tt_buf_release(&gz);
	tt_buf_release(&idat);
	return rc;
}
