/* Protocol tests: framing, usage arithmetic, [DONE], auth, errors, prompts,
 * chat and completions, each flavor's routes and metric names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tt_cmocka.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim_client.h"

static cJSON *ev_json(const struct sse_event *e)
{
	cJSON *j = cJSON_Parse(e->data);
	if (!j)
		fail_msg("event is not JSON: %s", e->data);
	return j;
}

/* Checks a whole completions/chat stream: every event "data: ...\n\n", the
 * last one [DONE], usage grows by the tokens each chunk carries. */
static void check_stream(const struct stream_result *r, int chat, long prompt, long max_tokens,
			 int usage_chunk)
{
	long prev = 0, ids_total = 0;
	int saw_role = 0, saw_finish = 0;

	assert_int_equal(r->status, 200);
	assert_int_equal(r->curl_code, 0);
	assert_true(r->n >= 2);
	assert_string_equal(r->ev[r->n - 1].data, "[DONE]");
	/* framing: the raw bytes are exactly the events, each "data: X\n\n" */
	size_t pos = 0;
	for (size_t i = 0; i < r->n; i++) {
		size_t l = strlen(r->ev[i].data);
		assert_true(pos + 6 + l + 2 <= r->rawlen);
		assert_memory_equal(r->raw + pos, "data: ", 6);
		assert_memory_equal(r->raw + pos + 6, r->ev[i].data, l);
		assert_memory_equal(r->raw + pos + 6 + l, "\n\n", 2);
		pos += 6 + l + 2;
	}
	assert_int_equal(pos, r->rawlen);
	for (size_t i = 0; i + 1 < r->n; i++) {
		cJSON *j = ev_json(&r->ev[i]);
		cJSON *choices = cJSON_GetObjectItem(j, "choices");
		cJSON *usage = cJSON_GetObjectItem(j, "usage");
		assert_non_null(usage);
		long comp = (long)cJSON_GetObjectItem(usage, "completion_tokens")->valuedouble;
		assert_int_equal((long)cJSON_GetObjectItem(usage, "prompt_tokens")->valuedouble, prompt);
		assert_int_equal((long)cJSON_GetObjectItem(usage, "total_tokens")->valuedouble,
				 prompt + comp);
		const char *id = cJSON_GetObjectItem(j, "id")->valuestring;
		assert_true(!strncmp(id, chat ? "chatcmpl-" : "cmpl-", chat ? 9 : 5));
		if (cJSON_GetArraySize(choices) == 0) {
			/* the final usage chunk */
			assert_true(usage_chunk);
			assert_int_equal(i, r->n - 2);
			assert_int_equal(comp, max_tokens);
			cJSON_Delete(j);
			continue;
		}
		cJSON *c0 = cJSON_GetArrayItem(choices, 0);
		cJSON *ids = cJSON_GetObjectItem(c0, "token_ids");
		const char *text;
		if (chat) {
			cJSON *delta = cJSON_GetObjectItem(c0, "delta");
			if (i == 0) {
				assert_string_equal(cJSON_GetObjectItem(delta, "role")->valuestring,
						    "assistant");
				assert_string_equal(cJSON_GetObjectItem(delta, "content")->valuestring,
						    "");
				assert_int_equal(comp, 0);
				saw_role = 1;
				cJSON_Delete(j);
				continue;
			}
			text = cJSON_GetObjectItem(delta, "content")->valuestring;
		} else {
			text = cJSON_GetObjectItem(c0, "text")->valuestring;
		}
		long k = comp - prev;
		assert_true(k >= 1);
		assert_non_null(ids);
		assert_int_equal(cJSON_GetArraySize(ids), k);
		ids_total += k;
		/* filler text: one word per token, each with a leading space */
		long words = 0;
		for (const char *t = text; *t; t++)
			words += *t == ' ';
		assert_int_equal(words, k);
		cJSON *fr = cJSON_GetObjectItem(c0, "finish_reason");
		if (cJSON_IsString(fr)) {
			assert_string_equal(fr->valuestring, "length");
			assert_int_equal(comp, max_tokens);
			saw_finish = 1;
		}
		prev = comp;
		cJSON_Delete(j);
	}
	assert_int_equal(ids_total, max_tokens);
	assert_true(saw_finish);
	if (chat)
		assert_true(saw_role);
}

static void test_listen_line(void **state)
{
	(void)state;
	struct sim_proc p = sim_start_ok(NULL);
	char want[128];
	snprintf(want, sizeof want, "tokentrace-sim listening on http://127.0.0.1:%d", p.port);
	assert_string_equal(p.listen_line, want);
	assert_true(p.port > 0);
	sim_stop_ok(&p);
}

static void test_completions_token_ids(void **state)
{
	(void)state;
	const char *args[] = {"--step-base-ms", "0.2", NULL};
	struct sim_proc p = sim_start_ok(args);
	char *body = body_token_prompt(300, 1, 37, 1,
		"\"ignore_eos\":true,\"temperature\":0,\"return_token_ids\":true,"
		"\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}");
	const char *bodies[] = {body};
	struct stream_result r;
	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &r);
	check_stream(&r, 0, 300, 37, 1);
	stream_result_free(&r);
	free(body);
	sim_stop_ok(&p);
}

