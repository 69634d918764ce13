/* tokentrace-sim: the prefix cache, a bounded set of KV block hashes. */
#ifndef TT_SIM_PREFIX_CACHE_H
#define TT_SIM_PREFIX_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct prefix_cache {
	uint64_t *slots;
	size_t cap, used;
};

/* Sized for a KV cache of `blocks` blocks; 0, or -1 when out of memory. */
int prefix_cache_init(struct prefix_cache *pc, size_t blocks);
void prefix_cache_release(struct prefix_cache *pc);
/* Whether block hash h is cached. */
int prefix_cache_has(const struct prefix_cache *pc, uint64_t h);
/* Caches block hash h (evicting everything when three quarters full). */
void prefix_cache_add(struct prefix_cache *pc, uint64_t h);

#endif
