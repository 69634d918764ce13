/* Names of trace enums, as formats/run-v1.md 3.5 lists them. */
#include "tokentrace/trace.h"

const char *tt_role_name(enum tt_role r)
{
	switch (r) {
	case TT_ROLE_MEASURED: return "measured";
	case TT_ROLE_WARMUP: return "warmup";
	case TT_ROLE_SCOUT: return "scout";
	}
	return "unknown";
}

const char *tt_finish_name(enum tt_finish f)
{
	switch (f) {
	case TT_FINISH_UNKNOWN: return "unknown";
	case TT_FINISH_STOP: return "stop";
	case TT_FINISH_LENGTH: return "length";
	case TT_FINISH_CUT: return "cut";
	case TT_FINISH_ERROR: return "error";
	case TT_FINISH_ABORTED: return "aborted";
	}
	return "unknown";
}

const char *tt_fail_name(enum tt_fail f)
{
	switch (f) {
	case TT_FAIL_NONE: return "none";
	case TT_FAIL_CONNECT: return "connect";
	case TT_FAIL_HTTP: return "http";
	case TT_FAIL_RESET: return "reset";
	case TT_FAIL_TIMEOUT: return "timeout";
	case TT_FAIL_ERROR_EVENT: return "error_event";
	case TT_FAIL_MALFORMED: return "malformed";
	case TT_FAIL_NO_DONE: return "no_done";
	case TT_FAIL_OTHER: return "other";
	}
	return "other";
}
