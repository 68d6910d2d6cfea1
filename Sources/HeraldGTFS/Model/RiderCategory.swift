/// A `rider_categories.txt` row (GTFS Fares v2). Herald prices itineraries for the default
/// category: fare products for any category, or for one marked `is_default_fare_category`.
public struct RiderCategory: Sendable, Equatable {
    public var id: String
    public var name: String
    public var isDefault: Bool
    public var eligibilityURL: String?

    public init(id: String, name: String, isDefault: Bool, eligibilityURL: String?) {
        self.id = id
        self.name = name
        self.isDefault = isDefault
        self.eligibilityURL = eligibilityURL
    }
}
