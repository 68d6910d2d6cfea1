import HeraldCore
import HeraldStorage
import SQLKit

extension NotificationService {
    /// What the operations console shows of notifications: deliveries by channel, provider and
    /// status (the last `window` milliseconds), the push queue (deliveries waiting to be sent
    /// or being sent), and the latest failed pushes with their reason.
    public func operationsView(now: Int64, window: Int64 = 3_600_000) async throws -> (deliveries: [JSONValue], queueDepth: Int, failures: [JSONValue]) {
        try await database.withConnection { db in
            let counts = try await db.raw(
                """
                SELECT channel, COALESCE(provider, '') AS provider, status, COUNT(*) AS n FROM notification_deliveries
                WHERE updated_at >= \(bind: now - window) GROUP BY channel, provider, status ORDER BY channel, provider, status
                """
            ).all().map { row -> JSONValue in
                let provider = try row.decode(column: "provider", as: String.self)
                return [
                    "channel": .string(try row.decode(column: "channel", as: String.self)),
                    "provider": provider.isEmpty ? .null : .string(provider),
                    "status": .string(try row.decode(column: "status", as: String.self)),
                    "count": .number(Double(try row.decode(column: "n", as: Int.self))),
                ]
            }
            let (push, pending, sending) = (DeliveryChannel.push.rawValue, DeliveryStatus.pending.rawValue, DeliveryStatus.sending.rawValue)
            let queued =
                try await db.raw(
                    "SELECT COUNT(*) AS n FROM notification_deliveries WHERE channel = \(bind: push) AND status IN (\(bind: pending), \(bind: sending))"
                ).first()?.decode(column: "n", as: Int.self) ?? 0
            let (failed, dead) = (DeliveryStatus.failed.rawValue, DeliveryStatus.dead.rawValue)
            let failures = try await db.raw(
                """
                SELECT id, provider, status, reason, updated_at FROM notification_deliveries
                WHERE status IN (\(bind: failed), \(bind: dead)) ORDER BY updated_at DESC LIMIT 10
                """
            ).all().map { row -> JSONValue in
                [
                    "delivery_id": .string(try row.decode(column: "id", as: String.self)),
                    "provider": (try row.decode(column: "provider", as: String?.self)).map(JSONValue.string) ?? .null,
                    "status": .string(try row.decode(column: "status", as: String.self)),
                    "reason": (try row.decode(column: "reason", as: String?.self)).map(JSONValue.string) ?? .null,
                    "at": .string(Timestamp.string(epochMilliseconds: try row.decode(column: "updated_at", as: Int64.self))),
                ]
            }
            return (counts, queued, failures)
        }
    }
}