static void test_chat_stream_and_text_prompt(void **state)
{
	(void)state;
	struct sim_proc p = sim_start_ok(NULL);
	const char *msg = "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a long story "
			  "about inference servers.\"}]}";
	struct http_reply tok;
	assert_int_equal(http_do(&p, "/tokenize", msg, NULL, &tok), 0);
	assert_int_equal(tok.status, 200);
	cJSON *tj = cJSON_Parse(tok.body);
	long count = (long)cJSON_GetObjectItem(tj, "count")->valuedouble;
	assert_true(count > 5);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(tj, "tokens")), count);
	assert_int_equal((long)cJSON_GetObjectItem(tj, "max_model_len")->valuedouble, 128000);
	cJSON_Delete(tj);
	http_reply_free(&tok);

	const char *body = "{\"model\":\"sim\",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me "
			   "a long story about inference servers.\"}],\"max_tokens\":20,"
			   "\"ignore_eos\":true,\"stream\":true,\"return_token_ids\":true,"
			   "\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}}";
	const char *bodies[] = {body};
	struct stream_result r;
	stream_many(&p, "/v1/chat/completions", bodies, 1, 1, 20, NULL, NULL, &r);
	check_stream(&r, 1, count, 20, 1);
	stream_result_free(&r);
	sim_stop_ok(&p);
}

static void test_no_usage_unless_asked(void **state)
{
	(void)state;
	/* slow steps: one token per chunk even on a busy machine */
	const char *args[] = {"--step-base-ms", "20", NULL};
	struct sim_proc p = sim_start_ok(args);
	const char *body = "{\"prompt\":\"hello there\",\"max_tokens\":5,\"ignore_eos\":true,"
			   "\"stream\":true}";
	const char *bodies[] = {body};
	struct stream_result r;
	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.n, 6); /* 5 one-token chunks and [DONE] */
	for (size_t i = 0; i + 1 < r.n; i++)
		assert_null(strstr(r.ev[i].data, "\"usage\""));
	assert_string_equal(r.ev[5].data, "[DONE]");
	stream_result_free(&r);
	sim_stop_ok(&p);
}

static void test_non_streaming(void **state)
{
	(void)state;
	struct sim_proc p = sim_start_ok(NULL);
	struct http_reply r;
	char *body = body_token_prompt(100, 2, 12, 0, "\"ignore_eos\":true,\"return_token_ids\":true");
	assert_int_equal(http_do(&p, "/v1/completions", body, NULL, &r), 0);
	assert_int_equal(r.status, 200);
	cJSON *j = cJSON_Parse(r.body);
	assert_non_null(j);
	cJSON *u = cJSON_GetObjectItem(j, "usage");
	assert_int_equal((long)cJSON_GetObjectItem(u, "completion_tokens")->valuedouble, 12);
	assert_int_equal((long)cJSON_GetObjectItem(u, "prompt_tokens")->valuedouble, 100);
	cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(c0, "token_ids")), 12);
	assert_string_equal(cJSON_GetObjectItem(c0, "finish_reason")->valuestring, "length");
	cJSON_Delete(j);
	http_reply_free(&r);
	free(body);

	/* chat; without ignore_eos the output stops early ("stop") */
	const char *chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":1000}";
	assert_int_equal(http_do(&p, "/v1/chat/completions", chat, NULL, &r), 0);
	assert_int_equal(r.status, 200);
	j = cJSON_Parse(r.body);
	assert_string_equal(cJSON_GetObjectItem(j, "object")->valuestring, "chat.completion");
	c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
	assert_string_equal(cJSON_GetObjectItem(c0, "finish_reason")->valuestring, "stop");
	cJSON *msg = cJSON_GetObjectItem(c0, "message");
	assert_string_equal(cJSON_GetObjectItem(msg, "role")->valuestring, "assistant");
	u = cJSON_GetObjectItem(j, "usage");
	assert_int_equal((long)cJSON_GetObjectItem(u, "completion_tokens")->valuedouble, 256);
	cJSON_Delete(j);
	http_reply_free(&r);
	sim_stop_ok(&p);
}

static void test_auth(void **state)
{
	(void)state;
	const char *args[] = {"--api-key", "sekret", NULL};
	struct sim_proc p = sim_start_ok(args);
	const char *good[] = {"Authorization: Bearer sekret", NULL};
	const char *wrong[] = {"Authorization: Bearer nope", NULL};
	const char *body = "{\"prompt\":\"x\",\"max_tokens\":2}";
	struct http_reply r;

	assert_int_equal(http_do(&p, "/v1/completions", body, NULL, &r), 0);
	assert_int_equal(r.status, 401);
	assert_non_null(strstr(r.body, "\"error\""));
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/v1/completions", body, wrong, &r), 0);
	assert_int_equal(r.status, 401);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/metrics", NULL, NULL, &r), 0);
	assert_int_equal(r.status, 401);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/v1/completions", body, good, &r), 0);
	assert_int_equal(r.status, 200);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/health", NULL, NULL, &r), 0);
	assert_int_equal(r.status, 200);
	http_reply_free(&r);
	sim_stop_ok(&p);
}

static void expect_error(const struct sim_proc *p, const char *path, const char *body, long status,
			 const char *param, const char *needle)
{
	struct http_reply r;
	assert_int_equal(http_do(p, path, body, NULL, &r), 0);
	if (r.status != status)
		fail_msg("%s %s: status %ld, want %ld (%s)", path, body ? body : "", r.status, status,
			 r.body);
	cJSON *j = cJSON_Parse(r.body);
	assert_non_null(j);
	cJSON *e = cJSON_GetObjectItem(j, "error");
	assert_non_null(e);
	const char *msg = cJSON_GetObjectItem(e, "message")->valuestring;
	if (needle && !strstr(msg, needle))
		fail_msg("message '%s' lacks '%s'", msg, needle);
	assert_int_equal((long)cJSON_GetObjectItem(e, "code")->valuedouble, status);
	if (param)
		assert_string_equal(cJSON_GetObjectItem(e, "param")->valuestring, param);
	cJSON_Delete(j);
	http_reply_free(&r);
}

