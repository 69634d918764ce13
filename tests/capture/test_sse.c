/* SSE framing and OpenAI chunk reading (src/lib/sse.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include "protocol/sse.h"

struct events {
	char text[8192]; /* events joined by '|' */
	int n;
	int stop_after; /* 0: never */
};

static int collect(void *ctx, const char *data, size_t len)
{
	struct events *e = ctx;
	size_t at = strlen(e->text);
	snprintf(e->text + at, sizeof e->text - at, "%.*s|", (int)len, data);
	e->n++;
	return e->stop_after && e->n >= e->stop_after;
}

/* Feed text in pieces of `step` bytes (0: all at once); return events. */
static void feed_split(const char *text, size_t step, struct events *e)
{
	struct tt_sse s;
	size_t len = strlen(text);

	memset(e, 0, sizeof *e);
	tt_sse_init(&s, collect, e, 0);
	if (!step)
		step = len ? len : 1;
	for (size_t i = 0; i < len; i += step) {
		size_t n = len - i < step ? len - i : step;
		assert_int_equal(tt_sse_feed(&s, text + i, n), TT_OK);
	}
	assert_int_equal(tt_sse_end(&s), TT_OK);
	tt_sse_release(&s);
}

static void test_framing_every_split(void **state)
{
	static const char text[] =
		": keep-alive comment\n"
		"data: {\"a\":1}\n\n"
		"data:{\"b\":2}\r\n\r\n"          /* no space, CRLF */
		"event: message\n"
		"id: 7\n"
		"data: line one\n"
		"data: line two\n\n"             /* multi-line data */
		"data: cr only\r\r"              /* CR line ends */
		"data:  two spaces\n\n"          /* only one space is stripped */
		"\n\n"                           /* blank lines without data: no event */
		"data: [DONE]\n\n";
	static const char want[] = "{\"a\":1}|{\"b\":2}|line one\nline two|cr only| two spaces|[DONE]|";
	struct events e;
	(void)state;

	for (size_t step = 0; step <= 17; step++) {
		feed_split(text, step, &e);
		assert_string_equal(e.text, want);
		assert_int_equal(e.n, 6);
	}
}

static void test_end_without_blank_line(void **state)
{
	struct events e;
	(void)state;

	feed_split("data: {\"x\":1}\n\ndata: last", 3, &e);
	assert_string_equal(e.text, "{\"x\":1}|last|");
	feed_split("data: a\n", 0, &e);
	assert_string_equal(e.text, "a|");
}

static void test_stop_and_limit(void **state)
{
	struct events e;
	struct tt_sse s;
	char big[300];
	(void)state;

	memset(&e, 0, sizeof e);
	e.stop_after = 1;
	tt_sse_init(&s, collect, &e, 0);
	assert_int_equal(tt_sse_feed(&s, "data: 1\n\ndata: 2\n\n", 18), TT_EOF);
	assert_int_equal(e.n, 1);
	tt_sse_release(&s);

	memset(&e, 0, sizeof e);
	tt_sse_init(&s, collect, &e, 100);
	memset(big, 'x', sizeof big);
	memcpy(big, "data: ", 6);
	/* a line longer than the limit, split across pieces */
	assert_int_equal(tt_sse_feed(&s, big, 60), TT_OK);
	assert_int_equal(tt_sse_feed(&s, big + 60, 240), TT_FAILED);
	assert_int_equal(s.kind, TT_EFORMAT);
	tt_sse_release(&s);
}

static void parse(const char *json, struct tt_oai_chunk *c)
{
	assert_int_equal(tt_oai_parse_chunk(json, strlen(json), c), TT_OK);
}

