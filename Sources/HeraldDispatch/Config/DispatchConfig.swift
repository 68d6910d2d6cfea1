import Foundation
import HeraldCore

/// Dispatch: who hears of a job, for how long, and what it costs.
public struct DispatchConfig: ConfigSection, Sendable, Equatable {
    /// The first offer round reaches online approved drivers within this distance.
    public var radiusKm: Double = 30
    /// Each later round widens the radius by this much…
    public var radiusStepKm: Double = 15
    /// …up to this; the round at the maximum is the last one.
    public var maxRadiusKm: Double = 60
    /// How long each round waits for an accept before the next round (or expiry).
    public var offerTimeoutSeconds = 120
    /// Drivers whose last location is older than this are not matched.
    public var locationMaxAgeSeconds = 300
    /// The radius of a driver's available-jobs feed; nil means `max_radius_km`.
    public var feedRadiusKm: Double?

    /// How far a driver's feed reaches, in metres (`feed_radius_km`, else the widest offer
    /// round): the feed itself and the drivers told when a job leaves it must agree.
    var feedRadiusMeters: Double { (feedRadiusKm ?? maxRadiusKm) * 1000 }
    /// How often a node writes the locations it received and reads other nodes' (PostgreSQL).
    public var indexSyncIntervalMs = 1_000
    public var pricing = PricingConfig()

    public init() {}

    /// The radius of each offer round, in meters: first, then widening to the maximum.
    public var roundRadiiMeters: [Double] {
        var radii = [radiusKm]
        if radiusStepKm > 0 {
            while let last = radii.last, last < maxRadiusKm, radii.count < 20 { radii.append(min(last + radiusStepKm, maxRadiusKm)) }
        }
        return radii.map { $0 * 1000 }
    }

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("dispatch")
        checks.check(radiusKm.isFinite && radiusKm > 0 && radiusKm <= 500, "radius_km", "must be more than 0 and at most 500")
        checks.check(radiusStepKm.isFinite && radiusStepKm >= 0, "radius_step_km", "must be 0 or more")
        checks.check(maxRadiusKm.isFinite && maxRadiusKm >= radiusKm && maxRadiusKm <= 500, "max_radius_km", "must be at least radius_km and at most 500")
        checks.check((5...86_400).contains(offerTimeoutSeconds), "offer_timeout_seconds", "must be between 5 and 86400")
        checks.check((10...86_400).contains(locationMaxAgeSeconds), "location_max_age_seconds", "must be between 10 and 86400")
        if let feed = feedRadiusKm { checks.check(feed.isFinite && feed > 0 && feed <= 500, "feed_radius_km", "must be more than 0 and at most 500") }
        checks.check((50...60_000).contains(indexSyncIntervalMs), "index_sync_interval_ms", "must be between 50 and 60000")
        checks.add(pricing.validationErrors())
        return checks.errors
    }
}

/// The pricing engine's rates. Money is integer minor units (cents) of `currency`.
public struct PricingConfig: ConfigSection, Sendable, Equatable {
    /// ISO 4217 code; all amounts below are in its minor units.
    public var currency = "USD"
    public var baseFeeMinor = 4_900
    /// Per cubic yard of estimated volume (charged per hundredth, rounded half up).
    public var perYardMinor = 3_500
    /// No job costs less than this (before surcharges).
    public var minimumMinor = 7_900
    /// Largest volume a job may declare, in cubic yards.
    public var maxVolumeYards: Double = 30
    /// Handling fee per item, by category; a category not listed here is refused.
    public var itemCategories: [String: Int] = [
        "furniture": 4_500, "appliance": 6_000, "mattress": 4_000, "electronics": 2_500, "yard_waste": 2_000,
        "construction_debris": 5_500, "hot_tub": 25_000, "piano": 20_000, "general": 1_500,
    ]
    public var maxItemQuantity = 100
    /// Surcharges applied on top of the subtotal, in order.
    public var surcharges: [SurchargeConfig] = [
        SurchargeConfig(code: "weekend", when: "weekend", percentBasisPoints: 1_000),
        SurchargeConfig(code: "after_hours", when: "after_hours", amountMinor: 1_500),
    ]
    /// The IANA zone in which `weekend` and `after_hours` are judged.
    public var timeZone = "UTC"

    public init() {}

    public func validationErrors() -> [FieldError] {
        var checks = ConfigChecks("dispatch.pricing")
        checks.check(currency.count == 3 && currency.allSatisfy { $0.isASCII && $0.isUppercase }, "currency", "must be a three-letter ISO 4217 code")
        let money = 0...100_000_000
        checks.check(money.contains(baseFeeMinor), "base_fee_minor", "must be between 0 and 100000000")
        checks.check(money.contains(perYardMinor), "per_yard_minor", "must be between 0 and 100000000")
        checks.check(money.contains(minimumMinor), "minimum_minor", "must be between 0 and 100000000")
        checks.check(maxVolumeYards.isFinite && maxVolumeYards > 0 && maxVolumeYards <= 10_000, "max_volume_yards", "must be more than 0 and at most 10000")
        checks.check(!itemCategories.isEmpty, "item_categories", "must name at least one category")
        for (name, fee) in itemCategories.sorted(by: { $0.key < $1.key }) {
            checks.check(money.contains(fee), "item_categories.\(name)", "must be between 0 and 100000000")
            checks.check(!name.isEmpty && name.count <= 64, "item_categories", "category names must be 1 to 64 characters")
        }
        checks.check((1...10_000).contains(maxItemQuantity), "max_item_quantity", "must be between 1 and 10000")
        checks.check(TimeZone(identifier: timeZone) != nil, "time_zone", "must be an IANA time zone")
        for (index, surcharge) in surcharges.enumerated() {
            checks.check(
                SurchargeConfig.conditions.contains(surcharge.when), "surcharges[\(index)].when",
                "must be one of \(SurchargeConfig.conditions.sorted().joined(separator: ", "))")
            checks.check(
                (surcharge.amountMinor != nil) != (surcharge.percentBasisPoints != nil), "surcharges[\(index)]",
                "needs exactly one of amount_minor and percent_basis_points")
            if let amount = surcharge.amountMinor {
                checks.check(money.contains(amount), "surcharges[\(index)].amount_minor", "must be between 0 and 100000000")
            }
            if let bps = surcharge.percentBasisPoints {
                checks.check((0...100_000).contains(bps), "surcharges[\(index)].percent_basis_points", "must be between 0 and 100000")
            }
            checks.check(!surcharge.code.isEmpty && surcharge.code.count <= 64, "surcharges[\(index)].code", "must be 1 to 64 characters")
        }
        return checks.errors
    }
}

/// One surcharge: a fixed amount or a percentage (in basis points: 1000 = 10 %) of the subtotal.
public struct SurchargeConfig: Codable, Sendable, Equatable {
    public var code: String
    /// `always`, `weekend` (Saturday or Sunday), `after_hours` (before 08:00 or from 18:00) or
    /// `same_day` (scheduled for the day it was booked, or not scheduled), judged at the
    /// scheduled time (or booking time) in `pricing.time_zone`.
    public var when: String
    public var amountMinor: Int?
    public var percentBasisPoints: Int?

    static let conditions: Set<String> = ["always", "weekend", "after_hours", "same_day"]

    public init(code: String, when: String, amountMinor: Int? = nil, percentBasisPoints: Int? = nil) {
        self.code = code
        self.when = when
        self.amountMinor = amountMinor
        self.percentBasisPoints = percentBasisPoints
    }
}
