import Foundation
import HeraldCore

/// Builds the APNs JSON payload and keeps it within Apple's 4,096-byte limit.
///
/// Why shorten the body rather than refuse: the notification is already promised to the
/// user; a body cut at a character boundary with an ellipsis still says most of it, and the
/// app fetches the whole text from the inbox. Keys and custom data are never cut (they drive
/// app logic); when they alone exceed the limit the push fails as `PayloadTooLarge`.
public enum APNsPayload {
    public static let maxBytes = 4096

    /// Data keys that are APNs alert localisation rather than custom data.
    static let localizationKeys: [String: String] = [
        "title_loc_key": "title-loc-key", "title_loc_args": "title-loc-args", "loc_key": "loc-key", "loc_args": "loc-args",
    ]

    public struct TooLarge: Error, Equatable {}

    /// The payload for `message`, with its body shortened when needed (`bodyLimit` caps the
    /// body in bytes; used to retry smaller after APNs answered 413).
    public static func encode(_ message: PushMessage, maxBytes: Int = maxBytes, bodyLimit: Int? = nil) throws -> Data {
        var body = message.body
        if let bodyLimit, let text = body { body = PushText.shorten(text, toBytes: bodyLimit) }
        var payload = try render(message, body: body)
        guard payload.count > maxBytes else { return payload }
        guard let text = body, !text.isEmpty else { throw TooLarge() }
        // Binary search the longest body prefix (in bytes) that fits.
        var low = 0
        var high = text.utf8.count
        var best: Data?
        while low <= high {
            let middle = (low + high) / 2
            let candidate = try render(message, body: PushText.shorten(text, toBytes: middle))
            if candidate.count <= maxBytes {
                best = candidate
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        guard let best else { throw TooLarge() }
        payload = best
        return payload
    }

    static func render(_ message: PushMessage, body: String?) throws -> Data {
        var custom: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        if case .object(let data) = message.data {
            for (key, value) in data {
                if let apnsKey = localizationKeys[key] { alert[apnsKey] = value } else { custom[key] = value }
            }
        }
        var aps: [String: JSONValue] = [:]
        if message.silent {
            aps["content-available"] = 1
        } else {
            if alert["title-loc-key"] == nil { alert["title"] = .string(message.title) }
            if alert["loc-key"] == nil, let body { alert["body"] = .string(body) }
            aps["alert"] = .object(alert)
            aps["sound"] = "default"
            aps["badge"] = .number(Double(message.badge))
            // Lets a notification service extension enrich it (images, decryption).
            aps["mutable-content"] = 1
            if let category = message.category { aps["category"] = .string(category) }
            if let level = message.interruptionLevel { aps["interruption-level"] = .string(level) }
        }
        if let thread = message.threadID ?? message.collapseKey { aps["thread-id"] = .string(thread) }
        custom["aps"] = .object(aps)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(JSONValue.object(custom))
    }
}
