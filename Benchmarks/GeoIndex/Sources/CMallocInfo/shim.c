#include "CMallocInfo.h"
#if defined(__linux__)
#include <malloc.h>
#endif

void geoindex_heap_usage(size_t *in_use, size_t *free_bytes, size_t *mmapped) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 info = mallinfo2();
    *in_use = info.uordblks;
    *free_bytes = info.fordblks;
    *mmapped = info.hblkhd;
#else
    *in_use = 0;
    *free_bytes = 0;
    *mmapped = 0;
#endif
}
