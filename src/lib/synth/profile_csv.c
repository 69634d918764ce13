/* Performance profiles: the seed-matrix CSV reader (formats/profile-csv.md);
 * the model built from its rows is profile.c. */
#include "tokentrace/profile.h"
#include "core/c_locale.h"
#include "synth/profile_impl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum column {
	COL_PHASE, COL_CONTEXT, COL_CONCURRENCY, COL_STATUS, COL_TOTAL, COL_PER_REQ,
	COL_TTFT, COL_TBT, COL_AVG_ACTIVE, COL_COMPLETED, COL_OUTPUT, COL_MEASURED,
	COL_COUNT
};

static const char *const column_names[COL_COUNT] = {
	"phase", "context", "concurrency", "status", "total_tok_s", "per_request_tok_s",
	"ttft_ms", "tbt_ms", "avg_active", "completed", "output_tokens", "measured_s"
};

/* Splits one CSV record starting at *pos into fields (quotes with "" escapes
 * allowed), NUL-terminating them in place.  Returns the field count, or -1 on
 * an unterminated quote.  *pos moves past the record's line end. */
static int split_record(char **pos, char **fields, int max_fields)
{
	char *p = *pos, *w;
	int n = 0;

	for (;;) {
		char *start = p;
		w = p;
		if (*p == '"') {
			p++;
			for (;;) {
				if (!*p)
					return -1;
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			while (*p && *p != ',' && *p != '\n' && *p != '\r')
				p++;
		} else {
			while (*p && *p != ',' && *p != '\n' && *p != '\r')
				p++;
			w = p;
		}
		char end = *p;
		*w = '\0';
		if (n < max_fields)
			fields[n] = start;
		n++;
		if (end == ',') {
			p++;
			continue;
		}
		/* the terminator was overwritten; `end` remembers it */
		if (end == '\r') {
			p++;
			if (*p == '\n')
				p++;
		} else if (end == '\n') {
			p++;
		}
		break;
	}
	*pos = p;
	return n;
}

static char *trim(char *s)
{
	char *e;
	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Numbers may carry thousands separators ("1,234" in a quoted field). */
static int parse_number(const char *s, double *out)
{
	char buf[64], *end;
	size_t j = 0;

	if (!*s) {
		*out = NAN;
		return 0;
	}
	for (const char *p = s; *p; p++) {
		if (*p == ',' || *p == '_')
			continue;
		if (j + 1 >= sizeof buf)
			return -1;
		buf[j++] = *p;
	}
	buf[j] = '\0';
	errno = 0;
	double v = tt__strtod_c(buf, &end); /* "12.5" whatever the locale */
	if (end == buf || *end || errno == ERANGE)
		return -1;
	*out = v;
	return 0;
}

static int parse_count(const char *s, long *out)
{
	double v;
	if (!*s) {
		*out = -1;
		return 0;
	}
	if (parse_number(s, &v) || v < 0 || v > 1e15 || v != floor(v))
		return -1;
	*out = (long)v;
	return 0;
}

static int parse_phase(const char *s, enum tt_phase *out)
{
	char low[32];
	size_t i;
	for (i = 0; s[i] && i + 1 < sizeof low; i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = '\0';
	if (!strcmp(low, "prefill")) {
		*out = TT_PHASE_PREFILL;
		return 0;
	}
	if (!strcmp(low, "decode") || !strcmp(low, "sustained decode")) {
		*out = TT_PHASE_DECODE;
		return 0;
	}
	return -1;
}

enum tt_code tt_profile_parse(const char *text, const char *name, struct tt_profile **out,
			      struct tt_error *err)
{
	struct tt_profile *p = NULL;
	char *buf = NULL, *pos, *fields[64];
	int col[COL_COUNT];
	enum tt_code rc = TT_OK;
	long line = 0;

	if (!text || !out)
		return tt_error_set(err, TT_EARG, "tt_profile_parse: NULL argument");
	if (!name)
		name = "<profile>";
	buf = strdup(text);
	p = calloc(1, sizeof *p);
	if (!buf || !p) {
		rc = tt_error_set(err, TT_ENOMEM, "%s: out of memory", name);
		goto cleanup;
	}
	pos = buf;
	/* skip a UTF-8 byte order mark */
	if ((unsigned char)pos[0] == 0xEF && (unsigned char)pos[1] == 0xBB &&
	    (unsigned char)pos[2] == 0xBF)
		pos += 3;

	/* header: first non-blank line */
	int nf = 0;
	for (;;) {
		if (!*pos) {
			rc = tt_error_set(err, TT_EFORMAT, "%s: empty file, expected a header row "
					  "starting 'phase,context,concurrency'", name);
			goto cleanup;
		}
		line++;
		nf = split_record(&pos, fields, 64);
		if (nf < 0) {
			rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: unterminated quote", name, line);
			goto cleanup;
		}
		if (nf > 1 || *trim(fields[0]))
			break;
	}
	for (int c = 0; c < COL_COUNT; c++)
		col[c] = -1;
	for (int i = 0; i < nf && i < 64; i++) {
		char *h = trim(fields[i]);
		for (int c = 0; c < COL_COUNT; c++)
			if (!strcasecmp(h, column_names[c]) && col[c] < 0)
				col[c] = i;
	}
	for (int c = COL_PHASE; c <= COL_CONCURRENCY; c++)
		if (col[c] < 0) {
			rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: header has no '%s' column "
					  "(a header row naming the columns is required)",
					  name, line, column_names[c]);
			goto cleanup;
		}

	while (*pos) {
		struct tt_profile_point pt;
		const char *v[COL_COUNT];

		line++;
		nf = split_record(&pos, fields, 64);
		if (nf < 0) {
			rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: unterminated quote", name, line);
			goto cleanup;
		}
		if (nf == 1 && !*trim(fields[0]))
			continue; /* blank line */
		if (fields[0][0] == '#')
			continue;
		for (int c = 0; c < COL_COUNT; c++)
			v[c] = col[c] >= 0 && col[c] < nf && col[c] < 64 ? trim(fields[col[c]]) : "";
		memset(&pt, 0, sizeof pt);
		if (parse_phase(v[COL_PHASE], &pt.phase)) {
			rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: field 'phase': '%s' is not "
					  "'prefill' or 'decode'", name, line, v[COL_PHASE]);
			goto cleanup;
		}
		pt.context = tt_parse_tokens(v[COL_CONTEXT]);
		if (pt.context <= 0) {
			rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: field 'context': '%s' is not a "
					  "token count like 8192 or 8K", name, line, v[COL_CONTEXT]);
			goto cleanup;
		}
		long conc;
		if (parse_count(v[COL_CONCURRENCY], &conc) || conc <= 0 || conc > 1000000) {
			rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: field 'concurrency': '%s' is not "
					  "a positive whole number", name, line, v[COL_CONCURRENCY]);
			goto cleanup;
		}
		pt.concurrency = (int)conc;
		snprintf(pt.status, sizeof pt.status, "%s", v[COL_STATUS]);
		double *dst[] = {&pt.total_tok_s, &pt.per_request_tok_s, &pt.ttft_ms, &pt.tbt_ms,
				 &pt.avg_active, &pt.measured_s};
		int dcol[] = {COL_TOTAL, COL_PER_REQ, COL_TTFT, COL_TBT, COL_AVG_ACTIVE,
			      COL_MEASURED};
		for (size_t i = 0; i < sizeof dcol / sizeof dcol[0]; i++)
			if (parse_number(v[dcol[i]], dst[i]) || *dst[i] < 0) {
				rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: field '%s': '%s' is not a "
						  "non-negative number", name, line,
						  column_names[dcol[i]], v[dcol[i]]);
				goto cleanup;
			}
		long *cdst[] = {&pt.completed, &pt.output_tokens};
		int ccol[] = {COL_COMPLETED, COL_OUTPUT};
		for (size_t i = 0; i < 2; i++)
			if (parse_count(v[ccol[i]], cdst[i])) {
				rc = tt_error_set(err, TT_EFORMAT, "%s:%ld: field '%s': '%s' is not a "
						  "whole number", name, line, column_names[ccol[i]],
						  v[ccol[i]]);
				goto cleanup;
			}
		rc = tt__profile_push(p, &pt, err);
		if (tt_failed(rc))
			goto cleanup;
	}
	rc = tt__profile_build(p, name, err);
	if (tt_failed(rc))
		goto cleanup;
	*out = p;
	p = NULL;
