/* Importing other tools' result files: format names and detection, writing
 * the run (the run being built is imp_build.c), and the two ways in:
 * tt_import_files (a run directory, renamed into place only when complete)
 * and tt_import_open (a private temporary run the caller's tt_run owns). */
#define _GNU_SOURCE /* memmem, nftw */
#include "tokentrace/import.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stddef.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "format/run_adopt.h"
#include "import/imp.h"

static const struct {
	const char *name;
	tt__importer_fn fn;
} formats[TT_IMPORT_FORMAT_COUNT_] = {
	{"auto", NULL},
	{"llm-inference-bench", tt__import_lib_json},
	{"llm-inference-bench-report", tt__import_lib_report},
	{"vllm-bench", tt__import_vllm},
	{"genai-perf", tt__import_genai_perf},
	{"aiperf", tt__import_aiperf},
	{"guidellm", tt__import_guidellm},
};

const char *tt_import_format_name(enum tt_import_format f)
{
	return (unsigned)f < TT_IMPORT_FORMAT_COUNT_ ? formats[f].name : "unknown";
}

enum tt_code tt_import_format_parse(const char *name, enum tt_import_format *out,
				    struct tt_error *err)
{
	for (int i = 0; i < TT_IMPORT_FORMAT_COUNT_; i++)
		if (strcmp(name, formats[i].name) == 0) {
			*out = (enum tt_import_format)i;
			return TT_OK;
		}
	return tt_error_set(err, TT_EARG,
			    "unknown import format '%s' (known: auto, llm-inference-bench, "
			    "llm-inference-bench-report, vllm-bench, genai-perf, aiperf, guidellm)",
			    name);
}

/* ---- reading and recognising a file ------------------------------------- */

static enum tt_code read_file(const char *path, char **data, size_t *len, struct tt_error *err)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (it is then
	 * refused as not a regular file). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fd < 0)
		return tt_error_set(err, errno == ENOENT ? TT_ENOTFOUND : TT_EIO,
				    "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tt_error_set(err, TT_EIO, "cannot read '%s': not a regular file", path);
	}
	if ((uint64_t)st.st_size > TT_IMPORT_MAX_BYTES) {
		close(fd);
		return tt_error_set(err, TT_EFORMAT, "'%s': %lld bytes, more than the %zu an import "
				    "reads", path, (long long)st.st_size, TT_IMPORT_MAX_BYTES);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)st.st_size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return tt_error_set(err, TT_EIO, "cannot read '%s': %s", path, strerror(e));
		}
		if (k == 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	buf[got] = '\0';
	*data = buf;
	*len = got;
	return TT_OK;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

static int has(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k) != NULL;
}

enum tt_import_format tt__import_sniff(const char *data, size_t len, const cJSON *root)
{
	const char *p = skip_ws(data, data + len);

	if (root && cJSON_IsObject(root)) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "experiments");
		if (has(root, "metadata") && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "results")))
			return TT_IMPORT_LIB_JSON;
		if (cJSON_IsArray(e))
			return TT_IMPORT_GENAI_PERF;
		if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "benchmarks")))
			return TT_IMPORT_GUIDELLM;
		if (has(root, "ttfts") || has(root, "mean_ttft_ms") || has(root, "median_ttft_ms"))
			return TT_IMPORT_VLLM;
		/* The tools' summaries: GenAI-Perf's profile_export_genai_perf.json,
		 * AIPerf's profile_export_aiperf.json. */
		if (has(root, "time_to_first_token") && has(root, "output_token_throughput"))
			return TT_IMPORT_GENAI_PERF;
		if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "records")) &&
		    has(root, "input_config"))
			return TT_IMPORT_AIPERF;
		/* One AIPerf record alone (a one-line export, records or raw). */
		if (has(root, "metadata") && (has(root, "metrics") || has(root, "start_perf_ns")))
			return TT_IMPORT_AIPERF;
		return TT_IMPORT_AUTO;
	}
	if (!root && p < data + len && *p == '{') {
		/* Several JSON values, one per line: AIPerf's JSON lines. */
		size_t n = (size_t)(data + len - p);
		const char *nl = memchr(p, '\n', n);
		if (nl && (memmem(p, (size_t)(nl - p), "\"metadata\"", 10) ||
			   memmem(p, (size_t)(nl - p), "\"start_perf_ns\"", 15)))
			return TT_IMPORT_AIPERF;
		return TT_IMPORT_AUTO;
	}
	if (memmem(data, len < 65536 ? len : 65536, "Speed test matrix", 17) &&
	    memmem(data, len, "| Phase |", 9))
		return TT_IMPORT_LIB_REPORT;
	return TT_IMPORT_AUTO;
}

