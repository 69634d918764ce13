/* Trace file: round trip, forward compatibility, damage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "tokentrace/trace.h"

#include "testutil.h"

struct keep {
	struct tt_request r;
	struct tt_chunk chunks[16];
	char error[64];
	size_t n;
	double scrape_value;
	char scrape_name[64], scrape_labels[64];
	int64_t scrape_t;
};

static int keep_request(void *ctx, const struct tt_request *r)
{
	struct keep *k = ctx;
	k->r = *r;
	memcpy(k->chunks, r->chunks, (r->n_chunks < 16 ? r->n_chunks : 16) * sizeof *r->chunks);
	snprintf(k->error, sizeof k->error, "%s", r->error ? r->error : "");
	k->n++;
	return 0;
}

static int keep_scrape(void *ctx, const struct tt_scrape *s)
{
	struct keep *k = ctx;
	k->scrape_t = s->t_ns;
	snprintf(k->scrape_name, sizeof k->scrape_name, "%s", s->samples[1].name);
	snprintf(k->scrape_labels, sizeof k->scrape_labels, "%s", s->samples[1].labels);
	k->scrape_value = s->samples[1].value;
	return 0;
}

static void make_request(struct tt_request *r, struct tt_chunk *ch, int64_t t0)
{
	memset(r, 0, sizeof *r);
	r->slot = 7;
	r->seq = 3;
	r->role = TT_ROLE_MEASURED;
	r->t_sched_ns = t0;
	r->t_send_ns = t0 + 40123;
	r->t_end_ns = t0 + 9000000;
	r->http_status = 200;
	r->prompt_tokens = 8192;
	r->cached_tokens = -1;
	r->finish = TT_FINISH_CUT;
	r->fail = TT_FAIL_NONE;
	for (int i = 0; i < 4; i++) {
		ch[i].t_ns = t0 + 1000000 + i * 1234567;
		ch[i].tokens = i == 2 ? 3 : 1;
	}
	r->n_chunks = 4;
	r->chunks = ch;
}

static char *write_trace(const char *dir, const char *name, int nreq, uint32_t unit)
{
	char *path = malloc(4096);
	struct tt_trace_writer *w;
	struct tt_trace_opts o = {unit, 3, 200, 0};
	struct tt_error err;
	struct tt_request r;
	struct tt_chunk ch[4];

	snprintf(path, 4096, "%s/%s", dir, name);
	assert_int_equal(tt_trace_writer_open(path, &o, &w, &err), TT_OK);
	for (int i = 0; i < nreq; i++) {
		make_request(&r, ch, 1000000000LL + i * 10000000LL);
		r.seq = (uint32_t)i; /* one slot's requests in turn: a repeat is damage */
		assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	}
	assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);
	return path;
}

static void test_round_trip(void **state)
{
	char *dir = tu_tmpdir("trace");
	char path[4096];
	struct tt_trace_writer *w;
	struct tt_error err;
	struct tt_request r;
	struct tt_chunk ch[4];
	struct tt_sample smp[2] = {{"vllm:num_requests_running", "model_name=\"m\"", 3},
				   {"vllm:num_requests_waiting", "model_name=\"m\",x=\"y\"", 1.5}};
	struct tt_scrape sc = {2000000000LL, 2, smp};
	struct keep k;
	struct tt_trace_visitor v = {&k, keep_request, keep_scrape};
	size_t len;
	char *data;

	(void)state;
	snprintf(path, sizeof path, "%s/a.ttz", dir);
	assert_int_equal(tt_trace_writer_open(path, NULL, &w, &err), TT_OK);
	make_request(&r, ch, 1000000000LL);
	r.error = "boom";
	r.finish = TT_FINISH_ERROR;
	r.fail = TT_FAIL_RESET;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	assert_int_equal(tt_trace_write_scrape(w, &sc, &err), TT_OK);
	assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);

	memset(&k, 0, sizeof k);
	data = tu_read(path, &len);
	assert_non_null(data);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_OK);
	assert_int_equal(k.n, 1);
	assert_int_equal(k.r.slot, 7);
	assert_int_equal(k.r.seq, 3);
	assert_int_equal(k.r.role, TT_ROLE_MEASURED);
	assert_int_equal(k.r.finish, TT_FINISH_ERROR);
	assert_int_equal(k.r.fail, TT_FAIL_RESET);
	assert_int_equal(k.r.http_status, 200);
	assert_int_equal(k.r.prompt_tokens, 8192);
	assert_int_equal(k.r.cached_tokens, -1);
	assert_string_equal(k.error, "boom");
	/* Default unit is 1 us: times come back rounded up to the microsecond
	 * (never earlier than measured). */
	assert_int_equal(k.r.t_sched_ns, 1000000000LL);
	assert_int_equal(k.r.t_send_ns, 1000041000LL); /* 40123 ns up */
	assert_int_equal(k.r.t_end_ns, 1009000000LL);
	assert_int_equal(k.r.n_chunks, 4);
	assert_int_equal(k.chunks[0].t_ns, 1001000000LL);
	assert_int_equal(k.chunks[3].t_ns, 1001000000LL + 3704000LL); /* 3*1234567 up */
	assert_int_equal(k.chunks[2].tokens, 3);
	assert_string_equal(k.scrape_name, "vllm:num_requests_waiting");
	assert_string_equal(k.scrape_labels, "model_name=\"m\",x=\"y\"");
	assert_true(k.scrape_value == 1.5);
	assert_int_equal(k.scrape_t, 2000000000LL);
	free(data);
	tu_rmrf(dir);
	free(dir);
}

