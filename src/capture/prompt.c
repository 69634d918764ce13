/* Prompts of exact length, and request bodies.
 *
 * Token-id prompts (the default on /v1/completions) are exact by
 * construction: N random ids are N prompt tokens, with no tokenizer.  Ids
 * come from a counter-based generator keyed by (seed, context, slot), so
 * every slot's prompt differs from its first token on and no two slots
 * share a cached prefix.  Text prompts (chat, servers that take only text)
 * are random sequences of common words that are one token each in the
 * usual tokenizers; the word count for a context is calibrated against the
 * server's own usage.prompt_tokens. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "capture.h"
#include "capture_opts.h"
#include "monotonic.h"
#include "net_loop.h"
#include "protocol/server.h"
#include "protocol/sse.h"
#include "tokentrace/buf.h"
#include "xfer.h"

#define ID_BASE 1000u
#define ID_SPAN 20000u
#define MAX_FIELD_W 10 /* width of the in-place max_tokens / min_tokens fields */

/* Each is one token with its leading space in the usual BPE tokenizers,
 * and at most four bytes, so also one token in the simulator's. */
static const char *const words[] = {
	" the", " of", " and", " to", " in", " is", " it", " as", " be", " by",
	" on", " he", " or", " at", " an", " we", " if", " so", " no", " his",
	" for", " was", " not", " are", " you", " had", " can", " her", " has",
	" one", " all", " who", " but", " may", " its", " our", " out", " new",
};
#define N_WORDS (sizeof words / sizeof words[0])

/* Calibrated words per context (text prompts). */
struct calib {
	int64_t context;
	int64_t words;
};
static struct calib calibs[64];
static size_t n_calibs;
static uint64_t cold_counter;

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int64_t words_for(int64_t context)
{
	for (size_t i = 0; i < n_calibs; i++)
		if (calibs[i].context == context)
			return calibs[i].words;
	/* Uncalibrated: a chat template adds a few tokens; aim a little low. */
	return context > 32 ? context - 16 : context;
}

static void put_json_str(struct tt_buf *b, const char *s)
{
	tt_buf_puts(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			tt_buf_printf(b, "\\%c", ch);
		else if (ch < 0x20)
			tt_buf_printf(b, "\\u%04x", ch);
		else
			tt_buf_append(b, s, 1);
	}
	tt_buf_puts(b, "\"");
}