static void test_vllm_continuous_usage(void **state)
{
	struct tt_oai_stream st;
	struct tt_oai_chunk c;
	(void)state;

	tt_oai_stream_init(&st);
	parse("{\"id\":\"cmpl-1\",\"choices\":[{\"index\":0,\"text\":\" a\",\"finish_reason\":null}],"
	      "\"usage\":{\"prompt_tokens\":8192,\"total_tokens\":8193,\"completion_tokens\":1}}", &c);
	assert_int_equal(c.n_choices, 1);
	assert_int_equal(c.completion_tokens, 1);
	assert_true(c.has_content);
	assert_int_equal(tt_oai_stream_account(&st, &c), 1);
	/* a merged chunk: three tokens at once, text may even be empty */
	parse("{\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":null}],"
	      "\"usage\":{\"prompt_tokens\":8192,\"completion_tokens\":4}}", &c);
	assert_false(c.has_content);
	assert_int_equal(tt_oai_stream_account(&st, &c), 3);
	parse("{\"choices\":[{\"index\":0,\"text\":\"z\",\"finish_reason\":\"length\"}],"
	      "\"usage\":{\"prompt_tokens\":8192,\"completion_tokens\":5,"
	      "\"prompt_tokens_details\":{\"cached_tokens\":8176}}}", &c);
	assert_int_equal(c.finish, TT_OAI_FINISH_LENGTH);
	assert_int_equal(tt_oai_stream_account(&st, &c), 1);
	/* the usage-only chunk adds nothing */
	parse("{\"choices\":[],\"usage\":{\"prompt_tokens\":8192,\"completion_tokens\":5}}", &c);
	assert_int_equal(c.n_choices, 0);
	assert_int_equal(tt_oai_stream_account(&st, &c), 0);
	assert_int_equal(st.tokens, 5);
	assert_int_equal(st.prompt_tokens, 8192);
	assert_int_equal(st.cached_tokens, 8176);
	assert_int_equal(st.method, TT_OAI_COUNT_USAGE);
	parse(" [DONE] ", &c);
	assert_true(c.done);
}

static void test_token_ids_and_chat(void **state)
{
	struct tt_oai_stream st;
	struct tt_oai_chunk c;
	(void)state;

	tt_oai_stream_init(&st);
	/* chat role chunk: no content, no tokens */
	parse("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
	      "\"logprobs\":null,\"finish_reason\":null}]}", &c);
	assert_false(c.has_content);
	assert_int_equal(tt_oai_stream_account(&st, &c), 0);
	parse("{\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"},\"token_ids\":[5,6]}]}", &c);
	assert_true(c.has_content);
	assert_int_equal(c.token_ids, 2);
	assert_int_equal(tt_oai_stream_account(&st, &c), 2);
	assert_int_equal(st.method, TT_OAI_COUNT_IDS);
	/* SGLang writes nulls everywhere */
	parse("{\"id\":null,\"choices\":[{\"delta\":{\"content\":\"x\",\"tool_calls\":null},"
	      "\"token_ids\":null,\"finish_reason\":\"stop\",\"matched_stop\":null}],\"usage\":null}",
	      &c);
	assert_int_equal(c.token_ids, -1);
	assert_int_equal(c.completion_tokens, -1);
	assert_int_equal(c.finish, TT_OAI_FINISH_STOP);
	assert_int_equal(tt_oai_stream_account(&st, &c), 1);
	assert_int_equal(st.tokens, 3);
}

