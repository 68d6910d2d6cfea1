import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldStorage
import Hummingbird

/// Device registration (the notification design's `/push/*`) and the delivery log for operators.
struct PushRoutes {
    let registry: DeviceRegistry
    let clock: any HeraldClock

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/push/register") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            let (device, created) = try await registry.register(userID: identity.userID, body: body, userAgent: request.headers[.userAgent])
            return try Envelope.response(DeviceRegistry.json(device), status: created ? .created : .ok, context: context, clock: clock)
        }
        api.delete("/push/unregister") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            guard let device = try await registry.unregister(userID: identity.userID, body: body) else {
                throw APIError.notFound("You have no device with this token.")
            }
            return try Envelope.response(DeviceRegistry.json(device), context: context, clock: clock)
        }
        api.get("/push/devices") { _, context in
            let identity = try context.requireIdentity()
            let devices = try await registry.devices(userID: identity.userID)
            return try Envelope.response(JSONValue.object(["devices": .array(devices.map(DeviceRegistry.json))]), context: context, clock: clock)
        }
        api.get("/deliveries") { request, context in
            _ = try context.require(.operator, .service)
            let query = request.uri.queryParameters
            var v = FieldValidator()
            let notificationID = query["notification_id"].map(String.init)
            let statusText = query["status"].map(String.init)
            let status = statusText.flatMap(DeliveryStatus.init(rawValue:))
            if statusText != nil && status == nil {
                v.fail("status", "must be one of \(DeliveryStatus.allCases.map(\.rawValue).sorted().joined(separator: ", "))")
            }
            var limit = 100
            if let text = query["limit"] {
                if let value = Int(String(text)), (1...1000).contains(value) { limit = value } else { v.fail("limit", "must be an integer from 1 to 1000") }
            }
            try v.validate()
            let rows = try await registry.deliveries(notificationID: notificationID, status: status, limit: limit)
            return try Envelope.response(JSONValue.object(["deliveries": .array(rows.map(Self.json))]), context: context, clock: clock)
        }
    }

    static func json(_ d: DeliveryRecord) -> JSONValue {
        func time(_ ms: Int64?) -> JSONValue { ms.map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null }
        return .object([
            "id": .string(d.id), "notification_id": .string(d.notificationID), "user_id": .string(d.userID),
            "channel": .string(d.channel.rawValue), "device_id": d.deviceID.map(JSONValue.string) ?? .null,
            "provider": d.provider.map { .string($0.rawValue) } ?? .null, "status": .string(d.status.rawValue),
            "attempts": .number(Double(d.attempts)), "next_attempt_at": time(d.nextAttemptAt),
            "provider_message_id": d.providerMessageID.map(JSONValue.string) ?? .null,
            "reason": d.reason.map(JSONValue.string) ?? .null, "latency_ms": d.latencyMs.map { .number(Double($0)) } ?? .null,
            "created_at": time(d.createdAt), "completed_at": time(d.completedAt),
        ])
    }
}
