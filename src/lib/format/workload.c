/* Request traces to replay (formats/workload-trace-v1.md): Mooncake JSONL
 * (one cJSON object a line) and the Azure CSV, read line by line into 24
 * bytes a request plus 4 a block id.  The whole file is checked, the
 * slice outside --trace-start/--trace-duration too, so a damaged line is
 * refused before any request goes out.  Every refusal names the file and
 * the line. */
#include "tokentrace/workload.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/text_clean.h"
#include "format/run_source.h"

#define WL_MAX_LINE ((size_t)1 << 20)
#define WL_MAX_REQUESTS 10000000u
#define WL_MAX_INPUT 2097152
#define WL_MAX_OUTPUT 1048576
#define WL_MAX_TS_MS 1e12 /* 31 years of trace: more is a unit mistake */
#define WL_MAX_COLS 64

struct parser {
	const char *name;
	enum tt_workload_format fmt;
	struct tt_workload_opts o;
	struct tt_workload *w;
	size_t cap_reqs, cap_blocks;
	int64_t t0;         /* the first row's raw time, ns */
	int64_t prev;       /* the previous row's raw time */
	int64_t kept0;      /* the first kept row's time from t0; -1 none yet */
	int started;        /* a row (or the Azure header) was seen */
	int col_ts, col_in, col_out, n_cols; /* Azure */
	uint32_t ids[WL_MAX_INPUT / TT_WORKLOAD_BLOCK_TOKENS + 1];
};

const char *tt_workload_format_name(enum tt_workload_format f)
{
	switch (f) {
	case TT_WORKLOAD_MOONCAKE:
		return "mooncake";
	case TT_WORKLOAD_AZURE:
		return "azure";
	case TT_WORKLOAD_AUTO:
		break;
	}
	return "auto";
}

int tt_workload_format_parse(const char *s)
{
	if (!s || !strcmp(s, "auto"))
		return TT_WORKLOAD_AUTO;
	if (!strcmp(s, "mooncake"))
		return TT_WORKLOAD_MOONCAKE;
	if (!strcmp(s, "azure"))
		return TT_WORKLOAD_AZURE;
	return -1;
}

const uint32_t *tt_workload_blocks(const struct tt_workload *w, size_t i, size_t *n)
{
	uint32_t b0 = i ? w->reqs[i - 1].block_end : 0;

	*n = w->reqs[i].block_end - b0;
	return w->blocks ? w->blocks + b0 : NULL;
}

void tt_workload_free(struct tt_workload *w)
{
	if (!w)
		return;
	free(w->reqs);
	free(w->blocks);
	free(w);
}

/* A piece of the line shown in a message: cut, control bytes made safe. */
static void shown(const char *p, size_t n, char *buf, size_t len)
{
	size_t k = n > 40 ? 40 : n;
	char *clean = tt__text_clean(p, k, 48, 0);

	snprintf(buf, len, "%s%s", clean ? clean : "?", n > 40 ? "..." : "");
	free(clean);
}

