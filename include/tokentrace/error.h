/* tokentrace: graded result codes.
 *
 * Every fallible library call returns an enum tt_code and, when given a
 * struct tt_error, fills it with a message that names what failed and where
 * (file, cell, byte offset).  The library never prints and never exits. */
#ifndef TOKENTRACE_ERROR_H
#define TOKENTRACE_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Graded as libarchive grades: TT_WARN is partial success (some data was
 * damaged and skipped; the rest is good), anything above is failure. */
enum tt_code {
	TT_OK = 0,
	TT_WARN = 1,      /* partial success: damaged parts skipped, detail in message */
	TT_EOF = 2,       /* no more items */
	TT_ENOMEM = 10,   /* allocation failed */
	TT_EIO = 11,      /* read/write/open failed (errno text in message) */
	TT_EFORMAT = 12,  /* input is not what its format says */
	TT_EVERSION = 13, /* a format version this build does not understand */
	TT_EARG = 14,     /* bad argument from the caller */
	TT_ENOTFOUND = 15,/* named thing does not exist */
	TT_ETRUNC = 16,   /* input ends early */
	TT_ENET = 17,     /* network/HTTP failure */
	TT_EDRAW = 18,    /* drawing (cairo/pango) failed */
	TT_EINTERNAL = 19 /* a bug: an invariant did not hold */
};

struct tt_error {
	enum tt_code code;
	char msg[1024];
};

/* Static description of a code, never NULL. */
const char *tt_strerror(enum tt_code code);

/* Set err (may be NULL) to code and a printf-style message; returns code so
 * that `return tt_error_set(err, TT_EIO, "...")` is the whole idiom. */
enum tt_code tt_error_set(struct tt_error *err, enum tt_code code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* Prefix the message already in err with more context ("cell 'x': ..."). */
void tt_error_prefix(struct tt_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Clear err to TT_OK with an empty message. */
void tt_error_clear(struct tt_error *err);

/* Library version string, e.g. "0.1.0". */
const char *tt_version(void);

#ifdef __cplusplus
}
#endif
#endif
