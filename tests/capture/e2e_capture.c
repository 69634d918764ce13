/* End-to-end tests of tokentrace-capture against tokentrace-sim.
 *
 * usage: e2e_capture SIM CAPTURE PROFILE WORKDIR [test-name...]
 *
 * Each test starts its own simulator on a free loopback port (--port 0, the
 * port read from its listen line), runs a capture with short windows, and
 * reads the run back through the library (tt_run_open, tt_analyze). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <cmocka.h>

#include "tokentrace/analysis.h"
#include "tokentrace/profile.h"
#include "tokentrace/run.h"
#include "sim_client.h" /* truth_read: the simulator's ground-truth log */
#include "testutil.h"   /* tu_read, tu_rmrf: shared with the unit tests */
#include "tt_cmocka.h"

extern char **environ;

static const char *sim_bin, *cap_bin, *profile_path, *workdir;

#define API_KEY "tt-e2e-secret-7f3a9c"

/* ---- processes --------------------------------------------------------- */

struct sim {
	pid_t pid;
	int port;
	char url[64];
};

static void sim_start(struct sim *s, const char *const *extra)
{
	const char *argv[64];
	int n = 0, fds[2];
	posix_spawn_file_actions_t fa;
	char line[256];
	FILE *f;

	argv[n++] = sim_bin;
	argv[n++] = "--port";
	argv[n++] = "0";
	argv[n++] = "--max-runtime";
	argv[n++] = "120";
	for (; extra && *extra && n < 62; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	assert_int_equal(pipe(fds), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	assert_int_equal(posix_spawn(&s->pid, sim_bin, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	f = fdopen(fds[0], "r");
	assert_non_null(f);
	s->port = 0;
	while (fgets(line, sizeof line, f)) {
		char *p = strstr(line, "listening on http://127.0.0.1:");
		if (p) {
			s->port = atoi(p + strlen("listening on http://127.0.0.1:"));
			break;
		}
	}
	fclose(f); /* the simulator prints nothing more to stdout that we need */
	assert_true(s->port > 0);
	snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d", s->port);
}

static void sim_stop(struct sim *s)
{
	int st;
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGTERM);
	waitpid(s->pid, &st, 0);
	s->pid = 0;
}

/* Start the capture; argv after the program name.  Output goes to files
 * named after `tag`. */
static pid_t spawn_capture(const char *tag, const char *const *args)
{
	const char *argv[80];
	int n = 0;
	pid_t pid;
	char out[512], err[512];
	posix_spawn_file_actions_t fa;

	argv[n++] = cap_bin;
	for (; *args && n < 78; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	snprintf(out, sizeof out, "%s/%s.stdout", workdir, tag);
	snprintf(err, sizeof err, "%s/%s.stderr", workdir, tag);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawn(&pid, cap_bin, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	return pid;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for a capture; returns its exit status (or 128 + signal).  One that
 * runs past `limit_s` is killed (the test then fails on its status). */
static int wait_capture(pid_t pid, double limit_s)
{
	double t0 = mono_s();
	int st = 0;

	while (waitpid(pid, &st, WNOHANG) != pid) {
		if (mono_s() - t0 > limit_s)
			kill(pid, SIGKILL);
		usleep(10000);
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static int run_capture(const char *tag, const char *const *args, double limit_s)
{
	return wait_capture(spawn_capture(tag, args), limit_s);
}

static int file_contains(const char *path, const char *needle)
{
	size_t len = 0, k = strlen(needle);
	char *buf = tu_read(path, &len);
	int hit = 0;

	if (!buf)
		return 0;
	for (size_t i = 0; i + k <= len && !hit; i++)
		hit = memcmp(buf + i, needle, k) == 0;
	free(buf);
	return hit;
}

/* The number after "name": in a flat JSON object (/sim/stats); NAN when
 * absent. */
static double json_number(const char *text, const char *name)
{
	char key[128];
	const char *p;
	snprintf(key, sizeof key, "\"%s\":", name);
	p = text ? strstr(text, key) : NULL;
	return p ? strtod(p + strlen(key), NULL) : NAN;
}

static void run_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", workdir, name);
	tu_rmrf(buf);
}

/* ---- reading runs back ------------------------------------------------- */

struct tally {
	long requests, measured, scouts, warmups, errors, cut;
	long fails[16];
	long chunks, multi, tokens_in_multi, chunks4, tokens;
	long tokens_by4; /* tokens in chunks of a multiple of 4 */
	long prompt_exact, prompt_seen, prompt_within1;
	int64_t want_prompt;
	long finished_len; /* measured requests that ended with finish length */
	long finished_len_tokens_ok;
	int64_t max_tokens;
	int saw_key;
};

static int tally_request(void *ctx, const struct tt_request *r)
{
	struct tally *t = ctx;
	uint64_t toks = 0;

	t->requests++;
	if (r->role == TT_ROLE_MEASURED)
		t->measured++;
	else if (r->role == TT_ROLE_SCOUT)
		t->scouts++;
	else
		t->warmups++;
	if (r->finish == TT_FINISH_ERROR) {
		t->errors++;
		if ((unsigned)r->fail < 16)
			t->fails[r->fail]++;
	}
	if (r->finish == TT_FINISH_CUT)
		t->cut++;
	if (r->error && strstr(r->error, API_KEY))
		t->saw_key = 1;
	for (size_t i = 0; i < r->n_chunks; i++) {
		t->chunks++;
		toks += r->chunks[i].tokens;
		t->tokens += r->chunks[i].tokens;
		if (r->chunks[i].tokens == 4)
			t->chunks4++;
		if (r->chunks[i].tokens > 0 && r->chunks[i].tokens % 4 == 0)
			t->tokens_by4 += r->chunks[i].tokens;
		if (r->chunks[i].tokens > 1) {
			t->multi++;
			t->tokens_in_multi += r->chunks[i].tokens;
		}
	}
	if (r->prompt_tokens >= 0) {
		t->prompt_seen++;
		if (r->prompt_tokens == t->want_prompt)
			t->prompt_exact++;
		if (llabs(r->prompt_tokens - t->want_prompt) * 100 <= t->want_prompt)
			t->prompt_within1++;
	}
	if (r->role == TT_ROLE_MEASURED && r->finish == TT_FINISH_LENGTH) {
		t->finished_len++;
		if ((int64_t)toks == t->max_tokens)
			t->finished_len_tokens_ok++;
	}
	return 0;
}

static void tally_cell(struct tt_run *run, const char *id, int64_t want_prompt, int64_t max_tokens,
		       struct tally *t)
{
	const struct tt_manifest *m = tt_run_manifest(run);
	long i = tt_manifest_find_cell(m, id);
	struct tt_trace_visitor v = {t, tally_request, NULL};
	struct tt_error err;

	memset(t, 0, sizeof *t);
	t->want_prompt = want_prompt;
	t->max_tokens = max_tokens;
	assert_true(i >= 0);
	if (tt_run_read_cell(run, (size_t)i, &v, &err) != TT_OK)
		fail_msg("cell %s: %s", id, err.msg);
}

static const struct tt_cell_info *cell(struct tt_run *run, const char *id)
{
	const struct tt_manifest *m = tt_run_manifest(run);
	long i = tt_manifest_find_cell(m, id);
	if (i < 0)
		fail_msg("no cell '%s' in the run", id);
	return &m->cells[i];
}

static struct tt_run *open_run(const char *path)
{
	struct tt_run *run = NULL;
	struct tt_error err;
	if (tt_run_open(path, &run, &err) != TT_OK)
		fail_msg("cannot open run: %s", err.msg);
	return run;
}

/* ---- waiting for a capture state --------------------------------------- */

/* Measured requests of cell `id` that ended with their full length, as far
 * as the trace of a run still being written holds them (the reader skips
 * the frame being written; a trace is flushed at least every second). */
static long finished_so_far(const char *run_dir, const char *id)
{
	struct tt_run *run = NULL;
	struct tt_error err;
	struct tally t;
	struct tt_trace_visitor v = {&t, tally_request, NULL};
	long i, n = 0;

	if (tt_run_open(run_dir, &run, &err) != TT_OK)
		return 0;
	i = tt_manifest_find_cell(tt_run_manifest(run), id);
	memset(&t, 0, sizeof t);
	if (i >= 0 && tt_run_manifest(run)->cells[i].trace &&
	    tt_run_read_cell(run, (size_t)i, &v, &err) <= TT_WARN)
		n = t.finished_len;
	tt_run_free(run);
	return n;
}

/* Poll the run's manifest (formats/run-v1.md: replaced atomically whenever
 * a cell changes state) until cell `id` is in `state` and its trace holds
 * at least `min_finished` measured requests that ended with their length.
 * Instead of sleeping a fixed time: the test acts on the state it needs,
 * however fast or slow the machine.  Fails, the capture `pid` killed, when
 * it exits first or the state is not reached within deadline_s. */
static void wait_for_cell(pid_t pid, const char *run_dir, const char *id,
			  enum tt_cell_state state, long min_finished, double deadline_s)
{
	double t0 = mono_s();
	char path[700], seen[64] = "no manifest";
	int st;

	snprintf(path, sizeof path, "%s/manifest.json", run_dir);
	for (;;) {
		struct tt_manifest m;
		struct tt_error err;
		size_t len = 0;
		char *text = tu_read(path, &len);
		int here = 0;

		tt_manifest_init(&m);
		if (text && tt_manifest_from_json(text, len, path, &m, &err) == TT_OK) {
			long i = tt_manifest_find_cell(&m, id);
			snprintf(seen, sizeof seen, "%s", i < 0 ? "no such cell" :
				 tt_cell_state_name(m.cells[i].state));
			here = i >= 0 && m.cells[i].state == state;
		}
		tt_manifest_release(&m);
		free(text);
		if (here && (min_finished <= 0 || finished_so_far(run_dir, id) >= min_finished))
			return;
		if (waitpid(pid, &st, WNOHANG) == pid)
			fail_msg("the capture ended (status %d) before cell %s was %s with %ld "
				 "finished requests (last seen: %s)",
				 st, id, tt_cell_state_name(state), min_finished, seen);
		if (mono_s() - t0 > deadline_s) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("cell %s not %s with %ld finished requests within %.0f s "
				 "(last seen: %s)",
				 id, tt_cell_state_name(state), min_finished, deadline_s, seen);
		}
		usleep(20000);
	}
}

static void assert_near(double got, double want, double rel, const char *what)
{
	if (!(fabs(got - want) <= rel * fabs(want)))
		fail_msg("%s: got %.4g, want %.4g within %.0f%%", what, got, want, rel * 100);
}

/* The common shape of a test: a simulator started with sim_args, one
 * capture into RUN named `tag` with `args` (after URL -o RUN; NULL-ended)
 * and then "--readiness-timeout 5s -q", the simulator stopped, the capture's
 * exit asserted 0, and the run opened. */
static struct tt_run *capture_run_rc(const char *tag, const char *const *sim_args,
				     const char *const *args, char *run_dir, size_t len, int want);

static struct tt_run *capture_run(const char *tag, const char *const *sim_args,
				  const char *const *args, char *run_dir, size_t len)
{
	return capture_run_rc(tag, sim_args, args, run_dir, len, 0);
}

/* The same, expecting exit status want (docs/capture.md "Exit status"). */
static struct tt_run *capture_run_rc(const char *tag, const char *const *sim_args,
				     const char *const *args, char *run_dir, size_t len, int want)
{
	const char *argv[64];
	struct sim s;
	int n = 0, rc;

	sim_start(&s, sim_args);
	run_path(run_dir, len, tag);
	argv[n++] = s.url;
	argv[n++] = "-o";
	argv[n++] = run_dir;
	for (; *args && n < 60; args++)
		argv[n++] = *args;
	argv[n++] = "--readiness-timeout";
	argv[n++] = "5s";
	argv[n++] = "-q";
	argv[n] = NULL;
	rc = run_capture(tag, argv, 60);
	sim_stop(&s);
	assert_int_equal(rc, want);
	return open_run(run_dir);
}

/* No file of the run, and no output, holds the key. */
static void assert_no_key(const char *run_dir, const char *tag)
{
	char p[1024];
	DIR *d;
	struct dirent *e;

	snprintf(p, sizeof p, "%s/manifest.json", run_dir);
	assert_false(file_contains(p, API_KEY));
	snprintf(p, sizeof p, "%s/cells", run_dir);
	d = opendir(p);
	assert_non_null(d);
	while ((e = readdir(d))) {
		char f[1400];
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof f, "%s/cells/%s", run_dir, e->d_name);
		assert_false(file_contains(f, API_KEY));
	}
	closedir(d);
	snprintf(p, sizeof p, "%s/%s.stdout", workdir, tag);
	assert_false(file_contains(p, API_KEY));
	snprintf(p, sizeof p, "%s/%s.stderr", workdir, tag);
	assert_false(file_contains(p, API_KEY));
}

/* ---- tests ------------------------------------------------------------- */

/* A small matrix against a simulator calibrated from the seed profile:
 * figures within 5 % of the profile, exact context lengths, the key
 * nowhere.  Also: --note redaction, over capacity from the server's KV.
 *
 * Needs a server that sets TCP_NODELAY (as uvicorn, llama-server and TGI
 * do): with Nagle on, a keep-alive stream's chunks wait for our delayed ACK
 * and arrive in 40 ms bursts, which any client then records faithfully. */
static void test_matrix(void **state)
{
	const char *sim_args[] = {"--profile", profile_path, "--api-key", API_KEY,
				  "--kv-capacity", "200000", "--max-model-len", "64K", NULL};
	struct sim s;
	char run_dir[600];
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	struct tt_profile *prof = NULL;
	struct tally t;
	int rc;
	(void)state;

	sim_start(&s, sim_args);
	run_path(run_dir, sizeof run_dir, "matrix");
	setenv("TOKENTRACE_API_KEY", API_KEY, 1);
	{
		const char *args[] = {s.url, "-o", run_dir, "--contexts", "32K", "--concurrency", "1,4,8",
				      "--duration", "2s", "--max-tokens", "512", "--readiness", "0.5s",
				      "--readiness-timeout", "10s", "--seed", "42",
				      "--note", "gpu=H200 NVL",
				      "--note", "launch_command=vllm serve m --api-key " API_KEY " --port 8000",
				      NULL};
		rc = run_capture("matrix", args, 60);
	}
	unsetenv("TOKENTRACE_API_KEY");
	sim_stop(&s);
	assert_int_equal(rc, 0);
	assert_no_key(run_dir, "matrix");

	run = open_run(run_dir);
	{
		const struct tt_manifest *m = tt_run_manifest(run);
		assert_string_equal(m->engine, "vllm");
		assert_int_equal(m->kv_capacity_tokens, 200000);
		assert_string_equal(m->kv_capacity_source, "vllm:cache_config_info");
		assert_int_equal(m->seed, 42);
		assert_string_equal(tt_manifest_note(m, "gpu"), "H200 NVL");
		assert_null(strstr(tt_manifest_note(m, "launch_command"), API_KEY));
		assert_non_null(strstr(tt_manifest_note(m, "launch_command"), "<redacted>"));
		assert_int_equal(m->n_cells, 4);
	}
	assert_int_equal(cell(run, "prefill-32768")->state, TT_CELL_DONE);
	assert_int_equal(cell(run, "decode-32768x1")->state, TT_CELL_DONE);
	assert_int_equal(cell(run, "decode-32768x4")->state, TT_CELL_DONE);
	/* 8 x (32768 + 512) = 266240 > 200000 */
	assert_int_equal(cell(run, "decode-32768x8")->state, TT_CELL_OVER_CAPACITY);
	assert_int_equal(cell(run, "decode-32768x8")->kv_need_tokens, 266240);
	assert_non_null(strstr(cell(run, "decode-32768x8")->reason, "8 x (32768 + 512) = 266240 > 200000"));
	assert_true(cell(run, "decode-32768x4")->window_end_ns - cell(run, "decode-32768x4")->window_start_ns ==
		    2000000000);

	/* exact context: every request's prompt is 32768 tokens as the server counted */
	tally_cell(run, "decode-32768x4", 32768, 512, &t);
	assert_true(t.measured > 8);
	assert_int_equal(t.warmups, 4);
	assert_int_equal(t.errors, 0);
	assert_int_equal(t.cut, 4);
	assert_int_equal(t.prompt_exact, t.requests);
	assert_true(t.finished_len > 0);
	assert_int_equal(t.finished_len_tokens_ok, t.finished_len);
	tally_cell(run, "prefill-32768", 32768, 1, &t);
	assert_int_equal(t.scouts, 1);
	assert_int_equal(t.prompt_exact, 1);

	/* figures against the profile the simulator runs */
	assert_int_equal(tt_profile_load(profile_path, &prof, &err), TT_OK);
	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	for (size_t i = 0; i < rep->n_cells; i++) {
		const struct tt_cell_figures *f = &rep->cells[i];
		const struct tt_cell_info *ci = &rep->manifest.cells[i];
		if (ci->state != TT_CELL_DONE)
			continue;
		if (f->phase == TT_PHASE_PREFILL) {
			assert_near(f->total_tok_s, tt_profile_prefill_tok_s(prof, f->context), 0.05,
				    "prefill tok/s");
		} else {
			double tbt = tt_profile_tbt_ms(prof, f->context, f->concurrency);
			/* each 512-token request also costs its stream the profile's
			 * decode TTFT (the simulator's turnover, docs/sim.md) */
			double ttft = tt_profile_ttft_ms(prof, f->context, f->concurrency);
			double cycle_ms = ttft + 511 * tbt;
			assert_near(f->tbt_ms.p50, tbt, 0.05, "time between tokens");
			assert_near(f->total_tok_s, f->concurrency * 512 * 1000.0 / cycle_ms, 0.05,
				    "total tok/s");
			assert_int_equal(f->errors, 0);
		}
	}
	tt_report_free(rep);
	tt_profile_free(prof);
	tt_run_free(run);
}

/* A server that sends several tokens per chunk: chunks recorded as such. */
static void test_multi_token_chunks(void **state)
{
	const char *sim_args[] = {"--stream-interval", "4", NULL};
	const char *args[] = {"--contexts", "1K", "--concurrency", "2", "--cells", "decode-1Kx2",
			      "--duration", "1s", "--max-tokens", "64", "--readiness", "0.2s", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tally t;
	(void)state;

	run = capture_run("multi", sim_args, args, run_dir, sizeof run_dir);
	assert_int_equal(tt_run_manifest(run)->n_cells, 1);
	tally_cell(run, "decode-1024x2", 1024, 64, &t);
	assert_true(t.finished_len > 2);
	/* every finished request: 64 tokens in 16 chunks of 4 */
	assert_int_equal(t.finished_len_tokens_ok, t.finished_len);
	assert_true(t.multi > 0);
	/* most tokens came four to a chunk (the first and last may be fewer).
	 * Events that reach one read together (a capture delayed on a busy
	 * machine) are one chunk of 8 or 12 at that time: still whole events. */
	assert_true((double)t.tokens_by4 >= 0.8 * (double)t.tokens);
	assert_true(t.tokens_in_multi <= t.tokens);
	/* the report's tokens per chunk (M-chunks) sees the same: a simulator
	 * that sends four tokens a chunk gives nearly 4 per chunk, most chunks
	 * in the 4-token bin */
	{
		struct tt_report *rep = NULL;
		struct tt_error err;
		assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
		for (size_t i = 0; i < rep->n_cells; i++) {
			const struct tt_cell_figures *f = &rep->cells[i];
			if (f->phase != TT_PHASE_DECODE)
				continue;
			/* at least 4 per chunk on average; more only where events
			 * were read together (then never 5-7 tokens: whole events) */
			assert_true(f->tokens_per_chunk > 3.5);
			assert_true((double)(f->chunks_by_tokens[3] + f->chunks_by_tokens[4]) >=
				    0.8 * (double)f->chunks);
			assert_true(f->chunks_by_tokens[0] + f->chunks_by_tokens[1] +
					    f->chunks_by_tokens[2] <= f->chunks / 5 + 2);
		}
		tt_report_free(rep);
	}
	tt_run_free(run);
}

/* Every injected fault is recorded with its cause, and the run completes. */
static void test_faults(void **state)
{
	/* requests 1-2 are the warm-ups; measured requests start at 3 */
	const char *sim_args[] = {"--fault", "500@req=3", "--fault", "429@req=4",
				  "--fault", "reset@req=5", "--fault", "stall:4@req=6",
				  "--fault", "malformed@req=7", "--fault", "error@req=8",
				  "--fault", "nodone@req=9", "--fault", "503@req=10", NULL};
	struct sim s;
	char run_dir[600];
	struct tt_run *run;
	struct tally t;
	int rc;
	(void)state;

	sim_start(&s, sim_args);
	run_path(run_dir, sizeof run_dir, "faults");
	{
		const char *args[] = {s.url, "-o", run_dir, "--contexts", "512", "--concurrency", "2",
				      "--cells", "decode-512x2", "--duration", "2s", "--max-tokens", "32",
				      "--readiness", "0.2s", "--readiness-timeout", "5s",
				      "--request-timeout", "1s", "-q", NULL};
		rc = run_capture("faults", args, 40);
	}
	sim_stop(&s);
	assert_int_equal(rc, 0);
	run = open_run(run_dir);
	assert_int_equal(cell(run, "decode-512x2")->state, TT_CELL_DONE);
	tally_cell(run, "decode-512x2", 512, 32, &t);
	assert_int_equal(t.fails[TT_FAIL_HTTP], 3);
	assert_int_equal(t.fails[TT_FAIL_RESET], 1);
	assert_int_equal(t.fails[TT_FAIL_TIMEOUT], 1);
	assert_int_equal(t.fails[TT_FAIL_MALFORMED], 1);
	assert_int_equal(t.fails[TT_FAIL_ERROR_EVENT], 1);
	assert_int_equal(t.fails[TT_FAIL_NO_DONE], 1);
	assert_int_equal(t.errors, 8);
	/* and the workers went on */
	assert_true(t.finished_len > 10);
	tt_run_free(run);
}

/* kill -9 in the middle, then --resume: finished cells read back, the rest
 * run with the run's own settings. */
static void test_kill_and_resume(void **state)
{
	struct sim s;
	char run_dir[600];
	struct tt_run *run;
	int rc;
	(void)state;

	sim_start(&s, NULL);
	run_path(run_dir, sizeof run_dir, "resume");
	{
		/* prefill, decode x1, decode x2: killed as soon as x2 has started */
		const char *args[] = {s.url, "-o", run_dir, "--contexts", "1K", "--concurrency", "1,2",
				      "--duration", "1.5s", "--max-tokens", "64", "--readiness", "0.2s",
				      "--readiness-timeout", "5s", "--seed", "7", "-q", NULL};
		pid_t pid = spawn_capture("resume1", args);
		wait_for_cell(pid, run_dir, "decode-1024x2", TT_CELL_RUNNING, 0, 30);
		kill(pid, SIGKILL);
		rc = wait_capture(pid, 30);
	}
	assert_int_equal(rc, 128 + SIGKILL);
	run = open_run(run_dir);
	assert_int_equal(cell(run, "prefill-1024")->state, TT_CELL_DONE);
	assert_int_equal(cell(run, "decode-1024x1")->state, TT_CELL_DONE);
	assert_int_not_equal(cell(run, "decode-1024x2")->state, TT_CELL_DONE);
	{
		struct tally t;
		tally_cell(run, "decode-1024x1", 1024, 64, &t);
		assert_true(t.finished_len > 5);
	}
	tt_run_free(run);
	{
		const char *args[] = {"--resume", run_dir, "-q", NULL};
		rc = run_capture("resume2", args, 30);
	}
	sim_stop(&s);
	assert_int_equal(rc, 0);
	run = open_run(run_dir);
	assert_int_equal(tt_run_manifest(run)->seed, 7);
	assert_int_equal(cell(run, "decode-1024x2")->state, TT_CELL_DONE);
	{
		struct tally t;
		tally_cell(run, "decode-1024x2", 1024, 64, &t);
		assert_true(t.finished_len > 5);
		assert_int_equal(t.errors, 0);
	}
	tt_run_free(run);
}

/* Ctrl-C: exit 130, the cell interrupted, everything readable. */
static void test_interrupt(void **state)
{
	struct sim s;
	char run_dir[600];
	struct tt_run *run;
	const char *argv[32];
	pid_t pid;
	int st, n = 0;
	posix_spawn_file_actions_t fa;
	char err_path[600];
	(void)state;

	sim_start(&s, NULL);
	run_path(run_dir, sizeof run_dir, "interrupt");
	snprintf(err_path, sizeof err_path, "%s/interrupt.stderr", workdir);
	argv[n++] = cap_bin;
	argv[n++] = s.url;
	argv[n++] = "-o";
	argv[n++] = run_dir;
	argv[n++] = "--contexts";
	argv[n++] = "1K";
	argv[n++] = "--concurrency";
	argv[n++] = "2";
	argv[n++] = "--duration";
	argv[n++] = "20s";
	argv[n++] = "--max-tokens";
	argv[n++] = "64";
	argv[n++] = "--readiness";
	argv[n++] = "0.2s";
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(posix_spawn(&pid, cap_bin, &fa, NULL, (char *const *)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	/* Ctrl-C once the decode cell has finished requests on record */
	wait_for_cell(pid, run_dir, "decode-1024x2", TT_CELL_RUNNING, 3, 30);
	kill(pid, SIGINT);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	sim_stop(&s);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
	assert_true(file_contains(err_path, "--resume"));
	run = open_run(run_dir);
	assert_int_equal(cell(run, "prefill-1024")->state, TT_CELL_DONE);
	assert_int_equal(cell(run, "decode-1024x2")->state, TT_CELL_INTERRUPTED);
	{
		struct tally t;
		tally_cell(run, "decode-1024x2", 1024, 64, &t);
		assert_true(t.finished_len > 2);
	}
	tt_run_free(run);
}

/* Bad input: a clear message naming what and where, non-zero exit. */
static void test_bad_input(void **state)
{
	char run_dir[600], p[700];
	struct sim s;
	int rc;
	(void)state;

	run_path(run_dir, sizeof run_dir, "bad");
	{
		const char *args[] = {"http://127.0.0.1:9", "-o", run_dir, NULL};
		rc = run_capture("bad1", args, 30);
	}
	assert_int_equal(rc, 1);
	snprintf(p, sizeof p, "%s/bad1.stderr", workdir);
	assert_true(file_contains(p, "error: cannot connect to 'http://127.0.0.1:9"));
	{
		const char *args[] = {"ftp://x", "-o", run_dir, NULL};
		rc = run_capture("bad2", args, 30);
	}
	assert_int_equal(rc, 2);
	snprintf(p, sizeof p, "%s/bad2.stderr", workdir);
	assert_true(file_contains(p, "tokentrace-capture: error: bad URL 'ftp://x'"));
	/* issue 14: a password in the URL is never echoed; a key in a query
	 * string is refused, not glued to the routes and printed */
	{
		const char *args[] = {"http://user:pw-" API_KEY "@127.0.0.1:9", "-o", run_dir, NULL};
		rc = run_capture("bad8", args, 30);
	}
	assert_int_equal(rc, 2);
	snprintf(p, sizeof p, "%s/bad8.stderr", workdir);
	assert_true(file_contains(p, "bad URL 'http://<redacted>@127.0.0.1:9'"));
	assert_false(file_contains(p, API_KEY));
	{
		const char *args[] = {"http://127.0.0.1:9/?api_key=" API_KEY, "-o", run_dir, NULL};
		rc = run_capture("bad9", args, 30);
	}
	assert_int_equal(rc, 2);
	snprintf(p, sizeof p, "%s/bad9.stderr", workdir);
	assert_true(file_contains(p, "no ?query"));
	assert_false(file_contains(p, API_KEY));
	{
		const char *args[] = {"http://127.0.0.1:9", "-o", run_dir, "--contexts", "8Q", NULL};
		rc = run_capture("bad3", args, 30);
	}
	assert_int_equal(rc, 2);
	snprintf(p, sizeof p, "%s/bad3.stderr", workdir);
	assert_true(file_contains(p, "bad --contexts '8Q'"));
	{
		const char *args[] = {"http://127.0.0.1:9", "-o", run_dir, "--frobnicate", NULL};
		rc = run_capture("bad4", args, 30);
	}
	assert_int_equal(rc, 2);
	{
		const char *args[] = {"http://127.0.0.1:9", "-o", run_dir, "--contexts", "8K",
				      "--cells", "decode-8Kx3", NULL};
		rc = run_capture("bad7", args, 30);
	}
	assert_int_equal(rc, 2);
	snprintf(p, sizeof p, "%s/bad7.stderr", workdir);
	assert_true(file_contains(p, "'decode-8Kx3' is not a cell"));
	/* a server that wants a key we did not give */
	{
		const char *sim_args[] = {"--api-key", API_KEY, NULL};
		sim_start(&s, sim_args);
	}
	{
		const char *args[] = {s.url, "-o", run_dir, NULL};
		unsetenv("TOKENTRACE_API_KEY");
		rc = run_capture("bad5", args, 30);
	}
	assert_int_equal(rc, 1);
	snprintf(p, sizeof p, "%s/bad5.stderr", workdir);
	assert_true(file_contains(p, "API key"));
	/* the run directory already holds a run */
	mkdir(run_dir, 0755);
	snprintf(p, sizeof p, "%s/x", run_dir);
	fclose(fopen(p, "w"));
	{
		const char *args[] = {s.url, "-o", run_dir, "--api-key", API_KEY, NULL};
		rc = run_capture("bad6", args, 30);
	}
	sim_stop(&s);
	assert_int_equal(rc, 1);
	snprintf(p, sizeof p, "%s/bad6.stderr", workdir);
	assert_true(file_contains(p, run_dir));
	assert_false(file_contains(p, API_KEY));
}

/* The server goes away in the middle: finished cells stay, the cell that
 * got no answer at all is failed, the capture stops with a clear message. */
static void test_server_dies(void **state)
{
	struct sim s;
	char run_dir[600], p[700];
	struct tt_run *run;
	int rc;
	(void)state;

	sim_start(&s, NULL);
	run_path(run_dir, sizeof run_dir, "dies");
	{
		const char *args[] = {s.url, "-o", run_dir, "--contexts", "1K", "--concurrency",
				      "1,2,4", "--duration", "1.5s", "--max-tokens", "64",
				      "--readiness", "0.2s", "--readiness-timeout", "2s", NULL};
		pid_t pid = spawn_capture("dies", args);
		/* the simulator stops (as --max-runtime stops it: SIGTERM) in the
		 * middle of decode x2, once that cell has finished requests */
		wait_for_cell(pid, run_dir, "decode-1024x2", TT_CELL_RUNNING, 1, 30);
		sim_stop(&s);
		rc = wait_capture(pid, 40);
	}
	assert_int_equal(rc, 1);
	snprintf(p, sizeof p, "%s/dies.stderr", workdir);
	/* issue 24.3: the connections refused after its death stop the run
	 * in the cell it died in (docs/capture.md "Failures", fail fast) */
	assert_true(file_contains(p, "connections in a row") ||
		    file_contains(p, "no request got an answer from"));
	assert_true(file_contains(p, "--resume"));
	run = open_run(run_dir);
	assert_int_equal(cell(run, "prefill-1024")->state, TT_CELL_DONE);
	assert_int_equal(cell(run, "decode-1024x1")->state, TT_CELL_DONE);
	/* x2 was cut by the server's death: failed, so a resume measures it
	 * again; the run stopped there (before: x2 finished its window as
	 * done, and x4 waited out its readiness timeout) */
	assert_int_equal(cell(run, "decode-1024x2")->state, TT_CELL_FAILED);
	assert_true(strstr(cell(run, "decode-1024x2")->reason, "refused") ||
		    strstr(cell(run, "decode-1024x2")->reason, "no request got an answer"));
	assert_int_equal(cell(run, "decode-1024x4")->state, TT_CELL_PENDING);
	{
		struct tally t;
		tally_cell(run, "decode-1024x2", 1024, 64, &t);
		assert_true(t.finished_len > 0);
	}
	tt_run_free(run);
}

/* Issue 14: a server that answers nothing useful (every request 500) never
 * makes a good cell: readiness fails (no live streams), the window gets no
 * answer, so the cell is failed and the capture stops; --resume against a
 * healthy server retries the failed cell, says so, and completes it. */
static void test_dead_window_fails_resume_retries(void **state)
{
	struct sim s;
	char run_dir[600], p[700];
	struct tt_run *run;
	int rc;
	(void)state;

	{
		const char *sim_args[] = {"--fault", "500@rate=1", NULL};
		sim_start(&s, sim_args);
	}
	run_path(run_dir, sizeof run_dir, "deadwin");
	{
		/* the decode cell alone: a prefill scout answered 500 fails its
		 * own cell first (issue 20.8, e2e_openloop.test_failed_scout_resumed) */
		const char *args[] = {s.url, "-o", run_dir, "--contexts", "1K", "--concurrency", "1",
				      "--duration", "1s", "--max-tokens", "32", "--readiness", "0.2s",
				      "--readiness-timeout", "1s", "--cells", "decode-1Kx1", NULL};
		rc = run_capture("deadwin1", args, 40);
	}
	sim_stop(&s);
	assert_int_equal(rc, 1);
	snprintf(p, sizeof p, "%s/deadwin1.stderr", workdir);
	assert_true(file_contains(p, "tokentrace-capture: "));
	run = open_run(run_dir);
	assert_int_equal(cell(run, "decode-1024x1")->state, TT_CELL_FAILED);
	assert_non_null(strstr(cell(run, "decode-1024x1")->reason, "no request got an answer"));
	tt_run_free(run);
	sim_start(&s, NULL);
	{
		const char *args[] = {"--resume", run_dir, s.url, NULL};
		rc = run_capture("deadwin2", args, 40);
	}
	sim_stop(&s);
	assert_int_equal(rc, 0);
	snprintf(p, sizeof p, "%s/deadwin2.stderr", workdir);
	assert_true(file_contains(p, "retrying cell 'decode-1024x1'"));
	run = open_run(run_dir);
	assert_int_equal(cell(run, "decode-1024x1")->state, TT_CELL_DONE);
	{
		struct tally t;
		tally_cell(run, "decode-1024x1", 1024, 32, &t);
		assert_true(t.finished_len > 3);
	}
	tt_run_free(run);
}

/* Issue 22.6: a server that wants a key on generation but not on
 * /v1/models stops the capture before anything is written, naming the key
 * (it used to wait out the readiness check and say no request got an
 * answer); with the key it runs. */
static void test_key_on_generation_only(void **state)
{
	const char *sim_args[] = {"--api-key", "sesame", "--api-key-generation-only", NULL};
	struct sim s;
	char run_dir[600], p[700];
	struct stat st;
	int rc;
	(void)state;

	sim_start(&s, sim_args);
	run_path(run_dir, sizeof run_dir, "genkey");
	{
		const char *args[] = {s.url, "-o", run_dir, "--contexts", "1K", "--concurrency", "1",
				      "--duration", "1s", "--max-tokens", "16", "--readiness", "0.2s",
				      "--readiness-timeout", "2s", "-q", NULL};
		rc = run_capture("genkey1", args, 30);
	}
	assert_int_equal(rc, 1);
	snprintf(p, sizeof p, "%s/genkey1.stderr", workdir);
	assert_true(file_contains(p, "/v1/completions' answered HTTP 401: the server wants an API "
				     "key for generation (--api-key or TOKENTRACE_API_KEY)"));
	assert_true(stat(run_dir, &st) != 0); /* nothing written */
	{
		const char *args[] = {s.url, "-o", run_dir, "--contexts", "1K", "--concurrency", "1",
				      "--duration", "1s", "--max-tokens", "16", "--readiness", "0.2s",
				      "--readiness-timeout", "2s", "-q", "--api-key", "sesame", NULL};
		rc = run_capture("genkey2", args, 30);
	}
	sim_stop(&s);
	assert_int_equal(rc, 0);
	{
		struct tt_run *run = open_run(run_dir);
		assert_int_equal(cell(run, "decode-1024x1")->state, TT_CELL_DONE);
		tt_run_free(run);
	}
}

/* Cells that cannot fit the model's length are failed up front. */
static void test_model_len(void **state)
{
	const char *sim_args[] = {"--max-model-len", "2K", NULL};
	const char *args[] = {"--contexts", "1K,2K", "--concurrency", "1", "--duration", "0.5s",
			      "--max-tokens", "512", "--readiness", "0.1s", NULL};
	char run_dir[600];
	struct tt_run *run;
	(void)state;

	/* exit 3: the run is complete, two cells could not run */
	run = capture_run_rc("modellen", sim_args, args, run_dir, sizeof run_dir, 3);
	assert_int_equal(tt_run_manifest(run)->max_model_len, 2048);
	assert_int_equal(cell(run, "decode-1024x1")->state, TT_CELL_DONE);
	assert_int_equal(cell(run, "prefill-2048")->state, TT_CELL_FAILED);
	assert_int_equal(cell(run, "decode-2048x1")->state, TT_CELL_FAILED);
	assert_non_null(strstr(cell(run, "decode-2048x1")->reason, "2560 > max_model_len 2048"));
	tt_run_free(run);
	{
		char p[700];
		snprintf(p, sizeof p, "%s/modellen.stderr", workdir);
		assert_true(file_contains(p, "2 cells could not run: prefill-2048 (2048 prompt + 1 output "
						     "tokens = 2049 > max_model_len 2048); decode-2048x1"));
	}
}

/* --prefill-repeats: N cold scouts in the prefill cell, each with a prompt
 * of its own (no prefix-cache hit), and the report's prefill row is their
 * median (M-prefill). */
static void test_prefill_repeats(void **state)
{
	const char *args[] = {"--contexts", "1K", "--concurrency", "1", "--duration", "0.3s",
			      "--max-tokens", "16", "--readiness", "0.1s", "--prefill-repeats", "3",
			      "--cells", "prefill-1K", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	struct tally t;
	(void)state;

	run = capture_run("prefillrep", NULL, args, run_dir, sizeof run_dir);
	assert_int_equal(cell(run, "prefill-1024")->state, TT_CELL_DONE);
	tally_cell(run, "prefill-1024", 1024, 1, &t);
	assert_int_equal(t.errors, 0);
	assert_int_equal(t.scouts, 3);
	assert_int_equal(tt_analyze(run, NULL, &rep, &err), TT_OK);
	for (size_t i = 0; i < rep->n_cells; i++)
		if (rep->cells[i].phase == TT_PHASE_PREFILL) {
			assert_int_equal(rep->cells[i].ttft_ms.n, 3);
			assert_int_equal(rep->cells[i].status, TT_STATUS_VALID);
		}
	tt_report_free(rep);
	tt_run_free(run);
}

/* llama.cpp flavour: usage only at the end, no min_tokens; counted right. */
static void test_llamacpp_flavor(void **state)
{
	const char *sim_args[] = {"--flavor", "llamacpp", NULL};
	const char *args[] = {"--contexts", "512", "--concurrency", "2", "--duration", "1s",
			      "--max-tokens", "32", "--readiness", "0.2s", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tally t;
	(void)state;

	run = capture_run("llamacpp", sim_args, args, run_dir, sizeof run_dir);
	assert_string_equal(tt_run_manifest(run)->engine, "llamacpp");
	tally_cell(run, "decode-512x2", 512, 32, &t);
	assert_int_equal(t.errors, 0);
	assert_true(t.finished_len > 2);
	assert_int_equal(t.finished_len_tokens_ok, t.finished_len);
	tt_run_free(run);
}

/* llama-server's silent close: every streamed reply says keep-alive and
 * its connection is then closed, so the worker's next request, sent on it,
 * dies unanswered and libcurl resends it on a new connection.  Without
 * curl_easy_reset on recycled handles (xfer.c), libcurl 7.88 gives up on a
 * handle's sixth resend ever: "Connection died, tried 5 times". */
static void test_silent_close(void **state)
{
	const char *sim_args[] = {"--flavor", "llamacpp", "--silent-close", "1", NULL};
	const char *args[] = {"--contexts", "512", "--concurrency", "2", "--cells", "decode-512x2",
			      "--duration", "1.5s", "--max-tokens", "8", "--readiness", "0.2s",
			      "--readiness-timeout", "5s", "-q", NULL};
	const char *argv[32];
	struct sim s;
	struct sim_proc sp;
	struct http_reply rep;
	char run_dir[600];
	struct tt_run *run;
	struct tally t;
	double closes, dropped;
	int n = 0, rc;
	(void)state;

	sim_start(&s, sim_args);
	run_path(run_dir, sizeof run_dir, "silentclose");
	argv[n++] = s.url;
	argv[n++] = "-o";
	argv[n++] = run_dir;
	for (const char *const *a = args; *a; a++)
		argv[n++] = *a;
	argv[n] = NULL;
	rc = run_capture("silentclose", argv, 60);
	memset(&sp, 0, sizeof sp);
	sp.port = s.port;
	snprintf(sp.url, sizeof sp.url, "%s", s.url);
	assert_int_equal(http_do(&sp, "/sim/stats", NULL, NULL, &rep), 0);
	closes = json_number(rep.body, "silent_closes");
	dropped = json_number(rep.body, "silent_close_dropped");
	http_reply_free(&rep);
	sim_stop(&s);
	assert_int_equal(rc, 0);
	run = open_run(run_dir);
	tally_cell(run, "decode-512x2", 512, 8, &t);
	tt_run_free(run);
	/* the server did close, and requests did die on closed connections,
	 * often enough that a handle without the reset would give up */
	if (!(dropped >= 20 && closes >= dropped))
		fail_msg("the simulator closed %.0f connections, %.0f with a request on them",
			 closes, dropped);
	assert_true(t.measured >= 40);
	if (t.errors)
		fail_msg("%ld of %ld requests failed (reset: %ld)", t.errors, t.requests,
			 t.fails[TT_FAIL_RESET]);
}

/* llama.cpp's slots: 4 slots of 2048 tokens (/props).  A 2K prompt fills
 * a slot, so its cells are failed before anything is sent, with the
 * arithmetic; 1K + 1536 output tokens overflows it, so those requests stop
 * at 1024 tokens with finish "length" (the cell runs; its reason says
 * so).  The engine version is /props' build_info, and requests cut at the
 * window's end record the prompt they asked for. */
static void test_slot_context(void **state)
{
	const char *sim_args[] = {"--flavor", "llamacpp", "--kv-capacity", "8192",
				  "--max-num-seqs", "4", "--max-model-len", "8192", NULL};
	const char *args[] = {"--contexts", "1K,2K", "--concurrency", "2", "--duration", "2.5s",
			      "--max-tokens", "1536", "--readiness", "0.2s", NULL};
	char run_dir[600];
	struct tt_run *run;
	const struct tt_manifest *m;
	struct tally t;
	(void)state;

	run = capture_run("slots", sim_args, args, run_dir, sizeof run_dir);
	m = tt_run_manifest(run);
	assert_string_equal(m->engine, "llamacpp");
	assert_string_equal(m->engine_version, "b6000-sim");
	assert_int_equal(m->slot_context, 2048);
	assert_int_equal(m->slots, 4);
	assert_int_equal(m->max_model_len, -1); /* llama-server lists none */
	/* a prompt that fills the slot: Over capacity, with the arithmetic */
	assert_int_equal(cell(run, "prefill-2048")->state, TT_CELL_OVER_CAPACITY);
	assert_int_equal(cell(run, "decode-2048x2")->state, TT_CELL_OVER_CAPACITY);
	assert_string_equal(cell(run, "decode-2048x2")->reason,
			    "2048 prompt tokens >= slot context 2048: the server refuses every request");
	assert_null(cell(run, "decode-2048x2")->trace);
	assert_int_equal(cell(run, "decode-1024x2")->state, TT_CELL_DONE);
	assert_string_equal(cell(run, "decode-1024x2")->reason,
			    "1024 prompt + 1536 output tokens = 2560 > slot context 2048: "
			    "at most 1024 output tokens per request");
	tally_cell(run, "decode-1024x2", 1024, 1024, &t);
	assert_int_equal(t.errors, 0);
	/* every measured request that ended did so by length, at 1024 */
	assert_true(t.finished_len >= 2);
	assert_int_equal(t.finished_len_tokens_ok, t.finished_len);
	/* cut ones too: the count asked for, not -1 */
	assert_true(t.cut >= 1);
	assert_int_equal(t.prompt_seen, t.requests);
	assert_int_equal(t.prompt_exact, t.requests);
	/* the report says so: Short outputs, with the arithmetic */
	{
		struct tt_report *rep = NULL;
		struct tt_error err;
		const struct tt_cell_figures *f;
		assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
		f = &rep->cells[tt_manifest_find_cell(m, "decode-1024x2")];
		assert_int_equal(f->status, TT_STATUS_SHORT);
		assert_int_equal(f->short_outputs, t.finished_len);
		assert_int_equal(f->short_max_tokens, 1024);
		assert_non_null(strstr(f->reason, "finish length; at most 1024 tokens): 1024 prompt"));
		f = &rep->cells[tt_manifest_find_cell(m, "decode-2048x2")];
		assert_int_equal(f->status, TT_STATUS_OVER_CAPACITY);
		assert_string_equal(f->reason, "not run: 2048 prompt tokens >= slot context 2048: the "
					       "server refuses every request");
		tt_report_free(rep);
	}
	tt_run_free(run);
}

/* TGI flavour, end to end: engine from its tgi_ metrics, version and
 * longest request from /info, text prompts calibrated from the usage of
 * its last event, one token per event counted, the 8K cell failed before
 * sending (8192 + 32 > max_total_tokens 8192), no error. */
static void test_tgi_flavor(void **state)
{
	const char *sim_args[] = {"--flavor", "tgi", "--max-model-len", "8K", NULL};
	const char *args[] = {"--contexts", "1K,8K", "--concurrency", "2", "--duration", "1s",
			      "--max-tokens", "32", "--readiness", "0.2s", NULL};
	char run_dir[600];
	struct tt_run *run;
	const struct tt_manifest *m;
	struct tally t;
	(void)state;

	/* exit 3: decode-8192x2 could not run (docs/capture.md "Exit status") */
	run = capture_run_rc("tgi", sim_args, args, run_dir, sizeof run_dir, 3);
	m = tt_run_manifest(run);
	assert_string_equal(m->engine, "tgi");
	assert_string_equal(m->engine_version, "3.3.0-sim");
	assert_int_equal(m->max_model_len, 8192);
	assert_string_equal(m->prompt_kind, "text");
	assert_int_equal(cell(run, "decode-8192x2")->state, TT_CELL_FAILED);
	assert_string_equal(cell(run, "decode-8192x2")->reason,
			    "8192 prompt + 32 output tokens = 8224 > max_model_len 8192");
	tally_cell(run, "decode-1024x2", 1024, 32, &t);
	assert_int_equal(t.errors, 0);
	assert_true(t.finished_len > 2);
	assert_int_equal(t.finished_len_tokens_ok, t.finished_len);
	assert_int_equal(t.multi, 0); /* TGI: one token per event */
	assert_int_equal(t.prompt_seen, t.requests);
	assert_int_equal(t.prompt_within1, t.requests);
	tt_run_free(run);
}

/* TGI's OpenAI routes ignore ignore_eos: outputs end at the model's end of
 * sequence (40 tokens here) with finish "eos_token", and the report says
 * Short outputs instead of passing shorter requests off as Valid. */
static void test_tgi_eos(void **state)
{
	const char *sim_args[] = {"--flavor", "tgi", "--eos-after", "40", NULL};
	const char *args[] = {"--contexts", "1K", "--concurrency", "2", "--cells", "decode-1Kx2",
			      "--duration", "1s", "--max-tokens", "64", "--readiness", "0.2s", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	const struct tt_cell_figures *f;
	(void)state;

	run = capture_run("tgieos", sim_args, args, run_dir, sizeof run_dir);
	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	f = &rep->cells[tt_manifest_find_cell(tt_run_manifest(run), "decode-1024x2")];
	assert_int_equal(f->errors, 0);
	assert_int_equal(f->status, TT_STATUS_SHORT);
	assert_true(f->ended > 2);
	assert_int_equal(f->short_outputs, f->ended);
	assert_int_equal(f->short_stop, f->ended);
	assert_int_equal(f->short_max_tokens, 40);
	assert_non_null(strstr(f->reason, "ended before the 64 tokens asked (finish stop"));
	tt_report_free(rep);
	tt_run_free(run);
}

/* The simulator calibrated to the seed report gives the seed's statuses:
 * at 8K x 64, 32K x 4 and 32K x 16 (cells of the README demo) the seed says Valid.
 * The simulator's turnover hold once blocked admission and reported
 * Requests queued there (waiting in 5-10 % of scrapes).  The demo's own
 * settings: --max-model-len 131072, the default KV cache, 1024 tokens. */
static void test_seed_statuses(void **state)
{
	const char *sim_args[] = {"--profile", profile_path, "--max-model-len", "131072", NULL};
	/* the demo's settings; 8K x 64 was Requests queued from one scrape of
	 * 20 (issue 22.1) */
	const char *args[] = {"--contexts", "8K,32K", "--concurrency", "4,16,64", "--cells",
			      "decode-8Kx64,decode-32Kx4,decode-32Kx16", "--duration", "5s",
			      "--max-tokens", "1024", "--readiness", "1s", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	struct tt_profile *prof = NULL;
	(void)state;

	assert_int_equal(tt_profile_load(profile_path, &prof, &err), TT_OK);
	run = capture_run("seedstatus", sim_args, args, run_dir, sizeof run_dir);
	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	for (size_t i = 0; i < rep->n_cells; i++) {
		const struct tt_cell_figures *f = &rep->cells[i];
		const struct tt_profile_point *pt;
		if (f->phase != TT_PHASE_DECODE || rep->manifest.cells[i].state != TT_CELL_DONE)
			continue;
		pt = tt_profile_find(prof, TT_PHASE_DECODE, f->context, f->concurrency);
		assert_non_null(pt);
		if (strcmp(tt_status_name(f->status), pt->status) != 0)
			fail_msg("decode %lld x %d: '%s' (%s), the seed says '%s'",
				 (long long)f->context, f->concurrency, tt_status_name(f->status),
				 f->reason, pt->status);
	}
	assert_int_equal(cell(run, "decode-32768x16")->state, TT_CELL_DONE);
	assert_int_equal(cell(run, "decode-8192x64")->state, TT_CELL_DONE);
	tt_report_free(rep);
	tt_profile_free(prof);
	tt_run_free(run);
}

/* The seed's only Requests queued cell, 120K x 2, was the reference tool's
 * running-mean test (mean running < 0.95 C): each closed-loop request is
 * outside the server's running set for its TTFT (docs/sim.md 4.6).  The
 * seed-calibrated simulator shows the same dip: the mean running gauge is
 * below C as the seed's 1.9 was, and no request waits. */
static void test_seed_running_mean(void **state)
{
	const char *sim_args[] = {"--profile", profile_path, "--max-model-len", "131072", NULL};
	const char *args[] = {"--contexts", "120K", "--concurrency", "2", "--cells",
			      "decode-120Kx2", "--duration", "8s", "--max-tokens", "4096",
			      "--readiness", "1s", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	const struct tt_cell_figures *f;
	(void)state;

	run = capture_run("seedmean", sim_args, args, run_dir, sizeof run_dir);
	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	f = &rep->cells[tt_manifest_find_cell(tt_run_manifest(run), "decode-122880x2")];
	assert_int_equal(f->errors, 0);
	assert_string_equal(f->avg_active_source, "server");
	/* 8 s windows hold one or two turnovers of ~0.42 s per stream */
	if (!(f->avg_active > 1.7 && f->avg_active < 1.97))
		fail_msg("mean running %.3f of 2, the seed's 1.9", f->avg_active);
	assert_true(f->waiting_share == 0.0);
	tt_report_free(rep);
	tt_run_free(run);
}

/* SGLang flavour: engine and KV capacity from its own server info. */
static void test_sglang_flavor(void **state)
{
	const char *sim_args[] = {"--flavor", "sglang", "--kv-capacity", "300000", NULL};
	const char *args[] = {"--contexts", "512", "--concurrency", "2", "--cells", "decode-512x2",
			      "--duration", "1s", "--max-tokens", "32", "--readiness", "0.2s", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tally t;
	(void)state;

	run = capture_run("sglang", sim_args, args, run_dir, sizeof run_dir);
	assert_string_equal(tt_run_manifest(run)->engine, "sglang");
	assert_int_equal(tt_run_manifest(run)->kv_capacity_tokens, 300000);
	assert_string_equal(tt_run_manifest(run)->kv_capacity_source, "sglang:get_server_info");
	tally_cell(run, "decode-512x2", 512, 32, &t);
	assert_int_equal(t.errors, 0);
	assert_true(t.finished_len > 2);
	assert_int_equal(t.finished_len_tokens_ok, t.finished_len);
	tt_run_free(run);
}

/* Chat with text prompts calibrated to within 1 % of the target. */
static void test_chat_text(void **state)
{
	const char *args[] = {"--endpoint", "chat", "--contexts", "2K", "--concurrency", "2",
			      "--duration", "1s", "--max-tokens", "32", "--readiness", "0.2s", NULL};
	char run_dir[600];
	struct tt_run *run;
	struct tally t;
	(void)state;

	run = capture_run("chat", NULL, args, run_dir, sizeof run_dir);
	assert_string_equal(tt_run_manifest(run)->prompt_kind, "text");
	assert_string_equal(tt_run_manifest(run)->endpoint, "chat");
	tally_cell(run, "decode-2048x2", 2048, 32, &t);
	assert_int_equal(t.errors, 0);
	assert_true(t.finished_len > 2);
	assert_int_equal(t.finished_len_tokens_ok, t.finished_len);
	/* every request's prompt, as the server counted it, within 1 % of 2048 */
	assert_int_equal(t.prompt_seen, t.requests);
	assert_int_equal(t.prompt_within1, t.requests);
	tt_run_free(run);
}


/* Arrival times are upper bounds: no chunk is recorded as arriving before
 * the simulator emitted it (its truth log, same CLOCK_MONOTONIC), whichever
 * way the capture timed it (docs/capture.md, "Timestamps"); and on Linux
 * most chunks carry the kernel's receive stamp. */
struct honest {
	const struct truth *tr;
	int64_t origin_mono;
	long cell, matched, early;
	int64_t worst_ns; /* most negative (recorded - emitted) */
};

static int honest_request(void *ctx, const struct tt_request *r)
{
	struct honest *h = ctx;
	char id[96];
	const struct truth_req *tq = NULL;
	uint64_t tok = 0;

	snprintf(id, sizeof id, "tt-%ld-%u-%u-%d", h->cell, r->slot, r->seq, (int)r->role);
	for (size_t i = 0; i < h->tr->nreqs; i++)
		if (strcmp(h->tr->reqs[i].client_id, id) == 0)
			tq = &h->tr->reqs[i];
	if (!tq)
		return 0;
	/* the request's truth chunks: a run of the sorted array, in token order */
	size_t lo = 0, hi = h->tr->nchunks, j;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->tr->chunks[mid].id < tq->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	j = lo;
	for (size_t i = 0; i < r->n_chunks; i++) {
		uint64_t last = tok + r->chunks[i].tokens - 1;
		const struct truth_chunk *tc;
		tok += r->chunks[i].tokens;
		while (j < h->tr->nchunks && h->tr->chunks[j].id == tq->id &&
		       h->tr->chunks[j].first + h->tr->chunks[j].count <= last)
			j++;
		if (j == h->tr->nchunks)
			break;
		tc = &h->tr->chunks[j];
		if (tc->id != tq->id || last < tc->first)
			continue;
		int64_t d = r->chunks[i].t_ns + h->origin_mono - (int64_t)tc->emit_ns;
		h->matched++;
		/* 1 us of slack, though none should be needed: stored times
		 * are rounded up and the wall-to-monotonic offset errs late */
		if (d < -1000)
			h->early++;
		if (d < h->worst_ns)
			h->worst_ns = d;
	}
	return 0;
}

/* lossy: run inside a network namespace that drops packets (loss.sh);
 * close_every: the simulator's --close-every ("0": keep-alive always) */
static void arrival_check(const char *tag, int lossy, const char *close_every)
{
	char truth_path[600], run_dir[600], info_path[700];
	const char *sim_args[] = {"--truth", truth_path, "--close-every", close_every, NULL};
	const char *args[] = {"--contexts", "1K", "--concurrency", "8", "--cells", "decode-1Kx8",
			      "--duration", "1s", "--max-tokens", "64", "--readiness", "0.2s", NULL};
	struct truth tr;
	struct honest h;
	struct tt_run *run;
	struct tt_trace_visitor v;
	struct tt_error err;
	char *info, *p;
	size_t len;
	long long kernel = -1, wake = -1, callback = -1, ooo = -1, miscounted = -1, unknown = -1,
		  clock_step = -1;

	snprintf(truth_path, sizeof truth_path, "%s/%s.truth", workdir, tag);
	run = capture_run(tag, sim_args, args, run_dir, sizeof run_dir); /* sim stopped: log flushed */
	assert_int_equal(truth_read(truth_path, &tr), 0);
	truth_sort_chunks(&tr);

	snprintf(info_path, sizeof info_path, "%s/capture-info.json", run_dir);
	info = tu_read(info_path, &len);
	assert_non_null(info);
	p = strstr(info, "\"origin_monotonic_ns\":");
	assert_non_null(p);
	memset(&h, 0, sizeof h);
	h.tr = &tr;
	h.origin_mono = strtoll(p + strlen("\"origin_monotonic_ns\":"), NULL, 10);
	p = strstr(info, "\"chunk_times\":");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "\"chunk_times\": {\"kernel\": %lld, \"wake\": %lld, \"callback\": %lld}",
				&kernel, &wake, &callback), 3);
	p = strstr(info, "\"requests_off_kernel_times\":");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "\"requests_off_kernel_times\": {\"out_of_order\": %lld, "
				   "\"miscounted\": %lld, \"unknown\": %lld, \"clock_step\": %lld}",
				&ooo, &miscounted, &unknown, &clock_step), 4);
	free(info);
	/* the bytes libcurl handed over, raw, were exactly the bytes the
	 * kernel says each connection read: the counting behind the kernel
	 * stamps holds (a miscount would only cost precision, not honesty) */
	assert_int_equal(miscounted, 0);
	assert_int_equal(unknown, 0);
	assert_true(clock_step >= 0); /* nobody steps the clock in a test */

	memset(&v, 0, sizeof v);
	v.ctx = &h;
	v.on_request = honest_request;
	h.cell = tt_manifest_find_cell(tt_run_manifest(run), "decode-1024x8");
	assert_true(h.cell >= 0);
	assert_true(tt_run_read_cell(run, (size_t)h.cell, &v, &err) <= TT_WARN);
	tt_run_free(run);
	truth_free(&tr);

	assert_true(h.matched > 500);
	if (h.early)
		fail_msg("%ld of %ld chunks recorded before the simulator emitted them (worst %.1f us)",
			 h.early, h.matched, (double)h.worst_ns / 1e3);
	/* every recorded chunk counted once, by how it was timed */
	assert_true(kernel + wake + callback >= h.matched);
	if (!lossy) {
		assert_true(kernel > 0);
		assert_int_equal(ooo, 0);
		return;
	}
	assert_true(ooo > 0);
	/* Lost packets: the kernel held later packets until the resend came,
	 * so their stamps predate the moment they could be read; requests
	 * that saw it took the time we looked instead. */
	if (wake == 0)
		fail_msg("packets were lost (netns), yet every kernel stamp was kept "
			 "(kernel %lld, callback %lld)",
			 kernel, callback);
}

static void test_arrival_never_before_emission(void **state)
{
	(void)state;
	arrival_check("honest", 0, "0");
}

/* The server closes every third connection after its reply (as llama.cpp's
 * does after a number of requests): the check runs before libcurl closes
 * the socket, so those requests keep their kernel stamps. */
static void test_arrival_connection_close(void **state)
{
	(void)state;
	arrival_check("close", 0, "3");
}

/* Only under tests/capture/loss.sh, which sets TT_E2E_LOSSY=1 inside a
 * network namespace that drops 4 % of TCP packets on input. */
static void test_arrival_under_loss(void **state)
{
	(void)state;
	if (!getenv("TT_E2E_LOSSY"))
		skip();
	arrival_check("lossy", 1, "0");
}

/* ---- reasoning models (docs/metrics.md M-reasoning) ---------------------- */

#define REASONING_N 10

/* Each recorded chunk against the simulator's truth: its tokens are a truth
 * chunk's (same boundaries), and its text is what --reasoning N streams:
 * tokens [0, N) as reasoning, the rest as the answer. */
struct reason_check {
	const struct truth *tr;
	long cell;
	int64_t ws, we;
	long matched_chunks, text_ok, no_text, boundaries_ok;
	long want_reasoning, want_answer; /* window tokens by phase, from the truth */
	long straddle;                    /* chunks carrying both */
	long requests;
};

static int reason_request(void *ctx, const struct tt_request *r)
{
	struct reason_check *h = ctx;
	char id[96];
	const struct truth_req *tq = NULL;
	uint32_t tok = 0;
	size_t lo = 0, hi;

	/* a request cut before its first token has no chunks, and no column */
	if (r->role != TT_ROLE_MEASURED || r->n_chunks == 0)
		return 0;
	if (!r->chunk_text) {
		h->no_text++;
		return 0;
	}
	snprintf(id, sizeof id, "tt-%ld-%u-%u-%d", h->cell, r->slot, r->seq, (int)r->role);
	for (size_t i = 0; i < h->tr->nreqs; i++)
		if (strcmp(h->tr->reqs[i].client_id, id) == 0)
			tq = &h->tr->reqs[i];
	if (!tq)
		return 0;
	h->requests++;
	hi = h->tr->nchunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->tr->chunks[mid].id < tq->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = 0; i < r->n_chunks; i++) {
		uint32_t first = tok, end = tok + r->chunks[i].tokens;
		uint8_t want = (uint8_t)((first < REASONING_N ? TT_TEXT_REASONING : 0) |
					 (end > REASONING_N ? TT_TEXT_ANSWER : 0));
		const struct truth_chunk *tc = lo + i < h->tr->nchunks ? &h->tr->chunks[lo + i] : NULL;

		tok = end;
		h->matched_chunks++;
		if (tc && tc->id == tq->id && tc->first == first && tc->count == r->chunks[i].tokens)
			h->boundaries_ok++;
		if (r->chunk_text[i] == want)
			h->text_ok++;
		if (want == (TT_TEXT_REASONING | TT_TEXT_ANSWER))
			h->straddle++;
		if (r->chunks[i].t_ns >= h->ws && r->chunks[i].t_ns < h->we) {
			/* the phase rule: a chunk with answer text is answer */
			if (end <= REASONING_N)
				h->want_reasoning += r->chunks[i].tokens;
			else
				h->want_answer += r->chunks[i].tokens;
		}
	}
	return 0;
}

/* A reasoning model streamed through the simulator (--reasoning N): the
 * capture records which chunks carried reasoning and which the answer, in
 * both members servers use, and the report's reasoning figures agree with
 * the simulator's truth. */
static void test_reasoning(void **state)
{
	static const char *const fields[] = {"reasoning_content", "reasoning"};
	(void)state;

	for (int fi = 0; fi < 2; fi++) {
		char truth_path[600], run_dir[600], tag[32];
		const char *sim_args[] = {"--truth", truth_path, "--reasoning", "10",
					  "--reasoning-field", fields[fi], "--stream-interval", "3",
					  NULL};
		const char *args[] = {"--endpoint", "chat", "--contexts", "1K", "--concurrency", "2",
				      "--duration", "1s", "--max-tokens", "32", "--readiness", "0.2s",
				      NULL};
		struct truth tr;
		struct reason_check h;
		struct tt_run *run;
		struct tt_trace_visitor v;
		struct tt_report *rep = NULL;
		struct tt_error err;
		const struct tt_cell_info *ci;

		snprintf(tag, sizeof tag, "reasoning-%d", fi);
		snprintf(truth_path, sizeof truth_path, "%s/%s.truth", workdir, tag);
		run = capture_run(tag, sim_args, args, run_dir, sizeof run_dir);
		assert_int_equal(truth_read(truth_path, &tr), 0);
		truth_sort_chunks(&tr);
		memset(&h, 0, sizeof h);
		h.tr = &tr;
		h.cell = tt_manifest_find_cell(tt_run_manifest(run), "decode-1024x2");
		assert_true(h.cell >= 0);
		ci = &tt_run_manifest(run)->cells[h.cell];
		h.ws = ci->window_start_ns;
		h.we = ci->window_end_ns;
		memset(&v, 0, sizeof v);
		v.ctx = &h;
		v.on_request = reason_request;
		assert_true(tt_run_read_cell(run, (size_t)h.cell, &v, &err) <= TT_WARN);
		assert_int_equal(h.no_text, 0);
		assert_true(h.matched_chunks > 20);
		assert_int_equal(h.text_ok, h.matched_chunks);
		assert_int_equal(h.boundaries_ok, h.matched_chunks);
		/* a chunk that spans token 10 (where the output pass falls
		 * behind, timing-dependent) carries both: at most one a request */
		assert_true(h.straddle <= h.requests);
		assert_true(h.want_reasoning > 0 && h.want_answer > 0);

		assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
		{
			const struct tt_cell_figures *f = &rep->cells[h.cell];
			assert_true(f->text_requests > 0);
			assert_int_equal(f->reasoning_tokens, h.want_reasoning);
			assert_int_equal(f->answer_tokens, h.want_answer);
			assert_int_equal(f->reasoning_tokens + f->answer_tokens, f->output_tokens);
			/* the first reasoning token is the first token; the answer
			 * follows ten tokens (four chunks) later */
			assert_true(f->ttfr_ms.n > 0 && f->ttfa_ms.n > 0);
			assert_true(fabs(f->ttfr_ms.p50 - f->ttft_ms.p50) < 1e-9);
			assert_true(f->ttfa_ms.p50 > f->ttfr_ms.p50);
		}
		tt_report_free(rep);
		tt_run_free(run);
		truth_free(&tr);
	}
}

/* The scrapes of a cell in [ws, we] that hold TGI's queue histogram: the
 * first and last one's time, as M-ttft-parts takes them. */
struct queue_span {
	int64_t ws, we, first, last;
	const char *name; /* the histogram's _count series */
	int64_t run_first, run_last; /* scrape_span: first and last as run times */
};

static int span_scrape(void *ctx, const struct tt_scrape *s)
{
	struct queue_span *q = ctx;
	if (s->t_ns < q->ws || s->t_ns > q->we)
		return 0;
	for (size_t i = 0; i < s->n_samples; i++)
		if (strcmp(s->samples[i].name, q->name) == 0) {
			if (q->first < 0)
				q->first = s->t_ns;
			q->last = s->t_ns;
		}
	return 0;
}

static int by_first_model(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b; /* {first model time, last, arrival} */
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* TGI's queue time (M-ttft-parts) against the simulator's truth: with one
 * request running at a time (--max-num-seqs 1) and two workers, each
 * request waits in the queue while the other is served.  From the truth
 * log, a request leaves the queue when it has arrived and the request
 * served before it has produced its last token (the step that ends there
 * starts the next); the mean of those waits over the requests that left
 * the queue between the first and last scrape of the window is what the
 * server's histogram says and what the report reads.  TGI has no
 * per-request prefill or TTFT histogram: those parts stay unknown. */
static void test_tgi_ttft_parts(void **state)
{
	char truth_path[600], run_dir[600], info_path[700];
	const char *sim_args[] = {"--flavor", "tgi", "--max-num-seqs", "1", "--truth", truth_path,
				  NULL};
	/* 128 tokens take over 100 ms to serve: far longer than a worker takes
	 * to send its next request, even on a busy machine, so there is always
	 * one request waiting */
	const char *args[] = {"--contexts", "1K", "--concurrency", "2", "--cells", "decode-1Kx2",
			      "--duration", "3s", "--max-tokens", "128", "--readiness", "0.2s", NULL};
	struct truth tr;
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	const struct tt_cell_figures *f = NULL;
	const struct tt_cell_info *ci;
	struct queue_span q;
	struct tt_trace_visitor v = {&q, NULL, span_scrape};
	uint64_t (*served)[3];
	size_t n = 0;
	double sum = 0, want;
	long k = 0;
	char *info, *p;
	size_t len;
	int64_t origin;
	(void)state;

	snprintf(truth_path, sizeof truth_path, "%s/tgiq.truth", workdir);
	run = capture_run("tgiq", sim_args, args, run_dir, sizeof run_dir);
	assert_string_equal(tt_run_manifest(run)->engine, "tgi");
	ci = cell(run, "decode-1024x2");
	q.ws = ci->window_start_ns;
	q.we = ci->window_end_ns;
	q.first = q.last = -1;
	q.name = "tgi_request_queue_duration_count";
	if (tt_run_read_cell(run, (size_t)tt_manifest_find_cell(tt_run_manifest(run),
								 "decode-1024x2"),
			     &v, &err) != TT_OK)
		fail_msg("%s", err.msg);
	assert_true(q.first >= 0 && q.last > q.first);
	/* run times count from the capture's origin; the truth's are
	 * CLOCK_MONOTONIC: the origin's monotonic time joins them */
	snprintf(info_path, sizeof info_path, "%s/capture-info.json", run_dir);
	info = tu_read(info_path, &len);
	assert_non_null(info);
	p = strstr(info, "\"origin_monotonic_ns\":");
	assert_non_null(p);
	origin = strtoll(p + strlen("\"origin_monotonic_ns\":"), NULL, 10);
	free(info);
	q.first += origin;
	q.last += origin;

	/* every request that produced a token: first and last model time */
	assert_int_equal(truth_read(truth_path, &tr), 0);
	served = calloc(tr.nreqs ? tr.nreqs : 1, sizeof *served);
	assert_non_null(served);
	for (size_t i = 0; i < tr.nreqs; i++) {
		uint64_t lo = UINT64_MAX, hi = 0;
		for (size_t c = 0; c < tr.nchunks; c++) {
			if (tr.chunks[c].id != tr.reqs[i].id)
				continue;
			for (uint32_t j = 0; j < tr.chunks[c].count; j++) {
				uint64_t t = tr.chunks[c].model_ns[j];
				lo = t < lo ? t : lo;
				hi = t > hi ? t : hi;
			}
		}
		if (hi == 0)
			continue;
		served[n][0] = lo;
		served[n][1] = hi;
		served[n++][2] = tr.reqs[i].arrival_ns;
	}
	truth_free(&tr);
	qsort(served, n, sizeof *served, by_first_model);
	for (size_t i = 1; i < n; i++) {
		uint64_t admit = served[i][2] > served[i - 1][1] ? served[i][2] : served[i - 1][1];
		if ((int64_t)admit > q.first && (int64_t)admit <= q.last) {
			sum += (double)(admit - served[i][2]) / 1e6;
			k++;
		}
	}
	free(served);
	assert_true(k >= 8);
	want = sum / (double)k;
	assert_true(want > 20); /* the requests did queue */

	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	for (size_t i = 0; i < rep->n_cells; i++)
		if (rep->cells[i].phase == TT_PHASE_DECODE)
			f = &rep->cells[i];
	assert_non_null(f);
	/* (a scrape taken while a request is being admitted may count it on
	 * either side of the window's edge) */
	if (!(fabs(f->queue_ms - want) <= 0.05 * want + 1))
		fail_msg("queue %.3f ms, truth %.3f ms over %ld requests", f->queue_ms, want, k);
	assert_true(isnan(f->prefill_ms));
	assert_true(isnan(f->server_ttft_ms));
	assert_true(isnan(f->ttft_rest_ms));
	tt_report_free(rep);
	tt_run_free(run);
}

/* What the simulator's truth log says of one served request (M-ttft-parts). */
struct served {
	uint64_t arrival, admit, first_model, last_model, first_emit, end;
};

static int by_first(const void *a, const void *b)
{
	const struct served *x = a, *y = b;
	return x->first_model < y->first_model ? -1 : x->first_model > y->first_model;
}

/* The requests of the truth log at path that produced a token, in the order
 * they were served, with their admission: with one request running at a
 * time (--max-num-seqs 1) a request leaves the queue when it has arrived
 * and the request served before it has produced its last token (the step
 * that ends there starts the next; an idle engine starts a step at the
 * arrival). */
static struct served *served_from_truth(const char *path, size_t *n)
{
	struct truth tr;
	struct served *sv;
	size_t k = 0;

	assert_int_equal(truth_read(path, &tr), 0);
	sv = calloc(tr.nreqs ? tr.nreqs : 1, sizeof *sv);
	assert_non_null(sv);
	for (size_t i = 0; i < tr.nreqs; i++) {
		uint64_t lo = UINT64_MAX, hi = 0, emit = UINT64_MAX;
		for (size_t c = 0; c < tr.nchunks; c++) {
			if (tr.chunks[c].id != tr.reqs[i].id || !tr.chunks[c].count)
				continue;
			if (tr.chunks[c].first == 0)
				emit = tr.chunks[c].emit_ns;
			for (uint32_t j = 0; j < tr.chunks[c].count; j++) {
				uint64_t t = tr.chunks[c].model_ns[j];
				lo = t < lo ? t : lo;
				hi = t > hi ? t : hi;
			}
		}
		if (hi == 0 || !tr.reqs[i].ended)
			continue;
		sv[k].arrival = tr.reqs[i].arrival_ns;
		sv[k].first_model = lo;
		sv[k].last_model = hi;
		sv[k].first_emit = emit;
		sv[k++].end = tr.reqs[i].end_ns;
	}
	truth_free(&tr);
	qsort(sv, k, sizeof *sv, by_first);
	for (size_t i = 0; i < k; i++) {
		sv[i].admit = sv[i].arrival;
		if (i && sv[i - 1].last_model > sv[i].admit)
			sv[i].admit = sv[i - 1].last_model;
		assert_true(sv[i].admit <= sv[i].first_model);
	}
	*n = k;
	return sv;
}

/* The first and last scrape of the decode cell of run that hold series name
 * (a histogram's _count), in CLOCK_MONOTONIC ns as the truth log's. */
static void scrape_span(struct tt_run *run, const char *run_dir, const char *name,
			struct queue_span *q)
{
	const struct tt_cell_info *ci = cell(run, "decode-1024x2");
	struct tt_trace_visitor v = {q, NULL, span_scrape};
	struct tt_error err;
	char info_path[700], *info, *p;
	size_t len;
	int64_t origin;

	q->ws = ci->window_start_ns;
	q->we = ci->window_end_ns;
	q->first = q->last = -1;
	q->name = name;
	if (tt_run_read_cell(run, (size_t)tt_manifest_find_cell(tt_run_manifest(run),
								 "decode-1024x2"),
			     &v, &err) != TT_OK)
		fail_msg("%s", err.msg);
	assert_true(q->first >= 0 && q->last > q->first);
	snprintf(info_path, sizeof info_path, "%s/capture-info.json", run_dir);
	info = tu_read(info_path, &len);
	assert_non_null(info);
	p = strstr(info, "\"origin_monotonic_ns\":");
	assert_non_null(p);
	origin = strtoll(p + strlen("\"origin_monotonic_ns\":"), NULL, 10);
	free(info);
	q->run_first = q->first;
	q->run_last = q->last;
	q->first += origin;
	q->last += origin;
}

static int in_span(const struct queue_span *q, uint64_t t)
{
	return (int64_t)t > q->first && (int64_t)t <= q->last;
}

static const struct tt_cell_figures *decode_figures(const struct tt_report *rep)
{
	const struct tt_cell_figures *f = NULL;
	for (size_t i = 0; i < rep->n_cells; i++)
		if (rep->cells[i].phase == TT_PHASE_DECODE)
			f = &rep->cells[i];
	assert_non_null(f);
	return f;
}

/* A window mean of the server's against the truth's: within rel x want +
 * abs_ms (a scrape taken while a request passes a stage may count it on
 * either side of the window's edge). */
static void near_truth(const char *what, double got, double want, long k, double rel,
		       double abs_ms)
{
	printf("  %s: report %.3f ms, truth %.3f ms over %ld requests\n", what, got, want, k);
	if (!(fabs(got - want) <= rel * want + abs_ms))
		fail_msg("%s %.3f ms, truth %.3f ms over %ld requests", what, got, want, k);
}

/* The client's TTFT of the measured requests that finished in (first,
 * last] (run times): the requests whose queue and prefill times vLLM's
 * histograms took in that span (M-ttft-parts rest). */
struct client_ttft {
	int64_t first, last;
	double sum;
	long n;
};

static int client_ttft_request(void *ctx, const struct tt_request *r)
{
	struct client_ttft *c = ctx;
	if (r->role != TT_ROLE_MEASURED ||
	    (r->finish != TT_FINISH_LENGTH && r->finish != TT_FINISH_STOP) ||
	    r->t_end_ns <= c->first || r->t_end_ns > c->last)
		return 0;
	for (size_t i = 0; i < r->n_chunks; i++)
		if (r->chunks[i].tokens) {
			if (r->chunks[i].t_ns > r->t_send_ns) {
				c->sum += (double)(r->chunks[i].t_ns - r->t_send_ns) / 1e6;
				c->n++;
			}
			break;
		}
	return 0;
}

/* vLLM's TTFT parts (M-ttft-parts) against the simulator's truth, as
 * test_tgi_ttft_parts: one request running at a time and two workers, so
 * each request queues while the other is served.  vLLM V1 observes a
 * request's queue and prefill times when it ends: the truth's means over
 * the requests that ended between the window's first and last scrape;
 * its TTFT histogram when the first token is sent: the truth's first
 * chunk's emission - arrival over the requests whose first chunk went out
 * in that span.  rest = client TTFT - queue - prefill is the loopback, the
 * HTTP layers and the simulator's output lateness: small and not below 0
 * by more than the populations' difference. */
static void test_vllm_ttft_parts(void **state)
{
	char truth_path[600], run_dir[600];
	/* no prefix cache: each request prefills its whole 1K prompt */
	const char *sim_args[] = {"--max-num-seqs", "1", "--no-prefix-caching", "--truth",
				  truth_path, NULL};
	const char *args[] = {"--contexts", "1K", "--concurrency", "2", "--cells", "decode-1Kx2",
			      "--duration", "3s", "--max-tokens", "128", "--readiness", "0.2s", NULL};
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	const struct tt_cell_figures *f;
	struct queue_span q;
	struct client_ttft ct = {0, 0, 0, 0};
	struct tt_trace_visitor v = {&ct, client_ttft_request, NULL};
	struct served *sv;
	size_t n;
	double queue = 0, prefill = 0, ttft = 0, rest;
	long kq = 0, kt = 0;
	(void)state;

	snprintf(truth_path, sizeof truth_path, "%s/vllmq.truth", workdir);
	run = capture_run("vllmq", sim_args, args, run_dir, sizeof run_dir);
	assert_string_equal(tt_run_manifest(run)->engine, "vllm");
	scrape_span(run, run_dir, "vllm:request_queue_time_seconds_count", &q);
	ct.first = q.run_first;
	ct.last = q.run_last;
	assert_true(tt_run_read_cell(run, (size_t)tt_manifest_find_cell(tt_run_manifest(run),
									 "decode-1024x2"),
				     &v, &err) == TT_OK);
	assert_true(ct.n >= 8);
	sv = served_from_truth(truth_path, &n);
	for (size_t i = 0; i < n; i++) {
		if (in_span(&q, sv[i].end)) {
			queue += (double)(sv[i].admit - sv[i].arrival) / 1e6;
			prefill += (double)(sv[i].first_model - sv[i].admit) / 1e6;
			kq++;
		}
		if (sv[i].first_emit != UINT64_MAX && in_span(&q, sv[i].first_emit)) {
			ttft += (double)(sv[i].first_emit - sv[i].arrival) / 1e6;
			kt++;
		}
	}
	free(sv);
	assert_true(kq >= 8 && kt >= 8);
	queue /= (double)kq;
	prefill /= (double)kq;
	ttft /= (double)kt;
	assert_true(queue > 20);  /* the requests did queue */
	assert_true(prefill > 5); /* a 1K prefill: about 7 ms at 150K tok/s */

	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	f = decode_figures(rep);
	near_truth("queue", f->queue_ms, queue, kq, 0.05, 1);
	/* every prefill is the same uncached 1K step: the window's edges
	 * cannot move its mean */
	near_truth("prefill", f->prefill_ms, prefill, kq, 0.02, 0.05);
	near_truth("server TTFT", f->server_ttft_ms, ttft, kt, 0.05, 1);
	/* rest: the client's TTFT over the requests that finished in the
	 * histograms' span (not M-ttft's every measured request: the cell's
	 * first, sent into an empty queue, waited nothing) less queue and
	 * prefill.  It exceeds 0 by the loopback, the HTTP layers and the
	 * simulator's output pass: a few ms at most. */
	rest = ct.sum / (double)ct.n - f->queue_ms - f->prefill_ms;
	printf("  client TTFT %.3f ms (all), %.3f ms over the span (%ld requests), rest %.3f ms\n",
	       f->ttft_ms.mean, ct.sum / (double)ct.n, ct.n, f->ttft_rest_ms);
	assert_true(fabs(f->ttft_rest_ms - rest) < 1e-6);
	if (!(rest > 0 && rest < 5))
		fail_msg("rest over the span %.3f ms", rest);
	tt_report_free(rep);
	tt_run_free(run);
}

/* SGLang's TTFT parts against the simulator's truth: SGLang observes the
 * queue time when it admits a request (the truth's waits of the requests
 * admitted between the window's first and last scrape) and its TTFT when
 * the first token goes out; it has no prefill histogram, so prefill and
 * rest stay unknown. */
static void test_sglang_ttft_parts(void **state)
{
	char truth_path[600], run_dir[600];
	const char *sim_args[] = {"--flavor", "sglang", "--max-num-seqs", "1", "--truth",
				  truth_path, NULL};
	const char *args[] = {"--contexts", "1K", "--concurrency", "2", "--cells", "decode-1Kx2",
			      "--duration", "3s", "--max-tokens", "128", "--readiness", "0.2s", NULL};
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	const struct tt_cell_figures *f;
	struct queue_span q;
	struct served *sv;
	size_t n;
	double queue = 0, ttft = 0;
	long kq = 0, kt = 0;
	(void)state;

	snprintf(truth_path, sizeof truth_path, "%s/sglq.truth", workdir);
	run = capture_run("sglq", sim_args, args, run_dir, sizeof run_dir);
	assert_string_equal(tt_run_manifest(run)->engine, "sglang");
	scrape_span(run, run_dir, "sglang:queue_time_seconds_count", &q);
	sv = served_from_truth(truth_path, &n);
	for (size_t i = 0; i < n; i++) {
		if (in_span(&q, sv[i].admit)) {
			queue += (double)(sv[i].admit - sv[i].arrival) / 1e6;
			kq++;
		}
		if (sv[i].first_emit != UINT64_MAX && in_span(&q, sv[i].first_emit)) {
			ttft += (double)(sv[i].first_emit - sv[i].arrival) / 1e6;
			kt++;
		}
	}
	free(sv);
	assert_true(kq >= 8 && kt >= 8);
	queue /= (double)kq;
	ttft /= (double)kt;
	assert_true(queue > 20);

	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	f = decode_figures(rep);
	near_truth("queue", f->queue_ms, queue, kq, 0.05, 1);
	near_truth("server TTFT", f->server_ttft_ms, ttft, kt, 0.05, 1);
	assert_true(isnan(f->prefill_ms));
	assert_true(isnan(f->ttft_rest_ms));
	tt_report_free(rep);
	tt_run_free(run);
}

/* Speculative decoding in the simulator (--spec-draft 3 --spec-accept 0.6):
 * each decode step streams 1 + accepted drafts in one chunk, and the
 * server's spec_decode counters give the report's acceptance (M-spec);
 * both agree with the simulator's truth log and with the draw's law. */
static void test_spec_decode(void **state)
{
	char truth_path[600], run_dir[600];
	const char *sim_args[] = {"--truth", truth_path, "--spec-draft", "3", "--spec-accept", "0.6",
				  "--seed", "7", NULL};
	const char *args[] = {"--contexts", "1K", "--concurrency", "2", "--cells", "decode-1Kx2",
			      "--duration", "1s", "--max-tokens", "256", "--readiness", "0.2s", NULL};
	struct truth tr;
	struct tt_run *run;
	struct tt_report *rep = NULL;
	struct tt_error err;
	const struct tt_cell_figures *f = NULL;
	double steps = 0, tokens = 0, law;
	long by_count[6] = {0};
	(void)state;

	snprintf(truth_path, sizeof truth_path, "%s/spec.truth", workdir);
	run = capture_run("spec", sim_args, args, run_dir, sizeof run_dir);
	assert_int_equal(truth_read(truth_path, &tr), 0);
	/* truth: the tokens of one decode step share its model time (a late
	 * output pass may send several steps in one chunk); token 0 is the
	 * prefill's */
	for (size_t i = 0; i < tr.nchunks; i++) {
		const struct truth_chunk *tc = &tr.chunks[i];
		uint32_t j = tc->first == 0 ? 1 : 0;
		while (j < tc->count) {
			uint32_t g = 1;
			while (j + g < tc->count && tc->model_ns[j + g] == tc->model_ns[j])
				g++;
			assert_true(g <= 4);
			by_count[g]++;
			steps++;
			tokens += g;
			j += g;
		}
	}
	truth_free(&tr);
	assert_true(steps > 500);
	/* every step size happened: 1 (first draft rejected) to 4 (all accepted) */
	for (int k = 1; k <= 4; k++)
		assert_true(by_count[k] > 0);

	assert_true(tt_analyze(run, NULL, &rep, &err) <= TT_WARN);
	for (size_t i = 0; i < rep->n_cells; i++)
		if (rep->cells[i].phase == TT_PHASE_DECODE)
			f = &rep->cells[i];
	assert_non_null(f);
	/* the server's counters were read over the window */
	assert_true(f->spec_draft_tokens > 300);
	assert_true(isfinite(f->spec_acceptance));
	/* rejection sampling stops at the first rejection: a step of K = 3
	 * drafts accepts P + P^2 + P^3 of them on average, a share
	 * (P + P^2 + P^3) / K = 0.392 of the draft tokens (steps near a
	 * request's end draft fewer, a little more of which is accepted) */
	law = (0.6 + 0.36 + 0.216) / 3;
	if (fabs(f->spec_acceptance - law) > 0.06)
		fail_msg("acceptance %.3f, law %.3f", f->spec_acceptance, law);
	/* tokens per verification step: the server's counters (M-spec), the
	 * truth log's decode chunks and the client's chunks (M-chunks) agree */
	if (fabs(f->spec_accepted_len - tokens / steps) > 0.15)
		fail_msg("accepted length %.3f, truth %.3f", f->spec_accepted_len, tokens / steps);
	/* (a late output pass merges steps: more per chunk, never fewer) */
	if (f->tokens_per_chunk < f->spec_accepted_len - 0.15)
		fail_msg("tokens per chunk %.3f, accepted length %.3f", f->tokens_per_chunk,
			 f->spec_accepted_len);
	assert_true(f->chunks_by_tokens[3] > 0); /* four-token chunks seen */
	tt_report_free(rep);
	tt_run_free(run);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_matrix),
		cmocka_unit_test(test_multi_token_chunks),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_kill_and_resume),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_llamacpp_flavor),
		cmocka_unit_test(test_chat_text),
		cmocka_unit_test(test_server_dies),
		cmocka_unit_test(test_dead_window_fails_resume_retries),
		cmocka_unit_test(test_model_len),
		cmocka_unit_test(test_key_on_generation_only),
		cmocka_unit_test(test_prefill_repeats),
		cmocka_unit_test(test_sglang_flavor),
		cmocka_unit_test(test_silent_close),
		cmocka_unit_test(test_slot_context),
		cmocka_unit_test(test_tgi_flavor),
		cmocka_unit_test(test_tgi_eos),
		cmocka_unit_test(test_seed_statuses),
		cmocka_unit_test(test_seed_running_mean),
		cmocka_unit_test(test_arrival_never_before_emission),
		cmocka_unit_test(test_arrival_connection_close),
		cmocka_unit_test(test_arrival_under_loss),
		cmocka_unit_test(test_reasoning),
		cmocka_unit_test(test_spec_decode),
		cmocka_unit_test(test_tgi_ttft_parts),
		cmocka_unit_test(test_vllm_ttft_parts),
		cmocka_unit_test(test_sglang_ttft_parts),
	};

	if (argc < 5) {
		fprintf(stderr, "usage: e2e_capture SIM CAPTURE PROFILE WORKDIR [test...]\n");
		return 2;
	}
	sim_bin = argv[1];
	cap_bin = argv[2];
	profile_path = argv[3];
	workdir = argv[4];
	mkdir(workdir, 0755);
	signal(SIGPIPE, SIG_IGN);
	/* the case names after the four paths (ctest passes one) */
	return tt_cmocka_run("e2e_capture", all, sizeof all / sizeof all[0], NULL, NULL, argc - 5,
			     argv + 5);
}
