import Foundation
import HeraldCore
import HeraldGeo

/// A driver's reported position, validated.
///
/// Why the sequence and not the timestamp orders updates: phone clocks drift and jump, so
/// `timestamp` is kept for display only; a `sequence` not above the last one is a duplicate
/// or a late delivery and is dropped. Without a sequence, server receipt order decides.
/// A sequence counts within an app session (`session_id`, e.g. a UUID the app makes at
/// launch): a restarted app counts from 1 again in a new session, and its samples are new.
public struct LocationUpdate: Sendable, Equatable {
    public var point: GeoPoint
    public var accuracyMeters: Double?
    public var heading: Double?
    public var speedMps: Double?
    public var sequence: Int64?
    /// The device's time of the fix (epoch ms), informational.
    public var clientTime: Int64?
    /// Kept in a trip's audit trail; never shown to the rider.
    public var altitudeMeters: Double?
    public var batteryPercent: Double?
    public var isCharging: Bool?
    /// The OS says a mock location provider made this fix (Android `Location.isMock()` /
    /// `isFromMockProvider()`, iOS 15 `CLLocationSourceInformation.isSimulatedBySoftware`).
    public var isMockLocation: Bool?
    /// The app's device-integrity verdict (Play Integrity, App Attest, a jailbreak check).
    public var deviceIntegrity: DeviceIntegrity?
    /// The app session the sequence counts in (nil: one session for ever).
    public var session: String?

    /// What the app's integrity check concluded; only `failed` is acted on.
    public enum DeviceIntegrity: String, Sendable, Equatable, CaseIterable {
        case passed, failed, unknown
    }

    public init(
        point: GeoPoint, accuracyMeters: Double? = nil, heading: Double? = nil, speedMps: Double? = nil, sequence: Int64? = nil, clientTime: Int64? = nil,
        altitudeMeters: Double? = nil, batteryPercent: Double? = nil, isCharging: Bool? = nil, isMockLocation: Bool? = nil,
        deviceIntegrity: DeviceIntegrity? = nil, session: String? = nil
    ) {
        self.session = session
        self.isMockLocation = isMockLocation
        self.deviceIntegrity = deviceIntegrity
        self.altitudeMeters = altitudeMeters
        self.batteryPercent = batteryPercent
        self.isCharging = isCharging
        self.point = point
        self.accuracyMeters = accuracyMeters
        self.heading = heading
        self.speedMps = speedMps
        self.sequence = sequence
        self.clientTime = clientTime
    }