cleanup:
	tt_profile_free(p);
	free(buf);
	return rc;
}

enum tt_code tt_profile_load(const char *path, struct tt_profile **out, struct tt_error *err)
{
	FILE *f = NULL;
	char *text = NULL;
	size_t len = 0, cap = 0;
	enum tt_code rc = TT_OK;

	if (!path || !out)
		return tt_error_set(err, TT_EARG, "tt_profile_load: NULL argument");
	f = fopen(path, "rb");
	if (!f)
		return tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		if (cap - len < 4096) {
			/* a profile is a small table; refuse runaway input */
			if (cap >= (64u << 20)) {
				rc = tt_error_set(err, TT_EFORMAT, "'%s': larger than 64 MiB, "
						  "not a profile", path);
				goto cleanup;
			}
			size_t ncap = cap ? cap * 2 : 16384;
			char *nt = realloc(text, ncap);
			if (!nt) {
				rc = tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", path);
				goto cleanup;
			}
			text = nt;
			cap = ncap;
		}
		size_t got = fread(text + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0) {
			if (ferror(f)) {
				rc = tt_error_set(err, TT_EIO, "cannot read '%s': %s", path,
						  strerror(errno));
				goto cleanup;
			}
			break;
		}
	}
	text[len] = '\0';
	if (memchr(text, '\0', len)) {
		rc = tt_error_set(err, TT_EFORMAT, "'%s': contains NUL bytes, not a CSV profile",
				  path);
		goto cleanup;
	}
	rc = tt_profile_parse(text, path, out, err);
cleanup:
	if (f)
		fclose(f);
	free(text);
	return rc;
}
