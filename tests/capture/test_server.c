/* Server facts (src/lib/server.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include "protocol/prom.h"
#include "protocol/server.h"

static struct tt_prom *prom(const char *text)
{
	struct tt_prom *p = NULL;
	assert_true(tt_prom_parse(text, strlen(text), &p, NULL) <= TT_WARN);
	return p;
}

static void test_engine_detect(void **state)
{
	struct tt_prom *p;
	char ver[32];
	(void)state;

	p = prom("python_gc_objects_collected_total{generation=\"0\"} 1\n"
		 "vllm:num_requests_running{model_name=\"x\"} 0\n");
	assert_int_equal(tt_engine_detect(p->samples, p->n_samples, NULL, NULL), TT_ENGINE_VLLM);
	tt_prom_free(p);
	p = prom("sglang:num_running_reqs 3\n");
	assert_int_equal(tt_engine_detect(p->samples, p->n_samples, "uvicorn", NULL), TT_ENGINE_SGLANG);
	tt_prom_free(p);
	p = prom("llamacpp:requests_processing 1\n");
	assert_int_equal(tt_engine_detect(p->samples, p->n_samples, NULL, NULL), TT_ENGINE_LLAMACPP);
	tt_prom_free(p);
	p = prom("tgi_queue_size 0\n");
	assert_int_equal(tt_engine_detect(p->samples, p->n_samples, NULL, NULL), TT_ENGINE_TGI);
	tt_prom_free(p);
	assert_int_equal(tt_engine_detect(NULL, 0, "llama.cpp", NULL), TT_ENGINE_LLAMACPP);
	assert_int_equal(tt_engine_detect(NULL, 0, NULL, "{\"version\":\"0.8.1\"}"), TT_ENGINE_UNKNOWN);
	assert_int_equal(tt_engine_detect(NULL, 0, NULL, NULL), TT_ENGINE_UNKNOWN);
	assert_string_equal(tt_engine_name(TT_ENGINE_LLAMACPP), "llamacpp");
	assert_string_equal(tt_engine_name(TT_ENGINE_UNKNOWN), "unknown");
	assert_int_equal(tt_engine_version("{\"version\":\"0.26.1rc1\"}", ver, sizeof ver), 1);
	assert_string_equal(ver, "0.26.1rc1");
	assert_int_equal(tt_engine_version("not json", ver, sizeof ver), 0);
	assert_string_equal(tt_metric_running(TT_ENGINE_VLLM), "vllm:num_requests_running");
	assert_string_equal(tt_metric_waiting(TT_ENGINE_SGLANG), "sglang:num_queue_reqs");
	assert_null(tt_metric_running(TT_ENGINE_UNKNOWN));
}

static void test_kv_from_metrics(void **state)
{
	struct tt_prom *p;
	const char *src = NULL;
	(void)state;

	p = prom("vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\","
		 "num_gpu_blocks=\"81920\",num_cpu_blocks=\"None\"} 1.0\n");
	assert_int_equal(tt_kv_from_metrics(p->samples, p->n_samples, &src), 1310720);
	assert_string_equal(src, "vllm:cache_config_info");
	tt_prom_free(p);
	p = prom("vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"None\"} 1.0\n");
	assert_int_equal(tt_kv_from_metrics(p->samples, p->n_samples, NULL), -1);
	tt_prom_free(p);
	p = prom("sglang:max_total_num_tokens{model_name=\"m\"} 654321\n");
	assert_int_equal(tt_kv_from_metrics(p->samples, p->n_samples, &src), 654321);
	assert_string_equal(src, "sglang:max_total_num_tokens");
	tt_prom_free(p);
}

static void test_kv_sglang_info(void **state)
{
	static const char top[] = "{\"max_total_num_tokens\": 12345, \"x\": 1}";
	static const char nested[] = "{\"internal_states\":[{\"max_total_num_tokens\":777}]}";
	(void)state;
	assert_int_equal(tt_kv_from_sglang_info(top, strlen(top)), 12345);
	assert_int_equal(tt_kv_from_sglang_info(nested, strlen(nested)), 777);
	assert_int_equal(tt_kv_from_sglang_info("{}", 2), -1);
	assert_int_equal(tt_kv_from_sglang_info("{", 1), -1);
}

static void test_kv_server_log(void **state)
{
	static const char log[] =
		"INFO 12-02 13:00:00 [gpu_worker.py:298] Available KV cache memory: 100.5 GiB\n"
		"INFO 12-02 13:00:00 [kv_cache_utils.py:1087] GPU KV cache size: 1,234,567 tokens\n"
		"INFO 12-02 13:00:00 [kv_cache_utils.py:1091] Maximum concurrency for 128,000 tokens per request: 9.64x\n"
		"(restart)\n"
		"INFO 12-02 14:00:00 [kv_cache_utils.py:1087] GPU KV cache size: 2,000,000 tokens\n";
	(void)state;
	assert_int_equal(tt_kv_from_server_log(log, strlen(log)), 2000000);
	assert_int_equal(tt_kv_from_server_log(log, 200), 1234567);
	assert_int_equal(tt_kv_from_server_log("GPU KV cache size: tokens", 25), -1);
	assert_int_equal(tt_kv_from_server_log("GPU KV cache size: 12", 21), -1);
	assert_int_equal(tt_kv_from_server_log("", 0), -1);
}

static int props_of(const char *s, struct tt_llamacpp_props *p)
{
	return tt_llamacpp_props(s, strlen(s), p);
}

/* llama-server's /props as the project's build serves it (trimmed). */
static void test_llamacpp_props(void **state)
{
	static const char body[] =
		"{\"default_generation_settings\":{\"params\":{\"n_predict\":-1},\"n_ctx\":4096},"
		"\"total_slots\":4,\"model_alias\":\"x\",\"build_info\":\"b0-unknown\","
		"\"is_sleeping\":false}";
	struct tt_llamacpp_props p;
	(void)state;

	assert_int_equal(tt_llamacpp_props(body, strlen(body), &p), 1);
	assert_int_equal(p.slot_context, 4096);
	assert_int_equal(p.slots, 4);
	assert_string_equal(p.build, "b0-unknown");
	/* absent or mistyped fields stay unknown; not an object says nothing */
	assert_int_equal(props_of("{\"total_slots\":\"4\"}", &p), 0);
	assert_int_equal(p.slots, -1);
	assert_int_equal(p.slot_context, -1);
	assert_int_equal(props_of("[1]", &p), 0);
	assert_int_equal(props_of("{\"default_generation_settings\":{\"n_ctx\":0}}", &p), 0);
	assert_int_equal(tt_llamacpp_props(NULL, 0, &p), 0);
}

/* TGI's /info (fields as its router's Info struct names them). */
static void test_tgi_info(void **state)
{
	static const char body[] =
		"{\"model_id\":\"m\",\"model_sha\":null,\"max_input_tokens\":4095,"
		"\"max_total_tokens\":4096,\"router\":\"text-generation-router\","
		"\"version\":\"3.3.0\",\"sha\":null,\"docker_label\":null}";
	int64_t total;
	char ver[32];
	(void)state;

	assert_int_equal(tt_tgi_info(body, strlen(body), &total, ver, sizeof ver), 1);
	assert_int_equal(total, 4096);
	assert_string_equal(ver, "3.3.0");
	assert_int_equal(tt_tgi_info("{\"version\":3}", 13, &total, ver, sizeof ver), 0);
	assert_int_equal(total, -1);
	assert_string_equal(ver, "");
	assert_int_equal(tt_tgi_info("nope", 4, &total, ver, sizeof ver), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_detect),
		cmocka_unit_test(test_llamacpp_props),
		cmocka_unit_test(test_tgi_info),
		cmocka_unit_test(test_kv_from_metrics),
		cmocka_unit_test(test_kv_sglang_info),
		cmocka_unit_test(test_kv_server_log),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