    /// Reads `{lat, lng, accuracy, heading, speed, timestamp, sequence}` (the dispatch app's),
    /// also spelled `latitude`/`longitude`/`accuracy_meters`/`speed_mps` (the rideshare
    /// app's) and `course` (iOS's name for the heading), with the fraud signals
    /// `is_mock_location` (or Android's `is_from_mock_provider`) and `device_integrity`;
    /// every bad value is named (422 `VALIDATION_FAILED`).
    ///
    /// Why other fields are ignored rather than refused: a driver app in the field sends what
    /// its version knows (a newer app, a vendor SDK's extras), and refusing the whole sample
    /// over one extra key would freeze the rider's map. The message's size is bounded
    /// (`limits.max_body_bytes`, the realtime message limit).
    public static func parse(_ object: [String: JSONValue], sequenceOverride: JSONValue? = nil) throws -> LocationUpdate {
        var v = FieldValidator()
        func number(_ names: [String]) -> (name: String, value: Double?)? {
            for name in names {
                switch object[name] {
                case nil, .null?: continue
                case .number(let value)?: return (name, value)
                case .string?, .bool?, .array?, .object?:
                    v.fail(name, "must be a number")
                    return (name, nil)
                }
            }
            return nil
        }
        let lat = number(["lat", "latitude"])
        let lng = number(["lng", "longitude"])
        if lat == nil { v.fail("lat", "is required") }
        if lng == nil { v.fail("lng", "is required") }
        var point: GeoPoint?
        if let latValue = lat?.value, let lngValue = lng?.value {
            if !latValue.isFinite || !(-90...90).contains(latValue) { v.fail(lat!.name, "must be a latitude from -90 to 90") }
            if !lngValue.isFinite || !(-180...180).contains(lngValue) { v.fail(lng!.name, "must be a longitude from -180 to 180") }
            point = GeoPoint.validated(latitude: latValue, longitude: lngValue)
        }
        func bounded(_ names: [String], _ range: ClosedRange<Double>, _ message: String) -> Double? {
            guard let found = number(names), let value = found.value else { return nil }
            guard value.isFinite, range.contains(value) else {
                v.fail(found.name, message)
                return nil
            }
            return value
        }
        let accuracy = bounded(["accuracy", "accuracy_meters"], 0...100_000, "must be from 0 to 100000 meters")
        /// iOS's `CLLocation.course` and `.speed` are -1 (any negative: "invalid") whenever
        /// the phone cannot tell, routinely while it stands still: unknown, not a bad sample
        /// (refusing it froze the rider's map at every red light).
        func unknownWhenNegative(_ names: [String], _ range: ClosedRange<Double>, _ message: String) -> Double? {
            guard let found = number(names), let value = found.value else { return nil }
            if value.isFinite, value < 0 { return nil }
            guard value.isFinite, range.contains(value) else {
                v.fail(found.name, message)
                return nil
            }
            return value
        }
        let heading = unknownWhenNegative(["heading", "course"], 0...360, "must be from 0 to 360 degrees (negative: unknown)")
        let speed = unknownWhenNegative(["speed", "speed_mps"], 0...150, "must be from 0 to 150 m/s (negative: unknown)")
        let altitude = bounded(["altitude_meters"], -1_000...20_000, "must be from -1000 to 20000 meters")
        let battery = bounded(["battery_percent"], 0...100, "must be from 0 to 100")
        func flag(_ names: [String]) -> Bool? {
            for name in names {
                guard let value = object[name], value != .null else { continue }
                guard let flag = value.boolValue else {
                    v.fail(name, "must be true or false")
                    return nil
                }
                return flag
            }
            return nil
        }
        let charging = flag(["is_charging"])
        let mock = flag(["is_mock_location", "is_from_mock_provider"])
        var session: String?
        switch object["session_id"] {
        case nil, .null?: break
        case .string(let text)? where (1...64).contains(text.utf8.count) && text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }):
            session = text
        default: v.fail("session_id", "must be 1 to 64 printable ASCII characters")
        }
        var integrity: DeviceIntegrity?
        switch object["device_integrity"] {
        case nil, .null?: break
        case .string(let text)? where DeviceIntegrity(rawValue: text) != nil: integrity = DeviceIntegrity(rawValue: text)
        default: v.fail("device_integrity", "must be passed, failed or unknown")
        }
        var sequence: Int64?
        switch sequenceOverride ?? object["sequence"] {
        case nil, .null?: break
        case .number(let value)? where value.isFinite && value >= 0 && value <= 9_007_199_254_740_991 && value.rounded() == value:
            sequence = Int64(value)
        default: v.fail("sequence", "must be a whole number from 0")
        }
        var clientTime: Int64?
        switch object["timestamp"] {
        case nil, .null?: break
        case .string(let text)?:
            if let date = Timestamp.parse(text) { clientTime = date.epochMilliseconds } else { v.fail("timestamp", "must be an ISO 8601 time") }
        case .number(let value)? where value.isFinite && value > 0 && value < 1e14:
            // Seconds or milliseconds since the epoch.
            clientTime = value < 1e11 ? Int64(value * 1000) : Int64(value)
        default: v.fail("timestamp", "must be an ISO 8601 time or epoch milliseconds")
        }
        try v.validate()
        guard let point else { throw APIError.validation(field: "lat", "is required") }
        return LocationUpdate(
            point: point, accuracyMeters: accuracy, heading: heading, speedMps: speed, sequence: sequence, clientTime: clientTime,
            altitudeMeters: altitude, batteryPercent: battery, isCharging: charging, isMockLocation: mock, deviceIntegrity: integrity, session: session)
    }
}
