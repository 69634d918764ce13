/* Server-sent events and OpenAI stream chunks: see protocol/sse.h.
 *
 * Both run inside the capture's transport callback for every streamed
 * chunk, so the common case (whole `data: {...}\n\n` events inside one piece)
 * touches each byte a couple of times and never allocates: event data is
 * handed over straight from the caller's piece. */
#include "protocol/sse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SSE_DEFAULT_MAX ((size_t)64 << 20)

/* ---- SSE framing ------------------------------------------------------- */

static int bytes_append(struct tt_sse_bytes_ *b, const char *p, size_t n, size_t max)
{
	if (b->len + n > max)
		return -1;
	if (b->len + n > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;
		char *nd;
		while (ncap < b->len + n)
			ncap *= 2;
		nd = realloc(b->data, ncap);
		if (!nd)
			return -2;
		b->data = nd;
		b->cap = ncap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

/* A failure's kind is kept on the parser (s->kind) for the caller. */
static enum tt_code bytes_code(struct tt_sse *s, int r)
{
	if (r >= 0)
		return TT_OK;
	s->kind = r == -2 ? TT_ENOMEM : TT_EFORMAT;
	return TT_FAILED;
}

void tt_sse_init(struct tt_sse *s, tt_sse_event_fn fn, void *ctx, size_t max_event)
{
	memset(s, 0, sizeof *s);
	s->on_event = fn;
	s->ctx = ctx;
	s->max_event = max_event ? max_event : SSE_DEFAULT_MAX;
}

void tt_sse_release(struct tt_sse *s)
{
	if (!s)
		return;
	free(s->line_.data);
	free(s->data_.data);
	s->line_ = (struct tt_sse_bytes_){0};
	s->data_ = (struct tt_sse_bytes_){0};
	tt_sse_reset(s);
}

void tt_sse_reset(struct tt_sse *s)
{
	s->line_.len = 0;
	s->data_.len = 0;
	s->span_ = NULL;
	s->span_len_ = 0;
	s->have_data_ = 0;
	s->skip_lf_ = 0;
}

/* Move data still pointing into the caller's piece into our own buffer,
 * because the piece is about to go away (or more data lines follow). */
static enum tt_code own_span(struct tt_sse *s)
{
	int r;

	if (!s->span_)
		return TT_OK;
	s->data_.len = 0;
	r = bytes_append(&s->data_, s->span_, s->span_len_, s->max_event);
	s->span_ = NULL;
	s->span_len_ = 0;
	return bytes_code(s, r);
}

static enum tt_code dispatch(struct tt_sse *s)
{
	const char *d = s->span_ ? s->span_ : s->data_.data;
	size_t n = s->span_ ? s->span_len_ : s->data_.len;
	int stop = 0;

	if (s->have_data_ && s->on_event)
		stop = s->on_event(s->ctx, d ? d : "", n);
	s->have_data_ = 0;
	s->span_ = NULL;
	s->span_len_ = 0;
	s->data_.len = 0;
	return stop ? TT_EOF : TT_OK;
}

/* One complete line without its terminator.  `stable` says the bytes live
 * in the caller's piece (valid until feed returns), not in line_. */
static enum tt_code process_line(struct tt_sse *s, const char *line, size_t n, int stable)
{
	const char *colon, *value;
	size_t flen, vlen;
	int r;
	enum tt_code rc;

	if (n == 0)
		return dispatch(s);
	if (line[0] == ':')
		return TT_OK; /* comment (keep-alive pings) */
	colon = memchr(line, ':', n);
	flen = colon ? (size_t)(colon - line) : n;
	if (flen != 4 || memcmp(line, "data", 4) != 0)
		return TT_OK; /* event:, id:, retry: and unknown fields do not matter here */
	value = colon ? colon + 1 : line + n;
	vlen = (size_t)(line + n - value);
	if (vlen && value[0] == ' ') {
		value++;
		vlen--;
	}
	if (vlen > s->max_event) {
		s->kind = TT_EFORMAT;
		return TT_FAILED;
	}
	if (!s->have_data_ && stable) {
		s->have_data_ = 1;
		s->span_ = value;
		s->span_len_ = vlen;
		return TT_OK;
	}
	if (s->have_data_) {
		rc = own_span(s);
		if (rc != TT_OK)
			return rc;
		r = bytes_append(&s->data_, "\n", 1, s->max_event);
		if (r)
			return bytes_code(s, r);
	} else {
		s->data_.len = 0;
	}
	s->have_data_ = 1;
	return bytes_code(s, bytes_append(&s->data_, value, vlen, s->max_event));
}

enum tt_code tt_sse_feed(struct tt_sse *s, const char *bytes, size_t len)
{
	const char *p = bytes, *end = bytes + len;
	enum tt_code rc = TT_OK;

	if (len == 0)
		return TT_OK;
	if (s->skip_lf_ && *p == '\n')
		p++;
	s->skip_lf_ = 0;
	while (p < end) {
		const char *q = p;
		const char *line;
		size_t n;
		int stable;

		/* memchr is vectorised; lines nearly always end in LF, so look for
		 * LF first and then for a CR before it. */
		q = memchr(p, '\n', (size_t)(end - p));
		{
			const char *cr = memchr(p, '\r', (size_t)((q ? q : end) - p));
			if (cr)
				q = cr;
			else if (!q)
				q = end;
		}
		if (q == end) {
			rc = bytes_code(s, bytes_append(&s->line_, p, (size_t)(end - p), s->max_event));
			break;
		}
		if (s->line_.len) {
			rc = bytes_code(s, bytes_append(&s->line_, p, (size_t)(q - p), s->max_event));
			if (rc != TT_OK)
				break;
			line = s->line_.data;
			n = s->line_.len;
			stable = 0;
		} else {
			line = p;
			n = (size_t)(q - p);
			stable = 1;
		}
		if (*q == '\r') {
			if (q + 1 < end && q[1] == '\n')
				q++;
			else if (q + 1 == end)
				s->skip_lf_ = 1;
		}
		p = q + 1;
		rc = process_line(s, line, n, stable);
		s->line_.len = 0;
		if (rc != TT_OK) /* a failure, or TT_EOF: the event handler asked to stop */
			break;
	}
	/* The piece goes away when we return: keep what the next one needs. */
	if (rc == TT_OK)
		rc = own_span(s);
	else
		tt_sse_reset(s);
	return rc;
}

enum tt_code tt_sse_end(struct tt_sse *s)
{
	enum tt_code rc = TT_OK;

	if (s->line_.len) {
		/* A last line without a terminator still counts. */
		char *line = s->line_.data;
		size_t n = s->line_.len;
		s->line_.len = 0;
		rc = process_line(s, line, n, 0);
	}
	if (rc == TT_OK && s->have_data_)
		rc = dispatch(s);
	tt_sse_reset(s);
	return rc;
}

/* ---- a small JSON scanner ----------------------------------------------- */

#define JSON_MAX_DEPTH 64

struct js {
	const char *p, *end;
	int depth;
	int bad;
	const char *why;
};

static void js_fail(struct js *j, const char *why)
{
	if (!j->bad) {
		j->bad = 1;
		j->why = why;
	}
	j->p = j->end;
}

static void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int js_peek(struct js *j)
{
	js_ws(j);
	return j->p < j->end ? (unsigned char)*j->p : -1;
}

static int js_lit(struct js *j, const char *lit)
{
	size_t n = strlen(lit);
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n) != 0) {
		js_fail(j, "bad literal");
		return 0;
	}
	j->p += n;
	return 1;
}

