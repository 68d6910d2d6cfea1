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

    /// The JSON with sorted keys (as JSONEncoder's `.sortedKeys` wrote it), slashes and
    /// non-ASCII verbatim, written straight into bytes: this runs for every push, and building
    /// dictionaries for JSONEncoder was half of a send's own CPU.
    static func render(_ message: PushMessage, body: String?) throws -> Data {
        var custom: [(key: String, value: JSONValue)] = []
        var alert: [(key: String, value: JSONValue)] = []
        if case .object(let data) = message.data {
            custom.reserveCapacity(data.count)
            for (key, value) in data where key != "aps" {
                if let apnsKey = localizationKeys[key] { alert.append((apnsKey, value)) } else { custom.append((key, value)) }
            }
        }
        custom.sort { $0.key < $1.key }
        var writer = JSONWriter(capacity: 512)
        writer.ascii("{")
        var apsWritten = false
        var first = true
        for entry in custom {
            if !apsWritten && "aps" < entry.key {
                if !first { writer.ascii(",") }
                writeAPS(message, body: body, alert: &alert, into: &writer)
                apsWritten = true
                first = false
            }
            if !first { writer.ascii(",") }
            first = false
            writer.write(string: entry.key)
            writer.ascii(":")
            writer.write(entry.value)
        }
        if !apsWritten {
            if !first { writer.ascii(",") }
            writeAPS(message, body: body, alert: &alert, into: &writer)
        }
        writer.ascii("}")
        return Data(writer.bytes)
    }

    /// `"aps":{…}` with its keys in sorted order: alert, badge, category, content-available,
    /// interruption-level, mutable-content, sound, thread-id.
    private static func writeAPS(
        _ message: PushMessage, body: String?, alert: inout [(key: String, value: JSONValue)], into writer: inout JSONWriter
    ) {
        writer.ascii("\"aps\":{")
        let thread = message.threadID ?? message.collapseKey
        if message.silent {
            writer.ascii("\"content-available\":1")
        } else {
            // The plain text goes beside any loc keys: iOS shows it when the app's
            // Localizable.strings lacks the key (an older build), and so does a Mac or watch.
            alert.append(("title", .string(message.title)))
            if let body { alert.append(("body", .string(body))) }
            alert.sort { $0.key < $1.key }
            writer.ascii("\"alert\":{")
            for (index, entry) in alert.enumerated() {
                if index > 0 { writer.ascii(",") }
                writer.write(string: entry.key)
                writer.ascii(":")
                writer.write(entry.value)
            }
            writer.ascii("},\"badge\":")
            writer.write(integer: Int64(message.badge))
            if let category = message.category {
                writer.ascii(",\"category\":")
                writer.write(string: category)
            }
            if let level = message.interruptionLevel {
                writer.ascii(",\"interruption-level\":")
                writer.write(string: level.rawValue)
            }
            // Lets a notification service extension enrich it (images, decryption). A passive
            // notification replaces or adds quietly (an alert's later version in its cooldown).
            writer.ascii(message.interruptionLevel == .passive ? ",\"mutable-content\":1" : ",\"mutable-content\":1,\"sound\":\"default\"")
        }
        if let thread {
            writer.ascii(",\"thread-id\":")
            writer.write(string: thread)
        }
        writer.ascii("}")
    }
}
