/* Allocation failure injection for tests linked with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (alloc_fail.c): while
 * tt_alloc_allow >= 0, that many more allocations succeed and every later
 * one fails (counted in tt_alloc_failed); -1 lets all through. */
#ifndef TT_ALLOC_FAIL_H
#define TT_ALLOC_FAIL_H

extern long tt_alloc_allow;
extern unsigned tt_alloc_failed;

#endif
