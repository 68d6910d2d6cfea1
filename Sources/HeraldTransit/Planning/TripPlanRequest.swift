import Foundation
import HeraldCore
import HeraldGTFS

/// A `POST /trips/plan` body (the transit API contract's), checked: where from and to, when, and what the
/// rider accepts.
public struct TripPlanRequest: Sendable, Equatable {
    public enum Place: Sendable, Equatable {
        case coordinates(latitude: Double, longitude: Double, name: String?)
        case stop(id: String)

        func isSamePlace(as other: Place) -> Bool {
            switch (self, other) {
            case (.stop(let a), .stop(let b)): a == b
            case (.coordinates(let a, let b, _), .coordinates(let c, let d, _)): a == c && b == d
            default: false
            }
        }
    }

    public enum When: Sendable, Equatable {
        /// Leave at or after the first instant; with a second, any departure up to it (a
        /// range: every itinerary no other leaves later, arrives earlier and changes less).
        case departAt(Int64, until: Int64?)
        /// Arrive at or before this instant, leaving as late as possible.
        case arriveBy(Int64)
    }

    public var origin: Place
    public var destination: Place
    public var when: When
    public var maxWalkingMeters: Int
    public var wheelchairAccessible: Bool
    /// nil: every mode.
    public var modes: Set<TransitMode>?
    public var maxTransfers: Int
    public var maxItineraries: Int

    static let knownFields: Set<String> = ["origin", "destination", "depart_at", "arrive_by", "depart_until", "preferences", "max_itineraries"]
    static let knownPreferences: Set<String> = ["max_walking_distance", "wheelchair_accessible", "modes", "max_transfers"]

    /// Reads a body; every bad field is named (422). Without `depart_at` or `arrive_by` the
    /// rider leaves `now`.
    public static func parse(_ body: [String: JSONValue], config: TransitConfig.PlannerConfig, now: Int64) throws -> TripPlanRequest {
        var reader = FieldReader(body)
        reader.refuseUnknown(knownFields)
        let origin = place(&reader, "origin")
        let destination = place(&reader, "destination")
        let departAt = time(&reader, "depart_at")
        let arriveBy = time(&reader, "arrive_by")
        let until = time(&reader, "depart_until")
        var when = When.departAt(now, until: nil)
        let window = Int64(config.maxWindowMinutes) * 60
        if departAt != nil && arriveBy != nil {
            reader.fail("arrive_by", "give depart_at or arrive_by, not both")
        } else if let arriveBy {
            if until != nil { reader.fail("depart_until", "goes with depart_at, not arrive_by") }
            when = .arriveBy(arriveBy)
        } else {
            let start = departAt ?? now
            if let until {
                if until < start {
                    reader.fail("depart_until", "must not be before depart_at")
                } else if until - start > window {
                    reader.fail("depart_until", "must be at most \(config.maxWindowMinutes) minutes after depart_at")
                }
            }
            when = .departAt(start, until: until)
        }
        var maxWalking = config.defaultMaxWalkingMeters
        var wheelchair = false
        var modes: Set<TransitMode>?
        var maxTransfers = config.maxTransfers
        if let preferences = reader.object("preferences") {
            var inner = FieldReader(preferences)
            inner.refuseUnknown(knownPreferences, prefix: "preferences.")
            maxWalking = inner.integer("max_walking_distance", range: 0...config.maxWalkingMetersLimit, prefix: "preferences.") ?? maxWalking
            wheelchair = inner.bool("wheelchair_accessible", prefix: "preferences.") ?? false
            maxTransfers = inner.integer("max_transfers", range: 0...config.maxTransfers, prefix: "preferences.") ?? maxTransfers
            switch preferences["modes"] {
            case nil, .null?: break
            case .array(let values)? where (1...TransitMode.allCases.count).contains(values.count):
                var chosen: Set<TransitMode> = []
                for value in values {
                    // A mode's name, a synonym (`metro`, `train`) or a GTFS route type (`700`), as `/routes?route_type=` reads them.
                    let query = value.stringValue ?? value.doubleValue.flatMap { $0.rounded() == $0 && abs($0) < 1e6 ? String(Int($0)) : nil }
                    guard let query, let mode = TransitMode(query: query) else {
                        inner.fail(
                            "preferences.modes",
                            "must list modes of " + TransitMode.allCases.map(\.rawValue).joined(separator: ", ")
                                + " (or synonyms such as metro, train, light_rail, or GTFS route types)")
                        break
                    }
                    chosen.insert(mode)
                }
                modes = chosen
            default:
                inner.fail("preferences.modes", "must be a list of 1 to \(TransitMode.allCases.count) modes")
            }
            reader.merge(inner)
        }
        let itineraries = reader.integer("max_itineraries", range: 1...config.maxItineraries) ?? config.defaultItineraries
        if let origin, let destination, origin.isSamePlace(as: destination) { reader.fail("destination", "is the origin") }
        try reader.validate()
        return TripPlanRequest(
            origin: origin!, destination: destination!, when: when, maxWalkingMeters: maxWalking, wheelchairAccessible: wheelchair, modes: modes,
            maxTransfers: maxTransfers, maxItineraries: itineraries)
    }

    static func time(_ reader: inout FieldReader, _ key: String) -> Int64? {
        switch reader.object[key] {
        case nil, .null?: return nil
        case .string(let text)?:
            guard let date = Timestamp.parse(text) else {
                reader.fail(key, "must be an ISO 8601 time with its offset (2025-11-12T09:00:00+11:00)")
                return nil
            }
            return Int64(date.timeIntervalSince1970.rounded(.down))
        case let other?:
            reader.fail(key, "must be an ISO 8601 time, got \(other.typeName)")
            return nil
        }
    }

    /// `{"type": "coordinates", "lat", "lon", "name"?}` or `{"type": "stop_id", "stop_id"}`;
    /// without `type` the fields given say which.
    static func place(_ reader: inout FieldReader, _ key: String) -> Place? {
        guard let object = reader.object(key) else {
            switch reader.object[key] {
            case nil, .null?: reader.fail(key, "is required")
            default: break
            }
            return nil
        }
        var inner = FieldReader(object)
        let prefix = key + "."
        let type = inner.string("type", maxLength: 20, prefix: prefix) ?? (object["stop_id"] != nil ? "stop_id" : "coordinates")
        var result: Place?
        switch type {
        case "coordinates":
            inner.refuseUnknown(["type", "lat", "lon", "name"], prefix: prefix)
            let latitude = coordinate(&inner, "lat", limit: 90, prefix: prefix)
            let longitude = coordinate(&inner, "lon", limit: 180, prefix: prefix)
            let name = inner.string("name", maxLength: 200, prefix: prefix)
            if let latitude, let longitude { result = .coordinates(latitude: latitude, longitude: longitude, name: name) }
        case "stop_id":
            inner.refuseUnknown(["type", "stop_id"], prefix: prefix)
            if let id = inner.string("stop_id", maxLength: 255, required: true, prefix: prefix) { result = .stop(id: id) }
        default:
            inner.fail(prefix + "type", "must be coordinates or stop_id")
        }
        reader.merge(inner)
        return result
    }

    static func coordinate(_ reader: inout FieldReader, _ key: String, limit: Double, prefix: String) -> Double? {
        switch reader.object[key] {
        case .number(let value)? where value.isFinite && abs(value) <= limit: return value
        case nil, .null?: reader.fail(prefix + key, "is required")
        default: reader.fail(prefix + key, "must be a number from \(-Int(limit)) to \(Int(limit))")
        }
        return nil
    }
}