/* A string: *s and *n get the raw bytes between the quotes (escapes kept). */
static int js_str(struct js *j, const char **s, size_t *n)
{
	const char *b;

	if (js_peek(j) != '"') {
		js_fail(j, "expected a string");
		return 0;
	}
	b = ++j->p;
	for (;;) {
		const char *q = memchr(j->p, '"', (size_t)(j->end - j->p));
		const char *bs;

		if (!q) {
			js_fail(j, "unterminated string");
			return 0;
		}
		bs = memchr(j->p, '\\', (size_t)(q - j->p));
		if (!bs) {
			*s = b;
			*n = (size_t)(q - b);
			j->p = q + 1;
			return 1;
		}
		if (bs + 1 >= j->end) {
			js_fail(j, "unterminated string");
			return 0;
		}
		j->p = bs + 2; /* skip the escaped character, look again */
	}
}

static int js_num(struct js *j, double *out)
{
	char buf[64];
	const char *b;
	char *e = NULL;
	size_t n;
	int plain = 1;
	uint64_t v = 0;

	js_ws(j);
	b = j->p;
	/* Counts are small non-negative integers: read those directly and
	 * leave everything else to strtod. */
	while (j->p < j->end) {
		char ch = *j->p;
		if (ch >= '0' && ch <= '9') {
			if (v < 100000000000000000ull)
				v = v * 10 + (uint64_t)(ch - '0');
			else
				plain = 0;
		} else if (ch == '+' || ch == '-' || ch == '.' || ch == 'e' || ch == 'E') {
			plain = 0;
		} else {
			break;
		}
		j->p++;
	}
	n = (size_t)(j->p - b);
	if (plain && n > 0) {
		*out = (double)v;
		return 1;
	}
	if (n == 0 || n >= sizeof buf) {
		js_fail(j, "bad number");
		return 0;
	}
	memcpy(buf, b, n);
	buf[n] = '\0';
	*out = strtod(buf, &e);
	if (!e || *e) {
		js_fail(j, "bad number");
		return 0;
	}
	return 1;
}