static void test_errors(void **state)
{
	(void)state;
	const char *args[] = {"--max-model-len", "4K", NULL};
	struct sim_proc p = sim_start_ok(args);
	expect_error(&p, "/v1/completions", "{\"prompt\": [1,2", 400, NULL, "not valid JSON");
	expect_error(&p, "/v1/completions", "[1,2]", 400, NULL, "JSON object");
	expect_error(&p, "/v1/completions", "{\"max_tokens\":3}", 400, "prompt", "required");
	expect_error(&p, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":\"3\"}", 400,
		     "max_tokens", "integer");
	expect_error(&p, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":0}", 400,
		     "max_tokens", "at least 1");
	expect_error(&p, "/v1/completions", "{\"prompt\":[1,-2]}", 400, "prompt", "token id");
	expect_error(&p, "/v1/completions", "{\"prompt\":\"x\",\"max_tokens\":5000}", 400,
		     "max_tokens", "maximum context length is 4096");
	expect_error(&p, "/v1/completions", "{\"prompt\":\"x\",\"stream_options\":{}}", 400,
		     "stream_options", "stream=True");
	expect_error(&p, "/v1/completions", "{\"prompt\":\"x\",\"stream\":\"yes\"}", 400, "stream",
		     "boolean");
	expect_error(&p, "/v1/completions", "{\"prompt\":\"x\",\"min_tokens\":9,\"max_tokens\":3}",
		     400, "min_tokens", "less than or equal");
	expect_error(&p, "/v1/completions", "{\"prompt\":\"x\",\"model\":\"gpt\"}", 404, "model",
		     "does not exist");
	expect_error(&p, "/v1/chat/completions", "{\"messages\":[{\"content\":\"x\"}]}", 400,
		     "messages", "role");
	expect_error(&p, "/nope", NULL, 404, NULL, "/nope");
	expect_error(&p, "/v1/completions", NULL, 405, NULL, "Method");
	sim_stop_ok(&p);
}

/* Hostile bodies: every one gets a 4xx with an error object, and the server
 * is still healthy afterwards (and exits 0, clean under ASan). */
static void test_hostile_bodies(void **state)
{
	(void)state;
	struct sim_proc p = sim_start_ok(NULL);
	static char deep[20000], longstr[200000];
	size_t k = 0;
	k += (size_t)snprintf(deep, sizeof deep, "{\"prompt\":");
	for (int i = 0; i < 5000; i++)
		deep[k++] = '[';
	deep[k] = '\0';
	snprintf(longstr, sizeof longstr, "{\"prompt\":\"x\",\"model\":\"");
	size_t l = strlen(longstr);
	memset(longstr + l, 'm', 150000);
	strcpy(longstr + l + 150000, "\"}");
	const char *bodies[] = {
		"", "{", "}", "null", "true", "\"str\"", "{\"prompt\":}", deep, longstr,
		"{\"prompt\":[1e400]}", "{\"prompt\":[1.5]}", "{\"prompt\":[[1],[2]]}",
		"{\"prompt\":[{}]}", "{\"prompt\":\"\"}", "{\"prompt\":[]}",
		"{\"prompt\":\"x\",\"max_tokens\":1e300}", "{\"prompt\":\"x\",\"max_tokens\":-5}",
		"{\"prompt\":\"x\",\"n\":2}", "{\"prompt\":\"x\",\"temperature\":\"hot\"}",
		"{\"prompt\":\"x\",\"stream\":true,\"stream_options\":[1]}",
		"{\"prompt\":\"x\",\"ignore_eos\":1}", "{\"prompt\":\"\\ud800\"}",
		"{\"messages\":\"hi\"}", "{\"messages\":[{\"role\":1,\"content\":\"x\"}]}",
		"{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image\"}]}]}",
		"{\"messages\":[]}", "\xff\xfe\x00garbage",
	};
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		const char *path = strstr(bodies[i], "messages") ? "/v1/chat/completions"
								 : "/v1/completions";
		struct http_reply r;
		assert_int_equal(http_do(&p, path, bodies[i], NULL, &r), 0);
		if (r.status < 400 || r.status > 499 || !strstr(r.body, "\"error\""))
			fail_msg("body %zu: status %ld, %.200s", i, r.status, r.body);
		http_reply_free(&r);
	}
	struct http_reply r;
	assert_int_equal(http_do(&p, "/v1/completions", "{\"prompt\":\"ok\",\"max_tokens\":2}", NULL,
				 &r), 0);
	assert_int_equal(r.status, 200);
	http_reply_free(&r);
	sim_stop_ok(&p);
}

static void test_bad_flags(void **state)
{
	(void)state;
	char err[2048];
	const char *a1[] = {"--port", "abc", NULL};
	assert_int_equal(sim_run_expect_exit(a1, err, sizeof err), 2);
	assert_non_null(strstr(err, "--port"));
	assert_non_null(strstr(err, "'abc'"));
	const char *a2[] = {"--frobnicate", NULL};
	assert_int_equal(sim_run_expect_exit(a2, err, sizeof err), 2);
	assert_non_null(strstr(err, "--frobnicate"));
	const char *a3[] = {"--fault", "explode@req=1", NULL};
	assert_int_equal(sim_run_expect_exit(a3, err, sizeof err), 2);
	assert_non_null(strstr(err, "explode"));
	const char *a4[] = {"--profile", "/nonexistent/x.csv", NULL};
	assert_int_equal(sim_run_expect_exit(a4, err, sizeof err), 2);
	assert_non_null(strstr(err, "/nonexistent/x.csv"));
	const char *a5[] = {"--kv-capacity", "1K", NULL};
	assert_int_equal(sim_run_expect_exit(a5, err, sizeof err), 2);
	assert_non_null(strstr(err, "--max-model-len"));
	const char *a6[] = {"--help", NULL};
	assert_int_equal(sim_run_expect_exit(a6, err, sizeof err), 0);
}

