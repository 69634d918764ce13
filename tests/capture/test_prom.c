/* Prometheus text parser (src/lib/prom.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include "protocol/prom.h"

static const char vllm_text[] =
	"# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
	"# TYPE vllm:num_requests_running gauge\n"
	"vllm:num_requests_running{engine=\"0\",model_name=\"lfm\"} 16.0\n"
	"vllm:num_requests_running{engine=\"1\",model_name=\"lfm\"} 4.0\n"
	"vllm:num_requests_waiting{engine=\"0\",model_name=\"lfm\"} 0.0\n"
	"vllm:prompt_tokens_total{model_name=\"lfm\"} 1e+06\n"
	"vllm:prompt_tokens_created{model_name=\"lfm\"} 1.7e9\n"
	"vllm:kv_cache_usage_perc{model_name=\"lfm\"} nan\n"
	"vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"lfm\"} 42\n"
	"vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\",num_gpu_blocks=\"81920\"} 1.0\n"
	"weird{path=\"a\\\"}b\\\\\",x=\"y\"} -Inf 1712345678000\r\n"
	"no_labels 3.5\n"
	"\n";

static void test_parse_vllm(void **state)
{
	struct tt_prom *p = NULL;
	struct tt_error err;
	char buf[64];
	const struct tt_sample *s;
	(void)state;

	assert_int_equal(tt_prom_parse(vllm_text, strlen(vllm_text), &p, &err), TT_OK);
	assert_non_null(p);
	/* 10 series lines minus the _created one */
	assert_int_equal(p->n_samples, 9);
	assert_int_equal(p->n_bad_lines, 0);
	assert_string_equal(p->samples[0].name, "vllm:num_requests_running");
	assert_string_equal(p->samples[0].labels, "engine=\"0\",model_name=\"lfm\"");
	assert_true(p->samples[0].value == 16.0);
	assert_true(tt_prom_sum(p->samples, p->n_samples, "vllm:num_requests_running") == 20.0);
	assert_true(tt_prom_sum(p->samples, p->n_samples, "vllm:prompt_tokens_total") == 1e6);
	assert_true(isnan(tt_prom_sum(p->samples, p->n_samples, "vllm:prompt_tokens_created")));
	assert_true(isnan(tt_prom_sum(p->samples, p->n_samples, "absent")));
	s = tt_prom_find(p->samples, p->n_samples, "vllm:kv_cache_usage_perc");
	assert_non_null(s);
	assert_true(isnan(s->value));
	s = tt_prom_find(p->samples, p->n_samples, "vllm:time_to_first_token_seconds_bucket");
	assert_non_null(s);
	assert_int_equal(tt_prom_label(s->labels, "le", buf, sizeof buf), 1);
	assert_string_equal(buf, "+Inf");
	s = tt_prom_find(p->samples, p->n_samples, "weird");
	assert_non_null(s);
	assert_true(isinf(s->value) && s->value < 0);
	/* the brace inside the quoted value does not end the label set */
	assert_int_equal(tt_prom_label(s->labels, "path", buf, sizeof buf), 1);
	assert_string_equal(buf, "a\"}b\\");
	assert_int_equal(tt_prom_label(s->labels, "x", buf, sizeof buf), 1);
	assert_string_equal(buf, "y");
	assert_int_equal(tt_prom_label(s->labels, "nope", buf, sizeof buf), 0);
	assert_string_equal(buf, "");
	s = tt_prom_find(p->samples, p->n_samples, "no_labels");
	assert_non_null(s);
	assert_string_equal(s->labels, "");
	assert_true(s->value == 3.5);
	tt_prom_free(p);
}

static void test_bad_lines(void **state)
{
	static const char text[] = "ok 1\n"
				   "9bad 1\n"
				   "novalue\n"
				   "x{a=\"1\" 2\n"
				   "y{a=\"1\"} notanumber\n"
				   "z 2\n";
	struct tt_prom *p = NULL;
	struct tt_error err;
	(void)state;

	assert_int_equal(tt_prom_parse(text, strlen(text), &p, &err), TT_WARN);
	assert_int_equal(p->n_samples, 2);
	assert_int_equal(p->n_bad_lines, 4);
	assert_non_null(strstr(err.msg, "line 2"));
	assert_string_equal(p->samples[1].name, "z");
	tt_prom_free(p);
}

static void test_empty_and_unterminated(void **state)
{
	struct tt_prom *p = NULL;
	(void)state;

	assert_int_equal(tt_prom_parse("", 0, &p, NULL), TT_OK);
	assert_int_equal(p->n_samples, 0);
	tt_prom_free(p);
	/* last line without newline, and text not NUL-terminated */
	assert_int_equal(tt_prom_parse("a 1\nb 2XXXX", 7, &p, NULL), TT_OK);
	assert_int_equal(p->n_samples, 2);
	assert_true(p->samples[1].value == 2);
	tt_prom_free(p);
	tt_prom_free(NULL);
}

static void test_label_helper(void **state)
{
	char small[4];
	(void)state;
	assert_int_equal(tt_prom_label("a=\"12345\"", "a", small, sizeof small), 1);
	assert_string_equal(small, "123");
	assert_int_equal(tt_prom_label("a=\"x\\ny\"", "a", small, sizeof small), 1);
	assert_string_equal(small, "x\ny");
	assert_int_equal(tt_prom_label("broken", "a", small, sizeof small), 0);
	assert_int_equal(tt_prom_label(NULL, "a", small, sizeof small), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_vllm),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_empty_and_unterminated),
		cmocka_unit_test(test_label_helper),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
