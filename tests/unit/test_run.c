/* Runs: directory and archives read the same; damage is contained. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tt_cmocka.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "tokentrace/analysis.h"
#include "tokentrace/run.h"
#include "tokentrace/synth.h"

#include "testutil.h"

static const char small_profile[] =
	"phase,context,concurrency,status,total_tok_s,per_request_tok_s,ttft_ms,tbt_ms,"
	"avg_active,completed,output_tokens,measured_s\n"
	"prefill,8K,1,Valid,143100,,57,,,1,,\n"
	"decode,8K,1,Valid,959.9,972,47,1,1,,,4\n"
	"decode,8K,4,Valid,3419.6,866.9,54,1.2,4,,,4\n"
	"decode,8K,8,Over capacity,,,,,,,,\n";

static char *make_run(char **dir_out)
{
	char *dir = tu_tmpdir("run");
	char *run = malloc(4096);
	struct tt_profile *p;
	struct tt_error err;
	struct tt_synth_opts o;

	tt_synth_opts_init(&o);
	o.max_tokens = 256;
	snprintf(run, 4096, "%s/run", dir);
	assert_int_equal(tt_profile_parse(small_profile, "small.csv", &p, &err), TT_OK);
	assert_int_equal(tt_synth_run(p, run, &o, NULL, &err), TT_OK);
	tt_profile_free(p);
	*dir_out = dir;
	return run;
}

/* Archive `run` (a directory with manifest.json and cells/) as `path`. */
static void archive_run(const char *run, const char *prefix, const char *path, int zip,
			size_t corrupt_cell)
{
	struct archive *a = archive_write_new();
	struct tt_run *r;
	struct tt_error err;
	const struct tt_manifest *m;

	assert_int_equal(tt_run_open(run, &r, &err), TT_OK);
	m = tt_run_manifest(r);
	if (zip) {
		archive_write_set_format_zip(a);
	} else {
		archive_write_set_format_pax_restricted(a);
		archive_write_add_filter_zstd(a);
	}
	assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
	for (size_t i = 0; i <= m->n_cells; i++) {
		char src[4200], name[4200];
		size_t len;
		char *data;
		struct archive_entry *e = archive_entry_new();
		const char *rel = i < m->n_cells ? m->cells[i].trace : "manifest.json";
		if (!rel) {
			archive_entry_free(e);
			continue;
		}
		snprintf(src, sizeof src, "%s/%s", run, rel);
		snprintf(name, sizeof name, "%s%s", prefix, rel);
		data = tu_read(src, &len);
		assert_non_null(data);
		if (i == corrupt_cell)
			for (size_t k = len / 3; k < len / 3 + 16 && k < len; k++)
				data[k] ^= 0x33;
		archive_entry_set_pathname(e, name);
		archive_entry_set_size(e, (la_int64_t)len);
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, 0644);
		assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
		assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
		archive_entry_free(e);
		free(data);
	}
	archive_write_close(a);
	archive_write_free(a);
	tt_run_free(r);
}

static struct tt_report *analyze(const char *path, enum tt_code want)
{
	struct tt_run *r;
	struct tt_report *rep = NULL;
	struct tt_error err;

	assert_int_equal(tt_run_open(path, &r, &err), TT_OK);
	assert_int_equal(tt_analyze(r, NULL, &rep, &err), want);
	tt_run_free(r);
	return rep;
}

static void test_dir_and_archives_agree(void **state)
{
	char *dir, *run = make_run(&dir);
	char tzst[4200], zip[4200];
	struct tt_report *a, *b, *c;

	(void)state;
	snprintf(tzst, sizeof tzst, "%s/run.tar.zst", dir);
	snprintf(zip, sizeof zip, "%s/run.zip", dir);
	archive_run(run, "run/", tzst, 0, (size_t)-1);
	archive_run(run, "", zip, 1, (size_t)-1);
	a = analyze(run, TT_OK);
	b = analyze(tzst, TT_OK);
	c = analyze(zip, TT_OK);
	assert_int_equal(a->n_cells, 4);
	assert_int_equal(b->n_cells, 4);
	for (size_t i = 0; i < a->n_cells; i++) {
		assert_int_equal(a->cells[i].status, b->cells[i].status);
		assert_int_equal(a->cells[i].status, c->cells[i].status);
		assert_int_equal(a->cells[i].output_tokens, b->cells[i].output_tokens);
		assert_int_equal(a->cells[i].output_tokens, c->cells[i].output_tokens);
		if (!isnan(a->cells[i].total_tok_s))
			assert_true(a->cells[i].total_tok_s == b->cells[i].total_tok_s);
	}
	assert_int_equal(a->cells[3].status, TT_STATUS_OVER_CAPACITY);
	assert_true(a->cells[1].output_tokens > 3000);
	tt_report_free(a);
	tt_report_free(b);
	tt_report_free(c);
	tu_rmrf(dir);
	free(dir);
	free(run);
}

