import Foundation
import HeraldCore
import HeraldGeo

/// A customer's booking request, validated: every bad field is named in one 422.
public struct JobDraft: Sendable, Equatable {
    public var address: String
    public var point: GeoPoint?
    public var items: [JobItem]
    public var volumeHundredths: Int?
    public var scheduledAt: Date?
    public var notes: String?
    /// The provider's payment method for the hold (Stripe `pm_…`); the ledger needs none.
    public var paymentMethodID: String?

    public static let maxItems = 50
    static let known: Set<String> = [
        "address", "lat", "lng", "latitude", "longitude", "items", "volume_estimate", "scheduled_at", "notes", "payment_method_id",
    ]

    /// Reads `{address, lat, lng, items: [{category, quantity}], volume_estimate, scheduled_at, notes}`.
    public static func parse(_ object: [String: JSONValue], pricing: PricingConfig, now: Date) throws -> JobDraft {
        var v = FieldValidator()
        for key in object.keys.sorted() where !known.contains(key) { v.fail(key, "is not a known field") }
        let address = v.text(object, "address", max: 500, required: true, multiline: true)
        let notes = v.text(object, "notes", max: 2000, required: false, multiline: true)
        let lat = object["lat"] ?? object["latitude"]
        let lng = object["lng"] ?? object["longitude"]
        var point: GeoPoint?
        switch (lat, lng) {
        case (nil, nil), (.null?, .null?), (nil, .null?), (.null?, nil):
            break
        case (.number(let latitude)?, .number(let longitude)?):
            if !latitude.isFinite || !(-90...90).contains(latitude) { v.fail("lat", "must be a latitude from -90 to 90") }
            if !longitude.isFinite || !(-180...180).contains(longitude) { v.fail("lng", "must be a longitude from -180 to 180") }
            point = GeoPoint.validated(latitude: latitude, longitude: longitude)
        default:
            if lat?.doubleValue == nil { v.fail("lat", lat == nil || lat == .null ? "is required with lng" : "must be a number") }
            if lng?.doubleValue == nil { v.fail("lng", lng == nil || lng == .null ? "is required with lat" : "must be a number") }
        }
        var items: [JobItem] = []
        switch object["items"] {
        case nil, .null?: break
        case .array(let values)?:
            if values.count > maxItems { v.fail("items", "must list at most \(maxItems) items") }
            for (index, value) in values.prefix(maxItems).enumerated() {
                guard case .object(let item) = value else {
                    v.fail("items[\(index)]", "must be an object {category, quantity}")
                    continue
                }
                for key in item.keys.sorted() where key != "category" && key != "quantity" { v.fail("items[\(index)].\(key)", "is not a known field") }
                let category = item["category"]?.stringValue
                if category == nil {
                    v.fail("items[\(index)].category", "is required")
                } else if pricing.itemCategories[category!] == nil {
                    v.fail("items[\(index)].category", "is not a known category; known: \(pricing.itemCategories.keys.sorted().joined(separator: ", "))")
                }
                var quantity = 1
                switch item["quantity"] {
                case nil: break
                case .number(let q)? where q.rounded() == q && q >= 1 && q <= Double(pricing.maxItemQuantity):
                    quantity = Int(q)
                default: v.fail("items[\(index)].quantity", "must be a whole number from 1 to \(pricing.maxItemQuantity)")
                }
                if let category { items.append(JobItem(category: category, quantity: quantity)) }
            }
        default: v.fail("items", "must be a list of {category, quantity}")
        }
        var volume: Int?
        switch object["volume_estimate"] {
        case nil, .null?: break
        case .number(let yards)?:
            if let hundredths = volumeHundredths(yards, max: pricing.maxVolumeYards) {
                volume = hundredths
            } else {
                v.fail("volume_estimate", "must be more than 0 and at most \(pricing.maxVolumeYards) cubic yards, with at most two decimals")
            }
        default: v.fail("volume_estimate", "must be a number of cubic yards")
        }
        if items.isEmpty && volume == nil && object["items"] == nil && object["volume_estimate"] == nil {
            v.fail("items", "give items or a volume_estimate")
        }
        var scheduledAt: Date?
        switch object["scheduled_at"] {
        case nil, .null?: break
        case .string(let text)?:
            if let date = Timestamp.parse(text) {
                if date < now.addingTimeInterval(-300) {
                    v.fail("scheduled_at", "must not be in the past")
                } else if date > now.addingTimeInterval(180 * 86_400) {
                    v.fail("scheduled_at", "must be within 180 days")
                } else {
                    scheduledAt = date
                }
            } else {
                v.fail("scheduled_at", "must be an ISO 8601 time")
            }
        default: v.fail("scheduled_at", "must be an ISO 8601 time")
        }
        var paymentMethodID: String?
        switch object["payment_method_id"] {
        case nil, .null?: break
        case .string(let text)?
        where (1...255).contains(text.utf8.count)
            && text.utf8.allSatisfy({
                $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0)
            }):
            paymentMethodID = text
        default: v.fail("payment_method_id", "must be a payment method id of 1 to 255 letters, digits, _ and -")
        }
        try v.validate()
        return JobDraft(
            address: address ?? "", point: point, items: items, volumeHundredths: volume, scheduledAt: scheduledAt, notes: notes,
            paymentMethodID: paymentMethodID)
    }

    /// Cubic yards as hundredths; nil unless 0 < yards ≤ max with at most two decimals.
    public static func volumeHundredths(_ yards: Double, max: Double) -> Int? {
        guard yards.isFinite, yards > 0, yards <= max else { return nil }
        let scaled = yards * 100
        let rounded = scaled.rounded()
        guard abs(scaled - rounded) < 1e-6, rounded >= 1 else { return nil }
        return Int(rounded)
    }
}
