import Foundation
import HeraldCore
import HeraldDispatch
import Testing

@Suite struct PricingEngineTests {
    /// Tuesday 2027-01-05 10:00 UTC (a weekday, in business hours).
    static let weekdayMorning = Date(timeIntervalSince1970: 1_799_143_200)

    func engine(_ configure: (inout PricingConfig) -> Void = { _ in }) -> PricingEngine {
        var config = PricingConfig()
        configure(&config)
        return PricingEngine(config: config)
    }

    @Test func volumeAndItemsAddUpInMinorUnits() {
        let quote = engine().quote(
            PricingRequest(
                items: [JobItem(category: "furniture", quantity: 2), JobItem(category: "appliance", quantity: 1)], volumeHundredths: 250,
                scheduledAt: nil, bookedAt: Self.weekdayMorning))
        // 4900 base + 3500 × 2.5 = 8750 + 2 × 4500 + 6000
        #expect(quote.totalMinor == 4900 + 8750 + 9000 + 6000)
        #expect(quote.currency == "USD")
        #expect(quote.lines.map(\.code) == ["base_fee", "volume", "item:furniture", "item:appliance"])
        #expect(quote.lines.reduce(0) { $0 + $1.amountMinor } == quote.totalMinor)
    }

    @Test func perHundredthAmountsRoundHalfUpOnce() {
        // 3333 per yard × 0.01 yd = 33.33 → 33; × 0.15 = 499.95 → 500
        let small = engine {
            $0.perYardMinor = 3333
            $0.minimumMinor = 0
        }
        #expect(small.quote(PricingRequest(items: [], volumeHundredths: 1, scheduledAt: nil, bookedAt: Self.weekdayMorning)).lines[1].amountMinor == 33)
        #expect(small.quote(PricingRequest(items: [], volumeHundredths: 15, scheduledAt: nil, bookedAt: Self.weekdayMorning)).lines[1].amountMinor == 500)
    }

    @Test func aSmallJobIsRaisedToTheMinimum() {
        let quote = engine().quote(
            PricingRequest(items: [JobItem(category: "general", quantity: 1)], volumeHundredths: nil, scheduledAt: nil, bookedAt: Self.weekdayMorning))
        #expect(quote.totalMinor == 7900)
        #expect(quote.lines.last == PriceLine(code: "minimum", amountMinor: 7900 - 4900 - 1500))
    }

    @Test func surchargesFollowTheScheduledTimeInTheConfiguredZone() {
        let saturdayNoon = Self.weekdayMorning.addingTimeInterval(4 * 86_400 + 2 * 3600)
        let weekend = engine().quote(PricingRequest(items: [], volumeHundredths: 400, scheduledAt: saturdayNoon, bookedAt: Self.weekdayMorning))
        let subtotal = 4900 + 14000
        #expect(weekend.lines.last == PriceLine(code: "surcharge:weekend", amountMinor: subtotal / 10))
        #expect(weekend.totalMinor == subtotal + subtotal / 10)
        // 10:00 UTC is 02:00 in Los Angeles: after hours there, not in UTC.
        let utc = engine().quote(PricingRequest(items: [], volumeHundredths: 400, scheduledAt: nil, bookedAt: Self.weekdayMorning))
        #expect(!utc.lines.contains { $0.code == "surcharge:after_hours" })
        let la = engine { $0.timeZone = "America/Los_Angeles" }.quote(
            PricingRequest(items: [], volumeHundredths: 400, scheduledAt: nil, bookedAt: Self.weekdayMorning))
        #expect(la.lines.contains(PriceLine(code: "surcharge:after_hours", amountMinor: 1500)))
    }

    @Test func sameDayAppliesToUnscheduledAndSameDateJobs() {
        let pricing = engine { $0.surcharges = [SurchargeConfig(code: "rush", when: "same_day", amountMinor: 2500)] }
        let asap = pricing.quote(PricingRequest(items: [], volumeHundredths: 400, scheduledAt: nil, bookedAt: Self.weekdayMorning))
        let later = pricing.quote(
            PricingRequest(items: [], volumeHundredths: 400, scheduledAt: Self.weekdayMorning.addingTimeInterval(86_400), bookedAt: Self.weekdayMorning))
        #expect(asap.lines.last?.code == "surcharge:rush")
        #expect(!later.lines.contains { $0.code == "surcharge:rush" })
    }

    @Test func configValidationNamesBadRates() {
        var config = DispatchConfig()
        config.pricing.currency = "usd"
        config.pricing.surcharges = [SurchargeConfig(code: "x", when: "full_moon", amountMinor: 1, percentBasisPoints: 5)]
        config.maxRadiusKm = 10
        let fields = Set(config.validationErrors().map(\.field))
        #expect(
            fields.isSuperset(of: [
                "dispatch.pricing.currency", "dispatch.pricing.surcharges[0].when", "dispatch.pricing.surcharges[0]", "dispatch.max_radius_km",
            ]))
        #expect(DispatchConfig().validationErrors().isEmpty)
        #expect(DispatchConfig().roundRadiiMeters == [30_000, 45_000, 60_000])
    }
}
