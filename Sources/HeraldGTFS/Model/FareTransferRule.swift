/// A `fare_transfer_rules.txt` row (GTFS Fares v2): what changing from a leg of one leg
/// group to a leg of another costs.
public struct FareTransferRule: Sendable, Equatable {
    public var fromLegGroupID: String?
    public var toLegGroupID: String?
    /// -1: no limit; n ≥ 1: the rule covers at most n consecutive transfers. Only set when
    /// both leg groups are the same (then it is required).
    public var transferCount: Int?
    /// Seconds; nil: no limit.
    public var durationLimit: Int?
    /// What `durationLimit` measures, from the first leg of the transfer sub-journey to the
    /// current one: 0 departure → arrival, 1 departure → departure, 2 arrival → departure,
    /// 3 arrival → arrival. Set exactly when `durationLimit` is.
    public var durationLimitType: Int?
    /// 0: from-leg product + transfer product; 1: from-leg + transfer + to-leg product;
    /// 2: the transfer product alone.
    public var fareTransferType: Int
    /// nil: the transfer itself costs nothing.
    public var fareProductID: String?

    public init(
        fromLegGroupID: String?, toLegGroupID: String?, transferCount: Int?, durationLimit: Int?, durationLimitType: Int?, fareTransferType: Int,
        fareProductID: String?
    ) {
        self.fromLegGroupID = fromLegGroupID
        self.toLegGroupID = toLegGroupID
        self.transferCount = transferCount
        self.durationLimit = durationLimit
        self.durationLimitType = durationLimitType
        self.fareTransferType = fareTransferType
        self.fareProductID = fareProductID
    }
}
