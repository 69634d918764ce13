/* JSON access for importers: every error names the file, the member's path
 * in the document ("results[3].ttft_p50") and, for syntax errors, the line,
 * column and byte. */
#include "import/imp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tt__imp_linecol(const char *data, size_t off, size_t *line, size_t *col)
{
	size_t l = 1, c = 1;

	for (size_t i = 0; i < off; i++) {
		if (data[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

enum tt_code tt__imp_fail_err(const struct tt__imp *im, struct tt_error *err, const char *where,
			      const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (where && where[0])
		return tt_error_set(err, TT_EFORMAT, "'%s': %s: %s", im->file, where, msg);
	return tt_error_set(err, TT_EFORMAT, "'%s': %s", im->file, msg);
}

enum tt_code tt__imp_nomem(const struct tt__imp *im, struct tt_error *err)
{
	return tt_error_set(err, TT_ENOMEM, "out of memory importing '%s'", im->file);
}

static const char *sep(const char *where);

enum tt_code tt__imp_range(const struct tt__imp *im, const char *where, const char *member,
			   double v, double lo, double hi, const char *unit, struct tt_error *err)
{
	if (v >= lo && v <= hi)
		return TT_OK;
	return tt_error_set(err, TT_EFORMAT, "'%s': %s%s%s: %g is outside %g..%g %s, what a run "
			    "holds", im->file, where ? where : "", member[0] ? sep(where) : "",
			    member, v, lo, hi, unit);
}

enum tt_code tt__imp_ns(const struct tt__imp *im, const char *where, const char *member,
			double v, double scale, double lo, double hi, int64_t *out,
			struct tt_error *err)
{
	double ns = v * scale;

	/* Named in the member's own unit (s, ms or ns, from the scale). */
	if (!(ns >= lo && ns <= hi))
		return tt__imp_range(im, where, member, v, lo / scale, hi / scale,
				     scale == 1e9 ? "s" : scale == 1e6 ? "ms" : "ns", err);
	*out = (int64_t)llround(ns);
	return TT_OK;
}

enum tt_code tt__imp_add_ns(const struct tt__imp *im, const char *where, const char *member,
			    int64_t a, int64_t b, int64_t *out, struct tt_error *err)
{
	const int64_t lim = (int64_t)1 << 62;

	if (a < -lim || a > lim || b < -lim || b > lim || a + b < -TT_IMPORT_MAX_TRACE_NS ||
	    a + b > TT_IMPORT_MAX_TRACE_NS)
		return tt_error_set(err, TT_EFORMAT, "'%s': %s%s%s: a time beyond the +-2^60 ns "
				    "(36 years) from the run's origin that a run's trace holds",
				    im->file, where ? where : "", member[0] ? sep(where) : "", member);
	*out = a + b;
	return TT_OK;
}

/* One pass over a text cJSON refused: the deepest nesting of arrays and
 * objects (*most), and whether it ends inside a string, an array or an
 * object (*cut: a file cut short rather than one holding a mistake; a
 * closing bracket without its opening one is a mistake). */
static void nesting(const char *p, size_t len, long *most, int *cut)
{
	long depth = 0;
	int in_str = 0, unbalanced = 0;

	*most = 0;
	for (size_t i = 0; i < len; i++) {
		char c = p[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > *most)
				*most = depth;
		} else if ((c == '}' || c == ']') && --depth < 0) {
			unbalanced = 1;
		}
	}
	*cut = !unbalanced && (in_str || depth > 0);
}

/* ---- a JSON checker that allocates nothing ------------------------------
 * cJSON answers NULL both for a syntax error and when malloc fails: this
 * tells them apart (a text this accepts, cJSON failed to hold).  Depth is
 * bounded by the caller's check against CJSON_NESTING_LIMIT first. */
struct jcheck {
	const char *p, *end;
};

static void jc_ws(struct jcheck *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int jc_lit(struct jcheck *j, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return 0;
	j->p += n;
	return 1;
}

static int jc_string(struct jcheck *j)
{
	if (j->p >= j->end || *j->p != '"')
		return 0;
	for (j->p++; j->p < j->end; j->p++) {
		unsigned char c = (unsigned char)*j->p;
		if (c == '"') {
			j->p++;
			return 1;
		}
		if (c < 0x20)
			return 0;
		if (c == '\\' && ++j->p >= j->end)
			return 0;
	}
	return 0;
}

static int jc_number(struct jcheck *j)
{
	const char *s = j->p;
	if (j->p < j->end && *j->p == '-')
		j->p++;
	while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || *j->p == '.' || *j->p == 'e' ||
				 *j->p == 'E' || *j->p == '+' || *j->p == '-'))
		j->p++;
	return j->p > s && (j->p[-1] >= '0' && j->p[-1] <= '9');
}

static int jc_value(struct jcheck *j, int depth)
{
	jc_ws(j);
	if (j->p >= j->end || depth > CJSON_NESTING_LIMIT)
		return 0;
	switch (*j->p) {
	case '"':
		return jc_string(j);
	case '{':
	case '[': {
		char close = *j->p == '{' ? '}' : ']';
		int obj = close == '}';
		j->p++;
		jc_ws(j);
		if (j->p < j->end && *j->p == close)
			return j->p++, 1;
		for (;;) {
			if (obj) {
				jc_ws(j);
				if (!jc_string(j))
					return 0;
				jc_ws(j);
				if (j->p >= j->end || *j->p++ != ':')
					return 0;
			}
			if (!jc_value(j, depth + 1))
				return 0;
			jc_ws(j);
			if (j->p >= j->end)
				return 0;
			if (*j->p == close)
				return j->p++, 1;
			if (*j->p++ != ',')
				return 0;
		}
	}
	case 't':
		return jc_lit(j, "true");
	case 'f':
		return jc_lit(j, "false");
	case 'n':
		return jc_lit(j, "null");
	default:
		return jc_number(j);
	}
}

enum tt_code tt__imp_parse(const struct tt__imp *im, const char *text, size_t len,
			   const char *where, cJSON **out, struct tt_error *err)
{
	const char *end = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	size_t line, col, off;
	long depth;
	int cut;

	if (root) {
		/* Only white space may follow the value. */
		while (end && end < text + len && (*end == ' ' || *end == '\n' || *end == '\r' ||
						   *end == '\t'))
			end++;
		if (!end || end == text + len) {
			*out = root;
			return TT_OK;
		}
		cJSON_Delete(root);
		off = (size_t)(end - im->data);
		tt__imp_linecol(im->data, off, &line, &col);
		return tt__imp_fail_err(im, err, where,
					"unexpected text after the JSON value at line %zu, column %zu "
					"(byte %zu)", line, col, off);
	}
	/* Not a syntax error: nesting cJSON refuses, or memory it lacked. */
	nesting(text, len, &depth, &cut);
	{
		if (depth > CJSON_NESTING_LIMIT)
			return tt__imp_fail_err(im, err, where, "nested %ld levels deep: more than the "
						"%d an import reads", depth, CJSON_NESTING_LIMIT);
		{
			struct jcheck j = {text, text + len};
			if (jc_value(&j, 1)) {
				jc_ws(&j);
				if (j.p == j.end)
					return tt_error_set(err, TT_ENOMEM, "out of memory parsing '%s' "
							    "(%s%s%zu bytes of JSON)", im->file,
							    where ? where : "",
							    where && where[0] ? ": " : "", len);
			}
		}
	}
	end = cJSON_GetErrorPtr();
	if (!end || end < text || end > text + len)
		end = text + len;
	off = (size_t)(end - im->data);
	tt__imp_linecol(im->data, off, &line, &col);
	if (end >= text + len || cut) {
		off = (size_t)(text + len - im->data);
		tt__imp_linecol(im->data, off, &line, &col);
		return tt_error_set(err, TT_ETRUNC, "'%s': %s%sJSON ends early: truncated at line %zu, "
				    "column %zu (byte %zu)", im->file, where ? where : "",
				    where && where[0] ? ": " : "", line, col, off);
	}
	{
		/* Python's json writes NaN and Infinity, which JSON has not: say so. */
		static const char *const py[] = {"NaN", "-NaN", "Infinity", "-Infinity"};
		for (size_t k = 0; k < sizeof py / sizeof *py; k++) {
			size_t n = strlen(py[k]);
			if ((size_t)(text + len - end) >= n && memcmp(end, py[k], n) == 0)
				return tt__imp_fail_err(im, err, where, "not valid JSON at line %zu, "
							"column %zu (byte %zu): %s, which JSON has no "
							"number for (Python writes it for a value it "
							"could not compute)", line, col, off, py[k]);
		}
	}
	return tt__imp_fail_err(im, err, where, "not valid JSON at line %zu, column %zu (byte %zu)",
				line, col, off);
}

static const char *type_name(const cJSON *v)
{
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "null";
}

static const cJSON *member(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsNull(v) ? NULL : v;
}

/* Between a position and a member: "results[3].ttft", but "line 7: metadata". */
static const char *sep(const char *where)
{
	if (!where || !where[0])
		return "";
	return strncmp(where, "line ", 5) == 0 && !strchr(where, ':') ? ": " : ".";
}

static enum tt_code missing(const struct tt__imp *im, const char *where, const char *key,
			    const char *what, struct tt_error *err)
{
	return tt_error_set(err, TT_EFORMAT, "'%s': %s%s%s: missing (%s expected)", im->file,
			    where ? where : "", sep(where), key, what);
}

static enum tt_code wrong(const struct tt__imp *im, const char *where, const char *key,
			  const char *what, const cJSON *v, struct tt_error *err)
{
	return tt_error_set(err, TT_EFORMAT, "'%s': %s%s%s: %s expected, found %s", im->file,
			    where ? where : "", sep(where), key, what, type_name(v));
}

enum tt_code tt__imp_num(const struct tt__imp *im, const cJSON *o, const char *where,
			 const char *key, int required, double *out, int *found,
			 struct tt_error *err)
{
	const cJSON *v = member(o, key);

	if (found)
		*found = 0;
	if (!v)
		return required ? missing(im, where, key, "a number", err) : TT_OK;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
		return wrong(im, where, key, "a finite number", v, err);
	*out = v->valuedouble;
	if (found)
		*found = 1;
	return TT_OK;
}

enum tt_code tt__imp_str(const struct tt__imp *im, const cJSON *o, const char *where,
			 const char *key, int required, const char **out, struct tt_error *err)
{
	const cJSON *v = member(o, key);

	*out = NULL;
	if (!v)
		return required ? missing(im, where, key, "a string", err) : TT_OK;
	if (!cJSON_IsString(v))
		return wrong(im, where, key, "a string", v, err);
	*out = v->valuestring;
	return TT_OK;
}

enum tt_code tt__imp_member(const struct tt__imp *im, const cJSON *o, const char *where,
			    const char *key, int type, int required, const cJSON **out,
			    struct tt_error *err)
{
	const cJSON *v = member(o, key);
	const char *what = type == cJSON_Array ? "an array" : "an object";

	*out = NULL;
	if (!v)
		return required ? missing(im, where, key, what, err) : TT_OK;
	if ((v->type & 0xFF) != type)
		return wrong(im, where, key, what, v, err);
	*out = v;
	return TT_OK;
}
