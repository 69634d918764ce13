/* tokentrace-sim: the documented toy tokenizer and the filler text of the
 * outputs (docs/sim.md, "Tokens"). */
#ifndef TT_SIM_TOKENIZER_H
#define TT_SIM_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

/* Token ids of text[0..len); the caller frees the array.  NULL when out of
 * memory. */
int64_t *sim_tokenize(const char *text, size_t len, size_t *n);
/* Word `index` of the output whose seed is `seed`, and its token id if
 * token_id is not NULL.  The string is static. */
const char *sim_word(uint64_t seed, int64_t index, int64_t *token_id);
/* A hash of n token ids chained on seed (prefix-cache blocks, text seeds). */
uint64_t sim_hash_tokens(const int64_t *ids, size_t n, uint64_t seed);

#endif
