/* tokentrace: graded results and error messages.
 *
 * Every fallible library call returns an enum tt_code (how bad) and, when
 * given a struct tt_error, fills it with the kind (what) and a message that
 * names what failed and where (file, cell, byte offset).  The library never
 * prints and never exits. */
#ifndef TOKENTRACE_ERROR_H
#define TOKENTRACE_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How bad a result is, graded as libarchive grades, and ordered: a larger
 * code is worse, so combining results keeps the largest (tt_code_worst), and
 * `rc > TT_WARN` (tt_failed) is the test for failure.  What went wrong is the kind, kept
 * with the message on the error object (struct tt_error). */
enum tt_code {
	TT_OK = 0,     /* success */
	TT_EOF = 1,    /* success: no more items */
	TT_WARN = 2,   /* partial success: damaged parts skipped, the rest is good */
	TT_FAILED = 3, /* this call failed; the handle is still usable */
	TT_FATAL = 4   /* failed, and the handle cannot be used any more */
};

/* What went wrong.  The kind never decides how bad it is: a malformed cell
 * skipped by a run reader is a TT_WARN of kind TT_EFORMAT, a malformed
 * manifest a TT_FAILED of the same kind. */
enum tt_kind {
	TT_KIND_NONE = 0,
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
	enum tt_code code; /* severity of the last result set here */
	enum tt_kind kind; /* what went wrong (TT_KIND_NONE when code is TT_OK) */
	char msg[1024];
};

/* The test for failure: a graded code is never read as a boolean, since
 * TT_EOF and TT_WARN are successes (`if (rc)` would treat a warning as an
 * error).  tt_failed(rc) is rc > TT_WARN. */
static inline int tt_failed(enum tt_code rc)
{
	return rc > TT_WARN;
}

/* The worse of two results. */
enum tt_code tt_code_worst(enum tt_code a, enum tt_code b);

/* Static description of a severity, never NULL. */
const char *tt_strerror(enum tt_code code);
/* Static description of a kind ("out of memory", ...), never NULL. */
const char *tt_kind_str(enum tt_kind kind);

/* Set err (may be NULL) to a failure (TT_FAILED) of the given kind with a
 * printf-style message; returns TT_FAILED so that
 * `return tt_error_set(err, TT_EIO, "...")` is the whole idiom. */
enum tt_code tt_error_set(struct tt_error *err, enum tt_kind kind, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/* Same with the severity given: TT_WARN for damage that was skipped,
 * TT_FATAL when the handle is dead.  Returns code. */
enum tt_code tt_error_setv(struct tt_error *err, enum tt_code code, enum tt_kind kind,
			   const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 4, 5)))
#endif
	;

/* Fold the result (code, part) of one step into the running result of a
 * call made of many (into, whose code is the result so far): the worse
 * severity is kept with its kind, and part's message is appended to into's
 * ("; " between), so every problem is named, not only the worst.  A step
 * that succeeded (code <= TT_EOF) changes nothing.  Returns the combined
 * code. */
enum tt_code tt_error_combine(struct tt_error *into, enum tt_code code,
			      const struct tt_error *part);

/* Prefix the message already in err with more context ("cell 'x': ..."). */
void tt_error_prefix(struct tt_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Clear err to TT_OK, no kind, an empty message. */
void tt_error_clear(struct tt_error *err);

/* Library version string, e.g. "0.1.0". */
const char *tt_version(void);

#ifdef __cplusplus
}
#endif
#endif