/* A run: a directory, or an archive (zstd, gzip, xz, bzip2, zip, tar). */
static int looks_like_run(const char *path, const char *data, size_t len)
{
	static const unsigned char zstd[] = {0x28, 0xB5, 0x2F, 0xFD}, gz[] = {0x1f, 0x8b},
				   xz[] = {0xFD, '7', 'z', 'X', 'Z'}, bz[] = {'B', 'Z', 'h'},
				   zip[] = {'P', 'K', 3, 4};
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	if (!data)
		return 0;
	return (len >= 4 && !memcmp(data, zstd, 4)) || (len >= 2 && !memcmp(data, gz, 2)) ||
	       (len >= 5 && !memcmp(data, xz, 5)) || (len >= 3 && !memcmp(data, bz, 3)) ||
	       (len >= 4 && !memcmp(data, zip, 4)) ||
	       (len >= 262 && !memcmp(data + 257, "ustar", 5));
}

static int is_one_json_value(const char *data, size_t len)
{
	const char *p = skip_ws(data, data + len);
	return p < data + len && (*p == '{' || *p == '[');
}

enum tt_code tt_import_detect(const char *path, enum tt_import_format *fmt, struct tt_error *err)
{
	char *data = NULL;
	size_t len = 0;
	cJSON *root = NULL;
	enum tt_code rc;
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		*fmt = TT_IMPORT_AUTO;
		return TT_OK;
	}
	if (tt_failed(rc = read_file(path, &data, &len, err)))
		return rc;
	if (looks_like_run(path, data, len)) {
		free(data);
		*fmt = TT_IMPORT_AUTO;
		return TT_OK;
	}
	if (is_one_json_value(data, len))
		root = cJSON_ParseWithLength(data, len);
	*fmt = tt__import_sniff(data, len, root);
	cJSON_Delete(root);
	free(data);
	if (*fmt == TT_IMPORT_AUTO)
		return tt_error_set(err, TT_EFORMAT,
				    "'%s': neither a tokentrace run nor a result file of a tool "
				    "we import (use --from to name its format)", path);
	return TT_OK;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Sorted, each value once: the new length. */
static size_t unique_i64(int64_t *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof *v, cmp_i64);
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* The run reader takes a manifest of up to 64 MiB (format/run_read.c):
 * a matrix too large for it is refused here, not written unreadable. */
#define MAX_MANIFEST_BYTES ((size_t)64 << 20)

static enum tt_code check_manifest_size(const struct tt_manifest *m, struct tt_error *err)
{
	char *json = NULL;
	size_t len;
	enum tt_code rc = tt_manifest_to_json(m, &json, err);

	if (tt_failed(rc))
		return rc;
	len = strlen(json);
	free(json);
	if (len > MAX_MANIFEST_BYTES)
		return tt_error_set(err, TT_EFORMAT, "the imported run's manifest would be %zu bytes "
				    "(%zu cells), more than the 64 MiB a run's reader takes", len,
				    m->n_cells);
	return TT_OK;
}

/* The figures a report shows; those no reported cell of this file has are
 * recorded as unavailable, and a file without traces has no per-request
 * times at all ("trace": no timeline, no TBT distribution). */
