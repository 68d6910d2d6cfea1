import Foundation

/// A job as stored: one row of `jobs`. Times are epoch milliseconds; money is minor units.
public struct JobRecord: Sendable, Equatable, Codable {
    public var id: String
    public var customerID: String
    public var driverID: String?
    /// Stored as its raw value (`jobs.status`); the enum is the only mapping.
    public var status: JobStatus
    public var address: String
    public var latitude: Double?
    public var longitude: Double?
    /// `[{category, quantity}]` as JSON.
    public var items: String
    public var volumeHundredths: Int64?
    public var scheduledAt: Int64?
    public var notes: String?
    public var priceMinor: Int64
    public var currency: String
    /// The quote's lines as JSON.
    public var priceLines: String
    /// Offer rounds made so far (0 before the first broadcast).
    public var offerRound: Int
    public var offerRadiusM: Int64?
    /// When the current round ends (the next round or expiry is due); nil once claimed or final.
    public var nextRoundAt: Int64?
    public var version: Int64
    public var createdAt: Int64
    public var updatedAt: Int64
    public var acceptedAt: Int64?
    public var enRouteAt: Int64?
    public var arrivedAt: Int64?
    public var startedAt: Int64?
    public var completedAt: Int64?
    public var cancelledAt: Int64?
    public var expiredAt: Int64?
    public var cancelledBy: String?
    public var cancelReason: String?

    enum CodingKeys: String, CodingKey {
        case id, status, address, latitude, longitude, items, notes, currency, version
        case customerID = "customer_id"
        case driverID = "driver_id"
        case volumeHundredths = "volume_hundredths"
        case scheduledAt = "scheduled_at"
        case priceMinor = "price_minor"
        case priceLines = "price_lines"
        case offerRound = "offer_round"
        case offerRadiusM = "offer_radius_m"
        case nextRoundAt = "next_round_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case acceptedAt = "accepted_at"
        case enRouteAt = "en_route_at"
        case arrivedAt = "arrived_at"
        case startedAt = "started_at"
        case completedAt = "completed_at"
        case cancelledAt = "cancelled_at"
        case expiredAt = "expired_at"
        case cancelledBy = "cancelled_by"
        case cancelReason = "cancel_reason"
    }
}
