/// Random, prefixed, URL-safe identifiers (`req_7Hq…`, `ntf_…`).
///
/// Why prefixed: an id in a log line or a support ticket says what it names.
public enum Identifier {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    /// `prefix_` followed by `length` base-62 characters from the system's CSPRNG
    /// (22 characters carry more than 128 bits).
    ///
    /// Why ten characters per draw: each draw is a `getrandom` system call, and one a
    /// character made id generation 5 % of a 20,000-push fan-out's CPU. A uniform number
    /// below 62¹⁰ (which fits 64 bits) is exactly ten uniform base-62 digits.
    public static func make(_ prefix: String, length: Int = 22) -> String {
        var generator = SystemRandomNumberGenerator()
        var result = prefix
        result.reserveCapacity(prefix.utf8.count + 1 + length)
        result.append("_")
        var remaining = length
        while remaining > 0 {
            let digits = min(remaining, 10)
            var bound: UInt64 = 1
            for _ in 0..<digits { bound *= 62 }
            var draw = generator.next(upperBound: bound)
            for _ in 0..<digits {
                result.append(alphabet[Int(draw % 62)])
                draw /= 62
            }
            remaining -= digits
        }
        return result
    }
}
