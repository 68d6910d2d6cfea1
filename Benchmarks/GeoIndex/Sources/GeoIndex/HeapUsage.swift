import CMallocInfo

/// Bytes the process has allocated through malloc: glibc's arena bytes in use plus mmapped
/// blocks (large arrays are mmapped, so `uordblks` alone would miss most of the index).
enum HeapUsage {
    static func allocatedBytes() -> Int {
        var inUse = 0
        var free = 0
        var mmapped = 0
        geoindex_heap_usage(&inUse, &free, &mmapped)
        return inUse + mmapped
    }
}
