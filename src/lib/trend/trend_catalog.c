/* trend: the catalog (formats/catalog-v1.md), an SQLite file that keeps
 * each run's trend figures under the run's content hash and the analysis
 * settings they depend on, so that a history of thousands of runs is
 * analysed once.  A run found there gives exactly the figures its analysis
 * gave when it was stored: the trend's answer is the same either way. */
#define _GNU_SOURCE /* realpath, st_mtim */
#include "trend/trend_impl.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/c_locale.h"
#include "import/imp.h" /* tt__sha256_hex */

#define CATALOG_APP_ID 0x74747463 /* "tttc" */
#define CATALOG_VERSION 1

static const char *const schema =
	"CREATE TABLE IF NOT EXISTS runs ("
	" hash TEXT NOT NULL, settings TEXT NOT NULL, engine TEXT, engine_version TEXT,"
	" start_unix_ns INTEGER NOT NULL, imported INTEGER NOT NULL, n_cells INTEGER NOT NULL,"
	" stored_unix_s INTEGER NOT NULL, PRIMARY KEY (hash, settings));"
	"CREATE TABLE IF NOT EXISTS run_keys ("
	" hash TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,"
	" PRIMARY KEY (hash, name));"
	"CREATE TABLE IF NOT EXISTS cells ("
	" hash TEXT NOT NULL, settings TEXT NOT NULL, idx INTEGER NOT NULL, id TEXT NOT NULL,"
	" phase INTEGER NOT NULL, status TEXT NOT NULL, total_tok_s REAL,"
	" per_request_tok_s REAL, ttft_p50_ms REAL, ttft_tail_ms REAL, tbt_p50_ms REAL,"
	" tbt_tail_ms REAL, prefill_tok_s REAL, PRIMARY KEY (hash, settings, idx));"
	"CREATE TABLE IF NOT EXISTS files ("
	" path TEXT NOT NULL PRIMARY KEY, stamp TEXT NOT NULL, hash TEXT NOT NULL);";

enum {
	Q_RUN, Q_KEY, Q_CELLS, Q_PUT_RUN, Q_PUT_KEY, Q_DEL_CELLS, Q_PUT_CELL, Q_FILE, Q_PUT_FILE,
	Q_COUNT_
};

static const char *const sql[Q_COUNT_] = {
	"SELECT engine, engine_version, start_unix_ns, imported, n_cells FROM runs"
	" WHERE hash = ?1 AND settings = ?2",
	"SELECT value FROM run_keys WHERE hash = ?1 AND name = ?2",
	"SELECT idx, id, phase, status, total_tok_s, per_request_tok_s, ttft_p50_ms,"
	" ttft_tail_ms, tbt_p50_ms, tbt_tail_ms, prefill_tok_s FROM cells"
	" WHERE hash = ?1 AND settings = ?2 ORDER BY idx",
	"INSERT OR REPLACE INTO runs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	"INSERT OR IGNORE INTO run_keys VALUES (?1, ?2, ?3)",
	"DELETE FROM cells WHERE hash = ?1 AND settings = ?2",
	"INSERT INTO cells VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	"SELECT stamp, hash FROM files WHERE path = ?1",
	"INSERT OR REPLACE INTO files VALUES (?1, ?2, ?3)",
};

struct tt_trend_catalog {
	sqlite3 *db;
	sqlite3_stmt *q[Q_COUNT_];
	char path[1024];
};

static enum tt_code db_error(struct tt_trend_catalog *c, struct tt_error *err, const char *what)
{
	return tt_error_set(err, TT_EIO, "catalog '%s': %s: %s", c->path, what,
			    c->db ? sqlite3_errmsg(c->db) : "cannot open");
}

void tt_trend_catalog_close(struct tt_trend_catalog *c)
{
	if (!c)
		return;
	for (int i = 0; i < Q_COUNT_; i++)
		sqlite3_finalize(c->q[i]);
	sqlite3_close(c->db);
	free(c);
}

enum tt_code tt_trend_catalog_open(const char *path, struct tt_trend_catalog **out,
				   struct tt_error *err)
{
	struct tt_trend_catalog *c;
	sqlite3_stmt *st = NULL;
	int app = 0, ver = 0;
	char *msg = NULL;

