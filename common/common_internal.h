/* What the files of common/ share and nothing else sees: the memory budget's counting, which
 * the allocation wrappers (common_alloc.c) call while a budget is set (common_memory.c). */
#ifndef ACC_COMMON_INTERNAL_H
#define ACC_COMMON_INTERNAL_H

#include <stddef.h>

/* Count bytes about to be allocated; 0 (and nothing counted) when they would pass the budget. */
int common_mem_reserve(size_t bytes);
/* After the allocation of `reserved` bytes: count what the allocator gave for ptr instead, or
 * nothing when it failed (ptr NULL). */
void common_mem_account(void *ptr, size_t reserved);
/* Stop counting bytes that were freed (or moved by realloc). */
void common_mem_release(size_t bytes);

#endif
