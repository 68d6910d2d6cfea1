import Foundation

/// Where the data lives: `sqlite:PATH` (embedded, one node) or
/// `postgres://user:pass@host:port/db` (shared by many nodes).
public enum DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    public struct PostgresLocation: Sendable, Equatable {
        public var host: String
        public var port: Int
        public var username: String
        public var password: String?
        public var database: String
        /// `sslmode=require` asks for TLS; anything else connects in clear on a trusted network.
        public var requireTLS: Bool
    }

    public init(parsing text: String) throws {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty else { throw DatabaseURLError("sqlite: needs a path, e.g. sqlite:./herald-data/herald.sqlite") }
            self = .sqlite(path: path)
            return
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw DatabaseURLError("the database URL must start with sqlite: or postgres://")
        }
        guard let host = components.host, !host.isEmpty else { throw DatabaseURLError("the postgres URL has no host") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw DatabaseURLError("the postgres URL names no database") }
        let sslMode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value
        self = .postgres(
            PostgresLocation(
                host: host, port: components.port ?? 5432,
                username: components.user?.removingPercentEncoding ?? "postgres",
                password: components.password?.removingPercentEncoding,
                database: database.removingPercentEncoding ?? database,
                requireTLS: sslMode == "require" || sslMode == "verify-full"
            ))
    }

    /// The URL without its password, for logs.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let location):
            "postgres://\(location.username)@\(location.host):\(location.port)/\(location.database)"
        }
    }
}

public struct DatabaseURLError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}
