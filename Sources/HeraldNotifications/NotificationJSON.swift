import Foundation
import HeraldCore
import HeraldStorage

/// The one JSON shape of a notification, used by REST, both realtime protocols and `sync`,
/// so an app parses the same object wherever it came from (the notification design's
/// `{id, type, severity, delivery, title, body, data, created_at}` plus read state).
public enum NotificationJSON {
    public static func object(_ n: NotificationRecord) -> JSONValue {
        var data: JSONValue = .object([:])
        if let parsed = try? JSONDecoder().decode(JSONValue.self, from: Data(n.data.utf8)) { data = parsed }
        return .object([
            "id": .string(n.id),
            "user_id": .string(n.userID),
            "type": .string(n.type),
            "severity": .string(n.severity.rawValue),
            "delivery": .string(n.delivery.rawValue),
            "title": .string(n.title),
            "body": n.body.map(JSONValue.string) ?? .null,
            "data": data,
            "category": n.category.map(JSONValue.string) ?? .null,
            "thread_id": n.threadID.map(JSONValue.string) ?? .null,
            "collapse_key": n.collapseKey.map(JSONValue.string) ?? .null,
            "created_at": .string(Timestamp.string(epochMilliseconds: n.createdAt)),
            "read_at": n.readAt.map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null,
            "sent_via": n.sentVia.map { .string($0.rawValue) } ?? .null,
        ])
    }
}
