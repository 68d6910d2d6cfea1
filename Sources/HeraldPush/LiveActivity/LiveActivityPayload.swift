import Foundation
import HeraldCore

/// The JSON of an ActivityKit push, as Apple documents it: everything inside `aps`.
///
/// Why no shortening (as `APNsPayload` does for a body): the content state is the app's
/// Codable data, and a cut one would not decode; a payload over the limit is refused.
public enum LiveActivityPayload {
    /// APNs's limit for a Live Activity push (as for an alert).
    public static let maxBytes = 4096

    /// The `aps` keys in sorted order, written by hand like `APNsPayload`.
    public static func encode(_ message: LiveActivityMessage, maxBytes: Int = maxBytes) throws -> Data {
        var aps: [(String, JSONValue)] = []
        if let alert = message.alert {
            aps.append(("alert", ["title": .string(alert.title), "body": .string(alert.body), "sound": "default"]))
        }
        if message.event == .start {
            if let attributes = message.attributes { aps.append(("attributes", attributes)) }
            if let type = message.attributesType { aps.append(("attributes-type", .string(type))) }
        }
        aps.append(("content-state", message.contentState))
        if message.event == .end, let dismissal = message.dismissalDate { aps.append(("dismissal-date", .number(Double(dismissal)))) }
        aps.append(("event", .string(message.event.rawValue)))
        // iOS 18: the device makes an update token for the activity it starts and hands it to
        // the app, which registers it like one it started itself.
        if message.event == .start { aps.append(("input-push-token", 1)) }
        if message.event != .end, let stale = message.staleDate { aps.append(("stale-date", .number(Double(stale)))) }
        aps.append(("timestamp", .number(Double(message.timestamp))))
        var writer = JSONWriter(capacity: 512)
        writer.ascii("{\"aps\":{")
        for (index, entry) in aps.enumerated() {
            if index > 0 { writer.ascii(",") }
            writer.write(string: entry.0)
            writer.ascii(":")
            writer.write(entry.1)
        }
        writer.ascii("}}")
        guard writer.bytes.count <= maxBytes else { throw APNsPayload.TooLarge() }
        return Data(writer.bytes)
    }

    /// The APNs headers of an ActivityKit push, besides `authorization`: push type
    /// `liveactivity`, the app's topic with `.push-type.liveactivity`, priority 10 for
    /// important changes and 5 for the rest.
    public static func headers(for message: LiveActivityMessage, topic: String) -> [(String, String)] {
        [
            ("apns-id", APNsSender.apnsID(forDelivery: message.pushID)), ("apns-topic", topic + ".push-type.liveactivity"),
            ("apns-push-type", "liveactivity"), ("apns-priority", message.important ? "10" : "5"), ("content-type", "application/json"),
        ]
    }
}

extension LiveActivityPayload {
    /// The headers of a broadcast (besides `authorization`): the channel instead of a device
    /// and a topic, and an `apns-expiration`, which Apple requires (0 on a channel that
    /// stores nothing; else until the content goes stale or, for an end, is dismissed).
    public static func broadcastHeaders(for message: LiveActivityMessage, storage: LiveActivityChannelStorage) -> [(String, String)] {
        let expiration = storage == .none ? 0 : (message.staleDate ?? message.dismissalDate ?? message.timestamp + 3600)
        return [
            ("apns-request-id", APNsSender.apnsID(forDelivery: message.pushID).lowercased()), ("apns-channel-id", message.token),
            ("apns-push-type", "liveactivity"), ("apns-priority", message.important ? "10" : "5"), ("apns-expiration", String(expiration)),
            ("content-type", "application/json"),
        ]
    }
}
