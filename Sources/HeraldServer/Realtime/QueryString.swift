import Foundation

/// Parses a URL query (`a=1&b=two%20words`) into a dictionary; the first value of a
/// repeated key wins and malformed escapes are kept as written.
enum QueryString {
    static func parse(_ query: Substring) -> [String: String] {
        var result: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true).prefix(64) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = decode(parts[0])
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if result[key] == nil { result[key] = value }
        }
        return result
    }

    /// The path and query of a request target (`/socket.io/?EIO=4`).
    static func split(_ target: String) -> (path: Substring, query: [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target[...], [:]) }
        return (target[..<mark], parse(target[target.index(after: mark)...]))
    }

    private static func decode(_ text: Substring) -> String {
        let plusFree = text.replacingOccurrences(of: "+", with: " ")
        return plusFree.removingPercentEncoding ?? plusFree
    }
}