static const char *const shown[] = {"total_tok_s", "per_request_tok_s_p50", "ttft_ms_p50",
				    "tbt_ms_p50", "avg_active", "completed", "output_tokens",
				    "measured_s"};

static enum tt_code mark_unavailable(struct tt__imp *im, struct tt_error *err)
{
	int seen[sizeof shown / sizeof *shown] = {0}, any = 0, traced = 0;
	enum tt_code rc;

	for (size_t i = im->first_cell; i < im->m->n_cells; i++) {
		const struct tt_cell_info *c = &im->m->cells[i];
		traced |= c->trace != NULL;
		if (c->trace || !c->n_reported || c->phase != TT_PHASE_DECODE)
			continue;
		any = 1;
		for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
			seen[k] |= tt_cell_reported(c, shown[k], NULL);
	}
	/* No foreign tool here keeps /metrics scrapes in its per-request file:
	 * active requests are the client's count, queueing is not evidenced. */
	if (traced && tt_failed(rc = tt__imp_unavailable(im, "server_metrics", err)))
		return rc;
	if (!any)
		return TT_OK;
	if (tt_failed(rc = tt__imp_unavailable(im, "trace", err)))
		return rc;
	for (size_t k = 0; k < sizeof shown / sizeof *shown; k++)
		if (!seen[k] && tt_failed(rc = tt__imp_unavailable(im, shown[k], err)))
			return rc;
	return TT_OK;
}

/* Import one file into the run being written. */
static enum tt_code import_one(struct tt_run_writer *w, const char *path, const void *mem,
			       size_t mem_len, enum tt_import_format from, char *warn,
			       size_t warn_len, struct tt_error *err)
{
	struct tt__imp im;
	char *data = NULL, sha[65];
	size_t len = 0;
	cJSON *root = NULL;
	enum tt_code rc;
	enum tt_import_format f = from;
	const char *base = strrchr(path, '/');

	memset(&im, 0, sizeof im);
	if (mem) {
		/* A copy: importers rely on the text ending in a NUL. */
		if (!(data = malloc(mem_len + 1)))
			return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", path);
		memcpy(data, mem, mem_len);
		data[mem_len] = '\0';
		len = mem_len;
	} else if (tt_failed(rc = read_file(path, &data, &len, err))) {
		return rc;
	}
	im.file = path;
	im.data = data;
	im.len = len;
	im.w = w;
	im.m = tt_run_writer_manifest(w);
	im.first_cell = im.m->n_cells;
	if (!(im.ids = tt__imp_ids_build(im.m))) {
		rc = tt__imp_nomem(&im, err);
		goto cleanup;
	}
	if (len == 0) {
		rc = tt_error_set(err, TT_EFORMAT, "'%s' is empty (0 bytes)", path);
		goto cleanup;
	}
	if (is_one_json_value(data, len)) {
		rc = tt__imp_parse(&im, data, len, "", &root, err);
		/* JSON lines are many values: not an error for a JSON-lines format. */
		if (tt_failed(rc) && f != TT_IMPORT_AIPERF && !(f == TT_IMPORT_AUTO &&
						     tt__import_sniff(data, len, NULL) == TT_IMPORT_AIPERF))
			goto cleanup;
		rc = TT_OK;
	}
	if (f == TT_IMPORT_AUTO)
		f = tt__import_sniff(data, len, root);
	if (f == TT_IMPORT_AUTO) {
		rc = tt_error_set(err, TT_EFORMAT,
				  "'%s': not a result file of a tool we import (llm-inference-bench, "
				  "its printed report, vLLM bench serve, GenAI-Perf, AIPerf, "
				  "GuideLLM); use --from to name its format", path);
		goto cleanup;
	}
	im.src.format = (char *)formats[f].name;
	im.src.file = (char *)(base ? base + 1 : path);
	im.src.bytes = (int64_t)len;
	tt__sha256_hex(data, len, sha);
	im.src.sha256 = sha;
	if (!formats[f].fn) {
		rc = tt_error_set(err, TT_EARG, "'%s': importing %s files is not built in this "
				  "version", path, formats[f].name);
		goto cleanup;
	}
	rc = formats[f].fn(&im, root, err);
	if (rc > TT_WARN)
		goto cleanup;
	if (tt_failed(rc = mark_unavailable(&im, err)))
		goto cleanup;
	if (tt_manifest_add_source(im.m, &im.src)) {
		rc = tt__imp_nomem(&im, err);
		goto cleanup;
	}
	/* What a report shows of where the run came from (the first file's tool). */
	{
		char note[512];
		snprintf(note, sizeof note, "%s%s%s", im.src.tool, im.src.tool_version ? " v" : "",
			 im.src.tool_version ? im.src.tool_version : "");
		if (tt_failed(rc = tt__imp_note(&im, "tool", note, err)))
			goto cleanup;
		snprintf(note, sizeof note, "%s (%s, %lld bytes, sha256 %s)", im.src.file,
			 im.src.format, (long long)len, sha);
		if (tt_manifest_note(im.m, "imported_from")) {
			char more[1024];
			snprintf(more, sizeof more, "%s; %s", tt_manifest_note(im.m, "imported_from"),
				 note);
			if (tt_manifest_set_note(im.m, "imported_from", more))
				rc = tt__imp_nomem(&im, err);
		} else {
			rc = tt__imp_note(&im, "imported_from", note, err);
		}
		if (tt_failed(rc))
			goto cleanup;
	}
	if (im.newer[0] && warn[0] == '\0')
		snprintf(warn, warn_len, "'%s': %s", path, im.newer);
	rc = TT_OK;
cleanup:
	tt__imp_ids_free(im.ids);
	cJSON_Delete(root);
	free(data);
	return rc;
}

