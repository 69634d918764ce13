/* Output-length histograms (formats/length-hist-v1.md): the version line,
 * then LENGTH,WEIGHT or MIN:MAX,WEIGHT lines, comments and blank lines.
 * Every refusal names the file and the line. */
#include "tokentrace/run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/c_locale.h"
#include "core/text_clean.h"
#include "format/run_source.h"

#define HIST_MAX_BYTES 1048576
#define HIST_MAX_LINE 1024
#define HIST_MAX_BINS 10000
#define HIST_MAX_LEN 9999999999LL
#define HIST_MAX_WEIGHT 1e12
#define HIST_MAGIC "tokentrace-length-hist"

static int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

/* The field [p, end) shown in a message: cut, control bytes made safe. */
static void shown(const char *p, const char *end, char *buf, size_t len)
{
	size_t n = (size_t)(end - p);
	char *clean;

	if (n > 40)
		n = 40;
	clean = tt__text_clean(p, n, 48, 0);
	snprintf(buf, len, "%s%s", clean ? clean : "?", (size_t)(end - p) > 40 ? "..." : "");
	free(clean);
}

/* One to ten digits, 1..HIST_MAX_LEN, whitespace around; -1 if not. */
static int64_t parse_len(const char *p, const char *end)
{
	int64_t v = 0;
	int n = 0;

	p = skip_ws(p, end);
	while (end > p && is_ws(end[-1]))
		end--;
	for (; p < end; p++, n++) {
		if (*p < '0' || *p > '9' || n >= 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return n && v >= 1 && v <= HIST_MAX_LEN ? v : -1;
}

/* DIGITS[.DIGITS], at most 32 bytes, <= 1e12, whitespace around; -1 if not. */
static double parse_weight(const char *p, const char *end)
{
	char buf[40];
	size_t n;
	int digits = 0, frac = -1;

	p = skip_ws(p, end);
	while (end > p && is_ws(end[-1]))
		end--;
	n = (size_t)(end - p);
	if (n == 0 || n > 32)
		return -1;
	for (const char *q = p; q < end; q++) {
		if (*q >= '0' && *q <= '9') {
			digits++;
			if (frac >= 0)
				frac++;
		} else if (*q == '.' && frac < 0 && digits) {
			frac = 0;
		} else {
			return -1;
		}
	}
	if (frac == 0)
		return -1; /* "3." */
	memcpy(buf, p, n);
	buf[n] = '\0';
	{
		double w = tt__strtod_c(buf, NULL);
		return w <= HIST_MAX_WEIGHT ? w : -1;
	}
}

/* One bin line [p, end) (no line end). */
static enum tt_code parse_bin(const char *p, const char *end, const char *name, size_t line,
			      struct tt_length_bin *b, struct tt_error *err)
{
	const char *comma = memchr(p, ',', (size_t)(end - p)), *colon;
	char f[64];

	if (!comma)
		return tt_error_set(err, TT_EFORMAT, "%s:%zu: expected LENGTH,WEIGHT or "
				    "MIN:MAX,WEIGHT", name, line);
	if (memchr(comma + 1, ',', (size_t)(end - comma - 1)))
		return tt_error_set(err, TT_EFORMAT, "%s:%zu: more than two fields (expected "
				    "LENGTH,WEIGHT or MIN:MAX,WEIGHT)", name, line);
	colon = memchr(p, ':', (size_t)(comma - p));
	if (colon) {
		b->min = parse_len(p, colon);
		b->max = parse_len(colon + 1, comma);
		if (b->min < 0 || b->max < 0) {
			shown(p, comma, f, sizeof f);
			return tt_error_set(err, TT_EFORMAT, "%s:%zu: bin '%s' is not MIN:MAX of "
					    "lengths 1 to 9999999999", name, line, f);
		}
		if (b->max < b->min) {
			shown(p, comma, f, sizeof f);
			return tt_error_set(err, TT_EFORMAT, "%s:%zu: bin '%s' has MAX below MIN",
					    name, line, f);
		}
	} else {
		b->min = b->max = parse_len(p, comma);
		if (b->min < 0) {
			shown(p, comma, f, sizeof f);
			return tt_error_set(err, TT_EFORMAT, "%s:%zu: length '%s' is not a whole "
					    "number from 1 to 9999999999", name, line, f);
		}
	}
	b->weight = parse_weight(comma + 1, end);
	if (b->weight < 0) {
		shown(comma + 1, end, f, sizeof f);
		return tt_error_set(err, TT_EFORMAT, "%s:%zu: weight '%s' is not a number >= 0 "
				    "(digits, an optional fraction, at most 1e12)", name, line, f);
	}
	return TT_OK;
}

/* Line 1: "tokentrace-length-hist" WS "1" [WS]. */
static enum tt_code parse_version(const char *p, const char *end, const char *name,
				  struct tt_error *err)
{
	size_t k = strlen(HIST_MAGIC);
	const char *v;

	if ((size_t)(end - p) <= k || memcmp(p, HIST_MAGIC, k) || !is_ws(p[k]))
		return tt_error_set(err, TT_EFORMAT, "%s:1: not an output-length histogram "
				    "(the first line must be '" HIST_MAGIC " 1')", name);
	v = skip_ws(p + k, end);
	while (end > v && is_ws(end[-1]))
		end--;
	if (end - v == 1 && *v == '1')
		return TT_OK;
	for (const char *q = v; q < end; q++)
		if (*q < '0' || *q > '9' || q - v > 8)
			return tt_error_set(err, TT_EFORMAT, "%s:1: bad version line (expected '"
					    HIST_MAGIC " 1')", name);
	return tt_error_setv(err, TT_FAILED, TT_EVERSION, "%s:1: histogram version %.*s is "
			     "not known to this reader (it reads version 1)", name,
			     (int)(end - v), v);
}

enum tt_code tt_length_hist_parse(const char *data, size_t len, const char *name,
				  struct tt_length_bin **bins, size_t *n, struct tt_error *err)
{
	struct tt_length_bin *v = NULL;
	size_t k = 0, line = 0;
	double total = 0;
	const char *p = data, *end = data + len;
	enum tt_code rc = TT_OK;

	if (len == 0)
		return tt_error_set(err, TT_EFORMAT, "%s: the file is empty", name);
	if (len > HIST_MAX_BYTES)
		return tt_error_set(err, TT_EFORMAT, "%s: larger than %d bytes", name,
				    HIST_MAX_BYTES);
	if (memchr(data, '\0', len))
		return tt_error_set(err, TT_EFORMAT, "%s: holds a NUL byte: not a text file",
				    name);
	while (p < end && rc == TT_OK) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q;

		line++;
		if (le > p && le[-1] == '\r')
			le--;
		if (le - p > HIST_MAX_LINE) {
			rc = tt_error_set(err, TT_EFORMAT, "%s:%zu: line longer than %d bytes", name,
					  line, HIST_MAX_LINE);
			break;
		}
		q = skip_ws(p, le);
		if (line == 1) {
			rc = parse_version(p, le, name, err);
		} else if (q == le || *q == '#') {
			/* blank or comment */
		} else {
			if (k >= HIST_MAX_BINS)
				rc = tt_error_set(err, TT_EFORMAT, "%s:%zu: more than %d bins", name,
						  line, HIST_MAX_BINS);
			if (rc == TT_OK && !(k & (k - 1))) {
				struct tt_length_bin *nv = realloc(v, (k ? 2 * k : 1) * sizeof *v);
				if (!nv)
					rc = tt_error_set(err, TT_ENOMEM, "out of memory reading %s",
							  name);
				else
					v = nv;
			}
			if (rc == TT_OK)
				rc = parse_bin(p, le, name, line, &v[k], err);
			if (rc == TT_OK)
				total += v[k++].weight;
		}
		p = nl ? nl + 1 : end;
	}
	if (rc == TT_OK && k == 0)
		rc = tt_error_set(err, TT_EFORMAT, "%s: no bin (expected LENGTH,WEIGHT or "
				  "MIN:MAX,WEIGHT lines after the version line)", name);
	if (rc == TT_OK && !(total > 0))
		rc = tt_error_set(err, TT_EFORMAT, "%s: the weights sum to 0", name);
	if (rc != TT_OK) {
		free(v);
		return rc;
	}
	*bins = v;
	*n = k;
	return TT_OK;
}

enum tt_code tt_length_hist_load(const char *path, struct tt_length_bin **bins, size_t *n,
				 struct tt_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	/* A regular file only: fopen of a FIFO waited for a writer forever
	 * (--output-tokens @FIFO hung before the capture started). */
	enum tt_code rc = tt__read_regular(path, "output-length histogram", HIST_MAX_BYTES, &buf,
					   &len, err);

	if (tt_failed(rc))
		return rc;
	rc = tt_length_hist_parse(buf, len, path, bins, n, err);
	free(buf);
	return rc;
}
