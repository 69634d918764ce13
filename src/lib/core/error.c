/* Error codes and messages: see include/tokentrace/error.h. */
#include "tokentrace/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *tt_strerror(enum tt_code code)
{
	switch (code) {
	case TT_OK: return "success";
	case TT_EOF: return "end of data";
	case TT_WARN: return "partial success: damaged data skipped";
	case TT_FAILED: return "failed";
	case TT_FATAL: return "failed, handle unusable";
	}
	return "unknown result";
}

const char *tt_kind_str(enum tt_kind kind)
{
	switch (kind) {
	case TT_KIND_NONE: return "no error";
	case TT_ENOMEM: return "out of memory";
	case TT_EIO: return "input/output error";
	case TT_EFORMAT: return "malformed input";
	case TT_EVERSION: return "unsupported format version";
	case TT_EARG: return "invalid argument";
	case TT_ENOTFOUND: return "not found";
	case TT_ETRUNC: return "input truncated";
	case TT_ENET: return "network error";
	case TT_EDRAW: return "drawing failed";
	case TT_EINTERNAL: return "internal error";
	}
	return "unknown error";
}

enum tt_code tt_code_worst(enum tt_code a, enum tt_code b)
{
	return a > b ? a : b;
}

static void set_message(struct tt_error *err, const char *fmt, va_list ap)
{
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
}

enum tt_code tt_error_set(struct tt_error *err, enum tt_kind kind, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->code = TT_FAILED;
		err->kind = kind;
		va_start(ap, fmt);
		set_message(err, fmt, ap);
		va_end(ap);
	}
	return TT_FAILED;
}

enum tt_code tt_error_setv(struct tt_error *err, enum tt_code code, enum tt_kind kind,
			   const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->code = code;
		err->kind = code == TT_OK ? TT_KIND_NONE : kind;
		va_start(ap, fmt);
		set_message(err, fmt, ap);
		va_end(ap);
	}
	return code;
}

enum tt_code tt_error_combine(struct tt_error *into, enum tt_code code,
			      const struct tt_error *part)
{
	enum tt_code was;

	if (!into)
		return code;
	was = into->code;
	if (code <= TT_EOF)
		return was;
	if (part && part->msg[0]) {
		size_t have = strnlen(into->msg, sizeof into->msg - 1);
		if (have && have < sizeof into->msg - 3) {
			memcpy(into->msg + have, "; ", 2);
			have += 2;
		}
		snprintf(into->msg + have, sizeof into->msg - have, "%s", part->msg);
	}
	if (code > was) {
		into->code = code;
		into->kind = part ? part->kind : TT_KIND_NONE;
	}
	return into->code;
}

void tt_error_prefix(struct tt_error *err, const char *fmt, ...)
{
	char head[512], old[sizeof err->msg];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof head, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	{
		size_t h = strlen(head), o = strnlen(old, sizeof old - 1), cap = sizeof err->msg - 1;
		if (h > cap - 2)
			h = cap - 2;
		memcpy(err->msg, head, h);
		memcpy(err->msg + h, ": ", 2);
		if (o > cap - h - 2)
			o = cap - h - 2;
		memcpy(err->msg + h + 2, old, o);
		err->msg[h + 2 + o] = '\0';
	}
}

void tt_error_clear(struct tt_error *err)
{
	if (err) {
		err->code = TT_OK;
		err->kind = TT_KIND_NONE;
		err->msg[0] = '\0';
	}
}

const char *tt_version(void)
{
	return TT_VERSION;
}
