#ifndef GEOINDEX_CMALLOCINFO_H
#define GEOINDEX_CMALLOCINFO_H
#include <stddef.h>

/// glibc mallinfo2(): bytes in live allocations (arena), free bytes kept in the heap, bytes in mmapped blocks.
void geoindex_heap_usage(size_t *in_use, size_t *free_bytes, size_t *mmapped);

#endif