static void test_models_version_health(void **state)
{
	(void)state;
	const char *args[] = {"--model", "lfm", "--max-model-len", "32K", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct http_reply r;
	assert_int_equal(http_do(&p, "/v1/models", NULL, NULL, &r), 0);
	cJSON *j = cJSON_Parse(r.body);
	cJSON *m0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "data"), 0);
	assert_string_equal(cJSON_GetObjectItem(m0, "id")->valuestring, "lfm");
	assert_int_equal((long)cJSON_GetObjectItem(m0, "max_model_len")->valuedouble, 32768);
	cJSON_Delete(j);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/version", NULL, NULL, &r), 0);
	j = cJSON_Parse(r.body);
	assert_true(cJSON_IsString(cJSON_GetObjectItem(j, "version")));
	cJSON_Delete(j);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/health", NULL, NULL, &r), 0);
	assert_int_equal(r.status, 200);
	http_reply_free(&r);
	sim_stop_ok(&p);
}

static void test_request_id_and_truth(void **state)
{
	(void)state;
	char path[] = "/tmp/tt-sim-truth-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	const char *args[] = {"--truth", path, NULL};
	struct sim_proc p = sim_start_ok(args);
	const char *hdr[] = {"X-Request-Id: client-42", NULL};
	struct http_reply r;
	assert_int_equal(http_do(&p, "/v1/completions",
				 "{\"prompt\":\"abc\",\"max_tokens\":4,\"stream\":true,"
				 "\"ignore_eos\":true}", hdr, &r), 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers, "X-Request-Id: client-42"));
	assert_non_null(strstr(r.body, "\"id\":\"cmpl-1\""));
	http_reply_free(&r);
	sim_stop_ok(&p);
	struct truth t;
	assert_int_equal(truth_read(path, &t), 0);
	const struct truth_req *q = truth_find(&t, 1);
	assert_non_null(q);
	assert_string_equal(q->client_id, "client-42");
	assert_true(q->ended);
	assert_int_equal(q->completion, 4);
	assert_int_equal(q->outcome, 0);
	uint32_t tokens = 0;
	for (size_t i = 0; i < t.nchunks; i++) {
		assert_int_equal(t.chunks[i].first, tokens);
		tokens += t.chunks[i].count;
		for (uint32_t k = 0; k < t.chunks[i].count; k++) {
			assert_true(t.chunks[i].model_ns[k] >= q->arrival_ns);
			assert_true(t.chunks[i].emit_ns >= t.chunks[i].model_ns[k]);
		}
	}
	assert_int_equal(tokens, 4);
	truth_free(&t);
	unlink(path);
}

