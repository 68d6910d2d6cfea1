#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CLOCK_MONOTONIC in nanoseconds (a vDSO call, ~20 ns), for per-query timing.
enum Monotonic {
    @inline(__always)
    static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func seconds(since start: UInt64) -> Double {
        Double(nanoseconds() - start) / 1e9
    }
}
