/// What an itinerary costs under GTFS Fares v2: the total and the fare products it is made
/// of, each charged on a ride. The charges add up to the total.
public struct FareQuote: Sendable, Equatable {
    /// One fare product to buy.
    public struct Charge: Sendable, Equatable {
        public var productID: String
        public var productName: String?
        /// The amount × 100, rounded (negative for a transfer discount).
        public var minor: Int
        public var currency: String
        /// The fare media the price is for (nil: any, or unknown).
        public var fareMediaID: String?
        /// The ride (its index among the legs priced) it is charged on: a leg product on the
        /// first ride of its (effective) fare leg, a transfer product on the first ride after
        /// the transfer.
        public var leg: Int
        /// A transfer product (`fare_transfer_rules.txt`) rather than a leg's (`fare_leg_rules.txt`).
        public var isTransfer: Bool

        public init(productID: String, productName: String?, minor: Int, currency: String, fareMediaID: String?, leg: Int, isTransfer: Bool) {
            self.productID = productID
            self.productName = productName
            self.minor = minor
            self.currency = currency
            self.fareMediaID = fareMediaID
            self.leg = leg
            self.isTransfer = isTransfer
        }
    }

    /// The total × 100 (cents, as `FareTable` gives it).
    public var minor: Int
    public var currency: String
    public var charges: [Charge]

    public init(minor: Int, currency: String, charges: [Charge]) {
        self.minor = minor
        self.currency = currency
        self.charges = charges
    }
}
