import Crypto
import Foundation
import HeraldCore

/// Turns a `PushMessage` into the FCM HTTP v1 `messages:send` body.
///
/// Why one message with all three platform blocks: FCM tokens do not say which platform they
/// belong to reliably, and FCM uses only the block that matches the device, so each block is
/// filled as if it were the target.
///
/// Pure (the current time is a parameter) so every field can be tested without a server.
public enum FCMMessageBuilder {
    /// What FCM itself keeps for a message with no expiry (its maximum, four weeks).
    public static let defaultTTLSeconds: Int64 = 2_419_200

    /// The request body: `{"message": {...}}`.
    public static func body(for message: PushMessage, now: Date) -> JSONValue {
        let urgent = isUrgent(message)
        let ttl = ttlSeconds(message, now: now)

        var notification: [String: JSONValue] = ["title": .string(message.title)]
        if let body = message.body { notification["body"] = .string(body) }

        // A re-sent copy replaces the first in the drawer (`tag`); `collapse_key` stays the
        // sender's own (Android keeps at most four distinct ones per app while offline).
        var androidNotification: [String: JSONValue] = ["tag": .string(message.replacementKey)]
        // Passive: shown without interrupting (a later version of something already heard).
        let quiet = message.interruptionLevel == .passive
        if quiet { androidNotification["notification_priority"] = "PRIORITY_LOW" }
        var android: [String: JSONValue] = ["priority": .string(urgent ? "HIGH" : "NORMAL")]
        if let collapseKey = message.collapseKey { android["collapse_key"] = .string(collapseKey) }
        if let ttl { android["ttl"] = .string("\(ttl)s") }

        var apnsHeaders: [String: JSONValue] = ["apns-priority": .string(urgent ? "10" : "5")]
        if message.replacementKey.utf8.count <= 64 { apnsHeaders["apns-collapse-id"] = .string(message.replacementKey) }
        if let expiresAt = message.expiresAt { apnsHeaders["apns-expiration"] = .string(String(max(0, expiresAt / 1000))) }
        var aps: [String: JSONValue] = ["badge": .number(Double(message.badge))]
        if !quiet { aps["sound"] = "default" }
        if let category = message.category { aps["category"] = .string(category) }
        if let threadID = message.threadID { aps["thread-id"] = .string(threadID) }
        if let level = message.interruptionLevel { aps["interruption-level"] = .string(level.rawValue) }

        var webHeaders: [String: JSONValue] = [
            "TTL": .string(String(ttl ?? defaultTTLSeconds)),
            "Urgency": .string(urgent ? "high" : message.interruptionLevel == .passive ? "low" : "normal"),
        ]
        webHeaders["Topic"] = .string(webPushTopic(message.replacementKey))

        if message.silent {
            // A data-only message: the app wakes to sync, nothing is shown (APNs background push).
            apnsHeaders["apns-priority"] = "5"
            apnsHeaders["apns-push-type"] = "background"
            return [
                "message": [
                    "token": .string(message.token),
                    "data": .object(data(for: message).mapValues(JSONValue.string)),
                    "android": .object(android),
                    "apns": ["headers": .object(apnsHeaders), "payload": ["aps": ["content-available": 1]]],
                    "webpush": ["headers": .object(webHeaders)],
                ]
            ]
        }
        android["notification"] = .object(androidNotification)
        return [
            "message": [
                "token": .string(message.token),
                "notification": .object(notification),
                "data": .object(data(for: message).mapValues(JSONValue.string)),
                "android": .object(android),
                "apns": ["headers": .object(apnsHeaders), "payload": ["aps": .object(aps)]],
                "webpush": ["headers": .object(webHeaders)],
            ]
        ]
    }

    /// The body as bytes, ready to send.
    public static func encodedBody(for message: PushMessage, now: Date) throws -> Data {
        try encoder.encode(body(for: message, now: now))
    }

    /// FCM's `data` map, which accepts only strings.
    ///
    /// Why JSON text for other values: the app can decode `"[1,2]"` back into what the server
    /// meant, whereas `"1.0"` vs `"1"` style ad-hoc conversions lose that. Keys FCM reserves
    /// (`from`, `message_type`, anything starting with `google` or `gcm`) are refused when a
    /// notification is created; one stored before that rule is dropped here, because FCM rejects
    /// the whole message over it and one stray key must not dead-letter a push.
    public static func data(for message: PushMessage) -> [String: String] {
        var result: [String: String] = [:]
        let data = PushDataKeys.adding(to: message.data.objectValue ?? [:], notificationID: message.notificationID, type: message.type)
        for (key, value) in data where !PushDataKeys.isReservedByFCM(key) {
            switch value {
            case .string(let text): result[key] = text
            default: result[key] = (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
            }
        }
        return result
    }

    /// Alert severity and time-sensitive or critical interruption levels wake the device.
    static func isUrgent(_ message: PushMessage) -> Bool {
        message.severity == .alert || message.interruptionLevel?.isUrgent == true
    }

    /// Seconds left until `expiresAt` (never negative: `0` means "now or never"), nil without one.
    static func ttlSeconds(_ message: PushMessage, now: Date) -> Int64? {
        guard let expiresAt = message.expiresAt else { return nil }
        let remaining = expiresAt - now.epochMilliseconds
        return max(0, remaining / 1000)
    }

    /// The Web Push `Topic` header: at most 32 characters of the URL-safe base64 alphabet
    /// (RFC 8030 §5.4). A collapse key that does not fit is hashed, so it still collapses with
    /// itself instead of making FCM reject the message.
    static func webPushTopic(_ collapseKey: String) -> String {
        let safe = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        if !collapseKey.isEmpty, collapseKey.count <= 32, collapseKey.unicodeScalars.allSatisfy(safe.contains) {
            return collapseKey
        }
        let digest = Data(SHA256.hash(data: Data(collapseKey.utf8))).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return String(digest.prefix(32))
    }

    /// Why a new encoder each time: `JSONEncoder` is not `Sendable`, so it cannot be a shared
    /// static; sorted keys keep the body byte-stable for tests and logs.
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