/* ---- directories in progress, for tt_import_abandon ------------------- */

/* Fixed slots, no allocation: a signal handler reads them.  A slot is
 * filled before its flag is set and emptied after the flag is cleared. */
#define TMP_SLOTS 16
static char tmp_path[TMP_SLOTS][PATH_MAX];
static volatile sig_atomic_t tmp_used[TMP_SLOTS];

static int tmp_register(const char *dir)
{
	for (int i = 0; i < TMP_SLOTS; i++)
		if (!tmp_used[i] && strlen(dir) < PATH_MAX) {
			strcpy(tmp_path[i], dir);
			tmp_used[i] = 1;
			return i;
		}
	return -1; /* more at once than slots: not removed on a signal */
}

static void tmp_unregister(int slot)
{
	if (slot >= 0)
		tmp_used[slot] = 0;
}

/* Remove everything under the directory open as fd, depth-first (a run is
 * two levels deep: cells/ and its traces).  System calls only. */
static void rm_at(int fd, int depth)
{
	char buf[4096];
	long n;
	int removed = 1;

	if (depth > 8)
		return;
	/* Passes until one removes nothing (entries removed shift the
	 * directory under getdents: each pass reads it from the start). */
	while (removed) {
		removed = 0;
		lseek(fd, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			off += d->reclen;
			if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0)
				continue;
			if (unlinkat(fd, d->name, 0) == 0) {
				removed = 1;
			} else if (errno == EISDIR || errno == EPERM) {
				int sub = openat(fd, d->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							     O_CLOEXEC);
				if (sub >= 0) {
					rm_at(sub, depth + 1);
					close(sub);
				}
				removed |= unlinkat(fd, d->name, AT_REMOVEDIR) == 0;
			}
		}
	}
}

