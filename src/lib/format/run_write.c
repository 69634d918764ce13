/* Run directory writer: formats/run-v1.md sections 1 and 2.  The manifest is
 * replaced atomically so a crash leaves the old or the new one. */
#include "tokentrace/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tt_run_writer {
	char *dir;
	struct tt_manifest m;
};

static enum tt_code fsync_path(const char *path, int dir, struct tt_error *err)
{
	int fd = open(path, (dir ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (fsync(fd) != 0 && errno != EINVAL) {
		int e = errno;
		close(fd);
		return tt_error_set(err, TT_EIO, "cannot fsync '%s': %s", path, strerror(e));
	}
	close(fd);
	return TT_OK;
}

static enum tt_code write_file(const char *path, const char *data, size_t len,
			       struct tt_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = data;

	if (fd < 0)
		return tt_error_set(err, TT_EIO, "cannot create '%s': %s", path, strerror(errno));
	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			close(fd);
			return tt_error_set(err, TT_EIO, "cannot write '%s': %s", path, strerror(e));
		}
		p += k;
		len -= (size_t)k;
	}
	if (fsync(fd) != 0 && errno != EINVAL) {
		int e = errno;
		close(fd);
		return tt_error_set(err, TT_EIO, "cannot fsync '%s': %s", path, strerror(e));
	}
	if (close(fd) != 0)
		return tt_error_set(err, TT_EIO, "cannot close '%s': %s", path, strerror(errno));
	return TT_OK;
}

enum tt_code tt_run_writer_commit(struct tt_run_writer *w, struct tt_error *err)
{
	char *json = NULL, *tmp = NULL, *final = NULL;
	size_t n = strlen(w->dir) + 32;
	enum tt_code rc;

	rc = tt_manifest_to_json(&w->m, &json, err);
	if (tt_failed(rc))
		return rc;
	tmp = malloc(n);
	final = malloc(n);
	if (!tmp || !final) {
		rc = tt_error_set(err, TT_ENOMEM, "out of memory");
		goto cleanup;
	}
	snprintf(tmp, n, "%s/manifest.json.tmp", w->dir);
	snprintf(final, n, "%s/manifest.json", w->dir);
	rc = write_file(tmp, json, strlen(json), err);
	if (tt_failed(rc)) {
		unlink(tmp); /* no stale half-written manifest.json.tmp (disk full) */
		goto cleanup;
	}
	if (rename(tmp, final) != 0) {
		rc = tt_error_set(err, TT_EIO, "cannot rename '%s' to '%s': %s", tmp, final,
				  strerror(errno));
		unlink(tmp);
		goto cleanup;
	}
	rc = fsync_path(w->dir, 1, err);
cleanup:
	free(json);
	free(tmp);
	free(final);
	return rc;
}

static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			empty = 0;
			break;
		}
	closedir(d);
	return empty;
}

enum tt_code tt_run_writer_create(const char *dir, const struct tt_manifest *m,
				  struct tt_run_writer **out, struct tt_error *err)
{
	struct tt_run_writer *w;
	char cells[4096];
	enum tt_code rc;

	if (mkdir(dir, 0755) != 0) {
		if (errno != EEXIST)
			return tt_error_set(err, TT_EIO, "cannot create run directory '%s': %s", dir,
					    strerror(errno));
		if (!dir_is_empty(dir))
			return tt_error_set(err, TT_EARG,
					    "run directory '%s' already exists and is not empty "
					    "(use --resume to continue it, or another -o)", dir);
	}
	snprintf(cells, sizeof cells, "%s/cells", dir);
	if (mkdir(cells, 0755) != 0 && errno != EEXIST)
		return tt_error_set(err, TT_EIO, "cannot create '%s': %s", cells, strerror(errno));
	w = calloc(1, sizeof *w);
	if (!w || !(w->dir = strdup(dir))) {
		free(w);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	rc = tt_manifest_copy(&w->m, m, err);
	if (!tt_failed(rc))
		rc = tt_run_writer_commit(w, err);
	if (tt_failed(rc)) {
		tt_run_writer_free(w);
		return rc;
	}
	*out = w;
	return TT_OK;
}

enum tt_code tt_run_writer_resume(const char *dir, struct tt_run_writer **out,
				  struct tt_error *err)
{
	struct tt_run *run = NULL;
	struct tt_run_writer *w;
	struct stat st;
	enum tt_code rc;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return tt_error_set(err, TT_EARG, "cannot resume '%s': not a run directory", dir);
	rc = tt_run_open(dir, &run, err);
	if (tt_failed(rc))
		return rc;
	w = calloc(1, sizeof *w);
	if (!w || !(w->dir = strdup(dir))) {
		free(w);
		tt_run_free(run);
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	rc = tt_manifest_copy(&w->m, tt_run_manifest(run), err);
	tt_run_free(run);
	if (tt_failed(rc)) {
		tt_run_writer_free(w);
		return rc;
	}
	*out = w;
	return TT_OK;
}

struct tt_manifest *tt_run_writer_manifest(struct tt_run_writer *w)
{
	return &w->m;
}

const char *tt_run_writer_dir(const struct tt_run_writer *w)
{
	return w->dir;
}

enum tt_code tt_run_writer_open_cell(struct tt_run_writer *w, size_t cell,
				     const struct tt_trace_opts *opts,
				     struct tt_trace_writer **out, struct tt_error *err)
{
	char rel[256], path[4096];

	if (cell >= w->m.n_cells)
		return tt_error_set(err, TT_EARG, "no cell %zu in run '%s'", cell, w->dir);
	snprintf(rel, sizeof rel, "cells/%s.ttz", w->m.cells[cell].id);
	snprintf(path, sizeof path, "%s/%s", w->dir, rel);
	if (tt_manifest_set_str(&w->m.cells[cell].trace, rel))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	return tt_trace_writer_open(path, opts, out, err);
}

void tt_run_writer_free(struct tt_run_writer *w)
{
	if (!w)
		return;
	tt_manifest_release(&w->m);
	free(w->dir);
	free(w);
}
