/* tokentrace: growable text/byte buffer with a maximum size, so runaway
 * input or output cannot eat memory (curl's dynbuf habit). */
#ifndef TOKENTRACE_BUF_H
#define TOKENTRACE_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "tokentrace/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tt_buf {
	char *data;     /* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	size_t max;     /* 0: default 1 GiB */
	int failed;     /* sticky: an append failed (ENOMEM or max) */
};

void tt_buf_init(struct tt_buf *b, size_t max);
void tt_buf_release(struct tt_buf *b);
void tt_buf_reset(struct tt_buf *b); /* len = 0, keeps memory */
enum tt_code tt_buf_append(struct tt_buf *b, const void *data, size_t len);
enum tt_code tt_buf_puts(struct tt_buf *b, const char *s);
enum tt_code tt_buf_printf(struct tt_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
enum tt_code tt_buf_vprintf(struct tt_buf *b, const char *fmt, va_list ap)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 0)))
#endif
	;
/* Write the buffer's bytes to path (created or replaced).  TT_EIO names the
 * path and the system's reason. */
enum tt_code tt_buf_write_file(const struct tt_buf *b, const char *path, struct tt_error *err);
/* Take ownership of the data (caller frees); the buffer is re-initialised. */
char *tt_buf_steal(struct tt_buf *b, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
