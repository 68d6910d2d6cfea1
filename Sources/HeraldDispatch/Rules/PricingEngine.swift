import Foundation
import HeraldCore

/// One priced line of a quote (`base_fee`, `volume`, `item:furniture`, `surcharge:weekend`,
/// `minimum`), in minor units.
public struct PriceLine: Sendable, Equatable, Codable {
    public var code: String
    public var amountMinor: Int
    public var quantity: Int?
    public var unitMinor: Int?

    public init(code: String, amountMinor: Int, quantity: Int? = nil, unitMinor: Int? = nil) {
        self.code = code
        self.amountMinor = amountMinor
        self.quantity = quantity
        self.unitMinor = unitMinor
    }

    enum CodingKeys: String, CodingKey {
        case code, quantity
        case amountMinor = "amount_minor"
        case unitMinor = "unit_minor"
    }
}

/// A price: its total, currency and how it was made.
public struct PriceQuote: Sendable, Equatable, Codable {
    public var totalMinor: Int
    public var currency: String
    public var lines: [PriceLine]
}

/// What is being priced. Volume is in hundredths of a cubic yard (250 = 2.5 yd³), so no
/// floating point touches money.
public struct PricingRequest: Sendable, Equatable {
    public var items: [JobItem]
    public var volumeHundredths: Int?
    /// When the work is scheduled (nil: as soon as possible).
    public var scheduledAt: Date?
    public var bookedAt: Date

    public init(items: [JobItem], volumeHundredths: Int?, scheduledAt: Date?, bookedAt: Date) {
        self.items = items
        self.volumeHundredths = volumeHundredths
        self.scheduledAt = scheduledAt
        self.bookedAt = bookedAt
    }
}

public struct JobItem: Sendable, Equatable, Codable {
    public var category: String
    public var quantity: Int

    public init(category: String, quantity: Int) {
        self.category = category
        self.quantity = quantity
    }
}

/// The pricing engine: base fee + volume + per-item handling, raised to the minimum, then
/// surcharges. Integer minor units throughout; a per-hundredth or percentage amount is
/// rounded half up once, on its own line, so the lines always add up to the total.
public struct PricingEngine: Sendable {
    public let config: PricingConfig

    public init(config: PricingConfig) {
        self.config = config
    }

    public func quote(_ request: PricingRequest) -> PriceQuote {
        var lines = [PriceLine(code: "base_fee", amountMinor: config.baseFeeMinor)]
        if let hundredths = request.volumeHundredths, hundredths > 0 {
            lines.append(
                PriceLine(
                    code: "volume", amountMinor: Self.roundedDivide(config.perYardMinor * hundredths, 100), quantity: hundredths, unitMinor: config.perYardMinor
                ))
        }
        for item in request.items {
            let fee = config.itemCategories[item.category] ?? 0
            lines.append(PriceLine(code: "item:\(item.category)", amountMinor: fee * item.quantity, quantity: item.quantity, unitMinor: fee))
        }
        let raw = lines.reduce(0) { $0 + $1.amountMinor }
        if raw < config.minimumMinor {
            lines.append(PriceLine(code: "minimum", amountMinor: config.minimumMinor - raw))
        }
        let subtotal = max(raw, config.minimumMinor)
        let moment = request.scheduledAt ?? request.bookedAt
        for surcharge in config.surcharges where applies(surcharge.when, at: moment, bookedAt: request.bookedAt, scheduled: request.scheduledAt != nil) {
            let amount = surcharge.amountMinor ?? Self.roundedDivide(subtotal * (surcharge.percentBasisPoints ?? 0), 10_000)
            lines.append(PriceLine(code: "surcharge:\(surcharge.code)", amountMinor: amount))
        }
        return PriceQuote(totalMinor: lines.reduce(0) { $0 + $1.amountMinor }, currency: config.currency, lines: lines)
    }

    func applies(_ condition: String, at moment: Date, bookedAt: Date, scheduled: Bool) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: config.timeZone) ?? .gmt
        switch condition {
        case "always":
            return true
        case "weekend":
            let weekday = calendar.component(.weekday, from: moment)
            return weekday == 1 || weekday == 7
        case "after_hours":
            let hour = calendar.component(.hour, from: moment)
            return hour < 8 || hour >= 18
        case "same_day":
            return !scheduled || calendar.isDate(moment, inSameDayAs: bookedAt)
        default:
            return false
        }
    }

    /// `numerator / denominator` rounded half up (both non-negative).
    static func roundedDivide(_ numerator: Int, _ denominator: Int) -> Int {
        (numerator + denominator / 2) / denominator
    }
}
