import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldStorage
import Hummingbird

/// The inbox API (the notification design's) and the send endpoint app backends integrate with.
struct NotificationRoutes {
    let service: NotificationService
    let inbox: NotificationInbox
    let preferences: PreferenceEditor
    let clock: any HeraldClock

    struct SendRequest: Decodable {
        let userID: String?
        let userIDs: [String]?
        let type: String
        let title: String
        let body: String?
        let data: [String: JSONValue]?
        let severity: String?
        let delivery: String?
        let category: String?
        let threadID: String?
        let collapseKey: String?
        let dedupeKey: String?
        let ttlSeconds: Int?

        enum CodingKeys: String, CodingKey {
            case type, title, body, data, severity, delivery, category
            case userID = "user_id"
            case userIDs = "user_ids"
            case threadID = "thread_id"
            case collapseKey = "collapse_key"
            case dedupeKey = "dedupe_key"
            case ttlSeconds = "ttl_seconds"
        }

        func draft() throws -> NotificationDraft {
            var v = FieldValidator()
            v.check(!(userID != nil && userIDs != nil), "user_ids", "give user_id or user_ids, not both")
            v.check(userID != nil || userIDs != nil, "user_ids", "is required (or user_id)")
            let severity = self.severity.flatMap(Severity.init(rawValue:))
            if self.severity != nil && severity == nil { v.fail("severity", "must be info, warning or alert") }
            let delivery = self.delivery.flatMap(DeliveryMode.init(rawValue:))
            if self.delivery != nil && delivery == nil { v.fail("delivery", "must be push or in_app") }
            try v.validate()
            return NotificationDraft(
                userIDs: userIDs ?? userID.map { [$0] } ?? [], type: type, title: title, body: body, data: data ?? [:],
                severity: severity, delivery: delivery, category: category, threadID: threadID, collapseKey: collapseKey,
                dedupeKey: dedupeKey, ttlSeconds: ttlSeconds)
        }
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/notifications") { request, context in
            _ = try context.require(.service, .operator)
            let draft = try await request.decodeJSON(SendRequest.self, context: context).draft()
            // Answered in the transaction that writes the notifications: a retry after a crash
            // replays this answer instead of sending again.
            return try await IdempotentAnswer.answer(
                [SendOutcome].self,
                respond: { outcomes in
                    let results: [JSONValue] = outcomes.map { outcome in
                        .object([
                            "notification": NotificationJSON.object(outcome.notification),
                            "deduplicated": .bool(outcome.deduplicated),
                            "channel": .string(outcome.channel.rawValue),
                            "push_deliveries": .number(Double(outcome.pushDeliveries)),
                            "push_suppressed": outcome.pushSuppressed.map { .string($0.rawValue) } ?? .null,
                        ])
                    }
                    let created = outcomes.contains { !$0.deduplicated }
                    return try Envelope.response(
                        JSONValue.object(["results": .array(results)]), status: created ? .created : .ok, context: context, clock: clock)
                }
            ) { answer in
                try await service.send(draft, answer: answer)
            }
        }
        api.get("/notifications") { request, context in
            let identity = try context.requireIdentity()
            let (offset, limit, unreadOnly) = try Self.page(request)
            let page = try await inbox.list(userID: identity.userID, offset: offset, limit: limit, unreadOnly: unreadOnly)
            return try Envelope.response(
                JSONValue.object([
                    "notifications": .array(page.notifications.map(NotificationJSON.object)),
                    "total": .number(Double(page.total)), "unread_count": .number(Double(page.unread)),
                    "offset": .number(Double(offset)), "limit": .number(Double(limit)),
                ]), context: context, clock: clock)
        }
        api.get("/notifications/unread-count") { _, context in
            let identity = try context.requireIdentity()
            let count = try await inbox.unreadCount(userID: identity.userID)
            return try Envelope.response(JSONValue.object(["count": .number(Double(count))]), context: context, clock: clock)
        }
        api.get("/notifications/preferences") { _, context in
            let identity = try context.requireIdentity()
            return try Envelope.response(try await preferences.document(userID: identity.userID), context: context, clock: clock)
        }
        api.put("/notifications/preferences") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            let document = try await preferences.update(userID: identity.userID, role: identity.role.rawValue, body: body)
            return try Envelope.response(document, context: context, clock: clock)
        }
        api.post("/notifications/bulk-read") { request, context in
            let identity = try context.requireIdentity()
            let ids = try Self.bulkIDs(try await request.jsonObject(context: context))
            let changed = try await inbox.markRead(userID: identity.userID, ids: ids)
            let count = try await inbox.unreadCount(userID: identity.userID)
            return try Envelope.response(
                JSONValue.object([
                    "updated": .number(Double(changed.count)), "notification_ids": .array(changed.sorted().map(JSONValue.string)),
                    "unread_count": .number(Double(count)),
                ]), context: context, clock: clock)
        }
        api.post("/notifications/{id}/read") { _, context in
            let identity = try context.requireIdentity()
            let id = try context.parameters.require("id")
            guard let record = try await inbox.markRead(userID: identity.userID, id: id) else {
                throw APIError.notFound("No such notification.")
            }
            return try Envelope.response(NotificationJSON.object(record), context: context, clock: clock)
        }
        api.delete("/notifications/{id}") { _, context in
            let identity = try context.requireIdentity()
            let id = try context.parameters.require("id")
            guard try await inbox.delete(userID: identity.userID, id: id) else { throw APIError.notFound("No such notification.") }
            return try Envelope.response(JSONValue.object(["id": .string(id), "deleted": true]), context: context, clock: clock)
        }
    }

    static func page(_ request: Request) throws -> (offset: Int, limit: Int, unreadOnly: Bool) {
        let query = request.uri.queryParameters
        var v = FieldValidator()
        var offset = 0
        var limit = 20
        var unreadOnly = false
        if let text = query["offset"] {
            if let value = Int(String(text)), (0...1_000_000).contains(value) {
                offset = value
            } else {
                v.fail("offset", "must be an integer from 0 to 1000000")
            }
        }
        if let text = query["limit"] {
            if let value = Int(String(text)), (1...100).contains(value) { limit = value } else { v.fail("limit", "must be an integer from 1 to 100") }
        }
        if let text = query["unread_only"] {
            switch String(text).lowercased() {
            case "true", "1": unreadOnly = true
            case "false", "0": unreadOnly = false
            default: v.fail("unread_only", "must be true or false")
            }
        }
        try v.validate()
        return (offset, limit, unreadOnly)
    }

    static func bulkIDs(_ body: [String: JSONValue]) throws -> [String] {
        var v = FieldValidator()
        for key in body.keys.sorted() where key != "notification_ids" { v.fail(key, "is not a known field") }
        var ids: [String] = []
        switch body["notification_ids"] {
        case .array(let values)?:
            v.check(
                !values.isEmpty && values.count <= NotificationSocketEvents.maxBulkIDs, "notification_ids",
                "must list 1 to \(NotificationSocketEvents.maxBulkIDs) ids")
            for (index, value) in values.enumerated() {
                if case .string(let id) = value, (1...128).contains(id.utf8.count) {
                    ids.append(id)
                } else {
                    v.fail("notification_ids[\(index)]", "must be a notification id")
                }
            }
        case nil: v.fail("notification_ids", "is required")
        default: v.fail("notification_ids", "must be a list of ids")
        }
        try v.validate()
        return ids
    }
}