/* The one way a line is refused: "FILE:LINE: REASON". */
static enum tt_code refuse_at(struct parser *ps, struct tt_error *err, size_t line,
			      const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

static enum tt_code refuse_at(struct parser *ps, struct tt_error *err, size_t line,
			      const char *fmt, ...)
{
	char why[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return tt_error_set(err, TT_EFORMAT, "%s:%zu: %s", ps->name, line, why);
}

/* A row's raw time (ns) and lengths and ids: checked in order, sliced,
 * and kept. */
static enum tt_code add_row(struct parser *ps, size_t line, int64_t t, int64_t in, int64_t out,
			    size_t n_ids, struct tt_error *err)
{
	struct tt_workload *w = ps->w;
	int64_t rel, start = llround(ps->o.start_s * 1e9);
	struct tt_workload_req *r;

	if (!ps->started) {
		ps->started = 1;
		ps->t0 = t;
		ps->prev = t;
	}
	if (t < ps->prev)
		return refuse_at(ps, err, line, "time goes back (%.3f ms before the line above's): "
				  "a trace lists its requests in time order",
			      (double)(ps->prev - t) / 1e6);
	ps->prev = t;
	if (++w->rows > WL_MAX_REQUESTS)
		return refuse_at(ps, err, line, "more than %u requests", WL_MAX_REQUESTS);
	rel = t - ps->t0;
	if (rel < start || (ps->o.duration_s > 0 && rel >= start + llround(ps->o.duration_s * 1e9)))
		return TT_OK; /* checked, not kept */
	if (ps->kept0 < 0)
		ps->kept0 = rel;
	if (w->n == ps->cap_reqs) {
		size_t nc = ps->cap_reqs ? ps->cap_reqs * 2 : 1024;
		struct tt_workload_req *nr = realloc(w->reqs, nc * sizeof *nr);
		if (!nr)
			return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", ps->name);
		w->reqs = nr;
		ps->cap_reqs = nc;
	}
	if (n_ids) {
		if (w->n_blocks + n_ids > UINT32_MAX)
			return refuse_at(ps, err, line, "more than 2^32 block ids in the trace");
		if (w->n_blocks + n_ids > ps->cap_blocks) {
			size_t nc = ps->cap_blocks ? ps->cap_blocks * 2 : 4096;
			uint32_t *nb;
			while (nc < w->n_blocks + n_ids)
				nc *= 2;
			nb = realloc(w->blocks, nc * sizeof *nb);
			if (!nb)
				return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'",
						    ps->name);
			w->blocks = nb;
			ps->cap_blocks = nc;
		}
		memcpy(w->blocks + w->n_blocks, ps->ids, n_ids * sizeof *ps->ids);
		w->n_blocks += n_ids;
	}
	r = &w->reqs[w->n++];
	r->t_ns = llround((double)(rel - ps->kept0) / ps->o.speedup);
	r->input = (uint32_t)in;
	if (ps->o.output_cap > 0 && out > ps->o.output_cap) {
		out = ps->o.output_cap;
		w->output_capped++;
	}
	r->output = (uint32_t)out;
	r->line = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
	r->block_end = (uint32_t)w->n_blocks;
	w->span_ns = r->t_ns;
	w->input_total += in;
	w->output_total += out;
	return TT_OK;
}

/* An integral JSON number in [lo, hi] into *v; 0 if not. */
static int json_int(const cJSON *j, double lo, double hi, int64_t *v)
{
	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble) || j->valuedouble != floor(j->valuedouble))
		return 0;
	if (j->valuedouble < lo || j->valuedouble > hi)
		return 0;
	*v = (int64_t)j->valuedouble;
	return 1;
}

static enum tt_code length_refused(struct parser *ps, struct tt_error *err, size_t line,
				   const char *what, const cJSON *j, const char *text, long max)
{
	char s[64];

	if (j && cJSON_IsNumber(j))
		snprintf(s, sizeof s, "%.17g", j->valuedouble);
	else if (text)
		snprintf(s, sizeof s, "%s", text);
	else
		snprintf(s, sizeof s, "%s", j ? "not a number" : "missing");
	if (j && cJSON_IsNumber(j) && j->valuedouble > max)
		return refuse_at(ps, err, line, "%s %s is huge (at most %ld)", what, s, max);
	return refuse_at(ps, err, line, "%s %s: expected a whole number of tokens from 1 to %ld",
		      what, s, max);
}

static enum tt_code mooncake_line(struct parser *ps, const char *p, size_t n, size_t line,
				  struct tt_error *err)
{
	const char *stop = NULL;
	/* the whole line, not a leading value of it ("2023-11-16,..." is 2023) */
	cJSON *o = cJSON_ParseWithLengthOpts(p, n, &stop, 0), *ts, *in, *out, *ids;
	int64_t vin, vout, t;
	size_t n_ids = 0;
	enum tt_code rc;
	char s[64];

