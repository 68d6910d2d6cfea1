/// Degrees as Int32 in units of 1e-7° (at most 1.1 cm): a position takes 8 bytes instead of
/// 16, and that is still far finer than any phone's GPS fix.
///
/// Decoding divides (rather than multiplies by 1e-7) so that a value with at most seven
/// decimals, such as 37.7749, comes back as exactly the same `Double`.
enum FixedPoint {
    static let unitsPerDegree: Double = 10_000_000

    /// `degrees` must be within -180...180 (the caller validates), so the result fits in Int32.
    @inline(__always)
    static func encode(_ degrees: Double) -> Int32 {
        Int32((degrees * unitsPerDegree).rounded())
    }

    @inline(__always)
    static func decode(_ units: Int32) -> Double {
        Double(units) / unitsPerDegree
    }
}
