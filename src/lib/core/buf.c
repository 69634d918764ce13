/* Growable buffer with a ceiling: see include/tokentrace/buf.h. */
#include "tokentrace/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX ((size_t)1 << 30)

void tt_buf_init(struct tt_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max ? max : DEFAULT_MAX;
	b->failed = 0;
}

void tt_buf_release(struct tt_buf *b)
{
	if (!b)
		return;
	free(b->data);
	tt_buf_init(b, b->max);
}

void tt_buf_reset(struct tt_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static enum tt_code grow(struct tt_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (b->failed)
		return TT_FAILED;
	if (extra > b->max || b->len > b->max - extra) {
		b->failed = 1;
		return TT_FAILED;
	}
	need = b->len + extra + 1;
	if (need <= b->cap)
		return TT_OK;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = 1;
		return TT_FAILED;
	}
	b->data = p;
	b->cap = cap;
	return TT_OK;
}

enum tt_code tt_buf_append(struct tt_buf *b, const void *data, size_t len)
{
	enum tt_code rc = grow(b, len);
	if (tt_failed(rc))
		return rc;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return TT_OK;
}

enum tt_code tt_buf_puts(struct tt_buf *b, const char *s)
{
	return tt_buf_append(b, s, strlen(s));
}

enum tt_code tt_buf_vprintf(struct tt_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	enum tt_code rc;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return TT_FAILED;
	rc = grow(b, (size_t)n);
	if (tt_failed(rc))
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return TT_OK;
}

enum tt_code tt_buf_printf(struct tt_buf *b, const char *fmt, ...)
{
	va_list ap;
	enum tt_code rc;

	va_start(ap, fmt);
	rc = tt_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *tt_buf_steal(struct tt_buf *b, size_t *len)
{
	char *p = b->data;

	if (!p && !b->failed) {
		p = calloc(1, 1);
	}
	if (len)
		*len = b->len;
	tt_buf_init(b, b->max);
	return p;
}

enum tt_code tt_buf_write_file(const struct tt_buf *b, const char *path, struct tt_error *err)
{
	FILE *f;
	size_t len = b && b->data ? b->len : 0;

	if (!path)
		return tt_error_set(err, TT_EARG, "no path to write to");
	f = fopen(path, "wb");
	if (!f)
		return tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (len && fwrite(b->data, 1, len, f) != len) {
		int e = errno;
		fclose(f);
		return tt_error_set(err, TT_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	if (fclose(f) != 0)
		return tt_error_set(err, TT_EIO, "cannot write '%s': %s", path, strerror(errno));
	return TT_OK;
}
