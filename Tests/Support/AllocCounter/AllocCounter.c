// SPDX-License-Identifier: Apache-2.0
// Replaces the malloc family for the whole test process and forwards to
// glibc's own implementation (__libc_*), bumping a per-thread counter.
#include "AllocCounter.h"
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread uint64_t allocations;

uint64_t wl_alloc_count(void) { return allocations; }

void *malloc(size_t size) {
    allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    allocations++;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    allocations++;
    return __libc_realloc(p, size);
}

void *memalign(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    allocations++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    allocations++;
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

void free(void *p) { __libc_free(p); }