struct keep_text {
	size_t n, with_text;
	uint8_t text[16];
};

static int keep_text(void *ctx, const struct tt_request *r)
{
	struct keep_text *k = ctx;
	k->n++;
	if (r->chunk_text) {
		k->with_text++;
		memcpy(k->text, r->chunk_text, r->n_chunks < 16 ? r->n_chunks : 16);
	}
	return 0;
}

/* Trace minor 1: the text column round-trips; without it (text unknown)
 * the reader says unknown; a minor-0 record (ends after the token counts)
 * reads as unknown; and bytes a later minor appends are ignored. */
static void test_text_column(void **state)
{
	char *dir = tu_tmpdir("trace-text");
	char path[4096];
	struct tt_trace_writer *w;
	struct tt_trace_opts o = {1000, 3, 1 << 20, 0};
	struct tt_error err;
	struct tt_request r;
	struct tt_chunk ch[4];
	const uint8_t text[4] = {TT_TEXT_REASONING, TT_TEXT_REASONING,
				 TT_TEXT_REASONING | TT_TEXT_ANSWER | 0x80, 0};
	struct keep_text k;
	struct tt_trace_visitor v = {&k, keep_text, NULL};
	uint8_t raw[256];
	size_t n = 0, len;
	char *data;

	(void)state;
	snprintf(path, sizeof path, "%s/t.ttz", dir);
	assert_int_equal(tt_trace_writer_open(path, &o, &w, &err), TT_OK);
	make_request(&r, ch, 1000000000LL);
	r.chunk_text = text;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	r.seq = 4;
	r.chunk_text = NULL;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);
	memset(&k, 0, sizeof k);
	data = tu_read(path, &len);
	assert_non_null(data);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_OK);
	free(data);
	assert_int_equal(k.n, 2);
	assert_int_equal(k.with_text, 1);
	assert_int_equal(k.text[0], TT_TEXT_REASONING);
	assert_int_equal(k.text[1], TT_TEXT_REASONING);
	assert_int_equal(k.text[2], TT_TEXT_REASONING | TT_TEXT_ANSWER); /* reserved bit dropped */
	assert_int_equal(k.text[3], 0);

	/* hand-made minor-0 and future records: header, then two requests */
	raw[n++] = 1;
	raw[n++] = 8;
	memcpy(raw + n, "TTRC", 4);
	n += 4;
	raw[n++] = 1; /* major */
	raw[n++] = 0; /* minor 0 */
	raw[n++] = 1; /* unit 1 ns */
	raw[n++] = 0; /* base */
	for (int rec = 0; rec < 2; rec++) {
		/* slot seq role finish fail http prompt cached sched send end errlen nchunks gaps tokens */
		const uint8_t body[] = {0, (uint8_t)rec, 0, 1, 0, 200, 1, 0, 0, 0, 0, 10, 0, 2, 5, 5, 1, 1};
		raw[n++] = 2;
		raw[n++] = (uint8_t)(sizeof body + (rec ? 4 : 0));
		memcpy(raw + n, body, sizeof body);
		n += sizeof body;
		if (rec) { /* a later minor: text 1, two kinds, then a field we do not know */
			raw[n++] = 1;
			raw[n++] = TT_TEXT_REASONING;
			raw[n++] = TT_TEXT_ANSWER;
			raw[n++] = 0x5A;
		}
	}
	{
		size_t cap = ZSTD_compressBound(n);
		void *z = malloc(cap);
		size_t zn;
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
		zn = ZSTD_compress2(cc, z, cap, raw, n);
		assert_false(ZSTD_isError(zn));
		ZSTD_freeCCtx(cc);
		memset(&k, 0, sizeof k);
		assert_int_equal(tt_trace_decode(z, zn, "hand", &v, &err), TT_OK);
		free(z);
	}
	assert_int_equal(k.n, 2);
	assert_int_equal(k.with_text, 1);
	assert_int_equal(k.text[0], TT_TEXT_REASONING);
	assert_int_equal(k.text[1], TT_TEXT_ANSWER);
	tu_rmrf(dir);
	free(dir);
}

