/* Fuzz entry: parse arbitrary bytes as a run manifest, and round-trip what parses. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tt_manifest m, back;
	struct tt_error err;
	char *json = NULL;

	if (tt_manifest_from_json((const char *)data, size, "fuzz", &m, &err) != TT_OK)
		return 0;
	if (tt_manifest_to_json(&m, &json, &err) == TT_OK) {
		if (tt_manifest_from_json(json, strlen(json), "fuzz-again", &back, &err) == TT_OK)
			tt_manifest_release(&back);
		free(json);
	}
	tt_manifest_release(&m);
	return 0;
}
