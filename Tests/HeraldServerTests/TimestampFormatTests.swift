import Foundation
import HeraldCore
import HeraldServerTestSupport
import Testing

/// The transit API contract and every iOS app decoding with `.iso8601`: each time in each answer must
/// decode with `ISO8601DateFormatter()`'s default options, which refuse fractional seconds.
/// The walk follows the OpenAPI document: every GET route the document lists is called
/// (with a customer's token, else an operator's or a backend's), and every field the
/// response schema calls `date-time` is decoded, as is any other string shaped like a time.
@Suite struct TimestampFormatTests {
    @Test func everyTimeInEveryAnswerDecodesWithFoundationsDefaultISO8601() async throws {
        try await TestServer.run(.sqlite, clock: ManualClock(sampleMorning)) { s in
            _ = try await s.importSample()
            let rider = try await s.token("rider")
            let backend = try await s.token("backend", .service)
            let operatorToken = try await s.token("ops", .operator)
            // Something in every inbox, list and feed the walk reads.
            #expect(try await s.request(.post, "/api/v1/favorites", token: rider, json: ["stop_id": "STAGECOACH"]).status == 201)
            #expect(
                try await s.request(
                    .post, "/api/v1/push/register", token: rider,
                    json: [
                        "token": .string(String(repeating: "ab", count: 32)), "provider": "apns", "platform": "ios", "device_id": "phone-1",
                    ]
                ).status == 201)
            let sent = try await s.request(
                .post, "/api/v1/notifications", token: backend,
                json: [
                    "user_id": "rider", "type": "service_alert", "title": "Hello", "body": "A time in the inbox",
                ])
            #expect(sent.status == 201, "\(sent.text)")
            try await TransitAlertPushTests.postAlerts(s, [TransitAlertPushTests.alert("walk-alert", route: "STBA")])
            #expect([200, 201].contains(try await s.request(.post, "/api/v1/alerts/walk-alert/mute", token: rider).status))

            let document = try #require(try await s.request(.get, "/api/v1/openapi.json").json)
            var walk = TimeWalk(document: document)
            var answered = 0
            let paths = try #require(document["paths"]?.objectValue)
            let filled = ["{id}": "STAGECOACH", "{name}": "default"]
            for path in paths.keys.sorted() {
                guard let get = paths[path]?["get"], path.hasPrefix("/api/v1/"), let success = get["responses"]?["200"] else { continue }
                var uri = path
                for (parameter, value) in filled { uri = uri.replacingOccurrences(of: parameter, with: value) }
                if path.hasPrefix("/api/v1/routes/") { uri = uri.replacingOccurrences(of: "STAGECOACH", with: "STBA") }
                if uri.contains("{") || path.hasSuffix("/download") { continue }
                if path == "/api/v1/stops/nearby" { uri += "?lat=36.9&lon=-116.76" }
                var reply = try await s.request(.get, uri, token: rider)
                if reply.status == 403 { reply = try await s.request(.get, uri, token: operatorToken) }
                if reply.status == 403 { reply = try await s.request(.get, uri, token: backend) }
                guard reply.status == 200, let json = reply.json else { continue }
                answered += 1
                walk.check(json, schema: success["content"]?["application/json"]?["schema"], at: path)
            }
            #expect(walk.failures.isEmpty, "\(walk.failures)")
            // Not a vacuous walk: many routes answered, and many documented times were read.
            #expect(answered >= 20, "only \(answered) routes answered")
            #expect(walk.documentedTimes >= 25, "only \(walk.documentedTimes) documented times were checked")
        }
    }
}

/// Walks an answer beside its schema, decoding each time.
struct TimeWalk {
    let document: JSONValue
    var failures: [String] = []
    /// Strings the schema calls `date-time` (null ones aside).
    var documentedTimes = 0
    let formatter = ISO8601DateFormatter()

    init(document: JSONValue) {
        self.document = document
    }

    mutating func check(_ value: JSONValue, schema: JSONValue?, at path: String) {
        let schema = resolve(schema)
        switch value {
        case .string(let text):
            let documented = schema?["format"]?.stringValue == "date-time"
            if documented { documentedTimes += 1 }
            if documented || Self.looksLikeATime(text), formatter.date(from: text) == nil {
                failures.append("\(path): \(text)")
            }
        case .object(let object):
            for (key, child) in object {
                let childSchema = resolve(schema?["properties"]?[key]) ?? resolve(schema?["additionalProperties"])
                check(child, schema: childSchema ?? alternatives(schema, key), at: "\(path).\(key)")
            }
        case .array(let items):
            for (index, item) in items.enumerated() { check(item, schema: resolve(schema?["items"]), at: "\(path)[\(index)]") }
        default:
            break
        }
    }

    /// A property found in one of `oneOf`/`anyOf`/`allOf`'s schemas.
    func alternatives(_ schema: JSONValue?, _ key: String) -> JSONValue? {
        for combinator in ["allOf", "oneOf", "anyOf"] {
            for option in schema?[combinator]?.arrayValue ?? [] {
                if let found = resolve(option)?["properties"]?[key] { return resolve(found) }
            }
        }
        return nil
    }

    func resolve(_ schema: JSONValue?) -> JSONValue? {
        guard let schema else { return nil }
        guard let ref = schema["$ref"]?.stringValue, ref.hasPrefix("#/") else { return schema }
        var current: JSONValue? = document
        for part in ref.dropFirst(2).split(separator: "/") { current = current?[String(part)] }
        return resolve(current)
    }

    /// `2026-11-29T10:00` and on: a time whether or not the schema says so.
    static func looksLikeATime(_ text: String) -> Bool {
        let bytes = Array(text.utf8.prefix(16))
        guard bytes.count == 16 else { return false }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15]
        return digits.allSatisfy { (48...57).contains(bytes[$0]) } && bytes[4] == 45 && bytes[7] == 45 && bytes[10] == 84 && bytes[13] == 58
    }
}
