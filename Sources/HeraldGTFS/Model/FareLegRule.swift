/// A `fare_leg_rules.txt` row (GTFS Fares v2): the fare product a leg needs when its
/// network, departure and arrival areas and start and end times match. Empty fields match
/// as `FaresV2` describes (they depend on whether the file has `rule_priority`).
public struct FareLegRule: Sendable, Equatable {
    public var legGroupID: String?
    public var networkID: String?
    public var fromAreaID: String?
    public var toAreaID: String?
    public var fromTimeframeGroupID: String?
    public var toTimeframeGroupID: String?
    public var fareProductID: String
    /// nil when the file has no `rule_priority` column (empty fields then mean "every value
    /// no other rule names"); an empty value in the column reads as 0.
    public var priority: Int?

    public init(
        legGroupID: String?, networkID: String?, fromAreaID: String?, toAreaID: String?, fromTimeframeGroupID: String?, toTimeframeGroupID: String?,
        fareProductID: String, priority: Int?
    ) {
        self.legGroupID = legGroupID
        self.networkID = networkID
        self.fromAreaID = fromAreaID
        self.toAreaID = toAreaID
        self.fromTimeframeGroupID = fromTimeframeGroupID
        self.toTimeframeGroupID = toTimeframeGroupID
        self.fareProductID = fareProductID
        self.priority = priority
    }
}