/* Digits of v into p, no NUL; returns the length. */
static size_t put_u32(char *p, uint32_t v)
{
	char tmp[12];
	size_t n = 0, i;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

static enum tt_code put_prompt(struct tt_buf *b, struct cap *c, int64_t context, uint64_t key,
			       int64_t words_n)
{
	if (!c->prompt_text) {
		/* Ids written straight into one buffer: a 128K prompt is 800 KB of
		 * digits and printf per id would show in the event loop. */
		char *p = malloc((size_t)context * 7 + 16);
		size_t o = 0;
		enum tt_code rc;

		if (!p)
			return TT_FAILED;
		for (int64_t i = 0; i < context; i++) {
			uint32_t id = ID_BASE + (uint32_t)(mix64(key + (uint64_t)i) % ID_SPAN);
			if (i)
				p[o++] = ',';
			o += put_u32(p + o, id);
		}
		tt_buf_puts(b, "\"prompt\":[");
		tt_buf_append(b, p, o);
		rc = tt_buf_puts(b, "]");
		free(p);
		return b->failed ? TT_FAILED : rc;
	}
	/* text */
	{
		char *p = malloc((size_t)words_n * 8 + 16);
		size_t o = 0;
		if (!p)
			return TT_FAILED;
		for (int64_t i = 0; i < words_n; i++) {
			const char *w = words[mix64(key + (uint64_t)i) % N_WORDS];
			size_t wl = strlen(w);
			/* The first word without its leading space. */
			if (i == 0) {
				w++;
				wl--;
			}
			memcpy(p + o, w, wl);
			o += wl;
		}
		p[o] = '\0';
		if (strcmp(c->o->endpoint, "chat") == 0) {
			tt_buf_puts(b, "\"messages\":[{\"role\":\"user\",\"content\":\"");
			tt_buf_append(b, p, o);
			tt_buf_puts(b, "\"}]");
		} else {
			tt_buf_puts(b, "\"prompt\":\"");
			tt_buf_append(b, p, o);
			tt_buf_puts(b, "\"");
		}
		free(p);
	}
	return b->failed ? TT_FAILED : TT_OK;
}

void body_set_max_tokens(struct body *b, int64_t n)
{
	char field[MAX_FIELD_W + 1];
	/* Bodies start `{"max_tokens":NNNNNNNNNN,"min_tokens":NNNNNNNNNN,`:
	 * fixed-width fields padded with spaces, changed in place. */
	snprintf(field, sizeof field, "%-*lld", MAX_FIELD_W, (long long)n);
	memcpy(b->data + 14, field, MAX_FIELD_W);
	memcpy(b->data + 14 + MAX_FIELD_W + 14, field, MAX_FIELD_W);
}

enum tt_code body_build(struct cap *c, int64_t context, int slot, int64_t max_tokens,
			int cold, struct body *out, struct tt_error *err)
{
	struct tt_buf b;
	uint64_t key;
	enum tt_code rc;
	int llama = c->engine == TT_ENGINE_LLAMACPP;

	tt_buf_init(&b, 0);
	key = mix64(c->o->seed ^ mix64((uint64_t)context * 0x100000001b3ull + (uint64_t)(slot + 1)));
	if (cold)
		key = mix64(key ^ mix64(++cold_counter ^ (uint64_t)now_ns()));
	/* 14 = strlen("{\"max_tokens\":"), and again for min_tokens. */
	tt_buf_printf(&b, "{\"max_tokens\":%-*d,\"min_tokens\":%-*d,", MAX_FIELD_W, 0,
		      MAX_FIELD_W, 0);
	tt_buf_puts(&b, "\"model\":");
	put_json_str(&b, c->model);
	tt_buf_puts(&b, ",");
	rc = put_prompt(&b, c, context, key << 20, words_for(context));
	if (rc != TT_OK)
		goto cleanup;
	tt_buf_puts(&b, ",\"temperature\":0,\"ignore_eos\":true,\"stream\":true,"
			"\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}");
	if (llama)
		tt_buf_printf(&b, ",\"timings_per_token\":true,\"cache_prompt\":%s",
			      cold ? "false" : "true");
	tt_buf_puts(&b, "}");
	if (b.failed) {
		rc = TT_FAILED;
		goto cleanup;
	}
	out->len = b.len;
	out->data = tt_buf_steal(&b, NULL);
	body_set_max_tokens(out, max_tokens);
	rc = TT_OK;
cleanup:
	tt_buf_release(&b);
	if (rc != TT_OK)
		tt_error_set(err, TT_ENOMEM, "out of memory building a %lld-token prompt",
			     (long long)context);
	return rc;
}

void body_free(struct body *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
}

struct calib_read {
	int64_t prompt_tokens;
};

static int calib_event(void *ctx, const char *data, size_t len)
{
	struct calib_read *cr = ctx;
	struct tt_oai_chunk ch;

	if (tt_oai_parse_chunk(data, len, &ch) == TT_OK && ch.prompt_tokens >= 0)
		cr->prompt_tokens = ch.prompt_tokens;
	return 0;
}

enum tt_code prompt_calibrate(struct cap *c, int64_t context, struct tt_error *err)
{
	const char *path = strcmp(c->o->endpoint, "chat") == 0 ? "/v1/chat/completions"
							       : "/v1/completions";
	int64_t w = words_for(context);
	enum tt_code rc = TT_OK;

	if (!c->prompt_text)
		return TT_OK;
	for (size_t i = 0; i < n_calibs; i++)
		if (calibs[i].context == context)
			return TT_OK;
	for (int iter = 0; iter < 6; iter++) {
		struct body b = {0};
		struct calib_read cr = {-1};
		struct tt_sse sse;
		struct xfer *x;
		int64_t diff;

		if (n_calibs < sizeof calibs / sizeof calibs[0]) {
			calibs[n_calibs].context = context;
			calibs[n_calibs].words = w;
		}
		n_calibs++;
		rc = body_build(c, context, -1, 1, 1, &b, err);
		n_calibs--;
		if (rc != TT_OK)
			return rc;
		x = net_fetch(&c->net, path, b.data, c->o->request_timeout_s + 60, err);
		body_free(&b);
		if (!x)
			return err ? err->code : TT_FAILED;
		tt_sse_init(&sse, calib_event, &cr, 0);
		if (x->resp_len)
			tt_sse_feed(&sse, x->resp, x->resp_len);
		tt_sse_end(&sse);
		tt_sse_release(&sse);
		if (x->http_status != 200 || cr.prompt_tokens < 0) {
			rc = tt_error_set(err, TT_ENET,
					  "cannot calibrate a %lld-token text prompt at '%s%s': "
					  "HTTP %ld, %s", (long long)context, c->net.url, path,
					  x->http_status,
					  cr.prompt_tokens < 0 ? "no usage.prompt_tokens" : "error");
			xfer_put(&c->net, x);
			return rc;
		}
		xfer_put(&c->net, x);
		diff = context - cr.prompt_tokens;
		if (diff == 0 || (diff < 0 ? -diff : diff) * 200 <= context)
			break;
		w += diff;
		if (w < 1)
			w = 1;
	}
	if (n_calibs < sizeof calibs / sizeof calibs[0]) {
		calibs[n_calibs].context = context;
		calibs[n_calibs].words = w;
		n_calibs++;
	}
	return TT_OK;
}