	while (o && stop && stop < p + n && (*stop == ' ' || *stop == '\t'))
		stop++;
	if (!o || !cJSON_IsObject(o) || stop != p + n) {
		cJSON_Delete(o);
		shown(p, n, s, sizeof s);
		return refuse_at(ps, err, line, "not a JSON object ('%s'): a Mooncake trace has one "
				  "{\"timestamp\", \"input_length\", \"output_length\", \"hash_ids\"} "
				  "a line", s);
	}
	ts = cJSON_GetObjectItemCaseSensitive(o, "timestamp");
	in = cJSON_GetObjectItemCaseSensitive(o, "input_length");
	out = cJSON_GetObjectItemCaseSensitive(o, "output_length");
	ids = cJSON_GetObjectItemCaseSensitive(o, "hash_ids");
	if (!ts || !cJSON_IsNumber(ts) || !isfinite(ts->valuedouble)) {
		rc = refuse_at(ps, err, line, "%s 'timestamp' (ms since the trace began)",
			    ts ? "bad" : "missing");
		goto done;
	}
	if (ts->valuedouble < 0 || ts->valuedouble > WL_MAX_TS_MS) {
		rc = refuse_at(ps, err, line, "timestamp %.17g is %s", ts->valuedouble,
			    ts->valuedouble < 0 ? "negative" : "beyond 10^12 ms");
		goto done;
	}
	t = llround(ts->valuedouble * 1e6);
	if (!json_int(in, 1, WL_MAX_INPUT, &vin)) {
		rc = length_refused(ps, err, line, "input_length", in, NULL, WL_MAX_INPUT);
		goto done;
	}
	if (!json_int(out, 1, WL_MAX_OUTPUT, &vout)) {
		rc = length_refused(ps, err, line, "output_length", out, NULL, WL_MAX_OUTPUT);
		goto done;
	}
	if (ids && !cJSON_IsNull(ids)) {
		size_t most = ((size_t)vin + TT_WORKLOAD_BLOCK_TOKENS - 1) / TT_WORKLOAD_BLOCK_TOKENS;
		const cJSON *e;
		if (!cJSON_IsArray(ids)) {
			rc = refuse_at(ps, err, line, "hash_ids is not an array of block ids");
			goto done;
		}
		cJSON_ArrayForEach(e, ids) {
			int64_t id;
			if (n_ids == most) {
				rc = refuse_at(ps, err, line, "hash_ids has more ids than the %zu "
							   "blocks of %lld tokens (%d a block)",
					    most, (long long)vin, TT_WORKLOAD_BLOCK_TOKENS);
				goto done;
			}
			if (!json_int(e, 0, 4294967295.0, &id)) {
				rc = refuse_at(ps, err, line, "hash_ids[%zu] is not a whole number "
							   "from 0 to 4294967295", n_ids);
				goto done;
			}
			ps->ids[n_ids++] = (uint32_t)id;
		}
	}
	rc = add_row(ps, line, t, vin, vout, n_ids, err);
done:
	cJSON_Delete(o);
	return rc;
}

/* ---- Azure CSV ---------------------------------------------------------- */

/* Split a CSV line into at most WL_MAX_COLS fields (quotes stripped); the
 * count, or -1 for a quote that does not close before a comma. */
static int split_csv(const char *p, size_t n, const char **f, size_t *fl)
{
	int k = 0;
	size_t i = 0;

	for (;;) {
		size_t a = i, b;
		if (k == WL_MAX_COLS)
			return k + 1;
		if (i < n && p[i] == '"') {
			a = ++i;
			while (i < n && p[i] != '"')
				i++;
			if (i == n)
				return -1;
			b = i++;
			if (i < n && p[i] != ',')
				return -1;
		} else {
			while (i < n && p[i] != ',')
				i++;
			b = i;
		}
		while (a < b && (p[a] == ' ' || p[a] == '\t'))
			a++;
		while (b > a && (p[b - 1] == ' ' || p[b - 1] == '\t'))
			b--;
		f[k] = p + a;
		fl[k] = b - a;
		k++;
		if (i >= n)
			return k;
		i++; /* the comma */
	}
}

