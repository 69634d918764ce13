/* Internal: the run reader's inputs, opened defensively.  Regular files
 * only (a FIFO, a device or a symlink to /dev/zero never blocks or streams
 * forever), byte caps, and gzip/zstd archives decompressed here rather than
 * by libarchive's filters so that a cut archive still yields every entry
 * before the cut, and the cause of the damage is kept. */
#ifndef TT_RUN_SOURCE_H
#define TT_RUN_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <archive.h>

#include "tokentrace/error.h"

/* The largest trace file read (a legitimate cell is tens of MB). */
#define TT__MAX_TRACE_BYTES ((uint64_t)16 << 30)
/* An archive stops decompressing past this many bytes per input byte (plus
 * 64 MB): tar of zstd traces is ~1:1 (a manifest ~10:1), a decompression
 * bomb is 1000s:1. */
#define TT__MAX_ARCHIVE_RATIO 100

/* Open path for reading if it is a regular file no larger than max bytes.
 * `what` names it in messages ("manifest", "trace").  *size: its size. */
enum tt_code tt__open_regular(const char *path, const char *what, uint64_t max, int *fd,
			      uint64_t *size, struct tt_error *err);
/* The whole regular file, NUL-terminated (free()). */
enum tt_code tt__read_regular(const char *path, const char *what, size_t max, char **data,
			      size_t *len, struct tt_error *err);

/* An archive open for one pass over its entries. */
struct tt__archive;
enum tt_code tt__archive_open(const char *path, struct tt__archive **out, struct tt_error *err);
struct archive *tt__archive_handle(struct tt__archive *ar);
/* Why the archive stopped early: the decompressor's reason if it had one
 * ("truncated gzip input at byte N of M"), else libarchive's, else NULL. */
const char *tt__archive_damage(struct tt__archive *ar);
void tt__archive_free(struct tt__archive *ar);

#endif
