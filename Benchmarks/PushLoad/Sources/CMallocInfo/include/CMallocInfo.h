#ifndef CMALLOCINFO_H
#define CMALLOCINFO_H
#include <stddef.h>

/// glibc mallinfo2(): bytes in live allocations, free bytes kept in the heap, bytes in mmapped blocks.
void pushload_heap_usage(size_t *in_use, size_t *free_bytes, size_t *mmapped);

#endif
