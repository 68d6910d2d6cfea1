import Logging
import SQLKit
import ServiceLifecycle

/// Which SQL engine is underneath; stores use it where the dialects differ
/// (`FOR UPDATE SKIP LOCKED`, advisory locks, `LISTEN/NOTIFY`).
public enum DatabaseEngine: String, Sendable {
    case sqlite
    case postgres
}

/// Herald's one data-access seam: the same SQLKit queries run on SQLite and PostgreSQL.
///
/// Why closures and not a shared handle: on SQLite every statement of a transaction must go
/// through the one connection that holds it, and on PostgreSQL a pooled connection must be
/// returned. `read`/`write` lend an executor for one scope; stores take that executor as an
/// argument so several store calls compose into one transaction.
public protocol Database: Sendable {
    var engine: DatabaseEngine { get }

    /// Runs `body` with a connection in autocommit mode.
    func withConnection<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T

    /// Runs `body` inside one transaction: committed when it returns, rolled back when it throws.
    func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T

    /// Where work that no request waits on (the push delivery worker) takes its connections.
    ///
    /// Why a lane of its own: a pool hands connections out first come, first served, so under
    /// a burst of requests a background loop's every statement queued behind all of them (one
    /// node offered 600 notifications/s delivered pushes at a third of the rate they were
    /// created while sockets kept up). On PostgreSQL it is a few connections apart from the
    /// pool (`database.background_connections`); on SQLite, with one writer, it is the database.
    var background: any Database { get }

    /// A Service to run in the application's ServiceGroup for as long as the database is used
    /// (the PostgreSQL pool only leases connections while it runs), or nil when none is needed.
    var service: (any Service)? { get }

    /// Closes connections; call once, after the service has stopped.
    func close() async
}

extension Database {
    public var background: any Database { self }

    /// Answers whether the database takes queries (for `/readyz`).
    public func ping() async throws {
        _ = try await withConnection { db in
            try await db.raw("SELECT 1 AS ok").first()
        }
    }
}
