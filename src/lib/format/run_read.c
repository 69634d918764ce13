/* Run reader: a run directory, or an archive of one read in memory with
 * libarchive (formats/run-v1.md section 1).  Only the manifest is read at
 * open; traces are read one cell at a time. */
#include "tokentrace/run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "format/run_adopt.h"
#include "format/run_source.h"
#include "format/trace_stream.h"

#define MAX_MANIFEST ((size_t)64 << 20)

struct tt_run {
	char *path;
	int is_archive;
	char *prefix;           /* archive: directory holding manifest.json, "" or "RUN/" */
	struct tt_manifest m;
	char *display;          /* tt_run_path, when not path (run_adopt.h) */
	void (*on_free)(void *);
	void *on_free_ctx;
};

static struct tt__archive *open_archive(const char *path, struct tt_error *err)
{
	struct tt__archive *ar = NULL;

	if (tt__archive_open(path, &ar, err))
		return NULL;
	return ar;
}

/* An entry the reader may take data from: a regular file, not encrypted. */
static enum tt_code check_entry(struct archive_entry *e, const char *arch, struct tt_error *err)
{
	if (archive_entry_filetype(e) != AE_IFREG)
		return tt_error_set(err, TT_EFORMAT, "'%s' in '%s' is not a regular file",
				    archive_entry_pathname(e), arch);
	if (archive_entry_is_encrypted(e))
		return tt_error_set(err, TT_EFORMAT, "'%s' in '%s' is encrypted: tokentrace does "
				    "not read encrypted archives", archive_entry_pathname(e), arch);
	return TT_OK;
}

