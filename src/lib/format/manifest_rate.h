/* The open-loop members of a manifest (formats/run-v1.md 2.4, format 1.2),
 * kept apart from manifest.c as the import members are (manifest_ext.h). */
#ifndef TT_FORMAT_MANIFEST_RATE_H
#define TT_FORMAT_MANIFEST_RATE_H

#include <cjson/cJSON.h>

#include "tokentrace/run.h"

/* 1 when m uses a member of 2.4 (the writer then says format 1.2). */
int tt__manifest_rate_used(const struct tt_manifest *m);
/* 1 when m uses a member 1.3 added (rate_sweep, slo, output_tokens.bins):
 * the writer then says format 1.3. */
int tt__manifest_sweep_used(const struct tt_manifest *m);
/* The defaults of 2.4's settings. */
void tt__manifest_rate_init(struct tt_manifest *m);
/* Add the open-loop settings to `settings` and rate_cells to root.
 * Return 0, or -1 when out of memory. */
int tt__manifest_rate_to_json(const struct tt_manifest *m, cJSON *root, cJSON *settings);
/* Read them back (after the cells of 2.2): rate cells are appended to
 * m->cells.  A wrong type is TT_EFORMAT naming name, the cell and member. */
enum tt_code tt__manifest_rate_from_json(const cJSON *root, const char *name,
					 struct tt_manifest *m, struct tt_error *err);
void tt__manifest_rate_release(struct tt_manifest *m);
/* Append a pending cell with this id, its times unknown (-1), and return
 * it (its index is m->n_cells - 1); NULL when out of memory. */
struct tt_cell_info *tt__manifest_push_cell(struct tt_manifest *m, const char *id);
/* The id pattern of 2.4's cells: rate-<digits>r<digits>[p<digits>]. */
int tt__rate_cell_id_valid(const char *id);

#endif