	*out = NULL;
	if (!(c = calloc(1, sizeof *c)))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	snprintf(c->path, sizeof c->path, "%s", path);
	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
	    SQLITE_OK) {
		db_error(c, err, "cannot open");
		tt_trend_catalog_close(c);
		return TT_FAILED;
	}
	sqlite3_busy_timeout(c->db, 10000);
	/* What the file is: ours (application_id), of a version we know. */
	if (sqlite3_prepare_v2(c->db, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		db_error(c, err, "not an SQLite database");
		tt_trend_catalog_close(c);
		return TT_FAILED;
	}
	app = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		ver = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (app == 0 && ver == 0) {
		/* new (or some empty database): make it ours */
		if (sqlite3_exec(c->db, "PRAGMA journal_mode=WAL", NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(c->db, schema, NULL, NULL, &msg) != SQLITE_OK ||
		    sqlite3_exec(c->db, "PRAGMA application_id = 1953789027; PRAGMA user_version = 1;"
				 "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
			tt_error_set(err, TT_EIO, "catalog '%s': cannot create its tables: %s", path,
				     msg ? msg : sqlite3_errmsg(c->db));
			sqlite3_free(msg);
			tt_trend_catalog_close(c);
			return TT_FAILED;
		}
	} else if (app != CATALOG_APP_ID) {
		tt_error_set(err, TT_EFORMAT, "catalog '%s': an SQLite database of another "
			     "application (application_id %d), not a tokentrace catalog", path, app);
		tt_trend_catalog_close(c);
		return TT_FAILED;
	} else if (ver != CATALOG_VERSION) {
		tt_error_set(err, TT_EVERSION, "catalog '%s': version %d; this tokentrace "
			     "understands version %d", path, ver, CATALOG_VERSION);
		tt_trend_catalog_close(c);
		return TT_FAILED;
	}
	sqlite3_exec(c->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
	/* every table exists (IF NOT EXISTS: a no-op on a complete catalog) */
	sqlite3_exec(c->db, schema, NULL, NULL, NULL);
	for (int i = 0; i < Q_COUNT_; i++)
		if (sqlite3_prepare_v2(c->db, sql[i], -1, &c->q[i], NULL) != SQLITE_OK) {
			db_error(c, err, "its tables are not as formats/catalog-v1.md says");
			tt_trend_catalog_close(c);
			return TT_FAILED;
		}
	*out = c;
	return TT_OK;
}

/* ---- the content hash -------------------------------------------------- */

static enum tt_code read_file(const char *path, char **data, size_t *len, struct tt_error *err)
{
	FILE *f = fopen(path, "rb");
	char *d = NULL;
	size_t n = 0, cap = 0;

	*data = NULL;
	*len = 0;
	if (!f)
		return tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		size_t r;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 1 << 16;
			char *g = realloc(d, nc);
			if (!g) {
				free(d);
				fclose(f);
				return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", path);
			}
			d = g;
			cap = nc;
		}
		r = fread(d + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		free(d);
		fclose(f);
		return tt_error_set(err, TT_EIO, "cannot read '%s'", path);
	}
	fclose(f);
	*data = d;
	*len = n;
	return TT_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum tt_code tt_trend_run_hash(const char *path, char hex[65], struct tt_error *err)
{
	struct stat st;
	struct tt_buf list;
	char p[4200], **names = NULL;
	size_t n = 0, cap = 0;
	enum tt_code rc = TT_OK;
	DIR *d;
	struct dirent *de;

	if (stat(path, &st) != 0)
		return tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		char *data;
		size_t len;
		if (tt_failed(read_file(path, &data, &len, err)))
			return TT_FAILED;
		tt__sha256_hex(data, len, hex);
		free(data);
		return TT_OK;
	}
	/* a run directory: manifest.json and the files of cells/, each as
	 * "name size sha256\n", then the hash of that list */
	snprintf(p, sizeof p, "%s/cells", path);
	if ((d = opendir(p))) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 32;
				char **g = realloc(names, nc * sizeof *g);
				if (!g) {
					rc = tt_error_set(err, TT_ENOMEM, "out of memory");
					break;
				}
				names = g;
				cap = nc;
			}
			if (!(names[n] = malloc(strlen(de->d_name) + 7))) {
				rc = tt_error_set(err, TT_ENOMEM, "out of memory");
				break;
			}
			sprintf(names[n++], "cells/%s", de->d_name);
		}
		closedir(d);
	}
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	tt_buf_init(&list, 0);
	for (size_t i = 0; i <= n && !tt_failed(rc); i++) {
		const char *name = i ? names[i - 1] : "manifest.json";
		char *data, h[65];
		size_t len;

		snprintf(p, sizeof p, "%s/%s", path, name);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
			if (i == 0)
				rc = tt_error_set(err, TT_ENOTFOUND, "'%s' has no manifest.json", path);
			continue;
		}
		if (tt_failed(rc = read_file(p, &data, &len, err)))
			break;
		tt__sha256_hex(data, len, h);
		free(data);
		if (tt_failed(tt_buf_printf(&list, "%s %zu %s\n", name, len, h)))
			rc = tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	if (!tt_failed(rc))
		tt__sha256_hex(list.data ? list.data : "", list.len, hex);
	tt_buf_release(&list);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* ---- figures in and out ------------------------------------------------ */

