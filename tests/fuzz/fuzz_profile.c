/* Fuzz entry: arbitrary bytes as a profile CSV (formats/profile-csv.md),
 * the other file `tokentrace synth` and `tokentrace-sim --profile` take
 * from outside; what parses is queried as the simulator queries it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokentrace/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tt_profile *p = NULL;
	struct tt_error err;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (tt_profile_parse(text, "fuzz.csv", &p, &err) == TT_OK) {
		for (size_t i = 0; i < tt_profile_count(p); i++)
			(void)tt_profile_at(p, i);
		(void)tt_profile_tbt_ms(p, 8192, 4);
		(void)tt_profile_prefill_tok_s(p, 8192);
		(void)tt_profile_ttft_ms(p, 32768, 16);
		tt_profile_free(p);
	}
	free(text);
	return 0;
}