void tt_import_abandon(void)
{
	int saved = errno;

	for (int i = 0; i < TMP_SLOTS; i++) {
		int fd;
		if (!tmp_used[i])
			continue;
		fd = open(tmp_path[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			rm_at(fd, 0);
			close(fd);
		}
		rmdir(tmp_path[i]);
		tmp_used[i] = 0;
	}
	errno = saved;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write every file into the run directory dir (which exists and is empty). */
static enum tt_code import_into(const char *const *paths, size_t n, const void *mem,
				size_t mem_len, const struct tt_import_opts *opts, const char *dir,
				struct tt_error *err)
{
	struct tt_manifest m;
	struct tt_run_writer *w = NULL;
	struct tt_manifest *wm;
	char warn[1024] = "";
	enum tt_code rc;

	tt_manifest_init(&m);
	if (tt_manifest_set_str(&m.tool_name, "tokentrace-import") ||
	    tt_manifest_set_str(&m.tool_version, tt_version())) {
		tt_manifest_release(&m);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	m.format_minor = TT_RUN_FORMAT_MINOR_IMPORT;
	m.scrape_interval_s = 0;
	/* Unknown unless the source says (run-v1 2.1: 0 = not known); the
	 * writer's default of 4096 would make every request look short
	 * (docs/metrics.md M-short). */
	m.max_tokens = 0;
	rc = tt_run_writer_create(dir, &m, &w, err);
	tt_manifest_release(&m);
	if (tt_failed(rc))
		return rc;
	/* The writer's copy of the manifest went through JSON, which writes the
	 * default endpoint ("completions"): unset again, so that the first file
	 * that says its endpoint sets it (tt__imp_set sets an unset field only);
	 * unset at the end, the default is written. */
	wm = tt_run_writer_manifest(w);
	free(wm->endpoint);
	wm->endpoint = NULL;
	for (size_t i = 0; i < n; i++) {
		rc = import_one(w, paths[i], mem, mem_len, opts ? opts->from : TT_IMPORT_AUTO, warn,
				sizeof warn, err);
		if (rc > TT_WARN)
			goto cleanup;
	}
	wm = tt_run_writer_manifest(w);
	if (!wm->engine && tt_manifest_set_str(&wm->engine, "unknown")) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory");
		goto cleanup;
	}
	wm->n_contexts = unique_i64(wm->contexts, wm->n_contexts);
	wm->n_prefill_contexts = unique_i64(wm->prefill_contexts, wm->n_prefill_contexts);
	qsort(wm->concurrency, wm->n_concurrency, sizeof *wm->concurrency, cmp_int);
	{
		size_t k = 0;
		for (size_t i = 0; i < wm->n_concurrency; i++)
			if (!k || wm->concurrency[k - 1] != wm->concurrency[i])
				wm->concurrency[k++] = wm->concurrency[i];
		wm->n_concurrency = k;
	}
	if (tt_failed(rc = check_manifest_size(wm, err)))
		goto cleanup;
	rc = tt_run_writer_commit(w, err);
	if (!tt_failed(rc) && warn[0])
		rc = tt_error_setv(err, TT_WARN, TT_EVERSION, "%s", warn);
cleanup:
	tt_run_writer_free(w);
	return rc;
}

static int empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return 0;
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

/* Build the run beside dir and rename it into place when complete (a
 * rename onto an empty directory replaces it). */
static enum tt_code import_run(const char *const *paths, size_t n, const void *mem,
			       size_t mem_len, const struct tt_import_opts *opts, const char *dir,
			       struct tt_error *err)
{
	char tmp[PATH_MAX];
	struct stat st;
	enum tt_code rc;
	int slot;

	if (n == 0)
		return tt_error_set(err, TT_EARG, "no file to import");
	if (stat(dir, &st) == 0 && !(S_ISDIR(st.st_mode) && empty_dir(dir)))
		return tt_error_set(err, TT_EIO, "cannot write the run '%s': it exists and is not "
				    "an empty directory", dir);
	if (snprintf(tmp, sizeof tmp, "%s.importing-XXXXXX", dir) >= (int)sizeof tmp)
		return tt_error_set(err, TT_EARG, "run path '%s' is too long", dir);
	if (!mkdtemp(tmp))
		return tt_error_set(err, TT_EIO, "cannot create '%s': %s", tmp, strerror(errno));
	slot = tmp_register(tmp);
	rc = import_into(paths, n, mem, mem_len, opts, tmp, err);
	if (rc <= TT_WARN && rename(tmp, dir) != 0) {
		rc = tt_error_set(err, TT_EIO, "cannot rename '%s' to '%s': %s", tmp, dir,
				  strerror(errno));
	}
	tmp_unregister(slot);
	if (rc > TT_WARN)
		rm_tree(tmp);
	return rc;
}

enum tt_code tt_import_files(const char *const *paths, size_t n, const struct tt_import_opts *opts,
			     const char *dir, struct tt_error *err)
{
	return import_run(paths, n, NULL, 0, opts, dir, err);
}

enum tt_code tt_import_memory(const void *data, size_t len, const char *name,
			      const struct tt_import_opts *opts, const char *dir,
			      struct tt_error *err)
{
	if (len > TT_IMPORT_MAX_BYTES)
		return tt_error_set(err, TT_EFORMAT, "'%s': %zu bytes, more than the %zu an import "
				    "reads", name, len, TT_IMPORT_MAX_BYTES);
	return import_run(&name, 1, data ? data : "", len, opts, dir, err);
}

/* Does the file start (after white space) with '{' or '['? */
static int json_text(const char *path)
{
	char buf[256];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	n = read(fd, buf, sizeof buf);
	close(fd);
	return n > 0 && is_one_json_value(buf, (size_t)n);
}

/* A private run's directory: its slot is kept in the bytes before the
 * path (tt__run_adopt hands the path back to free_tmp). */
struct tmp_dir {
	int slot;
	char path[];
};

static void free_tmp(void *ctx)
{
	struct tmp_dir *t = (struct tmp_dir *)((char *)ctx - offsetof(struct tmp_dir, path));

	tmp_unregister(t->slot);
	rm_tree(t->path);
	free(t);
}

enum tt_code tt_import_open(const char *path, const struct tt_import_opts *opts,
			    struct tt_run **out, struct tt_error *err)
{
	enum tt_import_format f = opts ? opts->from : TT_IMPORT_AUTO;
	struct tt_import_opts o = {.from = f};
	struct tt_error werr;
	const char *tmpdir = getenv("TMPDIR");
	struct tmp_dir *t;
	char *dir;
	struct tt_run *run = NULL;
	enum tt_code rc, irc;

	if (f == TT_IMPORT_AUTO) {
		struct tt_error derr;
		tt_error_clear(&derr);
		rc = tt_import_detect(path, &f, &derr);
		/* A JSON text that is not one we know (truncated, say) is for the
		 * importer to explain; whatever else is not a foreign file goes to
		 * the run reader, whose messages say best what is wrong with a run. */
		if (tt_failed(rc) && derr.kind == TT_EFORMAT && json_text(path))
			f = TT_IMPORT_AUTO;
		else if (tt_failed(rc) || f == TT_IMPORT_AUTO)
			return tt_run_open(path, out, err);
		o.from = f;
	}
	if (!tmpdir || !tmpdir[0])
		tmpdir = "/tmp";
	if (!(t = malloc(sizeof *t + strlen(tmpdir) + 32)))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	dir = t->path;
	sprintf(dir, "%s/tokentrace-import-XXXXXX", tmpdir);
	if (!mkdtemp(dir)) {
		rc = tt_error_set(err, TT_EIO, "cannot create a temporary directory in '%s': %s",
				  tmpdir, strerror(errno));
		free(t);
		return rc;
	}
	t->slot = tmp_register(dir);
	tt_error_clear(&werr);
	irc = import_into(&path, 1, NULL, 0, &o, dir, &werr);
	if (irc > TT_WARN) {
		if (err)
			*err = werr;
		free_tmp(dir);
		return irc;
	}
	rc = tt_run_open(dir, &run, err);
	if (tt_failed(rc)) {
		free_tmp(dir);
		return rc;
	}
	if (tt__run_adopt(run, path, free_tmp, dir)) {
		tt_run_free(run);
		free_tmp(dir);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	*out = run;
	if (irc == TT_WARN && err)
		*err = werr;
	return irc;
}
