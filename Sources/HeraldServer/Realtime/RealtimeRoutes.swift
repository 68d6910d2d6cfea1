import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import Hummingbird

/// REST access to the realtime hub for backends: publish to a room (one event, or a batch of
/// them in one request), ask whether a user is online.
struct RealtimeRoutes {
    let gateway: RealtimeGateway
    let maxPayload: Int

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/realtime/publish") { request, context in
            _ = try context.require(.service, .operator)
            let publication = try Publication.read(body: try await request.bodyData(context: context), maxPayload: maxPayload)
            let event = try await gateway.hub.publish(publication)
            return try Envelope.response(.object(Self.describe(event)), status: .accepted, context: context)
        }
        api.post("/realtime/publish/batch") { request, context in
            _ = try context.require(.service, .operator)
            let publications = try Publication.readBatch(body: try await request.bodyData(context: context), maxPayload: maxPayload)
            let events = try await gateway.hub.publish(publications)
            return try Envelope.response(.object(["events": .array(events.map { .object(Self.describe($0)) })]), status: .accepted, context: context)
        }
        api.get("/realtime/presence/{user_id}") { _, context in
            let identity = try context.requireIdentity()
            let user = try context.parameters.require("user_id")
            guard identity.userID == user || identity.role == .service || identity.role == .operator else {
                throw APIError.forbidden("Only the user, services and operators may read a user's presence.")
            }
            let online = try await gateway.presence.isOnline(user)
            return try Envelope.response(JSONValue.object(["user_id": .string(user), "online": .bool(online)]), context: context)
        }
    }

    /// A published event as the publish answers describe it.
    static func describe(_ event: RealtimeEvent) -> [String: JSONValue] {
        [
            "room": .string(event.room), "event": .string(event.name),
            "event_id": event.eventID.map(JSONValue.string) ?? .null,
            "seq": event.seq.map { .number(Double($0)) } ?? .null,
        ]
    }

    static let publishedEvent = Schema.object([
        "room": Schema.string(), "event": Schema.string(), "event_id": Schema.string(nullable: true),
        "seq": ["type": ["integer", "null"]],
    ])

    static let publication = Schema.object(
        [
            // Printable ASCII without spaces, not starting with `$` (the hub's own rooms).
            "room": Schema.string("Room, e.g. user:42 or trip:tr_4e5f", pattern: "^[!-#%-~][!-~]{0,199}$"),
            "event": Schema.token("Event name", maxBytes: 100),
            "payload": ["description": "Any JSON"],
            "persist": ["type": "boolean", "default": true],
        ], required: ["room", "event"])

    static let operations: [APIOperation] = [
        APIOperation(
            "POST", "/api/v1/realtime/publish", summary: "Publish an event to a room (every node, both protocols)",
            description: "Persisted events get the room's next sequence number and are replayable; `persist: false` sends an ephemeral event.",
            tag: "realtime", access: .authenticated(roles: ["service", "operator"]),
            requestBody: publication, response: publishedEvent, successStatus: 202, acceptsIdempotencyKey: true),
        APIOperation(
            "POST", "/api/v1/realtime/publish/batch", summary: "Publish many events, to any rooms, in one request",
            description:
                "Every event is checked before any is published (a 422 names each wrong one as `events[i].field`). Persisted events are stored in one transaction; each room's events keep their order. The answer lists the events in the order given.",
            tag: "realtime", access: .authenticated(roles: ["service", "operator"]),
            requestBody: Schema.object(
                ["events": ["type": "array", "minItems": 1, "maxItems": .number(Double(Publication.batchLimit)), "items": publication]],
                required: ["events"]),
            response: Schema.object(["events": ["type": "array", "items": publishedEvent]]),
            successStatus: 202, acceptsIdempotencyKey: true),
        APIOperation(
            "GET", "/api/v1/realtime/presence/{user_id}", summary: "Whether a user is connected on any node",
            tag: "realtime", access: .authenticated(roles: []),
            response: Schema.object(["user_id": Schema.string(), "online": ["type": "boolean"]])),
    ]
}
