import Logging
import NIOCore
import PostgresKit
import PostgresNIO
import SQLKit

/// The `SQLDatabase` a PostgreSQL body is given: every statement is written to the connection
/// on its event loop, and only while the connection is open.
///
/// Why: PostgresNIO (1.33) writes a query to its channel without a write promise. Once the
/// channel has closed (the server restarting, a failover) its handlers are gone, the write
/// fails silently and the query's own promise is never completed: the statement, its
/// transaction and the request above it wait for ever (a ROLLBACK after a lost connection did
/// exactly that, and stopped the push worker). Checking that the channel is open and writing
/// in the same event-loop turn leaves no gap for the close to fall into: an open channel
/// still has the handler that fails the query if the connection goes later.
struct OpenConnectionSQL: SQLDatabase {
    let connection: PostgresConnection
    let base: any SQLDatabase

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.base = connection.sql(queryLogLevel: .trace, logger: logger)
    }

    var logger: Logger { base.logger }
    var eventLoop: any EventLoop { connection.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { base.version }
    var dialect: any SQLDialect { base.dialect }
    var queryLogLevel: Logger.Level? { base.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        let connection = self.connection
        let base = self.base
        // On the loop, `base.execute` encodes the binds into an already completed future and
        // its `flatMap` runs at once, so the query is written in this same turn.
        return connection.eventLoop.flatSubmit {
            guard !connection.isClosed else { return connection.eventLoop.makeFailedFuture(DatabaseUnavailable(.connectionLost)) }
            return base.execute(sql: query, onRow)
        }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await execute(sql: query, onRow).get()
    }
}