static void js_skip(struct js *j);

/* One step through a container delimited by open/close: on the first call
 * enter it; later, pass the ',' between members.  1 at a member, 0 at the
 * closing delimiter (consumed), -1 on error.  Shared by objects and arrays. */
static int js_container_step(struct js *j, char open, char close, int *first)
{
	int c = js_peek(j);

	if (*first) {
		if (c != open) {
			js_fail(j, open == '{' ? "expected an object" : "expected an array");
			return -1;
		}
		if (++j->depth > JSON_MAX_DEPTH) {
			js_fail(j, "nested too deep");
			return -1;
		}
		j->p++;
		*first = 0;
		c = js_peek(j);
	} else if (c == ',') {
		j->p++;
		return 1;
	} else if (c != close) {
		js_fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
		return -1;
	}
	if (c == close) {
		j->p++;
		j->depth--;
		return 0;
	}
	return 1;
}

/* Object iteration: call with *first = 1; returns 1 with the key and the
 * scanner at its value, 0 at the closing brace, -1 on error. */
static int js_obj_next(struct js *j, const char **k, size_t *kn, int *first)
{
	int r = js_container_step(j, '{', '}', first);

	if (r <= 0)
		return r;
	if (!js_str(j, k, kn))
		return -1;
	if (js_peek(j) != ':') {
		js_fail(j, "expected ':'");
		return -1;
	}
	j->p++;
	return 1;
}

/* Array iteration, same protocol: 1 at an element, 0 at the end. */
static int js_arr_next(struct js *j, int *first)
{
	return js_container_step(j, '[', ']', first);
}

static void js_skip(struct js *j)
{
	int c = js_peek(j), first = 1, r;
	const char *s;
	size_t n;
	double d;

	switch (c) {
	case '{':
		while ((r = js_obj_next(j, &s, &n, &first)) > 0)
			js_skip(j);
		break;
	case '[':
		while ((r = js_arr_next(j, &first)) > 0)
			js_skip(j);
		break;
	case '"':
		js_str(j, &s, &n);
		break;
	case 't':
		js_lit(j, "true");
		break;
	case 'f':
		js_lit(j, "false");
		break;
	case 'n':
		js_lit(j, "null");
		break;
	default:
		js_num(j, &d);
		break;
	}
}

/* want is a string literal: its length is known at compile time. */
#define key_is(k, kn, want) ((kn) == sizeof(want) - 1 && memcmp((k), (want), (kn)) == 0)

/* null -> 0 (consumed), else 1 (not consumed). */
static int js_not_null(struct js *j)
{
	if (js_peek(j) == 'n') {
		js_lit(j, "null");
		return 0;
	}
	return 1;
}

/* An integer member, or -1 for null / a non-number. */
static int64_t js_count(struct js *j)
{
	double d;
	int c = js_peek(j);

	if (c == '-' || (c >= '0' && c <= '9')) {
		if (js_num(j, &d) && d >= 0 && d < 9e15)
			return (int64_t)d;
		return -1;
	}
	js_skip(j);
	return -1;
}

/* Non-empty string member: 1; empty string, null or anything else: 0. */
static int js_nonempty_str(struct js *j)
{
	const char *s;
	size_t n;

	if (js_peek(j) == '"')
		return js_str(j, &s, &n) && n > 0;
	js_skip(j);
	return 0;
}

