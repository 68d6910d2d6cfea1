/// Random, prefixed, URL-safe identifiers (`req_7Hq…`, `ntf_…`).
///
/// Why prefixed: an id in a log line or a support ticket says what it names.
public enum Identifier {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    /// `prefix_` followed by `length` base-62 characters from the system's CSPRNG
    /// (22 characters carry more than 128 bits).
    public static func make(_ prefix: String, length: Int = 22) -> String {
        var generator = SystemRandomNumberGenerator()
        var result = prefix
        result.reserveCapacity(prefix.count + 1 + length)
        result.append("_")
        for _ in 0..<length {
            result.append(alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))])
        }
        return result
    }
}
