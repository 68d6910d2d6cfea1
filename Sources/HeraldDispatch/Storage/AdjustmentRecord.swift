/// One job's volume adjustment: one row of `job_adjustments`. Times are epoch milliseconds;
/// money is minor units; volume is hundredths of a cubic yard.
public struct AdjustmentRecord: Sendable, Equatable, Codable {
    public var jobID: String
    public var driverID: String
    public var customerID: String
    /// Stored as its raw value (`job_adjustments.status`).
    public var status: AdjustmentStatus
    /// 1 when approved without asking (the price did not go up).
    public var automatic: Int
    public var originalVolumeHundredths: Int64?
    public var actualVolumeHundredths: Int64
    public var originalPriceMinor: Int64
    public var newPriceMinor: Int64
    public var currency: String
    /// The new quote's lines as JSON.
    public var priceLines: String
    public var tripFeeMinor: Int64?
    /// The customer's deadline while pending.
    public var deadlineAt: Int64?
    public var extensions: Int
    /// When the driver was told the deadline passed (cleared by an extension).
    public var expiredAt: Int64?
    public var decidedAt: Int64?
    public var decidedBy: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case status, automatic, currency, extensions
        case jobID = "job_id"
        case driverID = "driver_id"
        case customerID = "customer_id"
        case originalVolumeHundredths = "original_volume_hundredths"
        case actualVolumeHundredths = "actual_volume_hundredths"
        case originalPriceMinor = "original_price_minor"
        case newPriceMinor = "new_price_minor"
        case priceLines = "price_lines"
        case tripFeeMinor = "trip_fee_minor"
        case deadlineAt = "deadline_at"
        case expiredAt = "expired_at"
        case decidedAt = "decided_at"
        case decidedBy = "decided_by"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
