/* The replayed-workload member of a manifest (formats/run-v1.md 2.5,
 * format 1.5), kept apart from manifest.c as the open-loop members are. */
#ifndef TT_FORMAT_MANIFEST_WORKLOAD_H
#define TT_FORMAT_MANIFEST_WORKLOAD_H

#include <cjson/cJSON.h>

#include "tokentrace/run.h"

/* Add settings.workload when m has one.  0, or -1 out of memory. */
int tt__manifest_workload_to_json(const struct tt_manifest *m, cJSON *settings);
/* Read settings.workload back; a wrong type is TT_EFORMAT naming name. */
enum tt_code tt__manifest_workload_from_json(const cJSON *root, const char *name,
					     struct tt_manifest *m, struct tt_error *err);
void tt__manifest_workload_release(struct tt_manifest *m);

#endif