static int digits(const char *p, size_t n, int64_t *v, size_t max_n)
{
	int64_t x = 0;

	if (n == 0 || n > max_n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		x = x * 10 + (p[i] - '0');
	}
	*v = x;
	return 1;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* YYYY-MM-DD[ T]HH:MM:SS[.f{1,9}][Z|+HH:MM|-HH:MM] to ns since 1970 UTC. */
static int parse_stamp(const char *p, size_t n, int64_t *out)
{
	int64_t y, mo, d, h, mi, s, frac = 0, off = 0;
	size_t i = 19;

	if (n < 19 || p[4] != '-' || p[7] != '-' || (p[10] != ' ' && p[10] != 'T') ||
	    p[13] != ':' || p[16] != ':')
		return 0;
	if (!digits(p, 4, &y, 4) || !digits(p + 5, 2, &mo, 2) || !digits(p + 8, 2, &d, 2) ||
	    !digits(p + 11, 2, &h, 2) || !digits(p + 14, 2, &mi, 2) || !digits(p + 17, 2, &s, 2))
		return 0;
	if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    s > 60)
		return 0;
	if (i < n && p[i] == '.') {
		size_t k = 0;
		i++;
		while (i < n && p[i] >= '0' && p[i] <= '9' && k < 9) {
			frac = frac * 10 + (p[i] - '0');
			i++;
			k++;
		}
		if (k == 0 || (i < n && p[i] >= '0' && p[i] <= '9'))
			return 0;
		for (; k < 9; k++)
			frac *= 10;
	}
	if (i < n && p[i] == 'Z') {
		i++;
	} else if (i < n && (p[i] == '+' || p[i] == '-')) {
		int64_t oh, om;
		if (n - i != 6 || p[i + 3] != ':' || !digits(p + i + 1, 2, &oh, 2) ||
		    !digits(p + i + 4, 2, &om, 2) || oh > 23 || om > 59)
			return 0;
		off = (oh * 60 + om) * 60 * (p[i] == '+' ? 1 : -1);
		i += 6;
	}
	if (i != n)
		return 0;
	*out = ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off) * 1000000000) +
	       frac;
	return 1;
}

static enum tt_code azure_header(struct parser *ps, const char *p, size_t n, size_t line,
				 struct tt_error *err)
{
	const char *f[WL_MAX_COLS + 1];
	size_t fl[WL_MAX_COLS + 1];
	int k = split_csv(p, n, f, fl);
	static const char *const need[3] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};
	int *col[3] = {&ps->col_ts, &ps->col_in, &ps->col_out};

	if (k < 0 || k > WL_MAX_COLS)
		return refuse_at(ps, err, line, "bad CSV header (an unclosed quote or over %d columns)",
			      WL_MAX_COLS);
	ps->col_ts = ps->col_in = ps->col_out = -1;
	for (int i = 0; i < k; i++)
		for (int j = 0; j < 3; j++)
			if (fl[i] == strlen(need[j]) && !memcmp(f[i], need[j], fl[i])) {
				if (*col[j] >= 0)
					return refuse_at(ps, err, line, "column %s named twice", need[j]);
				*col[j] = i;
			}
	for (int j = 0; j < 3; j++)
		if (*col[j] < 0)
			return refuse_at(ps, err, line, "missing column %s (an Azure trace's header "
						     "names TIMESTAMP, ContextTokens and "
						     "GeneratedTokens)", need[j]);
	ps->n_cols = k;
	return TT_OK;
}