static void copy_unescaped(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < cap; i++) {
		char c = s[i];
		if (c == '\\' && i + 1 < n) {
			c = s[++i];
			if (c == 'n')
				c = ' ';
			else if (c == 't')
				c = ' ';
			else if (c == 'u') {
				i += 4 < n - i ? 4 : n - i - 1;
				c = '?';
			}
		}
		dst[o++] = (unsigned char)c < 0x20 ? ' ' : c;
	}
	dst[o] = '\0';
}

static void parse_error_member(struct js *j, struct tt_oai_chunk *c)
{
	const char *k, *s;
	size_t kn, n;
	int first = 1, r, got_msg = 0;

	if (js_peek(j) == '"') {
		if (js_str(j, &s, &n)) {
			c->is_error = 1;
			copy_unescaped(c->error, sizeof c->error, s, n);
		}
		return;
	}
	if (js_peek(j) != '{') {
		js_skip(j); /* "error": null in chunks that are fine */
		return;
	}
	c->is_error = 1;
	snprintf(c->error, sizeof c->error, "error event");
	while ((r = js_obj_next(j, &k, &kn, &first)) > 0) {
		if (key_is(k, kn, "message") && js_peek(j) == '"') {
			if (js_str(j, &s, &n)) {
				copy_unescaped(c->error, sizeof c->error, s, n);
				got_msg = 1;
			}
		} else if (!got_msg && (key_is(k, kn, "type") || key_is(k, kn, "code")) &&
			   js_peek(j) == '"') {
			if (js_str(j, &s, &n))
				copy_unescaped(c->error, sizeof c->error, s, n);
		} else {
			js_skip(j);
		}
	}
}

static void parse_usage(struct js *j, struct tt_oai_chunk *c)
{
	const char *k, *k2;
	size_t kn, kn2;
	int first = 1, r;

	if (!js_not_null(j))
		return;
	while ((r = js_obj_next(j, &k, &kn, &first)) > 0) {
		if (key_is(k, kn, "completion_tokens")) {
			c->completion_tokens = js_count(j);
		} else if (key_is(k, kn, "prompt_tokens")) {
			c->prompt_tokens = js_count(j);
		} else if (key_is(k, kn, "prompt_tokens_details") && js_not_null(j)) {
			int f2 = 1;
			while ((r = js_obj_next(j, &k2, &kn2, &f2)) > 0) {
				if (key_is(k2, kn2, "cached_tokens"))
					c->cached_tokens = js_count(j);
				else
					js_skip(j);
			}
		} else {
			js_skip(j);
		}
	}
}

static void parse_delta(struct js *j, struct tt_oai_chunk *c)
{
	const char *k;
	size_t kn;
	int first = 1, r;

	if (!js_not_null(j))
		return;
	while ((r = js_obj_next(j, &k, &kn, &first)) > 0) {
		if (key_is(k, kn, "content") || key_is(k, kn, "text")) {
			if (js_nonempty_str(j))
				c->has_content = c->has_answer = 1;
		} else if (key_is(k, kn, "reasoning_content") || key_is(k, kn, "reasoning")) {
			/* reasoning models: vLLM, SGLang, DeepSeek; newer vLLM, OpenRouter */
			if (js_nonempty_str(j))
				c->has_content = c->has_reasoning = 1;
		} else {
			js_skip(j);
		}
	}
}

static void parse_choice(struct js *j, struct tt_oai_chunk *c)
{
	const char *k, *s;
	size_t kn, n;
	int first = 1, r;

	while ((r = js_obj_next(j, &k, &kn, &first)) > 0) {
		if (key_is(k, kn, "text")) {
			if (js_nonempty_str(j))
				c->has_content = c->has_answer = 1;
		} else if (key_is(k, kn, "delta") || key_is(k, kn, "message")) {
			parse_delta(j, c);
		} else if (key_is(k, kn, "token_ids")) {
			if (js_not_null(j)) {
				int f2 = 1;
				int64_t cnt = 0;
				while ((r = js_arr_next(j, &f2)) > 0) {
					js_skip(j);
					cnt++;
				}
				c->token_ids = (c->token_ids < 0 ? 0 : c->token_ids) + cnt;
			}
		} else if (key_is(k, kn, "finish_reason")) {
			if (js_peek(j) == '"') {
				if (js_str(j, &s, &n)) {
					if (n == 4 && memcmp(s, "stop", 4) == 0)
						c->finish = TT_OAI_FINISH_STOP;
					else if (n == 6 && memcmp(s, "length", 6) == 0)
						c->finish = TT_OAI_FINISH_LENGTH;
					else if (n > 0)
						c->finish = TT_OAI_FINISH_OTHER;
				}
			} else {
				js_skip(j);
			}
		} else {
			js_skip(j);
		}
	}
}