/* What the stored figures depend on besides the run (formats/catalog-v1.md
 * "settings"). */
static void settings_of(const struct tt_trend *t, const struct tt_analysis_opts *ao, char *buf,
			size_t len)
{
	struct tt_analysis_opts d;

	if (!ao) {
		tt_analysis_opts_init(&d);
		ao = &d;
	}
	tt__snprintf_c(buf, len, "1 tail=%.17g skip_first_s=%.17g window_s=%.17g", t->o.tail,
		       ao->skip_first_s, ao->window_s);
}

static char *col_dup(sqlite3_stmt *q, int i, int *oom)
{
	const unsigned char *s = sqlite3_column_text(q, i);
	char *d;

	if (!s)
		return NULL;
	if (!(d = strdup((const char *)s)))
		*oom = 1;
	return d;
}

static enum tt_status status_parse(const char *key)
{
	for (int s = 0; s < TT_STATUS_COUNT_; s++)
		if (!strcmp(tt_status_key((enum tt_status)s), key))
			return (enum tt_status)s;
	return TT_STATUS_COUNT_;
}

enum tt_code tt_trend_catalog_lookup(struct tt_trend_catalog *c, struct tt_trend *t,
				     const char *hash, const char *path,
				     const struct tt_analysis_opts *ao, struct tt_error *err)
{
	char set[160];
	struct tt_trend_run r;
	sqlite3_stmt *q;
	size_t want;
	int oom = 0, st;
	enum tt_code rc = TT_OK;

	settings_of(t, ao, set, sizeof set);
	memset(&r, 0, sizeof r);
	q = c->q[Q_RUN];
	sqlite3_reset(q);
	sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, set, -1, SQLITE_STATIC);
	st = sqlite3_step(q);
	if (st == SQLITE_DONE) {
		sqlite3_reset(q);
		return TT_EOF;
	}
	if (st != SQLITE_ROW)
		return db_error(c, err, "reading a run");
	r.engine = col_dup(q, 0, &oom);
	r.engine_version = col_dup(q, 1, &oom);
	r.start_unix_ns = sqlite3_column_int64(q, 2);
	r.imported = sqlite3_column_int(q, 3);
	want = (size_t)sqlite3_column_int64(q, 4);
	sqlite3_reset(q);
	r.path = (char *)path;
	if (t->o.key[0]) {
		q = c->q[Q_KEY];
		sqlite3_reset(q);
		sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, t->o.key, -1, SQLITE_STATIC);
		if ((st = sqlite3_step(q)) == SQLITE_ROW)
			r.key = col_dup(q, 0, &oom);
		else if (st != SQLITE_DONE)
			rc = db_error(c, err, "reading a run's keys");
		sqlite3_reset(q);
	}
	r.cells = calloc(want ? want : 1, sizeof *r.cells);
	if (!r.cells || oom)
		rc = tt_error_set(err, TT_ENOMEM, "out of memory");
	q = c->q[Q_CELLS];
	sqlite3_reset(q);
	sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, set, -1, SQLITE_STATIC);
	while (!tt_failed(rc) && (st = sqlite3_step(q)) == SQLITE_ROW) {
		struct tt_trend_cell *tc;
		const unsigned char *id = sqlite3_column_text(q, 1);
		const unsigned char *sk = sqlite3_column_text(q, 3);

		if (r.n_cells >= want || !id || !sk) {
			rc = tt_error_set(err, TT_EFORMAT, "catalog '%s': run %s has other cells than "
					  "it says", c->path, hash);
			break;
		}
		tc = &r.cells[r.n_cells++];
		snprintf(tc->id, sizeof tc->id, "%s", (const char *)id);
		tc->phase = (enum tt_phase)sqlite3_column_int(q, 2);
		tc->status = status_parse((const char *)sk);
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
			tc->v[f] = sqlite3_column_type(q, 4 + f) == SQLITE_NULL
					   ? NAN : sqlite3_column_double(q, 4 + f);
	}
	sqlite3_reset(q);
	if (!tt_failed(rc) && r.n_cells != want)
		rc = tt_error_set(err, TT_EFORMAT, "catalog '%s': run %s has %zu of its %zu cells",
				  c->path, hash, r.n_cells, want);
	if (!tt_failed(rc))
		rc = tt_trend_add_figures(t, &r, err);
	r.path = NULL; /* not ours */
	tt_trend_run_release(&r);
	return rc;
}