static enum tt_code azure_row(struct parser *ps, const char *p, size_t n, size_t line,
			      struct tt_error *err)
{
	const char *f[WL_MAX_COLS + 1];
	size_t fl[WL_MAX_COLS + 1];
	int k = split_csv(p, n, f, fl);
	int64_t t = 0, in = 0, out = 0;
	char s[64];

	if (k != ps->n_cols) {
		shown(p, n, s, sizeof s);
		return refuse_at(ps, err, line, "%d fields where the header has %d ('%s')",
			      k > WL_MAX_COLS ? WL_MAX_COLS + 1 : k, ps->n_cols, s);
	}
	if (!parse_stamp(f[ps->col_ts], fl[ps->col_ts], &t)) {
		shown(f[ps->col_ts], fl[ps->col_ts], s, sizeof s);
		return refuse_at(ps, err, line, "TIMESTAMP '%s' is not YYYY-MM-DD HH:MM:SS[.FFFFFFF]", s);
	}
	if (!digits(f[ps->col_in], fl[ps->col_in], &in, 10) || in < 1 || in > WL_MAX_INPUT) {
		shown(f[ps->col_in], fl[ps->col_in], s, sizeof s);
		return refuse_at(ps, err, line, "ContextTokens '%s' %s", s,
			      fl[ps->col_in] && in > WL_MAX_INPUT && f[ps->col_in][0] != '-'
				      ? "is huge (at most 2097152)"
				      : "is not a whole number of tokens from 1 to 2097152");
	}
	if (!digits(f[ps->col_out], fl[ps->col_out], &out, 10) || out < 1 || out > WL_MAX_OUTPUT) {
		shown(f[ps->col_out], fl[ps->col_out], s, sizeof s);
		return refuse_at(ps, err, line, "GeneratedTokens '%s' %s", s,
			      fl[ps->col_out] && out > WL_MAX_OUTPUT && f[ps->col_out][0] != '-'
				      ? "is huge (at most 1048576)"
				      : "is not a whole number of tokens from 1 to 1048576");
	}
	return add_row(ps, line, t, in, out, 0, err);
}

static int has_word(const char *p, size_t n, const char *w)
{
	size_t k = strlen(w);

	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(p + i, w, k))
			return 1;
	return 0;
}

/* One line (without its end). */
static enum tt_code feed(struct parser *ps, const char *p, size_t n, size_t line,
			 struct tt_error *err)
{
	size_t i = 0;

	if (n && p[n - 1] == '\r')
		n--;
	if (memchr(p, '\0', n))
		return refuse_at(ps, err, line, "a NUL byte (not a text file)");
	if (n > WL_MAX_LINE)
		return refuse_at(ps, err, line, "longer than %zu bytes", WL_MAX_LINE);
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (i == n)
		return TT_OK;
	if (ps->fmt == TT_WORKLOAD_AUTO) {
		if (p[i] == '{')
			ps->fmt = TT_WORKLOAD_MOONCAKE;
		else if (has_word(p + i, n - i, "TIMESTAMP"))
			ps->fmt = TT_WORKLOAD_AZURE;
		else {
			char s[64];
			shown(p, n, s, sizeof s);
			return refuse_at(ps, err, line, "'%s' is neither a Mooncake JSON line nor an "
						     "Azure CSV header (give --trace-format)", s);
		}
		ps->w->format = ps->fmt;
	}
	if (ps->fmt == TT_WORKLOAD_MOONCAKE)
		return mooncake_line(ps, p + i, n - i, line, err);
	if (ps->n_cols == 0)
		return azure_header(ps, p, n, line, err);
	return azure_row(ps, p, n, line, err);
}