/* Read the current entry's data (at most max bytes). */
static enum tt_code read_entry(struct tt__archive *ar, struct archive_entry *e, const char *arch,
			       size_t max, char **data, size_t *len, struct tt_error *err)
{
	struct archive *a = tt__archive_handle(ar);
	const char *damage = NULL;
	size_t cap = 64 * 1024, n = 0;
	char *buf;
	la_int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
	enum tt_code rc = check_entry(e, arch, err);

	if (tt_failed(rc))
		return rc;
	if (size > 0) {
		if ((size_t)size > max)
			return tt_error_set(err, TT_EFORMAT, "'%s' in '%s' is too large",
					    archive_entry_pathname(e), arch);
		cap = (size_t)size + 1;
	}
	buf = malloc(cap);
	if (!buf)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	for (;;) {
		la_ssize_t k;
		if (n + 1 >= cap) {
			char *nb;
			if (cap > max) {
				free(buf);
				return tt_error_set(err, TT_EFORMAT, "'%s' in '%s' is too large",
						    archive_entry_pathname(e), arch);
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return tt_error_set(err, TT_ENOMEM, "out of memory");
			}
			buf = nb;
			cap *= 2;
		}
		k = archive_read_data(a, buf + n, cap - n - 1);
		if (k < 0) {
			/* the manifest must be whole: a cut one is no partial success */
			damage = tt__archive_damage(ar);
			rc = tt_error_set(err, TT_ETRUNC, "'%s' in '%s' is damaged: %s",
					  archive_entry_pathname(e), arch, damage ? damage : "unknown error");
			free(buf);
			return rc;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return TT_OK;
}

static int ends_with_manifest(const char *name, size_t *dirlen)
{
	size_t n = strlen(name), m = strlen("manifest.json");
	if (n < m || strcmp(name + n - m, "manifest.json") != 0)
		return 0;
	if (n > m && name[n - m - 1] != '/')
		return 0;
	*dirlen = n - m;
	return 1;
}

static enum tt_code open_archive_run(struct tt_run *run, struct tt_error *err)
{
	struct tt__archive *ar = open_archive(run->path, err);
	struct archive *a = ar ? tt__archive_handle(ar) : NULL;
	struct archive_entry *e;
	char *best = NULL;
	size_t best_len = 0, best_dir = 0;
	enum tt_code rc = TT_OK;
	int r;

	if (!ar)
		return err ? err->code : TT_FAILED;
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const char *name = archive_entry_pathname(e);
		size_t dirlen;
		/* The shortest manifest path wins: a run archived with nested runs
		 * inside (unusual) still opens its top-level run. */
		if (name && ends_with_manifest(name, &dirlen) && (!best || dirlen < best_dir)) {
			char *data = NULL;
			size_t len = 0;
			rc = read_entry(ar, e, run->path, MAX_MANIFEST, &data, &len, err);
			if (tt_failed(rc))
				goto cleanup;
			free(best);
			free(run->prefix);
			best = data;
			best_len = len;
			best_dir = dirlen;
			run->prefix = strndup(name, dirlen);
			if (!run->prefix) {
				rc = tt_error_set(err, TT_ENOMEM, "out of memory");
				goto cleanup;
			}
		}
	}
	if (r != ARCHIVE_EOF && !best) {
		rc = tt_error_set(err, TT_EFORMAT, "cannot read '%s' as a run archive: %s", run->path,
				  tt__archive_damage(ar) ? tt__archive_damage(ar) : "unknown error");
		goto cleanup;
	}
	if (!best && tt__archive_damage(ar)) {
		rc = tt_error_set(err, TT_EFORMAT, "'%s' holds no readable manifest.json: %s",
				  run->path, tt__archive_damage(ar));
		goto cleanup;
	}
	if (!best) {
		rc = tt_error_set(err, TT_EFORMAT, "'%s' holds no manifest.json: not a run archive",
				  run->path);
		goto cleanup;
	}
	{
		char name[4200];
		snprintf(name, sizeof name, "%s:%smanifest.json", run->path, run->prefix);
		rc = tt_manifest_from_json(best, best_len, name, &run->m, err);
	}
cleanup:
	free(best);
	tt__archive_free(ar);
	return rc;
}

enum tt_code tt_run_open(const char *path, struct tt_run **out, struct tt_error *err)
{
	struct tt_run *run;
	struct stat st;
	enum tt_code rc;

	if (stat(path, &st) != 0)
		return tt_error_set(err, errno == ENOENT ? TT_ENOTFOUND : TT_EIO,
				    "cannot open run '%s': %s", path, strerror(errno));
	run = calloc(1, sizeof *run);
	if (!run || !(run->path = strdup(path))) {
		free(run);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	tt_manifest_init(&run->m);
	if (S_ISDIR(st.st_mode)) {
		char mp[4200], *data = NULL;
		size_t len = 0;
		struct tt_error ferr;
		snprintf(mp, sizeof mp, "%s/manifest.json", path);
		tt_error_clear(&ferr);
		rc = tt__read_regular(mp, "manifest", MAX_MANIFEST, &data, &len, &ferr);
		if (rc > TT_WARN && ferr.kind == TT_ENOTFOUND)
			rc = tt_error_set(err, TT_EFORMAT,
					  "'%s' has no manifest.json: not a run directory", path);
		else if (tt_failed(rc) && err)
			*err = ferr;
		if (!tt_failed(rc))
			rc = tt_manifest_from_json(data, len, mp, &run->m, err);
		free(data);
	} else if (!S_ISREG(st.st_mode)) {
		rc = tt_error_set(err, TT_EFORMAT, "'%s' is neither a run directory nor a regular "
				  "file (an archive): not a run", path);
	} else if (st.st_size == 0) {
		rc = tt_error_set(err, TT_EFORMAT, "'%s' is empty (0 bytes): not a run", path);
	} else {
		run->is_archive = 1;
		rc = open_archive_run(run, err);
	}
	if (tt_failed(rc)) {
		tt_run_free(run);
		return rc;
	}
	*out = run;
	return TT_OK;
}

const struct tt_manifest *tt_run_manifest(const struct tt_run *run)
{
	return &run->m;
}

const char *tt_run_path(const struct tt_run *run)
{
	return run->display ? run->display : run->path;
}

int tt__run_adopt(struct tt_run *run, const char *display, void (*fn)(void *), void *ctx)
{
	char *d = display ? strdup(display) : NULL;

	if (display && !d)
		return -1;
	free(run->display);
	run->display = d;
	run->on_free = fn;
	run->on_free_ctx = ctx;
	return 0;
}

void tt_run_free(struct tt_run *run)
{
	if (!run)
		return;
	tt_manifest_release(&run->m);
	free(run->path);
	free(run->prefix);
	free(run->display);
	if (run->on_free)
		run->on_free(run->on_free_ctx);
	free(run);
}

static void cell_name(const struct tt_run *run, size_t cell, char *name, size_t len)
{
	snprintf(name, len, "%s%s%s (cell %s)", run->path, run->is_archive ? ":" : "/",
		 run->m.cells[cell].trace, run->m.cells[cell].id);
}

static ptrdiff_t read_fd(void *ctx, void *buf, size_t len)
{
	int fd = *(int *)ctx;
	for (;;) {
		ssize_t k = read(fd, buf, len);
		if (k < 0 && errno == EINTR)
			continue;
		return k;
	}
}

static ptrdiff_t read_archive(void *ctx, void *buf, size_t len)
{
	la_ssize_t k = archive_read_data(ctx, buf, len);
	return k < 0 ? -1 : (ptrdiff_t)k;
}

/* A 0-byte trace of a cell the capture had not finished is what a kill
 * right after the cell started leaves: nothing recorded yet, not damage. */
static int empty_unfinished(const struct tt_cell_info *c, uint64_t size)
{
	return size == 0 && c->state != TT_CELL_DONE;
}

/* Stream one cell's trace from a file or the current archive entry; memory
 * stays at a frame or two whatever the trace's size. */
static enum tt_code decode_cell_fd(struct tt_run *run, size_t cell, const char *path,
				   const struct tt_trace_visitor *v, struct tt_error *err)
{
	char name[4200], what[300];
	int fd;
	uint64_t size = 0;
	enum tt_code rc;

	snprintf(what, sizeof what, "cell '%s': trace", run->m.cells[cell].id);
	rc = tt__open_regular(path, what, TT__MAX_TRACE_BYTES, &fd, &size, err);
	if (tt_failed(rc))
		return rc;
	if (empty_unfinished(&run->m.cells[cell], size)) {
		close(fd);
		return TT_OK;
	}
	cell_name(run, cell, name, sizeof name);
	rc = tt__trace_decode_stream(read_fd, &fd, name, v, err);
	close(fd);
	return rc;
}

static enum tt_code decode_cell_archive(struct tt_run *run, size_t cell, struct tt__archive *ar,
					struct archive_entry *e, const struct tt_trace_visitor *v,
					struct tt_error *err)
{
	char name[4200];
	struct archive *a = tt__archive_handle(ar);
	enum tt_code rc = check_entry(e, run->path, err);

	if (tt_failed(rc))
		return rc;
	if (archive_entry_size_is_set(e) && archive_entry_size(e) == 0 &&
	    empty_unfinished(&run->m.cells[cell], 0))
		return TT_OK;
	cell_name(run, cell, name, sizeof name);
	rc = tt__trace_decode_stream(read_archive, a, name, v, err);
	if (rc == TT_WARN || (rc > TT_WARN && err && (err->kind == TT_EFORMAT || err->kind == TT_ETRUNC ||
						     err->kind == TT_EIO))) {
		const char *ae = tt__archive_damage(ar);
		if (ae && err) {
			tt_error_prefix(err, "archive: %s", ae);
			if (rc > TT_WARN)
				err->kind = TT_ETRUNC; /* the archive broke, not the machine */
		}
	}
	return rc;
}

enum tt_code tt_run_read_cell(struct tt_run *run, size_t cell, const struct tt_trace_visitor *v,
			      struct tt_error *err)
{
	const struct tt_cell_info *c;
	enum tt_code rc;

	if (cell >= run->m.n_cells)
		return tt_error_set(err, TT_EARG, "run '%s' has no cell %zu", run->path, cell);
	c = &run->m.cells[cell];
	if (!c->trace)
		return tt_error_set(err, TT_ENOTFOUND, "cell '%s' of '%s' has no trace", c->id,
				    run->path);
	if (!run->is_archive) {
		char p[4200];
		snprintf(p, sizeof p, "%s/%s", run->path, c->trace);
		return decode_cell_fd(run, cell, p, v, err);
	}
	{
		struct tt__archive *ar = open_archive(run->path, err);
		struct archive_entry *e;
		char want[4200];
		int r;

		if (!ar)
			return err ? err->code : TT_FAILED;
		snprintf(want, sizeof want, "%s%s", run->prefix, c->trace);
		rc = TT_EOF;
		while ((r = archive_read_next_header(tt__archive_handle(ar), &e)) == ARCHIVE_OK ||
		       r == ARCHIVE_WARN) {
			if (strcmp(archive_entry_pathname(e), want) != 0)
				continue;
			rc = decode_cell_archive(run, cell, ar, e, v, err);
			break;
		}
		if (rc == TT_EOF) {
			const char *why = r != ARCHIVE_EOF ? tt__archive_damage(ar) : NULL;
			rc = tt_error_set(err, why ? TT_ETRUNC : TT_ENOTFOUND,
					  "cell '%s': trace '%s' missing from '%s'%s%s", c->id, want,
					  run->path, why ? ", which is damaged before it: " : "",
					  why ? why : "");
		}
		tt__archive_free(ar);
		return rc;
	}
}

/* How one cell's result counts for the whole run: a cell whose trace is
 * missing, malformed or cut short is damage the reader skips (TT_WARN, the
 * other cells are good); anything else (out of memory, an I/O error) is a
 * failure of the call, whatever the cells after it hold. */
static enum tt_code cell_result(enum tt_code rc, const struct tt_error *cerr)
{
	if (rc <= TT_WARN)
		return rc == TT_EOF ? TT_OK : rc;
	if (cerr->kind == TT_ENOTFOUND || cerr->kind == TT_EFORMAT || cerr->kind == TT_ETRUNC)
		return TT_WARN;
	return rc;
}

/* One cell read (or found missing): tell the visitor, fold its result into
 * the run's (acc keeps the worst severity and names every cell that was
 * not read cleanly). */
static void cell_done(const struct tt_run_visitor *v, size_t i, enum tt_code rc,
		      const struct tt_error *cerr, struct tt_error *acc)
{
	if (v->end_cell)
		v->end_cell(v->ctx, i, rc, cerr);
	if (rc != TT_OK) {
		struct tt_error part = *cerr;
		part.code = cell_result(rc, cerr);
		if (!part.msg[0])
			snprintf(part.msg, sizeof part.msg, "%s", tt_kind_str(cerr->kind));
		tt_error_combine(acc, part.code, &part);
	}
}

static int cmp_trace(const void *a, const void *b)
{
	const struct tt_cell_info *x = *(const struct tt_cell_info *const *)a;
	const struct tt_cell_info *y = *(const struct tt_cell_info *const *)b;
	int c = strcmp(x->trace, y->trace);
	/* Equal names keep manifest order. */
	return c ? c : (x < y ? -1 : x > y);
}

static int cmp_name(const void *a, const void *b)
{
	const struct tt_cell_info *x = *(const struct tt_cell_info *const *)a;
	const struct tt_cell_info *y = *(const struct tt_cell_info *const *)b;
	return strcmp(x->trace, y->trace);
}

enum tt_code tt_run_read_all(struct tt_run *run, const struct tt_run_visitor *v,
			     struct tt_error *err)
{
	struct tt_trace_visitor tv = v->trace;
	struct tt_error acc;
	unsigned char *seen = NULL;
	struct tt_cell_info **byname = NULL;
	size_t nbyname = 0;
	char damage[300] = "";

	tv.ctx = v->ctx;
	tt_error_clear(&acc);
	if (!run->is_archive) {
		for (size_t i = 0; i < run->m.n_cells; i++) {
			struct tt_error cerr;
			enum tt_code rc;
			if (!run->m.cells[i].trace)
				continue;
			tt_error_clear(&cerr);
			if (v->begin_cell)
				v->begin_cell(v->ctx, i);
			rc = tt_run_read_cell(run, i, &tv, &cerr);
			cell_done(v, i, rc, &cerr, &acc);
		}
		if (acc.code != TT_OK && err)
			*err = acc;
		return acc.code;
	}
	seen = calloc(run->m.n_cells + 1, 1);
	byname = malloc((run->m.n_cells + 1) * sizeof *byname);
	if (!seen || !byname) {
		free(seen);
		free(byname);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	/* Entries are matched to cells by a sorted index: linear in the size
	 * of the archive, whatever the number of cells. */
	for (size_t i = 0; i < run->m.n_cells; i++)
		if (run->m.cells[i].trace)
			byname[nbyname++] = &run->m.cells[i];
	qsort(byname, nbyname, sizeof *byname, cmp_trace);
	{
		struct tt__archive *ar = open_archive(run->path, err);
		struct archive_entry *e;
		size_t plen = strlen(run->prefix);
		int r = ARCHIVE_EOF;

		if (!ar) {
			free(seen);
			free(byname);
			return err ? err->code : TT_FAILED;
		}
		while ((r = archive_read_next_header(tt__archive_handle(ar), &e)) == ARCHIVE_OK ||
		       r == ARCHIVE_WARN) {
			const char *name = archive_entry_pathname(e);
			struct tt_cell_info key, *kp = &key, **hit;
			struct tt_error cerr;
			enum tt_code rc;
			size_t i;

			if (!name || strncmp(name, run->prefix, plen) != 0)
				continue;
			key.trace = (char *)name + plen;
			hit = bsearch(&kp, byname, nbyname, sizeof *byname, cmp_name);
			if (!hit)
				continue;
			/* Several cells may name one trace: the first not yet read. */
			while (hit > byname && strcmp(hit[-1]->trace, key.trace) == 0)
				hit--;
			while (hit < byname + nbyname && strcmp((*hit)->trace, key.trace) == 0 &&
			       seen[*hit - run->m.cells])
				hit++;
			if (hit == byname + nbyname || strcmp((*hit)->trace, key.trace) != 0)
				continue;
			i = (size_t)(*hit - run->m.cells);
			seen[i] = 1;
			tt_error_clear(&cerr);
			if (v->begin_cell)
				v->begin_cell(v->ctx, i);
			rc = decode_cell_archive(run, i, ar, e, &tv, &cerr);
			cell_done(v, i, rc, &cerr, &acc);
		}
		if (r != ARCHIVE_EOF && tt__archive_damage(ar))
			snprintf(damage, sizeof damage, "%s", tt__archive_damage(ar));
		tt__archive_free(ar);
	}
	for (size_t i = 0; i < run->m.n_cells; i++) {
		struct tt_error cerr;
		enum tt_code rc;
		if (seen[i] || !run->m.cells[i].trace)
			continue;
		if (damage[0])
			rc = tt_error_set(&cerr, TT_ETRUNC, "cell '%s': trace '%s%s' not read: '%s' is "
					  "damaged before it: %s", run->m.cells[i].id, run->prefix,
					  run->m.cells[i].trace, run->path, damage);
		else
			rc = tt_error_set(&cerr, TT_ENOTFOUND, "cell '%s': trace '%s%s' missing from '%s'",
					  run->m.cells[i].id, run->prefix, run->m.cells[i].trace,
					  run->path);
		if (v->begin_cell)
			v->begin_cell(v->ctx, i);
		cell_done(v, i, rc, &cerr, &acc);
	}
	free(seen);
	free(byname);
	if (acc.code != TT_OK && err)
		*err = acc;
	return acc.code;
}
