// SPDX-License-Identifier: Apache-2.0
// Counts heap allocations made by the calling thread, so tests can prove a
// code path allocates nothing. Thread-local because Swift Testing runs tests
// in parallel.
#ifndef WRISTLINK_ALLOC_COUNTER_H
#define WRISTLINK_ALLOC_COUNTER_H
#include <stdint.h>

/// Allocations (malloc, calloc, realloc, memalign family) by this thread
/// since it started.
uint64_t wl_alloc_count(void);

#endif