/* Reasoning models: reasoning and answer text told apart (run-v1 3.5). */
static void test_reasoning_fields(void **state)
{
	struct tt_oai_chunk c;
	(void)state;

	/* vLLM / SGLang / DeepSeek */
	parse("{\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\",\"content\":null}}]}", &c);
	assert_true(c.has_content);
	assert_true(c.has_reasoning);
	assert_false(c.has_answer);
	/* newer vLLM, OpenRouter */
	parse("{\"choices\":[{\"delta\":{\"reasoning\":\"so\"}}]}", &c);
	assert_true(c.has_reasoning);
	assert_false(c.has_answer);
	/* the answer, with an empty or null reasoning member */
	parse("{\"choices\":[{\"delta\":{\"reasoning_content\":\"\",\"content\":\"42\"}}]}", &c);
	assert_false(c.has_reasoning);
	assert_true(c.has_answer);
	parse("{\"choices\":[{\"delta\":{\"reasoning\":null,\"content\":\"42\"}}]}", &c);
	assert_false(c.has_reasoning);
	assert_true(c.has_answer);
	/* the chunk that crosses over carries both */
	parse("{\"choices\":[{\"delta\":{\"reasoning_content\":\" end\",\"content\":\"A\"}}]}", &c);
	assert_true(c.has_reasoning);
	assert_true(c.has_answer);
	/* completions: text is the answer */
	parse("{\"choices\":[{\"text\":\"t\"}]}", &c);
	assert_true(c.has_answer);
	assert_false(c.has_reasoning);
	/* role-only chunk: neither */
	parse("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}", &c);
	assert_false(c.has_answer);
	assert_false(c.has_reasoning);
	assert_false(c.has_content);
}