/* Trace minor 3 (formats/run-v1.md 3.5 "Workload"): what a replayed
 * request asked, with and without the capture timing before it, and a
 * record without it reading as none. */
struct keep_wl {
	int n;
	struct tt_request r[3];
	uint32_t blocks[3][8];
};

static int keep_wl(void *ctx, const struct tt_request *r)
{
	struct keep_wl *k = ctx;
	if (k->n < 3) {
		k->r[k->n] = *r;
		memcpy(k->blocks[k->n], r->blocks ? r->blocks : k->blocks[k->n],
		       (r->n_blocks < 8 ? r->n_blocks : 8) * sizeof *r->blocks);
	}
	k->n++;
	return 0;
}

static void test_workload_group(void **state)
{
	char *dir = tu_tmpdir("trace-workload");
	char path[4096];
	struct tt_trace_writer *w;
	struct tt_trace_opts o = {1000, 3, 1 << 20, 0};
	struct tt_error err;
	struct tt_request r;
	struct tt_chunk ch[4];
	const uint32_t ids[3] = {7, 4294967295u, 0};
	struct keep_wl k;
	struct tt_trace_visitor v = {&k, keep_wl, NULL};
	size_t len;
	char *data;

	(void)state;
	snprintf(path, sizeof path, "%s/t.ttz", dir);
	assert_int_equal(tt_trace_writer_open(path, &o, &w, &err), TT_OK);
	make_request(&r, ch, 1000000000LL);
	r.workload_recorded = 1;
	r.wl_line = 12;
	r.prompt_asked = 1200;
	r.output_asked = 44;
	r.session = 3;
	r.turn = 2;
	r.n_blocks = 3;
	r.blocks = ids;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	r.seq = 4; /* with the capture timing before it */
	r.timing_recorded = 1;
	r.cpu_wait_first_ns = r.cpu_wait_last_ns = r.cpu_wait_ns = 5;
	r.n_blocks = 0;
	r.blocks = NULL;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	r.seq = 5; /* none */
	r.workload_recorded = 0;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);
	memset(&k, 0, sizeof k);
	data = tu_read(path, &len);
	assert_non_null(data);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_OK);
	free(data);
	assert_int_equal(k.n, 3);
	assert_int_equal(k.r[0].workload_recorded, 1);
	assert_int_equal(k.r[0].wl_line, 12);
	assert_int_equal(k.r[0].prompt_asked, 1200);
	assert_int_equal(k.r[0].output_asked, 44);
	assert_int_equal(k.r[0].session, 3);
	assert_int_equal(k.r[0].turn, 2);
	assert_int_equal(k.r[0].n_blocks, 3);
	assert_int_equal(k.blocks[0][0], 7);
	assert_int_equal(k.blocks[0][1], 4294967295u);
	assert_int_equal(k.blocks[0][2], 0);
	assert_int_equal(k.r[0].timing_recorded, 0);
	assert_int_equal(k.r[1].workload_recorded, 1);
	assert_int_equal(k.r[1].timing_recorded, 1);
	assert_int_equal(k.r[1].cpu_wait_ns, 5);
	assert_int_equal(k.r[1].n_blocks, 0);
	assert_int_equal(k.r[1].output_asked, 44);
	assert_int_equal(k.r[2].workload_recorded, 0);
	assert_int_equal(k.r[2].n_blocks, 0);
	assert_int_equal(k.r[2].prompt_asked, 0);
	tu_rmrf(dir);
	free(dir);
}

