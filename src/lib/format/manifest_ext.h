/* The import members of a manifest (formats/run-v1.md 2.3, format 1.1),
 * kept apart from manifest.c so the core manifest code stays as it was. */
#ifndef TT_FORMAT_MANIFEST_EXT_H
#define TT_FORMAT_MANIFEST_EXT_H

#include <cjson/cJSON.h>

#include "tokentrace/run.h"

/* 1 when m uses any member of 2.3 (the writer then says format 1.1). */
int tt__manifest_ext_used(const struct tt_manifest *m);
/* Add imported_from and unavailable to root, reported and reported_status to
 * a cell's object.  Return 0, or -1 when out of memory. */
int tt__manifest_ext_to_json(const struct tt_manifest *m, cJSON *root);
int tt__cell_ext_to_json(const struct tt_cell_info *c, cJSON *cell);
/* Read them back; a wrong type is TT_EFORMAT naming name, the cell and the member. */
enum tt_code tt__manifest_ext_from_json(const cJSON *root, const char *name,
					struct tt_manifest *m, struct tt_error *err);
enum tt_code tt__cell_ext_from_json(const cJSON *cell, const char *name,
				    struct tt_cell_info *c, struct tt_error *err);
void tt__manifest_ext_release(struct tt_manifest *m);
void tt__cell_ext_release(struct tt_cell_info *c);

#endif