static void test_llamacpp(void **state)
{
	struct tt_oai_stream st;
	struct tt_oai_chunk c;
	(void)state;

	/* timings_per_token: a running predicted_n */
	tt_oai_stream_init(&st);
	parse("{\"choices\":[{\"text\":\"a\"}],\"timings\":{\"predicted_n\":1,\"predicted_ms\":1.5}}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 1);
	parse("{\"choices\":[{\"text\":\"bc\"}],\"timings\":{\"predicted_n\":3}}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 2);
	assert_int_equal(st.method, TT_OAI_COUNT_TIMINGS);

	/* nothing per chunk: one per non-empty chunk, and the final usage
	 * settles what the fallback missed */
	tt_oai_stream_init(&st);
	parse("{\"choices\":[{\"text\":\"a\"}]}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 1);
	parse("{\"choices\":[{\"text\":\"\"}]}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 0);
	parse("{\"choices\":[{\"text\":\"b\"}]}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 1);
	parse("{\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}],"
	      "\"usage\":{\"completion_tokens\":4,\"prompt_tokens\":100}}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 2);
	assert_int_equal(st.tokens, 4);
	assert_int_equal(st.prompt_tokens, 100);
}

static void test_errors(void **state)
{
	struct tt_oai_chunk c;
	(void)state;

	parse("{\"error\":{\"message\":\"boom \\\"x\\\"\",\"type\":\"InternalServerError\",\"code\":500}}", &c);
	assert_true(c.is_error);
	assert_string_equal(c.error, "boom \"x\"");
	parse("{\"error\":{\"code\":500,\"type\":\"server_error\"}}", &c);
	assert_true(c.is_error);
	assert_string_equal(c.error, "server_error");
	parse("{\"error\":\"plain text\"}", &c);
	assert_true(c.is_error);
	assert_string_equal(c.error, "plain text");
	parse("{\"error\":null,\"choices\":[]}", &c);
	assert_false(c.is_error);

	assert_int_equal(tt_oai_parse_chunk("{\"choices\":[{\"text\":\"trunc", 24, &c), TT_FAILED);
	assert_non_null(strstr(c.error, "malformed"));
	assert_int_equal(tt_oai_parse_chunk("{\"a\":1} x", 9, &c), TT_FAILED);
	assert_int_equal(tt_oai_parse_chunk("", 0, &c), TT_FAILED);
	assert_int_equal(tt_oai_parse_chunk("[1,2]", 5, &c), TT_FAILED);
	assert_int_equal(tt_oai_parse_chunk("{\"usage\":{\"completion_tokens\":-5}}", 34, &c), TT_OK);
	assert_int_equal(c.completion_tokens, -1);
}

static void test_deep_nesting(void **state)
{
	char buf[4096];
	size_t n = 0;
	struct tt_oai_chunk c;
	(void)state;

	n += (size_t)snprintf(buf, sizeof buf, "{\"x\":");
	for (int i = 0; i < 1000; i++)
		buf[n++] = '[';
	assert_int_equal(tt_oai_parse_chunk(buf, n, &c), TT_FAILED);
	assert_non_null(strstr(c.error, "deep"));
}

static void test_counter_never_negative(void **state)
{
	struct tt_oai_stream st;
	struct tt_oai_chunk c;
	(void)state;

	tt_oai_stream_init(&st);
	parse("{\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":5}}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 5);
	parse("{\"choices\":[{\"text\":\"a\"}],\"usage\":{\"completion_tokens\":3}}", &c);
	assert_int_equal(tt_oai_stream_account(&st, &c), 0);
	assert_int_equal(st.tokens, 5);
}


/* ---- HTTP/1.1 chunked framing ---- */

struct unch {
	char buf[512];
	size_t len;
};

static void unch_collect(void *ctx, const char *p, size_t n)
{
	struct unch *u = ctx;
	assert_true(u->len + n <= sizeof u->buf);
	memcpy(u->buf + u->len, p, n);
	u->len += n;
}

static enum tt_code unch_feed(const char *in, size_t len, size_t step, struct unch *out,
			      int *done)
{
	struct tt_unchunk u;
	enum tt_code rc = TT_OK;
	tt_unchunk_init(&u);
	out->len = 0;
	for (size_t i = 0; i < len && rc == TT_OK; i += step)
		rc = tt_unchunk_feed(&u, in + i, len - i < step ? len - i : step, unch_collect, out);
	*done = tt_unchunk_done(&u);
	return rc;
}

static void test_unchunk_every_split(void **state)
{
	/* extensions, upper-case hex, bare LF, a trailer, bytes after the end */
	static const char in[] = "5\r\nhello\r\n1A;name=v\r\n0123456789abcdefghijklmnop\r\n"
				 "3\nxyz\n0\r\nX-T: 1\r\n\r\nignored";
	static const char want[] = "hello0123456789abcdefghijklmnopxyz";
	(void)state;
	for (size_t step = 1; step <= sizeof in; step++) {
		struct unch out;
		int done;
		assert_int_equal(unch_feed(in, sizeof in - 1, step, &out, &done), TT_OK);
		assert_int_equal(out.len, sizeof want - 1);
		assert_memory_equal(out.buf, want, out.len);
		assert_true(done);
	}
}

static void test_unchunk_broken(void **state)
{
	struct unch out;
	int done;
	(void)state;
	/* no hex digit where a size is due */
	assert_int_equal(unch_feed("zz\r\n", 4, 1, &out, &done), TT_FAILED);
	/* a size of 16 hex digits (2^64 and over cannot be counted) */
	assert_int_equal(unch_feed("1000000000000000\r\n", 18, 3, &out, &done), TT_FAILED);
	/* data passed on before the break stays passed on; the break sticks */
	assert_int_equal(unch_feed("2\r\nok\r\n;\r\n2\r\nno\r\n", 17, 17, &out, &done),
			 TT_FAILED);
	assert_int_equal(out.len, 2);
	assert_memory_equal(out.buf, "ok", 2);
	assert_false(done);
	/* a body cut short is not done, and not an error */
	assert_int_equal(unch_feed("5\r\nhel", 6, 2, &out, &done), TT_OK);
	assert_int_equal(out.len, 3);
	assert_false(done);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing_every_split),
		cmocka_unit_test(test_end_without_blank_line),
		cmocka_unit_test(test_stop_and_limit),
		cmocka_unit_test(test_vllm_continuous_usage),
		cmocka_unit_test(test_token_ids_and_chat),
		cmocka_unit_test(test_reasoning_fields),
		cmocka_unit_test(test_llamacpp),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_counter_never_negative),
		cmocka_unit_test(test_unchunk_every_split),
		cmocka_unit_test(test_unchunk_broken),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