static int step_done(sqlite3_stmt *q)
{
	int st = sqlite3_step(q);
	sqlite3_reset(q);
	return st == SQLITE_DONE ? 0 : -1;
}

static int put_key(struct tt_trend_catalog *c, const char *hash, const char *name,
		   const char *value)
{
	sqlite3_stmt *q = c->q[Q_PUT_KEY];

	if (!value)
		return 0;
	sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, value, -1, SQLITE_STATIC);
	return step_done(q);
}

enum tt_code tt_trend_catalog_store(struct tt_trend_catalog *c, const struct tt_trend *t,
				    const char *hash, const struct tt_report *rep,
				    const struct tt_analysis_opts *ao, struct tt_error *err)
{
	const struct tt_manifest *m = &rep->manifest;
	struct tt_trend_run r;
	char set[160];
	sqlite3_stmt *q;
	int bad = 0;

	settings_of(t, ao, set, sizeof set);
	if (tt_failed(tt_trend_run_from_report(t, rep, NULL, &r, err)))
		return TT_FAILED;
	if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		tt_trend_run_release(&r);
		return db_error(c, err, "cannot write");
	}
	q = c->q[Q_PUT_RUN];
	sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, set, -1, SQLITE_STATIC);
	r.engine ? sqlite3_bind_text(q, 3, r.engine, -1, SQLITE_STATIC) : sqlite3_bind_null(q, 3);
	r.engine_version ? sqlite3_bind_text(q, 4, r.engine_version, -1, SQLITE_STATIC)
			 : sqlite3_bind_null(q, 4);
	sqlite3_bind_int64(q, 5, r.start_unix_ns);
	sqlite3_bind_int(q, 6, r.imported);
	sqlite3_bind_int64(q, 7, (sqlite3_int64)r.n_cells);
	sqlite3_bind_int64(q, 8, (sqlite3_int64)time(NULL));
	bad |= step_done(q);
	/* every key a trend may order by: the members first, then the notes */
	bad |= put_key(c, hash, "engine_version", m->engine_version);
	bad |= put_key(c, hash, "engine", m->engine);
	bad |= put_key(c, hash, "model", m->model);
	bad |= put_key(c, hash, "created", m->created);
	bad |= put_key(c, hash, "tool_version", m->tool_version);
	for (size_t i = 0; i < m->n_notes; i++)
		bad |= put_key(c, hash, m->notes[i].key, m->notes[i].value);
	q = c->q[Q_DEL_CELLS];
	sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, set, -1, SQLITE_STATIC);
	bad |= step_done(q);
	q = c->q[Q_PUT_CELL];
	for (size_t i = 0; i < r.n_cells && !bad; i++) {
		const struct tt_trend_cell *tc = &r.cells[i];
		sqlite3_bind_text(q, 1, hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(q, 2, set, -1, SQLITE_STATIC);
		sqlite3_bind_int64(q, 3, (sqlite3_int64)i);
		sqlite3_bind_text(q, 4, tc->id, -1, SQLITE_STATIC);
		sqlite3_bind_int(q, 5, (int)tc->phase);
		sqlite3_bind_text(q, 6, tt_status_key(tc->status), -1, SQLITE_STATIC);
		for (int f = 0; f < TT_DIFF_FIGURE_COUNT_; f++)
			isfinite(tc->v[f]) ? sqlite3_bind_double(q, 7 + f, tc->v[f])
					   : sqlite3_bind_null(q, 7 + f);
		bad |= step_done(q);
	}
	tt_trend_run_release(&r);
	if (bad) {
		tt_error_set(err, TT_EIO, "catalog '%s': cannot store a run: %s", c->path,
			     sqlite3_errmsg(c->db));
		sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
		return TT_FAILED;
	}
	if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_error(c, err, "cannot commit");
		sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
		return TT_FAILED;
	}
	return TT_OK;
}

