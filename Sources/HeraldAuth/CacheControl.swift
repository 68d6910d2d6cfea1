import Foundation

/// How long a response may be kept, read from its `Cache-Control` header (RFC 9111 §5.2.2).
///
/// Why only `max-age`, `s-maxage`, `no-cache` and `no-store`: a JWKS answer is a single
/// shared document, and those are what identity providers send (Firebase and Google send
/// `max-age` of hours, Auth0 and Supabase of minutes). Anything else is ignored.
public struct CacheControl: Sendable, Equatable {
    /// Seconds the answer stays fresh; nil when the header says nothing about it.
    public var maxAgeSeconds: Int?

    public init(maxAgeSeconds: Int?) {
        self.maxAgeSeconds = maxAgeSeconds
    }

    public init(header: String?) {
        guard let header else {
            maxAgeSeconds = nil
            return
        }
        var maxAge: Int?
        var shared: Int?
        var noCache = false
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first else { continue }
            let value = parts.count == 2 ? Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) : nil
            switch name {
            case "max-age": if let value, value >= 0 { maxAge = value }
            case "s-maxage": if let value, value >= 0 { shared = value }
            case "no-cache", "no-store": noCache = true
            default: continue
            }
        }
        maxAgeSeconds = noCache ? 0 : (shared ?? maxAge)
    }
}
