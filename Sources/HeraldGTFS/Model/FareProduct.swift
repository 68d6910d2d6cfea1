/// A `fare_products.txt` row (GTFS Fares v2): one price of a fare product, for a rider
/// category and a fare media (either may be empty: any category, unknown media). Several
/// rows may share `id` with other categories or media.
public struct FareProduct: Sendable, Equatable {
    public var id: String
    public var name: String?
    public var riderCategoryID: String?
    public var fareMediaID: String?
    /// May be negative (a transfer discount) or zero (free).
    public var amount: Double
    /// ISO 4217, upper case.
    public var currency: String

    public init(id: String, name: String?, riderCategoryID: String?, fareMediaID: String?, amount: Double, currency: String) {
        self.id = id
        self.name = name
        self.riderCategoryID = riderCategoryID
        self.fareMediaID = fareMediaID
        self.amount = amount
        self.currency = currency
    }
}
