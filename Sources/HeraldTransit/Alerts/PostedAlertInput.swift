import Foundation
import HeraldCore
import HeraldGTFS

/// A backend's alert as `POST /alerts` takes it (the `/alerts` shape).
public struct PostedAlertInput: Sendable, Equatable {
    public var id: String?
    public var severity: AlertSeverity
    public var header: String
    public var description: String?
    public var routeIDs: [String]
    public var stopIDs: [String]
    public var cause: String
    public var effect: String
    /// Epoch milliseconds.
    public var start: Int64?
    public var end: Int64?
    public var url: String?

    public init(
        id: String?, severity: AlertSeverity, header: String, description: String?, routeIDs: [String], stopIDs: [String], cause: String, effect: String,
        start: Int64?, end: Int64?, url: String?
    ) {
        self.id = id
        self.severity = severity
        self.header = header
        self.description = description
        self.routeIDs = routeIDs
        self.stopIDs = stopIDs
        self.cause = cause
        self.effect = effect
        self.start = start
        self.end = end
        self.url = url
    }

    /// Parses and checks the body, naming every bad field.
    public static func parse(_ body: [String: JSONValue]) throws -> PostedAlertInput {
        var v = FieldValidator()
        let known: Set<String> = [
            "alert_id", "severity", "header", "description", "affected_routes", "affected_stops", "cause", "effect", "active_period", "url",
        ]
        for key in body.keys.sorted() where !known.contains(key) { v.fail(key, "is not a known field") }
        func text(_ key: String, max: Int, required: Bool = false) -> String? {
            switch body[key] {
            case nil, .null?:
                if required { v.fail(key, "is required") }
                return nil
            case .string(let value)?:
                let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
                if trimmed.isEmpty && required { v.fail(key, "must not be empty") }
                if value.count > max { v.fail(key, "must be at most \(max) characters") }
                return trimmed.isEmpty ? nil : trimmed
            default:
                v.fail(key, "must be a string")
                return nil
            }
        }
        func ids(_ key: String) -> [String] {
            switch body[key] {
            case nil, .null?: return []
            case .array(let values)?:
                if values.count > 500 { v.fail(key, "must have at most 500 ids") }
                return values.enumerated().compactMap { index, value in
                    guard case .string(let id) = value, (1...200).contains(id.utf8.count) else {
                        v.fail("\(key)[\(index)]", "must be an id of 1 to 200 bytes")
                        return nil
                    }
                    return id
                }
            default:
                v.fail(key, "must be an array of ids")
                return []
            }
        }
        let id = text("alert_id", max: 128)
        if let id, !id.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F }) { v.fail("alert_id", "must be printable ASCII") }
        let severityText = text("severity", max: 16, required: true)
        let severity = severityText.flatMap(AlertSeverity.init(rawValue:))
        if severityText != nil && severity == nil { v.fail("severity", "must be info, warning or critical") }
        let header = text("header", max: 200, required: true)
        let description = text("description", max: 4000)
        let routes = ids("affected_routes")
        let stops = ids("affected_stops")
        let cause = text("cause", max: 64) ?? "UNKNOWN_CAUSE"
        let effect = text("effect", max: 64) ?? "UNKNOWN_EFFECT"
        if !RealtimeFeedDecoder.causeNames.contains(cause) || cause.isEmpty { v.fail("cause", "must be a GTFS-Realtime cause (TECHNICAL_PROBLEM, STRIKE, …)") }
        if !RealtimeFeedDecoder.effectNames.contains(effect) || effect.isEmpty {
            v.fail("effect", "must be a GTFS-Realtime effect (NO_SERVICE, REDUCED_SERVICE, …)")
        }
        let url = text("url", max: 2000)
        if let url, !(url.hasPrefix("https://") || url.hasPrefix("http://")) { v.fail("url", "must be an http(s) URL") }
        var start: Int64?
        var end: Int64?
        switch body["active_period"] {
        case nil, .null?: break
        case .object(let period)?:
            for key in period.keys.sorted() where key != "start" && key != "end" { v.fail("active_period.\(key)", "is not a known field") }
            for (key, slot) in [("start", 0), ("end", 1)] {
                switch period[key] {
                case nil, .null?: break
                case .string(let text)?:
                    if let date = Timestamp.parse(text) {
                        if slot == 0 { start = date.epochMilliseconds } else { end = date.epochMilliseconds }
                    } else {
                        v.fail("active_period.\(key)", "must be an ISO 8601 time")
                    }
                default: v.fail("active_period.\(key)", "must be an ISO 8601 time")
                }
            }
            if let start, let end, end <= start { v.fail("active_period.end", "must be after start") }
        default: v.fail("active_period", "must be an object {start, end}")
        }
        try v.validate()
        return PostedAlertInput(
            id: id, severity: severity!, header: header!, description: description, routeIDs: routes, stopIDs: stops, cause: cause, effect: effect,
            start: start, end: end, url: url)
    }
}
