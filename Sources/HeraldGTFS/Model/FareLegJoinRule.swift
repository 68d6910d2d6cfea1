/// A `fare_leg_join_rules.txt` row (GTFS Fares v2): two consecutive legs on these networks
/// (changing at these stops, or else within one station) count as one "effective fare leg".
public struct FareLegJoinRule: Sendable, Equatable {
    public var fromNetworkID: String
    public var toNetworkID: String
    public var fromStopID: String?
    public var toStopID: String?

    public init(fromNetworkID: String, toNetworkID: String, fromStopID: String?, toStopID: String?) {
        self.fromNetworkID = fromNetworkID
        self.toNetworkID = toNetworkID
        self.fromStopID = fromStopID
        self.toStopID = toStopID
    }
}
