/* The wrapped allocator of alloc_fail.h. */
#include <stddef.h>

#include "alloc_fail.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

long tt_alloc_allow = -1;
unsigned tt_alloc_failed;

static int gate_ok(void)
{
	if (tt_alloc_allow < 0)
		return 1;
	if (tt_alloc_allow == 0) {
		tt_alloc_failed++;
		return 0;
	}
	tt_alloc_allow--;
	return 1;
}

void *__wrap_malloc(size_t n)
{
	return gate_ok() ? __real_malloc(n) : NULL;
}

void *__wrap_calloc(size_t n, size_t size)
{
	return gate_ok() ? __real_calloc(n, size) : NULL;
}

void *__wrap_realloc(void *p, size_t n)
{
	return gate_ok() ? __real_realloc(p, n) : NULL;
}
