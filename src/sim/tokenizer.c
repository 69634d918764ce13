/* The simulator's toy tokenizer and filler text (docs/sim.md, "Tokens").
 *
 * Text is cut into pieces of at most 4 bytes that never span a whitespace
 * boundary: whitespace starts a new piece and belongs to it, so " hello"
 * becomes " hel" + "lo".  A piece's id is a hash of its bytes, so the same
 * text always gives the same ids, which is what the prefix cache needs. */
#include "tokenizer.h"

#include <ctype.h>
#include <stdlib.h>

#define VOCAB 65536

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

int64_t *sim_tokenize(const char *text, size_t len, size_t *n)
{
	/* at most one token per byte */
	int64_t *ids = malloc((len ? len : 1) * sizeof *ids);
	size_t k = 0, i = 0;

	if (!ids)
		return NULL;
	while (i < len) {
		size_t piece = 0;
		uint64_t h = 1469598103934665603ULL;
		do {
			h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
			i++;
			piece++;
		} while (i < len && piece < 4 && !isspace((unsigned char)text[i]));
		ids[k++] = (int64_t)(mix64(h) % VOCAB);
	}
	*n = k;
	return ids;
}

static const char *const words[] = {
	"the", "of", "and", "a", "to", "in", "is", "you", "that", "it", "he", "was",
	"for", "on", "are", "as", "with", "his", "they", "I", "at", "be", "this",
	"have", "from", "or", "one", "had", "by", "word", "but", "not", "what",
	"all", "were", "we", "when", "your", "can", "said", "there", "use", "an",
	"each", "which", "she", "do", "how", "their", "if", "will", "up", "other",
	"about", "out", "many", "then", "them", "these", "so", "some", "her",
	"would", "make"
};

/* Word `index` of the output whose seed is `seed`: the same prompt at
 * temperature 0 always yields the same words. */
const char *sim_word(uint64_t seed, int64_t index, int64_t *token_id)
{
	uint64_t h = mix64(seed + (uint64_t)index * 0x9E3779B97F4A7C15ULL);
	size_t w = (size_t)(h % (sizeof words / sizeof words[0]));
	if (token_id)
		*token_id = (int64_t)(1000 + w);
	return words[w];
}

uint64_t sim_hash_tokens(const int64_t *ids, size_t n, uint64_t seed)
{
	uint64_t h = mix64(seed ^ 0x5bd1e995ULL);
	for (size_t i = 0; i < n; i++)
		h = mix64(h ^ (uint64_t)ids[i]) + i;
	return h;
}