/* ---- the stamp: the content hash without reading the content ------------ */

static int stamp_add(struct tt_buf *b, const char *name, const struct stat *st)
{
	return tt_failed(tt_buf_printf(b, "%s %lld %lld.%09ld %lld.%09ld %llu %llu\n", name,
				       (long long)st->st_size, (long long)st->st_mtim.tv_sec,
				       st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
				       st->st_ctim.tv_nsec, (unsigned long long)st->st_ino,
				       (unsigned long long)st->st_dev)) ? -1 : 0;
}

/* What stat says of the run's files (formats/catalog-v1.md "files"):
 * their names, sizes, change times and inodes, in the hash's order. */
static enum tt_code stamp_of(const char *path, struct tt_buf *b, struct tt_error *err)
{
	struct stat st;
	char p[4200], **names = NULL;
	size_t n = 0, cap = 0;
	enum tt_code rc = TT_OK;
	DIR *d;
	struct dirent *de;

	if (stat(path, &st) != 0)
		return tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return stamp_add(b, "", &st) ? tt_error_set(err, TT_ENOMEM, "out of memory") : TT_OK;
	snprintf(p, sizeof p, "%s/manifest.json", path);
	if (stat(p, &st) != 0)
		return tt_error_set(err, TT_ENOTFOUND, "'%s' has no manifest.json", path);
	if (stamp_add(b, "manifest.json", &st))
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	snprintf(p, sizeof p, "%s/cells", path);
	if ((d = opendir(p))) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 32;
				char **g = realloc(names, nc * sizeof *g);
				if (!g) {
					rc = tt_error_set(err, TT_ENOMEM, "out of memory");
					break;
				}
				names = g;
				cap = nc;
			}
			if (!(names[n] = strdup(de->d_name))) {
				rc = tt_error_set(err, TT_ENOMEM, "out of memory");
				break;
			}
			n++;
		}
		closedir(d);
	}
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n && !tt_failed(rc); i++) {
		char name[300];
		snprintf(p, sizeof p, "%s/cells/%s", path, names[i]);
		snprintf(name, sizeof name, "cells/%s", names[i]);
		if (stat(p, &st) != 0)
			rc = tt_error_set(err, TT_EIO, "cannot open '%s': %s", p, strerror(errno));
		else if (stamp_add(b, name, &st))
			rc = tt_error_set(err, TT_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

enum tt_code tt_trend_catalog_hash(struct tt_trend_catalog *c, const char *path, char hex[65],
				   struct tt_error *err)
{
	char *real = realpath(path, NULL);
	struct tt_buf stamp;
	sqlite3_stmt *q = c->q[Q_FILE];
	enum tt_code rc;
	int st, known = 0;

	if (!real)
		return tt_error_set(err, TT_EIO, "cannot open '%s': %s", path, strerror(errno));
	tt_buf_init(&stamp, 0);
	if (tt_failed(rc = stamp_of(real, &stamp, err)))
		goto cleanup;
	sqlite3_reset(q);
	sqlite3_bind_text(q, 1, real, -1, SQLITE_STATIC);
	if ((st = sqlite3_step(q)) == SQLITE_ROW) {
		const unsigned char *sv = sqlite3_column_text(q, 0);
		const unsigned char *hv = sqlite3_column_text(q, 1);
		size_t sl = (size_t)sqlite3_column_bytes(q, 0);
		if (sv && hv && sl == stamp.len && !memcmp(sv, stamp.data, sl) &&
		    strlen((const char *)hv) == 64) {
			memcpy(hex, hv, 65);
			known = 1;
		}
	}
	sqlite3_reset(q);
	if (known)
		goto cleanup;
	if (tt_failed(rc = tt_trend_run_hash(real, hex, err)))
		goto cleanup;
	q = c->q[Q_PUT_FILE];
	sqlite3_bind_text(q, 1, real, -1, SQLITE_STATIC);
	sqlite3_bind_text(q, 2, stamp.data, (int)stamp.len, SQLITE_STATIC);
	sqlite3_bind_text(q, 3, hex, 64, SQLITE_STATIC);
	if (step_done(q))
		rc = db_error(c, err, "cannot store a run's hash");
cleanup:
	tt_buf_release(&stamp);
	free(real);
	return rc;
}