static void test_ns_unit_exact(void **state)
{
	char *dir = tu_tmpdir("trace");
	char *path = write_trace(dir, "ns.ttz", 1, 1);
	struct keep k;
	struct tt_trace_visitor v = {&k, keep_request, NULL};
	struct tt_error err;
	size_t len;
	char *data = tu_read(path, &len);

	(void)state;
	memset(&k, 0, sizeof k);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_OK);
	assert_int_equal(k.r.t_send_ns, 1000040123LL);
	assert_int_equal(k.chunks[3].t_ns, 1000000000LL + 1000000 + 3 * 1234567);
	free(data);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

/* A frame holding a header, a record of an unknown type, then a request. */
static size_t frame_with_unknown(uint8_t *out, size_t cap, unsigned major)
{
	uint8_t raw[256];
	size_t n = 0;

	raw[n++] = 1;           /* header */
	raw[n++] = 8;
	memcpy(raw + n, "TTRC", 4);
	n += 4;
	raw[n++] = (uint8_t)major;
	raw[n++] = 7;           /* minor 7: from the future */
	raw[n++] = 1;           /* unit 1 ns */
	raw[n++] = 0;           /* base 0 */
	raw[n++] = 99;          /* unknown record type */
	raw[n++] = 3;
	raw[n++] = 0xAA;
	raw[n++] = 0xBB;
	raw[n++] = 0xCC;
	/* request: slot 1, seq 2, measured, stop, none, 200, prompt unknown,
	 * cached unknown, t 0/+10/+20, no error, 1 chunk at +5 with 1 token,
	 * then two trailing bytes a newer minor might add. */
	{
		uint8_t req[] = {1, 2, 0, 1, 0, 0xC8, 0x01, 0, 0, 0, 20, 40, 0, 1, 5, 1, 0x11, 0x22};
		raw[n++] = 2;
		raw[n++] = sizeof req;
		memcpy(raw + n, req, sizeof req);
		n += sizeof req;
	}
	return ZSTD_compress(out, cap, raw, n, 3);
}

static void test_forward_compatible(void **state)
{
	uint8_t buf[512];
	size_t n = frame_with_unknown(buf, sizeof buf, 1);
	struct keep k;
	struct tt_trace_visitor v = {&k, keep_request, NULL};
	struct tt_error err;

	(void)state;
	assert_false(ZSTD_isError(n));
	memset(&k, 0, sizeof k);
	assert_int_equal(tt_trace_decode(buf, n, "future.ttz", &v, &err), TT_OK);
	assert_int_equal(k.n, 1);
	assert_int_equal(k.r.slot, 1);
	assert_int_equal(k.r.http_status, 200);
	assert_int_equal(k.r.t_end_ns, 30);
	assert_int_equal(k.chunks[0].t_ns, 15);
}

