import Foundation
import HeraldCore
import HeraldGTFS
import Hummingbird

/// Reads a request's query parameters, collecting every bad one for one 422 answer.
struct QueryReader {
    let request: Request
    var validator = FieldValidator()

    init(_ request: Request) {
        self.request = request
    }

    func raw(_ name: String) -> String? {
        request.uri.queryParameters[Substring(name)].map(String.init)
    }

    /// `true` or `false`; nil when absent.
    mutating func bool(_ name: String) -> Bool? {
        switch raw(name) {
        case nil: return nil
        case "true": return true
        case "false": return false
        default:
            validator.fail(name, "must be true or false")
            return nil
        }
    }

    mutating func double(_ name: String, _ range: ClosedRange<Double>, required: Bool = false) -> Double? {
        guard let text = raw(name), !text.isEmpty else {
            if required { validator.fail(name, "is required") }
            return nil
        }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            validator.fail(name, "must be a number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))")
            return nil
        }
        return value
    }

    mutating func integer(_ name: String, _ range: ClosedRange<Int>, default fallback: Int) -> Int {
        integer(name, range) ?? fallback
    }

    mutating func integer(_ name: String, _ range: ClosedRange<Int>) -> Int? {
        guard let text = raw(name), !text.isEmpty else { return nil }
        guard let value = Int(text), range.contains(value) else {
            validator.fail(name, "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            return nil
        }
        return value
    }

    /// `route_type` as apps send it: a mode (`bus`, `metro`, `light_rail`), or a GTFS route
    /// type, basic or extended, which stands for its mode (`700` and `3` both mean buses,
    /// as the planner's `modes` fold them). A type no mode covers (a taxi, `1500`) matches
    /// only itself.
    mutating func routeType(_ name: String) -> RouteTypeFilter? {
        guard let text = raw(name), !text.isEmpty else { return nil }
        if let mode = TransitMode(query: text) { return .mode(mode) }
        if let number = Int(text), (0...1702).contains(number) { return .exactly(number) }
        validator.fail(
            name,
            "must be a mode (" + TransitMode.allCases.map(\.rawValue).joined(separator: ", ")
                + ", or metro, train, light_rail, …) or a GTFS route type from 0 to 1702")
        return nil
    }

    /// An id-like text of 1–200 bytes.
    mutating func identifier(_ name: String) -> String? {
        guard let text = raw(name) else { return nil }
        guard (1...200).contains(text.utf8.count) else {
            validator.fail(name, "must be 1 to 200 bytes")
            return nil
        }
        return text
    }

    mutating func time(_ name: String) -> Date? {
        guard let text = raw(name), !text.isEmpty else { return nil }
        guard let date = Timestamp.parse(text) else {
            validator.fail(name, "must be an ISO 8601 time with its offset (2025-11-12T08:30:00+11:00)")
            return nil
        }
        return date
    }

    func validate() throws {
        try validator.validate()
    }

    static func format(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }
}

/// Weak ETags for answers that change only when the feed does, and the 304 they earn.
enum ConditionalGet {
    static func matches(_ request: Request, _ etag: String) -> Bool {
        guard let header = request.headers[.ifNoneMatch] else { return false }
        let bare = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        return header.split(separator: ",").contains { part in
            let tag = part.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == bare || tag == "W/\(bare)"
        }
    }

    static func notModified(_ etag: String, cacheControl: String) -> Response {
        Response(status: .notModified, headers: [.eTag: etag, .cacheControl: cacheControl])
    }
}

/// Which routes `/routes?route_type=` keeps.
enum RouteTypeFilter: Equatable {
    case mode(TransitMode)
    case exactly(Int)

    func matches(_ type: Int) -> Bool {
        switch self {
        case .mode(let mode): TransitMode(routeType: type) == mode
        case .exactly(let wanted): type == wanted
        }
    }
}