static enum tt_code begin(struct parser **out, const char *name, enum tt_workload_format fmt,
			  const struct tt_workload_opts *o, struct tt_error *err)
{
	struct parser *ps = calloc(1, sizeof *ps);

	if (!ps || !(ps->w = calloc(1, sizeof *ps->w))) {
		free(ps);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	ps->name = name;
	ps->fmt = fmt;
	ps->w->format = fmt;
	ps->kept0 = -1;
	if (o)
		ps->o = *o;
	if (!(ps->o.speedup > 0) || !isfinite(ps->o.speedup))
		ps->o.speedup = 1;
	if (!(ps->o.start_s >= 0) || !isfinite(ps->o.start_s))
		ps->o.start_s = 0;
	if (!isfinite(ps->o.duration_s))
		ps->o.duration_s = 0;
	*out = ps;
	return TT_OK;
}

static enum tt_code end(struct parser *ps, enum tt_code rc, size_t lines,
			struct tt_workload **out, struct tt_error *err)
{
	struct tt_workload *w = ps->w;

	if (!tt_failed(rc) && w->rows == 0)
		rc = tt_error_set(err, TT_EFORMAT, "%s:%zu: no request in the file%s", ps->name,
				  lines ? lines : 1,
				  ps->n_cols ? " (only the CSV header)" : "");
	if (!tt_failed(rc) && w->n == 0)
		rc = tt_error_set(err, TT_EFORMAT, "%s: no request in the slice asked (--trace-start "
						   "%gs, --trace-duration %gs) of its %llu",
				  ps->name, ps->o.start_s, ps->o.duration_s,
				  (unsigned long long)w->rows);
	if (tt_failed(rc)) {
		tt_workload_free(w);
	} else {
		/* give back what the doubling left unused */
		struct tt_workload_req *r = realloc(w->reqs, w->n * sizeof *r);
		if (r)
			w->reqs = r;
		if (w->n_blocks) {
			uint32_t *b = realloc(w->blocks, w->n_blocks * sizeof *b);
			if (b)
				w->blocks = b;
		}
		*out = w;
	}
	free(ps);
	return tt_failed(rc) ? rc : TT_OK;
}

enum tt_code tt_workload_parse(const char *data, size_t len, const char *name,
			       enum tt_workload_format format,
			       const struct tt_workload_opts *opts, struct tt_workload **out,
			       struct tt_error *err)
{
	struct parser *ps;
	enum tt_code rc = begin(&ps, name, format, opts, err);
	size_t line = 0, off = 0;

	if (tt_failed(rc))
		return rc;
	while (off < len && !tt_failed(rc)) {
		const char *nl = memchr(data + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (data + off)) : len - off;
		rc = feed(ps, data + off, n, ++line, err);
		off += n + 1;
	}
	ps->w->bytes = len;
	return end(ps, rc, line, out, err);
}

enum tt_code tt_workload_load(const char *path, enum tt_workload_format format,
			      const struct tt_workload_opts *opts, struct tt_workload **out,
			      struct tt_error *err)
{
	struct parser *ps;
	uint64_t size = 0;
	int fd;
	FILE *f;
	char *buf = NULL;
	size_t cap = 0, line = 0;
	ssize_t n;
	enum tt_code rc = tt__open_regular(path, "trace", UINT64_MAX, &fd, &size, err);

	if (tt_failed(rc))
		return rc;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return tt_error_set(err, TT_EIO, "cannot read '%s': %s", path, strerror(errno));
	}
	rc = begin(&ps, path, format, opts, err);
	if (tt_failed(rc)) {
		fclose(f);
		return rc;
	}
	while (!tt_failed(rc) && (n = getline(&buf, &cap, f)) >= 0) {
		size_t k = (size_t)n;
		if (k && buf[k - 1] == '\n')
			k--;
		rc = feed(ps, buf, k, ++line, err);
	}
	if (!tt_failed(rc) && ferror(f))
		rc = tt_error_set(err, TT_EIO, "cannot read '%s': %s", path, strerror(errno));
	free(buf);
	fclose(f);
	if (!tt_failed(rc))
		ps->w->bytes = size;
	return end(ps, rc, line, out, err);
}