static void test_newer_major(void **state)
{
	uint8_t buf[512];
	size_t n = frame_with_unknown(buf, sizeof buf, 2);
	struct keep k;
	struct tt_trace_visitor v = {&k, keep_request, NULL};
	struct tt_error err;

	(void)state;
	memset(&k, 0, sizeof k);
	assert_int_equal(tt_trace_decode(buf, n, "v2.ttz", &v, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EFORMAT);
	assert_non_null(strstr(err.msg, "found trace version 2.7"));
	assert_non_null(strstr(err.msg, "understands 1.x"));
	assert_int_equal(k.n, 0);
}

static void test_truncated_keeps_complete_frames(void **state)
{
	char *dir = tu_tmpdir("trace");
	char *path = write_trace(dir, "t.ttz", 40, 0); /* small frames: many of them */
	struct tu_collect c;
	struct tt_trace_visitor v = {&c, tu_on_request, NULL};
	struct tt_error err;
	size_t len, full;
	char *data = tu_read(path, &len);

	(void)state;
	memset(&c, 0, sizeof c);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_OK);
	full = c.requests;
	assert_int_equal(full, 40);
	/* Cut the file in the middle of its last frame, as a crash would. */
	memset(&c, 0, sizeof c);
	assert_int_equal(tt_trace_decode(data, len - 5, path, &v, &err), TT_WARN);
	assert_non_null(strstr(err.msg, "truncated"));
	assert_non_null(strstr(err.msg, "byte offset"));
	assert_true(c.requests > 0 && c.requests < full);
	free(data);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

static void test_flipped_bytes_skip_one_frame(void **state)
{
	char *dir = tu_tmpdir("trace");
	char *path = write_trace(dir, "f.ttz", 40, 0);
	struct tu_collect c;
	struct tt_trace_visitor v = {&c, tu_on_request, NULL};
	struct tt_error err;
	size_t len;
	char *data = tu_read(path, &len);

	(void)state;
	for (size_t i = len / 2; i < len / 2 + 8; i++)
		data[i] ^= 0x5A;
	memset(&c, 0, sizeof c);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_WARN);
	assert_non_null(strstr(err.msg, path));
	assert_true(c.requests >= 30 && c.requests < 40);
	free(data);
	free(path);
	tu_rmrf(dir);
	free(dir);
}

/* Issue 14 point 12: a repeated request record and a chunk claiming
 * 2^32-1 tokens are skipped as damage (the cell is marked), the other
 * records delivered. */
static void test_implausible_records(void **state)
{
	char *dir = tu_tmpdir("trace");
	char path[4096];
	struct tt_trace_writer *w;
	struct tt_trace_opts o = {0, 3, 200, 0};
	struct tt_error err;
	struct tt_request r;
	struct tt_chunk ch[4];
	struct tu_collect c;
	struct tt_trace_visitor v = {&c, tu_on_request, NULL};
	size_t len;
	char *data;

	(void)state;
	snprintf(path, sizeof path, "%s/dup.ttz", dir);
	assert_int_equal(tt_trace_writer_open(path, &o, &w, &err), TT_OK);
	for (int i = 0; i < 10; i++) {
		make_request(&r, ch, 1000000000LL + i * 10000000LL);
		r.seq = (uint32_t)(i % 5); /* seq 0..4 twice */
		assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	}
	make_request(&r, ch, 1200000000LL);
	r.seq = 99;
	ch[1].tokens = 0xFFFFFFFFu;
	assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);
	data = tu_read(path, &len);
	memset(&c, 0, sizeof c);
	assert_int_equal(tt_trace_decode(data, len, path, &v, &err), TT_WARN);
	assert_int_equal(c.requests, 5);
	assert_non_null(strstr(err.msg, "6 damaged parts"));
	assert_non_null(strstr(err.msg, "repeated"));
	free(data);
	tu_rmrf(dir);
	free(dir);
}

static void test_empty_and_garbage(void **state)
{
	struct tu_collect c;
	struct tt_trace_visitor v = {&c, tu_on_request, NULL};
	struct tt_error err;
	const char junk[] = "this is not a trace at all, just text";

	(void)state;
	memset(&c, 0, sizeof c);
	assert_int_equal(tt_trace_decode("", 0, "empty.ttz", &v, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_ETRUNC);
	assert_non_null(strstr(err.msg, "empty.ttz"));
	assert_int_equal(tt_trace_decode(junk, sizeof junk, "junk.ttz", &v, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EFORMAT);
	assert_non_null(strstr(err.msg, "byte offset 0"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_text_column),
		cmocka_unit_test(test_workload_group),
		cmocka_unit_test(test_ns_unit_exact),
		cmocka_unit_test(test_forward_compatible),
		cmocka_unit_test(test_newer_major),
		cmocka_unit_test(test_truncated_keeps_complete_frames),
		cmocka_unit_test(test_flipped_bytes_skip_one_frame),
		cmocka_unit_test(test_empty_and_garbage),
		cmocka_unit_test(test_implausible_records),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
