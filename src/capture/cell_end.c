/* The end of a cell, shared by the closed-loop cells (cell.c) and the
 * open-loop ones (cell_rate.c): its trace closed and its state committed. */
#include <stdio.h>

#include "cell_end.h"
#include "capture.h"
#include "progress_line.h"
#include "sink.h"
#include "tokentrace/run.h"

static struct tt_cell_info *cell_info(struct cap *c, size_t i)
{
	return &tt_run_writer_manifest(c->run)->cells[i];
}

void cell_commit(struct cap *c)
{
	struct tt_error e;
	/* A failed commit leaves the previous manifest in place: the run stays
	 * readable.  Measuring on would only pile up cells the manifest does
	 * not know were finished (a resume would measure them again): stop now,
	 * as Ctrl-C does, and say why at the end. */
	if (tt_run_writer_commit(c->run, &e) != TT_OK) {
		progress_clear(c);
		if (!c->commit_failed)
			snprintf(c->commit_msg, sizeof c->commit_msg, "%s", e.msg);
		c->commit_failed = 1;
		*c->net.stop = 1;
	}
}

/* Close the cell's trace and set its final state. */
enum tt_code cell_finish(struct cap *c, size_t i, struct tt_trace_writer *tw,
				enum tt_cell_state st, const char *reason, struct tt_error *err)
{
	struct tt_cell_info *ci = cell_info(c, i);
	struct tt_error e;
	enum tt_code rc = sink_set_writer(c->net.sink, NULL, &e);

	if (tt_trace_writer_close(tw, rc == TT_OK ? &e : NULL) != TT_OK && rc == TT_OK)
		rc = e.code;
	if (rc != TT_OK) {
		tt_error_setv(err, rc, e.kind, "cell '%s': %s", ci->id, e.msg);
		st = TT_CELL_FAILED;
		reason = e.msg;
	}
	ci->state = st;
	if (reason)
		tt_manifest_set_str(&ci->reason, reason);
	cell_commit(c);
	return rc;
}

/* Fail fast (docs/capture.md "Failures"). */
int refused(const struct cap *c)
{
	return c->refused_in_row >= REFUSED_IN_ROW_STOP;
}

void cell_count_refusal(struct cap *c, CURLcode res, long http_status)
{
	if (res == CURLE_COULDNT_CONNECT)
		c->refused_in_row++;
	else if (http_status)
		c->refused_in_row = 0;
}

const char *refused_reason(const struct cap *c)
{
	static char why[160];
	snprintf(why, sizeof why, "the server refused %d connections in a row, nothing answered "
		 "between them", c->refused_in_row);
	return why;
}

enum tt_code refused_error(struct cap *c, struct tt_error *err)
{
	return tt_error_set(err, TT_ENET,
			    "'%s' refused %d connections in a row (the rule: %d generation "
			    "requests refused at connect with no answer between them means "
			    "the server is gone); stopping (continue later with --resume %s)",
			    c->net.url, c->refused_in_row, REFUSED_IN_ROW_STOP,
			    tt_run_writer_dir(c->run));
}
