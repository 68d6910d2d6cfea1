/// A fast seeded hash of a driver id's UTF-8 bytes, 8 bytes at a time.
///
/// Not cryptographic: the per-grid random seed only keeps a fixed set of crafted ids from
/// colliding in every process. Ids come from Herald's own user table, not from arbitrary input.
enum IDHash {
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var h = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        let count = bytes.count
        while offset + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            h = mix(h ^ word)
            offset += 8
        }
        if offset < count {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while offset < count {
                word |= UInt64(bytes[offset]) << shift
                shift += 8
                offset += 1
            }
            h = mix(h ^ word)
        }
        return finalize(h)
    }

    @inline(__always)
    private static func mix(_ x: UInt64) -> UInt64 {
        let m = x &* 0xBF58_476D_1CE4_E5B9
        return m ^ (m >> 31)
    }

    /// MurmurHash3's fmix64.
    @inline(__always)
    private static func finalize(_ x: UInt64) -> UInt64 {
        var k = x
        k ^= k >> 33
        k = k &* 0xFF51_AFD7_ED55_8CCD
        k ^= k >> 33
        k = k &* 0xC4CE_B9FE_1A85_EC53
        k ^= k >> 33
        return k
    }
}