static void parse_timings(struct js *j, struct tt_oai_chunk *c)
{
	const char *k;
	size_t kn;
	int first = 1, r;

	if (!js_not_null(j))
		return;
	while ((r = js_obj_next(j, &k, &kn, &first)) > 0) {
		if (key_is(k, kn, "predicted_n"))
			c->predicted_n = js_count(j);
		else
			js_skip(j);
	}
}

enum tt_code tt_oai_parse_chunk(const char *data, size_t len, struct tt_oai_chunk *c)
{
	struct js j = {data, data + len, 0, 0, NULL};
	const char *k;
	size_t kn;
	int first = 1, r;

	memset(c, 0, sizeof *c);
	c->n_choices = -1;
	c->completion_tokens = c->prompt_tokens = c->cached_tokens = -1;
	c->token_ids = c->predicted_n = -1;
	js_ws(&j);
	if ((size_t)(j.end - j.p) >= 6 && memcmp(j.p, "[DONE]", 6) == 0) {
		j.p += 6;
		js_ws(&j);
		if (j.p == j.end) {
			c->done = 1;
			return TT_OK;
		}
	}
	j.p = data;
	while ((r = js_obj_next(&j, &k, &kn, &first)) > 0) {
		if (key_is(k, kn, "error")) {
			parse_error_member(&j, c);
		} else if (key_is(k, kn, "usage")) {
			parse_usage(&j, c);
		} else if (key_is(k, kn, "timings")) {
			parse_timings(&j, c);
		} else if (key_is(k, kn, "choices")) {
			int f2 = 1;
			if (!js_not_null(&j))
				continue;
			c->n_choices = 0;
			while ((r = js_arr_next(&j, &f2)) > 0) {
				c->n_choices++;
				parse_choice(&j, c);
			}
		} else {
			js_skip(&j);
		}
	}
	if (!j.bad && js_peek(&j) != -1)
		js_fail(&j, "trailing bytes after the object");
	if (j.bad) {
		snprintf(c->error, sizeof c->error, "malformed chunk: %s at byte %zu", j.why,
			 (size_t)(j.p - data) < len ? (size_t)(j.p - data) : len);
		c->is_error = 0;
		return TT_FAILED;
	}
	return TT_OK;
}

void tt_oai_stream_init(struct tt_oai_stream *st)
{
	memset(st, 0, sizeof *st);
	st->usage_total = st->prompt_tokens = st->cached_tokens = -1;
}

int64_t tt_oai_stream_account(struct tt_oai_stream *st, const struct tt_oai_chunk *c)
{
	int64_t n = 0;

	if (c->prompt_tokens >= 0)
		st->prompt_tokens = c->prompt_tokens;
	if (c->cached_tokens >= 0)
		st->cached_tokens = c->cached_tokens;
	if (c->completion_tokens >= 0) {
		st->usage_total = c->completion_tokens;
		n = c->completion_tokens - st->tokens;
		/* A usage-only chunk keeps the method that counted the content. */
		if (c->n_choices > 0 || st->method == TT_OAI_COUNT_NONE)
			st->method = TT_OAI_COUNT_USAGE;
	} else if (c->predicted_n >= 0) {
		n = c->predicted_n - st->tokens;
		st->method = TT_OAI_COUNT_TIMINGS;
	} else if (c->token_ids >= 0) {
		n = c->token_ids;
		st->method = TT_OAI_COUNT_IDS;
	} else if (c->has_content) {
		n = 1;
		st->method = TT_OAI_COUNT_CHUNKS;
	}
	if (n < 0)
		n = 0; /* a counter that went backwards: count nothing, never negative */
	st->tokens += n;
	return n;
}
