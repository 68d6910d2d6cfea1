import Foundation
import HTTPTypes

/// Which origins a browser may call Herald from, and the `Access-Control-*` headers that
/// tell it so (the Fetch standard's CORS protocol).
///
/// Why Herald's own and not Hummingbird's `CORSMiddleware`: the allowed origins come from
/// the config file as a list with port wildcards, WebSocket upgrades (which CORS does not
/// cover) are checked against the same list, and a refused preflight gets an answer that
/// says why. A pure value, so each rule is tested without a server.
public struct CORSPolicy: Sendable, Equatable {
    /// One allowed origin: `https://app.example.com`, `http://localhost:*` (any port).
    struct OriginPattern: Sendable, Equatable {
        let scheme: String
        let host: String
        /// Nil: any port; otherwise the port, the scheme's default when the origin names none.
        let port: Int?

        init?(_ text: String) {
            guard let parts = Self.split(text) else { return nil }
            scheme = parts.scheme
            host = parts.host
            switch parts.port {
            case nil: port = Self.defaultPort(parts.scheme)
            case "*": port = nil
            case let digits?:
                guard let number = Int(digits), (1...65_535).contains(number) else { return nil }
                port = number
            }
        }

        func matches(_ origin: String) -> Bool {
            guard let parts = Self.split(origin), parts.port != "*", parts.scheme == scheme, parts.host == host else { return false }
            let originPort = parts.port.flatMap { Int($0) } ?? Self.defaultPort(parts.scheme)
            return port == nil || originPort == port
        }

        /// `scheme://host[:port]`, lower-cased, with nothing after the authority (an origin
        /// has no path, query or user).
        static func split(_ text: String) -> (scheme: String, host: String, port: Substring?)? {
            let lowered = text.lowercased()
            guard let separator = lowered.range(of: "://") else { return nil }
            let scheme = String(lowered[..<separator.lowerBound])
            let authority = lowered[separator.upperBound...]
            guard let first = scheme.first, first.isLetter,
                scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
                !authority.isEmpty, !authority.contains(where: { "/?#@ \\".contains($0) })
            else { return nil }
            var host = authority
            var port: Substring?
            if authority.hasPrefix("[") {
                guard let close = authority.firstIndex(of: "]") else { return nil }
                host = authority[...close]
                let rest = authority[authority.index(after: close)...]
                if !rest.isEmpty {
                    guard rest.hasPrefix(":") else { return nil }
                    port = rest.dropFirst()
                }
            } else if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                port = authority[authority.index(after: colon)...]
            }
            guard !host.isEmpty, port.map({ $0 == "*" || (!$0.isEmpty && $0.allSatisfy(\.isNumber)) }) ?? true else { return nil }
            return (scheme, String(host), port)
        }

        static func defaultPort(_ scheme: String) -> Int? {
            switch scheme {
            case "http", "ws": 80
            case "https", "wss": 443
            default: nil
            }
        }
    }

    /// What a preflight (`OPTIONS` with `Access-Control-Request-Method`) gets.
    public enum Preflight: Equatable {
        case allowed(HTTPFields)
        case refused
    }

    /// Loopback pages, allowed while the server runs on its development secret.
    public static let developmentOrigins = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
    /// Response headers a page's script may read besides the CORS-safelisted ones.
    static let exposedHeaders =
        "Retry-After, X-Request-ID, Idempotent-Replayed, X-RateLimit-Limit, X-RateLimit-Remaining, X-Checksum-SHA256, Herald-Token-Ignored"
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
    static let allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"

    let patterns: [OriginPattern]
    let anyOrigin: Bool
    let allowCredentials: Bool
    let maxAgeSeconds: Int

    /// `development`: neither `auth.jwt_secret` nor `auth.jwks_file` is configured, so the
    /// server trusts only the secret it made in its data directory; loopback pages are then
    /// allowed unless origins are listed.
    public init(_ config: CORSConfig, development: Bool) {
        let origins = config.allowedOrigins ?? (development ? Self.developmentOrigins : [])
        anyOrigin = origins.contains("*")
        patterns = origins.compactMap(OriginPattern.init)
        allowCredentials = config.allowCredentials && !anyOrigin
        maxAgeSeconds = config.maxAgeSeconds
    }

    /// Whether a page on `origin` may call Herald. `null` (sandboxed frames, `file:` pages)
    /// never may, even with `*`: it names no site.
    public func allows(origin: String) -> Bool {
        guard origin != "null", let parts = OriginPattern.split(origin), parts.port != "*" else { return false }
        return anyOrigin || patterns.contains { $0.matches(origin) }
    }

    /// Whether `origin` is the server's own (`Host` names the same authority): a page Herald
    /// serves itself, which needs no CORS.
    public static func isSameOrigin(_ origin: String, host: String?) -> Bool {
        guard let host, let parts = OriginPattern.split(origin), let own = OriginPattern.split("\(parts.scheme)://\(host)") else { return false }
        let port = { (p: Substring?) in p.flatMap { Int($0) } ?? OriginPattern.defaultPort(parts.scheme) }
        return own.host == parts.host && port(own.port) == port(parts.port)
    }

    /// Whether a browser page on `origin` may open a WebSocket here: an allowed origin or the
    /// server's own. CORS does not cover WebSockets, so without this any site could open one
    /// with its visitor's cookies (cross-site WebSocket hijacking).
    public func allowsWebSocket(origin: String?, host: String?) -> Bool {
        guard let origin else { return true }  // not a browser
        // A browser sends its page's origin (http, https, an app's own scheme), and no page
        // can choose it; `ws://host` is what WebSocket libraries outside browsers put there.
        if let parts = OriginPattern.split(origin), parts.scheme == "ws" || parts.scheme == "wss" { return true }
        return Self.isSameOrigin(origin, host: host) || allows(origin: origin)
    }

    /// The headers of an ordinary response to a page on `origin`; empty when it may not read it.
    public func responseHeaders(origin: String) -> HTTPFields {
        var fields = HTTPFields()
        fields[.vary] = "Origin"
        guard allows(origin: origin) else { return fields }
        allow(origin, in: &fields)
        fields[.accessControlExposeHeaders] = Self.exposedHeaders
        return fields
    }

    /// The origin (or `*`) and the credentials flag, for an allowed origin.
    private func allow(_ origin: String, in fields: inout HTTPFields) {
        fields[.accessControlAllowOrigin] = anyOrigin ? "*" : origin
        if allowCredentials { fields[.accessControlAllowCredentials] = "true" }
    }

    /// The answer to a preflight from `origin` for `method` with `requestHeaders` (the value
    /// of `Access-Control-Request-Headers`).
    public func preflight(origin: String, method: String, requestHeaders: String?) -> Preflight {
        guard allows(origin: origin), Self.methods.contains(method) else { return .refused }
        let asked = (requestHeaders ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard asked.allSatisfy({ HTTPField.Name($0) != nil }), asked.count <= 32 else { return .refused }
        var fields: HTTPFields = [.vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"]
        allow(origin, in: &fields)
        fields[.accessControlAllowMethods] = Self.allowedMethods
        if !asked.isEmpty { fields[.accessControlAllowHeaders] = asked.joined(separator: ", ") }
        fields[.accessControlMaxAge] = String(maxAgeSeconds)
        return .allowed(fields)
    }
}