static void test_flavor_vllm_metrics(void **state)
{
	(void)state;
	struct sim_proc p = sim_start_ok(NULL);
	struct http_reply r;
	assert_int_equal(http_do(&p, "/v1/completions", "{\"prompt\":\"a b c\",\"max_tokens\":3,"
				 "\"ignore_eos\":true}", NULL, &r), 0);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/metrics", NULL, NULL, &r), 0);
	const char *names[] = {"vllm:num_requests_running", "vllm:num_requests_waiting",
			       "vllm:kv_cache_usage_perc", "vllm:prefix_cache_queries_total",
			       "vllm:prefix_cache_hits_total", "vllm:num_preemptions_total",
			       "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
			       "vllm:time_to_first_token_seconds_count",
			       "vllm:inter_token_latency_seconds_sum", "vllm:cache_config_info"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (isnan(prom_value(r.body, names[i])))
			fail_msg("metric %s missing", names[i]);
	assert_non_null(strstr(r.body, "# TYPE vllm:num_requests_running gauge"));
	assert_non_null(strstr(r.body, "# HELP vllm:generation_tokens_total "));
	assert_non_null(strstr(r.body, "# TYPE vllm:time_to_first_token_seconds histogram"));
	assert_non_null(strstr(r.body, "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\","
				       "engine=\"0\",model_name=\"sim\"} 1.0"));
	assert_non_null(strstr(r.body, "num_gpu_blocks=\"557056\""));
	assert_non_null(strstr(r.body, "block_size=\"16\""));
	assert_true(prom_value(r.body, "vllm:generation_tokens_total") == 3.0);
	assert_true(prom_value(r.body, "vllm:prompt_tokens_total") == 3.0);
	assert_true(prom_value(r.body, "vllm:inter_token_latency_seconds_count") == 2.0);
	http_reply_free(&r);
	sim_stop_ok(&p);
}

static void test_flavor_sglang(void **state)
{
	(void)state;
	const char *args[] = {"--flavor", "sglang", "--kv-capacity", "200000", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct http_reply r;
	assert_int_equal(http_do(&p, "/metrics", NULL, NULL, &r), 0);
	const char *names[] = {"sglang:num_running_reqs", "sglang:num_queue_reqs",
			       "sglang:token_usage", "sglang:max_total_num_tokens",
			       "sglang:gen_throughput", "sglang:cache_hit_rate"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (isnan(prom_value(r.body, names[i])))
			fail_msg("metric %s missing", names[i]);
	assert_null(strstr(r.body, "vllm:"));
	assert_true(prom_value(r.body, "sglang:max_total_num_tokens") == 200000.0);
	http_reply_free(&r);
	/* SGLang's chunks spell out unset fields as null; usage still adds up */
	const char *body = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
			   "\"max_tokens\":4,\"ignore_eos\":true,\"stream\":true}";
	const char *bodies[] = {body};
	struct stream_result s;
	stream_many(&p, "/v1/chat/completions", bodies, 1, 1, 20, NULL, NULL, &s);
	assert_int_equal(s.status, 200);
	assert_non_null(strstr(s.ev[1].data, "\"tool_calls\":null"));
	assert_non_null(strstr(s.ev[1].data, "\"usage\":null"));
	assert_string_equal(s.ev[s.n - 1].data, "[DONE]");
	stream_result_free(&s);
	assert_int_equal(http_do(&p, "/get_server_info", NULL, NULL, &r), 0);
	assert_int_equal(r.status, 200);
	cJSON *j = cJSON_Parse(r.body);
	assert_int_equal((long)cJSON_GetObjectItem(j, "max_total_num_tokens")->valuedouble, 200000);
	cJSON_Delete(j);
	http_reply_free(&r);
	sim_stop_ok(&p);
}

/* Histogram name of a Prometheus text body, as prometheus_client writes it:
 * HELP and TYPE histogram lines, _bucket samples with le first then labels,
 * at the bounds les (in order, then "+Inf"), cumulative, the +Inf bucket
 * equal to _count, which is want_count; returns _sum. */
static double check_histogram(const char *body, const char *name, const char *labels,
			      const char *const *les, size_t nles, double want_count)
{
	char key[256];
	const char *at = body;
	double prev = 0, v = NAN, sum;

	snprintf(key, sizeof key, "# TYPE %s histogram\n", name);
	if (!strstr(body, key))
		fail_msg("%s: no TYPE histogram line", name);
	snprintf(key, sizeof key, "# HELP %s ", name);
	assert_non_null(strstr(body, key));
	for (size_t i = 0; i <= nles; i++) {
		const char *p;
		char *end;
		snprintf(key, sizeof key, "\n%s_bucket{le=\"%s\",%s} ", name,
			 i < nles ? les[i] : "+Inf", labels);
		p = strstr(at, key);
		if (!p)
			fail_msg("%s: bucket %zu (%s) missing or out of order", name, i,
				 i < nles ? les[i] : "+Inf");
		v = strtod(p + strlen(key), &end);
		assert_true(end > p + strlen(key));
		if (v < prev)
			fail_msg("%s: bucket %zu holds %g < %g: not cumulative", name, i, v, prev);
		prev = v;
		at = p + 1;
	}
	/* no bucket beyond the documented ones */
	snprintf(key, sizeof key, "\n%s_bucket{", name);
	for (const char *p = strstr(body, key); p; p = strstr(p + 1, key))
		assert_true(p < at);
	snprintf(key, sizeof key, "%s_count", name);
	assert_true(prom_value(body, key) == v);
	assert_true(v == want_count);
	snprintf(key, sizeof key, "%s_sum", name);
	sum = prom_value(body, key);
	assert_false(isnan(sum));
	return sum;
}

/* vLLM V1's request-latency buckets, SGLang's queue-time buckets */
static const char *const vllm_latency_les[] = {
	"0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5", "5.0", "10.0", "15.0", "20.0",
	"30.0", "40.0", "50.0", "60.0", "120.0", "240.0", "480.0", "960.0", "1920.0", "7680.0"};
static const char *const sglang_queue_les[] = {
	"0.0", "0.001", "0.005", "0.01", "0.05", "0.1", "0.2", "0.5", "1.0", "2.0",
	"3.0", "4.0", "5.0", "10.0", "15.0", "20.0", "30.0", "40.0", "50.0", "60.0",
	"70.0", "80.0", "90.0", "100.0", "200.0", "300.0", "400.0", "500.0", "600.0",
	"700.0", "800.0", "900.0", "1000.0", "1200.0", "1400.0", "1600.0", "1800.0",
	"2000.0", "2500.0", "3000.0"};
static const char *const ttft_les[] = {
	"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5",
	"0.75", "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "160.0",
	"640.0", "2560.0"};
#define NLES(a) (sizeof a / sizeof a[0])

/* Three streams at once through one running slot (--max-num-seqs 1): the
 * TTFT parts' histograms of the vllm and sglang flavors are well formed,
 * count every request, and their sums are the truth log's: each request
 * leaves the queue when it has arrived and the one served before it has
 * made its last token; its prefill ends at its first token's model time;
 * the server's TTFT is its first chunk's emission - arrival. */
static void test_ttft_parts_histograms(void **state)
{
	(void)state;
	for (int sgl = 0; sgl < 2; sgl++) {
		char path[] = "/tmp/tt-sim-truth-XXXXXX";
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
		const char *args[] = {"--flavor", sgl ? "sglang" : "vllm", "--max-num-seqs", "1",
				      "--no-prefix-caching", "--truth", path, NULL};
		const char *labels = sgl ? "model_name=\"sim\"" : "engine=\"0\",model_name=\"sim\"";
		const char *pre = sgl ? "sglang:" : "vllm:";
		char name[128];
		struct sim_proc p = sim_start_ok(args);
		char *bodies[3];
		struct stream_result sr[3];
		struct http_reply r;
		struct truth t;
		uint64_t arr[3], first[3], last[3], emit[3];
		double want_queue = 0, want_prefill = 0, want_ttft = 0, got;

		for (int i = 0; i < 3; i++)
			bodies[i] = body_token_prompt(2048, i, 16, 1, NULL);
		stream_many(&p, "/v1/completions", (const char *const *)bodies, 3, 0, 20, NULL, NULL,
			    sr);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(sr[i].status, 200);
			stream_result_free(&sr[i]);
			free(bodies[i]);
		}
		assert_int_equal(http_do(&p, "/metrics", NULL, NULL, &r), 0);
		sim_stop_ok(&p);

		assert_int_equal(truth_read(path, &t), 0);
		unlink(path);
		assert_int_equal(t.nreqs, 3);
		for (size_t i = 0; i < 3; i++) {
			arr[i] = t.reqs[i].arrival_ns;
			first[i] = UINT64_MAX;
			last[i] = 0;
			emit[i] = 0;
			for (size_t c = 0; c < t.nchunks; c++) {
				if (t.chunks[c].id != t.reqs[i].id)
					continue;
				if (t.chunks[c].first == 0)
					emit[i] = t.chunks[c].emit_ns;
				for (uint32_t k = 0; k < t.chunks[c].count; k++) {
					uint64_t m = t.chunks[c].model_ns[k];
					first[i] = m < first[i] ? m : first[i];
					last[i] = m > last[i] ? m : last[i];
				}
			}
			assert_true(emit[i] && last[i]);
		}
		truth_free(&t);
		/* in the order served */
		for (int i = 0; i < 3; i++)
			for (int j = i + 1; j < 3; j++)
				if (first[j] < first[i]) {
					uint64_t *a[] = {arr, first, last, emit};
					for (int k = 0; k < 4; k++) {
						uint64_t x = a[k][i];
						a[k][i] = a[k][j];
						a[k][j] = x;
					}
				}
		for (int i = 0; i < 3; i++) {
			uint64_t admit = arr[i];
			if (i && last[i - 1] > admit)
				admit = last[i - 1];
			want_queue += (double)(admit - arr[i]) / 1e9;
			want_prefill += (double)(first[i] - admit) / 1e9;
			want_ttft += (double)(emit[i] - arr[i]) / 1e9;
		}
		/* two of the three waited for a whole 16-token request */
		assert_true(want_queue > 0.001);

		snprintf(name, sizeof name, "%s%s", pre, sgl ? "queue_time_seconds"
							  : "request_queue_time_seconds");
		got = check_histogram(r.body, name, labels, sgl ? sglang_queue_les : vllm_latency_les,
				      sgl ? NLES(sglang_queue_les) : NLES(vllm_latency_les), 3.0);
		if (fabs(got - want_queue) > 1e-6)
			fail_msg("%s_sum %.9f, truth %.9f", name, got, want_queue);
		snprintf(name, sizeof name, "%stime_to_first_token_seconds", pre);
		got = check_histogram(r.body, name, labels, ttft_les, NLES(ttft_les), 3.0);
		if (fabs(got - want_ttft) > 1e-6)
			fail_msg("%s_sum %.9f, truth %.9f", name, got, want_ttft);
		if (!sgl) {
			got = check_histogram(r.body, "vllm:request_prefill_time_seconds", labels,
					      vllm_latency_les, NLES(vllm_latency_les), 3.0);
			/* a 2K prefill at 150K tok/s: about 14 ms each */
			assert_true(want_prefill > 3 * 0.010);
			if (fabs(got - want_prefill) > 1e-6)
				fail_msg("prefill_sum %.9f, truth %.9f", got, want_prefill);
		} else {
			assert_null(strstr(r.body, "prefill_time"));
			assert_null(strstr(r.body, "vllm:"));
		}
		http_reply_free(&r);
	}
}

/* llama-server's slots: /props and /v1/models tell each slot's context, a
 * prompt that fills it is refused as llama-server refuses it, and an output
 * stops when the slot is full (finish length, fewer tokens than asked);
 * replies say keep-alive (the connection is then closed silently). */
static void test_llamacpp_slots(void **state)
{
	(void)state;
	const char *args[] = {"--flavor", "llamacpp", "--max-num-seqs", "4", "--kv-capacity", "256",
			      "--max-model-len", "256",
			      NULL};
	struct sim_proc p = sim_start_ok(args);
	struct http_reply r;
	cJSON *j;
	const char *fill = "{\"prompt\":[" "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
			   "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
			   "\"max_tokens\":4,\"stream\":true}";
	const char *over = "{\"prompt\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,"
			   "23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,"
			   "47,48,49,50,51,52,53,54,55,56,57,58,59,60],\"max_tokens\":10,"
			   "\"ignore_eos\":true,\"stream\":true}";
	const char *bodies[] = {over};
	struct stream_result s;

	assert_int_equal(http_do(&p, "/props", NULL, NULL, &r), 0);
	j = cJSON_Parse(r.body);
	assert_int_equal((long)cJSON_GetObjectItem(cJSON_GetObjectItem(j, "default_generation_settings"),
						  "n_ctx")->valuedouble, 64);
	assert_int_equal((long)cJSON_GetObjectItem(j, "total_slots")->valuedouble, 4);
	assert_string_equal(cJSON_GetObjectItem(j, "build_info")->valuestring, "b6000-sim");
	cJSON_Delete(j);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/v1/models", NULL, NULL, &r), 0);
	assert_non_null(strstr(r.body, "\"n_ctx\":64"));
	assert_null(strstr(r.body, "max_model_len"));
	http_reply_free(&r);
	/* 64 prompt tokens in a 64-token slot: refused */
	assert_int_equal(http_do(&p, "/v1/completions", fill, NULL, &r), 0);
	assert_int_equal(r.status, 400);
	assert_non_null(strstr(r.body, "exceed_context_size_error"));
	assert_non_null(strstr(r.body, "request (64 tokens) exceeds the available context size "
				       "(64 tokens)"));
	http_reply_free(&r);
	/* 60 + 10 > 64: 4 tokens, finish length */
	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &s);
	assert_int_equal(s.status, 200);
	assert_non_null(strstr(s.headers, "Keep-Alive: timeout=5, max=100"));
	assert_null(strstr(s.headers, "Connection: close"));
	/* (a slow loop may merge tokens into fewer chunks) */
	assert_true(s.n >= 3);
	assert_non_null(strstr(s.ev[s.n - 2].data, "\"finish_reason\":\"length\""));
	assert_int_equal(s.ev[s.n - 2].completion_tokens, 4);
	assert_string_equal(s.ev[s.n - 1].data, "[DONE]");
	stream_result_free(&s);
	sim_stop_ok(&p);
}

/* TGI: its routes (/info, no /version, no token-id prompts), one event
 * per token written "data:{...}", usage with the last token only, finish
 * "eos_token" since ignore_eos is not TGI's, its /metrics names. */
static void test_flavor_tgi(void **state)
{
	(void)state;
	const char *args[] = {"--flavor", "tgi", "--eos-after", "5", "--merge", "3", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct http_reply r;
	const char *body = "{\"prompt\":\"a b c d\",\"max_tokens\":8,\"ignore_eos\":true,"
			   "\"stream\":true}";
	const char *bodies[] = {body};
	struct stream_result s;

	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &s);
	assert_int_equal(s.status, 200);
	assert_int_equal(s.n, 6); /* 5 tokens (EOS after 5), one event each, then [DONE] */
	assert_non_null(strstr(s.raw, "data:{\"id\":\"\","));
	for (size_t i = 0; i < 4; i++) {
		assert_null(strstr(s.ev[i].data, "\"usage\""));
		assert_non_null(strstr(s.ev[i].data, "\"finish_reason\":\"\""));
	}
	assert_non_null(strstr(s.ev[4].data, "\"finish_reason\":\"eos_token\""));
	assert_int_equal(s.ev[4].completion_tokens, 5);
	assert_string_equal(s.ev[5].data, "[DONE]");
	stream_result_free(&s);
	assert_int_equal(http_do(&p, "/v1/completions",
				 "{\"prompt\":[1,2,3],\"max_tokens\":2,\"stream\":true}", NULL, &r), 0);
	assert_int_equal(r.status, 422);
	assert_non_null(strstr(r.body, "\"error_type\":\"validation\""));
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/info", NULL, NULL, &r), 0);
	assert_non_null(strstr(r.body, "\"max_total_tokens\":128000"));
	assert_non_null(strstr(r.body, "\"version\":\"3.3.0-sim\""));
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/version", NULL, NULL, &r), 0);
	assert_int_equal(r.status, 404);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/metrics", NULL, NULL, &r), 0);
	const char *names[] = {"tgi_queue_size", "tgi_batch_current_size", "tgi_request_count",
			       "tgi_request_success", "tgi_request_duration_count"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (isnan(prom_value(r.body, names[i])))
			fail_msg("metric %s missing", names[i]);
	assert_true(prom_value(r.body, "tgi_request_success") == 1.0);
	http_reply_free(&r);
	sim_stop_ok(&p);
}

static void test_flavor_llamacpp(void **state)
{
	(void)state;
	const char *args[] = {"--flavor", "llamacpp", "--max-num-seqs", "4", "--step-base-ms", "20",
			      NULL};
	struct sim_proc p = sim_start_ok(args);
	struct http_reply r;
	const char *body = "{\"prompt\":\"a b c d\",\"max_tokens\":6,\"ignore_eos\":true,\"stream\":true,"
			   "\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}}";
	const char *bodies[] = {body};
	struct stream_result s;
	stream_many(&p, "/v1/completions", bodies, 1, 1, 20, NULL, NULL, &s);
	assert_int_equal(s.status, 200);
	/* usage only in the final chunk, which carries finish_reason */
	assert_int_equal(s.n, 8);
	for (size_t i = 0; i < 6; i++) {
		assert_null(strstr(s.ev[i].data, "\"usage\""));
		assert_non_null(strstr(s.ev[i].data, "\"finish_reason\":null"));
	}
	assert_non_null(strstr(s.ev[6].data, "\"finish_reason\":\"length\""));
	assert_int_equal(s.ev[6].completion_tokens, 6);
	assert_non_null(strstr(s.ev[6].data, "\"timings\""));
	assert_string_equal(s.ev[7].data, "[DONE]");
	stream_result_free(&s);

	assert_int_equal(http_do(&p, "/metrics", NULL, NULL, &r), 0);
	const char *names[] = {"llamacpp:requests_processing", "llamacpp:requests_deferred",
			       "llamacpp:tokens_predicted_total", "llamacpp:prompt_tokens_total",
			       "llamacpp:n_decode_total"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (isnan(prom_value(r.body, names[i])))
			fail_msg("metric %s missing", names[i]);
	assert_true(prom_value(r.body, "llamacpp:tokens_predicted_total") == 6.0);
	assert_null(strstr(r.body, "{"));
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/slots", NULL, NULL, &r), 0);
	cJSON *j = cJSON_Parse(r.body);
	assert_int_equal(cJSON_GetArraySize(j), 4);
	assert_true(cJSON_IsBool(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "is_processing")));
	cJSON_Delete(j);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/version", NULL, NULL, &r), 0);
	assert_int_equal(r.status, 404);
	http_reply_free(&r);
	assert_int_equal(http_do(&p, "/health", NULL, NULL, &r), 0);
	assert_non_null(strstr(r.body, "\"ok\""));
	http_reply_free(&r);
	sim_stop_ok(&p);
}

/* llamacpp:prompt_seconds_total and tokens_predicted_seconds_total count the
 * simulated model time as llama-server counts its own (checked on the real
 * server: per request, in whole ms): a 200-token prompt at 10,000 tok/s is
 * 20 ms of prefill; 11 tokens are 10 decode steps of 5 ms after the first.
 * Model time is scheduled, not measured, so a busy machine changes nothing. */
static void test_llamacpp_time_counters(void **state)
{
	(void)state;
	const char *args[] = {"--flavor", "llamacpp", "--max-num-seqs", "1", "--prefill-tok-s",
			      "10000", "--step-base-ms", "5", "--per-seq-ms", "0",
			      "--per-ctx-token-ns", "0", NULL};
	struct sim_proc p = sim_start_ok(args);
	struct http_reply r;
	struct stream_result s;

	for (int i = 0; i < 3; i++) {
		/* two streamed requests, one not streamed: both ends count */
		char *body = body_token_prompt(200, i + 1, 11, i < 2, "\"ignore_eos\":true");
		const char *bodies[] = {body};
		assert_non_null(body);
		if (i < 2) {
			stream_many(&p, "/v1/completions", bodies, 1, 0, 20, NULL, NULL, &s);
			assert_int_equal(s.status, 200);
			stream_result_free(&s);
		} else {
			assert_int_equal(http_do(&p, "/v1/completions", body, NULL, &r), 0);
			assert_int_equal(r.status, 200);
			http_reply_free(&r);
		}
		free(body);
	}
	assert_int_equal(http_do(&p, "/metrics", NULL, NULL, &r), 0);
	assert_true(prom_value(r.body, "llamacpp:prompt_tokens_total") == 600.0);
	assert_true(prom_value(r.body, "llamacpp:tokens_predicted_total") == 33.0);
	if (fabs(prom_value(r.body, "llamacpp:prompt_seconds_total") - 0.060) > 1e-9 ||
	    fabs(prom_value(r.body, "llamacpp:tokens_predicted_seconds_total") - 0.150) > 1e-9)
		fail_msg("prompt %g s, predicted %g s; want 0.06 and 0.15",
			 prom_value(r.body, "llamacpp:prompt_seconds_total"),
			 prom_value(r.body, "llamacpp:tokens_predicted_seconds_total"));
	http_reply_free(&r);
	sim_stop_ok(&p);
}

struct term_at {
	pid_t pid;
	int sent;
};

static int term_once(void *arg, double t)
{
	struct term_at *ta = arg;
	if (!ta->sent && t > 0.2) {
		kill(ta->pid, SIGTERM);
		ta->sent = 1;
	}
	return 0;
}

/* SIGTERM with a stream in flight: the stream is cut, the truth log is
 * flushed with the request marked as ended by the stop, the exit is 0. */
static void test_sigterm_exit_zero(void **state)
{
	(void)state;
	char path[] = "/tmp/tt-sim-term-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	const char *args[] = {"--truth", path, "--step-base-ms", "5", NULL};
	struct sim_proc p = sim_start_ok(args);
	char *body = body_token_prompt(32, 1, 10000, 1, "\"ignore_eos\":true");
	const char *bodies[] = {body};
	struct stream_result r;
	struct term_at ta = {p.pid, 0};
	stream_many(&p, "/v1/completions", bodies, 1, 1, 10, term_once, &ta, &r);
	assert_true(ta.sent);
	assert_true(r.n > 5);
	assert_false(r.n && !strcmp(r.ev[r.n - 1].data, "[DONE]"));
	assert_int_equal(sim_terminate(&p), 0);
	struct truth t;
	assert_int_equal(truth_read(path, &t), 0);
	const struct truth_req *q = truth_find(&t, 1);
	assert_non_null(q);
	assert_true(q->ended);
	assert_int_equal(q->outcome, 6);
	assert_true(t.nchunks >= 5);
	truth_free(&t);
	stream_result_free(&r);
	free(body);
	unlink(path);
}

/* --max-runtime stops a forgotten simulator by itself; SIGINT stops it as
 * SIGTERM does; both exit 0. */
static void test_max_runtime_and_sigint(void **state)
{
	(void)state;
	char err[1024];
	const char *args[] = {"--port", "0", "--max-runtime", "0.3", NULL};
	uint64_t t0 = now_ns();
	assert_int_equal(sim_run_expect_exit(args, err, sizeof err), 0);
	assert_true(now_ns() - t0 < 3000000000ull);
	assert_non_null(strstr(err, "--max-runtime"));

	struct sim_proc p = sim_start_ok(NULL);
	int st = 0;
	kill(p.pid, SIGINT);
	for (int i = 0; i < 500 && waitpid(p.pid, &st, WNOHANG) != p.pid; i++)
		usleep(10000);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* Every flag --help prints is documented in docs/sim.md, and every flag the
 * doc's table lists exists. */
static void test_help_matches_docs(void **state)
{
	(void)state;
	static char help[16384], doc[65536];
	FILE *f = popen(TT_SIM_PATH " --help", "r");
	assert_non_null(f);
	size_t n = fread(help, 1, sizeof help - 1, f);
	help[n] = '\0';
	assert_int_equal(pclose(f), 0);
	f = fopen(TT_SIM_DOC, "r");
	assert_non_null(f);
	n = fread(doc, 1, sizeof doc - 1, f);
	doc[n] = '\0';
	fclose(f);
	int flags = 0;
	for (char *l = help; (l = strstr(l, "\n  --")); l++) {
		char name[64], want[72];
		if (sscanf(l + 3, "--%63[a-z-]", name) != 1)
			continue;
		snprintf(want, sizeof want, "`--%s", name);
		if (!strstr(doc, want))
			fail_msg("--%s is in --help but not in docs/sim.md", name);
		flags++;
	}
	assert_true(flags >= 20);
	for (char *l = doc; (l = strstr(l, "\n| `--")); l++) {
		char name[64], want[72];
		if (sscanf(l + 4, "--%63[a-z-]", name) != 1)
			continue;
		snprintf(want, sizeof want, "  --%s", name);
		if (!strstr(help, want))
			fail_msg("--%s is in docs/sim.md but not in --help", name);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_line),
		cmocka_unit_test(test_completions_token_ids),
		cmocka_unit_test(test_chat_stream_and_text_prompt),
		cmocka_unit_test(test_no_usage_unless_asked),
		cmocka_unit_test(test_non_streaming),
		cmocka_unit_test(test_auth),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_hostile_bodies),
		cmocka_unit_test(test_bad_flags),
		cmocka_unit_test(test_models_version_health),
		cmocka_unit_test(test_request_id_and_truth),
		cmocka_unit_test(test_flavor_vllm_metrics),
		cmocka_unit_test(test_flavor_sglang),
		cmocka_unit_test(test_ttft_parts_histograms),
		cmocka_unit_test(test_flavor_llamacpp),
		cmocka_unit_test(test_llamacpp_slots),
		cmocka_unit_test(test_llamacpp_time_counters),
		cmocka_unit_test(test_flavor_tgi),
		cmocka_unit_test(test_sigterm_exit_zero),
		cmocka_unit_test(test_help_matches_docs),
		cmocka_unit_test(test_max_runtime_and_sigint),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
