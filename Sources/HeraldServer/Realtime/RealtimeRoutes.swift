import Foundation
import HeraldAuth
import HeraldCore
import HeraldRealtime
import Hummingbird

/// REST access to the realtime hub for backends: publish to a room, ask whether a user is
/// online.
struct RealtimeRoutes {
    let gateway: RealtimeGateway
    let maxPayload: Int

    struct PublishRequest: Decodable {
        let room: String
        let event: String
        let payload: JSONValue?
        let persist: Bool?
    }

    static let reservedEvents: Set<String> = [
        "connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener",
    ]

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/realtime/publish") { request, context in
            _ = try context.require(.service, .operator)
            let body = try await request.decodeJSON(PublishRequest.self, context: context)
            let payload = body.payload ?? .null
            try Self.validate(body, payloadBytes: SocketPacketEncoder.json(payload).utf8.count, maxPayload: maxPayload)
            let event = try await gateway.hub.publish(body.event, payload: payload, to: body.room, persist: body.persist ?? true)
            var data: [String: JSONValue] = ["room": .string(event.room), "event": .string(event.name)]
            data["event_id"] = event.eventID.map(JSONValue.string) ?? .null
            data["seq"] = event.seq.map { .number(Double($0)) } ?? .null
            return try Envelope.response(JSONValue.object(data), status: .accepted, context: context)
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

    static func validate(_ body: PublishRequest, payloadBytes: Int, maxPayload: Int) throws {
        var validator = FieldValidator()
        validator.check(RealtimeRoom.isValid(body.room), "room", "must be 1 to 200 printable characters without spaces, like trip:tr_4e5f")
        validator.check(
            (1...100).contains(body.event.count) && !body.event.contains(where: { $0.isWhitespace || $0.isNewline }),
            "event", "must be 1 to 100 characters without spaces")
        validator.check(!reservedEvents.contains(body.event), "event", "is reserved by Socket.IO")
        validator.check(payloadBytes <= maxPayload, "payload", "must be at most \(maxPayload) bytes of JSON")
        try validator.validate()
    }

    static let operations: [APIOperation] = [
        APIOperation(
            "POST", "/api/v1/realtime/publish", summary: "Publish an event to a room (every node, both protocols)",
            description: "Persisted events get the room's next sequence number and are replayable; `persist: false` sends an ephemeral event.",
            tag: "realtime", access: .authenticated(roles: ["service", "operator"]),
            requestBody: Schema.object(
                [
                    "room": Schema.token("Room, e.g. user:42 or trip:tr_4e5f", maxBytes: 200),
                    "event": Schema.token("Event name", maxBytes: 100),
                    "payload": ["description": "Any JSON"],
                    "persist": ["type": "boolean", "default": true],
                ], required: ["room", "event"]),
            response: Schema.object([
                "room": Schema.string(), "event": Schema.string(), "event_id": Schema.string(nullable: true),
                "seq": ["type": ["integer", "null"]],
            ]),
            successStatus: 202, acceptsIdempotencyKey: true),
        APIOperation(
            "GET", "/api/v1/realtime/presence/{user_id}", summary: "Whether a user is connected on any node",
            tag: "realtime", access: .authenticated(roles: []),
            response: Schema.object(["user_id": Schema.string(), "online": ["type": "boolean"]])),
    ]
}

/// Rules for room names, shared by every way of naming one.
public enum RealtimeRoom {
    public static func isValid(_ room: String) -> Bool {
        (1...200).contains(room.utf8.count)
            && room.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }
}