static void test_damaged_cell_contained(void **state)
{
	char *dir, *run = make_run(&dir);
	char tzst[4200];
	struct tt_report *r;

	(void)state;
	snprintf(tzst, sizeof tzst, "%s/bad.tar.zst", dir);
	archive_run(run, "", tzst, 0, 2); /* cell 2: decode 8K x 4 */
	r = analyze(tzst, TT_WARN);
	assert_int_equal(r->cells[2].status, TT_STATUS_DAMAGED);
	assert_non_null(strstr(r->cells[2].reason, "decode-8192x4"));
	assert_non_null(strstr(r->cells[2].reason, "byte offset"));
	assert_int_equal(r->cells[1].status, TT_STATUS_VALID);
	assert_int_equal(r->cells[0].status, TT_STATUS_VALID);
	tt_report_free(r);
	tu_rmrf(dir);
	free(dir);
	free(run);
}

static void test_open_errors(void **state)
{
	char *dir = tu_tmpdir("open");
	char p[4200];
	struct tt_run *r;
	struct tt_error err;

	(void)state;
	assert_int_equal(tt_run_open("/nonexistent/run", &r, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_ENOTFOUND);
	assert_non_null(strstr(err.msg, "/nonexistent/run"));
	assert_int_equal(tt_run_open(dir, &r, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EFORMAT);
	assert_non_null(strstr(err.msg, "no manifest.json"));
	snprintf(p, sizeof p, "%s/empty.tar", dir);
	tu_write(p, "", 0);
	assert_int_equal(tt_run_open(p, &r, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EFORMAT);
	assert_non_null(strstr(err.msg, "empty"));
	snprintf(p, sizeof p, "%s/junk.tar", dir);
	tu_write(p, "hello world, not an archive", 27);
	assert_int_equal(tt_run_open(p, &r, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EFORMAT);
	assert_non_null(strstr(err.msg, "junk.tar"));
	tu_rmrf(dir);
	free(dir);
}

static void test_writer_resume_and_existing(void **state)
{
	char *dir, *run = make_run(&dir);
	struct tt_run_writer *w;
	struct tt_manifest m;
	struct tt_error err;

	(void)state;
	tt_manifest_init(&m);
	assert_int_equal(tt_run_writer_create(run, &m, &w, &err), TT_FAILED);
	assert_int_equal(err.kind, TT_EARG);
	assert_non_null(strstr(err.msg, "not empty"));
	assert_int_equal(tt_run_writer_resume(run, &w, &err), TT_OK);
	assert_int_equal(tt_run_writer_manifest(w)->n_cells, 4);
	tt_run_writer_manifest(w)->cells[1].state = TT_CELL_INTERRUPTED;
	assert_int_equal(tt_run_writer_commit(w, &err), TT_OK);
	tt_run_writer_free(w);
	{
		struct tt_run *r;
		assert_int_equal(tt_run_open(run, &r, &err), TT_OK);
		assert_int_equal(tt_run_manifest(r)->cells[1].state, TT_CELL_INTERRUPTED);
		tt_run_free(r);
	}
	tt_manifest_release(&m);
	tu_rmrf(dir);
	free(dir);
	free(run);
}

/* Issue 14 point 10: a manifest that cannot be saved (the disk is full;
 * here RLIMIT_FSIZE) fails the commit, leaves the last saved manifest
 * whole and no manifest.json.tmp behind. */
static void test_commit_on_full_disk(void **state)
{
	char *dir, *run = make_run(&dir), tmp[4200];
	struct tt_run_writer *w;
	struct tt_error err;
	struct rlimit old, lim;
	void (*old_sig)(int);
	struct tt_run *r;

	(void)state;
	assert_int_equal(tt_run_writer_resume(run, &w, &err), TT_OK);
	tt_run_writer_manifest(w)->cells[1].state = TT_CELL_INTERRUPTED;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 256; /* smaller than any manifest */
	old_sig = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	assert_int_equal(tt_run_writer_commit(w, &err), TT_FAILED);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, old_sig);
	assert_int_equal(err.kind, TT_EIO);
	snprintf(tmp, sizeof tmp, "%s/manifest.json.tmp", run);
	assert_int_not_equal(access(tmp, F_OK), 0);
	assert_int_equal(tt_run_open(run, &r, &err), TT_OK);
	assert_int_equal(tt_run_manifest(r)->cells[1].state, TT_CELL_DONE);
	tt_run_free(r);
	tt_run_writer_free(w);
	tu_rmrf(dir);
	free(dir);
	free(run);
}

/* A trace larger than the reader's window, damaged in the middle and cut
 * at the end, read from disk: every intact frame still arrives. */
static void test_streamed_damage(void **state)
{
	char *dir = tu_tmpdir("stream");
	char path[4200];
	struct tt_trace_writer *w;
	struct tt_trace_opts o = {1, 1, 64 * 1024, 0}; /* ns unit: incompressible low digits */
	struct tt_error err;
	struct tt_run_writer *rw;
	struct tt_manifest m;
	struct tt_run *run;
	struct tu_collect c;
	struct tt_trace_visitor v = {&c, tu_on_request, NULL};
	static struct tt_chunk ch[4096];
	size_t idx, len, full;
	char *data;
	uint64_t x = 12345;

	(void)state;
	snprintf(path, sizeof path, "%s/run", dir);
	tt_manifest_init(&m);
	tt_manifest_add_cell(&m, TT_PHASE_DECODE, 1024, 1, &idx);
	assert_int_equal(tt_run_writer_create(path, &m, &rw, &err), TT_OK);
	assert_int_equal(tt_run_writer_open_cell(rw, idx, &o, &w, &err), TT_OK);
	for (int q = 0; q < 120; q++) {
		struct tt_request r;
		int64_t t = 1000000000LL + q * 5000000000LL;
		memset(&r, 0, sizeof r);
		r.seq = (uint32_t)q;
		r.t_sched_ns = r.t_send_ns = t;
		for (int i = 0; i < 4096; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			t += 900000 + (int64_t)(x >> 44);
			ch[i].t_ns = t;
			ch[i].tokens = 1;
		}
		r.t_end_ns = t;
		r.finish = TT_FINISH_LENGTH;
		r.n_chunks = 4096;
		r.chunks = ch;
		assert_int_equal(tt_trace_write_request(w, &r, &err), TT_OK);
	}
	assert_int_equal(tt_trace_writer_close(w, &err), TT_OK);
	tt_run_writer_manifest(rw)->cells[idx].state = TT_CELL_DONE;
	assert_int_equal(tt_run_writer_commit(rw, &err), TT_OK);
	tt_run_writer_free(rw);
	tt_manifest_release(&m);

	snprintf(path, sizeof path, "%s/run/cells/decode-1024x1.ttz", dir);
	data = tu_read(path, &len);
	assert_true(len > 1024 * 1024); /* several reader windows */
	for (size_t i = len / 2; i < len / 2 + 64; i++)
		data[i] ^= 0xA5;
	assert_int_equal(tu_write(path, data, len - 100), 0);
	free(data);

	snprintf(path, sizeof path, "%s/run", dir);
	assert_int_equal(tt_run_open(path, &run, &err), TT_OK);
	memset(&c, 0, sizeof c);
	assert_int_equal(tt_run_read_cell(run, 0, &v, &err), TT_WARN);
	assert_non_null(strstr(err.msg, "2 damaged parts"));
	assert_non_null(strstr(err.msg, "decode-1024x1"));
	full = c.requests;
	assert_true(full >= 110 && full < 120);
	assert_int_equal(c.tokens, (uint64_t)full * 4096);
	tt_run_free(run);
	tu_rmrf(dir);
	free(dir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dir_and_archives_agree),
		cmocka_unit_test(test_damaged_cell_contained),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_writer_resume_and_existing),
		cmocka_unit_test(test_commit_on_full_disk),
		cmocka_unit_test(test_streamed_damage),
	};
	return tt_cmocka_main(argc, argv, tests, NULL, NULL);
}
