import Foundation
import HeraldCore

extension FieldValidator {
    /// Reads an optional (or required) text field of a JSON body: trimmed, 1 to `max`
    /// characters, no control characters (newlines and tabs allowed when `multiline`).
    /// Records the problem and returns nil when it is not.
    public mutating func text(_ object: [String: JSONValue], _ key: String, max: Int, required: Bool, multiline: Bool = false, field: String? = nil) -> String?
    {
        switch object[key] {
        case nil, .null?:
            if required { fail(field ?? key, "is required") }
            return nil
        case .string(let value)?:
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty, trimmed.count <= max else {
                fail(field ?? key, "must be 1 to \(max) characters")
                return nil
            }
            let allowed: (Unicode.Scalar) -> Bool = { multiline && ($0 == "\n" || $0 == "\t") }
            guard !trimmed.unicodeScalars.contains(where: { ($0.value < 0x20 && !allowed($0)) || $0.value == 0x7F }) else {
                fail(field ?? key, "must not contain control characters")
                return nil
            }
            return trimmed
        case let other?:
            fail(field ?? key, "must be a string, got \(other.typeName)")
            return nil
        }
    }

    /// An optional `reason` (1 to 500 characters), the field cancel and approval bodies share.
    public mutating func reason(_ object: [String: JSONValue]) -> String? {
        text(object, "reason", max: 500, required: false, multiline: true)
    }
}

extension DriverProfile {
    /// Reads a driver's `PUT /drivers/me` body; every bad field is named (422).
    public static func parse(_ body: [String: JSONValue]) throws -> DriverProfile {
        var v = FieldValidator()
        let known: Set<String> = ["name", "phone", "truck_type", "vehicle_description", "license_plate", "photo_url"]
        for key in body.keys.sorted() where !known.contains(key) { v.fail(key, "is not a known field") }
        let name = v.text(body, "name", max: 100, required: true)
        let phone = v.text(body, "phone", max: 32, required: false)
        let truck = v.text(body, "truck_type", max: 64, required: true)
        let vehicle = v.text(body, "vehicle_description", max: 200, required: false)
        let plate = v.text(body, "license_plate", max: 20, required: false)
        let photo = v.text(body, "photo_url", max: 2048, required: false)
        // Shown in riders' apps, which load it: only https, to a host (no data: or javascript:).
        if let photo, !(photo.lowercased().hasPrefix("https://") && (URL(string: photo)?.host?.isEmpty == false)) {
            v.fail("photo_url", "must be an https:// URL")
        }
        try v.validate()
        return DriverProfile(
            name: name ?? "", phone: phone, truckType: truck ?? "", vehicleDescription: vehicle, licensePlate: plate, photoURL: photo)
    }
}
