/* The run reader's inputs, opened defensively (run_source.h says why). */
#include "format/run_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive_entry.h>
#include <zlib.h>
#include <zstd.h>

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

enum tt_code tt__open_regular(const char *path, const char *what, uint64_t max, int *fd_out,
			      uint64_t *size, struct tt_error *err)
{
	struct stat st;
	int fd;

	/* stat first: opening a FIFO blocks until a writer comes, and opening
	 * some devices has effects.  O_NONBLOCK covers the race where the path
	 * is replaced between stat and open; fstat decides. */
	if (stat(path, &st) != 0)
		return tt_error_set(err, errno == ENOENT ? TT_ENOTFOUND : TT_EIO,
				    "cannot open %s '%s': %s", what, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return tt_error_set(err, TT_EFORMAT, "%s '%s' is %s, not a regular file", what, path,
				    file_kind(st.st_mode));
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return tt_error_set(err, errno == ENOENT ? TT_ENOTFOUND : TT_EIO,
				    "cannot open %s '%s': %s", what, path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tt_error_set(err, TT_EFORMAT, "%s '%s' is not a regular file", what, path);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return tt_error_set(err, TT_EFORMAT, "%s '%s' is too large (%llu bytes; at most %llu)",
				    what, path, (unsigned long long)st.st_size,
				    (unsigned long long)max);
	}
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	*fd_out = fd;
	if (size)
		*size = (uint64_t)st.st_size;
	return TT_OK;
}

enum tt_code tt__read_regular(const char *path, const char *what, size_t max, char **data,
			      size_t *len, struct tt_error *err)
{
	uint64_t size;
	size_t got = 0;
	char *buf;
	int fd;
	enum tt_code rc = tt__open_regular(path, what, max, &fd, &size, err);

	if (tt_failed(rc))
		return rc;
	buf = malloc((size_t)size + 1);
	if (!buf) {
		close(fd);
		return tt_error_set(err, TT_ENOMEM, "out of memory reading '%s'", path);
	}
	/* Never more than fstat said: a file growing while read is cut there. */
	while (got < (size_t)size) {
		ssize_t k = read(fd, buf + got, (size_t)size - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;
			close(fd);
			free(buf);
			return tt_error_set(err, TT_EIO, "cannot read %s '%s': %s", what, path,
					    strerror(e));
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

/* ---- archives ------------------------------------------------------------ */

enum codec { PLAIN, GZIP, ZSTD };

#define IN_BLOCK ((size_t)64 << 10)
#define OUT_BLOCK ((size_t)128 << 10)

struct tt__archive {
	struct archive *a;
	int fd;
	enum codec codec;
	uint64_t file_size, in_bytes, out_bytes;
	unsigned char *in, *out;
	size_t in_len, in_pos;
	int in_eof;
	int done;          /* the decompressed stream ended (cleanly or not) */
	int frame_open;    /* inside a gzip member / zstd frame */
	z_stream z;
	int z_init;
	ZSTD_DStream *zs;
	char damage[300];
};

/* Keep the first reason the stream stopped, with where. */
static void set_damage(struct tt__archive *ar, const char *what, const char *detail)
{
	if (!ar->damage[0])
		snprintf(ar->damage, sizeof ar->damage, "%s%s%s%s at byte %llu of %llu", what,
			 detail ? " (" : "", detail ? detail : "", detail ? ")" : "",
			 (unsigned long long)ar->in_bytes, (unsigned long long)ar->file_size);
}

static int fill_in(struct tt__archive *ar)
{
	ssize_t k;

	if (ar->in_pos < ar->in_len || ar->in_eof)
		return 0;
	do
		k = read(ar->fd, ar->in, IN_BLOCK);
	while (k < 0 && errno == EINTR);
	if (k < 0) {
		set_damage(ar, "read error", strerror(errno));
		ar->in_eof = 1;
		return -1;
	}
	if (k == 0)
		ar->in_eof = 1;
	ar->in_len = (size_t)k;
	ar->in_pos = 0;
	ar->in_bytes += (uint64_t)k;
	return 0;
}

#define BOMB "the archive decompresses to over 100 times its size (refused as a decompression bomb)"

static int over_ratio(const struct tt__archive *ar, uint64_t out)
{
	return out > ((uint64_t)64 << 20) + ar->in_bytes * TT__MAX_ARCHIVE_RATIO;
}

/* One block of decompressed output; 0 at the end of the stream, whether
 * it ended cleanly or not (damage is noted and libarchive sees the tar cut
 * there, so every entry before the cut is delivered). */
static size_t decompress_block(struct tt__archive *ar)
{
	size_t produced = 0;

	while (!ar->done && produced < OUT_BLOCK) {
		if (fill_in(ar) < 0 || (ar->in_pos == ar->in_len && ar->in_eof)) {
			if (ar->frame_open && !ar->damage[0])
				set_damage(ar, ar->codec == GZIP ?
						   "truncated gzip input: the archive is cut short" :
						   "truncated zstd input: the archive is cut short", NULL);
			ar->done = 1;
			break;
		}
		if (ar->codec == GZIP) {
			int zr;
			if (!ar->frame_open) {
				if (inflateReset(&ar->z) != Z_OK) {
					ar->done = 1;
					break;
				}
				ar->frame_open = 1;
			}
			ar->z.next_in = ar->in + ar->in_pos;
			ar->z.avail_in = (uInt)(ar->in_len - ar->in_pos);
			ar->z.next_out = ar->out + produced;
			ar->z.avail_out = (uInt)(OUT_BLOCK - produced);
			zr = inflate(&ar->z, Z_NO_FLUSH);
			ar->in_pos = ar->in_len - ar->z.avail_in;
			produced = OUT_BLOCK - ar->z.avail_out;
			if (zr == Z_STREAM_END) {
				ar->frame_open = 0; /* another member may follow */
			} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
				set_damage(ar, "damaged gzip data", ar->z.msg ? ar->z.msg : "inflate failed");
				ar->done = 1;
			}
		} else {
			ZSTD_inBuffer in = {ar->in, ar->in_len, ar->in_pos};
			ZSTD_outBuffer out = {ar->out, OUT_BLOCK, produced};
			size_t zr = ZSTD_decompressStream(ar->zs, &out, &in);
			ar->in_pos = in.pos;
			produced = out.pos;
			if (ZSTD_isError(zr)) {
				set_damage(ar, "damaged zstd data", ZSTD_getErrorName(zr));
				ar->done = 1;
			} else {
				ar->frame_open = zr != 0;
			}
		}
		if (over_ratio(ar, ar->out_bytes + produced)) {
			set_damage(ar, BOMB, NULL);
			ar->done = 1;
		}
	}
	ar->out_bytes += produced;
	return produced;
}

static la_ssize_t read_cb(struct archive *a, void *ctx, const void **buf)
{
	struct tt__archive *ar = ctx;

	if (ar->codec != PLAIN) {
		*buf = ar->out;
		return (la_ssize_t)decompress_block(ar);
	}
	/* libarchive decompresses other filters (xz, bzip2...) itself: check
	 * the ratio whenever it asks for more input. */
	if (over_ratio(ar, (uint64_t)archive_filter_bytes(a, 0))) {
		set_damage(ar, BOMB, NULL);
		archive_set_error(a, EFBIG, "%s", ar->damage);
		return -1;
	}
	ar->in_pos = ar->in_len = 0;
	if (fill_in(ar) < 0) {
		archive_set_error(a, EIO, "%s", ar->damage);
		return -1;
	}
	*buf = ar->in;
	return (la_ssize_t)ar->in_len;
}

static la_int64_t seek_cb(struct archive *a, void *ctx, la_int64_t off, int whence)
{
	struct tt__archive *ar = ctx;
	off_t r = lseek(ar->fd, (off_t)off, whence);

	(void)a;
	ar->in_pos = ar->in_len = 0;
	ar->in_eof = 0;
	return r < 0 ? ARCHIVE_FATAL : (la_int64_t)r;
}

void tt__archive_free(struct tt__archive *ar)
{
	if (!ar)
		return;
	if (ar->a)
		archive_read_free(ar->a);
	if (ar->z_init)
		inflateEnd(&ar->z);
	ZSTD_freeDStream(ar->zs);
	if (ar->fd >= 0)
		close(ar->fd);
	free(ar->in);
	free(ar->out);
	free(ar);
}

enum tt_code tt__archive_open(const char *path, struct tt__archive **out, struct tt_error *err)
{
	struct tt__archive *ar = calloc(1, sizeof *ar);
	unsigned char magic[4] = {0};
	ssize_t k;
	enum tt_code rc;
	int r;

	if (!ar)
		return tt_error_set(err, TT_ENOMEM, "out of memory");
	ar->fd = -1;
	rc = tt__open_regular(path, "run archive", UINT64_MAX, &ar->fd, &ar->file_size, err);
	if (tt_failed(rc))
		goto fail;
	ar->in = malloc(IN_BLOCK);
	ar->out = malloc(OUT_BLOCK);
	ar->a = archive_read_new();
	if (!ar->in || !ar->out || !ar->a)
		goto nomem;
	do
		k = pread(ar->fd, magic, sizeof magic, 0);
	while (k < 0 && errno == EINTR);
	if (k >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
		ar->codec = GZIP;
		/* 16 + MAX_WBITS: gzip wrapper; members are reset one by one. */
		if (inflateInit2(&ar->z, 16 + MAX_WBITS) != Z_OK)
			goto nomem;
		ar->z_init = 1;
	} else if (k == 4 && magic[0] == 0x28 && magic[1] == 0xB5 && magic[2] == 0x2F &&
		   magic[3] == 0xFD) {
		ar->codec = ZSTD;
		if (!(ar->zs = ZSTD_createDStream()))
			goto nomem;
		/* A window beyond 128 MB is no legitimate run's: refuse the memory. */
		ZSTD_DCtx_setParameter(ar->zs, ZSTD_d_windowLogMax, 27);
	}
	if (ar->codec == PLAIN) {
		archive_read_support_filter_all(ar->a);
		archive_read_set_seek_callback(ar->a, seek_cb);
	} else {
		archive_read_support_filter_none(ar->a);
	}
	archive_read_support_format_all(ar->a);
	archive_read_set_read_callback(ar->a, read_cb);
	archive_read_set_callback_data(ar->a, ar);
	r = archive_read_open1(ar->a);
	if (r != ARCHIVE_OK) {
		const char *why = ar->damage[0] ? ar->damage : archive_error_string(ar->a);
		rc = tt_error_set(err, TT_EFORMAT, "cannot read '%s' as a run archive: %s", path,
				  why ? why : "unknown format");
		goto fail;
	}
	*out = ar;
	return TT_OK;
nomem:
	rc = tt_error_set(err, TT_ENOMEM, "out of memory");
fail:
	tt__archive_free(ar);
	return rc;
}

struct archive *tt__archive_handle(struct tt__archive *ar)
{
	return ar->a;
}

const char *tt__archive_damage(struct tt__archive *ar)
{
	if (ar->damage[0])
		return ar->damage;
	return archive_error_string(ar->a);
}
